//! Time to confident numbers (`cargo bench -p pqperf --bench confident`): a fixed set of
//! PQClean instances (KEM and signature; fast and slow operations) imported, built and
//! KAT-checked once, then calibrated and measured on the same CPU back to back, (a) with the
//! reference protocol (`--trial-target 1.0`, no adaptive stopping) and (b) with
//! `--target-ci 1`, each in its own copy of the run directory (the same library files).
//! Prints the wall time of each and the ratio b/a, the share of operations whose robust
//! interval is within ±1 % in each, the per-operation ratio of the robust estimates b/a with
//! whether the two intervals agree, and the share of driver processes that were re-runs.
//! These are figures of this machine and its load: printed, never asserted.
//!
//! `PQPERF_BENCH_SET` replaces the instance regex (searched in `<id>/<label>`);
//! `PQPERF_BENCH_ORDER=ba` runs (b) first; `PQPERF_BENCH_CPU` the CPU (default: the last
//! this process may use; the campaigns wait while another pqperf leases it); `PQPERF_BENCH_EXE` names another `pqperf` binary
//! (with `PQPERF_DRIVER` for its driver: a copy keeps a rebuild from changing a running
//! benchmark); `PQPERF_BENCH_KEEP=1` keeps both run directories (their path is printed).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

/// ML-KEM-512/768 (fast), ML-DSA-44/65, Falcon-512 (slow keygen), SPHINCS+-SHAKE-128f
/// (slow sign): 6 instances, 18 operations.
const SET: &str = r"^(ml-kem-512/ml-kem-512|ml-kem-768/ml-kem-768|ml-dsa-44/ml-dsa-44|ml-dsa-65/ml-dsa-65|falcon-512/falcon-512|sphincs-shake-128f-simple/sphincs-shake-128f-simple)$";

/// What one protocol's records say, per `<id>/<label>/<op>`: (robust estimate s, relative
/// half-width), plus attempts and re-runs over all records.
#[derive(Default)]
struct Figures {
    ops: BTreeMap<String, (f64, f64)>,
    attempts: usize,
    reruns: usize,
    disturbed: usize,
    protocols: BTreeMap<String, usize>,
}

/// Runs the benchmarked pqperf (`PQPERF_BENCH_EXE`, else the one cargo built).
fn pqperf(args: &[&str]) -> std::process::Output {
    let exe = std::env::var("PQPERF_BENCH_EXE").unwrap_or_else(|_| common::exe().to_string());
    std::process::Command::new(exe)
        .args(args)
        .output()
        .expect("run pqperf")
}

/// [`pqperf`], stopping the benchmark with its output when it fails.
fn ok(args: &[&str]) -> String {
    let o = pqperf(args);
    let t = common::text(&o);
    assert!(o.status.success(), "pqperf {args:?} failed:\n{t}");
    t
}

fn figures(run: &Path) -> Figures {
    let mut f = Figures::default();
    let Ok(cands) = std::fs::read_dir(run.join("records")) else {
        return f;
    };
    for c in cands.flatten() {
        for r in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
            let Ok(text) = std::fs::read_to_string(r.path()) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let pq = &v["pqperf"];
            let key = format!(
                "{}/{}/{}",
                v["candidate"].as_str().unwrap_or("?"),
                v["label"].as_str().unwrap_or("?"),
                v["operation"].as_str().unwrap_or("?")
            );
            let key = match v["input_bytes"].as_u64() {
                Some(b) if b > 0 => format!("{key}_{b}"),
                _ => key,
            };
            if let (Some(e), Some(h)) = (
                pq["robust"]["estimate_seconds"].as_f64(),
                pq["robust"]["ci_half_width_rel"].as_f64(),
            ) {
                f.ops.insert(key, (e, h));
            }
            *f.protocols
                .entry(pq["protocol"].as_str().unwrap_or("unrecorded").to_string())
                .or_default() += 1;
            for a in pq["attempts"].as_array().into_iter().flatten() {
                f.attempts += 1;
                f.reruns += usize::from(a["attempt"].as_u64().unwrap_or(0) > 0);
                f.disturbed += usize::from(a["disturbed"].as_bool() == Some(true));
            }
        }
    }
    f
}

/// Calibrates and measures `run` on `cpu` with the protocol's options; returns
/// (calibrate + measure, measure) wall seconds.
fn campaign(run: &Path, cpu: usize, systems: &Path, protocol: &[&str]) -> (f64, f64) {
    let cpus = cpu.to_string();
    let t0 = Instant::now();
    let mut tm = 0.0;
    for phase in ["calibrate", "measure"] {
        let mut a = vec![
            "campaign",
            phase,
            "--run-dir",
            run.to_str().unwrap(),
            "--cpu",
            &cpus,
            "--allow-unfixed-host",
            "--probe-attempts",
            "1",
            "--register",
            "benchmark machine (host not fixed)",
            "--systems",
            systems.to_str().unwrap(),
        ];
        a.extend_from_slice(protocol);
        let t = Instant::now();
        let o = pqperf(&a);
        if phase == "measure" {
            tm = t.elapsed().as_secs_f64();
        }
        let text = common::text(&o);
        for l in text
            .lines()
            .filter(|l| l.contains("driver processes:") || l.contains("disturbed every"))
        {
            println!("  {}: {l}", run.file_name().unwrap().to_string_lossy());
        }
        if !o.status.success() {
            println!(
                "  {phase} of {} exited {:?} (figures below are what it recorded)",
                run.display(),
                o.status.code()
            );
        }
    }
    (t0.elapsed().as_secs_f64(), tm)
}

fn share_within(f: &Figures, pct: f64) -> String {
    let n = f.ops.values().filter(|(_, h)| *h <= pct / 100.0).count();
    format!("{n} of {}", f.ops.len())
}

fn main() {
    let set = std::env::var("PQPERF_BENCH_SET").unwrap_or_else(|_| SET.to_string());
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("reference");
    let b = tmp.path().join("target-ci");
    let systems = tmp.path().join("systems.csv");
    let cpu = std::env::var("PQPERF_BENCH_CPU")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| {
            pqperf_ffi::affinity::get_affinity()
                .unwrap()
                .last()
                .copied()
                .unwrap()
        });
    let t0 = Instant::now();
    let ar = a.to_str().unwrap();
    ok(&["import", "pqclean", "--run-dir", ar]);
    ok(&["build", "--run-dir", ar, "--only", &set]);
    let kat = ok(&["kat", "--run-dir", ar, "--only", &set]);
    if kat.contains("FAIL") {
        println!("confident: a KAT did not pass:\n{kat}");
    }
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(&a)
        .arg(&b)
        .status()
        .expect("cp");
    assert!(st.success(), "copying the run directory failed");
    println!(
        "confident: {set} imported, built and KAT-checked in {:.0} s; CPU {cpu}",
        t0.elapsed().as_secs_f64()
    );
    let reference: &[&str] = &["--only", &set, "--trial-target", "1.0"];
    let target: &[&str] = &["--only", &set, "--target-ci", "1"];
    let ba = std::env::var("PQPERF_BENCH_ORDER").is_ok_and(|v| v == "ba");
    let (wa, wb) = if ba {
        let wb = campaign(&b, cpu, &systems, target);
        (campaign(&a, cpu, &systems, reference), wb)
    } else {
        let wa = campaign(&a, cpu, &systems, reference);
        (wa, campaign(&b, cpu, &systems, target))
    };
    let (fa, fb) = (figures(&a), figures(&b));
    println!(
        "(a) reference protocol: calibrate+measure {:.1} s (measure {:.1} s), {} operations within ±1 %, re-runs {} of {} driver processes ({:.1} %), {} disturbed; protocols {:?}",
        wa.0,
        wa.1,
        share_within(&fa, 1.0),
        fa.reruns,
        fa.attempts,
        100.0 * fa.reruns as f64 / fa.attempts.max(1) as f64,
        fa.disturbed,
        fa.protocols
    );
    println!(
        "(b) --target-ci 1:      calibrate+measure {:.1} s (measure {:.1} s), {} operations within ±1 %, re-runs {} of {} driver processes ({:.1} %), {} disturbed; protocols {:?}",
        wb.0,
        wb.1,
        share_within(&fb, 1.0),
        fb.reruns,
        fb.attempts,
        100.0 * fb.reruns as f64 / fb.attempts.max(1) as f64,
        fb.disturbed,
        fb.protocols
    );
    println!(
        "wall time b/a: {:.3} (calibrate+measure), {:.3} (measure only)",
        wb.0 / wa.0,
        wb.1 / wa.1.max(1e-9)
    );
    println!("per operation: robust estimate b/a, half-widths a / b, intervals agree");
    let mut agree = 0;
    let mut n = 0;
    let mut ratios = Vec::new();
    for (k, (ea, ha)) in &fa.ops {
        let Some((eb, hb)) = fb.ops.get(k) else {
            println!("  {k}: no robust estimate in (b)");
            continue;
        };
        let r = eb / ea;
        // The intervals [e(1-h), e(1+h)] overlap.
        let ok = eb * (1.0 - hb) <= ea * (1.0 + ha) && ea * (1.0 - ha) <= eb * (1.0 + hb);
        n += 1;
        agree += usize::from(ok);
        ratios.push(r);
        println!(
            "  {k}: {r:.4}  ±{:.2} % / ±{:.2} %  {}",
            ha * 100.0,
            hb * 100.0,
            if ok { "agree" } else { "DIFFER" }
        );
    }
    for (k, v, proto) in [("(a)", &a, reference), ("(b)", &b, target)] {
        let mut args = vec!["campaign", "plan", "--run-dir", v.to_str().unwrap()];
        args.extend_from_slice(proto);
        let pl = pqperf(&args);
        for l in String::from_utf8_lossy(&pl.stdout).lines().take(1) {
            println!("campaign plan {k} after the run: {l}");
        }
    }
    if std::env::var_os("PQPERF_BENCH_KEEP").is_some() {
        println!("run directories kept in {}", tmp.keep().display());
    }
    ratios.sort_by(f64::total_cmp);
    let med = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    println!("intervals agree for {agree} of {n} operations; median ratio b/a {med:.4}");
}
