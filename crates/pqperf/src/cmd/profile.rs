//! The profile stage in the CLI: the campaign phases `profile`, `baseline` and `hashcost`
//! adapted from `pqperf-profile` (which knows no orchestrator), the survey merge after
//! `publish`, and the hidden `pqperf hashprof …`, the hash-profiling driver child of the
//! `profile` phase (pqperf re-executes itself, like the timing driver). Its arguments are the
//! timing driver's, optionally preceded by `--plain`; see `pqperf_profile::hashprof`.

use std::process::ExitCode;

use pqperf_campaign::{self as campaign, PhaseCtx, PhaseError, PhaseStatus};
use pqperf_profile::phase::{ChildExe, ProfileOptions};

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

/// The campaign hooks of the profile stage: `profile`, `baseline`, `hashcost`, adapted here
/// (the stage knows no orchestrator). Each shows that it runs (a spinner with the elapsed time
/// on a terminal, a line every 30 s elsewhere) through the campaign's progress: these phases
/// have no estimate of their length.
pub fn add_hooks(h: &mut pqperf_campaign::Hooks) {
    h.provide(
        pqperf_campaign::Phase::Profile,
        Box::new(|ctx| {
            let child = pqperf_profile::phase::ChildExe::current_pqperf()
                .map_err(|e| PhaseError::stage("profile", e))?;
            with_progress(ctx, "profile", |ctx| profile_phase(ctx, &child))
        }),
    );
    h.provide(
        pqperf_campaign::Phase::Baseline,
        Box::new(|ctx| with_progress(ctx, "baseline", baseline_phase)),
    );
    h.provide(
        pqperf_campaign::Phase::Hashcost,
        Box::new(|ctx| with_progress(ctx, "hashcost", hashcost_phase)),
    );
}

/// The `profile` phase: the selected measurable instances profiled under one profiler lock
/// per shard (method.md §2.3); a profile of another library than the built one is stale:
/// done again, or kept with --keep-stale (campaign.json `pqperf.stale_kept`).
fn profile_phase(ctx: &PhaseCtx, child: &ChildExe) -> Result<PhaseStatus, PhaseError> {
    let opts = ctx.opts;
    let lock_name = match opts.shard {
        Some((k, n)) => format!(".profile-{k}of{n}.lock"),
        None => ".profile.lock".to_string(),
    };
    let _lock = pqperf_ffi::procinfo::lock_exclusive(&opts.lock_dir().join(lock_name)).map_err(
        |source| PhaseError::Lock {
            name: "profile",
            source,
        },
    )?;
    let insts = campaign::selected(opts, campaign::measurable(opts)?);
    let popts = ProfileOptions {
        run_dir: opts.run_dir.clone(),
        cpu: Some(opts.cpu),
        target_s: opts.planning.trial_target_s,
        child: child.clone(),
    };
    let log = |m: String| ctx.log.log(m);
    let mut check = campaign::EvidenceCheck::new(opts, ctx.log, opts.redo);
    let s = pqperf_profile::phase::profile_instances_with(
        &popts,
        &insts,
        &log,
        &mut |p, named, built| check.redo(p, named, built),
    )
    .map_err(|e| PhaseError::stage("profile", e))?;
    check.finish()?;
    ctx.log.log(format!(
        "profile: {} written, {} skipped, {} not complete, {} relink failures",
        s.written, s.skipped, s.failed, s.relink_failed
    ));
    Ok(PhaseStatus::Done)
}

/// The `baseline` phase: build and self-test the ICCS helper instances (refused with
/// `--shard`, like the reference, and when the host state differs from the run's records).
/// Their timing follows in the calibrate and measure phases (category `iccs`), which
/// `campaign all` runs next.
fn baseline_phase(ctx: &PhaseCtx) -> Result<PhaseStatus, PhaseError> {
    let opts = ctx.opts;
    if opts.shard.is_some() {
        ctx.log.log("baseline: refused with --shard");
        return Ok(PhaseStatus::Refused);
    }
    if let Some(diff) =
        pqperf_profile::phase::host_state_difference(&opts.run_dir, opts.cpu, ctx.environment)
    {
        ctx.log.log(format!(
            "baseline: host state differs from the run's records; not measuring: {diff}"
        ));
        return Ok(PhaseStatus::Refused);
    }
    let log = |m: String| ctx.log.log(m);
    let s = pqperf_profile::baseline::build_baseline(&opts.run_dir, &log)
        .map_err(|e| PhaseError::stage("baseline", e))?;
    if s.skipped {
        ctx.log
            .log("baseline: every ICCS helper instance is already built");
    }
    // Records of an earlier run of this host and provider (same libraries) are reused.
    if let Some(id) = ctx.system_id {
        use pqperf_campaign::baseline_cache;
        let key = baseline_cache::host_key(opts, id, ctx.environment);
        let r = baseline_cache::reuse(opts, &key).map_err(PhaseError::Campaign)?;
        ctx.log.log(if r.libraries > 0 {
            format!(
                "baseline: reused {} record(s) of {} of {} ICCS helper libraries from an earlier run of this host and provider (host key {key}); they are not timed again",
                r.reused, r.libraries, r.of
            )
        } else {
            format!(
                "baseline: no earlier baseline of this host and provider (host key {key}): the ICCS helpers are timed in this run"
            )
        });
    }
    ctx.log.log(
        "baseline: the ICCS helpers are timed by the calibrate and measure phases (candidate `iccs`)",
    );
    Ok(if s.failed.is_empty() {
        PhaseStatus::Done
    } else {
        PhaseStatus::Failed
    })
}

/// The `hashcost` phase, under its host-wide lock.
fn hashcost_phase(ctx: &PhaseCtx) -> Result<PhaseStatus, PhaseError> {
    let _lock = pqperf_ffi::procinfo::lock_exclusive(&ctx.opts.lock_dir().join(".hashcost.lock"))
        .map_err(|source| PhaseError::Lock {
        name: "hashcost",
        source,
    })?;
    let log = |m: String| ctx.log.log(m);
    pqperf_profile::hashcost::run_hashcost(&ctx.opts.run_dir, Some(ctx.opts.cpu), &log)
        .map_err(|e| PhaseError::stage("hashcost", e))?;
    Ok(PhaseStatus::Done)
}

/// Runs a phase hook inside the campaign's progress display (no estimate: a spinner).
fn with_progress<T>(ctx: &PhaseCtx, label: &str, f: impl FnOnce(&PhaseCtx) -> T) -> T {
    ctx.log.progress_begin(label, 0.0);
    let r = f(ctx);
    ctx.log.progress_end();
    r
}

/// After `campaign publish`: merge the run's derived survey verdicts into the dataset's
/// `performance/symmetric_survey.csv` (curated rows win).
pub fn publish_survey(opts: &pqperf_campaign::CampaignOptions) -> anyhow::Result<()> {
    let dest = opts
        .publish_to
        .clone()
        .unwrap_or_else(|| opts.layout().default_dataset());
    if !pqperf_profile::survey::read_run_surveys(&opts.run_dir).is_empty() {
        let n = pqperf_profile::survey::write_dataset_survey(&opts.run_dir, &dest)?;
        super::ui::note(format!(
            "publish: symmetric_survey.csv with {n} candidate(s)"
        ));
    }
    Ok(())
}
