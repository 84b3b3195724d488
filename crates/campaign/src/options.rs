//! Options of a campaign invocation as plain data (the CLI fills them from its arguments),
//! with the reference defaults.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_measure::plan::{self, Planning};
use pqperf_measure::{DriverExe, UnitSettings};
use pqperf_model::select::Selection;

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Default hard timeout of a calibration run, seconds (`--calibration-timeout`): 15 minutes.
/// A calibration times one call; a call longer than the reference operation budget (900 s)
/// cannot be measured within that budget anyway, and a candidate that hangs in calibration
/// costs the campaign at most this per operation (the reference method's 6 h, issue 36).
pub const DEFAULT_CALIBRATION_TIMEOUT_S: f64 = 900.0;

/// `--target-ci PCT`: the half-width of the robust 95 % interval a campaign measures each
/// operation to, checked once ([`TargetCi::from_percent`]) and converted once
/// ([`TargetCi::fraction`]); the CLI's parser, the shard children's options file and the
/// demo all go through it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetCi {
    pct: f64,
}

impl TargetCi {
    /// The target of pqperf's own campaigns and the demo when none is given (±1 %).
    pub const DEFAULT: TargetCi = TargetCi { pct: 1.0 };

    /// The target `pct` percent; refused unless above 0 and at most 100.
    pub fn from_percent(pct: f64) -> Result<TargetCi, String> {
        if pct.is_finite() && pct > 0.0 && pct <= 100.0 {
            Ok(TargetCi { pct })
        } else {
            Err("a percentage above 0 and at most 100".into())
        }
    }

    /// The half-width in percent, as given (`1` = ±1 %).
    pub fn percent(self) -> f64 {
        self.pct
    }

    /// The half-width as a fraction (`0.01` = ±1 %), as the measuring side uses it.
    pub fn fraction(self) -> f64 {
        self.pct / 100.0
    }
}

/// Options of a campaign invocation.
#[derive(Debug, Clone)]
pub struct CampaignOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Benchmark CPU (the leased one once a measuring phase runs).
    pub cpu: usize,
    /// `--cpu auto`: measuring phases lease a free CPU of the allowed set instead of `cpu`.
    pub cpu_auto: bool,
    /// The instances the phases work on: `--only`, `--defer`, `--deferred-only`
    /// (`--shard` is applied on top, [`crate::select::selected`]).
    pub select: Selection,
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
    /// `--target-ci PCT`: short trials in fresh processes until the robust interval is that
    /// narrow or the budget is spent (`pqperf_measure::decide`); `None` (the default here) is
    /// the reference protocol.
    pub target_ci: Option<TargetCi>,
    /// `--iccs-baseline`: `campaign all` times the ICCS helper baseline even when no selected
    /// candidate links the helpers.
    pub iccs_baseline: bool,
    /// The driver executable.
    pub driver: DriverExe,
    /// The systems registry (`systems.csv`).
    pub systems_csv: PathBuf,
    /// Register this machine with this description if it is not registered.
    pub register: Option<String>,
    /// Published datasets (`performance/data`) whose records give prior costs for sharding.
    pub prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run ([`DEFAULT_CALIBRATION_TIMEOUT_S`]; the reference
    /// method's 6 h let one hanging candidate cost a campaign 6 h per operation).
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
    /// `--redo`: do the phase's units again although their evidence exists and is current.
    pub redo: bool,
    /// `--keep-stale`: keep evidence whose library is no longer the built one (said in the
    /// log and in campaign.json `pqperf.stale_kept`) instead of doing it again.
    pub keep_stale: bool,
    /// The command line as the evidence shows it (the CLI's flags included, paths by their
    /// file name), noted in campaign.json `pqperf.commands` so that the published "commands
    /// run" can be repeated; `None`: `pqperf campaign <phase>`.
    pub command: Option<String>,
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
            select: Selection::all(),
            system: None,
            shard: None,
            planning: plan::reference_planning(),
            allow_unfixed_host: false,
            samples: true,
            stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
            adaptive: false,
            target_ci: None,
            iccs_baseline: false,
            register: None,
            prior_data: None,
            calibration_timeout: Duration::from_secs_f64(DEFAULT_CALIBRATION_TIMEOUT_S),
            probe_attempts: 3,
            publish_to: None,
            lock_dir: None,
            echo: true,
            redo: false,
            keep_stale: false,
            command: None,
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
            target_ci: self.target_ci.map(TargetCi::fraction),
        }
    }

    /// The layout of the run directory (`run_dir`).
    pub fn layout(&self) -> pqperf_model::layout::RunLayout {
        pqperf_model::layout::RunLayout::new(&self.run_dir)
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

/// A campaign invocation's options as the user gave them, as data: what the CLI parses, what
/// the parallel launcher hands its child processes (a JSON file, so no option is lost in
/// re-typed flags), and what [`OptionsData::to_options`] turns into [`CampaignOptions`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsData {
    /// Run directory (`None`: the default, `runs/default`).
    pub run_dir: Option<PathBuf>,
    /// Benchmark CPU (`None`: [`default_cpu`]).
    pub cpu: Option<usize>,
    /// `--cpu auto`: lease a free CPU of the allowed set.
    #[serde(default)]
    pub cpu_auto: bool,
    /// `--only` pattern ([`Selection`]).
    pub only: Option<String>,
    /// `--defer` pattern.
    pub defer: Option<String>,
    /// `--deferred-only`.
    pub deferred_only: bool,
    /// `--system`.
    pub system: Option<String>,
    /// `--register` description.
    pub register: Option<String>,
    /// `--systems` registry.
    pub systems: Option<PathBuf>,
    /// `--shard K/N|slurm`.
    pub shard: Option<String>,
    /// `--trial-target` seconds.
    pub trial_target: f64,
    /// `--op-budget` seconds.
    pub op_budget: f64,
    /// `--allow-unfixed-host`.
    pub allow_unfixed_host: bool,
    /// `--prior-data`.
    pub prior_data: Option<PathBuf>,
    /// `--calibration-timeout` seconds.
    pub calibration_timeout: f64,
    /// `--publish-to`.
    pub publish_to: Option<PathBuf>,
    /// `--no-samples`.
    pub no_samples: bool,
    /// `--stack-region` bytes.
    pub stack_region: u64,
    /// `--adaptive`.
    pub adaptive: bool,
    /// `--target-ci` percent (`None`: the reference protocol).
    #[serde(default)]
    pub target_ci: Option<f64>,
    /// `--iccs-baseline`.
    #[serde(default)]
    pub iccs_baseline: bool,
    /// `--probe-attempts`.
    pub probe_attempts: usize,
    /// `--redo`.
    pub redo: bool,
    /// `--keep-stale`.
    pub keep_stale: bool,
    /// The containment of candidate code (`--no-sandbox`, `--mem-limit`) the parallel
    /// launcher ran under, which its children take from here; `None`: a child's own flags.
    #[serde(default)]
    pub containment: Option<ContainmentData>,
}

/// The process-wide containment policy (`pqperf_ffi::untrusted::Policy`) as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentData {
    /// Namespaces, Landlock and resource limits on.
    pub sandbox: bool,
    /// RLIMIT_AS bytes (`None`: unlimited).
    pub address_space: Option<u64>,
}

impl ContainmentData {
    /// The policy in force in this process.
    pub fn in_force() -> ContainmentData {
        let p = pqperf_ffi::untrusted::policy();
        ContainmentData {
            sandbox: p.sandbox,
            address_space: p.limits.address_space,
        }
    }

    /// Makes this the process-wide policy (before any candidate code runs); the other limits
    /// keep their defaults, as on the command line.
    pub fn apply(self) {
        pqperf_ffi::untrusted::set_policy(pqperf_ffi::untrusted::Policy {
            sandbox: self.sandbox,
            limits: pqperf_ffi::sandbox::Limits {
                address_space: self.address_space,
                ..Default::default()
            },
        });
    }
}

impl OptionsData {
    /// The options of the campaign, checked (patterns compiled, shard parsed with `env`).
    pub fn to_options(&self, env: impl Fn(&str) -> Option<String>) -> Res<CampaignOptions> {
        let run = self
            .run_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(pqperf_build::DEFAULT_RUN_DIR));
        let mut o = CampaignOptions::new(&run)?;
        if let Some(c) = self.cpu {
            o.cpu = c;
        }
        o.cpu_auto = self.cpu_auto;
        o.select = Selection::only(self.only.as_deref())
            .and_then(|s| s.with_defer(self.defer.as_deref(), self.deferred_only))
            .map_err(|e| CampaignError::msg(e.to_string()))?;
        o.system = self.system.clone();
        o.register = self.register.clone();
        if let Some(s) = &self.systems {
            o.systems_csv = s.clone();
        }
        if let Some(s) = &self.shard {
            o.shard = Some(crate::parse_shard(s, env).map_err(CampaignError::msg)?);
        }
        o.planning = plan::planning(self.trial_target, self.op_budget);
        o.allow_unfixed_host = self.allow_unfixed_host;
        o.prior_data = self.prior_data.clone();
        o.calibration_timeout = Duration::from_secs_f64(self.calibration_timeout.max(1.0));
        o.publish_to = self.publish_to.clone();
        o.samples = !self.no_samples;
        o.stack_region = self.stack_region;
        o.adaptive = self.adaptive && !self.no_samples;
        let target = self
            .target_ci
            .map(|pct| {
                TargetCi::from_percent(pct)
                    .map_err(|why| CampaignError::msg(format!("--target-ci {pct}: {why}")))
            })
            .transpose()?;
        // The interval comes from the per-call samples: without them there is none to aim at.
        o.target_ci = target.filter(|_| !self.no_samples);
        o.probe_attempts = self.probe_attempts;
        o.iccs_baseline = self.iccs_baseline;
        o.redo = self.redo;
        o.keep_stale = self.keep_stale;
        Ok(o)
    }

    /// Write these options to `path` (JSON, atomically).
    pub fn write(&self, path: &Path) -> Res<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| CampaignError::msg(format!("{}: {e}", path.display())))?;
        pqperf_model::fsutil::write_atomic(path, text.as_bytes())?;
        Ok(())
    }

    /// Read options written by [`OptionsData::write`]; errors name the file.
    pub fn read(path: &Path) -> Res<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| pqperf_model::fsutil::io_err("reading", path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| CampaignError::msg(format!("{}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--target-ci` is checked and converted in one place: the shard children's options file
    /// gets the same refusal as the command line, and the fraction is the percent / 100.
    #[test]
    fn target_ci_is_checked_and_converted_once() {
        assert_eq!(TargetCi::from_percent(1.0).unwrap().fraction(), 0.01);
        assert_eq!(TargetCi::DEFAULT.percent(), 1.0);
        for bad in [0.0, -1.0, 100.5, f64::NAN, f64::INFINITY] {
            assert!(TargetCi::from_percent(bad).is_err(), "{bad}");
        }
        let d = tempfile::tempdir().unwrap();
        let mut data: OptionsData = serde_json::from_value(serde_json::json!({
            "run_dir": d.path(), "cpu": null, "only": null, "defer": null,
            "deferred_only": false, "system": null, "register": null, "systems": null,
            "shard": null, "trial_target": 1.0, "op_budget": 900.0,
            "allow_unfixed_host": false, "prior_data": null, "calibration_timeout": 900.0,
            "publish_to": null, "no_samples": false, "stack_region": 4096,
            "adaptive": false, "target_ci": 2.5, "probe_attempts": 3,
            "redo": false, "keep_stale": false
        }))
        .unwrap();
        let o = data.to_options(|_| None).unwrap();
        assert_eq!(o.unit().target_ci, Some(0.025));
        data.target_ci = Some(0.0);
        let e = data.to_options(|_| None).unwrap_err().to_string();
        assert!(
            e.contains("--target-ci 0: a percentage above 0 and at most 100"),
            "{e}"
        );
    }
}
