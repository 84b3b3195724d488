//! Pairing two separately measured runs by input stream (issue 37): the paired view of a
//! variable-time operation.
//!
//! Under pqperf's own protocol (`--target-ci`) process `i` of an operation draws its inputs
//! from its own stream, `pqperf_model::stream::process_seed(i)`, and call `n` of the process
//! (counted over the whole process) gets an input that depends only on the seed and `n`
//! (`pqperf_model::stream::CALL_INPUTS`). Two runs, whatever library each measured, give
//! process `i` the same seed, so the call at index `n` of that stream signs the same message
//! with the same randomness in both: the same rejection rounds. The ratio of the two runs'
//! times of *that* call holds only what differs between them — the code and the machine —
//! not the operation's own variability (ML-DSA-44 `sign`: CV ≈ 0.7 a call), which dominates
//! an unpaired interval.
//!
//! What pairing needs, per side, in each process entry's `stream` (written by the parent from
//! the argv it passed): `seed`, `inputs` (the mapping's name), `first_sampled_call` (the call
//! index of the first sampled call; the sampled trials follow each other) and
//! `sampled_trials` (how many of the record's `pqperf.robust` sample lists are this
//! process's, in process order).
//!
//! How ([`paired`]):
//!
//! * the streams are matched by seed; per stream, the calls at the **input indices both sides
//!   sampled** are paired (the sampled calls take the indices 0, 1, … whatever the calibrated
//!   calls per trial, `pqperf_model::stream::CallLayout::input_index`; with different calls
//!   per trial the shorter side's sampled calls are the common ones, at least
//!   [`MIN_COMMON_CALLS`]);
//! * a call above its own trial's interference fence (`pqperf_model::robust::fence`, what the
//!   fenced mean drops) on either side drops the pair, and so does a pair whose log-ratio lies
//!   far outside the stream's others ([`ratio_fence`]: a call that lost the CPU on one side);
//! * per stream `r = ln(Σ B ÷ Σ A)` over its kept pairs (seconds: each side's ticks ÷ its
//!   tick rate): the ratio of the mean cost of the same calls;
//! * the ratio is exp of the 20 % trimmed mean of the streams' `r`, with the
//!   Tukey–McLaughlin t-interval (95 %; the equivalence test's at 90 %), like the fenced
//!   mean's own interval: a minority of streams measured in a slow phase of either host does
//!   not move it, and what remains of the machine's noise is the spread between streams;
//! * between-run noise: a recorded A–A floor when there is one, else the drift of the
//!   streams' `r` in the order they ran (`crate::analysis::drift_of`: the first half's
//!   median against the second's beyond their own spread), added in quadrature as the
//!   unpaired view does;
//! * the stability check: the streams' `r` (middle half with at least 8 streams, else
//!   largest ÷ smallest) spread beyond the band or at least the change means the machine
//!   changed while a run measured.
//!
//! Pairing is not possible (the comparison falls back to the unpaired verdict and says why,
//! [`PairingError`]): a side ran the reference protocol (every process the reference's fixed
//! seed), a record predates the recorded positions, the two records follow different input
//! mappings, fewer than [`MIN_STREAMS`] seeds are common to both sides, or too few call
//! positions are common (a side sampled fewer calls, or its calls were fenced out).

use serde::Serialize;
use serde_json::Value;

use pqperf_model::Record;
use pqperf_model::pynum::quantile_sorted;
use pqperf_model::robust::{TRIM, fence, t975};

use crate::analysis::{drift_of, floor_half_width, floor_of_drift, spread_of};
use crate::verdict::pct;
use pqperf_model::ab::Verdict;

/// Fewest paired calls a stream needs to count.
pub const MIN_COMMON_CALLS: usize = 32;

/// Fewest paired streams for a paired verdict (a trimmed-mean t-interval of fewer is too
/// wide to conclude anything).
pub const MIN_STREAMS: usize = 6;

/// One sampled trial of a stream: its seed (hex), the process index, the call index of its
/// first call and its calls' tick deltas.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamTrial {
    /// The process's seed, hex.
    pub seed: String,
    /// The process index (`stream.index`).
    pub index: u64,
    /// Call index of the trial's first call.
    pub first_call: u64,
    /// Tick deltas of its calls, in order.
    pub calls: Vec<u64>,
}

/// Why two records cannot be paired by stream (said in the comparison's reason).
pub type PairingError = String;

fn stream_of(p: &pqperf_model::record::Process) -> Option<&serde_json::Map<String, Value>> {
    p.extra.get("stream")?.as_object()
}

/// The sampled trials of a record with their stream and call positions, in process order.
/// `side` names the record in errors.
pub fn stream_trials(r: &Record, side: &str) -> Result<Vec<StreamTrial>, PairingError> {
    let rb = r
        .pqperf
        .as_ref()
        .and_then(|p| p.robust.as_ref())
        .ok_or_else(|| format!("side {side} has no per-call samples"))?;
    let mut trials = rb
        .sample_trials()
        .map_err(|e| format!("side {side}: {e}"))?
        .into_iter();
    if r.processes.iter().all(|p| stream_of(p).is_none()) {
        return Err(format!(
            "side {side} ran the reference protocol: every process used the reference's fixed seed, so its processes are not independent streams to pair"
        ));
    }
    let mut out = Vec::new();
    for (k, p) in r.processes.iter().enumerate() {
        let Some(s) = stream_of(p) else {
            return Err(format!("side {side}: process {k} records no input stream"));
        };
        let get = |key: &str| s.get(key);
        let (Some(seed), Some(index)) = (
            get("seed").and_then(Value::as_str),
            get("index").and_then(Value::as_u64),
        ) else {
            return Err(format!(
                "side {side}: process {k}'s stream has no seed or index"
            ));
        };
        let (Some(inputs), Some(first), Some(n)) = (
            get("inputs").and_then(Value::as_str),
            get("first_sampled_call").and_then(Value::as_u64),
            get("sampled_trials").and_then(Value::as_u64),
        ) else {
            return Err(format!(
                "side {side} was recorded before pqperf recorded where each process's sampled calls sit in its stream (stream.first_sampled_call)"
            ));
        };
        if inputs != pqperf_model::stream::CALL_INPUTS {
            return Err(format!(
                "side {side}'s processes derive their inputs by {inputs:?}, not {:?}: the same seed does not give the same calls",
                pqperf_model::stream::CALL_INPUTS
            ));
        }
        let mut at = first;
        for _ in 0..n {
            let calls = trials.next().ok_or_else(|| {
                format!(
                    "side {side}: its processes claim more sampled trials than the record stores"
                )
            })?;
            let len = calls.len() as u64;
            out.push(StreamTrial {
                seed: seed.to_string(),
                index,
                first_call: at,
                calls,
            });
            at += len;
        }
    }
    if trials.next().is_some() {
        return Err(format!(
            "side {side}: the record stores more sampled trials than its processes account for"
        ));
    }
    Ok(out)
}

/// The per-stream log-ratios of two records' common calls: `(index of A's stream, r, pairs)`
/// for every seed both sides sampled with at least [`MIN_COMMON_CALLS`] kept pairs, in A's
/// process order; plus the number of common seeds.
fn stream_ratios(
    a: &[StreamTrial],
    b: &[StreamTrial],
    hz: (f64, f64),
) -> (Vec<(u64, f64, usize)>, usize, usize) {
    use std::collections::BTreeMap;
    // seed → call index → (ticks, kept by its trial's fence)
    type Positions<'a> = BTreeMap<&'a str, (u64, BTreeMap<u64, (u64, bool)>)>;
    fn positions(v: &[StreamTrial]) -> Positions<'_> {
        let mut m: Positions<'_> = BTreeMap::new();
        for t in v {
            let f = fence(&mut t.calls.clone()).unwrap_or(u64::MAX);
            let e = m
                .entry(t.seed.as_str())
                .or_insert((t.index, BTreeMap::new()));
            for (j, &x) in t.calls.iter().enumerate() {
                e.1.insert(t.first_call + j as u64, (x, x <= f));
            }
        }
        m
    }
    let (pa, pb) = (positions(a), positions(b));
    let mut out = Vec::new();
    let (mut common_seeds, mut short) = (0, 0);
    for (seed, (index, ca)) in &pa {
        let Some((_, cb)) = pb.get(seed) else {
            continue;
        };
        common_seeds += 1;
        let pairs: Vec<(u64, u64)> = ca
            .iter()
            .filter_map(|(pos, &(xa, ka))| {
                let &(xb, kb) = cb.get(pos)?;
                (ka && kb && xa > 0 && xb > 0).then_some((xa, xb))
            })
            .collect();
        let (lo, hi) = ratio_fence(&pairs, hz);
        let (mut sa, mut sb, mut n) = (0u128, 0u128, 0usize);
        for &(xa, xb) in &pairs {
            let l = ((xb as f64 / hz.1) / (xa as f64 / hz.0)).ln();
            if l >= lo && l <= hi {
                sa += u128::from(xa);
                sb += u128::from(xb);
                n += 1;
            }
        }
        if n < MIN_COMMON_CALLS || sa == 0 || sb == 0 {
            short += 1;
            continue;
        }
        let r = ((sb as f64 / hz.1) / (sa as f64 / hz.0)).ln();
        out.push((*index, r, n));
    }
    out.sort_by_key(|x| x.0);
    (out, common_seeds, short)
}

/// The paired interference fence of one stream's paired calls `(A ticks, B ticks)`: the
/// log-ratios of the same input's two calls hold the code's change and the machines' noise,
/// not the operation's rejection rounds, so a call that lost the CPU on one side stands out
/// far more clearly than against its own trial's spread. Pairs outside `[q1 − w, q3 + w]`
/// of the log-ratios, `w = max(8 · (q3 − q1), ln 2)`, are dropped: beyond 8
/// inter-quartile ranges like the side's own fence, and never closer than a factor 2, so a
/// change that slows some inputs more than others (a cost per rejection round that changed
/// while the fixed part did not moves a call's ratio between the two parts' ratios) is not
/// cut.
fn ratio_fence(pairs: &[(u64, u64)], hz: (f64, f64)) -> (f64, f64) {
    let mut l: Vec<f64> = pairs
        .iter()
        .map(|&(a, b)| ((b as f64 / hz.1) / (a as f64 / hz.0)).ln())
        .collect();
    l.sort_by(f64::total_cmp);
    let (Some(q1), Some(q3)) = (quantile_sorted(&l, 0.25), quantile_sorted(&l, 0.75)) else {
        return (f64::NEG_INFINITY, f64::INFINITY);
    };
    let w = (8.0 * (q3 - q1)).max(std::f64::consts::LN_2);
    (q1 - w, q3 + w)
}

/// The paired view of two records.
#[derive(Debug, Clone, Serialize)]
pub struct PairedView {
    /// Streams paired (seeds sampled on both sides with enough common calls).
    pub streams: usize,
    /// Paired calls over all streams.
    pub calls: usize,
    /// exp of the 20 % trimmed mean of the streams' ln(B/A).
    pub ratio: f64,
    /// The 95 % interval (Tukey–McLaughlin), widened by the between-run floor.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// The equivalence test's interval (90 %), widened by the floor.
    pub equivalence_low: f64,
    /// Upper end.
    pub equivalence_high: f64,
    /// The streams' ratios' spread (middle half with at least 8, else largest ÷ smallest).
    pub spread: f64,
    /// The floor (median |change|) added.
    pub floor: f64,
    /// Where the floor comes from.
    pub floor_from: FloorFrom,
}

/// Where a paired view's between-run floor comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FloorFrom {
    /// An A–A floor recorded for either run.
    Recorded,
    /// The drift of the streams' ratios in the order they ran (at least 8 streams).
    Measured,
    /// [`crate::analysis::DEFAULT_NOISE_FLOOR`] (fewer than 8 streams, none recorded).
    Assumed,
}

/// The stability check of a paired view: the streams' ratios of the same code on the same
/// inputs differ only by the machines, so a spread at least the change (or, for "no change",
/// beyond the band) means a run's machine changed while it measured.
pub fn stability_gate(
    judged: (Verdict, Option<String>),
    pv: &PairedView,
    t: f64,
) -> (Verdict, Option<String>) {
    let ds = pv.spread.ln();
    let what = if pv.streams >= crate::rank::MIN_PER_SIDE {
        "the middle half of"
    } else {
        "the largest ÷ smallest of"
    };
    let machine = format!(
        "{what} the {} paired streams' ratios spans {:.1} % (the same inputs: a machine changed while a run measured)",
        pv.streams,
        (pv.spread - 1.0) * 100.0
    );
    match judged.0 {
        Verdict::Faster | Verdict::Slower if ds >= pv.ratio.ln().abs() => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, at least as much as the change {} being judged; measure both sides interleaved (pqperf ab) or on a quieter machine",
                pct(pv.ratio)
            )),
        ),
        Verdict::NoChange if ds > (1.0 + t).ln() => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, more than the ±{:.1} % band: a change of that size could be hidden; measure both sides interleaved (pqperf ab) or on a quieter machine",
                t * 100.0
            )),
        ),
        _ => judged,
    }
}

/// t quantile of the interval at `confidence` with `df` degrees of freedom: 95 % and 90 %
/// from tables, others scaled from 95 % by the normal quantiles.
fn t_quantile(df: f64, confidence: f64) -> f64 {
    if (confidence - 0.95).abs() < 1e-12 {
        return t975(df);
    }
    if (confidence - 0.90).abs() < 1e-12 {
        return pqperf_model::robust::t95(df);
    }
    t975(df) * crate::rank::z_upper((1.0 - confidence) / 2.0) / 1.959_964
}

/// The 20 % trimmed mean of `x` and its Tukey–McLaughlin half-width at `confidence`.
fn trimmed_t(x: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let k = x.len();
    if k < 2 {
        return None;
    }
    let mut v = x.to_vec();
    let est = pqperf_model::robust::trimmed_mean(&mut v)?;
    let g = (k as f64 * TRIM).floor() as usize;
    let (lo_w, hi_w) = (v[g], v[k - 1 - g]);
    let w: Vec<f64> = v.iter().map(|&y| y.clamp(lo_w, hi_w)).collect();
    let mw = w.iter().sum::<f64>() / k as f64;
    let sw = (w.iter().map(|&y| (y - mw) * (y - mw)).sum::<f64>() / (k - 1) as f64).sqrt();
    let h = k - 2 * g;
    let q = t_quantile((h.max(2) - 1) as f64, confidence);
    Some((est, q * sw / ((1.0 - 2.0 * TRIM) * (k as f64).sqrt())))
}

fn tick_hz(r: &Record) -> Option<f64> {
    r.pqperf
        .as_ref()?
        .robust
        .as_ref()
        .map(|x| x.tick_hz)
        .filter(|h| *h > 0.0)
}

/// The stream key a record's process seeds derive from (`stream.key_id` of its first
/// process with a stream; `None`: the public derivation of records made before the key).
fn stream_key_id(r: &Record) -> Option<String> {
    r.processes
        .iter()
        .find_map(|p| stream_of(p)?.get("key_id")?.as_str().map(String::from))
}

/// The paired view of `a` and `b` at `confidence`, with the recorded A–A floor `recorded`
/// (median |change|) when there is one; the reason when they cannot be paired.
pub fn paired(
    a: &Record,
    b: &Record,
    recorded: Option<f64>,
    confidence: f64,
) -> Result<PairedView, PairingError> {
    let (ta, tb) = (stream_trials(a, "A")?, stream_trials(b, "B")?);
    let (ka, kb) = (stream_key_id(a), stream_key_id(b));
    if ka != kb {
        return Err(format!(
            "not paired: different stream keys (A {}, B {}): the runs' processes got different inputs; reuse a run's key with `--stream-key` to pair",
            ka.as_deref().unwrap_or("public"),
            kb.as_deref().unwrap_or("public")
        ));
    }
    let (ha, hb) = (
        tick_hz(a).ok_or("side A has no tick rate")?,
        tick_hz(b).ok_or("side B has no tick rate")?,
    );
    let (rs, common, short) = stream_ratios(&ta, &tb, (ha, hb));
    if common < MIN_STREAMS {
        return Err(format!(
            "the two runs share {common} input stream(s) (the same process seeds), fewer than {MIN_STREAMS}"
        ));
    }
    if rs.len() < MIN_STREAMS {
        let span = |v: &[StreamTrial]| {
            let lo = v.iter().map(|t| t.first_call).min().unwrap_or(0);
            let hi = v
                .iter()
                .map(|t| t.first_call + t.calls.len() as u64)
                .max()
                .unwrap_or(0);
            format!("calls {lo}–{hi}")
        };
        return Err(format!(
            "of the {common} common streams, {short} share fewer than {MIN_COMMON_CALLS} sampled call positions (A sampled {}, B {}: a side sampled too few calls, or too many of them were fenced out), leaving {} to pair, fewer than {MIN_STREAMS}",
            span(&ta),
            span(&tb),
            rs.len()
        ));
    }
    let r: Vec<f64> = rs.iter().map(|x| x.1).collect();
    let calls = rs.iter().map(|x| x.2).sum();
    let (est, h95) = trimmed_t(&r, confidence).ok_or("too few streams")?;
    let (_, h90) = trimmed_t(&r, 2.0 * confidence - 1.0).ok_or("too few streams")?;
    let (floor, floor_from) = match (recorded, drift_of(&r)) {
        (Some(m), _) => (m, FloorFrom::Recorded),
        (None, Some(d)) => (floor_of_drift(d, 0.0), FloorFrom::Measured),
        (None, None) => (crate::analysis::DEFAULT_NOISE_FLOOR, FloorFrom::Assumed),
    };
    let f = floor_half_width(floor);
    let z_eq =
        crate::rank::z_upper(1.0 - confidence) / crate::rank::z_upper((1.0 - confidence) / 2.0);
    let widen = |h: f64, f: f64| (h * h + f * f).sqrt();
    let (w95, w90) = (widen(h95, f), widen(h90, f * z_eq));
    Ok(PairedView {
        streams: r.len(),
        calls,
        ratio: est.exp(),
        low: (est - w95).exp(),
        high: (est + w95).exp(),
        equivalence_low: (est - w90).exp(),
        equivalence_high: (est + w90).exp(),
        spread: spread_of(&r, r.len() >= crate::rank::MIN_PER_SIDE).unwrap_or(1.0),
        floor,
        floor_from,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, Side, compare};
    use pqperf_model::record::{PqperfRecordExt, Process};
    use pqperf_model::robust::{Robust, SplitMix64};
    use pqperf_model::stream::{CALL_INPUTS, process_seed, seed_hex};
    use serde_json::json;

    /// Rejection rounds of call `n` of stream `s`: geometric, 4.27 on average (ML-DSA-44
    /// sign-like), the same in every run that gives that stream and call the same input.
    fn rounds(s: u64, n: u64) -> f64 {
        let mut rng = SplitMix64::new(s.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n);
        let mut r = 1.0;
        while (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 >= 60.0 / 256.0 {
            r += 1.0;
        }
        r
    }

    /// How one run measures.
    struct Run {
        /// Calls per reference trial (the sampled trial follows, min(iters, 400) calls).
        iters: u64,
        /// The code's cost factor.
        work: f64,
        /// A process's machine factor.
        slow: fn(u64) -> f64,
        /// Share of calls preempted for a time slice.
        spike: f64,
        /// Seed index offset (0: pqperf's streams 0, 1, …).
        seed_offset: u64,
        /// Record the streams at all (false: the reference protocol).
        streams: bool,
        /// The noise seed of this run.
        noise: u64,
    }

    const QUIET: fn(u64) -> f64 = |_| 1.0;

    fn run(procs: u64, r: &Run) -> Record {
        let mut rng = SplitMix64::new(r.noise);
        let mut u = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (base, round) = (60_000.0, 60_000.0);
        let warmups = 1;
        let first = pqperf_model::stream::first_sampled_call(warmups, 1, r.iters);
        let mut trials = Vec::new();
        let mut processes = Vec::new();
        for i in 0..procs {
            let s = i + r.seed_offset;
            // Each process's machine differs by ±0.5 % from the next (per run).
            let machine = (r.slow)(i) * (1.0 + 0.01 * (u() - 0.5));
            let calls: Vec<u64> = (0..r.iters.min(400))
                .map(|j| {
                    let n = first + j;
                    let noise = 1.0 + 0.02 * (u() - 0.5);
                    let mut t = r.work * machine * noise * (base + rounds(s, n) * round);
                    if u() < r.spike {
                        t += 3_000_000.0;
                    }
                    t as u64
                })
                .collect();
            trials.push(calls);
            let mut p = Process {
                status: "complete".into(),
                ..Default::default()
            };
            if r.streams {
                p.extra.insert(
                    "stream".into(),
                    json!({
                        "index": i,
                        "seed": seed_hex(&process_seed(s)),
                        "inputs": CALL_INPUTS,
                        "first_sampled_call": first,
                        "sampled_trials": 1,
                    }),
                );
            }
            processes.push(p);
        }
        Record {
            candidate: "ml-dsa-44".into(),
            label: "l".into(),
            operation: "sign".into(),
            processes,
            pqperf: Some(PqperfRecordExt {
                robust: Robust::compute(&trials, "sign", 2.5e9),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn side(r: Record) -> Side {
        Side {
            shown: "x".into(),
            system_dir: "x".into(),
            records: vec![r],
            noise_floor: None,
        }
    }

    fn row(a: Record, b: Record) -> crate::Row {
        compare(&side(a), &side(b), &Options::default())
            .unwrap()
            .rows
            .remove(0)
    }

    fn base(iters: u64, noise: u64) -> Run {
        Run {
            iters,
            work: 1.0,
            slow: QUIET,
            spike: 0.0,
            seed_offset: 0,
            streams: true,
            noise,
        }
    }

    #[test]
    fn a_a_of_paired_streams_says_no_change_where_unpaired_cannot() {
        // 16 streams a side, calls per trial 350 in A and 300 in B: the sampled calls take
        // input indices 0–349 and 0–299, so 300 positions a stream are common.
        for k in 0..3 {
            let a = run(16, &base(350, 10 * k + 1));
            let b = run(16, &base(300, 10 * k + 2));
            let r = row(a.clone(), b.clone());
            assert_eq!(r.verdict, Verdict::NoChange, "{k}: {r:?}");
            let pv = r.paired.as_ref().expect("paired");
            assert_eq!(pv.streams, 16);
            assert!(pv.calls <= 16 * 300, "{pv:?}");
            assert!(pv.calls >= 16 * 288, "{pv:?}");
            assert!(r.unpaired_reason.is_none());
            assert!((r.ratio.unwrap() - 1.0).abs() < 0.01, "{r:?}");
            // The same records without their streams (the reference protocol's shape):
            // unpaired, and the operation's own variability leaves it inconclusive.
            let mut b2 = b.clone();
            for p in &mut b2.processes {
                p.extra.remove("stream");
            }
            let u = row(a, b2);
            assert_eq!(u.verdict, Verdict::Inconclusive, "{u:?}");
            assert!(u.paired.is_none());
            let why = u.unpaired_reason.as_deref().unwrap();
            assert!(why.contains("side B ran the reference protocol"), "{why}");
            assert!(
                u.reason
                    .as_deref()
                    .unwrap()
                    .contains("(unpaired: side B ran"),
                "{u:?}"
            );
        }
    }

    #[test]
    fn runs_of_different_stream_keys_are_not_paired() {
        let a = run(16, &base(300, 1));
        let b = run(16, &base(300, 2));
        let keyed = |mut r: Record, id: &str| {
            for p in &mut r.processes {
                if let Some(s) = p.extra.get_mut("stream") {
                    s["key_id"] = json!(id);
                }
            }
            r
        };
        let same = row(keyed(a.clone(), "aa"), keyed(b.clone(), "aa"));
        assert!(same.paired.is_some(), "{same:?}");
        let u = row(keyed(a.clone(), "aa"), keyed(b.clone(), "bb"));
        assert!(u.paired.is_none());
        let why = u.unpaired_reason.as_deref().unwrap();
        assert!(
            why.contains("not paired: different stream keys (A aa, B bb)"),
            "{why}"
        );
        let why = row(a, keyed(b, "bb")).unpaired_reason.unwrap();
        assert!(why.contains("(A public, B bb)"), "{why}");
    }

    #[test]
    fn different_calls_per_trial_pair_every_common_call() {
        // A calibrated 100 calls per trial, B 1000 (a hog beside one run halves or doubles
        // the calibration): the sampled calls take input indices 0–99 and 0–399 whatever the
        // calibration, so every sampled call of A has its twin in B.
        for (ia, ib, common) in [(100, 1000, 100), (1000, 450, 400), (64, 128, 64)] {
            let a = run(16, &base(ia, 21));
            let b = run(16, &base(ib, 22));
            let r = row(a, b);
            assert!(r.unpaired_reason.is_none(), "{ia}/{ib}: {r:?}");
            let pv = r.paired.as_ref().expect("paired");
            assert_eq!(pv.streams, 16, "{pv:?}");
            // Every common call a stream, less what the fences drop (none here: no spikes).
            assert!(pv.calls <= 16 * common, "{pv:?}");
            assert!(pv.calls >= 16 * common * 95 / 100, "{ia}/{ib}: {pv:?}");
            assert_eq!(r.verdict, Verdict::NoChange, "{ia}/{ib}: {r:?}");
        }
    }

    #[test]
    fn plus_twenty_percent_beside_a_pinned_hog_is_slower_paired() {
        let a = run(16, &base(350, 7));
        let b = run(
            16,
            &Run {
                work: 1.2,
                slow: |i| if i % 5 == 2 { 1.6 } else { 1.0 },
                spike: 0.03,
                ..base(320, 8)
            },
        );
        let r = row(a, b);
        assert_eq!(
            (r.verdict, r.reason.as_deref()),
            (Verdict::Slower, None),
            "{r:?}"
        );
        assert!(r.paired.is_some());
        assert!((r.ratio.unwrap() - 1.2).abs() < 0.03, "{r:?}");
        // A +1 % change stays out of "no change" or is called no change only when the
        // interval lies inside ±2 %: never faster or slower.
        let a = run(16, &base(350, 9));
        let b = run(
            16,
            &Run {
                work: 1.01,
                ..base(350, 10)
            },
        );
        let r = row(a, b);
        assert!(
            matches!(r.verdict, Verdict::NoChange | Verdict::Inconclusive),
            "{r:?}"
        );
    }

    #[test]
    fn mismatched_seeds_and_misaligned_calls_fall_back_to_unpaired_with_the_reason() {
        // Different seeds (another run's streams): nothing to pair.
        let a = run(16, &base(350, 1));
        let b = run(
            16,
            &Run {
                seed_offset: 1000,
                ..base(350, 2)
            },
        );
        let r = row(a.clone(), b);
        assert!(r.paired.is_none(), "{r:?}");
        let why = r.unpaired_reason.unwrap();
        assert!(why.contains("share 0 input stream"), "{why}");
        assert!(matches!(
            r.verdict,
            Verdict::NoChange | Verdict::Inconclusive
        ));
        // Calls per trial 20 in A: 20 sampled calls a stream, fewer than MIN_COMMON_CALLS.
        let a20 = run(16, &base(20, 3));
        let b400 = run(16, &base(400, 4));
        let why = row(a20, b400).unpaired_reason.unwrap();
        assert!(why.contains("a side sampled too few calls"), "{why}");
        assert!(why.contains("A sampled calls 0–20"), "{why}");
        // Another input mapping on one side.
        let mut b = run(16, &base(350, 5));
        for p in &mut b.processes {
            p.extra.get_mut("stream").unwrap()["inputs"] = json!("parent bytes v9");
        }
        let why = row(a.clone(), b).unpaired_reason.unwrap();
        assert!(why.contains("\"parent bytes v9\""), "{why}");
        // A record from before the positions were recorded.
        let mut b = run(16, &base(350, 6));
        for p in &mut b.processes {
            p.extra
                .get_mut("stream")
                .unwrap()
                .as_object_mut()
                .unwrap()
                .remove("first_sampled_call");
        }
        let why = row(a.clone(), b).unpaired_reason.unwrap();
        assert!(why.contains("stream.first_sampled_call"), "{why}");
        // Processes that do not account for the stored trials.
        let mut b = run(16, &base(350, 7));
        b.processes.pop();
        let why = row(a, b).unpaired_reason.unwrap();
        assert!(
            why.contains("more sampled trials than its processes"),
            "{why}"
        );
    }

    #[test]
    fn fixed_time_operations_are_not_paired() {
        let mut a = run(16, &base(350, 1));
        let mut b = run(16, &base(350, 2));
        for r in [&mut a, &mut b] {
            r.operation = "keygen".into();
            let t = r
                .pqperf
                .as_ref()
                .unwrap()
                .robust
                .as_ref()
                .unwrap()
                .sample_trials()
                .unwrap();
            let flat: Vec<Vec<u64>> = t
                .iter()
                .map(|c| c.iter().map(|_| 100_000).collect())
                .collect();
            r.pqperf.as_mut().unwrap().robust = Robust::compute(&flat, "keygen", 2.5e9);
        }
        let r = row(a, b);
        assert!(r.paired.is_none() && r.unpaired_reason.is_none(), "{r:?}");
    }

    #[test]
    fn t_quantiles_of_the_paired_interval() {
        assert_eq!(pqperf_model::robust::t95(5.0), 2.015);
        assert!((pqperf_model::robust::t95(60.0) - 1.671).abs() < 0.002);
        assert!((t_quantile(1e6, 0.90) - 1.645).abs() < 0.001);
        assert!((t_quantile(1e6, 0.99) - 2.576).abs() < 0.003);
    }
}
