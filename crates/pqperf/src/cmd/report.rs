//! `pqperf report`: Markdown pages from a dataset.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ReportArgs {}

pub fn run_report(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
