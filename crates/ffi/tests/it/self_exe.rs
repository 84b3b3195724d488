//! A pqperf whose executable was replaced during a campaign (a rebuild) still starts its own
//! children: `emulation::self_exe` names the running image, not the path that now reads
//! `…/pqperf (deleted)`. This test binary copies itself, and the copy removes its own file,
//! then starts itself again through `untrusted::run` (contained like every child).

use std::process::Command;
use std::time::Duration;

use pqperf_ffi::emulation;
use pqperf_ffi::untrusted::{self, ChildSpec};

const STAGE: &str = "PQPERF_SELF_EXE_STAGE";
const MARK: &str = "self-exe: the removed image ran";
const NAME: &str = "self_exe::a_removed_executable_still_starts_itself";

fn harness_args() -> Vec<String> {
    ["--exact", NAME, "--nocapture", "--test-threads=1"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_removed_executable_still_starts_itself() {
    match std::env::var(STAGE).as_deref() {
        Ok("child") => println!("{MARK}"),
        Ok("removed") => {
            let me = std::env::current_exe().unwrap();
            std::fs::remove_file(&me).unwrap();
            let gone = std::env::current_exe().unwrap();
            assert!(
                gone.to_string_lossy().ends_with(" (deleted)"),
                "{}",
                gone.display()
            );
            let cwd = std::env::temp_dir();
            let o = untrusted::run(&ChildSpec {
                program: emulation::self_exe().unwrap(),
                args: harness_args(),
                cwd,
                timeout: Duration::from_secs(120),
                env: vec![(STAGE.into(), "child".into())],
                ..Default::default()
            });
            assert!(
                o.code() == Some(0) && o.stdout.text().contains(MARK),
                "status {:?}, spawn error {:?}, stdout {}, stderr {}",
                o.status,
                o.spawn_error,
                o.stdout.text(),
                o.stderr.text()
            );
            println!("{MARK} (removed stage)");
        }
        _ => {
            if !emulation::emulator_prefix().is_empty() {
                eprintln!("skipped: under PQPERF_EMULATOR the resolved path is used");
                return;
            }
            let tmp = tempfile::tempdir().unwrap();
            let copy = tmp.path().join("self-exe-copy");
            std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
            // Another test thread forking while the copy was open for writing holds a
            // writable descriptor of it until that child execs: `ETXTBSY` for a moment, so
            // the start is retried (a known race of copying an executable in a threaded
            // process, not pqperf's).
            let mut tries = 0;
            let o = loop {
                match Command::new(&copy)
                    .args(harness_args())
                    .env(STAGE, "removed")
                    .output()
                {
                    Err(e) if e.raw_os_error() == Some(26) && tries < 50 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    r => break r.unwrap(),
                }
            };
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && out.contains(&format!("{MARK} (removed stage)")),
                "{}\n{out}\n{}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(!copy.exists());
        }
    }
}
