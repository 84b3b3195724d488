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

/// The options of a campaign invocation: `--options FILE` (written by the parallel launcher)
/// with this process's own `--run-dir`, `--cpu`, `--shard` and `--deferred-only`, or the
/// command line alone; checked either way.
fn options_of(a: &CampaignArgs) -> anyhow::Result<campaign::CampaignOptions> {
    let env = |k: &str| std::env::var(k).ok();
    match &a.options {
        Some(file) => super::options::child_options(&a.common, file, env),
        None => a.common.options(env),
    }
}

/// `pqperf campaign <phase>`.
#[derive(clap::Args)]
pub struct CampaignArgs {
    /// check, build, kat, baseline, calibrate, measure, profile, hashcost, count (instruction
    /// counts), ct (constant-time check, not part of all), all, plan, publish, parallel (one shard per --cpus entry plus
    /// --deferred-cpu), or merge (join the shard run dirs given with --from into --run-dir).
    phase: String,
    #[command(flatten)]
    common: Box<super::options::CampaignCommon>,
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
        // The children get the checked options as a file, not re-typed flags; only their
        // CPU, shard and deferred role are on their command lines.
        let mut o = options_of(&a)?;
        o.run_dir = run.clone();
        o.cpu_auto = false;
        o.shard = None;
        o.select = o
            .select
            .clone()
            .with_defer(o.select.defer_pattern(), false)
            .map_err(|e| super::Refused(e.to_string()))?;
        // The containment too: the children apply it from the file, not from re-typed flags.
        o.containment = Some(campaign::ContainmentData::in_force());
        // In the run directory, not a shared temporary folder: the file says whether the
        // children sandbox candidate code, so only this user may place or replace it.
        let file = pqperf_model::layout::RunLayout::new(&run).at(format!(
            ".pqperf-parallel-{}-options.json",
            std::process::id()
        ));
        o.write(&file)?;
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
    let mut opts = options_of(&a)?;
    if let Some(c) = opts.containment {
        c.apply();
    }
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
        o.target_ci
            .map_or(String::new(), |t| format!(", --target-ci {}", t.percent())),
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
            "--target-ci",
            "2",
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
        let o = options_of(&launcher).unwrap();
        let file = d.path().join("options.json");
        o.write(&file).unwrap();
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
        let mut want = o.clone();
        want.cpu = 0;
        want.shard = Some((2, 3));
        let json = |o: &campaign::CampaignOptions| serde_json::to_value(o).unwrap();
        assert_eq!(json(&got), json(&want));
        // The user's --defer and --register survive (they were dropped before).
        assert_eq!(got.select.defer_pattern(), Some("^sign-30/"));
        assert_eq!(got.register.as_deref(), Some("a VM"));
        assert!(got.redo && got.keep_stale && got.allow_unfixed_host);
        assert_eq!(got.target_ci.map(campaign::TargetCi::percent), Some(2.0));
        assert_eq!(got.planning.trial_target_s, 0.25);
        assert_eq!(got.select.only_pattern(), Some("^ml-dsa-44/"));
        // The containment in the file reaches the child.
        let mut contained = o.clone();
        contained.containment = Some(campaign::ContainmentData {
            sandbox: false,
            address_space: Some(1 << 30),
        });
        contained.write(&file).unwrap();
        let got = options_of(&child).unwrap();
        assert_eq!(got.containment, contained.containment);
        // A launcher without --defer: the child's bare --defer (the reference pattern).
        let mut plain = o.clone();
        plain.select = pqperf_model::select::Selection::all();
        plain.write(&file).unwrap();
        let got = options_of(&child).unwrap();
        assert_eq!(
            got.select.defer_pattern(),
            Some(pqperf_model::select::DEFAULT_DEFER)
        );
    }
}
