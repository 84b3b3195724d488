//! `pqperf`: the command-line front end. Each subcommand lives in its own module under
//! `cmd/` and only parses arguments and calls into the stage crates; no stage logic here.

mod cmd;

use clap::{Parser, Subcommand};

/// mimalloc for pqperf's own work, the C library's malloc in the children that run candidate
/// code (see `pqperf_ffi::alloc`).
#[global_allocator]
static ALLOC: pqperf_ffi::alloc::PqAlloc = pqperf_ffi::alloc::PqAlloc;

/// Reproducible, evidence-backed performance harness for post-quantum public-key cryptography.
///
/// Pipeline: import → build → kat → check → calibrate → measure → profile → publish →
/// validate → report → site. `pqperf demo` runs all of it on the PQClean corpus.
#[derive(Parser)]
#[command(name = "pqperf", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render Markdown pages (candidate, summary, method, survey) from a published dataset.
    Report(cmd::report::ReportArgs),
    /// Validate a published dataset: recompute statistics and shares, check KAT log digests,
    /// reject absolute machine paths.
    Validate(cmd::validate::ValidateArgs),
    /// Evaluate ICCS primitives and random generators on hex input (vector checks).
    Iccs(cmd::iccs::IccsArgs),
    /// Import candidates into the catalog (PQClean tree from the pinned crate, ICCS submissions).
    Import(cmd::build::ImportArgs),
    /// Build one shared library per catalog instance with fixed flags; writes build.json.
    Build(cmd::build::BuildArgs),
    /// Regenerate known-answer vectors per instance and compare with the manifests.
    Kat(cmd::build::KatArgs),
    /// Internal: one KAT child process (pqperf re-executes itself per instance).
    #[command(hide = true)]
    KatChild(cmd::build::KatChildArgs),
    /// Constant-time evidence: run each operation under valgrind memcheck with the secret
    /// inputs marked undefined; findings per source location, evidence in <run>/ct/.
    Ct(cmd::ct::CtArgs),
    /// Report host problems and the environment snapshot for a benchmark CPU.
    Check(cmd::measure::CheckArgs),
    /// Run campaign phases in a run directory (check, build, kat, calibrate, measure, profile,
    /// baseline, hashcost, publish, all).
    Campaign(cmd::measure::CampaignArgs),
    /// Demo: import PQClean, build, KAT, measure a representative set briefly, publish,
    /// validate and render the site.
    Demo(cmd::measure::DemoArgs),
    /// Build the static HTML site from one or more datasets.
    Site(cmd::site::SiteArgs),
    /// Internal: one measurement child process (pqperf re-executes itself).
    #[command(hide = true)]
    Driver(cmd::measure::DriverArgs),
    /// Internal: one hash-profiling child process (pqperf re-executes itself).
    #[command(hide = true)]
    Hashprof(cmd::profile::HashprofArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Children that run candidate code keep the C library's allocator: their RSS is evidence.
    if !matches!(
        cli.command,
        Command::Driver(_) | Command::KatChild(_) | Command::Hashprof(_)
    ) {
        pqperf_ffi::alloc::use_mimalloc();
    }
    let result = match cli.command {
        Command::Report(a) => cmd::report::run_report(a),
        Command::Validate(a) => cmd::validate::run_validate(a),
        Command::Iccs(a) => cmd::iccs::run(a),
        Command::Import(a) => cmd::build::run_import(a),
        Command::Build(a) => cmd::build::run_build(a),
        Command::Kat(a) => cmd::build::run_kat(a),
        Command::KatChild(a) => cmd::build::run_kat_child(a),
        Command::Ct(a) => cmd::ct::run(a),
        Command::Check(a) => cmd::measure::run_check(a),
        Command::Campaign(a) => cmd::measure::run_campaign(a),
        Command::Demo(a) => cmd::measure::run_demo(a),
        Command::Site(a) => cmd::site::run(a),
        Command::Driver(a) => cmd::measure::run_driver(a),
        Command::Hashprof(a) => cmd::profile::run_hashprof(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pqperf: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
