//! The site's facts from a loaded evidence model ([`pqperf_model::dataset::Dataset`]): records,
//! profiles, build entries and the campaign clock are taken from the model (every JSON file
//! is parsed once, by the model), and so are the curated side CSVs and `downloads.csv`; only
//! `short_names.csv` (a site-only table) is read here.
//! Report pages are not made here; the caller supplies them from the report stage.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pqperf_model::dataset::{Dataset, SystemData as ModelSystem};
use pqperf_model::sidecsv::CsvTable;

use crate::SiteError;
use crate::data::{BuildFact, Candidate, Category, Prof, Rec, Side, SiteData, SystemFacts};
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

/// One system's facts from its loaded evidence; `data_dir` is the directory on disk.
pub fn from_system(sys: &ModelSystem, data_dir: &Path) -> SystemFacts {
    let mut out = SystemFacts {
        id: sys.id.clone(),
        data_dir: data_dir.to_path_buf(),
        ..Default::default()
    };
    if let Some(c) = &sys.campaign {
        let c = &c.value;
        out.host_state = Some(c.host_state());
        out.emulated = c.emulated().map(str::to_string);
        let env = c
            .environment_at_end
            .as_ref()
            .filter(|e| {
                e.get("cpufreq_max_khz").is_some_and(|v| !v.is_null())
                    || e.get("core_clock_hz").is_some()
            })
            .or(c.environment_at_start.as_ref());
        if let Some(env) = env {
            let (text, ghz) = clock(env.as_map());
            out.clock_text = text;
            out.clock_ghz = ghz;
            if let Some(a) = env.str("architecture") {
                out.arch = a.to_string();
            }
        }
    }
    if let Some(b) = &sys.build {
        for e in b.value.instances.values() {
            out.build.insert(
                (e.candidate.clone(), e.label.clone()),
                BuildFact {
                    variant: e.variant.clone(),
                    kat: Some(e.kat.clone()),
                    kat_log: e.kat_log.clone(),
                },
            );
        }
    }
    if out.clock_text.is_empty()
        && let Some(env) = sys
            .records
            .iter()
            .filter(|l| l.value.status == "complete" && !l.value.environment.is_empty())
            .map(|l| &l.value.environment)
            .next()
    {
        // No clock in campaign.json: the environment the timing records carry.
        let (text, ghz) = clock(env.as_map());
        out.clock_text = text;
        out.clock_ghz = out.clock_ghz.or(ghz);
    }
    out.counter_unit = sys
        .records
        .iter()
        .filter_map(|l| l.value.pqperf.as_ref())
        .find_map(|p| pqperf_report::counter::of_pqperf(&p.extra))
        .map(|t| t.unit());
    out.records.reserve(sys.records.len());
    for l in &sys.records {
        let r = &l.value;
        out.records.push(Rec {
            complete: r.status == "complete",
            candidate: r.candidate.clone(),
            label: r.label.clone(),
            variant: r.variant.clone(),
            operation: r.operation.clone(),
            opkey: opkey(&r.operation, r.input_bytes),
            input_bytes: r.input_bytes,
            kat: Some(r.kat.clone()),
            mean_cycles: r.mean_cycles,
            mean_seconds: r.mean_seconds,
            measurements: r.measurements.unwrap_or(0),
            sizes: r.sizes.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            kex: r.kex.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            path: rel(&l.path),
            percentiles: r
                .pqperf
                .as_ref()
                .and_then(|x| x.per_call_cycles.as_ref())
                .map(|q| [q.p50, q.p90, q.p99]),
            robust: r
                .pqperf
                .as_ref()
                .and_then(|x| x.robust.as_ref())
                .map(|b| [b.estimate_seconds, b.ci_low_seconds, b.ci_high_seconds]),
        });
    }
    for l in &sys.count {
        let c = &l.value;
        if let Some(sp) = c.instructions_per_call.filter(|_| c.status == "counted") {
            out.counts.insert(
                (c.candidate.clone(), c.label.clone(), c.operation.clone()),
                crate::data::CountFact {
                    median: sp.median,
                    path: rel(&l.path),
                },
            );
        }
    }
    for l in &sys.profiles {
        let p = &l.value;
        if p.operation.is_empty() {
            continue;
        }
        out.profiles.insert(
            (
                p.candidate.clone(),
                p.label.clone(),
                opkey(&p.operation, p.input_bytes),
            ),
            Prof {
                // A profile of the instance's own SHAKE/SHA-2/AES is no ICCS placeholder share
                // (the rankings' `(hash %)`): left out, as on the summary.
                hash_share: p.hash_share.as_f64().filter(|_| {
                    !pqperf_report::candidate::own_primitive_profile(
                        &pqperf_report::view::ProfileRef {
                            path: &l.path,
                            prof: p,
                        },
                    )
                }),
                complete: p.status == "complete",
                path: rel(&l.path),
            },
        );
    }
    out
}

/// `operation`, or `<operation>_<input_bytes>` for hash records.
fn opkey(operation: &str, input_bytes: u64) -> String {
    if input_bytes > 0 {
        format!("{operation}_{input_bytes}")
    } else {
        operation.to_string()
    }
}

/// A system-relative path with `/` separators.
fn rel(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
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

/// The site's facts of a loaded dataset; `only` restricts to these system ids (the model
/// keeps systems.csv order, then the others by id).
pub fn load(ds: &Dataset, only: &[String]) -> Result<SiteData, SiteError> {
    let root = ds.root.as_path();
    let mut site = SiteData::default();
    let mut side = Side::default();
    for rel in SIDE_FILES {
        let p = root.join(rel);
        if p.is_file() {
            let name = Path::new(rel)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            side.files.insert(name, p);
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
        let mut facts = from_system(sys, &root.join(&sys.dir));
        if let Some(row) = ds.systems_csv.iter().flatten().find(|r| r.id == sys.id) {
            if !row.arch.is_empty() {
                facts.arch = row.arch.clone();
            }
            facts.description = row.description.clone();
        }
        site.systems.push(facts);
    }
    // Curated tables, as the model read them (errors name file and line there).
    for t in ds.security_targets.iter().flatten() {
        // No TargetBits: no claimed target (data::security_target still applies the NIST
        // level of a known PQClean scheme).
        let bits = t.target_bits.map(|b| u32::try_from(b).unwrap_or(u32::MAX));
        side.targets
            .insert((t.id.clone(), t.instance.clone()), bits);
    }
    for e in ds.external_sizes.iter().flatten() {
        side.ext_sizes
            .insert((e.id.clone(), e.instance.clone()), e.clone());
    }
    for k in ds.kex_bandwidth.iter().flatten() {
        side.kex_bandwidth.insert(
            (k.id.clone(), k.instance.clone()),
            k.pk_a_bytes + k.pk_b_bytes + k.protocol_message_bytes,
        );
    }
    for r in ds.symmetric_survey.iter().flatten() {
        side.survey.insert(r.id.clone(), r.verdict.clone());
    }
    for n in ds.summary_notes.iter().flatten() {
        side.notes
            .push((n.id.clone(), n.label.clone(), n.note.clone()));
    }
    site.side = side;
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
        for r in &s.records {
            let v = ops.entry(r.candidate.clone()).or_default();
            if !v.contains(&r.operation) {
                v.push(r.operation.clone());
            }
        }
        for (c, _) in s.build.keys() {
            ops.entry(c.clone()).or_default();
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
