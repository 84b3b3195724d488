//! Test–retest of the default protocol on this machine (`cargo bench -p pqperf --bench
//! testretest`, several minutes): ML-DSA-44 (PQClean clean) measured `PQPERF_BENCH_RUNS`
//! times (default 2) one after the other with the campaigns' default `--target-ci 1`; prints
//! per operation every run's robust estimate with its interval and estimator, the largest ÷
//! smallest estimate, whether all intervals overlap, and the `compare` verdict of each run
//! against the first (A–A: the same library file). Figures of this machine and its load,
//! printed, never asserted.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;

use common::mldsa::{compare_json, prepare, record, verdicts};

const OPS: [&str; 3] = ["keygen", "sign", "verify"];

/// Calibrates and measures ML-DSA-44 of `run` on `cpu` with the default protocol.
fn measure_default(run: &Path, cpu: usize, systems: &Path) {
    let cpus = cpu.to_string();
    for phase in ["calibrate", "measure"] {
        common::ok(
            None,
            &[
                "campaign",
                phase,
                "--run-dir",
                run.to_str().unwrap(),
                "--cpu",
                &cpus,
                "--only",
                "^ml-dsa-44/ml-dsa-44$",
                "--allow-unfixed-host",
                "--probe-attempts",
                "1",
                "--register",
                "test VM",
                "--systems",
                systems.to_str().unwrap(),
            ],
        );
    }
}

fn main() {
    let runs: usize = std::env::var("PQPERF_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2)
        .max(2);
    let tmp = tempfile::tempdir().unwrap();
    let systems = tmp.path().join("systems.csv");
    let cpu = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap();
    let dirs: Vec<_> = (0..runs)
        .map(|i| tmp.path().join(format!("run{i}")))
        .collect();
    for d in &dirs {
        prepare(d, "^ml-dsa-44/ml-dsa-44$");
    }
    let t0 = std::time::Instant::now();
    for d in &dirs {
        measure_default(d, cpu, &systems);
    }
    println!(
        "testretest: ML-DSA-44 measured {runs} times (default protocol, --target-ci 1) on CPU {cpu} in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    for op in OPS {
        let mut est = Vec::new();
        let mut ivs = Vec::new();
        for (i, d) in dirs.iter().enumerate() {
            let r = record(d, "ml-dsa-44", op);
            let rb = &r["pqperf"]["robust"];
            let (e, lo, hi) = (
                rb["estimate_seconds"].as_f64().unwrap_or(f64::NAN),
                rb["ci_low_seconds"].as_f64().unwrap_or(f64::NAN),
                rb["ci_high_seconds"].as_f64().unwrap_or(f64::NAN),
            );
            println!(
                "  {op} run {i}: {:.2} µs [{:.2}, {:.2}] ±{:.1} % ({}, {} trials, {} fenced out; reference mean {:.2} µs)",
                e * 1e6,
                lo * 1e6,
                hi * 1e6,
                rb["ci_half_width_rel"].as_f64().unwrap_or(f64::NAN) * 100.0,
                rb["estimator"].as_str().unwrap_or("-"),
                rb["trials"]
                    .as_u64()
                    .unwrap_or_else(|| rb["samples"].as_array().map_or(0, Vec::len) as u64),
                rb["fenced_out"].as_u64().unwrap_or(0),
                r["mean_seconds"].as_f64().unwrap_or(f64::NAN) * 1e6
            );
            est.push(e);
            ivs.push((lo, hi));
        }
        let max = est.iter().copied().fold(f64::MIN, f64::max);
        let min = est.iter().copied().fold(f64::MAX, f64::min);
        let overlap = ivs.iter().map(|x| x.0).fold(f64::MIN, f64::max)
            <= ivs.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        println!(
            "{op}: largest ÷ smallest estimate {:.4}; all intervals share a point: {overlap}",
            max / min
        );
    }
    let a = dirs[0].to_str().unwrap();
    for d in &dirs[1..] {
        let c = compare_json(&[a, d.to_str().unwrap()]);
        println!("compare run 0 -> {}: {:?}", d.display(), verdicts(&c));
    }
}
