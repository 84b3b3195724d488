//! What `untrusted::in_force_json` records is what a real child sees: a shell started through
//! `untrusted::run` lists `/proc` (its PID namespace's, when recorded), tries to read a file
//! outside its inputs (refused when read confinement is recorded) and runs a small C program
//! that opens a unix-domain socket (killed by `SIGSYS` when the filter is recorded). Passes as
//! root and as an unprivileged user, with whatever this host provides.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};

fn sh(cwd: &Path, script: &str) -> untrusted::ChildOutcome {
    untrusted::run(&ChildSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: cwd.to_path_buf(),
        timeout: Duration::from_secs(60),
        ..Default::default()
    })
}

#[test]
fn the_record_states_what_a_child_sees() {
    let rec = untrusted::in_force_json(&untrusted::policy());
    eprintln!("{}", serde_json::to_string_pretty(&rec).unwrap());
    assert_eq!(rec["sandbox"], "on");
    let work = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = elsewhere.path().join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();

    // PID namespace: only the shell and its `ls` are in /proc.
    let o = sh(work.path(), "ls /proc");
    assert_eq!(o.code(), Some(0), "{}", o.stderr.text());
    let pids = o
        .stdout
        .text()
        .lines()
        .filter(|l| l.parse::<u32>().is_ok())
        .count();
    let pidns = rec["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "pid");
    assert_eq!(pidns, pids <= 3, "{pids} processes visible; record {rec}");

    // Reads: the secret is outside everything the child was given.
    let o = sh(work.path(), &format!("cat '{}'", secret.display()));
    let confined = rec["read_confinement"]
        .as_str()
        .unwrap()
        .starts_with("landlock");
    assert_eq!(confined, !o.stdout.text().contains("s3cret"), "{rec}");
    assert_eq!(confined, o.code() != Some(0));

    // Unix-domain sockets: the filter kills the process.
    let c = work.path().join("unix.c");
    std::fs::write(
        &c,
        "#include <sys/socket.h>\n#include <stdio.h>\nint main(void) { int s = socket(AF_UNIX, SOCK_STREAM, 0); printf(\"socket %d\\n\", s); return 0; }\n",
    )
    .unwrap();
    let st = Command::new("gcc")
        .arg(&c)
        .arg("-o")
        .arg(work.path().join("unix"))
        .status()
        .unwrap();
    assert!(st.success());
    let o = sh(work.path(), "exec ./unix");
    let filtered = rec["unix_sockets"].as_str().unwrap().starts_with("refused");
    if filtered {
        assert_eq!(o.code(), Some(-31), "{}", o.stdout.text());
    } else {
        assert!(o.stdout.text().contains("socket "), "{}", o.stdout.text());
    }
}

/// The fields of `/proc/self/status` a shell started through `untrusted::run` reports (with
/// the build stage's compiler limits: gcc's children are started the same way).
fn status_of_a_child(cwd: &Path) -> String {
    let o = untrusted::run(&ChildSpec {
        program: "/bin/cat".into(),
        args: vec!["/proc/self/status".into()],
        cwd: cwd.to_path_buf(),
        timeout: Duration::from_secs(60),
        limits: Some(pqperf_ffi::sandbox::Limits {
            address_space: Some(2 << 30),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(o.code(), Some(0), "{}", o.stderr.text());
    o.stdout.text()
}

#[test]
fn a_child_has_no_capability_whoever_runs_pqperf() {
    let rec = untrusted::in_force_json(&untrusted::policy());
    let work = tempfile::tempdir().unwrap();
    let status = status_of_a_child(work.path());
    for k in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
        let v = status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("no {k} in {status}"))
            .trim();
        assert!(v.chars().all(|c| c == '0'), "{k} {v}");
    }
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(
        rec["capabilities"]
            .as_str()
            .unwrap()
            .starts_with("none (probed"),
        "{rec}"
    );
    // Without the sandbox too.
    let off = untrusted::Policy {
        sandbox: false,
        ..Default::default()
    };
    let o = untrusted::run_with(
        &ChildSpec {
            program: "/bin/cat".into(),
            args: vec!["/proc/self/status".into()],
            cwd: work.path().to_path_buf(),
            timeout: Duration::from_secs(60),
            ..Default::default()
        },
        &off,
    );
    assert!(o.stdout.text().contains("CapEff:\t0000000000000000"));
    assert!(o.stdout.text().contains("CapBnd:\t0000000000000000"));
}

#[test]
fn a_child_sees_a_fixed_environment_and_nothing_of_pqperf_in_pid_1() {
    let rec = untrusted::in_force_json(&untrusted::policy());
    let work = tempfile::tempdir().unwrap();
    // This test process is "pqperf" here: its environment has variables the child must not
    // see (cargo's and the shell's), and its argv names this test.
    let o = sh(
        work.path(),
        "env; echo ENDENV; tr '\\0' '|' </proc/1/cmdline; echo; cat /proc/1/environ; echo \"environ:$?\"; cat /proc/1/comm",
    );
    let out = o.stdout.text();
    let (env, rest) = out.split_once("ENDENV\n").unwrap();
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .collect();
    names.sort_unstable();
    names.retain(|n| *n != "PWD" && *n != "SHLVL" && *n != "_"); // set by the shell itself
    let mut allowed = vec!["HOME", "LC_ALL", "PATH", "PQPERF_RESULT_FD", "TMPDIR"];
    for k in ["PQPERF_EMULATOR", "PQPERF_EMULATED", "QEMU_LD_PREFIX"] {
        if std::env::var_os(k).is_some() {
            allowed.push(k);
        }
    }
    allowed.sort_unstable();
    assert_eq!(names, allowed, "{env}");
    assert!(env.contains("LC_ALL=C\n"), "{env}");
    let pidns = rec["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "pid");
    if !pidns {
        eprintln!("skipped: no PID namespace on this host");
        return;
    }
    let mut lines = rest.lines();
    let cmdline = lines.next().unwrap_or_default();
    assert!(
        cmdline.chars().all(|c| c == '|'),
        "PID 1 shows an argv: {cmdline}"
    );
    assert!(
        !rest.contains("CARGO") && !rest.contains("a_child_sees"),
        "{rest}"
    );
    assert!(
        rest.contains("environ:1"),
        "/proc/1/environ was readable: {rest}"
    );
    assert!(rest.trim_end().ends_with("init"), "{rest}");
    assert!(
        rec["namespace_init"].as_str().unwrap().contains("zeroed"),
        "{rec}"
    );
}

#[test]
fn a_timing_child_keeps_its_threads_but_cannot_fork() {
    // A thread (glibc's clone3 refused with ENOSYS, then clone with CLONE_THREAD), then a
    // fork: killed by SIGSYS in a timing child (conducted), allowed in any other child.
    let work = tempfile::tempdir().unwrap();
    let c = work.path().join("threadfork.c");
    std::fs::write(
        &c,
        "#include <pthread.h>\n#include <stdio.h>\n#include <unistd.h>\n#include <sys/wait.h>\n\
static void *f(void *a) { return a; }\n\
int main(void) { pthread_t t; int r = pthread_create(&t, NULL, f, NULL); if (r == 0) pthread_join(t, NULL);\n\
printf(\"thread %d\\n\", r); fflush(stdout); pid_t p = fork(); if (p == 0) _exit(0); if (p > 0) waitpid(p, NULL, 0);\n\
printf(\"forked %d\\n\", p > 0); return 0; }\n",
    )
    .unwrap();
    let st = Command::new("gcc")
        .arg(&c)
        .arg("-pthread")
        .arg("-o")
        .arg(work.path().join("threadfork"))
        .status()
        .unwrap();
    assert!(st.success());
    let spec = ChildSpec {
        program: work.path().join("threadfork"),
        cwd: work.path().to_path_buf(),
        timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let free = untrusted::run(&spec);
    assert_eq!(free.code(), Some(0), "{}", free.stderr.text());
    assert_eq!(free.stdout.text(), "thread 0\nforked 1\n");
    let timed = untrusted::run_conducted(&spec, &mut |s| while s.next_line().is_some() {});
    assert!(
        timed.stdout.text().starts_with("thread 0\n"),
        "{}",
        timed.stdout.text()
    );
    let rec = untrusted::in_force_json(&untrusted::policy());
    let refused = rec["process_creation"]
        .as_str()
        .is_some_and(|s| s.starts_with("refused"));
    if refused {
        assert_eq!(timed.code(), Some(-31), "{}", timed.stdout.text());
        assert!(!timed.stdout.text().contains("forked"));
    } else {
        eprintln!("process creation not refused here: {rec}");
        assert_eq!(timed.code(), Some(0));
    }
}
