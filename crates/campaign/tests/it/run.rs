//! `run_phase` on hand-made run directories, with the fake timing driver
//! (`testdata/fake_driver.c`, built by gcc) in place of the real one: the measure phase
//! writes one record per planned operation and a second invocation skips them; a failing
//! candidate is recorded and the phase goes on; the refusals (unknown system, a run directory
//! of another system, planning changed under existing records, no registration) exit 2 and
//! measure nothing; a phase beside the measuring ones leaves their host facts.

use std::path::{Path, PathBuf};

use pqperf_campaign::{CampaignOptions, Exit, Phase, run_phase};
use pqperf_model::buildjson::BuildJson;
use serde_json::Value;

use pqperf_test_support::toy::{entry, fake_driver, write_build_json};

/// A run directory listing `labels` of candidate sign-96 in build.json with KAT PASS; the
/// library files exist (the fake driver never opens them; its mode is in the name).
fn hand_made_run(root: &Path, labels: &[&str]) -> PathBuf {
    let run = root.join("run");
    let mut bj = BuildJson::default();
    for l in labels {
        let rel = format!("lib/sign-96/lib{l}.so");
        std::fs::create_dir_all(run.join("lib/sign-96")).unwrap();
        std::fs::write(run.join(&rel), b"not a library").unwrap();
        bj.instances.insert(
            format!("sign-96/{l}"),
            entry("sign-96", l, "PASS", Some(rel)),
        );
    }
    write_build_json(&run, &bj);
    run
}

fn options(root: &Path, run: &Path) -> CampaignOptions {
    let mut o = CampaignOptions::new(run).unwrap();
    o.driver = fake_driver(root);
    o.allow_unfixed_host = true;
    o.probe_attempts = 1;
    o.echo = false;
    o.planning.trial_target_s = 0.001;
    o.calibration_timeout = std::time::Duration::from_secs(5);
    o.register = Some("test machine (host not fixed)".into());
    o
}

fn records(run: &Path) -> Vec<String> {
    let mut v: Vec<String> = pqperf_campaign::walk_files(&run.join("records"))
        .into_iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn status(run: &Path, label: &str, op: &str) -> Value {
    let p = run.join(format!("records/sign-96/{label}__{op}.json"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v["status"].clone()
}

#[test]
fn measure_records_each_planned_operation_once_and_a_rerun_skips_them() {
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete", "crashed"]);
    let o = options(d.path(), &run);
    // The crashed candidate (it crashes after its first trial) does not complete its
    // measurement: exit 1 (something failed), the rest done.
    assert_eq!(run_phase(Phase::Calibrate, &o).unwrap().code, Exit::Done);
    let out = run_phase(Phase::Measure, &o).unwrap();
    assert_eq!(out.code, Exit::Failed);
    assert_eq!((out.totals.records, out.totals.skipped), (6, 0));
    // A registered machine never gets the id of a published reference system (x86_1, arm_1).
    assert!(out.system_id.as_deref().is_some_and(|s| s.ends_with("_2")));
    assert_eq!(records(&run).len(), 6, "{:?}", records(&run));
    for op in ["keygen", "sign", "verify"] {
        assert_eq!(status(&run, "complete", op), "complete", "{op}");
        assert_eq!(status(&run, "crashed", op), "failed_or_partial", "{op}");
    }
    // Resumable by file existence: nothing measured again.
    let again = run_phase(Phase::Measure, &o).unwrap();
    assert_eq!(again.code, Exit::Done);
    assert_eq!((again.totals.records, again.totals.skipped), (0, 6));
    // campaign.json keeps one host check per invocation and the system.
    let camp: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(camp["host_checks"].as_array().map(Vec::len), Some(3));
    assert_eq!(camp["system_id"].as_str(), out.system_id.as_deref());
    // What other commands recorded under `pqperf` (here an A–A noise floor of `pqperf
    // compare --record-noise-floor`) survives a later phase, which rewrites its own keys.
    let mut c = camp.clone();
    c["pqperf"]["noise_floor"] = serde_json::json!({"median_abs_change": 0.07});
    c["pqperf"]["tick_hz"] = serde_json::json!(1);
    std::fs::write(run.join("campaign.json"), c.to_string()).unwrap();
    assert_eq!(run_phase(Phase::Measure, &o).unwrap().code, Exit::Done);
    let camp: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(camp["pqperf"]["noise_floor"]["median_abs_change"], 0.07);
    assert_ne!(
        camp["pqperf"]["tick_hz"], 1,
        "this phase's own facts replace old ones"
    );
}

#[test]
fn refusals_exit_2_and_measure_nothing() {
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete"]);
    let refused = |o: &CampaignOptions| {
        let out = run_phase(Phase::Measure, o).unwrap();
        assert_eq!(out.code, Exit::Refused);
        assert!(records(&run).is_empty(), "{:?}", records(&run));
    };
    // A --system that systems.csv does not list (without --register, which would register
    // this machine under that id).
    let mut o = options(d.path(), &run);
    o.system = Some("x86_99".into());
    o.register = None;
    refused(&o);
    // This machine unregistered and no --register.
    let mut o = options(d.path(), &run);
    o.register = None;
    refused(&o);
    // The run directory belongs to another system.
    let o = options(d.path(), &run);
    assert_eq!(run_phase(Phase::Calibrate, &o).unwrap().code, Exit::Done);
    let camp = run.join("campaign.json");
    let mut c: Value = serde_json::from_str(&std::fs::read_to_string(&camp).unwrap()).unwrap();
    let mine = c["system_id"].clone();
    c["system_id"] = "x86_98".into();
    std::fs::write(&camp, c.to_string()).unwrap();
    refused(&o);
    // Planning changed while records exist: refused before anything is measured again.
    c["system_id"] = mine;
    std::fs::write(&camp, c.to_string()).unwrap();
    assert_eq!(run_phase(Phase::Measure, &o).unwrap().code, Exit::Done);
    let before = records(&run);
    assert_eq!(before.len(), 3);
    let mut other = options(d.path(), &run);
    other.planning.trial_target_s = 0.002;
    let out = run_phase(Phase::Measure, &other).unwrap();
    assert_eq!(out.code, Exit::Refused);
    assert_eq!(records(&run), before);
}

/// `all` calls the stages itself, build first: without a catalog it stops with the build
/// stage's error naming what to run, before anything is measured.
#[test]
fn all_without_a_catalog_stops_at_build_naming_import() {
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete"]);
    let o = options(d.path(), &run);
    let e = run_phase(Phase::All, &o).unwrap_err();
    assert!(e.to_string().contains("run `pqperf import"), "{e}");
    assert!(records(&run).is_empty());
}

/// A stage's phase that cannot run keeps its error's source: the hash-cost lock that cannot
/// be taken (its folder is a file) is the io::Error under `hashcost lock: …`.
#[test]
fn a_stage_error_keeps_its_source() {
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete"]);
    let mut o = options(d.path(), &run);
    let file = d.path().join("not-a-folder");
    std::fs::write(&file, b"").unwrap();
    o.lock_dir = Some(file);
    let e = run_phase(Phase::Hashcost, &o).unwrap_err();
    assert!(e.to_string().starts_with("hashcost lock: "), "{e}");
    let io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    assert!(io.is_some(), "the lock's io::Error is the source");
}

/// A phase runs holding its run directory's lock (`PhaseCtx::run`, a `LockedRun`): while the
/// hash-cost phase waits for its own host-wide lock (held here), another writer cannot take
/// the run directory's; once the phase has ended, it can.
#[test]
fn a_phase_runs_holding_the_run_directory_lock() {
    use nix::fcntl::{Flock, FlockArg};
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete"]);
    let mut o = options(d.path(), &run);
    o.lock_dir = Some(d.path().join("locks"));
    let try_lock = |p: &Path| {
        let f = std::fs::File::open(p).unwrap();
        Flock::lock(f, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| e)
    };
    let held =
        pqperf_ffi::procinfo::lock_exclusive(&d.path().join("locks/.hashcost.lock")).unwrap();
    let lock = pqperf_model::layout::RunLayout::new(&run).run_lock();
    let phase = std::thread::spawn(move || run_phase(Phase::Hashcost, &o).unwrap().code);
    let t0 = std::time::Instant::now();
    loop {
        if lock.is_file() && try_lock(&lock).err() == Some(nix::errno::Errno::EWOULDBLOCK) {
            break;
        }
        assert!(
            t0.elapsed().as_secs() < 120,
            "the phase never took the run lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(held);
    assert_eq!(phase.join().unwrap(), Exit::Done);
    assert!(try_lock(&lock).is_ok(), "released when the phase ended");
}

/// A phase run beside the measuring phases (`beside_measuring`, the demo's ct and count on
/// another CPU) records its host check and command but leaves the run's host facts, which
/// describe the benchmark CPU, as the measuring phase wrote them.
#[test]
fn a_phase_beside_the_measuring_ones_leaves_their_host_facts() {
    let d = tempfile::tempdir().unwrap();
    let run = hand_made_run(d.path(), &["complete"]);
    let o = options(d.path(), &run);
    assert_eq!(run_phase(Phase::Calibrate, &o).unwrap().code, Exit::Done);
    let read = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap()
    };
    let before = read();
    let mut beside = o.clone();
    beside.beside_measuring = true;
    beside.shared_run_lock = true;
    beside.register = None;
    beside.cpu = 0;
    // No catalog: the check itself fails (logged), the phase's bookkeeping is what counts.
    run_phase(Phase::Ct, &beside).unwrap();
    let after = read();
    for key in ["environment_at_start", "environment_at_end", "system_id"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    for key in ["counter", "counter_hz", "tick_hz", "tick_source", "sandbox"] {
        assert_eq!(after["pqperf"][key], before["pqperf"][key], "pqperf.{key}");
    }
    let last = after["host_checks"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["phase"].as_str(), last["cpu"].as_u64()),
        (Some("ct"), Some(0))
    );
    let commands = after["pqperf"]["commands"].to_string();
    assert!(commands.contains("pqperf campaign ct"), "{commands}");
    assert!(commands.contains("pqperf campaign calibrate"), "{commands}");
}
