//! ML-DSA-44 (PQClean) campaigns for the test–retest test and benchmark: import, build, KAT,
//! calibrate + measure on one CPU, a CPU-bound co-runner pinned to it, the records and the
//! figures printed from them.

use std::path::Path;
use std::process::{Child, Command};

use serde_json::Value;

use super::{ok, output, text};

/// Imports PQClean into `run` and builds and KAT-tests the instances matching `only`.
pub fn prepare(run: &Path, only: &str) {
    let r = run.to_str().unwrap();
    ok(None, &["import", "pqclean", "--run-dir", r]);
    ok(None, &["build", "--run-dir", r, "--only", only]);
    let kat = ok(None, &["kat", "--run-dir", r, "--only", only]);
    assert!(!kat.contains("FAIL"), "{kat}");
}

/// Calibrates and measures `ml-dsa-44*` of `run` on `cpu` at `trial_target` seconds per
/// trial; `extra` goes to the measure phase.
pub fn measure(run: &Path, cpu: usize, systems: &Path, trial_target: &str, extra: &[&str]) {
    let cpus = cpu.to_string();
    for phase in ["calibrate", "measure"] {
        let mut a = vec![
            "campaign",
            phase,
            "--run-dir",
            run.to_str().unwrap(),
            "--cpu",
            &cpus,
            "--only",
            "^ml-dsa-44/",
            "--trial-target",
            trial_target,
            "--allow-unfixed-host",
            "--probe-attempts",
            "1",
            "--register",
            "test VM",
            "--systems",
            systems.to_str().unwrap(),
        ];
        if phase == "measure" {
            a.extend_from_slice(extra);
        }
        ok(None, &a);
    }
}

/// The record of `label`'s operation `op` in `run`.
pub fn record(run: &Path, label: &str, op: &str) -> Value {
    let p = run.join(format!("records/ml-dsa-44/{label}__{op}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// A CPU-bound process pinned to `cpu`, killed (by its id) when dropped.
pub struct Spinner(Child);

impl Spinner {
    /// Starts `sh -c 'while :; do :; done'` under `taskset -c cpu`.
    pub fn start(cpu: usize) -> Spinner {
        Spinner(
            Command::new("taskset")
                .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset (util-linux)"),
        )
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Mean run-queue share of the kept attempts' trials (how disturbed the kept data was).
pub fn kept_preempted(r: &Value) -> f64 {
    let v: Vec<f64> = r["pqperf"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kept"] == true)
        .flat_map(|a| a["trials"].as_array().unwrap().iter())
        .filter_map(|t| t["preempted_share"].as_f64())
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// `pqperf compare ARGS --json`, which must succeed.
pub fn compare_json(args: &[&str]) -> Value {
    let mut a = vec!["compare"];
    a.extend_from_slice(args);
    a.push("--json");
    let o = output(None, &a);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// (op, verdict, ratio) of every row of a `compare --json` answer.
pub fn verdicts(c: &Value) -> Vec<(String, String, f64)> {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["op"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
                r["ratio"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}
