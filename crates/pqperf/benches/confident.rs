//! Time to confident numbers (`cargo bench -p pqperf --bench confident`): a fixed set of
//! PQClean instances (KEM and signature; fast and slow operations) imported, built and
//! KAT-checked once, then calibrated and measured on the same CPU back to back, each in its
//! own copy of the run directory (the same library files): (a) the reference protocol
//! (`--trial-target 1.0`) with the reference's fixed seed (every process the same calls:
//! parity with the reference harness), (a') the same protocol with every process its own
//! input stream (`--independent-streams`), and (b) `--target-ci 1`. Prints the wall time of
//! each and the ratio b/a, the operations whose robust interval is within ±1 % in each, per
//! operation the ratio of the robust estimates b/a' with whether the two intervals agree
//! (both on independent streams: the comparison issue 41 asks for) and (b)'s plan (estimator,
//! processes × calls per trial, why it stopped, seconds spent of its budget), the same
//! against (a) (the fixed-seed parity figure), the share of driver processes that were
//! re-runs, and per run and at the end whether (b) has at least as many operations within
//! ±1 % as (a') and as (a). Per operation it also prints each side's processes and the
//! coefficient of variation between their fenced means (what the interval is made of), and
//! per run the median of that spread and why (b)'s operations outside ±1 % stopped. These
//! are figures of this machine and its load: printed, never asserted.
//!
//! `PQPERF_BENCH_REPEAT=N` repeats the three campaigns N times (fresh copies each run);
//! `PQPERF_BENCH_PARITY=0` leaves (a) out; `PQPERF_BENCH_SET` replaces the instance regex
//! (searched in `<id>/<label>`); `PQPERF_BENCH_ORDER=ba` runs (b) first,
//! `PQPERF_BENCH_ORDER=interleave` one instance at a time on every side in turn (the order
//! reversed for every other instance, the walls summed: a host phase then falls on both
//! sides alike; the set must be of the form `^(a|b|…)$`); `PQPERF_BENCH_CPU`
//! the CPU (default: the last this process may use; the campaigns wait while another pqperf
//! leases it); `PQPERF_BENCH_EXE` names another `pqperf` binary (with `PQPERF_DRIVER` for its
//! driver: a copy keeps a rebuild from changing a running benchmark); `PQPERF_BENCH_KEEP=1`
//! keeps the run directories (their path is printed).

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
/// half-width), the plan's decisions, plus attempts and re-runs over all records.
#[derive(Default)]
struct Figures {
    ops: BTreeMap<String, (f64, f64)>,
    /// Per operation: processes with samples and the coefficient of variation between their
    /// fenced means (the spread the robust interval is made of).
    spread: BTreeMap<String, (usize, f64)>,
    /// Per operation: why `--target-ci` stopped adding processes.
    stopped: BTreeMap<String, String>,
    /// Per operation: estimator, processes × calls per trial, and for `--target-ci` why it
    /// stopped with its seconds spent of its budget.
    plans: BTreeMap<String, String>,
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
                f.ops.insert(key.clone(), (e, h));
            }
            if let Some(spread) = between_processes(&pq["robust"]) {
                f.spread.insert(key.clone(), spread);
            }
            let ad = &pq["adaptive"];
            if let Some(why) = ad["stopped"].as_str() {
                f.stopped.insert(key.clone(), why.to_string());
            }
            let mut plan = format!(
                "{} {} × {}",
                pq["robust"]["estimator"].as_str().unwrap_or("-"),
                v["plan"]["trials"].as_u64().unwrap_or(0),
                v["plan"]["iterations_per_trial"].as_u64().unwrap_or(0)
            );
            if let Some(why) = ad["stopped"].as_str() {
                plan.push_str(&format!(
                    ", {why} after {:.1} s of {:.1} s",
                    ad["spent_s"].as_f64().unwrap_or(f64::NAN),
                    ad["budget_s"].as_f64().unwrap_or(f64::NAN)
                ));
            }
            f.plans.insert(key, plan);
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

/// The processes of a record's robust samples and the coefficient of variation of their
/// fenced means (`mean_robust_v3`'s per-process figure).
fn between_processes(robust: &Value) -> Option<(usize, f64)> {
    let means: Vec<f64> = robust["samples"]
        .as_array()?
        .iter()
        .filter_map(|t| {
            let mut calls: Vec<u64> = t
                .as_str()?
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            pqperf_model::robust::Estimator::Fenced.of(&mut calls)
        })
        .collect();
    let n = means.len();
    if n < 2 {
        return Some((n, f64::NAN));
    }
    let mu = means.iter().sum::<f64>() / n as f64;
    let var = means.iter().map(|m| (m - mu) * (m - mu)).sum::<f64>() / (n - 1) as f64;
    Some((n, var.sqrt() / mu))
}

/// Calibrates and measures `run` on `cpu` with the protocol's options; returns
/// (calibrate + measure, measure) wall seconds, less the time the campaigns waited for the
/// CPU's lease while another pqperf held it (their log's `waited N s`: printed when any).
fn campaign(run: &Path, cpu: usize, systems: &Path, protocol: &[&str]) -> (f64, f64) {
    let cpus = cpu.to_string();
    let t0 = Instant::now();
    let mut tm = 0.0;
    let mut waited = 0.0;
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
        let text = common::text(&o);
        let wait: f64 = text.lines().filter_map(lease_wait_s).sum();
        if wait > 0.0 {
            println!(
                "  {}: {phase} waited {wait:.1} s for CPU {cpu}'s lease (left out of its wall time)",
                run.file_name().unwrap().to_string_lossy()
            );
            waited += wait;
        }
        if phase == "measure" {
            tm = t.elapsed().as_secs_f64() - wait;
        }
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
    (t0.elapsed().as_secs_f64() - waited, tm)
}

/// The seconds a campaign log line says it waited for a CPU lease (`… waited 21.3 s; …`).
fn lease_wait_s(line: &str) -> Option<f64> {
    if !line.contains("lease CPU") {
        return None;
    }
    let rest = &line[line.find("waited ")? + "waited ".len()..];
    rest.split(" s").next()?.trim().parse().ok()
}

/// Operations whose robust interval is within ±`pct` %.
fn within(f: &Figures, pct: f64) -> usize {
    f.ops.values().filter(|(_, h)| *h <= pct / 100.0).count()
}

/// One protocol's summary line.
fn summary(name: &str, w: (f64, f64), f: &Figures) {
    println!(
        "{name}: calibrate+measure {:.1} s (measure {:.1} s), {} of {} operations within ±1 %, re-runs {} of {} driver processes ({:.1} %), {} disturbed; protocols {:?}",
        w.0,
        w.1,
        within(f, 1.0),
        f.ops.len(),
        f.reruns,
        f.attempts,
        100.0 * f.reruns as f64 / f.attempts.max(1) as f64,
        f.disturbed,
        f.protocols
    );
}

/// Whether the intervals [e(1−h), e(1+h)] of two estimates overlap.
fn overlap((ea, ha): (f64, f64), (eb, hb): (f64, f64)) -> bool {
    eb * (1.0 - hb) <= ea * (1.0 + ha) && ea * (1.0 - ha) <= eb * (1.0 + hb)
}

/// Prints, per operation, (b) against `a`: the ratio of the robust estimates b/a, the
/// half-widths and whether the intervals agree; returns (agree, compared, median ratio).
fn against(a: &Figures, b: &Figures, plans: bool) -> (usize, usize, f64) {
    let (mut agree, mut n, mut ratios) = (0, 0, Vec::new());
    for (k, &ra) in &a.ops {
        let Some(&rb) = b.ops.get(k) else {
            println!("  {k}: no robust estimate in (b)");
            continue;
        };
        let r = rb.0 / ra.0;
        let ok = overlap(ra, rb);
        n += 1;
        agree += usize::from(ok);
        ratios.push(r);
        let plan = if plans {
            format!(
                "   (b) {}",
                b.plans.get(k).map(String::as_str).unwrap_or("-")
            )
        } else {
            String::new()
        };
        let spread = |f: &Figures| {
            f.spread.get(k).map_or("-".to_string(), |(n, cv)| {
                format!("{n} cv {:.2} %", cv * 100.0)
            })
        };
        println!(
            "  {k}: {r:.4}  ±{:.2} % / ±{:.2} %  {}  processes {} / {}{plan}",
            ra.1 * 100.0,
            rb.1 * 100.0,
            if ok { "agree" } else { "DIFFER" },
            spread(a),
            spread(b)
        );
    }
    ratios.sort_by(f64::total_cmp);
    let med = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
    (agree, n, med)
}

/// The instances of a set of the form `^(a|b|…)$` (the default [`SET`]); `None` otherwise
/// or for one instance.
fn instances_of(set: &str) -> Option<Vec<&str>> {
    let v: Vec<&str> = set
        .strip_prefix("^(")?
        .strip_suffix(")$")?
        .split('|')
        .collect();
    (v.len() > 1).then_some(v)
}

/// One run's counts within ±1 %: (a) fixed seed (when run), (a') independent streams, (b).
struct RunCounts {
    parity: Option<usize>,
    streams: usize,
    target: usize,
    of: usize,
    ratio: f64,
}

/// One run of the benchmark: the prepared run directory `base` copied once per protocol,
/// each calibrated and measured on `cpu`.
fn one_run(base: &Path, tmp: &Path, run: usize, cpu: usize, set: &str) -> RunCounts {
    let dir = |name: &str| tmp.join(format!("run{run}-{name}"));
    let (a, s, b) = (dir("reference"), dir("reference-streams"), dir("target-ci"));
    let systems = tmp.join("systems.csv");
    let parity = std::env::var("PQPERF_BENCH_PARITY").map_or(true, |v| v != "0");
    for d in [&a, &s, &b] {
        if d == &a && !parity {
            continue;
        }
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(base)
            .arg(d)
            .status()
            .expect("cp");
        assert!(st.success(), "copying the run directory failed");
    }
    // (a) the reference protocol as the reference harness runs it (its fixed public seed:
    // every process the same calls); (a') the same protocol with every process its own input
    // stream (`--independent-streams`), the comparison the issue asks for; (b) --target-ci 1.
    let reference: &[&str] = &["--only", set, "--trial-target", "1.0"];
    let streams: &[&str] = &[
        "--only",
        set,
        "--trial-target",
        "1.0",
        "--independent-streams",
    ];
    let target: &[&str] = &["--only", set, "--target-ci", "1"];
    let mut order: Vec<(&Path, &[&str])> = Vec::new();
    if parity {
        order.push((&a, reference));
    }
    order.push((&s, streams));
    order.push((&b, target));
    let how = std::env::var("PQPERF_BENCH_ORDER").unwrap_or_default();
    if how == "ba" {
        order.reverse();
    }
    // `interleave`: one instance at a time, every side in turn (the order reversed for every
    // other instance), so that a host phase falls on both sides alike instead of on the one
    // campaign that ran through it.
    let segments: Vec<String> = match instances_of(set) {
        Some(v) if how == "interleave" => v.iter().map(|i| format!("^({i})$")).collect(),
        _ => vec![set.to_string()],
    };
    let mut walls: BTreeMap<&Path, (f64, f64)> = BTreeMap::new();
    for (i, seg) in segments.iter().enumerate() {
        let mut order = order.clone();
        if i % 2 == 1 {
            order.reverse();
        }
        for (d, proto) in &order {
            let args: Vec<&str> = proto
                .iter()
                .map(|a| if *a == set { seg.as_str() } else { *a })
                .collect();
            println!(
                "  {} starts{} (load {:.2})",
                d.file_name().unwrap().to_string_lossy(),
                if segments.len() > 1 {
                    format!(" {seg}")
                } else {
                    String::new()
                },
                pqperf_ffi::procinfo::load_average()[0]
            );
            let w = campaign(d, cpu, &systems, &args);
            let sum = walls.entry(*d).or_default();
            sum.0 += w.0;
            sum.1 += w.1;
        }
    }
    let (fa, fs, fb) = (parity.then(|| figures(&a)), figures(&s), figures(&b));
    let (ws, wb) = (walls[s.as_path()], walls[b.as_path()]);
    println!("run {run}:");
    if let Some(fa) = &fa {
        summary(
            "(a)  reference protocol, fixed seed",
            walls[a.as_path()],
            fa,
        );
    }
    summary("(a') reference protocol, independent streams", ws, &fs);
    summary("(b)  --target-ci 1", wb, &fb);
    let wa = fa.as_ref().map_or(ws, |_| walls[a.as_path()]);
    println!(
        "wall time b/a: {:.3} (calibrate+measure), {:.3} (measure only); b/a': {:.3}, {:.3}",
        wb.0 / wa.0,
        wb.1 / wa.1.max(1e-9),
        wb.0 / ws.0,
        wb.1 / ws.1.max(1e-9)
    );
    println!(
        "per operation, (b) against (a'), both on independent streams: robust estimate b/a', half-widths a' / b, intervals agree; (b)'s plan"
    );
    let (agree, n, med) = against(&fs, &fb, true);
    println!(
        "intervals agree (b vs a', independent streams) for {agree} of {n} operations; median ratio {med:.4}"
    );
    limits(&fs, &fb);
    if let Some(fa) = &fa {
        println!(
            "per operation, (b) against (a), the reference's fixed seed (parity: one fixed sample of the calls, so a variable-time operation's interval is not the spread between streams)"
        );
        let (agree, n, med) = against(fa, &fb, false);
        println!(
            "intervals agree (b vs a, fixed seed) for {agree} of {n} operations; median ratio {med:.4}"
        );
    }
    let counts = RunCounts {
        parity: fa.as_ref().map(|f| within(f, 1.0)),
        streams: within(&fs, 1.0),
        target: within(&fb, 1.0),
        of: fb.ops.len(),
        ratio: wb.0 / wa.0,
    };
    println!(
        "run {run}: within ±1 %: (a) {} / (a') {} / (b) {} of {}; (b) ≥ (a'): {}; (b) ≥ (a): {}; wall b/a {:.3}",
        counts.parity.map_or("-".to_string(), |c| c.to_string()),
        counts.streams,
        counts.target,
        counts.of,
        yes(counts.target >= counts.streams),
        counts.parity.map_or("-", |c| yes(counts.target >= c)),
        counts.ratio
    );
    counts
}

/// What kept (b)'s operations outside ±1 %: per reason (why (b) stopped), how many, and the
/// median between-process spread of each side (the host's share: with 8 processes the
/// interval is ≈ 1.5 × that spread, with 5 ≈ 3.2 ×).
fn limits(fs: &Figures, fb: &Figures) {
    let median = |f: &Figures| {
        let mut v: Vec<f64> = f
            .spread
            .values()
            .map(|s| s.1)
            .filter(|c| c.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).map_or(f64::NAN, |c| c * 100.0)
    };
    let mut why: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, &(_, h)) in &fb.ops {
        if h > 0.01 {
            *why.entry(fb.stopped.get(k).map_or("-", String::as_str))
                .or_default() += 1;
        }
    }
    println!(
        "between-process spread (cv of the processes' fenced means), median over operations: (a') {:.2} %, (b) {:.2} %; (b) outside ±1 % by why it stopped: {why:?}",
        median(fs),
        median(fb)
    );
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "NO" }
}

fn main() {
    let set = std::env::var("PQPERF_BENCH_SET").unwrap_or_else(|_| SET.to_string());
    let repeat: usize = std::env::var("PQPERF_BENCH_REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1);
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("prepared");
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
    let br = base.to_str().unwrap();
    ok(&["import", "pqclean", "--run-dir", br]);
    ok(&["build", "--run-dir", br, "--only", &set]);
    let kat = ok(&["kat", "--run-dir", br, "--only", &set]);
    if kat.contains("FAIL") {
        println!("confident: a KAT did not pass:\n{kat}");
    }
    println!(
        "confident: {set} imported, built and KAT-checked in {:.0} s; CPU {cpu}; {repeat} run(s)",
        t0.elapsed().as_secs_f64()
    );
    let runs: Vec<RunCounts> = (1..=repeat)
        .map(|r| one_run(&base, tmp.path(), r, cpu, &set))
        .collect();
    if std::env::var_os("PQPERF_BENCH_KEEP").is_some() {
        println!("run directories kept in {}", tmp.keep().display());
    }
    let all = |f: &dyn Fn(&RunCounts) -> Option<bool>| {
        let v: Vec<bool> = runs.iter().filter_map(f).collect();
        if v.is_empty() {
            "-"
        } else {
            yes(v.iter().all(|b| *b))
        }
    };
    println!(
        "confident: {} run(s); within ±1 % (a)/(a')/(b): {}; wall b/a {}; (b) ≥ (a') in every run: {}; (b) ≥ (a) in every run: {}",
        runs.len(),
        runs.iter()
            .map(|c| format!(
                "{}/{}/{}",
                c.parity.map_or("-".to_string(), |p| p.to_string()),
                c.streams,
                c.target
            ))
            .collect::<Vec<_>>()
            .join(", "),
        runs.iter()
            .map(|c| format!("{:.3}", c.ratio))
            .collect::<Vec<_>>()
            .join(", "),
        all(&|c| Some(c.target >= c.streams)),
        all(&|c| c.parity.map(|p| c.target >= p)),
    );
}
