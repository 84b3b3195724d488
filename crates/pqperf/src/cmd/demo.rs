//! `pqperf demo`: the README's main command (filled in as the stages land).

use std::path::Path;
use std::process::ExitCode;

pub fn run(_run_dir: &Path, _trial_target: f64, _cpu: Option<usize>) -> anyhow::Result<ExitCode> {
    anyhow::bail!("demo: not wired yet")
}
