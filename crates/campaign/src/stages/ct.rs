//! The `ct` phase (off by default: not part of `all`; `demo` runs it on its set), and the
//! check with its lines that `pqperf ct` prints too.

use anyhow::Context;
use pqperf_model::layout::RunLayout;

use crate::observe::Heartbeat;
use crate::rundir::load_build;
use crate::{EvidenceCheck, Exit, PhaseCtx, PhaseError};

/// Runs the check and prints one line per instance (at `quiet`, only the instances with
/// findings that are not accepted) and a summary line. In the campaign phase (`log`) the `CT`
/// lines go to the campaign log (printed once, and kept in campaign.log) and the summary is
/// left to the phase's own line.
pub fn check(
    opts: &pqperf_ct::CtOptions,
    quiet: bool,
    log: Option<&crate::Logger>,
) -> anyhow::Result<pqperf_ct::CtSummary> {
    // A long step: valgrind runs every operation of every instance (minutes).
    // On a terminal a spinner with the elapsed time replaces the per-instance lines (which
    // would break it); elsewhere those lines and a line every 30 s show progress.
    let beat = Heartbeat::start("ct: valgrind memcheck of every operation", quiet);
    let mut opts = opts.clone();
    if beat.is_spinner() {
        opts.progress = false;
    }
    let opts = &opts;
    let s = pqperf_ct::run(opts).context("ct");
    drop(beat);
    let s = s?;
    for ev in &s.evidence {
        let unaccepted: u64 = ev.operations.iter().map(|o| o.findings).sum();
        if !quiet || unaccepted > 0 {
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
    println!(
        "ct: {} instance(s) in {:.1} s, {} finding group(s) not accepted; evidence in {}",
        s.evidence.len(),
        s.seconds,
        findings(&s),
        RunLayout::new(&opts.run_dir).ct_dir().display()
    );
    Ok(s)
}

fn findings(s: &pqperf_ct::CtSummary) -> u64 {
    s.evidence
        .iter()
        .flat_map(|e| &e.operations)
        .map(|o| o.findings)
        .sum()
}

/// The `ct` phase, resumable like the others: an instance whose ct evidence names the built
/// library is kept; evidence of another library is stale (checked again, or kept with
/// --keep-stale and said so); --redo checks everything again.
pub fn phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    let run = &ctx.opts.run_dir;
    let built = load_build(run)?;
    let mut stale = EvidenceCheck::new(ctx.opts, ctx.log, ctx.opts.redo);
    let todo: Vec<String> = built
        .instances
        .iter()
        .filter(|(_, e)| ctx.opts.select.selects(&e.candidate, &e.label) && e.kat != "BUILDFAIL")
        .filter(|(_, e)| {
            let p = ctx.opts.layout().ct(&e.candidate, &e.label);
            !p.exists() || stale.redo_json(&p, &["library_sha256"], e.library_sha256.as_deref())
        })
        .map(|(k, _)| k.clone())
        .collect();
    stale.finish()?;
    if todo.is_empty() {
        ctx.log
            .log("phase ct: every selected instance has ct evidence of its built library");
        return Ok(Exit::Done);
    }
    let mut o = pqperf_ct::CtOptions::new(run);
    o.select = pqperf_model::select::Selection::keys(todo);
    o.progress = ctx.opts.echo;
    // A failing check (valgrind missing, bad accepted table) is logged; the campaign goes on
    // and keeps what it recorded.
    let s = match check(&o, !ctx.opts.echo, Some(ctx.log)) {
        Ok(s) => s,
        Err(e) => {
            ctx.log.log(format!("phase ct: not run: {e:#}"));
            return Ok(Exit::Failed);
        }
    };
    ctx.log.log(format!(
        "phase ct: {} instance(s) in {:.1} s, {} finding group(s) not accepted",
        s.evidence.len(),
        s.seconds,
        findings(&s)
    ));
    Ok(Exit::Done)
}
