//! Profiles: each `share` and `hash_share` recomputed from `calls` and `total` (relative
//! 1e-9).

use pqperf_model::dataset::Loaded;
use pqperf_model::stats::rel_close;
use pqperf_model::{Profile, pyjson};

use crate::problem::{Problem, REL_TOL, Report};

pub(crate) fn check_profile(rep: &mut Report, l: &Loaded<Profile>) {
    rep.profiles += 1;
    let pr = &l.value;
    if pr.status != "complete" || pr.total.is_none() {
        return;
    }
    let Some((share, hash_share)) = pr.recompute_shares() else {
        rep.problems.push(Problem::new(
            &l.shown,
            "total.ticks",
            "0: shares cannot be computed",
        ));
        return;
    };
    for (f, want) in &share {
        match pr.share.get(f) {
            None => rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                format!("missing; calls give {}", pyjson::py_float_repr(*want)),
            )),
            Some(got) if !rel_close(*got, *want, REL_TOL) => rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                format!(
                    "recorded {} but calls/total give {} (relative tolerance 1e-9)",
                    pyjson::py_float_repr(*got),
                    pyjson::py_float_repr(*want)
                ),
            )),
            Some(_) => {}
        }
    }
    for f in pr.share.keys() {
        if !share.contains_key(f) {
            rep.problems.push(Problem::new(
                &l.shown,
                format!("share.{f}"),
                "no calls of this function",
            ));
        }
    }
    let want = hash_share.as_f64().unwrap_or(0.0);
    match pr.hash_share.as_f64() {
        Some(got) if rel_close(got, want, REL_TOL) => {}
        got => rep.problems.push(Problem::new(
            &l.shown,
            "hash_share",
            format!(
                "recorded {} but the non-drng shares sum to {}",
                got.map(pyjson::py_float_repr)
                    .unwrap_or_else(|| pr.hash_share.to_string()),
                pyjson::py_float_repr(want)
            ),
        )),
    }
}
