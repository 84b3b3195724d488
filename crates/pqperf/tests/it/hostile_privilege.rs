//! Hostile candidates against root powers and pqperf's environment (issue 36): copies of the
//! toy signature candidate, each with one extra C module from `testdata/hostile/` whose
//! constructor runs when the library is loaded in every driver process of a campaign
//! (calibration and measurement). Each module prints a marker line (`HOSTILE …`) with the
//! result and errno of its attack on stderr, which the record keeps (`processes[].stderr`),
//! so the test sees that the attack ran and how it failed:
//!
//! - `mknod_device.c`: a character device for the kernel log in scratch, read through it, and
//!   `syslog(READ_ALL)`;
//! - `clock_tick.c`: `adjtimex(ADJ_TICK)` one microsecond longer and `clock_settime`;
//! - `immutable_file.c`: `chattr +i` (`FS_IOC_SETFLAGS`) on a file in scratch;
//! - `keyring.c`: `add_key` to the user keyring;
//! - `read_environ.c`: `/proc/self/environ`, `/proc/1/environ` and `/proc/1/cmdline` printed,
//!   with secrets placed in pqperf's environment by the test.
//!
//! Every attack fails, the host is unchanged (tick, keyrings, no scratch folder left), no
//! secret reaches the evidence, every record is complete and the honest candidate beside them
//! is complete too.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::repo;
use common::toy::{Lib, TOY_SIG, toy_run};

const CAND: &str = "sign-80";
/// (label, hostile module).
const HOSTILE: &[(&str, &str)] = &[
    ("mknod", "mknod_device.c"),
    ("clock", "clock_tick.c"),
    ("immutable", "immutable_file.c"),
    ("keyring", "keyring.c"),
    ("environ", "read_environ.c"),
];
const EPERM: i32 = 1;

const SECRET_VAR: &str = "PQPERF_TEST_SECRET";
const SECRET: &str = "xyz-36-5e7a-NOT-FOR-CANDIDATES";
const AWS_VAR: &str = "AWS_SECRET_ACCESS_KEY";
const AWS: &str = "aws-36-c0ffee-NOT-FOR-CANDIDATES";
/// A word of pqperf's own argv (a register description), which `/proc/1/cmdline` would show.
const ARGV_MARK: &str = "argv-36-b16b00b5";

/// The host clock's tick (microseconds), read with a read-only `adjtimex`.
fn host_tick() -> i64 {
    pqperf_ffi::sandbox::host_clock_tick().expect("adjtimex query")
}

/// Sets the host clock's tick back to `tick` (only when an attack got through): a small C
/// program, since this crate's tests hold no `unsafe`.
fn restore_tick(dir: &Path, tick: i64) {
    let src = dir.join("restore_tick.c");
    std::fs::write(
        &src,
        format!(
            "#include <sys/timex.h>\nint main(void) {{ struct timex t = {{0}}; t.modes = ADJ_TICK; t.tick = {tick}; return adjtimex(&t) < 0; }}\n"
        ),
    )
    .unwrap();
    let exe = dir.join("restore_tick");
    let built = Command::new("gcc").arg("-o").arg(&exe).arg(&src).status();
    if built.is_ok_and(|s| s.success()) {
        let _ = Command::new(&exe).status();
    }
}

fn proc_keys() -> String {
    std::fs::read_to_string("/proc/keys").unwrap_or_default()
}

/// Scratch folders (`pqperf-child-*` in the temporary directory) holding the immutable file.
fn immutable_leftovers() -> Vec<PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pqperf-child-"))
                && p.join("pqperf-hostile-immutable").exists()
        })
        .collect()
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// `pqperf campaign <phase>` on `run` with the secrets in its environment.
fn campaign(run: &Path, phase: &str) -> (i32, String) {
    let cpu = common::last_cpu();
    let mut args = common::toy::campaign_args(run, phase);
    // The registered description is part of pqperf's argv.
    let reg = args.iter().position(|a| a == "--register").unwrap();
    args[reg + 1] = format!("test machine {ARGV_MARK} (host not fixed)");
    args.extend(["--cpu", &cpu, "--trial-target", "0.002"].map(String::from));
    let o = Command::new(common::exe())
        .args(&args)
        .env(SECRET_VAR, SECRET)
        .env(AWS_VAR, AWS)
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), common::text(&o))
}

/// The stderr of every process of a record.
fn stderrs(rec: &Value) -> Vec<String> {
    rec["processes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| p["stderr"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The numbers after `key=` on the marker line `HOSTILE <what> …` of `s`.
fn marker(s: &str, what: &str) -> Vec<(String, i64)> {
    let line = s
        .lines()
        .find(|l| l.starts_with(&format!("HOSTILE {what}")))
        .unwrap_or_else(|| panic!("no marker of {what} (the attack did not run): {s}"));
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap_or(i64::MIN)))
        .collect()
}

#[test]
fn root_powers_and_pqperf_environment_stay_out_of_candidate_reach() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut libs = vec![Lib::new(CAND, "good")];
    for (label, module) in HOSTILE {
        libs.push(
            Lib::new(CAND, label).args(&[repo()
                .join("testdata/hostile")
                .join(module)
                .to_str()
                .unwrap()
                .to_string()]),
        );
    }
    toy_run(&run, "toy_sig.c", TOY_SIG, &libs);

    let tick = host_tick();
    assert!(!proc_keys().contains("pqperf-hostile-key"));
    let before_leftovers = immutable_leftovers();
    for phase in ["calibrate", "measure"] {
        let (code, text) = campaign(&run, phase);
        assert_eq!(code, 0, "{phase}: {text}");
        assert!(!text.contains(SECRET) && !text.contains(AWS), "{text}");
    }
    // The host is as it was (repaired first, so that a failure leaves no damage).
    let tick_after = host_tick();
    if tick_after != tick {
        restore_tick(tmp.path(), tick);
    }
    let new_leftovers: Vec<PathBuf> = immutable_leftovers()
        .into_iter()
        .filter(|p| !before_leftovers.contains(p))
        .collect();
    for p in &new_leftovers {
        let _ = Command::new("chattr")
            .arg("-i")
            .arg(p.join("pqperf-hostile-immutable"))
            .status();
        let _ = std::fs::remove_dir_all(p);
    }
    assert_eq!(
        tick_after, tick,
        "a candidate changed the host clock's tick"
    );
    assert!(
        new_leftovers.is_empty(),
        "scratch folders left behind: {new_leftovers:?}"
    );
    assert!(
        !proc_keys().contains("pqperf-hostile-key"),
        "a candidate's key survived in the host's keyrings"
    );

    let good = read_json(&run.join(format!("records/{CAND}/good__sign.json")));
    assert_eq!(good["status"], "complete", "{good}");
    for (label, _) in HOSTILE {
        for op in ["keygen", "sign", "verify"] {
            let path = run.join(format!("records/{CAND}/{label}__{op}.json"));
            let rec = read_json(&path);
            assert_eq!(rec["status"], "complete", "{label} {op}: {rec}");
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains(SECRET) && !text.contains(AWS) && !text.contains(ARGV_MARK),
                "{label} {op}: a secret of pqperf's environment or argv reached the record"
            );
            let errs = stderrs(&rec);
            assert!(!errs.is_empty(), "{label} {op}: no process");
            if op == "sign"
                && let Some(l) = errs[0].lines().find(|l| l.starts_with("HOSTILE"))
            {
                eprintln!("{label}: {l}");
            }
            for s in errs {
                check_marker(label, &s);
            }
        }
    }
    // Nothing of the secrets anywhere in the run directory (calibrations, campaign.json, …).
    let mut stack = vec![run.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let b = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                assert!(
                    !b.contains(SECRET) && !b.contains(AWS),
                    "{}: carries a secret",
                    p.display()
                );
            }
        }
    }
    // What was in force is recorded with the campaign.
    let camp = read_json(&run.join("campaign.json"));
    let sb = &camp["pqperf"]["sandbox"];
    assert!(
        sb["capabilities"]
            .as_str()
            .is_some_and(|s| s.starts_with("none")),
        "{sb}"
    );
    assert!(sb["environment"].as_str().is_some(), "{sb}");
}

fn check_marker(label: &str, s: &str) {
    let get = |m: &[(String, i64)], k: &str, nth: usize| {
        m.iter()
            .filter(|(key, _)| key == k)
            .nth(nth)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{label}: no {k} in {s}"))
    };
    match label {
        "mknod" => {
            let m = marker(s, "mknod");
            assert_eq!(get(&m, "rc", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 0), EPERM as i64, "{s}");
            assert_eq!(get(&m, "read", 0), -1, "{s}");
            assert_eq!(get(&m, "syslog", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 1), EPERM as i64, "{s}");
        }
        "clock" => {
            let m = marker(s, "clock");
            assert_eq!(get(&m, "adjtimex", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 0), EPERM as i64, "{s}");
            assert_eq!(get(&m, "settime", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 1), EPERM as i64, "{s}");
        }
        "immutable" => {
            let m = marker(s, "immutable");
            assert_eq!(get(&m, "write", 0), 4096, "{s}");
            assert_eq!(get(&m, "ioctl", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 0), EPERM as i64, "{s}");
        }
        "keyring" => {
            let m = marker(s, "keyring");
            assert_eq!(get(&m, "add_key", 0), -1, "{s}");
            assert_eq!(get(&m, "errno", 0), EPERM as i64, "{s}");
        }
        "environ" => {
            let line = s
                .lines()
                .find(|l| l.starts_with("HOSTILE environ"))
                .unwrap_or_else(|| panic!("no marker of environ: {s}"));
            // It read its own environment: the fixed one, nothing of pqperf's.
            assert!(line.contains(" self("), "{line}");
            assert!(line.contains("LC_ALL=C"), "{line}");
            assert!(
                !line.contains(SECRET_VAR) && !line.contains(AWS_VAR),
                "{line}"
            );
            // PID 1 (the namespace's init, a fork of pqperf) shows no argv and no environment.
            assert!(
                !line.contains(ARGV_MARK) && !line.contains("campaign"),
                "{line}"
            );
            let env1 = line.split(" 1env(").nth(1).unwrap_or_default();
            let n: i64 = env1
                .split(')')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(i64::MIN);
            assert!(
                n < 0 || !env1.contains('='),
                "/proc/1/environ readable: {line}"
            );
        }
        _ => unreachable!(),
    }
}
