//! Read the site's facts from a published dataset root (`performance/data/<sys>/…`, side CSVs,
//! `downloads.csv`): only the fields the site shows are deserialised (records, profiles,
//! build.json, campaign.json clock), so loading stays fast. Markdown pages are not read
//! here; the caller supplies them from the report stage.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::SiteError;
use crate::data::{BuildFact, Candidate, Category, ExtSize, Prof, Rec, Side, SiteData, SystemData};
use crate::evidence::infer_category;

#[derive(Deserialize)]
struct RecordJson {
    #[serde(default)]
    status: String,
    #[serde(default)]
    candidate: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    variant: String,
    #[serde(default)]
    operation: String,
    #[serde(default)]
    input_bytes: u64,
    #[serde(default)]
    kat: Option<String>,
    #[serde(default)]
    measurements: Option<u64>,
    #[serde(default)]
    mean_seconds: Option<f64>,
    #[serde(default)]
    mean_cycles: Option<f64>,
    #[serde(default)]
    sizes: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    kex: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pqperf: Option<PqperfJson>,
}

#[derive(Deserialize)]
struct PqperfJson {
    #[serde(default)]
    per_call_cycles: Option<QuantilesJson>,
}

#[derive(Deserialize)]
struct QuantilesJson {
    p50: f64,
    p90: f64,
    p99: f64,
}

#[derive(Deserialize)]
struct ProfileJson {
    #[serde(default)]
    candidate: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    input_bytes: u64,
    #[serde(default)]
    status: String,
    #[serde(default)]
    hash_share: Option<f64>,
}

#[derive(Deserialize)]
struct BuildJson {
    #[serde(default)]
    instances: BTreeMap<String, BuildEntryJson>,
}

#[derive(Deserialize)]
struct BuildEntryJson {
    #[serde(default)]
    candidate: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    variant: String,
    #[serde(default)]
    kat: Option<String>,
    #[serde(default)]
    kat_log: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

fn read(path: &Path) -> Result<Vec<u8>, SiteError> {
    std::fs::read(path).map_err(|e| SiteError::io(path, e))
}

fn parse<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, SiteError> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| SiteError::Input(format!("{}: {e}", path.display())))
}

/// `;`-separated CSV without `#` lines: (header, rows). Fields may be double-quoted.
pub fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), SiteError> {
    let text = String::from_utf8_lossy(&read(path)?).into_owned();
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let split = |l: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        // Python csv semantics: a quote opens quoting only at the start of a field; inside,
        // `""` is a quote and a lone `"` closes; elsewhere quotes are literal.
        let mut quoted = false;
        let mut at_start = true;
        let mut chars = l.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                '"' if quoted => quoted = false,
                '"' if at_start => quoted = true,
                ';' if !quoted => {
                    out.push(std::mem::take(&mut cur));
                    at_start = true;
                    continue;
                }
                c => cur.push(c),
            }
            at_start = false;
        }
        out.push(cur);
        out
    };
    let header = lines.next().map(split).unwrap_or_default();
    Ok((header, lines.map(split).collect()))
}

fn col(header: &[String], name: &str) -> Option<usize> {
    header.iter().position(|h| h == name)
}

fn num(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn walk_json(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk_json(&p, out),
            Ok(t) if t.is_file() && p.extension().is_some_and(|x| x == "json") => out.push(p),
            _ => {}
        }
    }
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Clock text of an environment (`method.md` §13.3) and the clock in GHz.
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

/// The dataset's system directories: `performance/data/<sys>/` under `root`, or `root`
/// itself when it is one system's data directory (has `records/`).
pub fn system_dirs(root: &Path) -> Vec<(String, PathBuf)> {
    let data = root.join("performance").join("data");
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&data) {
        for e in rd.flatten() {
            if e.path().is_dir() {
                v.push((e.file_name().to_string_lossy().into_owned(), e.path()));
            }
        }
    }
    if v.is_empty() && root.join("records").is_dir() {
        let id = std::fs::read(root.join("campaign.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|c| {
                c.get("system_id")
                    .and_then(|s| s.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| {
                root.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        v.push((id, root.to_path_buf()));
    }
    v.sort();
    v
}

/// Load one system's facts from its data directory.
pub fn load_system(id: &str, dir: &Path) -> Result<SystemData, SiteError> {
    let mut sys = SystemData {
        id: id.to_string(),
        data_dir: dir.to_path_buf(),
        ..Default::default()
    };
    let campaign = dir.join("campaign.json");
    if campaign.is_file() {
        let c: serde_json::Value = parse(&campaign)?;
        let env = c
            .get("environment_at_end")
            .and_then(|v| v.as_object())
            .filter(|e| {
                e.get("cpufreq_max_khz").is_some_and(|v| !v.is_null())
                    || e.get("core_clock_hz").is_some()
            })
            .or_else(|| c.get("environment_at_start").and_then(|v| v.as_object()));
        if let Some(env) = env {
            let (text, ghz) = clock(env);
            sys.clock_text = text;
            sys.clock_ghz = ghz;
            if let Some(a) = env.get("architecture").and_then(|v| v.as_str()) {
                sys.arch = a.to_string();
            }
        }
    }
    let build = dir.join("build.json");
    if build.is_file() {
        let b: BuildJson = parse(&build)?;
        for (_, e) in b.instances {
            let _ = e.kind;
            sys.build.insert(
                (e.candidate, e.label),
                BuildFact {
                    variant: e.variant,
                    kat: e.kat,
                    kat_log: e.kat_log,
                },
            );
        }
    }
    let mut files = Vec::new();
    walk_json(&dir.join("records"), &mut files);
    files.sort();
    for p in &files {
        let r: RecordJson = parse(p)?;
        let opkey = if r.input_bytes > 0 {
            format!("{}_{}", r.operation, r.input_bytes)
        } else {
            r.operation.clone()
        };
        sys.records.push(Rec {
            complete: r.status == "complete",
            candidate: r.candidate,
            label: r.label,
            variant: r.variant,
            operation: r.operation,
            opkey,
            input_bytes: r.input_bytes,
            kat: r.kat,
            mean_cycles: r.mean_cycles,
            mean_seconds: r.mean_seconds,
            measurements: r.measurements.unwrap_or(0),
            sizes: r
                .sizes
                .iter()
                .filter_map(|(k, v)| num(v).map(|n| (k.clone(), n)))
                .collect(),
            kex: r
                .kex
                .iter()
                .filter_map(|(k, v)| num(v).map(|n| (k.clone(), n)))
                .collect(),
            path: rel(dir, p),
            percentiles: r
                .pqperf
                .and_then(|x| x.per_call_cycles)
                .map(|q| [q.p50, q.p90, q.p99]),
        });
    }
    let mut files = Vec::new();
    walk_json(&dir.join("profile"), &mut files);
    files.sort();
    for p in &files {
        let pr: ProfileJson = parse(p)?;
        let Some(op) = pr.operation else { continue };
        let opkey = if pr.input_bytes > 0 {
            format!("{op}_{}", pr.input_bytes)
        } else {
            op
        };
        sys.profiles.insert(
            (pr.candidate, pr.label, opkey),
            Prof {
                hash_share: pr.hash_share,
                complete: pr.status == "complete",
                path: rel(dir, p),
            },
        );
    }
    Ok(sys)
}

/// Side files looked up next to `performance/` and at the root, with their site names.
const SIDE_FILES: [&str; 7] = [
    "performance/systems.csv",
    "performance/external_sizes.csv",
    "performance/kex_bandwidth.csv",
    "performance/security_targets.csv",
    "performance/symmetric_survey.csv",
    "performance/summary_notes.csv",
    "performance/kat_issues.csv",
];

/// Load a dataset root; `only` restricts to these system ids (in systems.csv order).
pub fn load(root: &Path, only: &[String]) -> Result<SiteData, SiteError> {
    let mut site = SiteData::default();
    let mut side = Side::default();
    let find = |rel: &str| -> Option<PathBuf> {
        let name = Path::new(rel).file_name()?;
        [root.join(rel), root.join(name)]
            .into_iter()
            .find(|p| p.is_file())
    };
    for rel in SIDE_FILES {
        if let Some(p) = find(rel) {
            let name = Path::new(rel)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            side.files.insert(name, p);
        }
    }
    // Systems in systems.csv order, then any others found.
    let mut order: Vec<(String, String, String)> = Vec::new();
    if let Some(p) = side.files.get("systems.csv") {
        let (h, rows) = read_csv(p)?;
        let (i, a, d) = (col(&h, "ID"), col(&h, "Arch"), col(&h, "Description"));
        for r in rows {
            let get = |c: Option<usize>| c.and_then(|c| r.get(c)).cloned().unwrap_or_default();
            order.push((get(i), get(a), get(d)));
        }
    }
    let dirs = system_dirs(root);
    let mut ids: Vec<String> = order
        .iter()
        .map(|o| o.0.clone())
        .filter(|id| dirs.iter().any(|d| &d.0 == id))
        .collect();
    for (id, _) in &dirs {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    if !only.is_empty() {
        for o in only {
            if !ids.contains(o) {
                return Err(SiteError::Input(format!(
                    "{}: no system {o} in this dataset",
                    root.display()
                )));
            }
        }
        ids.retain(|i| only.contains(i));
    }
    if ids.is_empty() {
        return Err(SiteError::Input(format!(
            "{}: no system data (performance/data/<sys>/)",
            root.display()
        )));
    }
    for id in &ids {
        let dir = &dirs.iter().find(|d| &d.0 == id).expect("listed").1;
        let mut sys = load_system(id, dir)?;
        if let Some((_, arch, desc)) = order.iter().find(|o| &o.0 == id) {
            if !arch.is_empty() {
                sys.arch = arch.clone();
            }
            sys.description = desc.clone();
        }
        site.systems.push(sys);
    }
    // Curated tables.
    if let Some(p) = side.files.get("security_targets.csv").cloned() {
        let (h, rows) = read_csv(&p)?;
        let (i, l, t) = (col(&h, "ID"), col(&h, "Instance"), col(&h, "TargetBits"));
        for (n, r) in rows.iter().enumerate() {
            let get = |c: Option<usize>| {
                c.and_then(|c| r.get(c))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            // Empty TargetBits: no claimed target (data::security_target still applies the
            // NIST level of a known PQClean scheme).
            let bits = get(t);
            let bits = if bits.is_empty() {
                None
            } else {
                Some(bits.parse::<u32>().map_err(|_| {
                    SiteError::Input(format!(
                        "{}: data row {}: TargetBits {bits:?} is not a number",
                        p.display(),
                        n + 1
                    ))
                })?)
            };
            side.targets.insert((get(i), get(l)), bits);
        }
    }
    if let Some(p) = side.files.get("external_sizes.csv").cloned() {
        let (h, rows) = read_csv(&p)?;
        let c = |n| col(&h, n);
        for r in rows {
            let get = |c: Option<usize>| {
                c.and_then(|c| r.get(c))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            let n = |c| get(c).parse::<u64>().ok();
            side.ext_sizes.insert(
                (get(c("ID")), get(c("Instance"))),
                ExtSize {
                    public_key: n(c("PublicKeyBytes")),
                    ciphertext: n(c("CiphertextBytes")),
                    signature: n(c("SignatureBytes")),
                    basis: get(c("Basis")),
                },
            );
        }
    }
    if let Some(p) = side.files.get("kex_bandwidth.csv").cloned() {
        let (h, rows) = read_csv(&p)?;
        let c = |n| col(&h, n);
        for r in rows {
            let get = |c: Option<usize>| {
                c.and_then(|c| r.get(c))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_default()
            };
            let n = |c| get(c).parse::<u64>().unwrap_or(0);
            side.kex_bandwidth.insert(
                (get(c("ID")), get(c("Instance"))),
                n(c("PkABytes")) + n(c("PkBBytes")) + n(c("ProtocolMessageBytes")),
            );
        }
    }
    if let Some(p) = side.files.get("symmetric_survey.csv").cloned() {
        let (h, rows) = read_csv(&p)?;
        let (i, v) = (col(&h, "ID"), col(&h, "Verdict"));
        for r in rows {
            if let (Some(id), Some(verdict)) = (i.and_then(|c| r.get(c)), v.and_then(|c| r.get(c)))
            {
                side.survey.insert(id.clone(), verdict.clone());
            }
        }
    }
    if let Some(p) = side.files.get("summary_notes.csv").cloned() {
        let (h, rows) = read_csv(&p)?;
        let (i, l, n) = (col(&h, "ID"), col(&h, "Label"), col(&h, "Note"));
        for r in rows {
            let get = |c: Option<usize>| c.and_then(|c| r.get(c)).cloned().unwrap_or_default();
            side.notes.push((get(i), get(l), get(n)));
        }
    }
    site.side = side;
    // Candidates: downloads.csv names, short names, categories from ids or operations.
    let mut names: HashMap<String, String> = HashMap::new();
    if let Some(p) = [
        root.join("downloads.csv"),
        root.join("performance/downloads.csv"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    {
        let (h, rows) = read_csv(&p)?;
        let (i, a) = (col(&h, "ID"), col(&h, "Algorithm"));
        for r in rows {
            if let (Some(id), Some(alg)) = (i.and_then(|c| r.get(c)), a.and_then(|c| r.get(c))) {
                names.insert(id.clone(), alg.clone());
            }
        }
    }
    let mut shorts: HashMap<String, String> = HashMap::new();
    if let Some(p) = [
        root.join("short_names.csv"),
        root.join("data/short_names.csv"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    {
        let (h, rows) = read_csv(&p)?;
        let (i, s) = (col(&h, "ID"), col(&h, "ShortName"));
        for r in rows {
            if let (Some(id), Some(sn)) = (i.and_then(|c| r.get(c)), s.and_then(|c| r.get(c))) {
                shorts.insert(id.clone(), sn.clone());
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
            algorithm: names.get(&id).cloned().unwrap_or_else(|| id.clone()),
            short_name: shorts.get(&id).cloned(),
            category,
            id,
        });
    }
    Ok(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_follow_python() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.csv");
        std::fs::write(
            &p,
            "# comment\nID;Notes\nkem-04;\"a; b \"\"c\"\"\"\nsign-02;x \"q\" y\n",
        )
        .unwrap();
        let (h, rows) = read_csv(&p).unwrap();
        assert_eq!(h, ["ID", "Notes"]);
        assert_eq!(rows[0], ["kem-04", "a; b \"c\""]);
        assert_eq!(rows[1], ["sign-02", "x \"q\" y"]);
    }
}
