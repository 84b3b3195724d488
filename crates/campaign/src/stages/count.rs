//! The `count` phase (part of `all`): deterministic instruction counts per operation under
//! valgrind's callgrind (`pqperf-count`, docs/counting.md), and the run with its lines that
//! `pqperf count` prints too. Without valgrind the phase says so in the log and in
//! campaign.json (`pqperf.count`) and ends done: counts are extra evidence, never a reason
//! to fail a campaign.

use anyhow::Context;
use pqperf_model::layout::RunLayout;

use crate::observe::Heartbeat;
use crate::{CampaignOptions, Exit, PhaseCtx, PhaseError};

/// The count options of a campaign's selection (the measured instances).
pub fn options(opts: &CampaignOptions) -> anyhow::Result<pqperf_count::CountOptions> {
    let insts = crate::selected(opts, crate::measurable(opts)?);
    let mut o = pqperf_count::CountOptions::new(&opts.run_dir, insts)?;
    o.redo = opts.redo;
    o.progress = opts.echo;
    Ok(o)
}

/// Counts and prints one line per operation (not at `quiet`) and a summary line (not
/// `in_phase`: the campaign phase logs the summary line itself, so it is printed once).
pub fn count(
    o: &pqperf_count::CountOptions,
    quiet: bool,
    in_phase: bool,
) -> anyhow::Result<pqperf_count::CountSummary> {
    let beat = Heartbeat::start("count: callgrind instruction counts per operation", quiet);
    let mut o = o.clone();
    if beat.is_spinner() {
        o.progress = false;
    }
    let s = pqperf_count::run(&o).context("count");
    drop(beat);
    let s = s?;
    if !quiet && !o.progress {
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
    if !in_phase {
        println!("{}", summary_line(&s, &o.run_dir));
    }
    Ok(s)
}

/// `count: N operation(s) in … s (… counted, … refused, … failed, … kept); evidence in …`.
pub fn summary_line(s: &pqperf_count::CountSummary, run_dir: &std::path::Path) -> String {
    let n = |st: &str| s.evidence.iter().filter(|e| e.status == st).count();
    let impossible = s
        .evidence
        .iter()
        .filter(|e| e.timing_check.as_ref().is_some_and(|t| t.impossible()))
        .count();
    format!(
        "count: {} operation(s) in {:.1} s ({} counted, {} refused, {} failed, {} kept{}{}); evidence in {}",
        s.evidence.len(),
        s.seconds,
        n("counted"),
        n("refused"),
        n("failed"),
        s.kept,
        if s.rechecked.is_empty() {
            String::new()
        } else {
            format!(
                ", {} timing cross-check(s) brought up to date",
                s.rechecked.len()
            )
        },
        if impossible > 0 {
            format!(
                ", {impossible} IMPOSSIBLE timing(s): a timed figure below what the counted instructions allow"
            )
        } else {
            String::new()
        },
        RunLayout::new(run_dir).count_dir().display()
    )
}

/// The `count` phase.
pub fn phase(ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
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
        let why =
            "valgrind is not installed: no instruction counts (they need valgrind's callgrind)";
        ctx.log.log(format!("phase count: not run: {why}"));
        eprintln!("count: not run: {why}");
        note("not run", Some(why.to_string()))?;
        // The counts made before still get the cross-check of the records now.
        let insts = crate::selected(ctx.opts, crate::measurable(ctx.opts).unwrap_or_default());
        match pqperf_count::refresh_timing_checks(&ctx.opts.run_dir, &insts, &[]) {
            Ok(r) if !r.is_empty() => ctx.log.log(format!(
                "phase count: timing cross-check of {} count(s) brought up to date",
                r.len()
            )),
            Ok(_) => {}
            Err(e) => ctx.log.log(format!("phase count: timing cross-check: {e}")),
        }
        return Ok(Exit::Done);
    }
    let o = match options(ctx.opts) {
        Ok(o) => o,
        Err(e) => {
            ctx.log.log(format!("phase count: not run: {e:#}"));
            return Ok(Exit::Failed);
        }
    };
    if o.instances.is_empty() {
        ctx.log
            .log("phase count: no measurable instance selected (KAT PASS needed)");
        note("not run", Some("no measurable instance selected".into()))?;
        return Ok(Exit::Done);
    }
    let s = match count(&o, !ctx.opts.echo, true) {
        Ok(s) => s,
        Err(e) => {
            ctx.log.log(format!("phase count: failed: {e:#}"));
            note("failed", Some(format!("{e:#}")))?;
            return Ok(Exit::Failed);
        }
    };
    ctx.log
        .log(format!("phase {}", summary_line(&s, &o.run_dir)));
    note("done", None)?;
    Ok(Exit::Done)
}
