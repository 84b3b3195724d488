//! `pqperf campaign profile` through the CLI on the ICCS test candidate (WOTS-PXOF-128):
//! import → build → kat → profile (hidden `pqperf hashprof` children, profiling build KAT) →
//! publish (profiles and the derived survey) → validate (shares recomputed from calls) →
//! report (the candidate page's "Symmetric primitives" section shows the measured shares).

use crate::common;

use std::path::{Path, PathBuf};

fn run(cwd: &Path, args: &[&str]) -> String {
    common::ok(Some(cwd), args)
}

#[test]
fn profile_phase_publishes_validates_and_renders() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sub = std::fs::canonicalize(repo.join("testdata/candidates/wots-pxof")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = "run";
    let sub = sub.to_string_lossy().to_string();
    run(
        d,
        &["import", "iccs", &sub, "--id", "sign-90", "--run-dir", r],
    );
    run(d, &["build", "--run-dir", r]);
    run(d, &["kat", "--run-dir", r]);
    let common = [
        "--run-dir",
        r,
        "--allow-unfixed-host",
        "--probe-attempts",
        "1",
        "--trial-target",
        "0.01",
        "--register",
        "pqperf profile CLI test",
    ];
    let mut args = vec!["campaign", "profile"];
    args.extend(common);
    run(d, &args);
    let log = std::fs::read_to_string(d.join("run/campaign.log")).unwrap();
    assert!(log.contains("KAT of the profiling build: PASS"), "{log}");
    assert!(
        log.contains("profile sign-90 WOTS-PXOF-128 keygen: complete hash="),
        "{log}"
    );
    // Resumable: a second invocation writes nothing.
    run(d, &args);
    let log = std::fs::read_to_string(d.join("run/campaign.log")).unwrap();
    assert!(log.contains("profile: 0 written, 3 skipped"), "{log}");
    // Each profile names the built library it was relinked from; one naming another library
    // is stale: kept with --keep-stale (campaign.json says so), else profiled again.
    let bj: pqperf_model::BuildJson =
        pqperf_model::pyjson::read(&d.join("run/build.json"), Path::new("build.json")).unwrap();
    let built = bj.instances["sign-90/WOTS-PXOF-128"]
        .library_sha256
        .clone()
        .unwrap();
    let prof = d.join("run/profile/sign-90/WOTS-PXOF-128__sign.json");
    let text = std::fs::read_to_string(&prof).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["pqperf"]["library_sha256"], built.as_str());
    std::fs::write(&prof, text.replace(&built, &"0".repeat(64))).unwrap();
    let mut keep = args.clone();
    keep.push("--keep-stale");
    let out = run(d, &keep);
    assert!(out.contains("kept (--keep-stale)"), "{out}");
    let camp = std::fs::read_to_string(d.join("run/campaign.json")).unwrap();
    assert!(
        camp.contains("profile/sign-90/WOTS-PXOF-128__sign.json"),
        "{camp}"
    );
    let out = run(d, &args);
    assert!(
        out.contains("done again") && out.contains("profile: 1 written, 2 skipped"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    assert_eq!(v["pqperf"]["library_sha256"], built.as_str());
    // Done again: no longer listed as kept stale.
    let camp = std::fs::read_to_string(d.join("run/campaign.json")).unwrap();
    assert!(!camp.contains("stale_kept"), "{camp}");

    let mut args = vec!["campaign", "publish"];
    args.extend(common);
    run(d, &args);
    let ds = d.join("run/dataset");
    let sys = std::fs::read_dir(ds.join("performance/data"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        sys.join("profile/sign-90/WOTS-PXOF-128__sign.json")
            .is_file()
    );
    let survey = std::fs::read_to_string(ds.join("performance/symmetric_survey.csv")).unwrap();
    assert!(
        survey.contains("sign-90;ICCS-only;derived from the call graph: reaches `pseudoXOF`"),
        "{survey}"
    );

    let v = run(d, &["validate", "run/dataset"]);
    assert!(
        v.contains("3 profile(s)") && v.contains(" 0 problem(s)"),
        "{v}"
    );
    run(d, &["report", "run/dataset"]);
    let page = std::fs::read_dir(ds.join("sign-90"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".md"))
        .unwrap();
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.contains("verdict: **ICCS-only**"), "{text}");
    assert!(
        text.contains("| `WOTS-PXOF-128` | keygen |")
            && text.contains("drng 2, pseudoXOF 1.07e+03"),
        "{text}"
    );

    // A second system with another candidate published into the same dataset root: the
    // first system's survey row and its pages stay as they were.
    second_system_keeps_the_first(d, &sub, &page, &text);
}

/// Publishes a second system (another run, another candidate) into `run/dataset`: the shared
/// `symmetric_survey.csv` keeps the first system's rows, the first system's page still shows
/// its verdict, and `validate` catches a survey that lost them.
fn second_system_keeps_the_first(d: &Path, sub: &str, page: &Path, page_text: &str) {
    let r2 = "run2";
    run(
        d,
        &["import", "iccs", sub, "--id", "sign-91", "--run-dir", r2],
    );
    run(d, &["build", "--run-dir", r2]);
    run(d, &["kat", "--run-dir", r2]);
    std::fs::write(
        d.join("systems2.csv"),
        "ID;Arch;Hostname;Description\nx86_9;x86_64;second-host;second test system\n",
    )
    .unwrap();
    let common2 = [
        "--run-dir",
        r2,
        "--allow-unfixed-host",
        "--probe-attempts",
        "1",
        "--trial-target",
        "0.01",
        "--systems",
        "systems2.csv",
        "--system",
        "x86_9",
    ];
    let mut args = vec!["campaign", "profile"];
    args.extend(common2);
    run(d, &args);
    let ds = d.join("run/dataset");
    let csv = ds.join("performance/symmetric_survey.csv");
    let before = std::fs::read_to_string(&csv).unwrap();
    let mut args = vec!["campaign", "publish", "--publish-to", "run/dataset"];
    args.extend(common2);
    run(d, &args);
    let after = std::fs::read_to_string(&csv).unwrap();
    assert!(
        after.lines().count() > before.lines().count(),
        "{before}\n---\n{after}"
    );
    for id in ["sign-90", "sign-91"] {
        assert!(
            after.contains(&format!("{id};ICCS-only;derived from the call graph")),
            "{after}"
        );
    }
    let now = std::fs::read_to_string(page).unwrap();
    assert!(now.contains("verdict: **ICCS-only**"), "{now}");
    assert!(page_text.contains("verdict: **ICCS-only**"));
    let v = run(d, &["validate", "run/dataset"]);
    assert!(v.contains(" 0 problem(s)"), "{v}");
    // A survey that lost another system's rows (as publish did before) is a problem.
    let lost: String = after
        .lines()
        .filter(|l| !l.starts_with("sign-90;"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&csv, lost).unwrap();
    let o = common::output(Some(d), &["validate", "run/dataset", "--no-pages"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("symmetric_survey.csv") && t.contains("sign-90"),
        "{t}"
    );
}
