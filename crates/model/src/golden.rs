//! Location of the golden fixtures (published reference evidence and pages) for tests.
//!
//! Tests of every crate read them through [`golden_dir`]; the fixtures are never copied into
//! the repository.

use std::path::PathBuf;

/// The golden fixture directory (`…/shared/golden`, holding `harness/` and `site/`).
///
/// * `PQPERF_GOLDEN=skip` → `None` (a note is printed to stderr; tests then skip);
/// * `PQPERF_GOLDEN=<dir>` → that directory;
/// * otherwise `../shared/golden` beside the workspace, resolved from this crate's manifest
///   directory at build time.
///
/// # Panics
/// When the directory does not exist, with a message saying how to point at the fixtures:
/// missing fixtures must fail tests loudly, never pass them silently.
pub fn golden_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("PQPERF_GOLDEN") {
        Some(v) if v == "skip" => {
            eprintln!("note: golden fixtures skipped (PQPERF_GOLDEN=skip)");
            return None;
        }
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/golden"
        )),
    };
    if !dir.join("harness").is_dir() {
        panic!(
            "golden fixtures not found at {} (expected harness/ and site/ inside): set \
             PQPERF_GOLDEN to the shared/golden directory, or PQPERF_GOLDEN=skip to skip \
             the tests that need them",
            dir.display()
        );
    }
    Some(dir.canonicalize().unwrap_or(dir))
}

/// `golden_dir()/harness`: the golden dataset root in the harness layout.
pub fn golden_harness() -> Option<PathBuf> {
    golden_dir().map(|d| d.join("harness"))
}
