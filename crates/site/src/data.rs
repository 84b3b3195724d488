//! The facts the site needs from a dataset, in a small form of its own: per system the timing
//! records (cycles, sizes, evidence path, per-call percentiles when recorded), hash-profile
//! shares and build entries; per candidate its name and category; the curated side tables.
//! `load` fills them from a published dataset; tests can build them by hand.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

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

/// One timing record, reduced to what the site shows.
#[derive(Clone, Debug, Default)]
pub struct Rec {
    /// Candidate id.
    pub candidate: String,
    /// Instance label.
    pub label: String,
    /// `reference` or `optimized-<isa>`.
    pub variant: String,
    /// Operation (`keygen`, `sign`, …).
    pub operation: String,
    /// `operation` or `<operation>_<input_bytes>` for hash records.
    pub opkey: String,
    /// Message length of a hash record (0 otherwise).
    pub input_bytes: u64,
    /// The record's status is `complete`.
    pub complete: bool,
    /// The record's KAT verdict, if it names one.
    pub kat: Option<String>,
    /// Mean cycles (or ticks) per call, when measured.
    pub mean_cycles: Option<f64>,
    /// Mean wall seconds per call, when measured.
    pub mean_seconds: Option<f64>,
    /// Timed calls behind the means.
    pub measurements: u64,
    /// API sizes (`pk_bytes`, `signature_bytes`, `ct_bytes`, `digest_bytes`, …).
    pub sizes: BTreeMap<String, u64>,
    /// KEX META numbers (`kex_passes`, `kex_total_msg_bytes`, …).
    pub kex: BTreeMap<String, u64>,
    /// Path relative to the system's data directory (`records/<cand>/<label>__<opkey>.json`).
    pub path: String,
    /// Per-call cycle percentiles (p50, p90, p99) when the record carries samples.
    pub percentiles: Option<[f64; 3]>,
    /// pqperf's robust per-call estimate and its interval, in seconds (estimate, low, high),
    /// when recorded (`pqperf.robust`).
    pub robust: Option<[f64; 3]>,
}

impl Rec {
    /// `66.1 µs (65.9–66.4 µs)`: the robust estimate with its interval, when recorded.
    pub fn robust_text(&self) -> Option<String> {
        let [e, lo, hi] = self.robust?;
        Some(format!(
            "{} ({}–{})",
            pqperf_model::fmt::fmt_time(Some(e)),
            pqperf_model::fmt::fmt_time(Some(lo)),
            pqperf_model::fmt::fmt_time(Some(hi))
        ))
    }
}

/// A hash-profile record.
#[derive(Clone, Debug, Default)]
pub struct Prof {
    /// Share of the operation's time spent in the hash helpers, when profiled.
    pub hash_share: Option<f64>,
    /// The profile's status is `complete`.
    pub complete: bool,
    /// Path relative to the system's data directory (`profile/<cand>/<label>__<op>.json`).
    pub path: String,
}

/// A build.json entry.
#[derive(Clone, Debug, Default)]
pub struct BuildFact {
    /// `reference` or `optimized-<isa>`.
    pub variant: String,
    /// KAT verdict.
    pub kat: Option<String>,
    /// KAT log path relative to the system's data directory.
    pub kat_log: Option<String>,
}

/// One test system's facts as the site shows them (reduced from the model's
/// `pqperf_model::dataset::SystemData`).
#[derive(Clone, Debug, Default)]
pub struct SystemFacts {
    /// System id (`x86_1`).
    pub id: String,
    /// `x86_64` / `aarch64` (systems.csv Arch or the environment).
    pub arch: String,
    /// Description (systems.csv).
    pub description: String,
    /// Measured or fixed core clock in GHz, if known.
    pub clock_ghz: Option<f64>,
    /// Clock sentence for the joint view (`2.10 GHz, turbo off`).
    pub clock_text: String,
    /// Directory holding `records/`, `profile/`, `kat/`, `build.json`, `campaign.json`.
    pub data_dir: PathBuf,
    /// The host-check outcome of campaign.json (`None` when campaign.json is absent).
    pub host_state: Option<pqperf_model::HostState>,
    /// How the host was emulated (campaign.json `pqperf.emulated`); `None` on a native host.
    pub emulated: Option<String>,
    /// What the timing figures count when it is not core cycles: `ticks (TSC)` for records
    /// whose measuring child named a tick counter (`pqperf_report::counter`); `None`: cycles.
    pub counter_unit: Option<String>,
    /// The timing records, in file order.
    pub records: Vec<Rec>,
    /// Keyed by (candidate, label, opkey).
    pub profiles: HashMap<(String, String, String), Prof>,
    /// Keyed by (candidate, label).
    pub build: BTreeMap<(String, String), BuildFact>,
    /// Lookup index over `records`, built on first use (do not push records after a lookup).
    pub index: std::sync::OnceLock<RecIndex>,
    /// Instruction counts (`count/`), keyed by (candidate, label, opkey): counted ones only.
    pub counts: HashMap<(String, String, String), CountFact>,
}

/// One operation's instruction count.
#[derive(Clone, Debug, Default)]
pub struct CountFact {
    /// Median instructions per call over the counted calls.
    pub median: f64,
    /// Path relative to the system's data directory (`count/<id>/<label>__<op>.json`).
    pub path: String,
}

/// Record positions by (candidate, label, opkey) and by (candidate, label).
#[derive(Clone, Debug, Default)]
pub struct RecIndex {
    by_op: HashMap<(String, String, String), usize>,
    by_instance: HashMap<(String, String), Vec<usize>>,
}

impl SystemFacts {
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

    /// The complete record of (candidate, label, opkey), if any.
    /// KEM operations match under both names (`enc`/`encaps`, `dec`/`decaps`).
    pub fn record(&self, cand: &str, label: &str, opkey: &str) -> Option<&Rec> {
        let alias = pqperf_model::vocab::other_spelling(opkey).unwrap_or(opkey);
        let idx = self.index();
        let key = |op: &str| (cand.to_string(), label.to_string(), op.to_string());
        idx.by_op
            .get(&key(opkey))
            .or_else(|| idx.by_op.get(&key(alias)))
            .map(|&i| &self.records[i])
    }

    fn index(&self) -> &RecIndex {
        self.index.get_or_init(|| {
            let mut idx = RecIndex::default();
            for (i, r) in self.records.iter().enumerate() {
                idx.by_op
                    .entry((r.candidate.clone(), r.label.clone(), r.opkey.clone()))
                    .or_insert(i);
                idx.by_instance
                    .entry((r.candidate.clone(), r.label.clone()))
                    .or_default()
                    .push(i);
            }
            idx
        })
    }

    /// Records of one instance, in load order.
    pub fn instance_records(&self, cand: &str, label: &str) -> Vec<&Rec> {
        self.index()
            .by_instance
            .get(&(cand.to_string(), label.to_string()))
            .map(|v| v.iter().map(|&i| &self.records[i]).collect())
            .unwrap_or_default()
    }

    /// The first record (by path) of an instance that carries API sizes.
    pub fn sized_record(&self, cand: &str, label: &str) -> Option<&Rec> {
        let mut v: Vec<&Rec> = self
            .instance_records(cand, label)
            .into_iter()
            .filter(|r| !r.sizes.is_empty())
            .collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v.into_iter().next()
    }
}

/// The curated side tables (all optional).
#[derive(Clone, Debug, Default)]
pub struct Side {
    /// (id, label) → target bits from `security_targets.csv` (None = curated as no target).
    pub targets: HashMap<(String, String), Option<u32>>,
    /// (id, label) → the `external_sizes.csv` row.
    pub ext_sizes: HashMap<(String, String), pqperf_model::sidecsv::ExternalSize>,
    /// (id, label) → bandwidth bytes (PkA + PkB + ProtocolMessageBytes).
    pub kex_bandwidth: HashMap<(String, String), u64>,
    /// id → survey verdict.
    pub survey: HashMap<String, String>,
    /// (id, label regex, note) from `summary_notes.csv`.
    pub notes: Vec<(String, String, String)>,
    /// Side files copied into the site as evidence (file name → source path).
    pub files: BTreeMap<String, PathBuf>,
}

/// Everything the site renders.
#[derive(Clone, Debug, Default)]
pub struct SiteData {
    /// The systems, in systems.csv order.
    pub systems: Vec<SystemFacts>,
    /// Every candidate with data on some system.
    pub candidates: Vec<Candidate>,
    /// The curated side tables.
    pub side: Side,
    /// Pages of the report stage, site form, as blocks: (path relative to the site root
    /// with its `.md` name, page).
    pub pages: Vec<(String, pqperf_report::page::Page)>,
    /// Data files of the site (site-root-relative path, bytes): each system's summary as
    /// `<sys>/summary.csv` and `<sys>/summary.json`.
    pub downloads: Vec<(String, Vec<u8>)>,
}

impl SiteData {
    /// The candidate with id `id`, if any.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }
}

/// Security target of an instance: the `security_targets.csv` value (publish writes PQClean
/// instances' targets from their claimed NIST level, META.yml, and NGCC instances' from their
/// label); without a row, the target the label states exactly once
/// (`pqperf_model::sidecsv::target_bits_from_label`: `BiT-128`, `DARTS512`, `X-192`); an
/// empty TargetBits means no known target (method.md §14).
pub fn security_target(side: &Side, cand: &str, label: &str) -> Option<u32> {
    let curated = side.targets.get(&(cand.to_string(), label.to_string()));
    if let Some(Some(t)) = curated {
        return Some(*t);
    }
    if curated.is_some() {
        return None;
    }
    pqperf_model::sidecsv::target_bits_from_label(label).and_then(|b| u32::try_from(b).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_fallbacks() {
        let mut side = Side::default();
        assert_eq!(
            security_target(&side, "sign-06", "COMPASS-SIG-256"),
            Some(256)
        );
        assert_eq!(security_target(&side, "sign-06", "COMPASS-SIG-384"), None);
        assert_eq!(security_target(&side, "sign-08", "DARTS512"), Some(512));
        assert_eq!(security_target(&side, "sign-09", "X-192"), Some(192));
        assert_eq!(security_target(&side, "sign-09", "X-192-256"), None);
        // PQClean targets come from security_targets.csv (publish writes them from the
        // claimed NIST level); no name table guesses them.
        assert_eq!(security_target(&side, "ml-dsa-87", "clean"), None);
        side.targets
            .insert(("sign-06".into(), "COMPASS-SIG-384".into()), Some(256));
        side.targets
            .insert(("sign-08".into(), "DARTS512".into()), None);
        assert_eq!(
            security_target(&side, "sign-06", "COMPASS-SIG-384"),
            Some(256)
        );
        assert_eq!(security_target(&side, "sign-08", "DARTS512"), None);
        side.targets
            .insert(("ml-kem-512".into(), "ml-kem-512".into()), Some(128));
        assert_eq!(
            security_target(&side, "ml-kem-512", "ml-kem-512"),
            Some(128)
        );
    }
}
