//! `pqperf validate` as a user runs it: exit status, problem lines and summary.

use crate::common;

use std::path::Path;

use pqperf_model::golden::golden_harness;

fn copy_tree(from: &Path, to: &Path) {
    pqperf_model::fsutil::copy_tree(from, to).unwrap();
}

fn run(args: &[&str]) -> (i32, String, String) {
    common::status(args)
}

#[test]
fn validate_golden_then_a_broken_copy() {
    let Some(golden) = golden_harness() else {
        return;
    };
    let (code, out, err) = run(&["validate", golden.to_str().unwrap()]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("validate: 2 system(s) [x86_1, arm_1], 69 timing record(s)"),
        "{out}"
    );
    assert!(out.trim_end().ends_with(": 0 problem(s)"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ds");
    copy_tree(&golden, &root);
    let rec = "performance/data/arm_1/records/sign-06/COMPASS-SIG-512__sign.json";
    let text = std::fs::read_to_string(root.join(rec)).unwrap();
    std::fs::write(root.join(rec), &text[..text.len() - 100]).unwrap();
    let (code, out, _) = run(&["validate", root.to_str().unwrap(), "--system", "arm_1"]);
    assert_eq!(code, 1, "{out}");
    let first = out.lines().next().unwrap();
    assert!(first.starts_with(&format!("{rec}:")), "{out}");
    let (code, out, _) = run(&[
        "validate",
        root.to_str().unwrap(),
        "--system",
        "arm_1",
        "--no-pages",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines().last().unwrap().ends_with(": 1 problem(s)"),
        "{out}"
    );
    // The other system is not affected.
    let (code, _, _) = run(&["validate", root.to_str().unwrap(), "--system", "x86_1"]);
    assert_eq!(code, 0);
}

#[test]
fn validate_help_and_usage_errors() {
    let (code, out, _) = run(&["validate", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("--system <ID>") && out.contains("DATASET_ROOT"),
        "{out}"
    );
    assert!(out.contains("absolute machine paths"), "{out}");
    let (code, _, err) = run(&["validate", "/nonexistent/pqperf-dataset"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/nonexistent/pqperf-dataset: no such file or directory"),
        "{err}"
    );
}
