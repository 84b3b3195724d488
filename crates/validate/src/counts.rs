//! Instruction-count evidence (`count/<id>/<label>__<op>.json`, `pqperf_model::count`):
//! the file is where its content says (candidate, label, operation), the evidence is
//! consistent in itself (`CountEvidence::problems`: status and figures, the spread's order,
//! the classes adding up to the mean, the formula's version) and it counts the library
//! build.json names.

use pqperf_model::dataset::SystemData;
use pqperf_model::layout::RunLayout;

use crate::problem::{Problem, Report};

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
}
