//! Stage report: the Markdown pages (candidate, summary, method, symmetric survey) in harness
//! and site form.
//!
//! Pages are rendered in memory from a loaded [`pqperf_model::dataset::Dataset`]; nothing here
//! parses evidence. Every page is its lines joined with `\n` plus a final `\n`
//! (method.md §13.0).
//!
//! * [`candidate_page`], [`summary_page`], [`method_page`], [`survey_page`]: one page;
//! * [`all_pages`]: every page of one system as `(relative path, markdown)`;
//! * [`render_docs`]: the same pages as blocks ([`page::Page`]: headings, lines, tables whose
//!   cells carry their evidence file), which the site renders to HTML;
//!   [`page::Page::to_markdown`] gives the published bytes;
//! * [`summary_export`] and [`export`]: the summary as CSV, JSON or a Markdown table;
//! * [`Form`]: the harness layout (`<id>/perf_<sys>.md`, `performance/summary_<sys>.md`, …) or
//!   the site layout (`content/performance/<sys>/<id>.md`, …).

#![forbid(unsafe_code)]

pub mod candidate;
pub mod check;
pub mod common;
pub mod counter;
pub mod ct;
pub mod export;
pub mod links;
pub mod md;
pub mod method;
pub mod page;
pub mod provider;
pub mod summary;
pub mod survey;
pub mod view;

use pqperf_model::dataset::Dataset;

pub use links::PageRef;
pub use view::{Side, SystemView};

/// Which layout (and decoration) a page is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Form {
    /// The harness repository layout (`<id>/perf_<sys>.md`, `performance/summary_<sys>.md`).
    #[default]
    Harness,
    /// The website layout (`content/performance/<sys>/<id>.md`, crumbs, site links).
    Site,
}

impl std::str::FromStr for Form {
    type Err = String;
    fn from_str(s: &str) -> Result<Form, String> {
        match s {
            "harness" => Ok(Form::Harness),
            "site" => Ok(Form::Site),
            other => Err(format!("unknown form '{other}' (harness or site)")),
        }
    }
}

/// Errors of page rendering.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Evidence could not be read.
    #[error(transparent)]
    Model(#[from] pqperf_model::error::ModelError),
    /// A label regex in a side CSV does not compile.
    #[error("{file}:{line}: Label: bad regular expression '{pattern}': {message}")]
    BadRegex {
        /// CSV file (relative to the dataset root).
        file: String,
        /// Line of the row.
        line: usize,
        /// The pattern.
        pattern: String,
        /// Why it does not compile.
        message: String,
    },
    /// A side CSV row names something that does not exist.
    #[error("{file}:{line}: {message}")]
    BadRow {
        /// CSV file (relative to the dataset root).
        file: String,
        /// Line of the row.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No such system in the dataset.
    #[error("system '{system}' not found in the dataset (systems: {})", known.join(", "))]
    UnknownSystem {
        /// Requested system.
        system: String,
        /// Systems present.
        known: Vec<String>,
    },
    /// No records or build entries for a candidate on a system.
    #[error("candidate '{id}' has no records or build entries on system '{system}'")]
    UnknownCandidate {
        /// System id.
        system: String,
        /// Candidate id.
        id: String,
    },
}

/// Lines joined with `\n`, plus a final `\n`.
pub(crate) fn join_lines(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// The candidate page of `id` on `system`.
pub fn candidate_page(
    ds: &Dataset,
    system: &str,
    id: &str,
    form: Form,
) -> Result<String, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    candidate::render(&v, id, form)
}

/// The summary page of `system`.
pub fn summary_page(ds: &Dataset, system: &str, form: Form) -> Result<String, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    summary::render(&v, form)
}

/// The exported summary rows of `system` (every timing record; see [`export`]).
pub fn summary_export(ds: &Dataset, system: &str) -> Result<Vec<export::SummaryRow>, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    Ok(export::summary_rows(&v))
}

/// The summary page of `system` as blocks (see [`page`]).
pub fn summary_doc(ds: &Dataset, system: &str, form: Form) -> Result<page::Page, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    summary::page(&v, form)
}

/// The method page of `system`.
pub fn method_page(ds: &Dataset, system: &str, form: Form) -> Result<String, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    method::render(&v, form)
}

/// The symmetric survey page, with the measured column from `system` (normally the first
/// system of systems.csv).
pub fn survey_page(ds: &Dataset, system: &str, form: Form) -> Result<String, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    survey::render(&v, form)
}

/// The system that owns the survey page: the first row of systems.csv, else the first system.
pub fn survey_system(ds: &Dataset) -> Option<String> {
    ds.systems_csv
        .as_ref()
        .and_then(|rows| rows.first().map(|r| r.id.clone()))
        .or_else(|| ds.systems.first().map(|s| s.id.clone()))
}

/// Kinds of generated pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageKind {
    /// A candidate page.
    Candidate,
    /// The system summary.
    Summary,
    /// The symmetric survey (first system only).
    Survey,
    /// The method page.
    Method,
}

impl std::str::FromStr for PageKind {
    type Err = String;
    fn from_str(s: &str) -> Result<PageKind, String> {
        match s {
            "candidates" | "candidate" => Ok(PageKind::Candidate),
            "summary" => Ok(PageKind::Summary),
            "survey" => Ok(PageKind::Survey),
            "method" => Ok(PageKind::Method),
            other => Err(format!(
                "unknown page kind '{other}' (candidates, summary, survey, method)"
            )),
        }
    }
}

/// Every page of `system` with its kind, as blocks: candidate pages (sorted by id), the
/// summary, the survey (only when `system` owns it) and the method page, as (kind, path
/// relative to the output root, page). Rendering stops at the first error, so callers write
/// nothing unless everything rendered.
pub fn render_docs(
    ds: &Dataset,
    system: &str,
    form: Form,
) -> Result<Vec<(PageKind, String, page::Page)>, ReportError> {
    let side = Side::from_dataset(ds)?;
    let v = SystemView::new(ds, &side, system)?;
    let mut pages = Vec::new();
    for id in v.candidates() {
        let at = PageRef::Candidate {
            sys: system.into(),
            id: id.clone(),
        };
        pages.push((
            PageKind::Candidate,
            at.path(form),
            candidate::page(&v, &id, form)?,
        ));
    }
    pages.push((
        PageKind::Summary,
        PageRef::Summary(system.into()).path(form),
        summary::page(&v, form)?,
    ));
    if survey_system(ds).as_deref() == Some(system) {
        pages.push((
            PageKind::Survey,
            PageRef::Survey.path(form),
            survey::page(&v, form)?,
        ));
    }
    pages.push((
        PageKind::Method,
        PageRef::Method(system.into()).path(form),
        method::page(&v, form)?,
    ));
    Ok(pages)
}

/// Every page of `system` with its kind, as Markdown: [`render_docs`] through
/// [`page::Page::to_markdown`].
pub fn render_pages(
    ds: &Dataset,
    system: &str,
    form: Form,
) -> Result<Vec<(PageKind, String, String)>, ReportError> {
    Ok(render_docs(ds, system, form)?
        .into_iter()
        .map(|(kind, path, doc)| (kind, path, doc.to_markdown()))
        .collect())
}

/// Every page of `system` as (path relative to the output root, markdown); see
/// [`render_pages`].
pub fn all_pages(
    ds: &Dataset,
    system: &str,
    form: Form,
) -> Result<Vec<(String, String)>, ReportError> {
    Ok(render_pages(ds, system, form)?
        .into_iter()
        .map(|(_, path, text)| (path, text))
        .collect())
}
