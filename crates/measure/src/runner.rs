//! Orchestrator side of a driver run (method §4.9): spawn the lean `pqperf-driver …` contained, with a
//! hard timeout, kill its process group on exit or hang, parse the META/TRIAL/STATUS lines of
//! its private result channel, and turn a crash or a hang
//! into a process entry with a status instead of an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_model::envevidence::ProcessEnv;
use pqperf_model::fields::Fields;
use pqperf_model::limits;
use pqperf_model::record::{Process, Trial, TrialSched};
use serde_json::Value;

use crate::driver::DriverArgs;

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
}

/// Per-operation memory from the driver's untimed memory pass (`pqperf_driver` `mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemFigures {
    /// Stack bytes from the driver's calling frame to the deepest byte the call wrote.
    pub stack_bytes: u64,
    /// Stack bytes painted.
    pub stack_region_bytes: u64,
    /// The call reached the bottom of the painted region (its use is at least the region).
    pub stack_overflow: bool,
    /// Peak of live heap bytes the call allocated (requested sizes), with the interposer.
    pub heap_peak_bytes: Option<u64>,
    /// Allocations the call made, with the interposer.
    pub heap_allocations: Option<u64>,
    /// Allocations the interposer could not follow (the peak is then an upper bound).
    pub heap_untracked: Option<u64>,
}

impl MemFigures {
    /// The figures as stored in a calibration file (`pqperf_mem`).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "stack_bytes": self.stack_bytes,
            "stack_region_bytes": self.stack_region_bytes,
            "stack_overflow": self.stack_overflow,
            "heap_peak_bytes": self.heap_peak_bytes,
            "heap_allocations": self.heap_allocations,
            "heap_untracked": self.heap_untracked,
        })
    }

    /// Reads what [`MemFigures::to_json`] wrote.
    pub fn from_json(v: &Value) -> Option<MemFigures> {
        Some(MemFigures {
            stack_bytes: v["stack_bytes"].as_u64()?,
            stack_region_bytes: v["stack_region_bytes"].as_u64()?,
            stack_overflow: v["stack_overflow"].as_bool()?,
            heap_peak_bytes: v["heap_peak_bytes"].as_u64(),
            heap_allocations: v["heap_allocations"].as_u64(),
            heap_untracked: v["heap_untracked"].as_u64(),
        })
    }

    /// The larger of two passes (several driver processes per record), field by field.
    pub fn max(self, o: MemFigures) -> MemFigures {
        let m = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        MemFigures {
            stack_bytes: self.stack_bytes.max(o.stack_bytes),
            stack_region_bytes: self.stack_region_bytes.max(o.stack_region_bytes),
            stack_overflow: self.stack_overflow || o.stack_overflow,
            heap_peak_bytes: m(self.heap_peak_bytes, o.heap_peak_bytes),
            heap_allocations: m(self.heap_allocations, o.heap_allocations),
            heap_untracked: m(self.heap_untracked, o.heap_untracked),
        }
    }
}

impl Run {
    /// True if the driver printed `STATUS complete` and exited 0.
    pub fn complete(&self) -> bool {
        self.process.status == "complete"
    }
}

/// Starts one driver process, contained, and waits for it (no parsing).
pub(crate) fn spawn(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
) -> untrusted::ChildOutcome {
    untrusted::run(&ChildSpec {
        program: exe.exe.clone(),
        args: args.to_argv(),
        cwd: exe.cwd.clone(),
        timeout,
        readable: vec![exe.cwd.join(&args.lib)],
        cpu: args.cpu,
        ..Default::default()
    })
}

/// Runs one driver process, contained (`pqperf_ffi::untrusted`), with a hard timeout, and
/// parses what it reported on its private result channel. A process that says `complete` is
/// checked against the kernel's accounting ([`crate::verify`]) and becomes
/// [`crate::verify::INCONSISTENT`] when its claims disagree. The candidate's stdout/stderr are
/// captured with a size cap; the record keeps their byte counts and the stderr tail.
pub fn run_driver(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Run {
    let mut command = vec![DRIVER_BIN.to_string()];
    command.extend(args.to_argv());
    let cpu_t0 = args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now);
    let load_1m = pqperf_ffi::procinfo::load_average()[0];
    let out = spawn(exe, args, timeout);
    let steal_share = match (
        cpu_t0,
        args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now),
    ) {
        (Some(t0), Some(t1)) => t1.steal_share_since(&t0),
        _ => None,
    };
    if let Some(e) = &out.spawn_error {
        let process = Process {
            status: "failed".into(),
            exit_code: None,
            stderr: format!("cannot start driver: {e}"),
            command,
            wall_s: Some(0.0),
            ..Default::default()
        };
        return Run {
            process,
            samples: Vec::new(),
            sample_trials: Vec::new(),
            sched: Vec::new(),
            counter: None,
            wall_s: 0.0,
            timed_s: 0.0,
            mem: None,
            env: ProcessEnv::default(),
        };
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
    if process.status == "complete" {
        let problems = match &out.accounting {
            Some(acc) => {
                let mut setup = || crate::verify::measure_setup(exe, args, timeout);
                let mut k = crate::verify::Kernel {
                    acc,
                    wall_s,
                    tick_hz: crate::verify::tick_hz(),
                    setup_s: &mut setup,
                    steal_s: steal_share.map_or(0.0, |f| f * wall_s),
                };
                let (problems, evidence) = crate::verify::check(args, &parsed, &mut k);
                process.extra.insert("kernel_check".into(), evidence);
                problems
            }
            None => vec!["no kernel accounting of the process".to_string()],
        };
        if !problems.is_empty() {
            process.status = crate::verify::INCONSISTENT.into();
            process
                .extra
                .entry("kernel_check".to_string())
                .or_insert_with(|| serde_json::json!({ "problems": problems }));
        }
    }
    let timed_s = process.trials.iter().map(|t| t.seconds).sum();
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

/// Share of the trials' wall time spent on the run queue (`None` without schedstat).
fn runq_share(sched: &[TrialSched]) -> Option<f64> {
    pqperf_model::envevidence::runq_share_of(sched)
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

/// What the driver printed.
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    /// META key → value (strings), in order.
    pub meta: Fields,
    /// TRIAL lines.
    pub trials: Vec<Trial>,
    /// STATUS value.
    pub status: Option<String>,
    /// SAMPLES values, concatenated.
    pub samples: Vec<u64>,
    /// SAMPLES values, one vector per line.
    pub sample_trials: Vec<Vec<u64>>,
    /// `PQPERF trial_sched` / `sample_sched` lines.
    pub sched: Vec<TrialSched>,
    /// The `run_ns` (on-CPU nanoseconds) of each `sched` line, in the same order.
    pub sched_run_ns: Vec<Option<u64>>,
    /// PQPERF counter.
    pub counter: Option<String>,
    /// `PQPERF canary before=… after=…`: the canary figures (ticks), a claim of the child.
    pub canary: Option<(u64, u64)>,
    /// PQPERF mem_… lines (complete stack figures required).
    pub mem: Option<MemFigures>,
    /// Why sampled trials were refused (a SAMPLES line over
    /// `pqperf_model::limits::MAX_SAMPLES_PER_TRIAL`, which the driver never writes): such a
    /// process is never complete.
    pub samples_refused: Option<String>,
}

/// Parses driver stdout lines (tab-separated).
pub fn parse_output(lines: &[String]) -> Parsed {
    let mut p = Parsed::default();
    let mut mem = std::collections::HashMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        match f.as_slice() {
            ["META", k, v] => p.meta.insert(k.to_string(), v.to_string()),
            ["TRIAL", _, m, s, c] => {
                if let (Ok(m), Ok(s), Ok(c)) = (m.parse(), s.parse(), c.parse()) {
                    p.trials.push(Trial {
                        measurements: m,
                        seconds: s,
                        cycles: Some(c),
                        ..Default::default()
                    });
                }
            }
            ["STATUS", s] => p.status = Some(s.to_string()),
            ["SAMPLES", _, xs] => {
                let v: Vec<u64> = xs
                    .split(' ')
                    .take(limits::MAX_SAMPLES_PER_TRIAL + 1)
                    .filter_map(|x| x.parse::<u64>().ok())
                    .collect();
                if v.len() > limits::MAX_SAMPLES_PER_TRIAL {
                    p.samples_refused = Some(format!(
                        "a SAMPLES line with more than the {} samples a trial may have (refused)",
                        limits::MAX_SAMPLES_PER_TRIAL
                    ));
                    continue;
                }
                p.samples.extend_from_slice(&v);
                p.sample_trials.push(v);
            }
            ["PQPERF", "counter", v] => p.counter = Some(v.to_string()),
            ["PQPERF", "canary", v] => {
                if let (Some(b), Some(a)) = (sched_field(v, "before"), sched_field(v, "after")) {
                    p.canary = Some((b, a));
                }
            }
            ["PQPERF", key @ ("trial_sched" | "sample_sched"), v] => {
                if let Some(t) = parse_sched(key, v) {
                    p.sched.push(t);
                    p.sched_run_ns.push(sched_field(v, "run_ns"));
                }
            }
            ["PQPERF", k, v] if k.starts_with("mem_") => {
                if let Ok(n) = v.parse::<u64>() {
                    mem.insert(k.to_string(), n);
                }
            }
            _ => {}
        }
    }
    let get = |k: &str| mem.get(k).copied();
    if let (Some(s), Some(r), Some(o)) = (
        get("mem_stack_bytes"),
        get("mem_stack_region_bytes"),
        get("mem_stack_overflow"),
    ) {
        p.mem = Some(MemFigures {
            stack_bytes: s,
            stack_region_bytes: r,
            stack_overflow: o != 0,
            heap_peak_bytes: get("mem_heap_peak_bytes"),
            heap_allocations: get("mem_heap_allocations"),
            heap_untracked: get("mem_heap_untracked"),
        });
    }
    p
}

/// The number `key=` of a scheduler line (`-` or absent: None).
fn sched_field(v: &str, key: &str) -> Option<u64> {
    v.split(' ')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .and_then(|x| x.parse().ok())
}

/// One `key=value …` scheduler line (`-` = not available).
fn parse_sched(key: &str, v: &str) -> Option<TrialSched> {
    let mut m = std::collections::HashMap::new();
    for kv in v.split(' ') {
        let (k, x) = kv.split_once('=')?;
        m.insert(k, x);
    }
    let opt = |k: &str| m.get(k).and_then(|x| x.parse::<u64>().ok());
    let req = |k: &str| opt(k);
    let ns = req("ns")?;
    let count = req("count")?;
    let runq = opt("runq_ns");
    let seconds = ns as f64 / 1e9;
    Some(TrialSched {
        kind: if key == "trial_sched" {
            "reference"
        } else {
            "sampled"
        }
        .to_string(),
        trial: req("trial")?,
        calls: req("calls")?,
        seconds,
        count,
        counter_per_ns: (ns > 0).then(|| count as f64 / ns as f64),
        nivcsw: req("nivcsw")?,
        nvcsw: opt("nvcsw").unwrap_or(0),
        runq_ns: runq,
        minflt: opt("minflt").unwrap_or(0),
        majflt: opt("majflt").unwrap_or(0),
        migrations: opt("migrations"),
        cpu_changed: opt("cpu_changed").map(|c| c != 0),
        preempted_share: runq.filter(|_| ns > 0).map(|r| r as f64 / ns as f64),
        disturbed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_reference_lines() {
        let lines: Vec<String> = [
            "META\tid\tsign-02",
            "META\tbuild_flags\t-O2 -fPIC ",
            "PQPERF\tcounter\ttsc",
            "TRIAL\t1\t20\t0.001000000\t2100000",
            "PQPERF\ttrial_sched\ttrial=1 calls=20 ns=1000000 count=2100000 nivcsw=3 nvcsw=0 runq_ns=250000 run_ns=750000 minflt=0 majflt=0 migrations=- cpu_changed=0",
            "SAMPLES\t1\t5 6 7",
            "PQPERF\tcanary\tbefore=1000 after=1100 reps=5 steps=20000",
            "PQPERF\tmem_stack_bytes\t100480",
            "PQPERF\tmem_stack_region_bytes\t1048576",
            "PQPERF\tmem_stack_overflow\t0",
            "PQPERF\tmem_heap_peak_bytes\t1048576",
            "PQPERF\tmem_heap_allocations\t1",
            "STATUS\tcomplete",
            "garbage",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = parse_output(&lines);
        assert_eq!(p.meta.str("id"), Some("sign-02"));
        assert_eq!(p.meta.str("build_flags"), Some("-O2 -fPIC "));
        assert_eq!(p.trials.len(), 1);
        assert_eq!(p.trials[0].measurements, 20);
        assert_eq!(p.trials[0].cycles, Some(2_100_000));
        assert_eq!(p.samples, vec![5, 6, 7]);
        assert_eq!(p.sample_trials, vec![vec![5, 6, 7]]);
        let t = &p.sched[0];
        assert_eq!(
            (t.kind.as_str(), t.trial, t.calls, t.nivcsw),
            ("reference", 1, 20, 3)
        );
        assert_eq!(t.preempted_share, Some(0.25));
        assert_eq!((t.migrations, t.cpu_changed), (None, Some(false)));
        assert_eq!(p.status.as_deref(), Some("complete"));
        assert_eq!(p.counter.as_deref(), Some("tsc"));
        assert_eq!(p.canary, Some((1000, 1100)));
        assert_eq!(runq_share(&p.sched), Some(0.25));
        let m = p.mem.unwrap();
        assert_eq!((m.stack_bytes, m.stack_overflow), (100480, false));
        assert_eq!(m.heap_peak_bytes, Some(1048576));
        assert_eq!(m.heap_allocations, Some(1));
        assert_eq!(m.heap_untracked, None);
    }

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
