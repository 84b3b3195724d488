//! Section 3 of the candidate page: the performance table per instance and operation (mean
//! cycles, time, ops/s, median trial, `n`).

use crate::common::code;
use crate::view::{RecordRef, SystemView};
use pqperf_model::fmt::{DASH, fmt_cycles, fmt_f, fmt_ops, fmt_time};
use pqperf_model::order::Category;

/// Σ over processes of the driver META `sign_failures_retried`.
pub(super) fn sign_failures(r: &RecordRef) -> u64 {
    r.rec
        .processes
        .iter()
        .filter_map(|p| p.meta.u64("sign_failures_retried"))
        .sum()
}

/// `n (trials × iters)` cell.
pub(super) fn n_cell(r: &RecordRef) -> String {
    let n = r
        .rec
        .measurements
        .unwrap_or_else(|| r.rec.trials.iter().map(|t| t.measurements).sum());
    let mut s = format!(
        "{n} ({} × {})",
        r.rec.plan.trials, r.rec.plan.iterations_per_trial
    );
    let k = sign_failures(r);
    if k > 0 {
        s.push_str(&format!("; {k} failed signing attempts retried"));
    }
    s
}

pub(super) fn performance_table(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    cat: Category,
    ticks: Option<&crate::counter::TickCounter>,
) -> Vec<String> {
    let mut out = Vec::new();
    let (mean, per_byte) = match ticks {
        Some(t) => (format!("mean {}", t.unit()), "ticks/byte".to_string()),
        None => ("mean cycles".to_string(), "cycles/byte".to_string()),
    };
    if cat == Category::Hash {
        out.push(format!(
            "| instance | message | {mean} | {per_byte} | mean time | MB/s | n |"
        ));
        out.push("|---|---|---|---|---|---|---|".into());
    } else {
        out.push(format!("| instance | operation | {mean} | mean time | ops/s | median trial | n (trials × iters) |"));
        out.push("|---|---|---|---|---|---|---|".into());
    }
    for label in labels {
        for r in v.records_of(cand, label) {
            let opkey = r.opkey();
            if !r.complete() {
                out.push(format!("| {} | {opkey} | failed | | | | |", code(label)));
                continue;
            }
            if cat == Category::Hash {
                let bytes = r.rec.input_bytes;
                let (cyc, cpb) = match r.rec.mean_cycles {
                    Some(c) if bytes > 0 => (fmt_cycles(Some(c)), fmt_f(c / bytes as f64, 1)),
                    Some(c) => (fmt_cycles(Some(c)), DASH.into()),
                    None => (DASH.into(), DASH.into()),
                };
                let mbs = fmt_f(r.rec.throughput_mb_per_second.unwrap_or(0.0), 1);
                out.push(format!(
                    "| {} | {bytes} B | {cyc} | {cpb} | {} | {mbs} | {} |",
                    code(label),
                    fmt_time(r.rec.mean_seconds),
                    n_cell(&r)
                ));
            } else {
                out.push(format!(
                    "| {} | {opkey} | {} | {} | {} | {} | {} |",
                    code(label),
                    fmt_cycles(r.rec.mean_cycles),
                    fmt_time(r.rec.mean_seconds),
                    fmt_ops(r.rec.operations_per_second),
                    fmt_time(r.rec.median_trial_seconds),
                    n_cell(&r)
                ));
            }
        }
    }
    out
}
