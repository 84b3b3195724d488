//! `pqperf site`: the static HTML site.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SiteArgs {}

pub fn run(_args: SiteArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
