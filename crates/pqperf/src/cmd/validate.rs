//! `pqperf validate`: semantic checks of a published dataset (method.md §15). Thin wrapper
//! over [`pqperf_report::validate`]; nothing is written.

use std::path::PathBuf;
use std::process::ExitCode;

/// Validate a published dataset: recompute every record's statistics from its raw trials
/// (relative 1e-9) and every profile's shares, check each KAT log against its sha256 in
/// build.json and the records, check library digests between records and build.json, reject
/// absolute machine paths (/home/, /root/, /Users/, /tmp/, /work/, or any /-rooted library,
/// kat_log or command value), stray files and malformed or truncated JSON/CSV.
///
/// Prints one line per problem as `path: field: message` (malformed files as
/// `path:line:col: …`), then a summary line. Exit status: 0 when no problem was found, 1
/// when there were problems, 2 on usage errors. Nothing is written.
#[derive(clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  pqperf validate ../shared/golden/harness\n  pqperf validate runs/demo/dataset --system x86_1"
)]
pub struct ValidateArgs {
    /// Dataset root in the published layout (holding performance/data/<system>/…, the side
    /// CSVs and <id>/kat.sha256), or a single system directory / run directory.
    #[arg(value_name = "DATASET_ROOT")]
    pub root: PathBuf,

    /// Check only this system (e.g. x86_1); side files are always checked.
    #[arg(long, value_name = "ID")]
    pub system: Option<String>,

    /// Print only the summary line (problems are still counted).
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run_validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    if !args.root.is_dir() {
        anyhow::bail!("{}: not a directory", args.root.display());
    }
    let report = pqperf_report::validate::validate(&args.root, args.system.as_deref());
    if !args.quiet {
        for p in &report.problems {
            println!("{p}");
        }
    }
    println!("{}", report.summary());
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
