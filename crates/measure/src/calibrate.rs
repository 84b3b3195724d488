//! Calibration of one unit (method §6.2): one driver run of one call per (instance,
//! operation), stored in `calibrate/<id>/<label>__<op>.json` with `t1_s` and `setup_s`; the
//! operations of an instance once its exchange is calibrated (KEX steps). A second driver
//! process then times warm calls (its warm-ups first, one trial of ≈ [`WARM_TRIAL_S`], at
//! most [`WARM_MAX_CALLS`] calls):
//! `pqperf.warm_call_s`, the call seconds the plan and the estimates use
//! (`Calibration::call_s`; issue 41). `t1_s` stays the reference's single cold call.

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
    // One timed call, no sampled trial (it would double the call and count as setup time).
    let mut args = driver_args(opts, inst, op, 1, 1, 0);
    args.samples = false;
    let mut run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
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
    let t1 = run.process.trials.first().map(|t| t.seconds).filter(|_| {
        run.process.status != crate::verify::INCONSISTENT
            && run.process.status != crate::verify::DISTURBED
    });
    // The warm figure (issue 41): the cold call overstates what a call costs in a process
    // that has warmed up (1.3–2× on the demo's operations), and the plan sized from it makes
    // trials (the kernel check's windows) shorter than their target.
    let kex_step = inst.category == Some(Category::Kex) && op != Operation::Exchange;
    let warm = t1
        .filter(|t| !kex_step && *t < WARM_MAX_CALL_S)
        .and_then(|t| warm_call(opts, inst, op, t));
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
        setup_s: t1.map(|t| run.wall_s - t),
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
                    "; warm {w:.6}s a call on the CPU over {n} call(s), {:.2}× the cold call{}",
                    w / t,
                    share
                        .map(|q| format!(" ({:.0} % of the trial waiting for the CPU)", q * 100.0))
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

/// Timed work of the warm calibration trial: [`warm_trial_calls`] calls of about this many
/// seconds (by the cold call, which overstates: usually less).
pub const WARM_TRIAL_S: f64 = 0.05;
/// A call of at least this many seconds (the cold figure) gets no warm trial: its first call
/// is as long as a warm one within a few per cent, and the warm process would cost seconds.
pub const WARM_MAX_CALL_S: f64 = 0.25;
/// Fewest calls of the warm trial.
pub const WARM_MIN_CALLS: u64 = 2;
/// Most calls of the warm trial: every call gets its own input (issue 36), so a verify's or
/// a dec's process first prepares one signature or ciphertext per call (Falcon-512 verify:
/// ≈ 700 calls of 70 µs would cost 700 signatures of 4 ms, 2.9 s); 200 calls average a
/// call's cost well enough.
pub const WARM_MAX_CALLS: u64 = 200;

/// Seconds of pool entries (signatures, encapsulations) a verify's or dec's warm process
/// may prepare, at the pool maker's cold call: Falcon-512 verify's 200 calls cost 200
/// signatures, ≈ 3 s at load 5 (the demo's calibrate phase grew from 1 s to 10 s).
pub const WARM_PREP_S: f64 = 0.25;

/// The operation whose calls make a relayed operation's input pool (`crate::relay::relayed`:
/// verify's signatures, dec's encapsulations).
pub fn pool_maker(op: Operation) -> Option<Operation> {
    match op {
        Operation::Verify => Some(Operation::Sign),
        Operation::Dec => Some(Operation::Enc),
        _ => None,
    }
}

/// [`warm_trial_calls`], at most what [`WARM_PREP_S`] of pool entries of `maker_t1` seconds
/// each pay for (at least [`WARM_MIN_CALLS`]).
pub fn warm_trial_calls_pooled(t1: f64, maker_t1: Option<f64>) -> u64 {
    let n = warm_trial_calls(t1);
    match maker_t1.filter(|m| m.is_finite() && *m > 0.0) {
        Some(m) => n.min(((WARM_PREP_S / m).floor() as u64).max(WARM_MIN_CALLS)),
        None => n,
    }
}

/// Calls of the warm trial for a cold call of `t1` seconds: about [`WARM_TRIAL_S`] of them,
/// within [`WARM_MIN_CALLS`]–[`WARM_MAX_CALLS`].
pub fn warm_trial_calls(t1: f64) -> u64 {
    if !(t1.is_finite() && t1 > 0.0) {
        return WARM_MIN_CALLS;
    }
    ((WARM_TRIAL_S / t1).ceil() as u64).clamp(WARM_MIN_CALLS, WARM_MAX_CALLS)
}

/// Warm-ups before the warm trial: the plan's rule (method §6.3 step 5) for a call of `t1`.
pub fn warm_trial_warmups(t1: f64) -> u64 {
    if t1 < 0.05 { 3 } else { 1 }
}

/// One more driver process after the calibration call, as a measuring process runs (its
/// warm-ups, then one trial of [`warm_trial_calls`] calls, no sampled trial): seconds of one
/// warm call on the CPU (the trial's wall time less its run-queue wait, per call), the
/// calls, and the share of the trial spent waiting (`None` without schedstat). `None` when
/// it gave no trial or the parent's kernel check did not accept it (inconsistent,
/// disturbed): the plan then uses the cold call, as the reference does.
fn warm_call(
    opts: &UnitSettings,
    inst: &Instance,
    op: Operation,
    t1: f64,
) -> Option<(f64, u64, Option<f64>)> {
    // A pooled operation's maker is calibrated before it (keygen, sign, verify; keygen,
    // enc, dec).
    let maker_t1 = pool_maker(op)
        .and_then(|m| calibration::read(&cal_path(&opts.run_dir, inst, &m.key()))?.t1_s);
    let calls = warm_trial_calls_pooled(t1, maker_t1);
    let mut args = driver_args(opts, inst, op, 1, calls, warm_trial_warmups(t1));
    args.samples = false;
    let run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
    if !run.complete()
        || run.process.status == crate::verify::INCONSISTENT
        || run.process.status == crate::verify::DISTURBED
    {
        return None;
    }
    let trial = run.process.trials.first()?;
    // The calls asked for, or no figure.
    if trial.measurements != calls {
        return None;
    }
    // The trial's run-queue wait (the load it ran at) is not the call's cost.
    let share = run
        .sched
        .iter()
        .find(|s| s.kind == "reference")
        .and_then(|s| s.runq_ns.map(|q| q as f64 / 1e9 / s.seconds))
        .filter(|q| q.is_finite())
        .map(|q| q.clamp(0.0, 0.9));
    let w = trial.seconds * (1.0 - share.unwrap_or(0.0)) / calls as f64;
    (w.is_finite() && w > 0.0).then_some((w, calls, share))
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
