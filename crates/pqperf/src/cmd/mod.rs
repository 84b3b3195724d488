//! Subcommand modules, one per stage: argument types and thin `run` functions.

pub mod ab;
pub mod build;
pub mod compare;
pub mod ct;
pub mod demo;
pub mod iccs;
pub mod measure;
pub mod phases;
pub mod profile;
pub mod report;
pub mod site;
pub mod validate;

/// The exit codes of every pqperf command, defined here only (README "Exit codes", `--help`).
pub mod exit {
    /// Done: the command did what was asked.
    pub const DONE: u8 = 0;
    /// Something failed: a KAT verdict other than PASS, a build failure, a unit that could
    /// not be measured, a regression (`compare --fail-on-regression`), an invalid dataset, an
    /// I/O error.
    pub const FAILED: u8 = 1;
    /// Usage or refused input: a bad argument, a selection that matches nothing, a missing
    /// input of a phase (no build.json), a run directory that does not exist, a CPU that
    /// cannot be used, an unfixed host without `--allow-unfixed-host`. Nothing was written.
    pub const REFUSED: u8 = 2;
    /// The text `--help` shows.
    pub const HELP: &str = "Exit codes: 0 done; 1 something failed (a KAT verdict other than PASS, a build failure, a unit not measured, a regression, an invalid dataset, an I/O error); 2 usage or refused input (bad argument, a selection matching nothing, a missing input such as build.json, a run directory that does not exist, an unusable CPU); nothing is written then.";
}

/// A refusal of the input (exit [`exit::REFUSED`]): returned as an `anyhow` error, `main`
/// maps it to exit code 2.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// `Err(Refused(msg))` as an `anyhow` result.
pub fn refuse<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(Refused(msg.into()).into())
}

/// A run directory a reading or measuring command needs: it must exist (never created here).
pub fn existing_run_dir(run: &std::path::Path) -> anyhow::Result<()> {
    if run.is_dir() {
        Ok(())
    } else {
        refuse(format!(
            "run directory {} does not exist (create it with `pqperf import … --run-dir {}`)",
            run.display(),
            run.display()
        ))
    }
}

/// A process exit code from a stage's status (clamped to 0–255).
pub fn code(c: i32) -> std::process::ExitCode {
    std::process::ExitCode::from(c.clamp(0, 255) as u8)
}

/// Under `cargo run` (a fresh checkout: `cargo run --release -p pqperf -- demo` builds only the
/// `pqperf` binary), build the lean driver `pqperf-driver` next to this executable when it is
/// missing, with the same profile. Elsewhere, or if that fails, the phases that need it report
/// the path they expected (`pqperf_measure::runner::DriverExe::locate`).
pub fn ensure_lean_driver() {
    use pqperf_measure::runner::DriverExe;
    let (Ok(cargo), Ok(manifest)) = (std::env::var("CARGO"), std::env::var("CARGO_MANIFEST_DIR"))
    else {
        return;
    };
    if DriverExe::locate().is_ok() {
        return;
    }
    let Some(profile) = std::env::current_exe().ok().and_then(|e| {
        e.parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    }) else {
        return;
    };
    let mut args = vec!["build".to_string(), "-p".into(), "pqperf-driver".into()];
    match profile.as_str() {
        "debug" => {}
        "release" => args.push("--release".into()),
        p => args.extend(["--profile".into(), p.to_string()]),
    }
    eprintln!(
        "pqperf: the lean driver is not built yet: cargo {}",
        args.join(" ")
    );
    let ok = std::process::Command::new(cargo)
        .args(&args)
        .current_dir(manifest)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("pqperf: building the lean driver failed");
    }
}
