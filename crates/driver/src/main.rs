//! Hidden `pqperf driver …`: the timing child (pqperf re-executing itself once per driver
//! process, method §4); it parses the argv written by `pqperf_measure::driver::DriverArgs`,
//! takes its private result channel and runs `pqperf_measure::driver::run`.

use std::process::ExitCode;

use pqperf_measure::driver;

use super::code;

/// The hidden driver child: `pqperf driver LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N] …`.
#[derive(clap::Args)]
pub struct DriverChildArgv {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

pub fn run_driver_child(a: DriverChildArgv) -> anyhow::Result<ExitCode> {
    let args = match driver::DriverArgs::parse(&a.args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            return Ok(code(2));
        }
    };
    // Confine this process and take the private result channel before the library is loaded.
    let mut out = match pqperf_ffi::untrusted::child_enter() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("driver: {e}");
            return Ok(code(2));
        }
    };
    let c = driver::run(&args, &mut out, &mut std::io::stderr());
    Ok(code(c))
}
