//! Loading a dataset root in the published layout (evidence-formats.md §0, method.md §1.5):
//!
//! ```text
//! <root>/downloads.csv                         ID;Algorithm;PageURL
//! <root>/<id>/kat.sha256                       KAT manifests (id = sign-NN, kem-NN, kex-NN, hash-NN)
//! <root>/data/parameters.csv                   optional
//! <root>/performance/*.csv                     systems, kat_issues, summary_notes, external_sizes,
//!                                              symmetric_survey, security_targets, kex_bandwidth
//! <root>/performance/data/<sys>/campaign.json, build.json
//! <root>/performance/data/<sys>/records/<id>/<label>__<op>.json
//! <root>/performance/data/<sys>/profile/<id>/<label>__<op>.json
//! <root>/performance/data/<sys>/kat/<id>/<label>.log
//! <root>/performance/data/<sys>/katcheck/<name>.log
//! ```
//!
//! A run directory (campaign.json at its top) or a single system dataset
//! (`performance/data/<sys>`) is also accepted: it loads as one system without side files.
//!
//! Every path kept here is relative: `path` relative to the system directory (as records name
//! `kat_log`), `shown` relative to the dataset root (as errors and validation print it).
//! [`Dataset::load_lenient`] collects every error instead of stopping at the first, and lists
//! files that do not belong to the layout as `stray`.

mod parse;

use parse::{Job, JobKind, Parsed, parse_jobs};
pub use parse::{read_profile, read_record, record_from_str};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use crate::buildjson::BuildJson;
use crate::campaign::Campaign;
use crate::error::ModelError;
use crate::katlog::{KatLog, KatManifest};
use crate::profile::Profile;
use crate::record::Record;
use crate::sidecsv::{
    CsvTable, Download, ExternalSize, KatIssue, KexBandwidth, SecurityTarget, SummaryNote,
    SurveyRow, SystemRow,
};

/// A file of a system dataset with its parsed content.
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// Path relative to the system directory (`records/sign-02/BiT-128__sign.json`).
    pub path: PathBuf,
    /// Path relative to the dataset root, as shown to users.
    pub shown: PathBuf,
    /// Parsed content.
    pub value: T,
}

/// One system's evidence (`performance/data/<sys>/`).
#[derive(Debug, Clone, Default)]
pub struct SystemData {
    /// System id (directory name).
    pub id: String,
    /// The system directory relative to the dataset root (`performance/data/x86_1`).
    pub dir: PathBuf,
    /// campaign.json, if present and valid.
    pub campaign: Option<Loaded<Campaign>>,
    /// build.json, if present and valid.
    pub build: Option<Loaded<BuildJson>>,
    /// Timing records, sorted by path.
    pub records: Vec<Loaded<Record>>,
    /// Hash profiles, sorted by path.
    pub profiles: Vec<Loaded<Profile>>,
    /// KAT logs (`kat/<id>/<label>.log`), sorted by path.
    pub kat_logs: Vec<Loaded<KatLog>>,
    /// katcheck logs (free text), sorted by path.
    pub katcheck: Vec<Loaded<String>>,
    /// Constant-time check evidence (`ct/<id>/<label>.json`), in path order.
    pub ct: Vec<Loaded<crate::ct::CtEvidence>>,
    /// Instruction-count evidence (`count/<id>/<label>__<op>.json`), in path order.
    pub count: Vec<Loaded<crate::count::CountEvidence>>,
    /// Files that do not belong to the layout (relative to the dataset root).
    pub stray: Vec<PathBuf>,
}

/// A whole dataset root.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// The root directory as given.
    pub root: PathBuf,
    /// `downloads.csv` (algorithm names, NICCS page URLs, submission order).
    pub downloads: Option<Vec<Download>>,
    /// `performance/systems.csv` in file order.
    pub systems_csv: Option<Vec<SystemRow>>,
    /// `performance/kat_issues.csv`.
    pub kat_issues: Option<Vec<KatIssue>>,
    /// `performance/summary_notes.csv`.
    pub summary_notes: Option<Vec<SummaryNote>>,
    /// `performance/external_sizes.csv`.
    pub external_sizes: Option<Vec<ExternalSize>>,
    /// `performance/symmetric_survey.csv`.
    pub symmetric_survey: Option<Vec<SurveyRow>>,
    /// `performance/security_targets.csv`.
    pub security_targets: Option<Vec<SecurityTarget>>,
    /// `performance/kex_bandwidth.csv`.
    pub kex_bandwidth: Option<Vec<KexBandwidth>>,
    /// `data/parameters.csv` (generic table).
    pub parameters: Option<CsvTable>,
    /// `<id>/kat.sha256` per candidate id, sorted by id.
    pub manifests: IndexMap<String, Loaded<KatManifest>>,
    /// Systems: those in systems.csv order first, then the others by name.
    pub systems: Vec<SystemData>,
    /// Files directly in `performance/data/` (not in a system directory).
    pub stray: Vec<PathBuf>,
}

/// True for candidate directory names `^(sign|kem|kex|hash)-\d\d$`.
pub fn is_candidate_id(name: &str) -> bool {
    let Some((kind, num)) = name.split_once('-') else {
        return false;
    };
    matches!(kind, "sign" | "kem" | "kex" | "hash")
        && num.len() == 2
        && num.bytes().all(|b| b.is_ascii_digit())
}

/// Entries of a run directory that are never published (method.md §1.4): logs, locks,
/// libraries, calibration runs, hash-cost tables, worker output, RELINK profiles, the catalog.
pub fn is_run_dir_only(rel: &Path) -> bool {
    let mut comps = rel.components();
    let first = comps
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    matches!(
        first.as_str(),
        "campaign.log"
            | ".campaign.lock"
            | ".pqperf-run.lock"
            | "build"
            | "lib"
            | "calibrate"
            | "hashcost"
            | "catalog.toml"
            // What each ICCS import did; build.json carries it into the dataset.
            | "imports"
            | "deferred.out"
            // pqperf's derived candidate surveys, and the default outputs of `publish`/`site`.
            | "survey"
            | "dataset"
            | "site"
            // pqperf's ICCS provider library, baseline sources and profiling builds.
            | "provider"
            | "iccs-baseline"
            | "hashprof"
            // `pqperf ab` evidence (interleaved A/B gates of this run directory).
            | "ab"
    ) || (first == "kat"
        && (rel.components().count() > 3
            || (rel.components().count() == 3 && rel.extension().is_none_or(|e| e != "log"))))
        || (first.starts_with("shard-") && first.ends_with(".out"))
        || (first == "profile" && name.contains("RELINK"))
}

/// The first symbolic link below `root` (shown relative to it; `root` itself may be one), in
/// sorted walk order.
pub fn first_symlink(root: &Path) -> Option<PathBuf> {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let mut entries: Vec<(String, std::fs::FileType)> = std::fs::read_dir(root.join(&rel))
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                Some((
                    e.file_name().to_string_lossy().into_owned(),
                    e.file_type().ok()?,
                ))
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, ft) in entries.into_iter().rev() {
            let r = rel.join(&name);
            if ft.is_symlink() {
                return Some(r);
            }
            if ft.is_dir() {
                stack.push(r);
            }
        }
    }
    None
}

fn sorted_entries(dir: &Path) -> Vec<std::fs::DirEntry> {
    let mut v: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(Result::ok).collect(),
        Err(_) => Vec::new(),
    };
    v.sort_by_key(|e| e.file_name());
    v
}

impl SystemData {
    /// Load a system directory. `dir` is on disk; `shown_dir` is how it is shown (relative to
    /// the dataset root). Errors are appended to `errors`; the rest still loads.
    pub fn load(
        id: &str,
        dir: &Path,
        shown_dir: &Path,
        errors: &mut Vec<ModelError>,
    ) -> SystemData {
        let mut sys = SystemData {
            id: id.to_string(),
            dir: shown_dir.to_path_buf(),
            ..Default::default()
        };
        for e in sorted_entries(dir) {
            let name = e.file_name().to_string_lossy().into_owned();
            let p = e.path();
            let rel = PathBuf::from(&name);
            let shown = shown_dir.join(&name);
            let is_dir = p.is_dir();
            match (name.as_str(), is_dir) {
                ("campaign.json", false) => match crate::pyjson::read::<Campaign>(&p, &shown) {
                    Ok(v) => {
                        sys.campaign = Some(Loaded {
                            path: rel,
                            shown,
                            value: v,
                        })
                    }
                    Err(err) => errors.push(err),
                },
                ("build.json", false) => match crate::pyjson::read::<BuildJson>(&p, &shown) {
                    Ok(v) => {
                        sys.build = Some(Loaded {
                            path: rel,
                            shown,
                            value: v,
                        })
                    }
                    Err(err) => errors.push(err),
                },
                ("records", true) | ("profile", true) | ("kat", true) => {
                    sys.load_tree(&name, &p, &shown, errors)
                }
                ("ct", true) => sys.load_ct(&p, &shown, errors),
                ("count", true) => {
                    sys.count = sys.load_json_folder("count", &p, &shown, errors);
                }
                ("katcheck", true) => {
                    for f in sorted_entries(&p) {
                        let fname = f.file_name().to_string_lossy().into_owned();
                        let fshown = shown.join(&fname);
                        if f.path().is_file() && fname.ends_with(".log") {
                            match crate::limits::read_text(&f.path(), &fshown) {
                                Ok(t) => sys.katcheck.push(Loaded {
                                    path: rel.join(&fname),
                                    shown: fshown,
                                    value: t,
                                }),
                                Err(err) => errors.push(err),
                            }
                        } else {
                            sys.stray.push(fshown);
                        }
                    }
                }
                _ => sys.stray.push(shown),
            }
        }
        sys
    }

    fn load_ct(&mut self, dir: &Path, shown: &Path, errors: &mut Vec<ModelError>) {
        self.ct = self.load_json_folder("ct", dir, shown, errors);
    }

    /// `<kind>/<id>/<name>.json` files of one typed evidence kind (ct, count), in path order;
    /// anything else in the folder is stray.
    fn load_json_folder<T: serde::de::DeserializeOwned>(
        &mut self,
        kind: &str,
        dir: &Path,
        shown: &Path,
        errors: &mut Vec<ModelError>,
    ) -> Vec<Loaded<T>> {
        let mut out = Vec::new();
        for cand in sorted_entries(dir) {
            let cname = cand.file_name().to_string_lossy().into_owned();
            let cshown = shown.join(&cname);
            if !cand.path().is_dir() {
                self.stray.push(cshown);
                continue;
            }
            for f in sorted_entries(&cand.path()) {
                let fname = f.file_name().to_string_lossy().into_owned();
                let fshown = cshown.join(&fname);
                if !f.path().is_file() || !fname.ends_with(".json") || fname.starts_with('.') {
                    self.stray.push(fshown);
                    continue;
                }
                match crate::pyjson::read::<T>(&f.path(), &fshown) {
                    Ok(value) => out.push(Loaded {
                        path: PathBuf::from(kind).join(&cname).join(&fname),
                        shown: fshown,
                        value,
                    }),
                    Err(e) => errors.push(e),
                }
            }
        }
        out
    }

    /// Instruction-count evidence of one operation.
    pub fn count_of(
        &self,
        candidate: &str,
        label: &str,
        operation: &str,
    ) -> Option<&Loaded<crate::count::CountEvidence>> {
        self.count.iter().find(|c| {
            c.value.candidate == candidate
                && c.value.label == label
                && c.value.operation == operation
        })
    }

    /// Constant-time evidence of one instance.
    pub fn ct_of(&self, candidate: &str, label: &str) -> Option<&Loaded<crate::ct::CtEvidence>> {
        self.ct
            .iter()
            .find(|c| c.value.candidate == candidate && c.value.label == label)
    }

    fn load_tree(&mut self, kind: &str, dir: &Path, shown: &Path, errors: &mut Vec<ModelError>) {
        let rel_root = PathBuf::from(kind);
        // List first (cheap, in order), then parse the files on up to two threads; results
        // are kept in file order, so the outcome does not depend on the threads.
        let mut jobs: Vec<Job> = Vec::new();
        for cand in sorted_entries(dir) {
            let cname = cand.file_name().to_string_lossy().into_owned();
            let cshown = shown.join(&cname);
            if !cand.path().is_dir() {
                self.stray.push(cshown);
                continue;
            }
            for f in sorted_entries(&cand.path()) {
                let fname = f.file_name().to_string_lossy().into_owned();
                let fshown = cshown.join(&fname);
                let rel = rel_root.join(&cname).join(&fname);
                let fp = f.path();
                if !fp.is_file() {
                    self.stray.push(fshown);
                    continue;
                }
                let what = match kind {
                    "records" | "profile"
                        if fname.ends_with(".json")
                            && fname.contains("__")
                            && !fname.starts_with('.') =>
                    {
                        if kind == "records" {
                            JobKind::Record
                        } else if fname.contains("RELINK") {
                            self.stray.push(fshown);
                            continue;
                        } else {
                            JobKind::Profile
                        }
                    }
                    "kat" if fname.ends_with(".log") && !fname.starts_with('.') => JobKind::Kat,
                    _ => {
                        self.stray.push(fshown);
                        continue;
                    }
                };
                jobs.push(Job {
                    what,
                    file: fp,
                    shown: fshown,
                    rel,
                });
            }
        }
        let parsed = parse_jobs(&jobs);
        for (job, parsed) in jobs.into_iter().zip(parsed) {
            let (path, shown) = (job.rel, job.shown);
            match parsed {
                Ok(Parsed::Record(value)) => self.records.push(Loaded {
                    path,
                    shown,
                    value: *value,
                }),
                Ok(Parsed::Profile(value)) => self.profiles.push(Loaded {
                    path,
                    shown,
                    value: *value,
                }),
                Ok(Parsed::Kat(value)) => self.kat_logs.push(Loaded {
                    path,
                    shown,
                    value: *value,
                }),
                Err(e) => errors.push(e),
            }
        }
    }

    /// Records of one candidate.
    pub fn records_of<'a>(
        &'a self,
        candidate: &'a str,
    ) -> impl Iterator<Item = &'a Loaded<Record>> + 'a {
        self.records
            .iter()
            .filter(move |r| r.value.candidate == candidate)
    }

    /// Profiles of one candidate.
    pub fn profiles_of<'a>(
        &'a self,
        candidate: &'a str,
    ) -> impl Iterator<Item = &'a Loaded<Profile>> + 'a {
        self.profiles
            .iter()
            .filter(move |r| r.value.candidate == candidate)
    }

    /// The record of (candidate, label, operation key).
    pub fn record(&self, candidate: &str, label: &str, op: &str) -> Option<&Record> {
        self.records
            .iter()
            .map(|r| &r.value)
            .find(|r| r.candidate == candidate && r.label == label && r.operation == op)
    }

    /// The profile of (candidate, label, operation).
    pub fn profile(&self, candidate: &str, label: &str, op: &str) -> Option<&Profile> {
        self.profiles
            .iter()
            .map(|r| &r.value)
            .find(|r| r.candidate == candidate && r.label == label && r.operation == op)
    }

    /// The KAT log at `rel` (relative to the system directory, as `kat_log` fields name it).
    pub fn kat_log(&self, rel: &str) -> Option<&Loaded<KatLog>> {
        self.kat_logs.iter().find(|k| k.path == Path::new(rel))
    }

    /// Candidate ids with records, build entries or profiles, sorted.
    pub fn candidates(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .records
            .iter()
            .map(|r| r.value.candidate.clone())
            .collect();
        ids.extend(self.profiles.iter().map(|r| r.value.candidate.clone()));
        if let Some(b) = &self.build {
            ids.extend(b.value.instances.values().map(|e| e.candidate.clone()));
        }
        ids.retain(|c| c != "iccs");
        ids.sort();
        ids.dedup();
        ids
    }
}

impl Dataset {
    /// Load a dataset, stopping at the first error.
    pub fn load(root: &Path) -> Result<Dataset, ModelError> {
        let (ds, mut errors) = Self::load_lenient(root);
        if errors.is_empty() {
            Ok(ds)
        } else {
            Err(errors.remove(0))
        }
    }

    /// Load a dataset, collecting every error (files with errors are left out).
    pub fn load_lenient(root: &Path) -> (Dataset, Vec<ModelError>) {
        let mut errors = Vec::new();
        let mut ds = Dataset {
            root: root.to_path_buf(),
            ..Default::default()
        };
        if !root.is_dir() {
            errors.push(ModelError::Io {
                path: root.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "dataset root is not a directory",
                ),
            });
            return (ds, errors);
        }
        // Nothing is read through a symbolic link: it could point outside the dataset root.
        if let Some(link) = first_symlink(root) {
            errors.push(ModelError::Io {
                source: std::io::Error::other(
                    "symbolic link inside the dataset (refused: a dataset holds plain files and folders only)",
                ),
                path: link,
            });
            return (ds, errors);
        }
        // A single system directory or run directory.
        if crate::layout::RunLayout::new(root)
            .campaign_json()
            .is_file()
            && !root.join("performance").is_dir()
        {
            let id = root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default();
            let mut sys = SystemData::load(&id, root, Path::new(""), &mut errors);
            // Working files of a run directory (method.md §1.4) are not stray there.
            sys.stray.retain(|p| !is_run_dir_only(p));
            if let Some(sid) = sys
                .campaign
                .as_ref()
                .and_then(|c| c.value.system_id.clone())
            {
                sys.id = sid;
            }
            ds.systems.push(sys);
            return (ds, errors);
        }

        fn table(root: &Path, rel: &str, errors: &mut Vec<ModelError>) -> Option<CsvTable> {
            let p = root.join(rel);
            if !p.is_file() {
                return None;
            }
            CsvTable::read(&p, Path::new(rel))
                .map_err(|e| errors.push(e))
                .ok()
        }
        fn typed<T>(
            t: Option<CsvTable>,
            f: impl Fn(&CsvTable) -> Result<Vec<T>, ModelError>,
            errors: &mut Vec<ModelError>,
        ) -> Option<Vec<T>> {
            t.and_then(|t| f(&t).map_err(|e| errors.push(e)).ok())
        }
        let t = table(root, "downloads.csv", &mut errors);
        ds.downloads = typed(t, CsvTable::downloads, &mut errors);
        let t = table(root, "performance/systems.csv", &mut errors);
        ds.systems_csv = typed(t, CsvTable::systems, &mut errors);
        let t = table(root, "performance/kat_issues.csv", &mut errors);
        ds.kat_issues = typed(t, CsvTable::kat_issues, &mut errors);
        let t = table(root, "performance/summary_notes.csv", &mut errors);
        ds.summary_notes = typed(t, CsvTable::summary_notes, &mut errors);
        let t = table(root, "performance/external_sizes.csv", &mut errors);
        ds.external_sizes = typed(t, CsvTable::external_sizes, &mut errors);
        let t = table(root, "performance/symmetric_survey.csv", &mut errors);
        ds.symmetric_survey = typed(t, CsvTable::symmetric_survey, &mut errors);
        let t = table(root, "performance/security_targets.csv", &mut errors);
        ds.security_targets = typed(t, CsvTable::security_targets, &mut errors);
        let t = table(root, "performance/kex_bandwidth.csv", &mut errors);
        ds.kex_bandwidth = typed(t, CsvTable::kex_bandwidth, &mut errors);
        ds.parameters = table(root, "data/parameters.csv", &mut errors);

        for e in sorted_entries(root) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_candidate_id(&name) {
                continue;
            }
            let p = e.path().join("kat.sha256");
            if p.is_file() {
                let shown = PathBuf::from(&name).join("kat.sha256");
                match KatManifest::read(&p, &shown) {
                    Ok(m) => {
                        ds.manifests.insert(
                            name.clone(),
                            Loaded {
                                path: shown.clone(),
                                shown,
                                value: m,
                            },
                        );
                    }
                    Err(err) => errors.push(err),
                }
            }
        }

        let data = root.join("performance/data");
        let mut systems = Vec::new();
        for e in sorted_entries(&data) {
            let name = e.file_name().to_string_lossy().into_owned();
            let shown = PathBuf::from("performance/data").join(&name);
            if e.path().is_dir() {
                systems.push(SystemData::load(&name, &e.path(), &shown, &mut errors));
            } else {
                ds.stray.push(shown);
            }
        }
        if let Some(order) = &ds.systems_csv {
            let pos = |id: &str| order.iter().position(|r| r.id == id).unwrap_or(usize::MAX);
            systems.sort_by(|a, b| pos(&a.id).cmp(&pos(&b.id)).then(a.id.cmp(&b.id)));
        }
        ds.systems = systems;
        (ds, errors)
    }

    /// The system with this id.
    pub fn system(&self, id: &str) -> Option<&SystemData> {
        self.systems.iter().find(|s| s.id == id)
    }

    /// Algorithm name of a candidate from downloads.csv.
    pub fn algorithm(&self, candidate: &str) -> Option<&str> {
        self.downloads
            .as_ref()?
            .iter()
            .find(|d| d.id == candidate)
            .map(|d| d.algorithm.as_str())
    }

    /// KAT manifest of a candidate.
    pub fn manifest(&self, candidate: &str) -> Option<&KatManifest> {
        self.manifests.get(candidate).map(|l| &l.value)
    }
}
