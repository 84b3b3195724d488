//! The campaign orchestrator (method §2, §6, §7, §12, §16), above the stages: phases over a
//! run directory, resumable by file existence, with campaign.json bookkeeping under a lock.
//!
//! | module | owns |
//! |---|---|
//! | [`options`] | [`CampaignOptions`] as plain data, reference defaults |
//! | [`phase`] | [`Phase`] names and the order of `all`, the phase contract ([`PhaseCtx`], [`PhaseError`]) |
//! | [`exit`] | [`Exit`], the one exit-status vocabulary (0 done, 1 failed, 2 refused) of commands and phases |
//! | [`stages`] | the phases of the other stages, called directly: build, kat, baseline, profile, hashcost, ct, count; validate and the pages around `publish` |
//! | [`ab`] | `pqperf ab`: the interleaved A/B measurement (pairs of fresh driver processes on one leased CPU; the statistics are `pqperf-compare`'s) |
//! | [`setup`] | the measuring set-up `run_phase` and `ab` share: CPU check, emulation, lease, host problems, tick rate, environment, keep-off-CPU |
//! | [`run`] | [`run_phase`], the pipeline: CPU lease, host checks, system id, bookkeeping, the steps in order |
//! | [`lease`] | host-wide CPU leases (one `flock`ed file per CPU), `--cpu auto` |
//! | [`select`] | measurable instances, `--only`/`--defer`/`--shard` selection, prior costs |
//! | `phases` | the calibrate, measure and plan phases (units handed to `pqperf-measure`) |
//! | [`stale`] | evidence naming another library than the built one: redone, or kept (`--keep-stale`) and noted |
//! | [`rundir`] | run-directory I/O: build.json, catalog.toml, campaign.json (through `pqperf_model::campaign::Campaign`), walks; [`LockedRun`], a run directory's layout with its lock |
//! | [`observe`] | observers of log lines and progress: `campaign.log`, terminal, null; the heartbeat of a long step |
//! | [`publish`] | dataset publication and its side tables |
//! | [`merge`] | joining shard run directories (several hosts of one system) into one run |
//! | [`shard`] | the parallel launcher (one shard chain per CPU) |
//! | [`systems`] | the `systems.csv` registry |

#![forbid(unsafe_code)]

pub mod ab;
pub mod baseline_cache;
pub mod error;
pub mod exit;
pub mod lease;
pub mod merge;
pub mod observe;
pub mod options;
pub mod phase;
mod phases;
pub mod publish;
pub mod run;
pub mod rundir;
pub mod select;
pub mod setup;
pub mod shard;
pub mod stages;
pub mod stale;
pub mod systems;

pub use error::CampaignError;
pub use exit::Exit;
pub use observe::{Logger, Observer};
pub use options::{CampaignOptions, ContainmentData, TargetCi, default_cpu};
pub use phase::{PagesRefresh, Phase, PhaseCtx, PhaseError};
pub use phases::{INTERLEAVE_SEED, INTERLEAVE_WINDOW};
pub use pqperf_measure::record::utc_now;
pub use publish::{After, publish, publish_with};
pub use run::{PhaseOutcome, arch_config, run_phase};
pub use rundir::{
    LockedRun, RunLock, load_build, load_catalog, lock_run_dir, note_command, read_campaign,
    try_update_campaign, update_campaign, walk_files,
};
pub use select::{measurable, parse_shard, prior_costs, selected};
pub use setup::{MeasuringSetup, keep_off_cpu, keep_off_cpus};
pub use stale::EvidenceCheck;
