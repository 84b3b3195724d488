//! `pqperf site`: the static HTML site.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SiteArgs {}

pub fn run(_args: SiteArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
