//! Options of a campaign invocation as plain data (the CLI fills them from its arguments),
//! with the reference defaults.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_measure::plan::{self, Planning};
use pqperf_measure::{DriverExe, Regex, UnitSettings};

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Default `--defer` regex of the reference (very slow NGCC instances).
pub const DEFAULT_DEFER: &str = r"^(sign-30/TRINE-512-|sign-32/UVW-512$)";

/// Options of a campaign invocation.
#[derive(Debug, Clone)]
pub struct CampaignOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Benchmark CPU (the leased one once a measuring phase runs).
    pub cpu: usize,
    /// `--cpu auto`: measuring phases lease a free CPU of the allowed set instead of `cpu`.
    pub cpu_auto: bool,
    /// `--only` regex (search over candidate ids).
    pub only: Option<Regex>,
    /// `--defer` regex (None = off).
    pub defer: Option<Regex>,
    /// Process only deferred instances.
    pub deferred_only: bool,
    /// `--system`.
    pub system: Option<String>,
    /// `--shard K/N`.
    pub shard: Option<(usize, usize)>,
    /// Planning constants.
    pub planning: Planning,
    /// Measure although the host has problems.
    pub allow_unfixed_host: bool,
    /// Per-call samples in the driver.
    pub samples: bool,
    /// Stack bytes painted by the driver's memory pass.
    pub stack_region: u64,
    /// Adaptive stopping (`--adaptive`): trials are added until the CI half-width is ≤ 1 %
    /// or the operation budget is spent.
    pub adaptive: bool,
    /// The driver executable.
    pub driver: DriverExe,
    /// The systems registry (`systems.csv`).
    pub systems_csv: PathBuf,
    /// Register this machine with this description if it is not registered.
    pub register: Option<String>,
    /// Published datasets (`performance/data`) whose records give prior costs for sharding.
    pub prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run (reference 6 h).
    pub calibration_timeout: Duration,
    /// Probe attempts of the host check (reference 3; 5 s apart).
    pub probe_attempts: usize,
    /// Destination root of `publish` (dataset root: `performance/data/<ID>/…`).
    pub publish_to: Option<PathBuf>,
    /// Directory of the profile and hash-cost locks (default: the run dir's parent; the CPU
    /// leases are host-wide, see [`crate::lease`]).
    pub lock_dir: Option<PathBuf>,
    /// Echo log lines to stdout.
    pub echo: bool,
}

impl CampaignOptions {
    /// Reference defaults for `run_dir`.
    pub fn new(run_dir: &Path) -> Res<Self> {
        let run_dir = run_dir.to_path_buf();
        Ok(CampaignOptions {
            driver: DriverExe::current(&run_dir)?,
            systems_csv: run_dir
                .parent()
                .unwrap_or(Path::new("."))
                .join("systems.csv"),
            run_dir,
            cpu: default_cpu(),
            cpu_auto: false,
            only: None,
            defer: None,
            deferred_only: false,
            system: None,
            shard: None,
            planning: plan::reference_planning(),
            allow_unfixed_host: false,
            samples: true,
            stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
            adaptive: false,
            register: None,
            prior_data: None,
            calibration_timeout: Duration::from_secs(6 * 3600),
            probe_attempts: 3,
            publish_to: None,
            lock_dir: None,
            echo: true,
        })
    }

    /// What measuring one unit needs of these options.
    pub fn unit(&self) -> UnitSettings {
        UnitSettings {
            run_dir: self.run_dir.clone(),
            cpu: self.cpu,
            samples: self.samples,
            stack_region: self.stack_region,
            driver: self.driver.clone(),
            calibration_timeout: self.calibration_timeout,
            planning: self.planning.clone(),
            adaptive: self.adaptive,
        }
    }

    /// Folder of the profile and hash-cost lock files (`lock_dir`, else the run directory's
    /// parent).
    pub fn lock_dir(&self) -> PathBuf {
        self.lock_dir.clone().unwrap_or_else(|| {
            self.run_dir
                .parent()
                .unwrap_or(Path::new("."))
                .to_path_buf()
        })
    }
}

/// The highest CPU this process may use (reference default is 2; on a small machine the last
/// CPU keeps CPU 0 for the system).
pub fn default_cpu() -> usize {
    pqperf_ffi::affinity::get_affinity()
        .ok()
        .and_then(|v| v.last().copied())
        .unwrap_or(0)
}
