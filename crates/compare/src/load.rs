//! One side of a comparison: the timing records of a run directory (`records/`) or of one
//! system of a dataset (`performance/data/<system>/records/`).

use std::path::{Path, PathBuf};

use pqperf_model::{Record, pyjson};

use crate::CompareError;

/// The records of one side.
#[derive(Debug, Clone)]
pub struct Side {
    /// The path as given (shown in the output).
    pub shown: String,
    /// The `records/` folder read.
    pub records_dir: PathBuf,
    /// Records, sorted by (candidate, label, operation, input bytes).
    pub records: Vec<Record>,
}

/// Finds the `records/` folder of `path`: a run directory, a dataset root (with `system` or
/// a single system), a dataset's `performance` folder or `performance/data/<system>`.
fn records_dir(path: &Path, system: Option<&str>) -> Result<PathBuf, CompareError> {
    if path.join("records").is_dir() {
        return Ok(path.join("records"));
    }
    for data in [path.join("performance/data"), path.join("data")] {
        if !data.is_dir() {
            continue;
        }
        let mut systems: Vec<String> = std::fs::read_dir(&data)
            .map_err(|e| CompareError::Load(format!("{}: {e}", data.display())))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("records").is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        systems.sort();
        let pick = match system {
            Some(s) if systems.iter().any(|x| x == s) => s.to_string(),
            Some(s) => {
                return Err(CompareError::Load(format!(
                    "{}: no system {s:?} (has: {})",
                    data.display(),
                    systems.join(", ")
                )));
            }
            None if systems.len() == 1 => systems.remove(0),
            None => {
                return Err(CompareError::Load(format!(
                    "{}: {} systems ({}); choose one with --system",
                    data.display(),
                    systems.len(),
                    systems.join(", ")
                )));
            }
        };
        return Ok(data.join(pick).join("records"));
    }
    Err(CompareError::Load(format!(
        "{}: neither a run directory (records/) nor a dataset (performance/data/<system>/records/)",
        path.display()
    )))
}

/// Reads every record of `path` (see [`records_dir`]); a record that does not parse is an
/// error naming its file.
pub fn load(path: &Path, system: Option<&str>) -> Result<Side, CompareError> {
    let dir = records_dir(path, system)?;
    let mut records = Vec::new();
    let mut cands: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| CompareError::Load(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cands.sort();
    for c in cands {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&c)
            .map_err(|e| CompareError::Load(format!("{}: {e}", c.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for f in files {
            let r: Record = pyjson::read(&f, &f).map_err(|e| CompareError::Load(e.to_string()))?;
            records.push(r);
        }
    }
    records.sort_by(|a, b| {
        (&a.candidate, &a.label, &a.operation, a.input_bytes).cmp(&(
            &b.candidate,
            &b.label,
            &b.operation,
            b.input_bytes,
        ))
    });
    Ok(Side {
        shown: path.display().to_string(),
        records_dir: dir,
        records,
    })
}

/// Writes `floor` as `pqperf.noise_floor` into the campaign.json next to the side's
/// `records/` (a run directory's or a dataset system's), atomically, keeping every other key.
pub fn record_noise_floor(side: &Side, floor: serde_json::Value) -> Result<PathBuf, CompareError> {
    let dir = side.records_dir.parent().unwrap_or(Path::new("."));
    let path = dir.join("campaign.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CompareError::Load(format!("{}: {e}", path.display())))?;
    let mut v: serde_json::Value =
        pyjson::from_str(&path, &text).map_err(|e| CompareError::Load(e.to_string()))?;
    let Some(obj) = v.as_object_mut() else {
        return Err(CompareError::Load(format!(
            "{}: not a JSON object",
            path.display()
        )));
    };
    let pq = obj
        .entry("pqperf")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    let Some(pq) = pq.as_object_mut() else {
        return Err(CompareError::Load(format!(
            "{}: pqperf is not an object",
            path.display()
        )));
    };
    pq.insert("noise_floor".into(), floor);
    let out = pyjson::to_string(&v).map_err(|e| CompareError::Load(e.to_string()))?;
    pqperf_model::fsutil::write_atomic(&path, out.as_bytes())
        .map_err(|e| CompareError::Load(format!("{}: {e}", path.display())))?;
    Ok(path)
}
