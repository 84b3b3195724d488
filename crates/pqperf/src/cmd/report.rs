//! `pqperf report`: Markdown pages from a dataset.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ReportArgs {}

pub fn run_report(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
