//! The options of `pqperf campaign` and `pqperf demo`, parsed once: clap fills
//! [`CampaignCommon`] (the command line as typed), [`CampaignCommon::options`] turns it into
//! the one checked type [`CampaignOptions`] (every value checked once, errors naming the
//! option), which the phases read and the parallel launcher hands its shard children as a
//! file ([`child_options`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_campaign::{self as campaign, CampaignOptions, TargetCi};
use pqperf_model::select::Selection;

use super::{Refused, refuse};

/// `--cpu N|auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuChoice {
    /// This CPU.
    Fixed(usize),
    /// A free CPU of this process's allowed set.
    Auto,
}

/// Parses `--cpu`: a CPU number or `auto`.
fn parse_cpu(s: &str) -> Result<CpuChoice, String> {
    if s == "auto" {
        return Ok(CpuChoice::Auto);
    }
    s.parse()
        .map(CpuChoice::Fixed)
        .map_err(|_| format!("{s:?}: a CPU number or `auto`"))
}

/// Parses a number of seconds: finite and above 0 (`--trial-target`, `--op-budget`,
/// `--calibration-timeout`; clap names the option in its error).
pub(crate) fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?}: a number of seconds above 0")),
    }
}

/// `--target-ci PCT|off`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetCiArg {
    /// The reference protocol.
    Off,
    /// This half-width (checked by [`TargetCi::from_percent`]).
    Pct(TargetCi),
}

/// Parses `--target-ci`: a percentage in (0, 100] or `off`.
pub(crate) fn parse_target_ci(s: &str) -> Result<TargetCiArg, String> {
    if s == "off" {
        return Ok(TargetCiArg::Off);
    }
    s.parse::<f64>()
        .map_err(|e| e.to_string())
        .and_then(TargetCi::from_percent)
        .map(TargetCiArg::Pct)
        .map_err(|_| format!("{s:?}: a percentage above 0 and at most 100, or `off`"))
}

/// The measuring protocol of a campaign or the demo, decided once: `--target-ci PCT` runs
/// to PCT, `--target-ci off` is the reference protocol; without it the reference protocol
/// when an option of that protocol was given (`reference_asked`: `--trial-target`,
/// `--op-budget`, `--no-samples`), else `--target-ci` at [`TargetCi::DEFAULT`]. The interval
/// comes from the per-call samples: without them (`samples` false) there is none to aim at.
pub(crate) fn protocol(
    target_ci: Option<TargetCiArg>,
    reference_asked: bool,
    samples: bool,
) -> Option<TargetCi> {
    let t = match target_ci {
        Some(TargetCiArg::Pct(t)) => Some(t),
        Some(TargetCiArg::Off) => None,
        None if reference_asked => None,
        None => Some(TargetCi::DEFAULT),
    };
    t.filter(|_| samples)
}

/// The refusal of `--adaptive`, a protocol pqperf no longer runs.
pub(crate) const ADAPTIVE_RETIRED: &str = "--adaptive is retired: `--target-ci PCT` (the default, ±1 %) adds short trials in fresh processes until the interval is that narrow; `--target-ci off` runs the reference protocol's planned trials";

/// Options shared by `campaign` and `demo`: the command line as typed (clap's half;
/// [`CampaignCommon::options`] checks it).
#[derive(clap::Args, Clone)]
pub struct CampaignCommon {
    /// Run directory (default: runs/default, as every command; it must exist: `pqperf
    /// import` creates it).
    #[arg(long)]
    pub(crate) run_dir: Option<PathBuf>,
    /// Benchmark CPU (default: the last CPU this process may use), or `auto`: a CPU of this
    /// process's allowed set (affinity mask / cgroup cpuset, e.g. a Slurm job's) that no other
    /// pqperf process leases. Measuring phases lease their CPU host-wide and wait while
    /// another process holds it.
    #[arg(long, value_name = "N|auto", value_parser = parse_cpu)]
    cpu: Option<CpuChoice>,
    /// Only instances whose <id>/<label> matches this regex (searched), as in every command.
    #[arg(long)]
    only: Option<String>,
    /// Skip instances whose cand/label matches (bare flag: the reference's slow instances).
    #[arg(long, num_args = 0..=1, default_missing_value = pqperf_model::select::DEFAULT_DEFER)]
    defer: Option<String>,
    /// Process only the deferred instances.
    #[arg(long)]
    deferred_only: bool,
    /// System id (must be registered in systems.csv).
    #[arg(long)]
    system: Option<String>,
    /// Register this machine in systems.csv with this description when it is not registered.
    #[arg(long)]
    register: Option<String>,
    /// The systems registry (default: systems.csv beside the run directory).
    #[arg(long)]
    systems: Option<PathBuf>,
    /// Only shard K of N (calibrate/measure/profile); `slurm`: K and N from the Slurm job
    /// array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN).
    #[arg(long, value_name = "K/N|slurm")]
    shard: Option<String>,
    /// Seconds of timed work aimed at per trial (default 1.0). Given, it selects the
    /// reference protocol unless `--target-ci` is given too.
    #[arg(long, value_parser = parse_seconds)]
    trial_target: Option<f64>,
    /// Seconds per operation above which fewer calls are timed (default 900). Given, it
    /// selects the reference protocol unless `--target-ci` is given too.
    #[arg(long, value_parser = parse_seconds)]
    op_budget: Option<f64>,
    /// Measure although host checks fail (records and pages name the problems).
    #[arg(long)]
    allow_unfixed_host: bool,
    /// Published datasets (performance/data) giving prior run times for sharding.
    #[arg(long)]
    prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run (one timed call), seconds: 15 minutes by default
    /// (the reference method's 6 h let a hanging candidate cost 6 h per operation).
    #[arg(long, value_parser = parse_seconds,
        default_value_t = pqperf_campaign::options::DEFAULT_CALIBRATION_TIMEOUT_S)]
    calibration_timeout: f64,
    /// Dataset root written by `publish` (default: <run-dir>/dataset).
    #[arg(long)]
    publish_to: Option<PathBuf>,
    /// Do not record per-call samples (no robust estimate, no CI).
    #[arg(long)]
    no_samples: bool,
    /// Stack bytes the driver's untimed memory pass paints below its calling frame (a deeper
    /// operation is reported as using at least this much).
    #[arg(long, default_value_t = pqperf_measure::driver::DEFAULT_STACK_REGION)]
    stack_region: u64,
    /// Retired (refused with exit 2): adaptive stopping after the reference trials. Use
    /// `--target-ci PCT` or `--target-ci off`.
    #[arg(long, hide = true)]
    adaptive: bool,
    /// Run each operation in short trials (length chosen from its calibration), one fresh
    /// pinned process each, until the robust 95 % interval's half-width is at most PCT % or
    /// the budget (what the reference protocol would spend on it) is spent; the reference
    /// fields come from the trials it ran and the record names the protocol
    /// (`pqperf.protocol`). Default 1 for campaigns and the demo; `off`, `--trial-target`,
    /// `--op-budget` or `--no-samples` select the reference protocol.
    #[arg(long, value_name = "PCT|off", value_parser = parse_target_ci)]
    target_ci: Option<TargetCiArg>,
    /// `campaign all` builds and times the ICCS helper baseline (candidate `iccs`) even when
    /// no selected candidate links the ICCS helpers (by default only then).
    #[arg(long)]
    iccs_baseline: bool,
    /// Clock-probe attempts of the host check (5 s apart).
    #[arg(long, default_value_t = 3)]
    probe_attempts: usize,
    /// Do the phase's units again although their evidence exists (calibrate, measure).
    #[arg(long)]
    redo: bool,
    /// Keep evidence whose `library_sha256` is not the built library's (by default it is
    /// stale and done again); the log and campaign.json (`pqperf.stale_kept`) say so.
    #[arg(long)]
    keep_stale: bool,
    /// Reuse an earlier run's stream key (64 hex characters: `key` in its campaign.json
    /// `pqperf.stream_keys`) so that this run's processes get the same input streams and
    /// `compare` can pair them call by call. Without it every run draws a fresh secret key,
    /// so no candidate can know its inputs before their window opens.
    #[arg(long, value_name = "HEX", value_parser = parse_stream_key)]
    stream_key: Option<[u8; pqperf_model::stream::KEY_BYTES]>,
    /// Reference protocol: give every driver process its own input stream (its seed from the
    /// run's stream key, as `--target-ci` does) instead of the reference's fixed seed, so
    /// that the processes are independent samples of a variable-time operation and its
    /// interval is the spread between streams. Its figures are then not those of the
    /// reference harness (which repeats one fixed set of calls). `--target-ci` always does.
    #[arg(long)]
    independent_streams: bool,
}

/// `--stream-key HEX` (campaign, ab).
pub(crate) fn parse_stream_key(s: &str) -> Result<[u8; pqperf_model::stream::KEY_BYTES], String> {
    pqperf_model::stream::parse_key_hex(s)
}

/// A checking error of the campaign side as a refusal (exit 2) naming what it refused.
fn refused(e: campaign::CampaignError) -> anyhow::Error {
    match e {
        campaign::CampaignError::Msg(m) => anyhow::Error::new(Refused(m)),
        e => e.into(),
    }
}

impl CampaignCommon {
    /// The checked options of this command line (`env` resolves `--shard slurm`); a value
    /// that does not check is refused, named with its option.
    pub fn options(&self, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<CampaignOptions> {
        if self.adaptive {
            return refuse(ADAPTIVE_RETIRED);
        }
        let run = self
            .run_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(pqperf_build::DEFAULT_RUN_DIR));
        let mut o = CampaignOptions::new(&run)?;
        self.apply_cpu(&mut o);
        o.select = Selection::only(self.only.as_deref())
            .and_then(|s| s.with_defer(self.defer.as_deref(), self.deferred_only))
            .or_else(|e| refuse(e.to_string()))?;
        o.system = self.system.clone();
        o.register = self.register.clone();
        if let Some(s) = &self.systems {
            o.systems_csv = s.clone();
        }
        o.shard = self.shard(env)?;
        o.planning = pqperf_measure::plan::planning(
            self.trial_target.unwrap_or(1.0),
            self.op_budget.unwrap_or(900.0),
        );
        o.allow_unfixed_host = self.allow_unfixed_host;
        o.prior_data = self.prior_data.clone();
        o.calibration_timeout = Duration::from_secs_f64(self.calibration_timeout.max(1.0));
        o.publish_to = self.publish_to.clone();
        o.samples = !self.no_samples;
        o.stack_region = self.stack_region;
        o.target_ci = protocol(
            self.target_ci,
            self.trial_target.is_some() || self.op_budget.is_some() || self.no_samples,
            o.samples,
        );
        o.probe_attempts = self.probe_attempts;
        o.iccs_baseline = self.iccs_baseline;
        o.redo = self.redo;
        o.keep_stale = self.keep_stale;
        o.stream_key = self.stream_key;
        o.independent_streams = self.independent_streams;
        Ok(o)
    }

    /// `--cpu` onto `o` (nothing when not given).
    fn apply_cpu(&self, o: &mut CampaignOptions) {
        match self.cpu {
            Some(CpuChoice::Fixed(c)) => (o.cpu, o.cpu_auto) = (c, false),
            Some(CpuChoice::Auto) => o.cpu_auto = true,
            None => {}
        }
    }

    /// `--shard K/N|slurm`, checked.
    fn shard(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<(usize, usize)>> {
        self.shard
            .as_deref()
            .map(|s| campaign::parse_shard(s, env).or_else(refuse))
            .transpose()
    }
}

/// A shard child's options: the launcher's, read from `file` (checked again on reading),
/// with the child's own `--run-dir`, `--cpu`, `--shard` and `--deferred-only` over them; the
/// launcher's `--defer` pattern stays, the child's bare `--defer` applies when it gave none.
pub fn child_options(
    own: &CampaignCommon,
    file: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<CampaignOptions> {
    if own.adaptive {
        return refuse(ADAPTIVE_RETIRED);
    }
    let mut o = CampaignOptions::read(file).map_err(refused)?;
    if let Some(run) = &own.run_dir {
        o.run_dir = run.clone();
    }
    own.apply_cpu(&mut o);
    if let Some(shard) = own.shard(env)? {
        o.shard = Some(shard);
    }
    let defer = o
        .select
        .defer_pattern()
        .map(String::from)
        .or_else(|| own.defer.clone());
    let deferred_only = o.select.deferred_only() || own.deferred_only;
    o.select = o
        .select
        .clone()
        .with_defer(defer.as_deref(), deferred_only)
        .or_else(|e| refuse(e.to_string()))?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CampaignCommon,
    }

    fn parse(args: &[&str]) -> Result<CampaignCommon, clap::Error> {
        T::try_parse_from(std::iter::once("campaign").chain(args.iter().copied())).map(|t| t.a)
    }

    /// Each value is checked once, where it is parsed, and the error names its option.
    #[test]
    fn every_value_is_checked_once_and_named() {
        for (args, names) in [
            (&["--trial-target", "0"][..], "--trial-target"),
            (&["--op-budget", "inf"], "--op-budget"),
            (&["--calibration-timeout", "nan"], "--calibration-timeout"),
            (&["--target-ci", "0"], "--target-ci"),
            (&["--cpu", "x"], "--cpu"),
        ] {
            let e = parse(args).err().expect("refused").to_string();
            assert!(e.contains(names), "{args:?}: {e}");
        }
        let none = |_: &str| None;
        for (args, names) in [
            (&["--only", "("][..], "--only \"(\""),
            (&["--defer", "("], "--defer \"(\""),
            (&["--shard", "4/3"], "--shard 4/3"),
            (&["--shard", "slurm"], "--shard slurm"),
            (&["--adaptive"], "--adaptive is retired"),
        ] {
            let e = parse(args).unwrap().options(none).unwrap_err();
            assert!(e.downcast_ref::<Refused>().is_some(), "{args:?}: {e}");
            assert!(e.to_string().contains(names), "{args:?}: {e}");
        }
    }

    /// One rule for the protocol: `--target-ci` by default, the reference protocol when one
    /// of its options is given or the samples are off.
    #[test]
    fn one_rule_decides_the_protocol() {
        let p = |args: &[&str]| {
            parse(args)
                .unwrap()
                .options(|_| None)
                .unwrap()
                .target_ci
                .map(TargetCi::percent)
        };
        assert_eq!(p(&[]), Some(1.0));
        assert_eq!(p(&["--target-ci", "2.5"]), Some(2.5));
        assert_eq!(p(&["--target-ci", "off"]), None);
        assert_eq!(p(&["--trial-target", "0.1"]), None);
        assert_eq!(p(&["--op-budget", "7"]), None);
        assert_eq!(p(&["--trial-target", "0.1", "--target-ci", "3"]), Some(3.0));
        assert_eq!(p(&["--no-samples", "--target-ci", "3"]), None);
    }
}
