//! The body of campaign phase `profile` (method.md §10.5; the CLI adapts it to the
//! campaign, `pqperf/src/cmd/profile.rs`): for every selected measurable *reference*
//! public-key instance (KEM, SIG, KEX; never hash candidates, optimized builds or the ICCS
//! baseline) relink a profiling copy with the wrappers, run the profiling driver child per
//! operation (KEX: only `exchange`) and write `profile/<id>/<label>__<op>.json`; survey the
//! instance's call graph on the way (`survey/<id>.json`).
//!
//! Resumable: an existing profile record is skipped, an instance with all records present is
//! not relinked. A failed relink writes `profile/<id>/<label>__RELINK_FAILED.json`
//! (`{"stderr": …}`) and the phase goes on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_measure::Instance;
use pqperf_measure::driver::DriverArgs;
use pqperf_model::fields::Fields;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::profile::{Profile, ProfileCall, ProfileTotal};
use pqperf_model::pyjson::{self, read_value};
use pqperf_model::vocab::Category;
use serde_json::{Value, json};

use crate::ProfileError;
use crate::callgrind::tail;
use crate::relink::{self, WrapKind};
use crate::survey::{self, InstanceSurvey};

/// How to start the profiling driver child.
#[derive(Debug, Clone)]
pub struct ChildExe {
    /// Executable.
    pub exe: PathBuf,
    /// Arguments before the driver arguments (`["hashprof"]` for the pqperf CLI).
    pub pre_args: Vec<String>,
}

impl ChildExe {
    /// The running pqperf executable with its hidden `hashprof` subcommand.
    pub fn current_pqperf() -> std::io::Result<ChildExe> {
        Ok(ChildExe {
            exe: pqperf_ffi::emulation::self_exe()?,
            pre_args: vec!["hashprof".to_string()],
        })
    }
}

/// Options of one profile phase invocation.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// Run directory (absolute or relative to the working directory).
    pub run_dir: PathBuf,
    /// CPU the child pins itself to.
    pub cpu: Option<usize>,
    /// Seconds of profiled work aimed at per operation (the reference's 1.0 s).
    pub target_s: f64,
    /// `Some(s)`: a verify/dec child's input pool holds at most the entries its preparation
    /// (sign/enc calls at their calibrated time) makes in `s` × its profiled calls' time, at
    /// least [`BOUNDED_POOL_FLOOR`], and its iterations walk the pool again (the demo, whose
    /// SPHINCS+ verify otherwise signed 366 messages, 18 s, to profile 1 s of verifications).
    /// `None` (campaigns): every call an input of its own ([`profiling_pool`]).
    pub prep_share: Option<f64>,
    /// Child executable.
    pub child: ChildExe,
}

/// Profiled operation keys of a category ([`Category::profiled`]: KEX only `exchange`; a hash
/// or an id of no category none).
pub fn profile_ops(category: Option<Category>) -> Vec<String> {
    category
        .map(Category::profiled)
        .unwrap_or_default()
        .into_iter()
        .map(|o| o.key().into_owned())
        .collect()
}

/// Iterations and warm-ups for an operation whose calibrated single call took `t1` seconds
/// (§10.5): ITERS = 1 if t1 > 60 s else min(1000, max(3, ⌈target ÷ t1⌉)); WARMUPS = 1 if
/// t1 < 5 s else 0.
pub fn iterations(t1: f64, target_s: f64) -> (u64, u64) {
    let t1 = t1.max(1e-9);
    let iters = if t1 > 60.0 {
        1
    } else {
        ((target_s / t1).ceil() as u64).clamp(3, 1000)
    };
    let warm = if t1 < 5.0 { 1 } else { 0 };
    (iters, warm)
}

/// Entries of a profiling child's verify/dec input pool: its warm-ups, its `iters` profiled
/// iterations and [`SET_ASIDE_SLACK`] iterations set aside and repeated, each call with an
/// input of its own. The timing driver's rule also reserves a sampled trial (up to 400
/// calls), which a profiling child does not run: for SPHINCS+ verify that was 668 signatures
/// (≈ 32 s) to profile 332 verifications.
pub fn profiling_pool(iters: u64, warmups: u64) -> u64 {
    iters
        .saturating_add(warmups)
        .saturating_add(SET_ASIDE_SLACK)
}

/// The fewest entries of a pool bounded by [`ProfileOptions::prep_share`].
pub const BOUNDED_POOL_FLOOR: u64 = 32;

/// The operation whose calls prepare `op`'s inputs (`verify` ← `sign`, `dec` ← `enc`), if any.
pub fn preparing_op(op: &str) -> Option<&'static str> {
    match op {
        "verify" => Some("sign"),
        "dec" => Some("enc"),
        _ => None,
    }
}

/// The input pool of a profiling child ([`profiling_pool`]), bounded when `share` is given and
/// the preparing call's time `t1_prep` is known: at most ⌈share × iters × t1 ÷ t1_prep⌉
/// entries, at least [`BOUNDED_POOL_FLOOR`].
pub fn bounded_pool(
    iters: u64,
    warmups: u64,
    t1: f64,
    t1_prep: Option<f64>,
    share: Option<f64>,
) -> u64 {
    let full = profiling_pool(iters, warmups);
    match (share, t1_prep) {
        (Some(share), Some(tp)) if tp > 0.0 && share.is_finite() && share >= 0.0 => {
            let n = (share * iters as f64 * t1.max(0.0) / tp).ceil();
            let n = if n.is_finite() {
                n.min(u64::MAX as f64) as u64
            } else {
                u64::MAX
            };
            full.min(n.max(BOUNDED_POOL_FLOOR))
        }
        _ => full,
    }
}

/// Iterations set aside (the thread lost the CPU) that the profiling pool still covers with
/// inputs of their own; further repeats take the pool's entries again from the first.
pub const SET_ASIDE_SLACK: u64 = 16;

/// The child's hard timeout: the reference's 3·(ITERS + WARMUPS)·t1 + 3·setup + 300 s, with
/// ITERS widened to the set-aside budget (4·ITERS + 16).
pub fn timeout_s(iters: u64, warmups: u64, t1: f64, setup: f64) -> f64 {
    3.0 * ((4 * iters + 16 + warmups) as f64) * t1 + 3.0 * setup + 300.0
}

/// Output of one child run.
#[derive(Debug, Clone, Default)]
pub struct ChildRun {
    /// Exit code (None when killed).
    pub exit_code: Option<i32>,
    /// stdout lines.
    pub lines: Vec<String>,
    /// stderr (last 2000 characters).
    pub stderr: String,
    /// True when the hard timeout fired.
    pub timed_out: bool,
    /// argv as recorded (`pqperf hashprof …`).
    pub command: Vec<String>,
}

/// Run the child with `args` in `cwd`, contained (`pqperf_ffi::untrusted`), killing its
/// process group after `timeout`; its lines come from the private result channel.
pub fn run_child(child: &ChildExe, args: &[String], cwd: &Path, timeout: Duration) -> ChildRun {
    let mut command = vec!["pqperf".to_string(), "hashprof".to_string()];
    command.extend(args.iter().cloned());
    let mut all = child.pre_args.clone();
    all.extend(args.iter().cloned());
    let out = untrusted::run(&ChildSpec {
        program: child.exe.clone(),
        args: all,
        cwd: cwd.to_path_buf(),
        timeout,
        // The parent pins the child (`--cpu N` of the driver's and hashprof's arguments):
        // inside the sandbox it cannot change its affinity itself.
        cpu: args
            .windows(2)
            .find(|w| w[0] == "--cpu")
            .and_then(|w| w[1].parse().ok()),
        ..Default::default()
    });
    if let Some(e) = out.spawn_error {
        return ChildRun {
            stderr: e,
            command,
            ..Default::default()
        };
    }
    let mut err = out.stderr.text();
    if out.timed_out {
        err.push_str("\nhard timeout");
    }
    let exit_code = if out.result_truncated {
        None
    } else {
        out.status.and_then(|s| s.code())
    };
    ChildRun {
        exit_code,
        lines: out.result_lines(),
        // Captured candidate output: the last characters, control characters escaped.
        stderr: pqperf_model::captured::escape_captured(&tail(
            &err,
            pqperf_model::captured::STDERR_KEEP_CHARS,
        )),
        timed_out: out.timed_out,
        command,
    }
}

/// Parsed child output.
#[derive(Debug, Clone, Default)]
pub struct ChildOutput {
    /// META key → value (strings), in order.
    pub meta: IndexMap<String, String>,
    /// TOTAL (operations, ticks).
    pub total: Option<(u64, u64)>,
    /// CALL rows.
    pub calls: Vec<ProfileCall>,
    /// PQPERF key → value.
    pub pqperf: IndexMap<String, String>,
    /// STATUS value.
    pub status: Option<String>,
}

/// Parse the child's tab-separated lines.
pub fn parse_child(lines: &[String]) -> ChildOutput {
    let mut o = ChildOutput::default();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        match f.as_slice() {
            ["META", k, v] => {
                o.meta.insert(k.to_string(), v.to_string());
            }
            ["TOTAL", n, t] => {
                if let (Ok(n), Ok(t)) = (n.parse(), t.parse()) {
                    o.total = Some((n, t));
                }
            }
            ["CALL", f, i, out, c, t] => {
                if let (Ok(i), Ok(out), Ok(c), Ok(t)) =
                    (i.parse(), out.parse(), c.parse(), t.parse())
                {
                    o.calls.push(ProfileCall {
                        func: f.to_string(),
                        in_bits: i,
                        out_bits: out,
                        calls: c,
                        ticks: t,
                        ..Default::default()
                    });
                }
            }
            ["PQPERF", k, v] => {
                o.pqperf.insert(k.to_string(), v.to_string());
            }
            ["STATUS", s] => o.status = Some(s.to_string()),
            _ => {}
        }
    }
    o
}

/// Inputs for building one profile record.
pub struct RecordInput<'a> {
    /// Candidate id.
    pub candidate: &'a str,
    /// Label.
    pub label: &'a str,
    /// Operation.
    pub operation: &'a str,
    /// The child run.
    pub run: &'a ChildRun,
    /// Symbols wrapped in the profiling build.
    pub wrapped: &'a [String],
    /// Profiling library, run-relative.
    pub library: &'a str,
    /// Calibration t1 used for the iteration count (None: default 1.0 s).
    pub t1_s: Option<f64>,
    /// KAT status of the profiling build and its log (run-relative).
    pub kat: Option<(&'a str, &'a str)>,
    /// build.json `library_sha256` of the built library the profiling copy was relinked
    /// from (`pqperf.library_sha256`: a rebuild makes the profile stale).
    pub library_sha256: Option<&'a str>,
    /// build.json `inputs_sha256` of that library (`pqperf.inputs_sha256`).
    pub inputs_sha256: Option<&'a str>,
}

fn num(v: Option<&String>) -> Value {
    if let Some(i) = v.and_then(|s| s.parse::<u64>().ok()) {
        return json!(i);
    }
    match v.and_then(|s| s.parse::<f64>().ok()) {
        Some(x) if x.is_finite() => json!(x),
        _ => Value::Null,
    }
}

/// Build the profile record (evidence-formats.md §5; pqperf additions under `pqperf`).
pub fn build_record(inp: &RecordInput<'_>) -> Profile {
    let out = parse_child(&inp.run.lines);
    let complete = inp.run.exit_code == Some(0) && out.total.is_some();
    let mut meta = Fields::default();
    for (k, v) in &out.meta {
        meta.insert(k.clone(), Value::String(v.clone()));
    }
    let mut p = Profile {
        schema: 2,
        candidate: inp.candidate.to_string(),
        label: inp.label.to_string(),
        operation: inp.operation.to_string(),
        input_bytes: 0,
        status: if complete {
            "complete".to_string()
        } else if inp.run.timed_out {
            "hard_timeout".to_string()
        } else {
            "failed".to_string()
        },
        command: inp.run.command.clone(),
        stderr: inp.run.stderr.clone(),
        meta,
        total: out.total.map(|(operations, ticks)| ProfileTotal {
            operations,
            ticks,
            ..Default::default()
        }),
        calls: out.calls.clone(),
        share: IndexMap::new(),
        hash_share: Value::from(0),
        ..Default::default()
    };
    if let Some((share, hash)) = p.recompute_shares() {
        p.share = share;
        p.hash_share = hash;
    }
    let ops = out.total.map(|t| t.0).unwrap_or(0).max(1) as f64;
    let total_ticks = out.total.map(|t| t.1).unwrap_or(0) as f64;
    let mut per_fn: IndexMap<String, (u64, u64)> = IndexMap::new();
    for c in &out.calls {
        let e = per_fn.entry(c.func.clone()).or_insert((0, 0));
        e.0 += c.calls;
        if c.func == "drng" {
            e.1 += c.calls * c.out_bits.div_ceil(8);
        }
    }
    let calls_total: u64 = per_fn.values().map(|v| v.0).sum();
    let drng_bytes = per_fn.get("drng").map(|v| v.1).unwrap_or(0);
    let calls_per_op: serde_json::Map<String, Value> = per_fn
        .iter()
        .map(|(f, (c, _))| (f.clone(), json!(*c as f64 / ops)))
        .collect();
    let inner = out
        .pqperf
        .get("wrapper_inner_ticks_per_call")
        .and_then(|s| s.parse::<f64>().ok());
    let outer = out
        .pqperf
        .get("wrapper_outer_ticks_per_call")
        .and_then(|s| s.parse::<f64>().ok());
    let est = |x: Option<f64>| match x {
        Some(v) if total_ticks > 0.0 => json!(v * calls_total as f64 / total_ticks),
        _ => Value::Null,
    };
    let pq = json!({
        "library": inp.library,
        "wrapped_symbols": inp.wrapped,
        "calls_per_operation": calls_per_op,
        "drng_bytes_per_operation": drng_bytes as f64 / ops,
        "wrapper_overhead": {
            "outer_ticks_per_call": num(out.pqperf.get("wrapper_outer_ticks_per_call")),
            "inner_ticks_per_call": num(out.pqperf.get("wrapper_inner_ticks_per_call")),
            "wrapped_calls_per_operation": calls_total as f64 / ops,
            "share_of_total_outer": est(outer),
            "share_charged_to_helpers": est(inner),
            "note": "not subtracted from the shares (as the reference); inner = ticks an empty wrapped call carries in its own count, outer = ticks a wrapped call adds to the operation total",
        },
        "discarded_iterations": num(out.pqperf.get("discarded_iterations")),
        "disturbed_kept": num(out.pqperf.get("disturbed_kept")),
        "calibration_t1_s": inp.t1_s,
        "profiling_build_kat": inp.kat.map(|k| k.0),
        "profiling_build_kat_log": inp.kat.map(|k| k.1),
        "library_sha256": inp.library_sha256,
        "inputs_sha256": inp.inputs_sha256,
    });
    p.extra.insert("pqperf".to_string(), pq);
    p
}

/// Summary of a phase run.
#[derive(Debug, Clone, Default)]
pub struct PhaseSummary {
    /// Records written.
    pub written: usize,
    /// Records skipped (already present).
    pub skipped: usize,
    /// Records that are not complete.
    pub failed: usize,
    /// Instances whose relink failed.
    pub relink_failed: usize,
}

/// Profile the given instances (already selected) — the body of the phase. An existing
/// profile record is kept (see [`profile_instances_with`] for the stale check).
pub fn profile_instances(
    opts: &ProfileOptions,
    insts: &[Instance],
    log: &dyn Fn(String),
) -> Result<PhaseSummary, ProfileError> {
    profile_instances_with(opts, insts, log, &mut |_, _, _| false)
}

/// The decision whether an existing profile record is done again: `(path, library it names,
/// built library)` → redo.
pub type RedoExisting<'a> = dyn FnMut(&Path, Option<&str>, Option<&str>) -> bool + 'a;

/// [`profile_instances`], where `redo(path, named, built)` decides whether an existing
/// profile record at `path`, naming the library `named` (`pqperf.library_sha256`), is done
/// again for the built library `built` (the campaign's `EvidenceCheck`, passed by the CLI's
/// adapter of the phase).
pub fn profile_instances_with(
    opts: &ProfileOptions,
    insts: &[Instance],
    log: &dyn Fn(String),
    redo: &mut RedoExisting<'_>,
) -> Result<PhaseSummary, ProfileError> {
    let run = &opts.run_dir;
    let layout = RunLayout::new(run);
    let mut sum = PhaseSummary::default();
    let mut surveys: BTreeMap<String, Vec<InstanceSurvey>> = BTreeMap::new();
    for inst in insts {
        let e = &inst.entry;
        if e.variant != "reference" || inst.category.is_none_or(|c| c.profiled().is_empty()) {
            continue;
        }
        let ops = profile_ops(inst.category);
        let pending: Vec<&str> = ops
            .iter()
            .map(String::as_str)
            .filter(|op| {
                let p = layout.profile(&e.candidate, &e.label, op);
                if !p.exists() {
                    return true;
                }
                let named = read_value(&p)
                    .and_then(|v| v["pqperf"]["library_sha256"].as_str().map(str::to_string));
                redo(&p, named.as_deref(), e.library_sha256.as_deref())
            })
            .collect();
        let kind = match inst.api {
            pqperf_measure::driver::ApiSpec::Iccs => WrapKind::Iccs,
            pqperf_measure::driver::ApiSpec::Nist { .. } => WrapKind::Nist,
        };
        let rel_lib = RunLayout::profiling_library_rel(&e.candidate, &e.label);
        let scratch = layout.profiling_scratch(&e.candidate, &e.label);
        // Survey needs only the link inputs; relink only when records are missing.
        let link = relink::link_command(run, &e.candidate, &e.label);
        if let Ok(l) = &link {
            let inputs: Vec<PathBuf> = l
                .inputs()
                .into_iter()
                .filter(|p| !is_provider_or_shim(p))
                .collect();
            let surveyed = crate::objscan::read_inputs(&inputs).map(|objs| {
                let entries = survey::api_entries(&objs);
                survey::survey_objects(&e.label, &objs, &entries)
            });
            match surveyed {
                Ok(s) => surveys.entry(e.candidate.clone()).or_default().push(s),
                Err(err) => log(format!("survey {} {}: {err}", e.candidate, e.label)),
            }
        }
        sum.skipped += ops.len() - pending.len();
        if pending.is_empty() {
            continue;
        }
        let relinked = link.and_then(|l| relink::relink(&l, kind, &scratch, &run.join(&rel_lib)));
        let failed_path = layout.relink_failed(&e.candidate, &e.label);
        let relinked = match relinked {
            Ok(r) => {
                let _ = std::fs::remove_file(&failed_path);
                r
            }
            Err(err) => {
                sum.relink_failed += 1;
                let p = failed_path;
                let v = json!({"stderr": tail(&err.to_string(), 2000)});
                write_atomic(&p, pyjson::value_to_string(&v).as_bytes())
                    .map_err(|x| ProfileError::io(&p, x))?;
                log(format!(
                    "profile {} {}: relink failed: {err}",
                    e.candidate, e.label
                ));
                continue;
            }
        };
        let kat = profiling_build_kat(opts, &e.candidate, &e.label, &run.join(&rel_lib));
        log(format!(
            "profile {} {}: KAT of the profiling build: {}",
            e.candidate, e.label, kat.0
        ));
        for op in pending {
            let cal =
                pqperf_model::calibration::read(&layout.calibration(&e.candidate, &e.label, op));
            let t1 = cal.as_ref().and_then(|c| c.t1_s);
            let setup = cal.as_ref().and_then(|c| c.setup_s).unwrap_or(0.0);
            let t1v = t1.unwrap_or(1.0);
            let (iters, warm) = iterations(t1v, opts.target_s);
            let t1_prep = preparing_op(op).and_then(|p| {
                pqperf_model::calibration::read(&layout.calibration(&e.candidate, &e.label, p))
                    .and_then(|c| c.t1_s)
            });
            let args = DriverArgs {
                lib: PathBuf::from(&rel_lib),
                op: op.to_string(),
                bytes: 0,
                trials: 1,
                iters,
                warmups: warm,
                cpu: opts.cpu,
                samples: false,
                force_ticks: false,
                api: inst.api.clone(),
                stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
                seed: None,
                pool_max: Some(bounded_pool(iters, warm, t1v, t1_prep, opts.prep_share)),
                prepare: false,
                relayed: false,
            };
            let child_run = run_child(
                &opts.child,
                &args.to_argv(),
                run,
                Duration::from_secs_f64(timeout_s(iters, warm, t1v, setup)),
            );
            let rec = build_record(&RecordInput {
                candidate: &e.candidate,
                label: &e.label,
                operation: op,
                run: &child_run,
                wrapped: &relinked.wrapped,
                library: &rel_lib,
                t1_s: t1,
                kat: Some((&kat.0, &kat.1)),
                library_sha256: e.library_sha256.as_deref(),
                inputs_sha256: pqperf_build::current::recorded_inputs(e),
            });
            let path = layout.profile(&e.candidate, &e.label, op);
            let text = pyjson::to_string(&rec).map_err(|x| ProfileError::Other(x.to_string()))?;
            write_atomic(&path, text.as_bytes()).map_err(|x| ProfileError::io(&path, x))?;
            sum.written += 1;
            if rec.status != "complete" {
                sum.failed += 1;
            }
            log(format!(
                "profile {} {} {op}: {} hash={:.1}% drng={:.1}%",
                e.candidate,
                e.label,
                rec.status,
                100.0 * rec.hash_share_f64(),
                100.0 * rec.share_of("drng")
            ));
        }
    }
    for (id, list) in surveys {
        let c = survey::combine(&id, list);
        let p = layout.survey(&id);
        let text =
            serde_json::to_string_pretty(&c).map_err(|x| ProfileError::Other(x.to_string()))?;
        write_atomic(&p, format!("{text}\n").as_bytes()).map_err(|x| ProfileError::io(&p, x))?;
    }
    Ok(sum)
}

/// Run the KAT stage's procedure on the profiling build (in a child, `--kat JOB`): the wrappers
/// must leave every output unchanged. Returns (status, run-relative log path); `NOKAT` when
/// the instance is not in the run's catalog.
pub fn profiling_build_kat(
    opts: &ProfileOptions,
    id: &str,
    label: &str,
    lib: &Path,
) -> (String, String) {
    let run = &opts.run_dir;
    let out_rel = RunLayout::profiling_kat_rel(id, label);
    let log_rel = format!("{out_rel}.log");
    let cat_path = RunLayout::new(run).catalog();
    let Ok(cat) = pqperf_model::catalog::Catalog::load(&cat_path) else {
        return ("NOKAT".into(), log_rel);
    };
    let Some((c, i)) = cat
        .instances()
        .find(|(c, i)| c.id == id && i.label == label)
    else {
        return ("NOKAT".into(), log_rel);
    };
    let entry = RunLayout::new(run)
        .read_build()
        .ok()
        .and_then(|b| b.instances.get(&format!("{id}/{label}")).cloned());
    let extra = |k: &str| {
        entry
            .as_ref()
            .and_then(|e| e.extra.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let catalog_dir = cat_path.parent().unwrap_or(Path::new("."));
    let catalog_dir = std::fs::canonicalize(catalog_dir).unwrap_or(catalog_dir.to_path_buf());
    let run_abs = std::fs::canonicalize(run).unwrap_or(run.clone());
    let job = pqperf_kat::KatJob {
        id: c.id.clone(),
        label: i.label.clone(),
        instance: i.instance.clone(),
        kind: c.kind,
        algorithm: c.algorithm.clone(),
        variant: i.variant.clone(),
        source_dir: i.source_dir.clone(),
        compiler: extra("compiler"),
        build_flags: extra("build_flags"),
        library: std::fs::canonicalize(lib).unwrap_or(lib.to_path_buf()),
        root: c.root_path(&catalog_dir),
        api: i.api,
        nist: i.nist.clone(),
        kat: i.kat.clone(),
        out_dir: run_abs.join(&out_rel),
        out_rel: out_rel.clone(),
        log: run_abs.join(&log_rel),
        hash_loop: false,
        hash_full: false,
        inputs_sha256: entry
            .as_ref()
            .and_then(pqperf_build::current::recorded_inputs)
            .map(str::to_string),
    };
    let job_path = run_abs.join(format!("{out_rel}.job.json"));
    if let Some(dir) = job_path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let Ok(text) = serde_json::to_string(&job) else {
        return ("LOADFAIL".into(), log_rel);
    };
    if std::fs::write(&job_path, text).is_err() {
        return ("LOADFAIL".into(), log_rel);
    }
    let mut args = opts.child.pre_args.clone();
    args.extend(["--kat".to_string(), job_path.display().to_string()]);
    let r = pqperf_kat::run_contained(&opts.child.exe, args, run, &job, Duration::from_secs(1800));
    let _ = std::fs::remove_file(&job_path);
    let status = match r {
        Ok(r) => r.status,
        Err(_) => "LOADFAIL".into(),
    };
    (status, log_rel)
}

/// The ICCS provider archive and the harness shim object are harness code, not candidate
/// code: the survey leaves them out (reaching a helper then shows as an external name).
fn is_provider_or_shim(p: &Path) -> bool {
    let s = p.to_string_lossy();
    s.contains("/provider/") || s.ends_with(".pqperf-shim.o")
}

/// Keys compared by the baseline's host-state guard (method.md §2.11 step 2).
const HOST_KEYS: &[&str] = &[
    "hostname",
    "cpu_model",
    "cpu_number",
    "cpufreq_governor",
    "cpufreq_max_khz",
    "intel_pstate_no_turbo",
    "cpufreq_boost",
    "smt_control",
    "perf_event_paranoid",
    "core_clock_mhz",
];

/// The baseline's host-state guard: the first complete record (by path, outside `iccs/`)
/// taken on `cpu` is compared with the environment now on the keys it has; differences are
/// returned as `k: run a, now b; …`. `core_clock_mhz` differing by less than 1 % counts as
/// equal (a measured clock, not a setting).
pub fn host_state_difference(run: &Path, cpu: usize, now: &Value) -> Option<String> {
    let mut files = Vec::new();
    for c in std::fs::read_dir(RunLayout::new(run).records_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        if c.file_name() == "iccs" {
            continue;
        }
        for f in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
            files.push(f.path());
        }
    }
    files.sort();
    let old = files.iter().filter_map(|f| read_value(f)).find(|r| {
        r["status"] == "complete" && r["environment"]["cpu_number"].as_u64() == Some(cpu as u64)
    })?;
    let env = &old["environment"];
    let mut diffs = Vec::new();
    for k in HOST_KEYS {
        let Some(a) = env.get(*k) else { continue };
        let b = now.get(*k).unwrap_or(&Value::Null);
        let same = match (k, a.as_f64(), b.as_f64()) {
            (&"core_clock_mhz", Some(x), Some(y)) => (x - y).abs() <= 0.01 * x.abs(),
            _ => a == b,
        };
        if !same {
            diffs.push(format!("{k}: run {a}, now {b}"));
        }
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_pool_costs_at_most_its_share_of_the_profiled_calls() {
        // SPHINCS+-SHAKE-128f verify (2.87 ms) prepared by 49 ms signatures: the floor.
        let (iters, warm) = iterations(0.00287, 1.0);
        let full = profiling_pool(iters, warm);
        assert_eq!(full, 366);
        assert_eq!(
            bounded_pool(iters, warm, 0.00287, Some(0.049), Some(1.0)),
            32
        );
        // ML-DSA-44 verify (122 µs, 1000 iterations) by 290 µs signatures: 0.122 s ÷ 290 µs.
        let (iters, warm) = iterations(0.000122, 1.0);
        assert_eq!(
            bounded_pool(iters, warm, 0.000122, Some(0.00029), Some(1.0)),
            421
        );
        // A cheap preparation keeps the whole pool; no share or no calibration: unchanged.
        let (iters, warm) = iterations(0.000069, 1.0);
        let full = profiling_pool(iters, warm);
        assert_eq!(
            bounded_pool(iters, warm, 0.000069, Some(0.000049), Some(1.0)),
            full
        );
        assert_eq!(bounded_pool(iters, warm, 0.000069, None, Some(1.0)), full);
        assert_eq!(bounded_pool(iters, warm, 0.000069, Some(0.1), None), full);
        assert_eq!(preparing_op("verify"), Some("sign"));
        assert_eq!(preparing_op("dec"), Some("enc"));
        assert_eq!(preparing_op("keygen"), None);
    }

    #[test]
    fn the_profiling_pool_covers_the_profiled_calls() {
        // SPHINCS+ verify at the reference's 1 s target: 332 iterations, one warm-up.
        let (iters, warm) = iterations(0.003014, 1.0);
        assert_eq!((iters, warm), (332, 1));
        assert_eq!(profiling_pool(iters, warm), 332 + 1 + SET_ASIDE_SLACK);
        assert_eq!(profiling_pool(u64::MAX, 1), u64::MAX);
    }
}
