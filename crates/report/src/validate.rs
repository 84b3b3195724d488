//! Semantic validation of a published dataset (`pqperf validate`; method.md §15).
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

use std::fmt;
use std::path::{Path, PathBuf};

use pqperf_model::dataset::{Dataset, Loaded, SystemData};
use pqperf_model::pyjson;
use pqperf_model::stats::{ProcessTotals, RecordStats, opt_close, rel_close};
use pqperf_model::{BuildJson, ModelError, Profile, Record};
use serde_json::Value;

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
    fn new(file: impl AsRef<Path>, field: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            file: file.as_ref().display().to_string(),
            field: field.into(),
            message: message.into(),
        }
    }

    fn from_model(e: &ModelError) -> Self {
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
            scan_text_file(&mut rep, &p, Path::new(rel));
        }
    }
    for m in ds.manifests.values() {
        scan_text_file(&mut rep, &root.join(&m.path), &m.shown);
    }

    if system.is_none() {
        check_security_targets(&mut rep, &ds);
    }
    for sys in &ds.systems {
        if system.is_some_and(|s| s != sys.id) {
            continue;
        }
        rep.systems.push(sys.id.clone());
        check_system(&mut rep, &ds, sys, root);
        if opts.pages {
            check_pages(&mut rep, &ds, &sys.id, root);
        }
    }
    rep
}

/// Compare the pages regenerated from the evidence with those on disk (where present).
fn check_pages(rep: &mut Report, ds: &Dataset, system: &str, root: &Path) {
    let pages = match crate::render_pages(ds, system, crate::Form::Harness) {
        Ok(p) => p,
        Err(e) => {
            // Only a problem when there are pages on disk to compare with.
            let any_on_disk = ds
                .systems
                .iter()
                .find(|s| s.id == system)
                .map(|s| {
                    s.candidates()
                        .iter()
                        .any(|id| root.join(format!("{id}/perf_{system}.md")).is_file())
                })
                .unwrap_or(false);
            if any_on_disk {
                rep.problems.push(Problem::new(
                    format!("performance/data/{system}"),
                    "",
                    format!("pages cannot be regenerated: {e}"),
                ));
            }
            return;
        }
    };
    for (_, rel, text) in pages {
        let Ok(on_disk) = std::fs::read(root.join(&rel)) else {
            continue;
        };
        rep.pages += 1;
        if on_disk == text.as_bytes() {
            continue;
        }
        let old = String::from_utf8_lossy(&on_disk);
        let (n, a, b) = old
            .split('\n')
            .zip(text.split('\n'))
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i + 1, a.to_string(), b.to_string()))
            .unwrap_or_else(|| {
                let n = old.split('\n').count().min(text.split('\n').count());
                (n, "<end of file>".into(), "<end of file>".into())
            });
        rep.problems.push(Problem::new(
            format!("{rel}:{n}"),
            "",
            format!(
                "page differs from the one regenerated from the evidence: on disk {:?}, regenerated {:?}",
                clip(&a),
                clip(&b)
            ),
        ));
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 80 {
        let mut c: String = s.chars().take(80).collect();
        c.push('…');
        c
    } else {
        s.to_string()
    }
}

/// security_targets.csv (when present): every non-`iccs` build.json instance of every system
/// has a row (`missing`), and every row names a built instance (`stale`) (method.md §15.2).
fn check_security_targets(rep: &mut Report, ds: &Dataset) {
    let Some(rows) = &ds.security_targets else {
        return;
    };
    let file = "performance/security_targets.csv";
    let mut built = std::collections::BTreeSet::new();
    for sys in &ds.systems {
        if let Some(b) = &sys.build {
            for e in b.value.instances.values() {
                if e.candidate != "iccs" {
                    built.insert((e.candidate.clone(), e.label.clone(), sys.id.clone()));
                }
            }
        }
    }
    for (cand, label, sys) in &built {
        if !rows.iter().any(|r| &r.id == cand && &r.instance == label) {
            rep.problems.push(Problem::new(
                file,
                "Instance",
                format!("missing {cand};{label} (built on {sys})"),
            ));
        }
    }
    for r in rows {
        if !built.iter().any(|(c, l, _)| *c == r.id && *l == r.instance) {
            rep.problems.push(Problem::new(
                format!("{file}:{}", r.line),
                "Instance",
                format!(
                    "stale {};{}: no system built this instance",
                    r.id, r.instance
                ),
            ));
        }
    }
}

fn check_system(rep: &mut Report, ds: &Dataset, sys: &SystemData, root: &Path) {
    let dir = &sys.dir;
    for p in &sys.stray {
        rep.problems.push(Problem::new(
            p,
            "",
            "file outside the dataset layout (stray)",
        ));
    }
    if let Some(rows) = &ds.systems_csv
        && !rows.iter().any(|r| r.id == sys.id)
    {
        rep.problems.push(Problem::new(
            "performance/systems.csv",
            "ID",
            format!("system '{}' has a dataset but no row", sys.id),
        ));
    }
    match &sys.campaign {
        Some(c)
            if c.value.system_id.as_deref() != Some(sys.id.as_str())
                && !dir.as_os_str().is_empty() =>
        {
            rep.problems.push(Problem::new(
                &c.shown,
                "system_id",
                format!(
                    "{} but the dataset directory is '{}'",
                    show_opt(c.value.system_id.as_deref()),
                    sys.id
                ),
            ));
        }
        Some(_) => {}
        None if !has_error_for(rep, &dir.join("campaign.json")) => {
            rep.problems
                .push(Problem::new(dir.join("campaign.json"), "", "missing"));
        }
        None => {}
    }
    let build = match &sys.build {
        Some(b) => Some(&b.value),
        None => {
            if !has_error_for(rep, &dir.join("build.json")) {
                rep.problems
                    .push(Problem::new(dir.join("build.json"), "", "missing"));
            }
            None
        }
    };

    // Every file of the system: absolute paths; JSON layout.
    let sys_root = root.join(dir);
    let mut files = Vec::new();
    list_files(&sys_root, &mut files);
    for f in &files {
        let rel = f.strip_prefix(&sys_root).unwrap_or(f);
        let shown = dir.join(rel);
        if dir.as_os_str().is_empty() && pqperf_model::dataset::is_run_dir_only(rel) {
            // A run directory's working files (pqperf's own layout, not evidence): only the
            // derived surveys are JSON pqperf reads back; they must parse.
            if rel.starts_with("survey") && rel.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                if let Err(e) = serde_json::from_str::<Value>(&text) {
                    rep.problems.push(Problem::new(
                        &shown,
                        "",
                        format!("{}:{}: {e}", e.line(), e.column()),
                    ));
                }
            }
            continue;
        }
        scan_file(rep, f, &shown);
    }

    if let Some(build) = build {
        check_kat_logs(rep, ds, sys, build);
    }
    for r in &sys.records {
        check_record(rep, sys, build, r);
    }
    for p in &sys.profiles {
        check_profile(rep, p);
    }
}

fn has_error_for(rep: &Report, shown: &Path) -> bool {
    let s = shown.display().to_string();
    rep.problems
        .iter()
        .any(|p| p.file == s || p.file.starts_with(&format!("{s}:")))
}

fn show_opt(s: Option<&str>) -> String {
    match s {
        Some(s) => format!("{s:?}"),
        None => "absent".to_string(),
    }
}

fn list_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// Machine-path prefixes that must never appear in evidence.
const MACHINE_DIRS: [&str; 5] = ["home", "root", "Users", "tmp", "work"];

/// The first absolute machine path in `s` (`/home/…` etc. not preceded by a word character
/// or `.`), if any.
pub fn find_machine_path(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices('/') {
        if i > 0 {
            let prev = b[i - 1];
            if prev.is_ascii_alphanumeric() || prev == b'_' || prev == b'.' {
                continue;
            }
            // A non-ASCII word character before the slash.
            if prev >= 0x80
                && s[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
        }
        let rest = &s[i + 1..];
        for d in MACHINE_DIRS {
            if rest.starts_with(d) && rest[d.len()..].starts_with('/') {
                let end = s[i..]
                    .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                    .map(|e| i + e)
                    .unwrap_or(s.len());
                return Some(&s[i..end]);
            }
        }
    }
    None
}

fn scan_text_file(rep: &mut Report, path: &Path, shown: &Path) {
    let Ok(bytes) = std::fs::read(path) else {
        return;
    };
    rep.files_scanned += 1;
    let text = String::from_utf8_lossy(&bytes);
    scan_lines(rep, &text, shown);
}

fn scan_lines(rep: &mut Report, text: &str, shown: &Path) {
    for (i, line) in text.lines().enumerate() {
        let file = format!("{}:{}", shown.display(), i + 1);
        if let Some(p) = find_machine_path(line) {
            rep.problems.push(Problem::new(
                &file,
                "",
                format!("absolute machine path {p:?}"),
            ));
        } else if let Some(v) = line.strip_prefix("library")
            && v.trim_start().starts_with('=')
            && let Some((_, val)) = v.split_once("= ")
            && val.starts_with('/')
        {
            // KAT log header `library     = <path>`.
            rep.problems.push(Problem::new(
                &file,
                "library",
                format!("absolute path {val:?}"),
            ));
        }
    }
}

fn scan_file(rep: &mut Report, path: &Path, shown: &Path) {
    let Ok(bytes) = std::fs::read(path) else {
        rep.problems.push(Problem::new(shown, "", "unreadable"));
        return;
    };
    rep.files_scanned += 1;
    let text = String::from_utf8_lossy(&bytes);
    let is_json = path.extension().is_some_and(|e| e == "json");
    if is_json && let Ok(v) = serde_json::from_str::<Value>(&text) {
        let before = rep.problems.len();
        scan_json(rep, &v, "", shown);
        if rep.problems.len() == before && pyjson::value_to_string(&v) != text {
            rep.problems.push(Problem::new(
                shown,
                "",
                "not in the reference JSON layout (json.dumps(indent=1) + newline)",
            ));
        }
        return;
    }
    // Text files, and JSON that does not parse (its syntax error is reported by the loader).
    scan_lines(rep, &text, shown);
}

fn scan_json(rep: &mut Report, v: &Value, field: &str, shown: &Path) {
    match v {
        Value::String(s) => {
            if let Some(p) = find_machine_path(s) {
                rep.problems.push(Problem::new(
                    shown,
                    field,
                    format!("absolute machine path {p:?}"),
                ));
            } else if s.starts_with('/') && is_path_field(field) {
                rep.problems
                    .push(Problem::new(shown, field, format!("absolute path {s:?}")));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scan_json(rep, item, &format!("{field}[{i}]"), shown);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                if let Some(p) = find_machine_path(k) {
                    rep.problems.push(Problem::new(
                        shown,
                        field,
                        format!("absolute machine path {p:?} in a key"),
                    ));
                }
                let f = if field.is_empty() {
                    k.clone()
                } else {
                    format!("{field}.{k}")
                };
                scan_json(rep, item, &f, shown);
            }
        }
        _ => {}
    }
}

/// Fields whose values are paths and must be relative: `library`, `kat_log`, `command[…]`.
fn is_path_field(field: &str) -> bool {
    let last = field.rsplit('.').next().unwrap_or(field);
    let last = last.split('[').next().unwrap_or(last);
    matches!(last, "library" | "kat_log" | "command")
}

fn check_kat_logs(rep: &mut Report, ds: &Dataset, sys: &SystemData, build: &BuildJson) {
    let build_shown = sys.dir.join("build.json");
    for (key, e) in &build.instances {
        let Some(rel) = &e.kat_log else { continue };
        let field = format!("instances.{key}.kat_log");
        if rel.starts_with('/') {
            continue; // reported by the path scan
        }
        let Some(log) = sys.kat_log(rel) else {
            let shown = sys.dir.join(rel);
            if !has_error_for(rep, &shown) {
                rep.problems.push(Problem::new(
                    &build_shown,
                    field,
                    format!("KAT log {rel} is missing"),
                ));
            }
            continue;
        };
        rep.kat_logs += 1;
        match &e.kat_log_sha256 {
            Some(want) if *want != log.value.sha256 => rep.problems.push(Problem::new(
                &log.shown,
                "sha256",
                format!(
                    "file digest {} != build.json instances.{key}.kat_log_sha256 {want}",
                    log.value.sha256
                ),
            )),
            Some(_) => {}
            None => rep.problems.push(Problem::new(
                &build_shown,
                format!("instances.{key}.kat_log_sha256"),
                "missing although kat_log is set",
            )),
        }
        match log.value.status() {
            Some(st) if st == e.kat => {}
            Some(st) => rep.problems.push(Problem::new(
                &log.shown,
                "RESULT",
                format!("status {st} != build.json instances.{key}.kat {}", e.kat),
            )),
            None => rep
                .problems
                .push(Problem::new(&log.shown, "RESULT", "no RESULT line")),
        }
        if e.variant == "reference"
            && let (Some(m), Some(ml)) = (ds.manifest(&e.candidate), log.value.manifests.first())
            && let Some(entry) = m.lookup(&e.label, &ml.file)
            && entry.sha256 != ml.sha256
        {
            rep.problems.push(Problem::new(
                &log.shown,
                "manifest",
                format!(
                    "digest {} != {}/kat.sha256 entry {} ({})",
                    ml.sha256, e.candidate, entry.sha256, entry.path
                ),
            ));
        }
    }
}

fn cmp_str(
    rep: &mut Report,
    shown: &Path,
    field: &str,
    got: Option<&str>,
    want: Option<&str>,
    key: &str,
) {
    if got != want {
        rep.problems.push(Problem::new(
            shown,
            field,
            format!(
                "{} != build.json instances.{key}.{field} {}",
                show_opt(got),
                show_opt(want)
            ),
        ));
    }
}

fn check_record(rep: &mut Report, sys: &SystemData, build: Option<&BuildJson>, l: &Loaded<Record>) {
    rep.records += 1;
    let r = &l.value;
    let shown = &l.shown;
    let p = |f: &str, m: String| Problem::new(shown, f, m);

    // File name and directory.
    let want_name = Record::file_name(&r.label, &r.operation);
    let file_name = l
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir_name = l
        .path
        .parent()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_sized_op = file_name.starts_with(&format!("{}__{}_", r.label, r.operation));
    if file_name != want_name && !is_sized_op {
        rep.problems.push(p(
            "label",
            format!("file name {file_name} does not match label/operation ({want_name})"),
        ));
    }
    if dir_name != r.candidate {
        rep.problems.push(p(
            "candidate",
            format!("{:?} but the record is in records/{dir_name}/", r.candidate),
        ));
    }

    // Build entry links.
    let key = r.instance_key();
    if let Some(build) = build {
        match build.instances.get(&key) {
            None => rep
                .problems
                .push(p("label", format!("instance {key} is not in build.json"))),
            Some(e) => {
                cmp_str(
                    rep,
                    shown,
                    "library",
                    r.library.as_deref(),
                    e.library.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "library_sha256",
                    r.library_sha256.as_deref(),
                    e.library_sha256.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "kat_log",
                    r.kat_log.as_deref(),
                    e.kat_log.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "kat_log_sha256",
                    r.kat_log_sha256.as_deref(),
                    e.kat_log_sha256.as_deref(),
                    &key,
                );
                cmp_str(rep, shown, "kat", Some(&r.kat), Some(&e.kat), &key);
                cmp_str(rep, shown, "flags", Some(&r.flags), Some(&e.flags), &key);
                cmp_str(
                    rep,
                    shown,
                    "variant",
                    Some(&r.variant),
                    Some(&e.variant),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "instance",
                    Some(&r.instance),
                    Some(&e.instance),
                    &key,
                );
            }
        }
    }
    if let (Some(rel), Some(want)) = (&r.kat_log, &r.kat_log_sha256)
        && let Some(log) = sys.kat_log(rel)
        && log.value.sha256 != *want
    {
        rep.problems.push(p(
            "kat_log_sha256",
            format!(
                "{want} != digest {} of {}",
                log.value.sha256,
                log.shown.display()
            ),
        ));
    }
    if r.kat_not_passed != (r.kat != "PASS") {
        rep.problems.push(p(
            "kat_not_passed",
            format!("{} but kat is {}", r.kat_not_passed, r.kat),
        ));
    }

    // Trials and process aggregates.
    let pt = ProcessTotals::of(&r.processes);
    if pt.trials != r.trials {
        let i = pt.trials.iter().zip(&r.trials).position(|(a, b)| a != b);
        let what = match i {
            Some(i) => format!("trials[{i}] differs from the processes' trial"),
            None => format!(
                "{} trial(s) but the processes hold {}",
                r.trials.len(),
                pt.trials.len()
            ),
        };
        rep.problems.push(p(
            "trials",
            format!("{what} (trials must be the concatenation of processes[].trials)"),
        ));
    }
    if r.disturbed_retries != pt.disturbed_retries {
        rep.problems.push(p(
            "disturbed_retries",
            format!(
                "{} != {} summed over processes",
                r.disturbed_retries, pt.disturbed_retries
            ),
        ));
    }
    if !r.processes.is_empty() {
        for (f, got, want) in [
            (
                "baseline_rss_bytes",
                r.baseline_rss_bytes,
                pt.baseline_rss_bytes,
            ),
            ("peak_rss_bytes", r.peak_rss_bytes, pt.peak_rss_bytes),
        ] {
            if got != want {
                rep.problems.push(p(
                    f,
                    format!(
                        "{} != maximum over processes' meta {}",
                        show_num(got),
                        show_num(want)
                    ),
                ));
            }
        }
    }
    if let Some(md) = pqperf_model::stats::MetaDerived::of(&r.processes) {
        if md.sizes != r.sizes {
            rep.problems.push(p(
                "sizes",
                format!("{:?} != {:?} from processes[0].meta", r.sizes, md.sizes),
            ));
        }
        if md.kex != r.kex {
            rep.problems.push(p(
                "kex",
                format!("{:?} != {:?} from processes[0].meta", r.kex, md.kex),
            ));
        }
        for (f, got, want) in [
            ("build_flags", &r.build_flags, &md.build_flags),
            ("timing_scope", &r.timing_scope, &md.timing_scope),
        ] {
            if let Some(want) = want
                && got != want
            {
                rep.problems
                    .push(p(f, format!("{got:?} != processes[0].meta.{f} {want:?}")));
            }
        }
    }
    let complete = r.status == "complete";
    if complete && r.trials.len() as u64 != r.plan.trials {
        rep.problems.push(p(
            "trials",
            format!(
                "{} trial(s) but plan.trials is {}",
                r.trials.len(),
                r.plan.trials
            ),
        ));
    }

    // Statistics.
    match RecordStats::of_record(r) {
        None => {
            if complete {
                rep.problems
                    .push(p("trials", "complete record without trials".to_string()));
            }
        }
        Some(st) => {
            if r.measurements != Some(st.measurements) {
                rep.problems.push(p(
                    "measurements",
                    format!(
                        "{} != {} (sum of trials' measurements)",
                        show_num(r.measurements),
                        st.measurements
                    ),
                ));
            }
            if r.guide_100_measurements_met != Some(st.guide_100_measurements_met) {
                rep.problems.push(p(
                    "guide_100_measurements_met",
                    format!(
                        "{:?} but measurements = {}",
                        r.guide_100_measurements_met, st.measurements
                    ),
                ));
            }
            for (f, got, want) in [
                ("mean_seconds", r.mean_seconds, st.mean_seconds),
                (
                    "median_trial_seconds",
                    r.median_trial_seconds,
                    st.median_trial_seconds,
                ),
                (
                    "min_trial_seconds",
                    r.min_trial_seconds,
                    st.min_trial_seconds,
                ),
                (
                    "max_trial_seconds",
                    r.max_trial_seconds,
                    st.max_trial_seconds,
                ),
                ("mean_cycles", r.mean_cycles, st.mean_cycles),
                (
                    "median_trial_cycles",
                    r.median_trial_cycles,
                    st.median_trial_cycles,
                ),
                (
                    "operations_per_second",
                    r.operations_per_second,
                    st.operations_per_second,
                ),
                (
                    "throughput_MB_per_second",
                    r.throughput_mb_per_second,
                    st.throughput_mb_per_second,
                ),
            ] {
                if !opt_close(got, want, REL_TOL) {
                    rep.problems.push(p(
                        f,
                        format!(
                            "recorded {} but the trials give {} (relative tolerance 1e-9)",
                            show_float(got),
                            show_float(want)
                        ),
                    ));
                }
            }
        }
    }
}

fn show_num(v: Option<u64>) -> String {
    v.map(|x| x.to_string())
        .unwrap_or_else(|| "null".to_string())
}

fn show_float(v: Option<f64>) -> String {
    v.map(pyjson::py_float_repr)
        .unwrap_or_else(|| "null".to_string())
}

fn check_profile(rep: &mut Report, l: &Loaded<Profile>) {
    rep.profiles += 1;
    let pr = &l.value;
    if pr.status != "complete" || pr.total.is_none() {
        return;
    }
    let Some((share, hash_share)) = pr.recompute_shares() else {
        rep.problems.push(Problem::new(
            &l.shown,
            "total.ticks",
            "0: shares cannot be computed",
        ));
        return;
    };
    for (f, want) in &share {
        match pr.share.get(f) {
            None => rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                format!("missing; calls give {}", pyjson::py_float_repr(*want)),
            )),
            Some(got) if !rel_close(*got, *want, REL_TOL) => rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                format!(
                    "recorded {} but calls/total give {} (relative tolerance 1e-9)",
                    pyjson::py_float_repr(*got),
                    pyjson::py_float_repr(*want)
                ),
            )),
            Some(_) => {}
        }
    }
    for f in pr.share.keys() {
        if !share.contains_key(f) {
            rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                "no calls of this function",
            ));
        }
    }
    let want = hash_share.as_f64().unwrap_or(0.0);
    match pr.hash_share.as_f64() {
        Some(got) if rel_close(got, want, REL_TOL) => {}
        got => rep.problems.push(Problem::new(
            &l.shown,
            "hash_share",
            format!(
                "recorded {} but the non-drng shares sum to {}",
                got.map(pyjson::py_float_repr)
                    .unwrap_or_else(|| pr.hash_share.to_string()),
                pyjson::py_float_repr(want)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_paths_are_found_only_when_rooted() {
        assert_eq!(
            find_machine_path("x /home/ann/lib.so y"),
            Some("/home/ann/lib.so")
        );
        assert_eq!(find_machine_path("\"/work/main/x\""), Some("/work/main/x"));
        assert_eq!(find_machine_path("/tmp/a"), Some("/tmp/a"));
        assert_eq!(find_machine_path("runs/x/home/a"), None);
        assert_eq!(find_machine_path("./tmp/a"), None);
        assert_eq!(find_machine_path("https://h/Users/x"), None);
        assert_eq!(find_machine_path("sign-02/lib/libBiT-128.so"), None);
        assert_eq!(find_machine_path("/homework/x"), None);
    }

    #[test]
    fn path_fields() {
        assert!(is_path_field("library"));
        assert!(is_path_field("processes[0].command[3]"));
        assert!(is_path_field("instances.sign-02/BiT-128.kat_log"));
        assert!(!is_path_field("build_flags"));
    }
}
