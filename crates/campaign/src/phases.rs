//! The measuring phases the campaign runs itself: calibrate, measure and the plan preview.
//! Each walks the selected instances, skips what the run directory already holds for the
//! library that is built now (evidence naming another `library_sha256` is stale and done
//! again, or kept with `--keep-stale`; `--redo` does everything again), and hands one unit
//! at a time to `pqperf-measure`. The measure phase interleaves the driver processes of up to
//! [`INTERLEAVE_WINDOW`] operations (of different instances) in a seeded order, so that a slow
//! drift of the machine spreads over all of them instead of hitting one; each record is
//! written when its operation is done.

use pqperf_measure::calibrate::{cal_path, calibrate_one, ops_of};
use pqperf_measure::instance::{Instance, base_ops};
use pqperf_measure::plan::{self, PlannedOp, plan_all};
use pqperf_measure::record::{MeasureTotals, OpMeasure, rec_path};
use pqperf_model::robust::SplitMix64;
use pqperf_model::vocab::{Category, Counter, Operation};
use serde_json::Value;

use crate::rundir::remove_stale_temps;
use crate::stale::EvidenceCheck;
use crate::{CampaignError, CampaignOptions, Exit, Logger};

type Res<T> = Result<T, CampaignError>;

/// Operations whose driver processes the measure phase interleaves at a time: each round runs
/// [`TURN_CYCLES`] processes (with their re-runs) of every one of them, in an order drawn from
/// [`INTERLEAVE_SEED`]; a finished operation's record is written and the next operation of
/// the plan takes its place. A killed phase loses at most this many unfinished operations.
pub const INTERLEAVE_WINDOW: usize = 8;
/// Times a library's turn of a round runs through its operations (issue 41): each turn
/// times two processes of each of them back to back, so that the library's next process can
/// start beside the one being timed (never beside another library's).
pub const TURN_CYCLES: usize = 2;
/// Processes of the library's turn started ahead, held at their hold gates, beside the one
/// being timed (issue 41): their start-up and preparation get the time of this many
/// processes.
pub const HELD_AHEAD: usize = 2;
/// Seed of the measure phase's interleaved order (ASCII `pqperf30`).
pub const INTERLEAVE_SEED: u64 = 0x7071_7065_7266_3330;

/// One operation being measured: its state, its expected seconds and what it ran so far
/// (processes, seconds inside trials, wall seconds of its steps).
struct Active<'a> {
    p: &'a PlannedOp,
    op: OpMeasure<'a>,
    est: f64,
    run: (f64, f64, f64),
}

/// Stops the phase once a child left a scratch folder that cannot be removed (an immutable
/// file, say): the next candidate's children must not fill the disk further (issue 36).
fn stop_if_scratch_left() -> Res<()> {
    match pqperf_ffi::untrusted::scratch_left_behind().first() {
        Some(m) => Err(CampaignError::msg(format!("stopping the campaign: {m}"))),
        None => Ok(()),
    }
}

pub(crate) fn phase_calibrate(
    opts: &CampaignOptions,
    log: &Logger,
    insts: &[Instance],
    redo: bool,
) -> Res<Exit> {
    let unit = opts.unit();
    let log_line = |m: String| log.log(m);
    let todo: Vec<(&Instance, Operation)> = insts
        .iter()
        .flat_map(|i| base_ops(i.category).into_iter().map(move |o| (i, o)))
        .collect();
    log.progress_begin("calibrate", todo.len() as f64);
    let (mut units, mut had, mut failed) = (0usize, 0usize, 0usize);
    let mut check = EvidenceCheck::new(opts, log, redo);
    let mut one = |inst: &Instance, op: Operation| -> Res<()> {
        units += 1;
        log.progress_item(&format!(
            "{} {} {op}",
            inst.entry.candidate, inst.entry.label
        ));
        let path = cal_path(&opts.run_dir, inst, &op.key());
        if path.exists() {
            let built = inst.entry.library_sha256.as_deref();
            let cal = pqperf_model::calibration::read(&path);
            let named = cal.as_ref().and_then(|c| c.library_sha256());
            if check.redo(&path, named, built) {
                std::fs::remove_file(&path)
                    .map_err(|e| pqperf_model::fsutil::io_err("removing", &path, e))?;
            } else {
                had += 1;
            }
        }
        let v = calibrate_one(&unit, &log_line, inst, op)?;
        if v.t1_s.is_none() {
            failed += 1;
        }
        stop_if_scratch_left()
    };
    for &(inst, op) in &todo {
        one(inst, op)?;
        if inst.category == Some(Category::Kex) {
            for o in ops_of(&opts.run_dir, inst).into_iter().skip(1) {
                one(inst, o)?;
            }
        }
        log.progress_advance(1.0);
    }
    log.progress_end();
    log.log(format!(
        "calibrated {} of {units} unit(s): {had} already calibrated, {failed} failed",
        units - had
    ));
    check.finish()?;
    Ok(Exit::failed_if(failed > 0))
}

/// The `measure estimate check:` line: the phase's estimate against its wall time, the
/// operations' estimates against the seconds their steps took, and the three operations
/// the estimate missed most (in seconds), so that a miss can be explained.
fn estimate_check(est_total: f64, wall: f64, took: &mut [(String, f64, f64)]) -> String {
    let (e, t): (f64, f64) = took
        .iter()
        .fold((0.0, 0.0), |acc, (_, e, t)| (acc.0 + e, acc.1 + t));
    took.sort_by(|a, b| (b.2 - b.1).abs().total_cmp(&(a.2 - a.1).abs()));
    let worst: Vec<String> = took
        .iter()
        .take(3)
        .map(|(n, e, t)| format!("{n} {t:.1} s for {e:.1} s"))
        .collect();
    format!(
        "measure estimate check: estimated {:.1} s, phase wall {wall:.1} s (estimate ÷ wall {:.2}); operations' steps {t:.1} s for {e:.1} s estimated; largest misses: {}",
        est_total,
        if wall > 0.0 {
            est_total / wall
        } else {
            f64::NAN
        },
        worst.join(", ")
    )
}

pub(crate) fn phase_measure(
    opts: &CampaignOptions,
    log: &Logger,
    insts: &[Instance],
    env: &Value,
    counter_info: &Value,
    baseline_key: Option<&str>,
) -> Res<(Exit, MeasureTotals)> {
    let phase_t0 = std::time::Instant::now();
    let unit = opts.unit();
    remove_stale_temps(&opts.layout().records_dir());
    let planned = plan_all(&opts.unit(), insts);
    let mut check = EvidenceCheck::new(opts, log, opts.redo);
    let todo: Vec<&PlannedOp> = planned
        .iter()
        .filter(|p| {
            let path = rec_path(&opts.run_dir, &p.inst, &p.op.key());
            !path.exists()
                || check.redo_json(
                    &path,
                    &["library_sha256"],
                    p.inst.entry.library_sha256.as_deref(),
                )
        })
        .collect();
    check.finish()?;
    let mut totals = MeasureTotals {
        skipped: planned.len() - todo.len(),
        ..Default::default()
    };
    // Likely seconds from the calibrations and the planned calls (sampled trials, setup and
    // memory pass included), the output check's replays and, under --target-ci, the budgets
    // the protocol will likely spend (`PlannedOp::likely`); the remaining time is corrected
    // by how the finished operations compared with their expectation.
    let replay = pqperf_measure::outcheck::replays(&opts.driver());
    // Held processes (`runner::holds_on`) keep most of each process's set-up off the path.
    let held = pqperf_measure::runner::holds_on(&opts.driver(), Some(opts.cpu))
        .then_some(plan::HELD_PATH_PER_PROCESS_S);
    let likely = |p: &PlannedOp| p.likely_on_path(&opts.planning, opts.samples, replay, held);
    // What the plan's seconds on the path leave out (issue 41), per operation: a pool made
    // beside that outlasts its library's other operations (`plan::pool_on_path_s`), and the
    // share of the output check's replay left on the path with held processes.
    let pools_beside = pqperf_measure::relay::pools_beside();
    let extra: std::collections::HashMap<(String, String), (f64, f64)> = todo
        .iter()
        .map(|p| {
            let pool = if pools_beside && p.prep.is_some() {
                let hidden: f64 = todo
                    .iter()
                    .filter(|q| q.prep.is_none() && q.inst.key() == p.inst.key())
                    .map(|q| likely(q).0)
                    .sum();
                (plan::pool_on_path_s(p.prepare_s(opts.samples), hidden)
                    - p.likely_prepare_s(&opts.planning, opts.samples))
                .max(0.0)
            } else {
                0.0
            };
            let (s, procs, _) = likely(p);
            let replayed = if replay && held.is_some() && p.prep.is_none() && procs > 0.0 {
                plan::REPLAY_ON_PATH_SHARE * s / procs
            } else {
                0.0
            };
            ((p.inst.key(), p.op.key().into_owned()), (pool, replayed))
        })
        .collect();
    let extra_of = |p: &PlannedOp| {
        extra
            .get(&(p.inst.key(), p.op.key().into_owned()))
            .copied()
            .unwrap_or((0.0, 0.0))
    };
    let expect = |p: &PlannedOp| {
        let (pool, replayed) = extra_of(p);
        likely(p).0.max(0.1) + pool + replayed
    };
    let est_total: f64 = todo.iter().map(|p| expect(p)).sum();
    let prep_total: f64 = todo
        .iter()
        .map(|p| p.likely_prepare_s(&opts.planning, opts.samples) + extra_of(p).0)
        .sum();
    let replay_total: f64 = todo.iter().map(|p| extra_of(p).1).sum();
    if !todo.is_empty() {
        // The estimate's inputs, so that a miss can be explained.
        let planned: f64 = todo.iter().map(|p| p.expected_s(opts.samples)).sum();
        let budget_ops: Vec<&&PlannedOp> = todo
            .iter()
            .filter(|p| p.likely_spends_budget(&opts.planning))
            .collect();
        let procs: f64 = todo.iter().map(|p| likely(p).1).sum();
        log.log(format!(
            "measure estimate: {} for {} operation(s): planned calls and processes {:.1} s; relayed inputs' preparations on the path {:.1} s (pools made beside at {}× their calls' seconds, less the library's other operations); {} operation(s) likely to spend their --target-ci budget ({:.1} s planned, {:.1} s budget); output-check replays {}; ≈ {:.0} driver processes; load average {:.2} at the start",
            plan::duration_text(est_total),
            todo.len(),
            planned,
            prep_total,
            plan::POOL_BESIDE_SLOWDOWN,
            budget_ops.len(),
            budget_ops.iter().map(|p| p.expected_s(opts.samples)).sum::<f64>(),
            budget_ops
                .iter()
                .filter_map(|p| p.target_ci.map(|c| c.budget_s))
                .sum::<f64>(),
            match (replay, held.is_some()) {
                (false, _) => "none".to_string(),
                (true, true) => format!(
                    "one per operation, beside the path ({replay_total:.1} s left on it)"
                ),
                (true, false) => "one per operation".into(),
            },
            procs,
            pqperf_ffi::procinfo::load_average()[0],
        ));
    }
    log.progress_begin("measure", est_total);
    // The ETA's two classes: the operations likely to spend their --target-ci budget, and
    // the others (`plan::Eta`).
    let class = |p: &PlannedOp| usize::from(p.likely_spends_budget(&opts.planning));
    let mut eta = plan::Eta::new(todo.iter().fold([0.0, 0.0], |mut t, p| {
        t[class(p)] += expect(p);
        t
    }));
    let mut incomplete = 0usize;
    // Per finished operation: its name, estimated and taken seconds (the estimate's check).
    let mut took: Vec<(String, f64, f64)> = Vec::new();
    let n_todo = todo.len();
    let mut queue: std::collections::VecDeque<&PlannedOp> = todo.into_iter().collect();
    let mut active: Vec<Active> = Vec::new();
    let mut rng = SplitMix64::new(INTERLEAVE_SEED);
    loop {
        while active.len() < INTERLEAVE_WINDOW
            && let Some(first) = queue.pop_front()
        {
            // A library's operations enter together, so that its turn has the others to
            // time while a verify/dec pool is made (issue 41).
            let lib = first.inst.key();
            let mut same: Vec<&PlannedOp> = vec![first];
            queue.retain(|q| {
                let mine = q.inst.key() == lib;
                if mine {
                    same.push(q);
                }
                !mine
            });
            for p in same {
                let mut op = OpMeasure::new(&unit, env, counter_info, p);
                // Its next preparation starts with its library's turn (below), never beside
                // another library's timed process.
                op.set_prepare_during(false);
                active.push(Active {
                    p,
                    op,
                    est: expect(p),
                    run: (0.0, 0.0, 0.0),
                });
            }
        }
        if active.is_empty() {
            break;
        }
        let order = round_order(&active, &unit.driver, &mut rng);
        // The round's slots: each library's turn runs its operations' processes
        // TURN_CYCLES times over (a, b, a, b), so that a process of the library is timed
        // beside the start of its next one (issue 41); those with a verify/dec pool after
        // the others' (a, b, a, b, v, v), so that a pool the turn starts is made while the
        // others are timed.
        let mut slots: Vec<usize> = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            let lib = active[i].p.inst.key();
            if k > 0 && active[order[k - 1]].p.inst.key() == lib {
                continue;
            }
            let (pooled, other): (Vec<usize>, Vec<usize>) = order[k..]
                .iter()
                .copied()
                .take_while(|&j| active[j].p.inst.key() == lib)
                .partition(|&j| pools_next(&active[j], &unit.driver));
            for group in [other, pooled] {
                for _ in 0..TURN_CYCLES {
                    slots.extend_from_slice(&group);
                }
            }
        }
        // The processes started beside the one being timed, held at their hold gates (issue
        // 41): the next HELD_AHEAD slots', when they are the same library's.
        let mut held: Vec<(usize, pqperf_measure::runner::Held)> = Vec::new();
        let mut filled = 0usize;
        let mut next = 0usize;
        while next < slots.len() {
            // Slots may be inserted at `k` (below), never before it.
            let k = next;
            next += 1;
            let mut i = slots[k];
            let lib = active[i].p.inst.key();
            if k == 0 || active[slots[k - 1]].p.inst.key() != lib {
                // The library's turn begins: the relayed preparations of its operations
                // start now, beside its other processes of the round (issue 41).
                let mut started: Vec<usize> = Vec::new();
                for &j in &slots[k..] {
                    if active[j].p.inst.key() != lib {
                        break;
                    }
                    if !started.contains(&j) {
                        started.push(j);
                        active[j].op.prepare_next();
                    }
                }
            }
            // The slot's pool is still being made: two processes of the library's other
            // operations take the slot first (the second held beside the first), and the
            // slot comes again after them (issue 41: the measuring CPU waits for a pool only
            // when the library has nothing else to time).
            if pool_pending(&active[i], &unit.driver) {
                let fill = fillers(&active, &slots, k, &unit.driver, &mut filled);
                for (n, &j) in fill.iter().enumerate() {
                    slots.insert(k + n, j);
                }
                for (s, _) in held.iter_mut() {
                    if *s >= k {
                        *s += fill.len();
                    }
                }
                i = slots[k];
            }
            // A held process whose slot this is (ended unused when the operation is done, as
            // one of a slot already passed).
            held.retain(|(s, _)| *s >= k);
            let mut mine = match held.first() {
                Some((s, _)) if *s == k => Some(held.remove(0).1),
                _ => None,
            };
            if active[i].op.done() {
                continue;
            }
            if mine.is_none()
                && let Some(a) = active[i].op.next_args()
            {
                // Started held too (nothing runs beside it yet), so that it has the measuring
                // CPU before the one started beside it; no other library's replay beside it.
                pqperf_measure::outcheck::settle_others(&a.lib);
                mine = active[i].op.start_held();
            }
            // The library's next process starts now, beside this one: its start-up and
            // preparation off the measuring CPU, its warm-ups and windows after this one's
            // last gate. (The same operation's next process only when it surely follows.)
            for ahead in 1..=HELD_AHEAD {
                let Some(&j) = slots.get(k + ahead) else {
                    break;
                };
                if active[j].p.inst.key() != lib {
                    break;
                }
                if active[j].op.done() || held.iter().any(|(s, _)| *s == k + ahead) {
                    continue;
                }
                // Nothing is held for a pool still being made (its place in the measuring
                // CPU's queue would keep the processes that take its slot waiting).
                if pool_pending(&active[j], &unit.driver) {
                    break;
                }
                // The operation's steps before that slot, this one's included.
                let before = slots[k..k + ahead].iter().filter(|&&x| x == j).count();
                match active[j].op.start_held_after(before as u64) {
                    Some(h) => held.push((k + ahead, h)),
                    // Not surely the operation's next: nothing later is started ahead.
                    None => break,
                }
            }
            let a = &mut active[i];
            log.progress_item(&format!(
                "{} {} {}",
                a.p.inst.entry.candidate, a.p.inst.entry.label, a.p.op
            ));
            let t = std::time::Instant::now();
            let before = (totals.attempts, totals.timed_s);
            a.op.step_held(&mut totals, mine);
            a.run.0 += (totals.attempts - before.0) as f64;
            a.run.1 += totals.timed_s - before.1;
            a.run.2 += t.elapsed().as_secs_f64();
            stop_if_scratch_left()?;
        }
        let (done, rest): (Vec<Active>, Vec<Active>) =
            active.into_iter().partition(|a| a.op.done());
        active = rest;
        // The ETA (issue 41) after every operation this round finished: the plan's seconds
        // of the operations not started and of the running ones less what their steps took,
        // at the finished operations' pace; each line gives its inputs, so that a miss can
        // be explained.
        for a in &done {
            eta.finished(class(a.p), a.est, a.run.2);
        }
        let running: Vec<(usize, f64, f64)> = active
            .iter()
            .map(|a| (class(a.p), a.est, a.run.2))
            .collect();
        let left = eta.left(&running);
        for a in done {
            let (p, est) = (a.p, a.est);
            took.push((
                format!("{} {} {}", p.inst.entry.candidate, p.inst.entry.label, p.op),
                est,
                a.run.2,
            ));
            let rec = a.op.finish(&mut totals)?;
            if let Some(key) = baseline_key
                && p.inst.entry.candidate == "iccs"
                && rec.status == "complete"
            {
                // The ICCS helper baseline, kept for later runs of this host and provider.
                crate::baseline_cache::store(
                    &opts.run_dir,
                    key,
                    &rec_path(&opts.run_dir, &p.inst, &p.op.key()),
                    &pqperf_measure::calibrate::cal_path(&opts.run_dir, &p.inst, &p.op.key()),
                )?;
            }
            let what = match (rec.mean_cycles, rec.mean_seconds) {
                (Some(c), _) => format!(
                    "{c:.0} {}",
                    rec.pqperf
                        .as_ref()
                        .and_then(|x| x.extra.get("counter"))
                        .and_then(Value::as_str)
                        .map(|c| if Counter::parse(c).is_core_cycles() {
                            "cycles"
                        } else {
                            "ticks"
                        })
                        .unwrap_or("cycles")
                ),
                (None, Some(s)) => format!("{s:.6} s"),
                _ => String::new(),
            };
            // The robust estimate with its interval first (the dataset's headline figure),
            // the reference mean after it.
            let what = match rec.pqperf.as_ref().and_then(|x| x.robust.as_ref()) {
                Some(rb) => format!(
                    "{} ± {} % ({}; mean {what})",
                    pqperf_model::fmt::fmt_time(Some(rb.estimate_seconds)),
                    pqperf_model::fmt::fmt_f(rb.ci_half_width_rel * 100.0, 1),
                    rb.estimator
                ),
                None => what,
            };
            let why = if rec.status == "complete" {
                String::new()
            } else {
                incomplete += 1;
                let last = rec.processes.last();
                format!(
                    " [{}{}]",
                    last.map(|p| p.status.as_str()).unwrap_or("no process"),
                    last.and_then(|p| p.stderr.lines().last())
                        .map(|l| format!(": {l}"))
                        .unwrap_or_default(),
                ) + &last
                    .and_then(|p| p.extra.get("kernel_check"))
                    .and_then(|k| k.get("problems"))
                    .filter(|pr| pr.as_array().is_some_and(|a| !a.is_empty()))
                    .map(|pr| format!(" (kernel check: {pr})"))
                    .unwrap_or_default()
            };
            log.log(format!(
                "measure {} {} {}: {} n={} {what}{why} (left ~{}: {:.1} s not started, {} running {:.1} s less {:.1} s run, pace {:.2} (budget operations {:.2}); this one {:.1} s for {:.1} s)",
                p.inst.entry.candidate,
                p.inst.entry.label,
                p.op,
                rec.status,
                rec.measurements.unwrap_or(0),
                plan::duration_text(left.left_s),
                left.queued_s,
                running.len(),
                left.running.0,
                left.running.1,
                left.pace[0],
                left.pace[1],
                a.run.2,
                est,
            ));
            log.progress_advance(est);
            log.progress_left(left.left_s);
        }
    }
    log.progress_end();
    log.log(format!(
        "measured {n_todo} of {} unit(s): {} already recorded, {incomplete} not complete",
        planned.len(),
        totals.skipped
    ));
    if totals.attempts > 0 {
        log.log(format!(
            "driver processes: {} ({} re-runs, {:.1} %; {} disturbed, {} of them kept without a re-run); timed {:.1} s of {:.1} s process time",
            totals.attempts,
            totals.reruns,
            100.0 * totals.rerun_share(),
            totals.disturbed_attempts,
            totals.reruns_declined,
            totals.timed_s,
            totals.process_s
        ));
    }
    if !took.is_empty() {
        // The estimate against the run (issue 41: within ±25 %), and where it missed most.
        log.log(estimate_check(
            est_total,
            phase_t0.elapsed().as_secs_f64(),
            &mut took,
        ));
    }
    if totals.budget.count > 0 {
        // Where the phase's wall time went (issue 41), from the parent's own marks.
        let wall = phase_t0.elapsed().as_secs_f64();
        log.log(totals.budget.log_line(wall));
        let b = totals.budget.to_json(wall);
        crate::rundir::update_campaign(&opts.run_dir, |c| {
            c.pqperf.get_or_insert_with(Default::default).measure_budget = Some(b);
        })?;
    }
    if totals.attempts > 0 && (opts.target_ci.is_some() || opts.independent_streams) {
        // The stream key, published now that no candidate code of this phase runs any more
        // (pqperf_model::stream::keyed_process_seed): the seeds can be recomputed.
        let key = opts.stream_key();
        let id = pqperf_model::stream::key_id(&key);
        crate::rundir::update_campaign(&opts.run_dir, |c| {
            let keys = c
                .pqperf
                .get_or_insert_with(Default::default)
                .stream_keys
                .get_or_insert_with(Vec::new);
            if !keys.iter().any(|k| k["key_id"] == id.as_str()) {
                keys.push(serde_json::json!({
                    "key_id": id,
                    "key": pqperf_model::stream::key_hex(&key),
                    "reused": opts.stream_key_reused(),
                }));
            }
        })?;
        log.log(format!(
            "stream key {id} ({}): published in campaign.json pqperf.stream_keys",
            if opts.stream_key_reused() {
                "reused with --stream-key: these inputs were predictable"
            } else {
                "fresh"
            }
        ));
    }
    if totals.declined_host_disturbed > 0 {
        log.log(format!(
            "this host disturbed every driver process ({} or more in a row): {} disturbed process(es) kept without a re-run, which would have been disturbed too; the records list every attempt",
            pqperf_measure::decide::HOST_DISTURBED_RUN,
            totals.declined_host_disturbed
        ));
    }
    Ok((Exit::failed_if(incomplete > 0), totals))
}

/// The order of one round over the active operations: drawn from `rng`, then the operations
/// of one library (instance) put together where its first one was drawn, those whose inputs
/// are a verify/dec pool last within it (their preparations run beside its other
/// processes). A library's processes thus follow each other, and whatever runs beside a
/// timed process (a preparation, a replay) is the same library's (docs/threat-model.md).
fn round_order(
    active: &[Active],
    exe: &pqperf_measure::DriverExe,
    rng: &mut SplitMix64,
) -> Vec<usize> {
    let keys: Vec<(String, bool)> = active
        .iter()
        .map(|a| (a.p.inst.key(), pools_next(a, exe)))
        .collect();
    grouped_order(&keys, rng)
}

/// Whether the next process of `a` gets its inputs from a verify/dec pool
/// (`pqperf_measure::relay::pooled`).
fn pools_next(a: &Active, exe: &pqperf_measure::DriverExe) -> bool {
    a.op.relays_next()
        && a.op.next_args().is_some_and(|x| {
            pqperf_measure::runner::relays(exe, &x) && pqperf_measure::relay::pooled(&x)
        })
}

/// Whether the pool of the next process of `a` is still being made
/// (`pqperf_measure::relay::pool_pending`).
fn pool_pending(a: &Active, exe: &pqperf_measure::DriverExe) -> bool {
    a.op.next_args().is_some_and(|x| {
        pqperf_measure::runner::relays(exe, &x) && pqperf_measure::relay::pool_pending(exe, &x)
    })
}

/// The two processes that take slot `k` of `slots` while its pool is being made: the next
/// steps of the other operations of its library in this round (not done, no pool still
/// being made), in turn (`filled` counts the turns taken); none when there is no such
/// operation (the slot then waits for its pool).
fn fillers(
    active: &[Active],
    slots: &[usize],
    k: usize,
    exe: &pqperf_measure::DriverExe,
    filled: &mut usize,
) -> Vec<usize> {
    let lib = active[slots[k]].p.inst.key();
    let mut ops: Vec<usize> = Vec::new();
    for &j in slots {
        if active[j].p.inst.key() == lib
            && !ops.contains(&j)
            && !active[j].op.done()
            && !pool_pending(&active[j], exe)
        {
            ops.push(j);
        }
    }
    if ops.is_empty() {
        return Vec::new();
    }
    let v = (0..2).map(|n| ops[(*filled + n) % ops.len()]).collect();
    *filled += 2;
    v
}

/// [`round_order`] over (library, relayed) pairs.
fn grouped_order(keys: &[(String, bool)], rng: &mut SplitMix64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    rng.shuffle(&mut order);
    let mut first: Vec<(&str, usize)> = Vec::new();
    for (pos, &i) in order.iter().enumerate() {
        if !first.iter().any(|(k, _)| *k == keys[i].0) {
            first.push((&keys[i].0, pos));
        }
    }
    let rank = |i: usize| {
        let lib = first
            .iter()
            .find(|(k, _)| *k == keys[i].0)
            .map_or(0, |f| f.1);
        (lib, keys[i].1)
    };
    // A stable sort keeps the drawn order within a library and a relay class.
    order.sort_by_key(|&i| rank(i));
    order
}

pub(crate) fn phase_plan(opts: &CampaignOptions, insts: &[Instance]) -> Exit {
    let planned = plan_all(&opts.unit(), insts);
    let with: Vec<&PlannedOp> = planned.iter().filter(|p| p.plan.is_some()).collect();
    let total: f64 = with.iter().map(|p| p.expected_s(opts.samples)).sum();
    let bound: f64 = with.iter().map(|p| p.bound_s(opts.samples)).sum();
    let reference: f64 = with
        .iter()
        .map(|p| plan::estimated_s(p.plan.as_ref().unwrap()))
        .sum();
    let uncalibrated = insts
        .iter()
        .map(|i| pqperf_measure::calibrate::ops_of(&opts.run_dir, i).len())
        .sum::<usize>()
        .saturating_sub(planned.len());
    println!(
        "{} operations, measure phase estimated {} from their calibrations and planned calls (reference formula: {}){}{}",
        with.len(),
        plan::duration_text(total),
        plan::duration_text(reference),
        if with.iter().any(|p| p.target_ci.is_some()) {
            format!(
                "; --target-ci: at most {} when every operation spends its budget",
                plan::duration_text(bound)
            )
        } else {
            String::new()
        },
        if uncalibrated > 0 {
            format!(
                "; {uncalibrated} operation(s) not calibrated yet, not counted (calibrate first)"
            )
        } else {
            String::new()
        }
    );
    let mut by_cost = with.clone();
    by_cost.sort_by(|a, b| {
        let est = |p: &PlannedOp| p.expected_s(opts.samples);
        est(b).total_cmp(&est(a))
    });
    for p in by_cost.iter().take(15) {
        let pl = p.plan.as_ref().unwrap();
        println!(
            "{:.1} min  {} {} {}  iters/trial={} separate={}",
            p.expected_s(opts.samples) / 60.0,
            p.inst.entry.candidate,
            p.inst.entry.label,
            p.op,
            pl.iterations_per_trial,
            if pl.separate_processes {
                "True"
            } else {
                "False"
            }
        );
    }
    Exit::Done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_keeps_each_library_together_with_its_relayed_operations_last() {
        let keys: Vec<(String, bool)> = [
            ("a", false),
            ("b", true),
            ("a", true),
            ("c", false),
            ("b", false),
            ("a", false),
            ("c", false),
            ("b", false),
        ]
        .iter()
        .map(|(k, r)| (k.to_string(), *r))
        .collect();
        let mut rng = SplitMix64::new(INTERLEAVE_SEED);
        let mut libs_first = Vec::new();
        for _ in 0..20 {
            let order = grouped_order(&keys, &mut rng);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..keys.len()).collect::<Vec<_>>());
            // Each library's operations follow each other, the relayed one last.
            let libs: Vec<&str> = order.iter().map(|&i| keys[i].0.as_str()).collect();
            let mut seen: Vec<&str> = Vec::new();
            for (k, l) in libs.iter().enumerate() {
                if k == 0 || libs[k - 1] != *l {
                    assert!(!seen.contains(l), "{libs:?}");
                    seen.push(l);
                }
                let later_plain = order[k + 1..]
                    .iter()
                    .any(|&j| keys[j].0 == *l && !keys[j].1);
                assert!(!(keys[order[k]].1 && later_plain), "{order:?}");
            }
            libs_first.push(seen[0]);
        }
        // The libraries' order is still drawn.
        libs_first.sort_unstable();
        libs_first.dedup();
        assert!(libs_first.len() > 1, "{libs_first:?}");
    }
}
