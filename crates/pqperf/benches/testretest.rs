//! Test–retest and verdict rates of the default protocol on this machine (`cargo bench -p
//! pqperf --bench testretest`, several minutes). Figures of this machine and its load,
//! printed, never asserted.
//!
//! 1. **ML-DSA-44** (PQClean clean, the demo's baseline) measured `PQPERF_BENCH_RUNS` times
//!    (default 2) one after the other with the campaigns' default `--target-ci 1`: per
//!    operation every run's robust estimate with its interval and estimator, the largest ÷
//!    smallest estimate and whether all intervals overlap; then the `compare` verdict of
//!    each independent A–A pair of runs (runs 0–1, 2–3, …: the same library file) and per
//!    operation how often it said "no change", "inconclusive" or something wrong (faster or
//!    slower). `sign` is judged with its calls paired by input stream
//!    (`pqperf_compare::streams`: the same process seed and call index in both runs); the
//!    same records judged unpaired are printed beside it.
//! 2. **A +20 % change** (`PQPERF_BENCH_CHANGE_K` comparisons, default 2; 0 skips it): the
//!    toy signer `tests/measure/toy_sig.c` with a register-bound busy loop repeated a
//!    geometric number of rounds per `sign` (`-DTOY_ROUNDS`, 4.27 on average: a variable-time
//!    operation like ML-DSA's), A at 20 000 rounds of work measured quiet, then A again and
//!    B at 24 000 (+20 %) each measured beside a CPU hog pinned to the benchmark CPU; the
//!    `compare` verdicts of A → A (A–A beside the hog) and A → B (the change beside the hog)
//!    for `sign`.
//!
//! `PQPERF_BENCH_KEEP=<dir>` keeps the run directories there (to compare them again, e.g.
//! after a change of the verdict rules). On a host where other pqperf runs lease the CPUs,
//! `PQPERF_LEASE_DIR=<private dir>` keeps the campaigns from waiting for their leases (as the
//! verdicts benchmark does).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::mldsa::{Spinner, compare_json, prepare, record};
use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};
use serde_json::Value;

const OPS: [&str; 3] = ["keygen", "sign", "verify"];

fn env_usize(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// One stream key for every run of this benchmark (`--stream-key`): each run draws a fresh
/// secret key otherwise, and runs of different keys are not paired by `compare`.
fn bench_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        pqperf_model::stream::key_hex(&pqperf_model::stream::fresh_key().expect("/dev/urandom"))
    })
}

/// Calibrates and measures the instances of `run` matching `only` on `cpu` with the
/// default protocol, every run with the benchmark's stream key.
fn measure_default(run: &Path, only: &str, cpu: usize, systems: &Path) {
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
                only,
                "--allow-unfixed-host",
                "--probe-attempts",
                "1",
                "--register",
                "test VM",
                "--systems",
                systems.to_str().unwrap(),
                "--stream-key",
                bench_key(),
            ],
        );
    }
}

/// `(verdict, one line: ratio, interval, processes, floor, reason)` of `op` in a `compare
/// --json` answer.
fn row_of(c: &Value, op: &str) -> (String, String) {
    let row = c["rows"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["op"] == op))
        .cloned()
        .unwrap_or(Value::Null);
    let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    let verdict = row["verdict"].as_str().unwrap_or("?").to_string();
    let line = format!(
        "{verdict}: ratio {:.4} [{:.4}, {:.4}], processes {}, floor {:.2} % ({}){}",
        f("ratio"),
        f("ratio_ci_low"),
        f("ratio_ci_high"),
        row["processes"],
        f("noise_floor") * 100.0,
        if row["noise_floor_measured"] == true {
            "measured"
        } else if row["noise_floor_assumed"] == true {
            "assumed"
        } else {
            "recorded"
        },
        row["reason"]
            .as_str()
            .map(|r| format!("; {r}"))
            .unwrap_or_default()
    );
    let paired = &row["paired"];
    let line = if paired.is_object() {
        format!(
            "{line} [paired: {} streams, {} calls, spread {:.2} %]",
            paired["streams"],
            paired["calls"],
            (paired["spread"].as_f64().unwrap_or(f64::NAN) - 1.0) * 100.0
        )
    } else if let Some(why) = row["unpaired_reason"].as_str() {
        format!("{line} [unpaired: {why}]")
    } else {
        line
    };
    (verdict, line)
}

/// The verdict of `op` between two run directories judged without pairing by input stream
/// (`pqperf_compare::Options::pair_streams` false): what the same records said before.
fn unpaired(a: &Path, b: &Path, op: &str) -> (String, String) {
    let sa = pqperf_compare::load(a, None).unwrap();
    let sb = pqperf_compare::load(b, None).unwrap();
    let o = pqperf_compare::Options {
        pair_streams: false,
        ..Default::default()
    };
    let c = pqperf_compare::compare(&sa, &sb, &o).unwrap();
    row_of(&serde_json::to_value(&c).unwrap(), op)
}

/// "no change a/n, inconclusive b/n, wrong c/n" (`wrong`: the verdicts in `wrong`).
fn tally(v: &[String], wrong: &[&str]) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for x in v {
        *m.entry(x.as_str()).or_default() += 1;
    }
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    format!(
        "slower {}/{n}, faster {}/{n}, no change {}/{n}, inconclusive {}/{n} (wrong: {}/{n})",
        get("slower"),
        get("faster"),
        get("no_change"),
        get("inconclusive"),
        wrong.iter().map(|w| get(w)).sum::<usize>(),
        n = v.len()
    )
}

/// Part 1: ML-DSA-44 measured `runs` times, A–A verdicts of independent pairs.
fn mldsa(t: &Path, runs: usize, cpu: usize, systems: &Path) {
    let dirs: Vec<PathBuf> = (0..runs).map(|i| t.join(format!("run{i}"))).collect();
    for d in &dirs {
        prepare(d, "^ml-dsa-44/ml-dsa-44$");
    }
    let t0 = std::time::Instant::now();
    for d in &dirs {
        measure_default(d, "^ml-dsa-44/ml-dsa-44$", cpu, systems);
    }
    println!(
        "testretest: ML-DSA-44 measured {runs} times (default protocol, --target-ci 1) on CPU {cpu} in {:.0} s, load now {:?}",
        t0.elapsed().as_secs_f64(),
        pqperf_ffi::procinfo::load_average()
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
            let ad = &r["pqperf"]["adaptive"];
            println!(
                "  {op} run {i}: {:.2} µs [{:.2}, {:.2}] ±{:.1} % ({}, {} trials, stopped {}, {} fenced out; reference mean {:.2} µs)",
                e * 1e6,
                lo * 1e6,
                hi * 1e6,
                rb["ci_half_width_rel"].as_f64().unwrap_or(f64::NAN) * 100.0,
                rb["estimator"].as_str().unwrap_or("-"),
                rb["samples"].as_array().map_or(0, Vec::len),
                ad["stopped"].as_str().unwrap_or("-"),
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
    let mut per_op: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut sign_unpaired = Vec::new();
    for pair in dirs.chunks_exact(2) {
        let c = compare_json(&[pair[0].to_str().unwrap(), pair[1].to_str().unwrap()]);
        for op in OPS {
            let (v, line) = row_of(&c, op);
            println!(
                "  A–A {} -> {} {op}: {line}",
                pair[0].display(),
                pair[1].display()
            );
            per_op.entry(op).or_default().push(v);
        }
        let (v, line) = unpaired(&pair[0], &pair[1], "sign");
        println!("  A–A sign, the same records unpaired: {line}");
        sign_unpaired.push(v);
    }
    for (op, v) in &per_op {
        println!(
            "ML-DSA-44 A–A {op}{}: {}",
            if *op == "sign" {
                " (paired by input stream)"
            } else {
                ""
            },
            tally(v, &["slower", "faster"])
        );
    }
    println!(
        "ML-DSA-44 A–A sign unpaired (the same records): {}",
        tally(&sign_unpaired, &["slower", "faster"])
    );
}

/// A run directory with the variable-time toy signer at `work` rounds per busy loop.
fn toy(run: &Path, label: &str, work: usize) {
    let lib = Lib::new("sign-90", label).args(&[
        format!("-DTOY_WORK={work}"),
        "-DTOY_WORK_REGISTER".to_string(),
        "-DTOY_ROUNDS".to_string(),
    ]);
    let mut bj = toy_run(run, "toy_sig.c", TOY_SIG, &[lib]);
    if let Some(e) = bj.instances.get_mut(&format!("sign-90/{label}")) {
        e.library_sha256 = Some(format!("work-{work}"));
    }
    write_build_json(run, &bj);
}

/// Part 2: A quiet, A and B (+20 %) beside a pinned hog; `k` times.
fn change(t: &Path, k: usize, cpu: usize, systems: &Path) {
    let (mut aa, mut ab) = (Vec::new(), Vec::new());
    let t0 = std::time::Instant::now();
    for i in 0..k {
        let a = t.join(format!("toy{i}-a"));
        let a2 = t.join(format!("toy{i}-a-hog"));
        let b = t.join(format!("toy{i}-b-hog"));
        toy(&a, "toy", 20_000);
        toy(&a2, "toy", 20_000);
        toy(&b, "toy", 24_000);
        measure_default(&a, "^sign-90/toy$", cpu, systems);
        {
            let _hog = Spinner::start(cpu);
            measure_default(&a2, "^sign-90/toy$", cpu, systems);
            measure_default(&b, "^sign-90/toy$", cpu, systems);
        }
        for (to, out) in [(&a2, &mut aa), (&b, &mut ab)] {
            let c = compare_json(&[a.to_str().unwrap(), to.to_str().unwrap()]);
            let (v, line) = row_of(&c, "sign");
            println!("  toy sign {} -> {}: {line}", a.display(), to.display());
            out.push(v);
        }
    }
    println!(
        "toy (variable-time sign, A quiet, the other side beside a hog pinned to CPU {cpu}; {:.0} s, load now {:?}):\n  A–A:    {}\n  +20 %:  {}",
        t0.elapsed().as_secs_f64(),
        pqperf_ffi::procinfo::load_average(),
        tally(&aa, &["slower", "faster"]),
        tally(&ab, &["faster", "no_change"])
    );
}

fn main() {
    let runs = env_usize("PQPERF_BENCH_RUNS", 2);
    let k = env_usize("PQPERF_BENCH_CHANGE_K", 2);
    let keep = std::env::var_os("PQPERF_BENCH_KEEP").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let t = match &keep {
        Some(d) => {
            std::fs::create_dir_all(d).unwrap();
            d.as_path()
        }
        None => tmp.path(),
    };
    let systems = t.join("systems.csv");
    let cpu = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap();
    println!(
        "testretest: CPU {cpu}, load at start {:?}",
        pqperf_ffi::procinfo::load_average()
    );
    if runs >= 2 {
        mldsa(t, runs, cpu, &systems);
    }
    if k > 0 {
        change(t, k, cpu, &systems);
    }
}
