//! Location of the shared test fixtures: the golden fixtures (published reference evidence and
//! pages, [`golden_dir`]) and the official ICCS helper files ([`iccs_official_dir`]).
//!
//! Tests of every crate find them here; the fixtures are never copied into the repository.

use std::ffi::OsString;
use std::path::PathBuf;

/// The default location: `../shared/golden` beside the workspace, from this crate's manifest
/// directory at build time.
const DEFAULT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/golden");

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
    match resolve(std::env::var_os("PQPERF_GOLDEN")) {
        Ok(Some(d)) => Some(d),
        Ok(None) => {
            eprintln!("note: golden fixtures skipped (PQPERF_GOLDEN=skip)");
            None
        }
        Err(msg) => panic!("{msg}"),
    }
}

/// [`golden_dir`] for a given value of `PQPERF_GOLDEN`: `Ok(None)` to skip, `Err` with the
/// message when the fixtures are absent.
pub fn resolve(env: Option<OsString>) -> Result<Option<PathBuf>, String> {
    let dir = match env {
        Some(v) if v == "skip" => return Ok(None),
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT),
    };
    if !dir.join("harness").is_dir() {
        return Err(format!(
            "golden fixtures not found at {} (expected harness/ and site/ inside): set \
             PQPERF_GOLDEN to the shared/golden directory, or PQPERF_GOLDEN=skip to skip \
             the tests that need them",
            dir.display()
        ));
    }
    Ok(Some(dir.canonicalize().unwrap_or(dir)))
}

/// `golden_dir()/harness`: the golden dataset root in the harness layout.
pub fn golden_harness() -> Option<PathBuf> {
    golden_dir().map(|d| d.join("harness"))
}

/// The official ICCS helper files (`…/shared/iccs-official`, holding `auxfunc.c`, `drng.c`, …):
/// `$PQPERF_ICCS_OFFICIAL`, or `../shared/iccs-official` beside the workspace;
/// `PQPERF_ICCS_OFFICIAL=skip` → `None` (explicit opt-out).
///
/// # Panics
/// When the files are absent, with a message saying how to point at them.
pub fn iccs_official_dir() -> Option<PathBuf> {
    let d = match std::env::var_os("PQPERF_ICCS_OFFICIAL") {
        Some(v) if v == "skip" => return None,
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/iccs-official"
        )),
    };
    assert!(
        d.join("auxfunc.c").is_file(),
        "official ICCS files not found at {} (set PQPERF_ICCS_OFFICIAL=DIR, or =skip)",
        d.display()
    );
    Some(d.canonicalize().unwrap_or(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_absent_and_explicit() {
        assert_eq!(resolve(Some("skip".into())), Ok(None));
        let err = resolve(Some("/nonexistent/golden".into())).unwrap_err();
        assert!(
            err.contains("golden fixtures not found at /nonexistent/golden"),
            "{err}"
        );
        assert!(err.contains("PQPERF_GOLDEN=skip"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("harness")).unwrap();
        let got = resolve(Some(dir.path().as_os_str().to_owned()))
            .unwrap()
            .unwrap();
        assert_eq!(got, dir.path().canonicalize().unwrap());
    }
}
