//! Statistics of a timing record from its raw trials, exactly as method.md §8 defines them
//! (and as the reference validator recomputes them), plus pqperf's per-call quantiles.
//!
//! Float arithmetic follows Python: sums use CPython's `sum()` of floats (Neumaier
//! compensated summation, CPython ≥ 3.12, which wrote the reference data), int/int divisions
//! are true divisions, medians of an even count are the mean of the two middle values.

pub use crate::record::Quantiles;
use crate::record::{Process, Record, Trial};

/// CPython's `sum()` over floats (3.12+: Neumaier compensated summation), starting from the
/// integer 0 as `sum(xs)` does.
pub fn py_sum(xs: &[f64]) -> f64 {
    let mut iter = xs.iter();
    let Some(&first) = iter.next() else {
        return 0.0;
    };
    // 0 + x0 (int + float) is x0 (except that -0.0 becomes 0.0).
    let mut f = 0.0 + first;
    let mut c = 0.0f64;
    for &x in iter {
        let t = f + x;
        if f.abs() >= x.abs() {
            c += (f - t) + x;
        } else {
            c += (x - t) + f;
        }
        f = t;
    }
    if c != 0.0 && c.is_finite() {
        f += c;
    }
    f
}

/// Python `a / b` for non-negative integers (true division): the correctly rounded quotient
/// (round half to even), also when `a` or `b` exceed 2^53. `b` = 0 gives infinity (or NaN for
/// 0/0); callers check first, as Python would raise.
pub fn int_div(a: u128, b: u128) -> f64 {
    const EXACT: u128 = 1 << 53;
    if (a < EXACT && b < EXACT) || b == 0 || a == 0 {
        return a as f64 / b as f64;
    }
    let bits = |x: u128| 128 - x.leading_zeros() as i32;
    // Scale so that the integer quotient has 55 or 56 bits, then fold the remainder into a
    // sticky bit below the rounding position; the u128 → f64 conversion rounds half to even.
    let s = bits(b) - bits(a) + 55;
    let (num, den) = if s >= 0 {
        if bits(a) + s > 127 {
            return a as f64 / b as f64; // beyond u64-sized inputs: rounded inputs
        }
        (a << s, b)
    } else {
        (a, b << -s)
    };
    let q = num / den;
    let sticky = (num % den != 0) as u128;
    let f = (q | sticky) as f64;
    f * 2f64.powi(-s)
}

/// Median as Python computes it: middle value, or mean of the two middle values.
/// `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Relative closeness as the validator uses it (`math.isclose(a, b, rel_tol=tol)`).
pub fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    if a == b {
        return true;
    }
    if !a.is_finite() || !b.is_finite() {
        return false;
    }
    (a - b).abs() <= tol * a.abs().max(b.abs())
}

/// [`rel_close`] on optional values: both `None` agree, one `None` does not.
pub fn opt_close(a: Option<f64>, b: Option<f64>, tol: f64) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => rel_close(x, y, tol),
        _ => false,
    }
}

/// The derived fields of a record (method.md §8), recomputed from trials and processes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordStats {
    /// Σ mᵢ.
    pub measurements: u64,
    /// n ≥ 100.
    pub guide_100_measurements_met: bool,
    /// Σ sᵢ ÷ n.
    pub mean_seconds: Option<f64>,
    /// Median of sᵢ ÷ mᵢ.
    pub median_trial_seconds: Option<f64>,
    /// Min of sᵢ ÷ mᵢ.
    pub min_trial_seconds: Option<f64>,
    /// Max of sᵢ ÷ mᵢ.
    pub max_trial_seconds: Option<f64>,
    /// Σ cᵢ ÷ n when every cᵢ > 0.
    pub mean_cycles: Option<f64>,
    /// Median of cᵢ ÷ mᵢ (same condition).
    pub median_trial_cycles: Option<f64>,
    /// n ÷ Σ sᵢ (None if Σ sᵢ = 0).
    pub operations_per_second: Option<f64>,
    /// input_bytes × n ÷ Σ sᵢ ÷ 10⁶ when input_bytes > 0.
    pub throughput_mb_per_second: Option<f64>,
}

impl RecordStats {
    /// Statistics of `trials` (None without trials).
    pub fn from_trials(trials: &[Trial], input_bytes: u64) -> Option<RecordStats> {
        if trials.is_empty() {
            return None;
        }
        let n: u64 = trials.iter().map(|t| t.measurements).sum();
        let secs: Vec<f64> = trials.iter().map(|t| t.seconds).collect();
        let total_s = py_sum(&secs);
        let per_trial: Vec<f64> = trials
            .iter()
            .filter(|t| t.measurements > 0)
            .map(|t| t.seconds / t.measurements as f64)
            .collect();
        let all_cycles = trials.iter().all(|t| t.cycles.is_some_and(|c| c > 0));
        let (mean_cycles, median_trial_cycles) = if all_cycles && n > 0 {
            let total_c: u128 = trials.iter().map(|t| t.cycles.unwrap_or(0) as u128).sum();
            let per: Vec<f64> = trials
                .iter()
                .filter(|t| t.measurements > 0)
                .map(|t| int_div(t.cycles.unwrap_or(0) as u128, t.measurements as u128))
                .collect();
            (Some(int_div(total_c, n as u128)), median(&per))
        } else {
            (None, None)
        };
        let mean_seconds = (n > 0).then(|| total_s / n as f64);
        let operations_per_second = (total_s != 0.0).then(|| n as f64 / total_s);
        let throughput_mb_per_second = (input_bytes > 0 && total_s != 0.0)
            .then(|| (input_bytes as u128 * n as u128) as f64 / total_s / 1e6);
        Some(RecordStats {
            measurements: n,
            guide_100_measurements_met: n >= 100,
            mean_seconds,
            median_trial_seconds: median(&per_trial),
            min_trial_seconds: per_trial.iter().copied().reduce(f64::min),
            max_trial_seconds: per_trial.iter().copied().reduce(f64::max),
            mean_cycles,
            median_trial_cycles,
            operations_per_second,
            throughput_mb_per_second,
        })
    }

    /// Statistics of a record's top-level `trials`.
    pub fn of_record(r: &Record) -> Option<RecordStats> {
        Self::from_trials(&r.trials, r.input_bytes)
    }

    /// Write these statistics into `r` (reference fields only).
    pub fn apply_to(&self, r: &mut Record) {
        r.measurements = Some(self.measurements);
        r.guide_100_measurements_met = Some(self.guide_100_measurements_met);
        r.mean_seconds = self.mean_seconds;
        r.median_trial_seconds = self.median_trial_seconds;
        r.min_trial_seconds = self.min_trial_seconds;
        r.max_trial_seconds = self.max_trial_seconds;
        r.mean_cycles = self.mean_cycles;
        r.median_trial_cycles = self.median_trial_cycles;
        r.operations_per_second = self.operations_per_second;
        r.throughput_mb_per_second = self.throughput_mb_per_second;
    }
}

/// Record-level values aggregated over processes (method.md §7.2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcessTotals {
    /// Σ processes' `disturbed_retries`.
    pub disturbed_retries: u64,
    /// Max over processes of `meta.baseline_rss_bytes`.
    pub baseline_rss_bytes: Option<u64>,
    /// Max over processes of `meta.peak_rss_bytes`.
    pub peak_rss_bytes: Option<u64>,
    /// Concatenation of the processes' trials.
    pub trials: Vec<Trial>,
}

impl ProcessTotals {
    /// Aggregate `processes`.
    pub fn of(processes: &[Process]) -> ProcessTotals {
        ProcessTotals {
            disturbed_retries: processes.iter().filter_map(|p| p.disturbed_retries).sum(),
            baseline_rss_bytes: processes
                .iter()
                .filter_map(|p| p.meta.u64("baseline_rss_bytes"))
                .max(),
            peak_rss_bytes: processes
                .iter()
                .filter_map(|p| p.meta.u64("peak_rss_bytes"))
                .max(),
            trials: processes
                .iter()
                .flat_map(|p| p.trials.iter().cloned())
                .collect(),
        }
    }
}

/// Record fields taken from the first process's driver `meta` (method.md §7.2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetaDerived {
    /// Every meta key ending in `_bytes` with an all-digit value, except `baseline_rss_bytes`
    /// and `peak_rss_bytes`, as integers, in meta order.
    pub sizes: indexmap::IndexMap<String, u64>,
    /// Meta keys starting with `kex_` with all-digit values.
    pub kex: indexmap::IndexMap<String, u64>,
    /// `build_flags` of the meta.
    pub build_flags: Option<String>,
    /// `timing_scope` of the meta.
    pub timing_scope: Option<String>,
}

impl MetaDerived {
    /// Derive from the first of `processes` (None without processes).
    pub fn of(processes: &[Process]) -> Option<MetaDerived> {
        let meta = &processes.first()?.meta;
        let mut d = MetaDerived {
            build_flags: meta.str("build_flags").map(str::to_string),
            timing_scope: meta.str("timing_scope").map(str::to_string),
            ..Default::default()
        };
        for (k, _) in meta.iter() {
            let Some(n) = meta.str(k).and_then(|_| meta.u64(k)) else {
                continue;
            };
            if k.ends_with("_bytes") && k != "baseline_rss_bytes" && k != "peak_rss_bytes" {
                d.sizes.insert(k.to_string(), n);
            }
            if k.starts_with("kex_") {
                d.kex.insert(k.to_string(), n);
            }
        }
        Some(d)
    }
}

/// Type-7 quantile of sorted data (`p` in [0, 1]). `None` if empty.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

impl Quantiles {
    /// Quantiles of `samples` (NaNs are dropped). `None` if there is no sample.
    pub fn of(samples: &[f64]) -> Option<Quantiles> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Quantiles {
            samples: v.len() as u64,
            method: "linear".to_string(),
            min: v[0],
            p50: quantile_sorted(&v, 0.5)?,
            p90: quantile_sorted(&v, 0.9)?,
            p99: quantile_sorted(&v, 0.99)?,
            max: v[v.len() - 1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_sum_compensates_like_cpython() {
        // CPython 3.12+: sum([0.1]*10) == 1.0 (naive left fold gives 0.9999999999999999).
        assert_eq!(py_sum(&[0.1; 10]), 1.0);
        assert_eq!(py_sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(py_sum(&[]), 0.0);
    }

    #[test]
    fn int_div_is_correctly_rounded_beyond_2_53() {
        assert_eq!(int_div(7, 2), 3.5);
        // (2^60 + 1) / 1 is not representable: ties to even gives 2^60.
        assert_eq!(int_div((1 << 60) + 1, 1), (1u64 << 60) as f64);
        // 2^54 + 3 → nearest representable (multiples of 4): 2^54 + 4.
        assert_eq!(int_div((1 << 54) + 3, 1), ((1u64 << 54) + 4) as f64);
        // Python: (10**17 + 1) / 3 == 3.3333333333333332e+16
        assert_eq!(
            int_div(100_000_000_000_000_001, 3),
            3.333_333_333_333_333_2e16
        );
        // Python: 12345678901234567891 / 1000 == 1.2345678901234568e+16
        assert_eq!(
            int_div(12_345_678_901_234_567_891, 1000),
            1.2345678901234568e16
        );
    }

    #[test]
    fn median_even_is_mean_of_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_type7() {
        let q = Quantiles::of(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(q.p50, 5.5);
        assert!((q.p90 - 9.1).abs() < 1e-12);
        assert!((q.p99 - 9.91).abs() < 1e-12);
        assert_eq!((q.min, q.max, q.samples), (1.0, 10.0, 10));
        assert_eq!(Quantiles::of(&[]), None);
    }

    #[test]
    fn stats_of_trials() {
        let t = |m, s, c| Trial {
            measurements: m,
            seconds: s,
            cycles: Some(c),
            ..Default::default()
        };
        let st = RecordStats::from_trials(&[t(10, 1.0, 100), t(30, 2.0, 600)], 0).unwrap();
        assert_eq!(st.measurements, 40);
        assert!(!st.guide_100_measurements_met);
        assert_eq!(st.mean_seconds, Some(3.0 / 40.0));
        assert_eq!(st.median_trial_seconds, Some((0.1 + 2.0 / 30.0) / 2.0));
        assert_eq!(st.mean_cycles, Some(700.0 / 40.0));
        assert_eq!(st.operations_per_second, Some(40.0 / 3.0));
        assert_eq!(st.throughput_mb_per_second, None);
        let no_cycles = RecordStats::from_trials(&[t(10, 1.0, 0)], 32).unwrap();
        assert_eq!(no_cycles.mean_cycles, None);
        assert_eq!(no_cycles.throughput_mb_per_second, Some(320.0 / 1.0 / 1e6));
    }
}
