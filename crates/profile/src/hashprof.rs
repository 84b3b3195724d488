//! The profiling driver child (`pqperf hashprof …`, reference `hashprof LIB OP BYTES ITERS
//! WARMUPS`, method.md §10.4): the timing driver's preparation (`pqperf_measure::driver::
//! PreparedOp`), then the wrappers' accounting around each profiled operation.
//!
//! Arguments: the timing driver's (`LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N]
//! [NIST options]`) optionally preceded by `--plain` (run the operations without any wrapper
//! control, for callgrind on the unwrapped library); or `--kat JOB` (the KAT stage's child
//! on a job file, to check that a profiling build still reproduces the KAT).
//!
//! Beyond the reference, an iteration during which the thread was involuntarily descheduled
//! (`getrusage(RUSAGE_THREAD).ru_nivcsw` moved) is set aside and repeated, at most
//! `4 × ITERS + 16` attempts in all; the per-iteration buckets are snapshots of the wrapper
//! table, so set-aside iterations leave no trace in the shares. Output (tab-separated):
//! `META` lines as the reference, `TOTAL <ops> <ticks>`, `CALL <fn> <in> <out> <calls>
//! <ticks>` per bucket in order of first occurrence, pqperf additions as `PQPERF <key>
//! <value>`, then `STATUS complete`.

use std::io::Write;

use indexmap::IndexMap;
use pqperf_ffi::profile::{Hashprof, HashprofEntry, involuntary_context_switches};
use pqperf_measure::driver::{DriverArgs, PreparedOp};

type Key = (String, u64, u64);

/// Result of the accounted loop.
#[derive(Debug, Clone, Default)]
pub struct LoopResult {
    /// Operations kept.
    pub operations: u64,
    /// Σ ticks of the kept operations.
    pub ticks: u64,
    /// Buckets over the kept operations: (fn, in_bits, out_bits) → (calls, ticks).
    pub calls: IndexMap<Key, (u64, u64)>,
    /// Iterations set aside because the thread lost the CPU.
    pub discarded: u64,
    /// Kept iterations that were disturbed all the same (attempt budget exhausted).
    pub disturbed_kept: u64,
    /// Calls that found no slot in the wrapper table.
    pub overflow_calls: u64,
}

fn snapshot(hp: &Hashprof) -> (IndexMap<Key, (u64, u64)>, u64) {
    let (entries, overflow) = hp.entries();
    let map = entries
        .into_iter()
        .map(
            |HashprofEntry {
                 func,
                 in_bits,
                 out_bits,
                 calls,
                 ticks,
             }| { ((func, in_bits, out_bits), (calls, ticks)) },
        )
        .collect();
    (map, overflow)
}

/// Run `iters` accounted operations (after `warmups` unaccounted ones).
pub fn profile_loop(
    hp: &Hashprof,
    iters: u64,
    warmups: u64,
    op: &mut dyn FnMut() -> Result<(), String>,
) -> Result<LoopResult, String> {
    hp.enable(false);
    for _ in 0..warmups {
        op().map_err(|e| format!("warm-up operation failed: {e}"))?;
    }
    hp.reset();
    let mut res = LoopResult::default();
    let mut prev: IndexMap<Key, (u64, u64)> = IndexMap::new();
    let budget = 4 * iters + 16;
    let mut attempts = 0u64;
    while res.operations < iters {
        attempts += 1;
        let c0 = involuntary_context_switches();
        hp.enable(true);
        let t0 = hp.ticks();
        let r = op();
        let t1 = hp.ticks();
        hp.enable(false);
        let c1 = involuntary_context_switches();
        r.map_err(|e| format!("measured operation failed: {e}"))?;
        let (now, overflow) = snapshot(hp);
        res.overflow_calls = overflow;
        // Without getrusage nothing can be told apart: keep every iteration.
        let disturbed = matches!((c0, c1), (Some(a), Some(b)) if a != b);
        let remaining = iters - res.operations;
        let must_keep = attempts + remaining > budget;
        if !disturbed || must_keep {
            if disturbed {
                res.disturbed_kept += 1;
            }
            res.operations += 1;
            res.ticks += t1.wrapping_sub(t0);
            for (k, (calls, ticks)) in &now {
                let (pc, pt) = prev.get(k).copied().unwrap_or((0, 0));
                if *calls > pc {
                    let e = res.calls.entry(k.clone()).or_insert((0, 0));
                    e.0 += calls - pc;
                    e.1 += ticks - pt;
                }
            }
        } else {
            res.discarded += 1;
        }
        prev = now;
    }
    Ok(res)
}

/// Tick rate of the wrappers' tick source: busy-wait `ms` milliseconds on
/// `CLOCK_MONOTONIC_RAW`.
pub fn tick_hz(hp: &Hashprof, ms: u64) -> f64 {
    let n0 = pqperf_ffi::counters::monotonic_raw_ns();
    let t0 = hp.ticks();
    let mut n1 = n0;
    while n1 - n0 < ms * 1_000_000 {
        n1 = pqperf_ffi::counters::monotonic_raw_ns();
    }
    let t1 = hp.ticks();
    (t1.wrapping_sub(t0)) as f64 / ((n1 - n0) as f64 / 1e9)
}

/// Entry point of the child: returns the exit status (0 complete, 2 usage/symbols, 3
/// preparation or operation failure).
pub fn child_main(argv: &[String], err: &mut dyn Write) -> i32 {
    // `--kat JOB`: the KAT stage's child on a job file (used on profiling builds).
    if argv.first().is_some_and(|a| a == "--kat") {
        let Some(job) = argv.get(1) else {
            let _ = writeln!(err, "hashprof: --kat needs a job file");
            return 2;
        };
        return pqperf_kat::child_main(std::path::Path::new(job));
    }
    // Confine this process and take the result channel before the library is loaded.
    let mut chan = match pqperf_ffi::untrusted::child_enter() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "hashprof: {e}");
            return 2;
        }
    };
    let out = &mut chan;
    let plain = argv.first().is_some_and(|a| a == "--plain");
    let rest = if plain { &argv[1..] } else { argv };
    let args = match DriverArgs::parse(rest) {
        Ok(a) => a,
        Err(e) => {
            let _ = writeln!(err, "hashprof: {e}");
            return 2;
        }
    };
    if let Some(c) = args.cpu
        && let Err(e) = pqperf_ffi::affinity::pin_to(c)
    {
        let _ = writeln!(err, "hashprof: cannot pin to CPU {c}: {e}");
        return 2;
    }
    let mut prepared = match PreparedOp::prepare(&args) {
        Ok(p) => p,
        Err((code, msg)) => {
            let _ = writeln!(err, "hashprof: {msg}");
            return code;
        }
    };
    let meta: IndexMap<String, String> = prepared.meta().iter().cloned().collect();
    if plain {
        for _ in 0..args.warmups + args.iters {
            if let Err(e) = prepared.call() {
                let _ = writeln!(err, "hashprof: operation failed: {e}");
                return 3;
            }
        }
        let _ = writeln!(out, "TOTAL\t{}\t0", args.iters);
        let _ = writeln!(out, "STATUS\tcomplete");
        return 0;
    }
    let hp = match Hashprof::open(&args.lib) {
        Ok(h) => h,
        Err(e) => {
            let _ = writeln!(err, "hashprof: {e}");
            return 2;
        }
    };
    let hz = tick_hz(&hp, 100);
    let (outer, inner) = hp.overhead(20_000);
    let mut op = || prepared.call();
    let res = match profile_loop(&hp, args.iters, args.warmups, &mut op) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "hashprof: {e}");
            return 3;
        }
    };
    let m = |k: &str| meta.get(k).cloned().unwrap_or_default();
    let mut lines = vec![
        format!("META\tid\t{}", m("id")),
        format!("META\tinstance\t{}", m("instance")),
        format!("META\toperation\t{}", args.op),
        format!("META\ttick_source\t{}", hp.tick_source()),
        format!("META\ttick_hz\t{hz:.0}"),
        format!("META\twarmups\t{}", args.warmups),
        format!("META\toverflow_calls\t{}", res.overflow_calls),
        format!("TOTAL\t{}\t{}", res.operations, res.ticks),
    ];
    for ((f, i, o), (c, t)) in &res.calls {
        lines.push(format!("CALL\t{f}\t{i}\t{o}\t{c}\t{t}"));
    }
    lines.push(format!("PQPERF\twrapper_outer_ticks_per_call\t{outer:.1}"));
    lines.push(format!("PQPERF\twrapper_inner_ticks_per_call\t{inner:.1}"));
    lines.push(format!("PQPERF\tdiscarded_iterations\t{}", res.discarded));
    lines.push(format!("PQPERF\tdisturbed_kept\t{}", res.disturbed_kept));
    lines.push("STATUS\tcomplete".to_string());
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = out.flush();
    0
}
