//! `pqperf check` and `pqperf campaign`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use pqperf_campaign::shard;
use pqperf_campaign::{self as campaign, CampaignOptions, Phase};
use pqperf_measure::Regex;
use pqperf_measure::host::{self, CheckOptions};

use super::code;

/// `pqperf check`: host problems (method §3.1) and the environment snapshot (§3.2).
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Benchmark CPU (default: the last CPU this process may use).
    #[arg(long)]
    cpu: Option<usize>,
    /// Also print the environment snapshot as JSON.
    #[arg(long)]
    env: bool,
}

pub fn run_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let cpu = a.cpu.unwrap_or_else(campaign::default_cpu);
    let problems = host::host_problems(&CheckOptions::new(cpu));
    host::print_problems(&problems);
    let kind = host::counter_kind();
    let probe = host::clock_probe(cpu, 21, 50);
    let info = host::counter_info(kind, probe.as_ref());
    println!(
        "counter: {} at {} Hz{}",
        info["counter"].as_str().unwrap_or("?"),
        info["counter_hz"],
        if kind == pqperf_ffi::counters::CounterKind::Cycles {
            " (user-mode core cycles)"
        } else {
            " (reference ticks, not core cycles: no hardware PMU reachable)"
        }
    );
    if a.env {
        let env = host::environment(cpu, probe.as_ref());
        print!("{}", pqperf_model::pyjson::value_to_string(&env));
    }
    Ok(code(i32::from(!problems.is_empty())))
}

/// Options shared by `campaign` and `demo`.
#[derive(clap::Args, Clone)]
pub struct CampaignCommon {
    /// Run directory (default: runs/<hostname>-campaign-<UTC stamp>).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Benchmark CPU (default: the last CPU this process may use), or `auto`: a CPU of this
    /// process's allowed set (affinity mask / cgroup cpuset, e.g. a Slurm job's) that no other
    /// pqperf process leases. Measuring phases lease their CPU host-wide and wait while
    /// another process holds it.
    #[arg(long, value_name = "N|auto")]
    cpu: Option<String>,
    /// Regex searched in candidate ids.
    #[arg(long)]
    only: Option<String>,
    /// Skip instances whose cand/label matches (bare flag: the reference's slow instances).
    #[arg(long, num_args = 0..=1, default_missing_value = campaign::DEFAULT_DEFER)]
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
    /// Seconds of timed work aimed at per trial.
    #[arg(long, default_value_t = 1.0)]
    trial_target: f64,
    /// Seconds per operation above which fewer calls are timed.
    #[arg(long, default_value_t = 900.0)]
    op_budget: f64,
    /// Measure although host checks fail (records and pages name the problems).
    #[arg(long)]
    allow_unfixed_host: bool,
    /// Published datasets (performance/data) giving prior run times for sharding.
    #[arg(long)]
    prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run, seconds (reference: 6 h).
    #[arg(long, default_value_t = 21600.0)]
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
    /// Adaptive stopping: after the planned trials add trials until the robust estimate's
    /// 95 % CI half-width is at most 1 % or the operation budget is spent.
    #[arg(long)]
    adaptive: bool,
    /// Clock-probe attempts of the host check (5 s apart).
    #[arg(long, default_value_t = 3)]
    probe_attempts: usize,
}

impl CampaignCommon {
    fn options(&self) -> anyhow::Result<CampaignOptions> {
        let run = match &self.run_dir {
            Some(r) => r.clone(),
            None => {
                let host = pqperf_ffi::procinfo::uname().nodename;
                let stamp = campaign::utc_now()
                    .chars()
                    .filter(|c| c.is_ascii_digit() || *c == 'T')
                    .take(15)
                    .collect::<String>();
                PathBuf::from("runs").join(format!("{host}-campaign-{stamp}Z"))
            }
        };
        std::fs::create_dir_all(&run).with_context(|| format!("creating {}", run.display()))?;
        let mut o = CampaignOptions::new(&run)?;
        match self.cpu.as_deref() {
            None => {}
            Some("auto") => o.cpu_auto = true,
            Some(c) => {
                o.cpu = c
                    .parse()
                    .with_context(|| format!("--cpu {c:?}: a CPU number or `auto`"))?;
            }
        }
        let re = |s: &str| Regex::new(s).with_context(|| format!("bad regex {s:?}"));
        o.only = self.only.as_deref().map(re).transpose()?;
        o.defer = self.defer.as_deref().map(re).transpose()?;
        o.deferred_only = self.deferred_only;
        o.system = self.system.clone();
        o.register = self.register.clone();
        if let Some(s) = &self.systems {
            o.systems_csv = s.clone();
        }
        if let Some(s) = &self.shard {
            o.shard = Some(
                campaign::parse_shard(s, |k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?,
            );
        }
        o.planning = pqperf_measure::plan::planning(self.trial_target, self.op_budget);
        o.allow_unfixed_host = self.allow_unfixed_host;
        o.prior_data = self.prior_data.clone();
        o.calibration_timeout = Duration::from_secs_f64(self.calibration_timeout.max(1.0));
        o.publish_to = self.publish_to.clone();
        o.samples = !self.no_samples;
        o.stack_region = self.stack_region;
        o.adaptive = self.adaptive && !self.no_samples;
        o.probe_attempts = self.probe_attempts;
        Ok(o)
    }
}

/// `pqperf campaign <phase>`.
#[derive(clap::Args)]
pub struct CampaignArgs {
    /// check, build, kat, baseline, calibrate, measure, profile, hashcost, ct (constant-time
    /// check, not part of all), all, plan, publish, parallel (one shard per --cpus entry plus
    /// --deferred-cpu), or merge (join the shard run dirs given with --from into --run-dir).
    phase: String,
    #[command(flatten)]
    common: Box<CampaignCommon>,
    /// parallel: benchmark CPUs, one shard each (comma or space separated).
    #[arg(long)]
    cpus: Option<String>,
    /// parallel: CPU of the deferred instances.
    #[arg(long)]
    deferred_cpu: Option<usize>,
    /// merge: a shard run directory (repeat for each shard; all of one system).
    #[arg(long = "from", value_name = "RUN_DIR")]
    from: Vec<PathBuf>,
}

pub fn run_campaign(a: CampaignArgs) -> anyhow::Result<ExitCode> {
    if a.phase == "parallel" {
        let run = a
            .common
            .run_dir
            .clone()
            .context("parallel needs --run-dir")?;
        let cpus: Vec<usize> = a
            .cpus
            .as_deref()
            .context("parallel needs --cpus")?
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<usize>().with_context(|| format!("bad CPU {s}")))
            .collect::<anyhow::Result<_>>()?;
        let mut extra = vec![
            "--trial-target".to_string(),
            a.common.trial_target.to_string(),
            "--op-budget".into(),
            a.common.op_budget.to_string(),
            "--calibration-timeout".into(),
            a.common.calibration_timeout.to_string(),
            "--probe-attempts".into(),
            a.common.probe_attempts.to_string(),
        ];
        if a.common.allow_unfixed_host {
            extra.push("--allow-unfixed-host".into());
        }
        if let Some(s) = &a.common.system {
            extra.extend(["--system".into(), s.clone()]);
        }
        if let Some(s) = &a.common.systems {
            extra.extend(["--systems".into(), s.to_string_lossy().into_owned()]);
        }
        if let Some(s) = &a.common.prior_data {
            extra.extend(["--prior-data".into(), s.to_string_lossy().into_owned()]);
        }
        if let Some(s) = &a.common.only {
            extra.extend(["--only".into(), s.clone()]);
        }
        if a.common.no_samples {
            extra.push("--no-samples".into());
        }
        extra.extend(["--stack-region".into(), a.common.stack_region.to_string()]);
        if a.common.adaptive {
            extra.push("--adaptive".into());
        }
        let exe = std::env::current_exe()?;
        let c = shard::launch(
            &exe,
            &run,
            &cpus,
            a.deferred_cpu,
            &["calibrate", "measure", "profile"],
            &extra,
        )?;
        return Ok(code(c));
    }
    if a.phase == "merge" {
        let out = a
            .common
            .run_dir
            .clone()
            .context("merge needs --run-dir (the new, merged run directory)")?;
        let m = campaign::merge::merge(&out, &a.from).context("campaign merge")?;
        println!(
            "merge: {} records of system {} from {} shard runs -> {} ({} files)",
            m.records,
            m.system,
            a.from.len(),
            out.display(),
            m.files
        );
        return Ok(code(0));
    }
    let Some(phase) = Phase::parse(&a.phase) else {
        bail!("unknown phase {:?}", a.phase);
    };
    if phase == Phase::Publish && a.common.run_dir.is_none() {
        bail!("publish needs --run-dir");
    }
    let opts = a.common.options()?;
    let out = campaign::run_phase(phase, &opts, &super::phases::hooks())?;
    if phase == Phase::Publish && out.code == 0 {
        super::profile::publish_survey(&opts)?;
    }
    Ok(code(out.code))
}
