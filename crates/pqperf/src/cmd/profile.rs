//! Hidden `pqperf hashprof …`: the hash-profiling driver child of the `profile` phase
//! (pqperf re-executes itself, like the timing driver). Arguments are the timing driver's,
//! optionally preceded by `--plain`; see `pqperf_profile::hashprof`.

use std::process::ExitCode;

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

/// The campaign hooks of the profile stage: `profile`, `baseline`, `hashcost`. Each shows
/// that it runs (a spinner with the elapsed time on a terminal, a line every 30 s elsewhere)
/// through the campaign's progress: these phases have no estimate of their length.
pub fn add_hooks(h: &mut pqperf_campaign::Hooks) {
    h.provide(
        pqperf_campaign::Phase::Profile,
        Box::new(|ctx| {
            let child =
                pqperf_profile::phase::ChildExe::current_pqperf().map_err(|e| e.to_string())?;
            with_progress(ctx, "profile", |ctx| {
                pqperf_profile::phase::run_profile_phase(ctx, &child)
            })
        }),
    );
    h.provide(
        pqperf_campaign::Phase::Baseline,
        Box::new(|ctx| with_progress(ctx, "baseline", pqperf_profile::phase::run_baseline_phase)),
    );
    h.provide(
        pqperf_campaign::Phase::Hashcost,
        Box::new(|ctx| with_progress(ctx, "hashcost", pqperf_profile::phase::run_hashcost_phase)),
    );
}

/// Runs a phase hook inside the campaign's progress display (no estimate: a spinner).
fn with_progress<T>(
    ctx: &pqperf_campaign::PhaseCtx,
    label: &str,
    f: impl FnOnce(&pqperf_campaign::PhaseCtx) -> T,
) -> T {
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
        .unwrap_or_else(|| opts.run_dir.join("dataset"));
    if !pqperf_profile::survey::read_run_surveys(&opts.run_dir).is_empty() {
        let n = pqperf_profile::survey::write_dataset_survey(&opts.run_dir, &dest)?;
        super::ui::note(format!(
            "publish: symmetric_survey.csv with {n} candidate(s)"
        ));
    }
    Ok(())
}
