//! Orchestrator side of a driver run (method §4.9): spawn the lean `pqperf-driver …` contained, with a
//! hard timeout, kill its process group on exit or hang, parse the META/TRIAL/STATUS lines of
//! its private result channel ([`crate::output`]), check a complete process against the
//! kernel ([`crate::verify`], with the CPU readings the parent took at the driver's gates
//! while it ran, [`spawn`]), and turn a
//! crash or a hang into a process entry with a status instead of an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_model::envevidence::ProcessEnv;
use pqperf_model::record::{Process, TrialSched};
use serde_json::Value;

use crate::budget::ProcessBudget;
use crate::driver::DriverArgs;
use crate::output::{MemFigures, parse_output};

/// File name of the lean driver executable (the `pqperf-driver` crate's binary).
pub const DRIVER_BIN: &str = "pqperf-driver";
/// Environment variable naming the driver executable explicitly (overrides the lookup).
pub const DRIVER_ENV: &str = "PQPERF_DRIVER";

/// How to start the driver child.
#[derive(Debug, Clone)]
pub struct DriverExe {
    /// The lean driver executable (normally [`DriverExe::locate`]).
    pub exe: PathBuf,
    /// Working directory of the child (the run directory; library paths are relative to it).
    pub cwd: PathBuf,
}

impl DriverExe {
    /// The lean driver found by [`DriverExe::locate`], working in `cwd`.
    pub fn current(cwd: &Path) -> std::io::Result<DriverExe> {
        Ok(DriverExe {
            exe: DriverExe::locate()?,
            cwd: cwd.to_path_buf(),
        })
    }

    /// Where the lean driver executable is: `$PQPERF_DRIVER` if set, else `pqperf-driver` next
    /// to the running executable, else (a test or benchmark binary in `target/<profile>/deps/`)
    /// next to that directory. The error names the path that was expected.
    pub fn locate() -> std::io::Result<PathBuf> {
        let exe = std::env::current_exe()?;
        DriverExe::locate_from(&exe, std::env::var_os(DRIVER_ENV).map(PathBuf::from))
    }

    /// [`DriverExe::locate`] for a given running executable and `$PQPERF_DRIVER` value.
    pub fn locate_from(exe: &Path, env: Option<PathBuf>) -> std::io::Result<PathBuf> {
        let missing = |p: &Path, how: &str| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "the lean driver executable is missing: expected {} ({how}); build it with `cargo build --release -p pqperf-driver` (or the whole workspace) or set {DRIVER_ENV}",
                    p.display()
                ),
            )
        };
        if let Some(p) = env.filter(|p| !p.as_os_str().is_empty()) {
            return if p.is_file() {
                Ok(p)
            } else {
                Err(missing(&p, &format!("from {DRIVER_ENV}")))
            };
        }
        let dir = exe.parent().unwrap_or(Path::new("."));
        let sibling = dir.join(DRIVER_BIN);
        if sibling.is_file() {
            return Ok(sibling);
        }
        if dir.file_name().is_some_and(|n| n == "deps")
            && let Some(up) = dir.parent()
        {
            let p = up.join(DRIVER_BIN);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(missing(
                    &p,
                    "next to the deps/ directory of this test binary",
                ))
            };
        }
        Err(missing(&sibling, "next to the running executable"))
    }
}

/// One driver run: the reference process entry plus the per-call samples (ticks).
#[derive(Debug, Clone)]
pub struct Run {
    /// Process entry for the record (`status`, `exit_code`, `meta`, `trials`, …).
    pub process: Process,
    /// Per-call tick deltas of all sampled trials, in order.
    pub samples: Vec<u64>,
    /// Per-call tick deltas, one vector per sampled trial.
    pub sample_trials: Vec<Vec<u64>>,
    /// Scheduler facts of every trial (reference and sampled), `disturbed` still false.
    pub sched: Vec<TrialSched>,
    /// The driver's counter (`cycles`, `tsc`, `cntvct_el0`), if it said.
    pub counter: Option<String>,
    /// Process wall seconds (also in `process.wall_s`).
    pub wall_s: f64,
    /// Σ trial seconds.
    pub timed_s: f64,
    /// The untimed memory pass (`PQPERF mem_…` lines), when the driver made one.
    pub mem: Option<MemFigures>,
    /// The machine's state during the process: the driver's canary figures, the steal and
    /// load the parent read around it, the trials' run-queue share.
    pub env: ProcessEnv,
    /// The driver's `PQPERF output_digest` (a claim, `crate::outcheck`).
    pub output_digest: Option<String>,
    /// Where the process's time in the parent went ([`crate::budget`]).
    pub budget: ProcessBudget,
}

impl Run {
    /// True if the driver printed `STATUS complete` and exited 0.
    pub fn complete(&self) -> bool {
        self.process.status == "complete"
    }
}

/// Most gates the parent answers in one driver process (a driver has at most 2 × 16
/// intervals + 2).
pub const MAX_READINGS: usize = 64;

/// Starts one driver process, contained, conducts its gates (`pqperf_driver::Gate`: at every
/// `PQPERF wait` line the parent reads the child's exact CPU time, then says `go`) and waits
/// for it (no parsing). With relayed inputs ([`crate::relay`]) it sends the setup payload
/// first and each window's inputs with the `go` that opens it; the window's reading is then
/// taken at the driver's `PQPERF loaded` line, after the loading, whose CPU time is bounded
/// (the problems are returned).
pub(crate) fn spawn(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    relay: Option<&crate::relay::Plan>,
) -> (
    untrusted::ChildOutcome,
    Vec<crate::verify::Reading>,
    Vec<String>,
) {
    let spec = ChildSpec {
        program: exe.exe.clone(),
        args: args.to_argv(),
        cwd: exe.cwd.clone(),
        timeout,
        readable: vec![exe.cwd.join(&args.lib)],
        cpu: args.cpu,
        ..Default::default()
    };
    let mut readings = Vec::new();
    let mut load_bad = Vec::new();
    let t0 = std::time::Instant::now();
    // The measuring CPU's softirq count, read with the CPU time (crate::verify).
    let mut irq_reader = args.cpu.map(pqperf_ffi::procinfo::IrqReader::new);
    let out = untrusted::run_conducted(&spec, &mut |s| {
        if let Some(r) = relay
            && !s.send_payload("setup", &r.setup)
        {
            return;
        }
        // The gate whose window's inputs are being loaded: (window, CPU before, bytes).
        let mut loading: Option<(usize, u64, usize)> = None;
        // The softirq count at that gate's `wait`.
        let mut closing_irq = None;
        // The reading at that gate's `wait`, where the window before the loading ended.
        let mut closing: Option<(u64, Vec<pqperf_ffi::procinfo::TaskSched>)> = None;
        let mut gate = 0usize;
        while let Some(l) = s.next_line() {
            let wait = l.starts_with("PQPERF\twait\t");
            let loaded = l.starts_with("PQPERF\tloaded\t");
            if !wait && !loaded {
                continue;
            }
            if readings.len() >= MAX_READINGS {
                break;
            }
            let r = s.cpu();
            let irq = irq_reader.as_mut().and_then(|x| x.softirqs());
            let mut interrupted = None;
            if loaded {
                let Some((w, before, bytes)) = loading.take() else {
                    load_bad.push("the driver said `loaded` without relayed inputs".into());
                    break;
                };
                let digested = relay.map_or(0, |p| p.digested_before(w));
                let spent = r.cpu_ns.saturating_sub(before) as f64 / 1e9;
                let allowed = crate::relay::load_allowance_s(bytes, digested);
                if spent > allowed {
                    let msg = format!(
                        "gate {gate}: loading window {}'s relayed inputs ({bytes} bytes) took {spent:.6} s of CPU time ({allowed:.6} s allowed): work on the inputs before their window",
                        w + 1
                    );
                    let irq = crate::verify::softirqs_between(closing_irq, irq);
                    match crate::verify::explained(&msg, spent - allowed, irq) {
                        Some(e) => interrupted = Some(e),
                        None => load_bad.push(msg),
                    }
                }
            }
            if wait && let Some(w) = relay.and_then(|p| p.windows.get(gate)) {
                // The next window's inputs, relayed only now that its CPU time was read.
                loading = Some((gate, r.cpu_ns, w.payload.len()));
                closing = Some((r.cpu_ns, r.tasks.clone()));
                closing_irq = irq;
                gate += 1;
                if !s.send_payload("go", &w.payload) {
                    break;
                }
                continue;
            }
            if wait {
                gate += 1;
            }
            readings.push(crate::verify::Reading {
                line: s.received,
                cpu_ns: r.cpu_ns,
                settled: r.settled,
                pids: r.pids.clone(),
                tasks: r.tasks.clone(),
                at_s: t0.elapsed().as_secs_f64(),
                arrival: None,
                closing_softirqs: closing.as_ref().and(closing_irq),
                closing: closing.take(),
                softirqs: irq,
                interrupted,
            });
            if !s.send("go") {
                break;
            }
            crate::verify::note_arrival(&mut readings, s.arrival(&r));
        }
    });
    (out, readings, load_bad)
}

/// Whether the inputs of `args` are relayed from a preparer ([`crate::relay::relayed`]); only
/// pqperf's own driver relays (not a test's fake driver).
pub fn relays(exe: &DriverExe, args: &DriverArgs) -> bool {
    exe.exe.file_name() == Some(std::ffi::OsStr::new(DRIVER_BIN)) && crate::relay::relayed(args)
}

/// Runs one driver process, contained (`pqperf_ffi::untrusted`), with a hard timeout, and
/// parses what it reported on its private result channel. A process that says `complete` is
/// checked against the kernel's accounting ([`crate::verify`]) and becomes
/// [`crate::verify::INCONSISTENT`] when its claims disagree. The candidate's stdout/stderr are
/// captured with a size cap; the record keeps their byte counts and the stderr tail.
pub fn run_driver(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Run {
    run_driver_then(exe, args, timeout, None)
}

/// [`run_driver`], and with `next` the relayed inputs of the process expected after this one
/// are prepared while this one is timed ([`crate::relay::prepare_ahead`]).
pub fn run_driver_then(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    next: Option<&DriverArgs>,
) -> Run {
    let mut command = vec![DRIVER_BIN.to_string()];
    command.extend(args.to_argv());
    let cpu_t0 = args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now);
    let load_1m = pqperf_ffi::procinfo::load_average()[0];
    let parent_rss_bytes = pqperf_ffi::procinfo::rss_bytes();
    // Relayed inputs: the preparer first (crate::relay), then the timing process without
    // its seed.
    let mut waited_s = 0.0;
    let plan = if relays(exe, args) {
        let tp = std::time::Instant::now();
        let prepared = crate::relay::prepare(exe, args, timeout);
        waited_s = tp.elapsed().as_secs_f64();
        if let Some(n) = next.filter(|n| crate::relay::relayed(n)) {
            crate::relay::prepare_ahead(exe, n, timeout);
        }
        match prepared {
            Ok(p) => Some(crate::relay::Plan::new(args, &p)),
            Err(e) => {
                return failed_run(command, format!("preparation of the relayed inputs: {e}"));
            }
        }
    } else {
        None
    };
    let targs = match &plan {
        Some(_) => crate::relay::timing_args(args),
        None => args.clone(),
    };
    if plan.is_some() {
        command = vec![DRIVER_BIN.to_string()];
        command.extend(targs.to_argv());
    }
    // The process's own time in the parent starts here: the wait for its preparation
    // (`waited_s`, above) is counted once, as preparation, never again as reaping.
    let t_spawn = std::time::Instant::now();
    // The forked child's `ru_maxrss` counts the parent's pages it shared until its exec: the
    // parent's RSS around the fork (the preparation and replays beside may have grown it
    // since the first reading), never a reading from before it alone.
    let rss_before_fork = pqperf_ffi::procinfo::rss_bytes();
    let (out, readings, load_bad) = spawn(exe, &targs, timeout, plan.as_ref());
    let parent_rss_bytes = [
        parent_rss_bytes,
        rss_before_fork,
        pqperf_ffi::procinfo::rss_bytes(),
    ]
    .into_iter()
    .flatten()
    .max();
    let outcome_s = t_spawn.elapsed().as_secs_f64();
    let steal_share = match (
        cpu_t0,
        args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now),
    ) {
        (Some(t0), Some(t1)) => t1.steal_share_since(&t0),
        _ => None,
    };
    if let Some(e) = &out.spawn_error {
        return failed_run(command, format!("cannot start driver: {e}"));
    }
    let wall_s = out.wall_s;
    let lines = out.result_lines();
    let mut parsed = parse_output(&lines);
    // Captured candidate output: the last characters, control characters escaped.
    let mut stderr_tail = pqperf_model::captured::escape_captured(
        &out.stderr
            .tail_chars(pqperf_model::captured::STDERR_KEEP_CHARS),
    );
    let refused = out
        .result_truncated
        .then(|| "result channel exceeded its size limit".to_string())
        .or(parsed.samples_refused.clone());
    if let Some(why) = refused {
        // Samples or trials may be cut or forged: never a complete record.
        parsed.status = None;
        parsed.sample_trials.clear();
        parsed.samples.clear();
        if !stderr_tail.is_empty() {
            stderr_tail.push('\n');
        }
        stderr_tail.push_str(&why);
    }
    let mut process = if out.timed_out {
        let mut p = Process {
            status: "hard_timeout".into(),
            exit_code: None,
            stderr: stderr_tail,
            command,
            wall_s: Some(wall_s),
            ..Default::default()
        };
        p.extra
            .insert("timeout_s".into(), Value::from(timeout.as_secs_f64()));
        parsed.trials.clear();
        parsed.mem = None;
        parsed.sample_trials.clear();
        parsed.samples.clear();
        p
    } else {
        let code = out.code();
        let st = match (&parsed.status, code) {
            (Some(s), Some(0)) => s.clone(),
            (None, _) => "missing".to_string(),
            _ => "failed".to_string(),
        };
        // A crash may leave no STATUS line: say what killed it.
        let mut stderr = stderr_tail;
        if let Some(c) = code
            && c < 0
        {
            let sig = -c;
            if !stderr.is_empty() {
                stderr.push('\n');
            }
            stderr.push_str(&format!("killed by signal {sig} ({})", signal_name(sig)));
        }
        Process {
            status: if code.is_some_and(|c| c < 0) && parsed.status.is_none() {
                "failed".into()
            } else {
                st
            },
            exit_code: code,
            meta: parsed.meta.clone(),
            trials: parsed.trials.clone(),
            stderr,
            command,
            wall_s: Some(wall_s),
            ..Default::default()
        }
    };
    if out.stdout.total > 0 || out.stderr.total > 0 {
        process
            .extra
            .insert("candidate_output".into(), out.output_json());
    }
    let check_t0 = std::time::Instant::now();
    if process.status == "complete" {
        let problems = match &out.accounting {
            Some(acc) => {
                let k = crate::verify::Kernel {
                    acc,
                    wall_s,
                    tick_hz: crate::verify::tick_hz(),
                    readings: &readings,
                    lines: &lines,
                    steal_s: steal_share.map_or(0.0, |f| f * wall_s),
                    parent_rss_bytes,
                };
                let (problems, evidence) = crate::verify::check(args, &parsed, &k);
                process.extra.insert("kernel_check".into(), evidence);
                problems
            }
            None => vec!["no kernel accounting of the process".to_string()],
        };
        let mut problems = problems;
        problems.extend(load_bad.iter().cloned());
        if let Some(pl) = &plan {
            let (bad, ev) = pl.check(&lines);
            problems.extend(bad);
            process.extra.insert("relayed_inputs".into(), ev);
        }
        if !problems.is_empty() {
            if let Some(kc) = process.extra.get_mut("kernel_check")
                && let Some(v) = kc.get_mut("problems").and_then(|v| v.as_array_mut())
            {
                for p in &problems {
                    if !v.iter().any(|x| x == p) {
                        v.push(Value::from(p.clone()));
                    }
                }
            }
            process.status = crate::verify::INCONSISTENT.into();
            process
                .extra
                .entry("kernel_check".to_string())
                .or_insert_with(|| serde_json::json!({ "problems": problems }));
        } else if process
            .extra
            .get("kernel_check")
            .is_some_and(crate::verify::interrupted)
        {
            // Over a bound only where interrupts on the measuring CPU explain it: re-run,
            // never published (crate::verify).
            process.status = crate::verify::DISTURBED.into();
        }
    }
    let timed_s = process.trials.iter().map(|t| t.seconds).sum();
    let sampled_s = parsed
        .sched
        .iter()
        .filter(|t| t.kind == "sampled")
        .map(|t| t.seconds)
        .sum();
    let mut budget = ProcessBudget::from_marks(
        out.spawned_s,
        &lines,
        &out.line_arrivals(),
        wall_s,
        outcome_s,
        timed_s,
        sampled_s,
    );
    budget.check_s = check_t0.elapsed().as_secs_f64();
    let mut output_digest = parsed.output_digest.clone();
    if let Some(pl) = &plan {
        // The altered verify calls: their samples and rejections are the parent's doing.
        pl.drop_tampered_samples(&mut parsed.sample_trials);
        parsed.samples = parsed.sample_trials.concat();
        if let Some(d) = pl.verify_digest(&lines) {
            output_digest = Some(d);
            let valid = process
                .extra
                .get("relayed_inputs")
                .and_then(|e| e["valid_rejections"].as_u64());
            if let (Some(v), true) = (valid, process.meta.contains("verify_rejections")) {
                process.meta.insert("verify_rejections", v.to_string());
            }
        }
        // The parent's wait for the preparation (none when it was made ahead).
        budget.prepare_s += waited_s;
        if let Some(e) = process.extra.get_mut("relayed_inputs") {
            e["waited_s"] = Value::from((waited_s * 1e6).round() / 1e6);
        }
    }
    let mem = if process.status == "complete" {
        parsed.mem
    } else {
        None
    };
    let env = ProcessEnv {
        canary_before_ticks: parsed.canary.map(|c| c.0),
        canary_after_ticks: parsed.canary.map(|c| c.1),
        steal_share,
        runq_share: runq_share(&parsed.sched),
        load_1m: Some(load_1m),
    };
    Run {
        env,
        output_digest,
        budget,
        process,
        samples: parsed.samples,
        sample_trials: parsed.sample_trials,
        sched: parsed.sched,
        counter: parsed.counter,
        wall_s,
        timed_s,
        mem,
    }
}

/// A run that never started (or whose inputs could not be prepared).
fn failed_run(command: Vec<String>, why: String) -> Run {
    let process = Process {
        status: "failed".into(),
        exit_code: None,
        stderr: why,
        command,
        wall_s: Some(0.0),
        ..Default::default()
    };
    Run {
        process,
        samples: Vec::new(),
        sample_trials: Vec::new(),
        sched: Vec::new(),
        counter: None,
        wall_s: 0.0,
        timed_s: 0.0,
        mem: None,
        env: ProcessEnv::default(),
        output_digest: None,
        budget: ProcessBudget::default(),
    }
}

/// Share of the trials' wall time spent on the run queue (`None` without schedstat).
fn runq_share(sched: &[TrialSched]) -> Option<f64> {
    pqperf_model::record::runq_share_of(sched)
}

fn signal_name(sig: i64) -> &'static str {
    match sig {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        31 => "SIGSYS: a system call the sandbox forbids",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lean_driver_is_found_next_to_the_executable_or_deps() {
        let d = tempfile::tempdir().unwrap();
        let deps = d.path().join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        let e = DriverExe::locate_from(&deps.join("t-123"), None).unwrap_err();
        assert!(
            e.to_string()
                .contains(&d.path().join(DRIVER_BIN).display().to_string()),
            "{e}"
        );
        std::fs::write(d.path().join(DRIVER_BIN), "").unwrap();
        assert_eq!(
            DriverExe::locate_from(&deps.join("t-123"), None).unwrap(),
            d.path().join(DRIVER_BIN)
        );
        assert_eq!(
            DriverExe::locate_from(&d.path().join("pqperf"), None).unwrap(),
            d.path().join(DRIVER_BIN)
        );
        let e = DriverExe::locate_from(&d.path().join("pqperf"), Some(d.path().join("nope")))
            .unwrap_err();
        assert!(e.to_string().contains("PQPERF_DRIVER"), "{e}");
    }
}
