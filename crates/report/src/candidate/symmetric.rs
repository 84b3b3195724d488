//! The symmetric-primitive section of the candidate page: profile shares per instance and
//! operation, calls per operation, own primitives of non-ICCS instances, wrapper overhead.

use std::collections::BTreeMap;

use crate::Form;
use crate::common::code;
use crate::links::{PageRef, link};
use crate::page::{Cell, Page, Table};
use crate::view::{ProfileRef, SystemView, own_primitives};
use pqperf_model::fmt::{DASH, fmt_g, pct};

/// `drng 2, pseudoXOF 15, sm3hash 1`: Σ calls per fn ÷ total operations, sorted by name.
pub fn calls_per_operation(p: &ProfileRef) -> String {
    let Some(total) = p.prof.total.as_ref() else {
        return DASH.into();
    };
    if total.operations == 0 {
        return DASH.into();
    }
    let mut per_fn: BTreeMap<&str, u64> = BTreeMap::new();
    for c in &p.prof.calls {
        *per_fn.entry(c.func.as_str()).or_insert(0) += c.calls;
    }
    let items: Vec<String> = per_fn
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(f, n)| format!("{f} {}", fmt_g(*n as f64 / total.operations as f64, 3)))
        .collect();
    if items.is_empty() {
        DASH.into()
    } else {
        items.join(", ")
    }
}

pub(super) fn symmetric_section(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    me: &PageRef,
    form: Form,
) -> Page {
    let mut out = Page::new();
    out.heading(2, "Symmetric primitives");
    out.blank();
    let survey = v.side.survey_of(cand);
    let verdict = survey
        .map(|s| s.verdict.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("not surveyed");
    let mut line = format!(
        "[Survey]({}) verdict: **{verdict}**",
        link(me, &PageRef::Survey, form)
    );
    if let Some(s) = survey
        && !s.notes.is_empty()
    {
        line.push_str(&format!(" — {}", crate::md::sanitize_fragment(&s.notes)));
    }
    out.line(line);
    out.blank();
    let rows: Vec<ProfileRef> = labels
        .iter()
        .flat_map(|label| v.profiles_of(cand, label))
        .filter(|p| p.usable())
        .collect();
    if rows.is_empty() {
        out.line("No hash profile was recorded for this candidate on this system (profiles are measured on reference builds with link-time wrappers).");
        out.blank();
        return out;
    }
    let own = own_primitives(&rows);
    let overhead = rows.iter().any(|p| wrapper_overhead(p).is_some());
    match &own {
        None => out.line("Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):"),
        Some(fams) => out.line(format!(
            "This candidate does not call the ICCS placeholders. Share of each operation spent in its own symmetric primitives ({}, the scheme's common code) and in its random-byte generator (reference build, measured in the same run with link-time wrappers):",
            fams.iter().map(|f| code(f)).collect::<Vec<_>>().join(", ")
        )),
    }
    out.blank();
    if overhead {
        out.line("Wrapper overhead per wrapped call is shown as ticks added to the operation total (outer) and ticks charged to the wrapped function itself (inner); it is not subtracted from the shares.");
        out.blank();
    }
    let (sym_col, drng_col) = match &own {
        None => ("pseudohash/XOF/sm3", "DRNG"),
        Some(_) => ("own SHAKE/SHA-3/SHA-2/AES", "randombytes"),
    };
    let mut header = vec![
        "instance",
        "operation",
        sym_col,
        drng_col,
        "calls per operation",
    ];
    if overhead {
        header.push("wrapper overhead per call");
    }
    let mut t = Table::new(header);
    for p in rows {
        let ev = Some(p.evidence(&v.id));
        let mut row = vec![
            Cell::text(code(&p.prof.label)),
            Cell::text(p.opkey()),
            Cell::value(pct(Some(p.prof.hash_share_f64())), ev.clone()),
            Cell::value(pct(Some(p.prof.share_of("drng"))), ev.clone()),
            Cell::value(calls_per_operation(&p), ev.clone()),
        ];
        if overhead {
            row.push(Cell::value(
                wrapper_overhead(&p).unwrap_or_else(|| DASH.into()),
                ev,
            ));
        }
        t.row(row);
    }
    out.table(t);
    out.blank();
    out
}

/// `outer 31, inner 12 ticks` from the profile's `pqperf.wrapper_overhead`, when recorded.
pub(super) fn wrapper_overhead(p: &ProfileRef) -> Option<String> {
    let w = p.prof.extra.get("pqperf")?.get("wrapper_overhead")?;
    let outer = w
        .get("outer_ticks_per_call")
        .and_then(serde_json::Value::as_f64);
    let inner = w
        .get("inner_ticks_per_call")
        .and_then(serde_json::Value::as_f64);
    match (outer, inner) {
        (None, None) => None,
        (o, i) => {
            let f = |x: Option<f64>| x.map(|x| fmt_g(x, 3)).unwrap_or_else(|| DASH.into());
            Some(format!("outer {}, inner {} ticks", f(o), f(i)))
        }
    }
}
