//! `pqperf count` (the campaign phase `count` is the campaign's, `pqperf_campaign::stages::count`):
//! deterministic instruction counts per operation under valgrind's callgrind (under an
//! emulator, `PQPERF_EMULATOR`, with pqperf's TCG plugin); see the
//! `pqperf-count` crate and docs/counting.md. Without valgrind the phase says so in the log
//! and in campaign.json (`pqperf.count`) and ends done: counts are extra evidence, never a
//! reason to fail a campaign.

use std::path::PathBuf;
use std::process::ExitCode;

use pqperf_campaign::CampaignOptions;
use pqperf_campaign::Exit;
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

use pqperf_campaign::stages::count::options;

/// Count and print one line per operation and a summary line (as the campaign phase does).
fn count(o: &pqperf_count::CountOptions) -> anyhow::Result<pqperf_count::CountSummary> {
    pqperf_campaign::stages::count::count(o, super::ui::quiet(), false)
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
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}
