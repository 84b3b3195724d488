//! Test–retest figures of this machine (`cargo bench -p pqperf --bench retest`, ~2-5 min):
//! ML-DSA-44 (PQClean clean) measured twice, once without and once with a CPU-bound process
//! pinned to the benchmark CPU; prints per operation the robust and the naive (median-trial)
//! loaded/quiet ratios, the run-queue share of the kept trials, the `compare` verdicts of
//! quiet vs loaded (an A–A pair: same library file) and of clean vs AVX2 (measured in the
//! quiet run), and the exit status of `compare --fail-on-regression` for AVX2 → clean. These
//! are figures of the machine and its load, so they are printed, never asserted; the
//! evidence checks of the same campaigns are the `retest` test.
//!
//! `PQPERF_BENCH_TRIAL_TARGET` sets the seconds per trial (default 0.05).

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;

use common::mldsa::{Spinner, compare_json, kept_preempted, measure, prepare, record, verdicts};

/// The verdict threshold (percent) of the quiet/loaded comparison.
const LOADED_THRESHOLD: &str = "3";

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = tmp.path().join("quiet");
    let loaded = tmp.path().join("loaded");
    let systems = tmp.path().join("systems.csv");
    let target = std::env::var("PQPERF_BENCH_TRIAL_TARGET").unwrap_or_else(|_| "0.05".into());
    let cpu = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap();
    prepare(&quiet, "^ml-dsa-44/");
    prepare(&loaded, "^ml-dsa-44/ml-dsa-44$");
    let t0 = std::time::Instant::now();
    measure(&quiet, cpu, &systems, &target, &["--target-ci", "1"]);
    {
        let _spin = Spinner::start(cpu);
        measure(&loaded, cpu, &systems, &target, &[]);
    }
    println!(
        "retest: ML-DSA-44 measured quiet and loaded on CPU {cpu} in {:.0} s (trial target {target} s)",
        t0.elapsed().as_secs_f64()
    );
    ratios(&quiet, &loaded);
    let (q, l) = (quiet.to_str().unwrap(), loaded.to_str().unwrap());
    let c = compare_json(&[q, l, "--threshold", LOADED_THRESHOLD]);
    println!(
        "compare quiet -> loaded (threshold {LOADED_THRESHOLD} %): {:?}",
        verdicts(&c)
    );
    let c = compare_json(&[q, q, "--map", "ml-dsa-44=ml-dsa-44-avx2"]);
    println!("compare clean -> avx2: {:?}", verdicts(&c));
    let o = common::output(
        None,
        &[
            "compare",
            q,
            q,
            "--map",
            "ml-dsa-44-avx2=ml-dsa-44",
            "--fail-on-regression",
        ],
    );
    println!(
        "compare avx2 -> clean --fail-on-regression: exit {:?}",
        o.status.code()
    );
}

/// Per operation: robust and naive loaded/quiet ratios, disturbed attempts and run-queue
/// shares, printed.
fn ratios(quiet: &Path, loaded: &Path) {
    for op in ["keygen", "sign", "verify"] {
        let (q, l) = (
            record(quiet, "ml-dsa-44", op),
            record(loaded, "ml-dsa-44", op),
        );
        let est = |r: &serde_json::Value| {
            r["pqperf"]["robust"]["estimate_seconds"]
                .as_f64()
                .unwrap_or(f64::NAN)
        };
        let median = |r: &serde_json::Value| r["median_trial_seconds"].as_f64().unwrap_or(f64::NAN);
        let disturbed = |r: &serde_json::Value| {
            let a = r["pqperf"]["attempts"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let d = a.iter().filter(|a| a["disturbed"] == true).count();
            format!("{d}/{} attempts disturbed", a.len())
        };
        println!(
            "ML-DSA-44 {op}: robust quiet {:.2} µs, loaded {:.2} µs, loaded/quiet {:.4}; naive median-trial loaded/quiet {:.4}; run-queue share of kept trials: quiet {:.1} %, loaded {:.1} %; quiet {}, loaded {}",
            est(&q) * 1e6,
            est(&l) * 1e6,
            est(&l) / est(&q),
            median(&l) / median(&q),
            kept_preempted(&q) * 100.0,
            kept_preempted(&l) * 100.0,
            disturbed(&q),
            disturbed(&l),
        );
    }
}
