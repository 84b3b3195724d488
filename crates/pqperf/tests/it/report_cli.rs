//! `pqperf report` end to end on a temporary copy of the golden dataset: `--check` passes,
//! fails with a unified diff after one byte of a page changed, and malformed evidence gives an
//! error naming file and line with nothing written.

use pqperf_test_support::{Ran, pqperf};

use std::path::Path;

fn copy_tree(from: &Path, to: &Path) {
    pqperf_model::fsutil::copy_tree(from, to).unwrap();
}

#[test]
fn report_check_on_golden_copy() {
    let Some(g) = pqperf_model::golden::golden_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("harness");
    copy_tree(&g.join("harness"), &root);
    let r = root.to_str().unwrap();

    let (code, stdout, stderr) = pqperf()
        .args(["report", r, "--check", "--pages", "candidates"])
        .code_out_err();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("report check: system x86_1: 3 pages, 0 differ"),
        "{stdout}"
    );
    assert!(
        stdout.contains("report check: system arm_1: 3 pages, 0 differ"),
        "{stdout}"
    );

    // Site form against the golden site pages.
    let site = g.join("site");
    let (code, stdout, _) = pqperf()
        .args([
            "report",
            r,
            "--form",
            "site",
            "--out",
            site.to_str().unwrap(),
            "--check",
            "--pages",
            "candidates",
        ])
        .code_out_err();
    assert_eq!(code, 0, "{stdout}");

    // One changed byte: exit 1, the path and a unified diff.
    let page = root.join("sign-06/perf_arm_1.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &page,
        text.replacen("COMPASS-SIG-128` | keygen", "COMPASS-SIG-128` | keygeN", 1),
    )
    .unwrap();
    let (code, stdout, _) = pqperf()
        .args([
            "report",
            r,
            "--system",
            "arm_1",
            "--check",
            "--pages",
            "candidates",
        ])
        .code_out_err();
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("differs from regenerated output: sign-06/perf_arm_1.md"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--- a/sign-06/perf_arm_1.md (committed)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n-| `COMPASS-SIG-128` | keygeN |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n+| `COMPASS-SIG-128` | keygen |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("report check: system arm_1: 3 pages, 1 differ"),
        "{stdout}"
    );

    // Writing in place repairs it; then the full set (summary, survey, method) is written.
    let (code, stdout, stderr) = pqperf()
        .args(["report", r, "--system", "arm_1"])
        .code_out_err();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("report: system arm_1: 3 candidate reports (<id>/perf_arm_1.md), summary_arm_1.md, method_arm_1.md in "), "{stdout}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), text);
    assert!(root.join("performance/method_arm_1.md").is_file());
    let (code, stdout, _) = pqperf()
        .args(["report", r, "--system", "arm_1", "--check"])
        .code_out_err();
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn report_bad_input_names_file_and_line_and_writes_nothing() {
    let Some(g) = pqperf_model::golden::golden_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("harness");
    copy_tree(&g.join("harness"), &root);
    // Truncate one record.
    let rec = root.join("performance/data/x86_1/records/sign-08/DARTS128__sign.json");
    let text = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, &text[..text.len() / 2]).unwrap();
    let out = tmp.path().join("out");
    let (code, stdout, stderr) = pqperf()
        .args([
            "report",
            root.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .code_out_err();
    assert_ne!(code, 0, "{stdout}");
    assert!(
        stderr.contains("performance/data/x86_1/records/sign-08/DARTS128__sign.json:"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing may be written on bad input");

    // A bad label regex in a side file: file and line, nothing written.
    std::fs::write(&rec, &text).unwrap();
    let notes = root.join("performance/kat_issues.csv");
    let mut csv = std::fs::read_to_string(&notes).unwrap();
    csv.push_str("sign-08;DARTS[;measure;broken pattern\n");
    std::fs::write(&notes, csv).unwrap();
    let (code, _, stderr) = pqperf()
        .args([
            "report",
            root.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .code_out_err();
    assert_ne!(code, 0);
    assert!(
        stderr.contains("performance/kat_issues.csv:18: Label: bad regular expression 'DARTS['"),
        "{stderr}"
    );
    assert!(!out.exists());
}
