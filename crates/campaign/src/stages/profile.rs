//! The `profile`, `baseline` and `hashcost` phases of `pqperf-profile`, and the survey merge
//! after `publish`. Each shows that it runs (a spinner with the elapsed time on a terminal, a
//! line every 30 s elsewhere) through the campaign's progress: these phases have no estimate
//! of their length.

use pqperf_profile::phase::{ChildExe, ProfileOptions};

use crate::{CampaignOptions, EvidenceCheck, Exit, PhaseCtx, PhaseError};

/// The `profile` phase: the selected measurable instances profiled under one profiler lock
/// per shard (method.md §2.3); a profile of another library than the built one is stale:
/// done again, or kept with --keep-stale (campaign.json `pqperf.stale_kept`).
pub fn profile_phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    let child = ChildExe::current_pqperf().map_err(|e| PhaseError::stage("profile", e))?;
    with_progress(ctx, "profile", |ctx| profile_instances(ctx, &child))
}

fn profile_instances(ctx: &PhaseCtx, child: &ChildExe) -> Result<Exit, PhaseError> {
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
    let insts = crate::selected(opts, crate::measurable(opts)?);
    let popts = ProfileOptions {
        run_dir: opts.run_dir.clone(),
        cpu: Some(opts.cpu),
        target_s: opts.planning.trial_target_s,
        prep_share: opts.profile_prep_share,
        child: child.clone(),
    };
    let log = |m: String| ctx.log.log(m);
    let mut check = EvidenceCheck::new(opts, ctx.log, opts.redo);
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
    Ok(Exit::Done)
}

/// The `baseline` phase: build and self-test the ICCS helper instances (refused with
/// `--shard`, like the reference, and when the host state differs from the run's records).
/// Their timing follows in the calibrate and measure phases (category `iccs`), which
/// `campaign all` runs next.
pub fn baseline_phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    with_progress(ctx, "baseline", baseline)
}

fn baseline(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    let opts = ctx.opts;
    if opts.shard.is_some() {
        ctx.log.log("baseline: refused with --shard");
        return Ok(Exit::Refused);
    }
    if let Some(diff) =
        pqperf_profile::phase::host_state_difference(&opts.run_dir, opts.cpu, ctx.environment)
    {
        ctx.log.log(format!(
            "baseline: host state differs from the run's records; not measuring: {diff}"
        ));
        return Ok(Exit::Refused);
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
        use crate::baseline_cache;
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
        Exit::Done
    } else {
        Exit::Failed
    })
}

/// The `hashcost` phase, under its host-wide lock.
pub fn hashcost_phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    with_progress(ctx, "hashcost", |ctx| {
        let _lock =
            pqperf_ffi::procinfo::lock_exclusive(&ctx.opts.lock_dir().join(".hashcost.lock"))
                .map_err(|source| PhaseError::Lock {
                    name: "hashcost",
                    source,
                })?;
        let log = |m: String| ctx.log.log(m);
        pqperf_profile::hashcost::run_hashcost(&ctx.opts.run_dir, Some(ctx.opts.cpu), &log)
            .map_err(|e| PhaseError::stage("hashcost", e))?;
        Ok(Exit::Done)
    })
}

/// Runs a phase inside the campaign's progress display (no estimate: a spinner).
fn with_progress<T>(ctx: &PhaseCtx, label: &str, f: impl FnOnce(&PhaseCtx) -> T) -> T {
    ctx.log.progress_begin(label, 0.0);
    let r = f(ctx);
    ctx.log.progress_end();
    r
}

/// After `publish`: merge the run's derived survey verdicts into the dataset's
/// `performance/symmetric_survey.csv` (curated rows win).
pub fn publish_survey(opts: &CampaignOptions) -> Result<(), PhaseError> {
    let dest = opts
        .publish_to
        .clone()
        .unwrap_or_else(|| opts.layout().default_dataset());
    if !pqperf_profile::survey::read_run_surveys(&opts.run_dir).is_empty() {
        let n = pqperf_profile::survey::write_dataset_survey(&opts.run_dir, &dest)
            .map_err(|e| PhaseError::stage("profile", e))?;
        if opts.echo {
            eprintln!("publish: symmetric_survey.csv with {n} candidate(s)");
        }
    }
    Ok(())
}
