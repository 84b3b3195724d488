//! Issue 31 under real valgrind: the unmodified WOTS test candidate, whose signature
//! publishes the randomizer it draws and whose secret key keeps the public seed, gets no
//! false alarm (the first pass finds the draw verbatim in the signature and the seed in the
//! public key, the evidence says so); a copy of the toy leak whose `sig_sign`
//! leaves a grandchild holding valgrind's XML pipe open is never "no findings"; the planted
//! leaks of `ct-toy-sig` are still found (`toy.rs`).

use std::path::{Path, PathBuf};

use pqperf_build::{BuildOptions, IccsImportOptions};
use pqperf_ct::{CtOptions, run};
use pqperf_model::ct::CtEvidence;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn import(run_dir: &Path, dir: &Path, id: &str) {
    pqperf_build::import_iccs(&IccsImportOptions::new(run_dir, dir, id)).unwrap();
}

fn op<'a>(ev: &'a CtEvidence, name: &str) -> &'a pqperf_model::ct::CtOperation {
    ev.operations
        .iter()
        .find(|o| o.operation == name)
        .unwrap_or_else(|| panic!("{name} in {ev:?}"))
}

#[test]
fn published_randomizer_is_not_secret_and_a_cut_report_is_not_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    import(
        &run_dir,
        &repo().join("testdata/candidates/wots-pxof"),
        "sign-85",
    );
    // The toy leak, with a grandchild that escapes the process group and keeps every
    // descriptor (valgrind's XML pipe among them) open past the drain limit.
    let held = tmp.path().join("held");
    pqperf_model::fsutil::copy_tree(&repo().join("testdata/candidates/ct-toy-sig"), &held).unwrap();
    let c = held.join("Reference_Implementation/CT-TOY-SIG/sig.c");
    let text = std::fs::read_to_string(&c).unwrap();
    let anchor = "    memset(extra, 0, sizeof extra);";
    assert!(text.contains(anchor));
    let text = format!(
        "#include <unistd.h>\n{}",
        text.replace(
            anchor,
            &format!(
                "{anchor}\n    if (fork() == 0) {{ setsid(); if (fork() == 0) {{ sleep(8); _exit(0); }} _exit(0); }}"
            )
        )
    );
    std::fs::write(&c, text).unwrap();
    import(&run_dir, &held, "sign-86");
    let b = pqperf_build::build(&BuildOptions::new(&run_dir)).unwrap();
    assert_eq!(b.built.len(), 2, "{b:?}");
    let s = run(&CtOptions::new(&run_dir)).unwrap();
    let ev = |id: &str| {
        s.evidence
            .iter()
            .find(|e| e.candidate == id)
            .unwrap_or_else(|| panic!("{id}: {:?}", s.evidence))
    };
    let wots = ev("sign-85");
    let sign = op(wots, "sign");
    assert_eq!(sign.status, "run", "{sign:?}");
    assert_eq!(sign.verdict, "no findings", "{sign:?}");
    assert!(
        sign.secret_inputs.iter().any(|x| x
            == "DRNG output except 1 of 1 draws (found verbatim in the public output by a first pass)"),
        "{:?}",
        sign.secret_inputs
    );
    // The public seed the secret key keeps is in the public key too.
    assert!(
        sign.secret_inputs
            .iter()
            .any(|x| x.starts_with("secret key except 64 of ")),
        "{:?}",
        sign.secret_inputs
    );
    assert!(
        sign.command.contains(" sign public=0 key="),
        "{}",
        sign.command
    );
    // keygen publishes the seed it draws second (copied into the public key), not the
    // secret seed it draws first.
    let keygen = op(wots, "keygen");
    assert_eq!(
        keygen.secret_inputs,
        ["DRNG output except 1 of 2 draws (found verbatim in the public output by a first pass)"]
    );
    assert!(
        keygen.command.ends_with(" keygen public=1"),
        "{}",
        keygen.command
    );
    assert_eq!(keygen.status, "run", "{keygen:?}");
    // Either the grandchild was killed with the rest (the leaks are found) or the report
    // did not arrive whole (not run, with the reason): never "no findings".
    let held = op(ev("sign-86"), "sign");
    assert_ne!(held.verdict, "no findings", "{held:?}");
    if held.status == "not run" {
        // The drain timeout, a cut report, or the grandchild's own report mixed into it.
        assert!(
            held.reason.as_deref().unwrap_or("").contains("XML"),
            "{held:?}"
        );
    } else {
        assert!(!held.groups.is_empty(), "{held:?}");
    }
}

#[test]
fn first_pass_records_find_verbatim_draws_only() {
    use pqperf_ct::driver::Probe;
    let rec = |k: u8, body: &[u8]| {
        let mut v = vec![k, 0, 0, 0, 0];
        v.extend((body.len() as u32).to_le_bytes());
        v.extend(body);
        v
    };
    let r = [7u8; 16];
    let short = [9u8; 4];
    let other = [3u8; 32];
    let mut out = vec![1u8, 2];
    out.extend(r);
    out.extend(short);
    let bytes = [
        rec(b'D', &other),
        rec(b'D', &r),
        rec(b'D', &short),
        rec(b'O', &out),
    ]
    .concat();
    let p = Probe::parse(&bytes).unwrap();
    assert_eq!(p.draws.len(), 3);
    // The 16-byte randomizer is published; the 4-byte draw matches too but is too short to
    // count; the 32-byte draw is not in the output.
    assert_eq!(p.public_draws(), [1]);
    assert!(Probe::parse(&bytes[..bytes.len() - 1]).is_err());
    assert!(Probe::parse(b"X\0\0\0\0\0\0\0\0").is_err());
}
