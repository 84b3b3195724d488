//! The files below a directory, sorted, recursively (what the path scan reads).

use std::path::{Path, PathBuf};

pub(crate) fn list_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            list_files(&p, out);
        } else if p.is_file() {
            out.push(p);
        }
    }
}
