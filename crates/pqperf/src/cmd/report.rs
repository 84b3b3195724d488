//! `pqperf report` and `pqperf validate`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ReportArgs {}

pub fn run_report(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct ValidateArgs {}

pub fn run_validate(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
