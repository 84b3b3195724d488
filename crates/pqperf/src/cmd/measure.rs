//! `pqperf check` and `pqperf campaign`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::Exit;
use pqperf_campaign::shard;
use pqperf_campaign::{self as campaign, Phase};
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
    Ok(Exit::failed_if(!problems.is_empty()).into())
}

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

/// Options shared by `campaign` and `demo`.
#[derive(clap::Args, Clone)]
pub struct CampaignCommon {
    /// Run directory (default: runs/default, as every command; it must exist: `pqperf
    /// import` creates it).
    #[arg(long)]
    run_dir: Option<PathBuf>,
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
    #[arg(long)]
    trial_target: Option<f64>,
    /// Seconds per operation above which fewer calls are timed (default 900). Given, it
    /// selects the reference protocol unless `--target-ci` is given too.
    #[arg(long)]
    op_budget: Option<f64>,
    /// Measure although host checks fail (records and pages name the problems).
    #[arg(long)]
    allow_unfixed_host: bool,
    /// Published datasets (performance/data) giving prior run times for sharding.
    #[arg(long)]
    prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run (one timed call), seconds: 15 minutes by default
    /// (the reference method's 6 h let a hanging candidate cost 6 h per operation).
    #[arg(long, default_value_t = pqperf_campaign::options::DEFAULT_CALIBRATION_TIMEOUT_S)]
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
    /// Run each operation in short trials (length chosen from its calibration), one fresh
    /// pinned process each, until the robust 95 % interval's half-width is at most PCT % or
    /// the budget (what the reference protocol would spend on it) is spent; the reference
    /// fields come from the trials it ran and the record names the protocol
    /// (`pqperf.protocol`). Default 1 for campaigns and the demo; `off`, `--trial-target`,
    /// `--op-budget`, `--adaptive` or `--no-samples` select the reference protocol.
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
}

/// `--target-ci PCT|off`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetCiArg {
    /// The reference protocol.
    Off,
    /// This half-width (checked by [`campaign::TargetCi::from_percent`]).
    Pct(campaign::TargetCi),
}

/// Parses `--target-ci`: a percentage in (0, 100] or `off`.
pub(crate) fn parse_target_ci(s: &str) -> Result<TargetCiArg, String> {
    if s == "off" {
        return Ok(TargetCiArg::Off);
    }
    s.parse::<f64>()
        .map_err(|e| e.to_string())
        .and_then(campaign::TargetCi::from_percent)
        .map(TargetCiArg::Pct)
        .map_err(|_| format!("{s:?}: a percentage above 0 and at most 100, or `off`"))
}

impl CampaignCommon {
    /// The half-width the campaign runs to (`None`: the reference protocol).
    pub fn target_ci(&self) -> Option<campaign::TargetCi> {
        match self.target_ci {
            Some(TargetCiArg::Pct(t)) => Some(t),
            Some(TargetCiArg::Off) => None,
            None if self.trial_target.is_some()
                || self.op_budget.is_some()
                || self.adaptive
                || self.no_samples =>
            {
                None
            }
            None => Some(campaign::TargetCi::DEFAULT),
        }
    }

    /// These options as data (what the parallel launcher hands its children).
    pub fn data(&self) -> campaign::OptionsData {
        campaign::OptionsData {
            // The one default of every command (import, build, kat, ct, campaign); a campaign
            // never creates its run directory (`import` does).
            run_dir: self.run_dir.clone(),
            cpu: match self.cpu {
                Some(CpuChoice::Fixed(c)) => Some(c),
                _ => None,
            },
            cpu_auto: matches!(self.cpu, Some(CpuChoice::Auto)),
            only: self.only.clone(),
            defer: self.defer.clone(),
            deferred_only: self.deferred_only,
            system: self.system.clone(),
            register: self.register.clone(),
            systems: self.systems.clone(),
            shard: self.shard.clone(),
            trial_target: self.trial_target.unwrap_or(1.0),
            op_budget: self.op_budget.unwrap_or(900.0),
            allow_unfixed_host: self.allow_unfixed_host,
            prior_data: self.prior_data.clone(),
            calibration_timeout: self.calibration_timeout,
            publish_to: self.publish_to.clone(),
            no_samples: self.no_samples,
            stack_region: self.stack_region,
            adaptive: self.adaptive,
            target_ci: self.target_ci().map(campaign::TargetCi::percent),
            iccs_baseline: self.iccs_baseline,
            probe_attempts: self.probe_attempts,
            redo: self.redo,
            keep_stale: self.keep_stale,
            containment: None,
        }
    }
}

/// The options of a campaign invocation: `--options FILE` (written by the parallel launcher)
/// with this process's own `--run-dir`, `--cpu`, `--shard` and `--deferred-only`, or the
/// command line alone.
fn options_of(a: &CampaignArgs) -> anyhow::Result<campaign::OptionsData> {
    let own = a.common.data();
    let Some(file) = &a.options else {
        return Ok(own);
    };
    let mut d = campaign::OptionsData::read(file)?;
    d.run_dir = own.run_dir.or(d.run_dir);
    if own.cpu.is_some() || own.cpu_auto {
        d.cpu = own.cpu;
        d.cpu_auto = own.cpu_auto;
    }
    d.shard = own.shard.or(d.shard);
    d.deferred_only |= own.deferred_only;
    // The launcher's bare `--defer` (the reference pattern) applies when none was given.
    d.defer = d.defer.or(own.defer);
    Ok(d)
}

/// `pqperf campaign <phase>`.
#[derive(clap::Args)]
pub struct CampaignArgs {
    /// check, build, kat, baseline, calibrate, measure, profile, hashcost, count (instruction
    /// counts), ct (constant-time check, not part of all), all, plan, publish, parallel (one shard per --cpus entry plus
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
    /// Print the measurable instances the selection (`--only`, `--defer`, `--shard`, …)
    /// picks (<id>/<label>) and do nothing else.
    #[arg(long)]
    list: bool,
    /// Internal (the parallel launcher's children): the options as data, a JSON file.
    #[arg(long, hide = true, value_name = "FILE")]
    options: Option<PathBuf>,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
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
        // The children get every option as data (a JSON file), not re-typed flags; only
        // their CPU, shard and deferred role are on their command lines.
        let mut data = options_of(&a)?;
        data.run_dir = Some(run.clone());
        data.cpu = None;
        data.cpu_auto = false;
        data.shard = None;
        data.deferred_only = false;
        // The containment too: the children apply it from the file, not from re-typed flags.
        data.containment = Some(campaign::ContainmentData::in_force());
        // In the run directory, not a shared temporary folder: the file says whether the
        // children sandbox candidate code, so only this user may place or replace it.
        let file = pqperf_model::layout::RunLayout::new(&run).at(format!(
            ".pqperf-parallel-{}-options.json",
            std::process::id()
        ));
        data.write(&file)?;
        let extra = vec!["--options".to_string(), file.to_string_lossy().into_owned()];
        let exe = pqperf_ffi::emulation::self_exe()?;
        let c = shard::launch(
            &exe,
            &run,
            &cpus,
            a.deferred_cpu,
            &["calibrate", "measure", "profile"],
            &extra,
        );
        let _ = std::fs::remove_file(&file);
        return Ok(code(c?));
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
        return Ok(Exit::Done.into());
    }
    let Some(phase) = Phase::parse(&a.phase) else {
        return super::refuse(format!(
            "unknown phase {:?} (check, build, kat, baseline, calibrate, measure, profile, hashcost, count, ct, all, plan, publish, parallel, merge)",
            a.phase
        ));
    };
    let data = options_of(&a)?;
    if let Some(c) = data.containment {
        c.apply();
    }
    let mut opts = data
        .to_options(|k| std::env::var(k).ok())
        .map_err(|e| match e {
            campaign::CampaignError::Msg(m) => anyhow::Error::new(super::Refused(m)),
            e => e.into(),
        })?;
    super::existing_run_dir(&opts.run_dir)?;
    // The command as given, flags included (a shard child's are the launcher's, not noted).
    if a.options.is_none() {
        opts.command = Some(super::build::shown_command());
    }
    // `--quiet`: the log lines go to campaign.log only, and no progress is shown.
    opts.echo = !super::ui::quiet();
    if super::ui::verbose() {
        eprintln!("{}", describe_options(&opts));
    }
    if a.list {
        let keys: Vec<String> = campaign::selected(&opts, campaign::measurable(&opts)?)
            .iter()
            .map(|i| i.key())
            .collect();
        if keys.is_empty() {
            return super::refuse("the selection picks no measurable instance (KAT PASS)");
        }
        for k in keys {
            println!("{k}");
        }
        return Ok(Exit::Done.into());
    }
    // Every phase but publish writes the run directory: `run_phase` holds its lock (one
    // writer at a time, except the shards of one parallel campaign, which share it).
    // (publish merges the survey verdicts and refreshes the pages through its hook)
    let out = campaign::run_phase(phase, &opts)?;
    Ok(out.code.into())
}

/// The options in force, for `--verbose`.
fn describe_options(o: &campaign::CampaignOptions) -> String {
    let re = |r: Option<&str>| r.map_or("none".to_string(), |r| format!("{r:?}"));
    let p = &o.planning;
    format!(
        "campaign: run directory {}, CPU {}{}, --only {}, --defer {}{}, systems {}, trials {} x {} s target, operation budget {} s{}{}, containment {}",
        o.run_dir.display(),
        o.cpu,
        if o.cpu_auto { " (auto)" } else { "" },
        re(o.select.only_pattern()),
        re(o.select.defer_pattern()),
        o.shard
            .map_or(String::new(), |(k, n)| format!(", shard {k}/{n}")),
        o.systems_csv.display(),
        p.trials,
        p.trial_target_s,
        p.op_budget_s,
        if o.adaptive { ", adaptive" } else { "" },
        if o.allow_unfixed_host {
            ", unfixed host allowed"
        } else {
            ""
        },
        {
            let p = pqperf_ffi::untrusted::policy();
            format!(
                "sandbox {}, address-space limit {}",
                if p.sandbox {
                    "on"
                } else {
                    "off (--no-sandbox)"
                },
                p.limits
                    .address_space
                    .map_or("none".to_string(), |b| format!("{} MiB", b >> 20))
            )
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CampaignArgs,
    }

    fn parse(args: &[&str]) -> CampaignArgs {
        T::try_parse_from(std::iter::once("campaign").chain(args.iter().copied()))
            .unwrap()
            .a
    }

    #[test]
    fn options_reach_the_parallel_children_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run");
        let run_s = run.to_str().unwrap();
        let given = [
            "parallel",
            "--run-dir",
            run_s,
            "--defer",
            "^sign-30/",
            "--register",
            "a VM",
            "--only",
            "^ml-dsa-44/",
            "--trial-target",
            "0.25",
            "--op-budget",
            "7",
            "--allow-unfixed-host",
            "--adaptive",
            "--probe-attempts",
            "1",
            "--redo",
            "--keep-stale",
            "--system",
            "x86_9",
            "--stack-region",
            "65536",
        ];
        let launcher = parse(&given);
        let mut data = options_of(&launcher).unwrap();
        data.cpu = None;
        let file = d.path().join("options.json");
        data.write(&file).unwrap();
        // A child as the launcher starts it: its own CPU, shard and the bare --defer.
        let child = parse(&[
            "measure",
            "--run-dir",
            run_s,
            "--cpu",
            "0",
            "--shard",
            "2/3",
            "--defer",
            "--options",
            file.to_str().unwrap(),
        ]);
        let got = options_of(&child).unwrap();
        let mut want = data.clone();
        want.cpu = Some(0);
        want.shard = Some("2/3".into());
        assert_eq!(got, want);
        // The user's --defer and --register survive (they were dropped before).
        assert_eq!(got.defer.as_deref(), Some("^sign-30/"));
        assert_eq!(got.register.as_deref(), Some("a VM"));
        let o = got.to_options(|_| None).unwrap();
        assert_eq!(o.shard, Some((2, 3)));
        assert!(o.redo && o.keep_stale && o.adaptive && o.allow_unfixed_host);
        assert_eq!(o.select.only_pattern(), Some("^ml-dsa-44/"));
        assert_eq!(o.select.defer_pattern(), Some("^sign-30/"));
        // Every field is data: the JSON form reads back equal, the containment too.
        assert_eq!(campaign::OptionsData::read(&file).unwrap(), data);
        let mut contained = data.clone();
        contained.containment = Some(campaign::ContainmentData {
            sandbox: false,
            address_space: Some(1 << 30),
        });
        contained.write(&file).unwrap();
        let got = options_of(&child).unwrap();
        assert_eq!(got.containment, contained.containment);
    }
}
