//! Names and descriptions that go into pages: a `systems.csv` description, a `downloads.csv`
//! algorithm name, an instance's label or name (build.json, records) must not carry a character
//! that would change a page's structure if it were placed raw into Markdown
//! ([`pqperf_model::md::structure_char`]: a newline or other control character, `|`, `<`, `>`,
//! `[`, `]`, a backtick or a backslash). The pages escape such text anyway; validate refuses it
//! at the source, naming the file and line or the instance.

use pqperf_model::dataset::{Dataset, SystemData};
use pqperf_model::md::structure_char;

use crate::problem::{Problem, Report};

fn problem(rep: &mut Report, file: String, field: &str, what: &str, value: &str) {
    if let Some(c) = structure_char(value) {
        rep.problems.push(Problem::new(
            file,
            field,
            format!("{what} {value:?} contains {c:?}, which would change a page's structure"),
        ));
    }
}

/// Side files: `performance/systems.csv` descriptions, `downloads.csv` algorithm names.
pub(crate) fn check_side_text(rep: &mut Report, ds: &Dataset) {
    for s in ds.systems_csv.iter().flatten() {
        let file = format!("performance/systems.csv:{}", s.line);
        problem(
            rep,
            file.clone(),
            "Description",
            "description",
            &s.description,
        );
        problem(rep, file, "Hostname", "host name", &s.hostname);
    }
    for d in ds.downloads.iter().flatten() {
        let file = format!("downloads.csv:{}", d.line);
        problem(rep, file, "Algorithm", "algorithm name", &d.algorithm);
    }
}

/// Instance labels and names of one system (build.json entries and records).
pub(crate) fn check_names(rep: &mut Report, sys: &SystemData) {
    if let Some(b) = &sys.build {
        for (key, e) in &b.value.instances {
            let file = b.shown.display().to_string();
            problem(
                rep,
                file.clone(),
                &format!("instances.{key}.label"),
                "instance label",
                &e.label,
            );
            problem(
                rep,
                file,
                &format!("instances.{key}.instance"),
                "instance name",
                &e.instance,
            );
        }
    }
    for r in &sys.records {
        let file = r.shown.display().to_string();
        problem(rep, file.clone(), "label", "instance label", &r.value.label);
        problem(rep, file, "instance", "instance name", &r.value.instance);
    }
}
