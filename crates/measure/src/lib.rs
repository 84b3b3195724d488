//! Stage measure: host checks, the per-trial driver child, calibration and planning,
//! campaigns with resumable phases, sharding and publication of the evidence.

#![forbid(unsafe_code)]

pub mod driver;
pub mod error;
pub mod host;
pub mod plan;
pub mod systems;

pub use error::MeasureError;
pub mod campaign;
pub mod runner;
pub mod shard;

pub use regex::{Regex, escape as regex_escape};
