//! Measuring one planned operation and building its record (method §7), in three parts:
//! [`run_op`] runs the driver processes of the plan (re-runs of disturbed ones, trials added
//! by the `--target-ci` protocol; every decision is a pure function of
//! [`crate::decide`]), [`assemble_record`] builds the record from what they produced
//! (statistics, sizes, counter, per-call quantiles, robust estimate, `pqperf.protocol`)
//! without starting anything, and [`write_record`] writes it to
//! `records/<id>/<label>__<op>.json`; [`measure_one`] is the three in a row.
//!
//! **Disturbance** (works with any counter, no PMU needed): a trial is disturbed when its
//! run-queue wait (`/proc/thread-self/schedstat`: time runnable but not running, i.e. time
//! lost to preemption by other tasks) exceeds [`MAX_PREEMPTED_SHARE`] (2 %) of its wall
//! time; where the kernel has no schedstat, when it had more than
//! `max(2, 10 × seconds)` involuntary context switches; and, as in the reference (§7.1.4),
//! when a cycle counter ran below 95 % of a known fixed clock in a trial over 10 ms. A
//! process with a disturbed trial (reference or sampled) is run again, at most
//! [`MAX_RETRIES`] times, while that can change the figures ([`crate::decide::rerun`]: not
//! when its per-call figures agree with the kept ones within the interval target, not beyond
//! the budget, not on a host that disturbed the last 8 processes in a row; such processes
//! are listed in `pqperf.reruns_declined`); when every attempt was disturbed the least
//! disturbed one (smallest run-queue share) is kept. Every attempt is listed under
//! `pqperf.attempts` with the per-trial facts; `processes[].disturbed_retries` is the number
//! of re-runs of that process.
//!
//! **Adding trials** (the `--target-ci` protocol, `UnitSettings::target_ci`,
//! [`crate::decide`]): it plans short trials in separate processes; after the planned ones,
//! one more single-trial process is added while the robust estimate's CI half-width exceeds
//! the target, the driver time of the operation stays under its budget and fewer than
//! [`decide::MAX_TARGET_CI_TRIALS`] ran; `pqperf.adaptive` says why it stopped and
//! `plan.trials` counts every trial. The reference protocol adds none.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_model::fields::Fields;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::pyjson;
use pqperf_model::record::{self, Adaptive, Attempt, PqperfRecordExt, Process, Record};
use pqperf_model::robust::{self, Robust};
use pqperf_model::stats::{ProcessTotals, Quantiles, RecordStats};
use pqperf_model::vocab::Counter;
use serde_json::{Value, json};

use crate::instance::{Instance, driver_args};
use crate::output::MemFigures;
use crate::plan::{self, PlannedOp};
use crate::runner::{self, Run};
use crate::settings::UnitSettings;
use crate::{MeasureError, decide, host};

type Res<T> = Result<T, MeasureError>;

/// ISO-8601 UTC with microseconds and `+00:00`, as the reference writes.
pub fn utc_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let f = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]+00:00"
    );
    now.format(&f).unwrap_or_default()
}

/// The record file of `inst`'s operation `opkey`: `records/<id>/<label>__<opkey>.json`.
pub fn rec_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    pqperf_model::layout::RunLayout::new(run).record(
        &inst.entry.candidate,
        &inst.entry.label,
        opkey,
    )
}

/// Largest share of a trial's wall time spent waiting on the run queue before the trial
/// counts as disturbed.
pub const MAX_PREEMPTED_SHARE: f64 = 0.02;
/// Re-runs of a disturbed driver process at most.
pub use crate::decide::MAX_RETRIES;
/// The relative half-width the reference protocol's re-run decision ([`decide::rerun`])
/// holds a disturbed process's figures to (the `--target-ci` protocol uses its target).
pub const REFERENCE_TOLERANCE: f64 = 0.01;
/// Bootstrap replicates of the stopping check's look after each added process (the record's
/// interval, and the check that confirms a stop, use `robust::RESAMPLES`).
pub const STOP_CHECK_RESAMPLES: u64 = 200;

/// The disturbance rule as recorded under `pqperf.disturbance_rule`.
pub fn disturbance_rule() -> String {
    format!(
        "trial disturbed when run-queue wait > {} % of its wall time (without schedstat: involuntary context switches > max(2, 10 x seconds)); or a cycle counter below 95 % of the fixed clock over 10 ms; a disturbed process is re-run up to {MAX_RETRIES} times, the least disturbed attempt kept",
        MAX_PREEMPTED_SHARE * 100.0
    )
}

/// Marks the disturbed trials of `run` (see the module doc); true if any. `fixed_hz`: the
/// nominal clock of a cycle counter (a trial at a slower clock is disturbed); `None` for a
/// fixed-rate counter.
pub fn mark_disturbed(run: &mut Run, fixed_hz: Option<f64>) -> bool {
    let cycles = run
        .counter
        .as_deref()
        .is_some_and(|c| Counter::parse(c).is_core_cycles())
        && run.process.meta.str("timing_scope") != Some("per_call_step");
    let mut any = false;
    for t in run.sched.iter_mut() {
        let preempted = match t.preempted_share {
            Some(s) => s > MAX_PREEMPTED_SHARE,
            None => t.nivcsw as f64 > (10.0 * t.seconds).max(2.0),
        };
        let slow_clock = match (fixed_hz, t.counter_per_ns) {
            (Some(f), Some(r)) if cycles && t.kind == "reference" => {
                t.seconds > 0.01 && r * 1e9 < 0.95 * f
            }
            _ => false,
        };
        t.disturbed = preempted || slow_clock;
        any |= t.disturbed;
    }
    any
}

/// Share of the run's trial time spent on the run queue (0 when unknown).
fn preempted_share(run: &Run) -> f64 {
    let ns: f64 = run.sched.iter().map(|t| t.seconds).sum();
    let q: f64 = run
        .sched
        .iter()
        .map(|t| t.runq_ns.unwrap_or(0) as f64 / 1e9)
        .sum();
    if ns > 0.0 { q / ns } else { 0.0 }
}

/// How the processes of one operation are run.
struct RunCtx<'a> {
    opts: &'a UnitSettings,
    timeout: Duration,
    fixed: Option<f64>,
}

/// The problems the parent found in one attempt (its kernel check, relayed inputs and output
/// check), kept in its `pqperf.attempts` entry.
fn attempt_problems(p: &pqperf_model::record::Process) -> Vec<String> {
    ["kernel_check", "relayed_inputs", "output_check"]
        .iter()
        .filter_map(|k| p.extra.get(*k)?.get("problems")?.as_array())
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
        .fold(Vec::new(), |mut out, x| {
            if !out.contains(&x) {
                out.push(x);
            }
            out
        })
}

/// Which of the attempts (run, disturbed) of one process is kept: the last one unless every
/// attempt was complete and disturbed, then the least disturbed (smallest run-queue share);
/// when the last was disturbed by interrupts (`verify::DISTURBED`, no figures) and an earlier
/// one is complete, the least disturbed complete one.
fn kept_attempt(runs: &[(Run, bool)]) -> usize {
    let last = runs.len().saturating_sub(1);
    if runs
        .last()
        .is_some_and(|(r, _)| r.process.status == crate::verify::DISTURBED)
        && let Some(k) = (0..runs.len())
            .filter(|&i| runs[i].0.complete())
            .min_by(|&a, &b| preempted_share(&runs[a].0).total_cmp(&preempted_share(&runs[b].0)))
    {
        return k;
    }
    if runs.iter().all(|(r, d)| r.complete() && *d) {
        (0..runs.len())
            .min_by(|&a, &b| preempted_share(&runs[a].0).total_cmp(&preempted_share(&runs[b].0)))
            .unwrap_or(last)
    } else {
        last
    }
}

/// The target and the trial limit of adding trials after the planned ones: the
/// `--target-ci` protocol's; `None` (the reference protocol): nothing is added.
fn adding_rule(confident: Option<plan::TargetCiPlan>) -> Option<(f64, u64)> {
    confident.map(|c| (c.target, decide::MAX_TARGET_CI_TRIALS))
}

/// Timing totals of a measure phase (for the efficiency figure and the re-run share).
#[derive(Debug, Default, Clone, Copy)]
pub struct MeasureTotals {
    /// Σ seconds inside timed trials.
    pub timed_s: f64,
    /// Σ driver process wall seconds.
    pub process_s: f64,
    /// Records written.
    pub records: usize,
    /// Records skipped because they existed.
    pub skipped: usize,
    /// Driver processes started (every attempt).
    pub attempts: u64,
    /// Of those, the ones with a disturbed trial.
    pub disturbed_attempts: u64,
    /// Of those, re-runs of a disturbed or inconsistent process.
    pub reruns: u64,
    /// Disturbed processes that were not re-run (`decide::Rerun::Declined`).
    pub reruns_declined: u64,
    /// Driver processes in a row, up to the last one, that were disturbed.
    pub disturbed_in_a_row: u64,
    /// Disturbed processes not re-run because the host was always disturbed.
    pub declined_host_disturbed: u64,
    /// Where the driver processes' time went ([`crate::budget`]).
    pub budget: crate::budget::PhaseBudget,
}

impl MeasureTotals {
    /// Share of the driver processes that were re-runs (0 when none ran).
    pub fn rerun_share(&self) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            self.reruns as f64 / self.attempts as f64
        }
    }

    /// Every one of the last [`decide::HOST_DISTURBED_RUN`] driver processes was disturbed.
    pub fn host_always_disturbed(&self) -> bool {
        self.disturbed_in_a_row >= decide::HOST_DISTURBED_RUN
    }
}

/// What running an operation's processes produced: the input of [`assemble_record`].
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The kept process entries, in order.
    pub processes: Vec<Process>,
    /// Per-call tick deltas of the kept processes, one vector per sampled trial.
    pub sample_trials: Vec<Vec<u64>>,
    /// The counter the first kept process named.
    pub counter: Option<String>,
    /// The largest memory-pass figures of the kept processes.
    pub mem: Option<MemFigures>,
    /// Re-runs of all processes.
    pub retries_total: u64,
    /// Every attempt.
    pub attempts: Vec<Attempt>,
    /// Adaptive stopping or the `--target-ci` protocol: what was added and why it stopped.
    pub adaptive: Option<Adaptive>,
    /// The plan as run (trials include the added ones).
    pub plan: Option<pqperf_model::Plan>,
    /// `pqperf.protocol`.
    pub protocol: &'static str,
    /// Disturbed processes kept without a re-run, and why.
    pub reruns_declined: Vec<String>,
}

impl Measured {
    /// Keeps a run: its process entry (with its re-run count), samples, counter name and
    /// memory figures (the largest of the kept runs).
    fn keep(&mut self, run: Run, retries: u64) {
        if let Some(m) = run.mem {
            self.mem = Some(self.mem.map_or(m, |x| x.max(m)));
        }
        let mut pr = run.process;
        pr.disturbed_retries = Some(retries);
        self.sample_trials.extend(run.sample_trials);
        if self.counter.is_none() {
            self.counter = run.counter;
        }
        self.retries_total += retries;
        self.processes.push(pr);
    }

    /// Median seconds per call of the kept processes' reference trials.
    fn kept_per_call_s(&self) -> Option<f64> {
        let v: Vec<f64> = self.processes.iter().filter_map(per_call_s).collect();
        decide::median(&v)
    }

    /// Median tick delta of the kept sampled calls.
    fn kept_sample_median(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .sample_trials
            .iter()
            .flatten()
            .map(|&s| s as f64)
            .collect();
        decide::median(&v)
    }
}

/// Seconds per call of a process's reference trials.
fn per_call_s(p: &Process) -> Option<f64> {
    let calls: u64 = p.trials.iter().map(|t| t.measurements).sum();
    let secs: f64 = p.trials.iter().map(|t| t.seconds).sum();
    (calls > 0).then(|| secs / calls as f64)
}

/// How far a disturbed run's figures are from the kept ones: the larger relative
/// difference of its reference seconds per call and of its median sampled call (`None` when
/// nothing comparable is kept yet).
fn run_effect(m: &Measured, run: &Run) -> Option<f64> {
    let reference = decide::rel_diff(per_call_s(&run.process), m.kept_per_call_s());
    let v: Vec<f64> = run
        .sample_trials
        .iter()
        .flatten()
        .map(|&s| s as f64)
        .collect();
    let sampled = decide::rel_diff(decide::median(&v), m.kept_sample_median());
    match (reference, sampled) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The processes of one operation as they run: budget, spending and the decisions of
/// [`decide`].
struct OpRun<'a> {
    ctx: RunCtx<'a>,
    m: Measured,
    spent_s: f64,
    budget_s: f64,
    tolerance: f64,
    declined: Vec<String>,
    /// The next process's relayed preparation starts while this one is timed (off when the
    /// caller interleaves other libraries' processes, [`OpMeasure::set_prepare_during`]).
    prepare_during: bool,
    /// Drawn replays running beside the next process (issue 41): the replay, the index of
    /// the kept process it checks (`None`: an attempt not kept) and of its attempt.
    pending: Vec<(crate::outcheck::Deferred, Option<usize>, usize)>,
}

impl OpRun<'_> {
    /// Runs one planned driver process, re-running it while [`decide::rerun`] says so; every
    /// attempt goes into the attempts, the kept one into the processes. True when the kept run
    /// is complete.
    fn process(
        &mut self,
        args: &crate::driver::DriverArgs,
        index: u64,
        t: &mut MeasureTotals,
        mut held: Option<runner::Held>,
    ) -> bool {
        // Nothing of another library runs beside this process.
        crate::outcheck::settle_others(&args.lib);
        let mut pending = std::mem::take(&mut self.pending);
        let mut deferred: Vec<(usize, crate::outcheck::Deferred)> = Vec::new();
        let mut runs: Vec<(Run, bool)> = Vec::new();
        // The next process's relayed inputs are prepared while this one is timed
        // (crate::relay; its own stream: the next index's seed).
        let mut next = args.clone();
        if next.seed.is_some() {
            next.seed = Some(pqperf_model::stream::keyed_process_seed(
                &self.ctx.opts.stream_key,
                index + 1,
            ));
        }
        // The first process's output check needs no output of it: its replay starts now,
        // beside it (the same library, off the measuring CPU), and the loop waits only for
        // what is left of it when the process has ended (issue 41).
        // A relayed pooled process (verify, dec) is checked by the parent itself
        // (crate::outcheck::parent_verified): no replay starts beside it.
        let pooled = runner::relays(&self.ctx.opts.driver, args) && crate::relay::pooled(args);
        let mut beside = (index == 0
            && !pooled
            && crate::outcheck::replays(&self.ctx.opts.driver)
            && off_the_measuring_cpu(args.cpu))
        .then(|| {
            let (d, a, timeout) = (self.ctx.opts.driver.clone(), args.clone(), self.ctx.timeout);
            std::thread::spawn(move || crate::outcheck::replay_digest(&d, &a, timeout, None))
        });
        loop {
            // The first attempt may have been started beside the process before, held at its
            // hold gate (issue 41; started with the same arguments, else it is ended unused).
            let mut run = match held.take().filter(|h| h.args().to_argv() == args.to_argv()) {
                Some(h) => h.join(),
                None => runner::run_driver_then(
                    &self.ctx.opts.driver,
                    args,
                    self.ctx.timeout,
                    Some(&next).filter(|_| runs.is_empty() && self.prepare_during),
                ),
            };
            // The drawn replays of the last process ran beside this one: their verdicts now.
            if !pending.is_empty() {
                let w0 = std::time::Instant::now();
                self.settle(std::mem::take(&mut pending));
                let b = crate::budget::ProcessBudget {
                    replay_s: w0.elapsed().as_secs_f64(),
                    ..Default::default()
                };
                // Beside the path when the next process has the measuring CPU meanwhile.
                if run.handed_over {
                    t.budget.beside.add(&b);
                } else {
                    t.budget.processes.add(&b);
                }
            }
            if let Some(seed) = &args.seed {
                // The process's own input stream (pqperf_model::stream), recomputable from
                // the index.
                run.process.extra.insert(
                    "stream".into(),
                    json!({
                        "index": index,
                        "seed": pqperf_model::stream::seed_hex(seed),
                        // The public name of the campaign's stream key the seed derives
                        // from (the key itself is published after the run).
                        "key_id": pqperf_model::stream::key_id(&self.ctx.opts.stream_key),
                        // Where its sampled calls sit in the stream, from the argv passed:
                        // what pairing two runs call by call needs (pqperf_compare::streams).
                        "inputs": pqperf_model::stream::CALL_INPUTS,
                        "first_sampled_call": pqperf_model::stream::first_sampled_call(
                            args.warmups,
                            u64::from(args.trials),
                            args.iters,
                        ),
                        "sampled_trials": run.sample_trials.len(),
                    }),
                );
            }
            // The outputs checked against a replay: the first process of the operation, a
            // later one when the parent's draw (made now that it has ended) says so, and the
            // re-run of a checked one.
            let parent_checked = pooled && crate::outcheck::parent_verified(&mut run, args);
            let why = if parent_checked {
                None
            } else if index == 0 {
                Some("first")
            } else if runs
                .iter()
                .any(|(r, _)| r.process.extra.contains_key("output_check"))
            {
                Some("rerun")
            } else if crate::outcheck::drawn() {
                Some("drawn")
            } else {
                None
            };
            let defer = why == Some("drawn")
                && beside.is_none()
                && run.complete()
                && crate::outcheck::replays(&self.ctx.opts.driver)
                && off_the_measuring_cpu(args.cpu);
            if defer {
                // A drawn replay runs beside the same library's next process, off the
                // measuring CPU; its verdict is applied when that process has ended.
                deferred.push((
                    runs.len(),
                    crate::outcheck::Deferred::start(
                        &mut run,
                        &self.ctx.opts.driver,
                        args,
                        self.ctx.timeout,
                        "drawn",
                    ),
                ));
            } else if let Some(why) = why {
                let r0 = std::time::Instant::now();
                match beside.take() {
                    Some(h) => {
                        let first = h
                            .join()
                            .unwrap_or_else(|_| Err("the replay's thread panicked".into()));
                        crate::outcheck::check_with(
                            &mut run,
                            &self.ctx.opts.driver,
                            args,
                            self.ctx.timeout,
                            why,
                            first,
                        );
                        if let Some(c) = run.process.extra.get_mut("output_check") {
                            // The first replay ran beside the timed process, off its CPU.
                            c["replay_beside"] = json!(true);
                        }
                    }
                    None => crate::outcheck::check(
                        &mut run,
                        &self.ctx.opts.driver,
                        args,
                        self.ctx.timeout,
                        why,
                    ),
                }
                let replay_s = r0.elapsed().as_secs_f64();
                if run.handed_over {
                    run.beside.replay_s = replay_s;
                } else {
                    run.budget.replay_s = replay_s;
                }
            }
            if run.budget != Default::default() {
                run.process
                    .extra
                    .insert("time_budget".into(), run.budget.to_json());
            }
            if run.beside != Default::default() {
                run.process
                    .extra
                    .insert("time_beside".into(), run.beside.to_json());
            }
            t.budget.add_split(&run.budget, &run.beside, run.held);
            t.timed_s += run.timed_s;
            t.process_s += run.wall_s;
            t.attempts += 1;
            t.reruns += u64::from(!runs.is_empty());
            self.spent_s += run.wall_s;
            // Interrupts on the measuring CPU over the kernel check's bounds (crate::verify)
            // disturb the whole attempt.
            let interrupted = run.process.status == crate::verify::DISTURBED;
            let preempted = mark_disturbed(&mut run, self.ctx.fixed);
            let disturbed = preempted || interrupted;
            if disturbed {
                t.disturbed_attempts += 1;
                // A process the kernel check found disturbed (interrupts, isolated excess
                // windows) says little about the host: the candidate's own code shapes those
                // windows, and counting them would let one candidate make the phase decline
                // the re-runs of its rivals' disturbed processes (`host_always_disturbed`).
                if preempted {
                    t.disturbed_in_a_row += 1;
                }
            } else if run.complete() {
                t.disturbed_in_a_row = 0;
            }
            self.m.attempts.push(Attempt {
                process: index,
                attempt: runs.len() as u64,
                kept: false,
                status: run.process.status.clone(),
                disturbed,
                trials: run.sched.clone(),
                env: Some(run.env.clone()).filter(|e| !e.is_empty()),
                problems: attempt_problems(&run.process),
            });
            let facts = decide::AttemptFacts {
                complete: run.complete(),
                disturbed,
                inconsistent: run.process.status == crate::verify::INCONSISTENT,
                inconsistent_before: runs
                    .iter()
                    .any(|(r, _)| r.process.status == crate::verify::INCONSISTENT),
                interrupted,
                reruns: runs.len() as u64,
                effect: run_effect(&self.m, &run),
                tolerance: self.tolerance,
                spent_s: self.spent_s,
                one_s: run.wall_s,
                budget_s: self.budget_s,
                host_always_disturbed: t.host_always_disturbed(),
            };
            let decision = decide::rerun(&facts);
            runs.push((run, disturbed));
            match decision {
                decide::Rerun::Again => continue,
                decide::Rerun::Done => break,
                decide::Rerun::Declined(why) => {
                    t.reruns_declined += 1;
                    t.declined_host_disturbed += u64::from(why == "host_always_disturbed");
                    self.declined.push(format!("process {index}: {why}"));
                    break;
                }
            }
        }
        let retries = runs.len() as u64 - 1;
        let keep = kept_attempt(&runs);
        let first = self.m.attempts.len() - runs.len();
        self.m.attempts[first + keep].kept = true;
        let run = runs.swap_remove(keep).0;
        let ok = run.complete();
        self.m.keep(run, retries);
        let kept_ix = self.m.processes.len() - 1;
        for (att, d) in deferred {
            self.pending
                .push((d, (att == keep).then_some(kept_ix), first + att));
        }
        ok
    }

    /// Waits for the drawn replays in `pending` and applies their verdicts to the process
    /// entries and attempts they check (an inconsistent one stays in the record as such).
    fn settle(&mut self, pending: Vec<(crate::outcheck::Deferred, Option<usize>, usize)>) {
        for (d, proc_ix, att_ix) in pending {
            let sp = d.settle(&self.ctx.opts.driver, self.ctx.timeout);
            if let Some(a) = self.m.attempts.get_mut(att_ix) {
                a.status = sp.status.clone();
            }
            if let Some(pr) = proc_ix.and_then(|i| self.m.processes.get_mut(i)) {
                pr.status = sp.status.clone();
                for k in ["output_check", "kernel_check"] {
                    if let Some(v) = sp.extra.get(k) {
                        pr.extra.insert(k.into(), v.clone());
                    }
                }
            }
        }
    }

    /// Seconds one more single-trial process is expected to take.
    fn one_s(&self, per: u64) -> f64 {
        (self.spent_s / (self.m.processes.len().max(1) as f64)) / per.max(1) as f64
    }
}

/// Whether what this process starts unpinned (a replay beside the timed process) stays off
/// `cpu`: the parent's own CPUs leave it out (the campaign keeps it free); with no CPU or an
/// unknown affinity nothing is started beside.
fn off_the_measuring_cpu(cpu: Option<usize>) -> bool {
    cpu.is_some_and(|c| {
        pqperf_ffi::affinity::get_affinity()
            .is_ok_and(|mine| !mine.is_empty() && !mine.contains(&c))
    })
}

/// True when the operation's processes get their own input streams: under pqperf's own
/// protocol (`--target-ci` with separate processes, recorded as `target_ci`), and under the
/// reference protocol with `--independent-streams` (separate processes).
fn own_streams(opts: &UnitSettings, p: &PlannedOp, pl: &pqperf_model::Plan) -> bool {
    (p.target_ci.is_some() || opts.independent_streams) && pl.separate_processes
}

/// Where an operation's measurement stands.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    /// Planned processes still to run (the index of the next).
    Planned(u64),
    /// Every planned process completed; trials are being added (`--target-ci`).
    Adding,
    /// Nothing more runs.
    Done,
}

/// One operation's processes run one at a time ([`OpMeasure::step`]), so that a phase can
/// interleave the processes of several operations; [`run_op`] runs them in one go. The
/// decisions are those of [`decide`], whatever the order.
pub struct OpMeasure<'a> {
    opts: &'a UnitSettings,
    env: &'a Value,
    p: &'a PlannedOp,
    r: Option<OpRun<'a>>,
    plan: Option<pqperf_model::Plan>,
    stage: Stage,
    /// The target and trial limit of adding trials, when trials are added.
    adding: Option<(f64, u64)>,
    /// Trials added so far, the last half-width, why adding stopped.
    added: u64,
    last: Option<f64>,
    stopped: Option<&'static str>,
    /// Tick rate for the robust interval (looked up when adding starts).
    hz: Option<f64>,
    counter_info: &'a Value,
    /// Measured without running anything (failed calibration, reused calibration).
    early: Option<Measured>,
    started_utc: String,
    la_start: [f64; 3],
}

impl<'a> OpMeasure<'a> {
    /// Prepares the measurement of `p` as planned (the reference plan or the `--target-ci`
    /// protocol); nothing runs yet.
    pub fn new(
        opts: &'a UnitSettings,
        env: &'a Value,
        counter_info: &'a Value,
        p: &'a PlannedOp,
    ) -> Self {
        let mut me = OpMeasure {
            opts,
            env,
            p,
            r: None,
            plan: p.plan.clone(),
            stage: Stage::Done,
            adding: None,
            added: 0,
            last: None,
            stopped: None,
            hz: None,
            counter_info,
            early: None,
            started_utc: utc_now(),
            la_start: pqperf_ffi::procinfo::load_average(),
        };
        let mut m = Measured {
            plan: p.plan.clone(),
            protocol: record::PROTOCOL_REFERENCE,
            ..Default::default()
        };
        let pl = match &p.plan {
            None => {
                // The calibration itself failed: record its process and go on.
                let mut pr = p.calibration.process.clone();
                pr.disturbed_retries = Some(0);
                m.processes.push(pr);
                me.early = Some(m);
                return me;
            }
            Some(pl) if plan::reuses_calibration(pl) => {
                let mut pr = p.calibration.process.clone();
                pr.disturbed_retries = Some(0);
                pr.extra.insert("reused_calibration".into(), json!(true));
                pr.extra.insert("t1_s".into(), json!(p.calibration.t1_s));
                pr.extra
                    .insert("setup_s".into(), json!(p.calibration.setup_s));
                m.mem = p
                    .calibration
                    .pqperf_mem
                    .as_ref()
                    .and_then(MemFigures::from_json);
                m.processes.push(pr);
                me.early = Some(m);
                return me;
            }
            Some(pl) => pl,
        };
        let timeout = Duration::from_secs_f64(pl.timeout_per_process_s.unwrap_or(1.0).max(1.0));
        let confident = p.target_ci.filter(|_| pl.separate_processes);
        me.r = Some(OpRun {
            ctx: RunCtx {
                opts,
                timeout,
                fixed: host::fixed_clock_hz(env),
            },
            m,
            spent_s: 0.0,
            budget_s: confident.map_or(opts.planning.op_budget_s, |c| c.budget_s),
            tolerance: confident.map_or(REFERENCE_TOLERANCE, |c| c.target),
            declined: Vec::new(),
            prepare_during: true,
            pending: Vec::new(),
        });
        me.stage = Stage::Planned(0);
        me
    }

    /// The plan's processes and trials per process.
    fn shape(&self) -> (u64, u64) {
        match &self.plan {
            Some(pl) if pl.separate_processes => (pl.trials, 1),
            Some(pl) => (1, pl.trials),
            None => (0, 0),
        }
    }

    /// The driver arguments of process `index` with `trials` trials. pqperf's own protocol
    /// (`--target-ci`, separate processes) gives every process its own input stream
    /// (`pqperf_model::stream::process_seed(index)`); the reference protocol keeps the
    /// reference's fixed seed in every process, for parity with the reference's figures,
    /// unless `--independent-streams` was given.
    fn args(&self, trials: u64, index: u64) -> crate::driver::DriverArgs {
        let pl = self.plan.as_ref().expect("a running operation has a plan");
        let mut a = driver_args(
            self.opts,
            &self.p.inst,
            self.p.op,
            trials as u32,
            pl.iterations_per_trial,
            pl.warmups,
        );
        if own_streams(self.opts, self.p, pl) {
            a.seed = Some(pqperf_model::stream::keyed_process_seed(
                &self.opts.stream_key,
                index,
            ));
        }
        a
    }

    /// True when no process remains to run.
    pub fn done(&self) -> bool {
        self.stage == Stage::Done
    }

    /// The driver arguments of the process the next [`OpMeasure::step`] starts (`None`: done).
    pub fn next_args(&self) -> Option<crate::driver::DriverArgs> {
        let (nproc, per) = self.shape();
        match self.stage {
            Stage::Done => None,
            Stage::Planned(i) => Some(self.args(per, i)),
            Stage::Adding => Some(self.args(1, nproc + self.added)),
        }
    }

    /// Starts the relayed preparation of the next process now, in the background
    /// ([`crate::relay::prepare_ahead`]; nothing when its inputs are not relayed): a caller
    /// that runs other processes of the same library first hides the preparation behind them.
    pub fn prepare_next(&self) {
        if let (Some(a), Some(r)) = (self.next_args(), self.r.as_ref())
            && runner::relays(&self.opts.driver, &a)
        {
            crate::relay::prepare_ahead(&self.opts.driver, &a, r.ctx.timeout);
        }
    }

    /// Whether the next process's inputs are relayed (made by a preparer first).
    pub fn relays_next(&self) -> bool {
        self.r.is_some()
            && self
                .next_args()
                .is_some_and(|a| runner::relays(&self.opts.driver, &a))
    }

    /// Whether a process starts the relayed preparation of the operation's next process while
    /// it is timed (default on). A caller that runs other libraries' processes between two of
    /// this operation's turns it off, so that no preparation of this library runs beside a
    /// rival's timed process, and calls [`OpMeasure::prepare_next`] itself.
    pub fn set_prepare_during(&mut self, on: bool) {
        if let Some(r) = self.r.as_mut() {
            r.prepare_during = on;
        }
    }

    /// Starts the process the next [`OpMeasure::step`] runs now, held ([`runner::Held`]):
    /// its start and preparation run beside the process being timed, off the measuring CPU,
    /// and it takes the measuring CPU when that one has given it up. `None`: done, or it
    /// cannot be held ([`runner::holds`]).
    pub fn start_held(&self) -> Option<runner::Held> {
        self.start_held_after(0)
    }

    /// [`OpMeasure::start_held`] of the process `ahead` steps after the next one (0: the
    /// next). Only a planned process that follows for sure (the plan's next index, unless
    /// the one before fails) is started ahead of the step before it: the processes a
    /// `--target-ci` operation adds depend on the intervals of those before.
    pub fn start_held_after(&self, ahead: u64) -> Option<runner::Held> {
        let r = self.r.as_ref()?;
        let a = match (ahead, self.stage) {
            (0, _) => self.next_args()?,
            (k, Stage::Planned(i)) if i + k < self.shape().0 => self.args(self.shape().1, i + k),
            _ => return None,
        };
        runner::start_held(&self.opts.driver, &a, r.ctx.timeout)
    }

    /// Runs the next driver process of the operation (with its re-runs); nothing when done.
    pub fn step(&mut self, totals: &mut MeasureTotals) {
        self.step_held(totals, None)
    }

    /// [`OpMeasure::step`] whose first attempt is `held` when it was started by
    /// [`OpMeasure::start_held`].
    pub fn step_held(&mut self, totals: &mut MeasureTotals, held: Option<runner::Held>) {
        let (nproc, per) = self.shape();
        match self.stage {
            Stage::Done => {}
            Stage::Planned(i) => {
                let args = self.args(per, i);
                let r = self.r.as_mut().expect("a running operation");
                if !r.process(&args, i, totals, held) {
                    self.stage = Stage::Done;
                } else if i + 1 < nproc {
                    self.stage = Stage::Planned(i + 1);
                } else {
                    let pl = self.plan.as_ref().expect("a running operation has a plan");
                    let confident = self.p.target_ci.filter(|_| pl.separate_processes);
                    self.adding = adding_rule(confident);
                    self.stage = Stage::Adding;
                    self.check_stop();
                }
            }
            Stage::Adding => {
                let index = nproc + self.added;
                let args = self.args(1, index);
                let r = self.r.as_mut().expect("a running operation");
                let complete = r.process(&args, index, totals, held);
                self.added += 1;
                if complete {
                    self.check_stop();
                } else {
                    self.stopped = Some("failed");
                    self.stage = Stage::Done;
                }
            }
        }
    }

    /// Whether adding trials stops now (the operation is then done).
    fn check_stop(&mut self) {
        let Some((target, max_trials)) = self.adding else {
            self.stage = Stage::Done;
            return;
        };
        let (_, per) = self.shape();
        let planned = self.plan.as_ref().map_or(0, |pl| pl.trials);
        let hz = *self.hz.get_or_insert_with(|| {
            self.counter_info["tick_hz"]
                .as_f64()
                .or_else(|| pqperf_ffi::counters::ticks_hz(5).map(|h| h as f64))
                .unwrap_or(0.0)
        });
        let r = self.r.as_ref().expect("a running operation");
        // No interval without a tick rate (as `Robust::compute`).
        let width = |resamples| {
            (hz > 0.0)
                .then(|| {
                    robust::half_width_rel(
                        &r.m.sample_trials,
                        robust::Estimator::choose(&self.p.op.call(), &r.m.sample_trials),
                        resamples,
                        robust::SEED,
                        robust::CONFIDENCE,
                    )
                })
                .flatten()
        };
        let stop = |h| {
            decide::stop_adding(
                h,
                target,
                planned + self.added,
                max_trials,
                r.spent_s,
                r.one_s(per),
                r.budget_s,
            )
        };
        // A cheap look after every process; a stop is confirmed with the record's own
        // computation, so the half-width a stop is based on is the one the record shows.
        let quick = width(STOP_CHECK_RESAMPLES);
        let mut why = stop(quick);
        self.last = quick;
        if why.is_some() {
            self.last = width(robust::RESAMPLES);
            why = stop(self.last);
        }
        if let Some(why) = why {
            self.stopped = Some(why);
            self.stage = Stage::Done;
        }
    }

    /// What the processes produced (call when [`OpMeasure::done`]).
    pub fn measured(self) -> Measured {
        if let Some(m) = self.early {
            return m;
        }
        let Some(mut r) = self.r else {
            return Measured::default();
        };
        let pending = std::mem::take(&mut r.pending);
        r.settle(pending);
        let confident = self
            .plan
            .as_ref()
            .and_then(|pl| self.p.target_ci.filter(|_| pl.separate_processes));
        if let Some((target, _)) = self.adding {
            let pl = self.plan.as_ref().expect("a running operation has a plan");
            r.m.protocol = record::PROTOCOL_TARGET_CI;
            r.m.adaptive = Some(Adaptive {
                target_half_width_rel: target,
                planned_trials: pl.trials,
                added_trials: self.added,
                stopped: self.stopped.unwrap_or("failed").to_string(),
                final_half_width_rel: self.last,
                trial_target_s: confident.map(|c| c.trial_target_s),
                budget_s: confident.map(|c| c.budget_s),
                spent_s: Some(r.spent_s),
            });
            if let Some(pl) = r.m.plan.as_mut() {
                pl.trials += self.added;
            }
        } else if confident.is_some() {
            // The planned trials failed before the protocol could add any.
            r.m.protocol = record::PROTOCOL_TARGET_CI;
        }
        r.m.reruns_declined = r.declined;
        r.m
    }

    /// Builds the operation's record from what its processes produced and writes it (call
    /// when [`OpMeasure::done`]).
    pub fn finish(self, totals: &mut MeasureTotals) -> Res<Record> {
        let (opts, env, p, counter_info) = (self.opts, self.env, self.p, self.counter_info);
        let (started_utc, la_start) = (self.started_utc.clone(), self.la_start);
        let m = self.measured();
        let tick_hz = if m.sample_trials.iter().any(|t| !t.is_empty()) {
            pqperf_ffi::counters::ticks_hz(5)
        } else {
            None
        };
        let ctx = RecordContext {
            env,
            counter_info,
            started_utc,
            ended_utc: utc_now(),
            load_average: (la_start, pqperf_ffi::procinfo::load_average()),
            tick_hz,
        };
        let rec = assemble_record(&ctx, p, m);
        write_record(&opts.run_dir, p, &rec)?;
        totals.records += 1;
        Ok(rec)
    }
}

/// Runs the processes of `p` as planned (reference plan, adaptive additions, or the
/// `--target-ci` protocol) one after the other; nothing is written.
pub fn run_op(
    opts: &UnitSettings,
    env: &Value,
    counter_info: &Value,
    p: &PlannedOp,
    totals: &mut MeasureTotals,
) -> Measured {
    let mut op = OpMeasure::new(opts, env, counter_info, p);
    while !op.done() {
        op.step(totals);
    }
    op.measured()
}

/// What a record says about when and where it was measured, besides the measurement.
#[derive(Debug, Clone)]
pub struct RecordContext<'a> {
    /// The environment snapshot (`environment`).
    pub env: &'a Value,
    /// The counter facts of the host probe.
    pub counter_info: &'a Value,
    /// `started_utc`.
    pub started_utc: String,
    /// `ended_utc`.
    pub ended_utc: String,
    /// Load averages at the start and the end.
    pub load_average: ([f64; 3], [f64; 3]),
    /// Tick counter rate measured now (used when `counter_info` has none).
    pub tick_hz: Option<u64>,
}

/// Measures `p` as planned and writes its record; the driver time goes into `totals`.
pub fn measure_one(
    opts: &UnitSettings,
    env: &Value,
    counter_info: &Value,
    p: &PlannedOp,
    totals: &mut MeasureTotals,
) -> Res<Record> {
    let mut op = OpMeasure::new(opts, env, counter_info, p);
    while !op.done() {
        op.step(totals);
    }
    op.finish(totals)
}

/// Writes `rec` as the record of `p` (reference serialisation, bounded size, atomically).
pub fn write_record(run_dir: &Path, p: &PlannedOp, rec: &Record) -> Res<()> {
    let path = rec_path(run_dir, &p.inst, &p.op.key());
    let text = pyjson::to_string(rec).map_err(|e| MeasureError::msg(e.to_string()))?;
    pqperf_model::limits::check_size(&path, text.len())
        .map_err(|e| MeasureError::msg(e.to_string()))?;
    write_atomic(&path, text.as_bytes())?;
    Ok(())
}

/// The record of `p` from what its processes produced (pure: no process, no file).
pub fn assemble_record(ctx: &RecordContext, p: &PlannedOp, m: Measured) -> Record {
    let Measured {
        processes,
        sample_trials,
        counter,
        mem,
        retries_total,
        attempts,
        adaptive,
        plan,
        protocol,
        reruns_declined,
    } = m;
    let env = ctx.env;
    let counter_info = ctx.counter_info;
    let samples: Vec<u64> = sample_trials.iter().flatten().copied().collect();
    let totals_p = ProcessTotals::of(&processes);
    let want_trials = plan.as_ref().map_or(u64::MAX, |pl| pl.trials);
    let complete = !processes.is_empty()
        && processes.iter().all(|pr| pr.status == "complete")
        && totals_p.trials.len() as u64 == want_trials;
    let e = &p.inst.entry;
    let first_meta = processes
        .first()
        .map(|pr| pr.meta.clone())
        .unwrap_or_default();
    let mut sizes = indexmap::IndexMap::new();
    let mut kex = indexmap::IndexMap::new();
    for (k, v) in first_meta.iter() {
        let Some(s) = v.as_str() else { continue };
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let n: u64 = s.parse().unwrap_or(0);
            if k.ends_with("_bytes") && k != "baseline_rss_bytes" && k != "peak_rss_bytes" {
                sizes.insert(k.to_string(), n);
            } else if k.starts_with("kex_") {
                kex.insert(k.to_string(), n);
            }
        }
    }
    let mut ext = PqperfRecordExt {
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
        emulated: pqperf_ffi::emulation::emulated(),
        ..Default::default()
    };
    let counter_name = counter
        .clone()
        .or_else(|| p.calibration.counter().map(str::to_string));
    if let Value::Object(m) = counter_info {
        for (k, v) in m {
            ext.extra.insert(k.clone(), v.clone());
        }
    }
    // The child that measured is the one source of truth for the counter kind: what the
    // parent's probe said is overwritten when the child names its counter.
    if let Some(c) = &counter_name {
        ext.extra.insert("counter".into(), json!(c));
        let core = Counter::parse(c).is_core_cycles();
        if counter_info["cycles_are_core_cycles"].as_bool() != Some(core) {
            ext.extra
                .insert("cycles_are_core_cycles".into(), json!(core));
            let hz = if core {
                Value::Null
            } else {
                counter_info["tick_hz"].clone()
            };
            ext.extra.insert("counter_hz".into(), hz);
        }
    }
    if let Some(pv) = e.extra.get("iccs_provider") {
        ext.extra.insert("iccs_provider".into(), pv.clone());
    }
    if complete
        && let Some(m) = mem
        && m.heap_peak_bytes.is_some()
    {
        ext.stack_bytes = Some(m.stack_bytes);
        ext.stack_region_bytes = Some(m.stack_region_bytes);
        ext.stack_overflow = Some(m.stack_overflow);
        ext.heap_peak_bytes = m.heap_peak_bytes;
        ext.heap_allocations = m.heap_allocations;
        ext.heap_untracked = m.heap_untracked.filter(|&u| u > 0);
    }
    let tick_hz = ctx.tick_hz.filter(|_| !samples.is_empty());
    if !samples.is_empty() {
        let hz = counter_info["tick_hz"]
            .as_f64()
            .or(tick_hz.map(|h| h as f64))
            .unwrap_or(0.0);
        if hz > 0.0 {
            let secs: Vec<f64> = samples.iter().map(|&s| s as f64 / hz).collect();
            ext.per_call_seconds = Quantiles::of(&secs);
        }
        if !counter_name
            .as_deref()
            .is_some_and(|c| Counter::parse(c).is_core_cycles())
        {
            let ticks: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
            ext.per_call_cycles = Quantiles::of(&ticks);
        }
        ext.extra.insert(
            "per_call_note".into(),
            json!("per-call samples are tick-counter deltas read between consecutive calls of separate sampled trials (at most 400 calls after each reference trial); the reference trials read no counter per call"),
        );
        if let Some(why) = pqperf_model::limits::samples_problem(sample_trials.iter().map(Vec::len))
        {
            // Never written: the bound every reader enforces (pqperf_model::limits).
            ext.extra.insert("samples_refused".into(), json!(why));
        } else if hz > 0.0 {
            ext.robust = Robust::compute(&sample_trials, &p.op.call(), hz);
        }
    }
    // The headline floor (issue 36, `pqperf_model::floor`): every complete process's sampled
    // trials passed the window rule (`crate::verify`), so the estimate — a trimmed mean of
    // their fenced means — lies at most its worst window's bound below the true cost; the
    // record states that bound.
    if ext.robust.is_some()
        && let Some(b) = pqperf_model::floor::record_bound(
            processes
                .iter()
                .filter(|pr| pr.status == "complete")
                .filter_map(|pr| pr.extra.get("kernel_check")),
        )
    {
        ext.extra.insert("headline_floor".into(), b);
    }
    if !attempts.is_empty() {
        ext.disturbance_rule = Some(disturbance_rule());
        ext.attempts = Some(attempts);
    }
    ext.adaptive = adaptive;
    ext.environment_evidence = kept_env(ext.attempts.as_deref());
    ext.protocol = Some(protocol.to_string());
    ext.reruns_declined = Some(reruns_declined).filter(|v| !v.is_empty());
    let mut rec = Record {
        schema: record::RECORD_SCHEMA,
        status: if complete {
            "complete".into()
        } else {
            "failed_or_partial".into()
        },
        candidate: e.candidate.clone(),
        label: e.label.clone(),
        instance: e.instance.clone(),
        variant: e.variant.clone(),
        flags: e.flags.clone(),
        operation: p.op.call().into_owned(),
        input_bytes: p.op.bytes(),
        plan: match &plan {
            Some(pl) => pl.clone(),
            None => Default::default(),
        },
        kat: e.kat.clone(),
        kat_not_passed: p.inst.kat_not_passed,
        disturbed_retries: retries_total,
        library: e.library.clone(),
        library_sha256: e.library_sha256.clone(),
        kat_log: e.kat_log.clone(),
        kat_log_sha256: e.kat_log_sha256.clone(),
        started_utc: ctx.started_utc.clone(),
        ended_utc: ctx.ended_utc.clone(),
        load_average_start: ctx.load_average.0.to_vec(),
        load_average_end: ctx.load_average.1.to_vec(),
        environment: Fields::from(env.as_object().cloned().unwrap_or_default()),
        processes,
        trials: totals_p.trials.clone(),
        sizes,
        kex,
        build_flags: first_meta
            .str("build_flags")
            .unwrap_or_default()
            .to_string(),
        baseline_rss_bytes: totals_p.baseline_rss_bytes,
        peak_rss_bytes: totals_p.peak_rss_bytes,
        timing_scope: first_meta.str("timing_scope").unwrap_or("loop").to_string(),
        pqperf: Some(ext),
        ..Default::default()
    };
    if let Some(s) = RecordStats::of_record(&rec) {
        s.apply_to(&mut rec);
    }
    rec
}

/// The environment of the kept attempts (`pqperf.environment_evidence`).
fn kept_env(attempts: Option<&[Attempt]>) -> Option<pqperf_model::envevidence::EnvSummary> {
    let kept = attempts?
        .iter()
        .filter(|a| a.kept)
        .filter_map(|a| a.env.as_ref());
    pqperf_model::envevidence::EnvSummary::of(kept)
}

#[cfg(test)]
mod tests {
    //! The decisions of a record on hand-made runs: which trial is disturbed, which attempt
    //! is kept, when adaptive stopping stops.

    use super::*;
    use pqperf_model::record::TrialSched;

    /// A reference trial of `seconds` with a run-queue share (None: no schedstat) and
    /// involuntary switches; the counter ran at `ghz` counts per ns.
    fn trial(seconds: f64, share: Option<f64>, nivcsw: u64, ghz: f64) -> TrialSched {
        TrialSched {
            kind: "reference".into(),
            trial: 1,
            calls: 10,
            seconds,
            count: (seconds * 1e9 * ghz) as u64,
            counter_per_ns: Some(ghz),
            nivcsw,
            nvcsw: 0,
            runq_ns: share.map(|s| (s * seconds * 1e9) as u64),
            minflt: 0,
            majflt: 0,
            migrations: None,
            cpu_changed: None,
            preempted_share: share,
            disturbed: false,
        }
    }

    fn run(status: &str, counter: &str, sched: Vec<TrialSched>) -> Run {
        Run {
            process: Process {
                status: status.into(),
                ..Default::default()
            },
            samples: Vec::new(),
            sample_trials: Vec::new(),
            sched,
            counter: Some(counter.into()),
            wall_s: 1.0,
            timed_s: 0.5,
            mem: None,
            env: Default::default(),
            output_digest: None,
            budget: Default::default(),
            beside: Default::default(),
            held: false,
            handed_over: false,
        }
    }

    #[test]
    fn a_trial_is_disturbed_by_run_queue_wait_above_two_percent() {
        let mut r = run(
            "complete",
            "tsc",
            vec![
                trial(0.1, Some(0.019), 50, 3.0),
                trial(0.1, Some(0.021), 0, 3.0),
            ],
        );
        assert!(mark_disturbed(&mut r, None));
        assert_eq!(
            r.sched.iter().map(|t| t.disturbed).collect::<Vec<_>>(),
            [false, true],
            "the share decides, not the switch count, when schedstat is there"
        );
        let mut quiet = run("complete", "tsc", vec![trial(0.1, Some(0.0), 0, 3.0)]);
        assert!(!mark_disturbed(&mut quiet, None));
    }

    #[test]
    fn without_schedstat_involuntary_switches_decide() {
        // Limit max(2, 10 x seconds): 2 for 0.1 s, 10 for 1 s.
        let mut r = run(
            "complete",
            "tsc",
            vec![
                trial(0.1, None, 2, 3.0),
                trial(0.1, None, 3, 3.0),
                trial(1.0, None, 10, 3.0),
                trial(1.0, None, 11, 3.0),
            ],
        );
        assert!(mark_disturbed(&mut r, None));
        assert_eq!(
            r.sched.iter().map(|t| t.disturbed).collect::<Vec<_>>(),
            [false, true, false, true]
        );
    }

    #[test]
    fn a_cycle_counter_below_the_fixed_clock_disturbs_long_reference_trials_only() {
        let hz = Some(3.0e9);
        // 2.8 GHz < 95 % of 3 GHz: disturbed over 10 ms, not at 5 ms; 2.9 GHz is fine.
        let mut r = run(
            "complete",
            "cycles",
            vec![
                trial(0.02, Some(0.0), 0, 2.8),
                trial(0.005, Some(0.0), 0, 2.8),
                trial(0.02, Some(0.0), 0, 2.9),
            ],
        );
        assert!(mark_disturbed(&mut r, hz));
        assert_eq!(
            r.sched.iter().map(|t| t.disturbed).collect::<Vec<_>>(),
            [true, false, false]
        );
        // Not for a tick counter, not for sampled trials, not without a known clock, not for
        // per-call KEX steps.
        let mut ticks = run("complete", "tsc", vec![trial(0.02, Some(0.0), 0, 2.8)]);
        assert!(!mark_disturbed(&mut ticks, hz));
        let mut sampled = run("complete", "cycles", vec![trial(0.02, Some(0.0), 0, 2.8)]);
        sampled.sched[0].kind = "sampled".into();
        assert!(!mark_disturbed(&mut sampled, hz));
        let mut unknown = run("complete", "cycles", vec![trial(0.02, Some(0.0), 0, 2.8)]);
        assert!(!mark_disturbed(&mut unknown, None));
        let mut step = run("complete", "cycles", vec![trial(0.02, Some(0.0), 0, 2.8)]);
        step.process.meta.insert("timing_scope", "per_call_step");
        assert!(!mark_disturbed(&mut step, hz));
    }

    #[test]
    fn the_last_attempt_is_kept_unless_all_were_disturbed() {
        let a = |status: &str, share: f64, d: bool| {
            (run(status, "tsc", vec![trial(0.1, Some(share), 0, 3.0)]), d)
        };
        // A clean retry is kept.
        assert_eq!(
            kept_attempt(&[a("complete", 0.3, true), a("complete", 0.0, false)]),
            1
        );
        // All disturbed: the smallest run-queue share, wherever it is.
        assert_eq!(
            kept_attempt(&[
                a("complete", 0.3, true),
                a("complete", 0.05, true),
                a("complete", 0.2, true)
            ]),
            1
        );
        // A failed attempt ends the process and is what the record shows.
        assert_eq!(
            kept_attempt(&[a("complete", 0.3, true), a("failed", 0.0, false)]),
            1
        );
        assert_eq!(
            kept_attempt(&[a("complete", 0.01, true), a("hard_timeout", 0.5, true)]),
            1
        );
        assert_eq!(kept_attempt(&[a("complete", 0.0, false)]), 0);
        // Disturbed by interrupts last (no figures): the complete attempt before it.
        assert_eq!(
            kept_attempt(&[
                a("complete", 0.3, true),
                a("complete", 0.1, true),
                a("disturbed", 0.0, true)
            ]),
            1
        );
        assert_eq!(
            kept_attempt(&[a("disturbed", 0.0, true), a("disturbed", 0.0, true)]),
            1
        );
    }

    #[test]
    fn adding_trials_says_why_it_stopped() {
        // The reference protocol adds nothing.
        assert_eq!(adding_rule(None), None);
        let c = plan::TargetCiPlan {
            target: 0.005,
            trial_target_s: 0.05,
            budget_s: 3.0,
        };
        let (t, max) = adding_rule(Some(c)).unwrap();
        assert_eq!((t, max), (0.005, decide::MAX_TARGET_CI_TRIALS));
        let stop = |h, trials: u64, spent| decide::stop_adding(h, t, trials, max, spent, 0.1, 10.0);
        assert_eq!(stop(None, 8, 0.0), Some("no_samples"));
        assert_eq!(stop(Some(t), 8, 0.0), Some("ci_reached"));
        assert_eq!(stop(Some(2.0 * t), max, 0.0), Some("max_trials"));
        assert_eq!(stop(Some(2.0 * t), 9, 9.95), Some("budget_spent"));
        assert_eq!(stop(Some(2.0 * t), 9, 9.8), Some("ci_out_of_reach"));
        assert_eq!(stop(Some(1.2 * t), 9, 9.8), None);
        assert_eq!(stop(Some(1.2 * t), max - 1, 0.0), None);
    }

    #[test]
    fn preempted_share_is_weighted_by_trial_time() {
        let r = run(
            "complete",
            "tsc",
            vec![trial(0.3, Some(0.1), 0, 3.0), trial(0.1, Some(0.5), 0, 3.0)],
        );
        // (0.03 + 0.05) / 0.4 = 0.2
        assert!((preempted_share(&r) - 0.2).abs() < 1e-9);
        assert_eq!(preempted_share(&run("complete", "tsc", Vec::new())), 0.0);
    }

    /// A kept process of one complete trial of `calls` calls taking `seconds`, with one
    /// sampled trial of tick deltas around `ticks`.
    fn kept(calls: u64, seconds: f64, ticks: u64) -> (Process, Vec<u64>) {
        let p = Process {
            status: "complete".into(),
            trials: vec![pqperf_model::record::Trial {
                measurements: calls,
                seconds,
                cycles: Some((seconds * 3e9) as i64),
                ..Default::default()
            }],
            disturbed_retries: Some(0),
            ..Default::default()
        };
        let samples = (0..50).map(|i| ticks + i % 3).collect();
        (p, samples)
    }

    fn planned(trials: u64) -> PlannedOp {
        PlannedOp {
            inst: Instance {
                entry: Default::default(),
                category: Some(pqperf_model::vocab::Category::Sign),
                api: crate::driver::ApiSpec::Iccs,
                kat_not_passed: false,
            },
            op: pqperf_model::vocab::Operation::Keygen,
            plan: Some(pqperf_model::Plan {
                iterations_per_trial: 100,
                warmups: 3,
                trials,
                separate_processes: true,
                ..Default::default()
            }),
            calibration: Default::default(),
            target_ci: None,
            prep: None,
        }
    }

    #[test]
    fn a_target_ci_record_keeps_the_reference_fields_of_the_trials_it_ran() {
        let env = json!({});
        let info = json!({"tick_hz": 3e9, "counter": "tsc"});
        let ctx = RecordContext {
            env: &env,
            counter_info: &info,
            started_utc: "2026-01-01T00:00:00.000000+00:00".into(),
            ended_utc: "2026-01-01T00:00:01.000000+00:00".into(),
            load_average: ([0.0; 3], [1.0; 3]),
            tick_hz: None,
        };
        let p = planned(5);
        let mut m = Measured {
            plan: p.plan.clone(),
            protocol: record::PROTOCOL_TARGET_CI,
            ..Default::default()
        };
        for i in 0..7u64 {
            let (pr, s) = kept(100, 0.001 * (1.0 + i as f64 / 100.0), 3000);
            m.processes.push(pr);
            m.sample_trials.push(s);
        }
        m.plan.as_mut().unwrap().trials = 7;
        m.adaptive = Some(Adaptive {
            target_half_width_rel: 0.01,
            planned_trials: 5,
            added_trials: 2,
            stopped: "ci_reached".into(),
            final_half_width_rel: Some(0.004),
            trial_target_s: Some(0.001),
            budget_s: Some(2.0),
            spent_s: Some(0.2),
        });
        m.reruns_declined = vec!["process 3: no_effect".into()];
        let rec = assemble_record(&ctx, &p, m);
        assert_eq!(rec.status, "complete");
        assert_eq!(rec.trials.len(), 7);
        assert_eq!(rec.measurements, Some(700));
        assert_eq!(rec.guide_100_measurements_met, Some(true));
        // The median trial of 1.000 … 1.006 ms over 100 calls.
        let med = rec.median_trial_seconds.unwrap();
        assert!((med - 0.00103 / 100.0).abs() < 1e-12, "{med}");
        let ext = rec.pqperf.as_ref().unwrap();
        assert_eq!(ext.protocol.as_deref(), Some("target_ci"));
        assert!(ext.robust.is_some());
        assert_eq!(ext.adaptive.as_ref().unwrap().added_trials, 2);
        // Missing one planned trial: not complete.
        let mut short = Measured {
            plan: p.plan.clone(),
            protocol: record::PROTOCOL_TARGET_CI,
            ..Default::default()
        };
        for _ in 0..4 {
            let (pr, s) = kept(100, 0.001, 3000);
            short.processes.push(pr);
            short.sample_trials.push(s);
        }
        assert_eq!(assemble_record(&ctx, &p, short).status, "failed_or_partial");
    }

    #[test]
    fn a_disturbed_run_is_compared_with_what_was_kept() {
        let mut m = Measured::default();
        let r0 = run("complete", "tsc", vec![]);
        assert_eq!(run_effect(&m, &r0), None, "nothing kept yet");
        for _ in 0..3 {
            let (pr, s) = kept(100, 0.001, 3000);
            m.processes.push(pr);
            m.sample_trials.push(s);
        }
        let (pr, s) = kept(100, 0.00103, 3000);
        let mut r = run("complete", "tsc", vec![]);
        r.process = pr;
        r.sample_trials = vec![s];
        let e = run_effect(&m, &r).unwrap();
        assert!((e - 0.03).abs() < 1e-9, "{e}");
    }
}
