//! Stage build: candidate import (PQClean, ICCS submissions) and gcc builds of one shared
//! library per instance, recorded in build.json.
//!
//! Library API used by the CLI and the campaign orchestrator:
//! * [`import_pqclean`] / [`import_iccs`] → catalog entries in `<run>/catalog.toml`;
//! * [`build`] → `lib/<id>/lib<label>.so` per instance, `build/<id>.log` with every command
//!   (`$ <shell-quoted argv>`), `build.json`;
//! * [`build_instance`] builds one instance with a given flag set (the KAT stage uses it for
//!   the harness-default fallback).
//!
//! Submitted Makefiles, CMake files and scripts are never run: sources are selected from the
//! catalog and compiled with gcc directly, in a fresh copy of the sources.

#![forbid(unsafe_code)]

pub mod compile;
pub mod current;
pub mod flags;
pub mod iccs_import;
pub mod macros;
pub mod pqclean;
pub mod probe;
pub mod provider;
pub mod shim;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use pqperf_model::catalog::{Catalog, CatalogError};
use pqperf_model::layout::RunLayout;
use pqperf_model::select::Selection;
use pqperf_model::{BuildEntry, BuildJson};

pub use compile::{InstanceBuild, build_instance, elf_load_bytes, sha256_file};
pub use current::{build_staleness, inputs_sha256, stale_builds, stale_refusal};
pub use flags::FlagSet;
pub use iccs_import::{IccsImportOptions, import_iccs};
pub use provider::{ProviderChoice, ProviderRecord};

/// Errors of the build stage.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        #[source]
        /// The I/O error.
        source: std::io::Error,
    },
    /// The catalog is malformed (names file and line).
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// Evidence could not be read or written.
    #[error(transparent)]
    Model(#[from] pqperf_model::ModelError),
    /// Bad input (submission layout, META.yml, option).
    #[error("{0}")]
    Input(String),
    /// An external tool (cargo, gcc) failed to run.
    #[error("{0}")]
    Tool(String),
}

impl BuildError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> BuildError {
        BuildError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Default run directory (relative to the current directory).
pub const DEFAULT_RUN_DIR: &str = "runs/default";

/// `<run>/catalog.toml` unless given.
pub fn catalog_path(run_dir: &Path, catalog: Option<&Path>) -> PathBuf {
    catalog
        .map(Path::to_path_buf)
        .unwrap_or_else(|| RunLayout::new(run_dir).catalog())
}

/// Load the catalog, or an empty one when the file does not exist.
pub fn load_or_empty(path: &Path) -> Result<Catalog, BuildError> {
    if path.exists() {
        Ok(Catalog::load(path)?)
    } else {
        Ok(Catalog::default())
    }
}

/// Options of `pqperf import pqclean`.
#[derive(Debug, Clone)]
pub struct PqcleanImportOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Catalog file (default `<run>/catalog.toml`).
    pub catalog: Option<PathBuf>,
    /// Use this PQClean tree instead of locating the pinned crate through cargo.
    pub tree: Option<PathBuf>,
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    /// The catalog written.
    pub catalog: PathBuf,
    /// Candidate ids written (replaced or added).
    pub candidates: Vec<String>,
    /// Number of instances written.
    pub instances: usize,
    /// Human-readable notes (skipped implementations, ignored folders).
    pub notes: Vec<String>,
}

/// `pqperf import pqclean`: every implementation of every META.yml scheme this CPU can run.
pub fn import_pqclean(opts: &PqcleanImportOptions) -> Result<ImportSummary, BuildError> {
    let tree = match &opts.tree {
        Some(t) => t.clone(),
        None => pqclean::locate_tree(&opts.run_dir.join(".pqclean-locator"))?,
    };
    let tree = std::fs::canonicalize(&tree).map_err(|e| BuildError::io(&tree, e))?;
    let imported = pqclean::read_tree(&tree, &pqclean::cpu_flags())?;
    let cat_path = catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let mut cat = load_or_empty(&cat_path)?;
    let mut ids = Vec::new();
    let mut n = 0;
    for c in imported.candidates {
        n += c.instances.len();
        ids.push(c.id.clone());
        cat.upsert(c);
    }
    cat.validate()?;
    cat.save(&cat_path)
        .map_err(|e| BuildError::io(&cat_path, e))?;
    let mut notes: Vec<String> = imported
        .skipped
        .iter()
        .map(|s| format!("skipped {}/{}: {}", s.scheme, s.implementation, s.reason))
        .collect();
    notes.extend(
        imported
            .ignored_folders
            .iter()
            .map(|f| format!("ignored {f}: no META.yml")),
    );
    notes.insert(0, format!("PQClean tree: {}", tree.display()));
    Ok(ImportSummary {
        catalog: cat_path,
        candidates: ids,
        instances: n,
        notes,
    })
}

/// A progress bar on stderr when it is a terminal (None otherwise: plain lines are printed).
pub fn stderr_bar(total: usize, what: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{what} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}}<{{eta_precise}}] {{msg}}"
    )) {
        bar.set_style(style);
    }
    Some(bar)
}

/// Progress callback: `(done, total, line)` after each instance (called from worker threads).
pub type Progress = std::sync::Arc<dyn Fn(usize, usize, &str) + Send + Sync>;

/// Options of `pqperf build`.
#[derive(Clone)]
pub struct BuildOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Catalog file (default `<run>/catalog.toml`).
    pub catalog: Option<PathBuf>,
    /// The instances built (`--only`, or the keys a campaign phase hands on).
    pub select: Selection,
    /// Instances built concurrently.
    pub jobs: usize,
    /// Print one progress line per instance on stderr.
    pub progress: bool,
    /// Called after each instance (e.g. to drive a progress bar).
    pub on_progress: Option<Progress>,
    /// ICCS provider (`--iccs-provider`); `None`: the catalog's `iccs_provider`, else the
    /// run's remembered choice, else pqperf's own.
    pub iccs_provider: Option<ProviderChoice>,
    /// C compiler (`--cc`); `None`: the run's remembered choice, else the system default
    /// ([`compile::default_cc`]).
    pub cc: Option<String>,
}

impl std::fmt::Debug for BuildOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("run_dir", &self.run_dir)
            .field("catalog", &self.catalog)
            .field("select", &self.select)
            .field("jobs", &self.jobs)
            .field("progress", &self.progress)
            .field("iccs_provider", &self.iccs_provider)
            .field("cc", &self.cc)
            .finish_non_exhaustive()
    }
}

impl BuildOptions {
    /// Defaults for a run directory.
    pub fn new(run_dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            run_dir: run_dir.into(),
            catalog: None,
            select: Selection::all(),
            jobs: 2,
            progress: false,
            on_progress: None,
            iccs_provider: None,
            cc: None,
        }
    }
}

/// What a build did.
#[derive(Debug, Clone)]
pub struct BuildSummary {
    /// `<id>/<label>` keys built successfully, in catalog order.
    pub built: Vec<String>,
    /// Keys that failed with every flag set (BUILDFAIL).
    pub failed: Vec<String>,
    /// Wall seconds.
    pub seconds: f64,
    /// build.json path.
    pub build_json: PathBuf,
    /// The ICCS provider the ICCS instances linked.
    pub iccs_provider: ProviderRecord,
}

/// The run's build.json path.
pub fn build_json_path(run_dir: &Path) -> PathBuf {
    RunLayout::new(run_dir).build_json()
}

/// Read `<run>/build.json` (empty when absent), through [`RunLayout::read_build`].
pub fn read_build_json(run_dir: &Path) -> Result<BuildJson, BuildError> {
    Ok(RunLayout::new(run_dir).read_build()?)
}

/// Write `<run>/build.json` atomically in the reference serialisation.
pub fn write_build_json(run_dir: &Path, bj: &BuildJson) -> Result<(), BuildError> {
    let p = build_json_path(run_dir);
    let text = pqperf_model::pyjson::to_string(bj)
        .map_err(|e| BuildError::Input(format!("build.json: {e}")))?;
    pqperf_model::fsutil::write_atomic(&p, text.as_bytes()).map_err(|e| BuildError::io(&p, e))
}

/// The shared build context (provider, compiler, folders).
#[derive(Debug, Clone)]
pub struct BuildCtx {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Folder of the catalog (source paths are relative to it).
    pub catalog_dir: PathBuf,
    /// ICCS provider static library (absolute).
    pub provider_lib: PathBuf,
    /// ICCS provider headers (absolute).
    pub provider_include: PathBuf,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    /// The C compiler command (`gcc`, `aarch64-linux-gnu-gcc`, …); C++ sources use its
    /// `g++` sibling ([`compile::cxx_for`]).
    pub cc: String,
    /// `gcc 12.2.0` (the command's name and `-dumpfullversion`).
    pub compiler: String,
    /// Official provider: its archive, linked before `provider_lib` (which then supplies
    /// only what the official files do not define: `drng_algorithm` when no shim defines
    /// it, the NIST/PQClean generators).
    pub official_lib: Option<PathBuf>,
    /// The provider as recorded in build.json (`iccs_provider` of ICCS instances).
    pub provider_record: ProviderRecord,
}

impl BuildCtx {
    /// Write the ICCS provider into `<run>/provider/` and probe the compiler; the provider
    /// is the catalog's `iccs_provider`, else the run's remembered choice, else pqperf's.
    pub fn new(run_dir: &Path, catalog_file: &Path) -> Result<BuildCtx, BuildError> {
        BuildCtx::with_provider(run_dir, catalog_file, None)
    }

    /// [`BuildCtx::with_provider`] with an explicit C compiler (`--cc`), remembered for the
    /// run so that later builds (KAT fallback) use the same one.
    pub fn with_compiler(
        run_dir: &Path,
        catalog_file: &Path,
        choice: Option<&ProviderChoice>,
        cc: Option<&str>,
    ) -> Result<BuildCtx, BuildError> {
        let mut ctx = BuildCtx::with_provider(run_dir, catalog_file, choice)?;
        if let Some(cc) = cc {
            let version = compile::compiler_version(cc);
            if version == cc {
                return Err(BuildError::Tool(format!(
                    "--cc {cc}: the compiler does not run (`{cc} -dumpfullversion` failed)"
                )));
            }
            ctx.cc = cc.to_string();
            ctx.compiler = version;
            compile::remember_cc(&ctx.run_dir, cc)?;
        }
        Ok(ctx)
    }

    /// [`BuildCtx::new`] with an explicit provider choice (remembered for the run).
    pub fn with_provider(
        run_dir: &Path,
        catalog_file: &Path,
        choice: Option<&ProviderChoice>,
    ) -> Result<BuildCtx, BuildError> {
        std::fs::create_dir_all(run_dir).map_err(|e| BuildError::io(run_dir, e))?;
        let run_abs = std::fs::canonicalize(run_dir).map_err(|e| BuildError::io(run_dir, e))?;
        let pdir = RunLayout::new(&run_abs).provider_dir();
        let provider = pqperf_iccs_capi::write_provider(&pdir).map_err(|e| {
            BuildError::Tool(format!(
                "writing the ICCS provider to {}: {e}",
                pdir.display()
            ))
        })?;
        let catalog_dir = catalog_file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let catalog_dir =
            std::fs::canonicalize(catalog_dir).map_err(|e| BuildError::io(catalog_dir, e))?;
        let choice = match choice {
            Some(c) => c.clone(),
            None => {
                let from_catalog = if catalog_file.exists() {
                    Catalog::load(catalog_file)?.iccs_provider
                } else {
                    None
                };
                match from_catalog {
                    Some(s) => ProviderChoice::parse(&s, &catalog_dir).map_err(|e| {
                        BuildError::Input(format!("{}: iccs_provider: {e}", catalog_file.display()))
                    })?,
                    None => provider::remembered_choice(&run_abs).unwrap_or_default(),
                }
            }
        };
        let choice = match choice {
            ProviderChoice::Official(d) => ProviderChoice::Official(
                std::fs::canonicalize(&d).map_err(|e| BuildError::io(&d, e))?,
            ),
            c => c,
        };
        let mut ctx = BuildCtx {
            run_dir: run_abs.clone(),
            catalog_dir,
            provider_lib: provider.static_lib,
            provider_include: provider.include_dir,
            arch: pqclean::machine_arch().to_string(),
            cc: String::new(),
            compiler: String::new(),
            official_lib: None,
            provider_record: ProviderRecord::pqperf(),
        };
        if let ProviderChoice::Official(dir) = &choice {
            let off = provider::prepare_official(dir, &pdir.join("official"))?;
            ctx.provider_include = off.include_dir;
            ctx.official_lib = Some(off.archive);
            ctx.provider_record = off.record;
        }
        provider::remember_choice(&run_abs, &choice)?;
        ctx.cc = compile::remembered_cc(&run_abs).unwrap_or_else(compile::default_cc);
        ctx.compiler = compile::compiler_version(&ctx.cc);
        Ok(ctx)
    }
}

/// Turn an instance build into its build.json entry (KAT fields unset: `kat` = `NOLOG`
/// for a built library, `BUILDFAIL` otherwise).
pub fn entry_for(b: &InstanceBuild, guide_result: Option<String>) -> BuildEntry {
    let mut e = BuildEntry {
        candidate: b.candidate.clone(),
        label: b.label.clone(),
        instance: b.instance.clone(),
        variant: b.variant.clone(),
        flags: b.flags.name().to_string(),
        kat: if b.ok {
            "NOLOG".into()
        } else {
            "BUILDFAIL".into()
        },
        guide_result,
        ..Default::default()
    };
    if b.ok {
        e.library = Some(b.library_rel.clone());
        e.library_sha256 = b.library_sha256.clone();
        e.elf_load_bytes = b.elf_load_bytes;
    }
    let x = &mut e.extra;
    x.insert("api".into(), b.api.to_string().into());
    x.insert("build_flags".into(), b.flag_string.clone().into());
    x.insert("compiler".into(), b.compiler.clone().into());
    x.insert("build_log".into(), b.log_rel.clone().into());
    x.insert(current::INPUTS_KEY.into(), b.inputs_sha256.clone().into());
    x.insert(
        "build_seconds".into(),
        serde_json::json!((b.seconds * 1000.0).round() / 1000.0),
    );
    if let Some(p) = &b.iccs_provider {
        let mut pj = p.to_json();
        // The submission's own helpers are linked before the provider and win.
        if !b.own_helpers.is_empty()
            && let Some(o) = pj.as_object_mut()
        {
            let mut own = serde_json::Map::new();
            for (f, sha, syms) in &b.own_helpers {
                own.insert(
                    f.clone(),
                    serde_json::json!({"sha256": sha, "defines": syms}),
                );
            }
            o.insert("submission_sources".into(), own.into());
        }
        x.insert("iccs_provider".into(), pj);
    }
    if !b.selection.linked.is_empty() {
        x.insert("sources".into(), b.selection.to_json());
    }
    if b.api == pqperf_model::catalog::ApiKind::Iccs && b.ok {
        x.insert(
            "drng_algorithm".into(),
            match &b.drng_defined_by {
                Some(f) => serde_json::json!(format!("defined by {f}")),
                None => serde_json::json!("defined by the shim"),
            },
        );
    }
    if b.provenance.as_object().is_some_and(|o| !o.is_empty()) {
        x.insert("provenance".into(), b.provenance.clone());
    }
    e
}

/// What an instance is built from, for its build.json entry (`provenance`): the import
/// (`<run>/imports/<id>.json`: command, tool, submission digest), the identity (folder,
/// evaluated `ALGORITHM_INSTANCE`, manifest entry, the disagreement note), the catalog
/// fields edited since the import, and where the KAT manifest comes from (`submission`:
/// inside the submission tree; `curated`: elsewhere; `none`). Empty for instances without
/// an import record and without a manifest (PQClean).
pub fn provenance_json(
    run_dir: &Path,
    catalog_dir: &Path,
    cand: &pqperf_model::catalog::Candidate,
    inst: &pqperf_model::catalog::Instance,
) -> serde_json::Value {
    use serde_json::json;
    let mut o = serde_json::Map::new();
    if let Some(rec) = pqperf_model::provenance::ImportRecord::load(run_dir, &cand.id)
        && let Some(i) = rec.instances.get(&inst.label)
    {
        o.insert(
            "import".into(),
            json!({"command": i.command, "tool": i.tool, "source": i.source, "source_sha256": i.source_sha256}),
        );
        let mut id = json!({"folder": i.folder, "evaluated_instance": i.evaluated_instance, "built_instance": inst.instance});
        if let Some(m) = &i.manifest_entry {
            id["manifest_entry"] = json!(m);
        }
        if let Some(n) = &i.identity_note {
            id["note"] = json!(n);
        }
        o.insert("identity".into(), id);
        let now = serde_json::to_value(inst).unwrap_or_default();
        o.insert(
            "catalog_edits".into(),
            json!(pqperf_model::provenance::catalog_edits(&i.catalog, &now)),
        );
    }
    if let pqperf_model::catalog::Kat::Manifest { manifest, .. } = &inst.kat {
        let root = cand.root_path(catalog_dir);
        let k = match manifest {
            None => json!({"origin": "none"}),
            Some(m) => {
                let p = root.join(m);
                let inside = compile::normalize_rel(Path::new(m)).is_some();
                match sha256_file(&p) {
                    Ok(sha) if inside => {
                        json!({"origin": "submission", "path": m, "sha256": sha})
                    }
                    Ok(sha) => {
                        json!({"origin": "curated", "path": Path::new(m).file_name().map(|n| n.to_string_lossy().into_owned()), "sha256": sha})
                    }
                    Err(_) => {
                        json!({"origin": "none", "missing": Path::new(m).file_name().map(|n| n.to_string_lossy().into_owned())})
                    }
                }
            }
        };
        o.insert("kat_manifest".into(), k);
    }
    serde_json::Value::Object(o)
}

/// Append an instance's log text to `build/<id>.log` (serialised by `lock`): the file is
/// replaced whole (temp + rename) with its old text and the new, so a crash leaves the old
/// log or the new one, never a torn one.
pub fn append_log(run_dir: &Path, b: &InstanceBuild, lock: &Mutex<()>) -> Result<(), BuildError> {
    let _g = lock.lock().unwrap_or_else(|p| p.into_inner());
    let p = run_dir.join(&b.log_rel);
    let mut text = match std::fs::read(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(BuildError::io(&p, e)),
    };
    text.extend_from_slice(b.log.as_bytes());
    pqperf_model::fsutil::write_atomic(&p, &text).map_err(|e| BuildError::io(&p, e))
}

/// The build logs one `build` run writes: per candidate the text of this run so far, written
/// whole (temp + rename) after each instance.
#[derive(Default)]
struct LogBook {
    text: Mutex<std::collections::HashMap<String, String>>,
}

impl LogBook {
    /// Adds `b`'s log text to its candidate's log and replaces the file with the whole text.
    fn add(&self, run_dir: &Path, b: &InstanceBuild) -> Result<(), BuildError> {
        let mut g = self.text.lock().unwrap_or_else(|p| p.into_inner());
        let t = g.entry(b.log_rel.clone()).or_default();
        t.push_str(&b.log);
        let p = run_dir.join(&b.log_rel);
        pqperf_model::fsutil::write_atomic(&p, t.as_bytes()).map_err(|e| BuildError::io(&p, e))
    }
}

/// The build.json entry of an instance about to be rebuilt: its KAT verdict no longer holds
/// (the library is replaced), so it reads as untested (`NOLOG`, no log) until the KAT stage
/// checks the new library.
pub fn untested(e: &BuildEntry) -> BuildEntry {
    let mut e = e.clone();
    if e.library.is_some() {
        e.kat = "NOLOG".into();
    }
    e.kat_log = None;
    e.kat_log_sha256 = None;
    e.extra.shift_remove("kat_computed");
    e
}

/// The KAT result of `old` carried over to the new entry `new` when the rebuild produced the
/// same library from the same inputs and the KAT log `old` names is still the one it
/// describes (its sha256); otherwise `new` unchanged (untested).
fn carry_kat(run_dir: &Path, old: &BuildEntry, mut new: BuildEntry) -> BuildEntry {
    let same_library = new.library.is_some()
        && new.library_sha256.is_some()
        && new.library_sha256 == old.library_sha256
        && new.flags == old.flags
        && current::recorded_inputs(&new).is_some()
        && current::recorded_inputs(&new) == current::recorded_inputs(old);
    let log_intact = match (&old.kat_log, &old.kat_log_sha256) {
        (Some(rel), Some(sha)) => sha256_file(&run_dir.join(rel)).is_ok_and(|s| &s == sha),
        _ => false,
    };
    if same_library && log_intact && old.kat != "NOLOG" {
        new.kat = old.kat.clone();
        new.kat_log = old.kat_log.clone();
        new.kat_log_sha256 = old.kat_log_sha256.clone();
        new.guide_result = old.guide_result.clone();
        if let Some(c) = old.extra.get("kat_computed") {
            new.extra.insert("kat_computed".into(), c.clone());
        }
    }
    new
}

/// Build one instance with its first flag set and, if that fails, with the harness
/// defaults. Returns the final build and the first result when the fallback was used.
pub fn build_with_fallback(
    ctx: &BuildCtx,
    cat: &Catalog,
    cand_idx: usize,
    inst_idx: usize,
) -> (InstanceBuild, Option<InstanceBuild>) {
    let cand = &cat.candidates[cand_idx];
    let inst = &cand.instances[inst_idx];
    let first = build_instance(ctx, cand, inst, FlagSet::for_variant(&inst.variant));
    if first.ok {
        return (first, None);
    }
    let second = build_instance(ctx, cand, inst, FlagSet::HarnessDefault);
    (second, Some(first))
}

/// A finished build: its (candidate, instance) indices in the catalog, key and success.
type Finished = ((usize, usize), String, bool);

/// Whether an instance's build goes before the others': an optimized variant, whose flag set
/// costs the most (the sort is stable: catalog order otherwise).
fn starts_first(inst: &pqperf_model::catalog::Instance) -> bool {
    FlagSet::for_variant(&inst.variant) == FlagSet::GuidePerformance
}

/// `pqperf build`: one library per selected instance, in parallel over instances, the
/// optimized variants first; build.json updated after each instance (entries of other
/// instances are kept).
pub fn build(opts: &BuildOptions) -> Result<BuildSummary, BuildError> {
    let t0 = Instant::now();
    let cat_path = catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let cat = Catalog::load(&cat_path)?;
    let ctx = BuildCtx::with_compiler(
        &opts.run_dir,
        &cat_path,
        opts.iccs_provider.as_ref(),
        opts.cc.as_deref(),
    )?;
    let mut todo = Vec::new();
    for (ci, c) in cat.candidates.iter().enumerate() {
        for (ii, i) in c.instances.iter().enumerate() {
            if opts.select.selects(&c.id, &i.label) {
                todo.push((ci, ii, i.key(c)));
            }
        }
    }
    // The longest builds start first (the jobs take them in this order): an optimized
    // variant's flags (`-O3 -flto`, ISA extensions) make its build several times a reference
    // build's (ML-DSA-44 AVX2 8 s against ≈ 1 s), and started last it ran alone at the end.
    todo.sort_by_key(|&(ci, ii, _)| !starts_first(&cat.candidates[ci].instances[ii]));
    // Fresh logs for the candidates being built: each `build/<id>.log` is this build's text,
    // replaced whole after every instance (the old log stays until then).
    let logs = LogBook::default();
    let mut before = read_build_json(&opts.run_dir)?;
    // The libraries about to be replaced lose their KAT verdict first: a build that does not
    // finish leaves them untested, never a PASS next to another library.
    let old: std::collections::HashMap<String, BuildEntry> = todo
        .iter()
        .filter_map(|(_, _, k)| before.instances.get(k).map(|e| (k.clone(), e.clone())))
        .collect();
    if !old.is_empty() {
        for (k, e) in &old {
            before.instances.insert(k.clone(), untested(e));
        }
        write_build_json(&opts.run_dir, &before)?;
    }
    let old = &old;
    let bj = Mutex::new(before);
    let results: Mutex<Vec<Finished>> = Mutex::new(Vec::new());
    let first_err: Mutex<Option<BuildError>> = Mutex::new(None);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| BuildError::Tool(format!("thread pool: {e}")))?;
    let total = todo.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let bar = if opts.progress {
        stderr_bar(total, "build")
    } else {
        None
    };
    let bar = &bar;
    pool.scope_fifo(|s| {
        for (ci, ii, key) in todo.iter() {
            // Results in catalog order whatever order the builds ran in.
            let order = (*ci, *ii);
            let (ctx, cat, bj, logs, results, first_err, done) =
                (&ctx, &cat, &bj, &logs, &results, &first_err, &done);
            s.spawn_fifo(move |_| {
                let (b, first) = build_with_fallback(ctx, cat, *ci, *ii);
                let mut res = logs.add(&ctx.run_dir, first.as_ref().unwrap_or(&b));
                if first.is_some() && res.is_ok() {
                    res = logs.add(&ctx.run_dir, &b);
                }
                let mut entry = entry_for(&b, first.as_ref().map(|_| "BUILDFAIL".to_string()));
                if let Some(o) = old.get(key) {
                    entry = carry_kat(&ctx.run_dir, o, entry);
                }
                {
                    let mut g = bj.lock().unwrap_or_else(|p| p.into_inner());
                    g.instances.insert(key.clone(), entry);
                    if let Err(e) = write_build_json(&ctx.run_dir, &g).and(res) {
                        first_err.lock().unwrap().get_or_insert(e);
                    }
                }
                let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let line = format!(
                    "build [{n}/{total}] {key}: {} ({}, {:.1} s)",
                    if b.ok { "ok" } else { "BUILDFAIL" },
                    b.flags.name(),
                    b.seconds
                );
                match bar {
                    Some(bar) => {
                        if !b.ok {
                            bar.println(&line);
                        }
                        bar.set_message(key.clone());
                        bar.inc(1);
                    }
                    None if opts.progress => eprintln!("{line}"),
                    None => {}
                }
                if let Some(cb) = &opts.on_progress {
                    cb(n, total, &line);
                }
                results.lock().unwrap().push((order, key.clone(), b.ok));
            });
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = first_err.into_inner().unwrap() {
        return Err(e);
    }
    let mut res = results.into_inner().unwrap();
    res.sort_by_key(|r| r.0);
    // Keep build.json in catalog order for the keys of this catalog.
    let mut bj = bj.into_inner().unwrap();
    let mut ordered = indexmap::IndexMap::new();
    for (c, i) in cat.instances() {
        let k = i.key(c);
        if let Some(e) = bj.instances.shift_remove(&k) {
            ordered.insert(k, e);
        }
    }
    for (k, e) in bj.instances.drain(..) {
        ordered.insert(k, e);
    }
    bj.instances = ordered;
    write_build_json(&opts.run_dir, &bj)?;
    Ok(BuildSummary {
        built: res.iter().filter(|r| r.2).map(|r| r.1.clone()).collect(),
        failed: res.iter().filter(|r| !r.2).map(|r| r.1.clone()).collect(),
        seconds: t0.elapsed().as_secs_f64(),
        build_json: build_json_path(&opts.run_dir),
        iccs_provider: ctx.provider_record.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(label: &str, variant: &str) -> pqperf_model::catalog::Instance {
        serde_json::from_value(serde_json::json!({
            "label": label,
            "instance": label,
            "variant": variant,
            "source_dir": label,
        }))
        .unwrap()
    }

    #[test]
    fn optimized_variants_start_first_in_catalog_order() {
        let insts = [
            instance("ml-kem-512", "reference"),
            instance("ml-dsa-44-avx2", "optimized-avx2"),
            instance("ml-dsa-44", "reference"),
            instance("ml-kem-512-avx2", "optimized-avx2"),
        ];
        let mut order: Vec<&str> = insts.iter().map(|i| i.label.as_str()).collect();
        order.sort_by_key(|l| !starts_first(insts.iter().find(|i| i.label == *l).unwrap()));
        assert_eq!(
            order,
            [
                "ml-dsa-44-avx2",
                "ml-kem-512-avx2",
                "ml-kem-512",
                "ml-dsa-44"
            ]
        );
    }
}
