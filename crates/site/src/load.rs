//! The site's facts from a loaded evidence model ([`pqperf_model::dataset::Dataset`]): each
//! system's evidence through the report's [`SystemView`] (every JSON file is parsed once, by
//! the model), the side CSVs through the report's [`Side`], plus the campaign clock, host and
//! counter facts only the site shows; only `short_names.csv` (a site-only table) is read here.
//! Report pages are not made here; the caller supplies them from the report stage.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pqperf_model::dataset::{Dataset, SystemData as ModelSystem};
use pqperf_model::sidecsv::CsvTable;
use pqperf_report::page::Evidence;
use pqperf_report::view::{Side, SystemView};

use crate::SiteError;
use crate::data::{Candidate, Category, SiteData, SystemFacts};
use crate::evidence::infer_category;

fn clock(env: &serde_json::Map<String, serde_json::Value>) -> (String, Option<f64>) {
    let s = |k: &str| {
        env.get(k).and_then(|v| {
            v.as_str()
                .map(str::to_string)
                .or_else(|| v.as_u64().map(|n| n.to_string()))
        })
    };
    let smt_raw = s("smt_control").unwrap_or_else(|| "unknown".into());
    let smt = match smt_raw.as_str() {
        "notsupported" | "notimplemented" => "none".to_string(),
        o => o.to_string(),
    };
    let turbo = match (
        s("intel_pstate_no_turbo").as_deref(),
        s("cpufreq_boost").as_deref(),
    ) {
        (Some("1"), _) => "off",
        (Some("0"), _) => "on",
        (_, Some("0")) => "off",
        (_, Some("1")) => "on",
        _ => "unknown",
    };
    let mhz = env.get("core_clock_mhz").and_then(|v| v.as_f64());
    let hz = env.get("core_clock_hz").and_then(|v| v.as_f64());
    let max_khz = s("cpufreq_max_khz").and_then(|v| v.parse::<f64>().ok());
    let min_khz = s("cpufreq_min_khz").and_then(|v| v.parse::<f64>().ok());
    let gov = s("cpufreq_governor").unwrap_or_else(|| "unknown".into());
    let arch = s("architecture").unwrap_or_default();
    if s("cpufreq_driver").is_none()
        && let Some(m) = mhz.or(hz.map(|h| h / 1e6))
    {
        return (
            format!(
                "measured {:.2} GHz, set by firmware (no OS frequency scaling or boost), SMT {smt}",
                m / 1000.0
            ),
            Some(m / 1000.0),
        );
    }
    match max_khz {
        Some(max) if arch == "aarch64" && min_khz == Some(max) => (
            format!(
                "fixed {:.2} GHz (governor {gov}, minimum = maximum), boost {turbo}, SMT {smt}",
                max / 1e6
            ),
            Some(max / 1e6),
        ),
        Some(max) => (
            format!(
                "max {:.2} GHz, governor {gov}, turbo {turbo}, SMT {smt_raw}",
                max / 1e6
            ),
            Some(max / 1e6),
        ),
        None => match hz.or(mhz.map(|m| m * 1e6)) {
            Some(h) => (format!("measured {:.2} GHz", h / 1e9), Some(h / 1e9)),
            None => (String::new(), None),
        },
    }
}

/// One system's site facts: the report's view of its evidence plus the clock, host and
/// counter facts only the site shows; `data_dir` is the directory on disk.
pub fn from_system<'a>(
    ds: &'a Dataset,
    side: &'a Side,
    sys: &ModelSystem,
    data_dir: &Path,
) -> Result<SystemFacts<'a>, SiteError> {
    let view = SystemView::new(ds, side, &sys.id).map_err(|e| SiteError::Input(e.to_string()))?;
    let mut out = SystemFacts {
        id: sys.id.clone(),
        view,
        arch: String::new(),
        description: String::new(),
        clock_ghz: None,
        clock_text: String::new(),
        sources: Default::default(),
        data_dir: data_dir.to_path_buf(),
        host_state: None,
        emulated: None,
        counter_unit: None,
    };
    let campaign = Evidence::Run {
        system: sys.id.clone(),
        path: "campaign.json".into(),
    };
    if let Some(c) = &sys.campaign {
        let c = &c.value;
        out.host_state = Some(c.host_state());
        let host_field = if c.host_problems.is_some() {
            Some("/host_problems".to_string())
        } else if c.host_checks.is_some() {
            Some("/host_checks".to_string())
        } else {
            None
        };
        out.sources.host = Some((campaign.clone(), host_field));
        out.emulated = c.emulated().map(str::to_string);
        let at_end = c.environment_at_end.as_ref().filter(|e| {
            e.get("cpufreq_max_khz").is_some_and(|v| !v.is_null())
                || e.get("core_clock_hz").is_some()
        });
        let (env, field) = match at_end {
            Some(e) => (Some(e), "/environment_at_end"),
            None => (c.environment_at_start.as_ref(), "/environment_at_start"),
        };
        if let Some(env) = env {
            let (text, ghz) = clock(env.as_map());
            out.clock_text = text;
            out.clock_ghz = ghz;
            if !out.clock_text.is_empty() {
                out.sources.clock = Some((campaign.clone(), Some(field.to_string())));
            }
            if let Some(a) = env.str("architecture") {
                out.arch = a.to_string();
                out.sources.arch = Some((campaign.clone(), Some(format!("{field}/architecture"))));
            }
        }
    }
    if out.clock_text.is_empty()
        && let Some(l) = sys
            .records
            .iter()
            .find(|l| l.value.status == "complete" && !l.value.environment.is_empty())
    {
        // No clock in campaign.json: the environment the timing records carry.
        let (text, ghz) = clock(l.value.environment.as_map());
        out.clock_text = text;
        out.clock_ghz = out.clock_ghz.or(ghz);
        if !out.clock_text.is_empty() {
            out.sources.clock = Some((
                pqperf_report::view::run_evidence(&sys.id, &l.path),
                Some("/environment".to_string()),
            ));
        }
    }
    if let Some((l, t)) = sys.records.iter().find_map(|l| {
        let p = l.value.pqperf.as_ref()?;
        Some((l, pqperf_report::counter::of_pqperf(&p.extra)?))
    }) {
        out.counter_unit = Some(t.unit());
        out.sources.counter = Some((
            pqperf_report::view::run_evidence(&sys.id, &l.path),
            Some("/pqperf/counter".to_string()),
        ));
    }
    Ok(out)
}

/// Side files of the published layout, copied into the site as evidence (site name = file name).
const SIDE_FILES: [&str; 7] = [
    "performance/systems.csv",
    "performance/external_sizes.csv",
    "performance/kex_bandwidth.csv",
    "performance/security_targets.csv",
    "performance/symmetric_survey.csv",
    "performance/summary_notes.csv",
    "performance/kat_issues.csv",
];

/// The side tables of a loaded dataset as the report reads them (label expressions
/// compiled; a bad one is named with its file and line).
pub fn side(ds: &Dataset) -> Result<Side, SiteError> {
    Side::from_dataset(ds).map_err(|e| SiteError::Input(e.to_string()))
}

/// The site's facts of a loaded dataset and its [`side`] tables; `only` restricts to these
/// system ids (the model keeps systems.csv order, then the others by id).
pub fn load<'a>(
    ds: &'a Dataset,
    side: &'a Side,
    only: &[String],
) -> Result<SiteData<'a>, SiteError> {
    let root = ds.root.as_path();
    let mut site = SiteData {
        systems: Vec::new(),
        candidates: Vec::new(),
        side,
        side_files: BTreeMap::new(),
        pages: Vec::new(),
        downloads: Vec::new(),
    };
    for rel in SIDE_FILES {
        let p = root.join(rel);
        if p.is_file() {
            let name = Path::new(rel)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            site.side_files.insert(name, p);
        }
    }
    let mut ids: Vec<&str> = ds.systems.iter().map(|s| s.id.as_str()).collect();
    for o in only {
        if !ids.contains(&o.as_str()) {
            return Err(SiteError::Input(format!(
                "{}: no system {o} in this dataset",
                root.display()
            )));
        }
    }
    if !only.is_empty() {
        ids.retain(|i| only.iter().any(|o| o == i));
    }
    if ids.is_empty() {
        return Err(SiteError::Input(format!(
            "{}: no system data (performance/data/<sys>/)",
            root.display()
        )));
    }
    for sys in ds.systems.iter().filter(|s| ids.contains(&s.id.as_str())) {
        let mut facts = from_system(ds, side, sys, &root.join(&sys.dir))?;
        if let Some(row) = ds.systems_csv.iter().flatten().find(|r| r.id == sys.id) {
            let csv = (Evidence::Side("systems.csv".into()), None);
            if !row.arch.is_empty() {
                facts.arch = row.arch.clone();
                facts.sources.arch = Some(csv.clone());
            }
            facts.description = row.description.clone();
            facts.sources.description = Some(csv);
        }
        site.systems.push(facts);
    }
    // Candidates: downloads.csv names, short names, categories from ids or operations.
    let names: HashMap<&str, &str> = ds
        .downloads
        .iter()
        .flatten()
        .map(|d| (d.id.as_str(), d.algorithm.as_str()))
        .collect();
    let mut shorts: HashMap<String, String> = HashMap::new();
    if let Some(p) = [
        root.join("short_names.csv"),
        root.join("data/short_names.csv"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    {
        let shown = p.strip_prefix(root).unwrap_or(&p);
        let t = CsvTable::read(&p, shown).map_err(|e| SiteError::Input(e.to_string()))?;
        if let (Some(i), Some(s)) = (t.column("ID"), t.column("ShortName")) {
            for r in &t.rows {
                if let (Some(id), Some(sn)) = (r.fields.get(i), r.fields.get(s)) {
                    shorts.insert(id.clone(), sn.clone());
                }
            }
        }
    }
    let mut ops: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in &site.systems {
        for r in s.records() {
            let v = ops.entry(r.rec.candidate.clone()).or_default();
            if !v.contains(&r.rec.operation) {
                v.push(r.rec.operation.clone());
            }
        }
        for (c, _, _) in s.built() {
            ops.entry(c.to_string()).or_default();
        }
    }
    for (id, o) in ops {
        let refs: Vec<&str> = o.iter().map(String::as_str).collect();
        let category = if id == "iccs" {
            Category::Hash
        } else {
            infer_category(&id, &refs)
        };
        site.candidates.push(Candidate {
            algorithm: names
                .get(id.as_str())
                .map_or_else(|| id.clone(), |n| n.to_string()),
            short_name: shorts.get(&id).cloned(),
            category,
            id,
        });
    }
    Ok(site)
}
