//! Hash/DRNG profile record (`profile/<id>/<label>__<op>.json`; evidence-formats.md §5,
//! method.md §10).

use indexmap::IndexMap;
use serde_json::Value;

use crate::evidence_struct;
use crate::fields::Fields;

evidence_struct! {
    /// Time share of the ICCS helpers in one operation of one instance.
    pub struct Profile {
        /// Schema (2).
        pub schema: u64,
        /// Candidate id.
        pub candidate: String,
        /// Harness label.
        pub label: String,
        /// Operation profiled.
        pub operation: String,
        /// Message bytes (0).
        pub input_bytes: u64,
        /// `complete` or a failure status.
        pub status: String,
        /// argv of the profiler run.
        pub command: Vec<String>,
        /// Captured stderr.
        pub stderr: String,
        /// Profiler meta (strings: `tick_source`, `tick_hz`, …).
        pub meta: Fields,
        /// Totals over the profiled operations.
        pub total: Option<ProfileTotal>,
        /// One row per (fn, in_bits, out_bits) bucket, in order of first occurrence.
        pub calls: Vec<ProfileCall>,
        /// fn → Σ ticks(fn) ÷ total.ticks, in order of first occurrence in `calls`.
        pub share: IndexMap<String, f64>,
        /// Σ share of the non-`drng` fns; an integer `0` when no hash fn was called, so kept
        /// as a JSON number (see [`Profile::hash_share_f64`]).
        pub hash_share: Value,
    }
}

evidence_struct! {
    /// Totals of a profile.
    pub struct ProfileTotal {
        /// Number of profiled calls of the operation.
        pub operations: u64,
        /// Total ticks of those calls.
        pub ticks: u64,
    }
}

evidence_struct! {
    /// One call-shape bucket of a profile.
    pub struct ProfileCall {
        /// `drng`, `pseudoXOF`, `pseudohash`, `sm3hash`.
        #[serde(rename = "fn")]
        pub func: String,
        /// Input bits.
        pub in_bits: u64,
        /// Output bits.
        pub out_bits: u64,
        /// Calls over all profiled operations.
        pub calls: u64,
        /// Ticks spent in those calls.
        pub ticks: u64,
    }
}

impl Profile {
    /// `hash_share` as a float (0.0 when it is the integer 0 or not a number).
    pub fn hash_share_f64(&self) -> f64 {
        self.hash_share.as_f64().unwrap_or(0.0)
    }

    /// `share[fn]`, 0.0 when absent.
    pub fn share_of(&self, func: &str) -> f64 {
        self.share.get(func).copied().unwrap_or(0.0)
    }

    /// Recompute `share` and `hash_share` from `calls` and `total` as the reference does:
    /// share(fn) = Σ ticks(fn) / total.ticks (fns in order of first occurrence), hash_share =
    /// Python `sum()` of the non-drng shares (an integer 0 when there is none).
    /// `None` without a total or with zero total ticks.
    pub fn recompute_shares(&self) -> Option<(IndexMap<String, f64>, Value)> {
        let total = self.total.as_ref()?;
        if total.ticks == 0 {
            return None;
        }
        let mut ticks: IndexMap<&str, u64> = IndexMap::new();
        for c in &self.calls {
            *ticks.entry(c.func.as_str()).or_insert(0) += c.ticks;
        }
        let share: IndexMap<String, f64> = ticks
            .iter()
            .map(|(f, t)| {
                (
                    f.to_string(),
                    crate::pynum::int_div(*t as u128, total.ticks as u128),
                )
            })
            .collect();
        let hash: Vec<f64> = share
            .iter()
            .filter(|(f, _)| f.as_str() != "drng")
            .map(|(_, s)| *s)
            .collect();
        let hash_share = if hash.is_empty() {
            Value::from(0)
        } else {
            Value::from(crate::pynum::py_sum(&hash))
        };
        Some((share, hash_share))
    }
}
