//! The layout of a run directory, defined once: [`RunLayout`] has one accessor per file or
//! folder, so no stage joins a run-dir path by hand.
//!
//! ```text
//! <run>/
//! ├── catalog.toml                        import (the candidate catalog)
//! ├── imports/<id>.json                   import iccs (`provenance::ImportRecord`)
//! ├── sources/<id>/                       an imported submission archive, extracted
//! ├── provider/                           the ICCS provider build; provider/cc and
//! │                                       provider/choice remember `--cc`, `--iccs-provider`
//! ├── build.json                          build (`buildjson::BuildJson`)
//! ├── build/<id>.log                      build logs (one per candidate)
//! ├── build/src/<id>/<label>/             build scratch (objects, link command)
//! ├── build/ct/, build/ct-helpers/        `pqperf ct`'s `-g` builds and its helpers
//! ├── lib/<id>/lib<label>.so              built libraries
//! ├── kat/<id>/<label>.log                KAT logs; kat/<id>/<label>/ the child's output
//! ├── katcheck/                           KAT cross-checks
//! ├── calibrate/<id>/<label>__<op>.json   one-call calibrations
//! ├── records/<id>/<label>__<op>.json     timing records (`record::Record`)
//! ├── profile/<id>/<label>__<op>.json     profiles (`profile::Profile`);
//! │   └── <id>/<label>__RELINK_FAILED.json, iccs-provider-bench.json
//! ├── survey/<id>.json                    survey verdicts per candidate
//! ├── hashcost/iccs.tsv, hashcost/<id>/<label>.tsv
//! ├── hashprof/{lib,build,kat}/…          profiling builds and their KAT
//! ├── iccs-baseline/catalog.toml          the ICCS helper baseline's own catalog
//! ├── ct/<id>/<label>.json                constant-time evidence (`ct::CtEvidence`)
//! ├── count/<id>/<label>__<op>.json       instruction counts (`count::CountEvidence`)
//! ├── ab/                                 `pqperf ab` evidence
//! ├── campaign.json, campaign.log         campaign bookkeeping and log
//! ├── shard-<k>.out, deferred.out         output of `campaign parallel`'s chains
//! ├── .pqperf-run.lock, .campaign.lock    the run-directory and campaign.json locks
//! └── dataset/                            `campaign publish`'s default target
//! ```
//!
//! A dataset's system folder (`performance/data/<sys>/`) keeps the run's evidence files at
//! the same paths, so `RunLayout::new(system_folder)` names them there too.
//!
//! Paths that evidence stores (a record's library, a KAT log named in build.json) are
//! run-relative with `/`; the `*_rel` functions give those, the methods the paths on disk.

use std::path::{Path, PathBuf};

use crate::buildjson::BuildJson;
use crate::error::ModelError;

/// The files and folders of one run directory (see the module doc for the tree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLayout {
    root: PathBuf,
}

impl RunLayout {
    /// The layout of the run directory `root` (nothing is created or checked).
    pub fn new(root: impl Into<PathBuf>) -> RunLayout {
        RunLayout { root: root.into() }
    }

    /// The run directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `catalog.toml`.
    pub fn catalog(&self) -> PathBuf {
        self.root.join("catalog.toml")
    }

    /// `imports/<id>.json`.
    pub fn import_record(&self, id: &str) -> PathBuf {
        self.root.join("imports").join(format!("{id}.json"))
    }

    /// `sources/<id>/`, where `import iccs` extracts a submission archive.
    pub fn sources(&self, id: &str) -> PathBuf {
        self.root.join("sources").join(id)
    }

    /// `provider/`, the ICCS provider the candidates link (and its official variant).
    pub fn provider_dir(&self) -> PathBuf {
        self.root.join("provider")
    }

    /// `provider/bench/`, the providers `pqperf iccs bench` builds.
    pub fn provider_bench_dir(&self) -> PathBuf {
        self.provider_dir().join("bench")
    }

    /// `provider/cc`, the compiler the run was built with (`--cc`).
    pub fn remembered_cc(&self) -> PathBuf {
        self.provider_dir().join("cc")
    }

    /// `provider/choice`, the ICCS provider chosen for the run (`--iccs-provider`).
    pub fn remembered_provider(&self) -> PathBuf {
        self.provider_dir().join("choice")
    }

    /// `build.json`.
    pub fn build_json(&self) -> PathBuf {
        self.root.join(BUILD_JSON)
    }

    /// The run's build.json as read, empty when there is none; an error names the file and
    /// line. The one reader of build.json.
    pub fn read_build(&self) -> Result<BuildJson, ModelError> {
        let p = self.build_json();
        if !p.exists() {
            return Ok(BuildJson::default());
        }
        crate::pyjson::read(&p, Path::new(BUILD_JSON))
    }

    /// `build/`: build logs and scratch.
    pub fn build_dir(&self) -> PathBuf {
        self.root.join("build")
    }

    /// `build/<id>.log`, the build log of candidate `id`.
    pub fn build_log(&self, id: &str) -> PathBuf {
        self.root.join(Self::build_log_rel(id))
    }

    /// `build/<id>.log`, run-relative.
    pub fn build_log_rel(id: &str) -> String {
        format!("build/{id}.log")
    }

    /// `build/src/<id>/<label>/`, the build scratch of one instance.
    pub fn build_scratch(&self, id: &str, label: &str) -> PathBuf {
        self.build_dir().join("src").join(id).join(label)
    }

    /// `build/ct/`, the scratch of `pqperf ct`'s `-g` builds.
    pub fn ct_build_dir(&self) -> PathBuf {
        self.build_dir().join("ct")
    }

    /// `build/ct-helpers/`, where `pqperf ct` builds its ICCS helper objects.
    pub fn ct_helpers_build_dir(&self) -> PathBuf {
        self.build_dir().join("ct-helpers")
    }

    /// `lib/<id>/lib<label>.so`, run-relative (as build.json records it).
    pub fn library_rel(id: &str, label: &str) -> String {
        format!("lib/{id}/lib{label}.so")
    }

    /// `kat/`.
    pub fn kat_dir(&self) -> PathBuf {
        self.root.join("kat")
    }

    /// `kat/<id>/<label>.log`, run-relative (as build.json records it).
    pub fn kat_log_rel(id: &str, label: &str) -> String {
        format!("kat/{id}/{label}.log")
    }

    /// `kat/<id>/<label>.log`.
    pub fn kat_log(&self, id: &str, label: &str) -> PathBuf {
        self.root.join(Self::kat_log_rel(id, label))
    }

    /// `kat/<id>/<label>/`, the KAT child's output folder, run-relative.
    pub fn kat_out_rel(id: &str, label: &str) -> String {
        format!("kat/{id}/{label}")
    }

    /// `kat/<id>/<label>.job.json`, the KAT child's job file.
    pub fn kat_job(&self, id: &str, label: &str) -> PathBuf {
        self.root.join(format!("kat/{id}/{label}.job.json"))
    }

    /// `katcheck/`.
    pub fn katcheck_dir(&self) -> PathBuf {
        self.root.join("katcheck")
    }

    /// `calibrate/`.
    pub fn calibrate_dir(&self) -> PathBuf {
        self.root.join("calibrate")
    }

    /// `calibrate/<id>/<label>__<opkey>.json`.
    pub fn calibration(&self, id: &str, label: &str, opkey: &str) -> PathBuf {
        self.calibrate_dir()
            .join(id)
            .join(crate::record::Record::file_name(label, opkey))
    }

    /// `records/`.
    pub fn records_dir(&self) -> PathBuf {
        self.root.join("records")
    }

    /// `records/<id>/<label>__<opkey>.json`.
    pub fn record(&self, id: &str, label: &str, opkey: &str) -> PathBuf {
        self.records_dir()
            .join(id)
            .join(crate::record::Record::file_name(label, opkey))
    }

    /// `profile/`.
    pub fn profile_dir(&self) -> PathBuf {
        self.root.join("profile")
    }

    /// `profile/<id>/<label>__<op>.json`.
    pub fn profile(&self, id: &str, label: &str, op: &str) -> PathBuf {
        self.profile_dir()
            .join(id)
            .join(crate::record::Record::file_name(label, op))
    }

    /// `profile/<id>/<label>__RELINK_FAILED.json`, written when the profiling relink failed.
    pub fn relink_failed(&self, id: &str, label: &str) -> PathBuf {
        self.profile_dir()
            .join(id)
            .join(format!("{label}__RELINK_FAILED.json"))
    }

    /// `profile/iccs-provider-bench.json`, the last `pqperf iccs bench` table.
    pub fn iccs_provider_bench(&self) -> PathBuf {
        self.profile_dir().join("iccs-provider-bench.json")
    }

    /// `survey/`.
    pub fn survey_dir(&self) -> PathBuf {
        self.root.join("survey")
    }

    /// `survey/<id>.json`.
    pub fn survey(&self, id: &str) -> PathBuf {
        self.survey_dir().join(format!("{id}.json"))
    }

    /// `hashcost/`.
    pub fn hashcost_dir(&self) -> PathBuf {
        self.root.join("hashcost")
    }

    /// `hashcost/iccs.tsv`, the ICCS baseline's cost per call shape.
    pub fn hashcost_iccs(&self) -> PathBuf {
        self.hashcost_dir().join("iccs.tsv")
    }

    /// `hashcost/<id>/<label>.tsv`.
    pub fn hashcost(&self, id: &str, label: &str) -> PathBuf {
        self.hashcost_dir().join(id).join(format!("{label}.tsv"))
    }

    /// `hashprof/lib/<id>/lib<label>.so`, the profiling build, run-relative.
    pub fn profiling_library_rel(id: &str, label: &str) -> String {
        format!("hashprof/lib/{id}/lib{label}.so")
    }

    /// `hashprof/build/<id>/<label>/`, the profiling relink's scratch.
    pub fn profiling_scratch(&self, id: &str, label: &str) -> PathBuf {
        self.root.join("hashprof/build").join(id).join(label)
    }

    /// `hashprof/kat/<id>/<label>`, the profiling build's KAT output folder, run-relative
    /// (its log is this with `.log`, its job file with `.job.json`).
    pub fn profiling_kat_rel(id: &str, label: &str) -> String {
        format!("hashprof/kat/{id}/{label}")
    }

    /// `iccs-baseline/`, where the ICCS helper baseline keeps its catalog and sources.
    pub fn iccs_baseline_dir(&self) -> PathBuf {
        self.root.join("iccs-baseline")
    }

    /// `iccs-baseline/catalog.toml`, the baseline's own catalog.
    pub fn iccs_baseline_catalog(&self) -> PathBuf {
        self.iccs_baseline_dir().join("catalog.toml")
    }

    /// `ct/`.
    pub fn ct_dir(&self) -> PathBuf {
        self.root.join("ct")
    }

    /// `ct/<id>/<label>.json`, run-relative.
    pub fn ct_rel(id: &str, label: &str) -> String {
        format!("ct/{id}/{label}.json")
    }

    /// `ct/<id>/<label>.json`.
    pub fn ct(&self, id: &str, label: &str) -> PathBuf {
        self.root.join(Self::ct_rel(id, label))
    }

    /// `count/`.
    pub fn count_dir(&self) -> PathBuf {
        self.root.join("count")
    }

    /// `count/<id>/<label>__<op>.json`, run-relative.
    pub fn count_rel(id: &str, label: &str, op: &str) -> String {
        format!("count/{id}/{label}__{op}.json")
    }

    /// `count/<id>/<label>__<op>.json`.
    pub fn count(&self, id: &str, label: &str, op: &str) -> PathBuf {
        self.root.join(Self::count_rel(id, label, op))
    }

    /// `ab/`, the evidence of `pqperf ab`.
    pub fn ab_dir(&self) -> PathBuf {
        self.root.join("ab")
    }

    /// `campaign.json`.
    pub fn campaign_json(&self) -> PathBuf {
        self.root.join("campaign.json")
    }

    /// `campaign.log`.
    pub fn campaign_log(&self) -> PathBuf {
        self.root.join("campaign.log")
    }

    /// `shard-<k>.out`, the output of shard `k`'s chain of `campaign parallel` (1-based).
    pub fn shard_output(&self, k: usize) -> PathBuf {
        self.root.join(format!("shard-{k}.out"))
    }

    /// `deferred.out`, the output of `campaign parallel`'s deferred chain.
    pub fn deferred_output(&self) -> PathBuf {
        self.root.join("deferred.out")
    }

    /// `.campaign.lock`, held while campaign.json is read, changed and written.
    pub fn campaign_lock(&self) -> PathBuf {
        self.root.join(".campaign.lock")
    }

    /// `.pqperf-run.lock`, held by every command that writes the run directory.
    pub fn run_lock(&self) -> PathBuf {
        self.root.join(RUN_LOCK)
    }

    /// `dataset/`, where `campaign publish` writes without `--to`.
    pub fn default_dataset(&self) -> PathBuf {
        self.root.join("dataset")
    }

    /// The folders of per-instance evidence (`<folder>/<id>/<label>…`; `survey/` holds one
    /// file per candidate): `records/`, `calibrate/`, `profile/`, `ct/`, `count/`, `kat/`,
    /// `katcheck/`, `survey/` — what `campaign merge` takes from the shard that measured an
    /// instance.
    pub fn instance_evidence_dirs(&self) -> [PathBuf; 8] {
        [
            self.records_dir(),
            self.calibrate_dir(),
            self.profile_dir(),
            self.ct_dir(),
            self.count_dir(),
            self.kat_dir(),
            self.katcheck_dir(),
            self.survey_dir(),
        ]
    }

    /// The file at `rel`, a path relative to the run directory (as evidence stores it, or as
    /// a walk of another run directory found it): the same file in this run.
    pub fn at(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// `site/`, where `pqperf demo` renders the HTML site of its dataset.
    pub fn demo_site(&self) -> PathBuf {
        self.root.join("site")
    }
}

/// The file name of build.json.
pub const BUILD_JSON: &str = "build.json";

/// The file name of the run-directory lock.
pub const RUN_LOCK: &str = ".pqperf-run.lock";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_tree_of_the_module_doc() {
        let l = RunLayout::new("/r");
        assert_eq!(
            l.record("a", "b", "sign"),
            Path::new("/r/records/a/b__sign.json")
        );
        assert_eq!(
            l.calibration("a", "b", "hash_32"),
            Path::new("/r/calibrate/a/b__hash_32.json")
        );
        assert_eq!(
            l.profile("a", "b", "dec"),
            Path::new("/r/profile/a/b__dec.json")
        );
        assert_eq!(
            l.relink_failed("a", "b"),
            Path::new("/r/profile/a/b__RELINK_FAILED.json")
        );
        assert_eq!(l.kat_log("a", "b"), Path::new("/r/kat/a/b.log"));
        assert_eq!(RunLayout::kat_log_rel("a", "b"), "kat/a/b.log");
        assert_eq!(RunLayout::library_rel("a", "b"), "lib/a/libb.so");
        assert_eq!(l.ct("a", "b"), Path::new("/r/ct/a/b.json"));
        assert_eq!(
            l.count("a", "b", "sign"),
            Path::new("/r/count/a/b__sign.json")
        );
        assert_eq!(l.survey("a"), Path::new("/r/survey/a.json"));
        assert_eq!(l.hashcost("a", "b"), Path::new("/r/hashcost/a/b.tsv"));
        assert_eq!(l.build_json(), Path::new("/r/build.json"));
        assert_eq!(l.run_lock(), Path::new("/r/.pqperf-run.lock"));
        let dirs = l.instance_evidence_dirs();
        assert_eq!(dirs[0], Path::new("/r/records"));
        assert_eq!(dirs[4], Path::new("/r/count"));
        assert_eq!(dirs[7], Path::new("/r/survey"));
        assert_eq!(l.at("ct/a/b.json"), l.ct("a", "b"));
    }

    #[test]
    fn build_json_absent_is_empty_and_malformed_names_the_file() {
        let d = tempfile::tempdir().unwrap();
        let l = RunLayout::new(d.path());
        assert!(l.read_build().unwrap().instances.is_empty());
        std::fs::write(l.build_json(), "{\n \"instances\": \n").unwrap();
        let e = l.read_build().unwrap_err().to_string();
        assert!(e.starts_with("build.json:"), "{e}");
    }
}
