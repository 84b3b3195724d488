//! Environment evidence of timing records (`pqperf.attempts[].env`,
//! `pqperf.environment_evidence`; `pqperf_model::envevidence`): what `pqperf compare` weighs
//! against a change, so it must be what the attempts show.
//!
//! * each attempt's `env`: `steal_share` in [0, 1]; `runq_share` ≥ 0 and equal to Σ `runq_ns`
//!   ÷ Σ seconds of that attempt's trials (absent exactly when the trials do not give one);
//!   `load_1m` ≥ 0; canary figures > 0 — all finite;
//! * `environment_evidence` equal to the summary recomputed from the kept attempts' `env`
//!   (`EnvSummary::of`): `canary_processes` exactly, the figures within relative 1e-9, a
//!   non-empty `canary_method`; present exactly when a kept attempt has environment evidence.

use pqperf_model::Record;
use pqperf_model::envevidence::{EnvSummary, ProcessEnv};
use pqperf_model::record::{Attempt, runq_share_of};
use pqperf_model::stats::opt_close;

use crate::problem::{Problem, REL_TOL, Report, show_float};

/// Checks the record's environment evidence (see the module doc).
pub(crate) fn check(rep: &mut Report, r: &Record, p: &dyn Fn(&str, String) -> Problem) {
    let Some(x) = r.pqperf.as_ref() else {
        return;
    };
    let attempts: &[Attempt] = x.attempts.as_deref().unwrap_or_default();
    for (i, a) in attempts.iter().enumerate() {
        if let Some(e) = &a.env {
            check_env(rep, &format!("pqperf.attempts[{i}].env"), e, a, p);
        }
    }
    let want = EnvSummary::of(
        attempts
            .iter()
            .filter(|a| a.kept)
            .filter_map(|a| a.env.as_ref()),
    );
    let f = "pqperf.environment_evidence";
    match (&x.environment_evidence, &want) {
        (None, None) => {}
        (Some(_), None) => rep.problems.push(p(
            f,
            "present, but no kept attempt in pqperf.attempts has environment evidence (env)".into(),
        )),
        (None, Some(_)) => rep.problems.push(p(
            f,
            "missing, although the kept attempts in pqperf.attempts carry environment evidence"
                .into(),
        )),
        (Some(got), Some(want)) => {
            if got.canary_method.trim().is_empty() {
                rep.problems
                    .push(p(&format!("{f}.canary_method"), "empty".into()));
            }
            if got.canary_processes != want.canary_processes {
                rep.problems.push(p(
                    &format!("{f}.canary_processes"),
                    format!(
                        "recorded {} but the kept attempts have {} canary figure(s)",
                        got.canary_processes, want.canary_processes
                    ),
                ));
            }
            for (k, g, w) in [
                (
                    "canary_median_ticks",
                    got.canary_median_ticks,
                    want.canary_median_ticks,
                ),
                ("canary_spread", got.canary_spread, want.canary_spread),
                ("steal_share", got.steal_share, want.steal_share),
                ("runq_share", got.runq_share, want.runq_share),
                ("load_1m_max", got.load_1m_max, want.load_1m_max),
            ] {
                if !opt_close(g, w, REL_TOL) {
                    rep.problems.push(p(
                        &format!("{f}.{k}"),
                        format!(
                            "recorded {} but the kept attempts give {} (relative tolerance 1e-9)",
                            show_float(g),
                            show_float(w)
                        ),
                    ));
                }
            }
        }
    }
}

/// One attempt's `env`: ranges, and the run-queue share its own trials give.
fn check_env(
    rep: &mut Report,
    f: &str,
    e: &ProcessEnv,
    a: &Attempt,
    p: &dyn Fn(&str, String) -> Problem,
) {
    let mut bad = |k: &str, m: String| rep.problems.push(p(&format!("{f}.{k}"), m));
    if let Some(s) = e.steal_share
        && !(s.is_finite() && (0.0..=1.0).contains(&s))
    {
        bad("steal_share", format!("{s} is not a share in [0, 1]"));
    }
    if let Some(l) = e.load_1m
        && !(l.is_finite() && l >= 0.0)
    {
        bad("load_1m", format!("{l} is not a load average (≥ 0)"));
    }
    for (k, c) in [
        ("canary_before_ticks", e.canary_before_ticks),
        ("canary_after_ticks", e.canary_after_ticks),
    ] {
        if c == Some(0) {
            bad(k, "0 ticks: a canary takes time".into());
        }
    }
    let want = runq_share_of(&a.trials);
    match e.runq_share {
        Some(s) if !(s.is_finite() && s >= 0.0) => {
            bad("runq_share", format!("{s} is not a share (≥ 0)"));
        }
        got if !opt_close(got, want, REL_TOL) => bad(
            "runq_share",
            format!(
                "recorded {} but the attempt's trials give {} (Σ runq_ns ÷ Σ seconds, relative tolerance 1e-9)",
                show_float(got),
                show_float(want)
            ),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::record::{PqperfRecordExt, TrialSched};
    use std::path::Path;

    fn trial(seconds: f64, runq_ns: u64) -> TrialSched {
        TrialSched {
            kind: "sampled".into(),
            trial: 1,
            calls: 100,
            seconds,
            count: 1000,
            counter_per_ns: None,
            nivcsw: 0,
            nvcsw: 0,
            runq_ns: Some(runq_ns),
            minflt: 0,
            majflt: 0,
            migrations: None,
            cpu_changed: None,
            preempted_share: None,
            disturbed: false,
        }
    }

    fn attempt(process: u64, kept: bool, canary: u64, runq_ns: u64, load: f64) -> Attempt {
        let trials = vec![trial(0.01, runq_ns), trial(0.01, 0)];
        Attempt {
            process,
            attempt: 0,
            kept,
            status: "complete".into(),
            disturbed: false,
            env: Some(ProcessEnv {
                canary_before_ticks: Some(canary),
                canary_after_ticks: Some(canary + 10),
                steal_share: Some(0.0),
                runq_share: runq_share_of(&trials),
                load_1m: Some(load),
            }),
            trials,
            problems: Vec::new(),
        }
    }

    /// A record as pqperf writes it: three kept attempts and a re-run one, with the summary.
    fn honest() -> Record {
        let att = vec![
            attempt(0, true, 80_000, 1_000_000, 3.0),
            attempt(1, false, 160_000, 9_000_000, 3.5),
            attempt(1, true, 81_000, 0, 3.5),
            attempt(2, true, 82_000, 500_000, 4.0),
        ];
        let summary = EnvSummary::of(att.iter().filter(|a| a.kept).filter_map(|a| a.env.as_ref()));
        Record {
            pqperf: Some(PqperfRecordExt {
                attempts: Some(att),
                environment_evidence: summary,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn problems(r: &Record) -> Vec<String> {
        let mut rep = Report::default();
        check(&mut rep, r, &|f: &str, m: String| {
            Problem::new(Path::new("records/x/l__sign.json"), f, m)
        });
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    fn ext(r: &mut Record) -> &mut PqperfRecordExt {
        r.pqperf.as_mut().unwrap()
    }

    #[test]
    fn an_honest_record_passes() {
        assert_eq!(problems(&honest()), Vec::<String>::new());
        assert!(problems(&Record::default()).is_empty());
    }

    #[test]
    fn a_tampered_summary_is_found_and_named() {
        // A quieter machine claimed: the canary median lowered, the run-queue share zeroed.
        let mut r = honest();
        let s = ext(&mut r).environment_evidence.as_mut().unwrap();
        s.canary_median_ticks = Some(40_000.0);
        s.runq_share = Some(0.0);
        let p = problems(&r);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].starts_with("records/x/l__sign.json: pqperf.environment_evidence.canary_median_ticks: recorded 40000"),
            "{p:?}"
        );
        assert!(p[1].contains("environment_evidence.runq_share"), "{p:?}");
        // The re-run attempt's figures do not count: only kept attempts make the summary.
        let mut r = honest();
        ext(&mut r)
            .environment_evidence
            .as_mut()
            .unwrap()
            .canary_processes = 4;
        assert!(
            problems(&r)[0].contains("canary_processes: recorded 4 but the kept attempts have 3")
        );
        // A summary without evidence behind it, and evidence without its summary.
        let mut r = honest();
        for a in ext(&mut r).attempts.as_mut().unwrap() {
            a.env = None;
        }
        assert!(
            problems(&r)[0].contains("no kept attempt"),
            "{:?}",
            problems(&r)
        );
        let mut r = honest();
        ext(&mut r).environment_evidence = None;
        assert!(problems(&r)[0].contains("missing"));
    }

    #[test]
    fn attempt_figures_are_in_range_and_agree_with_their_trials() {
        let mut r = honest();
        {
            let a = &mut ext(&mut r).attempts.as_mut().unwrap()[1];
            let e = a.env.as_mut().unwrap();
            e.steal_share = Some(1.5);
            e.load_1m = Some(f64::NAN);
            e.canary_after_ticks = Some(0);
            e.runq_share = Some(0.01);
        }
        let p = problems(&r);
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(p[0].contains("pqperf.attempts[1].env.steal_share: 1.5 is not a share"));
        assert!(p[1].contains("attempts[1].env.load_1m"));
        assert!(p[2].contains("attempts[1].env.canary_after_ticks: 0 ticks"));
        assert!(
            p[3].contains(
                "attempts[1].env.runq_share: recorded 0.01 but the attempt's trials give 0.4"
            ),
            "{p:?}"
        );
    }
}
