//! Stage ct: constant-time evidence per operation, TIMECOP-style.
//!
//! For each built instance, a dedicated build with debug info (`-g` added to the instance's
//! recorded flag set, in `<run>/build/ct/`) is linked with a generated C driver
//! ([`driver`]) and run once per operation under `valgrind --tool=memcheck` with the secret
//! inputs marked undefined (secret key, DRNG output, KEX private values; what the scheme
//! publishes verbatim, found by a native first pass, is left defined). Every branch or
//! memory index that depends on them is reported by memcheck; [`valgrind`] reads the XML
//! report into findings grouped by source location, [`accepted`] applies the curated table
//! of accepted findings, and the evidence is written atomically to `<run>/ct/<id>/<label>.json`
//! ([`pqperf_model::ct::CtEvidence`]). [`check_helpers`] runs the ICCS helpers (DRNG,
//! `sm3hash`, `pseudohash`, `pseudoXOF`) the same way (`ct/iccs/helpers.json`).
//!
//! What it shows: no secret-dependent branch or address was executed on the inputs and
//! code paths of this run, with these flags and this compiler. What it does not show:
//! other paths (other keys, messages, rejection counts), variable-time instructions
//! (division, multiplication on some CPUs), or anything about other compilers or flags.

#![forbid(unsafe_code)]

pub mod accepted;
pub mod driver;
pub mod family;
pub mod valgrind;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pqperf_build::compile::run_logged;
use pqperf_build::{BuildCtx, FlagSet};
use pqperf_model::catalog::{Candidate, Catalog, Instance};
use pqperf_model::ct::{CT_SCHEMA, CtEvidence, CtOperation};
use pqperf_model::layout::RunLayout;
use pqperf_model::select::Selection;

pub use accepted::AcceptedTable;

/// Errors of the ct stage.
#[derive(Debug, thiserror::Error)]
pub enum CtError {
    /// Bad input (catalog, accepted-findings table, option).
    #[error("{0}")]
    Input(String),
    /// The build stage failed to set up.
    #[error(transparent)]
    Build(#[from] pqperf_build::BuildError),
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CtError + '_ {
    move |source| CtError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Options of `pqperf ct`.
#[derive(Debug, Clone)]
pub struct CtOptions {
    /// Run directory (build.json, catalog; evidence goes to `ct/`).
    pub run_dir: PathBuf,
    /// Catalog file (default `<run>/catalog.toml`).
    pub catalog: Option<PathBuf>,
    /// The instances checked (`--only`, or the keys a campaign phase hands on).
    pub select: Selection,
    /// Accepted-findings table (default: the shipped one).
    pub accepted: Option<PathBuf>,
    /// valgrind executable.
    pub valgrind: String,
    /// Per-operation timeout.
    pub timeout: Duration,
    /// Instances checked concurrently.
    pub jobs: usize,
    /// Print one line per instance on stderr.
    pub progress: bool,
}

impl CtOptions {
    /// Defaults for a run directory.
    pub fn new(run_dir: impl Into<PathBuf>) -> CtOptions {
        CtOptions {
            run_dir: run_dir.into(),
            catalog: None,
            select: Selection::all(),
            accepted: None,
            valgrind: "valgrind".into(),
            timeout: Duration::from_secs(600),
            jobs: 2,
            progress: false,
        }
    }
}

/// What a `ct` run did.
#[derive(Debug, Clone, Default)]
pub struct CtSummary {
    /// Evidence per instance, in catalog order (the helper check first).
    pub evidence: Vec<CtEvidence>,
    /// Run-relative paths written.
    pub written: Vec<String>,
    /// Wall seconds of the run.
    pub seconds: f64,
}

fn utc_now() -> String {
    let f =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]+00:00");
    time::OffsetDateTime::now_utc()
        .format(&f)
        .unwrap_or_default()
}

/// What contains the valgrind runs (`pqperf_ffi::untrusted`'s record, as in a campaign's
/// `pqperf.sandbox`), stated on the method page.
fn sandbox_record() -> Option<serde_json::Value> {
    Some(pqperf_ffi::untrusted::in_force_json(
        &pqperf_ffi::untrusted::policy(),
    ))
}

fn not_run(name: &str, secrets: &[&str], reason: String) -> CtOperation {
    let mut o = CtOperation {
        operation: name.to_string(),
        secret_inputs: secrets.iter().map(|s| s.to_string()).collect(),
        status: "not run".into(),
        reason: Some(reason),
        ..Default::default()
    };
    o.settle();
    o
}

/// Run the driver `exe` (in `cwd`) once per operation and record each.
#[allow(clippy::too_many_arguments)]
fn run_ops(
    opts: &CtOptions,
    cwd: &Path,
    tree: &Path,
    exe: &str,
    ops: &[(&str, &[&str])],
    table: &AcceptedTable,
    id: &str,
    label: &str,
) -> Vec<CtOperation> {
    let mut out = Vec::new();
    for (name, secrets) in ops {
        let args = valgrind::memcheck_args();
        let mut exe_and_op = vec![format!("./{exe}"), name.to_string()];
        let mut secrets: Vec<String> = secrets.iter().map(|s| s.to_string()).collect();
        let drng = secrets.iter().position(|s| s == driver::DRNG);
        let key = secrets.iter().position(|s| s == driver::SECRET_KEY);
        if drng.is_some() || key.is_some() {
            // First pass: what the scheme publishes verbatim (drawn randomness in the output,
            // secret-key bytes in the public key) is not secret.
            match valgrind::probe(cwd, exe, name, opts.timeout) {
                Ok(p) => {
                    let public = p.public_draws();
                    let ranges = p.public_key_ranges();
                    if let Some(i) = drng
                        && !public.is_empty()
                    {
                        secrets[i] = format!(
                            "{} except {} of {} draws (found verbatim in the public output by a first pass)",
                            driver::DRNG,
                            public.len(),
                            p.draws.len()
                        );
                    }
                    if let Some(i) = key
                        && !ranges.is_empty()
                    {
                        let n: usize = ranges.iter().map(|r| r.1).sum();
                        secrets[i] = format!(
                            "{} except {n} of {} bytes (found verbatim in the public key by a first pass)",
                            driver::SECRET_KEY,
                            p.secret_key.as_ref().map_or(0, Vec::len)
                        );
                    }
                    if !public.is_empty() || !ranges.is_empty() {
                        let list: Vec<String> = public.iter().map(|i| i.to_string()).collect();
                        exe_and_op.push(format!("public={}", list.join(",")));
                    }
                    if !ranges.is_empty() {
                        let list: Vec<String> =
                            ranges.iter().map(|(o, l)| format!("{o}:{l}")).collect();
                        exe_and_op.push(format!("key={}", list.join(",")));
                    }
                }
                Err(e) => {
                    for i in [drng, key].into_iter().flatten() {
                        secrets[i] =
                            format!("{} (all of it: the first pass failed: {e})", secrets[i]);
                    }
                }
            }
        }
        let command = format!(
            "{} {} --xml-fd=<result channel> {}",
            opts.valgrind,
            args.join(" "),
            exe_and_op.join(" ")
        );
        let t0 = Instant::now();
        let outcome = valgrind::run(&opts.valgrind, cwd, &args, &exe_and_op, opts.timeout);
        let text = outcome.xml.clone();
        let parsed = valgrind::parse_xml(&text);
        let mut op = CtOperation {
            operation: name.to_string(),
            secret_inputs: secrets,
            status: "run".into(),
            command,
            seconds: (t0.elapsed().as_secs_f64() * 100.0).round() / 100.0,
            ..Default::default()
        };
        match parsed {
            Ok(errors) => op.groups = valgrind::group(&errors, tree),
            Err(e) => {
                op.status = "not run".into();
                op.reason = Some(e);
            }
        }
        let reason = if outcome.timed_out {
            Some(format!("timeout after {} s", opts.timeout.as_secs()))
        } else {
            match outcome.code {
                Some(0) => None,
                Some(1) => Some("the operation returned an error".to_string()),
                Some(10) => Some("setup (key generation or encapsulation) failed".to_string()),
                Some(c) => Some(format!(
                    "driver exit status {c}: {}",
                    outcome.stderr_tail.lines().last().unwrap_or("")
                )),
                None => Some("the driver was killed by a signal".to_string()),
            }
        };
        // Findings are read only from a report that arrived whole: an empty or cut report
        // is never "no findings".
        if let Some(r) = reason.or(outcome.incomplete.clone()) {
            op.status = "not run".into();
            op.reason = Some(r);
        }
        table.apply(id, label, name, &mut op.groups);
        op.settle();
        out.push(op);
    }
    out
}

fn write_evidence(run_dir: &Path, ev: &CtEvidence) -> Result<String, CtError> {
    let rel = RunLayout::ct_rel(&ev.candidate, &ev.label);
    let path = run_dir.join(&rel);
    let text =
        pqperf_model::pyjson::to_string(ev).map_err(|e| CtError::Input(format!("{rel}: {e}")))?;
    pqperf_model::fsutil::write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
    Ok(rel)
}

/// Check one instance: dedicated `-g` build, driver link, one valgrind run per operation.
pub fn check_instance(
    opts: &CtOptions,
    ctx: &BuildCtx,
    cand: &Candidate,
    inst: &Instance,
    set: FlagSet,
    table: &AcceptedTable,
    tool: &str,
) -> CtEvidence {
    let mut ev = CtEvidence {
        schema: CT_SCHEMA,
        candidate: cand.id.clone(),
        label: inst.label.clone(),
        api: inst.api.to_string(),
        flags: set.name().to_string(),
        tool: tool.to_string(),
        utc: utc_now(),
        sandbox: sandbox_record(),
        ..Default::default()
    };
    let specs = driver::operations(cand.kind);
    let ops: Vec<(&str, &[&str])> = specs.iter().map(|s| (s.name, s.secrets)).collect();
    let all_not_run = |reason: &str| -> Vec<CtOperation> {
        ops.iter()
            .map(|(n, s)| not_run(n, s, reason.to_string()))
            .collect()
    };
    let Some(src) = driver::driver_source(cand.kind, inst.api, inst.nist.as_ref()) else {
        ev.operations = vec![not_run(
            "all",
            &[],
            format!(
                "{} instances have no secret input to check",
                cand.kind.as_str()
            ),
        )];
        return ev;
    };
    let mut dbg = inst.clone();
    if !dbg.cflags.iter().any(|f| f == "-g") {
        dbg.cflags.push("-g".into());
    }
    let b = pqperf_build::build_instance(ctx, cand, &dbg, set);
    ev.build_flags = b.flag_string.clone();
    let work = pqperf_build::compile::work_dir(&ctx.run_dir, &cand.id, &inst.label);
    let mut log = b.log.clone();
    if !b.ok {
        ev.operations = all_not_run(&format!(
            "the -g build failed: {}",
            b.error.as_deref().unwrap_or("see the log")
        ));
        let _ = std::fs::create_dir_all(&work);
        let _ = std::fs::write(work.join(".pqperf-ct.log"), &log);
        return ev;
    }
    let _ = std::fs::remove_file(&b.library);
    let mut objects: Vec<String> = std::fs::read_dir(work.join(".pqperf-obj"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".o"))
                .map(|n| format!(".pqperf-obj/{n}"))
                .collect()
        })
        .unwrap_or_default();
    objects.sort();
    let ok = std::fs::write(work.join(".pqperf-ct-driver.c"), src).is_ok()
        && run_logged(
            &ctx.run_dir,
            &work,
            &[
                "gcc".into(),
                "-g".into(),
                "-O1".into(),
                "-std=gnu11".into(),
                "-c".into(),
                ".pqperf-ct-driver.c".into(),
                "-o".into(),
                ".pqperf-ct-driver.o".into(),
            ],
            &mut log,
        )
        .is_ok();
    let linked = ok && {
        let mut argv = vec!["gcc".to_string()];
        let cflags = b.flag_string.split_whitespace().map(str::to_string);
        if set.lto() {
            argv.extend(cflags.filter(|f| !f.starts_with("-W") && !f.starts_with("-std=")));
        } else {
            argv.push("-g".into());
        }
        argv.push(".pqperf-ct-driver.o".into());
        argv.extend(objects);
        argv.push(ctx.provider_lib.to_string_lossy().into_owned());
        argv.extend(driver::wrap_flags(inst.api));
        argv.extend(inst.libs.iter().cloned());
        argv.extend(["-lm".into(), "-o".into(), ".pqperf-ct-driver".into()]);
        run_logged(&ctx.run_dir, &work, &argv, &mut log).is_ok()
    };
    let _ = std::fs::write(work.join(".pqperf-ct.log"), &log);
    if !linked {
        ev.operations = all_not_run("the constant-time driver did not compile or link");
        return ev;
    }
    ev.operations = run_ops(
        opts,
        &work,
        &work,
        ".pqperf-ct-driver",
        &ops,
        table,
        &cand.id,
        &inst.label,
    );
    ev
}

/// Check the ICCS helpers of the provider library (candidate `iccs`, label `helpers`).
pub fn check_helpers(
    opts: &CtOptions,
    ctx: &BuildCtx,
    table: &AcceptedTable,
    tool: &str,
) -> CtEvidence {
    let work = RunLayout::new(&ctx.run_dir).ct_helpers_build_dir();
    let flags = "-g -O1 -std=gnu11";
    let mut ev = CtEvidence {
        schema: CT_SCHEMA,
        candidate: "iccs".into(),
        label: "helpers".into(),
        api: "iccs".into(),
        flags: "ct-driver".into(),
        build_flags: format!("{flags} "),
        tool: tool.to_string(),
        utc: utc_now(),
        sandbox: sandbox_record(),
        ..Default::default()
    };
    let ops: Vec<(&str, &[&str])> = driver::HELPER_OPS
        .iter()
        .map(|n| {
            let s: &[&str] = if *n == "drng" {
                &["seed"]
            } else {
                &["message"]
            };
            (*n, s)
        })
        .collect();
    let mut log = String::new();
    let ok = std::fs::create_dir_all(&work).is_ok()
        && std::fs::write(work.join("helpers.c"), driver::HELPERS_SOURCE).is_ok()
        && run_logged(
            &ctx.run_dir,
            &work,
            &flags
                .split(' ')
                .map(str::to_string)
                .chain([
                    "helpers.c".into(),
                    ctx.provider_lib.to_string_lossy().into_owned(),
                    "-o".into(),
                    "helpers".into(),
                ])
                .fold(vec!["gcc".to_string()], |mut v, a| {
                    v.push(a);
                    v
                }),
            &mut log,
        )
        .is_ok();
    let _ = std::fs::write(work.join("build.log"), &log);
    ev.operations = if ok {
        run_ops(
            opts, &work, &work, "helpers", &ops, table, "iccs", "helpers",
        )
    } else {
        ops.iter()
            .map(|(n, s)| not_run(n, s, "the helper driver did not compile".into()))
            .collect()
    };
    ev
}

/// `pqperf ct`: the helper check, then every built instance matching `--only`; evidence
/// written to `<run>/ct/`. An instance that fails is recorded as `not run` and the run goes on.
pub fn run(opts: &CtOptions) -> Result<CtSummary, CtError> {
    let t0 = Instant::now();
    let table = match &opts.accepted {
        Some(p) => AcceptedTable::load(p)?,
        None => AcceptedTable::shipped()?,
    };
    let cat_path = pqperf_build::catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let cat = Catalog::load(&cat_path).map_err(pqperf_build::BuildError::from)?;
    let bj = pqperf_build::read_build_json(&opts.run_dir)?;
    std::fs::create_dir_all(&opts.run_dir).map_err(io(&opts.run_dir))?;
    let scratch = RunLayout::new(&opts.run_dir).ct_build_dir();
    let ctx = BuildCtx::new(&scratch, &cat_path)?;
    let tool = valgrind::version(&opts.valgrind);
    let mut todo: Vec<(
        &Candidate,
        &Instance,
        Option<FlagSet>,
        &pqperf_model::BuildEntry,
    )> = Vec::new();
    for (c, i) in cat.instances() {
        let key = i.key(c);
        if !opts.select.selects(&c.id, &i.label) {
            continue;
        }
        let Some(e) = bj.instances.get(&key) else {
            continue;
        };
        if e.kat == "BUILDFAIL" {
            continue;
        }
        todo.push((c, i, FlagSet::parse(&e.flags), e));
    }
    check_same_as(&table, &cat)?;
    // The optimized builds first (their `-O3 -flto` build with `-g` takes several times a
    // reference build's): started last, one ran alone at the end of the phase. The results
    // are put back in catalog order below.
    let mut order: Vec<usize> = (0..todo.len()).collect();
    order.sort_by_key(|&j| todo[j].2 != Some(FlagSet::GuidePerformance));
    let mut summary = CtSummary::default();
    let Some(tool) = tool else {
        return Err(CtError::Input(format!(
            "{} cannot run (install valgrind: bash scripts/setup.sh)",
            opts.valgrind
        )));
    };
    let helpers = check_helpers(opts, &ctx, &table, &tool);
    summary
        .written
        .push(write_evidence(&opts.run_dir, &helpers)?);
    if opts.progress {
        eprintln!(
            "ct iccs/helpers: {} operation(s) checked",
            helpers.operations.len()
        );
    }
    summary.evidence.push(helpers);
    let results: Mutex<Vec<(usize, CtEvidence)>> = Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let first_err: Mutex<Option<CtError>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, todo.len().max(1)) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&k) = order.get(k) else {
                        break;
                    };
                    let (c, i, set, entry) = &todo[k];
                    let mut ev = match set {
                        Some(set) => check_instance(opts, &ctx, c, i, *set, &table, &tool),
                        None => CtEvidence {
                            schema: CT_SCHEMA,
                            candidate: c.id.clone(),
                            label: i.label.clone(),
                            api: i.api.to_string(),
                            tool: tool.clone(),
                            utc: utc_now(),
                            operations: vec![not_run(
                                "all",
                                &[],
                                "build.json names an unknown flag set".into(),
                            )],
                            ..Default::default()
                        },
                    };
                    // The built library (and inputs) this evidence describes.
                    ev.library_sha256 = entry.library_sha256.clone();
                    ev.inputs_sha256 =
                        pqperf_build::current::recorded_inputs(entry).map(str::to_string);
                    match write_evidence(&opts.run_dir, &ev) {
                        Ok(_) => {}
                        Err(e) => {
                            first_err.lock().unwrap().get_or_insert(e);
                        }
                    }
                    if opts.progress {
                        // A variant's findings may still inherit (after every instance ran).
                        let later = if table.same_as(&ev.candidate, &ev.label).is_empty() {
                            ""
                        } else {
                            " (before the same-family rule)"
                        };
                        // The verdicts are printed once, with the summary (`CT …` lines).
                        eprintln!(
                            "ct {}/{}: {} operation(s) checked{later}",
                            ev.candidate,
                            ev.label,
                            ev.operations.len()
                        );
                    }
                    results.lock().unwrap().push((k, ev));
                }
            });
        }
    });
    if let Some(e) = first_err.into_inner().unwrap() {
        return Err(e);
    }
    let mut res = results.into_inner().unwrap();
    res.sort_by_key(|(k, _)| *k);
    inherit_families(opts, &ctx.run_dir, &table, &mut res)?;
    for (_, ev) in res {
        summary
            .written
            .push(RunLayout::ct_rel(&ev.candidate, &ev.label));
        summary.evidence.push(ev);
    }
    summary.seconds = t0.elapsed().as_secs_f64();
    Ok(summary)
}

/// Every `same as <label>` row names, when the catalog has it, another instance of the same
/// candidate and scheme (catalog `instance`) than each instance it applies to.
fn check_same_as(table: &AcceptedTable, cat: &Catalog) -> Result<(), CtError> {
    for (c, i) in cat.instances() {
        for (reference, _, _) in table.same_as(&c.id, &i.label) {
            // A catalog without the reference has nothing to inherit from.
            let Some(r) = c.instances.iter().find(|r| r.label == reference) else {
                continue;
            };
            if r.label == i.label || r.instance != i.instance {
                return Err(CtError::Input(format!(
                    "accepted-findings table: {}/{} ({}) is `same as {reference}` ({}): not another build of the same scheme",
                    c.id, i.label, i.instance, r.instance
                )));
            }
        }
    }
    Ok(())
}

/// Apply the `same as` rows: findings of a variant inherit the accepted findings of its
/// reference instance by family ([`family`]); the reference evidence is this run's, else the
/// one already in `<run>/ct/`. Evidence that changed is written again.
fn inherit_families(
    opts: &CtOptions,
    scratch: &Path,
    table: &AcceptedTable,
    res: &mut [(usize, CtEvidence)],
) -> Result<(), CtError> {
    for k in 0..res.len() {
        let (id, label) = (res[k].1.candidate.clone(), res[k].1.label.clone());
        let mut changed = 0;
        for (reference, ops, note) in table.same_as(&id, &label) {
            let here = res
                .iter()
                .find(|(_, e)| e.candidate == id && e.label == reference)
                .map(|(_, e)| e.clone());
            let Some(rev) = here.or_else(|| {
                let p = opts.run_dir.join(format!("ct/{id}/{reference}.json"));
                let text = std::fs::read_to_string(p).ok()?;
                serde_json::from_str::<CtEvidence>(&text).ok()
            }) else {
                continue;
            };
            let vtree = pqperf_build::compile::work_dir(scratch, &id, &label);
            let rtree = pqperf_build::compile::work_dir(scratch, &id, reference);
            changed += family::inherit(&mut res[k].1, &vtree, &rev, &rtree, ops, note);
        }
        if changed > 0 {
            write_evidence(&opts.run_dir, &res[k].1)?;
        }
        if opts.progress && !table.same_as(&id, &label).is_empty() {
            eprintln!(
                "ct {id}/{label}: {} ({changed} group(s) accepted by the same-family rule)",
                line(&res[k].1)
            );
        }
    }
    Ok(())
}

/// `keygen: no findings; sign: 2 findings (1 accepted); verify: no unaccepted findings (3
/// accepted)`.
pub fn line(ev: &CtEvidence) -> String {
    ev.operations
        .iter()
        .map(|o| {
            if o.accepted > 0 && o.findings == 0 && o.status == "run" {
                format!(
                    "{}: no unaccepted findings ({} accepted)",
                    o.operation, o.accepted
                )
            } else if o.accepted > 0 {
                format!("{}: {} ({} accepted)", o.operation, o.verdict, o.accepted)
            } else {
                format!("{}: {}", o.operation, o.verdict)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}
