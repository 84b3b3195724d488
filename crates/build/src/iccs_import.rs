//! Import of an ICCS-API submission (folder or `.zip`): recognises the layout and writes
//! catalog entries. Nothing of the submission is executed (Makefiles, CMake files and
//! scripts are never run).
//!
//! Recognised layout (case-insensitive folder names, possibly one level down, e.g. under
//! `Implementations/`):
//! * `Reference_Implementation/<instance dir>/` and `Optimized_Implementation/<instance dir>/`
//!   holding one of `SIG_/KEM_/KEX_AlgorithmInstance.h` or `CryptHash_AlgorithmInstance.h`
//!   (its `ALGORITHM_INSTANCE` names the instance; the value is the compiler's, see
//!   [`crate::probe`]: the header is included with the instance folder, the ICCS provider
//!   headers and the import's `--define`s, never matched as text);
//! * `KAT/`, `Test_Vectors/` or `Test_Vector/` with the submitted KAT files (flat or in
//!   per-instance folders);
//! * an optional `kat.sha256` manifest at the top.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use pqperf_model::catalog::{
    ApiKind, Candidate, Instance, Kat, is_submission_id, valid_instance_name, valid_label,
};
use pqperf_model::vocab::Category;

use crate::{BuildError, ImportSummary, catalog_path, load_or_empty};

/// Options of `pqperf import iccs`.
#[derive(Debug, Clone)]
pub struct IccsImportOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Catalog file (default `<run>/catalog.toml`).
    pub catalog: Option<PathBuf>,
    /// Submission folder or `.zip` archive.
    pub submission: PathBuf,
    /// Candidate id (`sign-NN`, `kem-NN`, `kex-NN`, `hash-NN`).
    pub id: String,
    /// Algorithm name (default: derived from the instance names).
    pub algorithm: Option<String>,
    /// Submission page.
    pub page: Option<String>,
    /// Preprocessor definitions (`NAME` or `NAME=VALUE`) for every instance: written to the
    /// catalog `defines` and used when the instance header is evaluated (parameter sets).
    pub defines: Vec<String>,
    /// Parameter sets to import at once, each `NAME=V1,V2,…` (`--sets`): one import per
    /// value (per combination when several are given), each with `-DNAME=Vi` added to
    /// `defines`.
    pub sets: Vec<String>,
    /// Globs dropped from every instance's selection (catalog `exclude`).
    pub exclude: Vec<String>,
    /// Globs kept although the default name rules drop them (catalog `include`).
    pub include: Vec<String>,
    /// The command line, for the evidence (paths by file name); empty: not recorded.
    pub command: String,
    /// The pqperf that imports (`pqperf 0.1.0 (commit …)`), for the evidence.
    pub tool: String,
}

impl IccsImportOptions {
    /// Options with no defines, sets, patterns or recorded command.
    pub fn new(run_dir: impl Into<PathBuf>, submission: impl Into<PathBuf>, id: &str) -> Self {
        IccsImportOptions {
            run_dir: run_dir.into(),
            catalog: None,
            submission: submission.into(),
            id: id.to_string(),
            algorithm: None,
            page: None,
            defines: Vec::new(),
            sets: Vec::new(),
            exclude: Vec::new(),
            include: Vec::new(),
            command: String::new(),
            tool: String::new(),
        }
    }
}

/// How an imported instance was named: its folder, the compiler's `ALGORITHM_INSTANCE`, the
/// manifest entry of the folder or instance, and the one-line note when they disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The label the instance gets (its evaluated parameter-set name, or the folder's).
    pub label: String,
    /// The submission folder's name.
    pub folder: String,
    /// `ALGORITHM_INSTANCE` as the compiler evaluates it with the defines.
    pub evaluated: Option<String>,
    /// The manifest entry of the folder or instance.
    pub manifest_entry: Option<String>,
    /// The one-line note when the names disagree.
    pub note: Option<String>,
}

/// Find a child folder of `dir` whose name matches one of `names` case-insensitively.
fn child_ci(dir: &Path, names: &[&str]) -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_lowercase();
            names.iter().any(|w| n == w.to_lowercase())
        })
        .collect();
    v.sort();
    v.into_iter().next()
}

/// The folder holding `Reference_Implementation` (the submission root or one level down).
fn find_impl_base(root: &Path) -> Option<PathBuf> {
    if child_ci(root, &["Reference_Implementation"]).is_some() {
        return Some(root.to_path_buf());
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.into_iter()
        .find(|s| child_ci(s, &["Reference_Implementation"]).is_some())
}

/// Limits of archive extraction (each exceeded limit is a clear error naming the archive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipLimits {
    /// Total uncompressed bytes (default 256 MiB), counted as extracted, not as declared.
    pub max_bytes: u64,
    /// Number of entries (default 20 000).
    pub max_entries: usize,
    /// Uncompressed bytes per archive byte once more than 16 MiB are extracted (default 200).
    pub max_ratio: u64,
}

impl Default for ZipLimits {
    fn default() -> Self {
        ZipLimits {
            max_bytes: 256 << 20,
            max_entries: 20_000,
            max_ratio: 200,
        }
    }
}

/// Extract a zip archive into `dest` with the default [`ZipLimits`].
pub fn extract_zip(zip_path: &Path, dest: &Path) -> Result<(), BuildError> {
    extract_zip_limited(zip_path, dest, &ZipLimits::default())
}

/// Extract a zip archive into `dest`: entries go to a temporary sibling directory that is
/// renamed into place only when extraction completed, so a failed import keeps a previous good
/// extraction. Entries with unsafe paths and symlink entries are refused; `limits` bound
/// the entry count, the uncompressed bytes and the compression ratio.
pub fn extract_zip_limited(
    zip_path: &Path,
    dest: &Path,
    limits: &ZipLimits,
) -> Result<(), BuildError> {
    let bad = |m: String| BuildError::Input(format!("{}: {m}", zip_path.display()));
    let f = std::fs::File::open(zip_path).map_err(|e| BuildError::io(zip_path, e))?;
    let archive_bytes = f.metadata().map(|m| m.len()).unwrap_or(0).max(1);
    let mut z = zip::ZipArchive::new(f).map_err(|e| bad(format!("not a zip archive: {e}")))?;
    if z.len() > limits.max_entries {
        return Err(bad(format!(
            "{} entries, more than the limit of {}",
            z.len(),
            limits.max_entries
        )));
    }
    let parent = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| BuildError::io(parent, e))?;
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.partial-"))
        .tempdir_in(parent)
        .map_err(|e| BuildError::io(parent, e))?;
    let mut total = 0u64;
    for i in 0..z.len() {
        let mut entry = z.by_index(i).map_err(|e| bad(format!("entry {i}: {e}")))?;
        let Some(rel) = entry.enclosed_name() else {
            return Err(bad(format!("unsafe entry name {:?}", entry.name())));
        };
        if entry.is_symlink() {
            return Err(bad(format!(
                "entry {:?} is a symbolic link (refused)",
                entry.name()
            )));
        }
        let out = tmp.path().join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| BuildError::io(&out, e))?;
            continue;
        }
        if let Some(d) = out.parent() {
            std::fs::create_dir_all(d).map_err(|e| BuildError::io(d, e))?;
        }
        let mut w = std::fs::File::create(&out).map_err(|e| BuildError::io(&out, e))?;
        let room = limits.max_bytes - total;
        let n = std::io::copy(&mut (&mut entry).take(room + 1), &mut w)
            .map_err(|e| BuildError::io(&out, e))?;
        total += n;
        if total > limits.max_bytes {
            return Err(bad(format!(
                "more than {} MiB uncompressed (limit); entry {:?}",
                limits.max_bytes >> 20,
                entry.name()
            )));
        }
        if total > 16 << 20 && total / archive_bytes > limits.max_ratio {
            return Err(bad(format!(
                "compression ratio above {} ({} bytes from a {archive_bytes}-byte archive): refused as a zip bomb",
                limits.max_ratio, total
            )));
        }
    }
    // Complete: swap it into place (the previous extraction is removed only now).
    let done = tmp.keep();
    if dest.exists() {
        let old = parent.join(format!(".{name}.old-{}", std::process::id()));
        std::fs::rename(dest, &old).map_err(|e| BuildError::io(dest, e))?;
        std::fs::rename(&done, dest).map_err(|e| BuildError::io(dest, e))?;
        std::fs::remove_dir_all(&old).map_err(|e| BuildError::io(&old, e))?;
    } else {
        std::fs::rename(&done, dest).map_err(|e| BuildError::io(dest, e))?;
    }
    Ok(())
}

/// The ICCS instance header in `dir`: (type, header file name).
fn instance_header(dir: &Path) -> Option<(Category, String)> {
    for (t, h) in [
        (Category::Sign, "SIG_AlgorithmInstance.h"),
        (Category::Kem, "KEM_AlgorithmInstance.h"),
        (Category::Kex, "KEX_AlgorithmInstance.h"),
        (Category::Hash, "CryptHash_AlgorithmInstance.h"),
    ] {
        if dir.join(h).is_file() {
            return Some((t, h.to_string()));
        }
    }
    None
}

/// Recognise a submission folder and produce its catalog candidate (root = `root`).
pub fn read_submission(
    root: &Path,
    id: &str,
    algorithm: Option<&str>,
    page: Option<&str>,
) -> Result<Candidate, BuildError> {
    read_submission_with(root, id, algorithm, page, &[]).map(|r| r.0)
}

/// Evaluate an instance header's `ALGORITHM_INSTANCE` with gcc (instance folder, then the
/// ICCS provider headers, then `defines`). `Ok(None)` when the header does not define it;
/// `Err` says why it could not be evaluated.
fn header_instance(
    sdir: &Path,
    header: &str,
    provider_include: &Path,
    scratch: &Path,
    defines: &[String],
) -> Result<Option<String>, String> {
    let mut args = vec![
        format!("-I{}", sdir.display()),
        format!("-I{}", provider_include.display()),
    ];
    args.extend(defines.iter().map(|d| format!("-D{d}")));
    let probe = crate::probe::HeaderProbe {
        cc: crate::compile::default_cc(),
        cwd: sdir.to_path_buf(),
        scratch: scratch.to_path_buf(),
        args,
        header: header.to_string(),
    };
    probe
        .string("ALGORITHM_INSTANCE")
        .value
        .map_err(|e| e.to_string())
}

/// [`read_submission`] with `defines` for every instance; also returns notes for the user
/// (instance names that could not be evaluated, names that disagree).
pub fn read_submission_with(
    root: &Path,
    id: &str,
    algorithm: Option<&str>,
    page: Option<&str>,
    defines: &[String],
) -> Result<(Candidate, Vec<String>), BuildError> {
    read_submission_full(root, id, algorithm, page, defines).map(|(c, n, _)| (c, n))
}

/// The algorithm name of an instance name: up to its last `-`/`_`, else without its trailing
/// digits (`DARTS128` → `DARTS`, as the reference data names sign-08), else the whole name.
pub fn algorithm_of(instance: &str) -> String {
    if let Some((a, _)) = instance.rsplit_once(['-', '_'])
        && !a.is_empty()
    {
        return a.to_string();
    }
    let stem = instance.trim_end_matches(|c: char| c.is_ascii_digit());
    if stem.is_empty() || stem.len() == instance.len() {
        instance.to_string()
    } else {
        stem.to_string()
    }
}

/// ` (the sources test MSIG_MODE (1, 3): e.g. --define MSIG_MODE=1)`: the macros an
/// instance folder's sources test to choose a parameter set, or nothing when none is found.
pub fn selector_hint(dir: &Path) -> String {
    let s = crate::macros::selectors(dir, 4);
    let Some(first) = s.first() else {
        return String::new();
    };
    let example = match first.values.first() {
        Some(v) => format!("--define {}={v}", first.name),
        None => format!("--define {}", first.name),
    };
    format!(
        " (the sources test {}: e.g. {example})",
        s.iter().map(|x| x.shown()).collect::<Vec<_>>().join(", ")
    )
}

/// Two names of one parameter set: equal up to case and `_` / `-` (`SELS_128`, `sels-128`).
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_lowercase().replace('_', "-");
    norm(a) == norm(b)
}

/// The folder's name when the sources test it as a macro (`#ifdef F`, `defined(F)`) and
/// the import defines no macro of that name.
fn folder_macro(dir: &Path, folder: &str, defines: &[String]) -> Option<String> {
    let is_ident = !folder.is_empty()
        && !folder.starts_with(|c: char| c.is_ascii_digit())
        && folder
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_ident || defines.iter().any(|d| d.split('=').next() == Some(folder)) {
        return None;
    }
    crate::macros::selectors(dir, 16)
        .iter()
        .any(|s| s.name == folder)
        .then(|| folder.to_string())
}

/// The label of an instance: the folder name when it is the instance name (any case) or
/// the instance name followed by a suffix (`BiT-128-avx2`), else the instance name.
fn label_for(folder: &str, instance: &str) -> String {
    let (f, i) = (folder.to_lowercase(), instance.to_lowercase());
    let keep = f == i
        || f.strip_prefix(&i)
            .is_some_and(|rest| rest.starts_with(['-', '_', '.', '+']));
    let base = if keep { folder } else { instance };
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name part of a manifest file name (`KAT_SIG_X-128.txt` → `X-128`).
fn kat_file_name(file: &str) -> &str {
    let f = file.strip_suffix(".txt").unwrap_or(file);
    for p in [
        "KAT_SIG_",
        "KAT_KEM_",
        "KAT_KEX_",
        "KAT_2_12_",
        "KAT_2_23_",
        "KAT_2_33_",
        "KAT_Loop_",
    ] {
        if let Some(r) = f.strip_prefix(p) {
            return r;
        }
    }
    f
}

/// The manifest entries of an instance folder (entry label = folder, any case) and of an
/// instance name (file-name part = instance, as the KAT gate looks it up).
fn manifest_entries_for(
    m: &pqperf_model::KatManifest,
    folder: &str,
    instance: &str,
) -> (
    Option<pqperf_model::ManifestEntry>,
    Option<pqperf_model::ManifestEntry>,
) {
    let in_folder = |e: &&pqperf_model::ManifestEntry| {
        e.label().eq_ignore_ascii_case(folder) && !e.file().starts_with("KAT_2_33")
    };
    // A folder holding several sets: its entry of this instance, else its first.
    let by_folder = m
        .entries
        .iter()
        .filter(in_folder)
        .find(|e| kat_file_name(e.file()) == instance)
        .or_else(|| m.entries.iter().find(in_folder))
        .cloned();
    let by_instance = m
        .entries
        .iter()
        .find(|e| kat_file_name(e.file()) == instance)
        .cloned();
    (by_folder, by_instance)
}

/// [`read_submission_with`], also returning how each instance was named.
pub fn read_submission_full(
    root: &Path,
    id: &str,
    algorithm: Option<&str>,
    page: Option<&str>,
    defines: &[String],
) -> Result<(Candidate, Vec<String>, Vec<Identity>), BuildError> {
    if !is_submission_id(id) {
        return Err(BuildError::Input(format!(
            "--id {id:?}: expected sign-NN, kem-NN, kex-NN or hash-NN"
        )));
    }
    let want = Category::from_word(id.split('-').next().unwrap()).unwrap();
    let base = find_impl_base(root).ok_or_else(|| {
        BuildError::Input(format!(
            "{}: no Reference_Implementation folder (ICCS layout not recognised)",
            root.display()
        ))
    })?;
    let kat_dir = child_ci(root, &["KAT", "Test_Vectors", "Test_Vector"])
        .or_else(|| child_ci(&base, &["KAT", "Test_Vectors", "Test_Vector"]));
    let manifest = [root.join("kat.sha256"), base.join("kat.sha256")]
        .into_iter()
        .find(|p| p.is_file());
    let rel = |p: &Path| -> String {
        p.strip_prefix(root)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_else(|_| p.to_string_lossy().into_owned())
    };
    // The manifest's entries name instances too (unreadable: checked by `pqperf kat`).
    let parsed_manifest = manifest
        .as_ref()
        .and_then(|m| pqperf_model::KatManifest::read(m, Path::new(&rel(m))).ok());
    let mut identities: Vec<Identity> = Vec::new();
    // The ICCS provider headers (drng.h, auxfunc.h...) an instance header may include, and a
    // scratch folder for the probes.
    let tmp = tempfile::tempdir().map_err(|e| BuildError::io(&std::env::temp_dir(), e))?;
    let provider_include = tmp.path().join("include");
    std::fs::create_dir_all(&provider_include).map_err(|e| BuildError::io(&provider_include, e))?;
    for (name, text) in pqperf_iccs_capi::INCLUDE_FILES {
        let p = provider_include.join(name);
        std::fs::write(&p, text).map_err(|e| BuildError::io(&p, e))?;
    }
    let scratch = tmp.path().join("probe");
    let mut notes = Vec::new();
    let mut instances = Vec::new();
    for (folder, variant_kind) in [
        ("Reference_Implementation", "reference"),
        ("Optimized_Implementation", "optimized"),
        ("Additional_Implementation", "optimized"),
    ] {
        let Some(dir) = child_ci(&base, &[folder]) else {
            continue;
        };
        let mut subs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| BuildError::io(&dir, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        subs.sort();
        // A folder holding the header directly is a single instance.
        if instance_header(&dir).is_some() {
            subs = vec![dir.clone()];
        }
        for sdir in subs {
            let Some((kind, header)) = instance_header(&sdir) else {
                continue;
            };
            if kind != want {
                return Err(BuildError::Input(format!(
                    "{}: {header} is a {kind} header but the id is {id}",
                    sdir.display()
                )));
            }
            let dirname = sdir.file_name().unwrap().to_string_lossy().into_owned();
            let shown = rel(&sdir.join(&header));
            let mut header_named = false;
            let instance =
                match header_instance(&sdir, &header, &provider_include, &scratch, defines) {
                    Ok(Some(name)) => {
                        header_named = true;
                        name
                    }
                    Ok(None) => {
                        notes.push(format!(
                            "{shown}: ALGORITHM_INSTANCE is not defined; instance named after \
                             the folder ({dirname})"
                        ));
                        dirname.clone()
                    }
                    Err(e) => {
                        notes.push(format!(
                            "{shown}: ALGORITHM_INSTANCE could not be evaluated ({e}); instance \
                             named after the folder ({dirname}): set `instance` (and \
                             `include_dirs`/`defines`) in the catalog if that is wrong"
                        ));
                        dirname.clone()
                    }
                };
            if !valid_instance_name(&instance) {
                return Err(BuildError::Input(format!(
                    "{shown}: ALGORITHM_INSTANCE {instance:?} is not [A-Za-z0-9_-]{{1,64}}"
                )));
            }
            let evaluated = header_named.then(|| instance.clone());
            let mut label = label_for(&dirname, &instance);
            let variant = if variant_kind == "reference" {
                "reference".to_string()
            } else if dirname.to_lowercase().contains("avx") {
                "optimized-avx2".to_string()
            } else {
                "optimized-c".to_string()
            };
            if variant == "optimized-avx2" && !label.to_lowercase().contains("avx") {
                label.push_str("-avx2");
            } else if variant != "reference"
                && !label.to_lowercase().contains("avx")
                && !label.ends_with("-opt")
            {
                label.push_str("-opt");
            }
            if !valid_label(&label) {
                return Err(BuildError::Input(format!(
                    "{}: cannot derive a label",
                    sdir.display()
                )));
            }
            // Folder, compiler's name and manifest entry: said in one line when they differ.
            let (of_folder, of_instance) = parsed_manifest
                .as_ref()
                .map(|m| manifest_entries_for(m, &dirname, &instance))
                .unwrap_or_default();
            let folder_names = of_folder
                .as_ref()
                .map(|e| kat_file_name(e.file()).to_string());
            // `SELS_128` and `SELS-128` name the same set: case and `_`/`-` do not differ.
            let differs = !same_name(&dirname, &instance)
                || folder_names.as_deref().is_some_and(|n| n != instance);
            let note = (header_named && differs).then(|| {
                let defs = if defines.is_empty() {
                    "no defines".to_string()
                } else {
                    defines
                        .iter()
                        .map(|d| format!("-D{d}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let other_set = folder_names.as_deref().is_some_and(|n| n != instance);
                format!(
                    "{id}/{label}: folder {dirname}, ALGORITHM_INSTANCE {instance} (gcc, {defs}), manifest entry of the folder {}: they disagree; built {instance} (its manifest entry: {}){}",
                    of_folder.as_ref().map_or("none".to_string(), |e| e.path.clone()),
                    of_instance.as_ref().map_or("none".to_string(), |e| e.path.clone()),
                    if other_set {
                        format!(
                            "; the folder's entry is another parameter set: select it with --define or --sets{}",
                            selector_hint(&sdir)
                        )
                    } else {
                        String::new()
                    }
                )
            });
            let entry = of_instance.or(of_folder);
            if let Some(n) = &note {
                notes.push(n.clone());
            }
            // A set chosen by a macro named like the folder (`#ifdef SELS_128` in folder
            // SELS_128) that is not defined: the build would stop; say which define it needs.
            if let Some(m) = folder_macro(&sdir, &dirname, defines) {
                notes.push(format!(
                    "{id}/{label}: the sources select a parameter set with the macro {m} (the folder's name), which is not defined: without `--define {m}` the build fails; import again with `pqperf import iccs … --define {m}`"
                ));
            }
            identities.push(Identity {
                label: label.clone(),
                folder: dirname.clone(),
                evaluated,
                manifest_entry: entry.map(|e| e.path),
                note,
            });
            let kat = Kat::Manifest {
                manifest: manifest.as_ref().map(|m| rel(m)),
                reference_dir: kat_dir.as_ref().map(|k| rel(k)),
                kat_name: None,
                count: None,
            };
            instances.push(Instance {
                label,
                instance,
                variant,
                source_dir: rel(&sdir),
                files: Vec::new(),
                exclude: Vec::new(),
                include: Vec::new(),
                defines: defines.to_vec(),
                include_dirs: Vec::new(),
                cflags: Vec::new(),
                libs: Vec::new(),
                cpu_flags: Vec::new(),
                api: ApiKind::Iccs,
                header: (header != want.iccs_header()).then_some(header),
                no_drng: false,
                nist: None,
                kat,
            });
        }
    }
    if instances.is_empty() {
        return Err(BuildError::Input(format!(
            "{}: no instance folder with a {} found",
            base.display(),
            want.iccs_header()
        )));
    }
    // Labels must be unique: an instance name shared by several folders (a header that
    // hard-codes one name) keeps the folder names.
    for i in 0..instances.len() {
        if instances
            .iter()
            .filter(|x| x.label == instances[i].label)
            .count()
            > 1
        {
            let folder = identities[i].folder.clone();
            let l = label_for(&folder, &folder);
            let l = if instances[i].variant != "reference" && !l.to_lowercase().contains("avx") {
                format!("{l}-opt")
            } else {
                l
            };
            notes.push(format!(
                "{id}: instance name {} is shared by several folders; {} labelled {l}",
                instances[i].instance, instances[i].source_dir
            ));
            instances[i].label = l.clone();
            identities[i].label = l;
        }
    }
    let algorithm = algorithm
        .map(str::to_string)
        .unwrap_or_else(|| algorithm_of(&instances[0].instance));
    let cand = Candidate {
        id: id.to_string(),
        kind: want,
        algorithm,
        page: page.map(str::to_string),
        origin: Some("ICCS submission".into()),
        root: root.to_string_lossy().into_owned(),
        instances,
    };
    Ok((cand, notes, identities))
}

/// `pqperf import iccs`: recognise the submission and upsert its candidate into the catalog.
/// A `.zip` is extracted into `<run>/sources/<id>/`.
pub fn import_iccs(opts: &IccsImportOptions) -> Result<ImportSummary, BuildError> {
    // The id names a directory: check it before any filesystem action.
    if !is_submission_id(&opts.id) {
        return Err(BuildError::Input(format!(
            "--id {:?}: expected sign-NN, kem-NN, kex-NN or hash-NN",
            opts.id
        )));
    }
    let sub = &opts.submission;
    let root = if sub.is_file()
        && sub
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
    {
        let dest = pqperf_model::layout::RunLayout::new(&opts.run_dir).sources(&opts.id);
        extract_zip(sub, &dest)?;
        dest
    } else if sub.is_dir() {
        sub.clone()
    } else {
        return Err(BuildError::Input(format!(
            "{}: neither a folder nor a .zip archive",
            sub.display()
        )));
    };
    let root = std::fs::canonicalize(&root).map_err(|e| BuildError::io(&root, e))?;
    let sub_name = sub
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (source, source_sha256) = if sub.is_file() {
        (
            format!("archive {sub_name}"),
            crate::sha256_file(sub).map_err(|e| BuildError::io(sub, e))?,
        )
    } else {
        (
            format!("tree {sub_name}"),
            pqperf_model::provenance::tree_sha256(&root).map_err(|e| BuildError::io(&root, e))?,
        )
    };
    let mut notes: Vec<String> = Vec::new();
    // One import per parameter set: the --define list, plus one value of each --sets.
    let mut imported: Vec<Instance> = Vec::new();
    let mut identities: Vec<Identity> = Vec::new();
    let mut first: Option<Candidate> = None;
    for set in expand_sets(&opts.defines, &opts.sets)? {
        let (cand, header_notes, ids) = read_submission_full(
            &root,
            &opts.id,
            opts.algorithm.as_deref(),
            opts.page.as_deref(),
            &set,
        )?;
        notes.extend(header_notes);
        for (mut i, ident) in cand.instances.iter().cloned().zip(ids) {
            i.exclude = opts.exclude.clone();
            i.include = opts.include.clone();
            if let Some(k) = imported.iter().position(|x| x.label == i.label) {
                return Err(BuildError::Input(format!(
                    "{}: the parameter sets [{}] and [{}] both name instance {} (label {}): the sets select the same instance",
                    opts.id,
                    imported[k].defines.join(" "),
                    i.defines.join(" "),
                    i.instance,
                    i.label
                )));
            }
            imported.push(i);
            identities.push(ident);
        }
        first.get_or_insert(cand);
    }
    let mut cand = first.expect("at least one set");
    cand.instances = imported;
    let n = cand.instances.len();
    let mut lines: Vec<String> = Vec::new();
    for i in &cand.instances {
        lines.push(format!(
            "{}: instance {} ({}) from {}{}",
            i.label,
            i.instance,
            i.variant,
            i.source_dir,
            if i.defines.is_empty() {
                String::new()
            } else {
                format!(" with -D{}", i.defines.join(" -D"))
            }
        ));
    }
    lines.append(&mut notes);
    let mut notes = lines;
    let cat_path = catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let mut cat = load_or_empty(&cat_path)?;
    // Sets imported earlier from the same submission stay; the same set is replaced.
    let mut record =
        pqperf_model::provenance::ImportRecord::load(&opts.run_dir, &opts.id).unwrap_or_default();
    record.id = opts.id.clone();
    if let Some(old) = cat.candidate(&opts.id).cloned() {
        if old.root == cand.root && old.kind == cand.kind {
            let mut merged = old.instances.clone();
            for i in cand.instances.drain(..) {
                if let Some(slot) = merged.iter_mut().find(|x| x.label == i.label) {
                    notes.push(format!(
                        "{}/{}: replaces the instance imported before under this label (defines [{}] → [{}])",
                        opts.id,
                        i.label,
                        slot.defines.join(" "),
                        i.defines.join(" ")
                    ));
                    *slot = i;
                } else {
                    // An earlier import of the same folder under another label (the set
                    // the folder built without these defines) stays too: said, with how
                    // to drop it, since it was not asked for now.
                    let folder = identities
                        .iter()
                        .find(|x| x.label == i.label)
                        .map(|x| x.folder.clone());
                    let same_folder: Vec<&str> = merged
                        .iter()
                        .filter(|x| {
                            folder.is_some()
                                && record.instances.get(&x.label).map(|r| &r.folder)
                                    == folder.as_ref()
                        })
                        .map(|x| x.label.as_str())
                        .collect();
                    let also = if same_folder.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} came from the same folder {} in an earlier import and stays: it will be built, measured and published too unless you delete its [[candidate.instance]] entry from catalog.toml",
                            same_folder.join(", "),
                            folder.as_deref().unwrap_or("")
                        )
                    };
                    notes.push(format!(
                        "{}/{}: added beside {}{also}",
                        opts.id,
                        i.label,
                        merged
                            .iter()
                            .map(|x| x.label.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    merged.push(i);
                }
            }
            cand.instances = merged;
            if opts.algorithm.is_none() {
                cand.algorithm = old.algorithm.clone();
            }
            cand.page = opts.page.clone().or(old.page.clone());
        } else {
            notes.push(format!(
                "{}: replaces the candidate imported before from another submission ({} instance(s) dropped)",
                opts.id,
                old.instances.len()
            ));
            record.instances.clear();
        }
    }
    for ident in &identities {
        let Some(inst) = cand.instances.iter().find(|i| i.label == ident.label) else {
            continue;
        };
        record.instances.insert(
            ident.label.clone(),
            pqperf_model::provenance::ImportedInstance {
                command: opts.command.clone(),
                tool: opts.tool.clone(),
                source: source.clone(),
                source_sha256: source_sha256.clone(),
                folder: ident.folder.clone(),
                evaluated_instance: ident.evaluated.clone(),
                manifest_entry: ident.manifest_entry.clone(),
                identity_note: ident.note.clone(),
                catalog: serde_json::to_value(inst).unwrap_or_default(),
            },
        );
    }
    record
        .instances
        .retain(|l, _| cand.instances.iter().any(|i| &i.label == l));
    cat.upsert(cand);
    cat.validate()?;
    cat.save(&cat_path)
        .map_err(|e| BuildError::io(&cat_path, e))?;
    record.save(&opts.run_dir).map_err(|e| {
        BuildError::io(
            &pqperf_model::provenance::ImportRecord::path(&opts.run_dir, &opts.id),
            e,
        )
    })?;
    Ok(ImportSummary {
        catalog: cat_path,
        candidates: vec![opts.id.clone()],
        instances: n,
        notes,
    })
}

/// The define lists of `--define D…` and `--sets NAME=V1,V2,…`: `defines` alone without
/// sets, else `defines` plus one `NAME=Vi` of each set, for every combination.
pub fn expand_sets(defines: &[String], sets: &[String]) -> Result<Vec<Vec<String>>, BuildError> {
    let mut out: Vec<Vec<String>> = vec![defines.to_vec()];
    for s in sets {
        let bad = || {
            BuildError::Input(format!(
                "--sets {s:?}: expected NAME=V1,V2,… (e.g. --sets MODE=1,3,5)"
            ))
        };
        let (name, values) = s.split_once('=').ok_or_else(bad)?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad());
        }
        let values: Vec<&str> = values.split(',').map(str::trim).collect();
        if values.iter().any(|v| v.is_empty()) {
            return Err(bad());
        }
        out = out
            .into_iter()
            .flat_map(|d| {
                values.iter().map(move |v| {
                    let mut d = d.clone();
                    d.retain(|x| x.split('=').next() != Some(name));
                    d.push(format!("{name}={v}"));
                    d
                })
            })
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_of(path: &Path, entries: &[(&str, &[u8])]) {
        use std::io::Write;
        let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for (name, data) in entries {
            z.start_file(*name, opts).unwrap();
            z.write_all(data).unwrap();
        }
        z.finish().unwrap();
    }

    #[test]
    fn bad_id_is_refused_before_touching_the_filesystem() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("keep"), "x").unwrap();
        let zpath = tmp.path().join("sub.zip");
        zip_of(&zpath, &[("a.txt", b"a")]);
        let run_dir = tmp.path().join("run/sub");
        for id in ["../../victim", victim.to_str().unwrap(), "sign-1", "x"] {
            let e = import_iccs(&IccsImportOptions::new(&run_dir, &zpath, id)).unwrap_err();
            assert!(e.to_string().contains("expected sign-NN"), "{e}");
        }
        assert!(victim.join("keep").is_file());
        assert!(!run_dir.exists());
    }

    #[test]
    fn zip_limits_symlinks_and_atomic_replacement() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("sources/sign-90");
        let good = tmp.path().join("good.zip");
        zip_of(&good, &[("d/a.txt", b"good")]);
        extract_zip(&good, &dest).unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.join("d/a.txt")).unwrap(),
            "good"
        );
        // Compression bomb: 64 MiB of zeros.
        let bomb = tmp.path().join("bomb.zip");
        zip_of(&bomb, &[("zeros", &vec![0u8; 64 << 20])]);
        assert!(std::fs::metadata(&bomb).unwrap().len() < 1 << 20);
        let e = extract_zip(&bomb, &dest).unwrap_err().to_string();
        assert!(
            e.contains("compression ratio") && e.contains("bomb.zip"),
            "{e}"
        );
        // The previous good extraction survives a failed one; no partial directory is left.
        assert_eq!(
            std::fs::read_to_string(dest.join("d/a.txt")).unwrap(),
            "good"
        );
        let names: Vec<String> = std::fs::read_dir(tmp.path().join("sources"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["sign-90".to_string()]);
        // Byte limit and entry limit.
        let big = tmp.path().join("big.zip");
        zip_of(&big, &[("a", &[7u8; 5000]), ("b", &[8u8; 5000])]);
        let small = ZipLimits {
            max_bytes: 6000,
            ..Default::default()
        };
        let e = extract_zip_limited(&big, &dest, &small)
            .unwrap_err()
            .to_string();
        assert!(e.contains("uncompressed (limit)"), "{e}");
        let few = ZipLimits {
            max_entries: 1,
            ..Default::default()
        };
        let e = extract_zip_limited(&big, &dest, &few)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the limit of 1"), "{e}");
        // Symlink entries are refused.
        let link = tmp.path().join("link.zip");
        {
            let mut z = zip::ZipWriter::new(std::fs::File::create(&link).unwrap());
            z.add_symlink(
                "d/evil",
                "/etc/passwd",
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap();
            z.finish().unwrap();
        }
        let e = extract_zip(&link, &dest).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dest.join("d/a.txt")).unwrap(),
            "good"
        );
        // A replacement swaps the whole tree.
        let other = tmp.path().join("other.zip");
        zip_of(&other, &[("e/b.txt", b"new")]);
        extract_zip(&other, &dest).unwrap();
        assert!(!dest.join("d").exists());
        assert_eq!(
            std::fs::read_to_string(dest.join("e/b.txt")).unwrap(),
            "new"
        );
    }

    #[test]
    fn imports_a_zip_submission() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/candidates/wots-pxof");
        let zpath = tmp.path().join("sub.zip");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zpath).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for e in walkdir::WalkDir::new(&src) {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let rel = e.path().strip_prefix(&src).unwrap();
                z.start_file(format!("WOTS/{}", rel.to_string_lossy()), opts)
                    .unwrap();
                z.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
            }
        }
        z.finish().unwrap();
        let run_dir = tmp.path().join("run");
        let s = import_iccs(&IccsImportOptions {
            page: Some("https://example.invalid/sign-90".into()),
            ..IccsImportOptions::new(&run_dir, &zpath, "sign-90")
        })
        .unwrap();
        assert_eq!(s.instances, 1);
        let cat = pqperf_model::catalog::Catalog::load(&run_dir.join("catalog.toml")).unwrap();
        let c = cat.candidate("sign-90").unwrap();
        assert_eq!(c.kind, Category::Sign);
        assert_eq!(c.algorithm, "WOTS-PXOF");
        let i = &c.instances[0];
        assert_eq!(
            (i.label.as_str(), i.instance.as_str()),
            ("WOTS-PXOF-128", "WOTS-PXOF-128")
        );
        assert_eq!(i.source_dir, "WOTS/Reference_Implementation/WOTS-PXOF-128");
        assert_eq!(
            i.kat,
            Kat::Manifest {
                manifest: Some("WOTS/kat.sha256".into()),
                reference_dir: Some("WOTS/KAT".into()),
                kat_name: None,
                count: None
            }
        );
        assert!(
            run_dir
                .join("sources/sign-90/WOTS/Reference_Implementation")
                .is_dir()
        );
        // Wrong type for the id.
        let e = read_submission(&src, "kem-90", None, None).unwrap_err();
        assert!(e.to_string().contains("is a sign header"), "{e}");
    }
}
