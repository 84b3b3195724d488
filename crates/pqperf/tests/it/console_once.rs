//! What the console says, said once and true: a parameter set selected by a macro named like
//! its folder (`testdata/candidates/select-sig`, folder `SELS_128`, instance `SELS-128`)
//! imports without a false "they disagree" and with the define it needs named; without it
//! the build fails with the compiler's first error and the log; with it the instance passes
//! its KAT. In a campaign phase every KAT verdict and the ct and count summaries appear once.

use crate::common;

use common::{exits, ok, repo};

#[test]
fn a_macro_selected_set_is_named_at_import_and_verdicts_print_once() {
    let tmp = tempfile::tempdir().unwrap();
    let cand = repo().join("testdata/candidates/select-sig");
    let cand = cand.to_str().unwrap();
    let run = tmp.path().join("runs/s");
    let run = run.to_str().unwrap();
    let out = ok(
        None,
        &["import", "iccs", cand, "--id", "sign-93", "--run-dir", run],
    );
    assert!(!out.contains("they disagree"), "{out}");
    assert!(
        out.contains("the sources select a parameter set with the macro SELS_128 (the folder's name), which is not defined")
            && out.contains("--define SELS_128"),
        "{out}"
    );
    let out = exits(None, &["build", "--run-dir", run], 1);
    assert!(out.contains("BUILDFAIL sign-93/SELS-128"), "{out}");
    assert!(out.contains("'MSIG_N' undeclared"), "{out}");
    assert!(out.contains("log: "), "{out}");

    let run2 = tmp.path().join("runs/d");
    let run2 = run2.to_str().unwrap();
    let out = ok(
        None,
        &[
            "import",
            "iccs",
            cand,
            "--id",
            "sign-93",
            "--run-dir",
            run2,
            "--define",
            "SELS_128",
        ],
    );
    assert!(!out.contains("they disagree"), "{out}");
    assert!(!out.contains("is not defined"), "{out}");
    ok(None, &["build", "--run-dir", run2]);
    let out = ok(None, &["kat", "--run-dir", run2]);
    assert_eq!(
        out.matches("PASS").count(),
        2,
        "verdict and summary only: {out}"
    );
    assert!(out.contains("RESULT sign-93 SELS-128 PASS"), "{out}");
    // The campaign phase: the verdict once (the progress names only what was checked).
    let out = ok(None, &["campaign", "kat", "--run-dir", run2, "--redo"]);
    assert_eq!(out.matches("RESULT sign-93 SELS-128").count(), 1, "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("SELS-128") && l.contains("PASS"))
            .count(),
        1,
        "{out}"
    );
    // ct in a campaign: each CT line and the summary once.
    if std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let out = ok(None, &["campaign", "ct", "--run-dir", run2]);
        assert_eq!(out.matches("CT sign-93/SELS-128:").count(), 1, "{out}");
        assert_eq!(out.matches("instance(s) in ").count(), 1, "{out}");
    }
}
