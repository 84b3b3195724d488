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
    ApiKind, Candidate, CandidateType, Instance, Kat, is_submission_id, valid_instance_name,
    valid_label,
};

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
fn instance_header(dir: &Path) -> Option<(CandidateType, String)> {
    for (t, h) in [
        (CandidateType::Sign, "SIG_AlgorithmInstance.h"),
        (CandidateType::Kem, "KEM_AlgorithmInstance.h"),
        (CandidateType::Kex, "KEX_AlgorithmInstance.h"),
        (CandidateType::Hash, "CryptHash_AlgorithmInstance.h"),
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
/// (instance names that could not be evaluated).
pub fn read_submission_with(
    root: &Path,
    id: &str,
    algorithm: Option<&str>,
    page: Option<&str>,
    defines: &[String],
) -> Result<(Candidate, Vec<String>), BuildError> {
    if !is_submission_id(id) {
        return Err(BuildError::Input(format!(
            "--id {id:?}: expected sign-NN, kem-NN, kex-NN or hash-NN"
        )));
    }
    let want = CandidateType::parse(id.split('-').next().unwrap()).unwrap();
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
            let instance =
                match header_instance(&sdir, &header, &provider_include, &scratch, defines) {
                    Ok(Some(name)) => name,
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
            let mut label: String = dirname
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let variant = if variant_kind == "reference" {
                "reference".to_string()
            } else if dirname.to_lowercase().contains("avx") {
                "optimized-avx2".to_string()
            } else {
                "optimized-c".to_string()
            };
            if variant != "reference"
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
            let no_drng = defines_drng(&sdir);
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
                defines: defines.to_vec(),
                include_dirs: Vec::new(),
                cflags: Vec::new(),
                libs: Vec::new(),
                cpu_flags: Vec::new(),
                api: ApiKind::Iccs,
                header: (header != want.iccs_header()).then_some(header),
                no_drng,
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
    let algorithm = algorithm.map(str::to_string).unwrap_or_else(|| {
        let first = &instances[0].instance;
        first
            .rsplit_once(['-', '_'])
            .map(|(a, _)| a.to_string())
            .unwrap_or_else(|| first.clone())
    });
    let cand = Candidate {
        id: id.to_string(),
        kind: want,
        algorithm,
        page: page.map(str::to_string),
        origin: Some("ICCS submission".into()),
        root: root.to_string_lossy().into_owned(),
        instances,
    };
    Ok((cand, notes))
}

/// True if a source in `dir` defines `drng_algorithm` at file scope (the shim must not).
fn defines_drng(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.filter_map(|e| e.ok()).any(|e| {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("c") {
            return false;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        text.lines().any(|l| {
            let t = l.trim();
            t.starts_with("DRNG_ctx") && t.contains("drng_algorithm") && !t.contains('(')
        })
    })
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
        let dest = opts.run_dir.join("sources").join(&opts.id);
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
    let (cand, header_notes) = read_submission_with(
        &root,
        &opts.id,
        opts.algorithm.as_deref(),
        opts.page.as_deref(),
        &opts.defines,
    )?;
    let n = cand.instances.len();
    let mut notes: Vec<String> = cand
        .instances
        .iter()
        .map(|i| {
            format!(
                "{}: instance {} ({}) from {}",
                i.label, i.instance, i.variant, i.source_dir
            )
        })
        .collect();
    notes.extend(header_notes);
    let cat_path = catalog_path(&opts.run_dir, opts.catalog.as_deref());
    let mut cat = load_or_empty(&cat_path)?;
    cat.upsert(cand);
    cat.validate()?;
    cat.save(&cat_path)
        .map_err(|e| BuildError::io(&cat_path, e))?;
    Ok(ImportSummary {
        catalog: cat_path,
        candidates: vec![opts.id.clone()],
        instances: n,
        notes,
    })
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
            let e = import_iccs(&IccsImportOptions {
                run_dir: run_dir.clone(),
                catalog: None,
                submission: zpath.clone(),
                id: id.into(),
                algorithm: None,
                page: None,
                defines: Vec::new(),
            })
            .unwrap_err();
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
            run_dir: run_dir.clone(),
            catalog: None,
            submission: zpath,
            id: "sign-90".into(),
            algorithm: None,
            page: Some("https://example.invalid/sign-90".into()),
            defines: Vec::new(),
        })
        .unwrap();
        assert_eq!(s.instances, 1);
        let cat = pqperf_model::catalog::Catalog::load(&run_dir.join("catalog.toml")).unwrap();
        let c = cat.candidate("sign-90").unwrap();
        assert_eq!(c.kind, CandidateType::Sign);
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
