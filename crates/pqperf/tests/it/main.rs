//! The integration tests of `pqperf`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

#[path = "../common/mod.rs"]
mod common;

mod buildkat;
mod cli_conventions;
mod console_once;
mod count_cli;
mod crash_safe;
mod header_names;
mod held_process;
mod honest_pages;
mod hostile;
mod hostile_dataset;
mod hostile_forgery;
mod hostile_inputs;
mod hostile_irq;
mod hostile_output;
mod hostile_privilege;
mod hostile_reshape;
mod hostile_sandbox;
mod hostile_timing;
mod hostile_wait;
mod iccs_bench_cli;
mod iccs_provider_pages;
mod independent_streams;
mod measure_campaign;
mod measure_mldsa;
mod messy_imports;
mod profile_cli;
mod report_cli;
mod retest;
mod stale_evidence;
mod streams;
mod validate_cli;
mod verdicts;
