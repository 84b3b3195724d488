//! Parent side of the KAT gate (`pqperf kat`): for every selected instance of build.json,
//! start one contained child with a timeout, write its log (adding TIMEOUT/CRASH results),
//! rebuild a failed instance once with the harness-default flags ([`crate::fallback_helps`])
//! and record `kat`, `kat_log`, `kat_log_sha256` in build.json.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pqperf_build::{BuildCtx, FlagSet, build_instance, entry_for};
use pqperf_model::catalog::{Candidate, Catalog, Instance};
use pqperf_model::katlog::sha256_hex;
use pqperf_model::layout::RunLayout;
use pqperf_model::select::Selection;

use crate::{KatError, KatJob, fallback_helps, io_err, kv};

/// Options of `pqperf kat`.
#[derive(Clone)]
pub struct KatOptions {
    /// Run directory (build.json, `kat/`).
    pub run_dir: PathBuf,
    /// Catalog file (default `<run>/catalog.toml`).
    pub catalog: Option<PathBuf>,
    /// The instances checked (`--only`, or the keys a campaign phase hands on).
    pub select: Selection,
    /// Per-instance child timeout.
    pub timeout: Duration,
    /// Executable re-executed as `<exe> kat-child <job>` (default: the current executable).
    pub child_exe: Option<PathBuf>,
    /// Children run concurrently.
    pub jobs: usize,
    /// Rebuild a non-passing instance with the harness defaults and re-test it.
    pub fallback: bool,
    /// Hash candidates: also KAT_Loop.
    pub hash_loop: bool,
    /// Hash candidates: also KAT_2_33 and KAT_Loop.
    pub hash_full: bool,
    /// Print a progress line per instance on stderr.
    pub progress: bool,
    /// Called after each instance with `(done, total, RESULT line)`.
    pub on_progress: Option<pqperf_build::Progress>,
}

impl std::fmt::Debug for KatOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KatOptions")
            .field("run_dir", &self.run_dir)
            .field("select", &self.select)
            .field("timeout", &self.timeout)
            .field("jobs", &self.jobs)
            .field("fallback", &self.fallback)
            .finish_non_exhaustive()
    }
}

impl KatOptions {
    /// The defaults for `run_dir`: 900 s per child, one child at a time, the harness-default
    /// fallback on, no hash loops, quiet.
    pub fn new(run_dir: impl Into<PathBuf>) -> KatOptions {
        KatOptions {
            run_dir: run_dir.into(),
            catalog: None,
            select: Selection::all(),
            timeout: Duration::from_secs(900),
            child_exe: None,
            jobs: 1,
            fallback: true,
            hash_loop: false,
            hash_full: false,
            progress: false,
            on_progress: None,
        }
    }
}

/// Result of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceKat {
    /// `<id>/<label>`.
    pub key: String,
    /// Final verdict (`PASS`, `MISMATCH`, …).
    pub status: String,
    /// The RESULT line.
    pub result_line: String,
    /// Flag set of the final library.
    pub flags: String,
    /// Status with the first flag set when the fallback was used.
    pub guide_result: Option<String>,
}

/// Summary of `pqperf kat`.
#[derive(Debug, Clone)]
pub struct KatSummary {
    /// One result per checked instance, in catalog order.
    pub instances: Vec<InstanceKat>,
    /// Wall seconds of the run.
    pub seconds: f64,
}

impl KatSummary {
    /// Number of instances with `status`.
    pub fn count(&self, status: &str) -> usize {
        self.instances.iter().filter(|i| i.status == status).count()
    }
}

/// Outcome of one KAT child run.
#[derive(Debug, Clone)]
pub struct KatChildRun {
    /// PASS, MISMATCH, …, TIMEOUT, CRASH.
    pub status: String,
    /// The RESULT line.
    pub result_line: String,
}

/// Run the child for one instance with a timeout; the log ends with a RESULT line.
fn run_child(
    exe: &Path,
    job: &KatJob,
    job_path: &Path,
    timeout: Duration,
) -> Result<KatChildRun, KatError> {
    let text = serde_json::to_string_pretty(job).map_err(|e| KatError::Input(e.to_string()))?;
    std::fs::write(job_path, text).map_err(|e| io_err(job_path, e))?;
    let cwd = job_path.parent().unwrap_or(Path::new("."));
    let args = vec!["kat-child".to_string(), job_path.display().to_string()];
    run_contained(exe, args, cwd, job, timeout)
}

/// Runs a KAT child (`program args…`, which ends up in [`child_main`] on `job`) contained
/// (`pqperf_ffi::untrusted`): the child may write only below `job.out_dir`, reports its log
/// over the private result channel, and the parent writes `job.log` (adding TIMEOUT/CRASH
/// results and the head of the candidate's output when there is no RESULT line).
pub fn run_contained(
    program: &Path,
    args: Vec<String>,
    cwd: &Path,
    job: &KatJob,
    timeout: Duration,
) -> Result<KatChildRun, KatError> {
    // The old log stays until the new one is complete (written whole by `write_log`).
    std::fs::create_dir_all(&job.out_dir).map_err(|e| io_err(&job.out_dir, e))?;
    // The library handed to the child, as the parent reads it (the log names it).
    let tested_sha = pqperf_build::sha256_file(&job.library).ok();
    // What the parent judges must be what this child wrote.
    for f in crate::judge::generated_files(job) {
        let _ = std::fs::remove_file(job.out_dir.join(f));
    }
    let out = pqperf_ffi::untrusted::run(&pqperf_ffi::untrusted::ChildSpec {
        program: program.to_path_buf(),
        args,
        cwd: cwd.to_path_buf(),
        timeout,
        writable: vec![job.out_dir.clone()],
        readable: vec![job.library.clone(), job.root.clone()],
        ..Default::default()
    });
    if let Some(e) = out.spawn_error {
        return Err(KatError::Input(e));
    }
    let mut log = String::from_utf8_lossy(&out.result).into_owned();
    stamp_library(
        &mut log,
        tested_sha.as_deref(),
        job.inputs_sha256.as_deref(),
    );
    let last_result = log
        .lines()
        .rev()
        .find(|l| l.starts_with("RESULT "))
        .map(str::to_string);
    let output_note = (out.stdout.total > 0 || out.stderr.total > 0).then(|| {
        format!(
            "child output: stdout {} bytes, stderr {} bytes (first and last 64 KiB kept)",
            out.stdout.total, out.stderr.total
        )
    });
    let result_line = if out.timed_out {
        format!(
            "RESULT {} {} TIMEOUT after {} s",
            job.id,
            job.instance,
            timeout.as_secs_f64()
        )
    } else if let Some(l) =
        last_result.filter(|_| out.code() == Some(i64::from(exit_code_of(&log))))
    {
        if let Some(n) = &output_note {
            // Before the final RESULT line, which stays last.
            let cut = log.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
            log.insert_str(cut, &format!("{n}\n"));
        }
        let claimed = l.split(' ').nth(3).unwrap_or("CRASH").to_string();
        if let Some((status, line)) = overrule(job, &claimed) {
            // The child's log stays as evidence of what it claimed; the parent's verdict
            // is the last RESULT line.
            log.push_str(&format!("{line}\n"));
            write_log(&job.log, &log)?;
            return Ok(KatChildRun {
                status,
                result_line: line,
            });
        }
        write_log(&job.log, &log)?;
        return Ok(KatChildRun {
            status: claimed,
            result_line: l,
        });
    } else {
        match out.code() {
            Some(c) if c < 0 => format!("RESULT {} {} CRASH signal={}", job.id, job.instance, -c),
            c => format!(
                "RESULT {} {} CRASH exit={}",
                job.id,
                job.instance,
                c.unwrap_or(-1)
            ),
        }
    };
    if !log.is_empty() && !log.ends_with('\n') {
        log.push('\n');
    }
    if let Some(n) = output_note {
        log.push_str(&n);
        log.push('\n');
        let mut text = out.stderr.text();
        text.push_str(&out.stdout.text());
        for l in text.lines().filter(|l| !l.trim().is_empty()).take(20) {
            // Captured candidate output: capped, control characters escaped, machine paths
            // redacted (the log's digest is recorded, so publish cannot redact it later).
            let l: String = l.chars().take(300).collect();
            let (l, _) = pqperf_model::paths::redact_machine_paths(&l);
            log.push_str(&format!(
                "child: {}\n",
                pqperf_model::captured::escape_captured(&l)
            ));
        }
    }
    log.push_str(&result_line);
    log.push('\n');
    write_log(&job.log, &log)?;
    Ok(KatChildRun {
        status: result_line.split(' ').nth(3).unwrap_or("CRASH").to_string(),
        result_line,
    })
}

/// Names the tested library (`library_sha256 = …`, the digest the parent read before the
/// child started) and its inputs (`inputs_sha256 = …`) at the end of the log's header block.
/// Such lines written by the child are dropped first: the log names what the parent handed
/// over, whatever the candidate printed.
fn stamp_library(log: &mut String, library: Option<&str>, inputs: Option<&str>) {
    use pqperf_model::katlog::{INPUTS_SHA256_KEY, LIBRARY_SHA256_KEY};
    let is_key = |l: &str, key: &str| {
        l.split_once(" = ")
            .is_some_and(|(k, _)| k.trim_end() == key)
    };
    let mut lines: Vec<&str> = log
        .lines()
        .filter(|l| !is_key(l, LIBRARY_SHA256_KEY) && !is_key(l, INPUTS_SHA256_KEY))
        .collect();
    // The header block: the leading `key = value` lines (as `KatLog::parse` reads them).
    let header_end = lines
        .iter()
        .position(|l| {
            !l.split_once(" = ").is_some_and(|(k, _)| {
                let k = k.trim_end();
                !k.is_empty() && !k.contains(' ') && !l.starts_with("RESULT ")
            })
        })
        .unwrap_or(lines.len());
    let mut ours = Vec::new();
    if let Some(s) = library {
        ours.push(kv(LIBRARY_SHA256_KEY, s));
    }
    if let Some(s) = inputs {
        ours.push(kv(INPUTS_SHA256_KEY, s));
    }
    for (n, l) in ours.iter().enumerate() {
        lines.insert(header_end + n, l);
    }
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    *log = text;
}

/// The parent's own check of a child's verdict ([`crate::judge::parent_verdict`]): for a
/// verdict the generated files decide (PASS, PARTIAL, NOKAT, MISMATCH), a claim better than
/// what the parent finds is FORGED, with both verdicts in the detail; `None` keeps the
/// child's RESULT line (it agrees, or claims a failure the files cannot disprove).
fn overrule(job: &KatJob, claimed: &str) -> Option<(String, String)> {
    if !matches!(claimed, "PASS" | "PARTIAL" | "NOKAT" | "MISMATCH") {
        return None;
    }
    let (status, detail) = crate::judge::parent_verdict(job);
    if crate::severity(claimed) >= crate::severity(status) {
        return None;
    }
    let detail = if detail.is_empty() {
        status.to_string()
    } else {
        format!("{status} {detail}")
    };
    Some((
        FORGED.to_string(),
        format!(
            "RESULT {} {} {FORGED} the child reported {claimed}; the parent's check of the generated files: {detail}",
            job.id, job.instance
        ),
    ))
}

/// Status of a KAT whose child reported a better verdict than the generated files support.
pub const FORGED: &str = "FORGED";

/// The exit status [`child_main`] returns with the last RESULT line of `log`: a RESULT line
/// counts only when the process also exited with its status (a candidate that printed a
/// RESULT line on the channel and then died is a crash).
fn exit_code_of(log: &str) -> i32 {
    let st = log
        .lines()
        .rev()
        .find(|l| l.starts_with("RESULT "))
        .and_then(|l| l.split(' ').nth(3))
        .unwrap_or("");
    match st {
        "PASS" => 0,
        "MISMATCH" => 1,
        "NOKAT" => 2,
        "CRYPTOFAIL" => 3,
        "OVERFLOW" => 4,
        "PARTIAL" => 8,
        _ => 5,
    }
}

/// Replace the log at `path` whole (temp + rename): a crash leaves the old log or the new one.
fn write_log(path: &Path, log: &str) -> Result<(), KatError> {
    pqperf_model::fsutil::write_atomic(path, log.as_bytes()).map_err(|e| io_err(path, e))
}

/// Log of an instance whose library could not be built.
fn buildfail_log(cand: &Candidate, inst: &Instance, entry: &pqperf_model::BuildEntry) -> String {
    let mut s = String::new();
    for (k, v) in [
        ("library", format!("lib/lib{}.so", inst.label)),
        ("id", cand.id.clone()),
        ("type", cand.kind.meta_word().to_string()),
        ("algorithm", cand.algorithm.clone()),
        ("instance", inst.instance.clone()),
        ("source_dir", inst.source_dir.clone()),
    ] {
        s.push_str(&kv(k, v));
        s.push('\n');
    }
    let log = entry
        .extra
        .get("build_log")
        .and_then(|v| v.as_str())
        .unwrap_or("build/")
        .to_string();
    s.push_str(&format!("build failed with every flag set; see {log}\n"));
    s.push_str(&format!("RESULT {} {} BUILDFAIL\n", cand.id, inst.instance));
    s
}

/// `pqperf kat`: KAT-check every selected instance of build.json; updates build.json.
pub fn run(opts: &KatOptions) -> Result<KatSummary, KatError> {
    let t0 = Instant::now();
    let cat_path = pqperf_build::catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let cat = Catalog::load(&cat_path).map_err(pqperf_build::BuildError::from)?;
    let exe = match &opts.child_exe {
        Some(e) => e.clone(),
        None => {
            pqperf_ffi::emulation::self_exe().map_err(|e| io_err(Path::new("/proc/self/exe"), e))?
        }
    };
    let ctx = BuildCtx::new(&opts.run_dir, &cat_path)?;
    let bj = Mutex::new(pqperf_build::read_build_json(&opts.run_dir)?);
    let mut todo = Vec::new();
    for (ci, c) in cat.candidates.iter().enumerate() {
        for (ii, i) in c.instances.iter().enumerate() {
            let key = i.key(c);
            if opts.select.selects(&c.id, &i.label)
                && bj.lock().unwrap().instances.contains_key(&key)
            {
                todo.push((ci, ii, key));
            }
        }
    }
    // Never test a library build.json no longer describes (a re-import without a rebuild
    // would be judged against the new KAT files and blamed on the flags).
    let stale: Vec<String> = {
        let g = bj.lock().unwrap();
        todo.iter()
            .filter_map(|(ci, ii, key)| {
                let (c, i) = (&cat.candidates[*ci], &cat.candidates[*ci].instances[*ii]);
                pqperf_build::build_staleness(&ctx.run_dir, c, i, &g.instances[key])
                    .map(|why| format!("{key}: {why}"))
            })
            .collect()
    };
    if !stale.is_empty() {
        return Err(KatError::Stale(pqperf_build::stale_refusal(
            "kat",
            &opts.run_dir,
            &stale,
        )));
    }
    let results: Mutex<Vec<(usize, InstanceKat)>> = Mutex::new(Vec::new());
    let first_err: Mutex<Option<KatError>> = Mutex::new(None);
    let log_lock = Mutex::new(());
    let total = todo.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| KatError::Input(format!("thread pool: {e}")))?;
    let bar = if opts.progress {
        pqperf_build::stderr_bar(total, "kat")
    } else {
        None
    };
    let bar = &bar;
    pool.scope(|s| {
        for (order, (ci, ii, key)) in todo.iter().enumerate() {
            let (cat, ctx, bj, results, first_err, exe, log_lock, done) = (
                &cat, &ctx, &bj, &results, &first_err, &exe, &log_lock, &done,
            );
            s.spawn(move |_| {
                let cand = &cat.candidates[*ci];
                let inst = &cand.instances[*ii];
                match kat_one(opts, ctx, cand, inst, key, exe, bj, log_lock) {
                    Ok(r) => {
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                        match bar {
                            // The verdict (the RESULT line) is printed once, with the
                            // summary; progress names only what was checked.
                            Some(bar) => {
                                bar.set_message(key.to_string());
                                bar.inc(1);
                            }
                            None if opts.progress => {
                                eprintln!("kat [{n}/{total}] {key} checked")
                            }
                            None => {}
                        }
                        if let Some(cb) = &opts.on_progress {
                            cb(n, total, &r.result_line);
                        }
                        results.lock().unwrap().push((order, r));
                    }
                    Err(e) => {
                        first_err.lock().unwrap().get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = first_err.into_inner().unwrap() {
        return Err(e);
    }
    let mut r = results.into_inner().unwrap();
    r.sort_by_key(|x| x.0);
    Ok(KatSummary {
        instances: r.into_iter().map(|x| x.1).collect(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[allow(clippy::too_many_arguments)]
fn kat_one(
    opts: &KatOptions,
    ctx: &BuildCtx,
    cand: &Candidate,
    inst: &Instance,
    key: &str,
    exe: &Path,
    bj: &Mutex<pqperf_model::BuildJson>,
    log_lock: &Mutex<()>,
) -> Result<InstanceKat, KatError> {
    let run_dir = &ctx.run_dir;
    let log_rel = RunLayout::kat_log_rel(&cand.id, &inst.label);
    let log_path = run_dir.join(&log_rel);
    let dir = log_path.parent().unwrap();
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let entry = bj
        .lock()
        .unwrap()
        .instances
        .get(key)
        .cloned()
        .unwrap_or_default();
    let save = |mut e: pqperf_model::BuildEntry, status: &str| -> Result<(), KatError> {
        let bytes = std::fs::read(&log_path).map_err(|er| io_err(&log_path, er))?;
        e.kat = status.to_string();
        e.kat_log = Some(log_rel.clone());
        e.kat_log_sha256 = Some(sha256_hex(&bytes));
        // The digests computed from the generated text, for the page's KAT section.
        if let Ok(l) = pqperf_model::KatLog::parse(&log_path, &String::from_utf8_lossy(&bytes)) {
            let c: Vec<String> = l
                .manifests
                .iter()
                .map(|m| format!("{} {} {}", m.sha256, m.mode, m.file))
                .collect();
            if c.is_empty() {
                e.extra.shift_remove("kat_computed");
            } else {
                e.extra.insert("kat_computed".into(), c.into());
            }
        }
        let mut g = bj.lock().unwrap();
        g.instances.insert(key.to_string(), e);
        pqperf_build::write_build_json(run_dir, &g)?;
        Ok(())
    };
    if entry.library.is_none() {
        write_log(&log_path, &buildfail_log(cand, inst, &entry))?;
        save(entry.clone(), "BUILDFAIL")?;
        return Ok(InstanceKat {
            key: key.to_string(),
            status: "BUILDFAIL".into(),
            result_line: format!("RESULT {} {} BUILDFAIL", cand.id, inst.instance),
            flags: entry.flags.clone(),
            guide_result: entry.guide_result.clone(),
        });
    }
    let job_for = |e: &pqperf_model::BuildEntry| KatJob {
        id: cand.id.clone(),
        label: inst.label.clone(),
        instance: inst.instance.clone(),
        kind: cand.kind,
        algorithm: cand.algorithm.clone(),
        variant: inst.variant.clone(),
        source_dir: inst.source_dir.clone(),
        compiler: e
            .extra
            .get("compiler")
            .and_then(|v| v.as_str())
            .unwrap_or("gcc")
            .to_string(),
        build_flags: e
            .extra
            .get("build_flags")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string(),
        library: run_dir.join(e.library.as_deref().unwrap_or("")),
        root: cand.root_path(&ctx.catalog_dir),
        api: inst.api,
        nist: inst.nist.clone(),
        kat: inst.kat.clone(),
        out_dir: run_dir.join(RunLayout::kat_out_rel(&cand.id, &inst.label)),
        out_rel: RunLayout::kat_out_rel(&cand.id, &inst.label),
        log: log_path.clone(),
        hash_loop: opts.hash_loop,
        hash_full: opts.hash_full,
        inputs_sha256: pqperf_build::current::recorded_inputs(e).map(str::to_string),
    };
    // Until this run's verdict is recorded, build.json does not claim the old one: a crash
    // from here on leaves the instance untested (`NOLOG`), never a verdict with a log it
    // does not describe.
    if entry.kat != "NOLOG" || entry.kat_log.is_some() {
        let mut pending = entry.clone();
        pending.kat = "NOLOG".into();
        pending.kat_log = None;
        pending.kat_log_sha256 = None;
        let mut g = bj.lock().unwrap();
        g.instances.insert(key.to_string(), pending);
        pqperf_build::write_build_json(run_dir, &g)?;
    }
    let job_path = RunLayout::new(run_dir).kat_job(&cand.id, &inst.label);
    let first = run_child(exe, &job_for(&entry), &job_path, opts.timeout)?;
    let already_default = entry.flags == FlagSet::HarnessDefault.name();
    if !fallback_helps(&first.status) || !opts.fallback || already_default {
        save(entry.clone(), &first.status)?;
        let _ = std::fs::remove_file(&job_path);
        return Ok(InstanceKat {
            key: key.to_string(),
            status: first.status,
            result_line: first.result_line,
            flags: entry.flags.clone(),
            guide_result: entry.guide_result.clone(),
        });
    }
    // Rebuild with the harness defaults and re-test; keep the first verdict.
    let b = build_instance(ctx, cand, inst, FlagSet::HarnessDefault);
    pqperf_build::append_log(run_dir, &b, log_lock)?;
    let mut e2 = entry_for(&b, Some(first.status.clone()));
    let (status, line) = if b.ok {
        let second = run_child(exe, &job_for(&e2), &job_path, opts.timeout)?;
        (second.status, second.result_line)
    } else {
        write_log(&log_path, &buildfail_log(cand, inst, &e2))?;
        (
            "BUILDFAIL".to_string(),
            format!("RESULT {} {} BUILDFAIL", cand.id, inst.instance),
        )
    };
    e2.guide_result = Some(first.status.clone());
    save(e2.clone(), &status)?;
    let _ = std::fs::remove_file(&job_path);
    Ok(InstanceKat {
        key: key.to_string(),
        status,
        result_line: line,
        flags: e2.flags.clone(),
        guide_result: e2.guide_result.clone(),
    })
}
