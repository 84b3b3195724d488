//! Symmetric-primitive survey: which hash/XOF/cipher code an instance library can reach from
//! its API entry points, turned into the reference's verdict vocabulary
//! (`ICCS-only`, `mixed`, `bypass`, `instance-dependent`; method.md §13.6), with the curated
//! `symmetric_survey.csv` able to override the derived verdict.
//!
//! Evidence per instance: the call graph of the object files that went into the library
//! ([`crate::objscan`]); the ICCS provider (the static library that supplies `pseudohash`,
//! `pseudoXOF`, `sm3hash` and the DRNG) is *not* part of the graph, so reaching a helper shows
//! up as a reached external name. A candidate's own primitive is recognised by constants in
//! reached code or data (Keccak round constants, SHA-2 K, SM3 IV, AES/SM4 S-boxes, ChaCha
//! sigma) or by the names of core permutation/compression functions, in objects that do not
//! themselves define an ICCS helper or the DRNG (a candidate's own copy of `auxfunc.c` or
//! `drng.c` is ICCS code, not a bypass).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use pqperf_model::sidecsv::CsvTable;
use serde::{Deserialize, Serialize};

use crate::ProfileError;
use crate::objscan::{self, ObjInfo};

/// The ICCS placeholder hash helpers.
pub const ICCS_HELPERS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash"];
/// The ICCS DRNG entry points.
pub const ICCS_DRNG: &[&str] = &["get_random_number", "init_random_number"];

/// Survey verdict (reference vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    /// Only the ICCS helpers (or no symmetric primitive at all).
    #[serde(rename = "ICCS-only")]
    IccsOnly,
    /// ICCS helpers and the candidate's own primitives.
    #[serde(rename = "mixed")]
    Mixed,
    /// Own primitives only.
    #[serde(rename = "bypass")]
    Bypass,
    /// Instances of one candidate differ.
    #[serde(rename = "instance-dependent")]
    InstanceDependent,
}

impl Verdict {
    /// The CSV / page spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::IccsOnly => "ICCS-only",
            Verdict::Mixed => "mixed",
            Verdict::Bypass => "bypass",
            Verdict::InstanceDependent => "instance-dependent",
        }
    }

    /// Parse the CSV spelling.
    pub fn parse(s: &str) -> Option<Verdict> {
        match s.trim() {
            "ICCS-only" => Some(Verdict::IccsOnly),
            "mixed" => Some(Verdict::Mixed),
            "bypass" => Some(Verdict::Bypass),
            "instance-dependent" => Some(Verdict::InstanceDependent),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one instance library reaches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceSurvey {
    /// Harness label.
    pub label: String,
    /// API entry points the walk started from.
    pub entries: Vec<String>,
    /// ICCS helpers reached (`pseudohash`, `pseudoXOF`, `sm3hash`).
    pub iccs_helpers: Vec<String>,
    /// True when the ICCS DRNG (or PQClean `randombytes`) is reached.
    pub drng: bool,
    /// Own primitive families found (`Keccak`, `SHA-256`, `SHA-512`, `SM3`, `AES`, `SM4`,
    /// `ChaCha`), with the objects that hold them.
    pub own_primitives: BTreeMap<String, Vec<String>>,
    /// Reached symbols whose names look like symmetric code (for the notes).
    pub named_symmetric: Vec<String>,
    /// Derived verdict.
    pub verdict: Verdict,
}

/// Names of core permutation/compression functions (lower-cased substring match).
const CORE_NAMES: &[(&str, &str)] = &[
    ("keccakf1600", "Keccak"),
    ("keccakp1600", "Keccak"),
    ("keccak_f", "Keccak"),
    ("keccak_permute", "Keccak"),
    ("sha256_transform", "SHA-256"),
    ("sha256_compress", "SHA-256"),
    ("sha512_transform", "SHA-512"),
    ("sha512_compress", "SHA-512"),
    ("crypto_hashblocks_sha256", "SHA-256"),
    ("crypto_hashblocks_sha512", "SHA-512"),
    ("sm3_compress", "SM3"),
    ("sm3_cf", "SM3"),
    ("sm4_encrypt", "SM4"),
    ("sm4_crypt", "SM4"),
    ("aes_encrypt", "AES"),
    ("aes256_ecb", "AES"),
    ("aes128_ecb", "AES"),
    ("aes_ecb", "AES"),
    ("chacha20_block", "ChaCha"),
    ("chacha_core", "ChaCha"),
];

/// Name fragments that mark a symbol as symmetric code (for notes only).
const SYMMETRIC_HINTS: &[&str] = &[
    "keccak", "shake", "sha3", "sha256", "sha512", "sha2", "sm3", "sm4", "aes", "chacha", "blake",
    "ascon", "xof",
];

/// Survey one instance from its link inputs (objects and archives of the candidate, *without*
/// the ICCS provider) and its API entry points.
pub fn survey_instance(
    label: &str,
    inputs: &[PathBuf],
    entries: &[String],
) -> Result<InstanceSurvey, ProfileError> {
    let objs = objscan::read_inputs(inputs)?;
    Ok(survey_objects(label, &objs, entries))
}

/// [`survey_instance`] on already-read objects.
pub fn survey_objects(label: &str, objs: &[ObjInfo], entries: &[String]) -> InstanceSurvey {
    let r = objscan::reach(objs, entries);
    // Objects that are ICCS code themselves (own copies of auxfunc.c / drng.c).
    let iccs_objects: BTreeSet<&str> = objs
        .iter()
        .filter(|o| {
            ICCS_HELPERS
                .iter()
                .chain(ICCS_DRNG)
                .any(|h| o.defined.contains(*h))
        })
        .map(|o| o.name.as_str())
        .collect();
    let iccs_helpers: Vec<String> = ICCS_HELPERS
        .iter()
        .filter(|h| r.symbols.contains(**h))
        .map(|h| h.to_string())
        .collect();
    let drng = ["get_random_number", "PQCLEAN_randombytes", "randombytes"]
        .iter()
        .any(|h| r.symbols.contains(*h));
    let mut own: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (obj, consts) in &r.constants {
        if iccs_objects.contains(obj.as_str()) {
            continue;
        }
        for c in consts {
            own.entry(c.to_string()).or_default().insert(obj.clone());
        }
    }
    let mut named = BTreeSet::new();
    for (obj, syms) in &r.by_object {
        if iccs_objects.contains(obj.as_str()) {
            continue;
        }
        for s in syms {
            let l = s.to_ascii_lowercase();
            for (frag, fam) in CORE_NAMES {
                if l.contains(frag) {
                    own.entry(fam.to_string()).or_default().insert(obj.clone());
                }
            }
            if SYMMETRIC_HINTS.iter().any(|h| l.contains(h)) {
                named.insert(s.clone());
            }
        }
    }
    let verdict = match (!iccs_helpers.is_empty(), !own.is_empty()) {
        (_, false) => Verdict::IccsOnly,
        (true, true) => Verdict::Mixed,
        (false, true) => Verdict::Bypass,
    };
    InstanceSurvey {
        label: label.to_string(),
        entries: entries.to_vec(),
        iccs_helpers,
        drng,
        own_primitives: own
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().map(short_object_name).collect()))
            .collect(),
        named_symmetric: named.into_iter().collect(),
        verdict,
    }
}

/// `dir/x/fips202.o` → `fips202.o`; `lib.a(member.o)` → `lib.a(member.o)` basename form.
fn short_object_name(n: String) -> String {
    match n.rsplit_once('/') {
        Some((_, b)) => b.to_string(),
        None => n,
    }
}

/// Candidate-level verdict with its notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateSurvey {
    /// Candidate id.
    pub id: String,
    /// Verdict derived from the instances.
    pub derived: Verdict,
    /// Derived notes (which helpers and own primitives were found).
    pub derived_notes: String,
    /// Effective verdict (curated CSV row if present, else derived).
    pub verdict: Verdict,
    /// Effective notes.
    pub notes: String,
    /// `curated` or `derived`.
    pub source: String,
    /// Per instance evidence.
    pub instances: Vec<InstanceSurvey>,
}

/// Combine instance surveys: equal verdicts give that verdict, otherwise
/// `instance-dependent`.
pub fn combine(id: &str, instances: Vec<InstanceSurvey>) -> CandidateSurvey {
    let verdicts: BTreeSet<Verdict> = instances.iter().map(|i| i.verdict).collect();
    let derived = if verdicts.len() == 1 {
        *verdicts.iter().next().expect("one verdict")
    } else if verdicts.is_empty() {
        Verdict::IccsOnly
    } else {
        Verdict::InstanceDependent
    };
    let mut helpers: BTreeSet<&str> = BTreeSet::new();
    let mut own: BTreeSet<&str> = BTreeSet::new();
    for i in &instances {
        helpers.extend(i.iccs_helpers.iter().map(|s| s.as_str()));
        own.extend(i.own_primitives.keys().map(|s| s.as_str()));
    }
    let mut parts = Vec::new();
    if !helpers.is_empty() {
        parts.push(format!(
            "reaches {}",
            helpers
                .iter()
                .map(|h| format!("`{h}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !own.is_empty() {
        parts.push(format!(
            "own {}",
            own.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if derived == Verdict::InstanceDependent {
        let per: Vec<String> = instances
            .iter()
            .map(|i| format!("{}: {}", i.label, i.verdict))
            .collect();
        parts.push(per.join(", "));
    }
    if parts.is_empty() {
        parts.push("no symmetric primitive reachable".to_string());
    }
    let derived_notes = format!("derived from the call graph: {}", parts.join("; "));
    CandidateSurvey {
        id: id.to_string(),
        derived,
        derived_notes: derived_notes.clone(),
        verdict: derived,
        notes: derived_notes,
        source: "derived".to_string(),
        instances,
    }
}

/// One curated row of `symmetric_survey.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct CuratedRow {
    /// Candidate id.
    pub id: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Notes (may contain `;` and backticks).
    pub notes: String,
}

/// Read `symmetric_survey.csv` (`ID;Verdict;Notes`, `#` comment lines, quoted fields).
pub fn read_curated(path: &Path) -> Result<Vec<CuratedRow>, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|e| ProfileError::io(path, e))?;
    parse_curated(&text, &path.display().to_string())
}

/// Parse the text of `symmetric_survey.csv` with the one side-CSV reader
/// ([`pqperf_model::sidecsv::CsvTable`]); `origin` names it in errors. Rows without an id are
/// skipped; an unquoted `;` in the notes keeps the rest of the line as notes.
pub fn parse_curated(text: &str, origin: &str) -> Result<Vec<CuratedRow>, ProfileError> {
    let csv_err = |e: pqperf_model::ModelError| ProfileError::Csv(e.to_string());
    let t = CsvTable::parse(Path::new(origin), text).map_err(csv_err)?;
    t.require_columns(&["ID", "Verdict"]).map_err(csv_err)?;
    let notes_col = t.column("Notes");
    let mut rows = Vec::new();
    for r in &t.rows {
        let id = t.get(r, "ID").unwrap_or("").trim().to_string();
        if id.is_empty() {
            continue;
        }
        let v = t.get(r, "Verdict").unwrap_or("");
        let verdict = Verdict::parse(v).ok_or_else(|| {
            ProfileError::Csv(format!(
                "{origin}:{}: Verdict: unknown verdict {v:?} for {id}",
                r.line
            ))
        })?;
        // Notes: the column and anything after it re-joined with ';'.
        let notes = match notes_col {
            Some(n) => r.fields.get(n..).unwrap_or_default().join(";"),
            None => String::new(),
        };
        rows.push(CuratedRow { id, verdict, notes });
    }
    Ok(rows)
}

/// Apply curated rows: a row for the candidate replaces verdict and notes.
pub fn apply_curated(mut s: CandidateSurvey, curated: &[CuratedRow]) -> CandidateSurvey {
    if let Some(row) = curated.iter().find(|r| r.id == s.id) {
        s.verdict = row.verdict;
        s.notes = row.notes.clone();
        s.source = "curated".to_string();
    }
    s
}

/// Render surveys as a `symmetric_survey.csv` (effective verdicts), for the pages.
pub fn to_csv(surveys: &[CandidateSurvey]) -> String {
    let mut out = String::from(
        "# ICCS helper usage per public-key candidate (reference implementation).\n\
         # Evidence: call-graph reachability from the API in the built objects, constant scans;\n\
         # curated rows override derived ones. Verdict: ICCS-only | mixed | bypass | instance-dependent.\n\
         ID;Verdict;Notes\n",
    );
    for s in surveys {
        let notes = if s.notes.contains(';') || s.notes.contains('"') {
            format!("\"{}\"", s.notes.replace('"', "\"\""))
        } else {
            s.notes.clone()
        };
        out.push_str(&format!("{};{};{}\n", s.id, s.verdict, notes));
    }
    out
}

/// API entry points of an instance from the global symbols its objects define:
/// ICCS names (`sig_*`, `kem_*`, `kex_*`, `CryptHash`) or PQClean `PQCLEAN_*_crypto_*`.
pub fn api_entries(objs: &[ObjInfo]) -> Vec<String> {
    let mut out = BTreeSet::new();
    for o in objs {
        for s in &o.defined {
            let iccs = (s.starts_with("sig_") || s.starts_with("kem_") || s.starts_with("kex_"))
                && !s.contains("_get_")
                || s == "CryptHash";
            let nist = s.starts_with("PQCLEAN_") && s.contains("_crypto_");
            if iccs || nist {
                out.insert(s.clone());
            }
        }
    }
    out.into_iter().collect()
}

/// Prefix of the notes of derived rows (rows without it are curated and never replaced).
pub const DERIVED_PREFIX: &str = "derived from the call graph:";

/// Read the run's derived candidate surveys (`survey/<id>.json`), in id order.
pub fn read_run_surveys(run: &Path) -> Vec<CandidateSurvey> {
    let dir = pqperf_model::layout::RunLayout::new(run).survey_dir();
    let mut out: Vec<CandidateSurvey> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Merge the run's derived verdicts into `<dataset>/performance/symmetric_survey.csv` for the
/// pages: curated rows (notes not starting with [`DERIVED_PREFIX`]) win and stay as they
/// are; derived rows of the run's candidates are added or refreshed; derived rows of other
/// candidates (another system published into the same root) are kept as they are. Returns
/// the number of rows written.
pub fn write_dataset_survey(run: &Path, dataset_root: &Path) -> Result<usize, ProfileError> {
    let path = dataset_root
        .join("performance")
        .join("symmetric_survey.csv");
    let existing = if path.is_file() {
        read_curated(&path)?
    } else {
        Vec::new()
    };
    let (curated, kept_derived): (Vec<CuratedRow>, Vec<CuratedRow>) = existing
        .into_iter()
        .partition(|r| !r.notes.starts_with(DERIVED_PREFIX));
    let mut rows: Vec<CandidateSurvey> = Vec::new();
    let derived = read_run_surveys(run);
    // Derived rows this run does not survey (another system's candidates) stay as written.
    for r in kept_derived {
        if !derived.iter().any(|d| d.id == r.id) && !curated.iter().any(|c| c.id == r.id) {
            let mut s = combine(&r.id, Vec::new());
            s.verdict = r.verdict;
            s.notes = r.notes;
            rows.push(s);
        }
    }
    for r in &curated {
        let base = derived
            .iter()
            .find(|d| d.id == r.id)
            .cloned()
            .unwrap_or_else(|| combine(&r.id, Vec::new()));
        rows.push(apply_curated(base, std::slice::from_ref(r)));
    }
    for d in derived {
        if !curated.iter().any(|r| r.id == d.id) {
            rows.push(d);
        }
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    let text = to_csv(&rows);
    pqperf_model::fsutil::write_atomic(&path, text.as_bytes())
        .map_err(|e| ProfileError::io(&path, e))?;
    Ok(rows.len())
}
