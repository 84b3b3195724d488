//! Building one instance: fresh copy of the sources, gcc per source file, the shim, the link
//! into `lib/<id>/lib<label>.so` with the version script, and the library's digest and ELF
//! load size. Every command is logged as `$ <shell-quoted argv>` followed by its output.

use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use pqperf_model::catalog::{ApiKind, Candidate, Instance, Kat, NistRng};
use pqperf_model::layout::RunLayout;
use sha2::{Digest, Sha256};

use crate::flags::{FlagSet, log_command};
use crate::shim::{ShimInfo, exported_symbols, shim_source, version_script};
use crate::{BuildCtx, BuildError};

/// Result of building one instance with one flag set.
#[derive(Debug, Clone)]
pub struct InstanceBuild {
    /// Candidate id.
    pub candidate: String,
    /// Instance label.
    pub label: String,
    /// Instance name.
    pub instance: String,
    /// Implementation variant.
    pub variant: String,
    /// The instance's C API.
    pub api: ApiKind,
    /// The flag set built with.
    pub flags: FlagSet,
    /// The full C flag string used (set + instance flags), with a trailing space as in the
    /// reference records.
    pub flag_string: String,
    /// The compiler (name and version).
    pub compiler: String,
    /// True when the library was produced.
    pub ok: bool,
    /// Absolute library path.
    pub library: PathBuf,
    /// Run-relative library path (`lib/<id>/lib<label>.so`).
    pub library_rel: String,
    /// SHA-256 of the library file, when produced.
    pub library_sha256: Option<String>,
    /// Sum of the memory sizes of the library's PT_LOAD segments, when read.
    pub elf_load_bytes: Option<u64>,
    /// Log text (commands and compiler output).
    pub log: String,
    /// Run-relative build log (`build/<id>.log`).
    pub log_rel: String,
    /// First error, if any.
    pub error: Option<String>,
    /// Wall seconds of the build.
    pub seconds: f64,
    /// ICCS: `ALGORITHM_INSTANCE` as the compiler evaluated it for this build (None when
    /// undefined or not evaluable; see the log).
    pub header_instance: Option<String>,
    /// The ICCS provider linked (ICCS-API instances only).
    pub iccs_provider: Option<crate::ProviderRecord>,
    /// The source selection: files linked and files left out with the reason.
    pub selection: SourceSelection,
    /// The linked source that defines `drng_algorithm` (the shim then does not), if any.
    pub drng_defined_by: Option<String>,
    /// ICCS helper functions the submission's own objects define, linked before the
    /// provider: (source relative to the candidate root, its sha256, the helper symbols).
    pub own_helpers: Vec<(String, String, Vec<String>)>,
    /// What was built from what ([`crate::provenance_json`]): import command and digest,
    /// identity, catalog edits, KAT manifest origin.
    pub provenance: serde_json::Value,
    /// Digest of the catalog entry and import the instance was built from
    /// ([`crate::current::inputs_sha256`]).
    pub inputs_sha256: String,
}

/// Sources left out (relative to the candidate root) with the reason.
pub type LeftOut = Vec<(String, String)>;

/// Which sources an instance links, and why the others were left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceSelection {
    /// Linked sources, relative to the candidate root, in link order.
    pub linked: Vec<String>,
    /// Sources left out (relative to the candidate root) with the reason.
    pub left_out: LeftOut,
}

impl SourceSelection {
    /// The build.json form: `{"linked": [...], "left_out": {"file": "reason", ...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut left = serde_json::Map::new();
        for (f, r) in &self.left_out {
            left.insert(f.clone(), r.clone().into());
        }
        serde_json::json!({"linked": self.linked, "left_out": left})
    }
}

/// The ICCS helper functions (auxfunc.c: the placeholder hashes; drng.c: the DRNG).
pub const ICCS_HELPER_SYMBOLS: [&str; 5] = [
    "sm3hash",
    "pseudohash",
    "pseudoXOF",
    "init_random_number",
    "get_random_number",
];

/// Global symbols an object file defines (common symbols included).
pub fn defined_symbols(obj: &Path) -> Result<Vec<String>, String> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(obj).map_err(|e| format!("{}: {e}", obj.display()))?;
    let f = object::File::parse(&*data).map_err(|e| format!("{}: {e}", obj.display()))?;
    Ok(f.symbols()
        .filter(|s| s.is_global() && (s.is_definition() || s.is_common()))
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect())
}

/// `gcc 12.2.0` (from `gcc -dumpfullversion`), or `gcc` when that fails.
pub fn compiler_version(cc: &str) -> String {
    Command::new(cc)
        .arg("-dumpfullversion")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| format!("{cc} {}", String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| cc.to_string())
}

/// The C++ compiler beside a C compiler: `gcc` → `g++`, `aarch64-linux-gnu-gcc` →
/// `aarch64-linux-gnu-g++`, `gcc-12` → `g++-12`, `cc` → `c++`, `clang` → `clang++`.
pub fn cxx_for(cc: &str) -> String {
    if let Some(i) = cc.rfind("gcc") {
        format!("{}g++{}", &cc[..i], &cc[i + 3..])
    } else if cc.ends_with("clang") {
        format!("{cc}++")
    } else if let Some(stem) = cc.strip_suffix("cc") {
        format!("{stem}c++")
    } else {
        "g++".to_string()
    }
}

/// The system default C compiler for this pqperf's architecture
/// ([`pqperf_ffi::emulation::default_cc`]).
pub fn default_cc() -> String {
    pqperf_ffi::emulation::default_cc()
}

/// The compiler a run was built with (`--cc`), remembered in `<run>/provider/cc`.
pub fn remembered_cc(run_dir: &Path) -> Option<String> {
    let t = std::fs::read_to_string(RunLayout::new(run_dir).remembered_cc()).ok()?;
    Some(t.trim().to_string()).filter(|s| !s.is_empty())
}

/// Remember `--cc` for the later builds of the run (KAT fallback, profiling relinks).
pub fn remember_cc(run_dir: &Path, cc: &str) -> Result<(), BuildError> {
    let p = RunLayout::new(run_dir).remembered_cc();
    pqperf_model::fsutil::write_atomic(&p, format!("{cc}\n").as_bytes())
        .map_err(|e| BuildError::io(&p, e))
}

/// sha256 of a file as lower-case hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let data = std::fs::read(path)?;
    Ok(hex::encode(Sha256::digest(&data)))
}

/// Sum of the memory sizes of the PT_LOAD segments of an ELF file ("ELF image").
pub fn elf_load_bytes(path: &Path) -> Result<u64, BuildError> {
    use object::{Object, ObjectSegment};
    let data = std::fs::read(path).map_err(|e| BuildError::io(path, e))?;
    let f = object::File::parse(&*data)
        .map_err(|e| BuildError::Input(format!("{}: not an object file: {e}", path.display())))?;
    Ok(f.segments().map(|s| s.size()).sum())
}

/// Lexically normalise a relative path (`a/b/../c` → `a/c`); `None` if it leaves its base.
pub fn normalize_rel(p: &Path) -> Option<PathBuf> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(s) => out.push(s.to_os_string()),
            _ => return None,
        }
    }
    Some(out.iter().collect())
}

/// Basenames the ICCS default selection drops (spec §5.2), in any case (`SPEED_KEM.c`).
pub fn default_excluded(basename: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\.",
        )
        .unwrap()
    })
    .is_match(basename)
}

fn is_source(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("c" | "cpp" | "cc" | "S")
    )
}

fn is_cxx(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("cpp" | "cc"))
}

/// Object files, archives and binaries left in source trees: never copied.
fn is_debris(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("o" | "a" | "so" | "dylib" | "obj" | "lib" | "exe" | "dll" | "gch")
    )
}

/// Select the sources of an instance: paths relative to the candidate root, sorted and
/// de-duplicated in pattern order.
pub fn select_sources(root: &Path, inst: &Instance) -> Result<Vec<PathBuf>, String> {
    select_sources_explained(root, inst).map(|(v, _)| v)
}

/// Case-insensitive glob match of a pattern on a basename or a root-relative path.
fn glob_hits(pats: &[String], rel: &Path) -> Option<String> {
    let opts = glob::MatchOptions {
        case_sensitive: false,
        ..Default::default()
    };
    let base = rel
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    pats.iter()
        .find(|x| {
            glob::Pattern::new(x).is_ok_and(|p| {
                p.matches_with(&base, opts) || p.matches_with(&rel.to_string_lossy(), opts)
            })
        })
        .cloned()
}

/// [`select_sources`], also returning the files left out by name (root-relative) with the
/// reason.
pub fn select_sources_explained(
    root: &Path,
    inst: &Instance,
) -> Result<(Vec<PathBuf>, LeftOut), String> {
    let mut left_out: LeftOut = Vec::new();
    let src_rel = normalize_rel(Path::new(&inst.source_dir))
        .ok_or_else(|| format!("source_dir {:?} leaves the candidate root", inst.source_dir))?;
    let src = root.join(&src_rel);
    if !src.is_dir() {
        return Err(format!(
            "source directory {} does not exist",
            inst.source_dir
        ));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    if inst.files.is_empty() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&src)
            .map_err(|e| format!("{}: {e}", inst.source_dir))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file() && is_source(p))
            .map(|p| src_rel.join(p.file_name().unwrap()))
            .collect();
        v.sort();
        for p in v {
            let base = p.file_name().unwrap().to_string_lossy().into_owned();
            if default_excluded(&base) && glob_hits(&inst.include, &p).is_none() {
                left_out.push((
                    p.to_string_lossy().into_owned(),
                    "name of a driver, test or benchmark (default rule; keep it with --include)"
                        .into(),
                ));
            } else {
                out.push(p);
            }
        }
    } else {
        for pat in &inst.files {
            let rel = normalize_rel(&src_rel.join(pat))
                .ok_or_else(|| format!("file pattern {pat:?} leaves the candidate root"))?;
            let escaped_root = glob::Pattern::escape(&root.to_string_lossy());
            let g = format!("{escaped_root}/{}", rel.to_string_lossy());
            let mut hits: Vec<PathBuf> = Vec::new();
            for p in glob::glob(&g)
                .map_err(|e| format!("bad pattern {pat:?}: {e}"))?
                .flatten()
            {
                if p.is_file()
                    && let Ok(r) = p.strip_prefix(root)
                {
                    hits.push(r.to_path_buf());
                }
            }
            if hits.is_empty() {
                return Err(format!(
                    "file pattern {pat:?} matched nothing in {}",
                    inst.source_dir
                ));
            }
            hits.sort();
            for h in hits {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
        }
    }
    out.retain(|p| match glob_hits(&inst.exclude, p) {
        Some(pat) => {
            left_out.push((
                p.to_string_lossy().into_owned(),
                format!("exclude pattern {pat:?}"),
            ));
            false
        }
        None => true,
    });
    if out.is_empty() {
        return Err(format!("no source files selected in {}", inst.source_dir));
    }
    Ok((out, left_out))
}

/// Copy `src` (a directory, recursively) to `dst`, skipping build debris.
fn copy_tree(src: &Path, dst: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(src).follow_links(true) {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry.path().strip_prefix(src).unwrap();
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else if entry.file_type().is_file() && !is_debris(entry.path()) {
            if let Some(d) = target.parent() {
                std::fs::create_dir_all(d)?;
            }
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The fresh copy of an instance's sources that its build works in:
/// `<run>/build/src/<id>/<label>`.
pub fn work_dir(run_dir: &Path, id: &str, label: &str) -> PathBuf {
    RunLayout::new(run_dir).build_scratch(id, label)
}

/// Wall-time limit of one compiler command of the build stage.
pub const COMPILER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// Address-space limit of one compiler process (cc1, as, ld each).
pub const COMPILER_ADDRESS_SPACE: u64 = 2 << 30;

/// Run a compiler command in `cwd`, contained like every child that processes candidate
/// input (`pqperf_ffi::untrusted`: own session and namespaces, Landlock writes only below the
/// run directory `run_dir` and scratch, reads only below the system directories, `run_dir`
/// and the absolute paths named in `argv`, the seccomp filter, [`COMPILER_TIMEOUT`] and
/// [`COMPILER_ADDRESS_SPACE`]), appending `$ argv` and its output to `log`. Returns why it
/// failed, if it did.
pub fn run_logged(
    run_dir: &Path,
    cwd: &Path,
    argv: &[String],
    log: &mut String,
) -> Result<(), String> {
    log.push_str(&log_command(argv));
    log.push('\n');
    let r = run_compiler(run_dir, cwd, argv);
    log.push_str(&r.stdout);
    log.push_str(&r.stderr);
    match r.failure {
        None => Ok(()),
        Some(w) => {
            log.push_str(&format!("# {w}\n"));
            Err(w)
        }
    }
}

/// What one contained compiler command printed, and why it failed (if it did).
pub struct CompilerRun {
    /// Its standard output (capped like every captured stream).
    pub stdout: String,
    /// Its standard error (capped).
    pub stderr: String,
    /// Why it failed: exit status, signal, time limit, or that it could not be started.
    pub failure: Option<String>,
}

/// Runs one compiler command contained as [`run_logged`] describes, with writes allowed
/// below `writable` (and scratch) only; the header probes of `import` use it too.
pub fn run_compiler(writable: &Path, cwd: &Path, argv: &[String]) -> CompilerRun {
    let mut readable = vec![writable.to_path_buf()];
    for a in argv {
        // `-I/x`, `-L/x`, `-Wl,...=/x` and bare paths: the folders they name.
        let path = a.find('/').map(|i| &a[i..]).filter(|p| p.starts_with('/'));
        if let Some(p) = path.map(Path::new).filter(|p| p.exists()) {
            readable.push(p.to_path_buf());
        }
    }
    let program = Path::new(&argv[0]);
    let program = if program.components().count() > 1 {
        program.to_path_buf()
    } else {
        which(&argv[0]).unwrap_or_else(|| program.to_path_buf())
    };
    let o = pqperf_ffi::untrusted::run(&pqperf_ffi::untrusted::ChildSpec {
        program,
        args: argv[1..].to_vec(),
        cwd: cwd.to_path_buf(),
        timeout: COMPILER_TIMEOUT,
        writable: vec![writable.to_path_buf()],
        readable,
        limits: Some(pqperf_ffi::sandbox::Limits {
            address_space: Some(COMPILER_ADDRESS_SPACE),
            ..Default::default()
        }),
        // Messages in one language: the header probes read them.
        env: vec![("LC_ALL".into(), "C".into())],
        ..Default::default()
    });
    if let Some(e) = &o.spawn_error {
        return CompilerRun {
            stdout: String::new(),
            stderr: String::new(),
            failure: Some(format!("cannot run {}: {e}", argv[0])),
        };
    }
    let failure = if o.timed_out {
        Some(format!(
            "time limit of {} s exceeded",
            COMPILER_TIMEOUT.as_secs()
        ))
    } else {
        match o.code() {
            Some(0) => None,
            Some(c) if c < 0 => Some(format!("killed by signal {}", -c)),
            Some(c) => Some(format!("exit status {c}")),
            None => Some("no exit status".to_string()),
        }
    };
    CompilerRun {
        stdout: o.stdout.text(),
        stderr: o.stderr.text(),
        failure,
    }
}

/// `name` looked up in `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Build one instance with `set`. Never fails as a Rust error: problems are recorded in
/// the result (`ok = false`, `error`, and the log).
pub fn build_instance(
    ctx: &BuildCtx,
    cand: &Candidate,
    inst: &Instance,
    set: FlagSet,
) -> InstanceBuild {
    let t0 = Instant::now();
    let id = &cand.id;
    let library_rel = RunLayout::library_rel(id, &inst.label);
    let mut b = InstanceBuild {
        candidate: id.clone(),
        label: inst.label.clone(),
        instance: inst.instance.clone(),
        variant: inst.variant.clone(),
        api: inst.api,
        flags: set,
        flag_string: String::new(),
        compiler: ctx.compiler.clone(),
        ok: false,
        library: ctx.run_dir.join(&library_rel),
        library_rel,
        library_sha256: None,
        elf_load_bytes: None,
        log: format!(
            "# {id}/{} ({}, flags {})\n",
            inst.label,
            inst.variant,
            set.name()
        ),
        log_rel: RunLayout::build_log_rel(id),
        error: None,
        seconds: 0.0,
        header_instance: None,
        iccs_provider: (inst.api == ApiKind::Iccs).then(|| ctx.provider_record.clone()),
        selection: SourceSelection::default(),
        drng_defined_by: None,
        own_helpers: Vec::new(),
        provenance: crate::provenance_json(&ctx.run_dir, &ctx.catalog_dir, cand, inst),
        inputs_sha256: crate::current::inputs_sha256(&ctx.run_dir, cand, inst),
    };
    let r = build_inner(ctx, cand, inst, set, &mut b);
    if let Err(e) = r {
        b.log.push_str(&format!("# BUILDFAIL: {e}\n"));
        b.error = Some(e);
        b.ok = false;
        let _ = std::fs::remove_file(&b.library);
    }
    b.log.push('\n');
    b.seconds = t0.elapsed().as_secs_f64();
    b
}

fn build_inner(
    ctx: &BuildCtx,
    cand: &Candidate,
    inst: &Instance,
    set: FlagSet,
    b: &mut InstanceBuild,
) -> Result<(), String> {
    let mut cflags = set.cflags(&ctx.arch).ok_or_else(|| {
        format!(
            "architecture {} has no guide configuration for {}",
            ctx.arch,
            set.name()
        )
    })?;
    for f in &inst.cflags {
        crate::flags::add_instance_flag(&mut cflags, f);
    }
    b.flag_string = format!("{} ", cflags.join(" "));
    let root = cand.root_path(&ctx.catalog_dir);
    let (sources, left_out) = select_sources_explained(&root, inst)?;
    b.selection.left_out = left_out;
    let src_rel = normalize_rel(Path::new(&inst.source_dir)).unwrap();
    // Folders to copy: the source dir, include dirs and the folders of listed files.
    let mut dirs: Vec<PathBuf> = vec![src_rel.clone()];
    let mut inc_rel = Vec::new();
    for d in &inst.include_dirs {
        let r = normalize_rel(&src_rel.join(d))
            .ok_or_else(|| format!("include dir {d:?} leaves the candidate root"))?;
        inc_rel.push(r.clone());
        dirs.push(r);
    }
    for s in &sources {
        if let Some(p) = s.parent() {
            dirs.push(p.to_path_buf());
        }
    }
    dirs.sort();
    dirs.dedup();
    // Drop folders inside another copied folder.
    let tops: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| !dirs.iter().any(|o| o != *d && d.starts_with(o)))
        .cloned()
        .collect();
    let work = work_dir(&ctx.run_dir, &cand.id, &inst.label);
    if work.exists() {
        std::fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    }
    for t in &tops {
        let from = root.join(t);
        if !from.is_dir() {
            return Err(format!(
                "folder {} does not exist under the candidate root",
                t.display()
            ));
        }
        copy_tree(&from, &work.join(t)).map_err(|e| format!("copying {}: {e}", t.display()))?;
    }
    let obj_dir = work.join(".pqperf-obj");
    std::fs::create_dir_all(&obj_dir).map_err(|e| format!("{}: {e}", obj_dir.display()))?;
    let lib_dir = b.library.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&lib_dir).map_err(|e| format!("{}: {e}", lib_dir.display()))?;
    let _ = std::fs::remove_file(&b.library);

    // Include order: the source dir first, then the API (provider) folder, then extra -I.
    let mut common: Vec<String> = vec![format!("-I{}", src_rel.display())];
    if inst.api == ApiKind::Iccs {
        common.push(format!("-I{}", ctx.provider_include.display()));
    }
    for r in &inc_rel {
        common.push(format!("-I{}", r.display()));
    }
    for d in &inst.defines {
        common.push(format!("-D{d}"));
    }
    if inst.api == ApiKind::Iccs {
        log_header_values(&ctx.cc, cand, inst, &work, &cflags, &common, b);
    }
    let any_cxx = sources.iter().any(|s| is_cxx(s));
    let mut objects: Vec<String> = Vec::new();
    let mut failed = None;
    for s in &sources {
        let obj = format!(".pqperf-obj/{}.o", s.to_string_lossy().replace('/', "__"));
        let (cc, flags) = if is_cxx(s) {
            let f: Vec<String> = cflags
                .iter()
                .map(|f| {
                    if f.starts_with("-std=") {
                        "-std=gnu++17".to_string()
                    } else {
                        f.clone()
                    }
                })
                .collect();
            (cxx_for(&ctx.cc), f)
        } else {
            (ctx.cc.clone(), cflags.clone())
        };
        let mut argv = vec![cc];
        argv.extend(flags);
        argv.extend(common.iter().cloned());
        argv.extend([
            "-c".into(),
            s.to_string_lossy().into_owned(),
            "-o".into(),
            obj.clone(),
        ]);
        if let Err(why) = run_logged(&ctx.run_dir, &work, &argv, &mut b.log) {
            failed.get_or_insert_with(|| format!("compiling {} failed ({why})", s.display()));
            break;
        }
        objects.push(obj);
    }
    if let Some(f) = failed {
        return Err(f);
    }
    // What the objects define: programs (`main`) are left out of the library; the DRNG
    // global and the ICCS helpers are noted.
    let mut linked_objects = Vec::new();
    for (s, obj) in sources.iter().zip(&objects) {
        let syms = object_symbols_for(ctx, set, &work, s, obj, &cflags, &common, b)?;
        let shown = s.to_string_lossy().into_owned();
        if syms.iter().any(|x| x == "main") {
            b.selection.left_out.push((
                shown,
                "defines main (a program, not part of the library)".into(),
            ));
            continue;
        }
        if syms.iter().any(|x| x == "drng_algorithm") && b.drng_defined_by.is_none() {
            b.drng_defined_by = Some(shown.clone());
        }
        let helpers: Vec<String> = ICCS_HELPER_SYMBOLS
            .iter()
            .filter(|h| syms.iter().any(|x| x == *h))
            .map(|h| h.to_string())
            .collect();
        if !helpers.is_empty() && inst.api == ApiKind::Iccs {
            let sha = sha256_file(&root.join(s)).unwrap_or_default();
            b.own_helpers.push((shown.clone(), sha, helpers));
        }
        b.selection.linked.push(shown);
        linked_objects.push(obj.clone());
    }
    let mut objects = linked_objects;
    if objects.is_empty() {
        return Err("every selected source defines main: nothing left for the library".into());
    }
    log_selection(b, inst);
    let no_drng = inst.no_drng || b.drng_defined_by.is_some();
    // Shim.
    let rng = match &inst.kat {
        Kat::Nistkat { rng, .. } => *rng,
        _ => NistRng::Nist,
    };
    let variant_word = if inst.variant == "reference" {
        "Reference_Implementation"
    } else {
        "Optimized_Implementation"
    };
    let shim = shim_source(&ShimInfo {
        kind: cand.kind,
        api: inst.api,
        id: &cand.id,
        algorithm: &cand.algorithm,
        instance: &inst.instance,
        variant: variant_word,
        source_dir: &inst.source_dir,
        compiler: &ctx.compiler,
        build_flags: &b.flag_string,
        no_drng,
        rng,
        header: Some(inst.header.as_deref().unwrap_or(cand.kind.iccs_header())),
    });
    std::fs::write(work.join(".pqperf-shim.c"), shim).map_err(|e| format!("writing shim: {e}"))?;
    let mut argv = vec![ctx.cc.clone()];
    argv.extend(cflags.iter().cloned());
    argv.extend(common.iter().cloned());
    argv.extend([
        "-c".into(),
        ".pqperf-shim.c".into(),
        "-o".into(),
        ".pqperf-obj/.pqperf-shim.o".into(),
    ]);
    if let Err(why) = run_logged(&ctx.run_dir, &work, &argv, &mut b.log) {
        return Err(format!("compiling the harness shim failed ({why})"));
    }
    objects.push(".pqperf-obj/.pqperf-shim.o".into());
    // Version script and link.
    let ns = inst.nist.as_ref().map(|n| n.namespace.as_str());
    let vs = version_script(&exported_symbols(cand.kind, inst.api, ns));
    std::fs::write(work.join(".pqperf-exports.map"), vs)
        .map_err(|e| format!("writing version script: {e}"))?;
    let mut argv = vec![
        if any_cxx {
            cxx_for(&ctx.cc)
        } else {
            ctx.cc.clone()
        },
        "-shared".into(),
    ];
    if set.lto() {
        argv.extend(
            cflags
                .iter()
                .filter(|f| !f.starts_with("-W") && !f.starts_with("-std="))
                .cloned(),
        );
    } else {
        argv.push("-fPIC".into());
    }
    argv.extend(objects);
    if let Some(official) = ctx
        .official_lib
        .as_ref()
        .filter(|_| inst.api == ApiKind::Iccs)
    {
        argv.push(official.to_string_lossy().into_owned());
    }
    argv.push(ctx.provider_lib.to_string_lossy().into_owned());
    argv.extend([
        "-Wl,--version-script=.pqperf-exports.map".to_string(),
        "-Wl,-Bsymbolic".into(),
        "-Wl,--no-undefined".into(),
        "-Wl,-z,noexecstack".into(),
        "-Wl,-z,relro".into(),
        "-o".into(),
        b.library.to_string_lossy().into_owned(),
    ]);
    argv.extend(inst.libs.iter().cloned());
    argv.push("-lm".into());
    if let Err(why) = run_logged(&ctx.run_dir, &work, &argv, &mut b.log) {
        return Err(format!("link failed ({why})"));
    }
    b.library_sha256 =
        Some(sha256_file(&b.library).map_err(|e| format!("{}: {e}", b.library.display()))?);
    b.elf_load_bytes = Some(elf_load_bytes(&b.library).map_err(|e| e.to_string())?);
    b.ok = true;
    b.log.push_str(&format!(
        "# ok: {} sha256 {} elf_load_bytes {}\n",
        b.library_rel,
        b.library_sha256.as_deref().unwrap_or(""),
        b.elf_load_bytes.unwrap_or(0)
    ));
    Ok(())
}

/// The global symbols a compiled source defines. Objects of an LTO flag set hold bytecode,
/// not symbols: those sources are compiled once more without LTO (at -O0) for the scan.
#[allow(clippy::too_many_arguments)]
fn object_symbols_for(
    ctx: &BuildCtx,
    set: FlagSet,
    work: &Path,
    src: &Path,
    obj: &str,
    cflags: &[String],
    common: &[String],
    b: &mut InstanceBuild,
) -> Result<Vec<String>, String> {
    if !set.lto() {
        return defined_symbols(&work.join(obj));
    }
    let scan = format!("{obj}.scan.o");
    let cc = if is_cxx(src) {
        cxx_for(&ctx.cc)
    } else {
        ctx.cc.clone()
    };
    let mut argv = vec![cc];
    argv.extend(
        cflags
            .iter()
            .filter(|f| !f.starts_with("-std=") || !is_cxx(src))
            .cloned(),
    );
    argv.extend(common.iter().cloned());
    argv.extend([
        "-O0".into(),
        "-fno-lto".into(),
        "-w".into(),
        "-c".into(),
        src.to_string_lossy().into_owned(),
        "-o".into(),
        scan.clone(),
    ]);
    if let Err(why) = run_logged(&ctx.run_dir, work, &argv, &mut b.log) {
        return Err(format!(
            "compiling {} for the symbol scan failed: {why}",
            src.display()
        ));
    }
    let r = defined_symbols(&work.join(&scan));
    let _ = std::fs::remove_file(work.join(&scan));
    r
}

/// The selection in the build log: one `# linked` line, one `# left out` line per file.
fn log_selection(b: &mut InstanceBuild, inst: &Instance) {
    b.log.push_str(&format!(
        "# sources linked: {}\n",
        b.selection.linked.join(" ")
    ));
    for (f, why) in &b.selection.left_out {
        b.log.push_str(&format!("# left out: {f}: {why}\n"));
    }
    if inst.api != ApiKind::Iccs {
        return;
    }
    match &b.drng_defined_by {
        Some(f) => b.log.push_str(&format!(
            "# drng_algorithm: defined by {f} (the shim does not define it)\n"
        )),
        None if inst.no_drng => b
            .log
            .push_str("# drng_algorithm: not defined by the shim (catalog no_drng = true)\n"),
        None => b.log.push_str("# drng_algorithm: defined by the shim\n"),
    }
    for (f, _, syms) in &b.own_helpers {
        b.log.push_str(&format!(
            "# ICCS helpers from the submission: {f} defines {} (linked before the provider)\n",
            syms.join(" ")
        ));
    }
}

/// For the record: the instance header's values as the compiler sees them with this build's
/// flags, folders and defines (`ALGORITHM_INSTANCE`; `DIGEST_BIT_LENGTH` for hashes), logged
/// with the probe commands; a name that differs from the catalog `instance` is flagged (KAT
/// file names use the catalog's).
fn log_header_values(
    cc: &str,
    cand: &Candidate,
    inst: &Instance,
    work: &Path,
    cflags: &[String],
    common: &[String],
    b: &mut InstanceBuild,
) {
    let header = inst.header.as_deref().unwrap_or(cand.kind.iccs_header());
    let mut args: Vec<String> = cflags.to_vec();
    args.extend(common.iter().cloned());
    let probe = crate::probe::HeaderProbe {
        cc: cc.into(),
        cwd: work.to_path_buf(),
        scratch: work.join(".pqperf-obj"),
        args,
        header: header.to_string(),
    };
    let name = probe.string("ALGORITHM_INSTANCE");
    b.log.push_str(&name.log);
    match name.value {
        Ok(Some(v)) => {
            b.log
                .push_str(&format!("# {header}: ALGORITHM_INSTANCE = {v:?}\n"));
            if v != inst.instance {
                b.log.push_str(&format!(
                    "# note: the header names the instance {v:?}, the catalog {:?} (KAT file names use the catalog's `instance`)\n",
                    inst.instance
                ));
            }
            b.header_instance = Some(v);
        }
        Ok(None) => b
            .log
            .push_str(&format!("# {header}: ALGORITHM_INSTANCE is not defined\n")),
        Err(e) => b.log.push_str(&format!(
            "# {header}: ALGORITHM_INSTANCE could not be evaluated: {e}\n"
        )),
    }
    if cand.kind == pqperf_model::vocab::Category::Hash {
        let bits = probe.integer("DIGEST_BIT_LENGTH");
        b.log.push_str(&bits.log);
        match bits.value {
            Ok(Some(v)) => b
                .log
                .push_str(&format!("# {header}: DIGEST_BIT_LENGTH = {v}\n")),
            Ok(None) => b
                .log
                .push_str(&format!("# {header}: DIGEST_BIT_LENGTH is not defined\n")),
            Err(e) => b.log.push_str(&format!(
                "# {header}: DIGEST_BIT_LENGTH could not be evaluated: {e}\n"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize() {
        assert_eq!(
            normalize_rel(Path::new("crypto_sign/x/clean/../../../common/fips202.c")).unwrap(),
            PathBuf::from("common/fips202.c")
        );
        assert!(normalize_rel(Path::new("../x")).is_none());
        assert!(normalize_rel(Path::new("/abs")).is_none());
    }

    #[test]
    fn cxx_sibling_of_the_c_compiler() {
        assert_eq!(cxx_for("gcc"), "g++");
        assert_eq!(cxx_for("aarch64-linux-gnu-gcc"), "aarch64-linux-gnu-g++");
        assert_eq!(cxx_for("gcc-12"), "g++-12");
        assert_eq!(cxx_for("clang"), "clang++");
        assert_eq!(cxx_for("cc"), "c++");
    }

    #[test]
    fn remembered_compiler_round_trips() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(remembered_cc(d.path()), None);
        remember_cc(d.path(), "aarch64-linux-gnu-gcc").unwrap();
        assert_eq!(
            remembered_cc(d.path()).as_deref(),
            Some("aarch64-linux-gnu-gcc")
        );
    }

    #[test]
    fn default_exclusions() {
        for b in [
            "KAT_SIG.c",
            "PQCgenKAT_sign.c",
            "main.c",
            "test.c",
            "bench_x.c",
            "foo_test.c",
            "kat.c",
            "sig_main.c",
        ] {
            assert!(default_excluded(b), "{b}");
        }
        for b in ["sig.c", "poly.c", "drng.c", "latest.c", "attest.c"] {
            assert!(!default_excluded(b), "{b}");
        }
    }
}
