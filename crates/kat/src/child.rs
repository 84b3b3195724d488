//! Child side of the KAT gate (`pqperf kat-child <job.json>`): load the library, run the
//! official ICCS procedure of its type ([`crate::procs`]) or PQClean's `nistkat`, write the
//! generated text under the job's folder, compare it with the manifest and report the KAT
//! log, ending in the RESULT line, over the private result channel.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use pqperf_ffi::dl::{Library, NistKemSizes, NistSignSizes};
use pqperf_model::catalog::ApiKind;
use pqperf_model::katlog::sha256_hex;
use pqperf_model::vocab::Category;

use crate::judge::{self, Judge};
use crate::{KatJob, kv, procs, type_word};

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
        Category::Sign => {
            log.line(&kv("sn_len", n.sig_bytes.unwrap_or(0)));
            let sizes = NistSignSizes {
                pk: n.pk_bytes as usize,
                sk: n.sk_bytes as usize,
                sig: n.sig_bytes.unwrap_or(0) as usize,
            };
            procs::nist_sign(lib, &n.namespace, sizes, n.ctx, &mut text, &mut t)
        }
        Category::Kem => {
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
    judge::nist_verdict(job, file, &text)
}

fn run_iccs(job: &KatJob, lib: &Library, log: &mut LogFile) -> (&'static str, String) {
    let judge = match Judge::new(job) {
        Ok(j) => j,
        Err(e) => return ("LOADFAIL", e),
    };
    let name = judge.name.clone();
    let count_n = judge.count.unwrap_or(10);
    // Check one file; a NOKAT diagnosed as a name mismatch is said in the log too.
    let check = |file: &str, prefix: &str, text: &str, count, default, log: &mut LogFile| {
        let c = judge.check(file, prefix, text, count, default);
        log.line(&c.manifest_line);
        if c.status == "NOKAT" && c.detail.contains("no manifest entry of this name;") {
            log.line(&format!("name mismatch: {}", c.detail));
        }
        c
    };
    // Sizes into the header.
    let sizes: Vec<(&str, u64)> = match job.kind {
        Category::Sign => match pqperf_ffi::dl::SigApi::new(lib) {
            Ok(a) => vec![
                ("pk_len", a.sizes.pk),
                ("sk_len", a.sizes.sk),
                ("sn_len", a.sizes.sn),
            ],
            Err(e) => return ("LOADFAIL", e.to_string()),
        },
        Category::Kem => match pqperf_ffi::dl::KemApi::new(lib) {
            Ok(a) => vec![
                ("pk_len", a.sizes.pk),
                ("sk_len", a.sizes.sk),
                ("ct_len", a.sizes.ct),
                ("ss_len", a.sizes.ss),
            ],
            Err(e) => return ("LOADFAIL", e.to_string()),
        },
        Category::Kex => match pqperf_ffi::dl::KexApi::new(lib) {
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
        Category::Hash => {
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
    if job.kind == Category::Hash {
        let d = sizes[0].1 as u32;
        let mut checks = Vec::new();
        for f in judge::hash_files(job) {
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
            let c = check(&file, f.word(), &text, None, 0, log);
            checks.push((c.status, c.detail));
        }
        return judge::combine_hash(&checks);
    }
    let prefix = judge::pkc_prefix(job.kind);
    let mut text = String::new();
    let r = match job.kind {
        Category::Sign => procs::kat_sig(lib, count_n, &mut text, &mut t),
        Category::Kem => procs::kat_kem(lib, count_n, &mut text, &mut t),
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
    let c = check(&file, prefix, &text, judge.count.map(u64::from), 10, log);
    (c.status, c.detail)
}
