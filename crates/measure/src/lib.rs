//! Stage measure: host checks, the per-trial driver child and its runner, calibration of one
//! unit, planning, and measuring one planned operation into its record. The campaign around
//! it (phases, selection, run directory, publication) is `pqperf-campaign`.

pub mod calibrate;
pub mod driver;
pub mod error;
pub mod host;
pub mod instance;
pub mod plan;
pub mod record;
pub mod runner;

use std::path::PathBuf;
use std::time::Duration;

pub use error::MeasureError;
pub use instance::Instance;
pub use plan::{Plan, Planning};
pub use regex::{Regex, escape as regex_escape};
pub use runner::DriverExe;

/// What measuring one unit (instance × operation) needs to know of the campaign.
#[derive(Debug, Clone)]
pub struct UnitSettings {
    /// Run directory (`calibrate/`, `records/` below it).
    pub run_dir: PathBuf,
    /// Benchmark CPU.
    pub cpu: usize,
    /// Per-call samples in the driver.
    pub samples: bool,
    /// The driver executable.
    pub driver: DriverExe,
    /// Hard timeout of a calibration run.
    pub calibration_timeout: Duration,
    /// Planning constants.
    pub planning: Planning,
}
