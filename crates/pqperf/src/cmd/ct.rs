//! `pqperf ct`: constant-time evidence per operation (valgrind memcheck with the secret
//! inputs marked undefined); see the `pqperf-ct` crate.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::PhaseStatus;
use pqperf_model::layout::RunLayout;

/// Arguments of `pqperf ct`.
#[derive(clap::Args)]
pub struct CtArgs {
    /// Run directory (needs build.json: run `pqperf build` first).
    #[arg(long, default_value = pqperf_build::DEFAULT_RUN_DIR)]
    run_dir: PathBuf,
    /// Catalog file (default: <run-dir>/catalog.toml).
    #[arg(long)]
    catalog: Option<PathBuf>,
    /// Only instances whose <id>/<label> matches this regex (searched).
    #[arg(long)]
    only: Option<String>,
    /// Accepted-findings table (`ID;Label;Operation;Location;Function;Reason`; default: the
    /// table shipped in crates/ct/accepted_findings.csv).
    #[arg(long)]
    accepted: Option<PathBuf>,
    /// Per-operation timeout under valgrind, seconds.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Instances checked concurrently.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

/// Options from the arguments.
fn options(args: CtArgs) -> anyhow::Result<pqperf_ct::CtOptions> {
    anyhow::ensure!(args.timeout > 0.0, "--timeout must be positive");
    let mut o = pqperf_ct::CtOptions::new(args.run_dir);
    o.catalog = args.catalog;
    o.select = super::only(args.only.as_deref())?;
    o.accepted = args.accepted;
    o.timeout = std::time::Duration::from_secs_f64(args.timeout);
    o.jobs = args.jobs.max(1);
    o.progress = !super::ui::quiet();
    Ok(o)
}

/// Run the check and print one line per instance; the same for the campaign phase.
/// In a campaign phase (`log`), the `CT` lines go to the campaign log (printed once, and kept
/// in campaign.log) and the summary is left to the phase's own line.
pub fn check(
    opts: &pqperf_ct::CtOptions,
    log: Option<&pqperf_campaign::Logger>,
) -> anyhow::Result<pqperf_ct::CtSummary> {
    // A long step: valgrind runs every operation of every instance (minutes).
    // On a terminal a spinner with the elapsed time replaces the per-instance lines (which
    // would break it); elsewhere those lines and a line every 30 s show progress.
    let beat = super::ui::Heartbeat::start("ct: valgrind memcheck of every operation");
    let mut opts = opts.clone();
    if beat.is_spinner() {
        opts.progress = false;
    }
    let opts = &opts;
    let s = pqperf_ct::run(opts).context("ct");
    drop(beat);
    let s = s?;
    // `--quiet`: only the instances with findings that are not accepted.
    for ev in &s.evidence {
        let unaccepted: u64 = ev.operations.iter().map(|o| o.findings).sum();
        if !super::ui::quiet() || unaccepted > 0 {
            let l = format!("CT {}/{}: {}", ev.candidate, ev.label, pqperf_ct::line(ev));
            match log {
                Some(log) => log.log(l),
                None => println!("{l}"),
            }
        }
    }
    if log.is_some() {
        return Ok(s);
    }
    let findings: u64 = s
        .evidence
        .iter()
        .flat_map(|e| &e.operations)
        .map(|o| o.findings)
        .sum();
    println!(
        "ct: {} instance(s) in {:.1} s, {findings} finding group(s) not accepted; evidence in {}",
        s.evidence.len(),
        s.seconds,
        RunLayout::new(&opts.run_dir).ct_dir().display()
    );
    Ok(s)
}

pub fn run(args: CtArgs) -> anyhow::Result<ExitCode> {
    let o = options(args)?;
    super::existing_run_dir(&o.run_dir)?;
    let bj = RunLayout::new(&o.run_dir).build_json();
    if !bj.is_file() {
        return super::refuse(format!(
            "ct: {} does not exist: run `pqperf build --run-dir {}` first",
            bj.display(),
            o.run_dir.display()
        ));
    }
    let stale = pqperf_build::stale_builds(&o.run_dir, o.catalog.as_deref(), &o.select)?;
    if !stale.is_empty() {
        return super::refuse(pqperf_build::stale_refusal("ct", &o.run_dir, &stale));
    }
    let _lock = pqperf_campaign::lock_run_dir(&o.run_dir, false)?;
    let s = check(&o, None)?;
    if s.evidence.is_empty() {
        return super::refuse(match o.select.only_pattern() {
            Some(p) => format!(
                "ct: --only {p:?} selects no built instance of {} (it is searched in <id>/<label>)",
                bj.display()
            ),
            None => format!("ct: {} lists no built instance", bj.display()),
        });
    }
    Ok(ExitCode::SUCCESS)
}

/// The campaign phase `ct` (off by default: not part of `all`; `demo` runs it on its set).
pub fn add_hooks(h: &mut pqperf_campaign::Hooks) {
    h.provide(
        pqperf_campaign::Phase::Ct,
        Box::new(|ctx| {
            let run = &ctx.opts.run_dir;
            // Resumable like the other phases: an instance whose ct evidence names the built
            // library is kept; evidence of another library is stale (checked again, or kept
            // with --keep-stale and said so); --redo checks everything again.
            let built = pqperf_campaign::load_build(run)?;
            let mut stale = pqperf_campaign::EvidenceCheck::new(ctx.opts, ctx.log, ctx.opts.redo);
            let todo: Vec<String> = built
                .instances
                .iter()
                .filter(|(_, e)| {
                    ctx.opts.select.selects(&e.candidate, &e.label) && e.kat != "BUILDFAIL"
                })
                .filter(|(_, e)| {
                    let p = ctx.opts.layout().ct(&e.candidate, &e.label);
                    !p.exists()
                        || stale.redo_json(&p, &["library_sha256"], e.library_sha256.as_deref())
                })
                .map(|(k, _)| k.clone())
                .collect();
            stale.finish()?;
            if todo.is_empty() {
                ctx.log
                    .log("phase ct: every selected instance has ct evidence of its built library");
                return Ok(PhaseStatus::Done);
            }
            let mut o = pqperf_ct::CtOptions::new(run);
            o.select = pqperf_model::select::Selection::keys(todo);
            o.progress = !super::ui::quiet();
            // A failing check (valgrind missing, bad accepted table) is logged; the campaign
            // goes on and keeps what it recorded.
            let s = match check(&o, Some(ctx.log)) {
                Ok(s) => s,
                Err(e) => {
                    ctx.log.log(format!("phase ct: not run: {e:#}"));
                    return Ok(PhaseStatus::Failed);
                }
            };
            let findings: u64 = s
                .evidence
                .iter()
                .flat_map(|e| &e.operations)
                .map(|o| o.findings)
                .sum();
            ctx.log.log(format!(
                "phase ct: {} instance(s) in {:.1} s, {findings} finding group(s) not accepted",
                s.evidence.len(),
                s.seconds
            ));
            Ok(PhaseStatus::Done)
        }),
    );
}
