//! One campaign invocation ([`run_phase`]): host checks, refusal on an unfixed host, the
//! system id, campaign.json bookkeeping (host checks, flags, planning, counter, ICCS
//! provider), the CPU lock, then the phases from the registry in order.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use pqperf_build::flags;
use pqperf_measure::host::{self, CheckOptions};
use pqperf_measure::plan;
use pqperf_measure::record::{MeasureTotals, utc_now};
use serde_json::{Map, Value, json};

use crate::phases::{phase_calibrate, phase_measure, phase_plan};
use crate::publish::publish;
use crate::rundir::{has_records, read_json, update_campaign};
use crate::select::{measurable, selected};
use crate::{CampaignError, CampaignOptions, Hooks, Logger, Phase, PhaseCtx, systems};

type Res<T> = Result<T, CampaignError>;

/// Reference guide flags recorded in campaign.json (§2.5), from the build stage's flag table.
pub fn arch_config(arch: &str) -> Value {
    let performance = match arch {
        "aarch64" => flags::GUIDE_PERFORMANCE_ARM,
        _ => flags::GUIDE_PERFORMANCE_X86,
    };
    json!({
        "reference": flags::GUIDE_REFERENCE.join(" "),
        "performance": performance.join(" "),
        "optimized_families": [],
    })
}

/// Flags appended to the guide's reference flags (§2.5), as recorded in campaign.json.
pub fn harness_additions() -> String {
    flags::HARNESS_ADDITIONS.join(" ")
}

/// pqperf's own campaign keys about the ICCS provider (issue 19): `iccs_provider`, the
/// provider the run's ICCS instances linked (from build.json; a list when they differ), and
/// `iccs_provider_cost`, the last `pqperf iccs bench` table of the run
/// (`profile/iccs-provider-bench.json`), when present.
fn iccs_provider_evidence(run: &Path, pq: &mut Map<String, Value>) {
    let mut seen: Vec<Value> = Vec::new();
    if let Some(bj) = read_json(&run.join("build.json")) {
        for e in bj["instances"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
        {
            if let Some(p) = e.get("iccs_provider")
                && !seen.contains(p)
            {
                seen.push(p.clone());
            }
        }
    }
    match seen.len() {
        0 => {}
        1 => {
            pq.insert("iccs_provider".into(), seen.remove(0));
        }
        _ => {
            pq.insert("iccs_provider".into(), Value::Array(seen));
        }
    }
    if let Some(b) = read_json(&run.join("profile").join("iccs-provider-bench.json")) {
        pq.insert("iccs_provider_cost".into(), b);
    }
}

/// Summary of what a phase did, for callers (demo, benchmark).
#[derive(Debug, Default, Clone)]
pub struct PhaseOutcome {
    /// Exit status (0 fine; 1 check problems; 2 refused / usage).
    pub code: i32,
    /// Host problems found at the start.
    pub host_problems: Vec<String>,
    /// System id.
    pub system_id: Option<String>,
    /// Measure totals (measure phase).
    pub totals: MeasureTotals,
    /// Wall seconds of the phase.
    pub wall_s: f64,
}

/// Runs one phase (or `all`).
pub fn run_phase(phase: Phase, opts: &CampaignOptions, hooks: &Hooks) -> Res<PhaseOutcome> {
    let t0 = Instant::now();
    let mut out = PhaseOutcome::default();
    let problems = host::host_problems(&CheckOptions {
        probe_attempts: opts.probe_attempts,
        ..CheckOptions::new(opts.cpu)
    });
    out.host_problems = problems.clone();
    if phase == Phase::Check {
        host::print_problems(&problems);
        out.code = i32::from(!problems.is_empty());
        return Ok(out);
    }
    if phase == Phase::Publish {
        out.code = publish(opts)?;
        return Ok(out);
    }
    if !problems.is_empty() && phase.measuring() && !opts.allow_unfixed_host {
        for p in &problems {
            eprintln!("HOST: {p}");
        }
        eprintln!("refusing to measure on an unfixed host (use --allow-unfixed-host for tests)");
        out.code = 2;
        return Ok(out);
    }
    std::fs::create_dir_all(&opts.run_dir)?;
    let camp = read_json(&opts.run_dir.join("campaign.json"));
    if phase != Phase::Build
        && let Some(old) = camp.as_ref().and_then(|c| c.get("planning"))
        && *old != plan::planning_json(&opts.planning)
        && has_records(&opts.run_dir)
    {
        eprintln!(
            "run directory was measured with planning {old}; pass the same --trial-target/--op-budget"
        );
        out.code = 2;
        return Ok(out);
    }
    let u = pqperf_ffi::procinfo::uname();
    let mut system_id = match &opts.system {
        Some(s) => {
            let rows = systems::load(&opts.systems_csv)?;
            if !rows.iter().any(|r| &r.id == s)
                && let Some(desc) = &opts.register
            {
                // Asked for by name: this machine is registered under that id.
                systems::register_as(&opts.systems_csv, &u.nodename, &u.machine, desc, Some(s))?;
            }
            let rows = systems::load(&opts.systems_csv)?;
            if !rows.iter().any(|r| &r.id == s) {
                eprintln!(
                    "system {s} is not registered in {}",
                    opts.systems_csv.display()
                );
                out.code = 2;
                return Ok(out);
            }
            Some(s.clone())
        }
        None => systems::find(&systems::load(&opts.systems_csv)?, &u.nodename, &u.machine),
    };
    if system_id.is_none()
        && let Some(desc) = &opts.register
    {
        system_id = Some(systems::register(
            &opts.systems_csv,
            &u.nodename,
            &u.machine,
            desc,
        )?);
    }
    if system_id.is_none() && !matches!(phase, Phase::Build | Phase::Kat | Phase::Ct) {
        eprintln!(
            "this machine ({} {}) is not registered in {}; register it with --register \"<description>\" or pass --system",
            u.nodename,
            u.machine,
            opts.systems_csv.display()
        );
        out.code = 2;
        return Ok(out);
    }
    if let (Some(old), Some(new)) = (
        camp.as_ref().and_then(|c| c["system_id"].as_str()),
        system_id.as_deref(),
    ) && old != new
    {
        eprintln!("run directory belongs to system {old}, not {new}");
        out.code = 2;
        return Ok(out);
    }
    out.system_id = system_id.clone();
    let log = Logger::open(&opts.run_dir.join("campaign.log"), opts.echo)?;
    let probe = host::clock_probe(opts.cpu, 21, 50);
    let env = host::environment(opts.cpu, probe.as_ref());
    let kind = host::counter_kind();
    let mut counter_info = host::counter_info(kind, probe.as_ref());
    if let Value::Object(m) = &mut counter_info {
        m.insert(
            "tick_source".into(),
            json!(pqperf_ffi::counters::ticks_source()),
        );
        m.insert("tick_hz".into(), json!(pqperf_ffi::counters::ticks_hz(20)));
        // What contained the candidate code of this phase (pqperf's own key).
        m.insert(
            "sandbox".into(),
            pqperf_ffi::untrusted::in_force_json(&pqperf_ffi::untrusted::policy()),
        );
    }
    let now = utc_now();
    update_campaign(&opts.run_dir, |m| {
        if let Some(id) = &system_id {
            m.insert("system_id".into(), json!(id));
        }
        m.entry("started_utc").or_insert(json!(now));
        m.entry("environment_at_start").or_insert(env.clone());
        let mut hc =
            json!({"phase": phase.name(), "cpu": opts.cpu, "utc": now, "problems": problems});
        if let Some((k, n)) = opts.shard {
            hc["shard"] = json!(format!("{k}/{n}"));
        }
        match m.get_mut("host_checks").and_then(Value::as_array_mut) {
            Some(a) => a.push(hc),
            None => {
                m.insert("host_checks".into(), json!([hc]));
            }
        }
        if phase.measuring() {
            let mut set: BTreeSet<String> = m
                .get("host_problems")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            set.extend(problems.iter().cloned());
            m.insert("host_problems".into(), json!(set));
        }
        if let Some((k, n)) = opts.shard {
            let old = m.get("shards").and_then(Value::as_u64).unwrap_or(0);
            m.insert("shards".into(), json!(old.max(n as u64)));
            let sc = m.entry("shard_cpus").or_insert(json!({}));
            sc[format!("{k}/{n}")] = json!(opts.cpu);
        }
        m.insert("arch_config".into(), arch_config(&u.machine));
        m.insert("harness_additions".into(), json!(harness_additions()));
        m.insert("planning".into(), plan::planning_json(&opts.planning));
        let mut pq = counter_info.clone();
        let mut commands: Vec<Value> = m
            .get("pqperf")
            .and_then(|p| p.get("commands"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let this = json!(format!("pqperf campaign {}", phase.name()));
        if !commands.contains(&this) {
            commands.push(this);
        }
        pq["version"] = json!(env!("CARGO_PKG_VERSION"));
        pq["commands"] = Value::Array(commands);
        // An emulated host (qemu-user, `--emulated`): kept once any phase ran emulated, since
        // the run's records then include emulated timings.
        let earlier = m
            .get("pqperf")
            .and_then(|p| p.get("emulated"))
            .cloned()
            .filter(|v| !v.is_null());
        if let Some(e) = pqperf_ffi::emulation::emulated()
            .map(Value::from)
            .or(earlier)
        {
            pq["emulated"] = e;
        }
        m.insert("pqperf".into(), pq);
        if let Some(Value::Object(pq)) = m.get_mut("pqperf") {
            iccs_provider_evidence(&opts.run_dir, pq);
        }
    })?;
    let fixed = if problems.is_empty() {
        String::new()
    } else {
        format!(" (HOST NOT FIXED: {})", problems.join("; "))
    };
    log.log(format!(
        "phase {} in {} on CPU {}{fixed}",
        phase.name(),
        opts.run_dir.display(),
        opts.cpu
    ));
    // Measuring phases hold the CPU lock; the orchestrator keeps off the benchmark core.
    let _cpu_lock = if phase.measuring() {
        keep_off_cpu(opts.cpu);
        Some(pqperf_ffi::procinfo::lock_exclusive(
            &opts.lock_dir().join(format!(".cpu{}.lock", opts.cpu)),
        )?)
    } else {
        None
    };
    let ctx = PhaseCtx {
        opts,
        log: &log,
        host_problems: &problems,
        system_id: system_id.as_deref(),
        environment: &env,
    };
    let sequence: Vec<Phase> = match phase {
        Phase::All => vec![
            Phase::Build,
            Phase::Kat,
            Phase::Baseline,
            Phase::Calibrate,
            Phase::Measure,
            Phase::Profile,
            Phase::Hashcost,
        ],
        p => vec![p],
    };
    let mut code = 0;
    for ph in sequence {
        let c = match ph {
            Phase::Calibrate | Phase::Measure | Phase::Plan => {
                let insts = selected(opts, measurable(opts)?);
                match ph {
                    Phase::Calibrate => phase_calibrate(opts, &log, &insts)?,
                    Phase::Measure => {
                        let (c, t) = phase_measure(opts, &log, &insts, &env, &counter_info)?;
                        out.totals = t;
                        c
                    }
                    _ => phase_plan(opts, &insts),
                }
            }
            _ => match hooks.get(ph) {
                Some(h) => h(&ctx).map_err(CampaignError::msg)?,
                None => {
                    let msg = format!(
                        "phase {}: this program does not provide it; run `pqperf {}` for {} first (stopping)",
                        ph.name(),
                        match ph {
                            Phase::Build => "build --run-dir <run>".to_string(),
                            Phase::Kat => "kat --run-dir <run>".to_string(),
                            p => format!("campaign {} --run-dir <run>", p.name()),
                        },
                        opts.run_dir.display()
                    );
                    log.log(&msg);
                    eprintln!("{msg}");
                    code = code.max(2);
                    break;
                }
            },
        };
        code = code.max(c);
    }
    let end_env = host::environment(opts.cpu, probe.as_ref());
    update_campaign(&opts.run_dir, |m| {
        m.insert("ended_utc".into(), json!(utc_now()));
        m.insert("environment_at_end".into(), end_env);
    })?;
    log.log(format!("phase {} finished", phase.name()));
    out.code = code;
    out.wall_s = t0.elapsed().as_secs_f64();
    Ok(out)
}

/// Moves the calling thread (and threads and children it starts later) off `cpu` when another
/// CPU is available.
pub fn keep_off_cpu(cpu: usize) {
    keep_off_cpus(&[cpu]);
}

/// Like [`keep_off_cpu`] for several CPUs.
pub fn keep_off_cpus(cpus: &[usize]) {
    if let Ok(mine) = pqperf_ffi::affinity::get_affinity() {
        let others: Vec<usize> = mine.into_iter().filter(|c| !cpus.contains(c)).collect();
        if !others.is_empty() {
            let _ = pqperf_ffi::affinity::set_affinity(&others);
        }
    }
}
