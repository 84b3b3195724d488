//! Hostile candidates that hide time the parent's CPU readings do not show (issue 36): each
//! is one extra header in a copy of the toy signature, with a marker on stderr proving its
//! hostile statement ran, and each ends recorded as what it is with the honest candidate
//! beside it complete. No timing ratio is asserted: the tests read the parent's own
//! evidence (the per-window run-queue wait it recorded) and decide from that.
//!
//! - **cpu-clock** (`testdata/hostile/cpu_clock.h`): every interval claimed at its CPU time in
//!   place of its wall time. Beside a hog pinned to the same CPU the wall time holds a large
//!   run-queue wait, which the claims hide; the parent reads every task's schedstat at each
//!   gate (`kernel_check.window_run_delay_s`), and a window whose CPU time and wait exceed
//!   its claim is inconsistent.
//! - **fork-helper** (`testdata/hostile/fork_helper.h`): forks a CPU-burning helper inside a
//!   timed call and reaps it there. Timing children may create no process (seccomp, see
//!   `pqperf_ffi::sandbox::NO_PROCESS_CALLS`): the driver is killed with `SIGSYS` and the
//!   process is recorded failed with the reason.

use crate::common;
use crate::hostile_timing::{campaign, ok, record, scaled_lines, short_trials, trials_50ms};

use common::mldsa::Spinner;
use common::toy::{Lib, TOY_SIG, toy_run};

const REWRITE: &str = include_str!("../../../../testdata/hostile/rewrite.h");
const CPU_CLOCK: &str = include_str!("../../../../testdata/hostile/cpu_clock.h");
const FORK_HELPER: &str = include_str!("../../../../testdata/hostile/fork_helper.h");

/// The `rewrite-cpu: intervals=N hidden_us=H` marker of a process entry.
fn hidden_marker(p: &serde_json::Value) -> Option<(u64, u64)> {
    p["stderr"].as_str()?.lines().find_map(|l| {
        let rest = l.strip_prefix("rewrite-cpu: intervals=")?;
        let (n, h) = rest.split_once(" hidden_us=")?;
        Some((n.parse().ok()?, h.parse().ok()?))
    })
}

#[test]
fn cpu_time_claimed_beside_a_hog_is_caught_by_the_run_queue_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("rewrite.h"), REWRITE).unwrap();
    std::fs::write(run.join("cpu_clock.h"), CPU_CLOCK).unwrap();
    let source = format!("#ifdef CPU_CLOCK\n#include \"cpu_clock.h\"\n#endif\n{TOY_SIG}");
    toy_run(
        &run,
        "toy_sig_cpu_clock.c",
        &source,
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "cpuclock")
                .defines(&["TOY_WORK=20000", "CPU_CLOCK"])
                .args(&["-lpthread"]),
        ],
    );
    // Trials of 50 ms, measured beside a hog pinned to the measuring CPU: each interval
    // shares the CPU, so about half of its wall time is run-queue wait.
    let opts = trials_50ms();
    let at = opts.iter().position(|o| o == "--cpu").unwrap();
    let cpu: usize = opts[at + 1].parse().unwrap();
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let mut log = ok(campaign(&run, "calibrate", &opts));
    {
        let _hog = Spinner::start(cpu);
        let out = campaign(&run, "measure", &opts).output().unwrap();
        log += &String::from_utf8_lossy(&out.stderr);
    }
    let ops = ["keygen", "sign", "verify"];
    for op in ops {
        let r = record(&run, "sign-95", "honest", op);
        assert_eq!(r["status"], "complete", "honest {op}: {r}\n{log}");
        for p in r["processes"].as_array().unwrap() {
            assert_eq!(p["status"], "complete", "honest {op}: {p}");
            assert_eq!(p["kernel_check"]["problems"], serde_json::json!([]), "{p}");
            // What the untimed work of each window held (main thread's time after its first
            // arrival less the claim) against what was allowed: the slack, printed.
            let kc = &p["kernel_check"];
            let f = |k: &str, i: usize| kc[k][i].as_f64();
            let n = kc["window_claimed_s"].as_array().map_or(0, Vec::len);
            let untimed: Vec<String> = (0..n)
                .map(
                    |i| match (f("window_main_s", i), f("window_claimed_s", i)) {
                        (Some(m), Some(c)) => format!(
                            "{:.0} µs of {:.0} µs",
                            (m - c) * 1e6,
                            f("window_wait_allowance_s", i).unwrap_or(0.0) * 1e6
                        ),
                        _ => "not seen".into(),
                    },
                )
                .collect();
            eprintln!(
                "honest {op}: window run-queue waits {}, wake waits {}, untimed {untimed:?}",
                kc["window_run_delay_s"], kc["window_wake_wait_s"]
            );
        }
    }
    // The gate's own allowance for wait: a window whose wait is well above it (and above the
    // 1 % relative tolerance of its claim) cannot hide it.
    let allowance = pqperf_model::kernelcheck::WINDOW_WAIT_ABS_S;
    let mut judged = 0;
    for op in ops {
        let r = record(&run, "sign-95", "cpuclock", op);
        let p = &r["processes"][0];
        let (intervals, hidden_us) =
            hidden_marker(p).unwrap_or_else(|| panic!("no cpu-clock marker: {p}"));
        assert!(intervals > 0 && scaled_lines(p) > 0, "the rewrite ran: {p}");
        let kc = &p["kernel_check"];
        let waits: Vec<f64> = kc["window_run_delay_s"]
            .as_array()
            .unwrap_or_else(|| panic!("no window_run_delay_s: {kc}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let claimed: Vec<f64> = kc["window_claimed_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let large = waits
            .iter()
            .zip(&claimed)
            .any(|(w, c)| *w > 2.0 * allowance + 0.02 * c + 0.002);
        eprintln!(
            "cpu-clock {op}: process {}, hidden {hidden_us} µs over {intervals} intervals, window waits {waits:?}, claims {claimed:?}, problems {}",
            p["status"], kc["problems"]
        );
        if !large {
            eprintln!("cpu-clock {op}: no window waited well above the allowance; not judged");
            continue;
        }
        judged += 1;
        assert_eq!(p["status"], "inconsistent", "cpu-clock {op}: {p}");
        assert!(
            kc["problems"].to_string().contains("run-queue wait"),
            "cpu-clock {op}: {p}"
        );
        assert_ne!(r["status"], "complete", "cpu-clock {op}: {r}");
    }
    eprintln!("cpu-clock: {judged} of {} operations judged", ops.len());
}

#[test]
fn a_helper_forked_inside_a_timed_call_kills_the_timing_child() {
    let refused =
        pqperf_ffi::untrusted::in_force_json(&pqperf_ffi::untrusted::policy())["process_creation"]
            .as_str()
            .is_some_and(|s| s.starts_with("refused"));
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("fork_helper.h"), FORK_HELPER).unwrap();
    let anchor = "    work();\n    mix(sk, m, ml, sn);";
    assert!(TOY_SIG.contains(anchor));
    let source = format!(
        "#ifdef FORK_HELPER\n#include \"fork_helper.h\"\n#endif\n{}",
        TOY_SIG.replace(
            anchor,
            &format!("#ifdef FORK_HELPER\n    fork_helper();\n#endif\n{anchor}")
        )
    );
    toy_run(
        &run,
        "toy_sig_fork.c",
        &source,
        &[
            Lib::new("sign-95", "honest").defines(&["TOY_WORK=20000"]),
            Lib::new("sign-95", "forker").defines(&["TOY_WORK=20000", "FORK_HELPER"]),
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
    let p = run.join("records/sign-95/forker__sign.json");
    let text = std::fs::read_to_string(&p).unwrap_or_default();
    eprintln!("forker sign: {text}\n{log}");
    if !refused {
        eprintln!("process creation is not refused on this host: nothing to judge");
        return;
    }
    // Killed at its attempt: the record (or, when calibration already met it, the log)
    // says so, and no helper ran.
    let all = format!("{text}\n{log}");
    assert!(
        all.contains("fork-helper: attempt call="),
        "the attempt ran: {all}"
    );
    assert!(
        !all.contains("fork-helper: forked="),
        "a helper was forked: {all}"
    );
    assert!(all.contains("SIGSYS"), "{all}");
    if !text.is_empty() {
        let r: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_ne!(r["status"], "complete", "{r}");
        let p = &r["processes"][0];
        assert_eq!(p["status"], "failed", "{p}");
        assert_eq!(p["exit_code"], -31, "{p}");
    }
}
