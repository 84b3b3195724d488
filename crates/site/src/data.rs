//! What the site renders from a loaded dataset: per system the report's view of its evidence
//! ([`pqperf_report::view::SystemView`]) plus the few facts only the site shows; per
//! candidate its name and category; the side tables as the report reads them
//! ([`pqperf_report::view::Side`]). `load` fills them from a loaded dataset.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pqperf_report::page::Evidence;
use pqperf_report::view::{RecordRef, Side, SystemView};

pub use pqperf_model::order::Category;

/// One candidate (NGCC submission or PQClean baseline scheme).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Candidate id (`sign-08`, `ml-dsa-44`).
    pub id: String,
    /// Official algorithm name (downloads.csv), or the id.
    pub algorithm: String,
    /// Short display name (short_names.csv), if curated.
    pub short_name: Option<String>,
    /// Category (signature, KEM, KEX, hash, baseline).
    pub category: Category,
}

/// One test system as the site shows it: the report's view of its evidence
/// ([`SystemView`]: records, profiles, build.json, campaign, ct and count evidence) and the
/// few facts only the site shows (the clock sentence of the joint view, the host line of the
/// root index, where its files are on disk).
#[derive(Clone, Debug)]
pub struct SystemFacts<'a> {
    /// System id (`x86_1`).
    pub id: String,
    /// The system's evidence as the report pages read it.
    pub view: SystemView<'a>,
    /// `x86_64` / `aarch64` (systems.csv Arch or the environment).
    pub arch: String,
    /// Description (systems.csv).
    pub description: String,
    /// Measured or fixed core clock in GHz, if known.
    pub clock_ghz: Option<f64>,
    /// Clock sentence for the joint view (`2.10 GHz, turbo off`).
    pub clock_text: String,
    /// The files (and JSON fields) the facts above and below were read from.
    pub sources: FactSources,
    /// Directory holding `records/`, `profile/`, `kat/`, `build.json`, `campaign.json`.
    pub data_dir: PathBuf,
    /// The host-check outcome of campaign.json (`None` when campaign.json is absent).
    pub host_state: Option<pqperf_model::HostState>,
    /// How the host was emulated (campaign.json `pqperf.emulated`); `None` on a native host.
    pub emulated: Option<String>,
    /// What the timing figures count when it is not core cycles: `ticks (TSC)` for records
    /// whose measuring child named a tick counter (`pqperf_report::counter`); `None`: cycles.
    pub counter_unit: Option<String>,
}

/// Where a system's site-only facts come from: each an evidence file and, for a JSON file,
/// the field (a JSON pointer) that holds the fact.
#[derive(Clone, Debug, Default)]
pub struct FactSources {
    /// Architecture: systems.csv, else campaign.json's environment.
    pub arch: Option<(Evidence, Option<String>)>,
    /// Description: systems.csv.
    pub description: Option<(Evidence, Option<String>)>,
    /// Clock sentence: campaign.json's environment, else a record's.
    pub clock: Option<(Evidence, Option<String>)>,
    /// Host-check outcome and emulation: campaign.json.
    pub host: Option<(Evidence, Option<String>)>,
    /// Counter unit: the first record that named its counter.
    pub counter: Option<(Evidence, Option<String>)>,
}

impl<'a> SystemFacts<'a> {
    /// Unit of the timing figures: `cycles` or the tick counter's (`ticks (TSC)`).
    pub fn unit(&self) -> &str {
        self.counter_unit.as_deref().unwrap_or("cycles")
    }

    /// A column or axis name with "cycles" replaced by the system's unit.
    pub fn unit_name(&self, name: &str) -> String {
        match &self.counter_unit {
            Some(u) => name.replace("cycles", u),
            None => name.to_string(),
        }
    }

    /// The timing records, in path order.
    pub fn records(&self) -> &[RecordRef<'a>] {
        &self.view.records
    }

    /// The record of (candidate, label, opkey), if any; KEM operations match under both
    /// names (`enc`/`encaps`, `dec`/`decaps`).
    pub fn record(&self, cand: &str, label: &str, opkey: &str) -> Option<RecordRef<'a>> {
        self.view.record_any_spelling(cand, label, opkey)
    }

    /// The build.json instances as (candidate, label, variant), sorted by (candidate, label).
    pub fn built(&self) -> Vec<(&'a str, &'a str, &'a str)> {
        let mut v: Vec<(&str, &str, &str)> = self
            .view
            .build
            .instances
            .values()
            .map(|e| (e.candidate.as_str(), e.label.as_str(), e.variant.as_str()))
            .collect();
        v.sort();
        v.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
        v
    }

    /// The site path of a record's file (`evidence/<sys>/records/<cand>/<f>.json`).
    pub fn evidence_path(&self, rec: &RecordRef<'_>) -> String {
        crate::evidence::href(&rec.evidence(&self.id))
    }
}

/// Everything the site renders, borrowing the loaded dataset.
#[derive(Clone, Debug)]
pub struct SiteData<'a> {
    /// The systems, in systems.csv order.
    pub systems: Vec<SystemFacts<'a>>,
    /// Every candidate with data on some system.
    pub candidates: Vec<Candidate>,
    /// The curated side tables, as the report reads them.
    pub side: &'a Side,
    /// Side files copied into the site as evidence (file name → source path).
    pub side_files: BTreeMap<String, PathBuf>,
    /// Pages of the report stage, site form, as blocks: (path relative to the site root
    /// with its `.md` name, page).
    pub pages: Vec<(String, pqperf_report::page::Page)>,
    /// Data files of the site (site-root-relative path, bytes): each system's summary as
    /// `<sys>/summary.csv` and `<sys>/summary.json`.
    pub downloads: Vec<(String, Vec<u8>)>,
}

impl SiteData<'_> {
    /// The candidate with id `id`, if any.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }
}
