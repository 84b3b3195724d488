//! Hostile candidates against the sandbox's walls (issue 31): copies of
//! `testdata/candidates/wots-pxof` with one extra statement in `sig_sign` (or one extra line
//! in the source), imported and built by pqperf and run through the timing driver, the KAT
//! child and `pqperf ct`. Each attack (a unix socket of the host, a descriptor inherited from
//! pqperf's caller, a file under `$HOME`, stopping pqperf, moving its own CPU or priority, a
//! `setsid` grandchild (in the timing driver, which may create no process: killed at its fork), a write outside scratch under `ct`, a compiler fed `/dev/zero` in the
//! build and in `import`'s header probes, pqperf ended while a candidate sleeps) ends
//! recorded as what it is, and everything else goes on.

use crate::common;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pqperf_measure::runner::Run;

/// (id, statement inserted at the top of `sig_sign`'s work).
const CASES: &[(&str, &str)] = &[
    (
        "sign-90",
        r#"{ int s = socket(AF_UNIX, SOCK_STREAM, 0); struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX; strcpy(a.sun_path, UNIXPATH); int r = s >= 0 ? connect(s, (struct sockaddr *)&a, sizeof a) : -1; fprintf(stderr, "UNIX %d %d\n", s, r); }"#,
    ),
    (
        "sign-91",
        r#"{ int fl = fcntl(7, F_GETFL); int r = (fl != -1 && (fl & O_APPEND)) ? (int)write(7, "owned\n", 6) : -1; fprintf(stderr, "FD7 %d\n", r); }"#,
    ),
    (
        "sign-92",
        r#"{ static int done; if (!done) { done = 1; char b[256] = {0}; FILE *f = fopen(HOMEFILE, "r"); if (f) { fgets(b, sizeof b, f); fclose(f); } fprintf(stderr, "HOME[%s]\n", b); } }"#,
    ),
    (
        "sign-93",
        r#"{ int r = kill(getppid(), SIGSTOP); fprintf(stderr, "KILL %d\n", r); }"#,
    ),
    (
        "sign-94",
        r#"{ cpu_set_t c; CPU_ZERO(&c); CPU_SET(0, &c); sched_setaffinity(0, sizeof c, &c); }"#,
    ),
    ("sign-95", r#"{ setpriority(PRIO_PROCESS, 0, -20); }"#),
    (
        "sign-96",
        r#"{ static int done; if (!done) { done = 1; pid_t p = fork(); if (p == 0) { setsid(); FILE *f = fopen("/sys/fs/cgroup/cgroup.procs", "w"); if (f) { fputs("0", f); fclose(f); } if (fork() == 0) { setsid(); sleep(60); } _exit(0); } } }"#,
    ),
    ("sign-97", r#"{ sleep(60); }"#),
    (
        "sign-98",
        r#"{ FILE *f = fopen(HOMEFILE2, "w"); if (f) { fputs("owned\n", f); fclose(f); } }"#,
    ),
];

/// The case whose source also includes `/dev/zero` (a build-stage attack).
const DEVZERO: &str = "sign-99";

const INCLUDES: &str = "#define _GNU_SOURCE\n#include <stdio.h>\n#include <stdlib.h>\n\
#include <string.h>\n#include <unistd.h>\n#include <fcntl.h>\n#include <signal.h>\n#include <sched.h>\n\
#include <sys/types.h>\n#include <sys/socket.h>\n#include <sys/un.h>\n#include <sys/resource.h>\n";

struct Fixture {
    tmp: tempfile::TempDir,
    run: PathBuf,
    home: PathBuf,
    unix: UnixListener,
    build_output: String,
}

fn secret_file(home: &Path) -> PathBuf {
    home.join(".ssh/id_token")
}

const SECRET: &str = "TOKEN-4e1f9c-NOT-FOR-CANDIDATES";

/// Imports and builds every case once.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let home = tmp.path().join("victim-home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(secret_file(&home), format!("{SECRET}\n")).unwrap();
        let sock = tmp.path().join("host.sock");
        let unix = UnixListener::bind(&sock).unwrap();
        unix.set_nonblocking(true).unwrap();
        let rd = run.to_str().unwrap();
        let mut all: Vec<(&str, &str)> = CASES.to_vec();
        all.push((DEVZERO, ""));
        for (id, stmt) in &all {
            let dir = tmp.path().join(id);
            pqperf_model::fsutil::copy_tree(
                &common::repo().join("testdata/candidates/wots-pxof"),
                &dir,
            )
            .unwrap();
            let src = dir.join("Reference_Implementation/WOTS-PXOF-128/SIG_AlgorithmInstance.c");
            let text = std::fs::read_to_string(&src).unwrap();
            let anchor = "if (sk_len_bytes != WOTS_SK_BYTES) return -3;";
            assert!(text.contains(anchor));
            let q = |p: &Path| format!("\"{}\"", p.display());
            let stmt = stmt
                .replace("UNIXPATH", &q(&sock))
                .replace("HOMEFILE2", &q(&home.join("planted-by-ct")))
                .replace("HOMEFILE", &q(&secret_file(&home)));
            let extra = if *id == DEVZERO {
                "#include \"/dev/zero\"\n"
            } else {
                ""
            };
            let text = format!(
                "{INCLUDES}{extra}{}",
                text.replace(anchor, &format!("{anchor}\n    {stmt}"))
            );
            std::fs::write(&src, text).unwrap();
            common::ok(
                None,
                &[
                    "import",
                    "iccs",
                    dir.to_str().unwrap(),
                    "--id",
                    id,
                    "--run-dir",
                    rd,
                ],
            );
        }
        let t0 = Instant::now();
        let o = common::output(None, &["build", "--run-dir", rd]);
        let build_output = common::text(&o);
        eprintln!("build: {:.1} s", t0.elapsed().as_secs_f64());
        Fixture {
            tmp,
            run,
            home,
            unix,
            build_output,
        }
    })
}

fn drive(id: &str, timeout: Duration) -> Run {
    common::drive_wots_sign(&fixture().run, id, timeout)
}

/// `pqperf <args>` started by a shell with `HOME` set to the victim's home and descriptor 7
/// open on `fd7` (as a calling shell may leave it): output and exit code.
fn pqperf_from_shell(args: &[&str], fd7: &Path) -> (i32, String) {
    let f = fixture();
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec 7>>\"$0\"; exec \"$@\"")
        .arg(fd7)
        .arg(common::exe())
        .args(args)
        .env("HOME", &f.home)
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), common::text(&o))
}

fn sandbox() -> serde_json::Value {
    pqperf_ffi::untrusted::in_force_json(&pqperf_ffi::untrusted::policy())
}

fn in_force(key: &str) -> bool {
    let v = sandbox();
    let s = v[key].as_str().unwrap_or("not in force");
    if s.starts_with("not") {
        eprintln!("skipped: {key} is {s} on this host");
        return false;
    }
    true
}

fn kat_log(id: &str) -> String {
    std::fs::read_to_string(fixture().run.join(format!("kat/{id}/WOTS-PXOF-128.log")))
        .unwrap_or_default()
}

/// Every byte pqperf wrote below the run directory in a file whose path names `id`.
fn evidence_of(id: &str) -> String {
    fn walk(d: &Path, id: &str, s: &mut String) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                walk(&p, id, s);
            } else if t.is_file() && p.to_string_lossy().contains(id) {
                s.push_str(&String::from_utf8_lossy(
                    &std::fs::read(&p).unwrap_or_default(),
                ));
            }
        }
    }
    let mut s = String::new();
    walk(&fixture().run, id, &mut s);
    s
}

#[test]
fn the_compiler_fed_dev_zero_is_a_buildfail_with_a_reason_and_nothing_else_is_lost() {
    let f = fixture();
    assert!(
        f.build_output
            .contains(&format!("built {} libraries, 1 BUILDFAIL", CASES.len())),
        "{}",
        f.build_output
    );
    let log = std::fs::read_to_string(f.run.join(format!("build/{DEVZERO}.log"))).unwrap();
    assert!(
        log.contains("BUILDFAIL: compiling") && log.contains("failed ("),
        "{log}"
    );
    assert!(
        !f.run
            .join(format!("lib/{DEVZERO}/libWOTS-PXOF-128.so"))
            .exists()
    );
}

#[test]
fn unix_socket_to_the_host_is_refused_and_recorded() {
    if !in_force("unix_sockets") {
        return;
    }
    let r = drive("sign-90", Duration::from_secs(60));
    assert!(!r.complete(), "{:?}", r.process);
    assert_eq!(r.process.exit_code, Some(-31), "{:?}", r.process);
    assert!(r.process.stderr.contains("SIGSYS"), "{}", r.process.stderr);
    assert!(
        matches!(fixture().unix.accept(), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "a candidate connected to the host's unix socket"
    );
}

#[test]
fn inherited_descriptor_and_home_stay_out_of_reach_of_kat_and_driver() {
    let f = fixture();
    let fd7 = f.tmp.path().join("fd7-of-the-shell");
    std::fs::write(&fd7, "").unwrap();
    let rd = f.run.to_str().unwrap();
    let (code, out) = pqperf_from_shell(
        &[
            "kat",
            "--run-dir",
            rd,
            "--only",
            "sign-9[12]",
            "--no-fallback",
            "--timeout",
            "60",
        ],
        &fd7,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("kat: 2 instance(s)"), "{out}");
    // Both still pass their KAT: the attacks failed quietly inside the sandbox.
    for id in ["sign-91", "sign-92"] {
        let log = kat_log(id);
        assert!(
            log.contains(&format!("RESULT {id} WOTS-PXOF-128 PASS")),
            "{log}"
        );
    }
    let r = drive("sign-91", Duration::from_secs(60));
    assert!(r.complete(), "{:?}", r.process);
    assert_eq!(
        std::fs::read_to_string(&fd7).unwrap(),
        "",
        "a candidate wrote through fd 7"
    );
    let r = drive("sign-92", Duration::from_secs(60));
    assert!(r.complete(), "{:?}", r.process);
    assert!(r.process.stderr.contains("HOME[]"), "{}", r.process.stderr);
    assert!(
        !evidence_of("sign-92").contains(SECRET),
        "the secret reached the evidence"
    );
}

#[test]
fn stopping_pqperf_fails_and_the_campaign_goes_on() {
    let t0 = Instant::now();
    let r = drive("sign-93", Duration::from_secs(60));
    // Landlock's signal scope refuses it; in a PID namespace `getppid()` is not even pqperf.
    assert!(r.complete(), "{:?}", r.process);
    assert!(r.process.stderr.contains("KILL "), "{}", r.process.stderr);
    assert!(t0.elapsed() < Duration::from_secs(30));
}

#[test]
fn moving_its_own_cpu_or_priority_kills_the_candidate_and_is_recorded() {
    if !in_force("scheduling") {
        return;
    }
    for id in ["sign-94", "sign-95"] {
        let r = drive(id, Duration::from_secs(60));
        assert!(!r.complete(), "{id}: {:?}", r.process);
        assert_eq!(r.process.status, "failed", "{id}: {:?}", r.process);
        assert_eq!(r.process.exit_code, Some(-31), "{id}: {:?}", r.process);
        assert!(r.process.stderr.contains("SIGSYS"), "{}", r.process.stderr);
    }
    // The other candidates are not affected.
    let r = drive("sign-93", Duration::from_secs(60));
    assert!(r.complete(), "{:?}", r.process);
}

#[test]
fn setsid_grandchild_that_leaves_its_cgroup_does_not_survive() {
    let t0 = Instant::now();
    let r = drive("sign-96", Duration::from_secs(60));
    if sandbox()["process_creation"]
        .as_str()
        .is_some_and(|s| s.starts_with("refused"))
    {
        // A timing child may create no process: killed at its fork.
        assert_eq!(r.process.exit_code, Some(-31), "{:?}", r.process);
        assert!(r.process.stderr.contains("SIGSYS"), "{}", r.process.stderr);
    } else {
        assert!(r.complete(), "{:?}", r.process);
    }
    assert!(t0.elapsed() < Duration::from_secs(30));
    let pidns = sandbox()["namespaces"]
        .as_array()
        .is_some_and(|a| a.iter().any(|n| n == "pid"));
    if !pidns && !in_force("pids_limit") {
        return;
    }
    // Generous for a loaded host: the assertion is that they end, not how fast.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let alive = common::processes_mapping("sign-96/libWOTS-PXOF-128.so");
        if alive.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "survivors: {alive:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_to_pqperf_ends_every_child_first() {
    let f = fixture();
    let rd = f.run.to_str().unwrap();
    let mut child = Command::new(common::exe())
        .args([
            "kat",
            "--run-dir",
            rd,
            "--only",
            "sign-97",
            "--no-fallback",
            "--timeout",
            "300",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lib = "sign-97/libWOTS-PXOF-128.so";
    let deadline = Instant::now() + Duration::from_secs(120);
    while common::processes_mapping(lib).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the KAT child never loaded the library"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The candidate sleeps inside sig_sign (60 s).
    std::thread::sleep(Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let t0 = Instant::now();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // Generous for a loaded host: the assertion is that they end, not how fast.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let alive = common::processes_mapping(lib);
        if alive.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "survivors after SIGTERM: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ct_cannot_write_outside_scratch() {
    if Command::new("valgrind").arg("--version").output().is_err() || !in_force("write_confinement")
    {
        eprintln!("skipped: no valgrind or no Landlock");
        return;
    }
    let f = fixture();
    let rd = f.run.to_str().unwrap();
    let out = common::ok(
        None,
        &[
            "ct",
            "--run-dir",
            rd,
            "--only",
            "sign-98",
            "--timeout",
            "300",
        ],
    );
    let ev = std::fs::read_to_string(f.run.join("ct/sign-98/WOTS-PXOF-128.json"))
        .unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(ev.contains("\"sign\""), "{ev}");
    assert!(
        !f.home.join("planted-by-ct").exists(),
        "ct wrote outside its scratch directory"
    );
    // The campaign evidence states the containment, ct included.
    let v = sandbox();
    assert_eq!(v["sandbox"], "on");
    assert!(
        v["write_confinement"]
            .as_str()
            .unwrap()
            .starts_with("landlock")
    );
}

#[test]
fn a_header_that_includes_dev_zero_does_not_stall_the_import() {
    // The header probes of `import` compile the submission's header: contained like the
    // build stage (memory and time limits), they fail instead of reading /dev/zero forever.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sub");
    pqperf_model::fsutil::copy_tree(&common::repo().join("testdata/candidates/wots-pxof"), &dir)
        .unwrap();
    let h = dir.join("Reference_Implementation/WOTS-PXOF-128/SIG_AlgorithmInstance.h");
    let text = std::fs::read_to_string(&h).unwrap();
    std::fs::write(&h, format!("#include \"/dev/zero\"\n{text}")).unwrap();
    let run = tmp.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pqperf"))
        .args(["import", "iccs"])
        .arg(&dir)
        .args(["--id", "sign-89", "--run-dir"])
        .arg(&run)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A hang check only, far from what a loaded host needs (each probe ends at its memory
    // limit within seconds; the compiler time limit is 600 s).
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(500) {
            let _ = child.kill();
            panic!("import still running after 500 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    eprintln!("{text}");
    // What import made of it is said: either it refused, or the instance came without an
    // evaluated name (the folder's), and no probe process is left behind.
    assert!(
        !out.status.success() || text.contains("ALGORITHM_INSTANCE"),
        "{text}"
    );
    assert!(common::processes_mapping("/dev/zero").is_empty());
}
