//! Run-directory I/O: build.json and catalog.toml as typed values, campaign.json under its
//! lock, the commands noted in it, file walks and stale temporary files.

use std::path::{Path, PathBuf};

use pqperf_model::buildjson::BuildJson;
use pqperf_model::catalog::Catalog;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::pyjson;
use serde_json::{Map, Value, json};

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

pub(crate) fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    pyjson::parse(path, &text).ok()
}

pub(crate) fn write_json(path: &Path, v: &Value) -> Res<()> {
    write_atomic(path, pyjson::value_to_string(v).as_bytes())?;
    Ok(())
}

/// The run's build.json (empty if missing).
pub fn load_build(run: &Path) -> Res<BuildJson> {
    let p = run.join("build.json");
    if !p.is_file() {
        return Ok(BuildJson::default());
    }
    pyjson::read(&p, Path::new("build.json")).map_err(|e| CampaignError::msg(e.to_string()))
}

/// The run's catalog (`catalog.toml`): `None` when there is none, an error naming the file
/// and line when it is malformed.
pub fn load_catalog(run: &Path) -> Res<Option<Catalog>> {
    let p = run.join("catalog.toml");
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p)
        .map_err(|e| CampaignError::msg(format!("{}: {e}", p.display())))?;
    Catalog::parse(&text, &p)
        .map(Some)
        .map_err(|e| CampaignError::msg(e.to_string()))
}

pub(crate) fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            remove_stale_temps(&p);
        } else if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// Read-modify-write of campaign.json under `.campaign.lock`.
pub fn update_campaign(run: &Path, f: impl FnOnce(&mut Map<String, Value>)) -> Res<()> {
    let _lock = pqperf_ffi::procinfo::lock_exclusive(&run.join(".campaign.lock"))?;
    let p = run.join("campaign.json");
    let mut m = read_json(&p)
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    f(&mut m);
    write_json(&p, &Value::Object(m))
}

/// Appends `command` (no paths) to the commands pqperf ran in this run directory
/// (`campaign.json` → `pqperf.commands`), once.
pub fn note_command(run: &Path, command: &str) -> Res<()> {
    update_campaign(run, |m| {
        let pq = m.entry("pqperf").or_insert(json!({}));
        if !pq.is_object() {
            *pq = json!({});
        }
        pq["version"] = json!(env!("CARGO_PKG_VERSION"));
        let cmds = pq
            .as_object_mut()
            .expect("object")
            .entry("commands")
            .or_insert(json!([]));
        if let Some(a) = cmds.as_array_mut()
            && !a.iter().any(|c| c == command)
        {
            a.push(json!(command));
        }
    })
}

pub(crate) fn has_records(run: &Path) -> bool {
    walk_files(&run.join("records"))
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json"))
}

/// Every file below `dir`, sorted. Symbolic links are listed as they are, never followed (a
/// link to a directory is not descended into; `dir` itself, when a link, is the one entry).
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    if dir
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
