//! The one place that wires the stages' phases into the campaign: build and KAT
//! (`cmd/build.rs`), baseline/profile/hashcost (`cmd/profile.rs`) and ct (`cmd/ct.rs`).
//! Used by `pqperf campaign` and `pqperf demo`; also the check `publish` runs (validate).

use pqperf_campaign::Hooks;

/// The hooks through which other stages provide their phases.
pub fn hooks() -> Hooks {
    let mut h = Hooks::default();
    super::build::add_hooks(&mut h);
    super::profile::add_hooks(&mut h);
    super::ct::add_hooks(&mut h);
    // `publish` keeps an old system tree that validate accepts unless the new one passes too
    // (regenerated pages are not compared: publishing makes the old pages stale by design).
    h.provide_publish_check(Box::new(|root, system| {
        let rep = pqperf_validate::validate_with(
            root,
            &pqperf_validate::Options {
                system: Some(system.to_string()),
                pages: false,
            },
        );
        rep.problems.iter().map(|p| p.to_string()).collect()
    }));
    h
}
