//! Measuring one planned operation and building its record (method §7): the driver
//! processes of the plan (with up to two retries of a disturbed run), the record with its
//! statistics, sizes, counter and per-call quantiles, written to
//! `records/<id>/<label>__<op>.json`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_model::fields::Fields;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::pyjson;
use pqperf_model::record::{self, PqperfRecordExt, Process, Record};
use pqperf_model::stats::{ProcessTotals, Quantiles, RecordStats};
use serde_json::{Value, json};

use crate::instance::{Instance, driver_args};
use crate::plan::{self, PlannedOp};
use crate::runner::{self, Run};
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

pub fn rec_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    run.join("records")
        .join(&inst.entry.candidate)
        .join(record::Record::file_name(&inst.entry.label, opkey))
}

/// A run is disturbed (§7.1.4) when the fixed clock is known, the counter counts core cycles,
/// the scope is a loop and a long trial ran below 95 % of the clock.
fn disturbed(run: &Run, fixed_hz: Option<f64>) -> bool {
    let Some(f) = fixed_hz else { return false };
    if run.counter.as_deref() != Some("cycles") {
        return false;
    }
    if run.process.meta.str("timing_scope") == Some("per_call_step") {
        return false;
    }
    run.process.trials.iter().any(|t| {
        let c = t.cycles.unwrap_or(0);
        c > 0 && t.seconds > 0.01 && (c as f64 / t.seconds) < 0.95 * f
    })
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
    let mut samples: Vec<u64> = Vec::new();
    let mut counter: Option<String> = None;
    let mut retries_total = 0u64;
    let plan = p.plan.clone();
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
            for _ in 0..nproc {
                let args = driver_args(
                    opts,
                    &p.inst,
                    &p.op,
                    p.bytes,
                    per as u32,
                    pl.iterations_per_trial,
                    pl.warmups,
                );
                let mut attempt = 0;
                let run = loop {
                    let run = runner::run_driver(&opts.driver, &args, timeout);
                    totals.timed_s += run.timed_s;
                    totals.process_s += run.wall_s;
                    if run.complete() && disturbed(&run, fixed) && attempt < 2 {
                        attempt += 1;
                        continue;
                    }
                    break run;
                };
                retries_total += attempt;
                let mut pr = run.process.clone();
                pr.disturbed_retries = Some(attempt);
                let ok = run.complete();
                samples.extend_from_slice(&run.samples);
                if counter.is_none() {
                    counter = run.counter.clone();
                }
                processes.push(pr);
                if !ok {
                    break;
                }
            }
        }
    }
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
            json!("per-call samples are tick-counter deltas read between consecutive calls of the same timed trials; the trial totals include one counter read per call"),
        );
    }
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
    write_atomic(&path, text.as_bytes())?;
    totals.records += 1;
    Ok(rec)
}

fn strip_cal(cal: &Value) -> Value {
    let mut v = cal.clone();
    if let Value::Object(m) = &mut v {
        m.remove("t1_s");
        m.remove("setup_s");
        m.remove("pqperf");
    }
    v
}
