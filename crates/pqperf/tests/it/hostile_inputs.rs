//! Hostile candidates against the relayed inputs (issue 36, `pqperf_measure::relay`): in
//! pqperf's own protocol the verify/dec inputs of a timing process are made by a separate
//! preparer process of the same candidate and relayed by the parent window by window. Each
//! attack is one extra piece of C in a copy of a test candidate, with a marker on stderr
//! proving its hostile statement ran; the honest candidate beside it stays complete.
//! No timing is asserted (busy-host safe).
//!
//! - **memo at the preparation** (`testdata/hostile/prep_memo.h`): encapsulation stores
//!   ciphertext → shared secret and signing stores (message, signature) → valid; dec and
//!   verify answer from the memo. The timing process never encapsulates or signs its inputs,
//!   so the memo is tried and never hits, and the figures are those of the work.
//! - **accept-all** (`testdata/hostile/accept_all.h`): verify accepts everything inside the
//!   timing driver. The parent alters one message per window and requires its rejection:
//!   inconsistent, no figure.
//! - **garbage dec** (`testdata/hostile/garbage_dec.h`): dec returns a constant at once inside
//!   the timing driver (after a first honest call). The parent compares every timed shared
//!   secret with the encapsulation's: inconsistent, no figure.
//! - **precomputed inputs** (`testdata/hostile/precompute.h`): at its first keygen or sign
//!   call (a warm-up, untimed) the library derives every timed input of its process as the
//!   driver does, from its command line's `--seed` or from the public derivation of the
//!   process seeds, computes the outputs and serves the timed calls from that table. Under
//!   pqperf's own protocol the timing process has no seed on its argv, each window's seed
//!   comes with its `go`, and the seeds derive from the run's secret stream key: the table
//!   never answers. The same for the toy hash (the digests of every message the process
//!   could hash) and a key-exchange step timed alone (init_a's DRNG bytes of every window),
//!   whose processes now get their windows' seeds with `go` too; started by hand as they
//!   were started before, every timed call is answered.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};

const MEMO: &str = include_str!("../../../../testdata/hostile/memo.h");
const PREP_MEMO: &str = include_str!("../../../../testdata/hostile/prep_memo.h");
const ACCEPT_ALL: &str = include_str!("../../../../testdata/hostile/accept_all.h");
const GARBAGE_DEC: &str = include_str!("../../../../testdata/hostile/garbage_dec.h");
const TOY_KEM: &str = include_str!("../../../../testdata/hostile/toy_kem.c");
const PRECOMPUTE: &str = include_str!("../../../../testdata/hostile/precompute.h");

fn campaign(run: &Path, phase: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pqperf"));
    c.args(common::toy::campaign_args(run, phase))
        .args(extra)
        .env(pqperf_campaign::lease::LEASE_DIR_ENV, run.parent().unwrap());
    c
}

/// The last allowed CPU, 2 ms trials, a 60 s calibration limit and a small stack region.
fn short_trials() -> Vec<String> {
    let cpu = common::last_cpu();
    [
        "--cpu",
        &cpu,
        "--trial-target",
        "0.002",
        "--calibration-timeout",
        "60",
        "--stack-region",
        "262144",
    ]
    .map(String::from)
    .to_vec()
}

fn record(run: &Path, cand: &str, label: &str, op: &str) -> serde_json::Value {
    let p = run.join(format!("records/{cand}/{label}__{op}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// toy_sig.c with the preparation memo (`-DMEMO_VERIFY`) and accept-all (`-DACCEPT_ALL`).
fn hostile_toy_sig() -> String {
    let sign = "    work();\n    mix(sk, m, ml, sn);\n    *snl = 64;\n    return 0;";
    let verify = "    work();\n    unsigned char sk[32], want[64];";
    assert!(TOY_SIG.contains(sign) && TOY_SIG.contains(verify));
    let s = TOY_SIG.replace(
        sign,
        "    work();\n    mix(sk, m, ml, sn);\n    *snl = 64;\n#ifdef MEMO_VERIFY\n    prep_memo_signed(m, ml, sn, 64);\n#endif\n    return 0;",
    );
    let s = s.replace(
        verify,
        &format!(
            "#ifdef MEMO_VERIFY\n    if (prep_memo_known_valid(m, ml, sn, snl)) return 0;\n#endif\n#ifdef ACCEPT_ALL\n    if (accept_all_now()) return 0;\n#endif\n{verify}"
        ),
    );
    format!(
        "#ifdef MEMO_VERIFY\n#include \"prep_memo.h\"\n#endif\n#ifdef ACCEPT_ALL\n#include \"accept_all.h\"\n#endif\n{s}"
    )
}

/// Values of `prefix` markers (`memo: tries=` → the rest of the line) in the record's
/// processes.
fn markers(r: &serde_json::Value, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in r["processes"].as_array().unwrap() {
        for line in p["stderr"].as_str().unwrap_or("").lines() {
            if let Some(rest) = line.strip_prefix(prefix) {
                out.push(rest.to_string());
            }
        }
    }
    out
}

fn problems(p: &serde_json::Value) -> String {
    p["kernel_check"]["problems"].to_string()
}

#[test]
fn preparation_memos_never_hit_and_wrong_timed_outputs_are_inconsistent() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    for (f, t) in [
        ("memo.h", MEMO),
        ("prep_memo.h", PREP_MEMO),
        ("accept_all.h", ACCEPT_ALL),
        ("garbage_dec.h", GARBAGE_DEC),
    ] {
        std::fs::write(run.join(f), t).unwrap();
    }
    let sig = toy_run(
        &run,
        "toy_sig_inputs.c",
        &hostile_toy_sig(),
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "prepmemo").defines(&["TOY_WORK=20000", "MEMO_VERIFY"]),
            Lib::new("sign-95", "acceptall").defines(&["TOY_WORK=20000", "ACCEPT_ALL"]),
        ],
    );
    let kem = toy_run(
        &run,
        "toy_kem.c",
        TOY_KEM,
        &[
            Lib::new("kem-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("kem-95", "prepmemo").defines(&["TOY_WORK=20000", "MEMO_ENC"]),
            Lib::new("kem-95", "garbage").defines(&["TOY_WORK=20000", "GARBAGE_DEC"]),
        ],
    );
    let mut bj = sig;
    bj.instances.extend(kem.instances);
    write_build_json(&run, &bj);
    let opts = short_trials();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let out = campaign(&run, "calibrate", &opts).output().unwrap();
    let mut log =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // Accept-all is caught by calibration already (its one process is checked too).
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(
        log.contains("acceptall verify: inconsistent") && log.contains("accepted a signature"),
        "{log}"
    );
    // The hostile units do not complete: exit 1, the others done.
    let out = campaign(&run, "measure", &opts).output().unwrap();
    log += &String::from_utf8_lossy(&out.stdout);
    log += &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    // Honest and memo: complete, every process's inputs relayed and checked.
    for (cand, op) in [("sign-95", "verify"), ("kem-95", "dec")] {
        for label in ["honest", "prepmemo"] {
            let r = record(&run, cand, label, op);
            assert_eq!(r["status"], "complete", "{cand} {label} {op}: {r}\n{log}");
            for p in r["processes"].as_array().unwrap() {
                assert_eq!(p["status"], "complete", "{cand} {label} {op}: {p}");
                assert_eq!(problems(p), "[]", "{cand} {label} {op}");
                let rel = &p["relayed_inputs"];
                assert!(rel["windows"].as_u64().unwrap() >= 1, "{p}");
                assert!(rel["prepare_s"].as_f64().is_some(), "{p}");
                // No seed on the timing process's argv.
                let argv = p["command"].to_string();
                assert!(
                    argv.contains("--relayed") && !argv.contains("--seed"),
                    "{argv}"
                );
            }
            if op == "verify" {
                let p = &r["processes"][0];
                assert_eq!(p["meta"]["verify_rejections"], "0", "{p}");
            }
        }
        // The memo was tried in every timed process and never answered.
        let r = record(&run, cand, "prepmemo", op);
        let m = markers(&r, "memo: tries=");
        eprintln!("{cand} prepmemo {op}: {m:?}");
        assert_eq!(m.len(), r["processes"].as_array().unwrap().len(), "{r}");
        for x in m {
            let (tries, hits) = x.split_once(" hits=").unwrap();
            assert!(tries.parse::<u64>().unwrap() > 1, "{x}");
            assert_eq!(hits, "0", "{cand} {op}: {x}");
        }
        assert!(markers(&record(&run, cand, "honest", op), "memo: ").is_empty());
    }
    // Accept-all and garbage dec: inconsistent (re-run once), named, no figure.
    for (cand, label, op, marker, why) in [
        (
            "sign-95",
            "acceptall",
            "verify",
            "accept-all: calls=",
            "accepted a signature",
        ),
        (
            "kem-95",
            "garbage",
            "dec",
            "garbage-dec: fast=",
            "are not those of the encapsulations",
        ),
    ] {
        let r = record(&run, cand, label, op);
        assert_eq!(r["status"], "failed_or_partial", "{r}");
        // Calibration's process already (accept-all), or every measured attempt (garbage).
        for p in r["processes"].as_array().unwrap() {
            assert_eq!(p["status"], "inconsistent", "{p}");
        }
        if let Some(a) = r["pqperf"]["attempts"].as_array() {
            assert!(a.iter().all(|a| a["status"] == "inconsistent"), "{r}");
        }
        let p = &r["processes"][0];
        assert!(problems(p).contains(why), "{p}");
        let m = markers(&r, marker);
        assert!(!m.is_empty(), "no marker: {r}");
        assert!(m.iter().all(|x| x.parse::<u64>().unwrap() >= 1), "{m:?}");
    }
}

/// One pool per operation (issue 41): under pqperf's own protocol the preparer runs once per
/// verify/dec operation and every timing process of it gets the same pool (same id) from its
/// own offset; the parent's own check covers the outputs, so no replay re-signs the pool.
#[test]
fn processes_of_one_operation_share_one_pool_from_their_own_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log = honest_sig_and_kem_campaign(&run, "20");
    for (cand, op) in [("sign-95", "verify"), ("kem-95", "dec")] {
        let r = record(&run, cand, "honest", op);
        assert_eq!(r["status"], "complete", "{cand} {op}: {r}\n{log}");
        assert_eq!(r["pqperf"]["protocol"], "target_ci", "{r}");
        let ps = r["processes"].as_array().unwrap();
        assert!(ps.len() >= 2, "{cand} {op}: {} processes", ps.len());
        let pool = |p: &serde_json::Value| p["relayed_inputs"]["pool"].clone();
        let id = pool(&ps[0])["id"].clone();
        assert!(id.is_string(), "{}", ps[0]);
        let mut offsets = std::collections::BTreeSet::new();
        let mut made = 0;
        for p in ps {
            assert_eq!(p["status"], "complete", "{cand} {op}: {p}");
            assert_eq!(pool(p)["id"], id, "{cand} {op}: one pool per operation");
            offsets.insert(pool(p)["offset"].as_u64().unwrap());
            assert!(pool(p)["made_s"].as_f64().unwrap() > 0.0, "{p}");
            if pool(p)["reused"] == false {
                made += 1;
                assert!(
                    p["relayed_inputs"]["prepare_s"].as_f64().unwrap() > 0.0,
                    "{p}"
                );
            } else {
                assert_eq!(p["relayed_inputs"]["prepare_s"], 0.0, "{p}");
            }
            // The parent's own check covered the outputs: no replay.
            let c = &p["output_check"];
            assert_eq!(c["chosen"], "parent", "{cand} {op}: {c}");
            assert_eq!(c["verdict"], "match", "{c}");
            assert!(c["replay"].is_null(), "{c}");
        }
        // One pool (one id) made once: its cost in the kept process that used it first, or
        // in an attempt re-run on a busy host (then every kept process says `reused`).
        assert!(made <= 1, "{cand} {op}: the preparer ran once");
        assert!(offsets.len() > 1, "{cand} {op}: offsets {offsets:?}");
    }
}

/// Where the measure phase's time goes with relayed inputs under `--target-ci` (pqperf's own
/// protocol: each process its own stream, the next process's inputs prepared while this one
/// is timed). Prints the `measure budget:` line and the preparers' seconds against the
/// parent's wait for them; asserts only what the evidence must say. Run by hand:
/// `cargo test --release -p pqperf --test it hostile_inputs::relayed_budget -- --ignored --nocapture`.
#[test]
#[ignore]
fn relayed_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let log = honest_sig_and_kem_campaign(&run, "1");
    let line = log
        .lines()
        .find(|l| l.contains("measure budget:"))
        .unwrap_or("");
    eprintln!("{line}");
    for (cand, op) in [("sign-95", "verify"), ("kem-95", "dec")] {
        let r = record(&run, cand, "honest", op);
        let ps = r["processes"].as_array().unwrap();
        let (mut prep, mut waited) = (0.0, 0.0);
        for p in ps {
            assert_eq!(p["status"], "complete", "{p}");
            let argv = p["command"].to_string();
            assert!(
                argv.contains("--relayed") && !argv.contains("--seed"),
                "{argv}"
            );
            prep += p["relayed_inputs"]["prepare_s"].as_f64().unwrap();
            waited += p["relayed_inputs"]["waited_s"].as_f64().unwrap();
        }
        eprintln!(
            "{cand} {op}: {} processes, preparers {prep:.3} s, parent waited {waited:.3} s",
            ps.len()
        );
    }
}

/// toy_sig.c with the precomputed table (`-DPRECOMPUTE`, `testdata/hostile/precompute.h`).
pub(crate) fn precompute_toy_sig() -> String {
    let seeded = "    state = 1469598103934665603ull;";
    let before_pk = "unsigned long long sig_get_pk_len_bytes(void)";
    let keygen =
        "    work();\n    for (int i = 0; i < 32; i++) { sk[i] = rnd(); pk[i] = sk[i] ^ 0x5a; }";
    let sign = "    work();\n    mix(sk, m, ml, sn);\n    *snl = 64;\n    return 0;";
    let sig_sign = "int sig_sign(";
    for x in [seeded, before_pk, keygen, sign, sig_sign] {
        assert!(TOY_SIG.contains(x), "{x}");
    }
    let s = TOY_SIG
        .replace(
            seeded,
            &format!("#ifdef PRECOMPUTE\n    precompute_seeded(seed, len);\n#endif\n{seeded}"),
        )
        .replace(
            before_pk,
            &format!("#ifdef PRECOMPUTE\n#include \"precompute.h\"\n#endif\n{before_pk}"),
        )
        .replace(
            keygen,
            &format!(
                "#ifdef PRECOMPUTE\n    if (precompute_keygen(pk, sk)) {{ *pkl = 32; *skl = 32; return 0; }}\n#endif\n{keygen}"
            ),
        )
        .replace(
            sig_sign,
            "#ifdef PRECOMPUTE\nstatic void pc_toy_sign(const unsigned char *sk, const unsigned char m[64], unsigned char sn[64]);\n#endif\nint sig_sign(",
        )
        .replace(
            sign,
            &format!(
                "#ifdef PRECOMPUTE\n    if (precompute_sign(sk, m, ml, sn, pc_toy_sign)) {{ *snl = 64; return 0; }}\n#endif\n{sign}"
            ),
        );
    format!(
        "#ifdef PRECOMPUTE\nstatic void precompute_seeded(const unsigned char *seed, unsigned long long len);\n#endif\n{s}\n#ifdef PRECOMPUTE\nstatic void pc_toy_sign(const unsigned char *sk, const unsigned char m[64], unsigned char sn[64]) {{ mix(sk, m, 64, sn); }}\n#endif\n"
    )
}

/// `(tries, hits)` of every `precompute:` marker of a record's processes, with its source.
fn precompute_markers(r: &serde_json::Value) -> Vec<(String, u64, u64)> {
    markers(r, "precompute: ")
        .iter()
        .map(|m| {
            let field = |k: &str| {
                m.split(' ')
                    .find_map(|f| f.strip_prefix(k))
                    .unwrap_or_else(|| panic!("{k} in {m}"))
                    .to_string()
            };
            (
                field("source="),
                field("tries=").parse().unwrap(),
                field("hits=").parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn inputs_precomputed_before_the_first_gate_never_answer_a_timed_call() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("precompute.h"), PRECOMPUTE).unwrap();
    let bj = toy_run(
        &run,
        "toy_sig_precompute.c",
        &precompute_toy_sig(),
        &[
            Lib::new("sign-94", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-94", "precompute").defines(&["TOY_WORK=20000", "PRECOMPUTE"]),
        ],
    );
    write_build_json(&run, &bj);
    // pqperf's own protocol (the default --target-ci), a wide target: its minimum of
    // processes.
    let mut opts = short_trials();
    opts.drain(2..4);
    opts.extend(["--target-ci".to_string(), "20".to_string()]);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = String::new();
    for phase in ["calibrate", "measure"] {
        let out = campaign(&run, phase, &opts).output().unwrap();
        log += &String::from_utf8_lossy(&out.stdout);
        log += &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{phase}: {log}");
    }
    for op in ["keygen", "sign"] {
        for label in ["honest", "precompute"] {
            let r = record(&run, "sign-94", label, op);
            assert_eq!(r["status"], "complete", "{label} {op}: {r}\n{log}");
            assert_eq!(r["pqperf"]["protocol"], "target_ci", "{r}");
            for p in r["processes"].as_array().unwrap() {
                assert_eq!(p["status"], "complete", "{label} {op}: {p}");
                // No seed on the timing process's argv: its windows' seeds came with `go`.
                let argv = p["command"].to_string();
                assert!(
                    argv.contains("--relayed") && !argv.contains("--seed"),
                    "{argv}"
                );
                assert!(p["relayed_inputs"]["windows"].as_u64().unwrap() >= 1, "{p}");
                assert!(p["stream"]["key_id"].is_string(), "{p}");
                // A drawn replay ran beside the next process and its verdict was applied.
                let c = &p["output_check"];
                assert_ne!(c["verdict"], "pending", "{label} {op}: {c}");
                if c["chosen"] == "drawn" {
                    assert_eq!(c["replay_beside"], true, "{c}");
                    assert_eq!(c["verdict"], "match", "{label} {op}: {c}");
                }
            }
            // The first process's outputs were replayed and matched.
            assert_eq!(
                r["processes"][0]["output_check"]["verdict"], "match",
                "{label} {op}: {}",
                r["processes"][0]["output_check"]
            );
        }
        // The hostile table was built (the public derivation: no seed on the argv) and tried
        // in every timed call of every process, and never answered.
        let r = record(&run, "sign-94", "precompute", op);
        let m = precompute_markers(&r);
        eprintln!("precompute {op}: {m:?}");
        assert_eq!(m.len(), r["processes"].as_array().unwrap().len(), "{r}");
        for (source, tries, hits) in m {
            assert_eq!(source, "public", "{op}");
            assert!(tries > 1, "{op}: {tries}");
            assert_eq!(
                hits, 0,
                "{op}: {hits} of {tries} calls answered from the table"
            );
        }
        assert!(markers(&record(&run, "sign-94", "honest", op), "precompute: ").is_empty());
    }
    // The table is no dud: a keygen driver started by hand with its seed on the argv (as
    // every own-protocol timing process was before the window seeds) is answered from it in
    // every timed call (the windows' DRNG seeds derive from that seed as they did then).
    let driver = pqperf_measure::runner::DriverExe::locate().unwrap();
    let seed = pqperf_model::stream::seed_hex(&pqperf_model::stream::process_seed(0));
    let out = Command::new(&driver)
        .args([
            "lib/sign-94/libprecompute.so",
            "keygen",
            "0",
            "1",
            "1",
            "50",
            "1",
            "--samples",
            "--seed",
            &seed,
        ])
        .current_dir(&run)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    let line = said
        .lines()
        .find(|l| l.starts_with("precompute: "))
        .unwrap_or_else(|| panic!("no marker: {said}"));
    eprintln!("by hand with --seed: {line}");
    assert!(
        line.contains("source=argv") && line.ends_with(" hits=100"),
        "{line}"
    );
}

/// No driver process carries a seed on its argv (issue 36): while a campaign of the honest
/// toy signature and KEM runs, every live process whose argv names their libraries — timing
/// processes, the verify/dec preparers (`--prepare`) and the output check's replays
/// (`replay-child`) — is read from `/proc/<pid>/cmdline`: none has `--seed` or a seed's 96
/// hex digits; the preparers and replays get their seeds on their control pipes.
#[test]
fn no_relayed_seed_on_any_driver_argv() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut seen = std::collections::BTreeSet::new();
    let log = sig_and_kem_campaign_watched(&run, "20", Some(&mut seen));
    let is_seed = |a: &str| a.len() == 96 && a.chars().all(|c| c.is_ascii_hexdigit());
    for argv in &seen {
        assert!(
            !argv.iter().any(|a| a == "--seed" || is_seed(a)),
            "a seed on an argv: {argv:?}"
        );
    }
    let with = |w: &str| seen.iter().filter(|a| a.iter().any(|x| x == w)).count();
    assert!(with("--prepare") > 0, "no preparer seen: {seen:?}\n{log}");
    assert!(with("replay-child") > 0, "no replay seen: {seen:?}\n{log}");
    assert!(with("--relayed") > 0, "no timing process seen: {seen:?}");
    for (cand, op) in [
        ("sign-95", "verify"),
        ("kem-95", "dec"),
        ("sign-95", "sign"),
    ] {
        let r = record(&run, cand, "honest", op);
        assert_eq!(r["status"], "complete", "{cand} {op}: {r}\n{log}");
    }
    let sign = record(&run, "sign-95", "honest", "sign");
    assert!(
        sign["processes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["output_check"]["verdict"] == "match"),
        "the replays (seed on their control pipes) matched: {sign}"
    );
}

/// Builds an honest toy signature (sign-95) and toy KEM (kem-95) in `run` and calibrates and
/// measures them under `--target-ci <target>` with short trials; the campaign's output.
fn honest_sig_and_kem_campaign(run: &std::path::Path, target: &str) -> String {
    sig_and_kem_campaign_watched(run, target, None)
}

/// The argv of every live process naming `lib/sign-95/` or `lib/kem-95/`.
fn toy_argvs(out: &mut std::collections::BTreeSet<Vec<String>>) {
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmd
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args
            .iter()
            .any(|a| a.contains("lib/sign-95/") || a.contains("lib/kem-95/"))
        {
            out.insert(args);
        }
    }
}

/// [`honest_sig_and_kem_campaign`], reading every live driver argv into `seen` while the
/// phases run.
fn sig_and_kem_campaign_watched(
    run: &std::path::Path,
    target: &str,
    mut seen: Option<&mut std::collections::BTreeSet<Vec<String>>>,
) -> String {
    std::fs::create_dir_all(run).unwrap();
    let sig = toy_run(
        run,
        "toy_sig.c",
        TOY_SIG,
        &[Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"])],
    );
    let kem = toy_run(
        run,
        "toy_kem.c",
        TOY_KEM,
        &[Lib::new("kem-95", "honest").defines(&["TOY_WORK=20000"])],
    );
    let mut bj = sig;
    bj.instances.extend(kem.instances);
    write_build_json(run, &bj);
    let mut opts = short_trials();
    opts.drain(2..4);
    opts.extend(["--target-ci".to_string(), target.to_string()]);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = String::new();
    for phase in ["calibrate", "measure"] {
        let mut c = campaign(run, phase, &opts);
        let out = match seen.as_deref_mut() {
            None => c.output().unwrap(),
            Some(seen) => {
                let said = run.with_extension(format!("{phase}.out"));
                let f = std::fs::File::create(&said).unwrap();
                let mut child = c.stdout(f.try_clone().unwrap()).stderr(f).spawn().unwrap();
                while child.try_wait().unwrap().is_none() {
                    toy_argvs(seen);
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                let mut o = child.wait_with_output().unwrap();
                o.stdout = std::fs::read(&said).unwrap();
                o
            }
        };
        log += &String::from_utf8_lossy(&out.stdout);
        log += &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{phase}: {log}");
    }
    log
}

/// toy_kex_hash.c (`crates/pqperf/tests/measure/`) with the precomputed table
/// (`-DPRECOMPUTE`, `testdata/hostile/precompute.h`): CryptHash answers a message whose head is
/// in the table, kex_init_a takes its key from it; the ids follow `-DTOY_ID`/`-DTOY_INSTANCE`.
pub(crate) fn precompute_toy_kex_hash() -> String {
    let src = include_str!("../measure/toy_kex_hash.c");
    let hash_meta = "\"hash-90\", \"ToyHash\",\n                                 \"toyhash\"";
    let kex_meta = "\"kex-90\", \"ToyKex\",\n                                 \"toykex\"";
    let seeded = "    state = 1469598103934665603ull;";
    let after_rnd = "#ifdef TOY_HASH\nint CryptHash(";
    let hash_body = "    if (bits != 256) return -1;\n    uint64_t h[4] = {1, 2, 3, 4};";
    let init_a = "int kex_init_a(uc *pk, ull *pkl, uc *sk, ull *skl, uc *st, ull *stl) { return init(pk, pkl, sk, skl, st, stl); }";
    for x in [hash_meta, kex_meta, seeded, after_rnd, hash_body, init_a] {
        assert!(src.contains(x), "{x}");
    }
    let s = src
        .replace(hash_meta, "TOY_ID, \"ToyHash\", TOY_INSTANCE")
        .replace(kex_meta, "TOY_ID, \"ToyKex\", TOY_INSTANCE")
        .replace(
            seeded,
            &format!("#ifdef PRECOMPUTE\n    precompute_seeded(seed, len);\n#endif\n{seeded}"),
        )
        .replace(
            after_rnd,
            "#ifdef PRECOMPUTE\n#include \"precompute.h\"\n#endif\n#ifdef TOY_HASH\n#ifdef PRECOMPUTE\nstatic void pc_toy_hash(const unsigned char *m, unsigned long long len, unsigned char d[32]) {\n    uint64_t h[4] = {1, 2, 3, 4};\n    for (unsigned long long i = 0; i < len; i++) h[i % 4] = (h[i % 4] ^ m[i]) * 1099511628211ull;\n    memcpy(d, h, 32);\n}\n#endif\nint CryptHash(",
        )
        .replace(
            hash_body,
            &format!("#ifdef PRECOMPUTE\n    if (bits == 256 && precompute_hash(m, mbits / 8, d, pc_toy_hash)) return 0;\n#endif\n{hash_body}"),
        )
        .replace(
            init_a,
            "int kex_init_a(uc *pk, ull *pkl, uc *sk, ull *skl, uc *st, ull *stl) {\n#ifdef PRECOMPUTE\n    if (precompute_kex_init(sk)) {\n        for (int i = 0; i < 16; i++) pk[i] = sk[i] ^ 0x33;\n        memset(st, 0, 32);\n        *pkl = 16; *skl = 16; *stl = 16;\n        return 0;\n    }\n#endif\n    return init(pk, pkl, sk, skl, st, stl);\n}",
        );
    format!(
        "#ifndef TOY_ID\n#define TOY_ID \"x-90\"\n#endif\n#ifndef TOY_INSTANCE\n#define TOY_INSTANCE \"toy\"\n#endif\n#ifdef PRECOMPUTE\n#include <stdint.h>\nstatic void precompute_seeded(const unsigned char *seed, unsigned long long len);\n#endif\n{s}"
    )
}

/// The `precompute:` marker of a driver started by hand in `run` with `args`.
fn precompute_by_hand(run: &Path, args: &[&str]) -> String {
    let driver = pqperf_measure::runner::DriverExe::locate().unwrap();
    let out = Command::new(&driver)
        .args(args)
        .current_dir(run)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {said}");
    said.lines()
        .find(|l| l.starts_with("precompute: "))
        .unwrap_or_else(|| panic!("no marker: {said}"))
        .to_string()
}

/// Hash messages and the key exchange's steps timed alone (issue 36): under pqperf's own
/// protocol these processes too get no seed on their argv and each window's seed with its
/// `go` (a hash call's message head comes from its window), so a table of the digests of every
/// message the process could hash, or of init_a's DRNG bytes in every window, built before the
/// first gate, is tried in every timed call and never answers. Started by hand as the parent
/// started them before (hash: the fixed message; init_a: the seed on its argv), the same
/// library answers every timed call from the table.
#[test]
fn hash_and_kex_step_inputs_precomputed_before_the_first_gate_never_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("precompute.h"), PRECOMPUTE).unwrap();
    let bj = toy_run(
        &run,
        "toy_kex_hash_precompute.c",
        &precompute_toy_kex_hash(),
        &[
            Lib::new("hash-94", "honest").defines(&["TOY_HASH"]),
            Lib::new("hash-94", "precompute").defines(&["TOY_HASH", "PRECOMPUTE"]),
            Lib::new("kex-94", "honest"),
            Lib::new("kex-94", "precompute").defines(&["PRECOMPUTE"]),
        ],
    );
    write_build_json(&run, &bj);
    let mut opts = short_trials();
    opts.drain(2..4);
    opts.extend(["--target-ci".to_string(), "20".to_string()]);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = String::new();
    for phase in ["calibrate", "measure"] {
        let out = campaign(&run, phase, &opts).output().unwrap();
        log += &String::from_utf8_lossy(&out.stdout);
        log += &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{phase}: {log}");
    }
    let mut timed = Vec::new();
    for (cand, op) in [
        ("hash-94", "hash_32"),
        ("hash-94", "hash_1024"),
        ("kex-94", "exchange"),
        ("kex-94", "init_a"),
        ("kex-94", "pass2"),
    ] {
        for label in ["honest", "precompute"] {
            let r = record(&run, cand, label, op);
            assert_eq!(r["status"], "complete", "{cand} {label} {op}: {r}\n{log}");
            assert_eq!(r["pqperf"]["protocol"], "target_ci", "{r}");
            for p in r["processes"].as_array().unwrap() {
                assert_eq!(p["status"], "complete", "{cand} {label} {op}: {p}");
                let argv = p["command"].to_string();
                assert!(
                    argv.contains("--relayed") && !argv.contains("--seed"),
                    "{cand} {op}: {argv}"
                );
                assert!(p["relayed_inputs"]["windows"].as_u64().unwrap() >= 1, "{p}");
                assert!(p["stream"]["key_id"].is_string(), "{p}");
                assert_eq!(
                    p["stream"]["inputs"],
                    pqperf_model::stream::CALL_INPUTS,
                    "{p}"
                );
            }
            if op.starts_with("hash") {
                // The first process's outputs were replayed (the same window heads) and
                // matched.
                assert_eq!(
                    r["processes"][0]["output_check"]["verdict"], "match",
                    "{cand} {label} {op}: {}",
                    r["processes"][0]["output_check"]
                );
            }
        }
        if op == "exchange" || op == "pass2" {
            continue;
        }
        let r = record(&run, cand, "precompute", op);
        let m = precompute_markers(&r);
        eprintln!("precompute {cand} {op}: {m:?}");
        assert_eq!(m.len(), r["processes"].as_array().unwrap().len(), "{r}");
        for (source, tries, hits) in m {
            assert_eq!(source, "public", "{op}");
            assert!(tries > 1, "{op}: {tries}");
            assert_eq!(
                hits, 0,
                "{op}: {hits} of {tries} calls answered from the table"
            );
            timed.push(tries);
        }
        assert!(markers(&record(&run, cand, "honest", op), "precompute: ").is_empty());
    }
    assert!(!timed.is_empty());
    // The table is no dud: started by hand as these processes were before (a hash process
    // hashed the fixed message in every call; a step's seed was on its argv), every timed
    // call is answered from it.
    let seed = pqperf_model::stream::seed_hex(&pqperf_model::stream::process_seed(0));
    let hash = [
        "lib/hash-94/libprecompute.so",
        "hash",
        "32",
        "1",
        "1",
        "50",
        "1",
        "--samples",
    ];
    // (tries, hits) of a marker line.
    let counts = |l: &str| {
        let f = |k: &str| -> u64 {
            l.split(' ')
                .find_map(|x| x.strip_prefix(k))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{k} in {l}"))
        };
        (f("tries="), f("hits="))
    };
    let line = precompute_by_hand(&run, &hash);
    eprintln!("hash by hand, reference protocol: {line}");
    // The 100 timed calls (the memory pass's call after them may be answered too).
    assert!(counts(&line).1 >= 100, "{line}");
    let mut with_seed = hash.to_vec();
    with_seed.extend(["--seed", &seed]);
    let line = precompute_by_hand(&run, &with_seed);
    eprintln!("hash by hand with --seed: {line}");
    assert!(
        line.contains("source=argv") && counts(&line).1 >= 100,
        "{line}"
    );
    let line = precompute_by_hand(
        &run,
        &[
            "lib/kex-94/libprecompute.so",
            "init_a",
            "0",
            "1",
            "1",
            "50",
            "1",
            "--samples",
            "--seed",
            &seed,
        ],
    );
    eprintln!("init_a by hand with --seed: {line}");
    // The warm-up's exchange and the 50 timed ones.
    assert!(
        line.contains("source=argv") && counts(&line).1 >= 51,
        "{line}"
    );
}
