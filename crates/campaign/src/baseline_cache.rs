//! The ICCS helper baseline kept across runs of one host and provider (issue 30): every
//! complete record of candidate `iccs` the measure phase writes is copied, with its
//! calibration, into a cache folder ([`cache_dir`]: beside the run directory unless
//! `$PQPERF_BASELINE_CACHE` names one) under a key of the host (system id, CPU model,
//! kernel, the measured CPU), the timing driver and the run's protocol (planning,
//! `--target-ci`, sampling), in a subfolder named by
//! the library's sha256 (which names the provider's sources, the compiler and the flags). A
//! later run's `baseline` phase copies the cached records of the libraries it built back into
//! its run directory ([`reuse`]), so its measure phase finds them recorded and does not time
//! them again; a different host, protocol or library finds nothing and is measured. The
//! campaign log and campaign.json (`pqperf.iccs_baseline_reuse`) say which happened.

use std::path::{Path, PathBuf};

use pqperf_model::campaign::BaselineReuse;
use pqperf_model::fsutil::{io_err, write_atomic};
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson::read_value;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::{CampaignError, CampaignOptions};

/// Key of campaign.json's `pqperf` object that says what the baseline phase reused
/// (`CampaignPqperf::iccs_baseline_reuse`).
pub const REUSE_KEY: &str = "iccs_baseline_reuse";

/// Environment variable naming the cache folder (`off` or empty: no cache).
pub const BASELINE_CACHE_ENV: &str = "PQPERF_BASELINE_CACHE";

/// Name of the default cache folder, beside the run directory.
pub const DEFAULT_CACHE_DIR: &str = ".pqperf-iccs-baseline";

/// The cache folder of `run`: `$PQPERF_BASELINE_CACHE`, else `.pqperf-iccs-baseline` in the
/// folder that holds the run directory (so `runs/a` and `runs/b` share one, and a test's
/// temporary folder has its own); `None` when switched off (`off` or empty).
pub fn cache_dir(run: &Path) -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(BASELINE_CACHE_ENV) {
        return (!d.is_empty() && d != "off").then(|| PathBuf::from(d));
    }
    let parent = run.parent().filter(|p| !p.as_os_str().is_empty());
    Some(parent.unwrap_or(Path::new(".")).join(DEFAULT_CACHE_DIR))
}

/// The key of a host and a protocol: sha256 (first 16 hex digits) of the system id, the CPU
/// model, the kernel and the measured CPU of `env`, of the options that shape a record (planning,
/// `--target-ci`, sampling) and of the timing driver executable (a rebuilt or
/// another driver, such as a test's fake one, never shares a key with the real one).
pub fn host_key(opts: &CampaignOptions, system_id: &str, env: &Value) -> String {
    let unit = opts.unit();
    let text = json!({
        "system_id": system_id,
        "cpu_model": env["cpu_model"],
        "kernel": env["kernel"],
        "cpu_number": env["cpu_number"],
        "planning": pqperf_measure::plan::planning_json(&unit.planning),
        "target_ci": unit.target_ci,
        "samples": unit.samples,
        "driver_sha256": file_sha256(&unit.driver.exe),
    })
    .to_string();
    let d = sha2::Sha256::digest(text.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// sha256 (hex) of the file at `p`, `None` when it cannot be read.
fn file_sha256(p: &Path) -> Option<String> {
    let bytes = std::fs::read(p).ok()?;
    let d = sha2::Sha256::digest(&bytes);
    Some(d.iter().map(|b| format!("{b:02x}")).collect())
}

/// Copies the complete record at `rec` of candidate `iccs` and its calibration `cal` into the
/// cache of `run` under `key` (nothing without a cache folder or a library sha256).
pub fn store(run: &Path, key: &str, rec: &Path, cal: &Path) -> Result<(), CampaignError> {
    let Some(dir) = cache_dir(run) else {
        return Ok(());
    };
    let Some(r) = read_value(rec) else {
        return Ok(());
    };
    let Some(sha) = r["library_sha256"].as_str() else {
        return Ok(());
    };
    if r["status"] != "complete" || !cal.is_file() || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(());
    }
    let Some(name) = rec.file_name() else {
        return Ok(());
    };
    let to = dir.join(key).join(sha);
    std::fs::create_dir_all(&to).map_err(|e| io_err("creating", &to, e))?;
    let copy = |from: &Path, to: &Path| -> Result<(), CampaignError> {
        let bytes = std::fs::read(from).map_err(|e| io_err("reading", from, e))?;
        write_atomic(to, &bytes).map_err(|e| io_err("writing", to, e))?;
        Ok(())
    };
    copy(cal, &to.join(cal_name(name)))?;
    copy(rec, &to.join(name))?;
    Ok(())
}

/// The cache's name of a record's calibration.
fn cal_name(record: &std::ffi::OsStr) -> String {
    format!("{}.calibration", record.to_string_lossy())
}

/// What [`reuse`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reuse {
    /// Records copied from the cache (with their calibrations).
    pub reused: usize,
    /// ICCS helper libraries of the run whose records were all in the cache.
    pub libraries: usize,
    /// ICCS helper libraries of the run.
    pub of: usize,
}

/// Copies into `opts.run_dir` the cached records (and calibrations) of every built library of
/// candidate `iccs` whose sha256 the cache holds under `key`, where the run has no record
/// yet; records campaign.json `pqperf.iccs_baseline_reuse` and returns what was found.
pub fn reuse(opts: &CampaignOptions, key: &str) -> Result<Reuse, CampaignError> {
    let run = &opts.run_dir;
    let bj = crate::rundir::load_build(run)?;
    let layout = RunLayout::new(run);
    let mut out = Reuse::default();
    let dir = cache_dir(run);
    for e in bj.instances.values().filter(|e| e.candidate == "iccs") {
        let Some(sha) = e.library_sha256.as_deref() else {
            continue;
        };
        out.of += 1;
        let Some(from) = dir.as_ref().map(|d| d.join(key).join(sha)) else {
            continue;
        };
        let prefix = format!("{}__", e.label);
        let mut found = 0;
        for f in std::fs::read_dir(&from).into_iter().flatten().flatten() {
            let name = f.file_name();
            let n = name.to_string_lossy();
            let Some(opkey) = n
                .strip_prefix(&prefix)
                .and_then(|o| o.strip_suffix(".json"))
            else {
                continue;
            };
            let rec_to = layout.record("iccs", &e.label, opkey);
            let cal_to = layout.calibration("iccs", &e.label, opkey);
            let cal_from = from.join(cal_name(&name));
            let ok = read_value(&f.path()).is_some_and(|r| {
                r["library_sha256"].as_str() == Some(sha) && r["status"] == "complete"
            });
            if !ok || !cal_from.is_file() {
                continue;
            }
            found += 1;
            if rec_to.exists() {
                continue;
            }
            for (a, b) in [(cal_from, cal_to), (f.path(), rec_to)] {
                let bytes = std::fs::read(&a).map_err(|x| io_err("reading", &a, x))?;
                if let Some(parent) = b.parent() {
                    std::fs::create_dir_all(parent).map_err(|x| io_err("creating", parent, x))?;
                }
                write_atomic(&b, &bytes).map_err(|x| io_err("writing", &b, x))?;
            }
            out.reused += 1;
        }
        out.libraries += usize::from(found > 0);
    }
    crate::rundir::update_campaign(run, |c| {
        c.pqperf_mut().iccs_baseline_reuse = Some(BaselineReuse {
            host_key: key.to_string(),
            records_reused: out.reused as u64,
            libraries_found: out.libraries as u64,
            libraries: out.of as u64,
            ..Default::default()
        });
    })?;
    Ok(out)
}
