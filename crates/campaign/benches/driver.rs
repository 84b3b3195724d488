//! Driver-overhead benchmark (`cargo bench -p pqperf-campaign --bench driver`).
//!
//! Builds a tiny C signature library whose operations return at once (gcc), then prints:
//! * ticks per call of the reference trials without samples and with samples (the sampled
//!   trials are separate, so both must agree: asserted within 1 ns per call), of the sampled
//!   trials (one counter read after every call) and the difference, the sampling cost, with
//!   the median per-call delta;
//! * the baseline RSS of the lean driver executable `pqperf-driver` next to that of the same
//!   driver code running inside a large Rust executable (this benchmark binary, as the former
//!   `pqperf driver` subcommand ran inside `pqperf`), on the same do-nothing library, and by
//!   hand with and without its start-up trim of its own pages (`crates/driver/c/lean.c`);
//! * ticks per call of the empty keygen, sign and verify loops of `pqperf-driver` beside those
//!   of a reference-shaped C loop this benchmark compiles itself (dlopen, the operation called
//!   in a counted loop between two TSC reads, return code checked), in alternating rounds;
//! * the campaign efficiency (Σ timed seconds ÷ wall seconds of the calibrate + measure
//!   phases) of a demo-sized campaign (trial target 0.05 s) over the toy signature.
//!
//! Timings and the campaign use the lean driver (found next to `target/<profile>/deps`; build
//! it with the workspace); the benchmark binary is its own large-executable driver child for
//! the RSS comparison (`driver-… LIB.so OP …` runs the driver in-process).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pqperf_campaign::{self as campaign, CampaignOptions, Phase};
use pqperf_measure::driver::{self, ApiSpec, DriverArgs};
use pqperf_measure::runner::{self, DriverExe};
use pqperf_model::buildjson::{BuildEntry, BuildJson};

const TOY: &str = include_str!("../../pqperf/tests/measure/toy_sig.c");
/// The RSS floor: dlopen the library, print the resident set (statm) as `floor <bytes>`.
const FLOOR: &str = "#include <dlfcn.h>\n#include <stdio.h>\n#include <unistd.h>\n\
int main(int c, char **v) { long a, b; FILE *f; if (c < 2 || !dlopen(v[1], RTLD_NOW)) return 1;\n\
f = fopen(\"/proc/self/statm\", \"r\"); if (!f || fscanf(f, \"%ld %ld\", &a, &b) != 2) return 1;\n\
printf(\"floor %ld\\n\", b * sysconf(_SC_PAGESIZE)); return 0; }\n";

/// A timing loop shaped like the reference driver's: `LIB OP ITERS TRIALS`; per trial one
/// `ref <op> <ticks per call>` line (TSC around the whole loop).
const REF_LOOP: &str = r#"#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>
typedef unsigned long long ull;
static unsigned char pk[1 << 16], sk[1 << 16], sn[1 << 16], m[32];
int main(int argc, char **argv) {
    if (argc < 5) return 2;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) return 1;
    const char *op = argv[2];
    ull iters = strtoull(argv[3], 0, 10);
    int trials = atoi(argv[4]);
    int (*kg)(unsigned char *, ull *, unsigned char *, ull *) = dlsym(h, "sig_keygen");
    int (*sg)(unsigned char *, ull, unsigned char *, ull, unsigned char *, ull *) = dlsym(h, "sig_sign");
    int (*vf)(unsigned char *, ull, unsigned char *, ull, unsigned char *, ull) = dlsym(h, "sig_verify");
    ull (*pkn)(void) = dlsym(h, "sig_get_pk_len_bytes");
    ull (*skn)(void) = dlsym(h, "sig_get_sk_len_bytes");
    ull (*snn)(void) = dlsym(h, "sig_get_sn_len_bytes");
    if (!kg || !sg || !vf || !pkn || !skn || !snn) return 1;
    ull pl = pkn(), sl = skn(), snmax = snn(), sigl = snmax;
    if (kg(pk, &pl, sk, &sl) || sg(sk, sl, m, sizeof m, sn, &sigl)) return 3;
    int which = strcmp(op, "keygen") == 0 ? 0 : strcmp(op, "sign") == 0 ? 1 : 2;
    for (int t = 0; t < trials; t++) {
        ull c0 = __rdtsc();
        if (which == 0) {
            for (ull i = 0; i < iters; i++) {
                ull a = pkn(), b = skn();
                if (kg(pk, &a, sk, &b)) return 3;
            }
        } else if (which == 1) {
            for (ull i = 0; i < iters; i++) {
                ull l = snmax;
                if (sg(sk, sl, m, sizeof m, sn, &l)) return 3;
            }
        } else {
            for (ull i = 0; i < iters; i++)
                if (vf(pk, pl, sn, sigl, m, sizeof m)) return 3;
        }
        ull c1 = __rdtsc();
        printf("ref\t%s\t%.4f\n", op, (double)(c1 - c0) / (double)iters);
    }
    return 0;
}
"#;

fn gcc(dir: &Path, name: &str, defines: &[&str]) -> String {
    let src = dir.join("toy_sig.c");
    std::fs::write(&src, TOY).unwrap();
    let rel = format!("lib/bench/lib{name}.so");
    let out = dir.join(&rel);
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut c = Command::new("gcc");
    c.args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(&out)
        .arg(&src);
    for d in defines {
        c.arg(format!("-D{d}"));
    }
    assert!(c.status().expect("gcc").success());
    rel
}

/// The empty loop of `op` ran: complete, or (verify) recorded `inconsistent` only because the
/// do-nothing verify accepts the signature whose message the parent altered in each window
/// (the relay's output check, issue 36); its trials are still the loop's ticks.
fn loop_ran(op: &str, r: &runner::Run) -> bool {
    r.complete()
        || (op == "verify"
            && !r.process.trials.is_empty()
            && r.process.extra["kernel_check"]["problems"]
                .as_array()
                .is_some_and(|a| {
                    a.iter()
                        .all(|p| p.as_str().is_some_and(|p| p.contains("verify accepted")))
                }))
}

/// One empty-loop process of `a` (up to three attempts: a busy host can make the kernel
/// check refuse one).
fn run_loop(exe: &DriverExe, a: &DriverArgs) -> runner::Run {
    let mut last = None;
    for _ in 0..3 {
        let r = runner::run_driver(exe, a, Duration::from_secs(60));
        if loop_ran(&a.op, &r) {
            return r;
        }
        last = Some(r);
    }
    panic!("{:?}", last.map(|r| r.process));
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().is_some_and(|a| a.ends_with(".so")) {
        let a = DriverArgs::parse(&argv).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        // Results go to the private channel, as in `pqperf-driver` (stdout is the candidate's).
        let mut out = pqperf_ffi::untrusted::child_enter().unwrap_or_else(|e| {
            eprintln!("driver: {e}");
            std::process::exit(2)
        });
        // The parent's control pipe (the interval boundaries), as `pqperf-driver` adopts it.
        let mut control = pqperf_ffi::untrusted::child_control().unwrap_or_else(|e| {
            eprintln!("driver: {e}");
            std::process::exit(2)
        });
        let gate = driver::Gate::new(control.as_mut().map(|c| c as &mut dyn std::io::Read));
        let code = driver::run_gated(&a, &mut out, gate, &mut std::io::stderr());
        std::process::exit(code);
    }
    let tmp = tempfile::tempdir().unwrap();
    // PQPERF_BENCH_KEEP=1 keeps the run directory (its campaign.log and records) for reading.
    let (dir_buf, _guard) = if std::env::var_os("PQPERF_BENCH_KEEP").is_some() {
        let kept = tmp.keep();
        println!("run directory kept in {}", kept.display());
        (kept, None)
    } else {
        (tmp.path().to_path_buf(), Some(tmp))
    };
    let dir = dir_buf.as_path();
    let noop = gcc(dir, "noop", &["TOY_NOOP"]);
    let toy = gcc(dir, "toy", &[]);
    let cpu = campaign::default_cpu();
    campaign::keep_off_cpu(cpu);
    let exe =
        DriverExe::current(dir).expect("the lean driver (cargo build --release -p pqperf-driver)");
    let in_process = DriverExe {
        exe: std::env::current_exe().unwrap(),
        cwd: dir.to_path_buf(),
    };
    let hz = pqperf_ffi::counters::ticks_hz(50).unwrap_or(0) as f64;
    println!(
        "counter: {} at {hz:.0} Hz; benchmark CPU {cpu}",
        pqperf_measure::host::counter_info(pqperf_measure::host::counter_kind(), None)["counter"]
    );
    // Baseline RSS (after loading and preparing, before the trials) on the do-nothing library.
    let baseline = |e: &DriverExe| {
        let mut v = Vec::new();
        for _ in 0..7 {
            let a = DriverArgs {
                lib: noop.clone().into(),
                op: "sign".into(),
                bytes: 0,
                trials: 1,
                iters: 1000,
                warmups: 1,
                cpu: Some(cpu),
                samples: false,
                force_ticks: true,
                api: ApiSpec::Iccs,
                stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
                seed: None,
                pool_max: None,
                prepare: false,
                relayed: false,
            };
            let r = runner::run_driver(e, &a, Duration::from_secs(60));
            assert!(r.complete(), "{:?}", r.process);
            let b = r.process.meta.str("baseline_rss_bytes").unwrap_or("0");
            v.push(b.parse::<f64>().unwrap_or(0.0));
        }
        median(v)
    };
    let lean = baseline(&exe);
    let big = baseline(&in_process);
    // The floor of this machine: a C program that only dlopens the same library and reads its
    // RSS, interleaved with the lean driver started the same way (by hand, no sandbox), 15
    // times each; the RSS of short processes varies by ±0.15 MB here, so medians and a ratio.
    let floor_src = dir.join("floor.c");
    std::fs::write(&floor_src, FLOOR).unwrap();
    let floor_exe = dir.join("floor");
    assert!(
        Command::new("gcc")
            .args(["-O2", "-o"])
            .arg(&floor_exe)
            .arg(&floor_src)
            .status()
            .expect("gcc")
            .success()
    );
    let rss_of = |c: &mut Command| -> f64 {
        let o = c.output().expect("start");
        let t = String::from_utf8_lossy(&o.stdout).to_string();
        t.lines()
            .find_map(|l| {
                l.strip_prefix("META\tbaseline_rss_bytes\t")
                    .or_else(|| l.strip_prefix("floor "))
            })
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(f64::NAN)
    };
    let (mut fl, mut hand, mut untrimmed) = (Vec::new(), Vec::new(), Vec::new());
    let by_hand = || {
        let mut c = Command::new(&exe.exe);
        c.current_dir(dir)
            .args([noop.as_str(), "sign", "0", "1", "1", "1000", "1", "--ticks"]);
        c
    };
    for _ in 0..15 {
        fl.push(rss_of(Command::new(&floor_exe).arg(dir.join(&noop))));
        hand.push(rss_of(&mut by_hand()));
        // The same without the start-up trim of the driver's own pages (`c/lean.c`).
        untrimmed.push(rss_of(by_hand().env("PQPERF_NO_LEAN", "1")));
    }
    let (fl, hand, untrimmed) = (median(fl), median(hand), median(untrimmed));
    println!(
        "baseline RSS by hand (median of 15): lean pqperf-driver {:.0} KiB ({:.2} MB), without its start-up trim (PQPERF_NO_LEAN=1) {:.0} KiB ({:.2} MB)",
        hand / 1024.0,
        hand / 1e6,
        untrimmed / 1024.0,
        untrimmed / 1e6
    );
    println!(
        "baseline RSS by hand (median of 15): C dlopen-only floor {:.0} KiB ({:.2} MB); lean pqperf-driver {:.0} KiB ({:.2} MB); ratio {:.2}",
        fl / 1024.0,
        fl / 1e6,
        hand / 1024.0,
        hand / 1e6,
        hand / fl
    );
    println!(
        "baseline RSS, do-nothing library (median of 7): lean pqperf-driver {:.0} KiB ({:.2} MB); same driver inside a large Rust executable (the former `pqperf driver`) {:.0} KiB ({:.2} MB); ratio {:.2}",
        lean / 1024.0,
        lean / 1e6,
        big / 1024.0,
        big / 1e6,
        big / lean
    );
    let iters = 20_000u64;
    const ROUNDS: usize = 21;
    let ns_per_tick = if hz > 0.0 { 1e9 / hz } else { f64::NAN };
    // The empty loops beside a reference-shaped C loop (x86-64: rdtsc), alternating rounds of
    // one process each (5 trials of `iters` calls), medians of the trial means.
    if cfg!(target_arch = "x86_64") {
        let ref_src = dir.join("ref_loop.c");
        std::fs::write(&ref_src, REF_LOOP).unwrap();
        let ref_exe = dir.join("ref_loop");
        assert!(
            Command::new("gcc")
                .args(["-O2", "-o"])
                .arg(&ref_exe)
                .arg(&ref_src)
                .arg("-ldl")
                .status()
                .expect("gcc")
                .success()
        );
        for op in ["keygen", "sign", "verify"] {
            let (mut c, mut rs) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                let o = Command::new("taskset")
                    .args(["-c", &cpu.to_string()])
                    .arg(&ref_exe)
                    .arg(dir.join(&noop))
                    .args([op, &iters.to_string(), "5"])
                    .output()
                    .expect("taskset (util-linux)");
                assert!(o.status.success(), "reference-shaped loop {op}: {o:?}");
                for l in String::from_utf8_lossy(&o.stdout).lines() {
                    if let Some(v) = l.rsplit('\t').next().and_then(|v| v.parse::<f64>().ok()) {
                        c.push(v);
                    }
                }
                let a = DriverArgs {
                    lib: noop.clone().into(),
                    op: op.into(),
                    bytes: 0,
                    trials: 5,
                    iters,
                    warmups: 3,
                    cpu: Some(cpu),
                    samples: false,
                    force_ticks: true,
                    api: ApiSpec::Iccs,
                    stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
                    seed: None,
                    pool_max: None,
                    prepare: false,
                    relayed: false,
                };
                let r = run_loop(&exe, &a);
                for t in &r.process.trials {
                    rs.push(t.cycles.unwrap_or(0) as f64 / t.measurements as f64);
                }
            }
            let (c, rs) = (median(c), median(rs));
            println!(
                "no-op {op:6}  reference-shaped C loop {c:6.2} ticks/call ({:.2} ns), pqperf-driver {rs:6.2} ticks/call ({:.2} ns): {:+.2} ns per call (medians of {} trials, {ROUNDS} alternating rounds)",
                c * ns_per_tick,
                rs * ns_per_tick,
                (rs - c) * ns_per_tick,
                5 * ROUNDS
            );
        }
    }
    for op in ["keygen", "sign", "verify"] {
        // Rounds alternate the two modes so that load drifts hit both alike; the medians of
        // the trial means of each mode are compared. Many short processes: the per-call time
        // of a no-op call differs between processes (address layout), by about a nanosecond.
        let mut batch: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut per_call_sampled = Vec::new();
        let mut per_call_median = Vec::new();
        for _ in 0..ROUNDS {
            for (mode, samples) in [false, true].into_iter().enumerate() {
                let a = DriverArgs {
                    lib: noop.clone().into(),
                    op: op.into(),
                    bytes: 0,
                    trials: 5,
                    iters,
                    warmups: 3,
                    cpu: Some(cpu),
                    samples,
                    force_ticks: true,
                    api: ApiSpec::Iccs,
                    stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
                    seed: None,
                    pool_max: None,
                    prepare: false,
                    relayed: false,
                };
                let r = run_loop(&exe, &a);
                for t in &r.process.trials {
                    batch[mode].push(t.cycles.unwrap_or(0) as f64 / t.measurements as f64);
                }
                for t in r.sched.iter().filter(|t| t.kind == "sampled") {
                    per_call_sampled.push(t.count as f64 / t.calls as f64);
                }
                if samples {
                    per_call_median.push(median(r.samples.iter().map(|&s| s as f64).collect()));
                }
            }
        }
        let (r0, r1) = (median(batch[0].clone()), median(batch[1].clone()));
        let sampled = median(per_call_sampled);
        println!(
            "no-op {op:6}  reference trials: {r0:6.2} ticks/call without samples ({:.2} ns per empty call), {r1:6.2} with samples (medians of {} trials of {iters} calls)",
            r0 * ns_per_tick,
            5 * ROUNDS
        );
        println!(
            "no-op {op:6}  sampled trials:   {sampled:6.2} ticks/call (median per-call delta {:.1}) -> sampling cost {:.2} ticks = {:.2} ns per call",
            median(per_call_median),
            sampled - r1,
            (sampled - r1) * ns_per_tick
        );
        let diff_ns = (r1 - r0) * ns_per_tick;
        println!(
            "no-op {op:6}  reference mean per call, with - without sampling: {diff_ns:+.3} ns"
        );
        assert!(
            diff_ns.abs() < 1.0,
            "{op}: the reference per-call mean moved by {diff_ns:.3} ns when sampling was on"
        );
    }
    // Campaign efficiency at the demo's trial target.
    let run = dir.to_path_buf();
    let mut bj = BuildJson::default();
    // The toy signature only: the do-nothing verify accepts every signature, which the
    // relay's output check (one altered message per window) records as `inconsistent`.
    bj.instances.insert(
        "sign-99/toy".into(),
        BuildEntry {
            candidate: "sign-99".into(),
            label: "toy".into(),
            instance: "toy".into(),
            variant: "reference".into(),
            flags: "guide".into(),
            kat: "PASS".into(),
            library: Some(toy.clone()),
            ..Default::default()
        },
    );
    std::fs::write(
        run.join("build.json"),
        pqperf_model::pyjson::to_string(&bj).unwrap(),
    )
    .unwrap();
    let mut o = CampaignOptions::new(&run).unwrap();
    o.driver = exe.exe.clone();
    o.cpu = cpu;
    o.planning = pqperf_measure::plan::planning(0.05, 900.0);
    o.allow_unfixed_host = true;
    o.probe_attempts = 1;
    o.systems_csv = dir.join("systems.csv");
    o.register = Some("benchmark".into());
    o.echo = false;
    let t0 = Instant::now();
    let c = campaign::run_phase(Phase::Calibrate, &o).unwrap();
    assert_eq!(
        c.code,
        campaign::Exit::Done,
        "{}",
        run.join("campaign.log").display()
    );
    let m = campaign::run_phase(Phase::Measure, &o).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let b = &m.totals.budget;
    println!(
        "campaign (the toy signature, 3 ops, trial target 0.05 s): {} records, {} driver processes, timed {:.2} s (reference {:.2} s + sampled {:.2} s), wall {:.2} s (calibrate+measure, measure {:.2} s) -> measure-phase efficiency {:.1} % (the demo's budget line)",
        m.totals.records,
        b.count,
        b.processes.timed_s + b.processes.sampled_s,
        b.processes.timed_s,
        b.processes.sampled_s,
        wall,
        m.wall_s,
        100.0 * b.efficiency(m.wall_s)
    );
}
