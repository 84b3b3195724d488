//! The hidden `pqperf hashprof …`, the hash-profiling driver child of the `profile` phase
//! (pqperf re-executes itself, like the timing driver; the phase itself is the campaign's,
//! `pqperf_campaign::stages::profile`). Its arguments are the
//! timing driver's, optionally preceded by `--plain`; see `pqperf_profile::hashprof`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct HashprofArgs {
    /// Driver arguments: `[--plain] LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N] [NIST options]` (see `pqperf_measure::driver::DriverArgs`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn run_hashprof(a: HashprofArgs) -> anyhow::Result<ExitCode> {
    let code = pqperf_profile::hashprof::child_main(&a.args, &mut std::io::stderr().lock());
    Ok(super::code(code))
}
