//! `pqperf compare A B`: analysis of two campaigns (datasets or run directories), kept apart
//! from its rendering (criterion.rs style).
//!
//! * [`load`] reads one side's records ([`Side`]).
//! * [`compare`] pairs the records per (candidate, instance, operation) — through an optional
//!   instance mapping — and computes for each pair the ratio B/A of the robust estimates
//!   (`pqperf.robust`) with an interval that knows the between-run noise (the widest of the
//!   per-call bootstrap and the between-process interval, widened by a recorded A–A noise
//!   floor; [`analysis`]) and a verdict ([`Verdict`], rules in [`verdict`]):
//!   `faster`/`slower`, `no change` (interval inside the ±threshold band), or `inconclusive`
//!   with the reason (also when the canary says the machine itself differed more than the
//!   change). It refuses
//!   emulated data and mixed ICCS providers unless forced, lists instances present on one
//!   side only and reports the spread it found ([`Spread`]; the A–A noise floor when both
//!   sides measured the same library files).
//! * [`record_noise_floor`] writes an A–A spread into side B's campaign.json
//!   (`pqperf.noise_floor`), which the method page states.
//! * [`rank`]: the Hodges–Lehmann shift and Mann–Whitney interval of two sides' per-process
//!   estimates (the between-process view when both sides ran many processes).
//! * [`streams`]: the paired view of a variable-time operation, two runs' calls paired by
//!   input stream and call index (the same inputs, the same rejection rounds), which
//!   [`compare`] judges by when both runs recorded their streams.
//! * [`paired`]: the seeded schedule and the paired statistics of an interleaved A/B
//!   measurement (`pqperf ab`, which `pqperf_campaign::ab` runs on the measuring side).
//!
//! This crate reads records through `pqperf-model` only: it measures nothing.
//! * [`render`] turns a [`Comparison`] into Markdown; JSON is its serde form.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod counts;
pub mod load;
pub mod paired;
pub mod rank;
pub mod render;
pub mod streams;
pub mod verdict;

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
