//! What validation reports: one [`Problem`] per finding (`file: field: message`) and the
//! [`Report`] of a run (problems plus counts); helpers the checks share to phrase them.

use std::fmt;
use std::path::Path;

use pqperf_model::ModelError;

/// Relative tolerance for recomputed floats.
pub const REL_TOL: f64 = 1e-9;

/// One problem: `file: field: message` (`file` may carry `:line[:col]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// File relative to the dataset root, possibly with `:line[:col]`.
    pub file: String,
    /// Field (JSON path, CSV column, log key), empty when the whole file is concerned.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.field, self.message)
        }
    }
}

impl Problem {
    pub(crate) fn new(
        file: impl AsRef<Path>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.as_ref().display().to_string(),
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn from_model(e: &ModelError) -> Self {
        let mut file = e.path().display().to_string();
        if let ModelError::Json { loc, .. } | ModelError::Text { loc, .. } = e {
            file.push_str(&loc.to_string());
        }
        Problem {
            file,
            field: e.field().unwrap_or("").to_string(),
            message: e.message(),
        }
    }
}

/// Result of a validation run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every problem, in check order.
    pub problems: Vec<Problem>,
    /// Systems checked.
    pub systems: Vec<String>,
    /// Timing records checked.
    pub records: usize,
    /// Profiles checked.
    pub profiles: usize,
    /// KAT logs checked.
    pub kat_logs: usize,
    /// Files scanned for absolute paths.
    pub files_scanned: usize,
    /// Pages regenerated and compared with the files on disk.
    pub pages: usize,
}

impl Report {
    /// True when no problem was found.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The closing summary line.
    pub fn summary(&self) -> String {
        format!(
            "validate: {} system(s) [{}], {} timing record(s), {} profile(s), {} KAT log(s), {} file(s) scanned, {} page(s) regenerated: {} problem(s)",
            self.systems.len(),
            self.systems.join(", "),
            self.records,
            self.profiles,
            self.kat_logs,
            self.files_scanned,
            self.pages,
            self.problems.len()
        )
    }
}

pub(crate) fn has_error_for(rep: &Report, shown: &Path) -> bool {
    let s = shown.display().to_string();
    rep.problems
        .iter()
        .any(|p| p.file == s || p.file.starts_with(&format!("{s}:")))
}

pub(crate) fn show_opt(s: Option<&str>) -> String {
    match s {
        Some(s) => format!("{s:?}"),
        None => "absent".to_string(),
    }
}

/// An optional count as a problem message shows it (`null` when absent).
pub(crate) fn show_num(v: Option<u64>) -> String {
    v.map(|x| x.to_string())
        .unwrap_or_else(|| "null".to_string())
}

/// An optional float as a problem message shows it: Python's `repr` (`null` when absent).
pub(crate) fn show_float(v: Option<f64>) -> String {
    v.map(pqperf_model::pyjson::py_float_repr)
        .unwrap_or_else(|| "null".to_string())
}
