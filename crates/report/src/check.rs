//! Writing rendered pages atomically, and `--check`: comparing them with the files on disk
//! (method.md §13.0), with a unified diff of the first difference.

use std::path::Path;

/// Outcome of comparing rendered pages with the files under an output root.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Pages compared.
    pub pages: usize,
    /// Relative paths of pages that differ (or are missing), in page order.
    pub differing: Vec<String>,
    /// Unified diff (committed → regenerated) of the first differing page.
    pub first_diff: Option<String>,
}

impl CheckReport {
    /// True when every page matched.
    pub fn ok(&self) -> bool {
        self.differing.is_empty()
    }
}

/// Unified diff of `old` (on disk) against `new` (regenerated), with 3 lines of context.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{path} (committed)"),
            &format!("b/{path} (regenerated)"),
        )
        .to_string()
}

/// Compare `pages` (relative path, text) with the files under `root`. A missing or unreadable
/// file counts as a difference.
pub fn check_pages(root: &Path, pages: &[(String, String)]) -> CheckReport {
    let mut report = CheckReport {
        pages: pages.len(),
        ..Default::default()
    };
    for (rel, text) in pages {
        let on_disk = pqperf_model::limits::read_bounded(&root.join(rel), Path::new(rel)).ok();
        let same = on_disk.as_deref() == Some(text.as_bytes());
        if same {
            continue;
        }
        report.differing.push(rel.clone());
        if report.first_diff.is_none() {
            let old = match &on_disk {
                Some(b) => String::from_utf8_lossy(b).into_owned(),
                None => String::new(),
            };
            let mut d = unified_diff(rel, &old, text);
            if on_disk.is_none() {
                d = format!("{rel}: missing on disk\n{d}");
            }
            report.first_diff = Some(d);
        }
    }
    report
}

/// Write every page under `root` atomically (each file is replaced in one rename). Call only
/// after every page rendered, so that bad input writes nothing.
pub fn write_pages(root: &Path, pages: &[(String, String)]) -> std::io::Result<()> {
    for (rel, text) in pages {
        let path = root.join(rel);
        pqperf_model::fsutil::write_atomic(&path, text.as_bytes())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(())
}
