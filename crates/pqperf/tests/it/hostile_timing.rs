//! Hostile candidates that try to move their own timing figures (issue 36) rather than forge
//! what the parent is told (`hostile_forgery.rs`). Each is one extra piece of C in a copy of a
//! test candidate, with a marker on stderr proving its hostile statement ran (kept in the
//! record's `processes[].stderr`), and each ends recorded as what it is with the honest
//! candidate beside it complete and unchanged. No timing is asserted (busy-host safe): the
//! tests assert on the markers and on the parent's decisions.
//!
//! - **memo** (`testdata/hostile/memo.h`): sign memoizes `(sk, message) → signature`, KEM dec
//!   memoizes `(sk, ciphertext) → shared secret`. The driver signed one fixed message and
//!   decapsulated one ciphertext in every call, so every call after the first was a memo hit;
//!   it now gives every call an input the process has not seen (`pqperf_driver::inputs`), so
//!   the memo is tried and never hits.
//! - **exe-detect** (`testdata/hostile/exe_detect.h`): sign returns a constant signature at
//!   once when its executable is `pqperf-driver`, and signs correctly elsewhere (the KAT
//!   passes). The parent compares the digest of the timed outputs with a replay in the pqperf
//!   executable (`pqperf_measure::outcheck`): inconsistent, re-run once, no figure.
//! - **rewrite** (`testdata/hostile/rewrite.h`): a constructor takes over the result channel
//!   (dup3 of its own pipe onto the descriptor) and a thread rewrites the driver's lines.
//!   Scaling only the per-call SAMPLES (the robust figure's input) by −80 % is caught
//!   (`verify`: samples must add up to their trial and to the parent's window). A consistent
//!   scaling of every timing line to 90 % of the CPU time the calls took (`REWRITE_CPU`) is
//!   caught by the parent's windows (the driver waits at gates while the parent reads its CPU
//!   time); −5 % and −2 % are printed. A peak RSS of 2 MiB claimed by a library that touched
//!   512 MiB is caught by `ru_maxrss`.
//! - **setup-burn** (`testdata/hostile/setup_burn.h`): burns CPU only in a process with
//!   `TRIALS` = 0 on its argv, the setup-only process the parent used to start to allow for the
//!   setup cost; no such process exists any more, so it never burns, and its −90 % forgery is
//!   inconsistent.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};

const MEMO: &str = include_str!("../../../../testdata/hostile/memo.h");
const TOY_KEM: &str = include_str!("../../../../testdata/hostile/toy_kem.c");
const EXE_DETECT: &str = include_str!("../../../../testdata/hostile/exe_detect.h");
const REWRITE: &str = include_str!("../../../../testdata/hostile/rewrite.h");
const SETUP_BURN: &str = include_str!("../../../../testdata/hostile/setup_burn.h");

pub(crate) fn campaign(run: &Path, phase: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pqperf"));
    c.args(common::toy::campaign_args(run, phase))
        .args(extra)
        .env(pqperf_campaign::lease::LEASE_DIR_ENV, run.parent().unwrap());
    c
}

/// Campaign options of these tests: the last allowed CPU, 2 ms trials, a 60 s calibration
/// limit and a small stack region.
pub(crate) fn short_trials() -> Vec<String> {
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

/// [`short_trials`] with 50 ms trials (windows long enough that the kernel check and the
/// headline floor bound a forgery tightly).
pub(crate) fn trials_50ms() -> Vec<String> {
    let mut opts = short_trials();
    let at = opts.iter().position(|o| o == "--trial-target").unwrap();
    opts[at + 1] = "0.05".into();
    opts
}

/// Calibrates and measures `run` with `opts`; the two phases' stderr (their exit status is
/// the records' to tell).
pub(crate) fn calibrate_and_measure(run: &std::path::Path, opts: &[String]) -> String {
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = String::new();
    for phase in ["calibrate", "measure"] {
        let out = campaign(run, phase, &opts).output().unwrap();
        log += &String::from_utf8_lossy(&out.stderr);
    }
    log
}

pub(crate) fn ok(mut c: Command) -> String {
    let out = c.output().expect("run pqperf");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pqperf failed: {text}");
    text
}

pub(crate) fn record(run: &Path, cand: &str, label: &str, op: &str) -> serde_json::Value {
    let p = run.join(format!("records/{cand}/{label}__{op}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// toy_sig.c whose sig_sign answers from the memo under `-DMEMO_SIGN`.
fn memo_toy_sig() -> String {
    let top = "    work();\n    mix(sk, m, ml, sn);\n    *snl = 64;\n    return 0;";
    assert!(TOY_SIG.contains(top));
    let memo = "#ifdef MEMO_SIGN\n    if (memo_lookup(sk, 32, m, ml, sn, snl)) return 0;\n#endif\n    work();\n    mix(sk, m, ml, sn);\n    *snl = 64;\n#ifdef MEMO_SIGN\n    memo_store(sk, 32, m, ml, sn, 64);\n#endif\n    return 0;";
    format!(
        "#ifdef MEMO_SIGN\n#include \"memo.h\"\n#endif\n{}",
        TOY_SIG.replace(top, memo)
    )
}

/// `(tries, hits)` of every `memo:` marker in the record's processes (all attempts kept).
fn memo_markers(r: &serde_json::Value) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for p in r["processes"].as_array().unwrap() {
        for line in p["stderr"].as_str().unwrap_or("").lines() {
            if let Some(rest) = line.strip_prefix("memo: tries=") {
                let (t, h) = rest.split_once(" hits=").unwrap();
                out.push((t.parse().unwrap(), h.parse().unwrap()));
            }
        }
    }
    out
}

#[test]
fn memoized_sign_and_dec_never_hit_because_no_timed_input_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("memo.h"), MEMO).unwrap();
    let sig = toy_run(
        &run,
        "toy_sig_memo.c",
        &memo_toy_sig(),
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "memo").defines(&["TOY_WORK=20000", "MEMO_SIGN"]),
        ],
    );
    let kem = toy_run(
        &run,
        "toy_kem.c",
        TOY_KEM,
        &[
            Lib::new("kem-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("kem-95", "memo").defines(&["TOY_WORK=20000", "MEMO_DEC"]),
        ],
    );
    let mut bj = sig;
    bj.instances.extend(kem.instances);
    write_build_json(&run, &bj);
    let opts = short_trials();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = ok(campaign(&run, "calibrate", &opts));
    log += &ok(campaign(&run, "measure", &opts));
    for (cand, ops) in [
        ("sign-95", &["keygen", "sign", "verify"][..]),
        ("kem-95", &["keygen", "enc", "dec"][..]),
    ] {
        for label in ["honest", "memo"] {
            for op in ops {
                let r = record(&run, cand, label, op);
                assert_eq!(r["status"], "complete", "{cand} {label} {op}: {r}\n{log}");
                for p in r["processes"].as_array().unwrap() {
                    assert_eq!(p["status"], "complete", "{cand} {label} {op}: {p}");
                    assert_eq!(
                        p["kernel_check"]["problems"],
                        serde_json::json!([]),
                        "{cand} {label} {op}"
                    );
                }
            }
        }
    }
    // The memo was tried in every timed process and never answered: its figures are those of
    // the work. (Before: every call after the first was a hit.)
    for (cand, op) in [("sign-95", "sign"), ("kem-95", "dec")] {
        let r = record(&run, cand, "memo", op);
        let m = memo_markers(&r);
        eprintln!("{cand} memo {op}: (tries, hits) per process {m:?}");
        let n = r["processes"].as_array().unwrap().len();
        assert_eq!(m.len(), n, "{cand} {op}: a marker per process: {r}");
        for (tries, hits) in m {
            assert!(tries > 1, "{cand} {op}: the memo was tried ({tries})");
            assert_eq!(hits, 0, "{cand} {op}: {tries} tries, {hits} hits");
        }
        // The honest library prints no marker.
        assert!(memo_markers(&record(&run, cand, "honest", op)).is_empty());
    }
    // The verify and dec processes took their inputs from a pool covering every call.
    for (cand, op) in [("sign-95", "verify"), ("kem-95", "dec")] {
        let r = record(&run, cand, "honest", op);
        let p = &r["processes"][0];
        let pool: u64 = p["meta"]["input_pool"].as_str().unwrap().parse().unwrap();
        let iters = r["plan"]["iterations_per_trial"].as_u64().unwrap();
        assert!(pool > iters, "{cand} {op}: pool {pool} for {iters} calls");
    }
}

/// toy_sig.c whose sig_sign takes the constant fast path under `-DEXE_DETECT`.
fn detect_toy_sig() -> String {
    let top = "    work();\n    mix(sk, m, ml, sn);";
    assert!(TOY_SIG.contains(top));
    format!(
        "#ifdef EXE_DETECT\n#include \"exe_detect.h\"\n#endif\n{}",
        TOY_SIG.replace(
            top,
            &format!(
                "#ifdef EXE_DETECT\n    if (detect_fast_path(sn, 64, snl)) return 0;\n#endif\n{top}"
            )
        )
    )
}

#[test]
fn wrong_outputs_only_under_the_timing_driver_are_inconsistent() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("exe_detect.h"), EXE_DETECT).unwrap();
    toy_run(
        &run,
        "toy_sig_detect.c",
        &detect_toy_sig(),
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "detect").defines(&["TOY_WORK=20000", "EXE_DETECT"]),
        ],
    );
    let opts = short_trials();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = ok(campaign(&run, "calibrate", &opts));
    // The detecting unit does not complete: exit 1, the others done.
    let out = campaign(&run, "measure", &opts).output().unwrap();
    log += &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    for op in ["keygen", "sign", "verify"] {
        let r = record(&run, "sign-95", "honest", op);
        assert_eq!(r["status"], "complete", "honest {op}: {r}\n{log}");
        let p = &r["processes"][0];
        assert_eq!(p["output_check"]["verdict"], "match", "honest {op}: {p}");
        if op == "verify" {
            // Issue 41: the parent's own check of the relayed pool covers every output.
            assert_eq!(p["output_check"]["chosen"], "parent", "honest {op}: {p}");
        } else if p["disturbed_retries"] == 0 {
            // Issue 41: the first process's replay ran beside it, not after it (a re-run of
            // a disturbed first process, on a busy host, is replayed after it).
            assert_eq!(p["output_check"]["replay_beside"], true, "honest {op}: {p}");
        }
        assert_eq!(p["kernel_check"]["problems"], serde_json::json!([]));
    }
    // Every part of the phase's budget is time the measuring loop spent (its critical path):
    // together they never exceed the phase's wall time (a preparation's wait counted once,
    // a replay beside the process only for what was left of it).
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("campaign.json")).unwrap()).unwrap();
    let m = &c["pqperf"]["measure_budget"];
    let wall = m["phase_wall_s"].as_f64().unwrap();
    let parts: f64 = m["seconds"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "parent_s")
        .map(|(_, v)| v.as_f64().unwrap())
        .sum();
    assert!(
        parts <= wall + 1e-3,
        "parts {parts} > phase wall {wall}: {m}"
    );
    let r = record(&run, "sign-95", "detect", "sign");
    assert_eq!(r["status"], "failed_or_partial", "{r}");
    let attempts: Vec<_> = r["pqperf"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(attempts, ["inconsistent", "inconsistent"], "{r}");
    let p = &r["processes"][0];
    assert_eq!(p["status"], "inconsistent");
    assert_eq!(p["output_check"]["verdict"], "mismatch", "{p}");
    assert!(
        p["kernel_check"]["problems"]
            .to_string()
            .contains("outside the timing driver"),
        "{p}"
    );
    // The marker: the fast path ran in the timed process.
    let fast: u64 = p["stderr"]
        .as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("exe-detect: fast="))
        .unwrap_or_else(|| panic!("no marker: {p}"))
        .parse()
        .unwrap();
    assert!(fast > 1, "{p}");
    // Its keygen is unaffected; its verify checked signatures the library made inside the
    // timing driver (constants: every call rejected), which the replay does not reject.
    assert_eq!(
        record(&run, "sign-95", "detect", "keygen")["status"],
        "complete"
    );
    let r = record(&run, "sign-95", "detect", "verify");
    assert_eq!(r["status"], "failed_or_partial", "{r}");
    assert_eq!(
        r["processes"][0]["output_check"]["verdict"], "mismatch",
        "{r}"
    );
}

#[test]
fn rewritten_samples_and_peak_rss_are_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("rewrite.h"), REWRITE).unwrap();
    let anchor = "    work();\n    for (int i = 0; i < 32; i++) { sk[i] = rnd();";
    assert!(TOY_SIG.contains(anchor));
    let source = format!(
        "#ifdef REWRITE\n#include \"rewrite.h\"\n#endif\n{}",
        TOY_SIG.replace(
            anchor,
            &format!("#ifdef REWRITE_PEAK\n    rw_touch();\n#endif\n{anchor}")
        )
    );
    toy_run(
        &run,
        "toy_sig_rewrite.c",
        &source,
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "samples")
                .defines(&[
                    "TOY_WORK=20000",
                    "REWRITE",
                    "REWRITE_SAMPLES",
                    "REWRITE_PCT=20",
                ])
                .args(&["-lpthread"]),
            Lib::new("sign-95", "peak")
                .defines(&["TOY_WORK=20000", "REWRITE", "REWRITE_PEAK=512"])
                .args(&["-lpthread"]),
        ],
    );
    let opts = short_trials();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = String::new();
    for phase in ["calibrate", "measure"] {
        let out = campaign(&run, phase, &opts).output().unwrap();
        log += &String::from_utf8_lossy(&out.stderr);
    }
    for op in ["keygen", "sign", "verify"] {
        let r = record(&run, "sign-95", "honest", op);
        assert_eq!(r["status"], "complete", "honest {op}: {r}\n{log}");
    }
    let marker = scaled_lines;
    // SAMPLES alone at 20 % of the truth: every process inconsistent, no figure.
    for op in ["keygen", "sign", "verify"] {
        let r = record(&run, "sign-95", "samples", op);
        assert_eq!(r["status"], "failed_or_partial", "samples {op}: {r}");
        let p = &r["processes"][0];
        assert_eq!(p["status"], "inconsistent", "{p}");
        assert!(marker(p) > 0, "the rewrite ran: {p}");
        // Caught by the sum against the trial, or against the parent's window (when the
        // hypervisor's steal during the process excuses the first).
        let problems = p["kernel_check"]["problems"].to_string();
        assert!(
            problems.contains("add up") || problems.contains("per-call samples"),
            "{p}"
        );
    }
    // 512 MiB touched in keygen, a peak RSS of 2 MiB claimed: above what the parent's own RSS
    // explains, so ru_maxrss bounds the claim from below.
    let r = record(&run, "sign-95", "peak", "keygen");
    let p = &r["processes"][0];
    assert_eq!(p["status"], "inconsistent", "{p}");
    assert!(marker(p) > 0, "the rewrite ran: {p}");
    assert!(
        p["kernel_check"]["problems"]
            .to_string()
            .contains("ru_maxrss is"),
        "{p}"
    );
}

/// `rewrite.h` scaling every timing line, and `setup_burn.h`, in toy_sig.c.
fn forging_toy_sig() -> String {
    format!(
        "#ifdef REWRITE\n#include \"rewrite.h\"\n#endif\n#ifdef SETUP_BURN\n#include \"setup_burn.h\"\n#endif\n{TOY_SIG}"
    )
}

/// The `rewrite: … scaled=N` marker of a process entry (0: none).
pub(crate) fn scaled_lines(p: &serde_json::Value) -> u64 {
    p["stderr"]
        .as_str()
        .unwrap_or("")
        .lines()
        .find_map(|l| l.split_once(" scaled=").map(|(_, n)| n.parse().unwrap()))
        .unwrap_or(0)
}

#[test]
fn consistent_forgeries_and_a_setup_burn_are_inconsistent() {
    // The parent owns the interval boundaries: every timed interval runs between two of its
    // readings of the child's CPU time, so a consistent forgery of every timing line (each
    // interval claimed at 90 % of the CPU time its calls took: `REWRITE_CPU`) is
    // inconsistent, and no process has TRIALS = 0 any more, so a library that burns CPU
    // only in a setup-only process never finds one (its -90 % forgery is inconsistent).
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("rewrite.h"), REWRITE).unwrap();
    std::fs::write(run.join("setup_burn.h"), SETUP_BURN).unwrap();
    let rewrite = |pct: &str| {
        Lib::new(
            "sign-95",
            &format!("minus{}", 100 - pct.parse::<u32>().unwrap()),
        )
        .defines(&[
            "TOY_WORK=20000",
            "REWRITE",
            "REWRITE_CPU",
            &format!("REWRITE_PCT={pct}"),
        ])
        .args(&["-lpthread"])
    };
    toy_run(
        &run,
        "toy_sig_forge.c",
        &forging_toy_sig(),
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            rewrite("90"),
            rewrite("95"),
            rewrite("98"),
            Lib::new("sign-95", "burn")
                .defines(&[
                    "TOY_WORK=20000",
                    "REWRITE",
                    "REWRITE_CPU",
                    "REWRITE_PCT=10",
                    "SETUP_BURN",
                    "SETUP_BURN_MS=3000",
                ])
                .args(&["-lpthread"]),
        ],
    );
    // Trials of 50 ms (the --target-ci protocol's are 60–250 ms).
    let log = calibrate_and_measure(&run, &trials_50ms());
    let ops = ["keygen", "sign", "verify"];
    for op in ops {
        let r = record(&run, "sign-95", "honest", op);
        assert_eq!(r["status"], "complete", "honest {op}: {r}\n{log}");
        for p in r["processes"].as_array().unwrap() {
            assert_eq!(p["status"], "complete", "honest {op}: {p}");
            assert_eq!(p["kernel_check"]["problems"], serde_json::json!([]), "{p}");
        }
    }
    for (label, op) in ["minus10", "burn"]
        .iter()
        .flat_map(|l| ops.map(|o| (*l, o)))
    {
        let r = record(&run, "sign-95", label, op);
        assert_eq!(r["status"], "failed_or_partial", "{label} {op}: {r}\n{log}");
        let p = &r["processes"][0];
        assert_eq!(p["status"], "inconsistent", "{label} {op}: {p}");
        assert!(scaled_lines(p) > 0, "the rewrite ran: {p}");
        assert!(
            p["kernel_check"]["problems"].to_string().contains("window"),
            "{label} {op}: {p}"
        );
    }
    // The burn's marker: its check ran in every process and never found TRIALS = 0.
    for op in ops {
        let r = record(&run, "sign-95", "burn", op);
        for p in r["processes"].as_array().unwrap() {
            let m = p["stderr"]
                .as_str()
                .unwrap_or("")
                .lines()
                .find_map(|l| l.strip_prefix("setup-burn: "))
                .unwrap_or_else(|| panic!("no setup-burn marker: {p}"))
                .to_string();
            assert!(
                m.ends_with(" burned_ms=0") && !m.starts_with("trials=0 "),
                "{m}"
            );
        }
    }
    // Smaller forgeries: what the parent decided, printed (the bound depends on the window's
    // length, see docs/threat-model.md).
    for (label, op) in ["minus5", "minus2"]
        .iter()
        .flat_map(|l| ops.map(|o| (*l, o)))
    {
        let r = record(&run, "sign-95", label, op);
        let p = &r["processes"][0];
        eprintln!(
            "rewrite {label} {op}: record {}, process {} (scaled lines {}), problems {}",
            r["status"],
            p["status"],
            scaled_lines(p),
            p["kernel_check"]["problems"]
        );
    }
}
