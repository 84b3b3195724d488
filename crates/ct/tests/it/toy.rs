//! The constant-time check on real C under real valgrind: a toy ICCS signature that branches
//! on a secret-key bit and indexes a table with a secret byte gets exactly those two findings
//! at their lines; the same candidate fixed gets none; the ICCS helpers are memcheck-clean.

use std::path::{Path, PathBuf};
use std::time::Instant;

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
fn toy_signature_leaks_at_two_lines_and_the_fixed_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let src = repo().join("testdata/candidates/ct-toy-sig");
    let fixed = tmp.path().join("fixed");
    pqperf_model::fsutil::copy_tree(&src, &fixed).unwrap();
    let h = fixed.join("Reference_Implementation/CT-TOY-SIG/SIG_AlgorithmInstance.h");
    let text = std::fs::read_to_string(&h).unwrap();
    std::fs::write(&h, text.replace("#endif", "#define CT_TOY_FIXED 1\n#endif")).unwrap();
    import(&run_dir, &src, "sign-80");
    import(&run_dir, &fixed, "sign-81");
    let b = pqperf_build::build(&BuildOptions::new(&run_dir)).unwrap();
    assert_eq!(b.built.len(), 2, "{b:?}");
    let t0 = Instant::now();
    let s = run(&CtOptions::new(&run_dir)).unwrap();
    eprintln!(
        "pqperf ct on 2 toy instances + ICCS helpers: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(
        s.written,
        [
            "ct/iccs/helpers.json",
            "ct/sign-80/CT-TOY-SIG.json",
            "ct/sign-81/CT-TOY-SIG.json"
        ]
    );
    // The evidence on disk is what the summary holds.
    let on_disk: CtEvidence = pqperf_model::pyjson::read(
        &run_dir.join("ct/sign-80/CT-TOY-SIG.json"),
        Path::new("ct/sign-80/CT-TOY-SIG.json"),
    )
    .unwrap();
    assert_eq!(on_disk, s.evidence[1]);
    let text = std::fs::read_to_string(run_dir.join("ct/sign-80/CT-TOY-SIG.json")).unwrap();
    assert!(
        !text.contains(tmp.path().to_str().unwrap()),
        "absolute path in {text}"
    );

    // ICCS helpers: every helper run, no finding.
    let helpers = &s.evidence[0];
    assert_eq!(helpers.operations.len(), 4);
    for o in &helpers.operations {
        assert_eq!(o.status, "run", "{o:?}");
        assert_eq!(o.verdict, "no findings", "{o:?}");
    }

    let leaky = &s.evidence[1];
    assert_eq!(leaky.candidate, "sign-80");
    assert!(leaky.build_flags.contains(" -g "), "{}", leaky.build_flags);
    assert!(leaky.tool.starts_with("valgrind-"), "{}", leaky.tool);
    assert_eq!(
        op(leaky, "keygen").verdict,
        "no findings",
        "{:?}",
        op(leaky, "keygen")
    );
    let sign = op(leaky, "sign");
    assert_eq!(sign.status, "run");
    assert_eq!(sign.verdict, "2 findings", "{sign:?}");
    assert!(
        sign.command.starts_with("valgrind --tool=memcheck "),
        "{}",
        sign.command
    );
    let got: Vec<(&str, &str, &str)> = sign
        .groups
        .iter()
        .map(|g| (g.kind.as_str(), g.location.as_str(), g.function.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "conditional jump",
                "Reference_Implementation/CT-TOY-SIG/sig.c:33",
                "sig_sign"
            ),
            (
                "memory index",
                "Reference_Implementation/CT-TOY-SIG/sig.c:35",
                "sig_sign"
            ),
        ]
    );
    assert!(
        sign.groups
            .iter()
            .all(|g| g.count == 1 && g.accepted.is_none())
    );

    let fixed = &s.evidence[2];
    for o in &fixed.operations {
        assert_eq!(o.status, "run", "{o:?}");
        assert_eq!(o.verdict, "no findings", "{o:?}");
        assert!(o.groups.is_empty(), "{o:?}");
    }
}
