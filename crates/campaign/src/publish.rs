//! `publish` (method §12.1): the run's evidence copied into the dataset layout
//! (`performance/data/<system>/…`) and the side tables the pages read, written through the
//! one side-table writer (`pqperf_model::sidecsv::write_csv`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pqperf_model::fsutil::write_atomic;
use pqperf_model::sidecsv::write_csv;

use crate::rundir::{load_build, load_catalog, read_json, walk_files};
use crate::{CampaignError, CampaignOptions, systems};

type Res<T> = Result<T, CampaignError>;

/// `publish` (§12.1): copy the run's evidence into `<dest>/performance/data/<ID>/`, write the
/// side CSVs the pages read (`performance/systems.csv`, `performance/security_targets.csv`,
/// `downloads.csv`) and refuse absolute machine paths.
pub fn publish(opts: &CampaignOptions) -> Res<i32> {
    let run = &opts.run_dir;
    let camp = read_json(&run.join("campaign.json"));
    let Some(id) = camp
        .as_ref()
        .and_then(|c| c["system_id"].as_str())
        .map(str::to_string)
    else {
        eprintln!("publish: campaign.json has no system_id");
        return Ok(2);
    };
    let dest_root = opts
        .publish_to
        .clone()
        .unwrap_or_else(|| run.join("dataset"));
    let dest = dest_root.join("performance/data").join(&id);
    let mut files: Vec<PathBuf> = vec![run.join("campaign.json"), run.join("build.json")];
    let excluded = |p: &Path| -> bool {
        let Some(re) = &opts.defer else { return false };
        let cand = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = p
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = name.split("__").next().unwrap_or("");
        re.is_match(&format!("{cand}/{label}"))
    };
    for sub in ["records", "profile"] {
        for f in walk_files(&run.join(sub)) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") || excluded(&f) {
                continue;
            }
            if sub == "profile" && (name.contains("RELINK") || !name.contains("__")) {
                continue;
            }
            files.push(f);
        }
    }
    // Constant-time evidence (`ct/<id>/<label>.json`, pqperf-ct).
    files.extend(walk_files(&run.join("ct")).into_iter().filter(|f| {
        let name = f.file_name().unwrap().to_string_lossy();
        name.ends_with(".json") && !name.starts_with('.')
    }));
    for sub in ["kat", "katcheck"] {
        files.extend(
            walk_files(&run.join(sub))
                .into_iter()
                .filter(|f| f.extension().is_some_and(|e| e == "log")),
        );
    }
    let mut staged = Vec::new();
    for f in files.iter().filter(|f| f.is_file()) {
        let rel = f.strip_prefix(run).unwrap_or(f).to_path_buf();
        let bytes = std::fs::read(f)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(m) = pqperf_model::paths::find_machine_path(&text) {
            eprintln!(
                "{}: absolute path '{m}' remains; not publishing",
                rel.display()
            );
            return Ok(2);
        }
        staged.push((rel, bytes));
    }
    if dest.exists() {
        std::fs::remove_dir_all(&dest)?;
    }
    for (rel, bytes) in &staged {
        write_atomic(&dest.join(rel), bytes)?;
    }
    // Side CSVs of the dataset root.
    let perf = dest_root.join("performance");
    let rows = systems::load(&opts.systems_csv)?;
    let mut sys: Vec<Vec<String>> = Vec::new();
    let existing = systems::load(&perf.join("systems.csv"))?;
    let mut seen = BTreeSet::new();
    for r in existing.iter().chain(rows.iter()) {
        if seen.insert(r.id.clone()) && (r.id == id || existing.iter().any(|e| e.id == r.id)) {
            sys.push(vec![
                r.id.clone(),
                r.arch.clone(),
                r.hostname.clone(),
                r.description.clone(),
            ]);
        }
    }
    let sys = write_csv(&["ID", "Arch", "Hostname", "Description"], &sys);
    write_atomic(&perf.join("systems.csv"), sys.as_bytes())?;
    let build = load_build(run)?;
    let catalog = load_catalog(run)?;
    // PQClean instances: the target of the scheme's claimed NIST level (catalog, from
    // META.yml); NGCC instances stay empty for curation.
    let claimed: BTreeMap<(String, String), u32> = catalog
        .iter()
        .flat_map(|cat| cat.instances())
        .filter_map(|(c, i)| {
            let bits = i.nist.as_ref()?.target_bits()?;
            Some(((c.id.clone(), i.label.clone()), bits))
        })
        .collect();
    let st_path = perf.join("security_targets.csv");
    let mut st_rows: BTreeSet<(String, String)> = BTreeSet::new();
    let mut st_text: Vec<Vec<String>> = Vec::new();
    if st_path.exists() {
        let bad = |e: pqperf_model::ModelError| CampaignError::msg(e.to_string());
        let old = pqperf_model::sidecsv::CsvTable::read(&st_path, &st_path)
            .and_then(|t| t.security_targets())
            .map_err(bad)?;
        for r in old {
            let key = (r.id.clone(), r.instance.clone());
            let bits = r
                .target_bits
                .or_else(|| claimed.get(&key).map(|&b| u64::from(b)));
            if st_rows.insert(key) {
                st_text.push(vec![
                    r.id.clone(),
                    r.instance.clone(),
                    bits.map(|b| b.to_string()).unwrap_or_default(),
                ]);
            }
        }
    }
    for e in build.instances.values() {
        let key = (e.candidate.clone(), e.label.clone());
        let bits = claimed.get(&key).map(|b| b.to_string()).unwrap_or_default();
        if e.candidate != "iccs" && st_rows.insert(key) {
            st_text.push(vec![e.candidate.clone(), e.label.clone(), bits]);
        }
    }
    let st_text = write_csv(&["ID", "Instance", "TargetBits"], &st_text);
    write_atomic(&st_path, st_text.as_bytes())?;
    if let Some(cat) = &catalog {
        let dl = dest_root.join("downloads.csv");
        let mut text: Vec<Vec<String>> = Vec::new();
        let mut ids = BTreeSet::new();
        if dl.exists() {
            let old = pqperf_model::sidecsv::CsvTable::read(&dl, &dl)
                .and_then(|t| t.downloads())
                .map_err(|e| CampaignError::msg(e.to_string()))?;
            for d in old {
                if ids.insert(d.id.clone()) {
                    text.push(vec![d.id.clone(), d.algorithm.clone(), d.page_url.clone()]);
                }
            }
        }
        for c in &cat.candidates {
            if ids.insert(c.id.clone()) {
                text.push(vec![
                    c.id.clone(),
                    c.algorithm.clone(),
                    c.page.clone().unwrap_or_default(),
                ]);
            }
        }
        let text = write_csv(&["ID", "Algorithm", "PageURL"], &text);
        write_atomic(&dl, text.as_bytes())?;
    }
    println!(
        "publish: {} files for system {id} -> {}",
        staged.len(),
        dest.display()
    );
    Ok(0)
}
