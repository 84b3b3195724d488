//! Stage measure: host checks, the per-trial driver child and its runner, calibration of one
//! unit, planning, and measuring one planned operation into its record. The campaign around
//! it (phases, selection, run directory, publication) is `pqperf-campaign`.

#![forbid(unsafe_code)]

pub mod budget;
pub mod calibrate;
pub mod decide;
pub mod error;
pub mod host;
pub mod instance;
pub mod outcheck;
pub mod output;
pub mod plan;
pub mod record;
pub mod relay;
pub mod runner;
pub mod settings;
pub mod verify;

/// The timing child's library part (argv, preparation), from `pqperf-driver`.
pub use pqperf_driver as driver;

pub use error::MeasureError;
pub use instance::Instance;
pub use plan::{Plan, Planning};
pub use regex::Regex;
pub use runner::DriverExe;
pub use settings::UnitSettings;
