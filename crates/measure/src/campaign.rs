//! Campaign orchestration (method §2, §6, §7, §12): phases over a run directory, resumable by
//! file existence, with campaign.json bookkeeping under a lock, a log file, progress bars on a
//! terminal, and hooks through which other stages (build, KAT, profile, baseline, hashcost)
//! plug their phases in.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pqperf_model::buildjson::{BuildEntry, BuildJson};
use pqperf_model::catalog::{ApiKind, Catalog};
use pqperf_model::fields::Fields;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::pyjson;
use pqperf_model::record::{self, PqperfRecordExt, Process, Record};
use pqperf_model::sidecsv::write_csv;
use pqperf_model::stats::{ProcessTotals, Quantiles, RecordStats};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::driver::{ApiSpec, DriverArgs, HASH_SIZES};
use crate::host::{self, CheckOptions};
use crate::plan::{self, Plan, Planning};
use crate::runner::{self, DriverExe, Run};
use crate::{MeasureError, systems};

type Res<T> = Result<T, MeasureError>;

/// Default `--defer` regex of the reference (very slow NGCC instances).
pub const DEFAULT_DEFER: &str = r"^(sign-30/TRINE-512-|sign-32/UVW-512$)";

/// Statuses timed although the KAT did not pass (method §2.6).
pub const TIMED_WITHOUT_PASS: [&str; 6] = [
    "MISMATCH",
    "NOKAT",
    "PARTIAL",
    "CRYPTOFAIL",
    "TIMEOUT",
    "OVERFLOW",
];

/// Reference guide flags and harness additions recorded in campaign.json (§2.5).
pub fn arch_config(arch: &str) -> Value {
    match arch {
        "aarch64" => json!({
            "reference": "-std=c99 -Wpedantic -Wall -Wextra -O2",
            "performance": "-O3 -march=armv8.2-a+sve -flto -fomit-frame-pointer -std=c99 -Wpedantic -Wall -Wextra",
            "optimized_families": [],
        }),
        _ => json!({
            "reference": "-std=c99 -Wpedantic -Wall -Wextra -O2",
            "performance": "-O3 -march=x86-64 -mavx2 -mtune=native -flto -fomit-frame-pointer -std=c99 -Wpedantic -Wall -Wextra",
            "optimized_families": [],
        }),
    }
}

/// Flags appended to the guide's reference flags (§2.5).
pub const HARNESS_ADDITIONS: &str = "-fPIC -D_GNU_SOURCE -Wno-error=implicit-function-declaration -Wno-error=incompatible-pointer-types -Wno-error=int-conversion -Wno-error=implicit-int";

/// A campaign phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Host problems only.
    Check,
    /// Build hook.
    Build,
    /// KAT hook.
    Kat,
    /// ICCS baseline hook.
    Baseline,
    /// One-call calibration runs.
    Calibrate,
    /// Timing records.
    Measure,
    /// Profile hook.
    Profile,
    /// Hash-cost hook.
    Hashcost,
    /// Constant-time check hook (not part of `all`).
    Ct,
    /// build, kat, baseline, calibrate, measure, profile, hashcost.
    All,
    /// Plan preview.
    Plan,
    /// Dataset publication.
    Publish,
}

impl Phase {
    /// Parses a phase name.
    pub fn parse(s: &str) -> Option<Phase> {
        Some(match s {
            "check" => Phase::Check,
            "build" => Phase::Build,
            "kat" => Phase::Kat,
            "baseline" => Phase::Baseline,
            "calibrate" => Phase::Calibrate,
            "measure" => Phase::Measure,
            "profile" => Phase::Profile,
            "hashcost" => Phase::Hashcost,
            "ct" => Phase::Ct,
            "all" => Phase::All,
            "plan" => Phase::Plan,
            "publish" => Phase::Publish,
            _ => return None,
        })
    }

    /// The phase name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Check => "check",
            Phase::Build => "build",
            Phase::Kat => "kat",
            Phase::Baseline => "baseline",
            Phase::Calibrate => "calibrate",
            Phase::Measure => "measure",
            Phase::Profile => "profile",
            Phase::Hashcost => "hashcost",
            Phase::Ct => "ct",
            Phase::All => "all",
            Phase::Plan => "plan",
            Phase::Publish => "publish",
        }
    }

    /// Phases refused on an unfixed host without `--allow-unfixed-host`.
    pub fn measuring(self) -> bool {
        matches!(
            self,
            Phase::Baseline
                | Phase::Calibrate
                | Phase::Measure
                | Phase::Profile
                | Phase::Hashcost
                | Phase::All
        )
    }
}

/// Options of a campaign invocation.
#[derive(Debug, Clone)]
pub struct CampaignOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Benchmark CPU.
    pub cpu: usize,
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
    /// Directory of the shared locks (`.cpu<N>.lock`; default: the run dir's parent).
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
            only: None,
            defer: None,
            deferred_only: false,
            system: None,
            shard: None,
            planning: plan::reference_planning(),
            allow_unfixed_host: false,
            samples: true,
            register: None,
            prior_data: None,
            calibration_timeout: Duration::from_secs(6 * 3600),
            probe_attempts: 3,
            publish_to: None,
            lock_dir: None,
            echo: true,
        })
    }

    fn lock_dir(&self) -> PathBuf {
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

/// Timestamped log (`campaign.log`), also echoed to stdout.
pub struct Logger {
    file: Mutex<Option<std::fs::File>>,
    echo: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Logger {
    /// Appends to `path`.
    pub fn open(path: &Path, echo: bool) -> Res<Logger> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Logger {
            file: Mutex::new(Some(f)),
            echo,
            bar: Mutex::new(None),
        })
    }

    /// A logger that writes nowhere.
    pub fn null() -> Logger {
        Logger {
            file: Mutex::new(None),
            echo: false,
            bar: Mutex::new(None),
        }
    }

    /// Logs one line.
    pub fn log(&self, msg: impl AsRef<str>) {
        let line = format!("{} {}", local_stamp(), msg.as_ref());
        if let Ok(mut f) = self.file.lock()
            && let Some(f) = f.as_mut()
        {
            let _ = writeln!(f, "{line}");
        }
        if self.echo {
            let bar = self.bar.lock().ok().and_then(|b| b.clone());
            match bar {
                Some(b) if !b.is_hidden() => b.println(&line),
                _ => println!("{line}"),
            }
        }
    }

    fn set_bar(&self, b: Option<ProgressBar>) {
        if let Ok(mut g) = self.bar.lock() {
            *g = b;
        }
    }
}

fn local_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    now.format(&f).unwrap_or_default()
}

/// ISO-8601 UTC with microseconds and `+00:00`, as the reference writes.
pub fn utc_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    let f = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]+00:00"
    );
    now.format(&f).unwrap_or_default()
}

/// Progress bar on stderr when it is a terminal (hidden otherwise), in estimated seconds.
fn progress(total_s: f64, msg: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let b = ProgressBar::with_draw_target(Some((total_s * 1000.0).max(1.0) as u64), target);
    b.set_style(
        ProgressStyle::with_template(
            "{msg:24} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b.set_message(msg.to_string());
    b
}

/// What a hook sees.
pub struct PhaseCtx<'a> {
    /// The options of this invocation.
    pub opts: &'a CampaignOptions,
    /// The campaign log.
    pub log: &'a Logger,
    /// Host problems found at the start of the phase.
    pub host_problems: &'a [String],
    /// System id, when known.
    pub system_id: Option<&'a str>,
    /// The environment snapshot of this phase (§3.2).
    pub environment: &'a Value,
}

/// A phase implemented by another stage. Returns the phase's exit status (0 = fine).
pub type Hook = Box<dyn Fn(&PhaseCtx) -> Result<i32, String> + Send + Sync>;

/// Phases plugged in by other stages (wired by the CLI).
#[derive(Default)]
pub struct Hooks {
    /// `build`: builds every catalog instance, writes build.json (crate `pqperf-build`).
    pub build: Option<Hook>,
    /// `kat`: KAT gate, updates build.json (crate `pqperf-kat`).
    pub kat: Option<Hook>,
    /// `baseline`: ICCS helpers as hash instances (crate `pqperf-profile`).
    pub baseline: Option<Hook>,
    /// `profile`: symmetric-primitive profiles (crate `pqperf-profile`).
    pub profile: Option<Hook>,
    /// `hashcost`: per-call-shape costs (crate `pqperf-profile`).
    pub hashcost: Option<Hook>,
    /// `ct`: constant-time check under valgrind memcheck (crate `pqperf-ct`).
    pub ct: Option<Hook>,
}

/// One measurable instance (§2.7) with what the driver needs.
#[derive(Debug, Clone)]
pub struct Instance {
    /// build.json entry.
    pub entry: BuildEntry,
    /// `sign`, `kem`, `kex`, `hash`.
    pub category: String,
    /// API of the library.
    pub api: ApiSpec,
    /// Timed without a KAT PASS.
    pub kat_not_passed: bool,
}

impl Instance {
    /// `cand/label`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.entry.candidate, self.entry.label)
    }
}

/// Operation keys of a category (§2.8); KEX steps need the exchange calibration.
pub fn base_ops(category: &str) -> Vec<(String, String, u64)> {
    match category {
        "kem" => ["keygen", "enc", "dec"]
            .iter()
            .map(|o| (o.to_string(), o.to_string(), 0))
            .collect(),
        "sign" => ["keygen", "sign", "verify"]
            .iter()
            .map(|o| (o.to_string(), o.to_string(), 0))
            .collect(),
        "hash" | "iccs" => HASH_SIZES
            .iter()
            .map(|n| (format!("hash_{n}"), "hash".to_string(), *n))
            .collect(),
        "kex" => vec![("exchange".into(), "exchange".into(), 0)],
        _ => Vec::new(),
    }
}

fn kex_steps(passes: u64) -> Vec<String> {
    let mut v = vec!["init_a".to_string(), "init_b".to_string()];
    v.extend((1..=passes).map(|k| format!("pass{k}")));
    v.push("derive_a".into());
    v.push("derive_b".into());
    v
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    pyjson::parse(path, &text).ok()
}

fn write_json(path: &Path, v: &Value) -> Res<()> {
    write_atomic(path, pyjson::value_to_string(v).as_bytes())?;
    Ok(())
}

/// The run's build.json (empty if missing).
pub fn load_build(run: &Path) -> Res<BuildJson> {
    let p = run.join("build.json");
    if !p.is_file() {
        return Ok(BuildJson::default());
    }
    pyjson::read(&p, Path::new("build.json")).map_err(|e| MeasureError::msg(e.to_string()))
}

/// The run's catalog (`catalog.toml`): `None` when there is none, an error naming the file
/// and line when it is malformed.
pub fn load_catalog(run: &Path) -> Res<Option<Catalog>> {
    let p = run.join("catalog.toml");
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p)
        .map_err(|e| MeasureError::msg(format!("{}: {e}", p.display())))?;
    Catalog::parse(&text, &p)
        .map(Some)
        .map_err(|e| MeasureError::msg(e.to_string()))
}

/// Rows of `kat_issues.csv` next to the registry, if present: (id, label regex, action).
/// A malformed file or label regex is an error naming the file and line.
fn kat_issues(opts: &CampaignOptions) -> Res<Vec<(String, Regex, String)>> {
    let p = opts
        .systems_csv
        .parent()
        .unwrap_or(Path::new("."))
        .join("kat_issues.csv");
    if !p.exists() {
        return Ok(Vec::new());
    }
    let bad = |e: pqperf_model::ModelError| MeasureError::msg(e.to_string());
    let t = pqperf_model::sidecsv::CsvTable::read(&p, &p).map_err(bad)?;
    t.kat_issues()
        .map_err(bad)?
        .into_iter()
        .map(|k| {
            let re = Regex::new(&k.label).map_err(|e| {
                MeasureError::msg(format!(
                    "{}:{}: Label {:?} is not a valid regex: {e}",
                    p.display(),
                    k.line,
                    k.label
                ))
            })?;
            Ok((k.id, re, k.action))
        })
        .collect()
}

/// Measurable instances of the run (§2.7), in build order.
pub fn measurable(opts: &CampaignOptions) -> Res<Vec<Instance>> {
    let build = load_build(&opts.run_dir)?;
    let catalog = load_catalog(&opts.run_dir)?;
    let issues = kat_issues(opts)?;
    let mut out = Vec::new();
    for e in build.instances.values() {
        if issues
            .iter()
            .any(|(id, re, act)| id == &e.candidate && re.is_match(&e.label) && act == "exclude")
        {
            continue;
        }
        let pass = e.kat == "PASS";
        let timed = TIMED_WITHOUT_PASS.contains(&e.kat.as_str());
        if !(pass || timed) || e.library.is_none() {
            continue;
        }
        let cat_inst = catalog.as_ref().and_then(|c| {
            c.instances()
                .find(|(c, i)| c.id == e.candidate && i.label == e.label)
        });
        let category = match cat_inst {
            Some((c, _)) => c.kind.as_str().to_string(),
            None if e.candidate == "iccs" => "iccs".to_string(),
            None => e
                .candidate
                .split('-')
                .next()
                .unwrap_or_default()
                .to_string(),
        };
        let api = match cat_inst {
            Some((c, i)) if i.api == ApiKind::Nist => {
                let Some(n) = &i.nist else {
                    return Err(MeasureError::msg(format!(
                        "catalog: {}/{} has api nist but no [nist] sizes",
                        c.id, i.label
                    )));
                };
                ApiSpec::Nist {
                    kind: c.kind.as_str().to_string(),
                    namespace: n.namespace.clone(),
                    pk: n.pk_bytes,
                    sk: n.sk_bytes,
                    out: n.sig_bytes.or(n.ct_bytes).unwrap_or(0),
                    ss: n.ss_bytes.unwrap_or(0),
                    ctx: n.ctx,
                    id: c.id.clone(),
                    instance: i.instance.clone(),
                }
            }
            _ => ApiSpec::Iccs,
        };
        out.push(Instance {
            entry: e.clone(),
            category,
            api,
            kat_not_passed: !pass,
        });
    }
    Ok(out)
}

/// Prior cost per `cand/label`: Σ of process wall seconds over published records.
pub fn prior_costs(data: &Path) -> BTreeMap<String, f64> {
    let mut costs = BTreeMap::new();
    let Ok(systems) = std::fs::read_dir(data) else {
        return costs;
    };
    let mut files = Vec::new();
    for s in systems.flatten() {
        let Ok(cands) = std::fs::read_dir(s.path().join("records")) else {
            continue;
        };
        for c in cands.flatten() {
            if let Ok(fs) = std::fs::read_dir(c.path()) {
                files.extend(fs.flatten().map(|f| f.path()));
            }
        }
    }
    files.sort();
    for f in files {
        let Some(v) = read_json(&f) else { continue };
        let (Some(c), Some(l)) = (v["candidate"].as_str(), v["label"].as_str()) else {
            continue;
        };
        let w: f64 = v["processes"]
            .as_array()
            .map(|ps| ps.iter().filter_map(|p| p["wall_s"].as_f64()).sum())
            .unwrap_or(0.0);
        *costs.entry(format!("{c}/{l}")).or_insert(0.0) += w;
    }
    costs
}

/// Instances selected by `--only`, `--deferred-only`, `--defer` and `--shard`.
pub fn selected(opts: &CampaignOptions, all: Vec<Instance>) -> Vec<Instance> {
    let defer_re = opts.defer.clone().or_else(|| {
        opts.deferred_only
            .then(|| Regex::new(DEFAULT_DEFER).expect("regex"))
    });
    let shard_map = opts.shard.map(|(_, n)| {
        let costs = opts
            .prior_data
            .as_deref()
            .map(prior_costs)
            .unwrap_or_default();
        let built: Vec<String> = all.iter().map(Instance::key).collect();
        let d = defer_re.clone();
        (
            plan::shard_map(&costs, &built, n, &move |k| {
                d.as_ref().is_some_and(|r| r.is_match(k))
            }),
            n,
        )
    });
    all.into_iter()
        .filter(|i| {
            let key = i.key();
            if let Some(re) = &opts.only
                && !re.is_match(&i.entry.candidate)
            {
                return false;
            }
            let is_deferred = defer_re.as_ref().is_some_and(|r| r.is_match(&key));
            if opts.deferred_only {
                return is_deferred;
            }
            if opts.defer.is_some() && is_deferred {
                return false;
            }
            if let (Some((k, _)), Some((map, n))) = (opts.shard, &shard_map) {
                return plan::shard_of(map, &key, *n) == k - 1;
            }
            true
        })
        .collect()
}

fn driver_args(
    opts: &CampaignOptions,
    inst: &Instance,
    op: &str,
    bytes: u64,
    trials: u32,
    iters: u64,
    warmups: u64,
) -> DriverArgs {
    DriverArgs {
        lib: PathBuf::from(inst.entry.library.clone().unwrap_or_default()),
        op: op.to_string(),
        bytes,
        trials,
        iters,
        warmups,
        cpu: Some(opts.cpu),
        samples: opts.samples,
        force_ticks: false,
        api: inst.api.clone(),
    }
}

fn process_json(p: &Process) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

fn cal_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    run.join("calibrate")
        .join(&inst.entry.candidate)
        .join(record::Record::file_name(&inst.entry.label, opkey))
}

fn rec_path(run: &Path, inst: &Instance, opkey: &str) -> PathBuf {
    run.join("records")
        .join(&inst.entry.candidate)
        .join(record::Record::file_name(&inst.entry.label, opkey))
}

/// Calibration stored in `calibrate/`: the driver result plus `t1_s`, `setup_s`.
fn calibrate_one(
    opts: &CampaignOptions,
    log: &Logger,
    inst: &Instance,
    opkey: &str,
    op: &str,
    bytes: u64,
) -> Res<Value> {
    let path = cal_path(&opts.run_dir, inst, opkey);
    if let Some(v) = read_json(&path) {
        return Ok(v);
    }
    let args = driver_args(opts, inst, op, bytes, 1, 1, 0);
    let run = runner::run_driver(&opts.driver, &args, opts.calibration_timeout);
    let mut v = process_json(&run.process);
    let t1 = run.process.trials.first().map(|t| t.seconds);
    if let Value::Object(m) = &mut v {
        m.insert("t1_s".into(), json!(t1));
        m.insert("setup_s".into(), json!(t1.map(|t| run.wall_s - t)));
        if !run.samples.is_empty() {
            m.insert("pqperf".into(), json!({"counter": run.counter}));
        }
    }
    write_json(&path, &v)?;
    match t1 {
        Some(t) => log.log(format!(
            "calibrate {} {} {opkey}: {t:.6}s (process {:.1}s)",
            inst.entry.candidate, inst.entry.label, run.wall_s
        )),
        None => log.log(format!(
            "calibrate {} {} {opkey}: {} (exit {:?}){}",
            inst.entry.candidate,
            inst.entry.label,
            run.process.status,
            run.process.exit_code,
            if run.process.stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", run.process.stderr.lines().last().unwrap_or(""))
            }
        )),
    }
    Ok(v)
}

/// Operations (opkey, op, bytes) of an instance given its exchange calibration (KEX).
fn ops_of(run: &Path, inst: &Instance) -> Vec<(String, String, u64)> {
    let mut ops = base_ops(&inst.category);
    if inst.category == "kex" {
        let cal = read_json(&cal_path(run, inst, "exchange"));
        if let Some(c) = cal
            && c["t1_s"].is_number()
        {
            let passes = c["meta"]["kex_passes"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            let run_p = c["meta"]["kex_passes_run"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            for s in kex_steps(passes.min(run_p)) {
                ops.push((s.clone(), s, 0));
            }
        }
    }
    ops
}

fn phase_calibrate(opts: &CampaignOptions, log: &Logger, insts: &[Instance]) -> Res<i32> {
    let todo: Vec<(&Instance, (String, String, u64))> = insts
        .iter()
        .flat_map(|i| base_ops(&i.category).into_iter().map(move |o| (i, o)))
        .collect();
    let bar = progress(todo.len() as f64, "calibrate");
    log.set_bar(Some(bar.clone()));
    for (inst, (opkey, op, bytes)) in &todo {
        calibrate_one(opts, log, inst, opkey, op, *bytes)?;
        if inst.category == "kex" {
            for (k, o, b) in ops_of(&opts.run_dir, inst).into_iter().skip(1) {
                calibrate_one(opts, log, inst, &k, &o, b)?;
            }
        }
        bar.inc(1000);
    }
    bar.finish_and_clear();
    log.set_bar(None);
    Ok(0)
}

/// One planned operation.
#[derive(Debug, Clone)]
pub struct PlannedOp {
    /// The instance.
    pub inst: Instance,
    /// Record key (`hash_32`, `keygen`).
    pub opkey: String,
    /// Driver operation.
    pub op: String,
    /// Hash message bytes.
    pub bytes: u64,
    /// The plan, or None when the calibration produced no trial.
    pub plan: Option<Plan>,
    /// The calibration result.
    pub calibration: Value,
}

/// Plans every operation of `insts` that has a calibration; sorted cheapest first. Operations
/// whose calibration failed come first with `plan: None` (they are recorded as failed).
pub fn plan_all(opts: &CampaignOptions, insts: &[Instance]) -> Vec<PlannedOp> {
    let mut out = Vec::new();
    for inst in insts {
        let exch_t1 =
            read_json(&cal_path(&opts.run_dir, inst, "exchange")).and_then(|c| c["t1_s"].as_f64());
        for (opkey, op, bytes) in ops_of(&opts.run_dir, inst) {
            let Some(cal) = read_json(&cal_path(&opts.run_dir, inst, &opkey)) else {
                continue;
            };
            let plan = match (cal["t1_s"].as_f64(), cal["setup_s"].as_f64()) {
                (Some(t1), Some(setup)) => {
                    let c = (inst.category == "kex" && opkey != "exchange")
                        .then_some(exch_t1)
                        .flatten();
                    Some(plan::plan_op(&opts.planning, t1, setup.max(0.0), c))
                }
                _ => None,
            };
            out.push(PlannedOp {
                inst: inst.clone(),
                opkey,
                op,
                bytes,
                plan,
                calibration: cal,
            });
        }
    }
    out.sort_by(|a, b| {
        let ea = a.plan.as_ref().map_or(-1.0, plan::estimated_s);
        let eb = b.plan.as_ref().map_or(-1.0, plan::estimated_s);
        ea.total_cmp(&eb)
    });
    out
}

/// A run is disturbed (§7.1.4) when the fixed clock is known, the counter counts core cycles,
/// the scope is a loop and a long trial ran below 95 % of the clock.
fn disturbed(run: &Run, fixed_hz: Option<f64>) -> bool {
    let Some(f) = fixed_hz else { return false };
    if run.counter.as_deref() != Some("cycles") {
        return false;
    }
    if run.process.meta.str("timing_scope") == Some("per_call_step") {
        return false;
    }
    run.process.trials.iter().any(|t| {
        let c = t.cycles.unwrap_or(0);
        c > 0 && t.seconds > 0.01 && (c as f64 / t.seconds) < 0.95 * f
    })
}

/// Timing totals of a measure phase (for the efficiency figure).
#[derive(Debug, Default, Clone, Copy)]
pub struct MeasureTotals {
    /// Σ seconds inside timed trials.
    pub timed_s: f64,
    /// Σ driver process wall seconds.
    pub process_s: f64,
    /// Records written.
    pub records: usize,
    /// Records skipped because they existed.
    pub skipped: usize,
}

fn measure_one(
    opts: &CampaignOptions,
    env: &Value,
    counter_info: &Value,
    p: &PlannedOp,
    totals: &mut MeasureTotals,
) -> Res<Record> {
    let started = utc_now();
    let la_start = pqperf_ffi::procinfo::load_average();
    let fixed = host::fixed_clock_hz(env);
    let mut processes: Vec<Process> = Vec::new();
    let mut samples: Vec<u64> = Vec::new();
    let mut counter: Option<String> = None;
    let mut retries_total = 0u64;
    let plan = p.plan.clone();
    match &plan {
        None => {
            // The calibration itself failed: record its process and go on.
            if let Ok(mut pr) = serde_json::from_value::<Process>(strip_cal(&p.calibration)) {
                pr.disturbed_retries = Some(0);
                processes.push(pr);
            }
        }
        Some(pl) if plan::reuses_calibration(pl) => {
            if let Ok(mut pr) = serde_json::from_value::<Process>(strip_cal(&p.calibration)) {
                pr.disturbed_retries = Some(0);
                pr.extra.insert("reused_calibration".into(), json!(true));
                pr.extra
                    .insert("t1_s".into(), p.calibration["t1_s"].clone());
                pr.extra
                    .insert("setup_s".into(), p.calibration["setup_s"].clone());
                processes.push(pr);
            }
        }
        Some(pl) => {
            let (nproc, per) = if pl.separate_processes {
                (pl.trials, 1)
            } else {
                (1, pl.trials)
            };
            let timeout = Duration::from_secs_f64(pl.timeout_per_process_s.unwrap_or(1.0).max(1.0));
            for _ in 0..nproc {
                let args = driver_args(
                    opts,
                    &p.inst,
                    &p.op,
                    p.bytes,
                    per as u32,
                    pl.iterations_per_trial,
                    pl.warmups,
                );
                let mut attempt = 0;
                let run = loop {
                    let run = runner::run_driver(&opts.driver, &args, timeout);
                    totals.timed_s += run.timed_s;
                    totals.process_s += run.wall_s;
                    if run.complete() && disturbed(&run, fixed) && attempt < 2 {
                        attempt += 1;
                        continue;
                    }
                    break run;
                };
                retries_total += attempt;
                let mut pr = run.process.clone();
                pr.disturbed_retries = Some(attempt);
                let ok = run.complete();
                samples.extend_from_slice(&run.samples);
                if counter.is_none() {
                    counter = run.counter.clone();
                }
                processes.push(pr);
                if !ok {
                    break;
                }
            }
        }
    }
    let totals_p = ProcessTotals::of(&processes);
    let want_trials = plan.as_ref().map_or(u64::MAX, |pl| pl.trials);
    let complete = !processes.is_empty()
        && processes.iter().all(|pr| pr.status == "complete")
        && totals_p.trials.len() as u64 == want_trials;
    let e = &p.inst.entry;
    let first_meta = processes
        .first()
        .map(|pr| pr.meta.clone())
        .unwrap_or_default();
    let mut sizes = indexmap::IndexMap::new();
    let mut kex = indexmap::IndexMap::new();
    for (k, v) in first_meta.iter() {
        let Some(s) = v.as_str() else { continue };
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let n: u64 = s.parse().unwrap_or(0);
            if k.ends_with("_bytes") && k != "baseline_rss_bytes" && k != "peak_rss_bytes" {
                sizes.insert(k.to_string(), n);
            } else if k.starts_with("kex_") {
                kex.insert(k.to_string(), n);
            }
        }
    }
    let mut ext = PqperfRecordExt {
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
        ..Default::default()
    };
    let counter_name = counter.clone().or_else(|| {
        p.calibration["pqperf"]["counter"]
            .as_str()
            .map(str::to_string)
    });
    if let Value::Object(m) = counter_info {
        for (k, v) in m {
            ext.extra.insert(k.clone(), v.clone());
        }
    }
    // The child that measured is the one source of truth for the counter kind: what the
    // parent's probe said is overwritten when the child names its counter.
    if let Some(c) = &counter_name {
        ext.extra.insert("counter".into(), json!(c));
        let core = c == "cycles";
        if counter_info["cycles_are_core_cycles"].as_bool() != Some(core) {
            ext.extra
                .insert("cycles_are_core_cycles".into(), json!(core));
            let hz = if core {
                Value::Null
            } else {
                counter_info["tick_hz"].clone()
            };
            ext.extra.insert("counter_hz".into(), hz);
        }
    }
    if let Some(pv) = e.extra.get("iccs_provider") {
        ext.extra.insert("iccs_provider".into(), pv.clone());
    }
    let tick_hz = pqperf_ffi::counters::ticks_hz(5).filter(|_| !samples.is_empty());
    if !samples.is_empty() {
        let hz = counter_info["tick_hz"]
            .as_f64()
            .or(tick_hz.map(|h| h as f64))
            .unwrap_or(0.0);
        if hz > 0.0 {
            let secs: Vec<f64> = samples.iter().map(|&s| s as f64 / hz).collect();
            ext.per_call_seconds = Quantiles::of(&secs);
        }
        if counter_name.as_deref() != Some("cycles") {
            let ticks: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
            ext.per_call_cycles = Quantiles::of(&ticks);
        }
        ext.extra.insert(
            "per_call_note".into(),
            json!("per-call samples are tick-counter deltas read between consecutive calls of the same timed trials; the trial totals include one counter read per call"),
        );
    }
    let mut rec = Record {
        schema: record::RECORD_SCHEMA,
        status: if complete {
            "complete".into()
        } else {
            "failed_or_partial".into()
        },
        candidate: e.candidate.clone(),
        label: e.label.clone(),
        instance: e.instance.clone(),
        variant: e.variant.clone(),
        flags: e.flags.clone(),
        operation: p.op.clone(),
        input_bytes: p.bytes,
        plan: match &plan {
            Some(pl) => pl.clone(),
            None => Default::default(),
        },
        kat: e.kat.clone(),
        kat_not_passed: p.inst.kat_not_passed,
        disturbed_retries: retries_total,
        library: e.library.clone(),
        library_sha256: e.library_sha256.clone(),
        kat_log: e.kat_log.clone(),
        kat_log_sha256: e.kat_log_sha256.clone(),
        started_utc: started,
        ended_utc: utc_now(),
        load_average_start: la_start.to_vec(),
        load_average_end: pqperf_ffi::procinfo::load_average().to_vec(),
        environment: Fields::from(env.as_object().cloned().unwrap_or_default()),
        processes: processes.clone(),
        trials: totals_p.trials.clone(),
        sizes,
        kex,
        build_flags: first_meta
            .str("build_flags")
            .unwrap_or_default()
            .to_string(),
        baseline_rss_bytes: totals_p.baseline_rss_bytes,
        peak_rss_bytes: totals_p.peak_rss_bytes,
        timing_scope: first_meta.str("timing_scope").unwrap_or("loop").to_string(),
        pqperf: Some(ext),
        ..Default::default()
    };
    if let Some(s) = RecordStats::of_record(&rec) {
        s.apply_to(&mut rec);
    }
    let path = rec_path(&opts.run_dir, &p.inst, &p.opkey);
    let text = pyjson::to_string(&rec).map_err(|e| MeasureError::msg(e.to_string()))?;
    write_atomic(&path, text.as_bytes())?;
    totals.records += 1;
    Ok(rec)
}

fn strip_cal(cal: &Value) -> Value {
    let mut v = cal.clone();
    if let Value::Object(m) = &mut v {
        m.remove("t1_s");
        m.remove("setup_s");
        m.remove("pqperf");
    }
    v
}

fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            remove_stale_temps(&p);
        } else if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(&p);
        }
    }
}

fn phase_measure(
    opts: &CampaignOptions,
    log: &Logger,
    insts: &[Instance],
    env: &Value,
    counter_info: &Value,
) -> Res<(i32, MeasureTotals)> {
    remove_stale_temps(&opts.run_dir.join("records"));
    let planned = plan_all(opts, insts);
    let todo: Vec<&PlannedOp> = planned
        .iter()
        .filter(|p| !rec_path(&opts.run_dir, &p.inst, &p.opkey).exists())
        .collect();
    let mut totals = MeasureTotals {
        skipped: planned.len() - todo.len(),
        ..Default::default()
    };
    let est_total: f64 = todo
        .iter()
        .map(|p| p.plan.as_ref().map_or(0.1, plan::estimated_s))
        .sum();
    let bar = progress(est_total, "measure");
    log.set_bar(Some(bar.clone()));
    let mut left = est_total;
    for p in todo {
        let est = p.plan.as_ref().map_or(0.1, plan::estimated_s);
        let rec = measure_one(opts, env, counter_info, p, &mut totals)?;
        left -= est;
        let what = match (rec.mean_cycles, rec.mean_seconds) {
            (Some(c), _) => format!(
                "{c:.0} {}",
                rec.pqperf
                    .as_ref()
                    .and_then(|x| x.extra.get("counter"))
                    .and_then(Value::as_str)
                    .map(|c| if c == "cycles" { "cycles" } else { "ticks" })
                    .unwrap_or("cycles")
            ),
            (None, Some(s)) => format!("{s:.6} s"),
            _ => String::new(),
        };
        let why = if rec.status == "complete" {
            String::new()
        } else {
            let last = rec.processes.last();
            format!(
                " [{}{}]",
                last.map(|p| p.status.as_str()).unwrap_or("no process"),
                last.and_then(|p| p.stderr.lines().last())
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            )
        };
        log.log(format!(
            "measure {} {} {}: {} n={} {what}{why} (left ~{:.2} h)",
            p.inst.entry.candidate,
            p.inst.entry.label,
            p.opkey,
            rec.status,
            rec.measurements.unwrap_or(0),
            left.max(0.0) / 3600.0
        ));
        bar.inc((est * 1000.0) as u64);
    }
    bar.finish_and_clear();
    log.set_bar(None);
    Ok((0, totals))
}

fn phase_plan(opts: &CampaignOptions, insts: &[Instance]) -> i32 {
    let planned = plan_all(opts, insts);
    let with: Vec<&PlannedOp> = planned.iter().filter(|p| p.plan.is_some()).collect();
    let total: f64 = with
        .iter()
        .map(|p| plan::estimated_s(p.plan.as_ref().unwrap()))
        .sum();
    println!(
        "{} operations, estimated {:.1} h",
        with.len(),
        total / 3600.0
    );
    let mut by_cost = with.clone();
    by_cost.sort_by(|a, b| {
        let est = |p: &PlannedOp| p.plan.as_ref().map_or(0.0, plan::estimated_s);
        est(b).total_cmp(&est(a))
    });
    for p in by_cost.iter().take(15) {
        let pl = p.plan.as_ref().unwrap();
        println!(
            "{:.1} min  {} {} {}  iters/trial={} separate={}",
            plan::estimated_s(pl) / 60.0,
            p.inst.entry.candidate,
            p.inst.entry.label,
            p.opkey,
            pl.iterations_per_trial,
            if pl.separate_processes {
                "True"
            } else {
                "False"
            }
        );
    }
    0
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

/// Read-modify-write of campaign.json under `.campaign.lock`.
pub fn update_campaign(run: &Path, f: impl FnOnce(&mut Map<String, Value>)) -> Res<()> {
    let _lock = pqperf_ffi::procinfo::lock_exclusive(&run.join(".campaign.lock"))?;
    let p = run.join("campaign.json");
    let mut m = read_json(&p)
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    f(&mut m);
    write_json(&p, &Value::Object(m))
}

/// Appends `command` (no paths) to the commands pqperf ran in this run directory
/// (`campaign.json` → `pqperf.commands`), once.
pub fn note_command(run: &Path, command: &str) -> Res<()> {
    update_campaign(run, |m| {
        let pq = m.entry("pqperf").or_insert(json!({}));
        if !pq.is_object() {
            *pq = json!({});
        }
        pq["version"] = json!(env!("CARGO_PKG_VERSION"));
        let cmds = pq
            .as_object_mut()
            .expect("object")
            .entry("commands")
            .or_insert(json!([]));
        if let Some(a) = cmds.as_array_mut()
            && !a.iter().any(|c| c == command)
        {
            a.push(json!(command));
        }
    })
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
        for p in &problems {
            println!("HOST: {p}");
        }
        if problems.is_empty() {
            println!("host ready");
        } else {
            println!("{} problem(s)", problems.len());
        }
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
        m.insert("harness_additions".into(), json!(HARNESS_ADDITIONS));
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
            Phase::Build
            | Phase::Kat
            | Phase::Baseline
            | Phase::Profile
            | Phase::Hashcost
            | Phase::Ct => {
                let hook = match ph {
                    Phase::Build => &hooks.build,
                    Phase::Kat => &hooks.kat,
                    Phase::Baseline => &hooks.baseline,
                    Phase::Profile => &hooks.profile,
                    Phase::Ct => &hooks.ct,
                    _ => &hooks.hashcost,
                };
                match hook {
                    Some(h) => h(&ctx).map_err(MeasureError::msg)?,
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
                }
            }
            Phase::Calibrate => {
                let insts = selected(opts, measurable(opts)?);
                phase_calibrate(opts, &log, &insts)?
            }
            Phase::Measure => {
                let insts = selected(opts, measurable(opts)?);
                let (c, t) = phase_measure(opts, &log, &insts, &env, &counter_info)?;
                out.totals = t;
                c
            }
            Phase::Plan => {
                let insts = selected(opts, measurable(opts)?);
                phase_plan(opts, &insts)
            }
            _ => 0,
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

fn has_records(run: &Path) -> bool {
    walk_files(&run.join("records"))
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json"))
}

/// Every file below `dir`, sorted.
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `publish` (§12.1): copy the run's evidence into `<dest>/performance/data/<ID>/`, write the
/// side CSVs the pages read (`performance/systems.csv`, `performance/security_targets.csv`,
/// `downloads.csv`) and refuse absolute machine paths.
pub fn publish(opts: &CampaignOptions) -> Res<i32> {
    let run = &opts.run_dir;
    let camp = read_json(&run.join("campaign.json"));
    let Some(id) = camp
        .as_ref()
        .and_then(|c| c["system_id"].as_str())
        .map(str::to_string)
    else {
        eprintln!("publish: campaign.json has no system_id");
        return Ok(2);
    };
    let dest_root = opts
        .publish_to
        .clone()
        .unwrap_or_else(|| run.join("dataset"));
    let dest = dest_root.join("performance/data").join(&id);
    let mut files: Vec<PathBuf> = vec![run.join("campaign.json"), run.join("build.json")];
    let excluded = |p: &Path| -> bool {
        let Some(re) = &opts.defer else { return false };
        let cand = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = p
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = name.split("__").next().unwrap_or("");
        re.is_match(&format!("{cand}/{label}"))
    };
    for sub in ["records", "profile"] {
        for f in walk_files(&run.join(sub)) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") || excluded(&f) {
                continue;
            }
            if sub == "profile" && (name.contains("RELINK") || !name.contains("__")) {
                continue;
            }
            files.push(f);
        }
    }
    // Constant-time evidence (`ct/<id>/<label>.json`, pqperf-ct).
    files.extend(walk_files(&run.join("ct")).into_iter().filter(|f| {
        let name = f.file_name().unwrap().to_string_lossy();
        name.ends_with(".json") && !name.starts_with('.')
    }));
    for sub in ["kat", "katcheck"] {
        files.extend(
            walk_files(&run.join(sub))
                .into_iter()
                .filter(|f| f.extension().is_some_and(|e| e == "log")),
        );
    }
    let abs = Regex::new(r"(?:^|[^\w.])(/(?:home|tmp|root|Users|work)/[^\s\x22]*)").expect("regex");
    let mut staged = Vec::new();
    for f in files.iter().filter(|f| f.is_file()) {
        let rel = f.strip_prefix(run).unwrap_or(f).to_path_buf();
        let bytes = std::fs::read(f)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(m) = abs.captures(&text) {
            eprintln!(
                "{}: absolute path '{}' remains; not publishing",
                rel.display(),
                &m[1]
            );
            return Ok(2);
        }
        staged.push((rel, bytes));
    }
    if dest.exists() {
        std::fs::remove_dir_all(&dest)?;
    }
    for (rel, bytes) in &staged {
        write_atomic(&dest.join(rel), bytes)?;
    }
    // Side CSVs of the dataset root.
    let perf = dest_root.join("performance");
    let rows = systems::load(&opts.systems_csv)?;
    let mut sys: Vec<Vec<String>> = Vec::new();
    let existing = systems::load(&perf.join("systems.csv"))?;
    let mut seen = BTreeSet::new();
    for r in existing.iter().chain(rows.iter()) {
        if seen.insert(r.id.clone()) && (r.id == id || existing.iter().any(|e| e.id == r.id)) {
            sys.push(vec![
                r.id.clone(),
                r.arch.clone(),
                r.hostname.clone(),
                r.description.clone(),
            ]);
        }
    }
    let sys = write_csv(&["ID", "Arch", "Hostname", "Description"], &sys);
    write_atomic(&perf.join("systems.csv"), sys.as_bytes())?;
    let build = load_build(run)?;
    let st_path = perf.join("security_targets.csv");
    let mut st_rows: BTreeSet<(String, String)> = BTreeSet::new();
    let mut st_text: Vec<Vec<String>> = Vec::new();
    if st_path.exists() {
        let bad = |e: pqperf_model::ModelError| MeasureError::msg(e.to_string());
        let old = pqperf_model::sidecsv::CsvTable::read(&st_path, &st_path)
            .and_then(|t| t.security_targets())
            .map_err(bad)?;
        for r in old {
            if st_rows.insert((r.id.clone(), r.instance.clone())) {
                st_text.push(vec![
                    r.id.clone(),
                    r.instance.clone(),
                    r.target_bits.map(|b| b.to_string()).unwrap_or_default(),
                ]);
            }
        }
    }
    for e in build.instances.values() {
        if e.candidate != "iccs" && st_rows.insert((e.candidate.clone(), e.label.clone())) {
            st_text.push(vec![e.candidate.clone(), e.label.clone(), String::new()]);
        }
    }
    let st_text = write_csv(&["ID", "Instance", "TargetBits"], &st_text);
    write_atomic(&st_path, st_text.as_bytes())?;
    if let Some(cat) = load_catalog(run)? {
        let dl = dest_root.join("downloads.csv");
        let mut text: Vec<Vec<String>> = Vec::new();
        let mut ids = BTreeSet::new();
        if dl.exists() {
            let old = pqperf_model::sidecsv::CsvTable::read(&dl, &dl)
                .and_then(|t| t.downloads())
                .map_err(|e| MeasureError::msg(e.to_string()))?;
            for d in old {
                if ids.insert(d.id.clone()) {
                    text.push(vec![d.id.clone(), d.algorithm.clone(), d.page_url.clone()]);
                }
            }
        }
        for c in &cat.candidates {
            if ids.insert(c.id.clone()) {
                text.push(vec![
                    c.id.clone(),
                    c.algorithm.clone(),
                    c.page.clone().unwrap_or_default(),
                ]);
            }
        }
        let text = write_csv(&["ID", "Algorithm", "PageURL"], &text);
        write_atomic(&dl, text.as_bytes())?;
    }
    println!(
        "publish: {} files for system {id} -> {}",
        staged.len(),
        dest.display()
    );
    Ok(0)
}
