//! Campaign phases: the [`Phase`] names, the order of `all` ([`Phase::ALL`]) and the contract
//! of a phase (what it sees, [`PhaseCtx`]; how it ends, an [`crate::Exit`] or a [`PhaseError`]
//! that keeps its source). The phases of other stages are in [`crate::stages`].

use serde_json::Value;

use crate::{CampaignError, CampaignOptions, Logger};

/// A campaign phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Host problems only.
    Check,
    /// Build hook.
    Build,
    /// KAT hook.
    Kat,
    /// ICCS baseline hook.
    Baseline,
    /// One-call calibration runs.
    Calibrate,
    /// Timing records.
    Measure,
    /// Profile hook.
    Profile,
    /// Hash-cost hook.
    Hashcost,
    /// Constant-time check hook (not part of `all`).
    Ct,
    /// Instruction-count hook (callgrind; part of `all`, done without valgrind).
    Count,
    /// build, kat, baseline, calibrate, measure, profile, hashcost, count.
    All,
    /// Plan preview.
    Plan,
    /// Dataset publication.
    Publish,
}

impl Phase {
    /// The phases `all` runs, in order: the pipeline.
    pub const ALL: [Phase; 8] = [
        Phase::Build,
        Phase::Kat,
        Phase::Baseline,
        Phase::Calibrate,
        Phase::Measure,
        Phase::Profile,
        Phase::Hashcost,
        Phase::Count,
    ];

    /// Parses a phase name.
    pub fn parse(s: &str) -> Option<Phase> {
        Some(match s {
            "check" => Phase::Check,
            "build" => Phase::Build,
            "kat" => Phase::Kat,
            "baseline" => Phase::Baseline,
            "calibrate" => Phase::Calibrate,
            "measure" => Phase::Measure,
            "profile" => Phase::Profile,
            "hashcost" => Phase::Hashcost,
            "ct" => Phase::Ct,
            "count" => Phase::Count,
            "all" => Phase::All,
            "plan" => Phase::Plan,
            "publish" => Phase::Publish,
            _ => return None,
        })
    }

    /// The phase name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Check => "check",
            Phase::Build => "build",
            Phase::Kat => "kat",
            Phase::Baseline => "baseline",
            Phase::Calibrate => "calibrate",
            Phase::Measure => "measure",
            Phase::Profile => "profile",
            Phase::Hashcost => "hashcost",
            Phase::Ct => "ct",
            Phase::Count => "count",
            Phase::All => "all",
            Phase::Plan => "plan",
            Phase::Publish => "publish",
        }
    }

    /// Phases refused on an unfixed host without `--allow-unfixed-host`.
    pub fn measuring(self) -> bool {
        matches!(
            self,
            Phase::Baseline
                | Phase::Calibrate
                | Phase::Measure
                | Phase::Profile
                | Phase::Hashcost
                | Phase::All
        )
    }
}

/// What a phase sees: the options of the invocation, the campaign log and the environment
/// snapshot of the phase; nothing else of the orchestrator.
pub struct PhaseCtx<'a> {
    /// The options of this invocation (`cpu` is the leased CPU).
    pub opts: &'a CampaignOptions,
    /// The run directory (`opts.run_dir`), locked for the phase: its paths, and campaign.json
    /// changed under the lock.
    pub run: &'a crate::rundir::LockedRun,
    /// The campaign log.
    pub log: &'a Logger,
    /// The environment snapshot of this phase (§3.2).
    pub environment: &'a Value,
    /// The registered system the phase measures for, when known (the ICCS baseline's reuse
    /// across runs is keyed by it).
    pub system_id: Option<&'a str>,
}

/// Why a phase could not run to its end; the source is kept.
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    /// An input of the phase is missing (the message says which and what to run first).
    #[error("{0}")]
    MissingInput(String),
    /// The campaign's run-directory I/O, selection or stale-evidence bookkeeping failed.
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    /// A lock file of the phase could not be taken.
    #[error("{name} lock: {source}")]
    Lock {
        /// Which lock (`profile`, `hashcost`).
        name: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The stage's own error.
    #[error("{stage}: {source}")]
    Stage {
        /// The stage (`build`, `kat`, `profile`, …).
        stage: &'static str,
        /// Its error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl PhaseError {
    /// The error `source` of stage `stage`.
    pub fn stage(
        stage: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        PhaseError::Stage {
            stage,
            source: source.into(),
        }
    }
}

/// What became of a dataset's pages after `publish` replaced a system's evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagesRefresh {
    /// Pages (dataset-relative) regenerated because the new evidence changes them.
    pub regenerated: Vec<String>,
    /// Pages on disk that the evidence no longer produces (a candidate that left the
    /// system): stale, left in place and named.
    pub stale: Vec<String>,
}
