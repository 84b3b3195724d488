//! The one view of a loaded [`pqperf_model`] dataset that the Markdown pages and the site
//! read: per system ([`SystemView`]) the model's records, profiles, build.json, campaign, ct
//! and count evidence by reference, with lookups by instance and operation key; per dataset
//! ([`Side`]) the side CSV rows (kat issues and notes with compiled regexes, external sizes,
//! KEX bandwidth, survey, security targets).

use std::collections::{BTreeMap, HashMap};

use pqperf_model::buildjson::{BuildEntry, BuildJson};
use pqperf_model::campaign::Campaign;
use pqperf_model::fields::Fields;
use pqperf_model::profile::Profile;
use pqperf_model::record::Record;
use regex::Regex;

use pqperf_model::order::{Category, natural_cmp, op_rank};

pub use pqperf_model::sidecsv::{ExternalSize, KexBandwidth, SurveyRow, SystemRow};

/// A side-table row whose `Label` column is a regular expression, with the expression
/// compiled once (`kat_issues.csv`, `summary_notes.csv`); the row's other fields are reached
/// through `Deref`, `label` is the compiled expression.
#[derive(Debug, Clone)]
pub struct Labelled<T> {
    /// The row as read (`pqperf_model::sidecsv`).
    pub row: T,
    /// The compiled label expression (searched, not anchored).
    pub label: Regex,
}

impl<T> std::ops::Deref for Labelled<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.row
    }
}

/// A `kat_issues.csv` row with its compiled label regex.
pub type KatIssue = Labelled<pqperf_model::sidecsv::KatIssue>;

/// A `summary_notes.csv` row with its compiled label regex.
pub type SummaryNote = Labelled<pqperf_model::sidecsv::SummaryNote>;

/// Data shared by every system of a dataset root.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// `systems.csv` rows in file order.
    pub systems: Vec<SystemRow>,
    /// `downloads.csv`: id → (Algorithm, PageURL), plus the file order of ids.
    pub downloads: BTreeMap<String, (String, String)>,
    /// Ids in downloads.csv order (catalog order).
    pub download_order: Vec<String>,
    /// `kat_issues.csv` rows in file order.
    pub kat_issues: Vec<KatIssue>,
    /// `summary_notes.csv` rows in file order.
    pub summary_notes: Vec<SummaryNote>,
    /// `external_sizes.csv`: (id, label) → row.
    pub external_sizes: BTreeMap<(String, String), ExternalSize>,
    /// `kex_bandwidth.csv`: (id, label) → row.
    pub kex_bandwidth: BTreeMap<(String, String), KexBandwidth>,
    /// `symmetric_survey.csv` rows in file order.
    pub survey: Vec<SurveyRow>,
    /// `security_targets.csv`: (id, label) → target bits (`None`: curated as no target).
    pub targets: HashMap<(String, String), Option<u32>>,
    /// Candidates with evidence (records or build entries), per system present in the
    /// dataset; used to link only to pages that exist.
    pub present: BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Side {
    /// The systems.csv row of `id`.
    pub fn system(&self, id: &str) -> Option<&SystemRow> {
        self.systems.iter().find(|s| s.id == id)
    }

    /// True when `system` is in the dataset and has evidence for `cand` (so its page exists).
    pub fn has_page(&self, system: &str, cand: &str) -> bool {
        self.present.get(system).is_some_and(|c| c.contains(cand))
    }

    /// True when `system` is in the dataset (so its summary exists).
    pub fn has_system(&self, system: &str) -> bool {
        self.present.contains_key(system)
    }

    /// Survey row of a candidate.
    pub fn survey_of(&self, id: &str) -> Option<&SurveyRow> {
        self.survey.iter().find(|s| s.id == id)
    }

    /// Algorithm name from downloads.csv.
    pub fn algorithm(&self, id: &str) -> Option<&str> {
        self.downloads.get(id).map(|(a, _)| a.as_str())
    }

    /// Security target of an instance: the `security_targets.csv` value (publish writes
    /// PQClean instances' targets from their claimed NIST level, META.yml, and NGCC
    /// instances' from their label); without a row, the target the label states exactly once
    /// (`pqperf_model::sidecsv::target_bits_from_label`: `BiT-128`, `DARTS512`, `X-192`); an
    /// empty TargetBits means no known target (method.md §14).
    pub fn security_target(&self, cand: &str, label: &str) -> Option<u32> {
        let curated = self.targets.get(&(cand.to_string(), label.to_string()));
        if let Some(Some(t)) = curated {
            return Some(*t);
        }
        if curated.is_some() {
            return None;
        }
        pqperf_model::sidecsv::target_bits_from_label(label).and_then(|b| u32::try_from(b).ok())
    }

    /// KEX bandwidth of an instance in bytes (`kex_bandwidth.csv`: PkA + PkB +
    /// ProtocolMessageBytes), when curated.
    pub fn kex_bandwidth_bytes(&self, cand: &str, label: &str) -> Option<u64> {
        self.kex_bandwidth
            .get(&(cand.to_string(), label.to_string()))
            .map(|k| k.pk_a_bytes + k.pk_b_bytes + k.protocol_message_bytes)
    }

    /// NICCS page URL from downloads.csv (None when absent or empty).
    pub fn page_url(&self, id: &str) -> Option<&str> {
        self.downloads
            .get(id)
            .map(|(_, u)| u.as_str())
            .filter(|u| !u.is_empty())
    }
}

/// A timing record with its path relative to the system dataset (`records/<id>/<f>.json`).
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    /// Path relative to the system dataset directory.
    pub path: &'a std::path::Path,
    /// The record.
    pub rec: &'a Record,
}

impl RecordRef<'_> {
    /// The record file as page evidence of system `system`.
    pub fn evidence(&self, system: &str) -> crate::page::Evidence {
        run_evidence(system, self.path)
    }

    /// Operation key: operation, or `<op>_<input_bytes>` when input_bytes > 0.
    pub fn opkey(&self) -> String {
        opkey(&self.rec.operation, self.rec.input_bytes)
    }

    /// True when the record's status is `complete`.
    pub fn complete(&self) -> bool {
        self.rec.status == "complete"
    }

    /// The path relative to the system dataset directory, with `/` separators.
    pub fn rel_path(&self) -> String {
        rel_path(self.path)
    }
}

impl<'a> RecordRef<'a> {
    /// pqperf's robust per-call estimate with its interval (`pqperf.robust`), when recorded.
    pub fn robust(&self) -> Option<&'a pqperf_model::robust::Robust> {
        self.rec.pqperf.as_ref()?.robust.as_ref()
    }

    /// Per-call cycle quantiles (`pqperf.per_call_cycles`), when the record carries samples.
    pub fn per_call_cycles(&self) -> Option<&'a pqperf_model::record::Quantiles> {
        self.rec.pqperf.as_ref()?.per_call_cycles.as_ref()
    }

    /// `66.1 µs (65.9–66.4 µs)`: the robust estimate with its interval, when recorded.
    pub fn robust_text(&self) -> Option<String> {
        let rb = self.robust()?;
        let t = |s: f64| pqperf_model::fmt::fmt_time(Some(s));
        Some(format!(
            "{} ({}–{})",
            t(rb.estimate_seconds),
            t(rb.ci_low_seconds),
            t(rb.ci_high_seconds)
        ))
    }
}

/// A profile with its path relative to the system dataset (`profile/<id>/<f>.json`).
#[derive(Debug, Clone, Copy)]
pub struct ProfileRef<'a> {
    /// Path relative to the system dataset directory.
    pub path: &'a std::path::Path,
    /// The profile.
    pub prof: &'a Profile,
}

impl ProfileRef<'_> {
    /// The profile file as page evidence of system `system`.
    pub fn evidence(&self, system: &str) -> crate::page::Evidence {
        run_evidence(system, self.path)
    }

    /// Operation key.
    pub fn opkey(&self) -> String {
        opkey(&self.prof.operation, self.prof.input_bytes)
    }

    /// Complete with a total (the profiles the pages show).
    pub fn usable(&self) -> bool {
        self.prof.status == "complete" && self.prof.total.is_some()
    }
}

/// ICCS placeholder functions (`calls[].fn` of ICCS profiles).
const ICCS_FNS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash"];

/// True for a profile of a non-ICCS (e.g. PQClean `nist`) instance: it called hash functions
/// of its own and none of the ICCS placeholders, so its `hash_share` is not an ICCS share.
pub fn own_primitive_profile(p: &ProfileRef) -> bool {
    own_primitives(std::slice::from_ref(p)).is_some()
}

/// For profiles of non-ICCS (e.g. PQClean `nist`) instances: the sorted hash-function
/// families they called. `None` when any profile called an ICCS placeholder, or when no
/// profile called anything but the DRNG (the ICCS titles apply).
pub fn own_primitives(rows: &[ProfileRef]) -> Option<Vec<String>> {
    let mut fams: std::collections::BTreeSet<String> = Default::default();
    for p in rows {
        for c in &p.prof.calls {
            if ICCS_FNS.contains(&c.func.as_str()) {
                return None;
            }
            if c.func != "drng" {
                fams.insert(c.func.clone());
            }
        }
    }
    if fams.is_empty() {
        None
    } else {
        Some(fams.into_iter().collect())
    }
}

/// A path relative to a system dataset directory, with `/` separators.
pub fn rel_path(path: &std::path::Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// A file of a system's run directory (its path relative to it) as page evidence.
pub fn run_evidence(system: &str, path: &std::path::Path) -> crate::page::Evidence {
    crate::page::Evidence::Run {
        system: system.to_string(),
        path: rel_path(path),
    }
}

/// `<op>` or `<op>_<bytes>`.
pub fn opkey(op: &str, input_bytes: u64) -> String {
    if input_bytes > 0 {
        format!("{op}_{input_bytes}")
    } else {
        op.to_string()
    }
}

/// Everything the pages of one system read.
#[derive(Debug, Clone)]
pub struct SystemView<'a> {
    /// System id.
    pub id: String,
    /// Side data of the dataset root.
    pub side: &'a Side,
    /// campaign.json.
    pub campaign: &'a Campaign,
    /// build.json.
    pub build: &'a BuildJson,
    /// Records in sorted path order.
    pub records: Vec<RecordRef<'a>>,
    /// Profiles in sorted path order.
    pub profiles: Vec<ProfileRef<'a>>,
    /// The dataset directory relative to the dataset root (`performance/data/<id>`).
    pub run_dir: String,
    /// Constant-time evidence (`ct/<id>/<label>.json`) in path order.
    pub ct: &'a [pqperf_model::Loaded<pqperf_model::ct::CtEvidence>],
    /// Instruction-count evidence (`count/<id>/<label>__<op>.json`) in path order.
    pub count: &'a [pqperf_model::Loaded<pqperf_model::count::CountEvidence>],
    /// Positions in `records` / `profiles` per candidate and per instance, so that the page
    /// renderers' lookups do not scan every record of the system (119 candidates × ~20
    /// records each made those scans the largest cost of a full site).
    index: Index<'a>,
}

/// Positions of one instance in a candidate → label → positions index (empty if absent).
fn positions<'m>(
    index: &'m HashMap<&str, HashMap<&str, Vec<usize>>>,
    cand: &str,
    label: &str,
) -> &'m [usize] {
    index
        .get(cand)
        .and_then(|m| m.get(label))
        .map_or(&[], Vec::as_slice)
}

/// Record and profile positions of a [`SystemView`], by candidate and by instance.
#[derive(Debug, Clone, Default)]
struct Index<'a> {
    /// candidate → record positions, in path order.
    cand_records: HashMap<&'a str, Vec<usize>>,
    /// (candidate, label) → record positions, in path order.
    inst_records: HashMap<&'a str, HashMap<&'a str, Vec<usize>>>,
    /// (candidate, label) → profile positions, in path order.
    inst_profiles: HashMap<&'a str, HashMap<&'a str, Vec<usize>>>,
    /// The environment the pages show, chosen once (see [`SystemView::env`]).
    env: Option<&'a Fields>,
}

impl<'a> Index<'a> {
    fn build(records: &[RecordRef<'a>], profiles: &[ProfileRef<'a>]) -> Index<'a> {
        let mut ix = Index::default();
        for (i, r) in records.iter().enumerate() {
            let (c, l) = (r.rec.candidate.as_str(), r.rec.label.as_str());
            ix.cand_records.entry(c).or_default().push(i);
            ix.inst_records
                .entry(c)
                .or_default()
                .entry(l)
                .or_default()
                .push(i);
        }
        for (i, p) in profiles.iter().enumerate() {
            let (c, l) = (p.prof.candidate.as_str(), p.prof.label.as_str());
            ix.inst_profiles
                .entry(c)
                .or_default()
                .entry(l)
                .or_default()
                .push(i);
        }
        // method.md §3.3: environments of complete records, preferring CPU 2, first in
        // sorted path order.
        let mut complete = records
            .iter()
            .filter(|r| r.complete() && !r.rec.environment.is_empty());
        let first = complete.clone().next();
        ix.env = complete
            .find(|r| cpu_str(&r.rec.environment) == "2")
            .or(first)
            .map(|r| {
                let rec: &'a Record = r.rec;
                &rec.environment
            });
        ix
    }
}

impl<'a> SystemView<'a> {
    /// A file of this system's run directory (`build.json`, `kat/<id>/<label>.log`) as page
    /// evidence.
    pub fn file_evidence(&self, rel: &str) -> crate::page::Evidence {
        crate::page::Evidence::Run {
            system: self.id.clone(),
            path: rel.to_string(),
        }
    }

    /// Architecture of the system: systems.csv, else the report environment.
    pub fn arch(&self) -> String {
        if let Some(s) = self.side.system(&self.id) {
            return s.arch.clone();
        }
        self.env().str("architecture").unwrap_or("").to_string()
    }

    /// Architecture label (`x86-64`, `AArch64`).
    pub fn arch_label(&self) -> String {
        match self.arch().as_str() {
            "x86_64" => "x86-64".into(),
            "aarch64" => "AArch64".into(),
            other => other.into(),
        }
    }

    /// Guide name (`x86`, `ARM`).
    pub fn guide_name(&self) -> String {
        match self.arch().as_str() {
            "x86_64" => "x86".into(),
            "aarch64" => "ARM".into(),
            other => other.into(),
        }
    }

    /// The environment the pages show (method.md §3.3): environments of complete records,
    /// preferring CPU 2, first in sorted path order; else campaign `environment_at_start`.
    pub fn env(&self) -> &'a Fields {
        if let Some(env) = self.index.env {
            return env;
        }
        static EMPTY: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
        self.campaign
            .environment_at_start
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(Fields::default))
    }

    /// Candidates reported: ids with records or build entries, minus `iccs`, sorted.
    pub fn candidates(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .records
            .iter()
            .map(|r| r.rec.candidate.clone())
            .chain(self.build.instances.values().map(|e| e.candidate.clone()))
            .filter(|c| c != "iccs")
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Labels of a candidate (records ∪ build entries), in natural order.
    pub fn labels(&self, cand: &str) -> Vec<String> {
        let mut labels: Vec<String> = self
            .cand_records(cand)
            .map(|r| r.rec.label.clone())
            .chain(self.build.of_candidate(cand).map(|e| e.label.clone()))
            .collect();
        labels.sort_by(|a, b| natural_cmp(a, b).then_with(|| a.cmp(b)));
        labels.dedup();
        labels
    }

    /// Records of one instance in operation order.
    pub fn records_of(&self, cand: &str, label: &str) -> Vec<RecordRef<'a>> {
        let mut v: Vec<RecordRef<'a>> = self.inst_records(cand, label).collect();
        v.sort_by_key(|r| op_rank(&r.opkey()));
        v
    }

    /// The record of one instance and operation key.
    pub fn record(&self, cand: &str, label: &str, opkey: &str) -> Option<RecordRef<'a>> {
        self.inst_records(cand, label).find(|r| r.opkey() == opkey)
    }

    /// The record of one instance and operation key under either spelling of a KEM
    /// operation (`enc`/`encaps`, `dec`/`decaps`; the given one first).
    pub fn record_any_spelling(
        &self,
        cand: &str,
        label: &str,
        opkey: &str,
    ) -> Option<RecordRef<'a>> {
        self.record(cand, label, opkey).or_else(|| {
            let alias = pqperf_model::vocab::other_spelling(opkey)?;
            self.record(cand, label, alias)
        })
    }

    /// The first record (by path) of an instance that carries API sizes.
    pub fn sized_record(&self, cand: &str, label: &str) -> Option<RecordRef<'a>> {
        self.inst_records(cand, label)
            .filter(|r| !r.rec.sizes.is_empty())
            .min_by(|a, b| a.path.cmp(b.path))
    }

    /// The counted instruction-count evidence of one instance and operation
    /// (`count/<id>/<label>__<op>.json` with status `counted`), if any.
    pub fn counted(
        &self,
        cand: &str,
        label: &str,
        op: &str,
    ) -> Option<&'a pqperf_model::Loaded<pqperf_model::count::CountEvidence>> {
        self.count.iter().find(|l| {
            let c = &l.value;
            c.status == "counted"
                && c.instructions_per_call.is_some()
                && c.candidate == cand
                && c.label == label
                && c.operation == op
        })
    }

    /// The share of an operation's time in the ICCS placeholder hashes (`hash_share`), from
    /// its usable profile under either spelling of a KEM operation; `None` when unprofiled or
    /// when the profile is of the instance's own SHAKE/SHA-2/AES, which is no ICCS share
    /// ([`own_primitive_profile`]). The summary and the site's rankings show this.
    pub fn hash_share(&self, cand: &str, label: &str, opkey: &str) -> Option<f64> {
        let alias = pqperf_model::vocab::other_spelling(opkey).unwrap_or(opkey);
        self.profile(cand, label, opkey)
            .or_else(|| self.profile(cand, label, alias))
            .filter(|p| p.usable() && !own_primitive_profile(p))
            .map(|p| p.prof.hash_share_f64())
    }

    /// Profiles of one instance in operation order.
    pub fn profiles_of(&self, cand: &str, label: &str) -> Vec<ProfileRef<'a>> {
        let mut v: Vec<ProfileRef<'a>> = self.inst_profiles(cand, label).collect();
        v.sort_by_key(|p| op_rank(&p.opkey()));
        v
    }

    /// The profile of one instance and operation key.
    pub fn profile(&self, cand: &str, label: &str, opkey: &str) -> Option<ProfileRef<'a>> {
        self.inst_profiles(cand, label).find(|p| p.opkey() == opkey)
    }

    /// Records of one candidate, in path order.
    fn cand_records(&self, cand: &str) -> impl Iterator<Item = RecordRef<'a>> + '_ {
        let ix = self.index.cand_records.get(cand).map(Vec::as_slice);
        ix.unwrap_or_default().iter().map(|&i| self.records[i])
    }

    /// Records of one instance, in path order.
    pub fn inst_records(
        &self,
        cand: &str,
        label: &str,
    ) -> impl Iterator<Item = RecordRef<'a>> + '_ {
        let ix = positions(&self.index.inst_records, cand, label);
        ix.iter().map(|&i| self.records[i])
    }

    /// Profiles of one instance, in path order.
    fn inst_profiles(&self, cand: &str, label: &str) -> impl Iterator<Item = ProfileRef<'a>> + '_ {
        let ix = positions(&self.index.inst_profiles, cand, label);
        ix.iter().map(|&i| self.profiles[i])
    }

    /// build.json entry of an instance.
    pub fn entry(&self, cand: &str, label: &str) -> Option<&'a BuildEntry> {
        self.build.entry(cand, label)
    }

    /// Category of a candidate: id prefix, else its operations.
    pub fn category(&self, cand: &str) -> Category {
        Category::from_id(cand)
            .or_else(|| {
                Category::from_operations(self.cand_records(cand).map(|r| r.rec.operation.as_str()))
            })
            .unwrap_or(Category::Sign)
    }

    /// Variant of an instance: build entry, else its first record.
    pub fn variant(&self, cand: &str, label: &str) -> Option<String> {
        if let Some(e) = self.entry(cand, label) {
            return Some(e.variant.clone());
        }
        self.inst_records(cand, label)
            .next()
            .map(|r| r.rec.variant.clone())
    }

    /// KAT status of an instance: build entry, else its first record.
    pub fn kat_status(&self, cand: &str, label: &str) -> Option<String> {
        if let Some(e) = self.entry(cand, label) {
            return Some(e.kat.clone());
        }
        self.inst_records(cand, label)
            .next()
            .map(|r| r.rec.kat.clone())
    }

    /// The kat_issues row that applies to an instance (method.md §13.2 item 6).
    pub fn kat_issue(&self, cand: &str, label: &str) -> Option<&'a KatIssue> {
        let status = self.kat_status(cand, label);
        self.side.kat_issues.iter().find(|k| {
            k.id == cand
                && k.label.is_match(label)
                && !(k.cause.starts_with("KAT TIMEOUT") && status.as_deref() == Some("PASS"))
        })
    }
}

/// `cpu_number` of an environment as a string (`"2"`).
pub fn cpu_str(env: &Fields) -> String {
    // Scalar accessors first: they read an unparsed environment without parsing it.
    if let Some(s) = env.str("cpu_number") {
        return s.to_string();
    }
    if let Some(n) = env.u64("cpu_number") {
        return n.to_string();
    }
    match env.get("cpu_number") {
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn compile(file: &str, line: usize, pattern: &str) -> Result<Regex, crate::ReportError> {
    Regex::new(pattern).map_err(|e| crate::ReportError::BadRegex {
        file: file.to_string(),
        line,
        pattern: pattern.to_string(),
        message: e.to_string(),
    })
}

impl Side {
    /// Gather the side data of a loaded dataset; label regexes are compiled here, so a bad
    /// pattern is reported with its file and line before any page is rendered.
    pub fn from_dataset(ds: &pqperf_model::dataset::Dataset) -> Result<Side, crate::ReportError> {
        let mut side = Side {
            systems: ds.systems_csv.clone().unwrap_or_default(),
            survey: ds.symmetric_survey.clone().unwrap_or_default(),
            ..Side::default()
        };
        for d in ds.downloads.iter().flatten() {
            side.downloads.insert(
                d.id.clone(),
                (crate::md::escape_text(&d.algorithm), d.page_url.clone()),
            );
            side.download_order.push(d.id.clone());
        }
        for k in ds.kat_issues.iter().flatten() {
            side.kat_issues.push(Labelled {
                label: compile("performance/kat_issues.csv", k.line, &k.label)?,
                row: k.clone(),
            });
        }
        for n in ds.summary_notes.iter().flatten() {
            side.summary_notes.push(Labelled {
                label: compile("performance/summary_notes.csv", n.line, &n.label)?,
                row: n.clone(),
            });
        }
        for e in ds.external_sizes.iter().flatten() {
            side.external_sizes
                .insert((e.id.clone(), e.instance.clone()), e.clone());
        }
        for k in ds.kex_bandwidth.iter().flatten() {
            side.kex_bandwidth
                .insert((k.id.clone(), k.instance.clone()), k.clone());
        }
        for t in ds.security_targets.iter().flatten() {
            // No TargetBits: no claimed target.
            let bits = t.target_bits.map(|b| u32::try_from(b).unwrap_or(u32::MAX));
            side.targets
                .insert((t.id.clone(), t.instance.clone()), bits);
        }
        for sys in &ds.systems {
            side.present
                .insert(sys.id.clone(), sys.candidates().into_iter().collect());
        }
        Ok(side)
    }
}

static EMPTY_CAMPAIGN: std::sync::OnceLock<Campaign> = std::sync::OnceLock::new();
static EMPTY_BUILD: std::sync::OnceLock<BuildJson> = std::sync::OnceLock::new();

impl<'a> SystemView<'a> {
    /// The view of system `sys` of a loaded dataset.
    pub fn new(
        ds: &'a pqperf_model::dataset::Dataset,
        side: &'a Side,
        sys: &str,
    ) -> Result<SystemView<'a>, crate::ReportError> {
        let data = ds
            .system(sys)
            .ok_or_else(|| crate::ReportError::UnknownSystem {
                system: sys.to_string(),
                known: ds.systems.iter().map(|s| s.id.clone()).collect(),
            })?;
        let campaign = data
            .campaign
            .as_ref()
            .map(|c| &c.value)
            .unwrap_or_else(|| EMPTY_CAMPAIGN.get_or_init(Campaign::default));
        let build = data
            .build
            .as_ref()
            .map(|b| &b.value)
            .unwrap_or_else(|| EMPTY_BUILD.get_or_init(BuildJson::default));
        let run_dir = if data.dir.as_os_str().is_empty() {
            format!("performance/data/{sys}")
        } else {
            data.dir
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        };
        let records: Vec<RecordRef<'a>> = data
            .records
            .iter()
            .map(|l| RecordRef {
                path: &l.path,
                rec: &l.value,
            })
            .collect();
        let profiles: Vec<ProfileRef<'a>> = data
            .profiles
            .iter()
            .filter(|l| !l.value.operation.is_empty())
            .map(|l| ProfileRef {
                path: &l.path,
                prof: &l.value,
            })
            .collect();
        let index = Index::build(&records, &profiles);
        Ok(SystemView {
            id: sys.to_string(),
            side,
            campaign,
            build,
            records,
            profiles,
            run_dir,
            ct: &data.ct,
            count: &data.count,
            index,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_fallbacks() {
        let mut side = Side::default();
        let t = |side: &Side, c: &str, l: &str| side.security_target(c, l);
        assert_eq!(t(&side, "sign-06", "COMPASS-SIG-256"), Some(256));
        assert_eq!(t(&side, "sign-06", "COMPASS-SIG-384"), None);
        assert_eq!(t(&side, "sign-08", "DARTS512"), Some(512));
        assert_eq!(t(&side, "sign-09", "X-192"), Some(192));
        assert_eq!(t(&side, "sign-09", "X-192-256"), None);
        // PQClean targets come from security_targets.csv (publish writes them from the
        // claimed NIST level); no name table guesses them.
        assert_eq!(t(&side, "ml-dsa-87", "clean"), None);
        side.targets
            .insert(("sign-06".into(), "COMPASS-SIG-384".into()), Some(256));
        side.targets
            .insert(("sign-08".into(), "DARTS512".into()), None);
        assert_eq!(t(&side, "sign-06", "COMPASS-SIG-384"), Some(256));
        assert_eq!(t(&side, "sign-08", "DARTS512"), None);
        side.targets
            .insert(("ml-kem-512".into(), "ml-kem-512".into()), Some(128));
        assert_eq!(t(&side, "ml-kem-512", "ml-kem-512"), Some(128));
    }
}
