//! `pqperf validate`: semantic checks of a published dataset.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ValidateArgs {}

pub fn run_validate(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
