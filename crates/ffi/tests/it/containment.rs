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
