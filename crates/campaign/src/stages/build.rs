//! The `build` and `kat` phases, resumable like the others: `build` builds the catalog
//! instances (selected by `--only`) that build.json does not list yet or no longer describes;
//! `kat` checks the built instances whose KAT has not run (`NOLOG`) or whose log names
//! another library.

use pqperf_model::select::Selection;

use crate::rundir::{load_build, load_catalog};
use crate::{EvidenceCheck, Exit, PhaseCtx, PhaseError};

/// The `build` phase: not built yet, or built from other inputs / another library than
/// build.json names (a re-import, a build that did not finish): built (again).
pub fn build_phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    let run = &ctx.opts.run_dir;
    let cat = load_catalog(run)?.ok_or_else(|| {
        PhaseError::MissingInput(format!(
            "phase build: no catalog.toml in {}; run `pqperf import …` first",
            run.display()
        ))
    })?;
    let built = load_build(run)?;
    let todo: Vec<String> = cat
        .instances()
        .filter(|(c, i)| ctx.opts.select.selects(&c.id, &i.label))
        .filter(|(c, i)| match built.instances.get(&i.key(c)) {
            None => true,
            Some(e) => match pqperf_build::build_staleness(run, c, i, e) {
                Some(why) => {
                    ctx.log
                        .log(format!("phase build: {}: {why}; built again", i.key(c)));
                    true
                }
                None => false,
            },
        })
        .map(|(c, i)| i.key(c))
        .collect();
    if todo.is_empty() {
        ctx.log
            .log("phase build: every selected instance is in build.json already");
        return Ok(Exit::Done);
    }
    let s = pqperf_build::build(&pqperf_build::BuildOptions {
        run_dir: run.clone(),
        catalog: None,
        select: Selection::keys(todo),
        jobs: 2,
        progress: ctx.opts.echo,
        on_progress: None,
        // The catalog's choice, else the run's remembered one (pqperf build --iccs-provider).
        iccs_provider: None,
        // The run's remembered compiler (pqperf build --cc), else the system default.
        cc: None,
    })
    .map_err(|e| PhaseError::stage("build", e))?;
    ctx.log.log(format!(
        "phase build: {} built, {} BUILDFAIL in {:.1} s",
        s.built.len(),
        s.failed.len(),
        s.seconds
    ));
    for f in &s.failed {
        ctx.log.log(format!("BUILDFAIL {f}"));
    }
    Ok(Exit::Done)
}

/// The `kat` phase: untested (`NOLOG`), or a KAT log that names another library than the
/// built one (stale: tested again, or kept with --keep-stale and said so).
pub fn kat_phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    let run = &ctx.opts.run_dir;
    let built = load_build(run)?;
    let mut check = EvidenceCheck::new(ctx.opts, ctx.log, ctx.opts.redo);
    let todo: Vec<String> = built
        .instances
        .iter()
        .filter(|(_, e)| ctx.opts.select.selects(&e.candidate, &e.label))
        .filter(|(_, e)| {
            if e.kat == "NOLOG" {
                return true;
            }
            let (Some(rel), Some(_)) = (&e.kat_log, &e.library) else {
                return false;
            };
            let path = run.join(rel);
            let named = pqperf_model::KatLog::read(&path, std::path::Path::new(rel))
                .ok()
                .and_then(|l| l.library_sha256().map(str::to_string));
            check.redo(&path, named.as_deref(), e.library_sha256.as_deref())
        })
        .map(|(k, _)| k.clone())
        .collect();
    check.finish()?;
    if todo.is_empty() {
        ctx.log
            .log("phase kat: no built instance is waiting for its KAT check");
        return Ok(Exit::Done);
    }
    let mut opts = pqperf_kat::KatOptions::new(run.clone());
    opts.select = Selection::keys(todo);
    opts.progress = ctx.opts.echo;
    let s = pqperf_kat::run(&opts).map_err(|e| PhaseError::stage("kat", e))?;
    for i in &s.instances {
        ctx.log.log(&i.result_line);
    }
    ctx.log.log(format!(
        "phase kat: {} instance(s) checked in {:.1} s, {} PASS",
        s.instances.len(),
        s.seconds,
        s.count("PASS")
    ));
    Ok(Exit::Done)
}
