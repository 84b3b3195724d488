//! The official ICCS provider path on the real official files (`../shared/iccs-official`, or
//! `$PQPERF_ICCS_OFFICIAL`; never copied into the repository): they compile with the
//! reference flags and reproduce every pqperf vector; a copy with one constant changed (made
//! in a temporary folder here) is refused, naming the first differing vector.

use std::path::{Path, PathBuf};

use pqperf_build::provider::{self, OFFICIAL_HEADERS, OFFICIAL_SOURCES};

/// A temporary copy of the official files with `from` replaced by `to` (once) in `file`.
fn modified_copy(src: &Path, dir: &Path, file: &str, from: &str, to: &str) -> PathBuf {
    let copy = dir.join(format!("modified-{file}"));
    std::fs::create_dir_all(&copy).unwrap();
    for f in OFFICIAL_SOURCES.iter().chain(OFFICIAL_HEADERS) {
        let mut text = std::fs::read_to_string(src.join(f)).unwrap();
        if *f == file {
            assert_eq!(text.matches(from).count(), 1, "{from} in {file}");
            text = text.replace(from, to);
        }
        std::fs::write(copy.join(f), text).unwrap();
    }
    copy
}

#[test]
fn official_files_reproduce_every_pqperf_vector() {
    let Some(dir) = pqperf_model::golden::iccs_official_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let p = provider::prepare_official(&dir, &tmp.path().join("out")).unwrap();
    assert!(p.archive.is_file());
    let r = &p.record;
    assert_eq!(r.kind, "official");
    assert_eq!(r.vectors_checked, Some(provider::vectors().len()));
    assert_eq!(
        r.sources_sha256["auxfunc.c"],
        "9b99c0bb3807c9661938a8aca227132d80ec762f85ebd8f67ea91c6161302b82"
    );
    assert_eq!(
        r.sources_sha256["drng.c"],
        "0df0ac78c828bd43bf05724398fa530767d753aa7801a1d1fa5d621321ec797e"
    );
    assert!(r.compiler.starts_with("gcc"), "{}", r.compiler);
    assert!(r.flags.starts_with("-O2 -fPIC -std=gnu11"), "{}", r.flags);
    assert!(
        r.flags.contains("-fno-strict-aliasing -fwrapv"),
        "{}",
        r.flags
    );
    // No machine path in what evidence records.
    let j = r.to_json().to_string();
    assert!(
        !j.contains(&*dir.to_string_lossy()) && !j.contains("/tmp"),
        "{j}"
    );
    assert!(
        r.describe().contains("auxfunc.c sha256 9b99c0bb3807"),
        "{}",
        r.describe()
    );
    // The official DRNG object really is in the archive (its static SM3 symbols).
    let nm = std::process::Command::new("nm")
        .arg(&p.archive)
        .output()
        .unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    assert!(
        syms.contains("T get_random_number") && syms.contains("T pseudoXOF"),
        "{syms}"
    );
}

#[test]
fn modified_official_copies_are_refused_naming_the_first_differing_vector() {
    let Some(dir) = pqperf_model::golden::iccs_official_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // One byte of the HMAC key in auxfunc.c: sm3hash still agrees, pseudohash does not.
    let aux = modified_copy(&dir, tmp.path(), "auxfunc.c", "0x66, 0xba", "0x66, 0xbb");
    let e = provider::prepare_official(&aux, &tmp.path().join("out-aux"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("refused"), "{e}");
    assert!(e.contains("pseudohash(512, m, 0 bits)"), "{e}");
    // The round constant of drng.c's own SM3: every helper agrees, the first DRNG draw not.
    let drng = modified_copy(&dir, tmp.path(), "drng.c", "0x7a879d8aU", "0x7a879d8bU");
    let e = provider::prepare_official(&drng, &tmp.path().join("out-drng"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("DRNG draw 1 after seed 00..2f: get_random_number(256 bits)"),
        "{e}"
    );
    assert!(e.contains("pqperf:") && e.contains("provider:"), "{e}");
    // A copy whose DRNG crashes: the vector without output is named, with how it ended.
    let crash = modified_copy(
        &dir,
        tmp.path(),
        "drng.c",
        "return SM3_DRNG_Generate(",
        "abort();\n    return SM3_DRNG_Generate(",
    );
    let e = provider::prepare_official(&crash, &tmp.path().join("out-crash"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("DRNG draw 1 after seed 00..2f")
            && e.contains("no output (check program: exit status signal: 6"),
        "{e}"
    );
    // A folder without the files: the missing file is named.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = provider::prepare_official(&empty, &tmp.path().join("out-empty"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("auxfunc.c is missing"), "{e}");
}

#[test]
fn catalog_key_selects_the_provider_and_the_run_remembers_it() {
    let Some(dir) = pqperf_model::golden::iccs_official_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let cat = tmp.path().join("catalog.toml");
    // Relative to the catalog file.
    let off = tmp.path().join("off");
    std::fs::create_dir_all(&off).unwrap();
    for f in OFFICIAL_SOURCES.iter().chain(OFFICIAL_HEADERS) {
        std::fs::copy(dir.join(f), off.join(f)).unwrap();
    }
    std::fs::write(&cat, "iccs_provider = \"official:off\"\n").unwrap();
    let ctx = pqperf_build::BuildCtx::new(&run, &cat).unwrap();
    assert_eq!(ctx.provider_record.kind, "official");
    assert!(ctx.official_lib.as_ref().unwrap().is_file());
    // Without the key, the run's remembered choice applies (the KAT stage's case).
    let plain = tmp.path().join("plain.toml");
    std::fs::write(&plain, "").unwrap();
    let ctx = pqperf_build::BuildCtx::new(&run, &plain).unwrap();
    assert_eq!(ctx.provider_record.kind, "official");
    // An explicit choice overrides both and is remembered in turn.
    let ctx = pqperf_build::BuildCtx::with_provider(
        &run,
        &cat,
        Some(&pqperf_build::ProviderChoice::Pqperf),
    )
    .unwrap();
    assert_eq!(ctx.provider_record.kind, "pqperf");
    assert!(ctx.official_lib.is_none());
    let ctx = pqperf_build::BuildCtx::new(&run, &plain).unwrap();
    assert_eq!(ctx.provider_record.kind, "pqperf");
    // A bad value names the catalog file.
    std::fs::write(&cat, "iccs_provider = \"openssl\"\n").unwrap();
    let e = pqperf_build::BuildCtx::new(&run, &cat)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("catalog.toml: iccs_provider") && e.contains("official:DIR"),
        "{e}"
    );
}
