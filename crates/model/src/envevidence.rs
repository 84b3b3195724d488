//! Environment evidence of driver processes (pqperf addition, issue 24): what the machine was
//! like while a process measured, so that a verdict between two runs can tell a slower
//! library from a slower machine.
//!
//! * **Canary**: the driver times a fixed integer workload (`pqperf_driver::canary`, the same
//!   instructions in every process and every pqperf build of one version) before and after its
//!   trials and reports the median tick count of a few repetitions of each
//!   (`PQPERF canary before=… after=… reps=…`). Co-tenants that slow every instruction (shared
//!   caches, a sibling hyperthread, hypervisor steal) slow the canary too, which no per-call
//!   statistic of the operation shows. The canary figure is a claim of the child (it runs in
//!   the candidate's address space): it can only make a verdict *inconclusive*, never decide
//!   one.
//! * **Steal**: the parent reads the benchmark CPU's `steal` column of `/proc/stat` before
//!   and after the process (time the hypervisor ran something else on that vCPU).
//! * **Run-queue share**: the share of the trials' wall time the driver waited runnable
//!   (its scheduler lines).
//! * **Load**: `/proc/loadavg` (1 min) when the process started.
//!
//! Stored per attempt (`pqperf.attempts[].env`) and summarised per record
//! (`pqperf.environment_evidence`); never in reference fields.

use serde::{Deserialize, Serialize};

use crate::pynum::quantile_sorted;

/// How the canary figure is obtained (stored with every summary).
pub const CANARY_METHOD: &str = "median ticks of 5 repetitions of a fixed integer workload (multiply-xorshift chain of 20000 steps), timed by the driver before and after its trials; a claim of the child, used only to make verdicts inconclusive";

/// What the machine was like during one driver process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessEnv {
    /// Canary ticks before the trials (median of the repetitions), as the driver reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_before_ticks: Option<u64>,
    /// Canary ticks after the trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_after_ticks: Option<u64>,
    /// Share of the benchmark CPU's time stolen by the hypervisor during the process
    /// (`/proc/stat` steal ÷ all columns, read by the parent around the process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
    /// Share of the trials' wall time spent waiting on the run queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runq_share: Option<f64>,
    /// `/proc/loadavg` 1-minute load when the process started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
}

impl ProcessEnv {
    /// The process's canary figure: the mean of its before and after figures (either alone
    /// when only one was reported); `None` without a positive figure.
    pub fn canary_ticks(&self) -> Option<f64> {
        let v: Vec<f64> = [self.canary_before_ticks, self.canary_after_ticks]
            .into_iter()
            .flatten()
            .filter(|&t| t > 0)
            .map(|t| t as f64)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    /// True when nothing was measured.
    pub fn is_empty(&self) -> bool {
        *self == ProcessEnv::default()
    }
}

/// The environment of a record's kept processes (`pqperf.environment_evidence`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSummary {
    /// [`CANARY_METHOD`].
    pub canary_method: String,
    /// Processes with a canary figure.
    pub canary_processes: u64,
    /// Median over those processes of their canary figure (ticks).
    pub canary_median_ticks: Option<f64>,
    /// Largest canary figure ÷ smallest (how much the machine changed within the record).
    pub canary_spread: Option<f64>,
    /// Mean steal share over the processes that have one.
    pub steal_share: Option<f64>,
    /// Mean run-queue share over the processes that have one.
    pub runq_share: Option<f64>,
    /// Largest 1-minute load at a process start.
    pub load_1m_max: Option<f64>,
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

impl EnvSummary {
    /// Summary of `envs` (the kept processes); `None` when none measured anything.
    pub fn of<'a>(envs: impl IntoIterator<Item = &'a ProcessEnv>) -> Option<EnvSummary> {
        let envs: Vec<&ProcessEnv> = envs.into_iter().filter(|e| !e.is_empty()).collect();
        if envs.is_empty() {
            return None;
        }
        let mut c: Vec<f64> = envs.iter().filter_map(|e| e.canary_ticks()).collect();
        c.sort_by(f64::total_cmp);
        Some(EnvSummary {
            canary_method: CANARY_METHOD.to_string(),
            canary_processes: c.len() as u64,
            canary_median_ticks: quantile_sorted(&c, 0.5),
            canary_spread: match (c.first(), c.last()) {
                (Some(&lo), Some(&hi)) if lo > 0.0 => Some(hi / lo),
                _ => None,
            },
            steal_share: mean(envs.iter().filter_map(|e| e.steal_share)),
            runq_share: mean(envs.iter().filter_map(|e| e.runq_share)),
            load_1m_max: envs
                .iter()
                .filter_map(|e| e.load_1m)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x)))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canary_and_summary() {
        let e = |b: Option<u64>, a: Option<u64>, steal: Option<f64>| ProcessEnv {
            canary_before_ticks: b,
            canary_after_ticks: a,
            steal_share: steal,
            runq_share: Some(0.1),
            load_1m: Some(2.0),
        };
        assert_eq!(e(Some(100), Some(300), None).canary_ticks(), Some(200.0));
        assert_eq!(e(None, Some(300), None).canary_ticks(), Some(300.0));
        assert_eq!(e(Some(0), None, None).canary_ticks(), None);
        let envs = [
            e(Some(100), Some(100), Some(0.0)),
            e(Some(200), Some(200), Some(0.2)),
            e(Some(150), Some(150), None),
            ProcessEnv::default(),
        ];
        let s = EnvSummary::of(&envs).unwrap();
        assert_eq!(s.canary_processes, 3);
        assert_eq!(s.canary_median_ticks, Some(150.0));
        assert_eq!(s.canary_spread, Some(2.0));
        assert!((s.steal_share.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(s.load_1m_max, Some(2.0));
        assert!(EnvSummary::of(&[ProcessEnv::default()]).is_none());
        // Serialised without the unknown parts; read back equal.
        let j = serde_json::to_string(&envs[3]).unwrap();
        assert_eq!(j, "{}");
        let back: ProcessEnv =
            serde_json::from_str(&serde_json::to_string(&envs[1]).unwrap()).unwrap();
        assert_eq!(back, envs[1]);
    }
}
