//! Dataset layout per system: stray files, the systems.csv row, campaign.json (`system_id` =
//! directory) and build.json present, security_targets.csv rows against the built instances;
//! then every file of the system goes through the path scan and the per-kind checks.

use std::path::Path;

use pqperf_model::dataset::{Dataset, SystemData};
use serde_json::Value;

use crate::problem::{Problem, Report, has_error_for, show_opt};
use crate::{katlogs, paths, profiles, records, walk};

/// security_targets.csv (when present): every non-`iccs` build.json instance of every system
/// has a row (`missing`), and every row names a built instance (`stale`) (method.md §15.2).
pub(crate) fn check_security_targets(rep: &mut Report, ds: &Dataset) {
    let Some(rows) = &ds.security_targets else {
        return;
    };
    let file = "performance/security_targets.csv";
    let mut built = std::collections::BTreeSet::new();
    for sys in &ds.systems {
        if let Some(b) = &sys.build {
            for e in b.value.instances.values() {
                if e.candidate != "iccs" {
                    built.insert((e.candidate.clone(), e.label.clone(), sys.id.clone()));
                }
            }
        }
    }
    for (cand, label, sys) in &built {
        if !rows.iter().any(|r| &r.id == cand && &r.instance == label) {
            rep.problems.push(Problem::new(
                file,
                "Instance",
                format!("missing {cand};{label} (built on {sys})"),
            ));
        }
    }
    for r in rows {
        if !built.iter().any(|(c, l, _)| *c == r.id && *l == r.instance) {
            rep.problems.push(Problem::new(
                format!("{file}:{}", r.line),
                "Instance",
                format!(
                    "stale {};{}: no system built this instance",
                    r.id, r.instance
                ),
            ));
        }
    }
}

/// symmetric_survey.csv (when present): every candidate a system publishes profiles of has a
/// row. The file is shared by the systems of a dataset root; a row missing for a profiled
/// candidate is one that another system's publication dropped (its pages then say "not
/// surveyed").
pub(crate) fn check_survey_rows(rep: &mut Report, ds: &Dataset) {
    let Some(rows) = &ds.symmetric_survey else {
        return;
    };
    let mut profiled: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for sys in &ds.systems {
        for p in &sys.profiles {
            profiled
                .entry(p.value.candidate.as_str())
                .or_default()
                .insert(sys.id.as_str());
        }
    }
    for (cand, systems) in profiled {
        if !rows.iter().any(|r| r.id == cand) {
            let systems: Vec<&str> = systems.into_iter().collect();
            rep.problems.push(Problem::new(
                "performance/symmetric_survey.csv",
                "ID",
                format!(
                    "no row for {cand}, profiled on {} (a shared side file lost this candidate's row; publish that system again)",
                    systems.join(", ")
                ),
            ));
        }
    }
}

pub(crate) fn check_system(rep: &mut Report, ds: &Dataset, sys: &SystemData, root: &Path) {
    let dir = &sys.dir;
    // A system folder keeps the run's evidence paths.
    let layout = pqperf_model::layout::RunLayout::new(dir);
    for p in &sys.stray {
        rep.problems.push(Problem::new(
            p,
            "",
            "file outside the dataset layout (stray)",
        ));
    }
    if let Some(rows) = &ds.systems_csv
        && !rows.iter().any(|r| r.id == sys.id)
    {
        rep.problems.push(Problem::new(
            "performance/systems.csv",
            "ID",
            format!("system '{}' has a dataset but no row", sys.id),
        ));
    }
    match &sys.campaign {
        Some(c)
            if c.value.system_id.as_deref() != Some(sys.id.as_str())
                && !dir.as_os_str().is_empty() =>
        {
            rep.problems.push(Problem::new(
                &c.shown,
                "system_id",
                format!(
                    "{} but the dataset directory is '{}'",
                    show_opt(c.value.system_id.as_deref()),
                    sys.id
                ),
            ));
        }
        Some(_) => {}
        None if !has_error_for(rep, &layout.campaign_json()) => {
            rep.problems
                .push(Problem::new(layout.campaign_json(), "", "missing"));
        }
        None => {}
    }
    let build = match &sys.build {
        Some(b) => Some(&b.value),
        None => {
            if !has_error_for(rep, &layout.build_json()) {
                rep.problems
                    .push(Problem::new(layout.build_json(), "", "missing"));
            }
            None
        }
    };

    // Every file of the system: absolute paths; JSON layout.
    let sys_root = root.join(dir);
    let mut files = Vec::new();
    walk::list_files(&sys_root, &mut files);
    for f in &files {
        let rel = f.strip_prefix(&sys_root).unwrap_or(f);
        let shown = dir.join(rel);
        if dir.as_os_str().is_empty() && pqperf_model::dataset::is_run_dir_only(rel) {
            // A run directory's working files (pqperf's own layout, not evidence): only the
            // derived surveys are JSON pqperf reads back; they must parse.
            if rel.starts_with("survey") && rel.extension().is_some_and(|e| e == "json") {
                let text = pqperf_model::limits::read_text(f, &shown).unwrap_or_default();
                if let Err(e) = serde_json::from_str::<Value>(&text) {
                    rep.problems.push(Problem::new(
                        &shown,
                        "",
                        format!("{}:{}: {e}", e.line(), e.column()),
                    ));
                }
            }
            continue;
        }
        paths::scan_file(rep, f, &shown);
    }

    if let Some(build) = build {
        katlogs::check_kat_logs(rep, ds, sys, build);
    }
    for r in &sys.records {
        records::check_record(rep, sys, build, r);
    }
    for p in &sys.profiles {
        profiles::check_profile(rep, p);
    }
}
