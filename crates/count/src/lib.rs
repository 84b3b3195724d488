//! Stage count: deterministic instruction counts per operation (see `docs/counting.md`).
//!
//! One valgrind process per (instance, operation): the lean timing driver `pqperf-driver`
//! runs under `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=<API function>
//! --dump-after=<API function>` with address-space randomisation off (`setarch -R`), a fixed
//! minimal environment and fixed short paths, contained like every child that runs candidate
//! code (`pqperf_ffi::untrusted`). Only the operation's API function and its callees are
//! counted — not the driver's loop, its preparation or the process start — one profile part
//! per call, with callgrind's cache simulation in a fixed geometry. The driver's seeded DRNG
//! gives the same inputs in every run, so the figures are the same on any host under any load.
//!
//! [`callgrind`] reads the output, [`classify`] names the class of each function,
//! [`analyse`] turns the parts into the figures of [`pqperf_model::count::CountEvidence`].

#![forbid(unsafe_code)]

pub mod analyse;
pub mod callgrind;
pub mod classify;
pub mod qemu;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pqperf_measure::driver::ApiSpec;
use pqperf_measure::instance::Instance;
use pqperf_model::count::{
    COUNT_SCHEMA, CountEvidence, ESTIMATED_CYCLES_FORMULA, Testbed, TimingCheck,
};
use pqperf_model::layout::RunLayout;
use pqperf_model::record::Record;
use pqperf_model::vocab::{Category, Operation};

/// Calls counted per operation by default.
pub const DEFAULT_CALLS: u64 = 10;

/// The input stream a count process draws from (`pqperf_model::stream::process_seed`): the
/// same on every run and both sides of a comparison, an independent stream like a timing
/// process's rather than the reference's fixed seed.
pub const COUNT_STREAM: u64 = 0;

/// The fixed cache geometry (the one Iai, Gungraun and CodSpeed use).
pub const CACHE_GEOMETRY: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"];

/// Errors of the stage.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    /// An input file or folder could not be used.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Something the stage needs is missing or wrong.
    #[error("{0}")]
    Input(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CountError + '_ {
    move |source| CountError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What to count.
#[derive(Debug, Clone)]
pub struct CountOptions {
    /// Run directory (library paths are relative to it; evidence goes to `count/`).
    pub run_dir: PathBuf,
    /// The instances (the measured ones: the campaign's selection).
    pub instances: Vec<Instance>,
    /// Calls counted per operation (with `auto_calls`: at most).
    pub calls: u64,
    /// Choose the calls from a first count of one call ([`calls_for`]).
    pub auto_calls: bool,
    /// valgrind processes at once (counting needs no quiet CPU).
    pub jobs: usize,
    /// Timeout of one valgrind process.
    pub timeout: Duration,
    /// The valgrind executable.
    pub valgrind: String,
    /// The lean driver executable.
    pub driver: PathBuf,
    /// Count again units whose evidence names the built library.
    pub redo: bool,
    /// One line per unit on stderr.
    pub progress: bool,
    /// Only these operation keys (`keygen`, `sign`, `hash_32`, …); empty: every operation.
    pub ops: Vec<String>,
    /// The emulator the driver starts through (`PQPERF_EMULATOR`, argv prefix): non-empty,
    /// the units are counted under it with pqperf's TCG plugin ([`qemu`]) instead of
    /// valgrind.
    pub emulator: Vec<String>,
    /// Emulated counts only: a second function whose instructions and calls inside the
    /// operation are reported in `functions` as well.
    pub sub_symbol: Option<String>,
}

impl CountOptions {
    /// Defaults for `run_dir` and `instances`: [`DEFAULT_CALLS`] calls, one job per CPU,
    /// 600 s per process, `valgrind` from `PATH`, the driver found as the measure stage
    /// finds it.
    pub fn new(run_dir: impl Into<PathBuf>, instances: Vec<Instance>) -> Result<Self, CountError> {
        let driver = pqperf_measure::runner::DriverExe::locate()
            .map_err(|e| CountError::Input(e.to_string()))?;
        Ok(CountOptions {
            run_dir: run_dir.into(),
            instances,
            calls: DEFAULT_CALLS,
            auto_calls: true,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Duration::from_secs(600),
            valgrind: "valgrind".into(),
            driver,
            redo: false,
            progress: false,
            ops: Vec::new(),
            emulator: count_emulator(),
            sub_symbol: None,
        })
    }
}

/// What a count run did.
#[derive(Debug, Clone, Default)]
pub struct CountSummary {
    /// Evidence written (run-relative paths), in unit order.
    pub written: Vec<String>,
    /// The evidence of every unit counted now, in unit order.
    pub evidence: Vec<CountEvidence>,
    /// Units kept (their evidence names the built library).
    pub kept: usize,
    /// Kept evidence whose timing cross-check was brought up to date with the records.
    pub rechecked: Vec<String>,
    /// Wall seconds.
    pub seconds: f64,
}

/// `valgrind --version` (`valgrind-3.19.0`), or `None` when valgrind cannot run: counting is
/// then not possible, which the caller says (never an error of the campaign).
pub fn valgrind_version(valgrind: &str) -> Option<String> {
    std::process::Command::new(valgrind)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The emulator the count phase runs the driver under: `PQPERF_EMULATOR`; else, when this
/// pqperf runs on a CPU of another architecture (emulated, binfmt_misc starting its
/// children; `--emulated` alone does not count), `qemu-<arch>`; else none (valgrind).
pub fn count_emulator() -> Vec<String> {
    let prefix = pqperf_ffi::emulation::emulator_prefix();
    // Emulated in fact (the kernel's CPU is another architecture), not only labelled so.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let foreign = pqperf_ffi::emulation::cpuinfo_family(&cpuinfo)
        .is_some_and(|host| host != std::env::consts::ARCH);
    if prefix.is_empty() && foreign {
        return vec![format!("qemu-{}", std::env::consts::ARCH)];
    }
    prefix
}

/// The counting tool of this process: under an emulator (`PQPERF_EMULATOR`) the TCG plugin
/// method, always available to try (units it cannot count say "not available"); else
/// [`valgrind_version`] of `valgrind` (None: counting is not possible).
pub fn counting_tool() -> Option<String> {
    let emu = count_emulator();
    if emu.is_empty() {
        valgrind_version("valgrind")
    } else {
        Some(format!("{} under {}", qemu::METHOD, emu.join(" ")))
    }
}

/// One unit: an operation of an instance.
#[derive(Debug, Clone)]
struct Unit {
    inst: usize,
    opkey: String,
    op: String,
    bytes: u64,
}

/// What one unit counts: the API functions whose calls are counted (callgrind's
/// `--toggle-collect`) and the one whose return ends a counted call (`--dump-after`), with how
/// many of its calls the driver makes outside the timed calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The functions counted, with their callees: one for every operation but a whole key
    /// exchange, which counts every step's function.
    pub symbols: Vec<String>,
    /// The API function whose return ends one counted call (the last step of an exchange).
    pub last: String,
    /// The function whose return dumps one call's profile part (`--dump-after`): `last`,
    /// except for a whole exchange, where it is the driver's function running one exchange
    /// ([`KEX_EXCHANGE_FN`]). valgrind 3.19 attaches `--dump-after` to a function that is
    /// also toggled only when the two options are adjacent; a dump function of its own that
    /// collects nothing keeps every step's function counted.
    pub dump: String,
    /// Calls the driver's preparation makes (`enc`/`dec`: one; a key exchange: its setup
    /// exchange).
    pub preparation: usize,
    /// Calls of its memory pass after the timed calls (1; a key-exchange step: 0, the driver
    /// skips the pass for steps).
    pub memory_pass: usize,
}

impl Target {
    fn one(symbol: String, preparation: usize, memory_pass: usize) -> Target {
        Target {
            symbols: vec![symbol.clone()],
            dump: symbol.clone(),
            last: symbol,
            preparation,
            memory_pass,
        }
    }

    /// Counts more than one API function per call (a whole key exchange).
    pub fn is_several(&self) -> bool {
        self.symbols.len() > 1
    }
}

/// The lean driver's function that runs one whole key exchange (callgrind's demangled name):
/// its return ends one counted exchange.
pub const KEX_EXCHANGE_FN: &str = "pqperf_driver::kex::Kex::exchange";

/// The ICCS key-exchange functions of `op` (`exchange`: every step in call order, passes
/// 1–[`pqperf_ffi::dl::KEX_MAX_PASS`]; a library without some of them never calls them).
fn kex_target(op: &str) -> Result<Target, String> {
    use pqperf_ffi::dl::{KEX_MAX_PASS, kex_pass_symbol};
    let step = |s: &str| Ok(Target::one(s.to_string(), 1, 0));
    match op {
        "exchange" => {
            let mut symbols = vec!["kex_init_a".to_string(), "kex_init_b".to_string()];
            symbols.extend((1..=KEX_MAX_PASS).map(kex_pass_symbol));
            symbols.push("kex_derive_ss_a".into());
            symbols.push("kex_derive_ss_b".into());
            Ok(Target {
                symbols,
                last: "kex_derive_ss_b".into(),
                dump: KEX_EXCHANGE_FN.into(),
                preparation: 1,
                memory_pass: 1,
            })
        }
        "init_a" => step("kex_init_a"),
        "init_b" => step("kex_init_b"),
        "derive_a" => step("kex_derive_ss_a"),
        "derive_b" => step("kex_derive_ss_b"),
        p => match p.strip_prefix("pass").and_then(|k| k.parse::<usize>().ok()) {
            Some(k) if (1..=KEX_MAX_PASS).contains(&k) => step(&kex_pass_symbol(k)),
            _ => Err(format!(
                "no API function known for key-exchange operation {op}"
            )),
        },
    }
}

/// What the unit of `op` counts ([`Target`]); Err: why this operation has no API function to
/// count.
pub fn target_of(api: &ApiSpec, category: Option<Category>, op: &str) -> Result<Target, String> {
    let prep = usize::from(matches!(op, "enc" | "dec"));
    let name = match api {
        ApiSpec::Iccs => match (category, op) {
            (Some(Category::Sign), "keygen") => "sig_keygen".to_string(),
            (Some(Category::Sign), "sign") => "sig_sign".to_string(),
            (Some(Category::Sign), "verify") => "sig_verify".to_string(),
            (Some(Category::Kem), "keygen") => "kem_keygen".to_string(),
            (Some(Category::Kem), "enc") => "kem_enc".to_string(),
            (Some(Category::Kem), "dec") => "kem_dec".to_string(),
            (Some(Category::Hash), "hash") => "CryptHash".to_string(),
            (Some(Category::Kex), _) => return kex_target(op),
            _ => return Err(format!("no API function known for operation {op}")),
        },
        ApiSpec::Nist {
            kind,
            namespace,
            ctx,
            ..
        } => {
            let c = if *ctx { "_ctx" } else { "" };
            let f = match (kind.as_str(), op) {
                ("sign", "keygen") => "crypto_sign_keypair".to_string(),
                ("sign", "sign") => format!("crypto_sign_signature{c}"),
                ("sign", "verify") => format!("crypto_sign_verify{c}"),
                ("kem", "keygen") => "crypto_kem_keypair".to_string(),
                ("kem", "enc") => "crypto_kem_enc".to_string(),
                ("kem", "dec") => "crypto_kem_dec".to_string(),
                _ => return Err(format!("no API function known for {kind} operation {op}")),
            };
            format!("{namespace}_{f}")
        }
    };
    Ok(Target::one(name, prep, 1))
}

/// Why this library cannot be counted exactly (AVX-512 code, which valgrind cannot decode),
/// from its recorded build flags and this host's CPU.
pub fn avx512_refusal(build_flags: &str) -> Option<String> {
    let f = build_flags.to_ascii_lowercase();
    if f.contains("avx512") {
        return Some("built with AVX-512 flags, which valgrind cannot decode: not counted".into());
    }
    let native = f.contains("-march=native") || f.contains("-mcpu=native");
    let host_avx512 = std::fs::read_to_string("/proc/cpuinfo")
        .map(|c| c.contains(" avx512f"))
        .unwrap_or(false);
    (native && host_avx512).then(|| {
        "built with -march=native on an AVX-512 host: its code may use AVX-512, which valgrind cannot decode; not counted".into()
    })
}

/// The C library (`glibc 2.36`), for the testbed key.
fn libc_version() -> String {
    std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The exact valgrind options of a unit (counted functions `t.symbols`, a call ending with
/// the return of `t.last`).
pub fn valgrind_flags(t: &Target) -> Vec<String> {
    let mut v: Vec<String> = [
        "--tool=callgrind",
        "--collect-atstart=no",
        "--combine-dumps=yes",
        "--compress-pos=no",
        "--cache-sim=yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(CACHE_GEOMETRY.iter().map(|s| s.to_string()));
    v.extend(t.symbols.iter().map(|s| format!("--toggle-collect={s}")));
    v.push(format!("--dump-after={}", t.dump));
    v
}

fn lookup(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(program))
            .find(|c| c.is_file())
    })
}

/// Counts every operation of the selected instances, `jobs` valgrind processes at once, and
/// writes `count/<id>/<label>__<op>.json` for each.
pub fn run(opts: &CountOptions) -> Result<CountSummary, CountError> {
    let mut out = count_units(opts, true)?;
    exchange_is_its_steps(&mut out.evidence);
    for ev in &mut out.evidence {
        ev.timing_check = timing_check_of(&opts.run_dir, ev);
    }
    for ev in &out.evidence {
        let rel = RunLayout::count_rel(&ev.candidate, &ev.label, &ev.operation);
        let path = opts.run_dir.join(&rel);
        let text = pqperf_model::pyjson::to_string(ev)
            .map_err(|e| CountError::Input(format!("{rel}: {e}")))?;
        pqperf_model::fsutil::write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
        out.written.push(rel);
    }
    // The counts kept get the cross-check of the records as they are now.
    let counted: Vec<String> = out.written.clone();
    for rel in refresh_timing_checks(&opts.run_dir, &opts.instances, &opts.ops)? {
        if !counted.contains(&rel) {
            out.rechecked.push(rel);
        }
    }
    Ok(out)
}

/// A whole key exchange counted beside all its steps must be their sum, call by call (call k
/// of every process has the k-th seeded input). An API function that calls another counted
/// one would break it: callgrind's toggle turns collection off inside the nested call. Such
/// an exchange count fails with the figures, never published as a count.
pub fn exchange_is_its_steps(evidence: &mut [CountEvidence]) {
    let counted = |e: &CountEvidence| e.status == "counted" && !e.instructions.is_empty();
    let groups: Vec<(String, String)> = evidence
        .iter()
        .filter(|e| e.operation == "exchange" && counted(e))
        .map(|e| (e.candidate.clone(), e.label.clone()))
        .collect();
    for (cand, label) in groups {
        let steps: Vec<(String, Vec<u64>)> = evidence
            .iter()
            .filter(|e| e.candidate == cand && e.label == label && e.operation != "exchange")
            .filter(|e| {
                pqperf_model::vocab::Operation::parse(&e.operation).is_some_and(|o| o.is_kex_step())
            })
            .map(|e| (e.operation.clone(), e.instructions.clone()))
            .collect();
        let all = steps.iter().any(|(o, _)| o == "init_a")
            && steps.iter().any(|(o, _)| o == "derive_b")
            && evidence
                .iter()
                .filter(|e| e.candidate == cand && e.label == label)
                .all(counted);
        if !all {
            continue;
        }
        let Some(x) = evidence
            .iter_mut()
            .find(|e| e.candidate == cand && e.label == label && e.operation == "exchange")
        else {
            continue;
        };
        let k = steps
            .iter()
            .map(|(_, v)| v.len())
            .min()
            .unwrap_or(0)
            .min(x.instructions.len());
        let bad =
            (0..k).find(|&i| x.instructions[i] != steps.iter().map(|(_, v)| v[i]).sum::<u64>());
        if let Some(i) = bad {
            let sum: u64 = steps.iter().map(|(_, v)| v[i]).sum();
            x.status = "failed".into();
            x.reason = Some(format!(
                "the whole exchange counted {} instructions in call {}, its steps {sum}: an API function calls another one counted with it, which callgrind's toggle leaves out; the steps' counts stand",
                x.instructions[i],
                i + 1
            ));
            x.instructions_per_call = None;
            x.estimated_cycles_per_call = None;
            x.per_call = None;
            x.instructions.clear();
            x.functions.clear();
            x.classes.clear();
        }
    }
}

/// The cross-check of `ev` against the timing record of the same library and operation in
/// `run_dir` ([`pqperf_model::count::timing_check`]); None without a readable record.
pub fn timing_check_of(run_dir: &Path, ev: &CountEvidence) -> Option<TimingCheck> {
    let rel_path = RunLayout::new("").record(&ev.candidate, &ev.label, &ev.operation);
    let rel = rel_path.to_string_lossy().into_owned();
    let path = run_dir.join(&rel_path);
    if !path.is_file() {
        return None;
    }
    let r: Record = pqperf_model::pyjson::read(&path, Path::new(&rel)).ok()?;
    pqperf_model::count::timing_check(ev, &r, &rel)
}

/// Brings the timing cross-check of every count file of `instances` (operations `ops`, empty:
/// all) up to date with the records now in `run_dir`, rewriting the files whose check
/// changed (no valgrind needed); returns their run-relative paths.
pub fn refresh_timing_checks(
    run_dir: &Path,
    instances: &[Instance],
    ops: &[String],
) -> Result<Vec<String>, CountError> {
    let mut out = Vec::new();
    for inst in instances {
        for op in pqperf_measure::calibrate::ops_of(run_dir, inst) {
            let opkey = op.key().into_owned();
            if !ops.is_empty() && !ops.contains(&opkey) {
                continue;
            }
            let rel = RunLayout::count_rel(&inst.entry.candidate, &inst.entry.label, &opkey);
            let path = run_dir.join(&rel);
            if !path.is_file() {
                continue;
            }
            let mut ev: CountEvidence = pqperf_model::pyjson::read(&path, Path::new(&rel))
                .map_err(|e| CountError::Input(format!("{rel}: {e}")))?;
            let check = timing_check_of(run_dir, &ev);
            if check == ev.timing_check {
                continue;
            }
            ev.timing_check = check;
            let text = pqperf_model::pyjson::to_string(&ev)
                .map_err(|e| CountError::Input(format!("{rel}: {e}")))?;
            pqperf_model::fsutil::write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
            out.push(rel);
        }
    }
    Ok(out)
}

/// Counts every selected operation afresh (the evidence on disk neither kept nor written):
/// the figures a gate compares (`pqperf ab --counter instructions`).
pub fn count(opts: &CountOptions) -> Result<CountSummary, CountError> {
    count_units(opts, false)
}

/// The units of `opts` counted; with `keep`, units whose evidence names the built library
/// (unless `redo`) are kept rather than counted.
fn count_units(opts: &CountOptions, keep: bool) -> Result<CountSummary, CountError> {
    let t0 = Instant::now();
    let layout = RunLayout::new(&opts.run_dir);
    let mut units = Vec::new();
    let mut kept = 0;
    for (i, inst) in opts.instances.iter().enumerate() {
        // The timed operations: a key exchange's steps too, once its calibration named them.
        for (opkey, op, bytes) in pqperf_measure::calibrate::ops_of(&opts.run_dir, inst)
            .into_iter()
            .map(Operation::driver_unit)
        {
            if !opts.ops.is_empty() && !opts.ops.contains(&opkey) {
                continue;
            }
            let path = layout.count(&inst.entry.candidate, &inst.entry.label, &opkey);
            if keep && !opts.redo && current(&path, inst.entry.library_sha256.as_deref()) {
                kept += 1;
                continue;
            }
            units.push(Unit {
                inst: i,
                opkey,
                op,
                bytes,
            });
        }
    }
    if !opts.emulator.is_empty() {
        return qemu::run(opts, units, kept);
    }
    let tool = valgrind_version(&opts.valgrind).ok_or_else(|| {
        CountError::Input(format!(
            "valgrind ({}) cannot run: instruction counts need valgrind's callgrind",
            opts.valgrind
        ))
    })?;
    let env = Env {
        tool,
        libc: libc_version(),
        machine: pqperf_ffi::procinfo::uname().machine,
        valgrind: lookup(&opts.valgrind)
            .ok_or_else(|| CountError::Input(format!("{} is not on PATH", opts.valgrind)))?,
        setarch: lookup("setarch"),
    };
    let evidence = each_unit(opts, &units, |u| {
        count_unit(opts, &env, &opts.instances[u.inst], u)
    });
    Ok(CountSummary {
        kept,
        evidence,
        seconds: t0.elapsed().as_secs_f64(),
        ..Default::default()
    })
}

/// Whether the evidence at `path` was made from the library `sha` (counted or refused).
fn current(path: &Path, sha: Option<&str>) -> bool {
    let Some(sha) = sha else { return false };
    pqperf_model::pyjson::read::<CountEvidence>(path, path).is_ok_and(|e| {
        e.library_sha256.as_deref() == Some(sha)
            && e.status != "failed"
            && !e
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(qemu::NOT_AVAILABLE))
    })
}

/// The one-line result of a unit (`1 234 567 instructions per call (10 calls)`, or why not).
pub fn line(ev: &CountEvidence) -> String {
    match (&ev.status[..], ev.instructions_per_call) {
        ("counted", Some(s)) => format!(
            "{} instructions per call (median; min {}, max {}, {} calls), {} estimated cycles",
            s.median,
            s.min,
            s.max,
            ev.calls,
            ev.estimated_cycles_per_call.map_or(0.0, |c| c.median)
        ),
        (st, _) => format!(
            "{st}: {}",
            ev.reason.as_deref().unwrap_or("no reason recorded")
        ),
    }
}

/// What every unit of a run shares.
struct Env {
    tool: String,
    libc: String,
    machine: String,
    valgrind: PathBuf,
    setarch: Option<PathBuf>,
}

/// One unit's evidence; a reason quoting valgrind's or the candidate's messages keeps no
/// machine path.
fn count_unit(opts: &CountOptions, env: &Env, inst: &Instance, u: &Unit) -> CountEvidence {
    let mut ev = count_unit_inner(opts, env, inst, u);
    if let Some(r) = &ev.reason {
        ev.reason = Some(pqperf_model::paths::redact_machine_paths(r).0);
    }
    ev
}

fn count_unit_inner(opts: &CountOptions, env: &Env, inst: &Instance, u: &Unit) -> CountEvidence {
    let e = &inst.entry;
    let extra = |k: &str| {
        e.extra
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut ev = CountEvidence {
        schema: COUNT_SCHEMA,
        candidate: e.candidate.clone(),
        label: e.label.clone(),
        operation: u.opkey.clone(),
        status: "failed".into(),
        library_sha256: e.library_sha256.clone(),
        seeds: vec![pqperf_model::stream::seed_hex(
            &pqperf_model::stream::process_seed(COUNT_STREAM),
        )],
        estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
        testbed: Testbed {
            valgrind: env.tool.clone(),
            flags: Vec::new(),
            aslr: if env.setarch.is_some() {
                "off (setarch -R)".into()
            } else {
                "on (setarch not found)".into()
            },
            compiler: extra("compiler"),
            build_flags: extra("build_flags"),
            libc: env.libc.clone(),
            machine: env.machine.clone(),
        },
        utc: pqperf_measure::record::utc_now(),
        ..Default::default()
    };
    let refuse = |mut ev: CountEvidence, why: String| {
        ev.status = "refused".into();
        ev.reason = Some(why);
        ev
    };
    let target = match target_of(&inst.api, inst.category, &u.op) {
        Ok(t) => t,
        Err(why) => return refuse(ev, why),
    };
    ev.symbol = target.last.clone();
    if target.is_several() {
        ev.symbols = target.symbols.clone();
    }
    ev.testbed.flags = valgrind_flags(&target);
    if let Some(why) = avx512_refusal(&ev.testbed.build_flags) {
        return refuse(ev, why);
    }
    let Some(lib_rel) = e.library.as_deref() else {
        ev.reason = Some("build.json names no library".into());
        return ev;
    };
    let lib = opts.run_dir.join(lib_rel);
    // The library counted is the one build.json names: its bytes are hashed here.
    match std::fs::read(&lib) {
        Ok(b) => {
            let sha = pqperf_model::katlog::sha256_hex(&b);
            if e.library_sha256.as_deref().is_some_and(|s| s != sha) {
                ev.reason = Some(format!(
                    "{lib_rel} is not the library build.json names (sha256 {sha}): run build"
                ));
                return ev;
            }
            ev.library_sha256 = Some(sha);
        }
        Err(err) => {
            ev.reason = Some(format!("{lib_rel}: {err}"));
            return ev;
        }
    }
    // With the automatic number of calls the (deterministic) count of the first call decides
    // how many calls the budget allows ([`calls_for`]), and the evidence is a process that
    // counted exactly those. The first process counts one call, or at once as many as the
    // budget allows when the calibration says the call is short ([`first_calls`]); a second
    // process runs only when the first one's count asks for another number of calls.
    let first = if opts.auto_calls {
        first_calls(&opts.run_dir, inst, &u.opkey, opts.calls)
    } else {
        opts.calls
    };
    let mut seconds = 0.0;
    let mut c = match attempt(opts, env, inst, u, &lib, &target, first, &mut ev) {
        Some(c) => c,
        None => return ev,
    };
    seconds += ev.seconds;
    if opts.auto_calls {
        let want = calls_for(c.instructions[0], opts.calls);
        if want != first {
            c = match attempt(opts, env, inst, u, &lib, &target, want, &mut ev) {
                Some(c) => c,
                None => return ev,
            };
            seconds += ev.seconds;
        }
    }
    ev.seconds = seconds;
    ev.status = "counted".into();
    ev.calls = c.calls;
    ev.calls_run = c.calls_run;
    ev.instructions_per_call = Some(c.instructions_per_call);
    ev.estimated_cycles_per_call = Some(c.estimated_cycles_per_call);
    ev.per_call = Some(c.per_call);
    ev.functions = c.functions;
    ev.classes = c.classes;
    ev.instructions = c.instructions;
    ev
}

/// Calibrated single calls at most this long (seconds) are counted `max` calls at once in the
/// first process: at a few instructions per nanosecond such a call has at most a few million
/// instructions, so [`calls_for`] gives `max` calls (every PQClean operation of the demo set
/// under 1 ms does). A wrong guess costs a second process, never other figures.
pub const SHORT_CALL_S: f64 = 0.001;

/// Calls the first counting process of an operation counts: `max` when the operation's
/// calibration (`calibrate/<id>/<label>__<op>.json`) timed its single call at most
/// [`SHORT_CALL_S`], else 1 (the count of that call then decides).
pub fn first_calls(run_dir: &Path, inst: &Instance, opkey: &str, max: u64) -> u64 {
    let cal = pqperf_model::calibration::read(&RunLayout::new(run_dir).calibration(
        &inst.entry.candidate,
        &inst.entry.label,
        opkey,
    ));
    match cal.and_then(|c| c.t1_s) {
        Some(t1) if t1 > 0.0 && t1 <= SHORT_CALL_S => max.max(1),
        _ => 1,
    }
}

/// Instructions the counted calls of one operation may add up to under the automatic rule
/// (about 2–5 s of callgrind with the cache simulation on this class of machine).
pub const INSTRUCTION_BUDGET: u64 = 100_000_000;

/// Calls counted for an operation of `per_call` instructions: as many as fit in
/// [`INSTRUCTION_BUDGET`], at least 1, at most `max`. A function of the count alone, so the
/// same library gives the same number of calls on every host.
pub fn calls_for(per_call: u64, max: u64) -> u64 {
    (INSTRUCTION_BUDGET / per_call.max(1)).clamp(1, max.max(1))
}

/// One valgrind process counting `iters` calls; None when it did not give counts (`ev` then
/// says why).
#[allow(clippy::too_many_arguments)]
fn attempt(
    opts: &CountOptions,
    env: &Env,
    inst: &Instance,
    u: &Unit,
    lib: &Path,
    target: &Target,
    iters: u64,
    ev: &mut CountEvidence,
) -> Option<analyse::Counted> {
    match run_valgrind(opts, env, inst, u, lib, target, iters) {
        Err(why) => ev.reason = Some(why),
        Ok(r) => {
            ev.command = r.command;
            ev.seconds = r.seconds;
            if let Some(why) = r.undecodable {
                ev.status = "refused".into();
                ev.reason = Some(why);
                return None;
            }
            if let Some(why) = r.failure {
                ev.reason = Some(why);
                return None;
            }
            match callgrind::parse(&r.output)
                .map_err(|e| e.to_string())
                .and_then(|p| analyse::analyse(&p, target, iters as usize))
            {
                Err(why) => ev.reason = Some(format!("callgrind output: {why}")),
                Ok(c) => return Some(c),
            }
        }
    }
    None
}

/// What one valgrind process left.
struct RunResult {
    command: Vec<String>,
    seconds: f64,
    output: String,
    undecodable: Option<String>,
    failure: Option<String>,
}

/// `count` of every unit, `opts.jobs` at once, in the units' order; one progress line per
/// unit (`opts.progress`). Both counters (callgrind and the emulator's plugin) use it.
pub(crate) fn each_unit(
    opts: &CountOptions,
    units: &[Unit],
    count: impl Fn(&Unit) -> CountEvidence + Sync,
) -> Vec<CountEvidence> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, CountEvidence)>> = Mutex::new(Vec::new());
    let jobs = opts.jobs.clamp(1, units.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(u) = units.get(k) else { break };
                    let ev = count(u);
                    if opts.progress {
                        eprintln!(
                            "count {}/{} {}: {}",
                            ev.candidate,
                            ev.label,
                            ev.operation,
                            line(&ev)
                        );
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((k, ev));
                }
            });
        }
    });
    let mut res = results.into_inner().unwrap_or_else(|e| e.into_inner());
    res.sort_by_key(|(k, _)| *k);
    res.into_iter().map(|(_, ev)| ev).collect()
}

/// The driver's arguments of a counting run (callgrind or the emulator's plugin): one trial of
/// `iters` calls of the unit's operation, no warm-up, no samples, ticks forced (no cycle
/// counter probe), the stream-0 seed [`COUNT_STREAM`], the library as `./l.so` in the scratch
/// folder, and a verify/dec input pool of [`counting_pool`] entries.
pub(crate) fn counting_args(
    inst: &Instance,
    u: &Unit,
    iters: u64,
) -> pqperf_measure::driver::DriverArgs {
    pqperf_measure::driver::DriverArgs {
        lib: PathBuf::from("./l.so"),
        op: u.op.clone(),
        bytes: u.bytes,
        trials: 1,
        iters,
        warmups: 0,
        cpu: None,
        samples: false,
        force_ticks: true,
        api: inst.api.clone(),
        // No stack painting: valgrind does not grow the stack below the stack pointer.
        stack_region: 0,
        seed: Some(pqperf_model::stream::process_seed(COUNT_STREAM)),
        pool_max: Some(counting_pool(iters)),
        prepare: false,
        relayed: false,
    }
}

/// Entries of a counting process's verify/dec input pool: one per call the process makes,
/// the `iters` counted calls and the memory pass, so that no counted call repeats an input.
/// The driver's own rule also reserves room for a sampled trial and warm-ups, which a
/// counting process does not run; under valgrind each entry is a signature or an
/// encapsulation made at about fifty times its native cost (SPHINCS+-SHAKE-128f: ≈ 4 s a
/// signature), before the one call counted. The entries come from the seeded stream in order,
/// so the counted calls get the same inputs with any pool of at least `iters` entries.
pub fn counting_pool(iters: u64) -> u64 {
    iters.saturating_add(1)
}

/// Runs the driver under callgrind, contained, in a fresh scratch folder holding only short
/// links to the driver (`d`) and the library (`l.so`) and the output folder, so that argv,
/// environment and working directory are the same bytes in every run on every host.
fn run_valgrind(
    opts: &CountOptions,
    env: &Env,
    inst: &Instance,
    u: &Unit,
    lib: &Path,
    target: &Target,
    iters: u64,
) -> Result<RunResult, String> {
    use pqperf_ffi::untrusted::{self, ChildSpec, RESULT_FD_ENV};
    let work = tempfile::Builder::new()
        .prefix("pqperf-count-")
        .tempdir()
        .map_err(|e| format!("scratch folder: {e}"))?;
    let w = work.path();
    let abs = |p: &Path| std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()));
    let driver = abs(&opts.driver)?;
    let library = abs(lib)?;
    std::os::unix::fs::symlink(&driver, w.join("d")).map_err(|e| format!("link: {e}"))?;
    std::os::unix::fs::symlink(&library, w.join("l.so")).map_err(|e| format!("link: {e}"))?;
    for d in ["out", "tmp"] {
        std::fs::create_dir(w.join(d)).map_err(|e| format!("scratch folder {d}: {e}"))?;
    }
    let args = counting_args(inst, u, iters);
    let mut argv = vec!["./d".to_string()];
    argv.extend(args.to_argv());
    let flags = valgrind_flags(target);
    // The result descriptor's number is known only in the child: the shell writes it with
    // four digits (the environment keeps its size in every run), clears the environment (valgrind's own temporary files go to `tmp/`) and execs
    // setarch → valgrind → the driver.
    let mut sh = vec![
        "-c".to_string(),
        format!(
            "fd=$(printf %04d \"${RESULT_FD_ENV}\") && exec /usr/bin/env -i {RESULT_FD_ENV}=$fd LC_ALL=C TMPDIR=tmp \"$@\""
        ),
        "sh".to_string(),
    ];
    if let Some(s) = &env.setarch {
        sh.push(s.to_string_lossy().into_owned());
        sh.push("-R".into());
    }
    sh.push(env.valgrind.to_string_lossy().into_owned());
    sh.extend(flags.iter().cloned());
    sh.push("--callgrind-out-file=out/callgrind.out".into());
    sh.extend(argv.iter().cloned());
    let spec = ChildSpec {
        program: "/bin/sh".into(),
        args: sh,
        cwd: w.to_path_buf(),
        timeout: opts.timeout,
        writable: vec![w.join("out"), w.join("tmp")],
        readable: vec![
            driver.parent().map(Path::to_path_buf).unwrap_or_default(),
            library,
        ],
        ..Default::default()
    };
    let t0 = Instant::now();
    let o = untrusted::run(&spec);
    let seconds = t0.elapsed().as_secs_f64();
    let mut command = vec!["valgrind".to_string()];
    command.extend(flags);
    command.push("--callgrind-out-file=out/callgrind.out".into());
    command.push(pqperf_measure::runner::DRIVER_BIN.into());
    command.extend(args.to_argv());
    let mut r = RunResult {
        command,
        seconds,
        output: String::new(),
        undecodable: None,
        failure: None,
    };
    if let Some(e) = o.spawn_error {
        r.failure = Some(format!("cannot start valgrind: {e}"));
        return Ok(r);
    }
    let stderr = o.stderr.text();
    if stderr.contains("unhandled instruction") || stderr.contains("Illegal opcode") {
        r.undecodable =
            Some("valgrind met an instruction it cannot decode (AVX-512?): not counted".into());
        return Ok(r);
    }
    let lines = o.result_lines();
    let complete = lines.iter().any(|l| l == "STATUS\tcomplete");
    if o.timed_out {
        r.failure = Some(format!("timeout after {} s", opts.timeout.as_secs()));
        return Ok(r);
    }
    if o.code() != Some(0) || !complete {
        let tail = o.stderr.tail_chars(400);
        r.failure = Some(format!(
            "the driver under valgrind ended with exit status {:?}{}: {}",
            o.code(),
            if complete {
                ""
            } else {
                " without STATUS complete"
            },
            pqperf_model::captured::escape_captured(&tail)
        ));
        return Ok(r);
    }
    let out = w.join("out/callgrind.out");
    let bytes = std::fs::read(&out).map_err(|e| format!("callgrind output: {e}"))?;
    r.output = String::from_utf8_lossy(&bytes).into_owned();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_follow_the_instruction_budget() {
        assert_eq!(calls_for(18_274, DEFAULT_CALLS), 10);
        assert_eq!(calls_for(11_417_750, DEFAULT_CALLS), 8);
        assert_eq!(calls_for(919_728_721, DEFAULT_CALLS), 1);
        assert_eq!(calls_for(0, 3), 3);
        // One input per call of a counting process: the counted calls and the memory pass.
        assert_eq!(counting_pool(1), 2);
        assert_eq!(counting_pool(10), 11);
        let nist = ApiSpec::Nist {
            kind: "sign".into(),
            namespace: "PQCLEAN_MLDSA44_CLEAN".into(),
            pk: 1,
            sk: 1,
            out: 1,
            ss: 0,
            ctx: true,
            id: "ml-dsa-44".into(),
            instance: "ML-DSA-44".into(),
        };
        assert_eq!(
            target_of(&nist, Some(Category::Sign), "sign").unwrap(),
            Target::one(
                "PQCLEAN_MLDSA44_CLEAN_crypto_sign_signature_ctx".to_string(),
                0,
                1
            )
        );
        assert_eq!(
            target_of(&ApiSpec::Iccs, Some(Category::Kem), "dec").unwrap(),
            Target::one("kem_dec".to_string(), 1, 1)
        );
        assert!(avx512_refusal("-O3 -mavx512f").is_some());
        assert!(avx512_refusal("-O3 -mavx2").is_none());
    }

    #[test]
    fn an_exchange_that_is_not_the_sum_of_its_steps_fails() {
        let e = |op: &str, v: Vec<u64>| CountEvidence {
            candidate: "kex-90".into(),
            label: "T".into(),
            operation: op.into(),
            status: "counted".into(),
            calls: v.len() as u64,
            instructions_per_call: pqperf_model::count::Spread::of(&v),
            instructions: v,
            ..Default::default()
        };
        let set = |x: u64| {
            vec![
                e("exchange", vec![x, 60]),
                e("init_a", vec![10, 10]),
                e("init_b", vec![20, 20]),
                e("derive_a", vec![5, 5]),
                e("derive_b", vec![25, 25]),
            ]
        };
        let mut ok = set(60);
        exchange_is_its_steps(&mut ok);
        assert_eq!(ok[0].status, "counted");
        let mut nested = set(50);
        exchange_is_its_steps(&mut nested);
        assert_eq!(nested[0].status, "failed");
        let why = nested[0].reason.as_deref().unwrap();
        assert!(
            why.contains("counted 50 instructions in call 1, its steps 60"),
            "{why}"
        );
        assert!(
            nested[0].problems().is_empty(),
            "{:?}",
            nested[0].problems()
        );
        // Without every step there is nothing to check.
        let mut alone = set(50);
        alone.truncate(2);
        exchange_is_its_steps(&mut alone);
        assert_eq!(alone[0].status, "counted");
    }

    #[test]
    fn key_exchange_steps_count_their_function_and_the_exchange_counts_every_step() {
        let kex = |op: &str| target_of(&ApiSpec::Iccs, Some(Category::Kex), op);
        // A step: its one function, after the setup exchange, no memory pass.
        assert_eq!(
            kex("pass2").unwrap(),
            Target::one("kex_generate_pass2_msg_b".into(), 1, 0)
        );
        assert_eq!(
            kex("derive_a").unwrap(),
            Target::one("kex_derive_ss_a".into(), 1, 0)
        );
        // The whole exchange: every step's function, a call ends with B's derivation.
        let x = kex("exchange").unwrap();
        assert!(x.is_several());
        assert_eq!(x.symbols.len(), 4 + pqperf_ffi::dl::KEX_MAX_PASS);
        assert_eq!(
            (x.last.as_str(), x.preparation, x.memory_pass),
            ("kex_derive_ss_b", 1, 1)
        );
        assert_eq!(x.dump, KEX_EXCHANGE_FN);
        let f = valgrind_flags(&x);
        assert!(f.contains(&"--toggle-collect=kex_generate_pass1_msg_a".to_string()));
        assert_eq!(
            f.iter().filter(|a| a.starts_with("--dump-after=")).count(),
            1
        );
        assert!(kex("pass0").is_err() && kex("pass17").is_err() && kex("swap").is_err());
    }
}
