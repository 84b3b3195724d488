//! `pqperf ct`: constant-time evidence per operation (valgrind memcheck with the secret
//! inputs marked undefined); see the `pqperf-ct` crate.

use std::path::PathBuf;
use std::process::ExitCode;

use pqperf_campaign::Exit;
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

/// Run the check and print one line per instance (the campaign's `ct` phase does the same).
fn check(opts: &pqperf_ct::CtOptions) -> anyhow::Result<pqperf_ct::CtSummary> {
    pqperf_campaign::stages::ct::check(opts, super::ui::quiet(), None)
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
    let s = check(&o)?;
    if s.evidence.is_empty() {
        return super::refuse(match o.select.only_pattern() {
            Some(p) => format!(
                "ct: --only {p:?} selects no built instance of {} (it is searched in <id>/<label>)",
                bj.display()
            ),
            None => format!("ct: {} lists no built instance", bj.display()),
        });
    }
    Ok(Exit::Done.into())
}
