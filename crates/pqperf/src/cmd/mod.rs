//! Subcommand modules, one per stage: argument types and thin `run` functions.

pub mod build;
pub mod ct;
pub mod demo;
pub mod iccs;
pub mod measure;
pub mod profile;
pub mod report;
pub mod site;
pub mod validate;
