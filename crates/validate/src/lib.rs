//! Stage validate: semantic validation of a published dataset (`pqperf validate`; method.md
//! §15), in its own crate because it checks every kind of evidence, not only pages.
//!
//! [`validate`] reads a dataset root (read-only: nothing is ever written) and returns every
//! problem as a [`Problem`] (`path: field: message`):
//!
//! * unreadable or malformed files (`path:line:col: field: message`, from the model loader),
//!   records/profiles with a newer schema, files outside the layout (stray), `*.json` directly
//!   in `performance/data/`;
//! * security_targets.csv (when present): a row for every built non-`iccs` instance, no stale
//!   rows;
//! * each system: registered in systems.csv (when present), campaign.json with `system_id` =
//!   directory name, build.json present;
//! * **absolute machine paths**: any string (JSON) or line (text) containing `/home/`,
//!   `/root/`, `/Users/`, `/tmp/` or `/work/` not preceded by a word character or `.`, and any
//!   `/`-rooted value in `library`, `kat_log` and `command` fields (and the KAT log `library`
//!   line);
//! * **JSON layout**: every JSON file must be in the reference serialisation
//!   (`json.dumps(indent=1)` + newline), i.e. re-serialise byte for byte;
//! * **KAT logs**: each build entry's `kat_log` exists, its sha256 equals `kat_log_sha256`,
//!   its last RESULT status equals `kat`; a reference log's `manifest` digest equals the
//!   candidate's `kat.sha256` entry;
//! * **timing records**: file name `<candidate>/<label>__<operation>.json`; instance in
//!   build.json; `library`, `library_sha256`, `kat_log`, `kat_log_sha256`, `kat`, `flags`,
//!   `variant`, `instance` equal to the build entry; `kat_log_sha256` equal to the log's
//!   digest; `kat_not_passed` = (kat ≠ PASS); `trials` = the concatenation of the processes'
//!   trials; if complete, `len(trials)` = `plan.trials`; statistics recomputed from the trials
//!   (method.md §8): counts exactly, floats within relative 1e-9 (min/max/median included);
//!   `disturbed_retries` and RSS maxima from the processes; `sizes`, `kex`, `build_flags`,
//!   `timing_scope` from the first process's meta;
//! * **profiles**: each `share` and `hash_share` recomputed from `calls` and `total`
//!   (relative 1e-9);
//! * **pages** (on by default): the harness-form pages regenerated from the evidence must equal
//!   the page files present under the root (`<id>/perf_<sys>.md`, …), first differing line
//!   reported.
//!
//! One module per check: [`system`] (layout: stray files, systems.csv row, campaign.json and
//! build.json, security_targets.csv), [`walk`] (the files of a system), [`paths`] (absolute
//! machine paths and the reference JSON layout), [`katlogs`], [`records`], [`profiles`] and
//! [`pages`].

#![forbid(unsafe_code)]

use std::fmt;
use std::path::Path;

use pqperf_model::ModelError;
use pqperf_model::dataset::Dataset;

mod katlogs;
mod pages;
mod paths;
mod profiles;
mod records;
mod system;
mod walk;

/// Relative tolerance for recomputed floats.
pub const REL_TOL: f64 = 1e-9;

/// One problem: `file: field: message` (`file` may carry `:line[:col]`).
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Options of [`validate_with`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this system (side files are always checked).
    pub system: Option<String>,
    /// Regenerate the harness-form pages of each checked system and compare them with the
    /// page files present under the root (`<id>/perf_<sys>.md`, `performance/summary_<sys>.md`,
    /// …); pages not on disk are not required.
    pub pages: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            system: None,
            pages: true,
        }
    }
}

/// Validate the dataset at `root` with default options (pages compared where present); with
/// `system`, only that system. Never writes anything.
pub fn validate(root: &Path, system: Option<&str>) -> Report {
    validate_with(
        root,
        &Options {
            system: system.map(str::to_string),
            ..Default::default()
        },
    )
}

/// Validate the dataset at `root` (see the module docs). Never writes anything.
pub fn validate_with(root: &Path, opts: &Options) -> Report {
    let system = opts.system.as_deref();
    let (ds, errors) = Dataset::load_lenient(root);
    let mut rep = Report::default();
    let in_scope = |p: &Path| match system {
        None => true,
        Some(s) => {
            let sys_dir = Path::new("performance/data").join(s);
            p.starts_with(&sys_dir) || !p.starts_with("performance/data")
        }
    };
    for e in &errors {
        if in_scope(e.path()) {
            rep.problems.push(Problem::from_model(e));
        }
    }
    if let Some(s) = system
        && ds.system(s).is_none()
    {
        let known: Vec<&str> = ds.systems.iter().map(|s| s.id.as_str()).collect();
        rep.problems.push(Problem::new(
            "performance/data",
            "",
            format!(
                "no system '{s}' in the dataset (systems: {})",
                known.join(", ")
            ),
        ));
    }
    if system.is_none() {
        for p in &ds.stray {
            rep.problems
                .push(Problem::new(p, "", "file outside a system dataset (stray)"));
        }
    }
    // Side files and manifests: absolute paths.
    for rel in [
        "downloads.csv",
        "data/parameters.csv",
        "performance/systems.csv",
        "performance/kat_issues.csv",
        "performance/summary_notes.csv",
        "performance/external_sizes.csv",
        "performance/symmetric_survey.csv",
        "performance/security_targets.csv",
        "performance/kex_bandwidth.csv",
    ] {
        let p = root.join(rel);
        if p.is_file() {
            paths::scan_text_file(&mut rep, &p, Path::new(rel));
        }
    }
    for m in ds.manifests.values() {
        paths::scan_text_file(&mut rep, &root.join(&m.path), &m.shown);
    }

    if system.is_none() {
        system::check_security_targets(&mut rep, &ds);
    }
    for sys in &ds.systems {
        if system.is_some_and(|s| s != sys.id) {
            continue;
        }
        rep.systems.push(sys.id.clone());
        system::check_system(&mut rep, &ds, sys, root);
        if opts.pages {
            pages::check_pages(&mut rep, &ds, &sys.id, root);
        }
    }
    rep
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
