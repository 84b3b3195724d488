//! Orchestrator side of a driver run (method §4.9): spawn `pqperf driver …` with a hard
//! timeout, kill it on hang, parse its META/TRIAL/STATUS lines, and turn a crash or a hang
//! into a process entry with a status instead of an error.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pqperf_model::fields::Fields;
use pqperf_model::record::{Process, Trial};
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
    /// Per-call tick deltas of all trials, in order.
    pub samples: Vec<u64>,
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

/// Runs one driver process with a hard timeout and parses its output.
pub fn run_driver(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Run {
    let argv = args.to_argv();
    let mut command = vec!["pqperf".to_string(), "driver".to_string()];
    command.extend(argv.iter().cloned());
    let start = Instant::now();
    let child = Command::new(&exe.exe)
        .arg("driver")
        .args(&argv)
        .current_dir(&exe.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
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
                counter: None,
                wall_s: 0.0,
                timed_s: 0.0,
            };
        }
    };
    let out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_thread = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for l in BufReader::new(out).lines() {
            match l {
                Ok(l) => lines.push(l),
                Err(_) => break,
            }
        }
        lines
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let deadline = start + timeout;
    let mut pause = Duration::from_micros(200);
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(st)) => break (Some(st), false),
            Ok(None) => {}
            Err(_) => break (None, false),
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let st = child.wait().ok();
            break (st, true);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    let wall_s = start.elapsed().as_secs_f64();
    let lines = out_thread.join().unwrap_or_default();
    let stderr_full = err_thread.join().unwrap_or_default();
    let mut parsed = parse_output(&lines);
    let stderr_tail = tail_chars(stderr_full.trim(), 2000);
    let process = if timed_out {
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
        p
    } else {
        use std::os::unix::process::ExitStatusExt;
        let code = status.and_then(|s| s.code().map(i64::from).or(s.signal().map(|g| -(g as i64))));
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
    let timed_s = process.trials.iter().map(|t| t.seconds).sum();
    Run {
        process,
        samples: parsed.samples,
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

fn tail_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        s.chars().skip(count - n).collect()
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
            ["SAMPLES", _, xs] => p
                .samples
                .extend(xs.split(' ').filter_map(|x| x.parse::<u64>().ok())),
            ["PQPERF", "counter", v] => p.counter = Some(v.to_string()),
            _ => {}
        }
    }
    p
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
        assert_eq!(p.status.as_deref(), Some("complete"));
        assert_eq!(p.counter.as_deref(), Some("tsc"));
    }
}
