//! Campaign phase `baseline` (method.md §2.11, §11.1): the ICCS helpers built as hash
//! instances (candidate `iccs`, variant `iccs-baseline`): `sm3hash-256`,
//! `pseudohash-512|768|1024` and `pseudoXOF-<w>` for every digest width a hash candidate has
//! (the reference's eight widths plus any other width found in this run's hash records).
//!
//! The libraries are built by the build stage from a catalog of their own
//! (`iccs-baseline/catalog.toml`, sources `iccs_crypthash.c` from the ICCS provider), with
//! the same flags and harness shim as candidates. Each library is then self-tested against an
//! independent model — `api/auxfunc.c` semantics written on the RustCrypto `sm3` crate, not on
//! pqperf's own SM3 — at the reference's message lengths, plus the two GB/T 32905 examples for
//! `sm3hash`; the log goes to `kat/iccs/<label>.log` and its RESULT becomes the build entry's
//! `kat`. Timing then happens in the calibrate and measure phases like any hash candidate
//! (category `iccs`, operations `hash_32` … `hash_65536`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pqperf_ffi::dl::{HashApi, Library};
use pqperf_iccs_capi::{HashInstance, Helper};
use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::select::Selection;
use sha2::Digest as _;

use crate::ProfileError;

/// Self-test one baseline library with the ICCS stage's independent model
/// (`pqperf_iccs_capi::selftest`: RustCrypto `sm3` + textbook HMAC, GB/T 32905 vectors);
/// returns the log text (ending in the RESULT line) and the KAT-style status
/// (`PASS` / `MISMATCH` / `CRYPTOFAIL` when the library cannot be loaded).
pub fn selftest(lib_path: &Path, lib_shown: &str, inst: &HashInstance) -> (String, String) {
    let api = match Library::open(lib_path).and_then(|l| HashApi::new(&l)) {
        Ok(a) => a,
        Err(e) => {
            let log = format!(
                "instance = {}\nlibrary = {lib_shown}\ncannot load: {e}\nRESULT iccs {} CRYPTOFAIL\n",
                inst.label, inst.label
            );
            return (log, "CRYPTOFAIL".into());
        }
    };
    let st = pqperf_iccs_capi::selftest::run(inst, lib_shown, |msg, bits, out| {
        api.hash(inst.digest_bits, msg, bits, out).unwrap_or(-99)
    });
    let status = if st.passed { "PASS" } else { "MISMATCH" };
    (st.log, status.to_string())
}

/// Baseline instances for this run: the reference's twelve plus pseudoXOF at every other
/// digest width of a hash candidate, from `records/hash-*/…__hash_32.json`
/// (`sizes.digest_bytes`) or the built library's metadata.
pub fn instances_for_run(run: &Path) -> Vec<HashInstance> {
    let mut v = pqperf_iccs_capi::hash_instances();
    let mut widths: BTreeSet<u32> = BTreeSet::new();
    if let Ok(rd) = std::fs::read_dir(RunLayout::new(run).records_dir()) {
        for c in rd.flatten() {
            if !c.file_name().to_string_lossy().starts_with("hash-") {
                continue;
            }
            for f in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
                if !f.file_name().to_string_lossy().ends_with("__hash_32.json") {
                    continue;
                }
                let v: Option<serde_json::Value> = std::fs::read_to_string(f.path())
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok());
                if let Some(b) = v.as_ref().and_then(|v| v["sizes"]["digest_bytes"].as_u64()) {
                    widths.insert((8 * b) as u32);
                }
            }
        }
    }
    // Built hash candidates (a fresh `campaign all` has no hash records yet): the digest
    // width from the library's harness metadata.
    if let Ok(bj) = RunLayout::new(run).read_build() {
        for e in bj.instances.values() {
            if !e.candidate.starts_with("hash-") {
                continue;
            }
            let Some(lib) = &e.library else { continue };
            if let Ok(m) = Library::open(&run.join(lib)).and_then(|l| l.meta())
                && m.kind == 4
                && let Some(&bits) = m.sizes.first()
                && bits > 0
            {
                widths.insert(bits as u32);
            }
        }
    }
    for w in widths {
        if !pqperf_iccs_capi::PSEUDOXOF_WIDTHS.contains(&w)
            && let Some(i) = HashInstance::new(Helper::PseudoXof, w)
        {
            v.push(i);
        }
    }
    v
}

/// The baseline catalog (TOML) for `insts`, sources under `src/`.
pub fn catalog_toml(insts: &[HashInstance]) -> String {
    let mut s = String::from(
        "# ICCS helpers as hash instances (pqperf baseline; generated, do not edit).\n\
         [[candidate]]\nid = \"iccs\"\ntype = \"hash\"\nalgorithm = \"ICCS helpers\"\n\
         origin = \"ICCS helpers of the run's provider (build.json iccs_provider)\"\nroot = \".\"\n",
    );
    for i in insts {
        let defs: Vec<String> = i
            .defines()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .map(|d| format!("{:?}", d))
            .collect();
        s.push_str(&format!(
            "\n[[candidate.instance]]\nlabel = \"{l}\"\ninstance = \"{l}\"\nvariant = \"reference\"\n\
             source_dir = \"src\"\nfiles = [\"iccs_crypthash.c\"]\ndefines = [{}]\napi = \"iccs\"\nheader = \"iccs_crypthash.h\"\n",
            defs.join(", "),
            l = i.label
        ));
    }
    s
}

/// What the baseline build did.
#[derive(Debug, Clone, Default)]
pub struct BaselineSummary {
    /// Labels built now.
    pub built: Vec<String>,
    /// Labels whose self-test passed.
    pub passed: Vec<String>,
    /// Labels that failed to build or to pass.
    pub failed: Vec<String>,
    /// True when every label was already recorded (nothing built).
    pub skipped: bool,
}

/// Build and self-test the baseline instances into the run's build.json.
pub fn build_baseline(run: &Path, log: &dyn Fn(String)) -> Result<BaselineSummary, ProfileError> {
    let insts = instances_for_run(run);
    let layout = RunLayout::new(run);
    let mut bj = layout
        .read_build()
        .map_err(|e| ProfileError::Other(e.to_string()))?;
    let mut sum = BaselineSummary::default();
    if insts
        .iter()
        .all(|i| bj.instances.contains_key(&format!("iccs/{}", i.label)))
    {
        sum.skipped = true;
        return Ok(sum);
    }
    let base = layout.iccs_baseline_dir();
    let src = base.join("src");
    std::fs::create_dir_all(&src).map_err(|e| ProfileError::io(&src, e))?;
    for (name, text) in pqperf_iccs_capi::INCLUDE_FILES {
        if name.starts_with("iccs_crypthash") {
            let p = src.join(name);
            std::fs::write(&p, text).map_err(|e| ProfileError::io(&p, e))?;
        }
    }
    let cat = layout.iccs_baseline_catalog();
    write_atomic(&cat, catalog_toml(&insts).as_bytes()).map_err(|e| ProfileError::io(&cat, e))?;
    let mut bo = pqperf_build::BuildOptions::new(run);
    bo.catalog = Some(cat);
    bo.select = Selection::only(Some("^iccs/")).expect("the baseline pattern compiles");
    let b = pqperf_build::build(&bo).map_err(|e| ProfileError::Other(e.to_string()))?;
    sum.built = b
        .built
        .iter()
        .map(|k| k.trim_start_matches("iccs/").to_string())
        .collect();
    bj = layout
        .read_build()
        .map_err(|e| ProfileError::Other(e.to_string()))?;
    for inst in &insts {
        let key = format!("iccs/{}", inst.label);
        let Some(e) = bj.instances.get_mut(&key) else {
            sum.failed.push(inst.label.clone());
            continue;
        };
        e.variant = "iccs-baseline".into();
        e.flags = "guide".into();
        let Some(lib_rel) = e.library.clone() else {
            e.kat = "BUILDFAIL".into();
            sum.failed.push(inst.label.clone());
            continue;
        };
        let (text, status) = selftest(&run.join(&lib_rel), &lib_rel, inst);
        let log_rel = RunLayout::kat_log_rel("iccs", &inst.label);
        let p = run.join(&log_rel);
        write_atomic(&p, text.as_bytes()).map_err(|x| ProfileError::io(&p, x))?;
        e.kat = status.clone();
        e.kat_log = Some(log_rel);
        e.kat_log_sha256 = Some(hex::encode(sha2::Sha256::digest(text.as_bytes())));
        if status == "PASS" {
            sum.passed.push(inst.label.clone());
        } else {
            sum.failed.push(inst.label.clone());
        }
    }
    pqperf_build::write_build_json(run, &bj).map_err(|e| ProfileError::Other(e.to_string()))?;
    log(format!(
        "baseline build: {}/{} self-tests PASS",
        sum.passed.len(),
        insts.len()
    ));
    Ok(sum)
}

/// Paths of the baseline libraries recorded in build.json (label, run-relative path).
pub fn baseline_libraries(run: &Path) -> Vec<(String, PathBuf)> {
    RunLayout::new(run)
        .read_build()
        .map(|bj| {
            bj.instances
                .values()
                .filter(|e| e.candidate == "iccs")
                .filter_map(|e| {
                    e.library
                        .as_ref()
                        .map(|l| (e.label.clone(), PathBuf::from(l)))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses() {
        let t = catalog_toml(&pqperf_iccs_capi::hash_instances());
        let c: pqperf_model::catalog::Catalog = toml::from_str(&t).unwrap();
        assert_eq!(c.candidates[0].instances.len(), 12);
        assert!(
            c.candidates[0].instances[0]
                .defines
                .contains(&"ALGORITHM_INSTANCE=\"sm3hash-256\"".to_string())
        );
    }
}
