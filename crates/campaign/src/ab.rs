//! `pqperf ab A B`: the interleaved A/B measurement, the recommended regression gate on a
//! shared machine (randomized multiple interleaved trials). Two libraries — the same
//! (candidate, label) of two run directories, or two labels through `--map`, possibly of one
//! run directory — are measured alternately, each pair one fresh pinned driver process of A
//! and one of B right after each other on the same leased CPU, in the seeded order of
//! [`pqperf_compare::paired::schedule_looks`]. Whatever slows the machine for a while slows both
//! processes of a pair, so the ratio comes from the pairs: exp(median of ln(B/A)) with the
//! sign-test interval, judged by [`crate::verdict`] (with the canary gate of the pairs).
//!
//! **Sequential looks** ([`pqperf_compare::paired::looks`]): each unit is judged after `--pairs`
//! pairs, then after twice as many, and so on up to `--max-pairs`; a unit whose verdict at a
//! look is slower, faster or no change stops there, the others get more pairs. Every look's
//! interval has the confidence [`pqperf_compare::paired::look_confidence`] (the 5 % error split over
//! the looks), so looking more than once does not raise the chance of a false call: a quiet
//! machine is judged after the first pairs, a noisy one gets up to `--max-pairs` before
//! "inconclusive". The sign-test interval of n pairs excludes its most extreme pairs (about
//! n/2 − √n of them on each side at 95 %), so more pairs is also what survives processes
//! that ran in a slow phase of the host.
//!
//! The driver processes are the campaign's (`pqperf_measure::runner::run_driver`: contained,
//! checked against the kernel's accounting, with the environment evidence of
//! `pqperf_model::envevidence`); the CPU is leased host-wide ([`crate::lease`]) for
//! the whole measurement and pqperf keeps itself off it. Iterations are planned once per unit
//! from one calibration call on each side (the larger time), with the reference rules
//! (`pqperf_measure::plan::plan_op`) and the given trial target, the same for both sides.
//! Nothing is written into the run directories but the evidence file
//! ([`pqperf_model::ab::AbEvidence`], under B's run-directory lock).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::lease::CpuRequest;
use crate::setup::{CpuCheck, MeasuringSetup, SetupError, SetupRequest, cpu_refusal};
use crate::{CampaignOptions, measurable};
use pqperf_measure::decide::{AttemptFacts, HOST_DISTURBED_RUN, Rerun, rerun};
use pqperf_measure::instance::{Instance, base_ops, driver_args};
use pqperf_measure::plan;
use pqperf_measure::record::mark_disturbed;
use pqperf_measure::runner::{self, DriverExe, Run};
use pqperf_measure::verify::INCONSISTENT;
use pqperf_model::ab::{
    AB_KIND, AB_SCHEMA, AbEvidence, AbPair, AbProcess, AbResult, AbUnit, Verdict,
};
use pqperf_model::pynum::quantile_sorted;
use pqperf_model::robust::Estimator;
use pqperf_model::select::Selection;
use pqperf_model::vocab::Operation;

use pqperf_compare::CompareError;
use pqperf_compare::paired::{Slot, look_confidence, looks, paired, schedule_looks};
use pqperf_compare::verdict::{environment_gate, judge};

/// Fewest pairs asked for: below 6 no distribution-free 95 % interval exists.
pub const MIN_PAIRS: usize = 6;

/// What `pqperf ab` measures.
#[derive(Debug, Clone)]
pub struct AbOptions {
    /// Side A's run directory.
    pub a_run: PathBuf,
    /// Side B's run directory (may be A's, with a mapping or for an A–A check).
    pub b_run: PathBuf,
    /// Instance mapping `A label → B label`; without one, equal (candidate, label) pair up.
    pub map: Vec<(String, String)>,
    /// `--only`: side A's instances selected.
    pub select: Selection,
    /// Operations to measure (`--op keygen`, `--op hash_32`, …); empty: every operation.
    pub ops: Vec<Operation>,
    /// Pairs per unit at the first look.
    pub pairs: usize,
    /// Most pairs per unit (sequential design, [`pqperf_compare::paired::looks`]): a unit whose
    /// verdict at a look is slower, faster or no change stops there; the others go on to the
    /// next look. Equal to `pairs`: one look, the fixed design.
    pub max_pairs: usize,
    /// Seed of the order.
    pub seed: u64,
    /// Smallest relative change that counts (0.02 = 2 %).
    pub threshold: f64,
    /// Seconds per reference trial to plan for.
    pub trial_target_s: f64,
    /// The benchmark CPU.
    pub cpu: CpuRequest,
    /// The driver executable (default: [`DriverExe::locate`]).
    pub driver: Option<PathBuf>,
    /// Clock-probe attempts of the host check (the campaign's `--probe-attempts`).
    pub probe_attempts: usize,
    /// `--max-time`: a deadline from the start of the measurement (the CPU lease wait and
    /// the calibration included). When it passes no further pair
    /// is started; every unit not yet stopped is judged on the pairs it has, at the per-look
    /// confidence (the deadline's look replaces the looks not reached, so the error over all
    /// looks stays within the plan), and its reason says so.
    pub max_time: Option<Duration>,
    /// `--stream-key`: an earlier run's stream key (the campaign's option), else a fresh one
    /// ([`crate::options::stream_key_of`]); both sides of a pair get the same seed from it
    /// (`pqperf_model::ab::AbEvidence::stream_key`).
    pub stream_key: Option<[u8; pqperf_model::stream::KEY_BYTES]>,
}

/// An inconclusive reason's hint as it applies after `used` pairs of at most `most`: when
/// the unit used every pair `--max-pairs` allows, more pairs means a larger `--max-pairs`,
/// not `--pairs`.
pub fn hint_for_pairs_used(reason: &str, used: usize, most: usize) -> String {
    if used >= most {
        reason.replace(
            "more pairs (pqperf ab --pairs)",
            &format!("more pairs (all {most} that --max-pairs allows were used: raise pqperf ab --max-pairs)"),
        )
    } else {
        reason.to_string()
    }
}

/// The closing one-line verdict of `pqperf ab` for a CI log: the overall word (slower when
/// any operation is slower; else inconclusive when any is inconclusive or unmeasured; else
/// faster when any is faster; else no change), the counts, and the largest change.
pub fn verdict_line(ev: &AbEvidence) -> String {
    let count = |v: Verdict| ev.units.iter().filter(|u| u.result.verdict == v).count();
    let (slower, faster, same, inc, none) = (
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::NoChange),
        count(Verdict::Inconclusive),
        count(Verdict::NoEstimate),
    );
    let word = if slower > 0 {
        "slower"
    } else if inc + none > 0 {
        "inconclusive"
    } else if faster > 0 {
        "faster"
    } else {
        "no change"
    };
    let mut parts = vec![
        format!("{slower} slower"),
        format!("{faster} faster"),
        format!("{same} no change"),
        format!("{inc} inconclusive"),
    ];
    if none > 0 {
        parts.push(format!("{none} not measured"));
    }
    let worst = ev
        .units
        .iter()
        .filter_map(|u| u.result.ratio.map(|r| (u, r)))
        .max_by(|x, y| (x.1.ln().abs()).total_cmp(&y.1.ln().abs()));
    let worst = match worst {
        Some((u, r)) => format!(
            "; largest change {} {} {:+.1} %",
            u.label_b,
            u.op,
            (r - 1.0) * 100.0
        ),
        None => String::new(),
    };
    format!(
        "ab: verdict {word}: {} of {} operation(s){worst}",
        parts.join(", "),
        ev.units.len()
    )
}

/// Refuses a benchmark CPU that this process cannot measure on: not online, or not in its
/// allowed CPUs (affinity mask; the error names the CPU and what is there).
pub fn check_cpu(cpu: usize) -> Result<(), CompareError> {
    match cpu_refusal(cpu, CpuCheck::Allowed) {
        Some(why) => Err(refused(why)),
        None => Ok(()),
    }
}

/// Confidence of the intervals.
pub const CONFIDENCE: f64 = 0.95;

/// The method, as recorded in the evidence.
pub const METHOD: &str = "interleaved A/B: per unit, pairs of one fresh pinned driver process of A and one of B right after each other on one leased CPU, in a seeded random order (rounds of one pair per unit in shuffled unit order; half the pairs AB, half BA); both processes of a pair time the same inputs, seeded from the run's secret stream key and the pair's index and relayed window by window (the key is published in the evidence after the pairs); per process the robust estimate of its sampled calls (the fenced mean, as in new records: the mean of the calls below the interference fence, bounded by each window's kernel CPU time); ratio = exp(median of the pairs' ln(B/A)), interval = sign-test interval of the median (distribution-free); verdict: slower/faster when the interval excludes 1 and the change is at least the threshold, no change when the interval lies inside the band, otherwise inconclusive; inconclusive too when the pairs' canary ratio differs at least as much as the change";

/// One unit to measure: the two instances and the operation.
#[derive(Debug, Clone)]
pub struct UnitPlan {
    /// Side A's instance.
    pub a: Instance,
    /// Side B's instance.
    pub b: Instance,
    /// The operation.
    pub op: Operation,
}

/// The category word of an instance in a message (`uncategorised` for an id of no category).
fn category_word(c: Option<pqperf_model::vocab::Category>) -> &'static str {
    c.map_or("uncategorised", |c| c.as_str())
}

fn refused(m: impl Into<String>) -> CompareError {
    CompareError::Refused(m.into())
}

fn instances(run: &Path) -> Result<Vec<Instance>, CompareError> {
    if !run.is_dir() {
        return Err(refused(format!(
            "run directory {} does not exist",
            run.display()
        )));
    }
    let build_json = pqperf_model::layout::RunLayout::new(run).build_json();
    if !build_json.is_file() {
        return Err(refused(format!(
            "{} does not exist: build and KAT-check the libraries first (`pqperf build`, `pqperf kat`)",
            build_json.display()
        )));
    }
    let opts = CampaignOptions::new(run).map_err(|e| CompareError::Load(e.to_string()))?;
    measurable(&opts).map_err(|e| CompareError::Load(e.to_string()))
}

/// The units of `o`: side A's measurable instances (selected by `--only` and the mapping)
/// paired with side B's, times their operations (KEX: the whole exchange); refused when
/// nothing pairs up or a mapping names an instance that is not there.
pub fn units(o: &AbOptions) -> Result<Vec<UnitPlan>, CompareError> {
    let ia = instances(&o.a_run)?;
    let ib = instances(&o.b_run)?;
    for (la, lb) in &o.map {
        if !ia.iter().any(|i| &i.entry.label == la) {
            return Err(refused(format!(
                "--map {la}={lb}: no measurable instance {la} in {}",
                o.a_run.display()
            )));
        }
        if !ib.iter().any(|i| &i.entry.label == lb) {
            return Err(refused(format!(
                "--map {la}={lb}: no measurable instance {lb} in {}",
                o.b_run.display()
            )));
        }
    }
    let mut out = Vec::new();
    for a in &ia {
        if !o.select.selects(&a.entry.candidate, &a.entry.label) {
            continue;
        }
        let b = if o.map.is_empty() {
            ib.iter()
                .find(|b| b.entry.candidate == a.entry.candidate && b.entry.label == a.entry.label)
        } else {
            let Some((_, lb)) = o.map.iter().find(|(la, _)| la == &a.entry.label) else {
                continue;
            };
            ib.iter().find(|b| &b.entry.label == lb)
        };
        let Some(b) = b else { continue };
        if a.category != b.category {
            return Err(refused(format!(
                "{} is a {} instance, {} a {} instance: their operations do not pair",
                a.key(),
                category_word(a.category),
                b.key(),
                category_word(b.category)
            )));
        }
        for op in base_ops(a.category) {
            if !o.ops.is_empty() && !o.ops.contains(&op) {
                continue;
            }
            out.push(UnitPlan {
                a: a.clone(),
                b: b.clone(),
                op,
            });
        }
    }
    if out.is_empty() {
        return Err(refused(format!(
            "nothing to measure: no measurable instance of {} (KAT PASS){}{} pairs with one of {}{}",
            o.a_run.display(),
            o.select
                .only_pattern()
                .map(|r| format!(" matching --only {r:?}"))
                .unwrap_or_default(),
            if o.ops.is_empty() {
                String::new()
            } else {
                let keys: Vec<String> = o.ops.iter().map(Operation::to_string).collect();
                format!(" with operation {}", keys.join("/"))
            },
            o.b_run.display(),
            if o.map.is_empty() {
                " (same candidate and label; --map A_LABEL=B_LABEL pairs others)"
            } else {
                ""
            }
        )));
    }
    Ok(out)
}

/// The robust estimate (s per call) of one driver process: the estimator of new records
/// (the fenced mean, the one the window rule bounds: docs/threat-model.md) over its sampled
/// calls, or its reference trials' mean per call.
pub fn process_estimate(run: &Run, op: &str, tick_hz: f64) -> Option<(f64, u64)> {
    let mut calls: Vec<u64> = run.samples.clone();
    if !calls.is_empty() && tick_hz > 0.0 {
        let n = calls.len() as u64;
        return Estimator::choose(op, &[])
            .of(&mut calls)
            .map(|t| (t / tick_hz, n))
            .filter(|(s, _)| *s > 0.0);
    }
    let n: u64 = run.process.trials.iter().map(|t| t.measurements).sum();
    let s: f64 = run.process.trials.iter().map(|t| t.seconds).sum();
    (n > 0 && s > 0.0).then(|| (s / n as f64, n))
}

fn ab_process(run: &Run, op: &str, tick_hz: f64) -> AbProcess {
    let est = run
        .complete()
        .then(|| process_estimate(run, op, tick_hz))
        .flatten();
    AbProcess {
        status: run.process.status.clone(),
        estimate_seconds: est.map(|e| e.0),
        calls: est.map_or(0, |e| e.1),
        env: run.env.clone(),
        failure: (!run.complete()).then(|| {
            run.process
                .stderr
                .lines()
                .last()
                .unwrap_or("no message")
                .to_string()
        }),
    }
}

/// Whether attempt `pr` (its processes' largest run-queue share `score`) is better than the
/// one kept: complete beats not complete, then the less disturbed wins, then the earlier.
fn better(kept: Option<&(AbPair, f64)>, pr: &AbPair, score: f64) -> bool {
    let Some((k, ks)) = kept else {
        return true;
    };
    match (k.log_ratio.is_some(), pr.log_ratio.is_some()) {
        (false, true) => true,
        (true, false) => false,
        _ => (pr.disturbed, score) < (k.disturbed, *ks),
    }
}

/// The pair of two processes (log-ratios of the estimates and of the canary figures).
pub fn pair(index: u64, a_first: bool, a: AbProcess, b: AbProcess) -> AbPair {
    let log_ratio = match (a.estimate_seconds, b.estimate_seconds) {
        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => Some((y / x).ln()),
        _ => None,
    };
    let canary_log_ratio = match (a.env.canary_ticks(), b.env.canary_ticks()) {
        (Some(x), Some(y)) => Some((y / x).ln()),
        _ => None,
    };
    AbPair {
        index,
        order: if a_first { "AB" } else { "BA" }.to_string(),
        a,
        b,
        log_ratio,
        canary_log_ratio,
        reruns: 0,
        disturbed: false,
        rerun_declined: None,
    }
}

/// The result of a unit's pairs at threshold `t`.
pub fn summarize(pairs: &[AbPair], t: f64, confidence: f64) -> AbResult {
    let lr: Vec<f64> = pairs.iter().filter_map(|p| p.log_ratio).collect();
    let mut canary: Vec<f64> = pairs.iter().filter_map(|p| p.canary_log_ratio).collect();
    canary.sort_by(f64::total_cmp);
    let canary_ratio = quantile_sorted(&canary, 0.5).map(f64::exp);
    let failed = pairs.len() - lr.len();
    let mut r = AbResult {
        pairs_used: lr.len() as u64,
        ratio: None,
        ci_low: None,
        ci_high: None,
        coverage: None,
        canary_ratio,
        verdict: Verdict::NoEstimate,
        reason: None,
    };
    let Some(p) = paired(&lr, confidence) else {
        r.reason = Some(format!(
            "no pair completed on both sides ({} pair(s) run): see the processes' status and failure",
            pairs.len()
        ));
        return r;
    };
    let ratio = p.median.exp();
    r.ratio = Some(ratio);
    let (v, why) = match p.interval {
        None => (
            Verdict::Inconclusive,
            Some(format!(
                "{} complete pair(s): a distribution-free {:.0} % interval needs at least {MIN_PAIRS}; run more pairs (--pairs)",
                p.n,
                confidence * 100.0
            )),
        ),
        Some((lo, hi, cov)) => {
            r.ci_low = Some(lo.exp());
            r.ci_high = Some(hi.exp());
            r.coverage = Some(cov);
            environment_gate(judge(ratio, lo.exp(), hi.exp(), t), ratio, canary_ratio, t)
        }
    };
    r.verdict = v;
    r.reason = why;
    if failed > 0 {
        if failed * 2 > pairs.len() {
            r.verdict = Verdict::Inconclusive;
            r.reason = Some(format!(
                "only {} of {} pairs completed on both sides: too few to trust",
                lr.len(),
                pairs.len()
            ));
        } else {
            let note = format!(
                "{failed} of {} pair(s) failed and were left out",
                pairs.len()
            );
            r.reason = Some(match r.reason.take() {
                Some(w) => format!("{w}; {note}"),
                None => note,
            });
        }
    }
    r
}

/// A seed from the clock, for runs without `--seed` (recorded in the evidence).
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x7071_7065_7266_6162)
}

/// Per unit: the plan (iterations, warm-ups, timeout), or why the calibration failed.
struct Planned {
    iters: u64,
    warmups: u64,
    timeout: Duration,
}

fn calibrate(
    u: &UnitPlan,
    exe_a: &DriverExe,
    exe_b: &DriverExe,
    cpu: usize,
    trial_target_s: f64,
    key: &[u8; pqperf_model::stream::KEY_BYTES],
) -> Result<Planned, String> {
    let settings = |exe: &DriverExe| pqperf_measure::UnitSettings {
        run_dir: exe.cwd.clone(),
        cpu,
        samples: false,
        independent_streams: false,
        stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
        driver: exe.clone(),
        calibration_timeout: Duration::from_secs_f64(crate::options::DEFAULT_CALIBRATION_TIMEOUT_S),
        planning: plan::planning(trial_target_s, 3600.0),
        target_ci: None,
        stream_key: *key,
    };
    let mut t1: f64 = 0.0;
    let mut setup: f64 = 0.0;
    for (side, inst, exe) in [("A", &u.a, exe_a), ("B", &u.b, exe_b)] {
        let s = settings(exe);
        let mut args = driver_args(&s, inst, u.op, 1, 1, 0);
        args.seed = Some(pqperf_model::stream::keyed_process_seed(
            key,
            pqperf_model::ab::AB_CALIBRATION_INDEX,
        ));
        let run = runner::run_driver(exe, &args, s.calibration_timeout);
        let t = run
            .process
            .trials
            .first()
            .map(|t| t.seconds)
            .filter(|_| run.complete());
        let Some(t) = t else {
            return Err(format!(
                "calibration of side {side} ({}) {}: {}{}",
                inst.key(),
                u.op,
                run.process.status,
                run.process
                    .stderr
                    .lines()
                    .last()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            ));
        };
        t1 = t1.max(t);
        setup = setup.max((run.wall_s - t).max(0.0));
    }
    let p = plan::plan_op(&plan::planning(trial_target_s, 3600.0), t1, setup, None);
    Ok(Planned {
        iters: p.iterations_per_trial,
        warmups: p.warmups,
        timeout: Duration::from_secs_f64(p.timeout_per_process_s.unwrap_or(600.0).max(1.0)),
    })
}

/// Measures `units` as `o` says: leases the CPU, calibrates each unit, runs the scheduled
/// pairs and judges each unit. `say` gets progress lines.
pub fn run(
    o: &AbOptions,
    units: &[UnitPlan],
    say: &mut dyn FnMut(String),
) -> Result<AbEvidence, CompareError> {
    let started = std::time::Instant::now();
    if o.pairs < MIN_PAIRS {
        return Err(refused(format!(
            "--pairs {}: at least {MIN_PAIRS} pairs are needed for a distribution-free 95 % interval",
            o.pairs
        )));
    }
    let exe = match &o.driver {
        Some(p) => p.clone(),
        None => DriverExe::locate().map_err(|e| CompareError::Load(e.to_string()))?,
    };
    let exe_a = DriverExe {
        exe: exe.clone(),
        cwd: o.a_run.clone(),
    };
    let exe_b = DriverExe {
        exe,
        cwd: o.b_run.clone(),
    };
    let setup = MeasuringSetup::open(
        &SetupRequest {
            cpu: o.cpu,
            check: Some(CpuCheck::Allowed),
            owner: &o.b_run,
            probe_attempts: o.probe_attempts.max(1),
            refuse_emulated: true,
            lease: true,
        },
        &mut |m| say(m),
    )
    .map_err(|e| match e {
        SetupError::Refused(m) => refused(m),
        SetupError::Lease(m) => CompareError::Load(m),
    })?;
    let cpu = setup.cpu;
    let host_problems = setup.host_problems.clone();
    for p in &host_problems {
        say(format!("ab: HOST: {p}"));
    }
    setup.keep_off();
    let started_utc = crate::utc_now();
    let tick_hz = setup.tick_hz().unwrap_or(0) as f64;
    say(format!(
        "ab: {} unit(s) × {} pairs on CPU {cpu}, seed {}",
        units.len(),
        o.pairs,
        o.seed
    ));
    // The run's stream key (secret until the evidence is written after the pairs): pair i
    // of every unit seeds both its processes with keyed_process_seed(key, i), relayed
    // window by window, so A and B time the same inputs and no candidate knows them ahead.
    let key = crate::options::stream_key_of(o.stream_key);
    let mut planned: Vec<Result<Planned, String>> = Vec::new();
    for u in units {
        let p = calibrate(u, &exe_a, &exe_b, cpu, o.trial_target_s, &key);
        match &p {
            Ok(p) => say(format!(
                "ab: {} {} → {} {}: {} calls per trial",
                u.a.entry.candidate, u.a.entry.label, u.b.entry.label, u.op, p.iters
            )),
            Err(e) => say(format!("ab: {e}; not measured")),
        }
        planned.push(p);
    }
    let mut pairs: Vec<Vec<AbPair>> = vec![Vec::new(); units.len()];
    // Disturbed flags of every driver process so far, in order (the host-always-disturbed
    // rule looks at the last ones).
    let mut recent: Vec<bool> = Vec::new();
    let looks = looks(o.pairs, o.max_pairs);
    let most = *looks.last().expect("at least one look");
    let confidence = look_confidence(CONFIDENCE, looks.len());
    // The result of each unit that stopped at a look before the last.
    let mut stopped: Vec<Option<AbResult>> = vec![None; units.len()];
    let slots = schedule_looks(o.seed, units.len(), &looks);
    let mut deadline_hit = false;
    for (k, slot) in slots.iter().enumerate() {
        let round_done = (k + 1) % units.len().max(1) == 0;
        if let Some(limit) = o.max_time
            && started.elapsed() >= limit
        {
            deadline_hit = true;
            say(format!(
                "ab: --max-time {} s reached after {} pair(s) of at most {most} per operation; no further pairs, the verdicts are from the pairs run",
                limit.as_secs_f64(),
                slot.pair
            ));
            break;
        }
        if stopped[slot.unit].is_none() {
            measure_slot(
                o,
                units,
                &planned,
                slot,
                cpu,
                tick_hz,
                &exe_a,
                &exe_b,
                &key,
                &mut recent,
                &mut pairs,
                say,
            );
        }
        if !round_done {
            continue;
        }
        let n = slot.pair + 1;
        say(format!("ab: round {n} of at most {most} done"));
        if n < most && looks.contains(&n) {
            for (i, prs) in pairs.iter().enumerate() {
                if stopped[i].is_some() || planned[i].is_err() {
                    continue;
                }
                let r = summarize(prs, o.threshold, confidence);
                if matches!(
                    r.verdict,
                    Verdict::Slower | Verdict::Faster | Verdict::NoChange
                ) {
                    say(format!(
                        "ab: {} {}: {} after {n} pairs, stopped",
                        units[i].a.entry.label,
                        units[i].op,
                        r.verdict.text()
                    ));
                    stopped[i] = Some(r);
                }
            }
            if stopped
                .iter()
                .zip(&planned)
                .all(|(s, p)| s.is_some() || p.is_err())
            {
                break;
            }
        }
    }
    let mut out = Vec::new();
    for (((u, p), prs), early) in units.iter().zip(&planned).zip(pairs).zip(stopped) {
        let stopped_early = early.is_some();
        let mut result = early.unwrap_or_else(|| summarize(&prs, o.threshold, confidence));
        if let Some(r) = &result.reason {
            result.reason = Some(hint_for_pairs_used(r, prs.len(), most));
        }
        if deadline_hit && !stopped_early && p.is_ok() {
            let limit = o.max_time.map_or(0.0, |d| d.as_secs_f64());
            let said = format!(
                "judged at the --max-time deadline ({limit} s) on {} pair(s) of at most {most}",
                prs.len()
            );
            result.reason = Some(match result.reason.take() {
                Some(r) => format!("{said}; {r}"),
                None => said,
            });
        }
        if let Err(e) = p {
            result.reason = Some(format!("not measured: {e}"));
        }
        out.push(AbUnit {
            candidate: u.a.entry.candidate.clone(),
            label_a: u.a.entry.label.clone(),
            label_b: u.b.entry.label.clone(),
            op: u.op.key().into_owned(),
            library_sha256_a: u.a.entry.library_sha256.clone(),
            library_sha256_b: u.b.entry.library_sha256.clone(),
            iterations: p.as_ref().map_or(0, |p| p.iters),
            warmups: p.as_ref().map_or(0, |p| p.warmups),
            pairs: prs,
            result,
        });
    }
    drop(setup);
    Ok(AbEvidence {
        schema: AB_SCHEMA,
        kind: AB_KIND.to_string(),
        pqperf_version: env!("CARGO_PKG_VERSION").to_string(),
        a: shown(&o.a_run),
        b: shown(&o.b_run),
        cpu,
        pairs: o.pairs as u64,
        seed: o.seed,
        threshold: o.threshold,
        confidence: CONFIDENCE,
        looks: Some(looks.iter().map(|&n| n as u64).collect()),
        confidence_per_look: Some(confidence),
        trial_target_s: o.trial_target_s,
        method: METHOD.to_string(),
        started_utc,
        ended_utc: crate::utc_now(),
        host_problems: Some(host_problems),
        // Published now that no process of this measurement runs any more.
        stream_key: Some(pqperf_model::ab::AbStreamKey {
            key_id: pqperf_model::stream::key_id(&key),
            key: pqperf_model::stream::key_hex(&key),
            reused: o.stream_key.is_some(),
        }),
        units: out,
    })
}

/// Measures one scheduled pair (re-running it while the campaign's rule says so) and adds it
/// to its unit's pairs.
#[allow(clippy::too_many_arguments)]
fn measure_slot(
    o: &AbOptions,
    units: &[UnitPlan],
    planned: &[Result<Planned, String>],
    slot: &Slot,
    cpu: usize,
    tick_hz: f64,
    exe_a: &DriverExe,
    exe_b: &DriverExe,
    key: &[u8; pqperf_model::stream::KEY_BYTES],
    recent: &mut Vec<bool>,
    pairs: &mut [Vec<AbPair>],
    say: &mut dyn FnMut(String),
) {
    let u = &units[slot.unit];
    let Ok(p) = &planned[slot.unit] else {
        return;
    };
    let one = |inst: &Instance, exe: &DriverExe| {
        let s = pqperf_measure::UnitSettings {
            run_dir: exe.cwd.clone(),
            cpu,
            samples: true,
            independent_streams: false,
            stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
            driver: exe.clone(),
            calibration_timeout: p.timeout,
            planning: plan::planning(o.trial_target_s, 3600.0),
            target_ci: None,
            stream_key: *key,
        };
        let mut args = driver_args(&s, inst, u.op, 1, p.iters, p.warmups);
        // The same seed on both sides of the pair: the same inputs, call by call.
        args.seed = Some(pqperf_model::stream::keyed_process_seed(
            key,
            slot.pair as u64,
        ));
        let mut run = runner::run_driver(exe, &args, p.timeout);
        // Disturbed by interrupts on the measuring CPU (no figure): re-run as disturbed.
        let interrupted = run.process.status == pqperf_measure::verify::DISTURBED;
        let disturbed = (run.complete() && mark_disturbed(&mut run, None)) || interrupted;
        let inconsistent = run.process.status == INCONSISTENT;
        (
            ab_process(&run, &u.op.call(), tick_hz),
            disturbed,
            (inconsistent, interrupted),
        )
    };
    // A pair with a disturbed (or inconsistent) process is measured again as the
    // campaign re-runs its processes; the least disturbed complete attempt is kept.
    let mut kept: Option<(AbPair, f64)> = None;
    let mut reruns = 0u64;
    let mut inconsistent_before = false;
    let declined = loop {
        let ((a, da, (ia, xa)), (b, db, (ib, xb))) = if slot.a_first {
            let a = one(&u.a, exe_a);
            (a, one(&u.b, exe_b))
        } else {
            let b = one(&u.b, exe_b);
            (one(&u.a, exe_a), b)
        };
        recent.extend([da, db]);
        let mut pr = pair(slot.pair as u64, slot.a_first, a, b);
        pr.disturbed = da || db;
        let score =
            pr.a.env
                .runq_share
                .unwrap_or(0.0)
                .max(pr.b.env.runq_share.unwrap_or(0.0));
        if better(kept.as_ref(), &pr, score) {
            kept = Some((pr.clone(), score));
        }
        let n = HOST_DISTURBED_RUN as usize;
        let facts = AttemptFacts {
            complete: pr.log_ratio.is_some(),
            disturbed: pr.disturbed,
            inconsistent: ia || ib,
            inconsistent_before,
            interrupted: xa || xb,
            reruns,
            effect: None,
            tolerance: 0.0,
            spent_s: 0.0,
            one_s: 0.0,
            budget_s: f64::INFINITY,
            host_always_disturbed: recent.len() >= n && recent.iter().rev().take(n).all(|d| *d),
        };
        match rerun(&facts) {
            Rerun::Again => {
                inconsistent_before |= ia || ib;
                reruns += 1;
            }
            Rerun::Done => break None,
            Rerun::Declined(why) => break Some(why.to_string()),
        }
    };
    let mut pr = kept.expect("at least one attempt").0;
    pr.reruns = reruns;
    pr.rerun_declined = declined.filter(|_| pr.disturbed);
    if reruns > 0 {
        say(format!(
            "ab: {} {} pair {}: re-run {reruns} time(s) ({} kept)",
            u.a.entry.label,
            u.op,
            slot.pair + 1,
            if pr.disturbed {
                "a disturbed attempt"
            } else {
                "an undisturbed attempt"
            }
        ));
    }
    pairs[slot.unit].push(pr);
}

/// A run directory as the evidence names it: as given when relative, its last component
/// when absolute (evidence names no machine paths).
fn shown(p: &Path) -> String {
    if p.is_absolute() {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        p.display().to_string()
    }
}

/// Where the evidence goes by default: `<B>/ab/ab-<UTC>-<seed>.json`.
pub fn default_evidence_path(b_run: &Path, ev: &AbEvidence) -> PathBuf {
    let stamp: String = ev
        .started_utc
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    pqperf_model::layout::RunLayout::new(b_run)
        .ab_dir()
        .join(format!("ab-{stamp}-{:016x}.json", ev.seed))
}

/// Writes the evidence atomically (the reference serialisation).
pub fn write_evidence(path: &Path, ev: &AbEvidence) -> Result<(), CompareError> {
    let text =
        pqperf_model::pyjson::to_string(ev).map_err(|e| CompareError::Load(e.to_string()))?;
    pqperf_model::fsutil::write_atomic(path, text.as_bytes())
        .map_err(|e| CompareError::Load(format!("writing {}: {e}", path.display())))
}

/// How many pairs the evidence planned, in words: one look, or its sequential looks.
fn looks_text(ev: &AbEvidence) -> String {
    match (&ev.looks, ev.confidence_per_look) {
        (Some(l), Some(c)) if l.len() > 1 => format!(
            "pairs per operation judged after {} (each look at {:.2} %, {:.0} % over all looks; an operation stops at its first slower, faster or no-change look)",
            l.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
            c * 100.0,
            ev.confidence * 100.0
        ),
        _ => format!("{} pairs per operation", ev.pairs),
    }
}

/// The evidence as a Markdown report.
pub fn markdown(ev: &AbEvidence) -> String {
    let mut o = format!(
        "# pqperf ab (interleaved)\n\nA: `{}`  \nB: `{}`\n\n{} on CPU {}, seed {}; ratio B/A = exp(median of the pairs' ln(B/A)), sign-test interval (coverage shown); verdict faster/slower when the interval excludes 1.0 and the change is at least {:.1} %, no change when the interval lies inside ±{:.1} %, else inconclusive.\n\n",
        ev.a,
        ev.b,
        looks_text(ev),
        ev.cpu,
        ev.seed,
        ev.threshold * 100.0,
        ev.threshold * 100.0
    );
    o.push_str(
        "| candidate | instance | op | pairs | B/A | interval | change | canary B/A | verdict |\n",
    );
    o.push_str("|---|---|---|---:|---:|---|---:|---:|---|\n");
    let mut reasons = Vec::new();
    for u in &ev.units {
        let r = &u.result;
        let inst = if u.label_a == u.label_b {
            u.label_a.clone()
        } else {
            format!("{} → {}", u.label_a, u.label_b)
        };
        let ratio = r.ratio.map_or("–".into(), |x| format!("{x:.4}"));
        let iv = match (r.ci_low, r.ci_high, r.coverage) {
            (Some(l), Some(h), Some(c)) => format!("[{l:.4}, {h:.4}] ({:.1} %)", c * 100.0),
            _ => "–".into(),
        };
        let ch = r.ratio.map_or("–".into(), pqperf_compare::verdict::pct);
        let can = r.canary_ratio.map_or("–".into(), |x| format!("{x:.4}"));
        let mark = if r.reason.is_some() {
            reasons.push(format!(
                "{} {} {}: {}",
                u.candidate,
                inst,
                u.op,
                r.reason.as_deref().unwrap_or_default()
            ));
            format!(" [{}]", reasons.len())
        } else {
            String::new()
        };
        o.push_str(&format!(
            "| {} | {inst} | {} | {}/{} | {ratio} | {iv} | {ch} | {can} | {}{mark} |\n",
            u.candidate,
            u.op,
            r.pairs_used,
            u.pairs.len(),
            r.verdict.text()
        ));
    }
    for (i, r) in reasons.iter().enumerate() {
        o.push_str(&format!("\n[{}] {r}\n", i + 1));
    }
    let all: Vec<&AbPair> = ev.units.iter().flat_map(|u| &u.pairs).collect();
    let reruns: u64 = all.iter().map(|p| p.reruns).sum();
    let disturbed: Vec<&&AbPair> = all.iter().filter(|p| p.disturbed).collect();
    if reruns > 0 || !disturbed.is_empty() {
        let mut why: Vec<&str> = disturbed
            .iter()
            .filter_map(|p| p.rerun_declined.as_deref())
            .collect();
        why.sort_unstable();
        why.dedup();
        o.push_str(&format!(
            "\nRe-runs: {reruns} re-run(s) of pairs with a disturbed process, over {} pairs; {} kept pair(s) had a disturbed process{}.\n",
            all.len(),
            disturbed.len(),
            if why.is_empty() {
                String::new()
            } else {
                format!(" (not run again: {})", why.join(", "))
            }
        ));
    }
    match &ev.host_problems {
        Some(p) if p.is_empty() => o.push_str("\nHost checks of the benchmark CPU: passed.\n"),
        Some(p) => {
            o.push_str("\nHost checks of the benchmark CPU found (measured anyway; the pairs cancel what the host does to both sides alike):\n\n");
            for x in p {
                o.push_str(&format!("- {x}\n"));
            }
        }
        None => {}
    }
    o
}

/// What `pqperf ab --counter instructions` found: both sides counted afresh under callgrind
/// (the same seeded inputs), and their exact comparison.
#[derive(Debug, Clone)]
pub struct CountGate {
    /// The comparison B/A per operation ([`pqperf_compare::counts`]).
    pub comparison: pqperf_compare::counts::CountComparison,
    /// Side A's count evidence, as counted now.
    pub a: Vec<pqperf_model::count::CountEvidence>,
    /// Side B's count evidence.
    pub b: Vec<pqperf_model::count::CountEvidence>,
    /// Wall seconds of both sides' counting.
    pub seconds: f64,
}

/// `pqperf ab --counter instructions`: counts the operations of `units` on both sides, the
/// same instance of one side once, `jobs` valgrind processes at once (default: one per CPU;
/// counting needs no quiet CPU and takes no lease), and compares the instructions per call
/// exactly at `o.threshold`. Nothing is written into the run directories. Refused (exit 2)
/// without valgrind.
pub fn count_gate(
    o: &AbOptions,
    units: &[UnitPlan],
    jobs: Option<usize>,
    say: &mut dyn FnMut(String),
) -> Result<CountGate, CompareError> {
    let Some(tool) = pqperf_count::valgrind_version("valgrind") else {
        return Err(refused(
            "ab --counter instructions: valgrind is not installed (instruction counts need valgrind's callgrind; scripts/setup.sh installs it)",
        ));
    };
    let t0 = std::time::Instant::now();
    let mut ops: Vec<String> = units.iter().map(|u| u.op.key().into_owned()).collect();
    ops.sort();
    ops.dedup();
    let side = |run: &Path, pick: &dyn Fn(&UnitPlan) -> &Instance| {
        let mut insts: Vec<Instance> = Vec::new();
        for u in units {
            let i = pick(u);
            if !insts.iter().any(|x| x.key() == i.key()) {
                insts.push(i.clone());
            }
        }
        let mut c = pqperf_count::CountOptions::new(run, insts)
            .map_err(|e| CompareError::Load(e.to_string()))?;
        c.ops = ops.clone();
        if let Some(d) = &o.driver {
            c.driver = d.clone();
        }
        if let Some(j) = jobs {
            c.jobs = j.max(1);
        }
        pqperf_count::count(&c).map_err(|e| CompareError::Load(e.to_string()))
    };
    say(format!(
        "ab: counting {} operation(s) on each side under callgrind ({tool})",
        units.len()
    ));
    let a = side(&o.a_run, &|u| &u.a)?;
    let b = side(&o.b_run, &|u| &u.b)?;
    for ev in a.evidence.iter().chain(&b.evidence) {
        say(format!(
            "ab: {}/{} {}: {}",
            ev.candidate,
            ev.label,
            ev.operation,
            pqperf_count::line(ev)
        ));
    }
    let comparison =
        pqperf_compare::counts::compare_counts(&a.evidence, &b.evidence, o.threshold, &o.map);
    Ok(CountGate {
        comparison,
        a: a.evidence,
        b: b.evidence,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The closing one-line verdict of `pqperf ab --counter instructions` (the words of
/// [`verdict_line`]): slower when any operation is slower; else inconclusive when any could
/// not be compared (not counted, not comparable); else faster when any is faster; else no
/// change; with the largest exact change.
pub fn count_verdict_line(c: &pqperf_compare::counts::CountComparison) -> String {
    let n = |v: &str| c.rows.iter().filter(|r| r.verdict == v).count();
    let (slower, faster, same) = (n("slower"), n("faster"), n("no change"));
    let other = c.rows.len() - slower - faster - same;
    let word = if slower > 0 {
        "slower"
    } else if other > 0 {
        "inconclusive"
    } else if faster > 0 {
        "faster"
    } else {
        "no change"
    };
    let worst = c
        .rows
        .iter()
        .filter_map(|r| r.ratio.map(|x| (r, x)))
        .filter(|(_, x)| *x != 1.0)
        .max_by(|x, y| x.1.ln().abs().total_cmp(&y.1.ln().abs()))
        .map_or(String::new(), |(r, x)| {
            format!("; largest change {} {} ×{x:.6}", r.instance_b, r.operation)
        });
    format!(
        "ab: verdict {word} (instructions): {slower} slower, {faster} faster, {same} no change, {other} not compared, of {} operation(s){worst}",
        c.rows.len()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn hint_names_max_pairs_when_every_pair_was_used() {
        let r = "the change +3.0 % is beyond the ±2 % band but its interval [0.99, 1.07] includes 1.0: the noise is as large as the change; more pairs (pqperf ab --pairs) or a quieter machine would narrow it";
        let at_max = super::hint_for_pairs_used(r, 40, 40);
        assert!(at_max.contains("raise pqperf ab --max-pairs"), "{at_max}");
        assert!(!at_max.contains("--pairs)"), "{at_max}");
        assert_eq!(super::hint_for_pairs_used(r, 20, 40), r);
    }

    use super::*;
    use pqperf_model::envevidence::ProcessEnv;

    fn proc(est: Option<f64>, canary: Option<u64>) -> AbProcess {
        AbProcess {
            status: if est.is_some() { "complete" } else { "failed" }.into(),
            estimate_seconds: est,
            calls: 400,
            env: ProcessEnv {
                canary_before_ticks: canary,
                canary_after_ticks: canary,
                ..Default::default()
            },
            failure: None,
        }
    }

    /// Pairs whose B/A is `ratio` × a deterministic ±`noise` pattern.
    fn pairs(n: usize, ratio: f64, noise: f64, canary_b: u64) -> Vec<AbPair> {
        (0..n)
            .map(|i| {
                let f = 1.0 + noise * (((i * 7) % 5) as f64 - 2.0) / 2.0;
                pair(
                    i as u64,
                    i % 2 == 0,
                    proc(Some(1e-5), Some(1000)),
                    proc(Some(1e-5 * ratio * f), Some(canary_b)),
                )
            })
            .collect()
    }

    #[test]
    fn paired_verdicts() {
        let r = summarize(&pairs(10, 1.25, 0.02, 1000), 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
        assert!((r.ratio.unwrap() - 1.25).abs() < 0.01);
        assert!(r.ci_low.unwrap() > 1.2 && r.ci_high.unwrap() < 1.3);
        assert_eq!(r.canary_ratio, Some(1.0));
        assert_eq!(r.pairs_used, 10);
        let r = summarize(&pairs(10, 1.0, 0.005, 1000), 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::NoChange, "{r:?}");
        // Noise as large as the change: inconclusive, with the reason.
        let r = summarize(&pairs(10, 1.03, 0.2, 1000), 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.reason.is_some());
        // The machine ran 40 % slower in the B processes: the 25 % is not B's.
        let r = summarize(&pairs(10, 1.25, 0.02, 1400), 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.reason.unwrap().contains("canary"));
        // Too few pairs.
        let r = summarize(&pairs(5, 1.25, 0.02, 1000), 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.reason.unwrap().contains("at least 6"));
    }

    #[test]
    fn failed_pairs_are_left_out_and_said() {
        let mut p = pairs(10, 1.25, 0.02, 1000);
        p[3].b = proc(None, None);
        p[3] = pair(3, true, p[3].a.clone(), p[3].b.clone());
        assert_eq!(p[3].log_ratio, None);
        let r = summarize(&p, 0.02, 0.95);
        assert_eq!((r.verdict, r.pairs_used), (Verdict::Slower, 9));
        assert!(r.reason.unwrap().contains("1 of 10 pair(s) failed"));
        // Most pairs failed: inconclusive.
        for q in p.iter_mut().take(6) {
            *q = pair(q.index, true, q.a.clone(), proc(None, None));
        }
        let r = summarize(&p, 0.02, 0.95);
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.reason.unwrap().contains("only 4 of 10"));
        // None completed: no estimate.
        let none: Vec<AbPair> = (0..6)
            .map(|i| pair(i, true, proc(None, None), proc(None, None)))
            .collect();
        assert_eq!(summarize(&none, 0.02, 0.95).verdict, Verdict::NoEstimate);
    }
}
