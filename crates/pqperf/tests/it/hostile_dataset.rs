//! Hostile datasets and outputs (issue 11): `validate`, `report`, `site` and `compare` refuse symbolic
//! links inside a dataset (naming the path) and read nothing outside the dataset root; `site`
//! never writes through a symbolic link already in `--out`.

use pqperf_test_support::{Ran, pqperf};
use std::os::unix::fs::symlink;
use std::path::Path;

fn golden(tmp: &Path) -> Option<std::path::PathBuf> {
    let g = pqperf_model::golden::golden_dir()?;
    let root = tmp.join("harness");
    pqperf_model::fsutil::copy_tree(&g.join("harness"), &root).unwrap();
    Some(root)
}

#[test]
fn symlinks_inside_a_dataset_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(root) = golden(tmp.path()) else {
        return;
    };
    // A symlinked build.json pointing outside the dataset (a copy of the real one, so only
    // the link itself can make it fail).
    let outside = tmp.path().join("outside-build.json");
    let bj = root.join("performance/data/x86_1/build.json");
    std::fs::rename(&bj, &outside).unwrap();
    symlink(&outside, &bj).unwrap();
    let r = root.to_str().unwrap();
    let out_dir = tmp.path().join("site");
    for args in [
        vec!["validate", r],
        vec!["report", r, "--check"],
        vec!["site", r, "--out", out_dir.to_str().unwrap()],
        vec!["compare", r, r, "--system", "x86_1"],
    ] {
        let (code, text) = pqperf().args(&args).code_text();
        assert_ne!(code, 0, "{args:?}: {text}");
        assert!(
            text.contains("performance/data/x86_1/build.json") && text.contains("symbolic link"),
            "{args:?}: {text}"
        );
    }
    assert!(!out_dir.join("evidence/x86_1/build.json").exists());
    // A symlinked directory to /etc: nothing of /etc is read or quoted.
    std::fs::remove_file(&bj).unwrap();
    std::fs::rename(&outside, &bj).unwrap();
    symlink("/etc", root.join("performance/data/x86_1/katcheck")).unwrap();
    let (code, text) = pqperf().args(["validate", r]).code_text();
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("performance/data/x86_1/katcheck"), "{text}");
    assert!(!text.contains("root:"), "{text}");
}

#[test]
fn site_does_not_write_through_links_in_out() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(root) = golden(tmp.path()) else {
        return;
    };
    let out = tmp.path().join("site");
    std::fs::create_dir_all(&out).unwrap();
    let victim = tmp.path().join("victim.css");
    std::fs::write(&victim, "keep").unwrap();
    symlink(&victim, out.join("style.css")).unwrap();
    let (code, text) = pqperf()
        .args([
            "site",
            root.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .code_text();
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("style.css") && text.contains("symbolic link"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    // Without the link the same command works.
    std::fs::remove_file(out.join("style.css")).unwrap();
    let (code, text) = pqperf()
        .args([
            "site",
            root.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .code_text();
    assert_eq!(code, 0, "{text}");
    assert!(out.join("style.css").is_file());
}
