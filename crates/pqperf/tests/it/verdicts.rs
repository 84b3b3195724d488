//! Verdicts that survive a busy machine (issue 24), end to end through the `pqperf` binary:
//! `pqperf ab` (interleaved pairs) and `pqperf compare` of two separately measured runs, on
//! real driver processes of the fake timing driver (`testdata/fake_driver.c`, built by gcc,
//! `$PQPERF_DRIVER`), whose per-call times are canned: a library whose file name says
//! `slower` takes 1250 ns a call instead of 1000 ns, one that says `busy` reports a canary
//! twice as slow (a machine at half speed). So every verdict here follows from the
//! evidence's logic, never from how fast this machine is: the schedule of pairs is the
//! seeded one, a real regression is slower and fails the gate, an A–A pair is no change, a
//! slower machine on one side makes the verdict inconclusive (never a gate failure), and a
//! comparison with nothing comparable is refused. The real driver's canary line is checked
//! in a real process of the real driver on a tiny gcc-built candidate.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};

/// Builds `lib/<cand>/lib<label>.so` from toy_sig.c into `run` for each label and lists
/// them in build.json with KAT PASS (each with a library digest of its own).
fn setup_run(run: &Path, cand: &str, labels: &[&str]) {
    let libs: Vec<Lib> = labels.iter().map(|l| Lib::new(cand, l)).collect();
    let mut bj = toy_run(run, "toy_sig.c", TOY_SIG, &libs);
    for e in bj.instances.values_mut() {
        e.library_sha256 = Some(format!("sha-of-{}", e.label));
    }
    write_build_json(run, &bj);
}

fn cpu() -> String {
    pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .unwrap()
        .to_string()
}

/// pqperf with the fake driver and this test's own lease folder.
fn pqperf(tmp: &Path, fake: Option<&Path>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pqperf"));
    c.env(pqperf_campaign::lease::LEASE_DIR_ENV, tmp);
    if let Some(f) = fake {
        c.env("PQPERF_DRIVER", f);
    }
    c
}

fn run(mut c: Command) -> (i32, String, String) {
    let o = c.output().expect("run pqperf");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ab(tmp: &Path, fake: &Path, run_dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut c = pqperf(tmp, Some(fake));
    c.arg("ab")
        .arg(run_dir)
        .arg(run_dir)
        .args(["--cpu", &cpu(), "--trial-target", "0.001", "--op", "sign"])
        .args(extra);
    run(c)
}

#[test]
fn ab_reruns_disturbed_pairs_like_the_campaign_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let r = tmp.path().join("run");
    // The fake driver's `disturbed` mode: every trial waited on the run queue (10–90 %).
    setup_run(&r, "sign-90", &["toy-disturbed", "toy"]);
    let out = tmp.path().join("ab.json");
    let args = |only: &str| {
        vec![
            "--only".to_string(),
            only.to_string(),
            "--pairs".into(),
            "6".into(),
            "--max-pairs".into(),
            "6".into(),
            "--seed".into(),
            "3".into(),
            "--out".into(),
            out.to_str().unwrap().to_string(),
        ]
    };
    let a: Vec<String> = args("^sign-90/toy-disturbed$");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = ab(tmp.path(), &fake, &r, &a);
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    let ev: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let p = &ev.units[0].pairs;
    assert_eq!(p.len(), 6);
    // The first pair is measured again up to the campaign's limit of re-runs; after that
    // every one of the last 8 processes was disturbed, so no pair is run again.
    let max = pqperf_measure::decide::MAX_RETRIES;
    // (An attempt the kernel check refused is re-run once besides: under load `max + 1`.)
    assert!(
        (max..=max + 1).contains(&p[0].reruns)
            && (p[0].disturbed, p[0].rerun_declined.as_deref()) == (true, Some("max_reruns")),
        "{p:?}"
    );
    // Once the last 8 processes were all disturbed, no pair is run again. Under a busy
    // machine one of the first pair's attempts may be refused by the kernel check (not
    // complete, so not counted as disturbed), and the second pair is then re-run up to the
    // limit too; every pair after the first declined as "host_always_disturbed" is not re-run.
    let first = p
        .iter()
        .position(|x| x.rerun_declined.as_deref() == Some("host_always_disturbed"))
        .unwrap_or_else(|| panic!("no pair declined as host_always_disturbed: {p:?}"));
    assert!(first <= 2, "{p:?}");
    for x in &p[1..first] {
        assert_eq!(
            (x.disturbed, x.rerun_declined.as_deref()),
            (true, Some("max_reruns")),
            "{x:?}"
        );
    }
    for x in &p[first..] {
        assert_eq!(
            (x.reruns, x.disturbed, x.rerun_declined.as_deref()),
            (0, true, Some("host_always_disturbed")),
            "{x:?}"
        );
    }
    assert!(
        stdout.contains(&format!(
            "Re-runs: {} re-run(s)",
            p.iter().map(|x| x.reruns).sum::<u64>()
        )) && stdout.contains("host_always_disturbed"),
        "{stdout}"
    );
    // Undisturbed pairs: no re-run, and the evidence carries none of the re-run fields.
    let a: Vec<String> = args("^sign-90/toy$");
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = ab(tmp.path(), &fake, &r, &a);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("reruns") && !text.contains("disturbed"),
        "{text}"
    );
    assert!(!stdout.contains("Re-runs:"), "{stdout}");
}

#[test]
fn interleaved_pairs_follow_the_seed_and_judge_from_the_pairs() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let r = tmp.path().join("run");
    setup_run(&r, "sign-90", &["toy", "toy-slower", "toy-busy"]);

    // A real regression (25 % more per call): slower, and the gate fails.
    let out = tmp.path().join("ab-slower.json");
    let (code, stdout, stderr) = ab(
        tmp.path(),
        &fake,
        &r,
        &[
            "--map",
            "toy=toy-slower",
            "--pairs",
            "6",
            "--max-pairs",
            "6",
            "--seed",
            "7",
            "--json",
            "--fail-on-regression",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let ev: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(serde_json::to_value(&ev).unwrap(), shown);
    assert_eq!((ev.kind.as_str(), ev.seed, ev.pairs), ("pqperf-ab", 7, 6));
    // The host checks ran before measuring and are recorded (whatever this host has).
    assert!(ev.host_problems.is_some(), "{stdout}");
    assert_eq!(ev.units.len(), 1);
    let u = &ev.units[0];
    assert_eq!(
        (u.label_a.as_str(), u.label_b.as_str()),
        ("toy", "toy-slower")
    );
    assert_eq!(u.op, "sign");
    // The pairs ran in the seeded order: half AB, half BA.
    let want: Vec<&str> = pqperf_compare::paired::schedule(7, 1, 6)
        .iter()
        .map(|s| if s.a_first { "AB" } else { "BA" })
        .collect();
    let got: Vec<&str> = u.pairs.iter().map(|p| p.order.as_str()).collect();
    assert_eq!(got, want);
    for p in &u.pairs {
        assert_eq!(
            (p.a.status.as_str(), p.b.status.as_str()),
            ("complete", "complete")
        );
        assert!(p.a.calls > 0 && p.b.calls > 0);
        // Every process brought its environment evidence: the canary and the load.
        assert!(
            p.a.env.canary_ticks().is_some() && p.a.env.load_1m.is_some(),
            "{p:?}"
        );
        assert!(p.log_ratio.is_some() && p.canary_log_ratio.is_some());
    }
    let res = &u.result;
    assert_eq!(res.verdict, pqperf_model::ab::Verdict::Slower, "{res:?}");
    assert_eq!(res.pairs_used, 6);
    assert!(res.ci_low.unwrap() > 1.0 && res.coverage.unwrap() >= 0.95);

    // A–A (the same library twice): no change; the gate passes. The evidence lands in the
    // run directory by default.
    let (code, stdout, stderr) = ab(
        tmp.path(),
        &fake,
        &r,
        &[
            "--only",
            "^sign-90/toy$",
            "--pairs",
            "6",
            "--max-pairs",
            "6",
            "--fail-on-regression",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("| sign-90 | toy | sign | 6/6 |"),
        "{stdout}"
    );
    assert!(stdout.contains("no change"), "{stdout}");
    let files: Vec<PathBuf> = std::fs::read_dir(r.join("ab"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let ev: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(
        ev.units[0].result.verdict,
        pqperf_model::ab::Verdict::NoChange
    );
    assert!(stderr.contains(&format!("seed {}", ev.seed)), "{stderr}");

    // B's processes ran on a machine at half speed (canary): the +25 % is not judged B's;
    // inconclusive, with the reason, and the gate does not fail on it.
    let (code, stdout, stderr) = ab(
        tmp.path(),
        &fake,
        &r,
        &[
            "--map",
            "toy=toy-busy",
            "--pairs",
            "6",
            "--max-pairs",
            "6",
            "--json",
            "--fail-on-regression",
            "--out",
            tmp.path().join("busy.json").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let res = &v["units"][0]["result"];
    assert_eq!(res["verdict"], "inconclusive");
    assert!(res["reason"].as_str().unwrap().contains("canary"), "{res}");

    // Refusals: too few pairs, a mapping to nothing, a missing run directory.
    for (extra, what) in [
        (vec!["--pairs", "3"], "at least 6"),
        (vec!["--map", "toy=nope"], "no measurable instance nope"),
        (vec!["--only", "^sign-77/"], "nothing to measure"),
    ] {
        let (code, stdout, stderr) = ab(tmp.path(), &fake, &r, &extra);
        assert_eq!(code, 2, "{extra:?}: {stdout}{stderr}");
        assert!(stderr.contains(what), "{extra:?}: {stderr}");
    }
    let mut c = pqperf(tmp.path(), Some(&fake));
    c.arg("ab").arg(tmp.path().join("nope")).arg(&r);
    let (code, _, stderr) = run(c);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
}

/// Calibrates and measures `run` with the fake driver.
fn measure(tmp: &Path, fake: &Path, run_dir: &Path) {
    for phase in ["calibrate", "measure"] {
        let mut c = pqperf(tmp, Some(fake));
        c.args(["campaign", phase, "--run-dir"])
            .arg(run_dir)
            .args([
                "--cpu",
                &cpu(),
                "--trial-target",
                "0.001",
                "--allow-unfixed-host",
                "--probe-attempts",
                "1",
                "--register",
                "test machine (host not fixed)",
                "--systems",
            ])
            .arg(tmp.join("systems.csv"));
        let (code, stdout, stderr) = run(c);
        assert_eq!(code, 0, "{phase}: {stdout}{stderr}");
    }
}

fn compare(tmp: &Path, a: &Path, b: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut c = pqperf(tmp, None);
    c.arg("compare").arg(a).arg(b).args(extra);
    run(c)
}

#[test]
fn separate_runs_weigh_the_environment_and_refuse_nothing_comparable() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let (a, b, busy, other) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("busy"),
        tmp.path().join("other"),
    );
    setup_run(&a, "sign-90", &["toy"]);
    setup_run(&b, "sign-90", &["toy-slower"]);
    setup_run(&busy, "sign-90", &["toy-slower-busy"]);
    setup_run(&other, "sign-91", &["toy"]);
    for r in [&a, &b, &busy, &other] {
        measure(tmp.path(), &fake, r);
    }
    // The records carry the environment evidence of their kept processes.
    let rec: Value = serde_json::from_str(
        &std::fs::read_to_string(a.join("records/sign-90/toy__sign.json")).unwrap(),
    )
    .unwrap();
    let env = &rec["pqperf"]["environment_evidence"];
    assert_eq!(env["canary_processes"], 5, "{env}");
    assert!(env["canary_median_ticks"].as_f64().unwrap() > 0.0);
    assert!(env["load_1m_max"].as_f64().is_some());
    let kept = rec["pqperf"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kept"] == true)
        .count();
    assert_eq!(kept, 5);
    assert!(rec["pqperf"]["attempts"][0]["env"]["canary_before_ticks"].is_u64());

    // A 25 % regression measured in two runs on an unchanged machine: slower.
    let (code, stdout, stderr) = compare(
        tmp.path(),
        &a,
        &b,
        &["--map", "toy=toy-slower", "--json", "--fail-on-regression"],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    let sign = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "sign")
        .unwrap();
    assert_eq!(sign["verdict"], "slower", "{sign}");
    assert_eq!(sign["processes"], serde_json::json!([5, 5]));
    assert!((sign["canary_ratio"].as_f64().unwrap() - 1.0).abs() < 0.05);

    // The same regression beside a machine at half speed on B: inconclusive with the
    // reason, in words and in --json, and the gate does not fail.
    let (code, stdout, stderr) = compare(
        tmp.path(),
        &a,
        &busy,
        &[
            "--map",
            "toy=toy-slower-busy",
            "--json",
            "--fail-on-regression",
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let c: Value = serde_json::from_str(&stdout).unwrap();
    for r in c["rows"].as_array().unwrap() {
        assert_eq!(r["verdict"], "inconclusive", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("canary"), "{r}");
    }
    let (_, md, _) = compare(tmp.path(), &a, &busy, &["--map", "toy=toy-slower-busy"]);
    assert!(
        md.contains("inconclusive [1]") && md.contains("\n[1] sign-90"),
        "{md}"
    );

    // Nothing in common: refused (exit 2), not an empty table.
    let (code, stdout, stderr) = compare(tmp.path(), &a, &other, &["--fail-on-regression"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("nothing to compare"), "{stderr}");
}

#[test]
fn an_operation_stops_at_its_first_conclusive_look_and_the_evidence_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let r = tmp.path().join("run");
    setup_run(&r, "sign-90", &["toy", "toy-slower"]);
    let out = tmp.path().join("ab.json");
    let (code, stdout, stderr) = ab(
        tmp.path(),
        &fake,
        &r,
        &[
            "--map",
            "toy=toy-slower",
            "--pairs",
            "6",
            "--max-pairs",
            "24",
            "--seed",
            "11",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let ev: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let looks = pqperf_compare::paired::looks(6, 24);
    assert_eq!(looks, vec![6, 12, 24]);
    assert_eq!(ev.looks, Some(vec![6, 12, 24]));
    let c = ev.confidence_per_look.unwrap();
    assert!((c - (1.0 - 0.05 / 3.0)).abs() < 1e-12, "{c}");
    // Six pairs cannot give a 98.3 % sign-test interval (all six agreeing has a chance of
    // 1/32 under no change): the first look is inconclusive, the second finds the 25 %
    // regression with 12 pairs, and no pair runs after it.
    let u = &ev.units[0];
    assert_eq!(
        u.result.verdict,
        pqperf_model::ab::Verdict::Slower,
        "{:?}",
        u.result
    );
    assert_eq!(u.result.pairs_used, 12);
    assert_eq!(u.pairs.len(), 12);
    assert!(u.result.coverage.unwrap() >= c, "{:?}", u.result);
    // In the seeded order of the sequential design, each look's block half AB, half BA.
    let want: Vec<bool> = pqperf_compare::paired::schedule_looks(11, 1, &looks)
        .iter()
        .take(12)
        .map(|s| s.a_first)
        .collect();
    let got: Vec<bool> = u.pairs.iter().map(|p| p.order == "AB").collect();
    assert_eq!(got, want);
    assert_eq!(got[..6].iter().filter(|a| **a).count(), 3);
    assert!(
        stderr.contains("slower after 12 pairs, stopped"),
        "{stderr}"
    );
    assert!(stdout.contains("judged after 6, 12, 24"), "{stdout}");
}

#[test]
fn ab_refuses_a_cpu_it_cannot_measure_on() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = common::fake_driver(tmp.path());
    let r = tmp.path().join("run");
    setup_run(&r, "sign-90", &["toy"]);
    // A CPU this host does not have: refused before anything runs, the CPU named.
    let mut c = pqperf(tmp.path(), Some(&fake));
    c.arg("ab")
        .arg(&r)
        .arg(&r)
        .args(["--cpu", "4095", "--op", "sign"]);
    let (code, stdout, stderr) = run(c);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("CPU 4095 is not online"), "{stderr}");
    // An online CPU outside this process's allowed set (taskset narrows it to one CPU).
    let allowed = pqperf_ffi::affinity::get_affinity().unwrap();
    let online = pqperf_measure::host::expand_cpu_list(
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .unwrap()
            .trim(),
    );
    if let (Some(&keep), Some(&other)) = (
        allowed.first(),
        online.iter().find(|c| Some(*c) != allowed.first()),
    ) {
        let mut c = Command::new("taskset");
        c.env(pqperf_campaign::lease::LEASE_DIR_ENV, tmp.path())
            .env("PQPERF_DRIVER", &fake)
            .args(["-c", &keep.to_string()])
            .arg(env!("CARGO_BIN_EXE_pqperf"))
            .arg("ab")
            .arg(&r)
            .arg(&r)
            .args(["--cpu", &other.to_string(), "--op", "sign"]);
        let (code, stdout, stderr) = run(c);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(
            stderr.contains(&format!("CPU {other} is not among the CPUs")),
            "{stderr}"
        );
    }
    assert!(!r.join("ab").exists());
}

#[test]
fn the_real_driver_times_its_canary_outside_the_trials() {
    // One real driver process on a real library: the protocol carries the canary line, the
    // parsed run its figures, and the process is still consistent with the kernel's
    // accounting (the canary is untimed work, within the slack).
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("run");
    setup_run(&r, "sign-90", &["toy"]);
    let exe = pqperf_measure::runner::DriverExe::current(&r).unwrap();
    let args = pqperf_measure::driver::DriverArgs {
        lib: PathBuf::from("lib/sign-90/libtoy.so"),
        op: "verify".into(),
        bytes: 0,
        trials: 2,
        iters: 50,
        warmups: 1,
        cpu: Some(cpu().parse().unwrap()),
        samples: true,
        force_ticks: false,
        api: pqperf_measure::driver::ApiSpec::Iccs,
        stack_region: 262_144,
        seed: None,
        pool_max: None,
        prepare: false,
        relayed: false,
    };
    let run = pqperf_measure::runner::run_driver(&exe, &args, std::time::Duration::from_secs(120));
    assert_eq!(run.process.status, "complete", "{:?}", run.process);
    let (b, a) = (
        run.env.canary_before_ticks.unwrap(),
        run.env.canary_after_ticks.unwrap(),
    );
    assert!(b > 0 && a > 0);
    assert!(run.env.runq_share.is_some() && run.env.load_1m.is_some());
    // Trials are what they were asked to be: the canary is in none of them.
    assert_eq!(run.process.trials.len(), 2);
    assert!(run.process.trials.iter().all(|t| t.measurements == 50));
}

/// The argv of every live process that names `needle`, read from /proc.
fn argvs_naming(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.iter().any(|a| a.contains(needle)) {
            out.push(args.join(" "));
        }
    }
    out
}

/// Every file below `dir` but `except`, with its bytes.
fn files_except(dir: &Path, except: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            files_except(&p, except, out);
        } else if t.is_file() && p != except {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
}

/// `pqperf ab` under a secret stream key (issue 36), with the real driver: both processes of
/// a pair time the same inputs (the seed of the pair's index), no driver process has a seed
/// on its argv (its windows' seeds come with the parent's `go`), the key and the seeds are in
/// no file but the evidence, which publishes the key after the pairs; `--stream-key` reuses
/// it.
#[test]
fn ab_pairs_time_secret_inputs_and_publish_the_key_after_the_pairs() {
    use pqperf_model::stream::{key_id, keyed_process_seed, parse_key_hex, seed_hex};
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("run");
    setup_run(&r, "sign-90", &["toy"]);
    let out = tmp.path().join("ab.json");
    let args = |extra: &[&str]| {
        let mut c = pqperf(tmp.path(), None);
        c.arg("ab")
            .arg(&r)
            .arg(&r)
            .args(["--cpu", &cpu(), "--trial-target", "0.002", "--op", "sign"])
            .args(["--pairs", "6", "--max-pairs", "6", "--seed", "3", "--out"])
            .arg(&out)
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    };
    let mut child = args(&[]).spawn().unwrap();
    // Every driver process's argv while the pairs run.
    let mut seen = std::collections::BTreeSet::new();
    while child.try_wait().unwrap().is_none() {
        // pqperf's own processes only: the library's build (gcc, cc1, as) names it too.
        seen.extend(
            argvs_naming("lib/sign-90/libtoy.so")
                .into_iter()
                .filter(|a| {
                    let exe = a.split(' ').next().unwrap_or("");
                    exe.rsplit('/').next().unwrap_or("").starts_with("pqperf")
                }),
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let o = child.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let ev: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sk = ev
        .stream_key
        .clone()
        .expect("the evidence publishes the stream key");
    let key = parse_key_hex(&sk.key).unwrap();
    assert_eq!(sk.key_id, key_id(&key));
    assert!(!sk.reused);
    let u = &ev.units[0];
    assert_eq!(u.pairs.len(), 6);
    for p in &u.pairs {
        assert_eq!(
            (p.a.status.as_str(), p.b.status.as_str()),
            ("complete", "complete"),
            "{p:?}"
        );
        assert!(p.log_ratio.is_some(), "{p:?}");
    }
    // The driver processes: relayed, never a seed on the argv, nor the key.
    assert!(!seen.is_empty(), "no driver process seen: {said}");
    eprintln!("{} driver argv(s) seen", seen.len());
    for a in &seen {
        assert!(a.contains("--relayed") && !a.contains("--seed"), "{a}");
        assert!(!a.contains(&sk.key), "{a}");
    }
    // Neither the key nor a pair's or the calibration's seed is in any other file.
    let mut secrets = vec![sk.key.clone()];
    secrets.extend((0..6).map(|i| seed_hex(&keyed_process_seed(&key, i))));
    secrets.push(seed_hex(&keyed_process_seed(
        &key,
        pqperf_model::ab::AB_CALIBRATION_INDEX,
    )));
    let mut files = Vec::new();
    files_except(tmp.path(), &out, &mut files);
    for (f, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for s in &secrets {
            assert!(!text.contains(s.as_str()), "{}: holds {s}", f.display());
        }
    }
    // Reused on purpose: the same key, said so.
    let o = args(&["--stream-key", &sk.key]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again: pqperf_model::ab::AbEvidence =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let k2 = again.stream_key.unwrap();
    assert_eq!((k2.key_id, k2.reused), (sk.key_id, true));
}
