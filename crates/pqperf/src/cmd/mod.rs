//! Subcommand modules, one per stage: argument types and thin `run` functions.

pub mod build;
pub mod compare;
pub mod ct;
pub mod demo;
pub mod driver;
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
