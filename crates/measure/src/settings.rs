//! What measuring one unit (instance × operation) needs to know of the campaign around it.

use std::path::PathBuf;
use std::time::Duration;

use pqperf_model::Planning;

use crate::runner::DriverExe;

/// What measuring one unit (instance × operation) needs to know of the campaign.
#[derive(Debug, Clone)]
pub struct UnitSettings {
    /// Run directory (`calibrate/`, `records/` below it).
    pub run_dir: PathBuf,
    /// Benchmark CPU.
    pub cpu: usize,
    /// Per-call samples in the driver.
    pub samples: bool,
    /// Stack bytes painted by the driver's memory pass.
    pub stack_region: u64,
    /// The driver executable.
    pub driver: DriverExe,
    /// Hard timeout of a calibration run.
    pub calibration_timeout: Duration,
    /// Planning constants.
    pub planning: Planning,
    /// `--target-ci`: the relative half-width (0.01 = ±1 %) the short-trial protocol runs to
    /// (`crate::decide`); `None` is the reference protocol.
    pub target_ci: Option<f64>,
    /// `--independent-streams`: the reference protocol gives every driver process its own
    /// input stream too (as `--target-ci` always does) instead of the reference's fixed seed,
    /// so that its processes are independent samples of a variable-time operation; off by
    /// default (parity with the reference harness's figures).
    pub independent_streams: bool,
    /// The secret key pqperf's own protocol derives its processes' stream seeds from
    /// (`pqperf_model::stream::keyed_process_seed`, issue 36).
    pub stream_key: [u8; pqperf_model::stream::KEY_BYTES],
}
