//! What `publish` does with the dataset around a new system tree: validate's check of the
//! tree before it replaces an old one, and afterwards the run's survey verdicts and the
//! dataset's pages that the new evidence changes.

use std::collections::BTreeSet;
use std::path::Path;

use pqperf_report::{Form, PageRef};

use crate::{CampaignOptions, PagesRefresh, PhaseError};

/// The problems `validate` finds in system `system` of the dataset at `root` (empty =
/// valid; findings about the evidence, not an error of the check: validate always
/// finishes). Regenerated pages are not compared: publishing makes the old pages stale by
/// design.
pub fn check(root: &Path, system: &str) -> Vec<String> {
    let rep = pqperf_validate::validate_with(
        root,
        &pqperf_validate::Options {
            system: Some(system.to_string()),
            pages: false,
        },
    );
    rep.problems.iter().map(|p| p.to_string()).collect()
}

/// After a system tree is in place: the run's survey verdicts into the dataset's
/// symmetric_survey.csv, then the dataset's pages that changed with it.
pub fn after_publish(
    opts: &CampaignOptions,
    root: &Path,
    system: &str,
) -> Result<PagesRefresh, PhaseError> {
    super::profile::publish_survey(opts)?;
    refresh(root, system)
}

/// Regenerates the dataset's pages (harness and site form, every system) that are on disk
/// and differ from what the evidence now gives, and names the candidate pages of `system` on
/// disk that the evidence no longer gives (stale). Everything renders before anything is
/// written; pages not on disk are not created.
pub fn refresh(root: &Path, system: &str) -> Result<PagesRefresh, PhaseError> {
    let report = |e: Box<dyn std::error::Error + Send + Sync>| PhaseError::stage("report", e);
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
    let mut out = PagesRefresh::default();
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
    let mut ids: BTreeSet<String> = BTreeSet::new();
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
