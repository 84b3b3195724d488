//! Calibration of one unit (method §6.2): one driver run of one call per (instance,
//! operation), stored in `calibrate/<id>/<label>__<op>.json` with `t1_s` and `setup_s`; the
//! operations of an instance once its exchange is calibrated (KEX steps).

use std::path::{Path, PathBuf};

use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson::{self, read_value};
use pqperf_model::record::Process;
use serde_json::{Value, json};

use crate::MeasureError;
use crate::instance::{Instance, base_ops, driver_args};
use crate::runner;
use crate::settings::UnitSettings;
use pqperf_model::vocab::{Category, Operation};

type Res<T> = Result<T, MeasureError>;

fn process_json(p: &Process) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// The calibration file of `inst`'s operation `opkey`: `calibrate/<id>/<label>__<opkey>.json`.
pub fn cal_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    RunLayout::new(run).calibration(&inst.entry.candidate, &inst.entry.label, opkey)
}

/// Calibration stored in `calibrate/`: the driver result plus `t1_s`, `setup_s`.
pub fn calibrate_one(
    opts: &UnitSettings,
    log: &dyn Fn(String),
    inst: &Instance,
    opkey: &str,
    op: &str,
    bytes: u64,
) -> Res<Value> {
    let path = cal_path(&opts.run_dir, inst, opkey);
    if let Some(v) = read_value(&path) {
        return Ok(v);
    }
    // One timed call, no sampled trial (it would double the call and count as setup time).
    let mut args = driver_args(opts, inst, op, bytes, 1, 1, 0);
    args.samples = false;
    let mut run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
    if run.process.status == crate::verify::INCONSISTENT {
        // Re-run once; a second inconsistent run is recorded as it is (no t1_s).
        run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
    }
    let mut v = process_json(&run.process);
    let t1 = run
        .process
        .trials
        .first()
        .map(|t| t.seconds)
        .filter(|_| run.process.status != crate::verify::INCONSISTENT);
    if let Value::Object(m) = &mut v {
        m.insert("t1_s".into(), json!(t1));
        m.insert("setup_s".into(), json!(t1.map(|t| run.wall_s - t)));
        let mut pq = serde_json::Map::new();
        if opts.samples && run.counter.is_some() {
            pq.insert("counter".into(), json!(run.counter));
        }
        // The library this calibration timed: a rebuilt library makes it stale.
        if let Some(sha) = &inst.entry.library_sha256 {
            pq.insert("library_sha256".into(), json!(sha));
        }
        if !pq.is_empty() {
            m.insert("pqperf".into(), Value::Object(pq));
        }
        if let Some(mem) = &run.mem {
            m.insert("pqperf_mem".into(), mem.to_json());
        }
    }
    write_atomic(&path, pyjson::value_to_string(&v).as_bytes())?;
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
    Ok(v)
}

/// Operations (opkey, op, bytes) of an instance given its exchange calibration (KEX).
pub fn ops_of(run: &Path, inst: &Instance) -> Vec<(String, String, u64)> {
    let mut ops = base_ops(inst.category);
    if inst.category == Some(Category::Kex) {
        let cal = read_value(&cal_path(run, inst, "exchange"));
        if let Some(c) = cal
            && c["t1_s"].is_number()
        {
            let passes = c["meta"]["kex_passes"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            let run_p = c["meta"]["kex_passes_run"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            let passes = u32::try_from(passes.min(run_p)).unwrap_or(u32::MAX);
            ops.extend(
                Operation::kex_steps(passes)
                    .into_iter()
                    .map(Operation::driver_unit),
            );
        }
    }
    ops
}
