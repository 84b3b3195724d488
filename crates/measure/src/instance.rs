//! One measurable instance (method §2.7) with what the driver needs, the operation keys of
//! its category (§2.8) and the driver arguments of one run of one of its operations.

use std::path::PathBuf;

use pqperf_model::buildjson::BuildEntry;

use crate::driver::{ApiSpec, DriverArgs, HASH_SIZES};
use crate::settings::UnitSettings;

/// One measurable instance (§2.7) with what the driver needs.
#[derive(Debug, Clone)]
pub struct Instance {
    /// build.json entry.
    pub entry: BuildEntry,
    /// `sign`, `kem`, `kex`, `hash`.
    pub category: String,
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

/// Operation keys of a category (§2.8); KEX steps need the exchange calibration.
pub fn base_ops(category: &str) -> Vec<(String, String, u64)> {
    match category {
        "kem" => ["keygen", "enc", "dec"]
            .iter()
            .map(|o| (o.to_string(), o.to_string(), 0))
            .collect(),
        "sign" => ["keygen", "sign", "verify"]
            .iter()
            .map(|o| (o.to_string(), o.to_string(), 0))
            .collect(),
        "hash" | "iccs" => HASH_SIZES
            .iter()
            .map(|n| (format!("hash_{n}"), "hash".to_string(), *n))
            .collect(),
        "kex" => vec![("exchange".into(), "exchange".into(), 0)],
        _ => Vec::new(),
    }
}

/// The per-call step operations of a key exchange with `passes` passes: `init_a`, `init_b`, `pass1`…, `derive_a`, `derive_b`.
pub fn kex_steps(passes: u64) -> Vec<String> {
    let mut v = vec!["init_a".to_string(), "init_b".to_string()];
    v.extend((1..=passes).map(|k| format!("pass{k}")));
    v.push("derive_a".into());
    v.push("derive_b".into());
    v
}

/// The driver arguments for `trials` trials of `iters` calls of `op` on `inst`, pinned to the benchmark CPU.
pub fn driver_args(
    opts: &UnitSettings,
    inst: &Instance,
    op: &str,
    bytes: u64,
    trials: u32,
    iters: u64,
    warmups: u64,
) -> DriverArgs {
    DriverArgs {
        lib: PathBuf::from(inst.entry.library.clone().unwrap_or_default()),
        op: op.to_string(),
        bytes,
        trials,
        iters,
        warmups,
        cpu: Some(opts.cpu),
        samples: opts.samples,
        force_ticks: false,
        api: inst.api.clone(),
        stack_region: opts.stack_region,
    }
}
