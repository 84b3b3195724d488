//! Robustness of the evidence round trip: unknown keys anywhere are kept in place, nulls and
//! absent keys stay as they were, values built in code serialise in declaration order, and
//! statistics written back after changing trials validate again.

use std::path::Path;

use pqperf_model::golden::golden_harness;
use pqperf_model::record::PqperfRecordExt;
use pqperf_model::stats::{ProcessTotals, Quantiles};
use pqperf_model::{BuildJson, Campaign, Profile, Record, RecordStats, Trial, pyjson};
use proptest::prelude::*;
use serde_json::{Map, Value};

const REC: &str = "performance/data/x86_1/records/sign-02/BiT-128__sign.json";

fn golden_text(rel: &str) -> Option<String> {
    let root = golden_harness()?;
    Some(std::fs::read_to_string(root.join(rel)).unwrap())
}

/// Objects of a record that are evidence structs or open maps (not typed-value maps such as
/// `sizes`), as JSON pointers.
const TARGETS: [&str; 8] = [
    "",
    "/plan",
    "/environment",
    "/processes/0",
    "/processes/2/meta",
    "/processes/4/trials/0",
    "/trials/3",
    "/processes/1",
];

/// Insert `key: value` at position `pos` of the object at JSON pointer `ptr`.
fn insert_at(v: &mut Value, ptr: &str, pos: usize, key: &str, value: Value) {
    let Some(Value::Object(m)) = v.pointer_mut(ptr) else {
        panic!("no object at {ptr}")
    };
    let pos = pos % (m.len() + 1);
    let mut out = Map::new();
    for (i, (k, x)) in std::mem::take(m).into_iter().enumerate() {
        if i == pos {
            out.insert(key.to_string(), value.clone());
        }
        out.insert(k, x);
    }
    if !out.contains_key(key) {
        out.insert(key.to_string(), value);
    }
    *m = out;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn unknown_keys_anywhere_survive_typed_round_trips(
        target in 0usize..TARGETS.len(),
        pos in 0usize..64,
        key in "x_[a-z]{1,6}",
        val in prop_oneof![Just(Value::Null), any::<i32>().prop_map(Value::from), "[ -~]{0,8}".prop_map(Value::from), (0.0f64..1e9).prop_map(Value::from)],
    ) {
        let Some(text) = golden_text(REC) else { return Ok(()) };
        let mut v: Value = serde_json::from_str(&text).unwrap();
        insert_at(&mut v, TARGETS[target], pos, &key, val);
        let want = pyjson::value_to_string(&v);
        let rec: Record = pyjson::from_str(Path::new(REC), &want).unwrap();
        prop_assert_eq!(pyjson::to_string(&rec).unwrap(), want);
    }

    #[test]
    fn changed_trials_recomputed_stats_round_trip(scale in prop::collection::vec(0.5f64..2.0, 5), extra_m in 0u64..50) {
        let Some(text) = golden_text(REC) else { return Ok(()) };
        let mut rec: Record = pyjson::from_str(Path::new(REC), &text).unwrap();
        for (p, s) in rec.processes.iter_mut().zip(&scale) {
            p.trials[0].seconds *= s;
            p.trials[0].measurements += extra_m;
        }
        let pt = ProcessTotals::of(&rec.processes);
        rec.trials = pt.trials;
        let st = RecordStats::of_record(&rec).unwrap();
        st.apply_to(&mut rec);
        let out = pyjson::to_string(&rec).unwrap();
        let back: Record = pyjson::from_str(Path::new(REC), &out).unwrap();
        prop_assert_eq!(RecordStats::of_record(&back).unwrap(), st);
        prop_assert_eq!(pyjson::to_string(&back).unwrap(), out);
    }
}

#[test]
fn absent_and_null_keys_keep_their_form() {
    let Some(text) = golden_text("performance/data/x86_1/build.json") else {
        return;
    };
    // elf_load_bytes: absent in one entry, null in another.
    let t = text
        .replacen("   \"elf_load_bytes\": 54005,\n", "", 1)
        .replacen("\"elf_load_bytes\": 54253", "\"elf_load_bytes\": null", 1);
    let b: BuildJson = pyjson::from_str(Path::new("build.json"), &t).unwrap();
    assert_eq!(b.entry("sign-02", "BiT-128").unwrap().elf_load_bytes, None);
    assert_eq!(b.entry("sign-02", "BiT-256").unwrap().elf_load_bytes, None);
    assert_eq!(pyjson::to_string(&b).unwrap(), t);
}

#[test]
fn campaign_key_orders_differ_per_system_and_survive() {
    for sys in ["arm_1", "x86_1"] {
        let rel = format!("performance/data/{sys}/campaign.json");
        let Some(text) = golden_text(&rel) else {
            return;
        };
        let c: Campaign = pyjson::from_str(Path::new(&rel), &text).unwrap();
        let first = c.key_order.keys().next().unwrap().to_string();
        assert_eq!(first == "system_id", sys == "arm_1");
        assert_eq!(pyjson::to_string(&c).unwrap(), text);
    }
}

#[test]
fn values_built_in_code_use_declaration_order_and_skip_absent_options() {
    let mut r = Record {
        schema: 2,
        status: "complete".into(),
        candidate: "kem-90".into(),
        trials: vec![Trial {
            measurements: 3,
            seconds: 0.5,
            cycles: Some(9),
            ..Default::default()
        }],
        ..Default::default()
    };
    let text = pyjson::to_string(&r).unwrap();
    assert!(
        text.starts_with(
            "{\n \"schema\": 2,\n \"status\": \"complete\",\n \"candidate\": \"kem-90\","
        ),
        "{text}"
    );
    assert!(!text.contains("\"pqperf\""), "{text}");
    assert!(text.contains("\"kat_log\": null"), "{text}");
    assert!(
        text.contains("\"throughput_MB_per_second\": null"),
        "{text}"
    );
    r.pqperf = Some(PqperfRecordExt {
        version: Some("0.1.0".into()),
        per_call_seconds: Quantiles::of(&[1.0, 2.0, 3.0]),
        ..Default::default()
    });
    let text = pyjson::to_string(&r).unwrap();
    assert!(text.contains("\"pqperf\": {\n  \"version\": \"0.1.0\",\n  \"per_call_seconds\": {\n   \"samples\": 3,\n   \"method\": \"linear\""), "{text}");
    let back: Record = pyjson::from_str(Path::new("r.json"), &text).unwrap();
    assert_eq!(back, r);
}

#[test]
fn profile_with_integer_zero_hash_share_round_trips() {
    let Some(text) = golden_text("performance/data/arm_1/profile/sign-02/BiT-128__sign.json")
    else {
        return;
    };
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["calls"] = Value::Array(vec![v["calls"][0].clone()]);
    v["share"] = serde_json::json!({"drng": 30655.0 / 12645448.0});
    v["hash_share"] = Value::from(0);
    let t = pyjson::value_to_string(&v);
    assert!(t.contains("\"hash_share\": 0\n"));
    let p: Profile = pyjson::from_str(Path::new("p.json"), &t).unwrap();
    assert_eq!(pyjson::to_string(&p).unwrap(), t);
    let (share, hash) = p.recompute_shares().unwrap();
    assert_eq!(hash, Value::from(0));
    assert_eq!(share["drng"], p.share["drng"]);
}

#[test]
fn type_error_in_a_typed_map_names_field_and_line() {
    let Some(text) = golden_text(REC) else { return };
    let t = text.replacen("\"pk_bytes\": 1048", "\"pk_bytes\": \"1048\"", 1);
    let e = pqperf_model::dataset::record_from_str(Path::new(REC), &t).unwrap_err();
    let msg = e.to_string();
    let lines: Vec<&str> = t.lines().collect();
    let line = lines
        .iter()
        .rposition(|l| l.contains("\"pk_bytes\": \"1048\""))
        .unwrap()
        + 1;
    assert!(
        msg.starts_with(&format!(
            "{REC}:{line}:3: sizes.pk_bytes: invalid type: string"
        )),
        "{msg}"
    );
    assert_eq!(e.field(), Some("sizes.pk_bytes"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Truncated or corrupted evidence never panics; the error names the file and a line.
    #[test]
    fn corrupted_json_gives_located_errors(cut in 0usize..20000, pos in 0usize..20000, byte in prop::sample::select(vec![b'{', b'}', b'"', b',', b'x', b'0', b'\n', b':'])) {
        let Some(text) = golden_text(REC) else { return Ok(()) };
        let cut = cut % (text.len() - 1); // dropping only the final newline would still be valid
        let truncated = &text[..cut];
        match pqperf_model::dataset::record_from_str(Path::new(REC), truncated) {
            Ok(_) => prop_assert!(false, "truncated record at {cut} parsed"),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with(&format!("{REC}:")), "{}", msg);
                prop_assert!(msg[REC.len() + 1..].split(':').next().unwrap().parse::<usize>().is_ok(), "no line: {}", msg);
            }
        }
        let mut bytes = text.clone().into_bytes();
        let pos = pos % bytes.len();
        bytes[pos] = byte;
        if let Ok(corrupt) = String::from_utf8(bytes)
            && let Err(e) = pqperf_model::dataset::record_from_str(Path::new(REC), &corrupt)
        {
            prop_assert!(e.to_string().starts_with(&format!("{REC}:")), "{}", e);
        }
    }

    #[test]
    fn arbitrary_csv_and_logs_never_panic(text in "[a-z;\"#\n\r 0-9=]{0,200}") {
        let _ = pqperf_model::CsvTable::parse(Path::new("x.csv"), &text).map(|t| {
            let _ = t.external_sizes();
            let _ = t.kat_issues();
            let _ = t.security_targets();
            t.to_text()
        });
        let _ = pqperf_model::KatLog::parse(Path::new("x.log"), &text);
        let _ = pqperf_model::KatManifest::parse(Path::new("kat.sha256"), &text);
    }
}
