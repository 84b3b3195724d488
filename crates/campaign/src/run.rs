//! One campaign invocation ([`run_phase`]), its steps in order: the run directory's lock,
//! refusals, the host-wide CPU lease of a measuring phase (taken first: the host checks
//! already probe that CPU), host checks, refusal on an unfixed host, the system id,
//! campaign.json bookkeeping (host checks, flags, planning, counter, ICCS provider, CPU
//! leases), then the stages of the phase in order ([`Phase::ALL`] for `all`), then the end.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use pqperf_build::flags;
use pqperf_measure::host;
use pqperf_measure::record::{MeasureTotals, utc_now};
use pqperf_model::campaign::{ArchConfig, Campaign, CampaignPqperf, HostCheck, LeaseWindow};
use pqperf_model::fields::Fields;
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson::read_value;
use serde_json::{Value, json};

use crate::lease::{CpuLease, CpuRequest};
use crate::phases::{phase_calibrate, phase_measure, phase_plan};
use crate::publish::publish;
use crate::rundir::{LockedRun, has_records, read_campaign};
use crate::select::{measurable, selected};
use crate::setup::{CpuCheck, MeasuringSetup, SetupError, SetupRequest};
use crate::{
    CampaignError, CampaignOptions, Exit, Logger, Phase, PhaseCtx, PhaseError, stages, systems,
};

type Res<T> = Result<T, CampaignError>;

/// Reference guide flags recorded in campaign.json (§2.5), from the build stage's flag table.
pub fn arch_config(arch: &str) -> ArchConfig {
    let performance = match arch {
        "aarch64" => flags::GUIDE_PERFORMANCE_ARM,
        _ => flags::GUIDE_PERFORMANCE_X86,
    };
    ArchConfig {
        reference: flags::GUIDE_REFERENCE.join(" "),
        performance: performance.join(" "),
        optimized_families: Vec::new(),
        ..Default::default()
    }
}

/// Flags appended to the guide's reference flags (§2.5), as recorded in campaign.json.
pub fn harness_additions() -> String {
    flags::HARNESS_ADDITIONS.join(" ")
}

/// pqperf's own campaign keys about the ICCS provider (issue 19): `iccs_provider`, the
/// provider the run's ICCS instances linked (from build.json; a list when they differ), and
/// `iccs_provider_cost`, the last `pqperf iccs bench` table of the run
/// (`profile/iccs-provider-bench.json`), when present.
fn iccs_provider_evidence(run: &Path, pq: &mut CampaignPqperf) {
    let mut seen: Vec<Value> = Vec::new();
    let layout = RunLayout::new(run);
    if let Some(bj) = read_value(&layout.build_json()) {
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
        1 => pq.iccs_provider = Some(seen.remove(0)),
        _ => pq.iccs_provider = Some(Value::Array(seen)),
    }
    if let Some(b) = read_value(&layout.iccs_provider_bench()) {
        pq.iccs_provider_cost = Some(b);
    }
}

/// Summary of what a phase did, for callers (demo, benchmark).
#[derive(Debug, Default, Clone)]
pub struct PhaseOutcome {
    /// How it ended (done; failed, also for host problems at `check`; refused).
    pub code: Exit,
    /// Host problems found at the start.
    pub host_problems: Vec<String>,
    /// System id.
    pub system_id: Option<String>,
    /// Measure totals (measure phase).
    pub totals: MeasureTotals,
    /// Wall seconds of the phase.
    pub wall_s: f64,
}

impl PhaseOutcome {
    /// The outcome of a phase that ended with `code` before it measured anything.
    fn ended(code: Exit) -> PhaseOutcome {
        PhaseOutcome {
            code,
            ..Default::default()
        }
    }
}

/// Whether `campaign all` runs the ICCS helper baseline: `--iccs-baseline`, or a selected
/// candidate (other than the baseline's own `iccs`) was built against an ICCS helper provider.
fn baseline_wanted(opts: &CampaignOptions) -> Res<bool> {
    if opts.iccs_baseline {
        return Ok(true);
    }
    Ok(selected(opts, measurable(opts)?)
        .iter()
        .any(|i| i.entry.candidate != "iccs" && i.entry.extra.contains_key("iccs_provider")))
}

/// Runs one phase (or `all`): the pipeline of one campaign invocation, each step a
/// function below.
pub fn run_phase(phase: Phase, opts: &CampaignOptions) -> Res<PhaseOutcome> {
    let t0 = Instant::now();
    // Publishing reads evidence only; the host it runs on does not matter.
    if phase == Phase::Publish {
        return Ok(PhaseOutcome::ended(publish(opts)?));
    }
    let run = lock_run(opts)?;
    // Refusals come before anything is written or a CPU is leased.
    if phase != Phase::Check
        && let Some(why) = refusal(phase, opts)
    {
        eprintln!("campaign {}: {why}", phase.name());
        return Ok(PhaseOutcome::ended(Exit::Refused));
    }
    let host = match HostSetup::open(phase, opts)? {
        Ok(h) => h,
        Err(why) => {
            eprintln!("campaign {}: {why}", phase.name());
            return Ok(PhaseOutcome::ended(Exit::Refused));
        }
    };
    let opts = &host.opts;
    if phase == Phase::Check {
        return Ok(host.check_only());
    }
    if let Some(why) = host.refusal(phase)? {
        eprintln!("{why}");
        return Ok(host.ended(Exit::Refused));
    }
    let system_id = match system_for(phase, opts)? {
        Ok(id) => id,
        Err(why) => {
            eprintln!("{why}");
            return Ok(host.ended(Exit::Refused));
        }
    };
    let Some(run) = &run else {
        return Err(CampaignError::msg(format!(
            "run directory {} does not exist",
            opts.run_dir.display()
        )));
    };
    let facts = PhaseFacts::gather(opts, &host)?;
    record_start(phase, run, &host, &facts, system_id.as_deref())?;
    announce(phase, &host, &facts.log);
    let ctx = PhaseCtx {
        opts,
        run,
        log: &facts.log,
        environment: &facts.env,
        system_id: system_id.as_deref(),
    };
    let mut out = host.ended(Exit::Done);
    out.system_id = system_id.clone();
    out.code = run_steps(phase, &ctx, &facts, &mut out.totals)?;
    record_end(phase, run, host, &facts)?;
    out.wall_s = t0.elapsed().as_secs_f64();
    Ok(out)
}

/// The run directory's lock, held from here to the phase's end (shared by the shards of one
/// parallel campaign, which write disjoint units, and by the demo's phases that run side by
/// side, `CampaignOptions::shared_run_lock`; exclusive otherwise). A missing run
/// directory is refused later.
fn lock_run(opts: &CampaignOptions) -> Res<Option<LockedRun>> {
    if !opts.run_dir.is_dir() {
        return Ok(None);
    }
    Ok(Some(LockedRun::lock(
        &opts.run_dir,
        opts.shard.is_some() || opts.select.deferred_only() || opts.shared_run_lock,
    )?))
}

/// The host side of a phase: the options with the benchmark CPU (the leased one in a
/// measuring phase) and the shared measuring set-up ([`MeasuringSetup`]: the lease, the
/// host problems).
struct HostSetup {
    /// The options with `cpu` the leased CPU.
    opts: CampaignOptions,
    setup: MeasuringSetup,
}

impl HostSetup {
    /// The set-up of `phase`: a measuring phase leases its CPU (`--cpu auto`: a free one)
    /// after the CPU check; every phase probes the host. `Err(why)`: refused.
    fn open(phase: Phase, opts: &CampaignOptions) -> Res<Result<HostSetup, String>> {
        let measuring = phase.measuring();
        let req = SetupRequest {
            cpu: if measuring && opts.cpu_auto {
                CpuRequest::Auto
            } else {
                CpuRequest::Fixed(opts.cpu)
            },
            check: measuring.then_some(CpuCheck::Online),
            owner: &opts.run_dir,
            probe_attempts: opts.probe_attempts,
            refuse_emulated: false,
            lease: measuring,
        };
        let setup = match MeasuringSetup::open(&req, &mut |m| eprintln!("pqperf: {m}")) {
            Ok(s) => s,
            Err(SetupError::Refused(why)) => return Ok(Err(why)),
            Err(SetupError::Lease(e)) => return Err(CampaignError::msg(e)),
        };
        let opts = CampaignOptions {
            cpu: setup.cpu,
            ..opts.clone()
        };
        Ok(Ok(HostSetup { opts, setup }))
    }

    /// The outcome of a phase that ends with `code` now.
    fn ended(&self, code: Exit) -> PhaseOutcome {
        PhaseOutcome {
            code,
            host_problems: self.setup.host_problems.clone(),
            ..Default::default()
        }
    }

    /// `campaign check`: the problems printed; 1 when there are some.
    fn check_only(&self) -> PhaseOutcome {
        host::print_problems(&self.setup.host_problems);
        self.ended(Exit::failed_if(!self.setup.host_problems.is_empty()))
    }

    /// Why `phase` may not run on this host: a measuring phase on an unfixed host (without
    /// `--allow-unfixed-host`), or planning constants other than those of the run's records.
    fn refusal(&self, phase: Phase) -> Res<Option<String>> {
        let opts = &self.opts;
        if !self.setup.host_problems.is_empty() && phase.measuring() && !opts.allow_unfixed_host {
            let mut lines: Vec<String> = self
                .setup
                .host_problems
                .iter()
                .map(|p| format!("HOST: {p}"))
                .collect();
            lines.push(
                "refusing to measure on an unfixed host (use --allow-unfixed-host for tests)"
                    .into(),
            );
            return Ok(Some(lines.join("\n")));
        }
        let camp = read_campaign(&opts.run_dir)?;
        if phase != Phase::Build
            && let Some(old) = &camp.planning
            && *old != opts.planning
            && has_records(&opts.run_dir)
        {
            return Ok(Some(format!(
                "run directory was measured with planning {}; pass the same --trial-target/--op-budget",
                serde_json::to_string(old).unwrap_or_default()
            )));
        }
        Ok(None)
    }
}

/// The registered system `phase` runs for (`--system`, `--register`, or this machine's row
/// of systems.csv); `Err(why)` when it must not run: an unregistered machine in a phase that
/// needs one, or a run directory of another system.
fn system_for(phase: Phase, opts: &CampaignOptions) -> Res<Result<Option<String>, String>> {
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
                return Ok(Err(format!(
                    "system {s} is not registered in {}",
                    opts.systems_csv.display()
                )));
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
    if system_id.is_none() && !matches!(phase, Phase::Build | Phase::Kat | Phase::Ct | Phase::Count)
    {
        return Ok(Err(format!(
            "this machine ({} {}) is not registered in {}; register it with --register \"<description>\" or pass --system",
            u.nodename,
            u.machine,
            opts.systems_csv.display()
        )));
    }
    let camp = read_campaign(&opts.run_dir)?;
    if let (Some(old), Some(new)) = (camp.system_id.as_deref(), system_id.as_deref())
        && old != new
    {
        return Ok(Err(format!(
            "run directory belongs to system {old}, not {new}"
        )));
    }
    Ok(Ok(system_id))
}

/// What a started phase knows of its host: the campaign log, the clock probe, the
/// environment snapshot (§3.2) and the counter's facts as the records carry them.
struct PhaseFacts {
    log: Logger,
    probe: Option<host::ClockProbe>,
    env: Value,
    counter_info: Value,
}

impl PhaseFacts {
    fn gather(opts: &CampaignOptions, host_setup: &HostSetup) -> Res<PhaseFacts> {
        let log = Logger::open(&opts.layout().campaign_log(), opts.echo)?;
        let probe = host_setup.setup.clock_probe();
        let env = host_setup.setup.environment(probe.as_ref());
        let kind = host::counter_kind();
        let mut counter_info = host::counter_info(kind, probe.as_ref());
        if let Value::Object(m) = &mut counter_info {
            m.insert(
                "tick_source".into(),
                json!(pqperf_ffi::counters::ticks_source()),
            );
            m.insert("tick_hz".into(), json!(host_setup.setup.tick_hz()));
            // What contained the candidate code of this phase (pqperf's own key).
            m.insert(
                "sandbox".into(),
                pqperf_ffi::untrusted::in_force_json(&pqperf_ffi::untrusted::policy()),
            );
            // Which CPU the phase leased and how it was chosen (records' `pqperf.cpu_lease`).
            if let Some(l) = &host_setup.setup.lease {
                m.insert("cpu_lease".into(), l.json());
            }
        }
        Ok(PhaseFacts {
            log,
            probe,
            env,
            counter_info,
        })
    }
}

/// campaign.json at the start of a phase: system id, start time and environment, the host
/// check, shard, guide flags, planning, and this phase's facts under `pqperf` (the
/// counter's, the command, the CPU lease window, emulation, the ICCS provider).
fn record_start(
    phase: Phase,
    run: &LockedRun,
    host_setup: &HostSetup,
    facts: &PhaseFacts,
    system_id: Option<&str>,
) -> Res<()> {
    let opts = &host_setup.opts;
    let problems = &host_setup.setup.host_problems;
    let lease = &host_setup.setup.lease;
    let u = pqperf_ffi::procinfo::uname();
    // The counter's facts as the records carry them, less the current lease: campaign.json
    // keeps every phase's lease window instead.
    let mut counter: CampaignPqperf = serde_json::from_value(facts.counter_info.clone())
        .map_err(|e| CampaignError::msg(format!("counter facts: {e}")))?;
    counter.extra.shift_remove("cpu_lease");
    let now = utc_now();
    run.try_update_campaign(|c| {
        if let Some(id) = system_id {
            c.system_id = Some(id.to_string());
        }
        c.started_utc.get_or_insert_with(|| now.clone());
        if !opts.beside_measuring {
            c.environment_at_start.get_or_insert_with(|| {
                Fields::from(facts.env.as_object().cloned().unwrap_or_default())
            });
        }
        c.host_checks.get_or_insert_with(Vec::new).push(HostCheck {
            phase: phase.name().to_string(),
            cpu: Some(opts.cpu as u64),
            utc: now.clone(),
            problems: problems.clone(),
            shard: opts.shard.map(|(k, n)| format!("{k}/{n}")),
            ..Default::default()
        });
        if phase.measuring() {
            let mut set: BTreeSet<String> = c
                .host_problems
                .take()
                .unwrap_or_default()
                .into_iter()
                .collect();
            set.extend(problems.iter().cloned());
            c.host_problems = Some(set.into_iter().collect());
        }
        if let Some((k, n)) = opts.shard {
            c.shards = Some(c.shards.unwrap_or(0).max(n as u64));
            c.shard_cpus
                .get_or_insert_with(Default::default)
                .insert(format!("{k}/{n}"), opts.cpu as u64);
        }
        c.arch_config = Some(arch_config(&u.machine));
        c.harness_additions = Some(harness_additions());
        c.planning = Some(opts.planning.clone());
        let earlier = c.pqperf.take().unwrap_or_default();
        if opts.beside_measuring {
            // The counter's facts stay those of the measuring phases' CPU.
            let mut pq = earlier;
            pq.note_command(
                &opts
                    .command
                    .clone()
                    .unwrap_or_else(|| format!("pqperf campaign {}", phase.name())),
            );
            c.pqperf = Some(pq);
            return Ok(());
        }
        let mut pq = counter.clone();
        pq.version = Some(env!("CARGO_PKG_VERSION").to_string());
        pq.commands = earlier.commands.clone();
        pq.note_command(
            &opts
                .command
                .clone()
                .unwrap_or_else(|| format!("pqperf campaign {}", phase.name())),
        );
        let mut leases = earlier.cpu_leases.clone().unwrap_or_default();
        if let Some(l) = lease {
            leases.push(LeaseWindow {
                phase: Some(phase.name().to_string()),
                pid: Some(u64::from(std::process::id())),
                released_utc: Some(None),
                ..l.window()
            });
        }
        if !leases.is_empty() {
            pq.cpu_leases = Some(leases);
        }
        // An emulated host (qemu-user, `--emulated`): kept once any phase ran emulated, since
        // the run's records then include emulated timings.
        if let Some(e) = pqperf_ffi::emulation::emulated().or(earlier.emulated.clone()) {
            pq.emulated = Some(e);
        }
        // What earlier commands recorded under `pqperf` stays with the run (the A–A noise
        // floor, stale evidence kept, the commit, the baseline's reuse of the host's cache…):
        // this phase's facts replace only their own keys.
        let mut pq = pq
            .keep_earlier(&earlier)
            .map_err(|e| CampaignError::msg(format!("campaign.json pqperf: {e}")))?;
        iccs_provider_evidence(&opts.run_dir, &mut pq);
        c.pqperf = Some(pq);
        Ok(())
    })?;
    Ok(())
}

/// The phase's first log lines (host state, lease waits, the lease); then the orchestrator
/// keeps off the benchmark core.
fn announce(phase: Phase, host_setup: &HostSetup, log: &Logger) {
    let opts = &host_setup.opts;
    let problems = &host_setup.setup.host_problems;
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
    for w in &host_setup.setup.waits {
        log.log(w);
    }
    if let Some(l) = &host_setup.setup.lease {
        log.log(format!(
            "lease CPU {} ({} of {}; waited {:.1} s; {})",
            l.cpu,
            l.chosen,
            l.allowed
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(","),
            l.waited_s,
            l.path.display()
        ));
        host_setup.setup.keep_off();
    }
}

/// The steps of `phase`: [`Phase::ALL`] in order for `all` (without `baseline` under a
/// shard: it builds the instances the shards share out, so a shard's `all` leaves it to an
/// unsharded `campaign baseline`, and says so), else the phase itself.
fn steps_of(phase: Phase, ctx: &PhaseCtx) -> Vec<Phase> {
    if phase != Phase::All {
        return vec![phase];
    }
    let shard = ctx.opts.shard.is_some();
    if shard {
        ctx.log.log(
            "baseline: not part of `all` with --shard (run `campaign baseline` without --shard in this run directory first)",
        );
    }
    Phase::ALL
        .into_iter()
        .filter(|p| !(shard && *p == Phase::Baseline))
        .collect()
}

/// Runs the steps of `phase` ([`steps_of`]); stops at the first refusal; the exit status is
/// the worst step's.
fn run_steps(
    phase: Phase,
    ctx: &PhaseCtx,
    facts: &PhaseFacts,
    totals: &mut MeasureTotals,
) -> Res<Exit> {
    let opts = ctx.opts;
    let mut code = Exit::Done;
    // `all` times the ICCS helper baseline (candidate `iccs`) only when asked for or when a
    // selected candidate links the ICCS helpers; decided once build has run.
    let mut baseline_unwanted = false;
    for step in steps_of(phase, ctx) {
        if phase == Phase::All && step == Phase::Baseline && !baseline_wanted(opts)? {
            baseline_unwanted = true;
            ctx.log.log(
                "baseline: skipped (no selected candidate links the ICCS helpers; --iccs-baseline times them anyway)",
            );
            continue;
        }
        let c = match step {
            Phase::Calibrate | Phase::Measure | Phase::Plan => {
                let mut insts = selected(opts, measurable(opts)?);
                if baseline_unwanted && opts.select.only_pattern().is_none() {
                    insts.retain(|i| i.entry.candidate != "iccs");
                }
                if let Some(msg) = empty_selection(step, opts, &insts) {
                    ctx.log.log(&msg);
                    eprintln!("{msg}");
                    code = code.worst(Exit::Refused);
                    break;
                }
                measuring_step(step, ctx, facts, &insts, totals)?
            }
            _ => stage_step(step, ctx).map_err(CampaignError::from)?,
        };
        code = code.worst(c);
    }
    Ok(code)
}

/// The campaign's own measuring steps: calibrate, measure (the missing calibrations first),
/// plan.
fn measuring_step(
    step: Phase,
    ctx: &PhaseCtx,
    facts: &PhaseFacts,
    insts: &[pqperf_measure::instance::Instance],
    totals: &mut MeasureTotals,
) -> Res<Exit> {
    let opts = ctx.opts;
    Ok(match step {
        Phase::Calibrate => phase_calibrate(opts, ctx.log, insts, opts.redo)?,
        Phase::Measure => {
            let c0 = phase_calibrate(opts, ctx.log, insts, false)?;
            let key = ctx
                .system_id
                .map(|id| crate::baseline_cache::host_key(opts, id, ctx.environment));
            let (c, t) = phase_measure(
                opts,
                ctx.log,
                insts,
                ctx.environment,
                &facts.counter_info,
                key.as_deref(),
            )?;
            *totals = t;
            c.worst(c0)
        }
        _ => phase_plan(opts, insts),
    })
}

/// The phases of the other stages, called directly ([`crate::stages`]).
fn stage_step(step: Phase, ctx: &PhaseCtx) -> Result<Exit, PhaseError> {
    match step {
        Phase::Build => stages::build::build_phase(ctx),
        Phase::Kat => stages::build::kat_phase(ctx),
        Phase::Baseline => stages::profile::baseline_phase(ctx),
        Phase::Profile => stages::profile::profile_phase(ctx),
        Phase::Hashcost => stages::profile::hashcost_phase(ctx),
        Phase::Ct => stages::ct::phase(ctx),
        Phase::Count => stages::count::phase(ctx),
        Phase::Check | Phase::All | Phase::Plan | Phase::Publish => Err(PhaseError::MissingInput(
            format!("phase {} is not a step", step.name()),
        )),
        Phase::Calibrate | Phase::Measure => Err(PhaseError::MissingInput(format!(
            "phase {} is a measuring step",
            step.name()
        ))),
    }
}

/// campaign.json at the end of a phase (end time and environment, the lease's release),
/// then the lease released.
fn record_end(phase: Phase, run: &LockedRun, host_setup: HostSetup, facts: &PhaseFacts) -> Res<()> {
    let end_env = host_setup.setup.environment(facts.probe.as_ref());
    let beside = host_setup.opts.beside_measuring;
    run.update_campaign(|c| {
        c.ended_utc = Some(utc_now());
        if !beside {
            c.environment_at_end = Some(Fields::from(
                end_env.as_object().cloned().unwrap_or_default(),
            ));
        }
        if let Some(l) = &host_setup.setup.lease {
            note_release(c, l);
        }
    })?;
    if let Some(l) = host_setup.setup.lease {
        facts.log.log(format!("lease CPU {} released", l.cpu));
        drop(l);
    }
    facts.log.log(format!("phase {} finished", phase.name()));
    Ok(())
}

/// Why `phase` cannot run with `opts`, checked before anything is written: the run directory
/// must exist (no phase creates one), the phases that read build.json need it (and entries
/// build.json still describes), a measuring phase needs instances. (Its CPU is checked by
/// the set-up, [`MeasuringSetup::open`], before the lease.)
fn refusal(phase: Phase, opts: &CampaignOptions) -> Option<String> {
    let run = &opts.run_dir;
    if !run.is_dir() {
        return Some(format!(
            "run directory {} does not exist (create it with `pqperf import … --run-dir {}`)",
            run.display(),
            run.display()
        ));
    }
    let needs_build = !matches!(phase, Phase::Build | Phase::All | Phase::Baseline);
    let build_json = opts.layout().build_json();
    if needs_build && !build_json.is_file() {
        return Some(format!(
            "{} does not exist: run `pqperf build --run-dir {}` (or `campaign build`) first",
            build_json.display(),
            run.display()
        ));
    }
    // A phase that tests or measures the built libraries refuses entries build.json no
    // longer describes (a re-import without a rebuild, a library a build did not finish);
    // `all` rebuilds them in its build phase.
    if !matches!(
        phase,
        Phase::Build | Phase::All | Phase::Baseline | Phase::Check | Phase::Publish
    ) {
        match pqperf_build::stale_builds(run, None, &opts.select) {
            Ok(lines) if !lines.is_empty() => {
                return Some(pqperf_build::stale_refusal(
                    &format!("phase {}", phase.name()),
                    run,
                    &lines,
                ));
            }
            Ok(_) => {}
            Err(e) => return Some(format!("phase {}: {e}", phase.name())),
        }
    }
    if matches!(phase, Phase::Calibrate | Phase::Measure | Phase::Plan)
        && let Ok(all) = measurable(opts)
        && let Some(msg) = empty_selection(phase, opts, &selected(opts, all))
    {
        return Some(msg);
    }
    None
}

/// The refusal of a measuring phase whose selection is empty (not for one shard of many,
/// which may have no unit).
fn empty_selection(
    ph: Phase,
    opts: &CampaignOptions,
    insts: &[pqperf_measure::instance::Instance],
) -> Option<String> {
    if !insts.is_empty() || opts.shard.is_some() || opts.select.deferred_only() {
        return None;
    }
    let n_all = measurable(opts).map(|v| v.len()).unwrap_or(0);
    Some(match opts.select.only_pattern() {
        Some(re) => format!(
            "phase {}: --only {:?} selects none of the {n_all} measurable instance(s) (<id>/<label> with KAT PASS; `--list` shows them)",
            ph.name(),
            re
        ),
        None => format!(
            "phase {}: nothing to do: {} lists no measurable instance (KAT PASS); run the kat phase first",
            ph.name(),
            opts.layout().build_json().display()
        ),
    })
}

/// Stamps `released_utc` on this process's entry of lease `l` (taken before the lock is
/// dropped, so a recorded window lies inside the held one).
fn note_release(c: &mut Campaign, l: &CpuLease) {
    let pid = u64::from(std::process::id());
    if let Some(e) = c
        .pqperf
        .as_mut()
        .and_then(|p| p.cpu_leases.as_mut())
        .and_then(|a| {
            a.iter_mut()
                .rev()
                .find(|e| e.pid == Some(pid) && e.acquired_utc == l.acquired_utc)
        })
    {
        e.released_utc = Some(Some(utc_now()));
    }
}
