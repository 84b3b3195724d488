//! Evidence tied to the library and inputs it came from (issue 25), on a real ICCS candidate
//! built by gcc: a re-import without a rebuild is refused by the stages that test or measure
//! (exit 2, naming the instance, "run build"); a build resets the KAT verdict before it
//! replaces a library (a build killed at any write never leaves a PASS next to another
//! library); KAT logs name the library the parent handed to the child, and the campaign's
//! kat phase redoes a KAT log of another library (or keeps it with `--keep-stale`, saying so
//! in campaign.json); build logs are written whole; a re-publish regenerates the pages the
//! replaced evidence fed and says which.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_model::fsutil::{FAULT_ENV, copy_tree};
use pqperf_model::{BuildJson, KatLog};

use common::{exe as pqperf, exits, ok, repo};

const KEY: &str = "sign-90/WOTS-PXOF-128";

fn build_json(run: &Path) -> BuildJson {
    pqperf_model::pyjson::read(&run.join("build.json"), Path::new("build.json")).unwrap()
}

fn kat_log(run: &Path) -> KatLog {
    let rel = "kat/sign-90/WOTS-PXOF-128.log";
    KatLog::read(&run.join(rel), Path::new(rel)).unwrap()
}

fn source(cand: &Path) -> PathBuf {
    cand.join("Reference_Implementation/WOTS-PXOF-128/wots.c")
}

/// Adds a global to the candidate's source: another library, the same KAT vectors.
fn change_source(cand: &Path, n: u32) {
    let p = source(cand);
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str(&format!("\nint pqperf_test_marker_{n} = {n};\n"));
    std::fs::write(&p, text).unwrap();
}

fn import(cand: &Path, rd: &str) {
    ok(
        None,
        &[
            "import",
            "iccs",
            cand.to_str().unwrap(),
            "--id",
            "sign-90",
            "--run-dir",
            rd,
        ],
    );
}

fn campaign(phase: &str, run: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["campaign", phase, "--run-dir"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.push(run.display().to_string());
    v.push("--systems".into());
    v.push(
        run.parent()
            .unwrap()
            .join("systems.csv")
            .display()
            .to_string(),
    );
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn reimport_without_rebuild_is_refused_and_a_rebuild_resets_the_kat_first() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let rd = run.to_str().unwrap();
    let cand = tmp.path().join("wots-pxof");
    copy_tree(&repo().join("testdata/candidates/wots-pxof"), &cand).unwrap();
    import(&cand, rd);
    let out = ok(None, &["build", "--run-dir", rd]);
    assert!(out.contains("built 1 library"), "{out}");
    ok(None, &["kat", "--run-dir", rd]);
    let bj = build_json(&run);
    let e = &bj.instances[KEY];
    assert_eq!(e.kat, "PASS");
    let inputs = pqperf_build::current::recorded_inputs(e)
        .expect("build.json records inputs_sha256")
        .to_string();
    // The KAT log names the library the parent handed to the child, and its inputs.
    let log = kat_log(&run);
    let lib_sha = pqperf_build::sha256_file(&run.join(e.library.as_ref().unwrap())).unwrap();
    assert_eq!(log.library_sha256(), Some(lib_sha.as_str()));
    assert_eq!(e.library_sha256.as_deref(), Some(lib_sha.as_str()));
    assert_eq!(log.get("inputs_sha256"), Some(inputs.as_str()));
    // The build log is one whole file of this build, no temporary left beside it.
    let blog = std::fs::read_to_string(run.join("build/sign-90.log")).unwrap();
    assert_eq!(
        blog.matches("# sign-90/WOTS-PXOF-128 (").count(),
        1,
        "{blog}"
    );
    let leftovers: Vec<String> = std::fs::read_dir(run.join("build"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Re-import of changed sources without a rebuild: every stage that would test or measure
    // the old library refuses, naming the instance and what to run; nothing changes.
    change_source(&cand, 1);
    import(&cand, rd);
    let before = std::fs::read(run.join("build.json")).unwrap();
    let out = exits(None, &["kat", "--run-dir", rd], 2);
    assert!(
        out.contains(KEY) && out.contains("run `pqperf build"),
        "{out}"
    );
    assert!(out.contains("catalog entry or import changed"), "{out}");
    let out = exits(None, &strs(&campaign("calibrate", &run, &[])), 2);
    assert!(
        out.contains(KEY) && out.contains("run `pqperf build"),
        "{out}"
    );
    let out = exits(None, &strs(&campaign("kat", &run, &[])), 2);
    assert!(out.contains(KEY), "{out}");
    let out = exits(None, &["ct", "--run-dir", rd], 2);
    assert!(
        out.contains(KEY) && out.contains("run `pqperf build"),
        "{out}"
    );
    assert_eq!(std::fs::read(run.join("build.json")).unwrap(), before);
    let e = &build_json(&run).instances[KEY];
    assert_eq!((e.kat.as_str(), e.guide_result.as_deref()), ("PASS", None));

    // A build killed at every write: build.json never claims a KAT verdict next to a library
    // it was not given for (the new library replaces the old one mid-build).
    let mut mid_build = 0;
    for k in 1..60 {
        let o = Command::new(pqperf())
            .args(["build", "--run-dir", rd])
            .env(FAULT_ENV, format!("{k}:kill"))
            .output()
            .unwrap();
        let bj = build_json(&run);
        let e = &bj.instances[KEY];
        if e.kat != "NOLOG" {
            let file = pqperf_build::sha256_file(&run.join(e.library.as_ref().unwrap())).ok();
            assert_eq!(
                file.as_deref(),
                e.library_sha256.as_deref(),
                "killed at write {k}: build.json says {} next to another library",
                e.kat
            );
            assert_eq!(kat_log(&run).library_sha256(), file.as_deref(), "write {k}");
        }
        if o.status.code().is_some() {
            assert!(o.status.success(), "write {k}: {}", common::text(&o));
            break;
        }
        let file = pqperf_build::sha256_file(&run.join(e.library.as_ref().unwrap())).ok();
        if file.is_some_and(|f| f != lib_sha) {
            // Killed after the new library was linked, before build.json named it.
            mid_build += 1;
        }
        // A library the killed build left is not the one build.json names: refused.
        if pqperf_build::stale_builds(&run, None, &pqperf_model::select::Selection::all())
            .unwrap()
            .is_empty()
        {
            continue;
        }
        let out = exits(None, &["kat", "--run-dir", rd], 2);
        assert!(out.contains("run `pqperf build"), "write {k}: {out}");
    }
    assert!(
        mid_build > 0,
        "no kill fell between the link and build.json"
    );
    let e = build_json(&run).instances[KEY].clone();
    assert_eq!(
        e.kat, "NOLOG",
        "a changed library is untested until its KAT ran"
    );
    assert_ne!(e.library_sha256.as_deref(), Some(lib_sha.as_str()));
    assert_ne!(
        pqperf_build::current::recorded_inputs(&e),
        Some(inputs.as_str())
    );
    let out = ok(None, &["kat", "--run-dir", rd]);
    assert!(out.contains("1 PASS"), "{out}");
    let e = &build_json(&run).instances[KEY];
    assert_eq!(
        (e.flags.as_str(), e.guide_result.as_deref()),
        ("guide", None)
    );
    assert_eq!(kat_log(&run).library_sha256(), e.library_sha256.as_deref());
}

#[test]
fn the_kat_phase_redoes_a_kat_log_of_another_library_or_keeps_it_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let rd = run.to_str().unwrap();
    import(&repo().join("testdata/candidates/wots-pxof"), rd);
    ok(None, &["build", "--run-dir", rd]);
    ok(None, &["kat", "--run-dir", rd]);
    // Current evidence: nothing to do.
    let out = ok(None, &strs(&campaign("kat", &run, &[])));
    assert!(out.contains("no built instance is waiting"), "{out}");
    // A KAT log naming another library (as one tested before a rebuild would), with
    // build.json describing that log.
    let rel = "kat/sign-90/WOTS-PXOF-128.log";
    let path = run.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let real = kat_log(&run).library_sha256().unwrap().to_string();
    let forged = text.replace(&real, &"0".repeat(64));
    std::fs::write(&path, &forged).unwrap();
    let mut bj = build_json(&run);
    bj.instances.get_mut(KEY).unwrap().kat_log_sha256 =
        Some(pqperf_model::katlog::sha256_hex(forged.as_bytes()));
    std::fs::write(
        run.join("build.json"),
        pqperf_model::pyjson::to_string(&bj).unwrap(),
    )
    .unwrap();
    let out = ok(None, &strs(&campaign("kat", &run, &["--keep-stale"])));
    assert!(
        out.contains("stale") && out.contains("kept (--keep-stale)"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), forged);
    let camp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    let kept = camp["pqperf"]["stale_kept"].as_array().unwrap();
    assert!(kept.iter().any(|k| k == rel), "{kept:?}");
    // Without --keep-stale the KAT runs again on the built library.
    let out = ok(None, &strs(&campaign("kat", &run, &[])));
    assert!(out.contains("done again"), "{out}");
    assert!(out.contains("1 PASS"), "{out}");
    assert_eq!(kat_log(&run).library_sha256(), Some(real.as_str()));
    assert_eq!(build_json(&run).instances[KEY].kat, "PASS");
    // Done again: no longer listed as kept stale (the method page says nothing then).
    let camp = std::fs::read_to_string(run.join("campaign.json")).unwrap();
    assert!(!camp.contains("stale_kept"), "{camp}");
}

#[test]
fn republishing_a_system_regenerates_the_pages_its_evidence_fed_and_says_which() {
    let Some(golden) = pqperf_model::golden::golden_harness() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("ds");
    copy_tree(&golden, &ds).unwrap();
    let run = tmp.path().join("run");
    copy_tree(&ds.join("performance/data/x86_1"), &run).unwrap();
    std::fs::copy(
        ds.join("performance/systems.csv"),
        tmp.path().join("systems.csv"),
    )
    .unwrap();
    let dss = ds.to_str().unwrap();
    // The candidate pages on disk are the regenerated ones before the publication.
    ok(None, &["report", dss, "--check", "--pages", "candidates"]);
    // The run holds one record less than the published system: that candidate's page changes.
    let rec = std::fs::read_dir(run.join("records"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .min()
        .unwrap();
    let cand = rec
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::remove_file(&rec).unwrap();
    let out = ok(
        None,
        &[
            "campaign",
            "publish",
            "--run-dir",
            run.to_str().unwrap(),
            "--publish-to",
            dss,
        ],
    );
    let page = format!("{cand}/perf_x86_1.md");
    assert!(
        out.contains("regenerated") && out.contains(&page),
        "publish does not name the regenerated page {page}:\n{out}"
    );
    assert!(out.contains("pqperf site"), "{out}");
    // Every candidate page on disk is what the new evidence gives.
    ok(None, &["report", dss, "--check", "--pages", "candidates"]);
}

#[test]
fn the_ct_phase_keeps_current_evidence_and_redoes_or_keeps_stale_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let rd = run.to_str().unwrap();
    ok(
        None,
        &[
            "import",
            "iccs",
            repo()
                .join("testdata/candidates/ct-toy-sig")
                .to_str()
                .unwrap(),
            "--id",
            "sign-80",
            "--run-dir",
            rd,
        ],
    );
    ok(None, &["build", "--run-dir", rd]);
    let bj = build_json(&run);
    let (key, e) = bj.instances.iter().next().unwrap();
    let path = run.join(format!("ct/{}/{}.json", e.candidate, e.label));
    let rel = format!("ct/{}/{}.json", e.candidate, e.label);
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let out = ok(None, &strs(&campaign("ct", &run, &[])));
    assert!(out.contains("phase ct: 2 instance(s)"), "{out}");
    // The evidence names the built library and its inputs.
    let ev = read();
    assert_eq!(
        ev["library_sha256"].as_str(),
        e.library_sha256.as_deref(),
        "{key}"
    );
    assert_eq!(
        ev["inputs_sha256"].as_str(),
        pqperf_build::current::recorded_inputs(e)
    );
    // Current evidence: not checked again.
    let out = ok(None, &strs(&campaign("ct", &run, &[])));
    assert!(
        out.contains("has ct evidence of its built library"),
        "{out}"
    );
    // Evidence of another library: kept with --keep-stale (and said so), else done again.
    let text = std::fs::read_to_string(&path).unwrap();
    let forged = text.replace(e.library_sha256.as_deref().unwrap(), &"0".repeat(64));
    std::fs::write(&path, &forged).unwrap();
    let out = ok(None, &strs(&campaign("ct", &run, &["--keep-stale"])));
    assert!(out.contains("kept (--keep-stale)"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), forged);
    let camp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    let kept = camp["pqperf"]["stale_kept"].as_array().unwrap();
    assert!(kept.iter().any(|k| *k == rel.as_str()), "{kept:?}");
    let out = ok(None, &strs(&campaign("ct", &run, &[])));
    assert!(out.contains("done again"), "{out}");
    assert_eq!(
        read()["library_sha256"].as_str(),
        e.library_sha256.as_deref()
    );
    let camp = std::fs::read_to_string(run.join("campaign.json")).unwrap();
    assert!(!camp.contains("stale_kept"), "{camp}");
}
