//! One measurable instance (method §2.7) with what the driver needs, the operation keys of
//! its category (§2.8) and the driver arguments of one run of one of its operations.

use std::path::PathBuf;

use pqperf_model::buildjson::BuildEntry;
use pqperf_model::vocab::{Category, Operation};

use crate::driver::{ApiSpec, DriverArgs};
use crate::settings::UnitSettings;

/// One measurable instance (§2.7) with what the driver needs.
#[derive(Debug, Clone)]
pub struct Instance {
    /// build.json entry.
    pub entry: BuildEntry,
    /// Category (the ICCS helpers are hashes); `None`: an id of no known category, which
    /// has no operations.
    pub category: Option<Category>,
    /// API of the library.
    pub api: ApiSpec,
    /// Timed without a KAT PASS.
    pub kat_not_passed: bool,
}

impl Instance {
    /// `cand/label`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.entry.candidate, self.entry.label)
    }
}

/// The operations of a category (§2.8, [`Category::operations`]); KEX steps need the
/// exchange calibration.
pub fn base_ops(category: Option<Category>) -> Vec<Operation> {
    category.map(Category::operations).unwrap_or_default()
}

/// The driver arguments for `trials` trials of `iters` calls of `op` on `inst` (the driver's
/// call and input bytes of [`Operation`]), pinned to the benchmark CPU.
pub fn driver_args(
    opts: &UnitSettings,
    inst: &Instance,
    op: Operation,
    trials: u32,
    iters: u64,
    warmups: u64,
) -> DriverArgs {
    DriverArgs {
        lib: PathBuf::from(inst.entry.library.clone().unwrap_or_default()),
        op: op.call().into_owned(),
        bytes: op.bytes(),
        trials,
        iters,
        warmups,
        cpu: Some(opts.cpu),
        samples: opts.samples,
        force_ticks: false,
        api: inst.api.clone(),
        stack_region: opts.stack_region,
        seed: None,
        pool_max: None,
        prepare: false,
        relayed: false,
    }
}
