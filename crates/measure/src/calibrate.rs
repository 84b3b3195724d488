//! Calibration of one unit (method §6.2): one driver run of one call per (instance,
//! operation), stored in `calibrate/<id>/<label>__<op>.json` with `t1_s` and `setup_s`; the
//! operations of an instance once its exchange is calibrated (KEX steps). The same process
//! then makes [`WARM_TRIALS`] warm calls, one per trial (issue 41; no other process): their
//! median is `pqperf.warm_call_s`, the call seconds the plan and the estimates use
//! (`Calibration::call_s`). A first call too slow for them ends the process at the gate after
//! it, and the next one makes fewer ([`warm_trials_after`]). `t1_s` stays the reference's
//! single cold call (the first trial) and `setup_s` the process's time besides its calls
//! and the warm trials' gates.

use std::path::{Path, PathBuf};

use pqperf_model::calibration::{self, Calibration, CalibrationPqperf};
use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson;

use crate::MeasureError;
use crate::instance::{Instance, base_ops, driver_args};
use crate::runner;
use crate::settings::UnitSettings;
use pqperf_model::vocab::{Category, Operation};

type Res<T> = Result<T, MeasureError>;

/// The calibration file of `inst`'s operation `opkey`: `calibrate/<id>/<label>__<opkey>.json`.
pub fn cal_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    RunLayout::new(run).calibration(&inst.entry.candidate, &inst.entry.label, opkey)
}

/// Calibration stored in `calibrate/` (`pqperf_model::calibration`): the driver process plus
/// `t1_s`, `setup_s`; the stored one when there is one.
pub fn calibrate_one(
    opts: &UnitSettings,
    log: &dyn Fn(String),
    inst: &Instance,
    op: Operation,
) -> Res<Calibration> {
    let opkey = op.key();
    let path = cal_path(&opts.run_dir, inst, &opkey);
    if let Some(c) = calibration::read(&path) {
        return Ok(c);
    }
    // The reference's one cold call (the first trial, no warm-up, no sampled trial: it would
    // double the call and count as setup time), then in the same process warm calls of one
    // call per trial (issue 41: the cold call overstates what a call costs in a process that
    // has warmed up, 1.3–4× on the demo's operations, and a plan sized from it makes trials,
    // the kernel check's windows, shorter than their target). A KEX step gets none.
    let kex_step = inst.category == Some(Category::Kex) && op != Operation::Exchange;
    // An instance whose calls already calibrated are slow: its first call here most likely
    // too (none then, rather than a process ended after its first call).
    let slow_instance = base_ops(inst.category).into_iter().any(|o| {
        o != op
            && calibration::read(&cal_path(&opts.run_dir, inst, &o.key()))
                .and_then(|c| c.t1_s)
                .is_some_and(|t| t >= WARM_MAX_CALL_S)
    });
    let mut warm_n: u32 = if kex_step || slow_instance {
        0
    } else {
        WARM_TRIALS
    };
    let (args, mut run) = loop {
        let mut args = driver_args(opts, inst, op, 1 + warm_n, 1, 0);
        args.samples = false;
        if warm_n == 0 {
            break (
                args.clone(),
                runner::run_driver(&opts.driver, &args, opts.calibration_timeout),
            );
        }
        // The first process is ended at a first call that its warm calls would make cost
        // more than `WARM_SPEND_S`; the next, sized from that call, only at one of
        // `WARM_MAX_CALL_S` (a cold call varies: 38 then 73 ms for Falcon-512 keygen at load 15).
        let slow = if warm_n == WARM_TRIALS {
            warm_slow_s(warm_n)
        } else {
            WARM_MAX_CALL_S
        };
        let run = runner::run_calibration(&opts.driver, &args, opts.calibration_timeout, slow);
        let first = run.process.trials.first().map(|t| t.seconds);
        match first {
            // Ended after a slow first call: again, with as many warm calls as
            // `WARM_SPEND_S` pays for at that call (none for a call of `WARM_MAX_CALL_S`).
            Some(t1) if !run.complete() && t1 >= slow => {
                log(format!(
                    "calibrate {} {} {opkey}: first call {t1:.6}s, the process ended before its {warm_n} warm call(s); again with fewer",
                    inst.entry.candidate, inst.entry.label
                ));
                warm_n = warm_trials_after(t1, warm_n);
            }
            _ => break (args, run),
        }
    };
    if run.process.status == crate::verify::INCONSISTENT {
        // Re-run once; a second inconsistent run is recorded as it is (no t1_s).
        run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
    }
    // Disturbed by interrupts (no figure): re-run as a disturbed process is, at most
    // `decide::MAX_RETRIES` times; one still disturbed is recorded as it is (no t1_s).
    let mut reruns = 0;
    while run.process.status == crate::verify::DISTURBED && reruns < crate::decide::MAX_RETRIES {
        run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
        reruns += 1;
    }
    let accepted = run.complete()
        && run.process.status != crate::verify::INCONSISTENT
        && run.process.status != crate::verify::DISTURBED;
    let t1 = run.process.trials.first().map(|t| t.seconds).filter(|_| {
        run.process.status != crate::verify::INCONSISTENT
            && run.process.status != crate::verify::DISTURBED
    });
    let warm = t1
        .filter(|t| accepted && *t < WARM_MAX_CALL_S)
        .and_then(|_| warm_of(&run, warm_n));
    // The process's set-up: its wall time less its trials and the gates of the warm
    // trials (each trial's share of the time between and around the trials), so that it
    // is the one-call process's, as the reference measures it.
    let setup = t1.map(|_| {
        let k = f64::from(run.process.trials.len().max(1) as u32);
        let others = run.budget.trial_other_s * (k - 1.0) / k;
        let timed: f64 = run.process.trials.iter().map(|t| t.seconds).sum();
        (run.wall_s - timed - others).max(0.0)
    });
    let pq = CalibrationPqperf {
        counter: run.counter.clone().filter(|_| opts.samples),
        // The library this calibration timed: a rebuilt library makes it stale.
        library_sha256: inst.entry.library_sha256.clone(),
        warm_call_s: warm.map(|w| w.0),
        warm_calls: warm.map(|w| w.1),
        warm_runq_share: warm.and_then(|w| w.2),
        ..Default::default()
    };
    let cal = Calibration {
        process: run.process.clone(),
        t1_s: t1,
        setup_s: setup,
        pqperf: (pq.counter.is_some() || pq.library_sha256.is_some() || pq.warm_call_s.is_some())
            .then_some(pq),
        pqperf_mem: run.mem.as_ref().map(|m| m.to_json()),
    };
    let text = pyjson::to_string(&cal)
        .map_err(|e| MeasureError::msg(format!("{}: {e}", path.display())))?;
    write_atomic(&path, text.as_bytes())?;
    match t1 {
        Some(t) => log(format!(
            "calibrate {} {} {opkey}: {t:.6}s (process {:.1}s){}",
            inst.entry.candidate,
            inst.entry.label,
            run.wall_s,
            match warm {
                Some((w, n, share)) => format!(
                    "; warm {w:.6}s a call (median of {n} in the same process), {:.2}× the cold call{}",
                    w / t,
                    share
                        .map(|q| format!(
                            " ({:.0} % of the process waiting for the CPU)",
                            q * 100.0
                        ))
                        .unwrap_or_default()
                ),
                None => String::new(),
            }
        )),
        None => log(format!(
            "calibrate {} {} {opkey}: {} (exit {:?}){}",
            inst.entry.candidate,
            inst.entry.label,
            run.process.status,
            run.process.exit_code,
            if let Some(pr) = run.process.extra.get("kernel_check")
                && run.process.status == crate::verify::INCONSISTENT
            {
                format!(": {}", pr["problems"])
            } else if run.process.stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", run.process.stderr.lines().last().unwrap_or(""))
            }
        )),
    }
    Ok(cal)
}

/// Warm calls (one per trial, after the cold one) a calibration process makes: the driver
/// runs at most 16 trials.
pub const WARM_TRIALS: u32 = 15;
/// Seconds of warm calls a calibration process may spend, at its cold call (which
/// overstates a warm one): a first call of at least this ÷ the warm calls ends the process
/// at the gate after it, and the next process makes as many as this pays for.
pub const WARM_SPEND_S: f64 = 0.25;
/// A cold call of at least this many seconds gets no warm call: its first call is as long
/// as a warm one within a few per cent.
pub const WARM_MAX_CALL_S: f64 = 0.25;

/// The first call's seconds at which a calibration process with `warm` warm calls is ended
/// after it ([`runner::run_calibration`]).
pub fn warm_slow_s(warm: u32) -> f64 {
    WARM_SPEND_S / f64::from(warm.max(1))
}

/// Warm calls of the next calibration process after one with `warm` warm calls was ended
/// at a first call of `t1` seconds: what [`WARM_SPEND_S`] pays for, fewer than `warm`, none
/// for a call of [`WARM_MAX_CALL_S`] or more.
pub fn warm_trials_after(t1: f64, warm: u32) -> u32 {
    if !(t1.is_finite() && t1 > 0.0) || t1 >= WARM_MAX_CALL_S {
        return 0;
    }
    let n = (WARM_SPEND_S / t1).floor().min(f64::from(WARM_TRIALS)) as u32;
    n.min(warm.saturating_sub(1))
}

/// The warm figure of a calibration process that completed its `warm` warm trials (one call
/// each, after the cold one): the median of their seconds on the CPU (each trial's wall time
/// less its run-queue wait; a call interrupted in one trial is left out), the calls, and the
/// share of their wall time they waited for the CPU (each wait at most its call: the load
/// they ran at; `None` without the waits). `None` when a trial is missing or not of one
/// call.
pub fn warm_of(run: &runner::Run, warm: u32) -> Option<(f64, u64, Option<f64>)> {
    let trials = run.process.trials.get(1..)?;
    if warm == 0 || trials.len() != warm as usize || trials.iter().any(|t| t.measurements != 1) {
        return None;
    }
    // Each call's seconds on the CPU: its trial's wall time less the trial's run-queue wait
    // (a call preempted on a busy host waited for the CPU, which is not its cost); a wait
    // longer than the call (the window's wake-up after the gate) is not the call's.
    let waited = |n: usize, secs: f64| {
        run.sched
            .iter()
            .find(|s| s.kind == "reference" && s.trial == n as u64)
            .and_then(|s| s.runq_ns)
            .map(|q| q as f64 / 1e9)
            .filter(|q| *q < secs)
    };
    let mut secs: Vec<f64> = trials
        .iter()
        .enumerate()
        .map(|(i, t)| t.seconds - waited(i + 2, t.seconds).unwrap_or(0.0))
        .collect();
    secs.sort_by(f64::total_cmp);
    let n = secs.len();
    let w = if n % 2 == 1 {
        secs[n / 2]
    } else {
        (secs[n / 2 - 1] + secs[n / 2]) / 2.0
    };
    // The load the calls saw: their waits (each at most its call) ÷ their wall time.
    let (q, t) = trials
        .iter()
        .enumerate()
        .fold((None::<f64>, 0.0), |(q, t), (i, tr)| {
            let wq = run
                .sched
                .iter()
                .find(|s| s.kind == "reference" && s.trial == (i + 2) as u64)
                .and_then(|s| s.runq_ns)
                .map(|r| (r as f64 / 1e9).min(tr.seconds));
            (wq.map(|x| q.unwrap_or(0.0) + x).or(q), t + tr.seconds)
        });
    let share = q
        .filter(|_| t > 0.0)
        .map(|q| q / t)
        .filter(|q| q.is_finite())
        .map(|q| q.clamp(0.0, 0.9));
    (w.is_finite() && w > 0.0).then_some((w, u64::from(warm), share))
}

/// The operation whose calls make a relayed operation's input pool (`crate::relay::relayed`:
/// verify's signatures, dec's encapsulations).
pub fn pool_maker(op: Operation) -> Option<Operation> {
    match op {
        Operation::Verify => Some(Operation::Sign),
        Operation::Dec => Some(Operation::Enc),
        _ => None,
    }
}

/// Operations of an instance given its exchange calibration (KEX).
pub fn ops_of(run: &Path, inst: &Instance) -> Vec<Operation> {
    let mut ops = base_ops(inst.category);
    if inst.category == Some(Category::Kex) {
        let cal = calibration::read(&cal_path(run, inst, "exchange"));
        if let Some(c) = cal
            && c.t1_s.is_some()
        {
            let meta = |k: &str| {
                c.process
                    .meta
                    .str(k)
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let (passes, run_p) = (meta("kex_passes"), meta("kex_passes_run"));
            let passes = u32::try_from(passes.min(run_p)).unwrap_or(u32::MAX);
            ops.extend(Operation::kex_steps(passes));
        }
    }
    ops
}
