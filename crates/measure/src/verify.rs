//! The parent's check of one timing-driver process against what the kernel accounted for it
//! (issue 31: no figure is taken from a line the candidate could have written). The driver
//! shares its address space with candidate code, so its TRIAL/SAMPLES/sched lines are claims;
//! they are compared with the `wait4` CPU time, the zombie's schedstat (on-CPU and run-queue
//! nanoseconds) and the lifetime the parent saw, in both directions:
//!
//! - **counts**: as many reference trials as asked, each with the asked number of calls, and
//!   (with `--samples`) sampled trials of `min(iters, 400)` calls; every trial at least
//!   [`MIN_CALL_S`] per call;
//! - **fits the lifetime**: Σ claimed timed seconds (reference and sampled trials) ≤ the wall
//!   time the parent saw + [`WALL_SLACK_S`];
//! - **not more than the CPU did** (too much claimed): Σ claimed on-CPU nanoseconds ≤ CPU time
//!   plus [`slack`]; Σ claimed run-queue wait ≤ the kernel's run-queue wait plus slack; each
//!   claimed trial time ≤ its claimed on-CPU and run-queue time plus slack plus the steal
//!   time of the CPU during the process (a trial cannot sleep, but a virtual CPU the
//!   hypervisor took away is neither running nor queued). A busy host inflates wall time (run-queue wait), not CPU time, so the CPU bound
//!   holds there too;
//! - **not less than the CPU did** (too little claimed), **in the parent's windows**: the
//!   driver stops at gates (`pqperf_driver::Gate`): after its preparation, after every
//!   timed interval and after its last line. At each gate the parent reads the exact CPU
//!   time of every process and thread of the child (`procinfo::TreeCpu`, once none of them
//!   is running) and only then lets it go on, so every interval ran inside a window the
//!   parent measured from outside. Each window holds exactly one interval, and its kernel
//!   CPU time is at most the interval claimed in it × (1 + [`WINDOW_REL`]) +
//!   [`WINDOW_ABS_S`] (+ [`DIGEST_S_PER_BYTE`] per declared output byte): a claimed
//!   interval is wall time, which CPU time never exceeds on the pinned CPU, so honest runs
//!   beside CPU hogs pass. A claimed interval holds the driver thread's waits for the CPU
//!   too, so the parent also reads every task's schedstat (on-CPU and run-queue
//!   nanoseconds, arrivals on a CPU) at each gate, and right after its `go` it watches the
//!   driver's thread until it arrives on a CPU: the wait before that arrival lies before any
//!   interval can start. The thread's on-CPU and run-queue time after the arrival is at most
//!   the claim × (1 + [`WINDOW_REL`]) + the same tolerance + [`WINDOW_WAITS_ALLOWED`] mean
//!   waits of the window (its untimed work after the interval may be preempted) +
//!   [`WINDOW_WAIT_ABS_S`], these two only when the thread waited again after its arrival
//!   (a window without such a wait can hide none); a candidate that claims its CPU time in place of its wall time
//!   on a busy CPU is caught (the evidence keeps `window_run_delay_s`, `window_wake_wait_s`,
//!   `window_main_s` and `window_wait_allowance_s`, checked again by `validate` through
//!   `pqperf_model::kernelcheck`). No process of the child may end between two gates, every reading
//!   must find the child quiet, and the CPU after the last gate (the exit, where CPU the
//!   readings missed would show) is at most [`EXIT_ABS_S`] + [`EXIT_S_PER_MIB`] per MiB of
//!   `ru_maxrss`. There is no separate setup-only process any more: the preparation's CPU
//!   time is the reading at the first gate (`ready_cpu_s`), and nothing that runs outside the
//!   windows is allowed for in them;
//! - **samples add up**: the per-call ticks of a sampled trial, summed, equal its claimed
//!   interval within [`SAMPLE_SUM_REL`] + [`TICK_ABS_S`] (less the steal), so the robust
//!   estimate cannot be moved by scaling its SAMPLES alone;
//! - **the headline floor** (`pqperf_model::floor`, issue 36): SAMPLES reshaped with their
//!   sums kept (most calls reported cheap, a few dear above the fence) would move the
//!   estimate the record is made of. New records' estimate is the fenced mean of every
//!   operation (`mean_robust_v3`), which such a reshaping can lower only by pushing mass above
//!   the fence. So each sampled trial's fenced mean must be at least its own sampled
//!   window's kernel CPU time, less `floor::WINDOW_ABS_S` (400 µs: the driver's untimed work
//!   in the window) and the interrupt work the kernel charged to the window — counted by the
//!   parent at the window's gates on the measuring CPU: `kernelcheck::SOFTIRQ_EVENT_S` (25 µs)
//!   per softirq and `kernelcheck::HARDIRQ_EVENT_S` (7.5 µs) per hard interrupt (every line
//!   of `/proc/interrupts`: timer ticks and IPIs too; read only at the gates around sampled
//!   windows, ~50 µs a read, while the child waits), at most `floor::EVENTS_MAX_S` (1 ms) —
//!   ÷ the calls asked in it, × (1 − `floor::PROCESS_REL`) (1 %; rule
//!   `fenced_mean_window_v2`, `kernel_check.window_calls`, `window_sampled`,
//!   `window_hardirqs`, `floor`). A trial that fails it but passes the first rule
//!   (`floor::Rule::V1`: 5 %, softirqs only) makes its process [`DISTURBED`] (re-run, never
//!   published: interference the counts do not explain, or a forgery inside that share); one
//!   that fails both, `inconsistent`. **The bound**: a forger moves a trial's fenced mean at
//!   most `1 − 0.99·(1 − A ÷ W)` below its true per-call cost, A the window's allowance (400
//!   µs and its counted interrupts' share) and W its CPU seconds: 1.8 % for a 50 ms sampled
//!   window without interrupts, 2.5 % at the median of an honest demo's windows of 50 ms and
//!   more (about 1 000 timer interrupts a second on the development VM: 0.75 % of W), at most
//!   3.8 % with the allowance capped; 5.7 % for 10 ms (with 10 interrupts); a window of
//!   fewer than `floor::WINDOW_MIN_CALLS` (100) calls, or no longer than its allowance
//!   (operations under about 1 µs) bounds nothing. The record keeps the bound in force
//!   (`pqperf.headline_floor.bound_rel`, its worst sampled window); docs/threat-model.md
//!   has the measurements;
//! - **memory**: the claimed peak RSS is at most `ru_maxrss` (+ [`RSS_ABOVE_SLACK`]) and,
//!   when `ru_maxrss` is clearly above the parent's RSS (so the driver made it), at least
//!   `ru_maxrss` less what the memory pass touched after the peak was read, 5 % and
//!   [`RSS_BELOW_SLACK`];
//! - **ticks agree with seconds**: a fixed-rate counter (TSC, `cntvct_el0`) counts the
//!   recorded tick rate × seconds (± [`TICK_REL`] and [`TICK_ABS_S`]); a cycle counter at most
//!   [`MAX_CYCLES_PER_NS`] per nanosecond.
//!
//! Per-step timing of a key exchange (`timing_scope` `per_call_step`: one step of every
//! exchange is timed) gets the counts, the lifetime and the too-much-claimed bounds only.
//!
//! **Interrupts** (issue 36): this kind of kernel (no `CONFIG_IRQ_TIME_ACCOUNTING`) charges the
//! interrupt and softirq work of the measuring CPU to whichever task runs there, so an honest
//! window can exceed its bound when its CPU was interrupted often. At every reading the
//! parent also reads the measuring CPU's softirq count (`procinfo::IrqReader::softirqs`,
//! `Reading::softirqs`: device work is a hard interrupt that raises a softirq there); a
//! window over its bound (or a loading over its allowance) whose excess is at most its
//! softirqs × `kernelcheck::SOFTIRQ_EVENT_S` and `kernelcheck::SOFTIRQ_EXCESS_MAX_S` is
//! *explained*: when every problem of a process is explained, it is [`DISTURBED`] (re-run
//! like a disturbed process, its figures never published), never `inconsistent`; a window
//! its softirqs do not explain stays a problem (`kernel_check.window_softirqs`,
//! `interrupted`).
//!
//! A process that fails any of these is `inconsistent` (the caller re-runs it once); the
//! figures and the problems are kept in its process entry (`kernel_check`). What this cannot
//! catch (a forgery within a window's tolerance, work precomputed during the preparation) is
//! in docs/threat-model.md.

use std::sync::OnceLock;

use pqperf_ffi::procinfo::ChildAccounting;
use pqperf_model::vocab::Counter;
use serde_json::{Value, json};

use crate::driver::{DriverArgs, SAMPLE_CALLS};
use crate::output::Parsed;

/// How long the parent waits for the child's tasks to stop running before a reading.
pub const SETTLE_S: f64 = pqperf_ffi::untrusted::SETTLE_LIMIT.as_secs_f64();
/// Process status of a driver run whose claims disagree with the kernel's accounting.
pub const INCONSISTENT: &str = "inconsistent";
/// Process status of a driver run whose only disagreements with the kernel's accounting are
/// explained by interrupt work on the measuring CPU (module doc): re-run, never published.
pub const DISTURBED: &str = "disturbed";
/// Seconds a claimed total may exceed the parent's wall time of the process (clock reads).
pub const WALL_SLACK_S: f64 = 0.01;
/// Shortest plausible time of one call (seconds).
pub const MIN_CALL_S: f64 = 1e-9;
/// Relative tolerance of a fixed-rate counter against seconds × tick rate.
pub const TICK_REL: f64 = 0.05;
/// Absolute tolerance of ticks against seconds (seconds): the counter and the clock are read
/// one after the other, and a preemption or hypervisor exit between the two reads moves one
/// against the other by microseconds (a 6 µs trial was seen 0.9 µs apart on a busy VM).
pub const TICK_ABS_S: f64 = 50e-6;
/// Highest plausible cycle-counter rate (cycles per nanosecond).
pub const MAX_CYCLES_PER_NS: f64 = 10.0;
/// Relative tolerance of a sampled trial's per-call ticks, summed, against its claimed
/// interval (the same counter read between the same clock reads; the rest is the parent's
/// measured tick rate and the clock reads around the loop, [`TICK_ABS_S`]).
pub const SAMPLE_SUM_REL: f64 = 0.02;

/// Slack of a CPU-time comparison: 50 ms + 25 % of `base` seconds + 10 ms per timed
/// interval (schedstat figures advance at scheduler ticks, so each interval may be off by a
/// tick at both ends).
pub fn slack(base_s: f64, intervals: usize) -> f64 {
    0.05 + 0.25 * base_s.max(0.0) + 0.01 * intervals as f64
}

/// What the driver claimed, summed over its timed intervals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims {
    /// Σ seconds of reference and sampled trials.
    pub timed_s: f64,
    /// Σ calls inside them.
    pub calls: u64,
    /// Timed intervals (reference + sampled trials).
    pub intervals: usize,
    /// Σ on-CPU seconds (every interval reported it).
    pub run_s: Option<f64>,
    /// Σ run-queue seconds (every interval reported it).
    pub runq_s: Option<f64>,
}

impl Claims {
    /// What the parsed protocol of one driver process claims.
    pub fn of(p: &Parsed) -> Claims {
        let sampled: Vec<_> = p.sched.iter().filter(|s| s.kind == "sampled").collect();
        let sum = |v: Vec<Option<u64>>| {
            v.into_iter()
                .try_fold(0u64, |a, x| x.map(|x| a.saturating_add(x)))
                .map(|ns| ns as f64 / 1e9)
        };
        let run: Vec<Option<u64>> = (0..p.sched.len())
            .map(|i| p.sched_run_ns.get(i).copied().flatten())
            .collect();
        Claims {
            timed_s: p.trials.iter().map(|t| t.seconds).sum::<f64>()
                + sampled.iter().map(|s| s.seconds).sum::<f64>(),
            calls: p.trials.iter().map(|t| t.measurements).sum::<u64>()
                + sampled.iter().map(|s| s.calls).sum::<u64>(),
            intervals: p.trials.len() + sampled.len(),
            run_s: if p.sched.is_empty() { None } else { sum(run) },
            runq_s: if p.sched.is_empty() {
                None
            } else {
                sum(p.sched.iter().map(|s| s.runq_ns).collect())
            },
        }
    }
}

/// One reading of the child's CPU time by the parent, at a gate of the driver
/// (`pqperf_driver::Gate`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Result lines received up to and including the gate's `PQPERF wait` line.
    pub line: usize,
    /// Σ CPU nanoseconds of every process of the child (`procinfo::TreeCpu`).
    pub cpu_ns: u64,
    /// No task of the child was running when it was read.
    pub settled: bool,
    /// The child's processes (host pids).
    pub pids: Vec<i32>,
    /// Every task's schedstat (on-CPU and run-queue nanoseconds) at the reading.
    pub tasks: Vec<pqperf_ffi::procinfo::TaskSched>,
    /// The main threads' schedstat when the first of them arrived on a CPU after the parent's
    /// `go` at this gate (`untrusted::Session::arrival`; `None`: not seen).
    pub arrival: Option<Vec<pqperf_ffi::procinfo::TaskSched>>,
    /// Seconds since the parent started the child.
    pub at_s: f64,
    /// With relayed inputs, the CPU nanoseconds and schedstat read at the gate's `wait` line,
    /// before the driver loaded the next window's inputs: the window that ends at this
    /// reading ends there (the loading's CPU is bounded on its own, `runner::spawn`, and its
    /// waits for the CPU lie outside any interval).
    pub closing: Option<(u64, Vec<pqperf_ffi::procinfo::TaskSched>)>,
    /// The measuring CPU's softirq count at the reading (`None`: not pinned or not readable).
    pub softirqs: Option<u64>,
    /// The count at the gate's `wait` line, where a window closed by [`Reading::closing`] ends.
    pub closing_softirqs: Option<u64>,
    /// The measuring CPU's hard interrupt count at the reading (`procinfo::IrqReader::read`:
    /// its column of `/proc/interrupts`; read at the gates around sampled windows only,
    /// `None` elsewhere or where not readable).
    pub hardirqs: Option<u64>,
    /// The hard interrupt count at the gate's `wait` line (like `closing_softirqs`).
    pub closing_hardirqs: Option<u64>,
    /// A loading of relayed inputs over its allowance, explained by the softirqs in it
    /// (`runner::spawn`, [`explained`]): the message, kept with the other explained excesses.
    pub interrupted: Option<String>,
}

impl Reading {
    /// The CPU nanoseconds and schedstat where the window ending at this reading ends.
    fn end(&self) -> (u64, &[pqperf_ffi::procinfo::TaskSched]) {
        match &self.closing {
            Some((cpu, tasks)) => (*cpu, tasks),
            None => (self.cpu_ns, &self.tasks),
        }
    }

    /// The softirq count where the window ending at this reading ends.
    fn end_softirqs(&self) -> Option<u64> {
        if self.closing.is_some() {
            self.closing_softirqs
        } else {
            self.softirqs
        }
    }

    /// The hard interrupt count where the window ending at this reading ends.
    fn end_hardirqs(&self) -> Option<u64> {
        if self.closing.is_some() {
            self.closing_hardirqs
        } else {
            self.hardirqs
        }
    }
}

/// The measuring CPU's softirqs between two counts (`None`: either unknown).
pub fn softirqs_between(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// Whether `softirqs` on the measuring CPU explain `excess_s` seconds over a bound
/// (`pqperf_model::kernelcheck::softirqs_explain`); the message for the evidence when they
/// do, naming `what` exceeded.
pub fn explained(what: &str, excess_s: f64, softirqs: Option<u64>) -> Option<String> {
    let n = softirqs?;
    pqperf_model::kernelcheck::softirqs_explain(excess_s, n).then(|| {
        format!(
            "{what}, {:.0} µs over its bound: explained by {n} softirq(s) on the measuring CPU (up to {:.0} µs each with its interrupt)",
            excess_s * 1e6,
            pqperf_model::kernelcheck::SOFTIRQ_EVENT_S * 1e6
        )
    })
}

/// A process whose only problems are windows over their bound that nothing explains, in at
/// most `pqperf_model::kernelcheck::isolated_max` of its windows, is disturbed, not
/// inconsistent: host work the parent cannot count (hard interrupts without a softirq, IPIs)
/// does that to single windows of honest processes, and a disturbed process is re-run and
/// never published. `excess` are those problems with their window (1-based: the kernel
/// check's and the relayed inputs' loading); when they qualify, they move from `problems`
/// to the evidence's `interrupted` list (with why) and `problems` is left empty.
pub fn isolate(
    problems: &mut Vec<String>,
    excess: &[(usize, String)],
    windows: usize,
    kernel_check: &mut Value,
) {
    if excess.is_empty() || problems.iter().any(|p| !excess.iter().any(|(_, m)| m == p)) {
        return;
    }
    let mut at: Vec<usize> = excess.iter().map(|(i, _)| *i).collect();
    at.sort_unstable();
    at.dedup();
    let max = pqperf_model::kernelcheck::isolated_max(windows);
    if windows == 0 || at.len() > max {
        return;
    }
    let Some(list) = kernel_check
        .get_mut("interrupted")
        .and_then(|v| v.as_array_mut())
    else {
        return;
    };
    for (_, m) in excess {
        list.push(Value::from(format!(
            "{m}: not explained, but in {} of {windows} window(s) (at most {max} disturb a process without making it inconsistent)",
            at.len()
        )));
    }
    if let Some(v) = kernel_check
        .get_mut("problems")
        .and_then(|v| v.as_array_mut())
    {
        v.retain(|p| !excess.iter().any(|(_, m)| p == m));
    }
    problems.clear();
}

/// The unexplained window excesses a `kernel_check` evidence object lists (`unexplained`).
pub fn unexplained_of(kernel_check: &Value) -> Vec<(usize, String)> {
    kernel_check["unexplained"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    Some((
                        x["window"].as_u64()? as usize,
                        x["problem"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a `kernel_check` evidence object lists excesses explained by interrupts.
pub fn interrupted(kernel_check: &Value) -> bool {
    kernel_check["interrupted"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
}

/// Relative tolerance of a window's kernel CPU time against the interval the driver claims
/// inside it (the interval is wall time on the raw monotonic clock, the CPU time the
/// scheduler's clock: the same counter on x86 and arm64).
pub const WINDOW_REL: f64 = pqperf_model::kernelcheck::WINDOW_REL;
/// Fixed run-queue seconds a window may hold beyond its claimed interval, [`WINDOW_ABS_S`] and
/// the mean waits allowed (`pqperf_model::kernelcheck::WINDOW_WAIT_ABS_S`).
pub const WINDOW_WAIT_ABS_S: f64 = pqperf_model::kernelcheck::WINDOW_WAIT_ABS_S;
/// Fixed CPU seconds of a window beyond its claimed interval: the driver's return from the
/// pipe read, its scheduler snapshots (`getrusage`, `/proc/thread-self/schedstat` and
/// `sched`) around the interval, the output digest, its lines and the next read. Measured
/// with the toy signature beside six builds (load 12–15): 86–280 µs per window, 375 µs with
/// a thread relaying the lines (`rewrite.h` at 100 %); this is 1.6 × the largest.
pub const WINDOW_ABS_S: f64 = 600e-6;
/// CPU seconds per byte of declared output the driver digests inside a window.
pub const DIGEST_S_PER_BYTE: f64 = 5e-9;
/// CPU seconds the child may spend after its last gate (its exit) beyond
/// [`EXIT_S_PER_MIB`] per MiB of `ru_maxrss`: CPU the readings did not see (a process that
/// ended between two readings) shows there.
pub const EXIT_ABS_S: f64 = 0.02;
/// Exit CPU seconds per MiB of peak RSS (unmapping).
pub const EXIT_S_PER_MIB: f64 = 0.0002;

/// Whether `op` is one step of a key exchange (timed per call inside whole exchanges).
pub fn per_step_op(op: &str) -> bool {
    matches!(op, "init_a" | "init_b" | "derive_a" | "derive_b") || op.starts_with("pass")
}

/// The check's inputs besides the claims.
pub struct Kernel<'a> {
    /// What the kernel accounted.
    pub acc: &'a ChildAccounting,
    /// The process's lifetime as the parent saw it.
    pub wall_s: f64,
    /// Tick rate of a fixed-rate counter (Hz), when known.
    pub tick_hz: Option<f64>,
    /// The parent's readings of the child's CPU time at its gates (`runner::spawn`).
    pub readings: &'a [Reading],
    /// The result lines as received (the readings' `line` indices point into them).
    pub lines: &'a [String],
    /// Seconds the hypervisor took from the process's CPU while it lived (steal time of the
    /// pinned CPU in `/proc/stat`, read by the parent before and after; 0 when unknown). A
    /// task whose virtual CPU is stolen is neither on the CPU nor in the run queue, so a trial
    /// may last that much longer than its scheduler figures.
    pub steal_s: f64,
    /// The parent's resident bytes when it started the process (the forked waiter's RSS,
    /// which `ru_maxrss` includes); `None` when unknown.
    pub parent_rss_bytes: Option<u64>,
}

/// Bytes a claimed peak RSS may exceed `ru_maxrss` (page rounding, the read order).
pub const RSS_ABOVE_SLACK: u64 = 1 << 20;
/// Bytes and share by which a claimed peak RSS may fall short of `ru_maxrss` once the
/// driver's own peak dominates it: what the process touched after it read its peak (the
/// memory pass: the painted stack region and the call's heap) plus this margin and 5 %.
pub const RSS_BELOW_SLACK: u64 = 4 << 20;

/// The memory claims against `ru_maxrss` (module doc): problems.
fn check_memory(args: &DriverArgs, p: &Parsed, k: &Kernel) -> (Vec<String>, Option<u64>) {
    let mut bad = Vec::new();
    let Some(max) = k.acc.maxrss_kib.map(|x| x * 1024) else {
        return (bad, None);
    };
    let Some(peak) = p
        .meta
        .str("peak_rss_bytes")
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return (bad, Some(max));
    };
    if peak > max + RSS_ABOVE_SLACK {
        bad.push(format!(
            "claimed peak RSS {peak} bytes, above the kernel's ru_maxrss {max} bytes"
        ));
    }
    // The lower bound holds only when the driver's peak made ru_maxrss (not the forked
    // waiter's copy of the parent).
    let parent = k.parent_rss_bytes.unwrap_or(u64::MAX);
    let dominated = max
        > parent
            .saturating_add(parent / 10)
            .saturating_add(RSS_BELOW_SLACK);
    let after = args.stack_region + p.mem.as_ref().and_then(|m| m.heap_peak_bytes).unwrap_or(0);
    let floor = max.saturating_sub(max / 20 + after + RSS_BELOW_SLACK);
    if dominated && peak < floor {
        bad.push(format!(
            "claimed peak RSS {peak} bytes, the kernel's ru_maxrss is {max} bytes (the parent's RSS {parent} bytes)"
        ));
    }
    (bad, Some(max))
}

/// Checks a complete driver process; returns the problems (empty: consistent) and the
/// evidence for its process entry.
pub fn check(args: &DriverArgs, p: &Parsed, k: &Kernel) -> (Vec<String>, Value) {
    check_published(args, p, k, None)
}

/// [`check`] where the record will publish other sampled trials than the driver's
/// (`published`: the relayed verify windows' altered calls dropped,
/// `relay::Plan::drop_tampered_samples`): the window rule holds the published trials' fenced
/// means — the record's headline — to their windows.
pub fn check_published(
    args: &DriverArgs,
    p: &Parsed,
    k: &Kernel,
    published: Option<&[Vec<u64>]>,
) -> (Vec<String>, Value) {
    let mut bad = Vec::new();
    let c = Claims::of(p);
    let cpu = k.acc.cpu_s();
    // Counts.
    if p.trials.len() != args.trials as usize {
        bad.push(format!(
            "{} reference trial(s) reported, {} asked",
            p.trials.len(),
            args.trials
        ));
    }
    for (i, t) in p.trials.iter().enumerate() {
        if t.measurements != args.iters {
            bad.push(format!(
                "trial {}: {} calls reported, {} asked",
                i + 1,
                t.measurements,
                args.iters
            ));
        }
        if t.seconds < args.iters as f64 * MIN_CALL_S {
            bad.push(format!(
                "trial {}: {} s for {} calls (below {MIN_CALL_S} s per call)",
                i + 1,
                t.seconds,
                t.measurements
            ));
        }
    }
    let refs = p.sched.iter().filter(|s| s.kind == "reference").count();
    if refs != p.trials.len() {
        bad.push(format!(
            "{refs} scheduler line(s) for {} reference trial(s)",
            p.trials.len()
        ));
    }
    let sampled: Vec<_> = p.sched.iter().filter(|s| s.kind == "sampled").collect();
    let want_calls = args.iters.min(SAMPLE_CALLS);
    if !args.samples && (!sampled.is_empty() || !p.sample_trials.is_empty()) {
        bad.push("sampled trials reported although none were asked".into());
    }
    if sampled.len() > args.trials as usize || sampled.len() != p.sample_trials.len() {
        bad.push(format!(
            "{} sampled trial(s) with {} SAMPLES line(s) for {} trial(s)",
            sampled.len(),
            p.sample_trials.len(),
            args.trials
        ));
    }
    for (s, v) in sampled.iter().zip(&p.sample_trials) {
        if s.calls != want_calls || v.len() as u64 != want_calls {
            bad.push(format!(
                "sampled trial {}: {} calls / {} samples reported, {want_calls} expected",
                s.trial,
                s.calls,
                v.len()
            ));
        }
    }
    // Per-call samples add up to their sampled trial: SAMPLES alone (the robust figure's
    // input) cannot be scaled. The ticks are read between the trial's two clock reads, one
    // after each call, so a preemption inside the trial is inside the samples too: their
    // sum is the interval less the clock reads around the loop (a preemption exactly
    // between a clock read and the next tick read, nanoseconds apart, makes a rare
    // inconsistent process, which is re-run) and less what the hypervisor took.
    if let Some(hz) = k.tick_hz.filter(|h| *h > 0.0) {
        for (s, v) in sampled.iter().zip(&p.sample_trials) {
            let sum = v.iter().fold(0u64, |a, x| a.saturating_add(*x)) as f64 / hz;
            let waited = k.steal_s;
            let tol = SAMPLE_SUM_REL * s.seconds + TICK_ABS_S;
            if sum > s.seconds + tol || sum < s.seconds - waited - tol {
                bad.push(format!(
                    "sampled trial {}: per-call samples add up to {sum:.6} s, the trial claims {:.6} s (tolerance {:.0} % + {TICK_ABS_S} s)",
                    s.trial,
                    s.seconds,
                    SAMPLE_SUM_REL * 100.0
                ));
            }
        }
    }
    // Memory claims within the kernel's ru_maxrss.
    let (mem_bad, maxrss) = check_memory(args, p, k);
    bad.extend(mem_bad);
    // Fits the lifetime.
    if c.timed_s > k.wall_s + WALL_SLACK_S {
        bad.push(format!(
            "claimed {:.6} s of timed calls in a process that lived {:.6} s",
            c.timed_s, k.wall_s
        ));
    }
    // Too much claimed.
    let sl = slack(cpu, c.intervals);
    match c.run_s {
        Some(run) if run > cpu + sl => bad.push(format!(
            "claimed {run:.6} s on CPU, the kernel accounted {cpu:.6} s of CPU time (slack {sl:.3} s)"
        )),
        Some(_) => {}
        None if k.acc.run_ns.is_some() => {
            bad.push("no on-CPU time reported although the kernel provides schedstat".into())
        }
        None => {}
    }
    if let (Some(q), Some(d)) = (c.runq_s, k.acc.run_delay_ns) {
        let d = d as f64 / 1e9;
        let sl = slack(d, c.intervals);
        if q > d + sl {
            bad.push(format!(
                "claimed {q:.6} s of run-queue wait, the kernel accounted {d:.6} s (slack {sl:.3} s)"
            ));
        }
    }
    for (i, s) in p.sched.iter().enumerate() {
        if let (Some(r), Some(q)) = (p.sched_run_ns.get(i).copied().flatten(), s.runq_ns) {
            let inside = (r + q) as f64 / 1e9;
            if s.seconds > inside + slack(s.seconds, 1) + k.steal_s {
                bad.push(format!(
                    "{} trial {}: {:.6} s claimed, only {inside:.6} s of it on CPU or waiting for it (and {:.6} s stolen by the hypervisor)",
                    s.kind, s.trial, s.seconds, k.steal_s
                ));
            }
        }
    }
    // Ticks agree with seconds (not for per-step timing, which sums per-call reads of the
    // counter and the clock taken apart).
    let core_cycles = p
        .counter
        .as_deref()
        .is_some_and(|c| Counter::parse(c).is_core_cycles());
    let per_step = per_step_op(&args.op);
    for (i, t) in p.trials.iter().enumerate().filter(|_| !per_step) {
        let Some(n) = t.cycles else { continue };
        let n = n as f64;
        if core_cycles {
            if n > t.seconds * 1e9 * MAX_CYCLES_PER_NS + 1000.0 {
                bad.push(format!(
                    "trial {}: {n} cycles in {} s (above {MAX_CYCLES_PER_NS} per ns)",
                    i + 1,
                    t.seconds
                ));
            }
        } else if let Some(hz) = k.tick_hz.filter(|h| *h > 0.0) {
            let want = t.seconds * hz;
            if (n - want).abs() > TICK_REL * want + TICK_ABS_S * hz {
                bad.push(format!(
                    "trial {}: {n} ticks in {} s, {want:.0} expected at {hz:.0} Hz",
                    i + 1,
                    t.seconds
                ));
            }
        }
    }
    // The parent's windows: too little claimed. Under an emulator its own translation work
    // runs inside the windows, so their CPU bounds nothing there (emulated timings are never
    // performance figures); the gate structure is still checked, and the evidence says so.
    let emulated = pqperf_ffi::emulation::emulated();
    let mut w = check_windows(args, p, k, per_step, emulated.is_none(), &mut bad);
    let floors = headline_floor(
        p,
        published.unwrap_or(&p.sample_trials),
        k,
        &w,
        per_step || emulated.is_some(),
    );
    let floor = floors.as_ref().map(|(now, _)| now.clone());
    if let Some((now, first)) = &floors {
        // A sampled trial below the current rule's floor but not below the first rule's
        // (5 %, `floor::PROCESS_REL_V1`): interference the counted interrupts do not explain
        // or a forgery within that share; the process is disturbed (re-run, never
        // published). Below the first rule's floor: inconsistent.
        let lax: Vec<usize> = first.failing().iter().map(|(i, _)| *i).collect();
        for (i, m) in now.failing() {
            if lax.contains(&i) {
                bad.push(m);
            } else {
                w.interrupted.push(format!(
                    "{m}; within the {} % of rule {}: the process is disturbed, not inconsistent",
                    pqperf_model::floor::PROCESS_REL_V1 * 100.0,
                    pqperf_model::floor::RULE_V1
                ));
            }
        }
    }
    let evidence = json!({
        "windows_bound": match &emulated {
            None => "in force".to_string(),
            Some(e) => format!("not in force: emulated ({e}); the emulator's translation runs inside the windows"),
        },
        "cpu_s": round6(cpu),
        "wall_s": round6(k.wall_s),
        "run_delay_s": k.acc.run_delay_ns.map(|d| round6(d as f64 / 1e9)),
        "steal_s": round6(k.steal_s),
        "claimed_timed_s": round6(c.timed_s),
        "claimed_on_cpu_s": c.run_s.map(round6),
        "ready_cpu_s": w.ready_cpu_s.map(round6),
        "window_cpu_s": w.cpu_s.iter().map(|x| round6(*x)).collect::<Vec<_>>(),
        "window_claimed_s": w.claimed_s.iter().map(|x| round6(*x)).collect::<Vec<_>>(),
        "window_calls": w.calls,
        "window_sampled": w.sampled,
        "floor": floor.as_ref().map(pqperf_model::floor::WindowFloor::to_json),
        "window_run_delay_s": w
            .run_delay_s
            .iter()
            .map(|x| x.map(round6))
            .collect::<Option<Vec<_>>>(),
        "window_run_delay_sum_s": w
            .run_delay_s
            .iter()
            .copied()
            .collect::<Option<Vec<_>>>()
            .map(|v| round6(v.iter().sum())),
        "window_tolerance_s": w.tolerance_s.map(round6),
        "window_wake_wait_s": w.wake_wait_s.iter().map(|x| x.map(round6)).collect::<Vec<_>>(),
        "window_main_s": w.main_s.iter().map(|x| x.map(round6)).collect::<Vec<_>>(),
        "window_wait_allowance_s": w
            .wait_allowance_s
            .iter()
            .map(|x| x.map(round6))
            .collect::<Vec<_>>(),
        "exit_cpu_s": w.exit_cpu_s.map(round6),
        "softirq_cpu": args.cpu.filter(|_| w.softirqs.iter().any(Option::is_some)),
        "window_softirqs": w.softirqs,
        "window_hardirqs": w.hardirqs,
        "interrupted": w
            .interrupted
            .iter()
            .cloned()
            .chain(k.readings.iter().filter_map(|r| r.interrupted.clone()))
            .collect::<Vec<_>>(),
        "maxrss_bytes": maxrss,
        "unexplained": w
            .unexplained
            .iter()
            .map(|(i, m)| json!({ "window": i, "problem": m }))
            .collect::<Vec<_>>(),
        "windows": w.cpu_s.len(),
        "problems": bad,
    });
    (bad.clone(), evidence)
}

/// What the windows showed (evidence).
#[derive(Default)]
struct Windows {
    ready_cpu_s: Option<f64>,
    cpu_s: Vec<f64>,
    claimed_s: Vec<f64>,
    /// Calls the parent asked for in each window (the floor's divisor).
    calls: Vec<u64>,
    /// Whether each window holds a sampled trial.
    sampled: Vec<bool>,
    /// Run-queue seconds of each window (`None`: no schedstat at its end).
    run_delay_s: Vec<Option<f64>>,
    /// The driver thread's wait for the CPU after the parent's `go` (`None`: not seen).
    wake_wait_s: Vec<Option<f64>>,
    /// The driver thread's on-CPU and run-queue seconds after that first arrival.
    main_s: Vec<Option<f64>>,
    /// Run-queue seconds allowed for the untimed work after the interval.
    wait_allowance_s: Vec<Option<f64>>,
    /// Fixed CPU seconds allowed beyond each interval.
    tolerance_s: Option<f64>,
    exit_cpu_s: Option<f64>,
    /// Softirqs of the measuring CPU in each window (`None`: not read).
    softirqs: Vec<Option<u64>>,
    /// Hard interrupts of the measuring CPU in each window (`None`: not read).
    hardirqs: Vec<Option<u64>>,
    /// Excesses explained by those interrupts (not problems).
    interrupted: Vec<String>,
    /// Excesses nothing explains: the window (1-based) and the problem, also in `bad`
    /// ([`isolate`] decides whether they leave the process disturbed).
    unexplained: Vec<(usize, String)>,
}

/// The driver thread's figures of one window (module doc).
#[derive(Debug, Clone, Copy)]
struct MainWindow {
    /// Wait for the CPU between the parent's `go` and the thread's first arrival.
    wake_s: f64,
    /// On-CPU seconds after that arrival up to the closing gate.
    run_s: f64,
    /// On-CPU plus run-queue seconds after that arrival (what a wall-time interval inside
    /// the window holds at most, with the untimed work).
    busy_s: f64,
    /// Run-queue seconds allowed for the untimed work after the interval.
    allowance_s: f64,
}

/// Mean waits allowed per window for the driver's untimed work after its interval (its
/// lines and the next gate's read may be preempted once): the mean wait of the window's
/// waits after the first arrival, × this.
pub const WINDOW_WAITS_ALLOWED: f64 = 2.0;

/// Records the parent's sighting of the driver's first arrival on a CPU after the `go` of
/// the last reading (`runner::spawn`).
pub fn note_arrival(
    readings: &mut [Reading],
    arrival: Option<Vec<pqperf_ffi::procinfo::TaskSched>>,
) {
    if let Some(last) = readings.last_mut() {
        last.arrival = arrival;
    }
}

/// The driver's thread in the window from gate `a` to gate `b`: the main thread whose
/// arrival the parent saw after `a`'s `go`, its schedstat at `a`, at that arrival and at
/// `b`. `None` without schedstat or without a sighting.
fn main_window(a: &Reading, b: &Reading) -> Option<MainWindow> {
    use pqperf_ffi::procinfo::TaskSched;
    let arrival = a.arrival.as_ref()?;
    let at = |v: &[TaskSched], tid: i32| v.iter().find(|t| t.tid == tid).copied();
    let (g, s) = arrival.iter().find_map(|s| {
        let g = at(&a.tasks, s.tid)?;
        (s.pcount > g.pcount).then_some((g, *s))
    })?;
    let e = at(b.end().1, s.tid)?;
    let ns = |x: u64| x as f64 / 1e9;
    let wake_s = ns(s.run_delay_ns.saturating_sub(g.run_delay_ns));
    let run_s = ns(e.run_ns.saturating_sub(s.run_ns));
    let rest_wait = ns(e.run_delay_ns.saturating_sub(s.run_delay_ns));
    let rest_arrivals = e.pcount.saturating_sub(s.pcount);
    // The allowance follows what the kernel shows of the window: a thread that never waited
    // again after its arrival (no arrival since: every wait ends with one) held no wait an
    // interval could hide, and its bound is the CPU bound's alone; one that waited gets two
    // of its mean waits and the fixed slice (issue 36).
    let allowance_s = if rest_arrivals == 0 {
        0.0
    } else {
        WINDOW_WAITS_ALLOWED * rest_wait / rest_arrivals as f64 + WINDOW_WAIT_ABS_S
    };
    Some(MainWindow {
        wake_s,
        run_s,
        busy_s: run_s + rest_wait,
        allowance_s,
    })
}

/// Whether the driver said its counter counts core cycles (no fixed rate).
fn core_cycles(p: &Parsed) -> bool {
    p.counter
        .as_deref()
        .is_none_or(|c| Counter::parse(c).is_core_cycles())
}

/// Bytes of declared output (the driver digests these inside a window).
fn declared_output_bytes(p: &Parsed) -> f64 {
    [
        "pk_bytes",
        "sk_bytes",
        "ct_bytes",
        "ss_bytes",
        "signature_bytes",
        "digest_bytes",
    ]
    .iter()
    .filter_map(|key| p.meta.str(key).and_then(|v| v.parse::<u64>().ok()))
    .map(|v| v.min(1 << 29) as f64)
    .sum()
}

/// The per-window check (module doc): every timed interval ran between two readings of the
/// child's CPU time by the parent; the CPU the kernel counted there bounds the interval
/// claimed inside it from below (not with `cpu_bound` false: under an emulator, whose
/// translation runs inside the windows; the gates are still checked). Problems go to `bad`.
fn check_windows(
    args: &DriverArgs,
    p: &Parsed,
    k: &Kernel,
    per_step: bool,
    cpu_bound: bool,
    bad: &mut Vec<String>,
) -> Windows {
    let mut w = Windows::default();
    let r = k.readings;
    let intervals = args.trials as usize * if args.samples && !per_step { 2 } else { 1 };
    if r.len() != intervals + 2 {
        bad.push(format!(
            "the driver stopped at {} gate(s) of the parent, {} expected (one before and after each of {intervals} timed interval(s), one at its end)",
            r.len(),
            intervals + 2
        ));
        if let Some(last) = r.last() {
            check_exit(k, last, &mut w, cpu_bound, bad);
        }
        return w;
    }
    w.ready_cpu_s = Some(r[0].cpu_ns as f64 / 1e9);
    for (i, x) in r.iter().enumerate() {
        if !x.settled {
            bad.push(format!(
                "gate {i}: a task of the child was still running {:.1} s after the driver stopped there",
                crate::verify::SETTLE_S
            ));
        }
        if i > 0
            && let Some(gone) = r[i - 1].pids.iter().find(|q| !x.pids.contains(q))
        {
            bad.push(format!(
                "gate {i}: process {gone} of the child ended while the driver was timing (its CPU time would leave the parent's readings)"
            ));
        }
    }
    let digest_s = declared_output_bytes(p) * DIGEST_S_PER_BYTE;
    for i in 1..=intervals {
        let (a, b) = (&r[i - 1], &r[i]);
        let seg = k
            .lines
            .get(a.line..b.line.min(k.lines.len()))
            .unwrap_or(&[]);
        let seg_parsed = crate::output::parse_output(seg);
        let c = Claims::of(&seg_parsed);
        let (b_cpu, b_tasks) = b.end();
        let cpu = b_cpu.saturating_sub(a.cpu_ns) as f64 / 1e9;
        w.cpu_s.push(cpu);
        w.claimed_s.push(c.timed_s);
        let sampled_window = seg_parsed.sample_trials.len() == 1;
        w.sampled.push(sampled_window);
        w.calls.push(if sampled_window {
            args.iters.min(SAMPLE_CALLS)
        } else {
            args.iters
        });
        if c.intervals != 1 {
            bad.push(format!(
                "window {i}: {} timed interval(s) reported between two gates, 1 expected",
                c.intervals
            ));
            continue;
        }
        // Every figure of the interval is bounded below by the window's CPU time: its wall
        // seconds and its per-call samples summed. (Not its on-CPU time: the driver reads
        // that from its own schedstat, which the kernel brings up to date only at a
        // scheduler event, so a short interval may read 0.)
        let tol = WINDOW_ABS_S + digest_s;
        // (None for per-step timing, whose windows bound nothing: `validate` then checks
        // only their shape.)
        w.tolerance_s = (!per_step).then_some(tol);
        // The run-queue wait of the window's tasks (schedstat of each at both readings), and
        // the driver's thread's own figures less its wait for the CPU after `go`.
        let wait = (!b_tasks.is_empty())
            .then(|| pqperf_ffi::procinfo::run_delay_between(&a.tasks, b_tasks) as f64 / 1e9);
        w.run_delay_s.push(wait);
        let main = main_window(a, b);
        let irq = softirqs_between(a.softirqs, b.end_softirqs());
        w.softirqs.push(irq);
        w.hardirqs
            .push(softirqs_between(a.hardirqs, b.end_hardirqs()));
        w.wake_wait_s.push(main.map(|m| m.wake_s));
        w.main_s.push(main.map(|m| m.busy_s));
        w.wait_allowance_s.push(main.map(|m| m.allowance_s));
        let mut figures = vec![("interval", c.timed_s)];
        let ticks = k.tick_hz.filter(|h| *h > 0.0 && !core_cycles(p));
        if let (Some(hz), [v]) = (ticks, seg_parsed.sample_trials.as_slice()) {
            figures.push(("per-call samples", v.iter().sum::<u64>() as f64 / hz));
        }
        // A window over its bound whose interrupts explain the excess is not a problem: the
        // process is disturbed (module doc).
        let mut judge = |msg: String, excess_s: f64| match explained(&msg, excess_s, irq) {
            Some(e) => w.interrupted.push(e),
            None => {
                w.unexplained.push((i, msg.clone()));
                bad.push(msg);
            }
        };
        for (what, x) in figures {
            if cpu_bound && !per_step && cpu > x * (1.0 + WINDOW_REL) + tol {
                judge(
                    format!(
                        "window {i}: the kernel counted {cpu:.6} s of CPU time, the {what} claimed inside it is {x:.6} s (tolerance {:.0} % + {:.0} µs)",
                        WINDOW_REL * 100.0,
                        tol * 1e6
                    ),
                    cpu - x * (1.0 + WINDOW_REL) - tol,
                );
            }
            // A claimed interval is wall time: it holds the driver thread's waits for the CPU
            // too, so its CPU time cannot be claimed in its place (which hides the wait).
            if let Some(m) = main
                && cpu_bound
                && !per_step
                && m.busy_s > x * (1.0 + WINDOW_REL) + tol + m.allowance_s
            {
                judge(
                    format!(
                        "window {i}: the driver's thread was on the CPU {:.6} s and waited for it {:.6} s after it started ({:.6} s of run-queue wait in {} wait(s) allowed for its untimed work), the {what} claimed inside it is {x:.6} s (a wall-time interval holds both; tolerance {:.0} % + {:.0} µs)",
                        m.run_s,
                        m.busy_s - m.run_s,
                        m.allowance_s,
                        WINDOW_WAITS_ALLOWED,
                        WINDOW_REL * 100.0,
                        tol * 1e6
                    ),
                    m.busy_s - x * (1.0 + WINDOW_REL) - tol - m.allowance_s,
                );
            }
        }
    }
    check_exit(k, &r[intervals + 1], &mut w, cpu_bound, bad);
    w
}

/// The window rule of one process (`pqperf_model::floor::WindowFloor`): its sampled
/// windows' verified per-call figures and its sampled trials' fenced means, under the
/// current rule (`floor::Rule::V2`, recorded) and the first (`floor::Rule::V1`: where a
/// trial fails only the current rule, the process is disturbed). `None` where the windows
/// bound nothing (per-step timing, an emulator), without a fixed tick rate, or when the
/// gates or the sampled trials were not as expected (already a problem).
fn headline_floor(
    p: &Parsed,
    trials: &[Vec<u64>],
    k: &Kernel,
    w: &Windows,
    unbounded: bool,
) -> Option<(
    pqperf_model::floor::WindowFloor,
    pqperf_model::floor::WindowFloor,
)> {
    use pqperf_model::floor::{Irqs, Rule, WindowFloor};
    w.tolerance_s?;
    let hz = k.tick_hz.filter(|h| *h > 0.0 && !core_cycles(p))?;
    let n = w.cpu_s.len();
    if unbounded || n == 0 || w.calls.len() != n {
        return None;
    }
    if w.softirqs.len() != n || w.hardirqs.len() != n || w.sampled.len() != n {
        return None;
    }
    let irqs: Vec<Irqs> = (0..n)
        .map(|i| Irqs {
            soft: w.softirqs[i],
            hard: w.hardirqs[i],
        })
        .collect();
    let of = |rule| WindowFloor::of(rule, &w.cpu_s, &w.calls, &irqs, &w.sampled, trials, hz);
    Some((of(Rule::V2)?, of(Rule::V1)?))
}

/// The CPU time after the driver's last gate `last` (its exit) is small: CPU time the
/// readings did not see shows there.
fn check_exit(k: &Kernel, last: &Reading, w: &mut Windows, cpu_bound: bool, bad: &mut Vec<String>) {
    let exit = k.acc.cpu_s() - last.cpu_ns as f64 / 1e9;
    w.exit_cpu_s = Some(exit);
    let mib = k.acc.maxrss_kib.unwrap_or(0) as f64 / 1024.0;
    let allowed = EXIT_ABS_S + EXIT_S_PER_MIB * mib;
    if cpu_bound && exit > allowed {
        bad.push(format!(
            "{exit:.6} s of CPU time after the driver's last gate (its exit; {allowed:.6} s allowed): CPU the parent's readings did not see"
        ));
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The host's fixed tick rate, measured once per pqperf process.
pub fn tick_hz() -> Option<f64> {
    static HZ: OnceLock<Option<f64>> = OnceLock::new();
    *HZ.get_or_init(|| pqperf_ffi::counters::ticks_hz(20).map(|h| h as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ApiSpec;
    use pqperf_model::record::{Trial, TrialSched};

    fn args() -> DriverArgs {
        DriverArgs {
            lib: "lib/x.so".into(),
            op: "sign".into(),
            bytes: 0,
            trials: 2,
            iters: 10,
            warmups: 1,
            cpu: None,
            samples: false,
            force_ticks: true,
            api: ApiSpec::Iccs,
            stack_region: crate::driver::DEFAULT_STACK_REGION,
            seed: None,
            pool_max: None,
            prepare: false,
            relayed: false,
        }
    }

    fn sched(trial: u64, seconds: f64, runq: f64) -> TrialSched {
        TrialSched {
            kind: "reference".into(),
            trial,
            calls: 10,
            seconds,
            count: 0,
            counter_per_ns: None,
            nivcsw: 0,
            nvcsw: 0,
            runq_ns: Some((runq * 1e9) as u64),
            minflt: 0,
            majflt: 0,
            migrations: None,
            cpu_changed: None,
            preempted_share: None,
            disturbed: false,
        }
    }

    fn parsed(secs: f64, run: f64, runq: f64) -> Parsed {
        let mut p = Parsed {
            counter: Some("tsc".into()),
            ..Default::default()
        };
        for t in 1..=2 {
            p.trials.push(Trial {
                measurements: 10,
                seconds: secs,
                cycles: Some((secs * 2e9) as i64),
                ..Default::default()
            });
            p.sched.push(sched(t, secs, runq));
            p.sched_run_ns.push(Some((run * 1e9) as u64));
        }
        p
    }

    /// The result lines and the parent's readings of a gated driver process with these
    /// claims: `ready` s of CPU before the first interval, the windows' CPU seconds
    /// (`None`: as claimed), then 1 ms up to the last gate.
    fn gated(
        a: &DriverArgs,
        p: &Parsed,
        ready: f64,
        windows: Option<Vec<f64>>,
    ) -> (Vec<Reading>, Vec<String>) {
        let mut lines = Vec::new();
        let mut claims = Vec::new();
        let mut r = Vec::new();
        let mut cpu = ready;
        let wait = |lines: &mut Vec<String>, r: &mut Vec<Reading>, cpu: f64| {
            lines.push(format!("PQPERF\twait\t{}", r.len()));
            r.push(Reading {
                line: lines.len(),
                cpu_ns: (cpu * 1e9) as u64,
                settled: true,
                pids: vec![7],
                tasks: Vec::new(),
                at_s: 0.0,
                arrival: None,
                closing: None,
                ..Default::default()
            });
        };
        let mut segs: Vec<Vec<String>> = Vec::new();
        for (i, t) in p.trials.iter().enumerate() {
            segs.push(vec![format!(
                "TRIAL\t{}\t{}\t{:.9}\t{}",
                i + 1,
                t.measurements,
                t.seconds,
                t.cycles.unwrap_or(0)
            )]);
            claims.push(t.seconds);
        }
        for (j, s) in p.sched.iter().filter(|s| s.kind == "sampled").enumerate() {
            let mut seg = vec![format!(
                "PQPERF\tsample_sched\ttrial={} calls={} ns={ns} count=0 nivcsw=0 nvcsw=0 runq_ns=0 run_ns={ns} minflt=0 majflt=0 migrations=0 cpu_changed=0",
                s.trial,
                s.calls,
                ns = (s.seconds * 1e9) as u64
            )];
            if let Some(v) = p.sample_trials.get(j) {
                let ticks: Vec<String> = v.iter().map(u64::to_string).collect();
                seg.push(format!("SAMPLES\t{}\t{}", s.trial, ticks.join(" ")));
            }
            segs.push(seg);
            claims.push(s.seconds);
        }
        let w = windows.unwrap_or(claims);
        let _ = a;
        wait(&mut lines, &mut r, cpu);
        for (seg, c) in segs.into_iter().zip(w) {
            lines.extend(seg);
            cpu += c;
            wait(&mut lines, &mut r, cpu);
        }
        wait(&mut lines, &mut r, cpu + 0.001);
        (r, lines)
    }

    fn run_check(p: &Parsed, cpu: f64, wall: f64, delay: f64, ready: f64) -> Vec<String> {
        // The kernel's CPU time after the ready gate, spread over the windows.
        let n = p.trials.len().max(1);
        let w = vec![((cpu - ready - 0.001) / n as f64).max(0.0); n];
        let g = gated(&args(), p, ready, Some(w));
        let acc = ChildAccounting {
            user_s: cpu,
            sys_s: 0.0,
            run_ns: Some(1),
            run_delay_ns: Some((delay * 1e9) as u64),
            maxrss_kib: None,
        };
        let k = Kernel {
            acc: &acc,
            wall_s: wall,
            tick_hz: Some(2e9),
            readings: &g.0,
            lines: &g.1,
            steal_s: 0.0,
            parent_rss_bytes: None,
        };
        check(&args(), p, &k).0
    }

    #[test]
    fn honest_quiet_and_busy_runs_pass() {
        // Quiet: 2 × 0.5 s of calls, 0.2 s setup.
        assert!(run_check(&parsed(0.5, 0.5, 0.0), 1.201, 1.4, 0.0, 0.2).is_empty());
        // Busy: half of each trial waiting for the CPU; CPU time unchanged.
        assert!(run_check(&parsed(1.0, 0.5, 0.5), 1.25, 2.8, 1.4, 0.2).is_empty());
    }

    #[test]
    fn time_stolen_by_the_hypervisor_is_not_a_sleeping_trial() {
        // 2 × 1 s trials, 0.4 s of each on the CPU and none waiting: the rest was taken by
        // the hypervisor, which the parent saw as steal time of the CPU (1.3 s in the
        // process's life). Without that steal the same claims are a trial that slept.
        let p = parsed(1.0, 0.4, 0.0);
        let acc = ChildAccounting {
            user_s: 0.9,
            sys_s: 0.0,
            run_ns: Some(1),
            run_delay_ns: Some(0),
            maxrss_kib: None,
        };
        let g = gated(&args(), &p, 0.099, Some(vec![0.4, 0.4]));
        let check_with = |steal_s: f64| {
            let k = Kernel {
                acc: &acc,
                wall_s: 2.2,
                tick_hz: Some(2e9),
                readings: &g.0,
                lines: &g.1,
                steal_s,
                parent_rss_bytes: None,
            };
            check(&args(), &p, &k)
        };
        let (bad, ev) = check_with(1.3);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev["steal_s"], 1.3);
        let (bad, _) = check_with(0.0);
        assert!(
            bad.iter().any(|b| b.contains("on CPU or waiting for it")),
            "{bad:?}"
        );
    }

    #[test]
    fn microsecond_trials_allow_the_gap_between_the_two_clock_reads() {
        // A 6 µs trial whose counter and clock reads were 0.9 µs apart (seen on a busy VM).
        let mut p = parsed(6e-6, 6e-6, 0.0);
        p.trials[0].cycles = Some((6e-6 * 2e9) as i64 + 1800);
        assert!(run_check(&p, 0.01, 0.02, 0.0, 0.008988).is_empty());
        // Ticks that claim twice the seconds of a 1 ms trial are still named.
        let mut p = parsed(1e-3, 1e-3, 0.0);
        p.trials[0].cycles = Some((2e-3 * 2e9) as i64);
        let bad = run_check(&p, 0.01, 0.02, 0.0, 0.005);
        assert!(bad.iter().any(|b| b.contains("ticks")), "{bad:?}");
    }

    #[test]
    fn samples_must_add_up_to_their_sampled_trial() {
        let mut a = args();
        a.samples = true;
        let mut p = parsed(0.5, 0.5, 0.0);
        for t in 1..=2 {
            // 10 calls of 50 ms (as in the reference trials), ticks at 2 GHz.
            let mut s = sched(t, 0.5, 0.0);
            s.kind = "sampled".into();
            p.sched.push(s);
            p.sched_run_ns.push(Some(500_000_000));
            p.sample_trials.push(vec![100_000_000; 10]);
        }
        let acc = ChildAccounting {
            user_s: 2.25,
            sys_s: 0.0,
            run_ns: Some(1),
            run_delay_ns: Some(0),
            maxrss_kib: None,
        };
        let run = |p: &Parsed| {
            let g = gated(&a, p, 0.249, None);
            let k = Kernel {
                acc: &acc,
                wall_s: 2.5,
                tick_hz: Some(2e9),
                readings: &g.0,
                lines: &g.1,
                steal_s: 0.0,
                parent_rss_bytes: None,
            };
            check(&a, p, &k).0
        };
        assert!(run(&p).is_empty(), "{:?}", run(&p));
        // SAMPLES alone scaled by -5 % (the robust figure's input): caught.
        let mut forged = p.clone();
        for v in forged.sample_trials.iter_mut() {
            v.iter_mut().for_each(|x| *x = *x * 95 / 100);
        }
        let bad = run(&forged);
        assert!(bad.iter().any(|b| b.contains("add up")), "{bad:?}");
        // A preemption inside the trial is inside the samples too: claimed run-queue wait
        // does not excuse samples that fall short of the interval.
        let mut waited = forged.clone();
        waited.sched[2].runq_ns = Some(9_000_000);
        waited.sched[3].runq_ns = Some(9_000_000);
        let bad = run(&waited);
        assert!(bad.iter().any(|b| b.contains("add up")), "{bad:?}");
    }

    #[test]
    fn a_few_per_cent_hidden_above_the_fence_disturbs_and_more_is_inconsistent() {
        // 400 calls of 125 µs per trial (ticks at 2 GHz), windows as claimed: no interrupts
        // counted, so the current rule allows 400 µs and 1 % per window of 50 ms.
        let mut a = args();
        a.samples = true;
        a.iters = 400;
        let mut p = parsed(0.05, 0.05, 0.0);
        for t in 0..2 {
            p.trials[t].measurements = 400;
            p.sched[t].calls = 400;
        }
        for t in 1..=2 {
            let mut s = sched(t, 0.05, 0.0);
            s.kind = "sampled".into();
            s.calls = 400;
            p.sched.push(s);
            p.sched_run_ns.push(Some(50_000_000));
            p.sample_trials.push(vec![250_000; 400]);
        }
        let acc = ChildAccounting {
            user_s: 0.452,
            sys_s: 0.0,
            run_ns: Some(1),
            run_delay_ns: Some(0),
            maxrss_kib: None,
        };
        let run = |p: &Parsed| {
            let g = gated(&a, p, 0.25, None);
            let k = Kernel {
                acc: &acc,
                wall_s: 0.6,
                tick_hz: Some(2e9),
                readings: &g.0,
                lines: &g.1,
                steal_s: 0.0,
                parent_rss_bytes: None,
            };
            check(&a, p, &k)
        };
        let (bad, ev) = run(&p);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev["floor"]["rule"], pqperf_model::floor::RULE);
        assert!(!interrupted(&ev), "{ev}");
        // One giant call above the fence, the rest `share` cheaper (the sum kept).
        let shaped = |share: f64| {
            let mut f = p.clone();
            let low = (250_000.0 * (1.0 - share)) as u64;
            for v in f.sample_trials.iter_mut() {
                v.iter_mut().for_each(|x| *x = low);
                v[0] = 250_000 * 400 - low * 399;
            }
            f
        };
        // 3 %: below the current rule, within the first: disturbed (re-run, never published).
        let (bad, ev) = run(&shaped(0.03));
        assert!(bad.is_empty(), "{bad:?}");
        assert!(interrupted(&ev), "{ev}");
        assert!(
            ev["interrupted"][0]
                .as_str()
                .unwrap()
                .contains("disturbed, not inconsistent"),
            "{ev}"
        );
        // 10 %: below both: inconsistent.
        let (bad, _) = run(&shaped(0.10));
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].contains("below the CPU time their window verified"));
    }

    #[test]
    fn peak_rss_claims_are_bounded_by_ru_maxrss() {
        let mib = 1u64 << 20;
        let run = |claimed: u64, maxrss_mib: u64, parent_mib: u64| {
            let mut p = parsed(0.5, 0.5, 0.0);
            p.meta
                .insert("peak_rss_bytes".to_string(), claimed.to_string());
            let acc = ChildAccounting {
                user_s: 1.25,
                run_ns: Some(1),
                run_delay_ns: Some(0),
                maxrss_kib: Some(maxrss_mib * 1024),
                ..Default::default()
            };
            let g = gated(&args(), &p, 0.249, None);
            let k = Kernel {
                acc: &acc,
                wall_s: 1.4,
                tick_hz: Some(2e9),
                readings: &g.0,
                lines: &g.1,
                steal_s: 0.0,
                parent_rss_bytes: Some(parent_mib * mib),
            };
            check(&args(), &p, &k).0
        };
        // Honest: the driver's 180 MiB peak made ru_maxrss; a small driver beside a 40 MiB
        // parent (ru_maxrss is the parent's copy).
        assert!(run(180 * mib, 181, 40).is_empty());
        assert!(run(2 * mib, 41, 40).is_empty());
        // Above the kernel's figure.
        let bad = run(300 * mib, 181, 40);
        assert!(
            bad.iter().any(|b| b.contains("above the kernel")),
            "{bad:?}"
        );
        // Far below a ru_maxrss the driver made (18 MiB claimed for 180 MiB).
        let bad = run(18 * mib, 180, 40);
        assert!(bad.iter().any(|b| b.contains("ru_maxrss is")), "{bad:?}");
    }

    #[test]
    fn cpu_time_claimed_in_place_of_wall_time_is_caught_by_the_run_queue_wait() {
        use pqperf_ffi::procinfo::TaskSched;
        // Two 0.1 s windows of CPU time on a CPU shared with a hog: after a 10 ms wait for
        // the CPU following each `go`, the driver's thread (7) waited `wait` seconds in 10
        // waits inside its interval.
        let check_with = |claimed: f64, wait: f64| {
            let p = parsed(claimed, 0.1, 0.0);
            let (mut r, lines) = gated(&args(), &p, 0.2, Some(vec![0.1, 0.1]));
            let (mut delay, mut count) = (0u64, 1u64);
            for x in r.iter_mut() {
                x.tasks = vec![TaskSched {
                    tid: 7,
                    run_ns: x.cpu_ns,
                    run_delay_ns: delay,
                    pcount: count,
                }];
                delay += 10_000_000;
                count += 1;
                x.arrival = Some(vec![TaskSched {
                    tid: 7,
                    run_ns: x.cpu_ns,
                    run_delay_ns: delay,
                    pcount: count,
                }]);
                delay += (wait * 1e9) as u64;
                count += 10;
            }
            let acc = ChildAccounting {
                user_s: 0.401,
                run_ns: Some(1),
                run_delay_ns: Some(delay),
                ..Default::default()
            };
            let k = Kernel {
                acc: &acc,
                wall_s: 0.5 + 2.0 * wait + 0.04,
                tick_hz: Some(2e9),
                readings: &r,
                lines: &lines,
                steal_s: 0.0,
                parent_rss_bytes: None,
            };
            check(&args(), &p, &k)
        };
        // Honest: the wall-time interval holds the waits after the arrival.
        let (bad, ev) = check_with(0.2, 0.1);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev["window_run_delay_s"], json!([0.11, 0.11]));
        assert_eq!(ev["window_run_delay_sum_s"], json!(0.22));
        assert_eq!(ev["window_wake_wait_s"], json!([0.01, 0.01]));
        assert_eq!(ev["window_main_s"], json!([0.2, 0.2]));
        let w = pqperf_model::kernelcheck::Windows::of(&ev)
            .unwrap()
            .unwrap();
        assert!(w.broken().is_empty(), "{:?}", w.broken());
        // The CPU time claimed instead: inside the CPU bound, caught by the waits.
        let (bad, ev) = check_with(0.1, 0.1);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(bad[0].contains("waited for it"), "{bad:?}");
        let w = pqperf_model::kernelcheck::Windows::of(&ev)
            .unwrap()
            .unwrap();
        assert_eq!(w.broken().len(), 2);
        // Waits within the allowance (two mean waits: the untimed work's) are not a forgery.
        let (bad, _) = check_with(0.1, 0.001);
        assert!(bad.is_empty(), "{bad:?}");
    }

    #[test]
    fn a_window_without_waits_after_the_arrival_gets_no_wait_allowance() {
        use pqperf_ffi::procinfo::TaskSched;
        let task = |run_ns: u64, run_delay_ns: u64, pcount: u64| TaskSched {
            tid: 7,
            run_ns,
            run_delay_ns,
            pcount,
        };
        let reading = |tasks: Vec<TaskSched>, arrival: Option<Vec<TaskSched>>| Reading {
            line: 0,
            cpu_ns: 0,
            settled: true,
            pids: Vec::new(),
            tasks,
            at_s: 0.0,
            arrival,
            closing: None,
            ..Default::default()
        };
        // Arrived once after `go` (after a 5 ms wait) and ran 50 ms without waiting again.
        let a = reading(vec![task(0, 0, 1)], Some(vec![task(0, 5_000_000, 2)]));
        let b = reading(vec![task(50_000_000, 5_000_000, 2)], None);
        let m = main_window(&a, &b).unwrap();
        assert_eq!((m.wake_s, m.allowance_s), (0.005, 0.0));
        assert_eq!(m.busy_s, 0.05);
        // Preempted twice after it (4 ms of waits): two mean waits and the fixed slice.
        let b = reading(vec![task(50_000_000, 9_000_000, 4)], None);
        let m = main_window(&a, &b).unwrap();
        assert!((m.allowance_s - (2.0 * 0.002 + WINDOW_WAIT_ABS_S)).abs() < 1e-12);
        assert!((m.busy_s - 0.054).abs() < 1e-12);
    }

    #[test]
    fn a_window_over_its_bound_is_disturbed_only_where_its_interrupts_explain_it() {
        // Two windows claiming 0.1 s each; the second window's CPU time is `over` s above
        // its bound (1 % + 600 µs); `per_window` softirqs on the measuring CPU in each window
        // (`None`: not read).
        let check_with = |claimed: f64, over: f64, per_window: Option<u64>| {
            let p = parsed(claimed, claimed, 0.0);
            let bound = claimed * (1.0 + WINDOW_REL) + WINDOW_ABS_S;
            let (mut r, lines) = gated(&args(), &p, 0.2, Some(vec![claimed, bound + over]));
            for (i, x) in r.iter_mut().enumerate() {
                x.softirqs = per_window.map(|n| 1000 + n * i as u64);
            }
            let acc = ChildAccounting {
                user_s: 0.2 + 0.001 + claimed + bound + over,
                run_ns: Some(1),
                run_delay_ns: Some(0),
                ..Default::default()
            };
            let k = Kernel {
                acc: &acc,
                wall_s: 1.0,
                tick_hz: Some(2e9),
                readings: &r,
                lines: &lines,
                steal_s: 0.0,
                parent_rss_bytes: None,
            };
            check(&args(), &p, &k)
        };
        let each = pqperf_model::kernelcheck::SOFTIRQ_EVENT_S;
        // 500 µs over, 40 softirqs (up to 1 ms): explained, the process is disturbed.
        let (bad, ev) = check_with(0.1, 500e-6, Some(40));
        assert!(bad.is_empty(), "{bad:?}");
        assert!(interrupted(&ev), "{ev}");
        assert_eq!(ev["window_softirqs"], json!([40, 40]));
        assert!(
            ev["interrupted"][0].as_str().unwrap().contains("window 2"),
            "{ev}"
        );
        let w = pqperf_model::kernelcheck::Windows::of(&ev)
            .unwrap()
            .unwrap();
        assert_eq!(w.broken().len(), 1);
        assert!(w.unexplained().is_empty(), "{:?}", w.unexplained());
        // The same excess with 10 softirqs (250 µs) or no counts: inconsistent.
        for n in [Some(10), None] {
            let (bad, ev) = check_with(0.1, 500e-6, n);
            assert_eq!(bad.len(), 1, "{n:?}: {bad:?}");
            assert!(bad[0].contains("window 2"), "{bad:?}");
            assert!(!interrupted(&ev), "{ev}");
        }
        // Within the bound: nothing to explain, nothing disturbed.
        let (bad, ev) = check_with(0.1, -100e-6, Some(40));
        assert!(bad.is_empty() && !interrupted(&ev), "{bad:?} {ev}");
        // A forgery of -5 % (5 ms hidden) in a window with 40 softirqs (1 ms): inconsistent;
        // with 400 (10 ms) too: interrupts explain at most 2.5 ms of a window.
        for n in [40, 400] {
            let (bad, _) = check_with(0.1, 0.005, Some(n));
            assert_eq!(bad.len(), 1, "{n}: {bad:?}");
        }
        // At the per-softirq bound: 40 softirqs explain 40 × SOFTIRQ_EVENT_S.
        let (bad, _) = check_with(0.1, 40.0 * each - 2e-6, Some(40));
        assert!(bad.is_empty(), "{bad:?}");
        let (bad, _) = check_with(0.1, 40.0 * each + 20e-6, Some(40));
        assert_eq!(bad.len(), 1, "{bad:?}");
    }

    #[test]
    fn forgeries_are_named() {
        // 3 s per trial claimed from a process that lived 0.03 s.
        let p = parsed(3.0, 3.0, 0.0);
        let bad = run_check(&p, 0.02, 0.03, 0.0, 0.01);
        assert!(bad.iter().any(|b| b.contains("lived")), "{bad:?}");
        assert!(bad.iter().any(|b| b.contains("on CPU")), "{bad:?}");
        // Real work (10 s of CPU inside the parent's windows), fast figures (2 × 1 µs).
        let bad = run_check(&parsed(1e-6, 1e-6, 0.0), 10.0, 10.1, 0.0, 0.01);
        assert!(bad.iter().any(|b| b.contains("window 1")), "{bad:?}");
        // A consistent forgery of -5 % of two 100 ms windows.
        let bad = run_check(&parsed(0.095, 0.095, 0.0), 0.401, 0.5, 0.0, 0.2);
        assert!(bad.iter().any(|b| b.contains("window 2")), "{bad:?}");
        assert!(run_check(&parsed(0.1, 0.1, 0.0), 0.401, 0.5, 0.0, 0.2).is_empty());
        // A trial that slept: claimed, but neither on CPU nor waiting for it.
        let bad = run_check(&parsed(0.5, 0.01, 0.0), 0.1, 1.2, 0.0, 0.05);
        assert!(bad.iter().any(|b| b.contains("waiting for it")), "{bad:?}");
        // Wrong counts and ticks that disagree with seconds.
        let mut p = parsed(0.5, 0.5, 0.0);
        p.trials[1].measurements = 20000;
        p.trials[0].cycles = Some(5);
        let bad = run_check(&p, 1.201, 1.4, 0.0, 0.2);
        assert!(bad.iter().any(|b| b.contains("20000 calls")), "{bad:?}");
        assert!(bad.iter().any(|b| b.contains("ticks")), "{bad:?}");
        // A driver that never stopped at the parent's gates, and CPU after its last gate
        // the readings did not see (a process that ended between them).
        let acc = ChildAccounting {
            user_s: 5.0,
            ..Default::default()
        };
        let p = parsed(0.1, 0.1, 0.0);
        let g = gated(&args(), &p, 0.1, None);
        let check_with = |readings: &[Reading]| {
            let k = Kernel {
                acc: &acc,
                wall_s: 6.0,
                tick_hz: None,
                readings,
                lines: &g.1,
                steal_s: 0.0,
                parent_rss_bytes: None,
            };
            check(&args(), &p, &k)
        };
        let (bad, _) = check_with(&[]);
        assert!(bad.iter().any(|b| b.contains("0 gate(s)")), "{bad:?}");
        let (bad, ev) = check_with(&g.0);
        assert!(bad.iter().any(|b| b.contains("did not see")), "{bad:?}");
        assert_eq!(ev["problems"].as_array().unwrap().len(), bad.len());
    }

    #[test]
    fn isolated_unexplained_windows_disturb_and_many_stay_problems() {
        let ev = |n: usize| json!({ "interrupted": [], "problems": (1..=n).map(|i| format!("window {i}: over")).collect::<Vec<_>>() });
        let excess = |n: usize| {
            (1..=n)
                .map(|i| (i, format!("window {i}: over")))
                .collect::<Vec<_>>()
        };
        // Two of sixteen windows: disturbed (the problems move to `interrupted`).
        let mut kc = ev(2);
        let mut problems: Vec<String> = excess(2).into_iter().map(|x| x.1).collect();
        isolate(&mut problems, &excess(2), 16, &mut kc);
        assert!(problems.is_empty() && interrupted(&kc), "{kc}");
        assert_eq!(kc["problems"].as_array().unwrap().len(), 0);
        // Three of sixteen: inconsistent.
        let mut kc = ev(3);
        let mut problems: Vec<String> = excess(3).into_iter().map(|x| x.1).collect();
        isolate(&mut problems, &excess(3), 16, &mut kc);
        assert_eq!(problems.len(), 3);
        assert!(!interrupted(&kc));
        // One of the two windows of a `--target-ci` process: inconsistent.
        let mut kc = ev(1);
        let mut problems: Vec<String> = excess(1).into_iter().map(|x| x.1).collect();
        isolate(&mut problems, &excess(1), 2, &mut kc);
        assert_eq!(problems.len(), 1);
        // Any other problem beside one excess: inconsistent.
        let mut kc = ev(1);
        let mut problems = vec!["window 1: over".to_string(), "gate 3: still running".into()];
        isolate(&mut problems, &excess(1), 16, &mut kc);
        assert_eq!(problems.len(), 2);
        assert!(!interrupted(&kc));
    }
}
