//! Helpers shared by the report tests: a writable copy of the golden dataset, JSON edits,
//! line assertions.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A writable copy of the golden harness dataset (None when PQPERF_GOLDEN=skip).
pub fn golden_copy() -> Option<(tempfile::TempDir, PathBuf)> {
    let src = pqperf_model::golden::golden_harness()?;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("harness");
    pqperf_model::fsutil::copy_tree(&src, &root).unwrap();
    Some((dir, root))
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

pub fn write_json(p: &Path, v: &Value) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap() + "\n").unwrap();
}

pub fn edit_json(p: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = read_json(p);
    f(&mut v);
    write_json(p, &v);
}

/// The page has this exact line.
pub fn assert_has(page: &str, line: &str) {
    assert!(
        page.lines().any(|l| l == line),
        "missing line:\n{line}\n--- page ---\n{page}"
    );
}
