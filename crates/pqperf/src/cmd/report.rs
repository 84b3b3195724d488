//! `pqperf report`: Markdown pages from a dataset.

use std::path::PathBuf;
use std::process::ExitCode;

use pqperf_campaign::Exit;
use pqperf_report::{Form, PageKind};

/// Render the Markdown pages of a published dataset: one page per candidate, the system
/// summary, the method page and (for the first system of systems.csv) the symmetric survey.
///
/// Everything is rendered in memory first; files are written (atomically) only when every
/// page rendered, so bad input writes nothing.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Dataset root in the published layout (holding `performance/data/<system>/`, the side
    /// CSVs and `downloads.csv`).
    pub dataset: PathBuf,
    /// System to report (repeatable); default: every system of the dataset.
    #[arg(long = "system", value_name = "ID")]
    pub systems: Vec<String>,
    /// Page layout: `harness` (`<id>/perf_<sys>.md`, `performance/summary_<sys>.md`, …) or
    /// `site` (`content/performance/<sys>/<id>.md`, … with the site's crumbs and links).
    #[arg(long, default_value = "harness", value_name = "FORM")]
    pub form: Form,
    /// Output root the layout is written under (default: the dataset root itself).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not write: compare the regenerated pages with the files under the output root,
    /// print each differing path and a unified diff of the first difference; exit 1 if any
    /// page differs or is missing.
    #[arg(long)]
    pub check: bool,
    /// Only these page kinds (comma-separated: candidates, summary, survey, method); default
    /// all.
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub pages: Vec<PageKind>,
}

pub fn run_report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    super::existing_dir(&args.dataset)?;
    // The model's errors name the file (no context that would repeat the path).
    let ds = pqperf_model::dataset::Dataset::load(&args.dataset)?;
    let systems: Vec<String> = if args.systems.is_empty() {
        ds.systems.iter().map(|s| s.id.clone()).collect()
    } else {
        args.systems.clone()
    };
    if systems.is_empty() {
        anyhow::bail!(
            "{}: no system dataset found (expected performance/data/<system>/)",
            args.dataset.display()
        );
    }
    let out = args.out.clone().unwrap_or_else(|| args.dataset.clone());

    // Render everything before touching the disk.
    let mut rendered = Vec::new();
    for sys in &systems {
        let pages: Vec<(PageKind, String, String)> =
            pqperf_report::render_pages(&ds, sys, args.form)?
                .into_iter()
                .filter(|(kind, _, _)| args.pages.is_empty() || args.pages.contains(kind))
                .collect();
        rendered.push((sys.clone(), pages));
    }

    let mut any_differ = false;
    for (sys, pages) in &rendered {
        let plain: Vec<(String, String)> = pages
            .iter()
            .map(|(_, p, t)| (p.clone(), t.clone()))
            .collect();
        if args.check {
            let report = pqperf_report::check::check_pages(&out, &plain);
            for p in &report.differing {
                println!("differs from regenerated output: {p}");
            }
            if let Some(diff) = &report.first_diff {
                print!("{diff}");
            }
            println!(
                "report check: system {sys}: {} pages, {} differ",
                report.pages,
                report.differing.len()
            );
            any_differ |= !report.ok();
        } else {
            pqperf_report::check::write_pages(&out, &plain)?;
            let count = |k: PageKind| pages.iter().filter(|(kind, _, _)| *kind == k).count();
            let others: Vec<&str> = pages
                .iter()
                .filter(|(k, _, _)| *k != PageKind::Candidate)
                .map(|(_, p, _)| p.rsplit('/').next().unwrap_or(p))
                .collect();
            let cand_pattern = match args.form {
                Form::Harness => format!("<id>/perf_{sys}.md"),
                Form::Site => format!("content/performance/{sys}/<id>.md"),
            };
            let mut line = format!(
                "report: system {sys}: {} candidate reports ({cand_pattern})",
                count(PageKind::Candidate)
            );
            if !others.is_empty() {
                line.push_str(&format!(", {}", others.join(", ")));
            }
            super::ui::status(format!("{line} in {}", out.display()));
        }
    }
    Ok(if any_differ {
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}
