//! The one place that wires the stages' phases into the campaign: build and KAT
//! (`cmd/build.rs`), baseline/profile/hashcost (`cmd/profile.rs`), ct (`cmd/ct.rs`) and count
//! (`cmd/count.rs`).
//! Used by `pqperf campaign` and `pqperf demo`; also the check `publish` runs (validate).

use pqperf_campaign::{Hooks, PhaseError};

/// The hooks through which other stages provide their phases.
pub fn hooks() -> Hooks {
    let mut h = Hooks::default();
    super::build::add_hooks(&mut h);
    super::profile::add_hooks(&mut h);
    super::ct::add_hooks(&mut h);
    super::count::add_hooks(&mut h);
    // `publish` keeps an old system tree that validate accepts unless the new one passes too
    // (regenerated pages are not compared: publishing makes the old pages stale by design).
    h.provide_publish_check(Box::new(|root, system| {
        let rep = pqperf_validate::validate_with(
            root,
            &pqperf_validate::Options {
                system: Some(system.to_string()),
                pages: false,
            },
        );
        rep.problems.iter().map(|p| p.to_string()).collect()
    }));
    // After a system tree is in place: the run's survey verdicts into the dataset's
    // symmetric_survey.csv, then the dataset's pages that changed with it.
    h.provide_publish_pages(Box::new(|opts, root, system| {
        super::profile::publish_survey(opts).map_err(|e| PhaseError::stage("profile", e))?;
        refresh_pages(root, system)
    }));
    h
}

/// Regenerates the dataset's pages (harness and site form, every system) that are on disk
/// and differ from what the evidence now gives, and names the candidate pages of `system` on
/// disk that the evidence no longer gives (stale). Everything renders before anything is
/// written; pages not on disk are not created.
fn refresh_pages(
    root: &std::path::Path,
    system: &str,
) -> Result<pqperf_campaign::PagesRefresh, PhaseError> {
    let report = |e: Box<dyn std::error::Error + Send + Sync>| PhaseError::stage("report", e);
    use pqperf_report::{Form, PageRef};
    let ds = pqperf_model::dataset::Dataset::load(root).map_err(|e| report(e.into()))?;
    let mut rendered: Vec<(String, String)> = Vec::new();
    // Site-form pages are rendered only when the dataset holds some (`report --form site`).
    let forms: &[Form] = if root.join("content/performance").is_dir() {
        &[Form::Harness, Form::Site]
    } else {
        &[Form::Harness]
    };
    for sys in &ds.systems {
        for &form in forms {
            rendered.extend(
                pqperf_report::all_pages(&ds, &sys.id, form).map_err(|e| report(e.into()))?,
            );
        }
    }
    let mut out = pqperf_campaign::PagesRefresh::default();
    let mut changed = Vec::new();
    for (rel, text) in &rendered {
        let p = root.join(rel);
        if !p.is_file() {
            continue;
        }
        if std::fs::read(&p).ok().as_deref() != Some(text.as_bytes()) {
            changed.push((rel.clone(), text.clone()));
        }
    }
    pqperf_report::check::write_pages(root, &changed).map_err(|e| report(e.into()))?;
    out.regenerated = changed.into_iter().map(|(p, _)| p).collect();
    // Candidate pages of `system` on disk (harness `<id>/perf_<sys>.md`, site
    // `content/performance/<sys>/<id>.md`) that were not rendered.
    let mut ids: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for dir in [
        root.to_path_buf(),
        root.join("content/performance").join(system),
    ] {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            ids.insert(name.strip_suffix(".md").unwrap_or(&name).to_string());
        }
    }
    for id in ids {
        let page = PageRef::Candidate {
            sys: system.to_string(),
            id,
        };
        for form in [Form::Harness, Form::Site] {
            let rel = page.path(form);
            if root.join(&rel).is_file() && !rendered.iter().any(|(p, _)| *p == rel) {
                out.stale.push(rel);
            }
        }
    }
    out.stale.sort();
    out.stale.dedup();
    Ok(out)
}
