//! `pqperf count` and the campaign phase `count` (`pqperf campaign count`, part of `all`):
//! deterministic instruction counts per operation under valgrind's callgrind (under an
//! emulator, `PQPERF_EMULATOR`, with pqperf's TCG plugin); see the
//! `pqperf-count` crate and docs/counting.md. Without valgrind the phase says so in the log
//! and in campaign.json (`pqperf.count`) and ends done: counts are extra evidence, never a
//! reason to fail a campaign.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::{CampaignOptions, PhaseStatus};
use pqperf_model::layout::RunLayout;

/// Arguments of `pqperf count`.
#[derive(clap::Args)]
pub struct CountArgs {
    /// Run directory (needs build.json and KAT results: the measured instances are counted).
    #[arg(long, default_value = pqperf_build::DEFAULT_RUN_DIR)]
    run_dir: PathBuf,
    /// Only instances whose <id>/<label> matches this regex (searched).
    #[arg(long)]
    only: Option<String>,
    /// Calls counted per operation (each call is one callgrind profile part). Default: as
    /// many as fit in 10^8 instructions, 1 to 10, from a first count of one call.
    #[arg(long)]
    calls: Option<u64>,
    /// valgrind processes at once (default: one per CPU; counts do not depend on load).
    #[arg(long)]
    jobs: Option<usize>,
    /// Per-operation timeout under valgrind, seconds.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Count again operations whose evidence names the built library.
    #[arg(long)]
    redo: bool,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

/// The count options of a campaign's selection (the measured instances).
fn options(opts: &CampaignOptions) -> anyhow::Result<pqperf_count::CountOptions> {
    let insts = pqperf_campaign::selected(opts, pqperf_campaign::measurable(opts)?);
    let mut o = pqperf_count::CountOptions::new(&opts.run_dir, insts)?;
    o.redo = opts.redo;
    o.progress = !super::ui::quiet();
    Ok(o)
}

/// Count and print one line per operation and a summary line.
fn count(o: &pqperf_count::CountOptions) -> anyhow::Result<pqperf_count::CountSummary> {
    let beat = super::ui::Heartbeat::start("count: callgrind instruction counts per operation");
    let mut o = o.clone();
    if beat.is_spinner() {
        o.progress = false;
    }
    let s = pqperf_count::run(&o).context("count");
    drop(beat);
    let s = s?;
    if !super::ui::quiet() && !o.progress {
        for ev in &s.evidence {
            println!(
                "COUNT {}/{} {}: {}",
                ev.candidate,
                ev.label,
                ev.operation,
                pqperf_count::line(ev)
            );
        }
    }
    println!("{}", summary_line(&s, &o.run_dir));
    Ok(s)
}

fn summary_line(s: &pqperf_count::CountSummary, run_dir: &std::path::Path) -> String {
    let n = |st: &str| s.evidence.iter().filter(|e| e.status == st).count();
    format!(
        "count: {} operation(s) in {:.1} s ({} counted, {} refused, {} failed, {} kept); evidence in {}",
        s.evidence.len(),
        s.seconds,
        n("counted"),
        n("refused"),
        n("failed"),
        s.kept,
        RunLayout::new(run_dir).count_dir().display()
    )
}

/// `pqperf count`.
pub fn run(a: CountArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(a.timeout > 0.0, "--timeout must be positive");
    anyhow::ensure!(a.calls != Some(0), "--calls must be at least 1");
    let bj = RunLayout::new(&a.run_dir).build_json();
    if !bj.is_file() {
        return super::refuse(format!(
            "count: {} does not exist: run `pqperf build --run-dir {}` first",
            bj.display(),
            a.run_dir.display()
        ));
    }
    let Some(tool) = pqperf_count::counting_tool() else {
        return super::refuse(
            "count: valgrind is not installed (instruction counts need valgrind's callgrind; scripts/setup.sh installs it)",
        );
    };
    let mut co = CampaignOptions::new(&a.run_dir)?;
    co.select = super::only(a.only.as_deref())?;
    co.redo = a.redo;
    let stale = pqperf_build::stale_builds(&a.run_dir, None, &co.select)?;
    if !stale.is_empty() {
        return super::refuse(pqperf_build::stale_refusal("count", &a.run_dir, &stale));
    }
    let _lock = pqperf_campaign::lock_run_dir(&a.run_dir, false)?;
    let mut o = options(&co)?;
    if o.instances.is_empty() {
        return super::refuse(format!(
            "count: no measurable instance selected in {} (KAT PASS needed)",
            bj.display()
        ));
    }
    if let Some(n) = a.calls {
        o.calls = n;
        o.auto_calls = false;
    }
    o.timeout = std::time::Duration::from_secs_f64(a.timeout);
    if let Some(j) = a.jobs {
        o.jobs = j.max(1);
    }
    super::ui::detail(format!("count: {tool}, {} calls per operation", o.calls));
    let s = count(&o)?;
    Ok(if s.evidence.iter().any(|e| e.status == "failed") {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The campaign phase `count` (part of `all`).
pub fn add_hooks(h: &mut pqperf_campaign::Hooks) {
    h.provide(
        pqperf_campaign::Phase::Count,
        Box::new(|ctx| {
            let note = |status: &str, reason: Option<String>| {
                ctx.run.try_update_campaign(|c| {
                    let pq = c.pqperf.get_or_insert_with(Default::default);
                    pq.extra.insert(
                        "count".into(),
                        serde_json::json!({
                            "status": status,
                            "reason": reason,
                            "valgrind": pqperf_count::valgrind_version("valgrind"),
                        }),
                    );
                    Ok(())
                })
            };
            if pqperf_count::counting_tool().is_none() {
                let why = "valgrind is not installed: no instruction counts (they need valgrind's callgrind)";
                ctx.log.log(format!("phase count: not run: {why}"));
                eprintln!("count: not run: {why}");
                note("not run", Some(why.to_string()))?;
                return Ok(PhaseStatus::Done);
            }
            let o = match options(ctx.opts) {
                Ok(o) => o,
                Err(e) => {
                    ctx.log.log(format!("phase count: not run: {e:#}"));
                    return Ok(PhaseStatus::Failed);
                }
            };
            if o.instances.is_empty() {
                ctx.log
                    .log("phase count: no measurable instance selected (KAT PASS needed)");
                note("not run", Some("no measurable instance selected".into()))?;
                return Ok(PhaseStatus::Done);
            }
            let s = match count(&o) {
                Ok(s) => s,
                Err(e) => {
                    ctx.log.log(format!("phase count: failed: {e:#}"));
                    note("failed", Some(format!("{e:#}")))?;
                    return Ok(PhaseStatus::Failed);
                }
            };
            ctx.log.log(format!("phase {}", summary_line(&s, &o.run_dir)));
            note("done", None)?;
            Ok(PhaseStatus::Done)
        }),
    );
}
