//! Subcommand modules, one per stage: argument types and thin `run` functions.

pub mod ab;
pub mod build;
pub mod compare;
pub mod count;
pub mod ct;
pub mod demo;
pub mod iccs;
pub mod measure;
pub mod meta;
pub mod options;
pub mod profile;
pub mod report;
pub mod sandbox;
pub mod site;
pub mod ui;
pub mod validate;

/// A refusal of the input (exit [`pqperf_campaign::Exit::Refused`]): returned as an `anyhow` error, `main`
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

/// The selection `--only PATTERN` makes; a pattern that does not compile is refused (exit
/// [`pqperf_campaign::Exit::Refused`]), named with its option.
pub fn only(pattern: Option<&str>) -> anyhow::Result<pqperf_model::select::Selection> {
    pqperf_model::select::Selection::only(pattern).or_else(|e| refuse(e.to_string()))
}

/// An error and its causes as one line, `outer: cause: …`, without the repetitions of a
/// layered error: a cause whose text the layer above already shows (a `thiserror` message
/// that formats its source, a context that repeats its error) is left out.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut shown = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || shown.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
        shown = text;
    }
    out
}

/// An input path a command reads (a submission, a PQClean tree): refused with `<path>: no
/// such file or directory` when it does not exist, before any stage tries to make sense of it.
pub fn existing_input(path: &std::path::Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        Ok(())
    } else {
        refuse(format!("{}: no such file or directory", path.display()))
    }
}

/// An input folder (a dataset root, a run directory to compare): refused when it does not
/// exist or is not a folder, with that said once.
pub fn existing_dir(path: &std::path::Path) -> anyhow::Result<()> {
    existing_input(path)?;
    if path.is_dir() {
        Ok(())
    } else {
        refuse(format!("{}: not a directory", path.display()))
    }
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

/// A process exit code from a child's raw status (a KAT or profiling child, a shard chain;
/// clamped to 0–255); pqperf's own ends are a [`pqperf_campaign::Exit`], the one vocabulary of exit
/// codes (README "Exit codes", `--help`).
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
    // Together with `pqperf`, which is built already: the driver's dependencies (model, ffi,
    // serde_json, …) then resolve to the features they were built with for `pqperf` and are
    // reused; built alone, its smaller tree would compile them all again with fewer features.
    let mut args: Vec<String> = ["build", "-p", "pqperf", "-p", "pqperf-driver"]
        .map(String::from)
        .to_vec();
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

#[cfg(test)]
mod tests {
    use anyhow::Context;

    #[test]
    fn an_error_chain_says_each_thing_once() {
        let io = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "dataset root is not a directory",
        );
        // A layer that formats its source and also returns it as its source, as thiserror's
        // `#[error("{}: {source}")]` does.
        #[derive(Debug)]
        struct Layer(std::io::Error);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "/x: {}", self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Layer(io));
        assert_eq!(
            super::error_chain(&e),
            "/x: dataset root is not a directory"
        );
        let e = e.context("loading dataset /x");
        assert_eq!(
            super::error_chain(&e),
            "loading dataset /x: /x: dataset root is not a directory"
        );
        let plain: anyhow::Result<()> = Err(anyhow::anyhow!("disk full")).context("writing a");
        assert_eq!(
            super::error_chain(&plain.unwrap_err()),
            "writing a: disk full"
        );
    }
}
