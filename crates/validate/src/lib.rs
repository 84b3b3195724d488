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
//!   rows; symmetric_survey.csv (when present): a row for every profiled candidate of every
//!   system (a second system's publication never drops the first one's);
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
//! * **environment evidence** of pqperf records ([`envevidence`]): each attempt's `env` in
//!   range, its run-queue share equal to its trials', and `pqperf.environment_evidence` equal
//!   to the summary of the kept attempts (figures within relative 1e-9);
//! * **profiles**: each `share` and `hash_share` recomputed from `calls` and `total`
//!   (relative 1e-9);
//! * **instruction counts** ([`counts`]): file name from its content, consistent in itself,
//!   counting the library build.json names;
//! * **stream seeds** ([`streams`]): when campaign.json publishes `pqperf.stream_keys`, each
//!   key's id is its own, and every process whose `stream` names a key carries the seed
//!   `keyed_process_seed(key, index)`;
//! * **evidence bounds** (`pqperf_model::limits`, in the loader): a file over the evidence size
//!   bound is refused from its metadata, unread; a record with more stored samples per trial or
//!   per record, or more bootstrap replicates, than the bounds is refused before any
//!   recomputation;
//! * **page text**: descriptions (systems.csv), algorithm names (downloads.csv), instance
//!   labels and names (build.json, records) without a character that would change a page's
//!   structure (newline, `|`, `<`, `>`, `[`, `]`, backtick, backslash);
//! * **pages** (on by default): the harness-form pages regenerated from the evidence must equal
//!   the page files present under the root (`<id>/perf_<sys>.md`, …), first differing line
//!   reported.
//!
//! One module per check: [`system`] (layout: stray files, systems.csv row, campaign.json and
//! build.json, security_targets.csv), [`walk`] (the files of a system), [`paths`] (absolute
//! machine paths and the reference JSON layout), [`katlogs`], [`records`], [`envevidence`],
//! [`profiles`], [`counts`], [`streams`], [`text`] (page text) and [`pages`]; [`problem`]
//! holds what they report.

#![forbid(unsafe_code)]

use std::path::Path;

use pqperf_model::dataset::Dataset;

mod counts;
mod envevidence;
mod katlogs;
mod pages;
mod paths;
mod problem;
mod profiles;
mod records;
mod streams;
mod system;
mod text;
mod walk;

pub use problem::{Problem, REL_TOL, Report};

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

    text::check_side_text(&mut rep, &ds);
    if system.is_none() {
        system::check_security_targets(&mut rep, &ds);
        system::check_survey_rows(&mut rep, &ds);
    }
    for sys in &ds.systems {
        if system.is_some_and(|s| s != sys.id) {
            continue;
        }
        rep.systems.push(sys.id.clone());
        system::check_system(&mut rep, &ds, sys, root);
        counts::check_counts(&mut rep, sys);
        streams::check_streams(&mut rep, sys);
        text::check_names(&mut rep, sys);
        if opts.pages {
            pages::check_pages(&mut rep, &ds, &sys.id, root);
        }
    }
    // A file refused by the loader and by the path scan (e.g. over the size bound) once.
    let mut seen = std::collections::HashSet::new();
    rep.problems.retain(|p| seen.insert(p.clone()));
    rep
}
