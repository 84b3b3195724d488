//! Which instances a phase works on: the measurable instances of the run (method §2.7,
//! minus `kat_issues.csv` exclusions), narrowed by `--only`, `--defer`, `--deferred-only`
//! and `--shard` (§16: longest-processing-time over prior costs from published records).

use std::collections::BTreeMap;
use std::path::Path;

use pqperf_measure::Instance;
use pqperf_measure::Regex;
use pqperf_measure::driver::ApiSpec;
use pqperf_model::catalog::ApiKind;
use pqperf_model::record::Record;
use pqperf_model::vocab::Category;
use sha2::{Digest, Sha256};

use crate::rundir::{load_build, load_catalog};
use crate::{CampaignError, CampaignOptions};

type Res<T> = Result<T, CampaignError>;

/// Statuses timed although the KAT did not pass (method §2.6).
pub const TIMED_WITHOUT_PASS: [&str; 6] = [
    "MISMATCH",
    "NOKAT",
    "PARTIAL",
    "CRYPTOFAIL",
    "TIMEOUT",
    "OVERFLOW",
];

/// Rows of `kat_issues.csv` next to the registry, if present: (id, label regex, action).
/// A malformed file or label regex is an error naming the file and line.
fn kat_issues(opts: &CampaignOptions) -> Res<Vec<(String, Regex, String)>> {
    let p = opts
        .systems_csv
        .parent()
        .unwrap_or(Path::new("."))
        .join("kat_issues.csv");
    if !p.exists() {
        return Ok(Vec::new());
    }
    let bad = |e: pqperf_model::ModelError| CampaignError::msg(e.to_string());
    let t = pqperf_model::sidecsv::CsvTable::read(&p, &p).map_err(bad)?;
    t.kat_issues()
        .map_err(bad)?
        .into_iter()
        .map(|k| {
            let re = Regex::new(&k.label).map_err(|e| {
                CampaignError::msg(format!(
                    "{}:{}: Label {:?} is not a valid regex: {e}",
                    p.display(),
                    k.line,
                    k.label
                ))
            })?;
            Ok((k.id, re, k.action))
        })
        .collect()
}

/// Measurable instances of the run (§2.7), in build order.
pub fn measurable(opts: &CampaignOptions) -> Res<Vec<Instance>> {
    let build = load_build(&opts.run_dir)?;
    let catalog = load_catalog(&opts.run_dir)?;
    let issues = kat_issues(opts)?;
    let mut out = Vec::new();
    for e in build.instances.values() {
        if issues
            .iter()
            .any(|(id, re, act)| id == &e.candidate && re.is_match(&e.label) && act == "exclude")
        {
            continue;
        }
        let pass = e.kat == "PASS";
        let timed = TIMED_WITHOUT_PASS.contains(&e.kat.as_str());
        if !(pass || timed) || e.library.is_none() {
            continue;
        }
        let cat_inst = catalog.as_ref().and_then(|c| {
            c.instances()
                .find(|(c, i)| c.id == e.candidate && i.label == e.label)
        });
        // The ICCS helpers (`iccs`) time hashes; another id without a catalog entry is
        // categorised by its exact prefix.
        let category = match cat_inst {
            Some((c, _)) => Some(c.kind),
            None if e.candidate == "iccs" => Some(Category::Hash),
            None => Category::from_name(e.candidate.split('-').next().unwrap_or_default()),
        };
        let api = match cat_inst {
            Some((c, i)) if i.api == ApiKind::Nist => {
                let Some(n) = &i.nist else {
                    return Err(CampaignError::msg(format!(
                        "catalog: {}/{} has api nist but no [nist] sizes",
                        c.id, i.label
                    )));
                };
                ApiSpec::nist(c.kind.as_str(), n, &c.id, &i.instance)
            }
            _ => ApiSpec::Iccs,
        };
        out.push(Instance {
            entry: e.clone(),
            category,
            api,
            kat_not_passed: !pass,
        });
    }
    Ok(out)
}

/// Prior cost per `cand/label`: Σ of process wall seconds over published records.
pub fn prior_costs(data: &Path) -> BTreeMap<String, f64> {
    let mut costs = BTreeMap::new();
    let Ok(systems) = std::fs::read_dir(data) else {
        return costs;
    };
    let mut files = Vec::new();
    for s in systems.flatten() {
        // A published system folder keeps the run's evidence paths.
        let records = pqperf_model::layout::RunLayout::new(s.path()).records_dir();
        let Ok(cands) = std::fs::read_dir(records) else {
            continue;
        };
        for c in cands.flatten() {
            if let Ok(fs) = std::fs::read_dir(c.path()) {
                files.extend(fs.flatten().map(|f| f.path()));
            }
        }
    }
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(rec) = pqperf_model::pyjson::from_str::<Record>(&f, &text) else {
            continue;
        };
        let w: f64 = rec.processes.iter().filter_map(|p| p.wall_s).sum();
        *costs
            .entry(format!("{}/{}", rec.candidate, rec.label))
            .or_insert(0.0) += w;
    }
    costs
}

/// `--shard K/N`, or `--shard slurm`: shard K of N from a Slurm job array
/// (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` + 1 of `SLURM_ARRAY_TASK_COUNT`; the
/// minimum defaults to 1 when unset), read through `env`. 1 ≤ K ≤ N.
pub fn parse_shard(
    s: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(usize, usize), String> {
    let num = |name: &str| -> Result<Option<i64>, String> {
        env(name)
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("{name}={v:?} is not a number"))
            })
            .transpose()
    };
    let (k, n) = if s.eq_ignore_ascii_case("slurm") {
        let id = num("SLURM_ARRAY_TASK_ID")?
            .ok_or("--shard slurm: SLURM_ARRAY_TASK_ID is not set (not a Slurm array task)")?;
        let count = num("SLURM_ARRAY_TASK_COUNT")?
            .ok_or("--shard slurm: SLURM_ARRAY_TASK_COUNT is not set")?;
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(1);
        (id - min + 1, count)
    } else {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard must be K/N or slurm, got {s}"))?;
        (
            k.trim()
                .parse::<i64>()
                .map_err(|_| format!("--shard {s}: K is not a number"))?,
            n.trim()
                .parse::<i64>()
                .map_err(|_| format!("--shard {s}: N is not a number"))?,
        )
    };
    if k < 1 || n < 1 || k > n {
        return Err(format!(
            "--shard {s}: shard {k} of {n} is outside 1..={n} (a Slurm array must be contiguous, e.g. --array=1-{n})"
        ));
    }
    Ok((k as usize, n as usize))
}

/// Instances selected by `--only`, `--deferred-only`, `--defer` and `--shard`.
pub fn selected(opts: &CampaignOptions, all: Vec<Instance>) -> Vec<Instance> {
    let shard_map = opts.shard.map(|(_, n)| {
        let costs = opts
            .prior_data
            .as_deref()
            .map(prior_costs)
            .unwrap_or_default();
        let built: Vec<String> = all.iter().map(Instance::key).collect();
        (
            shard_map(&costs, &built, n, &|k| opts.select.is_deferred(k)),
            n,
        )
    });
    all.into_iter()
        .filter(|i| {
            if !opts
                .select
                .selects_with_defer(&i.entry.candidate, &i.entry.label)
            {
                return false;
            }
            if let (Some((k, _)), Some((map, n))) = (opts.shard, &shard_map) {
                return shard_of(map, &i.key(), *n) == k - 1;
            }
            true
        })
        .collect()
}

/// Shard map (§16): greedy longest-processing-time over `cand/label` keys. `costs` holds the
/// prior cost (Σ process wall seconds over published records) of keys that have one; `built`
/// are the keys of this run's build.json; `deferred` tells which keys are left out.
pub fn shard_map(
    costs: &BTreeMap<String, f64>,
    built: &[String],
    n: usize,
    deferred: &dyn Fn(&str) -> bool,
) -> BTreeMap<String, usize> {
    let mut keys: Vec<(String, f64)> = costs
        .iter()
        .map(|(k, c)| (k.clone(), *c))
        .chain(
            built
                .iter()
                .filter(|k| !costs.contains_key(*k))
                .map(|k| (k.clone(), 60.0)),
        )
        .filter(|(k, _)| !deferred(k))
        .collect();
    keys.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keys.dedup_by(|a, b| a.0 == b.0);
    let mut load = vec![0.0f64; n.max(1)];
    let mut map = BTreeMap::new();
    for (k, c) in keys {
        let (i, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .expect("n >= 1");
        load[i] += c;
        map.insert(k, i);
    }
    map
}

/// Shard (0-based) of `key`: from the map, else SHA-256(key) mod n.
pub fn shard_of(map: &BTreeMap<String, usize>, key: &str, n: usize) -> usize {
    if let Some(&s) = map.get(key) {
        return s;
    }
    let d = Sha256::digest(key.as_bytes());
    // int(hex, 16) mod n: reduce the big-endian digest byte by byte.
    d.iter()
        .fold(0u128, |acc, &b| (acc * 256 + b as u128) % n.max(1) as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_arguments_and_slurm_arrays() {
        let none = |_: &str| None;
        assert_eq!(parse_shard("2/3", none), Ok((2, 3)));
        assert!(parse_shard("0/3", none).is_err());
        assert!(parse_shard("4/3", none).is_err());
        assert!(parse_shard("x", none).is_err());
        assert!(
            parse_shard("slurm", none)
                .unwrap_err()
                .contains("SLURM_ARRAY_TASK_ID")
        );
        let slurm = |min: Option<&'static str>, id: &'static str| {
            move |k: &str| match k {
                "SLURM_ARRAY_TASK_ID" => Some(id.to_string()),
                "SLURM_ARRAY_TASK_COUNT" => Some("4".to_string()),
                "SLURM_ARRAY_TASK_MIN" => min.map(str::to_string),
                _ => None,
            }
        };
        // --array=1-4 and --array=0-3 both give shards 1..4 of 4.
        assert_eq!(parse_shard("slurm", slurm(None, "1")), Ok((1, 4)));
        assert_eq!(parse_shard("slurm", slurm(Some("1"), "4")), Ok((4, 4)));
        assert_eq!(parse_shard("slurm", slurm(Some("0"), "0")), Ok((1, 4)));
        assert_eq!(parse_shard("slurm", slurm(Some("0"), "3")), Ok((4, 4)));
        assert!(parse_shard("slurm", slurm(Some("0"), "4")).is_err());
        assert!(parse_shard("SLURM", slurm(Some("1"), "x")).is_err());
    }

    #[test]
    fn lpt_balances_and_falls_back_to_hash() {
        let mut costs = BTreeMap::new();
        costs.insert("a/x".to_string(), 100.0);
        costs.insert("a/y".to_string(), 50.0);
        costs.insert("a/z".to_string(), 40.0);
        let built = vec!["b/new".to_string(), "slow/one".to_string()];
        let m = shard_map(&costs, &built, 2, &|k| k.starts_with("slow/"));
        assert_eq!(m["a/x"], 0);
        assert_eq!(m["b/new"], 1);
        assert_eq!(m["a/y"], 1);
        assert_eq!(m["a/z"], 0);
        assert!(!m.contains_key("slow/one"));
        let s = shard_of(&m, "other/k", 3);
        assert!(s < 3);
        assert_eq!(s, shard_of(&m, "other/k", 3));
    }
}
