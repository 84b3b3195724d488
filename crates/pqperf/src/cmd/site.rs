//! `pqperf site`: the static HTML site from a published dataset.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use pqperf_campaign::Exit;

/// Build the static HTML site (pages, rankings, joint view, charts, evidence) from a dataset.
#[derive(clap::Args)]
pub struct SiteArgs {
    /// Dataset root (the published layout: `performance/data/<sys>/…`, side CSVs).
    pub dataset: PathBuf,
    /// Only these systems (repeatable); default: every system of the dataset.
    #[arg(long = "system", value_name = "ID")]
    pub systems: Vec<String>,
    /// Output directory for the site.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Check every internal link of the written site and fail on a broken one.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: SiteArgs) -> anyhow::Result<ExitCode> {
    let t = Instant::now();
    super::existing_dir(&args.dataset)?;
    let model = pqperf_site::load_dataset(&args.dataset)?;
    // A refused input (`--out` not empty and not a site, an unknown system) exits 2 and
    // says what to do; nothing is written.
    let built = match pqperf_site::build_from_loaded(&model, &args.systems, &args.out) {
        Err(pqperf_site::SiteError::Input(m)) => return super::refuse(m),
        r => r?,
    };
    // The command ends here: the OS takes the evidence model back at exit faster than
    // freeing its objects one by one would (≈ 0.05 s of CPU for 119 candidates × 2 systems).
    std::mem::forget(model);
    super::ui::status(format!(
        "site: {} pages, {} evidence files in {} ({:.2} s); open {}",
        built.pages.len(),
        built.evidence_files,
        built.out.display(),
        t.elapsed().as_secs_f64(),
        built.out.join("index.html").display()
    ));
    if args.check {
        let (broken, n) = pqperf_site::check::check_links(&args.out)?;
        for (page, href) in &broken {
            eprintln!("site: broken link in {page}: {href}");
        }
        println!("site check: {n} internal links, {} broken", broken.len());
        if !broken.is_empty() {
            return Ok(Exit::Failed.into());
        }
    }
    Ok(Exit::Done.into())
}
