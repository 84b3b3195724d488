//! Robust per-call estimate of an operation and its seeded bootstrap confidence interval
//! (pqperf addition, stored under the record's `pqperf.robust`; `validate` recomputes it bit
//! for bit from the stored samples).
//!
//! * **Samples**: tick-counter deltas of single calls from the driver's *sampled* trials
//!   (separate from the reference trials), one list per sampled trial.
//! * **Estimator**: the median (type-7 `p50`) for fixed-work operations; for variable-work
//!   operations — `sign`, where lattice Fiat–Shamir-with-aborts and hash-and-sign signers loop
//!   until a rejection test passes, so the cost of a call is a sum of a random number of
//!   rounds — the 20 % trimmed mean over calls (drop ⌊0.2·n⌋ smallest and largest, mean of the
//!   rest), which follows the spread of rejection rounds and still ignores preempted calls:
//!   with another task on the CPU, a call is hit by a time-slice switch with a probability of
//!   about its duration over the slice (≈ 9 % for a 260 µs call and 3 ms slices), more than a
//!   10 % trim absorbs once the rounds' own tail is counted.
//! * **Bootstrap**: two levels, so both the spread between processes/trials and the spread
//!   between calls reach the interval: each of `resamples` replicates draws as many sampled
//!   trials as there are, with replacement, and from each drawn trial as many calls as it has,
//!   with replacement; the estimator of the pooled draw is one replicate. The 95 % interval is
//!   the 2.5 % and 97.5 % type-7 quantiles of the sorted replicates (percentile bootstrap).
//!   Random numbers: SplitMix64 from the stored seed, index = ⌊r·n / 2⁶⁴⌋.
//! * Seconds are ticks ÷ `tick_hz` (the stored tick rate).

use serde::{Deserialize, Serialize};

use crate::pynum::{int_div, quantile_sorted};

/// Default number of bootstrap replicates.
pub const RESAMPLES: u64 = 1000;
/// Default seed (ASCII `pqperf18`).
pub const SEED: u64 = 0x7071_7065_7266_3138;
/// Default confidence level.
pub const CONFIDENCE: f64 = 0.95;
/// Trimmed share at each end for variable-work operations.
pub const TRIM: f64 = 0.2;

/// Which central estimate an operation gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// Median of calls (fixed-work operations).
    P50,
    /// 20 % trimmed mean of calls (variable-work operations).
    TrimmedMean20,
}

impl Estimator {
    /// The estimator of an operation (`sign` is variable work, everything else fixed).
    pub fn for_op(op: &str) -> Estimator {
        if op == "sign" {
            Estimator::TrimmedMean20
        } else {
            Estimator::P50
        }
    }

    /// Evidence name (`p50`, `trimmed_mean_20`).
    pub fn name(self) -> &'static str {
        match self {
            Estimator::P50 => "p50",
            Estimator::TrimmedMean20 => "trimmed_mean_20",
        }
    }

    /// Parses [`Estimator::name`].
    pub fn parse(s: &str) -> Option<Estimator> {
        match s {
            "p50" => Some(Estimator::P50),
            "trimmed_mean_20" => Some(Estimator::TrimmedMean20),
            _ => None,
        }
    }

    /// The estimate of `v` (reordered in place: partitioned around the order statistics it
    /// needs, not sorted). `None` when empty. The same value as computing it on the sorted
    /// `v` (the median interpolates the same two order statistics; the trimmed mean sums the
    /// same multiset), in O(n) instead of a sort: the bootstrap computes it once per
    /// replicate, and `--target-ci` recomputes the interval after every process.
    pub fn of(self, v: &mut [u64]) -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        match self {
            Estimator::P50 => {
                let h = (n - 1) as f64 * 0.5;
                let lo = h.floor() as usize;
                let (_, &mut a, rest) = v.select_nth_unstable(lo);
                // The next order statistic is the smallest of what lies above `lo`.
                let b = if lo + 1 < n {
                    *rest
                        .iter()
                        .min()
                        .expect("lo + 1 < n leaves one element above")
                } else {
                    a
                };
                let (a, b) = (a as f64, b as f64);
                Some(a + (h - lo as f64) * (b - a))
            }
            Estimator::TrimmedMean20 => {
                let k = (n as f64 * TRIM).floor() as usize;
                if k > 0 {
                    // v[..k] the k smallest, then v[n-k..] the k largest of the rest.
                    v.select_nth_unstable(k - 1);
                    let upper = &mut v[k..];
                    let m = upper.len();
                    upper.select_nth_unstable(m - k);
                }
                let kept = &v[k..n - k];
                let sum: u128 = kept.iter().map(|&x| x as u128).sum();
                Some(int_div(sum, kept.len() as u128))
            }
        }
    }
}

/// SplitMix64: small, seedable, reproducible everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// Generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Index in `0..n` (`n` > 0): ⌊r·n / 2⁶⁴⌋.
    pub fn index(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
    /// Shuffles `v` in place (Fisher–Yates with [`SplitMix64::index`]).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.index(i + 1);
            v.swap(i, j);
        }
    }
}

/// The `resamples` two-level bootstrap replicates of `est` over `trials` (empty trials are
/// ignored), in draw order. Empty when there is no sample.
pub fn replicates(trials: &[Vec<u64>], est: Estimator, resamples: u64, seed: u64) -> Vec<f64> {
    let trials: Vec<&Vec<u64>> = trials.iter().filter(|t| !t.is_empty()).collect();
    if trials.is_empty() {
        return Vec::new();
    }
    let mut rng = SplitMix64::new(seed);
    let mut pool: Vec<u64> = Vec::new();
    let mut out = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        pool.clear();
        for _ in 0..trials.len() {
            let t = trials[rng.index(trials.len())];
            for _ in 0..t.len() {
                pool.push(t[rng.index(t.len())]);
            }
        }
        if let Some(e) = est.of(&mut pool) {
            out.push(e);
        }
    }
    out
}

/// Percentile interval at `confidence` of replicates (sorted in place).
pub fn percentile_ci(reps: &mut [f64], confidence: f64) -> Option<(f64, f64)> {
    reps.sort_by(f64::total_cmp);
    let a = (1.0 - confidence) / 2.0;
    Some((quantile_sorted(reps, a)?, quantile_sorted(reps, 1.0 - a)?))
}

/// The relative half-width of the robust interval of `trials` (what [`Robust::compute_with`]
/// stores as `ci_half_width_rel`, without building the record's sample strings): the stopping
/// check of `--target-ci`, which looks after every process. `None` without samples.
pub fn half_width_rel(
    trials: &[Vec<u64>],
    est: Estimator,
    resamples: u64,
    seed: u64,
    confidence: f64,
) -> Option<f64> {
    let mut all: Vec<u64> = trials.iter().flatten().copied().collect();
    let e = est.of(&mut all)?;
    let mut reps = replicates(trials, est, resamples, seed);
    let (lo, hi) = percentile_ci(&mut reps, confidence)?;
    Some(if e > 0.0 { (hi - lo) / 2.0 / e } else { 0.0 })
}

/// The robust estimate of a record, as stored under `pqperf.robust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Robust {
    /// `p50` or `trimmed_mean_20` ([`Estimator`]).
    pub estimator: String,
    /// Tick rate (Hz) that converts ticks into seconds.
    pub tick_hz: f64,
    /// Bootstrap method (`two-level percentile`).
    pub method: String,
    /// Bootstrap replicates.
    pub resamples: u64,
    /// SplitMix64 seed of the bootstrap.
    pub seed: u64,
    /// Confidence level (0.95).
    pub confidence: f64,
    /// Calls sampled (Σ over sampled trials).
    pub calls: u64,
    /// Estimate in ticks.
    pub estimate_ticks: f64,
    /// Lower CI bound in ticks.
    pub ci_low_ticks: f64,
    /// Upper CI bound in ticks.
    pub ci_high_ticks: f64,
    /// Estimate in seconds (ticks ÷ tick_hz).
    pub estimate_seconds: f64,
    /// Lower CI bound in seconds.
    pub ci_low_seconds: f64,
    /// Upper CI bound in seconds.
    pub ci_high_seconds: f64,
    /// CI half-width relative to the estimate ((high − low) / 2 / estimate).
    pub ci_half_width_rel: f64,
    /// Per-call tick deltas, one space-separated string per sampled trial (in order).
    pub samples: Vec<String>,
}

impl Robust {
    /// Computes the estimate and its interval for `op` from per-trial samples.
    pub fn compute(trials: &[Vec<u64>], op: &str, tick_hz: f64) -> Option<Robust> {
        Self::compute_with(
            trials,
            Estimator::for_op(op),
            tick_hz,
            RESAMPLES,
            SEED,
            CONFIDENCE,
        )
    }

    /// [`Robust::compute`] with explicit parameters.
    pub fn compute_with(
        trials: &[Vec<u64>],
        est: Estimator,
        tick_hz: f64,
        resamples: u64,
        seed: u64,
        confidence: f64,
    ) -> Option<Robust> {
        if tick_hz.is_nan() || tick_hz <= 0.0 {
            return None;
        }
        let mut all: Vec<u64> = trials.iter().flatten().copied().collect();
        let calls = all.len() as u64;
        let e = est.of(&mut all)?;
        let mut reps = replicates(trials, est, resamples, seed);
        let (lo, hi) = percentile_ci(&mut reps, confidence)?;
        let samples = trials
            .iter()
            .map(|t| {
                t.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Some(Robust {
            estimator: est.name().to_string(),
            tick_hz,
            method: "two-level percentile".to_string(),
            resamples,
            seed,
            confidence,
            calls,
            estimate_ticks: e,
            ci_low_ticks: lo,
            ci_high_ticks: hi,
            estimate_seconds: e / tick_hz,
            ci_low_seconds: lo / tick_hz,
            ci_high_seconds: hi / tick_hz,
            ci_half_width_rel: if e > 0.0 { (hi - lo) / 2.0 / e } else { 0.0 },
            samples,
        })
    }

    /// The stored samples, one vector per sampled trial; an error names the bad token.
    pub fn sample_trials(&self) -> Result<Vec<Vec<u64>>, String> {
        self.samples
            .iter()
            .enumerate()
            .map(|(i, s)| {
                s.split_whitespace()
                    .map(|x| {
                        x.parse::<u64>()
                            .map_err(|_| format!("samples[{i}]: {x:?} is not a tick count"))
                    })
                    .collect()
            })
            .collect()
    }

    /// Recomputes from the stored samples and parameters (what `validate` compares).
    pub fn recompute(&self) -> Result<Option<Robust>, String> {
        let est = Estimator::parse(&self.estimator)
            .ok_or_else(|| format!("unknown estimator {:?}", self.estimator))?;
        let trials = self.sample_trials()?;
        Ok(Self::compute_with(
            &trials,
            est,
            self.tick_hz,
            self.resamples,
            self.seed,
            self.confidence,
        ))
    }

    /// The bootstrap replicates in seconds (for ratio intervals, e.g. `pqperf compare`),
    /// drawn with `seed`.
    pub fn replicates_seconds(&self, seed: u64) -> Result<Vec<f64>, String> {
        let est = Estimator::parse(&self.estimator)
            .ok_or_else(|| format!("unknown estimator {:?}", self.estimator))?;
        let trials = self.sample_trials()?;
        Ok(replicates(&trials, est, self.resamples, seed)
            .into_iter()
            .map(|x| x / self.tick_hz)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions on the sorted samples (what `of` must equal).
    fn sorted_definition(est: Estimator, v: &[u64]) -> Option<f64> {
        let mut s = v.to_vec();
        s.sort_unstable();
        let n = s.len();
        if n == 0 {
            return None;
        }
        match est {
            Estimator::P50 => {
                let h = (n - 1) as f64 * 0.5;
                let lo = h.floor() as usize;
                let hi = (lo + 1).min(n - 1);
                let (a, b) = (s[lo] as f64, s[hi] as f64);
                Some(a + (h - lo as f64) * (b - a))
            }
            Estimator::TrimmedMean20 => {
                let k = (n as f64 * TRIM).floor() as usize;
                let kept = &s[k..n - k];
                Some(int_div(
                    kept.iter().map(|&x| x as u128).sum(),
                    kept.len() as u128,
                ))
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn selection_gives_the_sorted_definition(v in proptest::collection::vec(0u64..50, 0..60)) {
            for est in [Estimator::P50, Estimator::TrimmedMean20] {
                let mut w = v.clone();
                proptest::prop_assert_eq!(est.of(&mut w), sorted_definition(est, &v));
            }
        }
    }

    #[test]
    fn estimators() {
        let mut v = vec![5, 1, 4, 2, 3, 100];
        assert_eq!(Estimator::P50.of(&mut v), Some(3.5));
        // 10 values: drop 2 at each end.
        let mut v: Vec<u64> = (1..=10).collect();
        v[9] = 1000;
        v[8] = 900;
        assert_eq!(Estimator::TrimmedMean20.of(&mut v), Some(33.0 / 6.0));
        assert_eq!(Estimator::P50.of(&mut []), None);
        assert_eq!(Estimator::for_op("sign"), Estimator::TrimmedMean20);
        assert_eq!(Estimator::for_op("verify"), Estimator::P50);
    }

    #[test]
    fn bootstrap_is_reproducible_and_covers_the_estimate() {
        let mut rng = SplitMix64::new(7);
        let trials: Vec<Vec<u64>> = (0..5)
            .map(|_| (0..300).map(|_| 1000 + rng.next_u64() % 50).collect())
            .collect();
        let a = Robust::compute(&trials, "verify", 1e9).unwrap();
        let b = Robust::compute(&trials, "verify", 1e9).unwrap();
        assert_eq!(a, b);
        assert!(a.ci_low_ticks <= a.estimate_ticks && a.estimate_ticks <= a.ci_high_ticks);
        assert!(a.ci_half_width_rel < 0.01, "{}", a.ci_half_width_rel);
        assert_eq!(a.recompute().unwrap().unwrap(), a);
        // Another seed gives another (but close) interval.
        let c = Robust::compute_with(&trials, Estimator::P50, 1e9, 1000, 1, 0.95).unwrap();
        assert_eq!(c.estimate_ticks, a.estimate_ticks);
        // A trial shifted by 20 % widens the interval (between-trial spread counts).
        let mut shifted = trials.clone();
        for x in shifted[0].iter_mut() {
            *x = *x * 12 / 10;
        }
        let d = Robust::compute(&shifted, "verify", 1e9).unwrap();
        assert!(d.ci_high_ticks - d.ci_low_ticks > a.ci_high_ticks - a.ci_low_ticks);
    }

    #[test]
    fn tampered_samples_change_the_recomputation() {
        let trials = vec![vec![10, 11, 12, 13, 14], vec![10, 12, 12, 15, 11]];
        let mut r = Robust::compute(&trials, "keygen", 2e9).unwrap();
        r.samples[0] = "10 11 12 13 99 99 99".into();
        assert_ne!(r.recompute().unwrap().unwrap(), r);
        r.samples[0] = "10 x".into();
        assert!(r.recompute().unwrap_err().contains("samples[0]"));
    }
}
