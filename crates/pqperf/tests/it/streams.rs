//! Independent input streams (issue 37): under pqperf's own protocol (`--target-ci`) every
//! driver process of an operation gets its own DRNG seed, derived from the reference seed and
//! the process index (`pqperf_model::stream::process_seed`), passed on its argv and recorded
//! in its process entry; the reference protocol (`--trial-target`, no `--target-ci`) keeps the
//! reference's fixed seed in every process. Campaign decisions only: the fake timing driver
//! (`testdata/fake_driver.c`) echoes the seed it was given as `META fake_seed`.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::toy::{Lib, TOY_SIG, toy_run};

fn campaign(run: &Path, phase: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pqperf"));
    c.args(common::toy::campaign_args(run, phase))
        .args(extra)
        .env(pqperf_campaign::lease::LEASE_DIR_ENV, run.parent().unwrap());
    c
}

fn ok(mut c: Command) -> String {
    let out = c.output().expect("run pqperf");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pqperf failed: {text}");
    text
}

fn record(run: &Path, label: &str, op: &str) -> serde_json::Value {
    let p = run.join(format!("records/sign-92/{label}__{op}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// The value after `--seed` on a process's argv.
fn argv_seed(p: &serde_json::Value) -> Option<String> {
    let cmd: Vec<&str> = p["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    cmd.iter()
        .position(|a| *a == "--seed")
        .map(|i| cmd[i + 1].to_string())
}

#[test]
fn own_protocol_processes_get_their_own_streams_and_the_reference_keeps_the_fixed_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let cpu = common::last_cpu();
    for (name, protocol) in [
        ("reference", &["--trial-target", "0.002"][..]),
        ("target-ci", &["--target-ci", "1"][..]),
    ] {
        let run = tmp.path().join(name);
        toy_run(
            &run,
            "toy_sig.c",
            TOY_SIG,
            &[Lib::new("sign-92", "complete-a")],
        );
        let mut opts = vec!["--cpu", cpu.as_str()];
        opts.extend_from_slice(protocol);
        let mut said = String::new();
        for phase in ["calibrate", "measure"] {
            let mut c = campaign(&run, phase, &opts);
            c.env("PQPERF_DRIVER", &fake);
            said = ok(c);
        }
        // `campaign measure`'s console line leads with the robust estimate and its interval,
        // the reference mean after it.
        let line = said
            .lines()
            .find(|l| l.contains("measure sign-92 complete-a sign: complete"))
            .unwrap_or_else(|| panic!("no measure line for sign: {said}"));
        assert!(
            line.contains(" ± ") && line.contains(" % (") && line.contains("; mean "),
            "{line}"
        );
        assert!(
            line.find(" ± ").unwrap() < line.find("; mean ").unwrap(),
            "{line}"
        );
        for op in ["keygen", "sign", "verify"] {
            let r = record(&run, "complete-a", op);
            assert_eq!(r["status"], "complete", "{name} {op}: {r}");
            let procs = r["processes"].as_array().unwrap();
            assert!(procs.len() >= 2, "{name} {op}: {} processes", procs.len());
            if name == "reference" {
                assert_eq!(r["pqperf"]["protocol"], "reference", "{r}");
                for p in procs {
                    assert_eq!(argv_seed(p), None, "{name} {op}: {p}");
                    assert!(p.get("stream").is_none(), "{p}");
                    assert_eq!(p["meta"]["fake_seed"], "reference", "{p}");
                }
                continue;
            }
            assert_eq!(r["pqperf"]["protocol"], "target_ci", "{r}");
            // At least 8 processes (compare measures the between-run drift from 8 a side).
            assert!(
                procs.len() as u64 >= pqperf_measure::decide::MIN_TARGET_CI_TRIALS,
                "{op}: {} processes",
                procs.len()
            );
            assert_eq!(
                r["pqperf"]["adaptive"]["planned_trials"].as_u64(),
                Some(pqperf_measure::decide::MIN_TARGET_CI_TRIALS),
                "{r}"
            );
            // The run's fresh stream key, published once the phase had measured.
            let key = published_key(&run);
            let mut seeds = BTreeSet::new();
            for p in procs {
                let i = p["stream"]["index"].as_u64().unwrap();
                let seed = p["stream"]["seed"].as_str().unwrap();
                // Recomputable from the published key and the index, on the (fake) driver's
                // argv, and what the driver was given.
                assert_eq!(
                    seed,
                    pqperf_model::stream::seed_hex(&pqperf_model::stream::keyed_process_seed(
                        &key, i
                    ))
                );
                assert_eq!(
                    p["stream"]["key_id"],
                    pqperf_model::stream::key_id(&key),
                    "{p}"
                );
                assert_ne!(
                    seed,
                    pqperf_model::stream::seed_hex(&pqperf_model::stream::process_seed(i)),
                    "not the public derivation"
                );
                assert_eq!(argv_seed(p).as_deref(), Some(seed), "{p}");
                assert_eq!(p["meta"]["fake_seed"], seed, "{p}");
                // What pairing two runs by stream needs: the input mapping, where the sampled
                // calls sit (input index 0 whatever the calibration), how many sampled trials.
                assert_eq!(
                    p["stream"]["inputs"],
                    pqperf_model::stream::CALL_INPUTS,
                    "{p}"
                );
                let iters = r["plan"]["iterations_per_trial"].as_u64().unwrap();
                let warmups = r["plan"]["warmups"].as_u64().unwrap();
                assert_eq!(
                    p["stream"]["first_sampled_call"].as_u64(),
                    Some(pqperf_model::stream::first_sampled_call(warmups, 1, iters)),
                    "{p}"
                );
                assert_eq!(p["stream"]["first_sampled_call"].as_u64(), Some(0), "{p}");
                if p["status"] == "complete" {
                    assert_eq!(p["stream"]["sampled_trials"].as_u64(), Some(1), "{p}");
                }
                seeds.insert(seed.to_string());
            }
            assert_eq!(
                seeds.len(),
                procs.len(),
                "{op}: every process its own stream"
            );
        }
        if name == "reference" {
            let c = std::fs::read_to_string(run.join("campaign.json")).unwrap();
            assert!(
                !c.contains("stream_keys"),
                "no key for the reference protocol"
            );
            continue;
        }
        // A second run without --stream-key draws another key; with the first run's key its
        // processes get the first run's seeds (what `compare` pairs).
        let first = published_key(&run);
        let seeds_of = |run: &Path| -> Vec<String> {
            record(run, "complete-a", "sign")["processes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["stream"]["seed"].as_str().unwrap().to_string())
                .collect()
        };
        let before = seeds_of(&run);
        let hex = pqperf_model::stream::key_hex(&first);
        for (again, extra) in [("fresh", None), ("reused", Some(hex.as_str()))] {
            let mut o = opts.clone();
            o.push("--redo");
            if let Some(k) = extra {
                o.extend(["--stream-key", k]);
            }
            let mut c = campaign(&run, "measure", &o);
            c.env("PQPERF_DRIVER", &fake);
            let said = ok(c);
            let after = seeds_of(&run);
            if extra.is_some() {
                assert_eq!(after[..2], before[..2], "{again}");
                assert!(said.contains("reused with --stream-key"), "{said}");
            } else {
                assert_ne!(after[0], before[0], "{again}");
                assert!(said.contains("(fresh)"), "{said}");
            }
        }
        let c: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap())
                .unwrap();
        let keys = c["pqperf"]["stream_keys"].as_array().unwrap();
        assert_eq!(keys.len(), 2, "{keys:?}");
        assert_eq!(keys[1]["reused"], false);
        assert_eq!(keys[0]["reused"], false);
        // A bad key is refused naming the option.
        let out = campaign(&run, "measure", &["--stream-key", "00ff"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--stream-key"));
    }
}

/// The last stream key published in the run's campaign.json.
fn published_key(run: &Path) -> [u8; 32] {
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    let keys = c["pqperf"]["stream_keys"].as_array().expect("stream_keys");
    pqperf_model::stream::parse_key_hex(keys.last().unwrap()["key"].as_str().unwrap()).unwrap()
}

/// The whole key exchange under pqperf's own protocol with the real driver: its timing
/// processes get each window's DRNG seed with the parent's `go` (`--relayed`, no seed on
/// the argv, issue 36) and complete; so do the processes of each step timed alone.
#[test]
fn a_key_exchange_of_the_own_protocol_gets_its_window_seeds_with_go() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(run.join("lib/kex-90")).unwrap();
    let src = run.join("toy_kex_hash.c");
    std::fs::write(&src, include_str!("../measure/toy_kex_hash.c")).unwrap();
    let rel = "lib/kex-90/libtoykex.so";
    let st = Command::new("gcc")
        .args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(run.join(rel))
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let mut bj = pqperf_model::buildjson::BuildJson::default();
    bj.instances.insert(
        "kex-90/toykex".into(),
        common::toy::entry("kex-90", "toykex", "NOKAT", Some(rel.into())),
    );
    common::toy::write_build_json(&run, &bj);
    let cpu = common::last_cpu();
    let opts = ["--cpu", cpu.as_str(), "--target-ci", "20"];
    for phase in ["calibrate", "measure"] {
        ok(campaign(&run, phase, &opts));
    }
    for op in ["exchange", "init_a", "pass1", "derive_b"] {
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("records/kex-90/toykex__{op}.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(r["status"], "complete", "{op}: {r}");
        assert_eq!(r["pqperf"]["protocol"], "target_ci", "{r}");
        // The exchange's processes have sampled windows besides the reference ones; a step
        // timed alone has none.
        let least = if op == "exchange" { 2 } else { 1 };
        for p in r["processes"].as_array().unwrap() {
            assert_eq!(p["status"], "complete", "{op}: {p}");
            assert_eq!(argv_seed(p), None, "{p}");
            assert!(p["command"].to_string().contains("--relayed"), "{p}");
            assert!(
                p["relayed_inputs"]["windows"].as_u64().unwrap() >= least,
                "{p}"
            );
            assert!(p["stream"]["seed"].is_string(), "{p}");
        }
    }
}

/// `pqperf validate` recomputes every process's seed from the stream key campaign.json
/// publishes (issue 36, `pqperf_validate` `streams`): a dataset published from an own-protocol
/// campaign of the real driver has no problem; the same dataset with one process's seed
/// changed has exactly that problem, naming the record, the process and its index.
#[test]
fn validate_recomputes_every_seed_from_the_published_key() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    toy_run(
        &run,
        "toy_sig.c",
        TOY_SIG,
        &[Lib::new("sign-92", "honest").defines(&["TOY_WORK=20000"])],
    );
    let cpu = common::last_cpu();
    let opts = ["--cpu", cpu.as_str(), "--target-ci", "20"];
    for phase in ["calibrate", "measure"] {
        ok(campaign(&run, phase, &opts));
    }
    let ds = tmp.path().join("ds");
    ok(campaign(
        &run,
        "publish",
        &["--publish-to", ds.to_str().unwrap()],
    ));
    let validate = || {
        let out = Command::new(env!("CARGO_BIN_EXE_pqperf"))
            .arg("validate")
            .arg(&ds)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = validate();
    assert_eq!(code, Some(0), "{text}");
    // The method page says the seeds were secret and recomputable.
    let pages = tmp.path().join("pages");
    let out = Command::new(env!("CARGO_BIN_EXE_pqperf"))
        .arg("report")
        .arg(&ds)
        .arg("--out")
        .arg(&pages)
        .args(["--pages", "method"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let method: Vec<String> = walk(&pages)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|t| t.contains("- Input streams:"))
        .collect();
    assert!(!method.is_empty(), "no method page");
    assert!(
        method.iter().all(|t| t.contains(
            "so no candidate could compute its timed inputs ahead; `pqperf validate` recomputes every seed from the published key"
        )),
        "{method:?}"
    );
    // One seed changed in the published record.
    let recs: Vec<std::path::PathBuf> = walk(&ds)
        .into_iter()
        .filter(|p| p.ends_with("honest__sign.json"))
        .collect();
    assert_eq!(recs.len(), 1, "{recs:?}");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&recs[0]).unwrap()).unwrap();
    let key = published_key(&run);
    let s = &mut v["processes"][1]["stream"];
    let index = s["index"].as_u64().unwrap();
    assert_eq!(
        s["seed"],
        pqperf_model::stream::seed_hex(&pqperf_model::stream::keyed_process_seed(&key, index))
    );
    s["seed"] = serde_json::Value::from(pqperf_model::stream::seed_hex(
        &pqperf_model::stream::keyed_process_seed(&key, index + 100),
    ));
    std::fs::write(&recs[0], pqperf_model::pyjson::value_to_string(&v)).unwrap();
    let (code, text) = validate();
    assert_eq!(code, Some(1), "{text}");
    let problems: Vec<&str> = text.lines().filter(|l| l.contains("stream")).collect();
    assert_eq!(problems.len(), 1, "{text}");
    assert!(
        problems[0].contains("records/sign-92/honest__sign.json: processes[1].stream.seed")
            && problems[0].contains(&format!("stream index {index}")),
        "{text}"
    );
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
