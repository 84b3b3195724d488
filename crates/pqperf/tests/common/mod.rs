//! Shared helpers of the CLI's end-to-end tests: the repository root and the real `pqperf`
//! binary, run in a folder, with its stdout and stderr joined.
#![allow(dead_code)] // each test file uses the part it needs

pub mod mldsa;

#[allow(unused_imports)] // most test files use no fake driver
pub use pqperf_test_support::toy::fake_driver;
/// Hand-made run directories and the fake driver: the test-support crate's.
#[allow(unused_imports)] // not every includer uses both
pub use pqperf_test_support::{text, toy};

use pqperf_test_support::{Ran, pqperf};

use std::path::{Path, PathBuf};
use std::process::Output;

/// The repository root.
/// The last CPU this test process may run on, as an argument (`--cpu`): the measuring CPU
/// of the tests' campaigns.
pub fn last_cpu() -> String {
    pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .copied()
        .unwrap()
        .to_string()
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pqperf binary cargo built for these tests.
pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_pqperf")
}

/// Runs pqperf with `args` in `cwd` (`None`: the test's own folder).
pub fn output(cwd: Option<&Path>, args: &[&str]) -> Output {
    let mut c = pqperf();
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    c.args(args).out()
}

/// Runs pqperf and returns its output, failing the test (with the output) when it fails.
pub fn ok(cwd: Option<&Path>, args: &[&str]) -> String {
    let o = output(cwd, args);
    let t = text(&o);
    assert!(o.status.success(), "pqperf {args:?} failed:\n{t}");
    t
}

/// Runs pqperf with `args`: exit code (-1 when killed), stdout, stderr.
pub fn status(args: &[&str]) -> (i32, String, String) {
    pqperf().args(args).code_out_err()
}

/// Live (non-zombie) processes of this host whose memory maps or command line mention
/// `needle` (a candidate's library path or marker), as `pid: command line`.
pub fn processes_mapping(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            continue;
        }
        let maps = std::fs::read_to_string(e.path().join("maps")).unwrap_or_default();
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if maps.contains(needle) || cmd.contains(needle) {
            out.push(format!("{name}: {cmd}"));
        }
    }
    out
}

/// Runs pqperf and returns its output, failing the test unless it exits with `code` (the
/// documented codes: 0 done, 1 something failed, 2 usage or refused input).
pub fn exits(cwd: Option<&Path>, args: &[&str], code: i32) -> String {
    let o = output(cwd, args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(code), "pqperf {args:?}:\n{t}");
    t
}

/// Runs the real timing driver on `lib/<id>/libWOTS-PXOF-128.so` of `run` (a copy of the
/// `wots-pxof` test candidate built by `pqperf build`): `sign`, 2 trials of 5 calls with
/// sampling and the tick counter, no pinning; what the parent made of it.
pub fn drive_wots_sign(
    run: &Path,
    id: &str,
    timeout: std::time::Duration,
) -> pqperf_measure::runner::Run {
    use pqperf_measure::driver::{ApiSpec, DriverArgs};
    use pqperf_measure::runner::{self, DriverExe};
    let args = DriverArgs {
        lib: PathBuf::from(format!("lib/{id}/libWOTS-PXOF-128.so")),
        op: "sign".into(),
        bytes: 0,
        trials: 2,
        iters: 5,
        warmups: 1,
        cpu: None,
        samples: true,
        force_ticks: true,
        api: ApiSpec::Iccs,
        stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
        seed: None,
        pool_max: None,
        prepare: false,
        relayed: false,
    };
    assert!(run.join(&args.lib).is_file(), "{}", args.lib.display());
    let exe = DriverExe::current(run).expect("the lean driver pqperf-driver");
    // Re-run as the campaign re-runs a process over the kernel check's bounds (a busy host's
    // waits and interrupts land in single windows of these 4-window processes): the sandbox
    // tests judge the attack, not the host.
    let mut r = runner::run_driver(&exe, &args, timeout);
    for _ in 0..2 {
        if r.process.status != "inconsistent" && r.process.status != "disturbed" {
            break;
        }
        r = runner::run_driver(&exe, &args, timeout);
    }
    r
}
