//! `pqperf compare A B`: analysis of two campaigns (datasets or run directories), kept apart
//! from its rendering (criterion.rs style).
//!
//! * [`load`] reads one side's records ([`Side`]).
//! * [`compare`] pairs the records per (candidate, instance, operation) — through an optional
//!   instance mapping — and computes for each pair the ratio B/A of the robust estimates
//!   (`pqperf.robust`) with a percentile-bootstrap interval of the ratio (replicate *i* of B
//!   over replicate *i* of A, each side's two-level bootstrap drawn from its stored samples)
//!   and a verdict ([`Verdict`]): `faster`/`slower` when the interval excludes 1.0 and the
//!   change is at least the threshold (default 2 %), otherwise `no change`. It refuses
//!   emulated data and mixed ICCS providers unless forced, lists instances present on one
//!   side only and reports the spread it found ([`Spread`]; the A–A noise floor when both
//!   sides measured the same library files).
//! * [`record_noise_floor`] writes an A–A spread into side B's campaign.json
//!   (`pqperf.noise_floor`), which the method page states.
//! * [`render`] turns a [`Comparison`] into Markdown; JSON is its serde form.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod load;
pub mod render;

pub use analysis::{Comparison, Options, Row, Spread, Verdict, compare, noise_floor_json};
pub use load::{Side, load, record_noise_floor};

/// Errors of `pqperf compare`.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A side could not be read.
    #[error("{0}")]
    Load(String),
    /// The comparison is refused (emulated data, mixed ICCS providers, bad mapping).
    #[error("{0}")]
    Refused(String),
}
