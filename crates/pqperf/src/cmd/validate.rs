//! `pqperf validate`: semantic checks of a published dataset.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ValidateArgs {}

pub fn run_validate(_args: ValidateArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
