//! Import of the PQClean corpus vendored in the pinned crate `pqcrypto-mldsa =0.1.2`.
//!
//! The tree is located through cargo (a throwaway manifest depending on the pinned crate,
//! `cargo fetch` + `cargo metadata`), never by URL. Only scheme folders with a `META.yml`
//! count (the tree carries stale `kyber*` folders with objects and `.bak` files); each scheme
//! becomes one catalog candidate with one instance per implementation this CPU can run.
//! Sources are only read here; the build copies them into a fresh folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_model::catalog::{ApiKind, Candidate, Instance, Kat, NistApi, NistRng};
use pqperf_model::vocab::Category;
use serde::Deserialize;

use crate::BuildError;

/// The pinned crate that vendors the PQClean tree.
pub const PQCLEAN_CRATE: &str = "pqcrypto-mldsa";
/// Its pinned version.
pub const PQCLEAN_CRATE_VERSION: &str = "0.1.2";

/// `META.yml` of a PQClean scheme (the fields pqperf uses).
#[derive(Debug, Clone, Deserialize)]
pub struct Meta {
    /// Scheme name.
    pub name: String,
    #[serde(rename = "type")]
    /// `kem` or `signature`.
    pub kind: String,
    #[serde(rename = "claimed-nist-level", default)]
    /// Claimed NIST security level.
    pub claimed_nist_level: Option<u32>,
    #[serde(rename = "length-public-key")]
    /// Public-key bytes.
    pub length_public_key: u64,
    #[serde(rename = "length-secret-key")]
    /// Secret-key bytes.
    pub length_secret_key: u64,
    #[serde(rename = "length-signature", default)]
    /// Signature bytes (signatures).
    pub length_signature: Option<u64>,
    #[serde(rename = "length-ciphertext", default)]
    /// Ciphertext bytes (KEMs).
    pub length_ciphertext: Option<u64>,
    #[serde(rename = "length-shared-secret", default)]
    /// Shared-secret bytes (KEMs).
    pub length_shared_secret: Option<u64>,
    #[serde(rename = "nistkat-sha256", default)]
    /// SHA-256 of the NIST KAT response file.
    pub nistkat_sha256: Option<String>,
    #[serde(rename = "nistkat-rng", default)]
    /// RNG of the KAT generator, when named.
    pub nistkat_rng: Option<String>,
    #[serde(default)]
    /// The implementations.
    pub implementations: Vec<MetaImpl>,
}

/// One implementation entry of META.yml.
#[derive(Debug, Clone, Deserialize)]
pub struct MetaImpl {
    /// Implementation name (`clean`, `avx2`, `aarch64`).
    pub name: String,
    #[serde(default)]
    /// Platforms it lists as supported.
    pub supported_platforms: Vec<MetaPlatform>,
}

/// A supported platform of an implementation.
#[derive(Debug, Clone, Deserialize)]
pub struct MetaPlatform {
    /// Architecture (`x86_64`, `arm_8`, …).
    pub architecture: String,
    #[serde(default)]
    /// CPU features it needs (`avx2`, …).
    pub required_flags: Vec<String>,
}

/// Parse a META.yml text.
pub fn parse_meta(path: &Path, text: &str) -> Result<Meta, BuildError> {
    serde_yaml_ng::from_str(text).map_err(|e| {
        let line = e
            .location()
            .map(|l| format!(":{}", l.line()))
            .unwrap_or_default();
        BuildError::Input(format!("{}{line}: {e}", path.display()))
    })
}

/// Locate the `pqclean/` folder of `pqcrypto-mldsa =0.1.2` through cargo. `work` is a
/// scratch folder for the throwaway manifest.
pub fn locate_tree(work: &Path) -> Result<PathBuf, BuildError> {
    std::fs::create_dir_all(work.join("src")).map_err(|e| BuildError::io(work, e))?;
    let manifest = work.join("Cargo.toml");
    let text = format!(
        "# Throwaway manifest written by `pqperf import pqclean` to locate the PQClean tree.\n\
         [package]\nname = \"pqperf-pqclean-locator\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n{PQCLEAN_CRATE} = \"={PQCLEAN_CRATE_VERSION}\"\n\n[workspace]\n"
    );
    std::fs::write(&manifest, text).map_err(|e| BuildError::io(&manifest, e))?;
    let lib = work.join("src/lib.rs");
    std::fs::write(&lib, "").map_err(|e| BuildError::io(&lib, e))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // Online first; if the registry cannot be reached, the crate may already be cached.
    let mut offline = false;
    let fetch = Command::new(&cargo)
        .arg("fetch")
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .map_err(|e| BuildError::Tool(format!("cannot run cargo: {e}")))?;
    if !fetch.status.success() {
        let retry = Command::new(&cargo)
            .args(["fetch", "--offline", "--manifest-path"])
            .arg(&manifest)
            .output()
            .map_err(|e| BuildError::Tool(format!("cannot run cargo: {e}")))?;
        if !retry.status.success() {
            return Err(BuildError::Tool(format!(
                "cargo fetch for {PQCLEAN_CRATE} ={PQCLEAN_CRATE_VERSION} failed: {}",
                String::from_utf8_lossy(&fetch.stderr).trim()
            )));
        }
        offline = true;
    }
    let mut cmd = Command::new(&cargo);
    cmd.args(["metadata", "--format-version", "1"]);
    if offline {
        cmd.arg("--offline");
    }
    let meta = cmd
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .map_err(|e| BuildError::Tool(format!("cannot run cargo: {e}")))?;
    if !meta.status.success() {
        return Err(BuildError::Tool(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&meta.stderr).trim()
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&meta.stdout)
        .map_err(|e| BuildError::Tool(format!("cargo metadata output: {e}")))?;
    let pkgs = v["packages"].as_array().cloned().unwrap_or_default();
    let pkg = pkgs
        .iter()
        .find(|p| p["name"] == PQCLEAN_CRATE && p["version"] == PQCLEAN_CRATE_VERSION)
        .ok_or_else(|| {
            BuildError::Tool(format!(
                "cargo metadata lists no {PQCLEAN_CRATE} {PQCLEAN_CRATE_VERSION}"
            ))
        })?;
    let mp = pkg["manifest_path"]
        .as_str()
        .ok_or_else(|| BuildError::Tool("package without manifest_path".into()))?;
    let tree = Path::new(mp)
        .parent()
        .map(|d| d.join("pqclean"))
        .ok_or_else(|| BuildError::Tool(format!("odd manifest_path {mp}")))?;
    if !tree.join("common").is_dir() {
        return Err(BuildError::Input(format!(
            "{}: not a PQClean tree (no common/)",
            tree.display()
        )));
    }
    Ok(tree)
}

/// CPU feature flags of this machine: the `flags` (x86) or `Features` (AArch64) line of
/// /proc/cpuinfo when it describes this pqperf's architecture; otherwise (an emulated pqperf,
/// whose /proc/cpuinfo is the host's) the features the CPU running this process announces in
/// its auxiliary vector (`AT_HWCAP`, AArch64 names as the kernel prints them).
pub fn cpu_flags() -> BTreeSet<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let from_cpuinfo = cpuinfo_features(&text, machine_arch());
    if !from_cpuinfo.is_empty() || machine_arch() != "aarch64" {
        return from_cpuinfo;
    }
    let auxv = std::fs::read("/proc/self/auxv").unwrap_or_default();
    auxv_hwcap(&auxv)
        .map(aarch64_hwcap_names)
        .unwrap_or_default()
}

/// The feature words of a /proc/cpuinfo text for `arch`: the first `flags` line on x86-64,
/// the first `Features` line on AArch64 (empty when the text describes another architecture).
pub fn cpuinfo_features(cpuinfo: &str, arch: &str) -> BTreeSet<String> {
    let key = if arch == "aarch64" {
        "Features"
    } else {
        "flags"
    };
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// `AT_HWCAP` (type 16) of a native-endian 64-bit auxiliary vector (`/proc/self/auxv`).
pub fn auxv_hwcap(auxv: &[u8]) -> Option<u64> {
    auxv.chunks_exact(16).find_map(|pair| {
        let key = u64::from_ne_bytes(pair[..8].try_into().ok()?);
        let val = u64::from_ne_bytes(pair[8..].try_into().ok()?);
        (key == 16).then_some(val)
    })
}

/// AArch64 `HWCAP_*` bits (Linux `uapi/asm/hwcap.h`) as the names /proc/cpuinfo prints.
pub fn aarch64_hwcap_names(hwcap: u64) -> BTreeSet<String> {
    const NAMES: [&str; 32] = [
        "fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp",
        "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3", "sm4",
        "asimddp", "sha512", "sve", "asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb",
        "paca", "pacg",
    ];
    NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| hwcap & (1 << i) != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// `x86_64`, `aarch64`, …
pub fn machine_arch() -> &'static str {
    std::env::consts::ARCH
}

/// PQClean architecture word for this machine.
fn pqclean_arch() -> &'static str {
    match machine_arch() {
        "x86_64" => "x86_64",
        "aarch64" => "arm_8",
        other => other,
    }
}

/// gcc flag enabling a PQClean `required_flags` entry.
fn gcc_flag_for(cpu_flag: &str) -> Option<&'static str> {
    Some(match cpu_flag {
        "avx2" => "-mavx2",
        "aes" => "-maes",
        "bmi1" => "-mbmi",
        "bmi2" => "-mbmi2",
        "popcnt" => "-mpopcnt",
        "sse4_1" => "-msse4.1",
        "pclmulqdq" => "-mpclmul",
        "avx" => "-mavx",
        // AArch64 (PQClean `arm_8`): Advanced SIMD is in every ARMv8-A target; the SHA-3
        // instructions need the extension, merged into the flag set's `-march` at build time.
        "sha3" => "-march=armv8.2-a+sha3",
        "sve" => "-march=armv8.2-a+sve",
        _ => return None,
    })
}

/// `PQCLEAN_<SCHEME upper-cased, '-' removed>_<IMPL upper-cased>`.
pub fn namespace(scheme: &str, implementation: &str) -> String {
    format!(
        "PQCLEAN_{}_{}",
        scheme.to_uppercase().replace('-', ""),
        implementation.to_uppercase()
    )
}

/// A file-name-safe instance name from a META name (`Classic McEliece 348864` →
/// `Classic-McEliece-348864`, `SPHINCS+-SHAKE-128f-simple` → `SPHINCSplus-SHAKE-128f-simple`).
pub fn instance_name(meta_name: &str) -> String {
    meta_name
        .replace('+', "plus")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// True if the implementation's `api.h` declares `<ns>_crypto_sign_signature_ctx` (gcc probe).
fn signature_ctx(idir: &Path, common: &Path, scratch: &Path, ns: &str) -> Result<bool, BuildError> {
    let probe = crate::probe::HeaderProbe {
        cc: crate::compile::default_cc(),
        cwd: idir.to_path_buf(),
        scratch: scratch.to_path_buf(),
        args: vec![
            format!("-I{}", idir.display()),
            format!("-I{}", common.display()),
        ],
        header: "api.h".into(),
    };
    probe
        .declares(&format!("{ns}_crypto_sign_signature_ctx"))
        .value
        .map(|v| v.unwrap_or(false))
        .map_err(|e| BuildError::Input(format!("{}: {e}", idir.join("api.h").display())))
}

/// `#include "x.h"` names of a C/assembler file.
fn includes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let rest = t
                .strip_prefix('#')?
                .trim_start()
                .strip_prefix("include")?
                .trim();
            let rest = rest.strip_prefix('"')?;
            Some(rest.split('"').next()?.to_string())
        })
        .collect()
}

/// Files directly in `dir` with one of `exts`, sorted.
fn files_with_ext(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| exts.contains(&e))
        })
        .collect();
    v.sort();
    v
}

/// The `common/` sources an implementation needs: every common header it (transitively)
/// includes brings its `.c` sibling; a header in a `common/<sub>/` folder brings every `.c`
/// of that folder (keccak4x). Returns (source files relative to `common/`, include subdirs).
fn common_needs(tree: &Path, impl_dir: &Path) -> (Vec<String>, Vec<String>) {
    let common = tree.join("common");
    let mut header_loc = std::collections::HashMap::new();
    for sub in ["", "keccak4x"] {
        for h in files_with_ext(&common.join(sub), &["h"]) {
            let name = h.file_name().unwrap().to_string_lossy().into_owned();
            header_loc.entry(name).or_insert_with(|| sub.to_string());
        }
    }
    let local: BTreeSet<String> = std::fs::read_dir(impl_dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut todo: Vec<PathBuf> = files_with_ext(impl_dir, &["c", "h", "S", "inc"]);
    let mut seen_files = BTreeSet::new();
    let mut sources = BTreeSet::new();
    let mut subdirs = BTreeSet::new();
    while let Some(f) = todo.pop() {
        if !seen_files.insert(f.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for inc in includes(&text) {
            let from_impl = f.starts_with(impl_dir);
            if from_impl && local.contains(&inc) {
                continue;
            }
            let Some(sub) = header_loc.get(&inc) else {
                continue;
            };
            let dir = common.join(sub);
            todo.push(dir.join(&inc));
            if sub.is_empty() {
                let stem = inc.trim_end_matches(".h");
                let c = format!("{stem}.c");
                if common.join(&c).is_file() {
                    sources.insert(c.clone());
                    todo.push(common.join(&c));
                }
            } else {
                subdirs.insert(sub.clone());
                for c in files_with_ext(&dir, &["c"]) {
                    let name = c.file_name().unwrap().to_string_lossy().into_owned();
                    if sources.insert(format!("{sub}/{name}")) {
                        todo.push(c);
                    }
                }
            }
        }
    }
    // Folders of common/ the implementation Makefile links objects from (keccak4x: its
    // `KeccakP-1600-times4-SIMD256.o` is named only there). The Makefile is read, never run.
    let mk = std::fs::read_to_string(impl_dir.join("Makefile")).unwrap_or_default();
    for (i, _) in mk.match_indices("common/") {
        let sub: String = mk[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if sub.is_empty() || !common.join(&sub).is_dir() {
            continue;
        }
        subdirs.insert(sub.clone());
        for c in files_with_ext(&common.join(&sub), &["c"]) {
            let name = c.file_name().unwrap().to_string_lossy().into_owned();
            sources.insert(format!("{sub}/{name}"));
        }
    }
    // randombytes comes from the harness (NIST DRBG); never link PQClean's OS-backed one.
    sources.remove("randombytes.c");
    (sources.into_iter().collect(), subdirs.into_iter().collect())
}

/// `-m…` flags named in an implementation Makefile's CFLAGS (read, never executed).
fn makefile_machine_flags(impl_dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(impl_dir.join("Makefile")).unwrap_or_default();
    let mut out = Vec::new();
    let mut in_cflags = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("CFLAGS") {
            in_cflags = true;
        } else if !in_cflags {
            continue;
        }
        for tok in t.split_whitespace() {
            if tok.starts_with("-m") && !out.iter().any(|o| o == tok) {
                out.push(tok.to_string());
            }
        }
        if !t.ends_with('\\') {
            in_cflags = false;
        }
    }
    out
}

/// Why an implementation was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Scheme name.
    pub scheme: String,
    /// Implementation name.
    pub implementation: String,
    /// Why, in words.
    pub reason: String,
}

/// Result of reading a PQClean tree.
#[derive(Debug, Clone)]
pub struct PqcleanImport {
    /// One candidate per scheme (instances: the runnable implementations).
    pub candidates: Vec<Candidate>,
    /// Implementations not imported, with the reason.
    pub skipped: Vec<Skipped>,
    /// Folders ignored because they have no META.yml.
    pub ignored_folders: Vec<String>,
}

/// Read every scheme with a META.yml under `tree/crypto_{sign,kem}` and build catalog
/// candidates for the implementations runnable on a CPU with `cpu` flags. `root` is the
/// string stored as the candidates' root (the tree path).
pub fn read_tree(tree: &Path, cpu: &BTreeSet<String>) -> Result<PqcleanImport, BuildError> {
    let mut candidates = Vec::new();
    let mut skipped = Vec::new();
    let mut ignored = Vec::new();
    let arch = pqclean_arch();
    let tmp = tempfile::tempdir().map_err(|e| BuildError::io(&std::env::temp_dir(), e))?;
    let scratch = tmp.path().to_path_buf();
    for (dir, kind) in [
        ("crypto_sign", Category::Sign),
        ("crypto_kem", Category::Kem),
    ] {
        let mut schemes: Vec<PathBuf> = std::fs::read_dir(tree.join(dir))
            .map_err(|e| BuildError::io(&tree.join(dir), e))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        schemes.sort();
        for sdir in schemes {
            let scheme = sdir.file_name().unwrap().to_string_lossy().into_owned();
            let meta_path = sdir.join("META.yml");
            if !meta_path.is_file() {
                ignored.push(format!("{dir}/{scheme}"));
                continue;
            }
            let text =
                std::fs::read_to_string(&meta_path).map_err(|e| BuildError::io(&meta_path, e))?;
            let meta = parse_meta(&meta_path, &text)?;
            let mut instances = Vec::new();
            for imp in &meta.implementations {
                let idir = sdir.join(&imp.name);
                let skip = |reason: String| Skipped {
                    scheme: scheme.clone(),
                    implementation: imp.name.clone(),
                    reason,
                };
                if !idir.is_dir() {
                    skipped.push(skip("no folder".into()));
                    continue;
                }
                let mut required: Vec<String> = Vec::new();
                if !imp.supported_platforms.is_empty() {
                    let Some(p) = imp
                        .supported_platforms
                        .iter()
                        .find(|p| p.architecture == arch)
                    else {
                        skipped.push(skip(format!(
                            "platforms {} only",
                            imp.supported_platforms
                                .iter()
                                .map(|p| p.architecture.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                        continue;
                    };
                    let missing: Vec<&String> = p
                        .required_flags
                        .iter()
                        .filter(|f| !cpu.contains(*f))
                        .collect();
                    if !missing.is_empty() {
                        skipped.push(skip(format!(
                            "CPU lacks {}",
                            missing
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )));
                        continue;
                    }
                    required = p.required_flags.clone();
                }
                let mut cflags: Vec<String> = Vec::new();
                for f in &required {
                    if let Some(g) = gcc_flag_for(f)
                        && !cflags.iter().any(|c| c == g)
                    {
                        cflags.push(g.to_string());
                    }
                }
                for m in makefile_machine_flags(&idir) {
                    if !cflags.contains(&m) {
                        cflags.push(m);
                    }
                }
                let (common_src, common_sub) = common_needs(tree, &idir);
                let mut files = vec!["*.c".to_string()];
                // Assembly: `.S` (preprocessed) and `.s` (the AArch64 SPHINCS+ Keccak core).
                for ext in ["S", "s"] {
                    if !files_with_ext(&idir, &[ext]).is_empty() {
                        files.push(format!("*.{ext}"));
                    }
                }
                files.extend(common_src.iter().map(|c| format!("../../../common/{c}")));
                let mut include_dirs = vec!["../../../common".to_string()];
                include_dirs.extend(common_sub.iter().map(|s| format!("../../../common/{s}")));
                let ns = namespace(&scheme, &imp.name);
                // ML-DSA: only the `_ctx` signature functions exist. Asked from gcc (does
                // api.h declare `<ns>_crypto_sign_signature_ctx`?), not matched in its text.
                let ctx = kind == Category::Sign
                    && signature_ctx(&idir, &tree.join("common"), &scratch, &ns)?;
                let nist = NistApi {
                    namespace: ns,
                    pk_bytes: meta.length_public_key,
                    sk_bytes: meta.length_secret_key,
                    sig_bytes: meta.length_signature,
                    ct_bytes: meta.length_ciphertext,
                    ss_bytes: meta.length_shared_secret,
                    ctx,
                    nist_level: meta.claimed_nist_level,
                };
                let kat = match &meta.nistkat_sha256 {
                    Some(sha) => Kat::Nistkat {
                        sha256: sha.to_lowercase(),
                        rng: if meta.nistkat_rng.as_deref() == Some("hqc") {
                            NistRng::Hqc
                        } else {
                            NistRng::Nist
                        },
                    },
                    None => Kat::None,
                };
                let (label, variant) = if imp.name == "clean" {
                    (scheme.clone(), "reference".to_string())
                } else {
                    (
                        format!("{scheme}-{}", imp.name),
                        format!("optimized-{}", imp.name),
                    )
                };
                instances.push(Instance {
                    label,
                    instance: instance_name(&meta.name),
                    variant,
                    source_dir: format!("{dir}/{scheme}/{}", imp.name),
                    files,
                    exclude: Vec::new(),
                    include: Vec::new(),
                    defines: Vec::new(),
                    include_dirs,
                    cflags,
                    libs: Vec::new(),
                    cpu_flags: required,
                    api: ApiKind::Nist,
                    header: None,
                    no_drng: false,
                    nist: Some(nist),
                    kat,
                });
            }
            if instances.is_empty() {
                continue;
            }
            let ok_kind = match kind {
                Category::Sign => meta.kind == "signature",
                _ => meta.kind == "kem",
            };
            if !ok_kind {
                return Err(BuildError::Input(format!(
                    "{}: type {:?} in a {dir} folder",
                    meta_path.display(),
                    meta.kind
                )));
            }
            candidates.push(Candidate {
                id: scheme.clone(),
                kind,
                algorithm: meta.name.clone(),
                page: None,
                origin: Some(format!(
                    "PQClean via {PQCLEAN_CRATE} {PQCLEAN_CRATE_VERSION} ({dir}/{scheme})"
                )),
                root: tree.to_string_lossy().into_owned(),
                instances,
            });
        }
    }
    Ok(PqcleanImport {
        candidates,
        skipped,
        ignored_folders: ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /proc/cpuinfo of an AArch64 server (Neoverse N1) and of this kind of x86 VM.
    const ARM_CPUINFO: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
    const X86_CPUINFO: &str =
        "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx2 aes hypervisor\n";

    #[test]
    fn features_per_architecture() {
        let arm = cpuinfo_features(ARM_CPUINFO, "aarch64");
        assert!(arm.contains("asimd") && !arm.contains("sha3"));
        assert!(cpuinfo_features(X86_CPUINFO, "aarch64").is_empty());
        assert!(cpuinfo_features(X86_CPUINFO, "x86_64").contains("avx2"));
        assert!(cpuinfo_features(ARM_CPUINFO, "x86_64").is_empty());
    }

    #[test]
    fn hwcap_from_auxv() {
        // AT_PAGESZ, AT_HWCAP = fp|asimd|sha3|sve, AT_NULL.
        let mut auxv = Vec::new();
        for (k, v) in [(6u64, 4096u64), (16, 1 | 2 | (1 << 17) | (1 << 22)), (0, 0)] {
            auxv.extend(k.to_ne_bytes());
            auxv.extend(v.to_ne_bytes());
        }
        let hw = auxv_hwcap(&auxv).unwrap();
        let names: Vec<String> = aarch64_hwcap_names(hw).into_iter().collect();
        assert_eq!(names, ["asimd", "fp", "sha3", "sve"]);
        assert_eq!(auxv_hwcap(&auxv[..16]), None);
    }

    #[test]
    fn namespaces_and_names() {
        assert_eq!(namespace("ml-dsa-44", "clean"), "PQCLEAN_MLDSA44_CLEAN");
        assert_eq!(
            namespace("sphincs-shake-128f-simple", "avx2"),
            "PQCLEAN_SPHINCSSHAKE128FSIMPLE_AVX2"
        );
        assert_eq!(
            instance_name("Classic McEliece 348864"),
            "Classic-McEliece-348864"
        );
        assert_eq!(
            instance_name("SPHINCS+-SHAKE-128f-simple"),
            "SPHINCSplus-SHAKE-128f-simple"
        );
    }

    #[test]
    fn meta_parses_with_platforms() {
        let text = "name: ML-DSA-44\ntype: signature\nclaimed-nist-level: 2\nlength-public-key: 1312\nlength-secret-key: 2560\nlength-signature: 2420\nnistkat-sha256: 9a196e7fb32fbc93757dc2d8dc1924460eab66303c0c08aeb8b798fb8d8f8cf3\nprincipal-submitters:\n  - X\nimplementations:\n    - name: clean\n      version: v\n    - name: avx2\n      version: v\n      supported_platforms:\n        - architecture: x86_64\n          operating_systems:\n              - Linux\n          required_flags:\n              - aes\n              - avx2\n";
        let m = parse_meta(Path::new("META.yml"), text).unwrap();
        assert_eq!(m.length_signature, Some(2420));
        assert_eq!(m.implementations.len(), 2);
        assert_eq!(
            m.implementations[1].supported_platforms[0].required_flags,
            ["aes", "avx2"]
        );
        let e = parse_meta(Path::new("x/META.yml"), "name: [\n").unwrap_err();
        assert!(e.to_string().starts_with("x/META.yml:"), "{e}");
    }

    #[test]
    fn include_scan() {
        assert_eq!(
            includes("#include \"a.h\"\n  # include \"b.h\" // x\n#include <stdio.h>\n"),
            ["a.h", "b.h"]
        );
    }
}
