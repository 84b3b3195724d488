//! Section 3 of the candidate page: the performance table per instance and operation (mean
//! cycles, time, ops/s, median trial, `n`), and — for pqperf records that carry a robust
//! estimate (`pqperf.robust`) — first the estimate ± its 95 % CI half-width, flagged when
//! wider than ±2 %, and the per-call p50/p90/p99, then the reference columns, and a sentence
//! on what it is and on disturbed re-runs.

use crate::common::code;
use crate::page::{Cell, Table};
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

/// CI half-width above which the robust estimate is flagged.
const WIDE_CI: f64 = 0.02;

pub(crate) fn robust<'a>(r: &RecordRef<'a>) -> Option<&'a pqperf_model::robust::Robust> {
    r.rec.pqperf.as_ref()?.robust.as_ref()
}

/// True when any record of the instances carries a robust estimate.
fn any_robust(v: &SystemView, cand: &str, labels: &[String]) -> bool {
    labels
        .iter()
        .any(|l| v.records_of(cand, l).iter().any(|r| robust(r).is_some()))
}

/// `66.1 µs ± 0.8 %`, `⚠` when the half-width exceeds ±2 %.
pub(crate) fn robust_cell(r: &RecordRef) -> String {
    match robust(r) {
        Some(rb) => format!(
            "{} ± {} %{}",
            fmt_time(Some(rb.estimate_seconds)),
            fmt_f(rb.ci_half_width_rel * 100.0, 1),
            if rb.ci_half_width_rel > WIDE_CI {
                " ⚠"
            } else {
                ""
            }
        ),
        None => DASH.into(),
    }
}

/// `60.1 µs / 95.0 µs / 130 µs`: the per-call p50, p90 and p99 of the sampled calls.
pub(crate) fn per_call_cell(r: &RecordRef) -> String {
    match r
        .rec
        .pqperf
        .as_ref()
        .and_then(|p| p.per_call_seconds.as_ref())
    {
        Some(q) => format!(
            "{} / {} / {}",
            fmt_time(Some(q.p50)),
            fmt_time(Some(q.p90)),
            fmt_time(Some(q.p99))
        ),
        None => DASH.into(),
    }
}

/// The sentence under the table when the robust column is shown.
pub(super) fn robust_note(v: &SystemView, cand: &str, labels: &[String]) -> Option<String> {
    if !any_robust(v, cand, labels) {
        return None;
    }
    let (mut reruns, mut processes) = (0u64, 0usize);
    for l in labels {
        for r in v.records_of(cand, l) {
            reruns += r.rec.disturbed_retries;
            processes += r.rec.processes.len();
        }
    }
    Some(format!(
        "The `robust ± CI` column is pqperf's robust per-call estimate from separate sampled trials (the reference columns come from trials without per-call reads): the median call for fixed work; for variable work (`sign`'s rejection sampling, or calls whose middle half spans 25 % or more) the mean per call a user pays, without the calls that lost the CPU, over independent processes, with a 95 % interval that includes the spread between them (earlier records: the 20 % trimmed mean over calls); the method page says how. ⚠ marks intervals wider than ±{} %. Driver runs: {}, of which {reruns} repeated a run with a disturbed trial (run-queue wait above 2 % of the trial).",
        fmt_f(WIDE_CI * 100.0, 0),
        processes as u64 + reruns
    ))
}

/// Processes of a record whose claims disagreed with the kernel's accounting
/// (`inconsistent`, `pqperf_measure::verify`): (index, first problem).
fn inconsistent_processes(r: &RecordRef) -> Vec<(usize, String)> {
    r.rec
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == "inconsistent")
        .map(|(i, p)| {
            let why = p
                .extra
                .get("kernel_check")
                .and_then(|k| k["problems"].get(0))
                .and_then(|x| x.as_str())
                .unwrap_or("no reason recorded")
                .to_string();
            (i, why)
        })
        .collect()
}

/// The paragraph naming every record kept out of the figures because a driver process's
/// claims disagreed with the kernel's accounting (none: `None`).
pub(super) fn inconsistent_note(v: &SystemView, cand: &str, labels: &[String]) -> Option<String> {
    let mut items = Vec::new();
    for label in labels {
        for r in v.records_of(cand, label) {
            for (i, why) in inconsistent_processes(&r) {
                items.push(format!(
                    "{} {} (process {}: {})",
                    code(label),
                    r.opkey(),
                    i + 1,
                    crate::md::sanitize_fragment(&why)
                ));
            }
        }
    }
    (!items.is_empty()).then(|| {
        format!(
            "Inconsistent timing (not shown): the driver's claimed figures disagree with what the kernel accounted for the process (CPU time, lifetime, call counts), also after one re-run: {}.",
            items.join("; ")
        )
    })
}

/// The paragraph naming every record left without a figure because a driver process was
/// disturbed by interrupt work on the measuring CPU on every attempt (`disturbed`,
/// `pqperf_measure::verify`; none: `None`).
pub(super) fn interrupted_note(v: &SystemView, cand: &str, labels: &[String]) -> Option<String> {
    let mut items = Vec::new();
    for label in labels {
        for r in v.records_of(cand, label) {
            for (i, _) in r
                .rec
                .processes
                .iter()
                .enumerate()
                .filter(|(_, p)| p.status == "disturbed")
            {
                items.push(format!("{} {} (process {})", code(label), r.opkey(), i + 1));
            }
        }
    }
    (!items.is_empty()).then(|| {
        format!(
            "Disturbed by interrupts (no figure): the measuring CPU's interrupt work, charged to the driver by the kernel, put the process over the kernel check's bounds on every attempt; its figures are not used: {}.",
            items.join("; ")
        )
    })
}

/// The instruction-count evidence of one operation, when the dataset has some.
fn count_of<'a>(
    v: &SystemView<'a>,
    cand: &str,
    label: &str,
    opkey: &str,
) -> Option<&'a pqperf_model::Loaded<pqperf_model::count::CountEvidence>> {
    v.count
        .iter()
        .find(|c| c.value.candidate == cand && c.value.label == label && c.value.operation == opkey)
}

/// Whether any instance of the candidate has instruction counts (the column is shown only
/// then, so pages of datasets without counts are unchanged).
fn any_counts(v: &SystemView, cand: &str, labels: &[String]) -> bool {
    v.count
        .iter()
        .any(|c| c.value.candidate == cand && labels.contains(&c.value.label))
}

/// The `instructions/call` cell: the median over the counted calls (cycles' k/M/G form),
/// or why there is none.
pub(crate) fn count_cell(v: &SystemView, cand: &str, label: &str, opkey: &str) -> Cell {
    match count_of(v, cand, label, opkey) {
        None => Cell::text(DASH),
        Some(c) => {
            let ev = Some(crate::view::run_evidence(&v.id, &c.path));
            let text = match (&c.value.status[..], c.value.instructions_per_call) {
                ("counted", Some(s)) => fmt_cycles(Some(s.median)),
                _ if c.value.not_available() => "not available".to_string(),
                (st, _) => st.to_string(),
            };
            Cell::value(text, ev)
        }
    }
}

/// The sentence under the table when it has the `instructions/call` column.
pub(super) fn count_note(v: &SystemView, cand: &str, labels: &[String]) -> Option<String> {
    let mine = || {
        v.count
            .iter()
            .filter(|c| c.value.candidate == cand && labels.contains(&c.value.label))
    };
    let checked = mine().filter(|c| c.value.timing_check.is_some()).count();
    let impossible: Vec<String> = mine()
        .filter_map(|c| {
            let t = c.value.timing_check.as_ref().filter(|t| t.impossible())?;
            Some(format!(
                "{} {}: {} {} below the {} that {} instructions allow",
                c.value.label,
                c.value.operation,
                t.timed_figure,
                pqperf_model::fmt::fmt_time(Some(t.timed_seconds)),
                pqperf_model::fmt::fmt_time(Some(t.lower_bound_seconds)),
                t.instructions
            ))
        })
        .collect();
    let check = if !impossible.is_empty() {
        format!(
            " **Impossible timing** (cross-check with the counts: a call cannot take less than \
             its instructions ÷ {} per cycle ÷ the host's maximum clock): {}.",
            pqperf_model::count::MAX_IPC,
            impossible.join("; ")
        )
    } else if checked > 0 {
        format!(
            " Cross-check with the timings: every timed figure is at least the counted \
             instructions ÷ {} per cycle ÷ the host's maximum clock ({checked} operation(s) \
             checked).",
            pqperf_model::count::MAX_IPC
        )
    } else {
        String::new()
    };
    let Some(first) = mine().find(|c| c.value.status == "counted") else {
        // Nothing counted: say why when the emulator could not count (and nothing else).
        let why = mine().find_map(|c| {
            c.value
                .not_available()
                .then(|| c.value.reason.clone())
                .flatten()
        })?;
        return Some(format!(
            "`instructions/call`: {why}. Evidence: `count/<id>/<label>__<op>.json`."
        ));
    };
    let calls = first.value.calls;
    if let Some(method) = &first.value.method {
        let arch = first.value.architecture.as_deref().unwrap_or("guest");
        return Some(format!(
            "`instructions/call` is the median number of {arch} instructions one call executes \
             under emulation, counted by pqperf's TCG plugin ({method}; {calls} calls with the \
             driver's seeded inputs, only while the operation's API function is on the call \
             stack): deterministic, the same in every run, and work done, not time. {} \
             Evidence: `count/<id>/<label>__<op>.json`.{check}",
            pqperf_model::count::ACROSS_ARCHITECTURES
        ));
    }
    // A whole key exchange counts every step's API function together.
    let kex = if mine().any(|c| !c.value.symbols.is_empty()) {
        "; a key exchange's `exchange`: every step's API function, not the driver's code between them"
    } else {
        ""
    };
    Some(format!(
        "`instructions/call` is the median number of instructions one call executes under \
         valgrind's callgrind ({calls} calls with the driver's seeded inputs, only the \
         operation's API function and its callees counted{kex}): deterministic, the same on any \
         host under any load, and work done, not time (an AVX2 instruction does more than a \
         scalar one). Evidence: `count/<id>/<label>__<op>.json`.{check}"
    ))
}

pub(super) fn performance_table(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    cat: Category,
    ticks: Option<&crate::counter::TickCounter>,
) -> Table {
    let rb = any_robust(v, cand, labels);
    // pqperf's pages write ops/s without an exponent; reference pages stay as they are.
    let pqperf_form = crate::common::by_pqperf(v);
    let (mean, per_byte) = match ticks {
        Some(t) => (format!("mean {}", t.unit()), "ticks/byte".to_string()),
        None => ("mean cycles".to_string(), "cycles/byte".to_string()),
    };
    let mut header: Vec<String> = if cat == Category::Hash {
        vec![
            "instance".into(),
            "message".into(),
            mean,
            per_byte,
            "mean time".into(),
            "MB/s".into(),
            "n".into(),
        ]
    } else {
        vec![
            "instance".into(),
            "operation".into(),
            mean,
            "mean time".into(),
            "ops/s".into(),
            "median trial".into(),
            "n (trials × iters)".into(),
        ]
    };
    if rb {
        // pqperf's robust estimate is the headline: first, with the per-call distribution.
        header.insert(2, "robust ± CI".into());
        header.insert(3, "per call p50 / p90 / p99".into());
    }
    let counts = any_counts(v, cand, labels);
    if counts {
        header.push("instructions/call".into());
    }
    let mut t = Table::new(header);
    for label in labels {
        for r in v.records_of(cand, label) {
            let opkey = r.opkey();
            let ev = Some(r.evidence(&v.id));
            let val = |s: String| Cell::value(s, ev.clone());
            if !r.complete() {
                let what = if inconsistent_processes(&r).is_empty() {
                    "failed"
                } else {
                    "inconsistent"
                };
                let mut row = vec![Cell::text(code(label)), Cell::text(opkey), val(what.into())];
                row.extend(
                    (0..4 + if rb { 2 } else { 0 } + usize::from(counts)).map(|_| Cell::default()),
                );
                t.row(row);
                continue;
            }
            let mut row = if cat == Category::Hash {
                let bytes = r.rec.input_bytes;
                let (cyc, cpb) = match r.rec.mean_cycles {
                    Some(c) if bytes > 0 => (fmt_cycles(Some(c)), fmt_f(c / bytes as f64, 1)),
                    Some(c) => (fmt_cycles(Some(c)), DASH.into()),
                    None => (DASH.into(), DASH.into()),
                };
                let mbs = fmt_f(r.rec.throughput_mb_per_second.unwrap_or(0.0), 1);
                vec![
                    Cell::text(code(label)),
                    val(format!("{bytes} B")).at("/input_bytes"),
                    val(cyc).at("/mean_cycles"),
                    val(cpb).at("/mean_cycles"),
                    val(fmt_time(r.rec.mean_seconds)).at("/mean_seconds"),
                    val(mbs).at("/throughput_MB_per_second"),
                    val(n_cell(&r)).at("/trials"),
                ]
            } else {
                vec![
                    Cell::text(code(label)),
                    Cell::text(opkey.clone()),
                    val(fmt_cycles(r.rec.mean_cycles)).at("/mean_cycles"),
                    val(fmt_time(r.rec.mean_seconds)).at("/mean_seconds"),
                    val(if pqperf_form {
                        pqperf_model::fmt::fmt_ops_plain(r.rec.operations_per_second)
                    } else {
                        fmt_ops(r.rec.operations_per_second)
                    })
                    .at("/operations_per_second"),
                    val(fmt_time(r.rec.median_trial_seconds)).at("/median_trial_seconds"),
                    val(n_cell(&r)).at("/trials"),
                ]
            };
            if rb {
                let px = r.rec.pqperf.as_ref();
                let mut robust = val(robust_cell(&r));
                if px.is_some_and(|p| p.robust.is_some()) {
                    robust = robust.at("/pqperf/robust");
                }
                let mut per_call = val(per_call_cell(&r));
                if px.is_some_and(|p| p.per_call_seconds.is_some()) {
                    per_call = per_call.at("/pqperf/per_call_seconds");
                }
                row.insert(2, robust);
                row.insert(3, per_call);
            }
            if counts {
                row.push(count_cell(v, cand, label, &opkey));
            }
            t.row(row);
        }
    }
    t
}
