//! `pqperf import`, `pqperf build`, `pqperf kat`.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ImportArgs {}

pub fn run_import(_args: ImportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct BuildArgs {}

pub fn run_build(_args: BuildArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct KatArgs {}

pub fn run_kat(_args: KatArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
