//! Subcommand modules, one per stage: argument types and thin `run` functions.

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
