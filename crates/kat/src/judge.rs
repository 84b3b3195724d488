//! The KAT verdict from generated text, in one place for both sides: the child judges the
//! text it generated, the parent ([`parent_verdict`]) judges again, from the files the child
//! left in its output folder once the child and everything it started are gone. The parent's
//! verdict is the one recorded; the child's RESULT line is only a hint (a library constructor
//! or `atexit` handler can write a whole log ending in `RESULT … PASS`).

use std::io::Read;
use std::path::Path;

use pqperf_model::catalog::{ApiKind, Kat};
use pqperf_model::katlog::{KatManifest, sha256_hex};
use pqperf_model::vocab::Category;

use crate::{KatJob, compare, procs, severity};

/// Largest generated KAT file the parent reads (bytes).
pub const MAX_KAT_FILE: u64 = 256 << 20;

/// Manifest and reference files of one job (ICCS API).
pub(crate) struct Judge<'a> {
    job: &'a KatJob,
    manifest: Option<KatManifest>,
    reference_dir: Option<String>,
    /// Name part of the KAT file names.
    pub name: String,
    /// Catalog field that sets it (for diagnoses).
    name_field: &'static str,
    /// Records the catalog says the manifest covers.
    pub count: Option<u32>,
}

impl<'a> Judge<'a> {
    /// Reads the job's manifest (an unparsable manifest is the LOADFAIL detail).
    pub fn new(job: &'a KatJob) -> Result<Judge<'a>, String> {
        let (manifest_rel, reference_dir, kat_name, count) = match &job.kat {
            Kat::Manifest {
                manifest,
                reference_dir,
                kat_name,
                count,
            } => (
                manifest.clone(),
                reference_dir.clone(),
                kat_name.clone(),
                *count,
            ),
            _ => (None, None, None, None),
        };
        let manifest = match &manifest_rel {
            Some(m) => match std::fs::read_to_string(job.root.join(m)) {
                Ok(t) => Some(KatManifest::parse(Path::new(m), &t).map_err(|e| e.to_string())?),
                Err(_) => None,
            },
            None => None,
        };
        Ok(Judge {
            job,
            manifest,
            reference_dir,
            name_field: if kat_name.is_some() {
                "kat.kat_name"
            } else {
                "instance"
            },
            name: kat_name.unwrap_or_else(|| job.instance.clone()),
            count,
        })
    }

    fn reference(&self, file: &str) -> Option<String> {
        let dir = self.job.root.join(self.reference_dir.as_ref()?);
        [
            dir.join(file),
            dir.join(&self.job.label).join(file),
            dir.join(&self.job.instance).join(file),
            dir.join(&self.name).join(file),
        ]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
    }

    /// Checks one generated file (`count`: PKC records generated, None for hash files); a
    /// NOKAT whose text sits in the manifest under another name is diagnosed in the detail.
    pub fn check(
        &self,
        file: &str,
        prefix: &str,
        text: &str,
        count: Option<u64>,
        default_count: u64,
    ) -> compare::FileCheck {
        let mut c = compare::check_file(
            &self.job.label,
            file,
            text,
            self.manifest.as_ref(),
            self.reference(file).as_deref(),
            count,
            default_count,
        );
        if c.status == "NOKAT"
            && let Some(d) = self
                .manifest
                .as_ref()
                .and_then(|m| compare::name_mismatch(file, prefix, text, m))
        {
            c.detail = d.describe(
                file,
                self.name_field,
                &format!("{}/{}", self.job.id, self.job.label),
            );
        }
        c
    }
}

/// The hash KAT files a job generates, in order.
pub(crate) fn hash_files(job: &KatJob) -> Vec<procs::HashFile> {
    let mut files = vec![procs::HashFile::K2_12, procs::HashFile::K2_23];
    if job.hash_full {
        files.push(procs::HashFile::K2_33);
    }
    if job.hash_loop || job.hash_full {
        files.push(procs::HashFile::Loop);
    }
    files
}

/// Combines hash-file checks as the reference does: worst wins, NOKAT with some PASS is
/// PARTIAL.
pub(crate) fn combine_hash(checks: &[(&'static str, String)]) -> (&'static str, String) {
    let mut worst: (&'static str, String) = ("PASS", String::new());
    let passed = checks.iter().filter(|c| c.0 == "PASS").count();
    let nokat = checks.iter().filter(|c| c.0 == "NOKAT").count();
    for c in checks {
        if severity(c.0) > severity(worst.0) {
            worst = c.clone();
        }
    }
    if worst.0 == "NOKAT" && passed > 0 {
        return (
            "PARTIAL",
            format!("({passed} file(s) verified, {nokat} without reference)"),
        );
    }
    worst
}

/// The PKC KAT file prefix of a candidate type.
pub(crate) fn pkc_prefix(kind: Category) -> &'static str {
    match kind {
        Category::Sign => "KAT_SIG",
        Category::Kem => "KAT_KEM",
        _ => "KAT_KEX",
    }
}

/// Verdict of a NIST `nistkat` text.
pub(crate) fn nist_verdict(job: &KatJob, file: &str, text: &str) -> (&'static str, String) {
    let got = sha256_hex(text.as_bytes());
    match &job.kat {
        Kat::Nistkat { sha256, .. } if &got == sha256 => ("PASS", String::new()),
        Kat::Nistkat { sha256, .. } => (
            "MISMATCH",
            format!("{file}: sha256 {got} != META.yml nistkat-sha256 {sha256}"),
        ),
        _ => ("NOKAT", format!("{file}: no nistkat-sha256 in the catalog")),
    }
}

/// Reads a generated file from the job's output folder: a regular file (never through a
/// symbolic link), at most [`MAX_KAT_FILE`] bytes.
fn read_generated(job: &KatJob, file: &str) -> Result<String, String> {
    let p = job.out_dir.join(file);
    let shown = format!("{}/{file}", job.out_rel);
    let md = std::fs::symlink_metadata(&p).map_err(|_| format!("{shown} was not written"))?;
    if !md.file_type().is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if md.len() > MAX_KAT_FILE {
        return Err(format!("{shown} is larger than {MAX_KAT_FILE} bytes"));
    }
    let mut text = String::new();
    std::fs::File::open(&p)
        .and_then(|f| f.take(MAX_KAT_FILE).read_to_string(&mut text))
        .map_err(|e| format!("{shown}: {e}"))?;
    Ok(text)
}

/// The files a job's child writes (removed by the parent before the child starts).
pub(crate) fn generated_files(job: &KatJob) -> Vec<String> {
    if job.api == ApiKind::Nist {
        return vec!["nistkat.txt".into()];
    }
    let name = Judge::new(job)
        .map(|j| j.name)
        .unwrap_or_else(|_| job.instance.clone());
    if job.kind == Category::Hash {
        return hash_files(job)
            .iter()
            .map(|f| format!("{}_{name}.txt", f.word()))
            .collect();
    }
    vec![format!("{}_{name}.txt", pkc_prefix(job.kind))]
}

/// The parent's own verdict of a job from what its child left in the output folder: the
/// canonical digests the parent computes itself, compared with the manifest (or reference
/// files). A missing or unreadable file is MISMATCH with the reason.
pub fn parent_verdict(job: &KatJob) -> (&'static str, String) {
    if job.api == ApiKind::Nist {
        let file = "nistkat.txt";
        return match read_generated(job, file) {
            Ok(text) => nist_verdict(job, file, &text),
            Err(e) => ("MISMATCH", e),
        };
    }
    let judge = match Judge::new(job) {
        Ok(j) => j,
        Err(e) => return ("LOADFAIL", e),
    };
    if job.kind == Category::Hash {
        let mut checks = Vec::new();
        for f in hash_files(job) {
            let file = format!("{}_{}.txt", f.word(), judge.name);
            match read_generated(job, &file) {
                Ok(text) => {
                    let c = judge.check(&file, f.word(), &text, None, 0);
                    checks.push((c.status, c.detail));
                }
                Err(e) => checks.push(("MISMATCH", e)),
            }
        }
        return combine_hash(&checks);
    }
    let prefix = pkc_prefix(job.kind);
    let file = format!("{prefix}_{}.txt", judge.name);
    match read_generated(job, &file) {
        Ok(text) => {
            let c = judge.check(&file, prefix, &text, judge.count.map(u64::from), 10);
            (c.status, c.detail)
        }
        Err(e) => ("MISMATCH", e),
    }
}
