//! End-to-end tests of the measurement campaign with tiny real C candidates built by gcc:
//! crash, hang and rejecting-verify candidates are recorded and the campaign goes on; a
//! killed campaign resumes without redoing records or leaving torn files; two shards produce
//! exactly the records of an unsharded run.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pqperf_model::buildjson::{BuildEntry, BuildJson};

const TOY: &str = include_str!("measure/toy_sig.c");

fn pqperf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pqperf"))
}

/// Builds `lib/<cand>/lib<label>.so` from toy_sig.c with `defines` into `run` and lists it in
/// build.json with KAT PASS.
fn setup_run(run: &Path, instances: &[(&str, &str, &[&str])]) {
    std::fs::create_dir_all(run).unwrap();
    let src = run.join("toy_sig.c");
    std::fs::write(&src, TOY).unwrap();
    let mut bj = BuildJson::default();
    for (cand, label, defines) in instances {
        let rel = format!("lib/{cand}/lib{label}.so");
        let out = run.join(&rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let mut cmd = Command::new("gcc");
        cmd.args(["-O2", "-fPIC", "-shared", "-o"])
            .arg(&out)
            .arg(&src);
        cmd.arg(format!("-DTOY_ID=\"{cand}\""))
            .arg(format!("-DTOY_INSTANCE=\"{label}\""));
        for d in *defines {
            cmd.arg(format!("-D{d}"));
        }
        let st = cmd.status().expect("gcc");
        assert!(st.success(), "gcc failed for {cand}/{label}");
        bj.instances.insert(
            format!("{cand}/{label}"),
            BuildEntry {
                candidate: cand.to_string(),
                label: label.to_string(),
                instance: label.to_string(),
                variant: "reference".into(),
                flags: "guide".into(),
                kat: "PASS".into(),
                library: Some(rel),
                ..Default::default()
            },
        );
    }
    let text = pqperf_model::pyjson::to_string(&bj).unwrap();
    std::fs::write(run.join("build.json"), text).unwrap();
}

fn last_cpu() -> usize {
    pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap()
}

fn campaign(run: &Path, phase: &str, extra: &[&str]) -> Command {
    let mut c = pqperf();
    c.args(["campaign", phase, "--run-dir"])
        .arg(run)
        .args([
            "--allow-unfixed-host",
            "--probe-attempts",
            "1",
            "--register",
            "test machine (host not fixed)",
            "--systems",
        ])
        .arg(run.parent().unwrap().join("systems.csv"))
        .args(extra);
    c
}

fn ok(mut c: Command) -> String {
    let out = c.output().expect("run pqperf");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pqperf failed: {text}");
    text
}

fn record(run: &Path, cand: &str, label: &str, op: &str) -> serde_json::Value {
    let p = run.join(format!("records/{cand}/{label}__{op}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn record_files(run: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Ok(cands) = std::fs::read_dir(run.join("records")) else {
        return out;
    };
    for c in cands.flatten() {
        for f in std::fs::read_dir(c.path()).unwrap().flatten() {
            // Only finished records: a campaign killed mid-write may leave a hidden
            // `.<name>.<pid>.tmp` file, which the resumed campaign removes.
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            out.insert(format!(
                "{}/{}",
                c.file_name().to_string_lossy(),
                f.file_name().to_string_lossy()
            ));
        }
    }
    out
}

#[test]
fn crash_hang_and_rejecting_verify_are_recorded_and_the_campaign_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    setup_run(
        &run,
        &[
            ("sign-91", "good", &[]),
            ("sign-91", "segv", &["TOY_SEGV_IN_SIGN"]),
            ("sign-91", "hang", &["TOY_HANG_IN_SIGN"]),
            ("sign-91", "reject", &["TOY_REJECT_VERIFY"]),
        ],
    );
    let cpu = last_cpu().to_string();
    let common = [
        "--cpu",
        &cpu,
        "--trial-target",
        "0.002",
        "--calibration-timeout",
        "2",
        "--stack-region",
        "262144",
    ];
    ok(campaign(&run, "calibrate", &common));
    let log = ok(campaign(&run, "measure", &common));
    // Every operation of every instance has a record.
    let files = record_files(&run);
    for label in ["good", "segv", "hang", "reject"] {
        for op in ["keygen", "sign", "verify"] {
            assert!(
                files.contains(&format!("sign-91/{label}__{op}.json")),
                "missing {label} {op}: {files:?}\n{log}"
            );
        }
    }
    for op in ["keygen", "sign", "verify"] {
        let r = record(&run, "sign-91", "good", op);
        assert_eq!(r["status"], "complete", "{op}");
        assert_eq!(r["trials"].as_array().unwrap().len(), 5);
        assert!(r["measurements"].as_u64().unwrap() >= 100);
        assert!(r["pqperf"]["counter"].as_str().is_some());
        assert!(r["pqperf"]["per_call_seconds"]["p50"].as_f64().unwrap() > 0.0);
        // The untimed memory pass of the lean driver (issue 14): toy_sig.c uses a few bytes
        // of stack and no heap.
        let stack = r["pqperf"]["stack_bytes"].as_u64().expect("stack_bytes");
        assert!(stack > 0 && stack < 4096, "{op}: {stack}");
        assert_eq!(r["pqperf"]["stack_overflow"], false);
        assert_eq!(r["pqperf"]["stack_region_bytes"], 262144, "--stack-region");
        assert_eq!(r["pqperf"]["heap_peak_bytes"], 0, "{op}");
        assert_eq!(r["pqperf"]["heap_allocations"], 0, "{op}");
    }
    let segv = record(&run, "sign-91", "segv", "sign");
    assert_eq!(segv["status"], "failed_or_partial");
    assert_eq!(segv["processes"][0]["status"], "failed");
    assert_eq!(segv["processes"][0]["exit_code"], -11);
    assert!(segv["pqperf"].get("stack_bytes").is_none());
    assert!(
        segv["processes"][0]["stderr"]
            .as_str()
            .unwrap()
            .contains("SIGSEGV")
    );
    // keygen of the crashing candidate is unaffected.
    assert_eq!(
        record(&run, "sign-91", "segv", "keygen")["status"],
        "complete"
    );
    let hang = record(&run, "sign-91", "hang", "sign");
    assert_eq!(hang["status"], "failed_or_partial");
    assert_eq!(hang["processes"][0]["status"], "hard_timeout");
    assert_eq!(hang["processes"][0]["timeout_s"], 2.0);
    let rej = record(&run, "sign-91", "reject", "verify");
    assert_eq!(
        rej["status"], "complete",
        "a rejecting verifier is timed anyway"
    );
    let rejections: u64 = rej["processes"][0]["meta"]["verify_rejections"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rejections > 0);
    assert!(
        log.contains("measure sign-91 segv sign: failed_or_partial"),
        "{log}"
    );
    // campaign.json names the host problems and the counter.
    let camp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    // A fresh registry skips the published ids (x86_1, arm_1).
    assert!(camp["system_id"].as_str().unwrap().ends_with("_2"));
    assert!(camp["host_problems"].is_array());
    assert!(camp["pqperf"]["counter"].is_string());
    // What contained the candidate code (issue 11).
    assert_eq!(camp["pqperf"]["sandbox"]["sandbox"], "on");
    assert_eq!(camp["pqperf"]["sandbox"]["result_channel"], "private pipe");
}

fn no_temp_files(dir: &Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else if e.file_name().to_string_lossy().ends_with(".tmp") {
                return false;
            }
        }
    }
    true
}

#[test]
fn a_killed_campaign_resumes_without_redoing_records_or_torn_files() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let labels = ["a", "b", "c", "d"];
    let inst: Vec<(&str, &str, &[&str])> = labels
        .iter()
        .map(|l| ("sign-92", *l, &["TOY_WORK=20000"][..]))
        .collect();
    setup_run(&run, &inst);
    let cpu = last_cpu().to_string();
    let common = ["--cpu", cpu.as_str(), "--trial-target", "0.03"];
    ok(campaign(&run, "calibrate", &common));
    let mut child = campaign(&run, "measure", &common)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while record_files(&run).len() < 2 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = record_files(&run);
    assert!(!before.is_empty() && before.len() < 12, "{before:?}");
    let saved: Vec<(String, Vec<u8>)> = before
        .iter()
        .map(|f| {
            (
                f.clone(),
                std::fs::read(run.join("records").join(f)).unwrap(),
            )
        })
        .collect();
    for (f, bytes) in &saved {
        let v: serde_json::Value =
            serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("torn record {f}: {e}"));
        assert_eq!(v["schema"], 2);
    }
    let log = ok(campaign(&run, "measure", &common));
    let after = record_files(&run);
    assert_eq!(after.len(), 12, "{after:?}");
    for (f, bytes) in &saved {
        assert_eq!(
            &std::fs::read(run.join("records").join(f)).unwrap(),
            bytes,
            "{f} was redone"
        );
        let stem = f
            .trim_end_matches(".json")
            .replace("__", " ")
            .replace('/', " ");
        assert!(
            !log.contains(&format!("measure {stem}:")),
            "{f} measured again:\n{log}"
        );
    }
    assert!(no_temp_files(&run.join("records")));
}

#[test]
fn two_shards_produce_exactly_the_records_of_an_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = ["a", "b", "c", "d", "e"];
    let inst: Vec<(&str, &str, &[&str])> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (if i % 2 == 0 { "sign-93" } else { "sign-94" }, *l, &[][..]))
        .collect();
    let single = tmp.path().join("single");
    let sharded = tmp.path().join("sharded");
    setup_run(&single, &inst);
    setup_run(&sharded, &inst);
    let cpu = last_cpu().to_string();
    let common = ["--trial-target", "0.001", "--cpu", cpu.as_str()];
    ok(campaign(&single, "calibrate", &common));
    ok(campaign(&single, "measure", &common));
    let cpus = pqperf_ffi::affinity::get_affinity().unwrap();
    let cpus: Vec<String> = cpus.iter().take(2).map(|c| c.to_string()).collect();
    let mut par = pqperf();
    par.args(["campaign", "parallel", "--run-dir"])
        .arg(&sharded)
        .args(["--cpus", &cpus.join(","), "--trial-target", "0.001"])
        .args(["--allow-unfixed-host", "--probe-attempts", "1", "--systems"])
        .arg(tmp.path().join("systems.csv"));
    // The parallel launcher needs a registered system: register through the single run.
    ok(par);
    let a = record_files(&single);
    let b = record_files(&sharded);
    assert_eq!(a.len(), 15);
    assert_eq!(a, b);
    // Each record was measured by exactly one shard, and all ops of an instance on one CPU.
    let mut seen = BTreeSet::new();
    let mut text = String::new();
    for k in 1..=2 {
        text += &std::fs::read_to_string(sharded.join(format!("shard-{k}.out"))).unwrap();
    }
    for line in text.lines().filter(|l| l.contains(" measure sign-9")) {
        let what: String = line
            .split_whitespace()
            .skip(3)
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(seen.insert(what.clone()), "measured twice: {what}");
    }
    assert_eq!(seen.len(), 15, "{text}");
    for l in labels {
        let cand = if "ace".contains(l) {
            "sign-93"
        } else {
            "sign-94"
        };
        let cpus: BTreeSet<u64> = ["keygen", "sign", "verify"]
            .iter()
            .map(|op| {
                record(&sharded, cand, l, op)["environment"]["cpu_number"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(cpus.len(), 1, "{cand}/{l} ran on {cpus:?}");
    }
    let camp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sharded.join("campaign.json")).unwrap())
            .unwrap();
    assert_eq!(camp["shards"], 2);
}

#[test]
fn key_exchange_steps_and_hash_lengths_are_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(run.join("lib/kex-90")).unwrap();
    std::fs::create_dir_all(run.join("lib/hash-90")).unwrap();
    let src = run.join("toy_kex_hash.c");
    std::fs::write(&src, include_str!("measure/toy_kex_hash.c")).unwrap();
    let mut bj = BuildJson::default();
    for (cand, label, def) in [
        ("kex-90", "toykex", None),
        ("hash-90", "toyhash", Some("-DTOY_HASH")),
    ] {
        let rel = format!("lib/{cand}/lib{label}.so");
        let mut c = Command::new("gcc");
        c.args(["-O2", "-fPIC", "-shared", "-o"])
            .arg(run.join(&rel))
            .arg(&src);
        c.args(def);
        assert!(c.status().unwrap().success());
        bj.instances.insert(
            format!("{cand}/{label}"),
            BuildEntry {
                candidate: cand.into(),
                label: label.into(),
                instance: label.into(),
                variant: "reference".into(),
                flags: "guide".into(),
                kat: "NOKAT".into(),
                library: Some(rel),
                ..Default::default()
            },
        );
    }
    std::fs::write(
        run.join("build.json"),
        pqperf_model::pyjson::to_string(&bj).unwrap(),
    )
    .unwrap();
    let cpu = last_cpu().to_string();
    let common = ["--cpu", cpu.as_str(), "--trial-target", "0.001"];
    ok(campaign(&run, "calibrate", &common));
    ok(campaign(&run, "measure", &common));
    for op in [
        "exchange", "init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b",
    ] {
        let r = record(&run, "kex-90", "toykex", op);
        assert_eq!(r["status"], "complete", "{op}: {r}");
        assert_eq!(r["kat_not_passed"], true);
        assert_eq!(r["kex"]["kex_passes"], 2);
        assert_eq!(r["kex"]["kex_passes_run"], 2);
        assert_eq!(r["sizes"]["total_msg_bytes"], 32);
        let scope = if op == "exchange" {
            "loop"
        } else {
            "per_call_step"
        };
        assert_eq!(r["timing_scope"], scope, "{op}");
    }
    for n in [32, 128, 512, 1024, 4096, 8192, 16384, 65536] {
        let r = record(&run, "hash-90", "toyhash", &format!("hash_{n}"));
        assert_eq!(r["status"], "complete");
        assert_eq!(r["input_bytes"], n);
        assert_eq!(r["sizes"]["digest_bytes"], 32);
        assert!(r["throughput_MB_per_second"].as_f64().unwrap() > 0.0);
    }
}

/// Files of a published system folder (`performance/data/<sys>/…`), relative.
fn dataset_files(root: &Path, sys: &str) -> BTreeSet<String> {
    let base = root.join("performance/data").join(sys);
    pqperf_campaign::walk_files(&base)
        .into_iter()
        .map(|f| {
            f.strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[test]
fn shards_run_as_separate_hosts_merge_into_the_unsharded_dataset() {
    // Two shard jobs in their own run directories (as two hosts of one system, each having
    // built everything), the second one given its shard by a Slurm job array; merged and
    // published, they give the dataset of an unsharded run.
    let tmp = tempfile::tempdir().unwrap();
    let inst: Vec<(&str, &str, &[&str])> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, l)| (if i % 2 == 0 { "sign-93" } else { "sign-94" }, *l, &[][..]))
        .collect();
    let (single, s1, s2, merged) = (
        tmp.path().join("single"),
        tmp.path().join("host1"),
        tmp.path().join("host2"),
        tmp.path().join("merged"),
    );
    for r in [&single, &s1, &s2] {
        setup_run(r, &inst);
    }
    let cpu = last_cpu().to_string();
    let common = ["--trial-target", "0.001", "--cpu", cpu.as_str()];
    for phase in ["calibrate", "measure"] {
        ok(campaign(&single, phase, &common));
        let mut one = common.to_vec();
        one.extend(["--shard", "1/2"]);
        ok(campaign(&s1, phase, &one));
        let mut two = common.to_vec();
        two.extend(["--shard", "slurm"]);
        let mut c = campaign(&s2, phase, &two);
        c.env("SLURM_ARRAY_TASK_ID", "1")
            .env("SLURM_ARRAY_TASK_MIN", "0")
            .env("SLURM_ARRAY_TASK_COUNT", "2");
        ok(c);
    }
    let (r1, r2) = (record_files(&s1), record_files(&s2));
    assert!(!r1.is_empty() && !r2.is_empty(), "{r1:?} {r2:?}");
    assert!(r1.is_disjoint(&r2));
    let mut m = pqperf();
    m.args(["campaign", "merge", "--run-dir"])
        .arg(&merged)
        .arg("--from")
        .arg(&s1)
        .arg("--from")
        .arg(&s2);
    let text = ok(m);
    assert!(text.contains("merge: 9 records"), "{text}");
    assert_eq!(record_files(&merged), record_files(&single));
    let camp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("campaign.json")).unwrap())
            .unwrap();
    assert_eq!(camp["shards"], 2);
    assert_eq!(
        camp["pqperf"]["merged_from"],
        serde_json::json!(["host1", "host2"])
    );
    let published = |run: &Path| {
        let out = tmp
            .path()
            .join(format!("ds-{}", run.file_name().unwrap().to_string_lossy()));
        let mut c = campaign(run, "publish", &[]);
        c.arg("--publish-to").arg(&out);
        ok(c);
        let mut v = pqperf();
        v.arg("validate").arg(&out);
        ok(v);
        out
    };
    let (a, b) = (published(&single), published(&merged));
    let sys = camp["system_id"].as_str().unwrap();
    let files = dataset_files(&a, sys);
    assert!(files.contains("build.json") && files.len() > 9, "{files:?}");
    assert_eq!(files, dataset_files(&b, sys));
    // The same instances with the same libraries and KAT status.
    let bj = |root: &Path| -> BuildJson {
        pqperf_model::pyjson::read(
            &root.join("performance/data").join(sys).join("build.json"),
            Path::new("build.json"),
        )
        .unwrap()
    };
    let (ba, bb) = (bj(&a), bj(&b));
    assert_eq!(
        ba.instances.keys().collect::<Vec<_>>(),
        bb.instances.keys().collect::<Vec<_>>()
    );
    for (k, e) in &ba.instances {
        assert_eq!(e.kat, bb.instances[k].kat, "{k}");
        assert_eq!(e.library, bb.instances[k].library, "{k}");
    }
    // Shards of another system are refused, naming both.
    let other = tmp.path().join("other");
    setup_run(&other, &inst);
    let mut c = serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(s2.join("campaign.json")).unwrap(),
    )
    .unwrap();
    c["system_id"] = "arm_9".into();
    std::fs::write(other.join("campaign.json"), c.to_string()).unwrap();
    let out = pqperf()
        .args(["campaign", "merge", "--run-dir"])
        .arg(tmp.path().join("mixed"))
        .arg("--from")
        .arg(&s1)
        .arg("--from")
        .arg(&other)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("mixed systems") && err.contains("arm_9"),
        "{err}"
    );
    assert!(!tmp.path().join("mixed").exists());
    // A shard holding a symbolic link (to a file of this host) is refused, naming the link;
    // nothing is written.
    let secret = tmp.path().join("host-secret.json");
    std::fs::write(&secret, "{}").unwrap();
    let link = s2.join("records/planted__keygen.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let out = pqperf()
        .args(["campaign", "merge", "--run-dir"])
        .arg(tmp.path().join("linked"))
        .arg("--from")
        .arg(&s1)
        .arg("--from")
        .arg(&s2)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("symbolic link") && err.contains("planted__keygen.json"),
        "{err}"
    );
    assert!(!tmp.path().join("linked").exists());
}
