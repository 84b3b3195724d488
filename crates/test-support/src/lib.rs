//! Test support of the pqperf workspace, a dev-dependency only: [`pqperf()`], the one command
//! builder of the real `pqperf` binary with [`Ran`] to read what it did, and [`toy`], the
//! hand-made run directories of test candidates and the fake timing driver.

#![forbid(unsafe_code)]

pub mod toy;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `pqperf` binary cargo built beside the running test (`target/<profile>/pqperf`, the
/// test executable being in `target/<profile>/deps/`); `$PQPERF_BIN` names another.
pub fn exe() -> PathBuf {
    if let Some(p) = std::env::var_os("PQPERF_BIN") {
        return PathBuf::from(p);
    }
    let me = std::env::current_exe().expect("the test executable's path");
    let profile = me
        .parent()
        .and_then(|deps| deps.parent())
        .expect("a test executable under target/<profile>/deps");
    let exe = profile.join("pqperf");
    assert!(
        exe.is_file(),
        "{} does not exist: build the pqperf binary (cargo test -p pqperf builds it)",
        exe.display()
    );
    exe
}

/// A command running the real `pqperf` binary; add arguments, a folder and environment as
/// with any [`Command`], then run it through [`Ran`].
pub fn pqperf() -> Command {
    Command::new(exe())
}

/// What a test reads of a finished pqperf command.
pub trait Ran {
    /// Runs it: its output (panics when it cannot be started).
    fn out(&mut self) -> Output;

    /// Runs it and returns stdout followed by stderr, failing the test (with that text) when
    /// it does not exit 0.
    fn ok(&mut self) -> String {
        let o = self.out();
        let t = text(&o);
        assert!(o.status.success(), "pqperf failed ({}):\n{t}", o.status);
        t
    }

    /// Runs it: exit code (-1 when killed), stdout, stderr.
    fn code_out_err(&mut self) -> (i32, String, String) {
        let o = self.out();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    /// Runs it: exit code (-1 when killed) and stdout followed by stderr.
    fn code_text(&mut self) -> (i32, String) {
        let o = self.out();
        (o.status.code().unwrap_or(-1), text(&o))
    }
}

impl Ran for Command {
    fn out(&mut self) -> Output {
        self.output().expect("run pqperf")
    }
}

/// stdout followed by stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
