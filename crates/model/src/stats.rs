//! Statistics of a timing record from its raw trials, exactly as method.md §8 defines them
//! (and as the reference validator recomputes them), plus pqperf's per-call quantiles.
//!
//! Float arithmetic follows Python ([`crate::pynum`]): sums use CPython's `sum()` of floats,
//! int/int divisions are true divisions, medians of an even count are the mean of the two
//! middle values.

use crate::pynum::{int_div, median, py_sum, quantile_sorted};
pub use crate::record::Quantiles;
use crate::record::{Process, Record, Trial};

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
