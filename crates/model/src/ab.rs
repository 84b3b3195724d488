//! Verdicts of a comparison and the evidence of an interleaved A/B measurement
//! (`pqperf ab`, issue 24): two libraries measured alternately, in fresh pinned processes on
//! one CPU, in a seeded random order of pairs; the ratio comes from the paired per-pair
//! ratios. Written as one JSON file (`<B run>/ab/ab-<utc>.json` or `--out`), in the
//! reference serialisation.

use serde::{Deserialize, Serialize};

use crate::envevidence::ProcessEnv;

/// Schema of [`AbEvidence`].
pub const AB_SCHEMA: u64 = 1;
/// `kind` of an [`AbEvidence`] file.
pub const AB_KIND: &str = "pqperf-ab";

/// Verdict of one compared operation (`pqperf compare`, `pqperf ab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B is faster: the interval lies below 1 and the change is at least the threshold.
    Faster,
    /// B is slower: the interval lies above 1 and the change is at least the threshold.
    Slower,
    /// The interval lies inside the no-change band (± threshold).
    NoChange,
    /// The data cannot support a verdict (the reason says why and what would help).
    Inconclusive,
    /// A side has no robust estimate (no per-call samples).
    NoEstimate,
}

impl Verdict {
    /// Wording in tables.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NoEstimate => "no estimate",
        }
    }
}

/// One driver process of one side of a pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbProcess {
    /// Process status (`complete`, `failed`, `inconsistent`, …).
    pub status: String,
    /// Robust per-call estimate of this process (s): the operation's estimator (p50, or the
    /// 20 % trimmed mean for `sign`) over its sampled calls; the reference trial's mean per
    /// call when it sampled none.
    pub estimate_seconds: Option<f64>,
    /// Calls the estimate is made of.
    pub calls: u64,
    /// What the machine was like during the process.
    pub env: ProcessEnv,
    /// Last line of the process's stderr when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// One pair: A and B measured one right after the other, in `order`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbPair {
    /// Pair number (0-based) in measurement order.
    pub index: u64,
    /// `AB` or `BA`: which side ran first (seeded random).
    pub order: String,
    /// Side A's process.
    pub a: AbProcess,
    /// Side B's process.
    pub b: AbProcess,
    /// ln(B/A) of the two estimates, when both completed.
    pub log_ratio: Option<f64>,
    /// ln(B/A) of the two processes' canary figures, when both have one.
    pub canary_log_ratio: Option<f64>,
    /// Times this pair was measured again: a pair with a disturbed or inconsistent process is
    /// re-run as the campaign re-runs its processes (`measure::decide::rerun`), and the least
    /// disturbed complete attempt is kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u64,
    /// A process of the kept attempt had a disturbed trial.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// Why a disturbed pair was kept without a further re-run (`max_reruns`,
    /// `host_always_disturbed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_declined: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The result of one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbResult {
    /// Pairs where both processes completed.
    pub pairs_used: u64,
    /// exp(median of the paired log-ratios): the ratio B/A.
    pub ratio: Option<f64>,
    /// Lower bound of the distribution-free (sign-test) interval of the median ratio.
    pub ci_low: Option<f64>,
    /// Upper bound.
    pub ci_high: Option<f64>,
    /// The interval's actual coverage (binomial, ≥ the asked confidence), when there is one.
    pub coverage: Option<f64>,
    /// exp(median of the paired canary log-ratios): how the machine differed between the A
    /// and B processes.
    pub canary_ratio: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why the verdict is what it is, in words (always set for `inconclusive`).
    pub reason: Option<String>,
}

/// One compared (candidate, instance pair, operation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbUnit {
    /// Candidate id.
    pub candidate: String,
    /// Instance label on side A.
    pub label_a: String,
    /// Instance label on side B.
    pub label_b: String,
    /// Operation key (`keygen`, `hash_32`, …).
    pub op: String,
    /// sha256 of side A's library.
    pub library_sha256_a: Option<String>,
    /// sha256 of side B's library.
    pub library_sha256_b: Option<String>,
    /// Timed calls per reference trial (the same on both sides).
    pub iterations: u64,
    /// Untimed warm-up calls per process.
    pub warmups: u64,
    /// The pairs in measurement order.
    pub pairs: Vec<AbPair>,
    /// The paired result.
    pub result: AbResult,
}

/// An interleaved A/B measurement (`pqperf ab`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbEvidence {
    /// [`AB_SCHEMA`].
    pub schema: u64,
    /// [`AB_KIND`].
    pub kind: String,
    /// pqperf version.
    pub pqperf_version: String,
    /// Side A's run directory as given, or its last component when absolute (evidence
    /// names no machine paths).
    pub a: String,
    /// Side B's run directory, named the same way.
    pub b: String,
    /// The benchmark CPU (leased host-wide for the whole measurement).
    pub cpu: usize,
    /// Pairs asked for per unit.
    pub pairs: u64,
    /// SplitMix64 seed of the pair order (and of nothing else).
    pub seed: u64,
    /// Smallest relative change that counts (0.02 = 2 %).
    pub threshold: f64,
    /// Asked confidence of the intervals (0.95): the chance that no look of a unit calls a
    /// change that is not there.
    pub confidence: f64,
    /// The pair counts at which each unit was judged (sequential design: a unit stops at the
    /// first look whose verdict is slower, faster or no change; the last is the most pairs a
    /// unit gets). Absent in evidence written before pqperf looked more than once (one look at
    /// `pairs`, at `confidence`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looks: Option<Vec<u64>>,
    /// Confidence of each look's interval: `1 − (1 − confidence) / looks` (Bonferroni).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_per_look: Option<f64>,
    /// Seconds per reference trial the iterations were planned for.
    pub trial_target_s: f64,
    /// The method in words.
    pub method: String,
    /// Start (UTC, µs).
    pub started_utc: String,
    /// End (UTC, µs).
    pub ended_utc: String,
    /// The host checks of the benchmark CPU made before measuring (the campaign's list,
    /// `pqperf_measure::host::host_problems`): empty when the host passed them; absent in
    /// evidence written before pqperf checked. Problems do not stop `pqperf ab` (the pairs
    /// cancel what a busy or unfixed host does to both sides alike); they are stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_problems: Option<Vec<String>>,
    /// The stream key every driver process's inputs derive from (issue 36): both processes of
    /// pair `i` of a unit (and its re-runs) get the seed
    /// `pqperf_model::stream::keyed_process_seed(key, i)`, the calibration processes
    /// [`AB_CALIBRATION_INDEX`]'s, so A and B time the same inputs; no seed is on an argv (the
    /// windows' seeds come with the parent's `go`), and the key is written here only once
    /// every pair has been measured. Absent in evidence written before (every process used
    /// the reference's fixed, public seed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_key: Option<AbStreamKey>,
    /// Every unit.
    pub units: Vec<AbUnit>,
}

/// The stream index of `pqperf ab`'s calibration processes ([`AbEvidence::stream_key`]).
pub const AB_CALIBRATION_INDEX: u64 = u64::MAX;

/// The stream key of an `ab` run, published with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbStreamKey {
    /// Its public name (`pqperf_model::stream::key_id`).
    pub key_id: String,
    /// The key, 64 hex characters.
    pub key: String,
    /// Given with `--stream-key` (an earlier run's, so the inputs were predictable), not
    /// drawn fresh.
    pub reused: bool,
}

impl AbEvidence {
    /// True when any unit is slower.
    pub fn any_slower(&self) -> bool {
        self.units
            .iter()
            .any(|u| u.result.verdict == Verdict::Slower)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialise_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&Verdict::NoChange).unwrap(),
            "\"no_change\""
        );
        assert_eq!(
            serde_json::from_str::<Verdict>("\"inconclusive\"").unwrap(),
            Verdict::Inconclusive
        );
        assert_eq!(Verdict::Inconclusive.text(), "inconclusive");
    }
}
