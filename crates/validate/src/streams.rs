//! Process seeds recomputed from the published stream keys (issue 36,
//! `pqperf_model::stream::keyed_process_seed`): when a system's campaign.json publishes
//! `pqperf.stream_keys`, every key must be 64 hex characters whose id
//! (`pqperf_model::stream::key_id`) is the `key_id` beside it, and every timing process whose
//! `stream` names a `key_id` must name a published key and carry the seed that key gives for
//! its `index`. A seed that is not the key's is a record whose inputs are not those the run
//! drew (edited evidence, or a process seeded from elsewhere). Processes without a `key_id`
//! (the public derivation of earlier versions, or the reference's fixed seed: no `stream`) and
//! campaigns without published keys are not checked here.

use std::collections::BTreeMap;

use pqperf_model::dataset::SystemData;
use pqperf_model::stream::{KEY_BYTES, key_id, keyed_process_seed, parse_key_hex, seed_hex};
use serde_json::Value;

use crate::problem::{Problem, Report, show_opt};

/// Checks the published stream keys of `sys` and the seeds of its records' processes (see the
/// module doc).
pub(crate) fn check_streams(rep: &mut Report, sys: &SystemData) {
    let Some(c) = &sys.campaign else {
        return;
    };
    let Some(list) = c.value.pqperf.as_ref().and_then(|p| p.stream_keys.as_ref()) else {
        return;
    };
    let keys = published_keys(rep, &c.shown, list);
    for rec in &sys.records {
        for (i, p) in rec.value.processes.iter().enumerate() {
            let Some(s) = p.extra.get("stream") else {
                continue;
            };
            let Some(id) = s.get("key_id").and_then(Value::as_str) else {
                continue;
            };
            let field = |f: &str| format!("processes[{i}].stream.{f}");
            let Some(key) = keys.get(id) else {
                rep.problems.push(Problem::new(
                    &rec.shown,
                    field("key_id"),
                    format!(
                        "process {i}: stream key {id} is not published in {} pqperf.stream_keys, so its seed cannot be recomputed",
                        c.shown.display()
                    ),
                ));
                continue;
            };
            let Some(index) = s.get("index").and_then(Value::as_u64) else {
                rep.problems.push(Problem::new(
                    &rec.shown,
                    field("index"),
                    format!("process {i}: no stream index to recompute its seed from"),
                ));
                continue;
            };
            let want = seed_hex(&keyed_process_seed(key, index));
            let got = s.get("seed").and_then(Value::as_str);
            if got != Some(want.as_str()) {
                rep.problems.push(Problem::new(
                    &rec.shown,
                    field("seed"),
                    format!(
                        "process {i} (stream index {index}): seed {} is not the one the published key {id} gives for that index ({want})",
                        show_opt(got)
                    ),
                ));
            }
        }
    }
}

/// The keys of `pqperf.stream_keys` by id; a malformed key or an id that is not its key's is
/// a problem of the campaign file (and the key is left out).
fn published_keys(
    rep: &mut Report,
    file: &std::path::Path,
    list: &[Value],
) -> BTreeMap<String, [u8; KEY_BYTES]> {
    let mut keys = BTreeMap::new();
    for (i, k) in list.iter().enumerate() {
        let field = |f: &str| format!("pqperf.stream_keys[{i}].{f}");
        let key = match k.get("key").and_then(Value::as_str).map(parse_key_hex) {
            Some(Ok(key)) => key,
            Some(Err(e)) => {
                rep.problems.push(Problem::new(file, field("key"), e));
                continue;
            }
            None => {
                rep.problems
                    .push(Problem::new(file, field("key"), "missing or not a string"));
                continue;
            }
        };
        let id = key_id(&key);
        match k.get("key_id").and_then(Value::as_str) {
            Some(got) if got == id => {}
            got => rep.problems.push(Problem::new(
                file,
                field("key_id"),
                format!("{} is not the id of its key ({id})", show_opt(got)),
            )),
        }
        keys.insert(id, key);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::dataset::Loaded;
    use serde_json::json;
    use std::path::PathBuf;

    /// A system whose campaign publishes `key` and whose one record has processes seeded
    /// from it at indices 0, 1, 2.
    fn system(key: &[u8; KEY_BYTES]) -> SystemData {
        let campaign = pqperf_model::campaign::Campaign {
            pqperf: Some(pqperf_model::campaign::CampaignPqperf {
                stream_keys: Some(vec![json!({
                    "key_id": key_id(key),
                    "key": pqperf_model::stream::key_hex(key),
                    "reused": false,
                })]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut rec = pqperf_model::Record::default();
        for i in 0..3u64 {
            let mut p = pqperf_model::record::Process::default();
            p.extra.insert(
                "stream".into(),
                json!({
                    "index": i,
                    "seed": seed_hex(&keyed_process_seed(key, i)),
                    "key_id": key_id(key),
                }),
            );
            rec.processes.push(p);
        }
        let shown = |s: &str| PathBuf::from(format!("performance/data/x/{s}"));
        SystemData {
            id: "x".into(),
            campaign: Some(Loaded {
                path: "campaign.json".into(),
                shown: shown("campaign.json"),
                value: campaign,
            }),
            records: vec![Loaded {
                path: "records/sign-9/t__sign.json".into(),
                shown: shown("records/sign-9/t__sign.json"),
                value: rec,
            }],
            ..Default::default()
        }
    }

    fn problems(sys: &SystemData) -> Vec<String> {
        let mut rep = Report::default();
        check_streams(&mut rep, sys);
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn seeds_are_recomputed_from_the_published_key() {
        let key = [5u8; KEY_BYTES];
        let sys = system(&key);
        assert_eq!(problems(&sys), Vec::<String>::new());
        // One seed changed: named with its file, process and index.
        let mut bad = sys.clone();
        bad.records[0].value.processes[1]
            .extra
            .get_mut("stream")
            .unwrap()["seed"] = json!(seed_hex(&keyed_process_seed(&key, 7)));
        let p = problems(&bad);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(
                "performance/data/x/records/sign-9/t__sign.json: processes[1].stream.seed: process 1 (stream index 1)"
            ),
            "{p:?}"
        );
        // A key id nobody published, and a published id that is not its key's.
        let mut other = sys.clone();
        other.records[0].value.processes[0]
            .extra
            .get_mut("stream")
            .unwrap()["key_id"] = json!(key_id(&[6; KEY_BYTES]));
        assert!(
            problems(&other)[0].contains("is not published"),
            "{:?}",
            problems(&other)
        );
        let mut wrong = sys.clone();
        let c = wrong.campaign.as_mut().unwrap();
        c.value
            .pqperf
            .as_mut()
            .unwrap()
            .stream_keys
            .as_mut()
            .unwrap()[0]["key_id"] = json!("0011223344556677");
        let p = problems(&wrong);
        assert!(
            p.iter().any(|x| x.contains("pqperf.stream_keys[0].key_id")),
            "{p:?}"
        );
        // Without published keys nothing is checked.
        let mut none = bad.clone();
        none.campaign.as_mut().unwrap().value.pqperf = None;
        assert!(problems(&none).is_empty());
    }
}
