//! The one place that wires the stages' phases into the campaign: build and KAT
//! (`cmd/build.rs`), baseline/profile/hashcost (`cmd/profile.rs`) and ct (`cmd/ct.rs`).
//! Used by `pqperf campaign` and `pqperf demo`.

use pqperf_campaign::Hooks;

/// The hooks through which other stages provide their phases.
pub fn hooks() -> Hooks {
    let mut h = Hooks::default();
    super::build::add_hooks(&mut h);
    super::profile::add_hooks(&mut h);
    super::ct::add_hooks(&mut h);
    h
}
