//! Calibration-based planning (method §6): the constants, the plan of one operation, and the
//! plans of every calibrated operation of a set of instances.

use crate::calibrate::{cal_path, ops_of, pool_maker};
use crate::instance::Instance;
use crate::settings::UnitSettings;
use pqperf_model::vocab::{Category, Operation};

use pqperf_model::calibration::{self, Calibration};
use serde_json::Value;

pub use pqperf_model::{Plan, Planning};

/// The reference planning constants (method §6.1) with the given trial target and operation
/// budget (model's `Planning::default()` is all zeros; this is the harness default).
pub fn planning(trial_target_s: f64, op_budget_s: f64) -> Planning {
    Planning {
        trials: 5,
        trial_target_s,
        min_total: 100,
        max_iters_per_trial: 20_000,
        op_budget_s,
        separate_process_setup_s: 60.0,
        ..Default::default()
    }
}

/// The reference constants with a 1 s trial target and a 900 s operation budget.
pub fn reference_planning() -> Planning {
    planning(1.0, 900.0)
}

/// The `planning` object of campaign.json.
pub fn planning_json(p: &Planning) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// True when the calibration call itself is the measurement (§6.4).
pub fn reuses_calibration(p: &Plan) -> bool {
    p.trials == 1 && p.iterations_per_trial == 1 && p.warmups == 0
}

/// Estimated seconds of the whole operation (0 when the plan has none).
pub fn estimated_s(p: &Plan) -> f64 {
    p.estimated_s.unwrap_or(0.0)
}

/// Plans one operation from its calibration: `t1` = seconds of the single timed call,
/// `setup` = process wall − t1, `c` = cost of one iteration when it differs (KEX steps: the
/// exchange's t1).
pub fn plan_op(p: &Planning, t1: f64, setup: f64, c: Option<f64>) -> Plan {
    let t = c.unwrap_or(t1).max(t1).max(1e-8);
    let trials_f = p.trials as f64;
    let min_per_trial = (p.min_total as f64 / trials_f).ceil() as u64;
    let mut iters = ((p.trial_target_s / t).ceil() as u64).max(min_per_trial);
    iters = iters.min(p.max_iters_per_trial);
    if trials_f * iters as f64 * t > p.op_budget_s {
        iters = ((p.op_budget_s / (trials_f * t)).floor() as u64).max(1);
    }
    let trials = if trials_f * t <= p.op_budget_s {
        p.trials
    } else {
        ((p.op_budget_s / t).floor() as u64).max(1)
    };
    let warmups = if t < 0.05 {
        3
    } else if t < 5.0 {
        1
    } else {
        0
    };
    let separate = setup < p.separate_process_setup_s;
    let processes = if separate { trials } else { 1 };
    let estimated_s =
        trials as f64 * iters as f64 * t + processes as f64 * (warmups as f64 * t + setup);
    let per_process_iters = iters * if separate { 1 } else { trials };
    let timeout = 3.0 * (per_process_iters + warmups) as f64 * t + 3.0 * setup + 300.0;
    Plan {
        iterations_per_trial: iters,
        warmups,
        trials,
        separate_processes: separate,
        estimated_s: Some(estimated_s),
        timeout_per_process_s: Some(timeout),
        ..Default::default()
    }
}

/// The `--target-ci` plan of an operation (see `crate::decide`'s module doc) and its budget in seconds:
/// `(plan, trial target, budget)`: the reference rules at the short trial target, with at
/// least [`crate::decide::MIN_TARGET_CI_TRIALS`] trials (fresh processes) instead of 5. A
/// `variable` operation (variable work, whose robust estimate is the mean of its calls:
/// `sign`) gets the calls per trial of [`crate::decide::variable_trial_calls`] when that is
/// more (its interval is mostly its calls' own spread, which a longer trial averages, and a
/// process's start is paid once for more of them) and the relative half-width `target` is
/// within reach of it. Returns `None` when the reference plan is the better one:
/// one process for all trials (setup above the planning's limit) or the calibration call
/// reused as the measurement.
///
/// Until session 16 every other operation got at least `robust::WIDE_MIN_CALLS` (20) calls
/// per trial, so that `Estimator::choose` could see variable work in its calls; new records
/// take the fenced mean for every operation (`mean_robust_v3`), so those calls bought
/// nothing and cost a slow call's processes up to 1.5× (Falcon-512 `keygen`, SPHINCS+
/// `keygen`/`verify`): the reference rules' calls stand.
pub fn confident_plan(
    p: &Planning,
    t1: f64,
    setup: f64,
    c: Option<f64>,
    variable: bool,
    target: f64,
) -> Option<(Plan, f64, f64)> {
    let reference = plan_op(p, t1, setup, c);
    if !reference.separate_processes || reuses_calibration(&reference) {
        return None;
    }
    let mut trial_s = crate::decide::confident_trial_s(setup);
    let short = Planning {
        trial_target_s: trial_s,
        trials: p.trials.max(crate::decide::MIN_TARGET_CI_TRIALS),
        ..p.clone()
    };
    let mut plan = plan_op(&short, t1, setup, c);
    let budget = reference.estimated_s.unwrap_or(0.0).min(p.op_budget_s);
    let t = c.unwrap_or(t1).max(t1).max(1e-8);
    if variable {
        let c0 = setup + (plan.warmups + 1) as f64 * t;
        let m = crate::decide::variable_trial_calls(
            t,
            c0,
            budget,
            plan.iterations_per_trial,
            crate::driver::SAMPLE_CALLS.min(p.max_iters_per_trial),
            target,
        );
        if m > plan.iterations_per_trial {
            // The reference rules at a trial of m calls (half a call short of it, so that
            // rounding up gives m).
            let longer = Planning {
                trial_target_s: (m as f64 - 0.5) * t,
                ..short
            };
            plan = plan_op(&longer, t1, setup, c);
            trial_s = m as f64 * t;
        }
    }
    let budget = budget.max(plan.estimated_s.unwrap_or(0.0));
    Some((plan, trial_s, budget))
}

/// Wall seconds one operation is expected to take as pqperf runs it, which the reference
/// formula ([`plan_op`]'s `estimated_s`, kept in the record) leaves out: per process the
/// setup, the warm-ups, the reference trials, the sampled trials (at most
/// `driver::SAMPLE_CALLS` calls after each reference trial, when `sampling`) and the
/// memory pass (one call). `t` is the cost of one call (the calibration's, scaled by the load
/// it saw: [`load_factor`]), `setup` the process setup from the calibration. Re-runs and trials added by `--target-ci` are not in it (see
/// [`PlannedOp::bound_s`]).
pub fn expected_s(pl: &Plan, t: f64, setup: f64, sampling: bool) -> f64 {
    let (procs, calls_s) = expected_parts(pl, t, sampling);
    procs * setup + calls_s
}

/// The two parts of [`expected_s`]: driver processes, and seconds of calls (setup left out).
pub fn expected_parts(pl: &Plan, t: f64, sampling: bool) -> (f64, f64) {
    if reuses_calibration(pl) {
        return (0.0, 0.0);
    }
    let procs = if pl.separate_processes { pl.trials } else { 1 };
    (
        procs as f64,
        procs as f64 * calls_per_process(pl, sampling) * t,
    )
}

/// Calls one driver process of `pl` makes: its trials (each with its sampled calls when
/// `sampling`), the warm-ups and the first call.
fn calls_per_process(pl: &Plan, sampling: bool) -> f64 {
    let per = if pl.separate_processes { 1 } else { pl.trials };
    let iters = pl.iterations_per_trial as f64;
    let sampled = if sampling {
        iters.min(crate::driver::SAMPLE_CALLS as f64)
    } else {
        0.0
    };
    per as f64 * (iters + sampled) + pl.warmups as f64 + 1.0
}

/// The remaining time of a measure phase (issue 41: the progress ETA within ±25 % of the
/// finished phase): the plan's estimate of what is left — the expected seconds of the
/// operations not started, and of each running one what its expectation has left after the
/// seconds its steps took (at least [`ETA_RUNNING_LEFT`] of it) — times the pace of the
/// finished operations of its class (their seconds ÷ their expectation), which starts at 1
/// with a weight of [`ETA_PRIOR_SHARE`] of the class's estimate, so that the first cheap
/// operations do not swing it. The two classes are the operations whose `--target-ci`
/// budget is their estimate ([`PlannedOp::likely_spends_budget`]) and the others: the
/// others finish first and ran 1.5–2× their estimate at load 5 where the budget ones ran
/// 0.5–1.2×, so one pace for both said 1.3× the time left at half the demo's phase. (The
/// ETA before this one counted a running operation as not started, and said 1.3–2.5× the
/// time actually left at three quarters of the demo's phase.)
#[derive(Debug, Clone, Copy, Default)]
pub struct Eta {
    /// Per class: expected seconds of the operations not finished (not started and running).
    pub left_s: [f64; 2],
    /// Per class: expected seconds and wall seconds of the finished operations' steps.
    pub done: [(f64, f64); 2],
    /// Per class: the weight of the pace's prior of 1, in expected seconds.
    pub prior_s: [f64; 2],
}

/// Weight of the pace's prior (a pace of 1), as a share of the class's estimate.
pub const ETA_PRIOR_SHARE: f64 = 1.0;

/// Least share of its expectation a running operation is counted to have left (at the pace).
pub const ETA_RUNNING_LEFT: f64 = 0.25;

/// What the remaining time of [`Eta::left`] is made of (the log line's inputs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EtaParts {
    /// Seconds left.
    pub left_s: f64,
    /// Expected seconds of the operations not started.
    pub queued_s: f64,
    /// Expected seconds of the running operations, and the seconds their steps took.
    pub running: (f64, f64),
    /// The paces the plan's seconds are scaled by, per class.
    pub pace: [f64; 2],
}

impl Eta {
    /// The ETA of a phase whose operations of each class are estimated at `total_s`
    /// seconds (class 1: those likely to spend their `--target-ci` budget).
    pub fn new(total_s: [f64; 2]) -> Eta {
        let t = total_s.map(|x| x.max(0.0));
        Eta {
            left_s: t,
            done: [(0.0, 0.0); 2],
            prior_s: t.map(|x| ETA_PRIOR_SHARE * x),
        }
    }

    /// The finished operations' seconds ÷ their expectation in `class`, with the prior
    /// (within ¼–4).
    pub fn pace(&self, class: usize) -> f64 {
        let (e, t) = self.done[class];
        let w = self.prior_s[class].max(1e-9);
        ((t + w) / (e + w)).clamp(0.25, 4.0)
    }

    /// One operation of `class` finished: its expected seconds and the wall seconds its
    /// steps took.
    pub fn finished(&mut self, class: usize, expected_s: f64, took_s: f64) {
        self.left_s[class] = (self.left_s[class] - expected_s).max(0.0);
        self.done[class].0 += expected_s;
        self.done[class].1 += took_s;
    }

    /// Seconds left with the operations `running` (their class, expected seconds and the
    /// seconds their steps took so far), and the figures it came from.
    pub fn left(&self, running: &[(usize, f64, f64)]) -> EtaParts {
        let pace = [self.pace(0), self.pace(1)];
        let mut queued = self.left_s;
        let (mut re, mut rt, mut rest) = (0.0, 0.0, 0.0);
        for &(c, e, t) in running {
            queued[c] -= e;
            re += e;
            rt += t;
            // A running operation past its expectation still has some way to go (a budget
            // spent by a slower host, a pool made late).
            rest += (pace[c] * e - t).max(ETA_RUNNING_LEFT * pace[c] * e);
        }
        let queued = queued.map(|q| q.max(0.0));
        EtaParts {
            left_s: pace[0] * queued[0] + pace[1] * queued[1] + rest,
            queued_s: queued[0] + queued[1],
            running: (re, rt),
            pace,
        }
    }
}

/// Seconds as a short duration: `4.2 s`, `42 s`, `3.2 min`, `1.45 h`.
pub fn duration_text(s: f64) -> String {
    if s < 9.95 {
        format!("{s:.1} s")
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.2} h", s / 3600.0)
    }
}

/// One planned operation.
#[derive(Debug, Clone)]
pub struct PlannedOp {
    /// The instance.
    pub inst: Instance,
    /// The operation (its record key, driver call and input bytes).
    pub op: Operation,
    /// The plan, or None when the calibration produced no trial.
    pub plan: Option<Plan>,
    /// The calibration result.
    pub calibration: Calibration,
    /// The `--target-ci` protocol's parameters, when it plans this operation (`plan` is then
    /// its short-trial plan).
    pub target_ci: Option<TargetCiPlan>,
    /// Relayed inputs (`crate::relay`: verify, dec): the seconds of the preparer's key
    /// generation and of one pool entry (a signature, an encapsulation), from the
    /// calibrations of those operations of the same instance (one call each).
    pub prep: Option<(f64, f64)>,
}

/// Share of a verify/dec pool's preparation left on the measuring CPU's path when pools are
/// made beside it (`crate::relay::pools_beside`: the library's other operations are timed
/// meanwhile). Session 15's A/B on copies of one demo directory: the pooled operations'
/// preparation on the path 9.8–18.0 s before, 0.1–0.3 s after (at most 3 % of it).
pub const POOL_ON_PATH_SHARE: f64 = 0.05;

/// How much longer than its calls' seconds ([`PlannedOp::prepare_s`]) a relayed pool takes
/// to make beside the path, where the parent, the held processes' start-ups and the output
/// check's replays share the other CPU with it (issue 41): pool made ÷ its entries' seconds
/// at the calibration's call cost, Falcon-512 verify 1.2–1.4 and SPHINCS+ verify 1.6 in the
/// session-15 demos with nothing else beside; 3.5 and 2.6 in session 16's with the valgrind
/// phases beside at nice 19 (the reason they run in `SCHED_IDLE` now).
pub const POOL_BESIDE_SLOWDOWN: f64 = 1.5;

/// Seconds of a relayed pool's preparation (`prepare_s`, [`PlannedOp::prepare_s`]) left on
/// the measuring CPU's path when it is made beside the path while the library's other
/// operations are timed (`hidden_s`: their seconds on the path, the steps that take the
/// pooled slots while the pool is made): at least [`POOL_ON_PATH_SHARE`] of it, and all
/// that its making beside (at [`POOL_BESIDE_SLOWDOWN`]) outlasts them by. Session 16's
/// fresh-clone demo: Falcon-512 verify's pool of 1239 signatures (5.0 s of calls) was made
/// in 17.7 s while its library's keygen and sign took 13 s; the estimate had counted 0.25 s.
pub fn pool_on_path_s(prepare_s: f64, hidden_s: f64) -> f64 {
    let s = prepare_s.max(0.0);
    (POOL_ON_PATH_SHARE * s).max(POOL_BESIDE_SLOWDOWN * s - hidden_s.max(0.0))
}

/// Share of one of its processes' path seconds that the output check's replay of an
/// operation's first process leaves on the measuring CPU's path with held processes (the
/// replay runs beside that process and the next one, on the shared other CPU, and what is
/// left when they end is waited for): 3.4 s on the path in session 16's fresh-clone demo,
/// 2.1 s in session 15's, for ≈ 7.7 s of one process per replayed operation.
pub const REPLAY_ON_PATH_SHARE: f64 = 0.4;

/// Seconds of the measuring CPU's path one held driver process costs besides its calls
/// (`PlannedOp::likely_on_path`): its warm-up gate, the parent's gates and lines, the first
/// process of each library's turn (not held) and the hand-over, spread over the processes.
/// Measured in a fresh demo (2026-12-07, load 2): (phase wall − Σ timed − preparations on the
/// path) ÷ processes = (64.5 − 40.8 − 7.9) s ÷ 419 = 38 ms.
pub const HELD_PATH_PER_PROCESS_S: f64 = 0.038;

/// Largest [`load_factor`].
pub const MAX_LOAD_FACTOR: f64 = 8.0;

/// How much longer than its CPU time a CPU-bound stretch of a driver process took when the
/// calibration ran, from the parent's check of that process (`kernel_check`): (CPU time +
/// run-queue wait) ÷ CPU time, or without the run-queue figure its lifetime ÷ CPU time,
/// within [1, [`MAX_LOAD_FACTOR`]]; 1 when the calibration has neither. On a busy host the
/// timed calls of a trial take this much more wall time than the one calibration call
/// suggests (a single short call is rarely preempted); on a quiet one it is about 1.
pub fn load_factor(cal: &Calibration) -> f64 {
    let Some(cpu) = cal.kernel_check("cpu_s").filter(|c| *c > 0.0) else {
        return 1.0;
    };
    let f = match (cal.kernel_check("run_delay_s"), cal.kernel_check("wall_s")) {
        (Some(d), _) => (cpu + d) / cpu,
        (None, Some(w)) => w / cpu,
        _ => 1.0,
    };
    if f.is_finite() {
        f.clamp(1.0, MAX_LOAD_FACTOR)
    } else {
        1.0
    }
}

impl PlannedOp {
    /// The calibration's call cost and process setup (seconds), when it has them: the warm
    /// call's wall seconds at the load its trial saw, else the single cold call's scaled by
    /// its [`load_factor`].
    fn calibrated(&self) -> Option<(f64, f64)> {
        let t = match self.calibration.warm_wall_call_s() {
            Some(w) if self.calibration.t1_s.is_some() => w,
            _ => self.calibration.t1_s? * load_factor(&self.calibration),
        };
        Some((t, self.calibration.setup_s?.max(0.0)))
    }

    /// [`expected_parts`] of this operation's plan and calibration ((0, 0) without either).
    pub fn expected_parts(&self, sampling: bool) -> (f64, f64) {
        match (&self.plan, self.calibrated()) {
            (Some(pl), Some((t, _))) => expected_parts(pl, t, sampling),
            _ => (0.0, 0.0),
        }
    }

    /// [`expected_s`] of this operation's plan and calibration (0 without either).
    pub fn expected_s(&self, sampling: bool) -> f64 {
        match (&self.plan, self.calibrated()) {
            (Some(pl), Some((t, setup))) => expected_s(pl, t, setup, sampling),
            _ => 0.0,
        }
    }

    /// Seconds the preparer of this operation likely takes, as the measuring loop waits for
    /// it (issue 41): once per operation (`crate::relay`: one pool reused by its processes)
    /// a key generation and one pool entry per call of a process, plus the preparer's start
    /// (the calibration's set-up). A library's turn hides
    /// part of it behind its other processes; the expensive pools (Falcon's, SPHINCS+'s
    /// signatures) are not hidden, so the whole is counted.
    pub fn prepare_s(&self, sampling: bool) -> f64 {
        let (Some((keygen, entry)), Some(pl), Some((_, setup))) =
            (self.prep, &self.plan, self.calibrated())
        else {
            return 0.0;
        };
        setup + keygen + calls_per_process(pl, sampling) * entry
    }

    /// [`PlannedOp::prepare_s`]: paid once per operation however many processes run; on the
    /// measuring CPU's path only [`POOL_ON_PATH_SHARE`] of it when pools are made beside it.
    pub fn likely_prepare_s(&self, _planning: &Planning, sampling: bool) -> f64 {
        let s = self.prepare_s(sampling);
        if crate::relay::pools_beside() {
            s * POOL_ON_PATH_SHARE
        } else {
            s
        }
    }

    /// Whether the `--target-ci` protocol will most likely spend this operation's whole
    /// budget before its interval reaches the target: a variable-work operation (`sign`, the
    /// mean of rejection rounds), trials at the call floor (the reference's `min_total` ÷
    /// `trials` calls: few samples per process) or at [`crate::decide::MAX_TRIAL_S`] (a
    /// process that costs more to start than that). Measured (demo set, 27 operations): every
    /// operation stopped by `budget_spent` was one of these, and none of the others was.
    pub fn likely_spends_budget(&self, planning: &Planning) -> bool {
        let (Some(_), Some(pl)) = (self.target_ci, &self.plan) else {
            return false;
        };
        let floor = planning.min_total.div_ceil(planning.trials.max(1));
        self.op == Operation::Sign
            || pl.iterations_per_trial <= floor
            || self
                .target_ci
                .is_some_and(|c| c.trial_target_s >= crate::decide::MAX_TRIAL_S)
    }

    /// Seconds this operation likely takes in the measure phase (the progress bar and ETA):
    /// [`PlannedOp::expected_s`], the `--target-ci` budget instead where the protocol will
    /// likely spend it ([`PlannedOp::likely_spends_budget`]), and, with `replay`, one more
    /// process for the output check's replay of the first one (`crate::outcheck`). Returns
    /// `(seconds, processes, call seconds)`, the parts scaled alike.
    pub fn likely(&self, planning: &Planning, sampling: bool, replay: bool) -> (f64, f64, f64) {
        self.likely_on_path(planning, sampling, replay, None)
    }

    /// [`PlannedOp::likely`] in seconds of the measuring CPU's path: with `held` (the
    /// processes start held beside the one before, `crate::runner::holds_on`) each process
    /// costs the path `held` seconds besides its calls instead of the calibration's set-up
    /// (which the budget still counts whole: the `--target-ci` scale is unchanged), and the
    /// output check's replay runs beside (not counted).
    pub fn likely_on_path(
        &self,
        planning: &Planning,
        sampling: bool,
        replay: bool,
        held: Option<f64>,
    ) -> (f64, f64, f64) {
        let full = self.expected_s(sampling);
        let (procs, calls) = self.expected_parts(sampling);
        let e = match held {
            Some(h) if full > 0.0 => procs * h + calls,
            _ => full,
        };
        if full <= 0.0 || procs <= 0.0 {
            return (e, procs, calls);
        }
        let mut scale = 1.0;
        if self.likely_spends_budget(planning)
            && let Some(c) = self.target_ci
        {
            scale = (c.budget_s / full).max(1.0);
        }
        // A relayed pooled operation (verify, dec: `prep`) is checked by the parent, not
        // replayed (`crate::outcheck::parent_verified`). With held processes a replay runs
        // beside the process it checks or the next one, off the measuring CPU's path (the
        // session-14 demos: 0.0–1.7 s of their 61–85 s phases on the path for 27 replays):
        // only without them is it one more process on the path.
        if replay && self.prep.is_none() && held.is_none() {
            scale += 1.0 / procs;
        }
        // The preparation, once per operation, is in the seconds, not in the parts (`Eta`
        // keeps them apart).
        (
            e * scale + self.likely_prepare_s(planning, sampling),
            procs * scale,
            calls * scale,
        )
    }

    /// The most this operation may take as planned: the `--target-ci` budget, else the
    /// expected seconds.
    pub fn bound_s(&self, sampling: bool) -> f64 {
        match self.target_ci {
            Some(c) => c.budget_s.max(self.expected_s(sampling)),
            None => self.expected_s(sampling),
        }
    }
}

/// How the `--target-ci` protocol measures one operation (`crate::decide`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetCiPlan {
    /// Relative half-width aimed at (0.01 = ±1 %).
    pub target: f64,
    /// Seconds of timed work per trial, chosen from the calibration.
    pub trial_target_s: f64,
    /// Driver seconds the operation may spend.
    pub budget_s: f64,
}

/// Plans every operation of `insts` that has a calibration; sorted cheapest first. Operations
/// whose calibration failed come first with `plan: None` (they are recorded as failed).
pub fn plan_all(opts: &UnitSettings, insts: &[Instance]) -> Vec<PlannedOp> {
    let mut out = Vec::new();
    for inst in insts {
        // Every call figure below is the calibration's warm call where it has one
        // (`Calibration::call_s`, issue 41), else its single cold call (the reference's t1).
        let exch_t1 =
            calibration::read(&cal_path(&opts.run_dir, inst, "exchange")).and_then(|c| c.call_s());
        for op in ops_of(&opts.run_dir, inst) {
            let Some(cal) = calibration::read(&cal_path(&opts.run_dir, inst, &op.key())) else {
                continue;
            };
            let mut confident = None;
            let plan = match (cal.call_s(), cal.setup_s) {
                (Some(t1), Some(setup)) => {
                    let c = (inst.category == Some(Category::Kex) && op != Operation::Exchange)
                        .then_some(exch_t1)
                        .flatten();
                    let setup = setup.max(0.0);
                    // Variable work known before any sample: `sign` (rejection rounds).
                    let variable = pqperf_model::robust::Estimator::for_op(&op.call())
                        == pqperf_model::robust::Estimator::FencedMean;
                    match opts.target_ci.and_then(|target| {
                        confident_plan(&opts.planning, t1, setup, c, variable, target)
                            .map(|x| (target, x))
                    }) {
                        Some((target, (plan, trial_target_s, budget_s))) => {
                            confident = Some(TargetCiPlan {
                                target,
                                trial_target_s,
                                budget_s,
                            });
                            Some(plan)
                        }
                        None => Some(plan_op(&opts.planning, t1, setup, c)),
                    }
                }
                _ => None,
            };
            // Not scaled by the load factor: a preparer runs off the measuring CPU (on the
            // demo runs the unscaled sum was 0.3–1.7× the preparers' seconds, scaled 1–6×).
            // Its key is one cold call; its pool entries are warm calls.
            let cal_of = |o: Operation| calibration::read(&cal_path(&opts.run_dir, inst, &o.key()));
            let prep = pool_maker(op).and_then(|maker| {
                Some((
                    cal_of(Operation::Keygen)
                        .and_then(|c| c.t1_s)
                        .unwrap_or(0.0),
                    cal_of(maker)?.call_s()?,
                ))
            });
            out.push(PlannedOp {
                inst: inst.clone(),
                op,
                plan,
                calibration: cal,
                target_ci: confident,
                prep,
            });
        }
    }
    out.sort_by(|a, b| {
        let ea = a.plan.as_ref().map_or(-1.0, estimated_s);
        let eb = b.plan.as_ref().map_or(-1.0, estimated_s);
        ea.total_cmp(&eb)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool's part of the path: the least share while the library's other operations
    /// hide its making, the excess of its slowed making over them beyond that.
    #[test]
    fn a_pool_outlasting_its_library_stays_on_the_path() {
        // Falcon-512 verify of session 16: 5.0 s of signatures, 10.4 s of keygen and sign.
        assert!((pool_on_path_s(5.0, 10.4) - POOL_ON_PATH_SHARE * 5.0).abs() < 1e-12);
        // Made at the slowdown, 2 s longer than the others' 5.5 s.
        let long = (5.5 + 2.0) / POOL_BESIDE_SLOWDOWN;
        assert!((pool_on_path_s(long, 5.5) - 2.0).abs() < 1e-9);
        // Nothing else of the library to time: all of it, slowed.
        assert!((pool_on_path_s(4.0, 0.0) - 4.0 * POOL_BESIDE_SLOWDOWN).abs() < 1e-12);
        assert_eq!(pool_on_path_s(-1.0, 3.0), 0.0);
        assert!(pool_on_path_s(4.0, 1.0) >= pool_on_path_s(4.0, 2.0));
    }

    #[test]
    fn the_likely_cost_counts_the_budget_and_the_replay() {
        let planning = reference_planning();
        let op = |op: &str, t1: f64| {
            let (plan, trial_target_s, budget_s) =
                confident_plan(&planning, t1, 0.04, None, op == "sign", 0.01).unwrap();
            let calibration = Calibration {
                t1_s: Some(t1),
                setup_s: Some(0.04),
                ..Default::default()
            };
            PlannedOp {
                inst: Instance {
                    entry: Default::default(),
                    category: None,
                    api: crate::driver::ApiSpec::Iccs,
                    kat_not_passed: false,
                },
                op: op.parse().unwrap(),
                plan: Some(plan),
                calibration,
                target_ci: Some(TargetCiPlan {
                    target: 0.01,
                    trial_target_s,
                    budget_s,
                }),
                prep: None,
            }
        };
        // A fixed-work operation with many calls per trial: its plan (the minimum of
        // processes), plus one replay.
        let keygen = op("keygen", 20e-6);
        assert!(!keygen.likely_spends_budget(&planning));
        let e = keygen.expected_s(true);
        let (l, p, _) = keygen.likely(&planning, true, true);
        let n = crate::decide::MIN_TARGET_CI_TRIALS as f64;
        assert!(
            (l - e * (n + 1.0) / n).abs() < 1e-9 && (p - (n + 1.0)).abs() < 1e-9,
            "{l} {e} {p}"
        );
        assert!((keygen.likely(&planning, true, false).0 - e).abs() < 1e-12);
        // Relayed inputs: the operation's one preparer (its start, a key, one pool entry per
        // call of a process) adds to the seconds, not to the parts; no replay.
        let mut verify = keygen.clone();
        verify.prep = Some((1e-3, 5e-3));
        let pl = verify.plan.clone().unwrap();
        let (setup, calls) = (
            verify.calibration.setup_s.unwrap(),
            (pl.iterations_per_trial + pl.iterations_per_trial.min(crate::driver::SAMPLE_CALLS))
                as f64
                + pl.warmups as f64
                + 1.0,
        );
        let prep = setup + 1e-3 + calls * 5e-3;
        assert!((verify.prepare_s(true) - prep).abs() < 1e-9);
        let (lv, pv, cv) = verify.likely(&planning, true, true);
        let (l, pk, ck) = keygen.likely(&planning, true, false);
        // Made beside the path while the library's other operations are timed, only a share
        // of it stays on the path.
        let on_path = if crate::relay::pools_beside() {
            prep * POOL_ON_PATH_SHARE
        } else {
            prep
        };
        assert!(
            (lv - l - on_path).abs() < 1e-9 && pv == pk && cv == ck,
            "{lv} {l} {on_path}"
        );
        // Signing: the budget (what the reference protocol would spend).
        let sign = op("sign", 300e-6);
        assert!(sign.likely_spends_budget(&planning));
        let budget = sign.target_ci.unwrap().budget_s;
        let (l, _, _) = sign.likely(&planning, true, false);
        assert!((l - budget).abs() < 1e-9, "{l} {budget}");
        // A call at the guide's call floor (100 calls over the 8 trials).
        assert!(op("verify", 10e-3).likely_spends_budget(&planning));
        // Held processes: each costs the path `h` besides its calls, not its set-up; a
        // budget-spending operation keeps the budget's scale of the whole processes.
        let h = HELD_PATH_PER_PROCESS_S;
        let (procs, calls) = keygen.expected_parts(true);
        let (l, p, c) = keygen.likely_on_path(&planning, true, false, Some(h));
        assert!(
            (l - (procs * h + calls)).abs() < 1e-9 && p == procs && c == calls,
            "{l} {procs} {calls}"
        );
        // Their replays run beside them, off the path.
        assert_eq!(
            keygen.likely_on_path(&planning, true, true, Some(h)),
            (l, p, c)
        );
        let (procs, calls) = sign.expected_parts(true);
        let scale = budget / sign.expected_s(true);
        let (l, _, _) = sign.likely_on_path(&planning, true, false, Some(h));
        assert!(
            (l - (procs * h + calls) * scale).abs() < 1e-9 && l < budget,
            "{l} {budget}"
        );
    }

    #[test]
    fn a_confident_plan_is_shorter_than_the_reference_and_keeps_its_rules() {
        let p = reference_planning();
        // ML-KEM-512 keygen: 20 µs a call, 40 ms to start a process.
        let (plan, trial_s, budget) = confident_plan(&p, 20e-6, 0.04, None, false, 0.01).unwrap();
        let reference = plan_op(&p, 20e-6, 0.04, None);
        // The trial floor (60 ms: windows the kernel check bounds to 2 %), not the setup.
        assert_eq!(trial_s, crate::decide::MIN_TRIAL_S);
        // Eight processes, so that compare measures the between-run drift from them.
        assert_eq!(plan.trials, crate::decide::MIN_TARGET_CI_TRIALS);
        assert!(plan.separate_processes);
        assert_eq!(plan.iterations_per_trial, 3000);
        assert!(plan.trials * plan.iterations_per_trial >= 100);
        assert_eq!(budget, reference.estimated_s.unwrap());
        // 8 × (40 ms + 60 ms) = 0.80 s against the reference's 2.2 s.
        assert!(plan.estimated_s.unwrap() < budget * 0.37);
        // A slow call keeps the guide's 100 calls (13 per trial of 8), fixed or variable
        // work: the fenced mean of every new record needs no 20 calls to see variable work.
        let (plan, _, _) = confident_plan(&p, 0.2, 0.04, None, false, 0.01).unwrap();
        assert_eq!(plan.iterations_per_trial, 13);
        let (plan, _, _) = confident_plan(&p, 0.2, 0.04, None, true, 0.01).unwrap();
        assert_eq!(plan.iterations_per_trial, 13);
        // Falcon-512 keygen-like (8 ms a call): the 60 ms trial's 8 calls, raised to the
        // guide's 13, no longer 20.
        let (plan, _, _) = confident_plan(&p, 8e-3, 0.04, None, false, 0.01).unwrap();
        assert_eq!(plan.iterations_per_trial, 13);
        // One process for all trials, or the calibration reused: the reference plan.
        assert!(confident_plan(&p, 1e-3, 120.0, None, false, 0.01).is_none());
        assert!(confident_plan(&planning(0.5, 300.0), 315.0, 2.0, None, true, 0.01).is_none());
    }

    #[test]
    fn a_variable_time_operation_gets_longer_trials_within_the_budget() {
        let p = reference_planning();
        // ML-DSA-44 sign-like: 380 µs a call, 40 ms to start a process.
        let (fixed, _, _) = confident_plan(&p, 380e-6, 0.04, None, false, 0.05).unwrap();
        let (var, trial_s, budget) = confident_plan(&p, 380e-6, 0.04, None, true, 0.05).unwrap();
        assert_eq!(fixed.iterations_per_trial, 158);
        // Near the optimum (≈ 517 calls), as many as let eight processes fit in half the
        // budget, at most what the driver samples in a trial (a ±5 % target, within reach).
        assert_eq!(var.iterations_per_trial, 373);
        assert!((trial_s - 373.0 * 380e-6).abs() < 1e-12, "{trial_s}");
        assert_eq!(var.trials, crate::decide::MIN_TARGET_CI_TRIALS);
        assert_eq!(var.warmups, fixed.warmups);
        // The budget is still the reference protocol's, and the eight processes (each
        // sampled call beside a reference call) take at most half of it.
        let reference = plan_op(&p, 380e-6, 0.04, None);
        assert_eq!(budget, reference.estimated_s.unwrap());
        let e = expected_s(&var, 380e-6, 0.04, true);
        assert!(e <= budget / 2.0 + 1e-9, "{e} {budget}");
        // ±1 % is out of reach of any trial length at the assumed spread: the fixed-work
        // plan, the cheapest eight processes (the measured spread then decides on more).
        let (var1, trial_s1, budget1) = confident_plan(&p, 380e-6, 0.04, None, true, 0.01).unwrap();
        assert_eq!(var1.iterations_per_trial, fixed.iterations_per_trial);
        assert_eq!(trial_s1, crate::decide::MIN_TRIAL_S);
        assert_eq!(budget1, budget);
        assert!(expected_s(&var1, 380e-6, 0.04, true) < e / 2.0);
        // A call of 8 ms planned as variable: longer than the call floor (13), as long as
        // eight processes fit in half the budget (a ±20 % target).
        let (var, _, budget) = confident_plan(&p, 8e-3, 0.04, None, true, 0.2).unwrap();
        assert_eq!(var.iterations_per_trial, 16);
        let e = expected_s(&var, 8e-3, 0.04, true);
        assert!(e <= budget / 2.0 + 1e-9, "{e} {budget}");
        // SPHINCS+ sign-like (40 ms a call): no longer trial fits; the guide's 13 calls.
        let (b, _, _) = confident_plan(&p, 40e-3, 0.04, None, true, 0.2).unwrap();
        assert_eq!(b.iterations_per_trial, 13);
    }

    #[test]
    fn reference_example_aigis_keygen() {
        // Aigis-sig1 keygen t≈0.32 ms → 5 × 3131 (t chosen to give the published count).
        let p = plan_op(&reference_planning(), 0.000_319_4, 0.01, None);
        assert_eq!(p.iterations_per_trial, 3131);
        assert_eq!(p.trials, 5);
        assert_eq!(p.warmups, 3);
        assert!(p.separate_processes);
    }

    #[test]
    fn slow_operation_gets_one_trial_one_call() {
        // NIIKE exchange on arm_1: t1 = 315 s > 300 s budget.
        let p = plan_op(&planning(0.5, 300.0), 315.0, 2.0, None);
        assert_eq!((p.trials, p.iterations_per_trial, p.warmups), (1, 1, 0));
        assert!(reuses_calibration(&p));
    }

    #[test]
    fn fast_operation_is_capped_and_has_at_least_20_calls() {
        let p = plan_op(&reference_planning(), 1e-9, 0.0, None);
        assert_eq!(p.iterations_per_trial, 20_000);
        let p = plan_op(&planning(0.001, 900.0), 0.01, 0.0, None);
        assert_eq!(p.iterations_per_trial, 20);
        assert_eq!(p.warmups, 3);
        let p = plan_op(&reference_planning(), 0.01, 70.0, Some(0.02));
        assert!(!p.separate_processes);
        assert_eq!(p.iterations_per_trial, 50);
        let want = 3.0 * (50.0 * 5.0 + 3.0) * 0.02 + 3.0 * 70.0 + 300.0;
        assert!((p.timeout_per_process_s.unwrap() - want).abs() < 1e-9);
    }

    #[test]
    fn budget_limits_iterations() {
        let p = plan_op(&reference_planning(), 10.0, 1.0, None);
        assert_eq!(p.iterations_per_trial, 18);
        assert_eq!(p.trials, 5);
        assert_eq!(p.warmups, 0);
    }

    #[test]
    fn the_expected_time_counts_every_call_and_process() {
        let p = plan_op(&reference_planning(), 1e-4, 0.05, None);
        assert_eq!(
            (p.trials, p.iterations_per_trial, p.warmups),
            (5, 10_000, 3)
        );
        // 5 processes: setup, 10 000 reference calls, 400 sampled, 3 warm-ups, 1 memory call.
        let want = 5.0 * (0.05 + (10_000.0 + 400.0 + 3.0 + 1.0) * 1e-4);
        assert!((expected_s(&p, 1e-4, 0.05, true) - want).abs() < 1e-9);
        let want = 5.0 * (0.05 + (10_000.0 + 3.0 + 1.0) * 1e-4);
        assert!((expected_s(&p, 1e-4, 0.05, false) - want).abs() < 1e-9);
        // One process for all trials.
        let p = plan_op(&reference_planning(), 0.01, 70.0, None);
        assert!(!p.separate_processes);
        let want = 70.0 + (5.0 * (100.0 + 100.0) + 3.0 + 1.0) * 0.01;
        assert!((expected_s(&p, 0.01, 70.0, true) - want).abs() < 1e-9);
        // The calibration reused: nothing more runs.
        let p = plan_op(&planning(0.5, 300.0), 315.0, 2.0, None);
        assert_eq!(expected_s(&p, 315.0, 2.0, true), 0.0);
    }

    #[test]
    fn the_remaining_time_is_the_plans_left_at_the_finished_operations_pace() {
        // Four operations of 10 s expected, one of them a budget one: 30 s and 10 s, the
        // priors' weights as much.
        let mut e = Eta::new([30.0, 10.0]);
        let p = e.left(&[]);
        assert_eq!((p.left_s, p.queued_s, p.pace), (40.0, 40.0, [1.0, 1.0]));
        // Two running, 4 s and 12 s into their 10 s: 6 s and a quarter (2.5 s) left of them.
        let p = e.left(&[(0, 10.0, 4.0), (0, 10.0, 12.0)]);
        assert!((p.left_s - (20.0 + 6.0 + 2.5)).abs() < 1e-9, "{p:?}");
        assert_eq!(p.running, (20.0, 16.0));
        // The first finished in 14 s: its class's pace (14 + 30) ÷ (10 + 30), not the other's.
        e.finished(0, 10.0, 14.0);
        let pace = 44.0 / 40.0;
        let p = e.left(&[(0, 10.0, 4.0)]);
        assert!(
            (p.pace[0] - pace).abs() < 1e-12 && p.pace[1] == 1.0,
            "{p:?}"
        );
        assert!(
            (p.left_s - (pace * 10.0 + 10.0 + (pace * 10.0 - 4.0))).abs() < 1e-9,
            "{p:?}"
        );
        // All finished: nothing left whatever the pace.
        e.finished(0, 10.0, 14.0);
        e.finished(0, 10.0, 14.0);
        e.finished(1, 10.0, 5.0);
        assert_eq!(e.left(&[]).left_s, 0.0);
        // The pace stays within ¼–4.
        let mut fast = Eta::new([10.0, 0.0]);
        fast.finished(0, 10.0, 1000.0);
        assert_eq!(fast.pace(0), 4.0);
        assert_eq!(Eta::new([0.0, 0.0]).left(&[]).left_s, 0.0);
        assert_eq!(duration_text(42.0), "42 s");
        assert_eq!(duration_text(4.24), "4.2 s");
    }

    #[test]
    fn the_warm_call_is_the_call_the_estimates_use() {
        let mut cal = Calibration {
            t1_s: Some(2e-4),
            setup_s: Some(0.04),
            ..Default::default()
        };
        // A busy calibration process: its cold call would be scaled by 3.
        cal.process.extra.insert(
            "kernel_check".into(),
            serde_json::json!({"cpu_s": 0.1, "wall_s": 0.9, "run_delay_s": 0.2}),
        );
        let op = |cal: Calibration| PlannedOp {
            inst: Instance {
                entry: Default::default(),
                category: None,
                api: crate::driver::ApiSpec::Iccs,
                kat_not_passed: false,
            },
            op: Operation::Keygen,
            plan: Some(plan_op(&reference_planning(), 1e-4, 0.04, None)),
            calibration: cal,
            target_ci: None,
            prep: None,
        };
        let (t, setup) = op(cal.clone()).calibrated().unwrap();
        assert!((t - 6e-4).abs() < 1e-12 && setup == 0.04, "{t}");
        assert_eq!(cal.call_s(), Some(2e-4));
        // With the warm figure: that, unscaled (its trial's wall time holds the load).
        cal.pqperf = Some(pqperf_model::calibration::CalibrationPqperf {
            warm_call_s: Some(1e-4),
            warm_calls: Some(500),
            ..Default::default()
        });
        let (t, _) = op(cal.clone()).calibrated().unwrap();
        assert_eq!(t, 1e-4);
        assert_eq!(cal.call_s(), Some(1e-4));
        // A warm trial that waited half its time for the CPU: the plan's call is its CPU
        // time, the estimate's its wall time at that load.
        cal.pqperf.as_mut().unwrap().warm_runq_share = Some(0.5);
        let (t, _) = op(cal.clone()).calibrated().unwrap();
        assert!((t - 2e-4).abs() < 1e-12, "{t}");
        assert_eq!(cal.call_s(), Some(1e-4));
        // No cold call (a failed calibration): no figure, warm or not.
        cal.t1_s = None;
        assert!(op(cal.clone()).calibrated().is_none() && cal.call_s().is_none());
        // The warm calls of the calibration process: 15 after the cold one; a first call
        // of 1/15 of 0.25 s or more ends it, and the next makes what 0.25 s pays for.
        use crate::calibrate::{WARM_TRIALS, warm_slow_s, warm_trials_after};
        assert_eq!(WARM_TRIALS, 15);
        assert!((warm_slow_s(15) - 0.25 / 15.0).abs() < 1e-12);
        assert_eq!(warm_trials_after(0.05, 15), 5);
        assert_eq!(warm_trials_after(0.02, 15), 12);
        // Always fewer than before, none for a call of 0.25 s or more.
        assert_eq!(warm_trials_after(0.02, 12), 11);
        assert_eq!(warm_trials_after(0.2, 15), 1);
        assert_eq!(warm_trials_after(0.25, 15), 0);
        assert_eq!(warm_trials_after(f64::NAN, 15), 0);
        assert_eq!(warm_trials_after(1e-6, 1), 0);
    }

    #[test]
    fn the_load_factor_follows_the_calibration_process() {
        let cal = |k: Value| {
            let mut c = Calibration {
                t1_s: Some(1e-3),
                setup_s: Some(0.05),
                ..Default::default()
            };
            c.process.extra.insert("kernel_check".into(), k);
            c
        };
        let run_delay = cal(serde_json::json!({"cpu_s": 0.1, "wall_s": 0.9, "run_delay_s": 0.2}));
        assert!((load_factor(&run_delay) - 3.0).abs() < 1e-9);
        let wall = cal(serde_json::json!({"cpu_s": 0.1, "wall_s": 0.25, "run_delay_s": null}));
        assert!((load_factor(&wall) - 2.5).abs() < 1e-9);
        assert_eq!(
            load_factor(&cal(serde_json::json!({"cpu_s": 0.1, "wall_s": 0.09}))),
            1.0
        );
        assert_eq!(
            load_factor(&cal(serde_json::json!({"cpu_s": 0.01, "wall_s": 5.0}))),
            MAX_LOAD_FACTOR
        );
        assert_eq!(
            load_factor(&cal(serde_json::json!({"cpu_s": 0.0, "wall_s": 1.0}))),
            1.0
        );
        assert_eq!(load_factor(&Calibration::default()), 1.0);
        assert_eq!(duration_text(192.0), "3.2 min");
        assert_eq!(duration_text(5220.0 * 2.0), "2.90 h");
    }
}
