//! `pqperf check`, `pqperf campaign`, `pqperf demo` and the hidden driver child.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {}

pub fn run_check(_args: CheckArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct CampaignArgs {}

pub fn run_campaign(_args: CampaignArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct DemoArgs {}

pub fn run_demo(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}

#[derive(clap::Args)]
pub struct DriverArgs {}

pub fn run_driver(_args: DriverArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
