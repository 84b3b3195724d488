//! `pqperf iccs ...`: vector checks of the ICCS primitives and generators.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct IccsArgs {}

pub fn run(_args: IccsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
