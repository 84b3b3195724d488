//! Shared set-up of the constant-time tests: PQClean (the pinned crate) imported into a
//! fresh run directory and the selected instances built.

use std::path::PathBuf;

use pqperf_build::{BuildOptions, PqcleanImportOptions};

/// A temporary run directory with PQClean imported and the instances `only` selects built
/// (asserting that `built` of them were); keep the first value alive while using the run.
pub fn pqclean_run(only: &str, built: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    pqperf_build::import_pqclean(&PqcleanImportOptions {
        run_dir: run_dir.clone(),
        catalog: None,
        tree: None,
    })
    .unwrap();
    let mut b = BuildOptions::new(&run_dir);
    b.select = pqperf_model::select::Selection::only(Some(only)).unwrap();
    assert_eq!(pqperf_build::build(&b).unwrap().built.len(), built);
    (tmp, run_dir)
}
