//! The reference protocol on independent streams (`--independent-streams`, issue 41): every
//! driver process gets its own keyed stream seed, as under `--target-ci`, while the record
//! stays a reference-protocol record (its plan, no trials added); the run's stream key is
//! published once the phase has measured. Campaign decisions only: the fake timing driver
//! (`testdata/fake_driver.c`) echoes the seed it was given as `META fake_seed`.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

use common::toy::{Lib, TOY_SIG, toy_run};

#[test]
fn the_reference_protocol_on_independent_streams_gives_each_process_its_own_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let cpu = common::last_cpu();
    let run = tmp.path().join("run");
    toy_run(
        &run,
        "toy_sig.c",
        TOY_SIG,
        &[Lib::new("sign-92", "complete-a")],
    );
    let opts = [
        "--cpu",
        cpu.as_str(),
        "--trial-target",
        "0.002",
        "--independent-streams",
    ];
    for phase in ["calibrate", "measure"] {
        let out = Command::new(env!("CARGO_BIN_EXE_pqperf"))
            .args(common::toy::campaign_args(&run, phase))
            .args(opts)
            .env(pqperf_campaign::lease::LEASE_DIR_ENV, tmp.path())
            .env("PQPERF_DRIVER", &fake)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{phase}: {text}");
    }
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    let keys = c["pqperf"]["stream_keys"].as_array().expect("stream_keys");
    let key =
        pqperf_model::stream::parse_key_hex(keys.last().unwrap()["key"].as_str().unwrap()).unwrap();
    for op in ["keygen", "sign", "verify"] {
        let p = run.join(format!("records/sign-92/complete-a__{op}.json"));
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(r["status"], "complete", "{op}: {r}");
        assert_eq!(r["pqperf"]["protocol"], "reference", "{op}: {r}");
        assert!(r["pqperf"]["adaptive"].is_null(), "{op}: {r}");
        let procs = r["processes"].as_array().unwrap();
        assert_eq!(procs.len() as u64, r["plan"]["trials"].as_u64().unwrap());
        let mut seeds = BTreeSet::new();
        for p in procs {
            let i = p["stream"]["index"].as_u64().unwrap();
            let seed = p["stream"]["seed"].as_str().unwrap();
            assert_eq!(
                seed,
                pqperf_model::stream::seed_hex(&pqperf_model::stream::keyed_process_seed(&key, i)),
                "{op}: {p}"
            );
            // What the (fake) driver was given: the process's own seed, not the reference's.
            assert_eq!(p["meta"]["fake_seed"], seed, "{op}: {p}");
            seeds.insert(seed.to_string());
        }
        assert_eq!(
            seeds.len(),
            procs.len(),
            "{op}: every process its own stream"
        );
    }
}
