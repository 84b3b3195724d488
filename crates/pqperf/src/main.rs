//! `pqperf`: the command-line front end. Each subcommand lives in its own module under
//! `cmd/` and only parses arguments and calls into the stage crates; no stage logic here.

#![forbid(unsafe_code)]

mod cmd;

use clap::{Parser, Subcommand};
use pqperf_campaign::Exit;

/// mimalloc for pqperf's own work, the C library's malloc in the children that run candidate
/// code (see `pqperf_alloc`).
#[global_allocator]
static ALLOC: pqperf_alloc::PqAlloc = pqperf_alloc::PqAlloc;

/// Reproducible, evidence-backed performance harness for post-quantum public-key cryptography.
///
/// Pipeline: import → build → kat → check → calibrate → measure → profile → publish →
/// validate → report → site. `pqperf demo` runs all of it on the PQClean corpus.
#[derive(Parser)]
#[command(name = "pqperf", version, about, long_about = None, propagate_version = true,
    after_help = Exit::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print only errors, warnings and the results asked for (tables, lists, JSON, summary
    /// lines): no status lines, no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: the commands each step runs, the options in force, details per unit.
    #[arg(short, long, global = true)]
    verbose: bool,
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
    /// Deterministic instruction counts: run each operation under valgrind's callgrind,
    /// counting only the operation; evidence in <run>/count/ (also `campaign count`).
    Count(cmd::count::CountArgs),
    /// Report host problems and the environment snapshot for a benchmark CPU.
    Check(cmd::measure::CheckArgs),
    /// Run campaign phases in a run directory (check, build, kat, calibrate, measure, profile,
    /// baseline, hashcost, publish, all).
    Campaign(cmd::measure::CampaignArgs),
    /// Demo: import PQClean, build, KAT, measure a representative set briefly, publish,
    /// validate and render the site (exit status 1, the phases named, when any failed).
    Demo(cmd::demo::DemoArgs),
    /// Compare two campaigns (datasets or run directories): per operation the ratio B/A of
    /// the robust estimates with its bootstrap interval and a verdict faster/slower/no change.
    Compare(cmd::compare::CompareArgs),
    /// Interleaved A/B measurement (the recommended CI gate): two libraries measured
    /// alternately in fresh pinned processes, ratio from the pairs, verdict per operation.
    Ab(cmd::ab::AbArgs),
    /// Build the static HTML site from a published dataset.
    Site(cmd::site::SiteArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(cmd::meta::CompletionsArgs),
    /// Print the manual page (roff) on stdout, or write one page per command into a folder.
    Man(cmd::meta::ManArgs),
    /// Internal: one hash-profiling child process (pqperf re-executes itself).
    #[command(hide = true)]
    Hashprof(cmd::profile::HashprofArgs),
    /// Internal: an untimed replay of a timing process, whose output digest the parent
    /// compares with the timed one (`pqperf_measure::outcheck`).
    #[command(hide = true)]
    ReplayChild(cmd::profile::HashprofArgs),
}

impl Command {
    /// The containment options of a command that runs candidate code (`None` for the
    /// commands that only read evidence, and for the hidden children, which their parent
    /// contains).
    fn containment(&self) -> Option<&cmd::sandbox::Containment> {
        match self {
            Command::Import(a) => Some(&a.contain),
            Command::Build(a) => Some(&a.contain),
            Command::Kat(a) => Some(&a.contain),
            Command::Ct(a) => Some(&a.contain),
            Command::Count(a) => Some(&a.contain),
            Command::Campaign(a) => Some(&a.contain),
            Command::Demo(a) => Some(&a.contain),
            Command::Ab(a) => Some(&a.contain),
            _ => None,
        }
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    cmd::ui::set(if cli.quiet {
        cmd::ui::Level::Quiet
    } else if cli.verbose {
        cmd::ui::Level::Verbose
    } else {
        cmd::ui::Level::Normal
    });
    // Children that run candidate code keep the C library's allocator: their RSS is evidence.
    if !matches!(
        cli.command,
        Command::KatChild(_) | Command::Hashprof(_) | Command::ReplayChild(_)
    ) {
        pqperf_alloc::use_mimalloc();
    }
    if let Some(c) = cli.command.containment() {
        c.apply();
    }
    if !matches!(
        cli.command,
        Command::KatChild(_) | Command::Hashprof(_) | Command::ReplayChild(_)
    ) {
        // An orchestrator: SIGINT/SIGTERM end every contained child before pqperf.
        pqperf_ffi::untrusted::end_children_on_termination();
    }
    if matches!(
        cli.command,
        Command::Campaign(_) | Command::Demo(_) | Command::Ab(_) | Command::Count(_)
    ) {
        cmd::ensure_lean_driver();
        // The timed outputs are checked against replays in this executable.
        if let Ok(exe) = std::env::current_exe() {
            pqperf_measure::outcheck::set_replay_exe(exe);
        }
    }
    quiet_on_closed_stdout();
    let result = match cli.command {
        Command::Report(a) => cmd::report::run_report(a),
        Command::Validate(a) => cmd::validate::run_validate(a),
        Command::Iccs(a) => cmd::iccs::run(a),
        Command::Import(a) => cmd::build::run_import(a),
        Command::Build(a) => cmd::build::run_build(a),
        Command::Kat(a) => cmd::build::run_kat(a),
        Command::KatChild(a) => cmd::build::run_kat_child(a),
        Command::Ct(a) => cmd::ct::run(a),
        Command::Count(a) => cmd::count::run(a),
        Command::Check(a) => cmd::measure::run_check(a),
        Command::Campaign(a) => cmd::measure::run_campaign(a),
        Command::Demo(a) => cmd::demo::run_demo(a),
        Command::Site(a) => cmd::site::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Completions(a) => {
            cmd::meta::run_completions(a, <Cli as clap::CommandFactory>::command())
        }
        Command::Man(a) => cmd::meta::run_man(a, <Cli as clap::CommandFactory>::command()),
        Command::Ab(a) => cmd::ab::run(a),
        Command::Hashprof(a) => cmd::profile::run_hashprof(a),
        Command::ReplayChild(a) => Ok(cmd::code(pqperf_measure::outcheck::replay_child_main(
            &a.args,
        ))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pqperf: error: {}", cmd::error_chain(&e));
            if e.downcast_ref::<cmd::Refused>().is_some() {
                Exit::Refused.into()
            } else {
                Exit::Failed.into()
            }
        }
    }
}

/// A reader that leaves early (`pqperf completions zsh | head`) closes stdout: `println!` then
/// panics with EPIPE. That is not an error of pqperf's: the process ends quietly, with the
/// status a shell reports for a writer ended by SIGPIPE (141), and no panic message.
fn quiet_on_closed_stdout() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        // `println!` says "failed printing to stdout: Broken pipe"; clap_complete's writer
        // "failed to write completion file: … BrokenPipe …".
        if msg.contains("Broken pipe") || msg.contains("BrokenPipe") {
            std::process::exit(141);
        }
        previous(info);
    }));
}
