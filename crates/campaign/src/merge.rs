//! `campaign merge`: joins the run directories of shards that ran as independent jobs (on
//! several hosts of one system, e.g. a Slurm job array with `--shard slurm`) into one run
//! directory, which `publish` turns into one dataset.
//!
//! Every shard must belong to the same system (`campaign.json` `system_id` and
//! architecture); mixed systems are refused. Each instance belongs to the shard that measured
//! it: its records, calibrations, profiles, constant-time evidence, KAT log and build.json
//! entry come from that shard (every shard builds and KAT-checks all instances, so the copies
//! elsewhere are redundant); a candidate's survey comes from the first shard that has it. A
//! record measured by two shards is refused. `campaign.json`
//! joins the host checks of every shard, the union of their problems and shard CPUs, the
//! earliest start and latest end; `pqperf.merged_from` names the shard directories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use pqperf_model::buildjson::{BuildEntry, BuildJson};
use pqperf_model::campaign::{Campaign, HostCheck, LeaseWindow};
use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson;

use crate::CampaignError;
use crate::rundir::walk_files;

type Res<T> = Result<T, CampaignError>;

/// What a merge did.
#[derive(Debug, Clone, Default)]
pub struct MergeSummary {
    /// The common system id.
    pub system: String,
    /// Records joined.
    pub records: usize,
    /// Files copied (all kinds).
    pub files: usize,
}

/// A shard's campaign.json (which must exist), as its model type.
fn read_campaign(run: &Path) -> Res<Campaign> {
    let p = RunLayout::new(run).campaign_json();
    Ok(pyjson::read::<Campaign>(&p, &p)?)
}

fn arch_of(c: &Campaign) -> Option<String> {
    [&c.environment_at_start, &c.environment_at_end]
        .into_iter()
        .find_map(|e| e.as_ref()?.str("architecture").map(str::to_string))
}

/// `<candidate>/<label>` of a per-instance evidence file (`<sub>/<cand>/<label>__op.json`,
/// `<sub>/<cand>/<label>.log|json`), `None` for run-level files.
fn instance_of(rel: &Path) -> Option<String> {
    let mut it = rel.components();
    it.next()?;
    let cand = it.next()?.as_os_str().to_str()?;
    let file = it.next()?.as_os_str().to_str()?;
    if it.next().is_some() {
        return None;
    }
    let label = file.split("__").next()?;
    let label = label
        .strip_suffix(".json")
        .or_else(|| label.strip_suffix(".log"))
        .unwrap_or(label);
    Some(format!("{cand}/{label}"))
}

fn name_of(run: &Path) -> String {
    run.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| run.display().to_string())
}

/// Joins the shard run directories `shards` into `out` (created; must not hold records yet).
pub fn merge(out: &Path, shards: &[PathBuf]) -> Res<MergeSummary> {
    if shards.len() < 2 {
        return Err(CampaignError::msg(
            "merge needs at least two shard run directories (--from DIR, repeated)",
        ));
    }
    let out_layout = RunLayout::new(out);
    if out_layout.records_dir().exists() || out_layout.campaign_json().exists() {
        return Err(CampaignError::msg(format!(
            "{}: already holds a campaign; merge writes a new run directory",
            out.display()
        )));
    }
    // Nothing is read through a symbolic link: a shard from another host could point one at
    // this host's files, which the merge would copy into the dataset.
    // The evidence folders are `RunLayout::instance_evidence_dirs`: per instance
    // (`<sub>/<candidate>/<label>…`), and `survey` per candidate (`survey/<candidate>.json`,
    // the ICCS-helper usage the profile phase derived; taken from the first shard that has it,
    // like other files no instance owns).
    for s in shards {
        let l = RunLayout::new(s);
        let top = [
            l.campaign_json(),
            l.build_json(),
            l.catalog(),
            l.campaign_log(),
        ];
        for p in top.iter().chain(&l.instance_evidence_dirs()) {
            if p.symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(CampaignError::msg(format!(
                    "{}: symbolic link in a shard run directory (refused)",
                    p.display()
                )));
            }
        }
        for d in l.instance_evidence_dirs() {
            if let Some(link) = pqperf_model::dataset::first_symlink(&d) {
                return Err(CampaignError::msg(format!(
                    "{}: symbolic link in a shard run directory (refused)",
                    d.join(link).display()
                )));
            }
        }
    }
    let camps: Vec<Campaign> = shards
        .iter()
        .map(|s| read_campaign(s))
        .collect::<Res<_>>()?;
    // One system only.
    let sys_of = |i: usize| -> Res<String> {
        camps[i].system_id.clone().ok_or_else(|| {
            CampaignError::msg(format!(
                "{}: campaign.json has no system_id",
                RunLayout::new(&shards[i]).campaign_json().display()
            ))
        })
    };
    let system = sys_of(0)?;
    let arch = arch_of(&camps[0]);
    for i in 1..shards.len() {
        let s = sys_of(i)?;
        if s != system || arch_of(&camps[i]) != arch {
            return Err(CampaignError::msg(format!(
                "mixed systems: {} is system {s} ({}), {} is system {system} ({}); a dataset holds one system, merge the shards of each system separately",
                shards[i].display(),
                arch_of(&camps[i]).unwrap_or_else(|| "architecture unknown".into()),
                shards[0].display(),
                arch.clone()
                    .unwrap_or_else(|| "architecture unknown".into()),
            )));
        }
    }
    // Instance owners: the shard that holds its records; a record in two shards is refused.
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut record_from: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for (i, s) in shards.iter().enumerate() {
        for f in walk_files(&RunLayout::new(s).records_dir()) {
            let rel = f.strip_prefix(s).unwrap_or(&f).to_path_buf();
            let name = rel.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            if let Some(j) = record_from.insert(rel.clone(), i) {
                return Err(CampaignError::msg(format!(
                    "{} was measured by two shards ({} and {}); shards must be disjoint (same --shard N, distinct K)",
                    rel.display(),
                    shards[j].display(),
                    s.display()
                )));
            }
            if let Some(k) = instance_of(&rel)
                && let Some(j) = owner.insert(k.clone(), i)
                && j != i
            {
                return Err(CampaignError::msg(format!(
                    "instance {k} has records in two shards ({} and {})",
                    shards[j].display(),
                    s.display()
                )));
            }
        }
    }
    // Per-instance files from the owner; unowned and run-level ones from the first shard
    // that has them.
    let mut chosen: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for (i, s) in shards.iter().enumerate() {
        for d in RunLayout::new(s).instance_evidence_dirs() {
            for f in walk_files(&d) {
                let rel = f.strip_prefix(s).unwrap_or(&f).to_path_buf();
                let name = rel.file_name().unwrap_or_default().to_string_lossy();
                if name.starts_with('.') {
                    continue;
                }
                let wanted = match instance_of(&rel).and_then(|k| owner.get(&k)) {
                    Some(&o) => o == i,
                    None => !chosen.contains_key(&rel),
                };
                if wanted {
                    chosen.insert(rel, f);
                }
            }
        }
    }
    std::fs::create_dir_all(out)?;
    // The new run directory is written under its lock, through the locked layout.
    let locked = crate::rundir::LockedRun::lock(out, false)?;
    let out_layout = locked.layout();
    let mut files = 0;
    for (rel, src) in &chosen {
        write_atomic(&out_layout.at(rel), &std::fs::read(src)?)?;
        files += 1;
    }
    let first_catalog = RunLayout::new(&shards[0]).catalog();
    if first_catalog.is_file() {
        write_atomic(&out_layout.catalog(), &std::fs::read(first_catalog)?)?;
        files += 1;
    }
    // build.json: each entry from its owner, else from the first shard listing it.
    let mut builds: Vec<IndexMap<String, BuildEntry>> = Vec::new();
    for s in shards {
        let p = RunLayout::new(s).build_json();
        builds.push(if p.exists() {
            pyjson::read::<BuildJson>(&p, &p)?.instances
        } else {
            IndexMap::new()
        });
    }
    let mut instances = IndexMap::new();
    for b in &builds {
        for k in b.keys() {
            if instances.contains_key(k) {
                continue;
            }
            let from = owner.get(k).copied().unwrap_or_else(|| {
                builds
                    .iter()
                    .position(|b| b.contains_key(k))
                    .unwrap_or_default()
            });
            if let Some(e) = builds[from].get(k) {
                instances.insert(k.clone(), e.clone());
            }
        }
    }
    let bj = BuildJson {
        instances,
        ..Default::default()
    };
    let text = pyjson::to_string(&bj)
        .map_err(|e| CampaignError::msg(format!("{}: {e}", out_layout.build_json().display())))?;
    write_atomic(&out_layout.build_json(), text.as_bytes())?;
    files += 1;
    let camp = merge_campaigns(&camps, shards);
    crate::rundir::write_campaign(&out_layout.campaign_json(), &camp)?;
    files += 1;
    let mut log = String::new();
    for s in shards {
        if let Ok(t) = std::fs::read_to_string(RunLayout::new(s).campaign_log()) {
            log.push_str(&format!("# --- shard run {} ---\n", name_of(s)));
            log.push_str(&t);
        }
    }
    log.push_str(&format!(
        "{} merged {} shard runs of system {system}: {} records\n",
        crate::utc_now(),
        shards.len(),
        record_from.len()
    ));
    write_atomic(&out_layout.campaign_log(), log.as_bytes())?;
    Ok(MergeSummary {
        system,
        records: record_from.len(),
        files,
    })
}

fn merge_campaigns(camps: &[Campaign], shards: &[PathBuf]) -> Campaign {
    let mut m = camps[0].clone();
    let mut checks: Vec<HostCheck> = Vec::new();
    let mut problems: BTreeSet<String> = BTreeSet::new();
    let mut any_problems = false;
    let mut shard_cpus: IndexMap<String, u64> = IndexMap::new();
    let mut nshards = 0u64;
    let mut started: Option<String> = None;
    let mut ended: Option<(String, usize)> = None;
    let mut pq = m.pqperf.take().unwrap_or_default();
    pq.commands = None;
    let mut emulated: Option<String> = None;
    let mut leases: Vec<LeaseWindow> = Vec::new();
    for (i, c) in camps.iter().enumerate() {
        checks.extend(c.host_checks.iter().flatten().cloned());
        if let Some(a) = &c.host_problems {
            any_problems = true;
            problems.extend(a.iter().cloned());
        }
        for (k, v) in c.shard_cpus.iter().flatten() {
            shard_cpus.insert(k.clone(), *v);
        }
        nshards = nshards.max(c.shards.unwrap_or(0));
        if let Some(s) = &c.started_utc
            && started.as_deref().is_none_or(|t| s.as_str() < t)
        {
            started = Some(s.clone());
        }
        if let Some(s) = &c.ended_utc
            && ended.as_ref().is_none_or(|(t, _)| s > t)
        {
            ended = Some((s.clone(), i));
        }
        if let Some(p) = &c.pqperf {
            for cmd in p.commands.iter().flatten() {
                pq.note_command(cmd);
            }
            if emulated.is_none() {
                emulated.clone_from(&p.emulated);
            }
            // Every shard's CPU lease windows, each naming its shard run directory.
            for l in p.cpu_leases.iter().flatten() {
                leases.push(LeaseWindow {
                    shard_run: shards.get(i).map(|s| name_of(s)),
                    ..l.clone()
                });
            }
        }
    }
    m.host_checks = Some(checks);
    if any_problems {
        m.host_problems = Some(problems.into_iter().collect());
    }
    if nshards > 0 {
        m.shards = Some(nshards);
        m.shard_cpus = Some(shard_cpus);
    }
    if let Some(s) = started {
        m.started_utc = Some(s);
    }
    if let Some((e, i)) = ended {
        m.ended_utc = Some(e);
        if let Some(env) = &camps[i].environment_at_end {
            m.environment_at_end = Some(env.clone());
        }
    }
    pq.note_command("pqperf campaign merge");
    if emulated.is_some() {
        pq.emulated = emulated;
    }
    if !leases.is_empty() {
        pq.cpu_leases = Some(leases);
    }
    pq.merged_from = Some(shards.iter().map(|s| name_of(s)).collect());
    m.pqperf = Some(pq);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn instance_keys_of_evidence_paths() {
        assert_eq!(
            instance_of(Path::new("records/sign-01/a__sign.json")).as_deref(),
            Some("sign-01/a")
        );
        assert_eq!(
            instance_of(Path::new("kat/ml-dsa-44/ml-dsa-44.log")).as_deref(),
            Some("ml-dsa-44/ml-dsa-44")
        );
        assert_eq!(
            instance_of(Path::new("ct/x/lbl.json")).as_deref(),
            Some("x/lbl")
        );
        assert_eq!(
            instance_of(Path::new("profile/iccs-provider-bench.json")),
            None
        );
        assert_eq!(instance_of(Path::new("profile/a/b/c.json")), None);
    }

    #[test]
    fn campaigns_join() {
        let a = json!({"system_id": "arm_1", "started_utc": "2026-01-02T00:00:00", "ended_utc": "2026-01-02T01:00:00",
            "host_checks": [{"phase": "measure", "utc": "2026-01-02T00:00:00", "problems": ["p1"], "shard": "1/2"}], "host_problems": ["p1"],
            "shards": 2, "shard_cpus": {"1/2": 1}, "environment_at_end": {"n": 1},
            "pqperf": {"commands": ["pqperf campaign measure"]}});
        let b = json!({"system_id": "arm_1", "started_utc": "2026-01-01T00:00:00", "ended_utc": "2026-01-03T00:00:00",
            "host_checks": [{"phase": "measure", "utc": "2026-01-01T00:00:00", "problems": ["p2"], "shard": "2/2"}], "host_problems": ["p2"],
            "shards": 2, "shard_cpus": {"2/2": 1}, "environment_at_end": {"n": 2},
            "pqperf": {"commands": ["pqperf campaign measure"], "emulated": "qemu-user",
                "cpu_leases": [{"cpu": 0, "chosen": "auto", "allowed": [0], "waited_s": 0.0,
                    "acquired_utc": "2026-01-01T00:00:00", "phase": "all"}]}});
        let camps: Vec<Campaign> = [a, b]
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        let m = merge_campaigns(&camps, &[PathBuf::from("x/s1"), PathBuf::from("y/s2")]);
        let m = serde_json::to_value(&m).unwrap();
        assert_eq!(m["started_utc"], "2026-01-01T00:00:00");
        assert_eq!(m["ended_utc"], "2026-01-03T00:00:00");
        assert_eq!(m["environment_at_end"]["n"], 2);
        assert_eq!(m["host_problems"], json!(["p1", "p2"]));
        assert_eq!(m["host_checks"].as_array().unwrap().len(), 2);
        assert_eq!(m["shard_cpus"], json!({"1/2": 1, "2/2": 1}));
        assert_eq!(m["pqperf"]["emulated"], "qemu-user");
        assert_eq!(m["pqperf"]["merged_from"], json!(["s1", "s2"]));
        assert_eq!(
            m["pqperf"]["cpu_leases"],
            json!([{"cpu": 0, "chosen": "auto", "allowed": [0], "waited_s": 0.0,
                "acquired_utc": "2026-01-01T00:00:00", "phase": "all", "shard_run": "s2"}])
        );
        assert_eq!(
            m["pqperf"]["commands"],
            json!(["pqperf campaign measure", "pqperf campaign merge"])
        );
    }
}
