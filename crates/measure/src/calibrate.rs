//! Calibration of one unit (method §6.2): one driver run of one call per (instance,
//! operation), stored in `calibrate/<id>/<label>__<op>.json` with `t1_s` and `setup_s`; the
//! operations of an instance once its exchange is calibrated (KEX steps).

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
    let pq = CalibrationPqperf {
        counter: run.counter.clone().filter(|_| opts.samples),
        // The library this calibration timed: a rebuilt library makes it stale.
        library_sha256: inst.entry.library_sha256.clone(),
        ..Default::default()
    };
    let cal = Calibration {
        process: run.process.clone(),
        t1_s: t1,
        setup_s: t1.map(|t| run.wall_s - t),
        pqperf: (pq.counter.is_some() || pq.library_sha256.is_some()).then_some(pq),
        pqperf_mem: run.mem.as_ref().map(|m| m.to_json()),
    };
    let text = pyjson::to_string(&cal)
        .map_err(|e| MeasureError::msg(format!("{}: {e}", path.display())))?;
    write_atomic(&path, text.as_bytes())?;
    match t1 {
        Some(t) => log(format!(
            "calibrate {} {} {opkey}: {t:.6}s (process {:.1}s)",
            inst.entry.candidate, inst.entry.label, run.wall_s
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
