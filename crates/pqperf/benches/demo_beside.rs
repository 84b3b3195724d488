//! The demo's valgrind phases beside its timing phases (`cargo bench -p pqperf --bench
//! demo_beside`, issue 41): the demo's set imported, built and KAT-checked once, then `pqperf
//! demo` in fresh copies of that run directory (the same library files), in pairs: (i) the
//! ct and count phases beside in `SCHED_IDLE` (the default) and (n) at nice 19 alone
//! (`PQPERF_DEMO_BESIDE=nice`, session 16's way), the order alternating from pair to pair.
//! Prints per demo its wall time, the measure phase's wall and efficiency (Σ timed ÷ phase
//! wall) with the parent's and the relayed preparations' seconds on the path, the measure
//! estimate ÷ the phase wall, when ct and count ended, and per pair the ratios i ÷ n. These
//! are figures of this machine and its load (the load average at each start is printed):
//! printed, never asserted.
//!
//! `PQPERF_BENCH_REPEAT=N` pairs (default 2); `PQPERF_BENCH_CPU` the demo's benchmark CPU
//! (default: the demo's own choice); `PQPERF_BENCH_EXE` another `pqperf` binary (with
//! `PQPERF_DRIVER` for its driver); `PQPERF_BENCH_KEEP=1` keeps the run directories.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::Instant;

/// The demo's set (`cmd::demo::DEMO_SET`, which the binary does not export).
const SET: &str = r"^(ml-dsa-(44|65|87)/ml-dsa-(44|65|87)|falcon-512/falcon-512|sphincs-shake-128f-simple/sphincs-shake-128f-simple|ml-kem-(512|768|1024)/ml-kem-(512|768|1024)|ml-dsa-44/ml-dsa-44-avx2)$";

fn exe() -> String {
    std::env::var("PQPERF_BENCH_EXE").unwrap_or_else(|_| common::exe().to_string())
}

fn ok(args: &[&str]) -> String {
    let o = std::process::Command::new(exe())
        .args(args)
        .output()
        .expect("run pqperf");
    let t = common::text(&o);
    assert!(o.status.success(), "pqperf {args:?} failed:\n{t}");
    t
}

/// What one demo showed.
#[derive(Default, Debug)]
struct Demo {
    wall_s: f64,
    phase_s: f64,
    efficiency: f64,
    parent_s: f64,
    prepare_s: f64,
    estimate_ratio: f64,
    ends: String,
}

/// The number after `key` in `line` (`key 12.3`).
fn after(line: &str, key: &str) -> f64 {
    line.split(key)
        .nth(1)
        .and_then(|r| r.trim_start().split([' ', ',', ')']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN)
}

fn one_demo(base: &Path, dir: &Path, nice: bool, cpu: Option<&str>) -> Demo {
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(base)
        .arg(dir)
        .status()
        .expect("cp");
    assert!(st.success(), "copying the run directory failed");
    let mut cmd = std::process::Command::new(exe());
    cmd.args(["demo", "--run-dir", dir.to_str().unwrap()]);
    if let Some(c) = cpu {
        cmd.args(["--cpu", c]);
    }
    if nice {
        cmd.env("PQPERF_DEMO_BESIDE", "nice");
    } else {
        cmd.env_remove("PQPERF_DEMO_BESIDE");
    }
    let t = Instant::now();
    let o = cmd.output().expect("run pqperf demo");
    let mut d = Demo {
        wall_s: t.elapsed().as_secs_f64(),
        ..Default::default()
    };
    let out = common::text(&o);
    if !o.status.success() {
        println!(
            "demo_beside: the demo in {} exited {}",
            dir.display(),
            o.status
        );
    }
    let log = std::fs::read_to_string(dir.join("campaign.log")).unwrap_or_default();
    for l in log.lines() {
        if l.contains("measure budget:") {
            d.phase_s = after(l, "phase wall");
            d.efficiency = after(l, "efficiency");
            // The path's parts come before those beside it.
            d.parent_s = after(l, " parent ");
            d.prepare_s = after(l, " prepare ");
        }
        if l.contains("measure estimate check:") {
            d.estimate_ratio = after(l, "estimate ÷ wall");
        }
    }
    d.ends = out
        .lines()
        .filter(|l| l.contains("ended beside") || l.contains("waiting for the constant-time"))
        .map(|l| l.trim_start_matches("demo: ").trim().to_string())
        .collect::<Vec<_>>()
        .join("; ");
    d
}

fn main() {
    let repeat: usize = std::env::var("PQPERF_BENCH_REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(2)
        .max(1);
    let cpu = std::env::var("PQPERF_BENCH_CPU").ok();
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("prepared");
    let br = base.to_str().unwrap();
    let t0 = Instant::now();
    ok(&["import", "pqclean", "--run-dir", br]);
    ok(&["build", "--run-dir", br, "--only", SET]);
    ok(&["kat", "--run-dir", br, "--only", SET]);
    println!(
        "demo_beside: the demo set imported, built and KAT-checked in {:.0} s; {repeat} pair(s)",
        t0.elapsed().as_secs_f64()
    );
    for r in 1..=repeat {
        // Alternating order: (i, n), then (n, i).
        let order = if r % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        let mut got = [Demo::default(), Demo::default()];
        for nice in order {
            let name = if nice { "nice" } else { "idle" };
            let load = pqperf_ffi::procinfo::load_average()[0];
            let d = one_demo(
                &base,
                &tmp.path().join(format!("run{r}-{name}")),
                nice,
                cpu.as_deref(),
            );
            println!(
                "demo_beside: pair {r} {name:4}: demo {:.1} s; measure phase {:.1} s, efficiency {:.1} %, parent {:.1} s, prepare on the path {:.1} s; measure estimate ÷ wall {:.2}; {} (load {load:.1} at the start)",
                d.wall_s,
                d.phase_s,
                d.efficiency,
                d.parent_s,
                d.prepare_s,
                d.estimate_ratio,
                d.ends
            );
            got[usize::from(nice)] = d;
        }
        let (i, n) = (&got[0], &got[1]);
        println!(
            "demo_beside: pair {r}: idle ÷ nice: demo {:.3}, measure phase {:.3}, efficiency {:.1} % vs {:.1} %",
            i.wall_s / n.wall_s,
            i.phase_s / n.phase_s,
            i.efficiency,
            n.efficiency
        );
    }
    if std::env::var_os("PQPERF_BENCH_KEEP").is_some() {
        println!("run directories kept in {}", tmp.keep().display());
    }
}
