//! What an ICCS import did, kept for the evidence (issue 27): `<run>/imports/<id>.json`,
//! written by `pqperf import iccs`, read by `pqperf build`, which copies the instance's part
//! into its build.json entry (`provenance`), and from there onto the pages.
//!
//! Paths are never absolute: the submission is named by its file name, the commands drop
//! `--run-dir`/`--catalog` and show the submission by its file name.

use std::path::Path;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// `<run>/imports/<id>.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportRecord {
    /// Candidate id.
    pub id: String,
    /// Per label, in import order.
    pub instances: IndexMap<String, ImportedInstance>,
}

/// One imported parameter set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportedInstance {
    /// The import command as run (every flag and define; paths by file name).
    pub command: String,
    /// pqperf that imported (`pqperf 0.1.0 (commit 1a2b…)`).
    pub tool: String,
    /// The submission as given: `archive NAME.zip` or `tree NAME`.
    pub source: String,
    /// sha256 of the archive, or [`tree_sha256`] of the tree.
    pub source_sha256: String,
    /// Name of the instance folder.
    pub folder: String,
    /// `ALGORITHM_INSTANCE` as gcc evaluated it with the defines (None: not evaluable).
    pub evaluated_instance: Option<String>,
    /// The manifest entry of the folder or instance (`<label>/<file>`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_entry: Option<String>,
    /// The one-line disagreement between folder, instance and manifest entry, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_note: Option<String>,
    /// The catalog instance as imported (JSON), to name later hand edits.
    pub catalog: serde_json::Value,
}

impl ImportRecord {
    /// `<run>/imports/<id>.json`.
    pub fn path(run_dir: &Path, id: &str) -> std::path::PathBuf {
        crate::layout::RunLayout::new(run_dir).import_record(id)
    }

    /// Read the record of `id` (None when absent or unreadable: an older run).
    pub fn load(run_dir: &Path, id: &str) -> Option<ImportRecord> {
        let t = std::fs::read_to_string(Self::path(run_dir, id)).ok()?;
        serde_json::from_str(&t).ok()
    }

    /// Write atomically.
    pub fn save(&self, run_dir: &Path) -> std::io::Result<()> {
        let p = Self::path(run_dir, &self.id);
        // The reference serialisation, like every JSON file of a run directory.
        let text = crate::pyjson::to_string(self).map_err(std::io::Error::other)?;
        crate::fsutil::write_atomic(&p, text.as_bytes())
    }
}

/// Digest of a source tree: sha256 of the sorted lines `<sha256 of file>  <relative path>\n`
/// (the `sha256sum` format) over every regular file below `root`; symbolic links are not
/// followed.
pub fn tree_sha256(root: &Path) -> std::io::Result<String> {
    let mut lines = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let ft = e.file_type()?;
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                let data = std::fs::read(&p)?;
                let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy();
                lines.push(format!("{}  {rel}\n", hex::encode(Sha256::digest(&data))));
            }
        }
    }
    lines.sort();
    Ok(hex::encode(Sha256::digest(lines.concat().as_bytes())))
}

/// Fields of `now` that differ from `imported` (both JSON objects of a catalog instance):
/// `field = now (imported: before)`, in `now`'s key order, then removed fields.
pub fn catalog_edits(imported: &serde_json::Value, now: &serde_json::Value) -> Vec<String> {
    let (Some(a), Some(b)) = (imported.as_object(), now.as_object()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in b {
        match a.get(k) {
            Some(old) if old == v => {}
            Some(old) => out.push(format!("{k} = {v} (imported: {old})")),
            None => out.push(format!("{k} = {v} (not set by the import)")),
        }
    }
    for (k, old) in a {
        if !b.contains_key(k) {
            out.push(format!("{k} removed (imported: {old})"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_and_tree_digest() {
        let a = json!({"label": "X", "exclude": [], "no_drng": false});
        let b = json!({"label": "X", "exclude": ["SPEED_KEM.c"], "files": ["*.c"]});
        assert_eq!(
            catalog_edits(&a, &b),
            vec![
                "exclude = [\"SPEED_KEM.c\"] (imported: [])".to_string(),
                "files = [\"*.c\"] (not set by the import)".into(),
                "no_drng removed (imported: false)".into()
            ]
        );
        assert!(catalog_edits(&a, &a).is_empty());
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("s")).unwrap();
        std::fs::write(d.path().join("s/a.c"), "int a;\n").unwrap();
        let h1 = tree_sha256(d.path()).unwrap();
        // Same as `sha256sum` lines of the sorted files, hashed.
        let line = format!("{}  s/a.c\n", hex::encode(Sha256::digest(b"int a;\n")));
        assert_eq!(h1, hex::encode(Sha256::digest(line.as_bytes())));
        std::fs::write(d.path().join("s/a.c"), "int b;\n").unwrap();
        assert_ne!(tree_sha256(d.path()).unwrap(), h1);
    }
}
