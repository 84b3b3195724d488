//! `pqperf iccs ...`: vector checks of the ICCS primitives and generators.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct IccsArgs {}

pub fn run(_args: IccsArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
