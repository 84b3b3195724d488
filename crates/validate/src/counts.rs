//! Instruction-count evidence (`count/<id>/<label>__<op>.json`, `pqperf_model::count`):
//! the file is where its content says (candidate, label, operation), the evidence is
//! consistent in itself (`CountEvidence::problems`: status and figures, the spread's order,
//! the classes adding up to the mean, the formula's version) and it counts the library
//! build.json names.

use pqperf_model::dataset::SystemData;
use pqperf_model::layout::RunLayout;

use crate::problem::{Problem, Report};

fn show_float(v: f64) -> String {
    crate::problem::show_float(Some(v))
}

/// Checks every count file of `sys`.
pub(crate) fn check_counts(rep: &mut Report, sys: &SystemData) {
    for c in &sys.count {
        let e = &c.value;
        let want = RunLayout::count_rel(&e.candidate, &e.label, &e.operation);
        if c.path.to_string_lossy() != want {
            rep.problems.push(Problem::new(
                &c.shown,
                "",
                format!("holds the count of {want}, not of its own path"),
            ));
        }
        for p in e.problems() {
            rep.problems.push(Problem::new(&c.shown, "", p));
        }
        let built = sys
            .build
            .as_ref()
            .and_then(|b| b.value.entry(&e.candidate, &e.label));
        match built {
            None => rep.problems.push(Problem::new(
                &c.shown,
                "candidate",
                format!("{}/{} is not in build.json", e.candidate, e.label),
            )),
            Some(b) if e.status != "failed" && b.library_sha256 != e.library_sha256 => {
                rep.problems.push(Problem::new(
                    &c.shown,
                    "library_sha256",
                    format!(
                        "{} counts another library than build.json names ({})",
                        e.library_sha256.as_deref().unwrap_or("none"),
                        b.library_sha256.as_deref().unwrap_or("none")
                    ),
                ));
            }
            Some(_) => {}
        }
        check_timing(rep, sys, c);
    }
}

/// The timing cross-check of a count (`pqperf_model::count::timing_check`): required where a
/// record times the same library and operation, equal to its recomputation from that record,
/// and never "impossible".
fn check_timing(
    rep: &mut Report,
    sys: &SystemData,
    c: &pqperf_model::dataset::Loaded<pqperf_model::count::CountEvidence>,
) {
    let e = &c.value;
    let record = sys.records.iter().find(|r| {
        r.value.candidate == e.candidate
            && r.value.label == e.label
            && r.value.operation == e.operation
    });
    let want = record
        .and_then(|r| pqperf_model::count::timing_check(e, &r.value, &r.path.to_string_lossy()));
    let mut say = |m: String| rep.problems.push(Problem::new(&c.shown, "timing_check", m));
    match (&e.timing_check, &want) {
        (None, None) => {}
        (None, Some(w)) => say(format!(
            "no timing cross-check, though {} times the same library: run `pqperf campaign count` (it adds the check without counting again)",
            w.record
        )),
        (Some(got), None) => say(format!(
            "names {}, which is not there or times another library: run `pqperf campaign count`",
            got.record
        )),
        (Some(got), Some(w)) if got != w => say(format!(
            "does not match {} as it is now (lower bound {} s, timed {} s {}): run `pqperf campaign count`",
            w.record,
            show_float(w.lower_bound_seconds),
            show_float(w.timed_seconds),
            w.timed_figure
        )),
        (Some(_), Some(_)) => {}
    }
    if let Some(w) = want.filter(|w| w.impossible()) {
        rep.problems.push(Problem::new(
            &c.shown,
            "timing_check",
            format!(
                "impossible timing: {} {} = {} s is below {} s, the least {} instructions (the fewest of one counted call) take at {} per cycle and {} Hz ({})",
                w.record,
                w.timed_figure,
                show_float(w.timed_seconds),
                show_float(w.lower_bound_seconds),
                w.instructions,
                show_float(w.max_ipc),
                show_float(w.max_clock_hz),
                w.max_clock_source
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::buildjson::{BuildEntry, BuildJson};
    use pqperf_model::count::{CountEvidence, ESTIMATED_CYCLES_FORMULA, Spread};
    use pqperf_model::dataset::Loaded;
    use std::path::PathBuf;

    #[test]
    fn misplaced_inconsistent_and_stale_counts_are_found() {
        let s = Spread::of(&[100, 102]).unwrap();
        let mut ev = CountEvidence {
            schema: 1,
            candidate: "sign-90".into(),
            label: "X".into(),
            operation: "sign".into(),
            status: "counted".into(),
            library_sha256: Some("aa".into()),
            calls: 2,
            calls_run: 3,
            instructions_per_call: Some(s),
            estimated_cycles_per_call: Some(s),
            estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
            ..Default::default()
        };
        ev.classes.insert("candidate".into(), 101.0.into());
        let mut b = BuildJson::default();
        b.instances.insert(
            "sign-90/X".into(),
            BuildEntry {
                candidate: "sign-90".into(),
                label: "X".into(),
                library_sha256: Some("aa".into()),
                ..Default::default()
            },
        );
        let loaded = |path: &str, value: CountEvidence| Loaded {
            path: PathBuf::from(path),
            shown: PathBuf::from("performance/data/s").join(path),
            value,
        };
        let mut sys = SystemData {
            build: Some(Loaded {
                path: "build.json".into(),
                shown: "build.json".into(),
                value: b,
            }),
            ..Default::default()
        };
        sys.count
            .push(loaded("count/sign-90/X__sign.json", ev.clone()));
        let mut rep = Report::default();
        check_counts(&mut rep, &sys);
        assert!(rep.problems.is_empty(), "{:?}", rep.problems);
        let mut bad = ev.clone();
        bad.library_sha256 = Some("bb".into());
        bad.classes.insert("candidate".into(), 90.0.into());
        sys.count.push(loaded("count/sign-90/X__verify.json", bad));
        check_counts(&mut rep, &sys);
        let text: Vec<String> = rep.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(rep.problems.len(), 3, "{text:?}");
        assert!(text[0].contains("not of its own path"), "{text:?}");
        assert!(text[1].contains("add up"), "{text:?}");
        assert!(text[2].contains("another library"), "{text:?}");
    }

    #[test]
    fn the_timing_cross_check_is_required_recomputed_and_impossible_timings_found() {
        let s = Spread::of(&[16_000_000, 16_000_000]).unwrap();
        let mut ev = CountEvidence {
            schema: 1,
            candidate: "sign-90".into(),
            label: "X".into(),
            operation: "sign".into(),
            status: "counted".into(),
            library_sha256: Some("aa".into()),
            calls: 2,
            calls_run: 2,
            instructions_per_call: Some(s),
            estimated_cycles_per_call: Some(s),
            estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
            ..Default::default()
        };
        ev.classes.insert("candidate".into(), 16e6.into());
        let mut b = BuildJson::default();
        b.instances.insert(
            "sign-90/X".into(),
            BuildEntry {
                candidate: "sign-90".into(),
                label: "X".into(),
                library_sha256: Some("aa".into()),
                ..Default::default()
            },
        );
        let mut rec = pqperf_model::record::Record {
            candidate: "sign-90".into(),
            label: "X".into(),
            operation: "sign".into(),
            library_sha256: Some("aa".into()),
            mean_seconds: Some(4e-3),
            ..Default::default()
        };
        rec.environment.insert("cpufreq_max_khz", "2000000");
        let sys_with = |count: CountEvidence, rec: pqperf_model::record::Record| SystemData {
            build: Some(Loaded {
                path: "build.json".into(),
                shown: "build.json".into(),
                value: b.clone(),
            }),
            records: vec![Loaded {
                path: PathBuf::from("records/sign-90/X__sign.json"),
                shown: PathBuf::from("performance/data/s/records/sign-90/X__sign.json"),
                value: rec,
            }],
            count: vec![Loaded {
                path: PathBuf::from("count/sign-90/X__sign.json"),
                shown: PathBuf::from("performance/data/s/count/sign-90/X__sign.json"),
                value: count,
            }],
            ..Default::default()
        };
        let problems = |sys: &SystemData| {
            let mut rep = Report::default();
            check_counts(&mut rep, sys);
            rep.problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
        };
        // Both exist, no check: required.
        let p = problems(&sys_with(ev.clone(), rec.clone()));
        assert!(
            p.len() == 1 && p[0].contains("no timing cross-check"),
            "{p:?}"
        );
        // The check as the count stage writes it: clean.
        let rel = "records/sign-90/X__sign.json";
        ev.timing_check = pqperf_model::count::timing_check(&ev, &rec, rel);
        assert!(problems(&sys_with(ev.clone(), rec.clone())).is_empty());
        // The record was measured again since: the check is stale.
        let mut again = rec.clone();
        again.mean_seconds = Some(3e-3);
        let p = problems(&sys_with(ev.clone(), again));
        assert!(p.len() == 1 && p[0].contains("does not match"), "{p:?}");
        // A record claiming 0.4 ms per call where 16 M instructions need at least 0.5 ms at
        // 16 per cycle and 2 GHz: impossible, even with a check that says so.
        let mut forged = rec.clone();
        forged.mean_seconds = Some(4e-4);
        ev.timing_check = pqperf_model::count::timing_check(&ev, &forged, rel);
        assert!(ev.timing_check.as_ref().unwrap().impossible());
        let p = problems(&sys_with(ev.clone(), forged));
        assert!(
            p.len() == 1 && p[0].contains("impossible timing") && p[0].contains("0.0005 s"),
            "{p:?}"
        );
    }
}
