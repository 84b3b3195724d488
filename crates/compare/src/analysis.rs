//! The comparison of two separately measured runs: pairing, ratio intervals that know the
//! between-run noise, verdicts, refusals and the spread.
//!
//! The ratio B/A of the robust estimates gets three intervals, and the verdict uses the widest
//! view of them:
//!
//! * **per call**: the percentile bootstrap of the ratio from both sides' stored samples
//!   (how well each run knows its own estimate);
//! * **between processes**: the Welch t-interval (95 %) of the difference of the mean log
//!   per-process estimates (each sampled trial's own estimate; one sampled trial per driver
//!   process when the plan runs separate processes), centred on the ratio: the noise between
//!   fresh processes, which the per-call bootstrap underrates with five trials. With at least
//!   [`rank::MIN_PER_SIDE`] processes a side (the `--target-ci` protocol runs many short
//!   ones) it is the Mann–Whitney interval of the Hodges–Lehmann shift instead
//!   ([`crate::rank`]), which a minority of processes in one of a shared host's slow phases
//!   hardly moves, and it stands alone (each process's estimate carries its own calls' noise);
//! * **between runs**: the A–A noise floor a side's campaign.json records (median |change|
//!   `m` of two campaigns of the same libraries): its spread `s = ln(1+m)/0.6745` (the median
//!   |x| of a normal is 0.6745 σ) is added in quadrature to both half-widths (log space,
//!   1.96 s). When neither records one and both sides have at least [`rank::MIN_PER_SIDE`]
//!   processes (independent streams, in the order they ran), the **measured drift**
//!   replaces it ([`drift_of`]: how far the second half of a run's processes moved from the
//!   first beyond what their own spread explains; `s` = √(a² + b²) of the two runs'
//!   drifts); with fewer processes [`DEFAULT_NOISE_FLOOR`] is assumed.
//!
//! A variable-time operation (compared with the fenced mean) whose two runs drew the same
//! input streams is judged by its calls paired by (stream seed, call index) instead
//! ([`crate::streams`]): the same inputs on both sides, so the operation's own variability
//! leaves the ratio's interval; when that is not possible the row says why
//! (`unpaired_reason`) and keeps the views below.
//!
//! The verdict interval is the hull of the per-call interval (around the ratio of the robust
//! estimates) and the between-process interval (around the difference of the mean log
//! per-process estimates), so a side whose processes disagree with its pooled estimate
//! (bimodal per-process estimates) widens it.
//!
//! The verdict is [`crate::verdict::judge`] of the widened interval, then, since the runs were
//! taken at different times, gates that can only make it inconclusive:
//!
//! * fewer than [`MIN_PROCESSES`] sampled trials on a side: the noise between processes is
//!   unknown (or known too poorly to see whether the machine stayed the same);
//! * the environment gate ([`crate::verdict::environment_gate`]) with the canary ratio of the
//!   two records (`pqperf.environment_evidence`, only when both used the same canary method);
//! * the stability gate ([`crate::verdict::stability_gate`]): a side's own processes differ by
//!   at least the change (largest ÷ smallest; with the rank interval, the middle half);
//! * the fast-calls gate ([`crate::verdict::fast_calls_gate`]): the [`FAST_QUANTILE`] of the
//!   calls does not show the change the estimates show.
//!
//! The last two exist because a shared machine has slow phases the canary does not see (found
//! on a 2-vCPU VM beside other work: whole processes whose calls of a fixed busy loop ran
//! 4–6× slower while the canary, a latency-bound multiply chain, ran at its usual speed),
//! which made two separately measured runs of the same library "slower" with an interval
//! excluding 1.

use serde::Serialize;

use pqperf_model::Record;
use pqperf_model::pynum::quantile_sorted;
use pqperf_model::robust::{Estimator, percentile_ci};

pub use pqperf_model::ab::Verdict;

use crate::rank;
use crate::verdict::{environment_gate, equivalence, fast_calls_gate, judge, stability_gate};
use crate::{CompareError, Side};

/// The A–A noise floor (median |change| between two runs of the same libraries) assumed when
/// neither run records one: two runs taken at different times differ by more than their own
/// processes show, and nothing in them measures by how much. On a shared 2-vCPU VM, 30 A–A
/// pairs of separately measured runs (the verdicts benchmark, register-bound candidate,
/// quiet, one hog pinned to the benchmark CPU, three hogs) differed by a median 0.8 % but up
/// to 5.0 %, with their processes agreeing within 2–4 %; the heavy tail is what a default
/// must cover: 2 % widens an interval by ±5.8 % (log space, in quadrature), which kept every
/// one of those pairs from a faster/slower verdict and left all 30 +25 % changes detected.
/// A floor recorded with `pqperf compare --record-noise-floor` replaces it.
pub const DEFAULT_NOISE_FLOOR: f64 = 0.02;

/// How far a run's machine drifted while it measured, from its processes' log estimates in
/// the order they ran (log space, one standard deviation): the medians of the first and the
/// second half differ by `d`; their own spread (1.4826 × the median absolute deviation from
/// each half's median, σ) gives `v = (1.2533 σ)² (1/n₁ + 1/n₂)`, the variance of a
/// difference of two medians; the drift is the part of `d` beyond its 95 % noise band,
/// `√max(0, d² − 1.96² v)` (a steady run gives 0 in 95 % of cases, a drift well beyond the
/// processes' spread is counted almost fully). `None` with fewer than [`rank::MIN_PER_SIDE`]
/// processes. [`drift_with_noise`] also knows the processes' own call noise.
pub fn drift_of(logs: &[f64]) -> Option<f64> {
    drift_with_noise(logs, None)
}

/// [`drift_of`] with σ at least `se`, the standard error of one process's estimate from its
/// own calls ([`call_noise`]): independent streams of a variable-time operation differ by
/// their rejection counts at least this much, and four processes a half estimate their
/// spread too poorly to tell it from a drift (ML-DSA-44 `sign`, 8 processes of ≈ 350 calls
/// a side on a busy VM: "drifts" of 4–12 % from the streams alone).
pub fn drift_with_noise(logs: &[f64], se: Option<f64>) -> Option<f64> {
    let n = logs.len();
    if n < rank::MIN_PER_SIDE {
        return None;
    }
    let (h1, h2) = logs.split_at(n / 2);
    let med = |x: &[f64]| {
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        quantile_sorted(&v, 0.5)
    };
    let (m1, m2) = (med(h1)?, med(h2)?);
    let mut dev: Vec<f64> = h1
        .iter()
        .map(|x| (x - m1).abs())
        .chain(h2.iter().map(|x| (x - m2).abs()))
        .collect();
    dev.sort_by(f64::total_cmp);
    let sigma = (1.4826 * quantile_sorted(&dev, 0.5)?).max(se.unwrap_or(0.0));
    let v = (1.2533 * sigma).powi(2) * (1.0 / h1.len() as f64 + 1.0 / h2.len() as f64);
    let d = m2 - m1;
    Some((d * d - 1.96 * 1.96 * v).max(0.0).sqrt())
}

/// The median |change| `m` whose floor spread ([`floor_half_width`]) is `1.96 · √(a² + b²)`
/// for the drifts `a`, `b` of the two runs (each run its own).
pub fn floor_of_drift(a: f64, b: f64) -> f64 {
    (0.6745 * a.hypot(b)).exp() - 1.0
}

/// The typical noise of one process's estimate from its own calls (log space, one standard
/// error): when compared with the mean estimator ([`Estimator::FencedMean`]) the median over sampled trials
/// of sd ÷ mean ÷ √n of the calls it averages. Processes of a variable-time operation
/// differ by this much from their streams alone (different rejection counts), which is not
/// the machine changing. `None` for other estimators.
pub fn call_noise(r: &Record, est: Estimator) -> Option<f64> {
    let rb = r.pqperf.as_ref()?.robust.as_ref()?;
    if !est.is_fenced() {
        return None;
    }
    let mut se: Vec<f64> = rb
        .sample_trials()
        .ok()?
        .into_iter()
        .filter_map(|mut t| {
            let f = pqperf_model::robust::fence(&mut t)?;
            let kept: Vec<f64> = t.iter().filter(|&&x| x <= f).map(|&x| x as f64).collect();
            let n = kept.len() as f64;
            if n < 2.0 {
                return None;
            }
            let m = kept.iter().sum::<f64>() / n;
            let v = kept.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
            (m > 0.0).then(|| v.sqrt() / m / n.sqrt())
        })
        .collect();
    se.sort_by(f64::total_cmp);
    quantile_sorted(&se, 0.5)
}

/// The spread of a side of `n` processes beyond what its calls' own noise explains: `exp
/// √max(0, ln(s)² − (k·se)²)` with `k` = 1.349 + 1.96 · 1.573 ÷ √n for the middle half (the
/// inter-quartile range of a normal, plus the 95 % sampling noise of an inter-quartile range
/// of `n` values: with 96 streams of ML-DSA-44-like signing the middle half alone spans
/// 1.35–1.67 standard errors) or 3 for the largest ÷ smallest of a few.
fn excess_spread(spread: Option<f64>, se: Option<f64>, middle_half: bool, n: usize) -> Option<f64> {
    let s = spread?;
    let Some(se) = se else {
        return Some(s);
    };
    let k = if middle_half {
        1.349 + 1.96 * 1.573 / (n.max(1) as f64).sqrt()
    } else {
        3.0
    };
    let l = s.ln();
    Some((l * l - (k * se).powi(2)).max(0.0).sqrt().exp())
}

/// Fewest sampled trials (fresh processes) a side needs for a verdict between two runs.
pub const MIN_PROCESSES: usize = 3;

/// The quantile of a side's calls that stands for its fast calls (the fast-calls gate).
pub const FAST_QUANTILE: f64 = 0.1;

/// Seed offset of side B's replicates (side A uses the record's stored seed).
const B_SEED_XOR: u64 = 0x9E37_79B9_7F4A_7C15;

/// Options of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Smallest relative change that counts (0.02 = 2 %).
    pub threshold: f64,
    /// Confidence of the ratio interval (0.95).
    pub confidence: f64,
    /// Instance mapping `A label → B label`; when given, only the mapped pairs are compared.
    pub map: Vec<(String, String)>,
    /// Compare emulated data and mixed ICCS providers anyway.
    pub force: bool,
    /// Judge a variable-time operation by its calls paired by input stream when both runs
    /// recorded their streams ([`crate::streams`]); false: the unpaired view only (default
    /// true; benchmarks print both).
    pub pair_streams: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold: 0.02,
            confidence: 0.95,
            map: Vec::new(),
            force: false,
            pair_streams: true,
        }
    }
}

/// One compared (candidate, instance, operation).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Candidate id.
    pub candidate: String,
    /// Instance label on side A.
    pub label_a: String,
    /// Instance label on side B.
    pub label_b: String,
    /// Operation key (`keygen`, `hash_32`, …).
    pub op: String,
    /// Robust estimate of A (s per call).
    pub a_seconds: Option<f64>,
    /// Robust estimate of B (s per call).
    pub b_seconds: Option<f64>,
    /// B/A: of the robust estimates, or when the between-process interval is the rank one
    /// (`process_ci_method` `rank`) exp of the Hodges–Lehmann shift of the per-process estimates,
    /// which a different share of slow processes on the two sides does not move.
    pub ratio: Option<f64>,
    /// Lower bound of the ratio interval.
    pub ratio_ci_low: Option<f64>,
    /// Upper bound of the ratio interval.
    pub ratio_ci_high: Option<f64>,
    /// Lower bound of the equivalence test's interval (at 2·confidence − 1, 90 %), which
    /// a "no change" verdict needs inside the band ([`crate::verdict::equivalence`]).
    pub equivalence_ci_low: Option<f64>,
    /// Upper bound of the equivalence test's interval.
    pub equivalence_ci_high: Option<f64>,
    /// B/A of the reference `median_trial_seconds` (no interval), for comparison.
    pub naive_ratio: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why the verdict is what it is, in words (always set for `inconclusive`).
    pub reason: Option<String>,
    /// The per-call bootstrap interval of the ratio (lower bound).
    pub call_ci_low: Option<f64>,
    /// The per-call bootstrap interval of the ratio (upper bound).
    pub call_ci_high: Option<f64>,
    /// The between-process interval of the ratio (lower bound), with ≥ 2 processes a side.
    pub process_ci_low: Option<f64>,
    /// The between-process interval of the ratio (upper bound).
    pub process_ci_high: Option<f64>,
    /// How the between-process interval was taken: `rank` (Hodges–Lehmann shift with the
    /// Mann–Whitney interval, at least 8 processes a side) or `welch` (t-interval of the mean
    /// log estimates).
    pub process_ci_method: Option<String>,
    /// Sampled trials (per-process estimates) of A and B.
    pub processes: (usize, usize),
    /// The A–A noise floor (median |change|) that widened the interval: the recorded one, the
    /// drift measured within the runs (`noise_floor_measured`), or [`DEFAULT_NOISE_FLOOR`]
    /// (`noise_floor_assumed`).
    pub noise_floor: Option<f64>,
    /// True when `noise_floor` is the assumed default, not a recorded floor.
    pub noise_floor_assumed: bool,
    /// True when `noise_floor` was measured from the two runs' own processes ([`drift_of`]:
    /// no floor recorded, at least [`rank::MIN_PER_SIDE`] processes a side).
    pub noise_floor_measured: bool,
    /// B/A of the two records' canary figures (seconds): how the machine differed (only when
    /// both records used the same canary method).
    pub canary_ratio: Option<f64>,
    /// How much the machine changed within each run, A and B: largest ÷ smallest
    /// per-process estimate, or with the rank interval (`process_ci_method` `rank`) the 75th ÷
    /// 25th percentile of them (the middle half, which a minority of processes in a slow phase
    /// does not set), beyond what the processes' own calls explain (the mean estimator's
    /// independent streams: [`call_noise`]).
    pub process_spread: (Option<f64>, Option<f64>),
    /// B/A of the [`FAST_QUANTILE`] of each side's calls.
    pub fast_calls_ratio: Option<f64>,
    /// Both sides measured the same library file (sha256).
    pub same_library: bool,
    /// What the instruction counts of the same operation say (both sides counted:
    /// [`crate::counts::attach`]): identical counts, or the work's exact ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
    /// A variable-time operation's calls paired by input stream and call index
    /// ([`crate::streams`]): the view the verdict, ratio and intervals were judged by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired: Option<crate::streams::PairedView>,
    /// Why a variable-time operation was judged unpaired (the runs' streams could not be
    /// paired), in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpaired_reason: Option<String>,
}

/// The spread of the ratios found (the A–A noise floor when every pair measured the same
/// library file).
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    /// Operations with both estimates.
    pub ops: usize,
    /// Median of |ratio − 1|.
    pub median_abs_change: f64,
    /// Largest |ratio − 1|.
    pub max_abs_change: f64,
    /// Largest half-width of a ratio interval.
    pub max_ci_half_width: f64,
    /// Every pair measured the same library file: this spread is an A–A noise floor.
    pub same_libraries: bool,
}

/// The result of `pqperf compare`.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Side A as given.
    pub a: String,
    /// Side B as given.
    pub b: String,
    /// Threshold used.
    pub threshold: f64,
    /// Confidence used.
    pub confidence: f64,
    /// Compared operations.
    pub rows: Vec<Row>,
    /// `candidate/label op` present in A only.
    pub only_a: Vec<String>,
    /// `candidate/label op` present in B only.
    pub only_b: Vec<String>,
    /// Spread of the ratios.
    pub spread: Option<Spread>,
    /// Notes (forced comparisons and what was overridden).
    pub notes: Vec<String>,
}

impl Comparison {
    /// True when any operation is slower.
    pub fn any_slower(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Slower)
    }

    /// Rows where both sides have an estimate (what a gate can judge at all).
    pub fn comparable(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict != Verdict::NoEstimate)
            .count()
    }
}

fn op_key(r: &Record) -> String {
    if r.input_bytes > 0 {
        format!("{}_{}", r.operation, r.input_bytes)
    } else {
        r.operation.clone()
    }
}

fn provider_kind(r: &Record) -> Option<String> {
    r.pqperf
        .as_ref()?
        .extra
        .get("iccs_provider")?
        .get("kind")?
        .as_str()
        .map(str::to_string)
}

/// Refusals: emulated records, mixed ICCS providers.
fn check_sides(
    a: &Side,
    b: &Side,
    o: &Options,
    notes: &mut Vec<String>,
) -> Result<(), CompareError> {
    for s in [a, b] {
        if let Some(r) = s.records.iter().find(|r| r.emulated().is_some()) {
            let m = format!(
                "{}: {}/{} {} was measured on an emulated host ({}): its timings are not performance figures",
                s.shown,
                r.candidate,
                r.label,
                op_key(r),
                r.emulated().unwrap_or_default()
            );
            if !o.force {
                return Err(CompareError::Refused(format!(
                    "{m} (use --force to compare anyway)"
                )));
            }
            notes.push(format!("forced: {m}"));
        }
    }
    let kinds = |s: &Side| {
        let mut k: Vec<String> = s.records.iter().filter_map(provider_kind).collect();
        k.sort();
        k.dedup();
        k
    };
    let (ka, kb) = (kinds(a), kinds(b));
    let mixed = ka.len() > 1 || kb.len() > 1 || (!ka.is_empty() && !kb.is_empty() && ka != kb);
    if mixed {
        let m = format!(
            "mixed ICCS providers: A uses {}, B uses {}",
            ka.join("+"),
            kb.join("+")
        );
        if !o.force {
            return Err(CompareError::Refused(format!(
                "{m} (use --force to compare anyway)"
            )));
        }
        notes.push(format!("forced: {m}"));
    }
    Ok(())
}

/// The estimator both sides are compared with: the records' own when they agree; when they
/// differ (an operation whose calls' middle half was wide in one run only, or an earlier
/// record's `trimmed_mean_20`), the fenced mean when either uses it (what a variable-time
/// operation costs), else A's. Both sides are then recomputed from their stored samples.
pub fn common_estimator(a: &Record, b: &Record) -> Option<Estimator> {
    let est = |r: &Record| {
        let rb = r.pqperf.as_ref()?.robust.as_ref()?;
        Estimator::parse(&rb.estimator)
    };
    let (x, y) = (est(a)?, est(b)?);
    Some(if x == y || (!x.is_fenced() && !y.is_fenced()) {
        x
    } else if x.is_fenced() {
        // Both names of the fenced mean are one statistic.
        x
    } else {
        y
    })
}

/// Ratio B/A with its per-call percentile interval, from the two records' robust estimates
/// (with `est`).
fn ratio_ci(a: &Record, b: &Record, est: Estimator, confidence: f64) -> Option<(f64, f64, f64)> {
    let ra = a.pqperf.as_ref()?.robust.as_ref()?;
    let rb = b.pqperf.as_ref()?.robust.as_ref()?;
    let xa = ra.replicates_seconds_with(est, ra.seed).ok()?;
    let xb = rb.replicates_seconds_with(est, rb.seed ^ B_SEED_XOR).ok()?;
    let mut r: Vec<f64> = xa
        .iter()
        .zip(&xb)
        .filter(|(x, _)| **x > 0.0)
        .map(|(x, y)| y / x)
        .collect();
    let (ea, eb) = (
        ra.estimate_seconds_with(est)?,
        rb.estimate_seconds_with(est)?,
    );
    if ea <= 0.0 {
        return None;
    }
    let (lo, hi) = percentile_ci(&mut r, confidence)?;
    Some((eb / ea, lo, hi))
}

/// ln of each sampled trial's own estimate (the record's estimator over that trial's calls).
pub fn process_log_estimates(r: &Record) -> Vec<f64> {
    let Some(rb) = r.pqperf.as_ref().and_then(|p| p.robust.as_ref()) else {
        return Vec::new();
    };
    let est = Estimator::parse(&rb.estimator).unwrap_or(Estimator::for_op(&r.operation));
    process_log_estimates_with(r, est)
}

/// [`process_log_estimates`] with `est` instead of the record's estimator.
pub fn process_log_estimates_with(r: &Record, est: Estimator) -> Vec<f64> {
    let Some(rb) = r.pqperf.as_ref().and_then(|p| p.robust.as_ref()) else {
        return Vec::new();
    };
    rb.sample_trials()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|mut t| est.of(&mut t))
        .filter(|&x| x > 0.0)
        .map(f64::ln)
        .collect()
}

/// Student's t quantile: one home, `pqperf_model::robust::t975` (non-integer Welch degrees
/// of freedom round down: the wider, safer interval).
pub use pqperf_model::robust::t975;

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Half-width (log space) of the 95 % Welch interval of mean(ln B) − mean(ln A); `None` with
/// fewer than two values on a side.
pub fn welch_half_width(la: &[f64], lb: &[f64]) -> Option<f64> {
    if la.len() < 2 || lb.len() < 2 {
        return None;
    }
    let (_, va) = mean_var(la);
    let (_, vb) = mean_var(lb);
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let (qa, qb) = (va / na, vb / nb);
    let se2 = qa + qb;
    if se2 <= 0.0 {
        return Some(0.0);
    }
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    Some(t975(df) * se2.sqrt())
}

/// The between-run spread (log space, 1.96 σ) of an A–A noise floor `m` (median |change|).
pub fn floor_half_width(m: f64) -> f64 {
    1.96 * (1.0 + m).ln() / 0.6745
}

/// Canary figure of a record in seconds (median ticks ÷ the record's tick rate) with its
/// method.
fn canary_seconds(r: &Record) -> Option<(f64, &str)> {
    let p = r.pqperf.as_ref()?;
    let e = p.environment_evidence.as_ref()?;
    let ticks = e.canary_median_ticks?;
    let hz = p.robust.as_ref()?.tick_hz;
    (ticks > 0.0 && hz > 0.0).then(|| (ticks / hz, e.canary_method.as_str()))
}

/// B/A of the canary figures, when both records timed the same canary.
fn canary_ratio(a: &Record, b: &Record) -> Option<f64> {
    match (canary_seconds(a), canary_seconds(b)) {
        (Some((x, ma)), Some((y, mb))) if ma == mb => Some(y / x),
        _ => None,
    }
}

/// How much a side's per-process estimates (`ln` values) differ: largest ÷ smallest, or with
/// `middle_half` (the comparison takes the rank interval) the 75th ÷ 25th percentile;
/// `None` with fewer than two.
pub fn spread_of(logs: &[f64], middle_half: bool) -> Option<f64> {
    if logs.len() < 2 {
        return None;
    }
    if middle_half {
        let mut v = logs.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| quantile_sorted(&v, p);
        return Some((q(0.75)? - q(0.25)?).exp());
    }
    let hi = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = logs.iter().copied().fold(f64::INFINITY, f64::min);
    Some((hi - lo).exp())
}

/// The [`FAST_QUANTILE`] of all of a record's sampled calls, in ticks.
pub fn fast_calls_ticks(r: &Record) -> Option<f64> {
    let rb = r.pqperf.as_ref()?.robust.as_ref()?;
    let mut v: Vec<f64> = rb
        .sample_trials()
        .ok()?
        .into_iter()
        .flatten()
        .map(|t| t as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, FAST_QUANTILE).filter(|&x| x > 0.0)
}

/// B/A of the fast calls in seconds (each side's ticks ÷ its tick rate).
fn fast_calls_ratio(a: &Record, b: &Record) -> Option<f64> {
    let hz = |r: &Record| {
        r.pqperf
            .as_ref()?
            .robust
            .as_ref()
            .map(|x| x.tick_hz)
            .filter(|h| *h > 0.0)
    };
    Some((fast_calls_ticks(b)? / hz(b)?) / (fast_calls_ticks(a)? / hz(a)?))
}

/// The between-process interval of ln(B/A) (log space), its centre and how it was taken.
struct BetweenProcesses {
    low: f64,
    high: f64,
    /// The processes' own difference: the Hodges–Lehmann shift (rank) or the difference of
    /// the means (welch).
    centre: f64,
    /// The rank interval (Hodges–Lehmann shift, Mann–Whitney interval) rather than Welch's.
    rank: bool,
}

/// The between-process interval of the per-process log estimates `la`, `lb`: with at least
/// [`rank::MIN_PER_SIDE`] processes a side the Mann–Whitney interval of the shift, which a
/// minority of processes in one of a shared host's slow phases hardly moves; with fewer the
/// Welch t-interval (95 %) around the difference of the means. `None` with fewer than two
/// processes on a side.
fn between_processes(la: &[f64], lb: &[f64], confidence: f64) -> Option<BetweenProcesses> {
    if la.len().min(lb.len()) >= rank::MIN_PER_SIDE
        && let Some(sh) = rank::interval(la, lb, confidence)
    {
        return Some(BetweenProcesses {
            low: sh.low,
            high: sh.high,
            centre: sh.estimate,
            rank: true,
        });
    }
    let h = welch_half_width(la, lb)?;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    let centre = mean(lb) - mean(la);
    Some(BetweenProcesses {
        low: centre - h,
        high: centre + h,
        centre,
        rank: false,
    })
}

/// Normal quantiles of the floor's spread: 95 % two-sided, and the equivalence test's 90 %.
const Z_95: f64 = 1.959_964;
const Z_EQUIVALENCE: f64 = 1.644_854;

/// The verdict interval of ratio `exp(lr)`: the hull of the per-call interval `call` and
/// the between-process one `between` (log space), each side of the ratio (the rank view
/// stands alone: each process's estimate carries its own calls' noise, and the record's
/// bootstrap, which resamples processes, swings with how many slow ones it draws), with the
/// floor's half-width `f` added in quadrature.
fn hull(
    lr: f64,
    rank_view: bool,
    (clo, chi): (f64, f64),
    between: Option<(f64, f64)>,
    f: f64,
) -> (f64, f64) {
    let (mut dlo, mut dhi) = if rank_view {
        (0.0, 0.0)
    } else {
        ((lr - clo.ln()).max(0.0), (chi.ln() - lr).max(0.0))
    };
    if let Some((low, high)) = between {
        dlo = dlo.max(lr - low);
        dhi = dhi.max(high - lr);
    }
    dlo = (dlo * dlo + f * f).sqrt();
    dhi = (dhi * dhi + f * f).sqrt();
    ((lr - dlo).exp(), (lr + dhi).exp())
}

/// Everything one row's verdict is made of.
struct Judged {
    ratio: f64,
    lo: f64,
    hi: f64,
    equivalence: (f64, f64),
    call: (f64, f64),
    process: Option<(f64, f64)>,
    process_method: Option<&'static str>,
    processes: (usize, usize),
    floor: Floor,
    canary: Option<f64>,
    spread: (Option<f64>, Option<f64>),
    fast: Option<f64>,
    verdict: Verdict,
    reason: Option<String>,
    /// The paired view the verdict was judged by ([`crate::streams`]), or why the
    /// variable-time operation could not be paired (`None` for other operations).
    pairing: Option<Result<crate::streams::PairedView, String>>,
}

/// The between-run noise a comparison allows for.
#[derive(Debug, Clone, Copy)]
struct Floor {
    /// Median |change| of A–A pairs of runs.
    m: f64,
    /// Not recorded for these runs: [`DEFAULT_NOISE_FLOOR`].
    assumed: bool,
    /// Not recorded: measured from the runs' own processes ([`drift_of`]).
    measured: bool,
}

fn judge_pair(a: &Record, b: &Record, recorded: Option<f64>, o: &Options) -> Option<Judged> {
    let est = common_estimator(a, b)?;
    let (pooled, clo, chi) = ratio_ci(a, b, est, o.confidence)?;
    let (la, lb) = (
        process_log_estimates_with(a, est),
        process_log_estimates_with(b, est),
    );
    let (sea, seb) = (call_noise(a, est), call_noise(b, est));
    let floor = match (
        recorded,
        drift_with_noise(&la, sea),
        drift_with_noise(&lb, seb),
    ) {
        (Some(m), _, _) => Floor {
            m,
            assumed: false,
            measured: false,
        },
        (None, Some(x), Some(y)) => Floor {
            m: floor_of_drift(x, y),
            assumed: false,
            measured: true,
        },
        _ => Floor {
            m: DEFAULT_NOISE_FLOOR,
            assumed: true,
            measured: false,
        },
    };
    let between = between_processes(&la, &lb, o.confidence);
    // With the rank view the ratio is the processes' own shift (exp of the Hodges–Lehmann
    // estimate of the per-process estimates), not the pooled estimates' ratio, which a
    // different share of slow processes on the two sides moves.
    let rank_view = between.as_ref().is_some_and(|bp| bp.rank);
    let ratio = match &between {
        Some(bp) if bp.rank => bp.centre.exp(),
        _ => pooled,
    };
    let lr = ratio.ln();
    let f = floor_half_width(floor.m);
    let (lo, hi) = hull(
        lr,
        rank_view,
        (clo, chi),
        between.as_ref().map(|bp| (bp.low, bp.high)),
        f,
    );
    // The equivalence test's interval ("no change" needs it inside the band): the same
    // views at 2·confidence − 1 (90 % for 95 %); the Welch view (fewer than 8 processes a
    // side, where the floor is usually assumed anyway) keeps its 95 %.
    let eq_conf = 2.0 * o.confidence - 1.0;
    let (_, eclo, echi) = ratio_ci(a, b, est, eq_conf)?;
    let ebetween = match &between {
        Some(bp) if bp.rank => rank::interval(&la, &lb, eq_conf).map(|sh| (sh.low, sh.high)),
        Some(bp) => Some((bp.low, bp.high)),
        None => None,
    };
    let eq_iv = hull(
        lr,
        rank_view,
        (eclo, echi),
        ebetween,
        f * Z_EQUIVALENCE / Z_95,
    );
    let canary = canary_ratio(a, b);
    // What the gates weigh: the spread beyond the processes' own call noise (independent
    // streams of a variable-time operation differ by their rejection counts).
    let spread = (
        excess_spread(spread_of(&la, rank_view), sea, rank_view, la.len()),
        excess_spread(spread_of(&lb, rank_view), seb, rank_view, lb.len()),
    );
    let fast = fast_calls_ratio(a, b);
    let few = la.len().min(lb.len());
    let (verdict, mut reason) = if between.is_none() || few < MIN_PROCESSES {
        let side = if la.len() <= lb.len() { "A" } else { "B" };
        let why = if between.is_none() {
            "the noise between processes is unknown"
        } else {
            "too few to show whether the machine stayed the same"
        };
        (
            Verdict::Inconclusive,
            Some(format!(
                "side {side} has {few} sampled trial(s): {why}; measure with at least {MIN_PROCESSES} trials (separate processes) a side, or interleaved (pqperf ab)"
            )),
        )
    } else {
        let t = o.threshold;
        let j = judge(ratio, lo, hi, t);
        let j = equivalence(j, ratio, eq_iv, t);
        let j = environment_gate(j, ratio, canary, t);
        let j = stability_gate(
            j,
            ratio,
            [("A", la.len(), spread.0), ("B", lb.len(), spread.1)],
            rank_view,
            t,
        );
        fast_calls_gate(j, ratio, fast, t)
    };
    // A variable-time operation whose two runs drew the same input streams is judged on
    // its calls paired by (stream, call index): the operation's own variability cancels.
    // (Records of this version take the fenced mean for every operation: whether the work
    // is variable is then the earlier choice's, from the calls.)
    let variable = match est {
        Estimator::Fenced => [a, b].iter().any(|r| {
            r.pqperf
                .as_ref()
                .and_then(|x| x.robust.as_ref())
                .and_then(|rb| rb.sample_trials().ok())
                .is_some_and(|t| Estimator::choose_v2(&r.operation, &t).is_fenced())
        }),
        e => e.is_mean(),
    };
    let pairing =
        (variable && o.pair_streams).then(|| crate::streams::paired(a, b, recorded, o.confidence));
    if let Some(Ok(pv)) = &pairing {
        return Some(judge_paired(
            pv,
            Judged {
                ratio: pv.ratio,
                lo: pv.low,
                hi: pv.high,
                equivalence: (pv.equivalence_low, pv.equivalence_high),
                call: (clo, chi),
                process: between.as_ref().map(|bp| (bp.low.exp(), bp.high.exp())),
                process_method: between.map(|bp| if bp.rank { "rank" } else { "welch" }),
                processes: (la.len(), lb.len()),
                floor: Floor {
                    m: pv.floor,
                    assumed: pv.floor_from == crate::streams::FloorFrom::Assumed,
                    measured: pv.floor_from == crate::streams::FloorFrom::Measured,
                },
                canary,
                spread,
                fast,
                verdict: Verdict::Inconclusive,
                reason: None,
                pairing: None,
            },
            o.threshold,
        ));
    }
    if let Some(Err(why)) = &pairing
        && let Some(r) = reason.as_mut()
        && verdict == Verdict::Inconclusive
    {
        r.push_str(&format!(
            " (unpaired: {why}; pairing the runs' calls by input stream would remove the operation's own variability)"
        ));
    }
    if let Some(r) = reason.as_mut()
        && verdict == Verdict::Inconclusive
        && floor.m > 0.0
    {
        if floor.measured {
            r.push_str(&format!(
                " (the interval includes the between-run drift measured within the two runs' own processes, a floor of ±{:.2} %)",
                floor.m * 100.0
            ));
        } else if floor.assumed {
            r.push_str(&format!(
                " (the interval includes an assumed between-run noise floor of ±{:.1} %: neither run records one; `pqperf compare A1 A2 --record-noise-floor` of two runs of the same libraries records this machine's)",
                floor.m * 100.0
            ));
        } else {
            r.push_str(&format!(
                " (the interval includes the recorded A–A noise floor of ±{:.1} %)",
                floor.m * 100.0
            ));
        }
    }
    Some(Judged {
        ratio,
        lo,
        hi,
        equivalence: eq_iv,
        call: (clo, chi),
        process: between.as_ref().map(|bp| (bp.low.exp(), bp.high.exp())),
        process_method: between.map(|bp| if bp.rank { "rank" } else { "welch" }),
        processes: (la.len(), lb.len()),
        floor,
        canary,
        spread,
        fast,
        verdict,
        reason,
        pairing,
    })
}

/// The verdict of a paired view ([`crate::streams`]): [`judge`] of its 95 % interval, the
/// equivalence test of its 90 % one, the canary, the paired streams' stability and the fast
/// calls; `j` carries the figures, its verdict and reason are set here.
fn judge_paired(pv: &crate::streams::PairedView, mut j: Judged, t: f64) -> Judged {
    let v = judge(pv.ratio, pv.low, pv.high, t);
    let v = equivalence(v, pv.ratio, (pv.equivalence_low, pv.equivalence_high), t);
    let v = environment_gate(v, pv.ratio, j.canary, t);
    let v = crate::streams::stability_gate(v, pv, t);
    let (verdict, mut reason) = fast_calls_gate(v, pv.ratio, j.fast, t);
    if let Some(r) = reason.as_mut()
        && verdict == Verdict::Inconclusive
    {
        let floor = match pv.floor_from {
            crate::streams::FloorFrom::Measured => {
                format!(
                    "the drift measured in the paired streams, a floor of ±{:.2} %",
                    pv.floor * 100.0
                )
            }
            crate::streams::FloorFrom::Assumed => format!(
                "an assumed between-run noise floor of ±{:.1} % (fewer than 8 streams, none recorded)",
                pv.floor * 100.0
            ),
            crate::streams::FloorFrom::Recorded => {
                format!("the recorded A–A noise floor of ±{:.1} %", pv.floor * 100.0)
            }
        };
        let floor = if pv.floor > 0.0 {
            format!("; the interval includes {floor}")
        } else {
            String::new()
        };
        r.push_str(&format!(
            " (paired by input stream: {} streams, {} calls{floor})",
            pv.streams, pv.calls
        ));
    }
    j.verdict = verdict;
    j.reason = reason;
    j.pairing = Some(Ok(pv.clone()));
    j
}

/// Compares B against A.
pub fn compare(a: &Side, b: &Side, o: &Options) -> Result<Comparison, CompareError> {
    let mut notes = Vec::new();
    check_sides(a, b, o, &mut notes)?;
    for (la, lb) in &o.map {
        if !a.records.iter().any(|r| &r.label == la) {
            return Err(CompareError::Refused(format!(
                "--map {la}={lb}: no instance {la} in {}",
                a.shown
            )));
        }
        if !b.records.iter().any(|r| &r.label == lb) {
            return Err(CompareError::Refused(format!(
                "--map {la}={lb}: no instance {lb} in {}",
                b.shown
            )));
        }
    }
    let mapped = |label: &str| -> Option<String> {
        if o.map.is_empty() {
            Some(label.to_string())
        } else {
            o.map
                .iter()
                .find(|(x, _)| x == label)
                .map(|(_, y)| y.clone())
        }
    };
    let in_b_selection = |label: &str| o.map.is_empty() || o.map.iter().any(|(_, y)| y == label);
    let mut rows = Vec::new();
    let mut only_a = Vec::new();
    let mut used_b = vec![false; b.records.len()];
    for ra in &a.records {
        let Some(lb) = mapped(&ra.label) else {
            continue;
        };
        let key = op_key(ra);
        let hit = b.records.iter().position(|rb| {
            rb.label == lb
                && op_key(rb) == key
                && (rb.candidate == ra.candidate || !o.map.is_empty())
        });
        let Some(i) = hit else {
            only_a.push(format!("{}/{} {key}", ra.candidate, ra.label));
            continue;
        };
        used_b[i] = true;
        let rb = &b.records[i];
        let naive_ratio = match (ra.median_trial_seconds, rb.median_trial_seconds) {
            (Some(x), Some(y)) if x > 0.0 => Some(y / x),
            _ => None,
        };
        let common = common_estimator(ra, rb);
        let est = |r: &Record| {
            let x = r.pqperf.as_ref()?.robust.as_ref()?;
            match common {
                Some(e) => x.estimate_seconds_with(e),
                None => Some(x.estimate_seconds),
            }
        };
        let recorded = match (a.noise_floor, b.noise_floor) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let j = judge_pair(ra, rb, recorded, o);
        rows.push(Row {
            candidate: ra.candidate.clone(),
            label_a: ra.label.clone(),
            label_b: rb.label.clone(),
            op: key,
            a_seconds: est(ra),
            b_seconds: est(rb),
            ratio: j.as_ref().map(|j| j.ratio),
            ratio_ci_low: j.as_ref().map(|j| j.lo),
            ratio_ci_high: j.as_ref().map(|j| j.hi),
            equivalence_ci_low: j.as_ref().map(|j| j.equivalence.0),
            equivalence_ci_high: j.as_ref().map(|j| j.equivalence.1),
            naive_ratio,
            verdict: j.as_ref().map_or(Verdict::NoEstimate, |j| j.verdict),
            reason: j.as_ref().and_then(|j| j.reason.clone()),
            call_ci_low: j.as_ref().map(|j| j.call.0),
            call_ci_high: j.as_ref().map(|j| j.call.1),
            process_ci_low: j.as_ref().and_then(|j| j.process.map(|p| p.0)),
            process_ci_high: j.as_ref().and_then(|j| j.process.map(|p| p.1)),
            process_ci_method: j
                .as_ref()
                .and_then(|j| j.process_method.map(str::to_string)),
            processes: j.as_ref().map_or((0, 0), |j| j.processes),
            noise_floor: j.as_ref().map(|j| j.floor.m),
            noise_floor_assumed: j.as_ref().is_some_and(|j| j.floor.assumed),
            noise_floor_measured: j.as_ref().is_some_and(|j| j.floor.measured),
            canary_ratio: j.as_ref().and_then(|j| j.canary),
            process_spread: j.as_ref().map_or((None, None), |j| j.spread),
            fast_calls_ratio: j.as_ref().and_then(|j| j.fast),
            same_library: ra.library_sha256.is_some() && ra.library_sha256 == rb.library_sha256,
            work: None,
            paired: j.as_ref().and_then(|j| j.pairing.clone()?.ok()),
            unpaired_reason: j.as_ref().and_then(|j| j.pairing.clone()?.err()),
        });
    }
    let only_b = b
        .records
        .iter()
        .zip(&used_b)
        .filter(|(r, used)| !**used && in_b_selection(&r.label))
        .map(|(r, _)| format!("{}/{} {}", r.candidate, r.label, op_key(r)))
        .collect();
    let spread = spread(&rows);
    Ok(Comparison {
        a: a.shown.clone(),
        b: b.shown.clone(),
        threshold: o.threshold,
        confidence: o.confidence,
        rows,
        only_a,
        only_b,
        spread,
        notes,
    })
}

fn spread(rows: &[Row]) -> Option<Spread> {
    let with: Vec<&Row> = rows.iter().filter(|r| r.ratio.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let mut ch: Vec<f64> = with
        .iter()
        .map(|r| (r.ratio.unwrap_or(1.0) - 1.0).abs())
        .collect();
    ch.sort_by(f64::total_cmp);
    let hw = with
        .iter()
        .map(|r| (r.ratio_ci_high.unwrap_or(1.0) - r.ratio_ci_low.unwrap_or(1.0)) / 2.0)
        .fold(0.0, f64::max);
    Some(Spread {
        ops: with.len(),
        median_abs_change: quantile_sorted(&ch, 0.5).unwrap_or(0.0),
        max_abs_change: ch.last().copied().unwrap_or(0.0),
        max_ci_half_width: hw,
        same_libraries: with.iter().all(|r| r.same_library),
    })
}

/// The A–A noise floor as recorded under campaign.json's `pqperf.noise_floor`.
pub fn noise_floor_json(c: &Comparison, utc: &str) -> Option<serde_json::Value> {
    let s = c.spread.as_ref().filter(|s| s.same_libraries)?;
    Some(serde_json::json!({
        "method": "pqperf compare of two campaigns of the same library files (A-A): spread of the ratios of the robust estimates",
        "ops": s.ops,
        "median_abs_change": s.median_abs_change,
        "max_abs_change": s.max_abs_change,
        "max_ci_half_width": s.max_ci_half_width,
        "recorded_utc": utc,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::record::PqperfRecordExt;
    use pqperf_model::robust::{Robust, SplitMix64};

    /// A record of `label`/`op` whose five sampled trials are `base` ± 2 % noise × `scale`.
    fn rec(label: &str, op: &str, scale: f64, seed: u64) -> Record {
        let mut rng = SplitMix64::new(seed);
        let trials: Vec<Vec<u64>> = (0..5)
            .map(|_| {
                (0..400)
                    .map(|_| ((100_000 + rng.next_u64() % 4_000) as f64 * scale) as u64)
                    .collect()
            })
            .collect();
        Record {
            candidate: "ml-dsa-44".into(),
            label: label.into(),
            operation: op.into(),
            median_trial_seconds: Some(4e-5 * scale),
            library_sha256: Some(label.into()),
            pqperf: Some(PqperfRecordExt {
                robust: Robust::compute(&trials, op, 2.5e9),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// A side whose machine recorded an A–A noise floor of 0 (the statistics alone).
    fn side(recs: Vec<Record>) -> Side {
        Side {
            shown: "x".into(),
            system_dir: "x".into(),
            records: recs,
            noise_floor: Some(0.0),
        }
    }

    #[test]
    fn verdicts_need_the_interval_and_the_threshold() {
        let a = side(vec![rec("l", "keygen", 1.0, 1), rec("l", "sign", 1.0, 2)]);
        let b = side(vec![rec("l", "keygen", 1.05, 3), rec("l", "sign", 0.9, 4)]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        let v: Vec<Verdict> = c.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(v, vec![Verdict::Slower, Verdict::Faster]);
        assert!(c.any_slower());
        let r = &c.rows[0];
        assert!(r.ratio_ci_low.unwrap() > 1.0 && (r.ratio.unwrap() - 1.05).abs() < 0.01);
        // 1 % slower: a clear interval, but below the 2 % threshold.
        let b1 = side(vec![rec("l", "keygen", 1.01, 5)]);
        let a1 = side(vec![rec("l", "keygen", 1.0, 1)]);
        let c = compare(&a1, &b1, &Options::default()).unwrap();
        assert_eq!(c.rows[0].verdict, Verdict::NoChange);
        let o = Options {
            threshold: 0.005,
            ..Default::default()
        };
        assert_eq!(
            compare(&a1, &b1, &o).unwrap().rows[0].verdict,
            Verdict::Slower
        );
    }

    #[test]
    fn without_a_recorded_floor_a_default_between_run_noise_is_assumed() {
        let unrecorded = |recs: Vec<Record>| Side {
            noise_floor: None,
            ..side(recs)
        };
        // +5 % between two runs that record no floor: within what two runs of the same
        // libraries can differ by, so inconclusive, and the reason says how to record one.
        let a = unrecorded(vec![rec("l", "keygen", 1.0, 1)]);
        let b = unrecorded(vec![rec("l", "keygen", 1.05, 3)]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert_eq!(
            (r.noise_floor, r.noise_floor_assumed),
            (Some(DEFAULT_NOISE_FLOOR), true)
        );
        let why = r.reason.unwrap();
        assert!(
            why.contains("assumed between-run noise floor of ±2.0 %")
                && why.contains("--record-noise-floor"),
            "{why}"
        );
        // +25 %: beyond it.
        let b = unrecorded(vec![rec("l", "keygen", 1.25, 3)]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!((r.verdict, r.noise_floor_assumed), (Verdict::Slower, true));
        // A recorded floor of 0.5 % on one side replaces the default: +5 % is slower again.
        let a = Side {
            noise_floor: Some(0.005),
            ..unrecorded(vec![rec("l", "keygen", 1.0, 1)])
        };
        let b = unrecorded(vec![rec("l", "keygen", 1.05, 3)]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(
            (r.verdict, r.noise_floor, r.noise_floor_assumed),
            (Verdict::Slower, Some(0.005), false)
        );
    }

    #[test]
    fn mapping_one_side_only_and_missing_estimates() {
        let a = side(vec![
            rec("clean", "verify", 1.0, 1),
            rec("gone", "verify", 1.0, 2),
        ]);
        let mut no_est = rec("avx2", "keygen", 1.0, 3);
        no_est.pqperf = None;
        let b = side(vec![rec("avx2", "verify", 0.3, 4), no_est]);
        let o = Options {
            map: vec![("clean".into(), "avx2".into())],
            ..Default::default()
        };
        let c = compare(&a, &b, &o).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!(
            (c.rows[0].label_b.as_str(), c.rows[0].verdict),
            ("avx2", Verdict::Faster)
        );
        assert_eq!(c.only_b, vec!["ml-dsa-44/avx2 keygen".to_string()]);
        assert!(c.only_a.is_empty());
        let bad = Options {
            map: vec![("nope".into(), "avx2".into())],
            ..Default::default()
        };
        assert!(compare(&a, &b, &bad).is_err());
        // Without the mapping nothing pairs up; a pair without estimates has no verdict.
        let c = compare(&a, &b, &Options::default()).unwrap();
        assert!(c.rows.is_empty() && c.only_a.len() == 2 && c.only_b.len() == 2);
        let mut x = rec("clean", "verify", 1.0, 1);
        x.pqperf = None;
        let c = compare(&side(vec![x.clone()]), &side(vec![x]), &Options::default()).unwrap();
        assert_eq!(c.rows[0].verdict, Verdict::NoEstimate);
        assert!(c.spread.is_none());
    }

    /// `rec` whose sampled trial `i` is scaled by `1 + spread·(i − 2)` (between-process
    /// noise) and with a canary figure of `canary` ticks.
    fn rec_noisy(scale: f64, spread: f64, canary: Option<f64>, seed: u64) -> Record {
        let mut rng = SplitMix64::new(seed);
        let trials: Vec<Vec<u64>> = (0..5)
            .map(|i| {
                let f = scale * (1.0 + spread * (i as f64 - 2.0));
                (0..400)
                    .map(|_| ((100_000 + rng.next_u64() % 4_000) as f64 * f) as u64)
                    .collect()
            })
            .collect();
        let mut r = rec("l", "keygen", scale, seed);
        let p = r.pqperf.as_mut().unwrap();
        p.robust = Robust::compute(&trials, "keygen", 2.5e9);
        p.environment_evidence = canary.map(|c| pqperf_model::envevidence::EnvSummary {
            canary_method: "test".into(),
            canary_processes: 5,
            canary_median_ticks: Some(c),
            canary_spread: Some(1.0),
            steal_share: None,
            runq_share: None,
            load_1m_max: None,
        });
        r
    }

    #[test]
    fn between_process_noise_widens_the_interval() {
        // 5 % between processes on both sides, 4 % change: the interval reaches across
        // the band.
        let a = side(vec![rec_noisy(1.0, 0.05, None, 1)]);
        let b = side(vec![rec_noisy(1.04, 0.05, None, 2)]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        let r = &c.rows[0];
        assert_eq!(r.processes, (5, 5));
        let (plo, phi) = (r.process_ci_low.unwrap(), r.process_ci_high.unwrap());
        let (lo, hi) = (r.ratio_ci_low.unwrap(), r.ratio_ci_high.unwrap());
        // The verdict's interval is the widest view of both.
        assert!(lo <= plo.min(r.call_ci_low.unwrap()), "{r:?}");
        assert!(hi >= phi.max(r.call_ci_high.unwrap()), "{r:?}");
        assert!(plo < 1.0 && phi > 1.04, "{r:?}");
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(r.reason.as_deref().unwrap().contains("includes 1.0"));
        // Without that noise the same change is slower.
        let a = side(vec![rec_noisy(1.0, 0.0, None, 1)]);
        let b = side(vec![rec_noisy(1.04, 0.0, None, 2)]);
        assert_eq!(
            compare(&a, &b, &Options::default()).unwrap().rows[0].verdict,
            Verdict::Slower
        );
    }

    #[test]
    fn the_noise_floor_and_the_canary_make_verdicts_inconclusive() {
        let a = side(vec![rec_noisy(1.0, 0.0, Some(1000.0), 1)]);
        let b = side(vec![rec_noisy(1.10, 0.0, Some(1000.0), 2)]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        assert_eq!(c.rows[0].verdict, Verdict::Slower);
        assert_eq!(c.rows[0].canary_ratio, Some(1.0));
        // A recorded A–A floor of 8 % median |change|: 10 % is within the noise.
        let mut bf = b.clone();
        bf.noise_floor = Some(0.08);
        let c = compare(&a, &bf, &Options::default()).unwrap();
        let r = &c.rows[0];
        assert_eq!(r.noise_floor, Some(0.08));
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(
            r.reason
                .as_deref()
                .unwrap()
                .contains("noise floor of ±8.0 %")
        );
        // A 1 % floor leaves the verdict.
        bf.noise_floor = Some(0.01);
        assert_eq!(
            compare(&a, &bf, &Options::default()).unwrap().rows[0].verdict,
            Verdict::Slower
        );
        // The machine ran 15 % slower during B (canary): the 10 % is not B's.
        let b_busy = side(vec![rec_noisy(1.10, 0.0, Some(1150.0), 2)]);
        let c = compare(&a, &b_busy, &Options::default()).unwrap();
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(r.reason.as_deref().unwrap().contains("canary"), "{r:?}");
        assert!(!c.any_slower());
    }

    #[test]
    fn one_sampled_trial_leaves_the_process_noise_unknown() {
        let mut a1 = rec("l", "keygen", 1.0, 1);
        let rb = a1.pqperf.as_mut().unwrap().robust.as_mut().unwrap();
        rb.samples.truncate(1);
        let rb = rb.clone();
        a1.pqperf.as_mut().unwrap().robust = rb.recompute().unwrap();
        let b = side(vec![rec("l", "keygen", 1.5, 2)]);
        let c = compare(&side(vec![a1]), &b, &Options::default()).unwrap();
        let r = &c.rows[0];
        assert_eq!(r.verdict, Verdict::Inconclusive);
        assert!(
            r.reason.as_deref().unwrap().contains("1 sampled trial"),
            "{r:?}"
        );
        assert_eq!(c.comparable(), 1);
    }

    /// A `sign` record from per-process call mixtures, shaped like records measured on a
    /// busy 2-vCPU VM: each process `(fast, slow, share)` has calls of `fast` ticks, a
    /// `share` of them at `slow` ticks instead (±0.5 % jitter each).
    fn rec_modes(procs: &[(f64, f64, f64)], canary: Option<(f64, &str)>, seed: u64) -> Record {
        let mut rng = SplitMix64::new(seed);
        let trials: Vec<Vec<u64>> = procs
            .iter()
            .map(|&(fast, slow, share)| {
                (0..400)
                    .map(|i| {
                        let base = if (i as f64) < share * 400.0 {
                            slow
                        } else {
                            fast
                        };
                        let j = 1.0 + ((rng.next_u64() % 1000) as f64 / 1000.0 - 0.5) * 0.01;
                        (base * j) as u64
                    })
                    .collect()
            })
            .collect();
        let mut r = rec("l", "sign", 1.0, seed);
        let p = r.pqperf.as_mut().unwrap();
        p.robust = Robust::compute(&trials, "sign", 2.1e9);
        p.environment_evidence = canary.map(|(c, m)| pqperf_model::envevidence::EnvSummary {
            canary_method: m.into(),
            canary_processes: procs.len() as u64,
            canary_median_ticks: Some(c),
            canary_spread: Some(1.01),
            steal_share: Some(0.0),
            runq_share: Some(0.88),
            load_1m_max: Some(12.0),
        });
        r
    }

    const M: &str = pqperf_model::envevidence::CANARY_METHOD;

    #[test]
    fn a_slow_phase_the_canary_missed_is_not_called_slower() {
        // Two runs of the same library, as recorded: A mostly in the machine's fast phase
        // (~20 000 ticks a call, one process partly slow), B wholly in its slow phases (calls
        // 1.3–1.4× even at best, most of them 5.5×), the canary the same on both sides.
        let a = side(vec![rec_modes(
            &[
                (20_000.0, 110_000.0, 0.0),
                (20_000.0, 110_000.0, 0.02),
                (19_500.0, 110_000.0, 0.0),
                (19_400.0, 110_000.0, 0.03),
                (24_000.0, 110_000.0, 0.35),
            ],
            Some((81_000.0, M)),
            1,
        )]);
        let b = side(vec![rec_modes(
            &[
                (26_000.0, 115_000.0, 0.45),
                (27_000.0, 115_000.0, 0.55),
                (27_500.0, 115_000.0, 0.70),
                (28_000.0, 115_000.0, 0.80),
                (27_000.0, 115_000.0, 0.60),
            ],
            Some((82_000.0, M)),
            2,
        )]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        let r = &c.rows[0];
        // The intervals alone exclude 1 by far: without the gates this was "slower".
        let (ratio, lo, hi) = (
            r.ratio.unwrap(),
            r.ratio_ci_low.unwrap(),
            r.ratio_ci_high.unwrap(),
        );
        assert!(lo > 1.1, "{r:?}");
        assert_eq!(judge(ratio, lo, hi, 0.02).0, Verdict::Slower, "{r:?}");
        assert!((r.canary_ratio.unwrap() - 1.0).abs() < 0.02);
        // The fast calls show a far smaller change than the estimates: inconclusive, said.
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        let why = r.reason.as_deref().unwrap();
        assert!(
            why.contains("fast calls") && why.contains("pqperf ab"),
            "{why}"
        );
        let f = r.fast_calls_ratio.unwrap();
        assert!(f > 1.2 && f < 1.5, "{r:?}");
        assert!(!c.any_slower());
        // The reason and the figures are in --json.
        let j = serde_json::to_value(&c).unwrap();
        assert_eq!(j["rows"][0]["verdict"], "inconclusive");
        assert!(
            j["rows"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("fast calls")
        );
        assert!(j["rows"][0]["fast_calls_ratio"].as_f64().is_some());
        assert!(j["rows"][0]["process_spread"][0].as_f64().unwrap() > 1.1);
    }

    #[test]
    fn bimodal_processes_on_a_side_make_the_verdict_inconclusive() {
        // A's processes: three in the fast phase, two wholly in a 1.5× phase (fast calls
        // included); B (+25 % work) all in the fast phase. Between the two runs the ratio
        // says "no change"/"faster"-ish; the machine changed within A by more than that.
        let a = side(vec![rec_modes(
            &[
                (20_000.0, 0.0, 0.0),
                (20_100.0, 0.0, 0.0),
                (30_000.0, 0.0, 0.0),
                (30_300.0, 0.0, 0.0),
                (19_900.0, 0.0, 0.0),
            ],
            None,
            3,
        )]);
        let b = side(vec![rec_modes(&[(25_000.0, 0.0, 0.0); 5], None, 4)]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert!(r.process_spread.0.unwrap() > 1.45, "{r:?}");
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(r.verdict != Verdict::Faster && r.verdict != Verdict::NoChange);
        // The between-process interval is centred on the processes' own difference
        // (ln 25 000 − mean ln A), not on the pooled ratio, and the verdict's hull holds both.
        let (plo, phi) = (r.process_ci_low.unwrap(), r.process_ci_high.unwrap());
        assert!(r.ratio_ci_low.unwrap() <= plo && r.ratio_ci_high.unwrap() >= phi);
        // The same B against a stable A: +25 % is slower, with every gate passed.
        let a = side(vec![rec_modes(
            &[
                (20_000.0, 0.0, 0.0),
                (20_100.0, 0.0, 0.0),
                (19_900.0, 0.0, 0.0),
                (20_050.0, 0.0, 0.0),
                (19_950.0, 0.0, 0.0),
            ],
            Some((81_000.0, M)),
            5,
        )]);
        let b = side(vec![rec_modes(
            &[(25_000.0, 0.0, 0.0); 5],
            Some((81_500.0, M)),
            6,
        )]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Slower, None),
            "{r:?}"
        );
        assert!((r.fast_calls_ratio.unwrap() - 1.25).abs() < 0.02);
    }

    #[test]
    fn many_processes_take_the_rank_interval_which_a_few_slow_ones_do_not_move() {
        // Sixteen processes a side; B does 25 % more work. Two processes of each side ran
        // wholly in a slow phase (2.5× and 4×, fast calls included).
        let procs = |w: f64, slow: [usize; 2]| -> Vec<(f64, f64, f64)> {
            (0..16)
                .map(|i| {
                    let f = if i == slow[0] {
                        2.5
                    } else if i == slow[1] {
                        4.0
                    } else {
                        1.0 + (i % 5) as f64 * 0.003
                    };
                    (w * f, 0.0, 0.0)
                })
                .collect()
        };
        let a = side(vec![rec_modes(
            &procs(20_000.0, [3, 11]),
            Some((81_000.0, M)),
            7,
        )]);
        let b = side(vec![rec_modes(
            &procs(25_000.0, [6, 14]),
            Some((81_300.0, M)),
            8,
        )]);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.process_ci_method.as_deref(), Some("rank"), "{r:?}");
        assert_eq!(r.processes, (16, 16));
        let (plo, phi) = (r.process_ci_low.unwrap(), r.process_ci_high.unwrap());
        assert!(plo > 1.2 && phi < 1.3, "[{plo}, {phi}]");
        // The middle half of each side agrees: the stability gate passes.
        assert!(r.process_spread.0.unwrap() < 1.02, "{r:?}");
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Slower, None),
            "{r:?}"
        );
        // With five processes a side and one of them slow, the same change is inconclusive
        // (the t-interval and the largest ÷ smallest spread see the slow one).
        let few = |w: f64, slow: usize, seed: u64| {
            let p: Vec<(f64, f64, f64)> = (0..5)
                .map(|i| (w * if i == slow { 2.5 } else { 1.0 }, 0.0, 0.0))
                .collect();
            side(vec![rec_modes(&p, Some((81_000.0, M)), seed)])
        };
        let r = compare(
            &few(20_000.0, 1, 9),
            &few(25_000.0, 3, 10),
            &Options::default(),
        )
        .unwrap()
        .rows[0]
            .clone();
        assert_eq!(r.process_ci_method.as_deref(), Some("welch"));
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        // A–A with sixteen processes a side and slow minorities: never faster or slower.
        let r = compare(
            &a,
            &side(vec![rec_modes(
                &procs(20_000.0, [0, 9]),
                Some((81_000.0, M)),
                11,
            )]),
            &Options::default(),
        )
        .unwrap()
        .rows[0]
            .clone();
        assert!(
            !matches!(r.verdict, Verdict::Slower | Verdict::Faster),
            "{r:?}"
        );
    }

    #[test]
    fn the_canary_faster_on_b_than_the_change_and_few_processes() {
        let stable = |w: f64, n: usize, canary: Option<(f64, &str)>, seed: u64| {
            let procs: Vec<(f64, f64, f64)> = (0..n)
                .map(|i| (w * (1.0 + i as f64 * 0.001), 0.0, 0.0))
                .collect();
            side(vec![rec_modes(&procs, canary, seed)])
        };
        // B +25 % work, but B's machine ran 35 % faster by the canary: B looks faster.
        let a = stable(20_000.0, 5, Some((100_000.0, M)), 1);
        let b = stable(20_000.0 * 1.25 / 1.35, 5, Some((100_000.0 / 1.35, M)), 2);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert!(
            r.ratio.unwrap() < 0.95 && r.ratio_ci_high.unwrap() < 1.0,
            "{r:?}"
        );
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(
            r.reason.as_deref().unwrap().contains("35.0 % faster"),
            "{r:?}"
        );
        // A canary of another method is not compared (its figures mean other work).
        let b2 = stable(
            20_000.0 * 1.25 / 1.35,
            5,
            Some((100_000.0 / 1.35, "other")),
            2,
        );
        let r = compare(&a, &b2, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.canary_ratio, None);
        assert_eq!(r.verdict, Verdict::Faster, "{r:?}");
        // Two processes a side, agreeing closely: too few to tell a stable machine.
        let a = stable(20_000.0, 2, None, 3);
        let b = stable(25_000.0, 2, None, 4);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.processes, (2, 2));
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        let why = r.reason.unwrap();
        assert!(
            why.contains("2 sampled trial") && why.contains("at least 3"),
            "{why}"
        );
        // Three a side: judged.
        let r = compare(
            &stable(20_000.0, 3, None, 5),
            &stable(25_000.0, 3, None, 6),
            &Options::default(),
        )
        .unwrap()
        .rows[0]
            .clone();
        assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    }

    /// A record of `n` independent processes (sampled trials of 400 calls) of `op`: process
    /// `i` runs at `work · slow(i)` with its own ±1 % (uniform) offset, its calls ±2 %
    /// around that. No floor is recorded on either side.
    fn rec_streams(op: &str, n: usize, work: f64, slow: &dyn Fn(usize) -> f64, seed: u64) -> Side {
        let mut rng = SplitMix64::new(seed);
        let mut u = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let trials: Vec<Vec<u64>> = (0..n)
            .map(|i| {
                let f = work * slow(i) * (1.0 + 0.02 * (u() - 0.5));
                (0..400)
                    .map(|_| (f * (1.0 + 0.04 * (u() - 0.5))) as u64)
                    .collect()
            })
            .collect();
        let mut r = rec("l", op, 1.0, seed);
        r.pqperf.as_mut().unwrap().robust = Robust::compute(&trials, op, 2.5e9);
        Side {
            noise_floor: None,
            ..side(vec![r])
        }
    }

    #[test]
    fn independent_processes_measure_the_floor_and_conclude_both_ways() {
        let quiet = |_: usize| 1.0;
        // A–A, 16 independent processes a side with ±1 % between them: no change, the floor
        // measured from the runs (not the assumed 2 %, which made A–A always inconclusive).
        // A chance split of a run's processes into a faster and a slower half reads as drift
        // now and then: at least 36 of 40, never faster or slower.
        let mut no_change = 0;
        for seed in 0..20 {
            for op in ["keygen", "sign"] {
                let a = rec_streams(op, 16, 100_000.0, &quiet, 2 * seed + 1);
                let b = rec_streams(op, 16, 100_000.0, &quiet, 2 * seed + 2);
                let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
                assert!(
                    matches!(r.verdict, Verdict::NoChange | Verdict::Inconclusive),
                    "seed {seed} {op}: {r:?}"
                );
                no_change += usize::from(r.verdict == Verdict::NoChange);
                assert!(r.noise_floor_measured && !r.noise_floor_assumed, "{r:?}");
                assert!(r.noise_floor.unwrap() < DEFAULT_NOISE_FLOOR, "{r:?}");
            }
        }
        assert!(no_change >= 36, "no change in {no_change} of 40");
        // +20 % measured beside one pinned hog: three of B's 16 processes ran 1.6× slower
        // on top of the change.
        let a = rec_streams("sign", 16, 100_000.0, &quiet, 101);
        let hog = |i: usize| if i % 5 == 2 { 1.6 } else { 1.0 };
        let b = rec_streams("sign", 16, 120_000.0, &hog, 102);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Slower, None),
            "{r:?}"
        );
        assert!((r.ratio.unwrap() - 1.2).abs() < 0.02, "{r:?}");
        // Five processes a side, one of B's slow: still inconclusive, with the reason.
        let a = rec_streams("sign", 5, 100_000.0, &quiet, 103);
        let one = |i: usize| if i == 3 { 1.6 } else { 1.0 };
        let b = rec_streams("sign", 5, 100_000.0, &one, 104);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(r.noise_floor_assumed && !r.noise_floor_measured, "{r:?}");
        let why = r.reason.unwrap();
        assert!(why.contains("assumed between-run noise floor"), "{why}");
    }

    /// A `sign` side of `procs` independent streams of a variable-time operation (a
    /// geometric number of rejection rounds per call, 4.27 on average, like ML-DSA-44's
    /// sign): `calls` calls a process of `work · slow(i) · (base + rounds · round)` ticks;
    /// a call is preempted (+12 × the mean: a time slice) with probability `spike`.
    fn variable_side(
        procs: usize,
        calls: usize,
        work: f64,
        slow: &dyn Fn(usize) -> f64,
        spike: f64,
        seed: u64,
    ) -> Side {
        let mut rng = SplitMix64::new(seed);
        let mut u = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (base, round, p) = (60_000.0, 60_000.0, 60.0 / 256.0);
        let mean = base + round / p;
        let trials: Vec<Vec<u64>> = (0..procs)
            .map(|i| {
                (0..calls)
                    .map(|_| {
                        let mut rounds = 1.0;
                        while u() >= p {
                            rounds += 1.0;
                        }
                        let mut t = work * slow(i) * (base + rounds * round);
                        if u() < spike {
                            t += 12.0 * mean;
                        }
                        t as u64
                    })
                    .collect()
            })
            .collect();
        let mut r = rec("l", "sign", 1.0, seed);
        r.pqperf.as_mut().unwrap().robust = Robust::compute(&trials, "sign", 2.5e9);
        Side {
            noise_floor: None,
            ..side(vec![r])
        }
    }

    #[test]
    fn separate_runs_of_a_variable_time_operation_conclude_both_ways() {
        let quiet = |_: usize| 1.0;
        // A–A: 96 independent streams of 400 calls a side (±1 % a side), the floor measured
        // from them. Never faster or slower; "no change" (the equivalence test's 90 %
        // interval inside ±2 %) in most.
        let mut no_change = 0;
        for seed in 0..4 {
            let a = variable_side(96, 400, 1.0, &quiet, 0.0, 2 * seed + 1);
            let b = variable_side(96, 400, 1.0, &quiet, 0.0, 2 * seed + 2);
            let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
            assert!(
                matches!(r.verdict, Verdict::NoChange | Verdict::Inconclusive),
                "seed {seed}: {r:?}"
            );
            assert!(r.noise_floor_measured, "{r:?}");
            // The equivalence interval lies inside the verdict's 95 % interval.
            assert!(r.equivalence_ci_low >= r.ratio_ci_low, "{r:?}");
            assert!(r.equivalence_ci_high <= r.ratio_ci_high, "{r:?}");
            no_change += usize::from(r.verdict == Verdict::NoChange);
        }
        assert!(no_change >= 3, "no change in {no_change} of 4");
        // +20 % measured beside one pinned hog: 3 % of B's calls preempted for a time slice
        // and three of its 16 processes 1.6× slower throughout. Slower, every gate passed.
        let a = variable_side(16, 400, 1.0, &quiet, 0.0, 101);
        let hog = |i: usize| if i % 5 == 2 { 1.6 } else { 1.0 };
        let b = variable_side(16, 400, 1.2, &hog, 0.03, 102);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Slower, None),
            "{r:?}"
        );
        assert!((r.ratio.unwrap() - 1.2).abs() < 0.05, "{r:?}");
        // Noisy: B's machine drifted 8 % slower in the second half of its run. Inconclusive,
        // and the reason says the interval includes the drift measured within the runs.
        let drift = |i: usize| if i >= 24 { 1.08 } else { 1.0 };
        let a = variable_side(48, 400, 1.0, &quiet, 0.0, 201);
        let b = variable_side(48, 400, 1.0, &drift, 0.0, 202);
        let r = compare(&a, &b, &Options::default()).unwrap().rows[0].clone();
        assert_eq!(r.verdict, Verdict::Inconclusive, "{r:?}");
        assert!(r.noise_floor.unwrap() > 0.01, "{r:?}");
        let why = r.reason.unwrap();
        assert!(why.contains("drift measured within the two runs"), "{why}");
    }

    #[test]
    fn different_estimators_are_compared_with_one() {
        // A keygen whose calls were narrow in run A (p50) and wide in run B (fenced mean):
        // both sides with the fenced mean.
        let mut a = rec("l", "keygen", 1.0, 1);
        let ra = a.pqperf.as_mut().unwrap().robust.as_mut().unwrap();
        *ra = Robust::compute_with(
            &ra.sample_trials().unwrap(),
            Estimator::P50,
            2.5e9,
            1000,
            1,
            0.95,
        )
        .unwrap();
        let mut b = rec("l", "keygen", 1.0, 2);
        let rb = b.pqperf.as_mut().unwrap().robust.as_mut().unwrap();
        let trials = rb.sample_trials().unwrap();
        *rb = Robust::compute_with(&trials, Estimator::FencedMean, 2.5e9, 1000, 1, 0.95).unwrap();
        assert_eq!(common_estimator(&a, &b), Some(Estimator::FencedMean));
        let r = compare(&side(vec![a.clone()]), &side(vec![b]), &Options::default())
            .unwrap()
            .rows[0]
            .clone();
        let want = Estimator::FencedMean
            .combine(
                &a.pqperf
                    .as_ref()
                    .unwrap()
                    .robust
                    .as_ref()
                    .unwrap()
                    .sample_trials()
                    .unwrap(),
            )
            .unwrap()
            / 2.5e9;
        assert_eq!(r.a_seconds, Some(want));
        assert_eq!(r.verdict, Verdict::NoChange, "{r:?}");
    }

    #[test]
    fn drift_within_a_run_is_measured() {
        // Stationary: no drift beyond the processes' own spread.
        let flat: Vec<f64> = (0..16).map(|i| 0.01 * ((i * 7 % 5) as f64 - 2.0)).collect();
        assert_eq!(drift_of(&flat), Some(0.0));
        // The second half 5 % slower: a drift of about 5 %.
        let step: Vec<f64> = (0..16)
            .map(|i| 0.001 * ((i * 7 % 5) as f64 - 2.0) + if i >= 8 { 0.05 } else { 0.0 })
            .collect();
        let d = drift_of(&step).unwrap();
        assert!((d - 0.05).abs() < 0.01, "{d}");
        assert!(drift_of(&step[..7]).is_none());
        // The floor two such runs stand for spreads 1.96 · √2 · drift.
        let m = floor_of_drift(d, d);
        assert!((floor_half_width(m) - 1.96 * std::f64::consts::SQRT_2 * d).abs() < 1e-12);
    }

    #[test]
    fn t_quantiles_and_welch() {
        assert_eq!(t975(1.0), 12.706);
        assert_eq!(t975(4.7), 2.776);
        assert!((t975(60.0) - 2.000).abs() < 0.002);
        assert!((t975(120.0) - 1.980).abs() < 0.002);
        assert_eq!(welch_half_width(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch_half_width(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
        // Equal variances 0.5, n = 2 each: se = sqrt(0.5), df = 2.
        let h = welch_half_width(&[0.0, 1.0], &[0.0, 1.0]).unwrap();
        assert!((h - 4.303 * 0.5f64.sqrt()).abs() < 1e-12);
        assert!((floor_half_width(0.1) - 1.96 * 1.1f64.ln() / 0.6745).abs() < 1e-15);
    }
}
