//! `validate` on the golden dataset copied into a temporary directory, then mutated: each
//! mutation must be reported naming the file and the field.

use std::path::{Path, PathBuf};

use pqperf_validate::{Problem, validate};

/// A writable copy of the golden harness dataset (None when PQPERF_GOLDEN=skip).
fn golden_copy() -> Option<(tempfile::TempDir, PathBuf)> {
    let src = golden_harness()?;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("harness");
    pqperf_model::fsutil::copy_tree(&src, &root).unwrap();
    Some((dir, root))
}
use pqperf_model::golden::golden_harness;

fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        let mut es: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, out);
            } else {
                let b = std::fs::read(&p).unwrap();
                out.push((p, b));
            }
        }
    }
    let mut v = Vec::new();
    walk(root, &mut v);
    v
}

fn edit(root: &Path, rel: &str, f: impl FnOnce(String) -> String) {
    let p = root.join(rel);
    let text = std::fs::read_to_string(&p).unwrap();
    let new = f(text.clone());
    assert_ne!(new, text, "mutation of {rel} changed nothing");
    std::fs::write(&p, new).unwrap();
}

fn has(problems: &[Problem], file: &str, field: &str, msg: &str) -> bool {
    problems
        .iter()
        .any(|p| p.file.starts_with(file) && p.field == field && p.message.contains(msg))
}

fn show(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}\n")).collect()
}

const REC: &str = "performance/data/x86_1/records/sign-02/BiT-128__sign.json";

#[test]
fn golden_dataset_passes_and_nothing_is_written() {
    let Some(root) = golden_harness() else { return };
    let before = snapshot(&root);
    let rep = validate(&root, None);
    assert!(
        rep.ok(),
        "problems on the golden dataset:\n{}",
        show(&rep.problems)
    );
    assert_eq!(rep.systems, ["x86_1", "arm_1"]);
    assert_eq!(rep.records, 69);
    assert_eq!(rep.profiles, 60);
    assert_eq!(
        rep.pages, 6,
        "the six harness candidate pages are regenerated and compared"
    );
    assert!(rep.kat_logs >= 20, "{}", rep.kat_logs);
    assert!(
        rep.summary().ends_with(": 0 problem(s)"),
        "{}",
        rep.summary()
    );
    assert_eq!(snapshot(&root), before, "validate wrote into the dataset");
    let one = validate(&root, Some("arm_1"));
    assert!(one.ok() && one.systems == ["arm_1"] && one.records < rep.records);
}

#[test]
fn changed_trial_value_is_reported() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    // Change the first top-level trial's seconds (the 6th "seconds" in the file: five
    // processes hold one trial each, then the top-level list).
    edit(&root, REC, |t| {
        let mut n = 0;
        let mut out = String::new();
        for line in t.split_inclusive('\n') {
            if let Some((indent, _)) = line.split_once("\"seconds\": ") {
                n += 1;
                if n == 6 {
                    out.push_str(&format!("{indent}\"seconds\": 1.5,\n"));
                    continue;
                }
            }
            out.push_str(line);
        }
        out
    });
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    assert!(
        has(p, REC, "mean_seconds", "but the trials give"),
        "{}",
        show(p)
    );
    assert!(
        has(p, REC, "operations_per_second", "but the trials give"),
        "{}",
        show(p)
    );
    assert!(has(p, REC, "trials", "trials[0] differs"), "{}", show(p));
    assert!(p.iter().all(|x| x.file.starts_with(REC)), "{}", show(p));
    assert!(
        !has(p, REC, "", "layout"),
        "the mutation keeps the layout: {}",
        show(p)
    );
}

#[test]
fn changed_kat_log_byte_is_reported() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    let log = "performance/data/arm_1/kat/sign-08/DARTS256.log";
    edit(&root, log, |t| t.replacen("sn_len", "sn_lem", 1));
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    assert!(
        has(
            p,
            log,
            "sha256",
            "!= build.json instances.sign-08/DARTS256.kat_log_sha256"
        ),
        "{}",
        show(p)
    );
    // The records that cite the log see the mismatch too.
    assert!(
        has(
            p,
            "performance/data/arm_1/records/sign-08/DARTS256__sign.json",
            "kat_log_sha256",
            "!= digest"
        ),
        "{}",
        show(p)
    );
}

#[test]
fn absolute_path_in_record_is_reported() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    edit(&root, REC, |t| {
        t.replacen(
            "\"library\": \"sign-02/lib/libBiT-128.so\"",
            "\"library\": \"/home/alice/ngcc/sign-02/lib/libBiT-128.so\"",
            1,
        )
    });
    let rec2 = "performance/data/arm_1/records/sign-06/COMPASS-SIG-128__keygen.json";
    edit(&root, rec2, |t| {
        t.replacen(
            "\"performance/ngcc_perf\"",
            "\"/opt/h/performance/ngcc_perf\"",
            1,
        )
    });
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    assert!(
        has(
            p,
            REC,
            "library",
            "absolute machine path \"/home/alice/ngcc/sign-02/lib/libBiT-128.so\""
        ),
        "{}",
        show(p)
    );
    assert!(
        has(
            p,
            rec2,
            "processes[0].command[3]",
            "absolute path \"/opt/h/performance/ngcc_perf\""
        ),
        "{}",
        show(p)
    );
}

#[test]
fn truncated_json_is_reported_with_line_and_column() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    let prof = "performance/data/x86_1/profile/sign-06/COMPASS-SIG-256__verify.json";
    edit(&root, prof, |t| t[..t.len() / 2].to_string());
    edit(&root, "performance/data/arm_1/build.json", |t| {
        t[..t.len() - 40].to_string()
    });
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    let trunc = p
        .iter()
        .find(|x| x.file.starts_with(&format!("{prof}:")))
        .unwrap_or_else(|| panic!("{}", show(p)));
    let loc: Vec<&str> = trunc.file[prof.len() + 1..].split(':').collect();
    assert_eq!(loc.len(), 2, "{trunc}");
    assert!(loc.iter().all(|n| n.parse::<usize>().is_ok()), "{trunc}");
    assert!(trunc.message.contains("EOF"), "{trunc}");
    assert!(
        p.iter()
            .any(|x| x.file.starts_with("performance/data/arm_1/build.json:")),
        "{}",
        show(p)
    );
}

#[test]
fn stray_files_newer_schema_and_stats_flags() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    std::fs::write(root.join("performance/data/notes.json"), "{}\n").unwrap();
    std::fs::write(
        root.join("performance/data/x86_1/records/sign-02/README.txt"),
        "x\n",
    )
    .unwrap();
    let rec = "performance/data/arm_1/records/sign-02/BiT-256__verify.json";
    edit(&root, rec, |t| {
        t.replacen("\"schema\": 2", "\"schema\": 7", 1)
    });
    let prof = "performance/data/arm_1/profile/sign-02/BiT-128__sign.json";
    edit(&root, prof, |t| {
        t.replacen("\"ticks\": 30655", "\"ticks\": 30656", 1)
    });
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    assert!(
        has(p, "performance/data/notes.json", "", "stray"),
        "{}",
        show(p)
    );
    assert!(
        has(
            p,
            "performance/data/x86_1/records/sign-02/README.txt",
            "",
            "stray"
        ),
        "{}",
        show(p)
    );
    assert!(has(p, rec, "schema", "schema 7 is newer"), "{}", show(p));
    assert!(
        has(p, prof, "share.drng", "calls/total give"),
        "{}",
        show(p)
    );
}

#[test]
fn page_that_differs_from_the_evidence_is_reported() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    let page = "sign-08/perf_arm_1.md";
    edit(&root, page, |t| t.replacen("DARTS", "DARTZ", 1));
    let rep = validate(&root, None);
    let p = &rep.problems;
    eprintln!("{}{}", show(p), rep.summary());
    assert_eq!(p.len(), 1, "{}", show(p));
    assert!(
        p[0].file.starts_with("sign-08/perf_arm_1.md:"),
        "{}",
        show(p)
    );
    assert!(p[0].message.contains("regenerated"), "{}", show(p));
    let off = pqperf_validate::validate_with(
        &root,
        &pqperf_validate::Options {
            system: None,
            pages: false,
        },
    );
    assert!(off.ok() && off.pages == 0);
}

#[test]
fn single_system_or_run_directory_validates() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    // Working files of a run directory are not stray; anything else is.
    std::fs::write(sys.join("campaign.log"), "2026-09-28 10:00:00 start\n").unwrap();
    std::fs::create_dir_all(sys.join("calibrate/sign-02")).unwrap();
    std::fs::write(sys.join("calibrate/sign-02/BiT-128__sign.json"), "{}\n").unwrap();
    let rep = validate(&sys, None);
    assert!(rep.ok(), "{}", show(&rep.problems));
    assert_eq!(rep.systems, ["x86_1"]);
    assert_eq!(rep.records, 39);
    std::fs::write(sys.join("notes.txt"), "x\n").unwrap();
    let rep = validate(&sys, None);
    assert!(
        has(&rep.problems, "notes.txt", "", "stray"),
        "{}",
        show(&rep.problems)
    );
}

#[test]
fn security_targets_missing_and_stale_rows() {
    let Some((_d, root)) = golden_copy() else {
        return;
    };
    let ds = pqperf_model::Dataset::load(&root).unwrap();
    let mut rows = String::from("# targets\nID;Instance;TargetBits\n");
    let mut seen = std::collections::BTreeSet::new();
    for sys in &ds.systems {
        for e in sys.build.as_ref().unwrap().value.instances.values() {
            if e.label != "DARTS512" && seen.insert(e.label.clone()) {
                rows.push_str(&format!("{};{};128\n", e.candidate, e.label));
            }
        }
    }
    rows.push_str("sign-99;Ghost-1;256\n");
    std::fs::write(root.join("performance/security_targets.csv"), &rows).unwrap();
    let rep = validate(&root, None);
    let p = &rep.problems;
    assert_eq!(p.len(), 3, "{}", show(p));
    assert!(
        has(
            p,
            "performance/security_targets.csv",
            "Instance",
            "missing sign-08;DARTS512 (built on x86_1)"
        ),
        "{}",
        show(p)
    );
    assert!(
        has(
            p,
            "performance/security_targets.csv",
            "Instance",
            "missing sign-08;DARTS512 (built on arm_1)"
        ),
        "{}",
        show(p)
    );
    assert!(
        has(
            p,
            "performance/security_targets.csv:",
            "Instance",
            "stale sign-99;Ghost-1"
        ),
        "{}",
        show(p)
    );
}
