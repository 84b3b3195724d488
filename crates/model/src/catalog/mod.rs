//! The candidate catalog (TOML): candidates, their instances, sources, flags and KAT manifests.
//!
//! The catalog is the single input of `pqperf build` and `pqperf kat`. It is written by
//! `pqperf import` (PQClean corpus, ICCS submissions) and may be edited by hand; its format is
//! documented in `docs/catalog.md`. Every parse or validation error names the file and the line.
//!
//! ```toml
//! [[candidate]]
//! id = "ml-dsa-44"
//! type = "sign"
//! algorithm = "ML-DSA-44"
//! root = "/path/to/pqclean"
//!
//! [[candidate.instance]]
//! label = "ml-dsa-44_clean"
//! instance = "ML-DSA-44"
//! variant = "reference"
//! source_dir = "crypto_sign/ml-dsa-44/clean"
//! files = ["*.c", "../../../common/fips202.c"]
//! include_dirs = ["../../../common"]
//! api = "nist"
//! nist = { namespace = "PQCLEAN_MLDSA44_CLEAN", pk_bytes = 1312, sk_bytes = 2560, sig_bytes = 2420 }
//! kat = { kind = "nistkat", sha256 = "9a196e7f…", rng = "nist" }
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::vocab::Category;

/// A whole catalog file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// ICCS provider the candidates link: `pqperf` or `official:DIR` (DIR relative to the
    /// catalog file); absent: the run's choice (`pqperf build --iccs-provider`), else pqperf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iccs_provider: Option<String>,
    /// Candidates in catalog order (build order).
    #[serde(default, rename = "candidate")]
    pub candidates: Vec<Candidate>,
}

/// Which C API an instance library exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    /// ICCS/NICCS API (`sig_keygen`, `kem_enc`, `kex_init_a`, `CryptHash`, …), seeded through
    /// the library's `drng_algorithm` (SM3 Hash_DRBG).
    #[default]
    Iccs,
    /// NIST/PQClean API with namespaced symbols (`PQCLEAN_<SCHEME>_<IMPL>_crypto_sign_keypair`),
    /// randomness from `PQCLEAN_randombytes` (NIST AES-256 CTR DRBG or the HQC SHAKE PRNG).
    Nist,
}

impl fmt::Display for ApiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApiKind::Iccs => "iccs",
            ApiKind::Nist => "nist",
        })
    }
}

/// One candidate (a submission, or a baseline scheme).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// `sign-NN`, `kem-NN`, `kex-NN`, `hash-NN`, or a free id for baselines (`ml-dsa-44`).
    pub id: String,
    /// Category, as in the candidate id prefix (the catalog's `type` is its serde form).
    #[serde(rename = "type")]
    pub kind: Category,
    /// Algorithm name (`ML-DSA-44`, `BiT`).
    pub algorithm: String,
    /// Submission / specification page (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// Provenance note (e.g. `pqcrypto-mldsa 0.1.2 (PQClean)`), free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Root folder of the candidate's sources: absolute, or relative to the catalog file.
    /// Every instance path is relative to it (source dir) or to the source dir (files).
    pub root: String,
    /// Instances (parameter sets × variants).
    #[serde(default, rename = "instance")]
    pub instances: Vec<Instance>,
}

/// One buildable instance: one `lib<label>.so`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// File-name key: library, KAT log and record names (`ml-dsa-44_clean`, `BiT-128-avx2`).
    pub label: String,
    /// Name the implementation reports (`ALGORITHM_INSTANCE`, META name): KAT file names.
    pub instance: String,
    /// `reference` or `optimized-<isa>` (e.g. `optimized-avx2`).
    #[serde(default = "default_variant")]
    pub variant: String,
    /// Source directory, relative to the candidate root.
    pub source_dir: String,
    /// Source files or globs, relative to the source directory (may reach outside it with
    /// `../`, but never outside the root). Empty = the ICCS default selection (§5.2 of the
    /// spec: every `*.c *.cpp *.cc *.S` directly in the directory minus drivers and mains).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Basenames or globs to drop from the selection (case-insensitive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Basenames or globs the default selection keeps although its name rules would drop
    /// them (case-insensitive; `pqperf import iccs --include`). Files defining `main` are
    /// still left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Preprocessor definitions (`NAME` or `NAME=VALUE`, without `-D`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<String>,
    /// Extra include directories, relative to the source directory (searched after it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_dirs: Vec<String>,
    /// Extra compiler flags this instance needs on every flag set (ISA flags such as
    /// `-mavx2 -mbmi2 -mpopcnt -maes`, derived from PQClean's `required_flags`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cflags: Vec<String>,
    /// Extra libraries (`-lgmp`, `-lcrypto`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libs: Vec<String>,
    /// CPU flags (from `/proc/cpuinfo`) the instance needs to run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_flags: Vec<String>,
    /// The C API kind.
    #[serde(default)]
    pub api: ApiKind,
    /// The ICCS instance header to read (`SIG_AlgorithmInstance.h` by default), relative to
    /// the source directory. ICCS only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The candidate defines `drng_algorithm` itself (the harness shim must not). ICCS only.
    /// A build also decides this from the objects it links (a selected object that defines
    /// `drng_algorithm`); `true` here forces it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_drng: bool,
    /// Namespaced NIST API: symbol prefix and sizes. Required for `api = "nist"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nist: Option<NistApi>,
    /// Known-answer test reference.
    #[serde(default)]
    pub kat: Kat,
}

fn default_variant() -> String {
    "reference".to_string()
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Namespaced NIST/PQClean API of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NistApi {
    /// Symbol prefix without the trailing underscore (`PQCLEAN_MLDSA44_CLEAN`).
    pub namespace: String,
    /// `CRYPTO_PUBLICKEYBYTES`.
    pub pk_bytes: u64,
    /// `CRYPTO_SECRETKEYBYTES`.
    pub sk_bytes: u64,
    /// Signatures: `CRYPTO_BYTES` (maximum signature length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig_bytes: Option<u64>,
    /// KEMs: `CRYPTO_CIPHERTEXTBYTES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ct_bytes: Option<u64>,
    /// KEMs: `CRYPTO_BYTES` (shared secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ss_bytes: Option<u64>,
    /// Signature API uses the `_ctx` functions (ML-DSA): called with an empty context.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ctx: bool,
    /// The scheme's claimed NIST security level (META.yml `claimed-nist-level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nist_level: Option<u32>,
}

impl NistApi {
    /// The page's security target for the claimed NIST level: 1–2 → 128, 3–4 → 192,
    /// 5 → 256 (the site ranks each target on its own page).
    pub fn target_bits(&self) -> Option<u32> {
        match self.nist_level? {
            1 | 2 => Some(128),
            3 | 4 => Some(192),
            5 => Some(256),
            _ => None,
        }
    }
}

/// Which deterministic generator backs `PQCLEAN_randombytes` in a NIST KAT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NistRng {
    /// NIST PQCgenKAT AES-256 CTR DRBG.
    #[default]
    Nist,
    /// HQC's SHAKE-256 PRNG (`nistkat-rng: hqc`).
    Hqc,
}

impl fmt::Display for NistRng {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NistRng::Nist => "nist",
            NistRng::Hqc => "hqc",
        })
    }
}

/// The KAT reference of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Kat {
    /// No reference: the KAT gate reports NOKAT.
    #[default]
    None,
    /// ICCS procedure (KAT_SIG/KAT_KEM/KAT_KEX/KAT_CryptHash) checked against a `kat.sha256`
    /// manifest (lines `<sha256> <strict|nolen>[:N] <label>/<file>`), with a fallback to a
    /// reference file in `reference_dir`.
    Manifest {
        /// Manifest path relative to the candidate root (may be absent on disk: then NOKAT
        /// unless a reference file is found).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        manifest: Option<String>,
        /// Folder holding the submitted KAT files, relative to the candidate root.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reference_dir: Option<String>,
        /// Name part of the KAT files (`KAT_SIG_<name>.txt`); default: the instance name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kat_name: Option<String>,
        /// Number of PKC records to generate (default 10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
    },
    /// NIST PQCgenKAT first entry, as PQClean's `nistkat` test: SHA-256 of its output.
    Nistkat {
        /// META.yml `nistkat-sha256`.
        sha256: String,
        /// META.yml `nistkat-rng` (default `nist`).
        #[serde(default)]
        rng: NistRng,
    },
}

/// A catalog error, naming the file and (when known) the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// Catalog file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file.display(), l, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for CatalogError {}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Line of the first `key = "value"` assignment in `text` (best effort, for semantic errors).
fn line_of_assignment(text: &str, key: &str, value: &str) -> Option<usize> {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(key) {
            let rest = rest.trim_start();
            if let Some(rest) = rest.strip_prefix('=') {
                let v = rest.trim();
                if v.trim_matches('"').trim_matches('\'') == value {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// True if `id` is a well-formed candidate id: `(sign|kem|kex|hash)-NN` or a free baseline
/// id (`[a-z0-9][a-z0-9._+-]*`).
pub fn valid_candidate_id(id: &str) -> bool {
    let mut chars = id.chars();
    match chars.next() {
        Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => {}
        _ => return false,
    }
    id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._+-".contains(c))
}

/// True if `id` is an NGCC submission id (`sign-NN`, `kem-NN`, `kex-NN`, `hash-NN`).
pub fn is_submission_id(id: &str) -> bool {
    let Some((prefix, num)) = id.split_once('-') else {
        return false;
    };
    Category::from_word(prefix).is_some()
        && prefix != "sig"
        && prefix != "signature"
        && num.len() == 2
        && num.chars().all(|c| c.is_ascii_digit())
}

/// True if `label` can be used in file names (`[A-Za-z0-9._+-]`, not starting with `.`).
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 128
        && !label.starts_with('.')
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
}

/// True if `name` is an acceptable ICCS `ALGORITHM_INSTANCE` (≤ 64 chars of `[A-Za-z0-9_-]`).
pub fn valid_instance_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Catalog {
    /// Parse catalog text; `file` is only used in error messages.
    pub fn parse(text: &str, file: &Path) -> Result<Catalog, CatalogError> {
        let cat: Catalog = toml::from_str(text).map_err(|e| CatalogError {
            file: file.to_path_buf(),
            line: e.span().map(|s| line_of(text, s.start)),
            message: e.message().trim().to_string(),
        })?;
        cat.validate_with(text, file)?;
        Ok(cat)
    }

    /// Read and parse a catalog file.
    pub fn load(path: &Path) -> Result<Catalog, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|e| CatalogError {
            file: path.to_path_buf(),
            line: None,
            message: format!("cannot read: {e}"),
        })?;
        Catalog::parse(&text, path)
    }

    /// Check ids, labels and per-API requirements (no source is touched).
    pub fn validate(&self) -> Result<(), CatalogError> {
        let text = self.to_toml_string();
        self.validate_with(&text, Path::new("<catalog>"))
    }

    fn validate_with(&self, text: &str, file: &Path) -> Result<(), CatalogError> {
        let err = |key: &str, value: &str, message: String| CatalogError {
            file: file.to_path_buf(),
            line: line_of_assignment(text, key, value),
            message,
        };
        let mut ids = std::collections::HashSet::new();
        for c in &self.candidates {
            if !valid_candidate_id(&c.id) {
                return Err(err("id", &c.id, format!("bad candidate id {:?}", c.id)));
            }
            if is_submission_id(&c.id) && !c.id.starts_with(c.kind.as_str()) {
                return Err(err(
                    "id",
                    &c.id,
                    format!(
                        "candidate {} has type {} (id prefix disagrees)",
                        c.id, c.kind
                    ),
                ));
            }
            if !ids.insert(c.id.clone()) {
                return Err(err("id", &c.id, format!("duplicate candidate id {}", c.id)));
            }
            let mut labels = std::collections::HashSet::new();
            for i in &c.instances {
                if !valid_label(&i.label) {
                    return Err(err("label", &i.label, format!("bad label {:?}", i.label)));
                }
                if !labels.insert(i.label.clone()) {
                    return Err(err(
                        "label",
                        &i.label,
                        format!("duplicate label {} in candidate {}", i.label, c.id),
                    ));
                }
                if !valid_instance_name(&i.instance) {
                    return Err(err(
                        "instance",
                        &i.instance,
                        format!(
                            "bad instance name {:?} (only [A-Za-z0-9_-], ≤ 64)",
                            i.instance
                        ),
                    ));
                }
                if i.variant != "reference" && !i.variant.starts_with("optimized-") {
                    return Err(err(
                        "variant",
                        &i.variant,
                        format!(
                            "variant {:?} is neither reference nor optimized-*",
                            i.variant
                        ),
                    ));
                }
                match (i.api, &i.nist) {
                    (ApiKind::Nist, None) => {
                        return Err(err(
                            "label",
                            &i.label,
                            format!(
                                "instance {} has api = \"nist\" but no [nist] table",
                                i.label
                            ),
                        ));
                    }
                    (ApiKind::Nist, Some(n)) => {
                        let ok = match c.kind {
                            Category::Sign => n.sig_bytes.is_some(),
                            Category::Kem => n.ct_bytes.is_some() && n.ss_bytes.is_some(),
                            _ => false,
                        };
                        if !ok {
                            return Err(err(
                                "label",
                                &i.label,
                                format!(
                                    "instance {}: nist API needs sig_bytes (sign) or ct_bytes + ss_bytes (kem); type {} has no nist API",
                                    i.label, c.kind
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
                if let Kat::Nistkat { sha256, .. } = &i.kat
                    && (sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()))
                {
                    return Err(err("sha256", sha256, format!("bad sha256 {sha256:?}")));
                }
                for p in i
                    .files
                    .iter()
                    .chain(&i.include_dirs)
                    .chain(std::iter::once(&i.source_dir))
                {
                    if Path::new(p).is_absolute() && p != &i.source_dir {
                        return Err(err(
                            "label",
                            &i.label,
                            format!("instance {}: path {p:?} must be relative", i.label),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Serialise to TOML (with a header comment pointing at the documentation).
    pub fn to_toml_string(&self) -> String {
        let body = toml::to_string(self).expect("catalog serialises");
        format!(
            "# pqperf candidate catalog — format: docs/catalog.md\n# Written by `pqperf import`; may be edited by hand.\n\n{body}"
        )
    }

    /// Write the catalog atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_atomic(path, self.to_toml_string().as_bytes())
    }

    /// Insert `cand`, replacing a candidate with the same id in place (else appended).
    pub fn upsert(&mut self, cand: Candidate) {
        if let Some(slot) = self.candidates.iter_mut().find(|c| c.id == cand.id) {
            *slot = cand;
        } else {
            self.candidates.push(cand);
        }
    }

    /// Look up a candidate by id.
    pub fn candidate(&self, id: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.id == id)
    }

    /// All `(candidate, instance)` pairs in catalog order.
    pub fn instances(&self) -> impl Iterator<Item = (&Candidate, &Instance)> {
        self.candidates
            .iter()
            .flat_map(|c| c.instances.iter().map(move |i| (c, i)))
    }
}

impl Candidate {
    /// The candidate root resolved against the folder holding the catalog file.
    pub fn root_path(&self, catalog_dir: &Path) -> PathBuf {
        let r = Path::new(&self.root);
        if r.is_absolute() {
            r.to_path_buf()
        } else {
            catalog_dir.join(r)
        }
    }
}

impl Instance {
    /// The `<id>/<label>` key used in build.json.
    pub fn key(&self, cand: &Candidate) -> String {
        format!("{}/{}", cand.id, self.label)
    }
}

#[cfg(test)]
mod tests;
