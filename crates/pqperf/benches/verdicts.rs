//! Verdict rates of this machine (`cargo bench -p pqperf --bench verdicts`; issue 24): K A–A
//! and K A/B comparisons with a known change, under three conditions — quiet, one CPU-bound
//! process pinned to the benchmark CPU, and that one plus two free CPU hogs — for the
//! interleaved gate (`pqperf ab`, a 10 % change) and for two separately measured runs
//! (`campaign measure` twice, then `pqperf compare`, a 25 % change). The candidate is
//! `tests/measure/toy_sig.c` built with a tunable busy loop (`-DTOY_WORK`, the same outputs):
//! `a` and `a2` do the same work (A–A), `b10` 10 % and `b25` 25 % more. Printed per
//! condition: how often an A–A pair was called faster/slower (false positives) or
//! inconclusive, and how often the change was detected (slower), missed (no change), called
//! inconclusive or called wrong (faster). These are figures of the machine and its load at
//! the time: printed, never asserted.
//!
//! `PQPERF_BENCH_K` (default 4) comparisons per cell, `PQPERF_BENCH_PAIRS` (default 10) pairs
//! at the first look and `PQPERF_BENCH_MAX_PAIRS` (default 40, `pqperf ab`'s) at most per
//! interleaved comparison, `PQPERF_BENCH_WORK` (default 20000) busy-loop rounds of `a`,
//! `PQPERF_BENCH_METHODS` (`interleaved`, `separate` or both, the default),
//! `PQPERF_BENCH_LOOP` (`store`, the default: the toy's store-and-reload busy loop, whose
//! speed on a shared VM switches between processes; `register`: a multiply chain in a
//! register, like most cryptographic code),
//! `PQPERF_BENCH_SEPARATE` (`target-ci`, the default: separate runs with the campaigns'
//! default protocol, many short processes; `reference`: five processes) and
//! `PQPERF_BENCH_CONDITIONS` (a comma list of `quiet`, `pinned`, `heavy`; default all) narrow
//! what runs, and `PQPERF_BENCH_KEEP=<dir>` keeps every run directory and comparison there
//! (to read the evidence of a surprising verdict afterwards).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};
use serde_json::Value;

fn env_usize(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// A run directory with `lib/sign-90/lib<label>.so` of toy_sig.c at the given work.
fn setup_run(run: &Path, libs: &[(&str, usize)]) {
    let toys: Vec<Lib> = libs
        .iter()
        .map(|(l, w)| {
            let mut args = vec![format!("-DTOY_WORK={w}")];
            if std::env::var("PQPERF_BENCH_LOOP").as_deref() == Ok("register") {
                args.push("-DTOY_WORK_REGISTER".into());
            }
            Lib::new("sign-90", l).args(&args)
        })
        .collect();
    let mut bj = toy_run(run, "toy_sig.c", TOY_SIG, &toys);
    for (label, work) in libs {
        if let Some(e) = bj.instances.get_mut(&format!("sign-90/{label}")) {
            e.library_sha256 = Some(format!("work-{work}"));
        }
    }
    write_build_json(run, &bj);
}

/// CPU-bound co-runners, killed (by their ids) when dropped.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start(pinned: Option<usize>, free: usize) -> Hogs {
        let mut v = Vec::new();
        if let Some(cpu) = pinned {
            v.push(
                Command::new("taskset")
                    .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                    .spawn()
                    .expect("taskset"),
            );
        }
        for _ in 0..free {
            v.push(
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("sh"),
            );
        }
        Hogs(v)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn pqperf(tmp: &Path) -> Command {
    let mut c = Command::new(common::exe());
    c.env(pqperf_campaign::lease::LEASE_DIR_ENV, tmp);
    c
}

fn json_of(c: &mut Command) -> Value {
    let o = c.output().expect("pqperf");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// One interleaved comparison: the verdict of `sign`.
fn interleaved(
    tmp: &Path,
    run: &Path,
    map: &str,
    cpu: usize,
    (pairs, max_pairs): (usize, usize),
    seed: u64,
) -> String {
    let out = tmp.join(format!("ab-{map}-{seed}.json"));
    let v = json_of(
        pqperf(tmp)
            .arg("ab")
            .arg(run)
            .arg(run)
            .args(["--map", map, "--op", "sign", "--trial-target", "0.01"])
            .args(["--pairs", &pairs.to_string(), "--seed", &seed.to_string()])
            .args(["--max-pairs", &max_pairs.to_string()])
            .args([
                "--cpu",
                &cpu.to_string(),
                "--probe-attempts",
                "1",
                "--json",
                "--out",
            ])
            .arg(&out),
    );
    v["units"][0]["result"]["verdict"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

/// How a separate run is measured: the campaigns' default (`--target-ci 1`: many short
/// trials, one fresh process each, within the budget the reference protocol would spend at
/// a 1 s trial target) or the reference protocol (five processes, `--trial-target 0.01`).
fn separate_protocol() -> Vec<&'static str> {
    match std::env::var("PQPERF_BENCH_SEPARATE").as_deref() {
        Ok("reference") => vec!["--trial-target", "0.01"],
        // One stream key for every separate run, so that `compare` pairs their streams.
        _ => vec!["--target-ci", "1", "--stream-key", bench_key()],
    }
}

/// The stream key of this benchmark's separate runs (drawn once).
fn bench_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        pqperf_model::stream::key_hex(&pqperf_model::stream::fresh_key().expect("/dev/urandom"))
    })
}

/// A fresh copy of the template run directory holding only `label`, measured once.
fn separate(tmp: &Path, template: &Path, label: &str, cpu: usize, n: &mut usize) -> PathBuf {
    *n += 1;
    let run = tmp.join(format!("sep-{n}"));
    let st = Command::new("cp")
        .arg("-r")
        .arg(template)
        .arg(&run)
        .status()
        .unwrap();
    assert!(st.success());
    for phase in ["calibrate", "measure"] {
        let o = pqperf(tmp)
            .args(["campaign", phase, "--run-dir"])
            .arg(&run)
            .args(["--only", &format!("^sign-90/{label}$")])
            .args(["--cpu", &cpu.to_string()])
            .args(separate_protocol())
            .args(["--allow-unfixed-host", "--probe-attempts", "1"])
            .args([
                "--register",
                "benchmark machine (host not fixed)",
                "--systems",
            ])
            .arg(tmp.join("systems.csv"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    run
}

/// `pqperf compare --json` of `a` and `b`: the verdict of `sign` (the whole comparison is kept
/// beside `b` as `compare-<map>.json`).
fn compared(tmp: &Path, a: &Path, b: &Path, map: &str) -> String {
    let v = json_of(
        pqperf(tmp)
            .arg("compare")
            .arg(a)
            .arg(b)
            .args(["--map", map, "--json"]),
    );
    let _ = std::fs::write(
        b.join(format!("compare-{}.json", map.replace('=', "-"))),
        serde_json::to_string_pretty(&v).unwrap_or_default(),
    );
    let row = v["rows"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["op"] == "sign"))
        .cloned()
        .unwrap_or(Value::Null);
    let verdict = row["verdict"].as_str().unwrap_or("?").to_string();
    eprintln!(
        "  separate {map}: {verdict}, ratio {:.3} [{:.3}, {:.3}], processes {}, {} interval, spread {}",
        row["ratio"].as_f64().unwrap_or(f64::NAN),
        row["ratio_ci_low"].as_f64().unwrap_or(f64::NAN),
        row["ratio_ci_high"].as_f64().unwrap_or(f64::NAN),
        row["processes"],
        row["process_ci_method"].as_str().unwrap_or("no"),
        row["process_spread"]
    );
    verdict
}

fn tally(v: &[String]) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for x in v {
        *m.entry(x.as_str()).or_default() += 1;
    }
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    format!(
        "slower {}/{n}, faster {}/{n}, no change {}/{n}, inconclusive {}/{n}",
        get("slower"),
        get("faster"),
        get("no_change"),
        get("inconclusive"),
        n = v.len()
    )
}

fn main() {
    let k = env_usize("PQPERF_BENCH_K", 4);
    let pairs = (
        env_usize("PQPERF_BENCH_PAIRS", 10),
        env_usize("PQPERF_BENCH_MAX_PAIRS", 40),
    );
    let work = env_usize("PQPERF_BENCH_WORK", 20_000);
    let methods = std::env::var("PQPERF_BENCH_METHODS").unwrap_or_default();
    let (do_inter, do_sep) = match methods.as_str() {
        "interleaved" => (true, false),
        "separate" => (false, true),
        _ => (true, true),
    };
    let wanted = std::env::var("PQPERF_BENCH_CONDITIONS").unwrap_or_default();
    let keep = std::env::var_os("PQPERF_BENCH_KEEP").map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let t = match &keep {
        Some(d) => {
            std::fs::create_dir_all(d).unwrap();
            d.as_path()
        }
        None => tmp.path(),
    };
    let cpu = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap();
    let inter = t.join("inter");
    setup_run(
        &inter,
        &[
            ("a", work),
            ("a2", work),
            ("b10", work * 110 / 100),
            ("b25", work * 125 / 100),
        ],
    );
    let template = t.join("template");
    setup_run(&template, &[("a", work), ("b25", work * 125 / 100)]);
    println!(
        "verdicts: K = {k} comparisons per cell, {} to {} pairs per interleaved comparison, separate runs {}, TOY_WORK {work} ({} loop; b10 +10 %, b25 +25 %), CPU {cpu}, load at start {:?}",
        pairs.0,
        pairs.1,
        separate_protocol().join(" "),
        std::env::var("PQPERF_BENCH_LOOP").unwrap_or_else(|_| "store".into()),
        pqperf_ffi::procinfo::load_average()
    );
    let mut n = 0usize;
    let conditions: [(&str, &str, Option<usize>, usize); 3] = [
        ("quiet", "quiet", None, 0),
        ("pinned", "pinned hog", Some(cpu), 0),
        ("heavy", "heavy (3 hogs)", Some(cpu), 2),
    ];
    let mut rows = Vec::new();
    for (key, name, pinned, free) in conditions {
        if !wanted.is_empty() && !wanted.split(',').any(|w| w.trim() == key) {
            continue;
        }
        let t0 = std::time::Instant::now();
        let _hogs = Hogs::start(pinned, free);
        let mut ia = Vec::new();
        let mut ib = Vec::new();
        let mut sa = Vec::new();
        let mut sb = Vec::new();
        for i in 0..k {
            let seed = 1000 + i as u64;
            if do_inter {
                ia.push(interleaved(t, &inter, "a=a2", cpu, pairs, seed));
                ib.push(interleaved(t, &inter, "a=b10", cpu, pairs, seed));
            }
            if do_sep {
                let x = separate(t, &template, "a", cpu, &mut n);
                let y = separate(t, &template, "a", cpu, &mut n);
                sa.push(compared(t, &x, &y, "a=a"));
                let z = separate(t, &template, "b25", cpu, &mut n);
                sb.push(compared(t, &x, &z, "a=b25"));
            }
        }
        println!(
            "{name} ({:.0} s, load now {:?}):\n  interleaved A–A:      {}\n  interleaved +10 %:    {}\n  separate runs A–A:    {}\n  separate runs +25 %:  {}",
            t0.elapsed().as_secs_f64(),
            pqperf_ffi::procinfo::load_average(),
            tally(&ia),
            tally(&ib),
            tally(&sa),
            tally(&sb)
        );
        let fp = |v: &[String]| {
            v.iter()
                .filter(|x| *x == "slower" || *x == "faster")
                .count()
        };
        let det = |v: &[String]| v.iter().filter(|x| *x == "slower").count();
        let faster = |v: &[String]| v.iter().filter(|x| *x == "faster").count();
        // A method that did not run shows "–", not 0 of K.
        let cell = |v: &[String], n: usize| {
            if v.is_empty() {
                "–".to_string()
            } else {
                format!("{n}/{}", v.len())
            }
        };
        rows.push(format!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            cell(&ia, fp(&ia)),
            cell(&ib, det(&ib)),
            cell(&ib, faster(&ib)),
            cell(&sa, fp(&sa)),
            cell(&sb, det(&sb)),
            cell(&sb, faster(&sb)),
        ));
    }
    println!(
        "\n| condition | interleaved A–A called faster/slower | interleaved +10 % detected | interleaved +10 % called faster | separate A–A called faster/slower | separate +25 % detected | separate +25 % called faster |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!("{r}");
    }
}
