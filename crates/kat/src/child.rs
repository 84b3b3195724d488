//! Child side of the KAT gate (`pqperf kat-child <job.json>`): load the library, run the
//! official ICCS procedure of its type ([`crate::procs`]) or PQClean's `nistkat`, write the
//! generated text under the job's folder, compare it with the manifest and report the KAT
//! log, ending in the RESULT line, over the private result channel.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use pqperf_ffi::dl::{Library, NistKemSizes, NistSignSizes};
use pqperf_model::catalog::{ApiKind, CandidateType, Kat};
use pqperf_model::katlog::{KatManifest, sha256_hex};

use crate::{KatJob, compare, kv, procs, severity, type_word};

/// Child writer on the private result channel: every line is flushed at once so a killed
/// child leaves its log so far.
struct LogFile(Box<dyn Write>);

impl LogFile {
    fn line(&mut self, s: &str) {
        let _ = writeln!(self.0, "{s}");
        let _ = self.0.flush();
    }
}

/// First 127 characters (as the reference metadata block).
fn cut127(s: &str) -> String {
    s.chars().take(127).collect()
}

/// The child process: run the job, write the log, return the exit code (0 PASS, 1
/// MISMATCH, 2 NOKAT, 3 CRYPTOFAIL, 4 OVERFLOW, 5 LOADFAIL, 8 PARTIAL).
pub fn child_main(job_path: &Path) -> i32 {
    // Confine this process and take the result channel before any candidate code is loaded.
    let chan = match pqperf_ffi::untrusted::child_enter() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kat-child: {e}");
            return 5;
        }
    };
    let job: KatJob = match std::fs::read_to_string(job_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(j) => j,
        Err(e) => {
            eprintln!("kat-child: {}: {e}", job_path.display());
            return 5;
        }
    };
    let mut log = LogFile(chan);
    let (status, detail) = run_job(&job, &mut log);
    // As the reference: `RESULT <id> <instance> <STATUS> <detail>` (a PASS without detail
    // keeps its trailing space).
    log.line(&format!(
        "RESULT {} {} {status} {detail}",
        job.id, job.instance
    ));
    match status {
        "PASS" => 0,
        "MISMATCH" => 1,
        "NOKAT" => 2,
        "CRYPTOFAIL" => 3,
        "OVERFLOW" => 4,
        "PARTIAL" => 8,
        _ => 5,
    }
}

fn run_job(job: &KatJob, log: &mut LogFile) -> (&'static str, String) {
    log.line(&kv("library", format!("lib/lib{}.so", job.label)));
    log.line(&kv("id", &job.id));
    log.line(&kv("type", type_word(job.kind)));
    log.line(&kv("algorithm", &job.algorithm));
    log.line(&kv("instance", &job.instance));
    let variant = if job.variant == "reference" {
        "Reference_Implementation"
    } else {
        "Optimized_Implementation"
    };
    log.line(&kv("variant", variant));
    log.line(&kv("source_dir", &job.source_dir));
    log.line(&kv("compiler", &job.compiler));
    log.line(&kv("build_flags", cut127(&job.build_flags)));
    log.line(&kv("api", job.api));
    let lib = match Library::open(&job.library) {
        Ok(l) => l,
        Err(e) => return ("LOADFAIL", e.to_string()),
    };
    if let Err(e) = std::fs::create_dir_all(&job.out_dir) {
        return ("LOADFAIL", format!("{}: {e}", job.out_dir.display()));
    }
    match job.api {
        ApiKind::Nist => run_nist(job, &lib, log),
        ApiKind::Iccs => run_iccs(job, &lib, log),
    }
}

fn write_text(job: &KatJob, file: &str, text: &str, log: &mut LogFile) {
    let p = job.out_dir.join(file);
    if std::fs::write(&p, text).is_ok() {
        log.line(&format!(
            "wrote  {}/{file} ({} bytes)",
            job.out_rel,
            text.len()
        ));
    }
}

fn run_nist(job: &KatJob, lib: &Library, log: &mut LogFile) -> (&'static str, String) {
    let Some(n) = &job.nist else {
        return ("LOADFAIL", "nist API without sizes".into());
    };
    log.line(&kv("pk_len", n.pk_bytes));
    log.line(&kv("sk_len", n.sk_bytes));
    let mut text = String::new();
    let mut t = procs::Timing::default();
    let r = match job.kind {
        CandidateType::Sign => {
            log.line(&kv("sn_len", n.sig_bytes.unwrap_or(0)));
            let sizes = NistSignSizes {
                pk: n.pk_bytes as usize,
                sk: n.sk_bytes as usize,
                sig: n.sig_bytes.unwrap_or(0) as usize,
            };
            procs::nist_sign(lib, &n.namespace, sizes, n.ctx, &mut text, &mut t)
        }
        CandidateType::Kem => {
            log.line(&kv("ct_len", n.ct_bytes.unwrap_or(0)));
            log.line(&kv("ss_len", n.ss_bytes.unwrap_or(0)));
            let sizes = NistKemSizes {
                pk: n.pk_bytes as usize,
                sk: n.sk_bytes as usize,
                ct: n.ct_bytes.unwrap_or(0) as usize,
                ss: n.ss_bytes.unwrap_or(0) as usize,
            };
            procs::nist_kem(lib, &n.namespace, sizes, &mut text, &mut t)
        }
        other => return ("LOADFAIL", format!("no NIST API for type {other}")),
    };
    if let Some(l) = t.line() {
        log.line(&format!("timing  {l}"));
    }
    let file = "nistkat.txt";
    write_text(job, file, &text, log);
    if let Err(f) = r {
        return (f.status, f.detail);
    }
    let got = sha256_hex(text.as_bytes());
    log.line(&format!("computed {got} nistkat {file}"));
    match &job.kat {
        Kat::Nistkat { sha256, .. } => {
            if &got == sha256 {
                ("PASS", String::new())
            } else {
                (
                    "MISMATCH",
                    format!("{file}: sha256 {got} != META.yml nistkat-sha256 {sha256}"),
                )
            }
        }
        _ => ("NOKAT", format!("{file}: no nistkat-sha256 in the catalog")),
    }
}

fn run_iccs(job: &KatJob, lib: &Library, log: &mut LogFile) -> (&'static str, String) {
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
    // Catalog field that sets the name part of the KAT file names (for diagnoses).
    let name_field = if kat_name.is_some() {
        "kat.kat_name"
    } else {
        "instance"
    };
    let name = kat_name.unwrap_or_else(|| job.instance.clone());
    let count_n = count.unwrap_or(10);
    let manifest = match &manifest_rel {
        Some(m) => {
            let p = job.root.join(m);
            match std::fs::read_to_string(&p) {
                Ok(t) => match KatManifest::parse(Path::new(m), &t) {
                    Ok(k) => Some(k),
                    Err(e) => return ("LOADFAIL", e.to_string()),
                },
                Err(_) => None,
            }
        }
        None => None,
    };
    let reference = |file: &str| -> Option<String> {
        let dir = job.root.join(reference_dir.as_ref()?);
        [
            dir.join(file),
            dir.join(&job.label).join(file),
            dir.join(&job.instance).join(file),
            dir.join(&name).join(file),
        ]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
    };
    // NOKAT although the manifest may hold this file under another name: say so (the log
    // line and the RESULT detail); the status stays NOKAT.
    let diagnose =
        |c: &mut compare::FileCheck, file: &str, prefix: &str, text: &str, log: &mut LogFile| {
            if c.status != "NOKAT" {
                return;
            }
            if let Some(d) = manifest
                .as_ref()
                .and_then(|m| compare::name_mismatch(file, prefix, text, m))
            {
                c.detail = d.describe(file, name_field, &format!("{}/{}", job.id, job.label));
                log.line(&format!("name mismatch: {}", c.detail));
            }
        };
    // Sizes into the header.
    let sizes: Vec<(&str, u64)> = match job.kind {
        CandidateType::Sign => match pqperf_ffi::dl::SigApi::new(lib) {
            Ok(a) => vec![
                ("pk_len", a.sizes.pk),
                ("sk_len", a.sizes.sk),
                ("sn_len", a.sizes.sn),
            ],
            Err(e) => return ("LOADFAIL", e.to_string()),
        },
        CandidateType::Kem => match pqperf_ffi::dl::KemApi::new(lib) {
            Ok(a) => vec![
                ("pk_len", a.sizes.pk),
                ("sk_len", a.sizes.sk),
                ("ct_len", a.sizes.ct),
                ("ss_len", a.sizes.ss),
            ],
            Err(e) => return ("LOADFAIL", e.to_string()),
        },
        CandidateType::Kex => match pqperf_ffi::dl::KexApi::new(lib) {
            Ok(a) => vec![
                ("passes", a.sizes.passes),
                ("pk_len", a.sizes.pk),
                ("sk_len", a.sizes.sk),
                ("sta_len", a.sizes.sta),
                ("stb_len", a.sizes.stb),
                ("ss_len", a.sizes.ss),
                ("total_msg_len", a.sizes.total_msg),
            ],
            Err(e) => return ("LOADFAIL", e.to_string()),
        },
        CandidateType::Hash => {
            let bits = lib
                .meta()
                .ok()
                .and_then(|m| m.sizes.first().copied())
                .unwrap_or(0);
            vec![("digest_bits", bits), ("digest_len", bits / 8)]
        }
    };
    for (k, v) in &sizes {
        log.line(&kv(k, v));
    }
    let mut t = procs::Timing::default();
    if job.kind == CandidateType::Hash {
        let d = sizes[0].1 as u32;
        let mut files = vec![procs::HashFile::K2_12, procs::HashFile::K2_23];
        if job.hash_full {
            files.push(procs::HashFile::K2_33);
        }
        if job.hash_loop || job.hash_full {
            files.push(procs::HashFile::Loop);
        }
        let mut worst: (&'static str, String) = ("PASS", String::new());
        let (mut passed, mut nokat) = (0, 0);
        for f in files {
            let file = format!("{}_{name}.txt", f.word());
            let mut text = String::new();
            let t0 = Instant::now();
            let r = procs::kat_hash(lib, d, f, &mut text, &mut t);
            log.line(&format!(
                "timing  {} {:.3} s",
                f.word(),
                t0.elapsed().as_secs_f64()
            ));
            write_text(job, &file, &text, log);
            if let Err(fail) = r {
                return (fail.status, fail.detail);
            }
            let mut c = compare::check_file(
                &job.label,
                &file,
                &text,
                manifest.as_ref(),
                reference(&file).as_deref(),
                None,
                0,
            );
            log.line(&c.manifest_line);
            diagnose(&mut c, &file, f.word(), &text, log);
            match c.status {
                "PASS" => passed += 1,
                "NOKAT" => nokat += 1,
                _ => {}
            }
            if severity(c.status) > severity(worst.0) {
                worst = (c.status, c.detail);
            }
        }
        if worst.0 == "NOKAT" && passed > 0 {
            return (
                "PARTIAL",
                format!("({passed} file(s) verified, {nokat} without reference)"),
            );
        }
        return worst;
    }
    let prefix = match job.kind {
        CandidateType::Sign => "KAT_SIG",
        CandidateType::Kem => "KAT_KEM",
        _ => "KAT_KEX",
    };
    let mut text = String::new();
    let r = match job.kind {
        CandidateType::Sign => procs::kat_sig(lib, count_n, &mut text, &mut t),
        CandidateType::Kem => procs::kat_kem(lib, count_n, &mut text, &mut t),
        _ => procs::kat_kex(lib, count_n, &mut text, &mut t),
    };
    if let Some(l) = t.line() {
        log.line(&format!("timing  {l}"));
    }
    let file = format!("{prefix}_{name}.txt");
    write_text(job, &file, &text, log);
    if let Err(f) = r {
        return (f.status, f.detail);
    }
    let mut c = compare::check_file(
        &job.label,
        &file,
        &text,
        manifest.as_ref(),
        reference(&file).as_deref(),
        count.map(u64::from),
        10,
    );
    log.line(&c.manifest_line);
    diagnose(&mut c, &file, prefix, &text, log);
    (c.status, c.detail)
}
