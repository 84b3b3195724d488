//! Orchestrator side of a driver run (method §4.9): spawn `pqperf driver …` contained, with a
//! hard timeout, kill its process group on exit or hang, parse the META/TRIAL/STATUS lines of
//! its private result channel, and turn a crash or a hang
//! into a process entry with a status instead of an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_model::fields::Fields;
use pqperf_model::record::{Process, Trial, TrialSched};
use serde_json::Value;

use crate::driver::DriverArgs;

/// How to start the driver child.
#[derive(Debug, Clone)]
pub struct DriverExe {
    /// The pqperf executable (normally `std::env::current_exe()`).
    pub exe: PathBuf,
    /// Working directory of the child (the run directory; library paths are relative to it).
    pub cwd: PathBuf,
}

impl DriverExe {
    /// The running executable, working in `cwd`.
    pub fn current(cwd: &Path) -> std::io::Result<DriverExe> {
        Ok(DriverExe {
            exe: std::env::current_exe()?,
            cwd: cwd.to_path_buf(),
        })
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
}

impl Run {
    /// True if the driver printed `STATUS complete` and exited 0.
    pub fn complete(&self) -> bool {
        self.process.status == "complete"
    }
}

/// Runs one driver process, contained (`pqperf_ffi::untrusted`), with a hard timeout, and
/// parses what it reported on its private result channel. The candidate's stdout/stderr are
/// captured with a size cap; the record keeps their byte counts and the stderr tail.
pub fn run_driver(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Run {
    let argv = args.to_argv();
    let mut command = vec!["pqperf".to_string(), "driver".to_string()];
    command.extend(argv.iter().cloned());
    let mut child_args = vec!["driver".to_string()];
    child_args.extend(argv.iter().cloned());
    let out = untrusted::run(&ChildSpec {
        program: exe.exe.clone(),
        args: child_args,
        cwd: exe.cwd.clone(),
        timeout,
        writable: Vec::new(),
    });
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
        };
    }
    let wall_s = out.wall_s;
    let lines = out.result_lines();
    let mut parsed = parse_output(&lines);
    let mut stderr_tail = out.stderr.tail_chars(2000);
    if out.result_truncated {
        // Samples or trials may be cut: never a complete record.
        parsed.status = None;
        if !stderr_tail.is_empty() {
            stderr_tail.push('\n');
        }
        stderr_tail.push_str("result channel exceeded its size limit");
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
    let timed_s = process.trials.iter().map(|t| t.seconds).sum();
    Run {
        process,
        samples: parsed.samples,
        sample_trials: parsed.sample_trials,
        sched: parsed.sched,
        counter: parsed.counter,
        wall_s,
        timed_s,
    }
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
    /// PQPERF counter.
    pub counter: Option<String>,
}

/// Parses driver stdout lines (tab-separated).
pub fn parse_output(lines: &[String]) -> Parsed {
    let mut p = Parsed::default();
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
                    .filter_map(|x| x.parse::<u64>().ok())
                    .collect();
                p.samples.extend_from_slice(&v);
                p.sample_trials.push(v);
            }
            ["PQPERF", "counter", v] => p.counter = Some(v.to_string()),
            ["PQPERF", key @ ("trial_sched" | "sample_sched"), v] => {
                if let Some(t) = parse_sched(key, v) {
                    p.sched.push(t);
                }
            }
            _ => {}
        }
    }
    p
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
    }
}
