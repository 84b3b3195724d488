//! ICCS baseline: the twelve helper instances are built by the build stage, self-tested
//! against the independent sm3-crate model, recorded in build.json as `iccs-baseline`, and
//! a library checked against the wrong instance is caught.

use pqperf_profile::baseline;

#[test]
fn baseline_builds_and_selftests() {
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::canonicalize(dir.path()).unwrap();
    let logs = std::sync::Mutex::new(Vec::new());
    let s = baseline::build_baseline(&run, &|m| logs.lock().unwrap().push(m)).unwrap();
    assert_eq!(
        s.passed.len(),
        12,
        "{s:?} {:?}\n{}",
        logs.lock().unwrap(),
        std::fs::read_to_string(run.join("build/iccs.log")).unwrap_or_default()
    );
    assert!(s.failed.is_empty());
    let bj = pqperf_build::read_build_json(&run).unwrap();
    let e = &bj.instances["iccs/pseudoXOF-1152"];
    assert_eq!(e.variant, "iccs-baseline");
    assert_eq!(e.kat, "PASS");
    let log = std::fs::read_to_string(run.join("kat/iccs/sm3hash-256.log")).unwrap();
    assert!(
        log.contains("ok   GB/T 32905 abc rc=0 66c7f0f462eeedd9d1f2d46bdc10e4e2..."),
        "{log}"
    );
    assert!(
        log.ends_with("RESULT iccs sm3hash-256 PASS (20/20)\n"),
        "{log}"
    );
    // A second run finds everything recorded and builds nothing.
    let again = baseline::build_baseline(&run, &|_| {}).unwrap();
    assert!(again.skipped);
    // The wrong width is caught (CryptHash refuses other widths; the model differs anyway).
    let wrong =
        pqperf_iccs_capi::HashInstance::new(pqperf_iccs_capi::Helper::PseudoXof, 384).unwrap();
    let lib = run.join(e.library.as_ref().unwrap());
    let (text, status) = baseline::selftest(&lib, "x", &wrong);
    assert_eq!(status, "MISMATCH", "{text}");
}
