//! The timing driver: one child process = one operation of one library (method §4).
//!
//! The orchestrator starts the lean executable `pqperf-driver …` (this crate's binary, found
//! next to `pqperf`, see `pqperf_measure::runner::DriverExe`); the child pins itself, dlopens
//! the library through `pqperf_ffi::dl`, seeds the DRNG (`--seed`, else the reference's
//! `00 01 … 2f`; `pqperf_model::stream`), prepares honest
//! inputs, runs the warm-ups and the trials, and writes the reference META/TRIAL/STATUS lines
//! to its private result channel (tab-separated, flushed progressively; never stdout, which
//! belongs to the candidate, see `pqperf_ffi::untrusted`). pqperf additions are
//! `PQPERF <key> <value>` lines (counter name; `trial_sched`/`sample_sched`: per-trial
//! scheduler facts, see `timing`; `mem_…`: the untimed memory pass, [`mem`]) and
//! `PQPERF canary` (a fixed workload timed before and after the trials, [`canary`]) and
//! `SAMPLES <trial> <ticks>…` lines: per-call tick-counter deltas of separate sampled trials
//! (never of the reference trials), from which the robust estimate and its CI are computed.
//!
//! Exit status: 0 complete, 4 partial, 3 setup/operation failure, 2 usage/ABI/symbol errors.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;

use pqperf_ffi::counters::{self, Counter, CounterKind};
use pqperf_ffi::dl::{
    GuardedBuf, HashApi, IccsDrng, KemApi, KexApi, Library, NistKem, NistKemSizes, NistRng,
    NistSign, NistSignSizes, SigApi,
};
use pqperf_ffi::{affinity, procinfo};

mod args;
pub mod canary;
pub mod inputs;
mod kex;
mod mem;
mod ops;
mod out;
mod prepare_iccs;
mod prepare_nist;
mod timing;

pub use args::{ApiSpec, DriverArgs};
pub use mem::DEFAULT_STACK_REGION;
pub use timing::{Gate, SAMPLE_CALLS, run, run_gated};

use inputs::{CtPool, Messages, Relay, SigPool};
use kex::{Acc, Kex, Step};
use mem::memory_pass;
use ops::{Op, SigStats};
use out::Out;
use prepare_iccs::prepare_iccs;
use prepare_nist::prepare_nist;

/// Operations of the hash type are `hash` with a byte count (these sizes, the vocabulary's);
/// the others have no input.
pub use pqperf_model::vocab::HASH_SIZES;

/// A failure with the exit code it maps to.
struct Fail(i32, String);

type R<T> = Result<T, Fail>;

fn usage(m: impl Into<String>) -> Fail {
    Fail(2, m.into())
}
fn setup(m: impl Into<String>) -> Fail {
    Fail(3, m.into())
}

/// The seed this process prepares with: the reference's fixed `00 01 … 2f` without
/// `--seed`; with it, the seed itself (verify, dec: their preparer) or, for a window-seeded
/// operation, its one-way `setup_seed` (what the parent tells a relayed timing process,
/// `pqperf_model::stream::WindowInput::setup_payload`).
fn prep_seed(a: &DriverArgs) -> [u8; pqperf_model::stream::SEED_BYTES] {
    match a.seed {
        Some(s) if pqperf_model::stream::window_seeded(&a.op) => {
            pqperf_model::stream::setup_seed(&s)
        }
        Some(s) => s,
        None => pqperf_model::stream::REFERENCE_SEED,
    }
}

fn slice(b: &mut GuardedBuf, n: u64) -> &mut [u8] {
    let n = (n as usize).min(b.len());
    &mut b.as_mut_slice()[..n]
}

/// What the preparation reports besides the operation.
struct Prepared {
    op: Op,
    meta: Vec<(String, String)>,
    stats: SigStats,
    kex_step: Option<Step>,
    /// The key of a verify/dec preparation (pk or sk, for the preparer's report).
    key: Vec<u8>,
    /// The library's DRNG (reseeded at every window of an own stream).
    drng: Option<timing::Drng>,
    /// The window the parent relayed with the last `go`, entered when it starts.
    next_window: Option<pqperf_model::stream::WindowInput>,
}

fn gb(n: u64) -> R<GuardedBuf> {
    if n > 1 << 29 {
        return Err(usage(format!("declared size {n} above 2^29 bytes")));
    }
    Ok(GuardedBuf::new(n as usize))
}

fn sizes_meta(pk: u64, sk: u64, ct: u64, ss: u64, sig: u64, dig: u64) -> Vec<(String, String)> {
    [
        ("pk_bytes", pk),
        ("sk_bytes", sk),
        ("ct_bytes", ct),
        ("ss_bytes", ss),
        ("signature_bytes", sig),
        ("digest_bytes", dig),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The driver's preparation for other stages (the hash profiler, `pqperf-profile`): the same
/// loading, seeding and honest inputs as a timing run, so profiled inputs are exactly those the
/// benchmark times. [`PreparedOp::call`] runs the operation once, as one timed call does.
pub struct PreparedOp {
    prepared: Prepared,
    meta: Vec<(String, String)>,
}

impl PreparedOp {
    /// Open `a.lib`, seed and prepare `a.op`; on failure (exit status, message) as the driver
    /// would report them.
    pub fn prepare(a: &DriverArgs) -> Result<PreparedOp, (i32, String)> {
        let lib = Library::open(&a.lib).map_err(|e| (2, e.to_string()))?;
        let mut head = Vec::new();
        let seed = prep_seed(a);
        let p = match a.api {
            ApiSpec::Iccs => prepare_iccs(&lib, a, &mut head, None, &seed),
            ApiSpec::Nist { .. } => prepare_nist(&lib, a, &mut head, None, &seed),
        }
        .map_err(|Fail(c, m)| (c, m))?;
        if !p.op.guards_intact() {
            return Err((
                3,
                "guard bytes overwritten during setup (buffer overflow)".into(),
            ));
        }
        head.extend(p.meta.iter().cloned());
        Ok(PreparedOp {
            prepared: p,
            meta: head,
        })
    }

    /// META pairs of the preparation (`id`, `instance`, `variant`, sizes …).
    pub fn meta(&self) -> &[(String, String)] {
        &self.meta
    }

    /// Run the operation once (KEX: one complete exchange).
    pub fn call(&mut self) -> Result<(), String> {
        self.prepared.op.call(&mut self.prepared.stats)
    }
}

/// Replays the calls of a timing process of `a` untimed, in the same order (preparation,
/// warm-ups, the reference trials, the sampled trials), and returns the digest of the same
/// outputs as its `PQPERF output_digest` line (`None`: an operation without one, a key
/// exchange step). With the same seed a deterministic library gives the same digest; the
/// parent runs this in another executable (`pqperf replay-child`), so a library that
/// computes wrong outputs only inside `pqperf-driver` is caught
/// (`pqperf_measure::outcheck`).
pub fn replay(a: &DriverArgs) -> Result<Option<String>, (i32, String)> {
    // The windows of an own stream are entered exactly as the timing process's relayed
    // `go` enters them (`timing::Stream`, `timing::enter_window`).
    let mut p = PreparedOp::prepare(a)?;
    if p.prepared.kex_step.is_some_and(|s| s != Step::Whole) {
        return Ok(None);
    }
    let stream = timing::Stream::new(a, a.samples && p.prepared.kex_step.is_none());
    let fail = |e: String| (3, format!("measured operation failed: {e}"));
    let pr = &mut p.prepared;
    timing::Stream::at(&stream, pr, 0).map_err(|Fail(c, m)| (c, m))?;
    for _ in 0..a.warmups {
        pr.op.call(&mut pr.stats).map_err(fail)?;
    }
    let mut outputs = pqperf_model::stream::OutputDigest::new();
    let Some(_) = pr.op.output(&pr.stats) else {
        return Ok(None);
    };
    let sampled = if a.samples { a.trials } else { 0 };
    let sample_calls = a.iters.min(SAMPLE_CALLS);
    // (first call's position, calls) of every window, as the timing process runs them.
    let trials = (0..u64::from(a.trials)).map(|t| (a.warmups + t * a.iters, a.iters));
    let done = a.warmups + u64::from(a.trials) * a.iters;
    let samples = (0..u64::from(sampled)).map(|t| (done + t * sample_calls, sample_calls));
    for (at, n) in trials.chain(samples) {
        timing::Stream::at(&stream, pr, at).map_err(|Fail(c, m)| (c, m))?;
        pr.op.call_n(n, &mut pr.stats).map_err(fail)?;
        if let Some(x) = pr.op.output(&pr.stats) {
            outputs.update(&x);
        }
    }
    Ok(Some(outputs.finish()))
}
