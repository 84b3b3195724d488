//! Measuring one planned operation and building its record (method §7): the driver
//! processes of the plan (with up to two retries of a disturbed run), the record with its
//! statistics, sizes, counter, per-call quantiles and robust estimate, written to
//! `records/<id>/<label>__<op>.json`.
//!
//! **Disturbance** (works with any counter, no PMU needed): a trial is disturbed when its
//! run-queue wait (`/proc/thread-self/schedstat`: time runnable but not running, i.e. time
//! lost to preemption by other tasks) exceeds [`MAX_PREEMPTED_SHARE`] (2 %) of its wall
//! time; where the kernel has no schedstat, when it had more than
//! `max(2, 10 × seconds)` involuntary context switches; and, as in the reference (§7.1.4),
//! when a cycle counter ran below 95 % of a known fixed clock in a trial over 10 ms. A
//! process with a disturbed trial (reference or sampled) is run again, at most
//! [`MAX_RETRIES`] times; when every attempt was disturbed the least disturbed one (smallest
//! run-queue share) is kept. Every attempt is listed under `pqperf.attempts` with the
//! per-trial facts; `processes[].disturbed_retries` is the number of re-runs of that process.
//!
//! **Adaptive stopping** (`UnitSettings::adaptive`): after the planned processes, one more
//! single-trial process is added while the robust estimate's CI half-width exceeds 1 %, the
//! driver time of the operation stays under its budget and fewer than [`MAX_ADDED_TRIALS`]
//! were added; `pqperf.adaptive` says why it stopped and `plan.trials` counts every trial.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_model::fields::Fields;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::pyjson;
use pqperf_model::record::{self, Adaptive, Attempt, PqperfRecordExt, Process, Record};
use pqperf_model::robust::Robust;
use pqperf_model::stats::{ProcessTotals, Quantiles, RecordStats};
use serde_json::{Value, json};

use crate::instance::{Instance, driver_args};
use crate::plan::{self, PlannedOp};
use crate::runner::{self, MemFigures, Run};
use crate::settings::UnitSettings;
use crate::{MeasureError, host};

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
    run.join("records")
        .join(&inst.entry.candidate)
        .join(record::Record::file_name(&inst.entry.label, opkey))
}

/// Largest share of a trial's wall time spent waiting on the run queue before the trial
/// counts as disturbed.
pub const MAX_PREEMPTED_SHARE: f64 = 0.02;
/// Re-runs of a disturbed driver process at most.
pub const MAX_RETRIES: u64 = 2;
/// Trials adaptive stopping adds at most.
pub const MAX_ADDED_TRIALS: u64 = 20;
/// Target relative CI half-width of adaptive stopping.
pub const ADAPTIVE_TARGET: f64 = 0.01;

/// The disturbance rule as recorded under `pqperf.disturbance_rule`.
pub fn disturbance_rule() -> String {
    format!(
        "trial disturbed when run-queue wait > {} % of its wall time (without schedstat: involuntary context switches > max(2, 10 x seconds)); or a cycle counter below 95 % of the fixed clock over 10 ms; a disturbed process is re-run up to {MAX_RETRIES} times, the least disturbed attempt kept",
        MAX_PREEMPTED_SHARE * 100.0
    )
}

/// Marks the disturbed trials of `run` (see the module doc); true if any.
fn mark_disturbed(run: &mut Run, fixed_hz: Option<f64>) -> bool {
    let cycles = run.counter.as_deref() == Some("cycles")
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

/// Runs one planned driver process, re-running it while disturbed (at most [`MAX_RETRIES`]
/// times); every attempt goes into `attempts`. Returns the kept run and the re-run count.
fn run_with_retries(
    ctx: &RunCtx,
    args: &crate::driver::DriverArgs,
    index: u64,
    attempts: &mut Vec<Attempt>,
    totals: &mut MeasureTotals,
    spent_s: &mut f64,
) -> (Run, u64) {
    let mut runs: Vec<(Run, bool)> = Vec::new();
    for attempt in 0..=MAX_RETRIES {
        let mut run = runner::run_driver(&ctx.opts.driver, args, ctx.timeout);
        totals.timed_s += run.timed_s;
        totals.process_s += run.wall_s;
        *spent_s += run.wall_s;
        let disturbed = mark_disturbed(&mut run, ctx.fixed);
        attempts.push(Attempt {
            process: index,
            attempt,
            kept: false,
            status: run.process.status.clone(),
            disturbed,
            trials: run.sched.clone(),
            env: Some(run.env.clone()).filter(|e| !e.is_empty()),
        });
        // A run whose claims disagree with the kernel's accounting is re-run once.
        let inconsistent = run.process.status == crate::verify::INCONSISTENT;
        let done = if inconsistent {
            runs.iter()
                .any(|(r, _)| r.process.status == crate::verify::INCONSISTENT)
        } else {
            !run.complete() || !disturbed
        };
        runs.push((run, disturbed));
        if done {
            break;
        }
    }
    let retries = runs.len() as u64 - 1;
    let keep = kept_attempt(&runs);
    let first = attempts.len() - runs.len();
    attempts[first + keep].kept = true;
    (runs.swap_remove(keep).0, retries)
}

/// Which of the attempts (run, disturbed) of one process is kept: the last one unless every
/// attempt was complete and disturbed, then the least disturbed (smallest run-queue share).
fn kept_attempt(runs: &[(Run, bool)]) -> usize {
    let last = runs.len().saturating_sub(1);
    if runs.iter().all(|(r, d)| r.complete() && *d) {
        (0..runs.len())
            .min_by(|&a, &b| preempted_share(&runs[a].0).total_cmp(&preempted_share(&runs[b].0)))
            .unwrap_or(last)
    } else {
        last
    }
}

/// Why adaptive stopping stops before one more trial (`None`: add it), given the robust
/// CI half-width so far, the trials added, the operation's driver seconds spent, the
/// expected seconds of one more trial and the operation budget.
fn adaptive_stop(
    half_width: Option<f64>,
    added: u64,
    spent_s: f64,
    one_s: f64,
    budget_s: f64,
) -> Option<&'static str> {
    match half_width {
        None => Some("no_samples"),
        Some(h) if h <= ADAPTIVE_TARGET => Some("ci_reached"),
        _ if added >= MAX_ADDED_TRIALS => Some("max_trials"),
        _ if spent_s + one_s > budget_s => Some("budget_spent"),
        _ => None,
    }
}

/// Timing totals of a measure phase (for the efficiency figure).
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
}

/// Measures `p` as planned and writes its record; the driver time goes into `totals`.
pub fn measure_one(
    opts: &UnitSettings,
    env: &Value,
    counter_info: &Value,
    p: &PlannedOp,
    totals: &mut MeasureTotals,
) -> Res<Record> {
    let started = utc_now();
    let la_start = pqperf_ffi::procinfo::load_average();
    let fixed = host::fixed_clock_hz(env);
    let mut processes: Vec<Process> = Vec::new();
    let mut sample_trials: Vec<Vec<u64>> = Vec::new();
    let mut counter: Option<String> = None;
    let mut mem: Option<MemFigures> = None;
    let mut retries_total = 0u64;
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut adaptive: Option<Adaptive> = None;
    let mut plan = p.plan.clone();
    match &plan {
        None => {
            // The calibration itself failed: record its process and go on.
            if let Ok(mut pr) = serde_json::from_value::<Process>(strip_cal(&p.calibration)) {
                pr.disturbed_retries = Some(0);
                processes.push(pr);
            }
        }
        Some(pl) if plan::reuses_calibration(pl) => {
            if let Ok(mut pr) = serde_json::from_value::<Process>(strip_cal(&p.calibration)) {
                pr.disturbed_retries = Some(0);
                pr.extra.insert("reused_calibration".into(), json!(true));
                pr.extra
                    .insert("t1_s".into(), p.calibration["t1_s"].clone());
                pr.extra
                    .insert("setup_s".into(), p.calibration["setup_s"].clone());
                mem = MemFigures::from_json(&p.calibration["pqperf_mem"]);
                processes.push(pr);
            }
        }
        Some(pl) => {
            let (nproc, per) = if pl.separate_processes {
                (pl.trials, 1)
            } else {
                (1, pl.trials)
            };
            let timeout = Duration::from_secs_f64(pl.timeout_per_process_s.unwrap_or(1.0).max(1.0));
            let ctx = RunCtx {
                opts,
                timeout,
                fixed,
            };
            let mut spent_s = 0.0;
            let mut ok = true;
            for i in 0..nproc {
                let args = driver_args(
                    opts,
                    &p.inst,
                    &p.op,
                    p.bytes,
                    per as u32,
                    pl.iterations_per_trial,
                    pl.warmups,
                );
                let (run, retries) =
                    run_with_retries(&ctx, &args, i, &mut attempts, totals, &mut spent_s);
                retries_total += retries;
                ok = run.complete();
                keep_run(
                    run,
                    retries,
                    &mut processes,
                    &mut sample_trials,
                    &mut counter,
                    &mut mem,
                );
                if !ok {
                    break;
                }
            }
            if opts.adaptive && ok {
                let hz = counter_info["tick_hz"]
                    .as_f64()
                    .or_else(|| pqperf_ffi::counters::ticks_hz(5).map(|h| h as f64))
                    .unwrap_or(0.0);
                let mut added = 0u64;
                let mut last;
                let stopped = loop {
                    let r = Robust::compute(&sample_trials, &p.op, hz);
                    last = r.as_ref().map(|r| r.ci_half_width_rel);
                    let one = (spent_s / (processes.len().max(1) as f64)) / per as f64;
                    if let Some(why) =
                        adaptive_stop(last, added, spent_s, one, opts.planning.op_budget_s)
                    {
                        break why;
                    }
                    let args = driver_args(
                        opts,
                        &p.inst,
                        &p.op,
                        p.bytes,
                        1,
                        pl.iterations_per_trial,
                        pl.warmups,
                    );
                    let (run, retries) = run_with_retries(
                        &ctx,
                        &args,
                        nproc + added,
                        &mut attempts,
                        totals,
                        &mut spent_s,
                    );
                    retries_total += retries;
                    let complete = run.complete();
                    keep_run(
                        run,
                        retries,
                        &mut processes,
                        &mut sample_trials,
                        &mut counter,
                        &mut mem,
                    );
                    added += 1;
                    if !complete {
                        break "failed";
                    }
                };
                adaptive = Some(Adaptive {
                    target_half_width_rel: ADAPTIVE_TARGET,
                    planned_trials: pl.trials,
                    added_trials: added,
                    stopped: stopped.to_string(),
                    final_half_width_rel: last,
                });
            }
        }
    }
    if let (Some(pl), Some(a)) = (plan.as_mut(), &adaptive) {
        pl.trials += a.added_trials;
    }
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
    let counter_name = counter.clone().or_else(|| {
        p.calibration["pqperf"]["counter"]
            .as_str()
            .map(str::to_string)
    });
    if let Value::Object(m) = counter_info {
        for (k, v) in m {
            ext.extra.insert(k.clone(), v.clone());
        }
    }
    // The child that measured is the one source of truth for the counter kind: what the
    // parent's probe said is overwritten when the child names its counter.
    if let Some(c) = &counter_name {
        ext.extra.insert("counter".into(), json!(c));
        let core = c == "cycles";
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
    let tick_hz = pqperf_ffi::counters::ticks_hz(5).filter(|_| !samples.is_empty());
    if !samples.is_empty() {
        let hz = counter_info["tick_hz"]
            .as_f64()
            .or(tick_hz.map(|h| h as f64))
            .unwrap_or(0.0);
        if hz > 0.0 {
            let secs: Vec<f64> = samples.iter().map(|&s| s as f64 / hz).collect();
            ext.per_call_seconds = Quantiles::of(&secs);
        }
        if counter_name.as_deref() != Some("cycles") {
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
            ext.robust = Robust::compute(&sample_trials, &p.op, hz);
        }
    }
    if !attempts.is_empty() {
        ext.disturbance_rule = Some(disturbance_rule());
        ext.attempts = Some(attempts);
    }
    ext.adaptive = adaptive;
    ext.environment_evidence = kept_env(ext.attempts.as_deref());
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
        operation: p.op.clone(),
        input_bytes: p.bytes,
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
        started_utc: started,
        ended_utc: utc_now(),
        load_average_start: la_start.to_vec(),
        load_average_end: pqperf_ffi::procinfo::load_average().to_vec(),
        environment: Fields::from(env.as_object().cloned().unwrap_or_default()),
        processes: processes.clone(),
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
    let path = rec_path(&opts.run_dir, &p.inst, &p.opkey);
    let text = pyjson::to_string(&rec).map_err(|e| MeasureError::msg(e.to_string()))?;
    pqperf_model::limits::check_size(&path, text.len())
        .map_err(|e| MeasureError::msg(e.to_string()))?;
    write_atomic(&path, text.as_bytes())?;
    totals.records += 1;
    Ok(rec)
}

/// Keeps a run: its process entry (with its re-run count), samples, counter name and memory
/// figures (the largest of the kept runs).
fn keep_run(
    run: Run,
    retries: u64,
    processes: &mut Vec<Process>,
    sample_trials: &mut Vec<Vec<u64>>,
    counter: &mut Option<String>,
    mem: &mut Option<MemFigures>,
) {
    if let Some(m) = run.mem {
        *mem = Some(mem.map_or(m, |x| x.max(m)));
    }
    let mut pr = run.process;
    pr.disturbed_retries = Some(retries);
    sample_trials.extend(run.sample_trials);
    if counter.is_none() {
        *counter = run.counter;
    }
    processes.push(pr);
}

/// The environment of the kept attempts (`pqperf.environment_evidence`).
fn kept_env(attempts: Option<&[Attempt]>) -> Option<pqperf_model::envevidence::EnvSummary> {
    let kept = attempts?
        .iter()
        .filter(|a| a.kept)
        .filter_map(|a| a.env.as_ref());
    pqperf_model::envevidence::EnvSummary::of(kept)
}

fn strip_cal(cal: &Value) -> Value {
    let mut v = cal.clone();
    if let Value::Object(m) = &mut v {
        m.remove("t1_s");
        m.remove("setup_s");
        m.remove("pqperf");
        m.remove("pqperf_mem");
    }
    v
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
    }

    #[test]
    fn adaptive_stopping_says_why_it_stopped() {
        let t = ADAPTIVE_TARGET;
        assert_eq!(adaptive_stop(None, 0, 0.0, 0.1, 10.0), Some("no_samples"));
        assert_eq!(
            adaptive_stop(Some(t), 0, 0.0, 0.1, 10.0),
            Some("ci_reached")
        );
        assert_eq!(
            adaptive_stop(Some(2.0 * t), MAX_ADDED_TRIALS, 0.0, 0.1, 10.0),
            Some("max_trials")
        );
        assert_eq!(
            adaptive_stop(Some(2.0 * t), 3, 9.95, 0.1, 10.0),
            Some("budget_spent")
        );
        assert_eq!(adaptive_stop(Some(2.0 * t), 3, 9.8, 0.1, 10.0), None);
        assert_eq!(
            adaptive_stop(Some(2.0 * t), MAX_ADDED_TRIALS - 1, 0.0, 0.1, 10.0),
            None
        );
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
}
