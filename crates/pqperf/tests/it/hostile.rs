//! Hostile candidates (issue 11): copies of `testdata/candidates/wots-pxof` with one extra
//! statement in `sig_sign`, imported and built by pqperf, then run through the timing driver
//! (as calibrate/measure do) and the KAT child. Each must be measured normally or recorded as
//! a failure, never forge a result, stall the campaign, reach the network, write outside its
//! scratch directory or exhaust the host.

use crate::common;
use pqperf_test_support::{Ran, pqperf};

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pqperf_measure::runner::Run;

/// (id, statement inserted at the top of `sig_sign`'s work).
const CASES: &[(&str, &str)] = &[
    ("sign-70", r#"putchar('.'); fflush(stdout);"#),
    (
        "sign-71",
        r#"{ static int done; if (!done) { static char b[1 << 20]; memset(b, 'x', sizeof b); for (int k = 0; k < 125; k++) { fwrite(b, 1, sizeof b, stdout); fwrite(b, 1, sizeof b, stderr); } fflush(stdout); done = 1; } }"#,
    ),
    (
        "sign-72",
        r#"{ printf("TRIAL\t1\t5\t0.000001000\t210\nSTATUS\tcomplete\n"); fflush(stdout); _exit(0); }"#,
    ),
    ("sign-73", r#"exit(0);"#),
    (
        "sign-69",
        r#"{ const char *e = getenv("PQPERF_RESULT_FD"); if (e) { dprintf(atoi(e), "TRIAL\t1\t5\t0.000001000\t210\nSTATUS\tcomplete\n"); } _exit(0); }"#,
    ),
    ("sign-74", r#"close(1); close(2);"#),
    (
        "sign-75",
        r#"{ static int done; if (!done) { done = 1; pid_t p = fork(); if (p == 0) { sleep(30); _exit(0); } fprintf(stderr, "GRANDCHILD %d\n", (int)p); fflush(stderr); } }"#,
    ),
    ("sign-76", r#"for (;;) fork();"#),
    (
        "sign-77",
        r#"{ size_t n = 8ULL << 30; char *p = malloc(n); memset(p, 1, n); sn[0] ^= p[n - 1]; }"#,
    ),
    (
        "sign-78",
        r#"{ int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a; memset(&a, 0, sizeof a); a.sin_family = AF_INET; a.sin_port = htons(PORT); a.sin_addr.s_addr = htonl(0x7f000001); if (s >= 0) { connect(s, (struct sockaddr *)&a, sizeof a); close(s); } }"#,
    ),
    (
        "sign-79",
        r#"{ FILE *f = fopen(HOMEFILE, "w"); if (f) { fputs("owned\n", f); fclose(f); } }"#,
    ),
];

const INCLUDES: &str = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n\
#include <sys/types.h>\n#include <sys/socket.h>\n#include <netinet/in.h>\n#include <arpa/inet.h>\n";

struct Fixture {
    _tmp: tempfile::TempDir,
    run: PathBuf,
    home: PathBuf,
    listener: TcpListener,
}

use common::repo;

/// Imports and builds every case once (shared by the tests of this file).
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let home = tmp.path().join("victim-home");
        std::fs::create_dir_all(&home).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let rd = run.to_str().unwrap();
        for (id, stmt) in CASES {
            let dir = tmp.path().join(id);
            pqperf_model::fsutil::copy_tree(&repo().join("testdata/candidates/wots-pxof"), &dir)
                .unwrap();
            let src = dir.join("Reference_Implementation/WOTS-PXOF-128/SIG_AlgorithmInstance.c");
            let text = std::fs::read_to_string(&src).unwrap();
            let anchor = "if (sk_len_bytes != WOTS_SK_BYTES) return -3;";
            assert!(text.contains(anchor));
            let stmt = stmt.replace("PORT", &port.to_string()).replace(
                "HOMEFILE",
                &format!("\"{}\"", home.join("planted").display()),
            );
            let text = format!(
                "{INCLUDES}{}",
                text.replace(anchor, &format!("{anchor}\n    {stmt}"))
            );
            std::fs::write(&src, text).unwrap();
            pqperf()
                .args([
                    "import",
                    "iccs",
                    dir.to_str().unwrap(),
                    "--id",
                    id,
                    "--run-dir",
                    rd,
                ])
                .ok();
        }
        let out = pqperf().args(["build", "--run-dir", rd]).ok();
        assert!(
            out.contains(&format!("built {} libraries, 0 BUILDFAIL", CASES.len())),
            "{out}"
        );
        Fixture {
            _tmp: tmp,
            run,
            home,
            listener,
        }
    })
}

fn drive(id: &str, timeout: Duration) -> Run {
    common::drive_wots_sign(&fixture().run, id, timeout)
}

fn output_bytes(r: &Run, which: &str) -> u64 {
    r.process
        .extra
        .get("candidate_output")
        .and_then(|o| o[which].as_u64())
        .unwrap_or(0)
}

fn sandbox() -> serde_json::Value {
    pqperf_ffi::untrusted::in_force_json(&pqperf_ffi::untrusted::policy())
}

/// Whether timing children are refused process creation on this host (seccomp).
fn fork_refused() -> bool {
    sandbox()["process_creation"]
        .as_str()
        .is_some_and(|s| s.starts_with("refused"))
}

#[test]
fn printing_candidate_is_measured_normally() {
    let r = drive("sign-70", Duration::from_secs(60));
    assert!(r.complete(), "{:?}", r.process);
    assert_eq!(r.process.trials.len(), 2);
    assert_eq!(r.samples.len(), 10);
    // 1 warm-up + 10 timed calls, one dot each (setup may sign too).
    assert!(output_bytes(&r, "stdout_bytes") >= 11);
}

#[test]
fn flood_of_output_is_capped_in_the_parent() {
    let r = drive("sign-71", Duration::from_secs(120));
    // Measured, unless its trials slept writing to the pipe while the parent, on a busy
    // machine, drained it more slowly than the candidate filled it: then the kernel check
    // finds trials that were neither on the CPU nor waiting for it, and says only that.
    if !r.complete() {
        let kc = &r.process.extra["kernel_check"];
        let problems: Vec<&str> = kc["problems"]
            .as_array()
            .map(|v| v.iter().filter_map(|p| p.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(r.process.status, "inconsistent", "{:?}", r.process);
        assert!(
            !problems.is_empty()
                && problems
                    .iter()
                    .all(|p| p.contains("on CPU or waiting for it")),
            "{kc}"
        );
    }
    assert_eq!(output_bytes(&r, "stdout_bytes"), 125 << 20);
    assert_eq!(output_bytes(&r, "stderr_bytes"), 125 << 20);
    assert!(r.process.stderr.chars().count() <= 2000);
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(hwm_kb < 200 * 1024, "parent peak RSS {hwm_kb} kB");
}

#[test]
fn fake_result_lines_on_stdout_forge_nothing() {
    let r = drive("sign-72", Duration::from_secs(60));
    assert!(!r.complete(), "forged record: {:?}", r.process);
    assert!(r.process.trials.is_empty() || r.process.trials[0].cycles != Some(210));
    assert!(r.samples.iter().all(|&s| s != 210));
}

#[test]
fn exit_inside_sign_is_a_failure() {
    let r = drive("sign-73", Duration::from_secs(60));
    assert!(!r.complete());
    assert_eq!(r.process.status, "missing", "{:?}", r.process);
    assert_eq!(r.process.exit_code, Some(0));
}

#[test]
fn result_descriptor_is_not_announced_to_candidate_code() {
    // The candidate looks the channel up in its environment to forge a result: the child
    // removed the variable before loading the library, so nothing is forged.
    let r = drive("sign-69", Duration::from_secs(60));
    assert!(!r.complete(), "{:?}", r.process);
    assert!(r.process.trials.is_empty(), "{:?}", r.process);
}

#[test]
fn closed_standard_streams_do_not_matter() {
    let r = drive("sign-74", Duration::from_secs(60));
    assert!(r.complete(), "{:?}", r.process);
}

#[test]
fn sleeping_grandchild_is_killed_and_does_not_stall() {
    let t0 = Instant::now();
    let r = drive("sign-75", Duration::from_secs(25));
    let took = t0.elapsed();
    // Not waited for: the grandchild sleeps 30 s, longer than the 25 s timeout, so a stalled
    // run would have ended as a hard timeout or after the grandchild.
    assert!(took < Duration::from_secs(25), "driver run took {took:?}");
    assert!(r.wall_s < 25.0);
    if fork_refused() {
        // A timing child may create no process: killed at its fork, no grandchild.
        assert_eq!(r.process.status, "failed", "{:?}", r.process);
        assert_eq!(r.process.exit_code, Some(-31), "{:?}", r.process);
        assert!(r.process.stderr.contains("SIGSYS"), "{}", r.process.stderr);
    } else {
        assert!(r.complete(), "{:?}", r.process);
        assert!(
            r.process.stderr.contains("GRANDCHILD "),
            "{}",
            r.process.stderr
        );
    }
    // Gone (or at most a zombie awaiting its reaper) right after the run: no process on the
    // host still maps the candidate's library (the pid it printed is its PID namespace's).
    // Generous for a loaded host: the assertion is that they end, not how fast.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let alive = common::processes_mapping("sign-75/libWOTS-PXOF-128.so");
        if alive.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "grandchild still alive: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn fork_bomb_is_contained_and_recorded() {
    let sb = sandbox();
    let limit = sb["pids_limit"].as_str().unwrap_or("");
    if limit.starts_with("not in force") {
        eprintln!("skipped: no pids limit on this host ({limit}); a fork bomb would harm it");
        return;
    }
    let t0 = Instant::now();
    let r = drive("sign-76", Duration::from_secs(3));
    assert!(!r.complete());
    if fork_refused() {
        // The first fork kills the timing child: the bomb never starts.
        assert_eq!(r.process.status, "failed", "{:?}", r.process);
        assert_eq!(r.process.exit_code, Some(-31), "{:?}", r.process);
    } else {
        assert_eq!(r.process.status, "hard_timeout", "{:?}", r.process);
    }
    // Bounded by the 3 s timeout plus the bounded kill and drain, whatever the load: a bomb
    // that survived the group kill would hold its pipes open for good.
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
}

#[test]
fn huge_allocation_is_a_recorded_failure() {
    let r = drive("sign-77", Duration::from_secs(60));
    assert!(!r.complete());
    assert_eq!(r.process.status, "failed", "{:?}", r.process);
}

#[test]
fn no_network_and_no_writes_outside_scratch() {
    let f = fixture();
    let net = drive("sign-78", Duration::from_secs(60));
    assert!(net.complete(), "{:?}", net.process);
    let home = drive("sign-79", Duration::from_secs(60));
    assert!(home.complete(), "{:?}", home.process);
    // The KAT child runs the same statements.
    let rd = f.run.to_str().unwrap();
    // Exit 0 when all PASS, 1 when one did not (documented codes); never a refusal.
    let o = common::output(
        None,
        &[
            "kat",
            "--run-dir",
            rd,
            "--only",
            "sign-7[0789]",
            "--no-fallback",
            "--timeout",
            "60",
        ],
    );
    let out = common::text(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}");
    assert!(out.contains("kat: 4 instance(s)"), "{out}");
    assert!(
        matches!(
            f.listener.accept(),
            Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock
        ),
        "a candidate connected to the test's listener"
    );
    assert!(
        !f.home.join("planted").exists(),
        "a candidate wrote outside its scratch directory"
    );
    // A printing candidate still passes its KAT (its output is not part of the log).
    let log = std::fs::read_to_string(f.run.join("kat/sign-70/WOTS-PXOF-128.log")).unwrap();
    assert!(log.contains("RESULT sign-70 WOTS-PXOF-128 PASS"), "{log}");
    assert!(log.contains("child output: stdout"), "{log}");
    // The 8 GiB allocation is a recorded crash in the KAT child too.
    let log = std::fs::read_to_string(f.run.join("kat/sign-77/WOTS-PXOF-128.log")).unwrap();
    assert!(log.contains("RESULT sign-77 WOTS-PXOF-128 CRASH"), "{log}");
}
