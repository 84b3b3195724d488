//! Subcommand modules, one per stage: argument types and thin `run` functions.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

pub mod build;
pub mod demo;
pub mod iccs;
pub mod measure;
pub mod profile;
pub mod report;
pub mod site;
pub mod validate;
