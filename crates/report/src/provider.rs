//! Which ICCS helpers the numbers of a pqperf dataset include (issue 19).
//!
//! Records written by pqperf carry `pqperf.iccs_provider` (kind, sha256 of the official
//! sources or of pqperf's library, compiler, flags) and campaign.json may carry
//! `pqperf.iccs_provider_cost` (the `pqperf iccs bench` table of that system). Golden
//! (reference) evidence has neither, so these functions return `None` there and the
//! reference pages are unchanged.

use serde_json::Value;

use crate::view::SystemView;

/// Distinct providers of the records whose candidate `keep` accepts, in record order.
fn providers(v: &SystemView, keep: impl Fn(&str) -> bool) -> Vec<Value> {
    let mut seen: Vec<Value> = Vec::new();
    for r in &v.records {
        if !keep(&r.rec.candidate) {
            continue;
        }
        if let Some(p) = r
            .rec
            .pqperf
            .as_ref()
            .and_then(|x| x.extra.get("iccs_provider"))
            && !seen.contains(p)
        {
            seen.push(p.clone());
        }
    }
    seen
}

/// `The timings include <provider>.` (several providers joined), or `None` without any.
/// Over the whole system (`candidate` `None`) the helper baseline (candidate `iccs`) is left
/// out, and libraries that differ only in the submission's own helpers they link first are
/// one provider: "different providers" is said only when the providers themselves differ.
pub fn sentence(v: &SystemView, candidate: Option<&str>) -> Option<String> {
    let ps = match candidate {
        Some(c) => providers(v, |x| x == c),
        None => providers(v, |x| x != "iccs"),
    };
    if ps.is_empty() {
        return None;
    }
    let own = |p: &Value| {
        p["submission_sources"]
            .as_object()
            .is_some_and(|m| !m.is_empty())
    };
    let mut bases: Vec<String> = Vec::new();
    for p in &ps {
        let b = pqperf_model::iccsprovider::describe_provider(p);
        if !bases.contains(&b) {
            bases.push(b);
        }
    }
    if candidate.is_none() && ps.len() > 1 && ps.iter().any(own) {
        // Per-library own helpers are named on the candidate pages.
        let libs = libraries(v);
        let with_own = libs.iter().filter(|(_, p)| own(p)).count();
        let who = if with_own == libs.len() {
            "every NGCC library linked its submission's own ICCS helpers first (compiled into the library; named on its candidate page)".to_string()
        } else {
            format!(
                "{with_own} of {} NGCC libraries linked their submission's own ICCS helpers first (compiled into the library; named on their candidate pages)",
                libs.len()
            )
        };
        let then = if bases.len() > 1 {
            format!("different providers supply the rest: {}", bases.join("; "))
        } else {
            format!("{} supplies what they do not define", bases[0])
        };
        return Some(format!("ICCS helpers: {who}; {then}."));
    }
    let d: Vec<String> = ps
        .iter()
        .map(pqperf_model::iccsprovider::describe)
        .collect();
    Some(format!(
        "ICCS helpers: the timings of the NGCC libraries include {}{}.",
        if bases.len() > 1 {
            "different providers: "
        } else {
            ""
        },
        d.join("; ")
    ))
}

/// The provider of each timed NGCC library (`<id>/<label>`, the helper baseline left out),
/// from its first record that names one.
fn libraries(v: &SystemView) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for r in &v.records {
        if r.rec.candidate == "iccs" {
            continue;
        }
        let key = format!("{}/{}", r.rec.candidate, r.rec.label);
        if out.iter().any(|(k, _)| *k == key) {
            continue;
        }
        if let Some(p) = r
            .rec
            .pqperf
            .as_ref()
            .and_then(|x| x.extra.get("iccs_provider"))
        {
            out.push((key, p.clone()));
        }
    }
    out
}

/// What the helper baseline (candidate `iccs`) was built over, from its records'
/// `pqperf.iccs_provider`: `pqperf's own ICCS helpers (…)` or `the official ICCS helpers
/// (…)`; `None` when no baseline record names one (reference evidence).
pub fn baseline_provider(v: &SystemView) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for r in &v.records {
        if r.rec.candidate != "iccs" {
            continue;
        }
        if let Some(p) = r
            .rec
            .pqperf
            .as_ref()
            .and_then(|x| x.extra.get("iccs_provider"))
        {
            let d = pqperf_model::iccsprovider::describe_provider(p);
            if !seen.contains(&d) {
                seen.push(d);
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// The provider-cost sentence of the method page from campaign.json's
/// `pqperf.iccs_provider_cost`: per other column, the range of pqperf ÷ that column over the
/// benchmarked calls. `None` when the system has no such table.
pub fn cost_sentence(v: &SystemView) -> Option<String> {
    let t = v.campaign.pqperf.as_ref()?.iccs_provider_cost.as_ref()?;
    let names: Vec<&str> = t["providers"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let rows = t["rows"].as_array()?;
    if names.first() != Some(&"pqperf") || names.len() < 2 || rows.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for (col, name) in names.iter().enumerate().skip(1) {
        let ratios: Vec<f64> = rows
            .iter()
            .filter_map(|r| {
                let t = r["ticks_per_call"].as_array()?;
                let p = t.first()?.as_f64()?;
                let o = t.get(col)?.as_f64()?;
                (o > 0.0).then_some(p / o)
            })
            .collect();
        if ratios.is_empty() {
            continue;
        }
        let mut sorted = ratios;
        sorted.sort_by(f64::total_cmp);
        let med = pqperf_model::pynum::median(&sorted)?;
        let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
        parts.push(format!(
            "{med:.2} × the per-call ticks of the `{name}` build (median over {} calls; range {lo:.2}–{hi:.2})",
            sorted.len()
        ));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "- ICCS provider cost on this system (`pqperf iccs bench`, median {} ticks per call over sm3hash, pseudohash, pseudoXOF and get_random_number): pqperf's helpers take {} of the official files.",
        t["counter"].as_str().unwrap_or("tick"),
        parts.join(" and ")
    ))
}
