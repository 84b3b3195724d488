//! Stage kat: regenerate known-answer vectors per instance in a child process and compare
//! with the SHA-256 manifests.
//!
//! [`run`] (the parent, `pqperf kat`) walks the catalog instances recorded in build.json and
//! starts one child per instance (`<pqperf> kat-child <job.json>`, i.e. pqperf re-executing
//! itself) with a timeout. The child ([`child_main`]) dlopens the library, runs the official
//! ICCS procedure of its type or PQClean's `nistkat`, writes the generated text under
//! `kat/<id>/<label>/`, compares it and reports the KAT log (evidence-formats.md §6) ending
//! in `RESULT <id> <instance> <STATUS>` over its private result channel; the parent writes
//! it (the child runs contained, see `pqperf_ffi::untrusted`). The parent adds TIMEOUT/CRASH
//! results when the child does not finish, rebuilds a failed instance (not NOKAT) with the
//! harness-default flags once ([`fallback_helps`]; the reference retries after NOKAT too),
//! and records `kat`, `kat_log`, `kat_log_sha256` in build.json. A NOKAT whose generated file
//! sits in the manifest under another name is diagnosed in the log and the RESULT detail
//! ([`compare::name_mismatch`]).
//!
//! The child's RESULT line is a hint: after the child (and all it started) is gone the parent
//! judges the generated files itself ([`judge::parent_verdict`]) and records FORGED when the
//! child claimed a better verdict than the files support.
//!
//! Statuses: PASS, MISMATCH, NOKAT, PARTIAL (hash: some files unverifiable), CRYPTOFAIL,
//! TIMEOUT, OVERFLOW, BUILDFAIL, FORGED (the child's verdict disagrees with the parent's
//! check), plus LOADFAIL/CRASH for libraries that cannot be driven.

#![forbid(unsafe_code)]

mod child;
pub mod compare;
pub mod judge;
mod parent;
pub mod procs;

use std::path::{Path, PathBuf};

use pqperf_model::catalog::{ApiKind, Kat};
use pqperf_model::vocab::Category;
use serde::{Deserialize, Serialize};

pub use child::child_main;
pub use parent::{FORGED, InstanceKat, KatChildRun, KatOptions, KatSummary, run, run_contained};

/// Errors of the KAT stage (per-instance problems become statuses, not errors).
#[derive(Debug, thiserror::Error)]
pub enum KatError {
    /// The build stage failed (catalog, build context, the harness-default rebuild).
    #[error(transparent)]
    Build(#[from] pqperf_build::BuildError),
    /// A file of the run directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Bad input or a child that could not be started (named in the message).
    #[error("{0}")]
    Input(String),
    /// build.json no longer describes a selected instance (re-imported or a library
    /// replaced without a finished build): nothing was tested; run `pqperf build`.
    #[error("{0}")]
    Stale(String),
}

fn io_err(path: &Path, source: std::io::Error) -> KatError {
    KatError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Severity order used to combine statuses (worst wins).
pub fn severity(status: &str) -> u8 {
    match status {
        "PASS" => 0,
        "NOKAT" => 1,
        "PARTIAL" => 2,
        "MISMATCH" => 3,
        "CRYPTOFAIL" => 4,
        "OVERFLOW" => 5,
        "LOADFAIL" => 6,
        "TIMEOUT" => 7,
        "CRASH" => 8,
        "FORGED" => 9,
        _ => 9,
    }
}

/// Whether a rebuild with the harness defaults can change the verdict. The reference
/// campaign retries after any status but PASS; pqperf retries after every failure except
/// NOKAT: a missing manifest entry cannot turn into a PASS with other flags, while a build
/// failure, a mismatch, a crash (an instruction the CPU lacks), a failed self-check or an
/// overflow can stem from the guide flags (docs/catalog.md, "Fallback").
pub fn fallback_helps(status: &str) -> bool {
    !matches!(status, "PASS" | "NOKAT")
}

/// Everything the child needs (written by the parent as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KatJob {
    /// Candidate id.
    pub id: String,
    /// Instance label (file names of the library and the log).
    pub label: String,
    /// Instance name (KAT file names, RESULT line).
    pub instance: String,
    /// Candidate type (which procedure runs).
    pub kind: Category,
    /// Algorithm name (log header).
    pub algorithm: String,
    /// Implementation variant (`reference`, `optimized-…`).
    pub variant: String,
    /// Source directory inside the submission (log header).
    pub source_dir: String,
    /// Compiler name and version (log header).
    pub compiler: String,
    /// Full C flag string of the build (log header, cut to 127 characters).
    pub build_flags: String,
    /// Absolute path of the library.
    pub library: PathBuf,
    /// Absolute candidate root (manifest and reference files are relative to it).
    pub root: PathBuf,
    /// The instance's C API.
    pub api: ApiKind,
    /// Namespaced NIST API (symbol prefix and sizes) of a PQClean instance.
    pub nist: Option<pqperf_model::catalog::NistApi>,
    /// Where the known answers come from (manifest, reference files, `nistkat`).
    pub kat: Kat,
    /// Absolute folder for the generated KAT text (`<run>/kat/<id>/<label>`).
    pub out_dir: PathBuf,
    /// Run-relative form of `out_dir`, for the log.
    pub out_rel: String,
    /// Absolute path of the log the child writes.
    pub log: PathBuf,
    /// Hash: also generate KAT_Loop.
    pub hash_loop: bool,
    /// Hash: also generate KAT_2_33 (1 GiB message) and KAT_Loop.
    pub hash_full: bool,
    /// build.json `inputs_sha256` of the tested library, named in the log by the parent.
    #[serde(default)]
    pub inputs_sha256: Option<String>,
}

fn type_word(kind: Category) -> &'static str {
    kind.meta_word()
}

/// `key         = value` (key left-aligned in 11 characters).
pub(crate) fn kv(key: &str, value: impl std::fmt::Display) -> String {
    format!("{key:<11} = {value}")
}
