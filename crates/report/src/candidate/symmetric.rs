//! The symmetric-primitive section of the candidate page: profile shares per instance and
//! operation, calls per operation, own primitives of non-ICCS instances, wrapper overhead.

use std::collections::{BTreeMap, BTreeSet};

use crate::Form;
use crate::common::code;
use crate::links::{Page, link};
use crate::view::{ProfileRef, SystemView};
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
    me: &Page,
    form: Form,
) -> Vec<String> {
    let mut out = vec!["## Symmetric primitives".to_string(), String::new()];
    let survey = v.side.survey_of(cand);
    let verdict = survey
        .map(|s| s.verdict.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("not surveyed");
    let mut line = format!(
        "[Survey]({}) verdict: **{verdict}**",
        link(me, &Page::Survey, form)
    );
    if let Some(s) = survey
        && !s.notes.is_empty()
    {
        line.push_str(&format!(" — {}", crate::md::sanitize_fragment(&s.notes)));
    }
    out.push(line);
    out.push(String::new());
    let rows: Vec<ProfileRef> = labels
        .iter()
        .flat_map(|label| v.profiles_of(cand, label))
        .filter(|p| p.usable())
        .collect();
    if rows.is_empty() {
        out.push("No hash profile was recorded for this candidate on this system (profiles are measured on reference builds with link-time wrappers).".into());
        out.push(String::new());
        return out;
    }
    let own = own_primitives(&rows);
    let overhead = rows.iter().any(|p| wrapper_overhead(p).is_some());
    match &own {
        None => out.push("Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):".into()),
        Some(fams) => out.push(format!(
            "This candidate does not call the ICCS placeholders. Share of each operation spent in its own symmetric primitives ({}, the scheme's common code) and in its random-byte generator (reference build, measured in the same run with link-time wrappers):",
            fams.iter().map(|f| code(f)).collect::<Vec<_>>().join(", ")
        )),
    }
    out.push(String::new());
    if overhead {
        out.push("Wrapper overhead per wrapped call is shown as ticks added to the operation total (outer) and ticks charged to the wrapped function itself (inner); it is not subtracted from the shares.".into());
        out.push(String::new());
    }
    let (sym_col, drng_col) = match &own {
        None => ("pseudohash/XOF/sm3", "DRNG"),
        Some(_) => ("own SHAKE/SHA-3/SHA-2/AES", "randombytes"),
    };
    let mut header =
        format!("| instance | operation | {sym_col} | {drng_col} | calls per operation |");
    let mut rule = "|---|---|---|---|---|".to_string();
    if overhead {
        header.push_str(" wrapper overhead per call |");
        rule.push_str("---|");
    }
    out.push(header);
    out.push(rule);
    for p in rows {
        let mut row = format!(
            "| {} | {} | {} | {} | {} |",
            code(&p.prof.label),
            p.opkey(),
            pct(Some(p.prof.hash_share_f64())),
            pct(Some(p.prof.share_of("drng"))),
            calls_per_operation(&p)
        );
        if overhead {
            row.push_str(&format!(
                " {} |",
                wrapper_overhead(&p).unwrap_or_else(|| DASH.into())
            ));
        }
        out.push(row);
    }
    out.push(String::new());
    out
}

/// ICCS placeholder functions (`calls[].fn` of ICCS profiles).
pub(super) const ICCS_FNS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash"];

/// True for a profile of a non-ICCS (e.g. PQClean `nist`) instance: it called hash functions
/// of its own and none of the ICCS placeholders, so its `hash_share` is not an ICCS share.
pub fn own_primitive_profile(p: &ProfileRef) -> bool {
    own_primitives(std::slice::from_ref(p)).is_some()
}

/// For profiles of non-ICCS (e.g. PQClean `nist`) instances: the sorted hash-function
/// families they called. `None` when any profile called an ICCS placeholder, or when no
/// profile called anything but the DRNG (the ICCS titles apply).
pub(super) fn own_primitives(rows: &[ProfileRef]) -> Option<Vec<String>> {
    let mut fams: BTreeSet<String> = BTreeSet::new();
    for p in rows {
        for c in &p.prof.calls {
            if ICCS_FNS.contains(&c.func.as_str()) {
                return None;
            }
            if c.func != "drng" {
                fams.insert(c.func.clone());
            }
        }
    }
    if fams.is_empty() {
        None
    } else {
        Some(fams.into_iter().collect())
    }
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
