//! One side of a comparison: the timing records of a run directory or of one system of a
//! dataset, read through `pqperf_model::dataset` (no reader of its own).

use std::path::{Path, PathBuf};

use pqperf_model::dataset::Dataset;
use pqperf_model::{Record, pyjson};

use crate::CompareError;

/// The records of one side.
#[derive(Debug, Clone)]
pub struct Side {
    /// The path as given (shown in the output).
    pub shown: String,
    /// The system folder whose records were read (run directory or
    /// `performance/data/<system>`); its `campaign.json` takes the noise floor.
    pub system_dir: PathBuf,
    /// Records, sorted by (candidate, label, operation, input bytes).
    pub records: Vec<Record>,
    /// The A–A noise floor recorded for this side (`pqperf.noise_floor.median_abs_change`
    /// of its campaign.json, `pqperf compare --record-noise-floor`), when there is one.
    pub noise_floor: Option<f64>,
}

/// Reads the records of `path` through the one dataset loader (`pqperf_model::dataset`): a
/// run directory, a system folder `performance/data/<system>`, or a dataset root (with
/// `system`, or its only system). The loader refuses symbolic links and names the file of
/// any evidence that does not parse.
pub fn load(path: &Path, system: Option<&str>) -> Result<Side, CompareError> {
    let ds = Dataset::load(path).map_err(|e| CompareError::Load(e.to_string()))?;
    let ids: Vec<&str> = ds.systems.iter().map(|s| s.id.as_str()).collect();
    let sys = match system {
        Some(id) => ds.system(id).ok_or_else(|| {
            CompareError::Load(format!(
                "{}: no system {id:?} (has: {})",
                path.display(),
                ids.join(", ")
            ))
        })?,
        None => match ds.systems.as_slice() {
            [one] => one,
            [] => {
                return Err(CompareError::Load(format!(
                    "{}: neither a run directory nor a dataset with a system (performance/data/<system>/)",
                    path.display()
                )));
            }
            _ => {
                return Err(CompareError::Load(format!(
                    "{}: {} systems ({}); choose one with --system",
                    path.display(),
                    ids.len(),
                    ids.join(", ")
                )));
            }
        },
    };
    let mut records: Vec<Record> = sys.records.iter().map(|r| r.value.clone()).collect();
    records.sort_by(|a, b| {
        (&a.candidate, &a.label, &a.operation, a.input_bytes).cmp(&(
            &b.candidate,
            &b.label,
            &b.operation,
            b.input_bytes,
        ))
    });
    let noise_floor = sys
        .campaign
        .as_ref()
        .and_then(|c| serde_json::to_value(&c.value).ok())
        .and_then(|v| v["pqperf"]["noise_floor"]["median_abs_change"].as_f64())
        .filter(|x| x.is_finite() && *x >= 0.0);
    Ok(Side {
        shown: path.display().to_string(),
        system_dir: path.join(&sys.dir),
        records,
        noise_floor,
    })
}

/// Writes `floor` as `pqperf.noise_floor` into the campaign.json next to the side's
/// `records/` (a run directory's or a dataset system's), atomically, keeping every other key.
pub fn record_noise_floor(side: &Side, floor: serde_json::Value) -> Result<PathBuf, CompareError> {
    let path = pqperf_model::layout::RunLayout::new(&side.system_dir).campaign_json();
    // The side was loaded from its campaign.json; a side without one is not given one here.
    if !path.is_file() {
        return Err(CompareError::Load(format!(
            "{}: no campaign.json to record the noise floor in",
            path.display()
        )));
    }
    // Through its model type (every other key and the key order stay). No lock file: a
    // dataset system folder holds only its evidence.
    let mut c: pqperf_model::campaign::Campaign =
        pyjson::read(&path, &path).map_err(|e| CompareError::Load(e.to_string()))?;
    c.pqperf_mut().noise_floor = Some(floor);
    let out = pyjson::to_string(&c).map_err(|e| CompareError::Load(e.to_string()))?;
    pqperf_model::fsutil::write_atomic(&path, out.as_bytes())
        .map_err(|e| CompareError::Load(format!("{}: {e}", path.display())))?;
    Ok(path)
}
