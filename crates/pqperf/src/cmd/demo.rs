//! `pqperf demo`: the README's main command. On a fresh machine: import the PQClean corpus
//! (pinned crate, through cargo), build and KAT-check a representative set, calibrate and
//! measure it with a short trial target, check it for secret-dependent branches and memory
//! indices (valgrind memcheck), publish the dataset, validate it, render the pages
//! and the site, and say where everything is — and that the host is not fixed.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, bail};
use pqperf_campaign::Exit;
use pqperf_campaign::{self as campaign, CampaignOptions, Phase};
use pqperf_model::layout::RunLayout;
use pqperf_model::select::Selection;

/// `pqperf demo`: see [`run_demo`].
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Run directory.
    #[arg(long, default_value = "runs/demo")]
    run_dir: PathBuf,
    /// Seconds of timed work per trial of the reference protocol (default 0.05: this is a
    /// demo); given, it selects that protocol unless `--target-ci` is given too.
    #[arg(long, value_parser = super::options::parse_seconds)]
    trial_target: Option<f64>,
    /// Half-width in percent the `--target-ci` protocol runs each operation to (default 1;
    /// `off`: the reference protocol's 5 planned trials of `--trial-target`), as in `pqperf
    /// campaign`.
    #[arg(long, value_name = "PCT|off", value_parser = super::options::parse_target_ci)]
    target_ci: Option<super::options::TargetCiArg>,
    /// Benchmark CPU (default: the last CPU this process may use).
    #[arg(long)]
    cpu: Option<usize>,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

/// `pqperf demo`.
pub fn run_demo(a: DemoArgs) -> anyhow::Result<ExitCode> {
    // The campaign's rule: a trial target asks for the reference protocol.
    let target_ci = super::options::protocol(a.target_ci, a.trial_target.is_some(), true);
    run(&a.run_dir, a.trial_target.unwrap_or(0.05), target_ci, a.cpu)
}

/// The representative set: `<id>/<label>` of ML-DSA-44/65/87, Falcon-512,
/// SPHINCS+-SHAKE-128f-simple and ML-KEM-512/768/1024 (clean), plus ML-DSA-44 AVX2.
pub const DEMO_SET: &str = r"^(ml-dsa-(44|65|87)/ml-dsa-(44|65|87)|falcon-512/falcon-512|sphincs-shake-128f-simple/sphincs-shake-128f-simple|ml-kem-(512|768|1024)/ml-kem-(512|768|1024)|ml-dsa-44/ml-dsa-44-avx2)$";

fn step(name: &str, t0: Instant) {
    super::ui::note(format!(
        "demo: [{:6.1} s] {name}",
        t0.elapsed().as_secs_f64()
    ));
}

/// One demo step as a child pqperf process, with this process's containment and output level.
fn pqperf(args: &[&str]) -> anyhow::Result<()> {
    let exe = pqperf_ffi::emulation::self_exe()?;
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    // The containment flags belong to the commands that run candidate code.
    if matches!(
        args.first(),
        Some(&("import" | "build" | "kat" | "ct" | "campaign"))
    ) {
        all.extend(super::sandbox::child_args());
    }
    all.extend(super::ui::child_args());
    super::ui::detail(format!("demo: running pqperf {}", all.join(" ")));
    let st = Command::new(&exe)
        .args(&all)
        .status()
        .with_context(|| format!("running pqperf {}", args.join(" ")))?;
    if !st.success() {
        bail!("pqperf {} failed ({st})", args.join(" "));
    }
    Ok(())
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Runs the demo in `run_dir` (resumable: finished steps are skipped by their own rules).
pub fn run(
    run_dir: &Path,
    trial_target: f64,
    target_ci: Option<campaign::TargetCi>,
    cpu: Option<usize>,
) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    // The CPUs this process may use as started: the measuring phases move it off their
    // benchmark CPU, and the valgrind phases after them use every core again.
    let started_on = pqperf_ffi::affinity::get_affinity().ok();
    std::fs::create_dir_all(run_dir)?;
    let first = first_estimate(run_dir, trial_target, target_ci.is_some());
    super::ui::note(format!(
        "demo: expected duration about {} on a quiet machine ({}; load average now {:.1}: a busy machine takes longer; the measure phase states its own estimate after calibrating)",
        super::ui::human(first.total()),
        first.describe(),
        pqperf_ffi::procinfo::load_average()[0]
    ));
    let run = s(run_dir);
    let built: Vec<(String, String)> = campaign::load_build(run_dir)
        .map(|b| {
            b.instances
                .values()
                .filter(|e| e.kat != "NOLOG" && e.kat != "BUILDFAIL")
                .map(|e| (e.candidate.clone(), e.label.clone()))
                .collect()
        })
        .unwrap_or_default();
    let demo_set = Selection::only(Some(DEMO_SET)).expect("the demo set pattern compiles");
    if built
        .iter()
        .filter(|(id, label)| demo_set.selects(id, label))
        .count()
        < 9
    {
        step(
            "import the PQClean corpus (pinned pqcrypto-mldsa =0.1.2, via cargo)",
            t0,
        );
        pqperf(&["import", "pqclean", "--run-dir", &run])?;
        step("build the representative set (gcc, guide flags)", t0);
        pqperf(&["build", "--run-dir", &run, "--only", DEMO_SET])?;
        step("KAT gate (PQClean nistkat-sha256)", t0);
        pqperf(&["kat", "--run-dir", &run, "--only", DEMO_SET])?;
    } else {
        step("build and KAT already done in this run directory", t0);
    }
    let mut o = CampaignOptions::new(run_dir)?;
    if let Some(c) = cpu {
        o.cpu = c;
    }
    // The --target-ci protocol plans from the reference constants (its budget is what they
    // would spend); the reference protocol of the demo uses the short trial target.
    o.target_ci = target_ci;
    o.planning = pqperf_measure::plan::planning(
        if o.target_ci.is_some() {
            1.0
        } else {
            trial_target
        },
        900.0,
    );
    o.allow_unfixed_host = true;
    o.probe_attempts = 1;
    o.calibration_timeout = std::time::Duration::from_secs(600);
    o.register = Some(format!(
        "{} (demo registration: host not fixed)",
        pqperf_measure::host::environment(o.cpu, None)["cpu_model"]
            .as_str()
            .unwrap_or("unknown CPU")
    ));
    o.publish_to = Some(RunLayout::new(run_dir).default_dataset());
    // The profiles of verify and dec walk an input pool that takes no longer to prepare than
    // the profiled calls take (SPHINCS+ verify: 32 signatures, 1.6 s, where an input per call
    // was 366 signatures, 18 s of the demo).
    o.profile_prep_share = Some(1.0);
    o.echo = !super::ui::quiet();
    o.shared_run_lock = true;
    // The valgrind phases (the constant-time check, which needs only the builds, then the
    // instruction counts, which use the calibration's single-call times and start once it
    // has ended) run beside the calibrate, measure and profile phases: on the CPUs this
    // process started with less the benchmark CPU, at nice 19 (the measuring phases' own
    // work on those CPUs, the parent and the processes prepared beside the timed one, comes
    // first), on every core once the profile phase has ended. They leave the run's host
    // facts to the measuring phases (`beside_measuring`). With no CPU besides the benchmark
    // CPU they run after the calibration and before the measure phase, never beside it. A
    // failing check is logged by its phase and does not stop the demo; the demo's exit
    // status says it failed (1, the phase named in its `FAILED:` line).
    let mut vg = o.clone();
    vg.select = demo_set;
    vg.echo = false;
    let beside: Vec<usize> = started_on
        .iter()
        .flatten()
        .copied()
        .filter(|&c| c != o.cpu)
        .collect();
    let (calibrated, wait_calibrated) = std::sync::mpsc::channel::<()>();
    let valgrind = if beside.is_empty() {
        None
    } else {
        // The host check of a phase probes the CPU it names: these name the one they run on.
        vg.cpu = beside[0];
        vg.beside_measuring = true;
        // The calibrate phase registers the system, beside them.
        vg.register = None;
        step(
            &format!(
                "constant-time check (valgrind memcheck, secret inputs marked undefined), then instruction counts (callgrind, only the operation counted, after the calibration): beside the timing phases, on CPU {} at low priority",
                cpu_list(&beside)
            ),
            t0,
        );
        let vg = vg.clone();
        let cpus = beside.clone();
        Some(std::thread::spawn(move || {
            valgrind_phases(&vg, &cpus, t0, &wait_calibrated)
        }))
    };
    step(
        "calibrate (one cold call and a few warm calls per operation, fresh pinned processes)",
        t0,
    );
    // A failing phase does not stop the demo: what can still be produced is, and the exit
    // status says that something failed (calibrate and measure exit 1 when a unit did not
    // complete, 2 when there was nothing to measure).
    let mut failed: Vec<String> = Vec::new();
    let cal = campaign::run_phase(Phase::Calibrate, &o);
    let _ = calibrated.send(());
    let cal = cal?;
    if cal.code != Exit::Done {
        failed.push(format!("calibrate (exit status {})", cal.code));
    }
    if valgrind.is_none() {
        // Instruction counts need no quiet CPU but must not share the benchmark CPU with
        // timing: before the measure phase, on the cores this process started with.
        if let Some(cpus) = &started_on {
            let _ = pqperf_ffi::affinity::set_affinity(cpus);
        }
        step(
            "constant-time check (valgrind memcheck, secret inputs marked undefined)",
            t0,
        );
        failed.extend(phase_failure(
            Phase::Ct,
            campaign::run_phase(Phase::Ct, &vg),
        ));
        step(
            "instruction counts (valgrind callgrind, only the operation counted, every core)",
            t0,
        );
        failed.extend(phase_failure(
            Phase::Count,
            campaign::run_phase(Phase::Count, &vg),
        ));
    }
    let plan = planned_measure(&o);
    step(
        &match target_ci.map(campaign::TargetCi::percent) {
            Some(p) => format!(
                "measure (short trials in fresh processes until ±{p} % or the reference's budget)"
            ),
            None => format!(
                "measure (5 trials per operation, trial target {trial_target} s{})",
                match plan {
                    Some((n, s)) => format!(
                        "; the plan of {n} operation(s) counts {} of reference trials, to which the sampled trials and the memory pass add",
                        super::ui::human(std::time::Duration::from_secs_f64(s))
                    ),
                    None => String::new(),
                }
            ),
        },
        t0,
    );
    let m = campaign::run_phase(Phase::Measure, &o)?;
    if m.code != Exit::Done {
        failed.push(format!("measure (exit status {})", m.code));
    }
    step("profile (symmetric-primitive shares)", t0);
    match campaign::run_phase(Phase::Profile, &o) {
        Ok(p) if p.code == Exit::Done => {}
        Ok(p) => failed.push(format!("profile (exit status {})", p.code)),
        Err(e) => failed.push(format!("profile ({e})")),
    }
    if let Some(h) = valgrind {
        // The timing phases are over: the valgrind phases get every core this process
        // started with, at normal priority where this process may raise it back.
        if let Some(cpus) = &started_on {
            widen(cpus);
        }
        step(
            "waiting for the constant-time check and the instruction counts",
            t0,
        );
        match h.join() {
            Ok(f) => failed.extend(f),
            Err(_) => failed.push("ct and count (their thread panicked)".into()),
        }
    }
    step("publish", t0);
    let p = campaign::run_phase(Phase::Publish, &o)?;
    if p.code != Exit::Done {
        bail!("publish failed ({})", p.code);
    }
    let layout = RunLayout::new(run_dir);
    let ds: PathBuf = layout.default_dataset();
    let dss = s(&ds);
    let mut attempt = |name: &str, args: &[&str]| -> bool {
        match pqperf(args) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("demo: {name} failed: {e:#}");
                failed.push(name.to_string());
                false
            }
        }
    };
    // Pages first, then validate: a resumed demo's publish makes the pages of its previous
    // run stale, and validate compares the pages it finds with the evidence.
    step("render the pages", t0);
    let pages_ok = attempt("report", &["report", &dss]);
    step("validate the published dataset and its pages", t0);
    attempt("validate", &["validate", &dss]);
    let site = layout.demo_site();
    step("render the site", t0);
    let site_ok = attempt("site", &["site", &dss, "--out", &s(&site)]);
    let wall = t0.elapsed().as_secs_f64();
    println!();
    println!("pqperf demo finished in {wall:.0} s.");
    println!("  dataset: {}", ds.join("performance/data").display());
    if pages_ok {
        println!(
            "  pages:   {} (summary), {}/<id>/perf_<system>.md",
            ds.join("performance").display(),
            ds.display()
        );
    } else {
        println!("  pages:   not rendered (see the error above)");
    }
    if site_ok {
        println!("  site:    {}", site.join("index.html").display());
    } else {
        println!("  site:    not rendered (see the error above)");
    }
    println!(
        "  counter: {}",
        describe_counter(&o.run_dir).unwrap_or_else(|| "unknown".into())
    );
    println!(
        "  measure phase: {} records ({} kept from before), {:.1} s of driver processes, phase wall {:.1} s",
        m.totals.records, m.totals.skipped, m.totals.process_s, m.wall_s,
    );
    if m.totals.budget.count > 0 {
        println!("  {}", m.totals.budget.log_line(m.wall_s));
    }
    if m.host_problems.is_empty() {
        println!("  host: no host problem found.");
    } else {
        println!(
            "  THE HOST IS NOT FIXED: these numbers come from an unprepared machine and are not comparable with a fixed-clock system:"
        );
        for p in &m.host_problems {
            println!("    - {p}");
        }
    }
    if !failed.is_empty() {
        println!("  FAILED: {}", failed.join("; "));
        return Ok(Exit::Failed.into());
    }
    Ok(Exit::Done.into())
}

/// The `FAILED:` entry of a phase that did not end `Done` (its exit status, or its error).
fn phase_failure(
    phase: Phase,
    r: Result<campaign::PhaseOutcome, campaign::CampaignError>,
) -> Option<String> {
    match r {
        Ok(o) if o.code == Exit::Done => None,
        Ok(o) => Some(format!("{} (exit status {})", phase.name(), o.code)),
        Err(e) => Some(format!("{} ({e})", phase.name())),
    }
}

/// The ct and count phases beside the timing phases (see [`run`]): this thread and what it
/// starts on `cpus`, in the `SCHED_IDLE` class (at nice 19 where that is refused): they run
/// when the parent, the preparers and the held processes of the measuring phases leave the
/// CPU idle, and a waking one of those preempts them at once. Count starts once the
/// calibration has ended (`calibrated`). Returns the phases that failed.
fn valgrind_phases(
    o: &CampaignOptions,
    cpus: &[usize],
    t0: Instant,
    calibrated: &std::sync::mpsc::Receiver<()>,
) -> Vec<String> {
    let _ = pqperf_ffi::affinity::set_affinity(cpus);
    let _ = pqperf_ffi::affinity::set_nice_of(0, 19);
    if beside_class() == BesideClass::Idle {
        let _ = pqperf_ffi::affinity::set_idle_of(0, true);
    }
    let mut failed = Vec::new();
    let mut one = |phase: Phase, what: &str| {
        let r = campaign::run_phase(phase, o);
        let how = match &r {
            Ok(p) => format!("exit status {}, {:.1} s", p.code, p.wall_s),
            Err(e) => format!("{e}"),
        };
        super::ui::note(format!(
            "demo: [{:6.1} s] {what} ended beside ({how})",
            t0.elapsed().as_secs_f64(),
        ));
        failed.extend(phase_failure(phase, r));
    };
    one(Phase::Ct, "constant-time check");
    // A calibrate phase that ended in an error drops the sender: count anyway.
    let _ = calibrated.recv();
    one(Phase::Count, "instruction counts");
    failed
}

/// How the valgrind phases run beside the timing phases: `SCHED_IDLE` (the default), or
/// `PQPERF_DEMO_BESIDE=nice` (nice 19 only: session 16's way, kept for A/B runs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum BesideClass {
    Idle,
    Nice,
}

fn beside_class() -> BesideClass {
    match std::env::var("PQPERF_DEMO_BESIDE").as_deref() {
        Ok("nice") => BesideClass::Nice,
        _ => BesideClass::Idle,
    }
}

/// Every thread of this process on `cpus` again, in `SCHED_OTHER` at nice 0 where permitted
/// (the valgrind phases' threads after the timing phases; threads and valgrind processes
/// they start later inherit it; a valgrind process already running finishes where it is).
fn widen(cpus: &[usize]) {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for t in tasks.flatten() {
        if let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) {
            let _ = pqperf_ffi::affinity::set_affinity_of(tid, cpus);
            if pqperf_ffi::affinity::is_idle(tid).unwrap_or(false) {
                let _ = pqperf_ffi::affinity::set_idle_of(tid, false);
            }
            let _ = pqperf_ffi::affinity::set_nice_of(tid, 0);
        }
    }
}

/// `0,2,3`: a list of CPUs.
fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Instances of [`DEMO_SET`] and their timed operations (3 each: keygen/sign/verify or
/// keygen/enc/dec).
const DEMO_INSTANCES: usize = 9;
const DEMO_OPS: usize = 27;

/// What the demo's steps cost on a quiet 2-core VM (seconds): a first estimate, printed before
/// anything runs, with the load average it is printed under (a busy machine takes longer).
/// The measure phase states its own estimate after calibrating (`PlannedOp::likely`).
/// Derived (issue 41) from a quiet run (demo 192 s, measure phase 127 s before the input pools
/// were bounded) and the split of a run under load 4–6 (import 3 s, build 36, ct 46,
/// calibrate 3, profile 28, publish/pages/site 4, count 44): the steps other than measure
/// took 0.54× on the quiet machine; the measure phase took 0.37× after the pools were
/// bounded (433 s → 160 s, both under load 12–16).
mod cost {
    /// Importing the PQClean corpus (cargo locating the pinned crate).
    pub const IMPORT: f64 = 3.0;
    /// Building one instance (two at a time): the set's builds took 16 s of gcc in 10.8 s in
    /// session 14's fresh clone (load ≈ 2), the AVX2 build 8 s of it; now that it starts
    /// first, about half the sum.
    pub const BUILD_PER_INSTANCE: f64 = 1.8;
    /// The KAT gate of the set.
    pub const KAT: f64 = 2.0;
    /// The constant-time check of one instance under valgrind (two at a time, on two cores).
    pub const CT_PER_INSTANCE: f64 = 5.5;
    /// The instruction counts of the set (callgrind, on two cores): 44 s in the fresh demo at
    /// load ≈ 2 before the counting processes prepared only their own inputs, × 0.58 (the CPU
    /// ratio of `pqperf count --redo` on that run, after / before).
    pub const COUNT: f64 = 26.0;
    /// Calibrating one operation: a cold call and a warm process of about 50 ms of calls
    /// (verify/dec: a few pool entries too); the calibrate phase took 6 s for 27 operations
    /// at load 4 (session 15).
    pub const CALIBRATE_PER_OP: f64 = 0.25;
    /// Measuring one operation under `--target-ci` (the demo's default): short trials in
    /// fresh processes until ±1 % or the reference's budget, re-runs and the output check's
    /// replay included. The fresh-clone demos' measure phases took 74.4 s (session 15) and
    /// 100.9 s (session 16, valgrind beside at nice 19, 1.49 attempts a process) for 27
    /// operations: 2.8 and 3.7 s each (2.0 before: the first estimate's measure step was
    /// 0.54 of session 16's phase).
    pub const MEASURE_PER_OP_TARGET_CI: f64 = 3.0;
    /// One driver process of the reference protocol beyond its trials: set-up (sandbox,
    /// loading the library), warm-ups, the memory pass, the parent's checks.
    pub const PROCESS_SETUP: f64 = 0.1;
    /// Profile, publish, validate, pages and site: the profile phase took 38.8 s in session
    /// 14's fresh clone (load ≈ 2); the demo's bounded verify pools
    /// (`CampaignOptions::profile_prep_share`) took 17 s of CPU off it (A/B on copies of one
    /// run: 46.1 → 28.8 CPU-s); the rest ≈ 1 s.
    pub const REST: f64 = 22.0;
    /// Publish, pages, validate and site (part of [`REST`]).
    pub const PUBLISH: f64 = 1.0;
    /// The share of a core the valgrind phases (ct, count) get beside the calibrate, measure
    /// and profile phases, in `SCHED_IDLE` on the CPU the measuring phases' parent and held
    /// processes use: derived, not measured on a quiet machine (under load 5–7 they ran
    /// wholly beside a 123 s measure and a 43 s profile phase, 160 s of valgrind phases, at
    /// nice 19; in `SCHED_IDLE` under load 6–10 they ended 8 s after a 147 s measure and an
    /// 82 s profile phase).
    pub const BESIDE_SHARE: f64 = 0.7;
}

/// The demo's first estimate: the steps that this run directory still lacks, with their
/// expected seconds.
struct Estimate(Vec<(&'static str, f64)>);

impl Estimate {
    fn total(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.0.iter().map(|(_, s)| s).sum())
    }

    fn describe(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .filter(|(_, s)| *s >= 1.0)
            .map(|(n, s)| {
                format!(
                    "{n} {}",
                    super::ui::human(std::time::Duration::from_secs_f64(*s))
                )
            })
            .collect();
        parts.join(", ")
    }
}

/// The first estimate for `run_dir`: every step, less the builds and records already there.
/// The measure cost grows with a trial target above the demo's default.
fn first_estimate(run_dir: &Path, trial_target: f64, target_ci: bool) -> Estimate {
    let built = campaign::load_build(run_dir)
        .map(|b| {
            b.instances
                .values()
                .filter(|e| e.kat != "NOLOG" && e.kat != "BUILDFAIL")
                .count()
        })
        .unwrap_or(0);
    let recorded = campaign::walk_files(&RunLayout::new(run_dir).records_dir())
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .count();
    let ops_left = DEMO_OPS.saturating_sub(recorded) as f64;
    let mut steps = Vec::new();
    if built < DEMO_INSTANCES {
        let n = (DEMO_INSTANCES - built) as f64;
        steps.push(("import", cost::IMPORT));
        steps.push(("build", n * cost::BUILD_PER_INSTANCE / 2.0 + cost::KAT));
    }
    // Evidence already there (a resumed demo): those steps keep it.
    let json_files = |dir: std::path::PathBuf| {
        campaign::walk_files(&dir)
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .count()
    };
    let layout = RunLayout::new(run_dir);
    let ct_done = json_files(layout.ct_dir()) >= DEMO_INSTANCES;
    let count_done = json_files(layout.count_dir()) >= DEMO_OPS;
    // The valgrind phases' wall on two cores, as they ran before the timing phases.
    let mut valgrind = Vec::new();
    if !ct_done {
        valgrind.push((
            "constant-time check",
            DEMO_INSTANCES as f64 * cost::CT_PER_INSTANCE / 2.0,
        ));
    }
    if !count_done {
        valgrind.push(("instruction counts", cost::COUNT));
    }
    let beside = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if !beside {
        steps.append(&mut valgrind);
    }
    let calibrate = ops_left * cost::CALIBRATE_PER_OP;
    steps.push(("calibrate", calibrate));
    // The reference protocol: 5 processes, each a reference trial of the target and a sampled
    // trial of at most as long.
    let per_op = if target_ci {
        cost::MEASURE_PER_OP_TARGET_CI
    } else {
        5.0 * (2.0 * trial_target + cost::PROCESS_SETUP)
    };
    let measure = ops_left * per_op;
    steps.push(("measure", measure));
    steps.push(("profile, publish and pages", cost::REST));
    if beside && !valgrind.is_empty() {
        // Beside the calibrate, measure and profile phases they get a share of one core;
        // what is left runs on every core after them.
        let one_core: f64 = valgrind.iter().map(|(_, s)| 2.0 * s).sum();
        let done_beside = cost::BESIDE_SHARE * (calibrate + measure + cost::REST - cost::PUBLISH);
        steps.push((
            "valgrind phases after the timing phases",
            (one_core - done_beside).max(0.0) / 2.0,
        ));
    }
    Estimate(steps)
}

/// The measure phase's own plan after calibrating: operations not yet recorded and the
/// seconds their plans estimate (`pqperf_measure::plan`), if anything is planned.
fn planned_measure(o: &CampaignOptions) -> Option<(usize, f64)> {
    let insts = campaign::selected(o, campaign::measurable(o).ok()?);
    let planned = pqperf_measure::plan::plan_all(&o.unit(), &insts);
    let todo: Vec<f64> = planned
        .iter()
        .filter(|p| !pqperf_measure::record::rec_path(&o.run_dir, &p.inst, &p.op.key()).exists())
        .filter_map(|p| p.plan.as_ref().map(pqperf_measure::plan::estimated_s))
        .collect();
    (!todo.is_empty()).then(|| (todo.len(), todo.iter().sum()))
}

/// The counter the measuring driver children named (the first timing record's `pqperf`
/// object: the one source of truth for the counter kind), else the one campaign.json names.
fn describe_counter(run: &Path) -> Option<String> {
    let read = |p: &Path| -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(p).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["pqperf"]["counter"]
            .is_string()
            .then(|| v["pqperf"].clone())
    };
    let layout = RunLayout::new(run);
    let c = campaign::walk_files(&layout.records_dir())
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .find_map(|p| read(p))
        .or_else(|| read(&layout.campaign_json()))?;
    let name = c["counter"].as_str()?;
    Some(
        if pqperf_model::vocab::Counter::parse(name).is_core_cycles() {
            format!("{name} (user-mode core cycles)")
        } else {
            format!(
                "{name} at {} Hz: reference ticks, NOT core cycles (no hardware PMU here); the pages' timing columns count ticks and say so",
                c["counter_hz"]
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first estimate of a fresh run directory: every step at its constant, and the
    /// valgrind phases' part that the share of a core beside the timing phases leaves for
    /// after them; a directory whose records are all there drops the measure step.
    #[test]
    fn the_first_estimate_adds_up_its_steps() {
        let dir = tempfile::tempdir().unwrap();
        let e = first_estimate(dir.path(), 0.05, true);
        let step = |n: &str| e.0.iter().find(|(m, _)| *m == n).map(|(_, s)| *s);
        let ops = DEMO_OPS as f64;
        let measure = ops * cost::MEASURE_PER_OP_TARGET_CI;
        let calibrate = ops * cost::CALIBRATE_PER_OP;
        assert_eq!(step("measure"), Some(measure));
        assert_eq!(step("calibrate"), Some(calibrate));
        assert_eq!(
            step("build"),
            Some(DEMO_INSTANCES as f64 * cost::BUILD_PER_INSTANCE / 2.0 + cost::KAT)
        );
        if std::thread::available_parallelism().is_ok_and(|n| n.get() > 1) {
            let one_core =
                2.0 * (DEMO_INSTANCES as f64 * cost::CT_PER_INSTANCE / 2.0 + cost::COUNT);
            let beside = cost::BESIDE_SHARE * (calibrate + measure + cost::REST - cost::PUBLISH);
            let after = step("valgrind phases after the timing phases").unwrap();
            assert!((after - (one_core - beside).max(0.0) / 2.0).abs() < 1e-9);
            assert!(step("constant-time check").is_none());
        }
        let total: f64 = e.0.iter().map(|(_, s)| s).sum();
        assert!((e.total().as_secs_f64() - total).abs() < 1e-6);
        // The reference protocol: 5 processes of two trials each and their set-up.
        let r = first_estimate(dir.path(), 0.2, false);
        let m = r.0.iter().find(|(n, _)| *n == "measure").unwrap().1;
        assert!((m - ops * 5.0 * (2.0 * 0.2 + cost::PROCESS_SETUP)).abs() < 1e-9);
    }
}
