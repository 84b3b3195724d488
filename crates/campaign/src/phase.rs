//! Campaign phases: the [`Phase`] names, what a phase implementation sees ([`PhaseCtx`]) and
//! the registry through which stages provide phases ([`Hooks`], wired by the CLI).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{CampaignOptions, Logger};

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
    /// build, kat, baseline, calibrate, measure, profile, hashcost.
    All,
    /// Plan preview.
    Plan,
    /// Dataset publication.
    Publish,
}

impl Phase {
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

/// What a hook sees.
pub struct PhaseCtx<'a> {
    /// The options of this invocation.
    pub opts: &'a CampaignOptions,
    /// The campaign log.
    pub log: &'a Logger,
    /// Host problems found at the start of the phase.
    pub host_problems: &'a [String],
    /// System id, when known.
    pub system_id: Option<&'a str>,
    /// The environment snapshot of this phase (§3.2).
    pub environment: &'a Value,
}

/// A phase implemented by another stage. Returns the phase's exit status (0 = fine).
pub type Hook = Box<dyn Fn(&PhaseCtx) -> Result<i32, String> + Send + Sync>;

/// The phases other stages provide, keyed by phase name (filled by the CLI: build and KAT
/// from `pqperf-build`/`pqperf-kat`, baseline/profile/hashcost from `pqperf-profile`, ct from
/// `pqperf-ct`). Calibrate, measure and plan are the campaign's own and need no entry.
#[derive(Default)]
pub struct Hooks {
    by_name: BTreeMap<&'static str, Hook>,
    publish_check: Option<PublishCheck>,
    publish_pages: Option<PublishPages>,
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

/// The page refresh `publish` runs after it put a system tree in place: given the options,
/// the dataset root and the system id, it regenerates the dataset's pages that the new
/// evidence changes (those already on disk) and names the ones left stale. The CLI passes
/// the report stage's renderer.
pub type PublishPages = Box<
    dyn Fn(&CampaignOptions, &std::path::Path, &str) -> Result<PagesRefresh, String> + Send + Sync,
>;

/// The check `publish` runs on a system tree it is about to leave in place: given the dataset
/// root and the system id, the problems found (empty = valid). The CLI passes `validate`.
pub type PublishCheck = Box<dyn Fn(&std::path::Path, &str) -> Vec<String> + Send + Sync>;

impl Hooks {
    /// Registers `hook` as the implementation of `phase` (replacing an earlier one).
    pub fn provide(&mut self, phase: Phase, hook: Hook) {
        self.by_name.insert(phase.name(), hook);
    }

    /// Registers the check `publish` runs before a new system tree replaces an old one.
    pub fn provide_publish_check(&mut self, check: PublishCheck) {
        self.publish_check = Some(check);
    }

    /// Registers the page refresh `publish` runs after a system tree is in place.
    pub fn provide_publish_pages(&mut self, pages: PublishPages) {
        self.publish_pages = Some(pages);
    }

    /// The page refresh of `publish`, if one was provided.
    pub fn publish_pages(&self) -> Option<&PublishPages> {
        self.publish_pages.as_ref()
    }

    /// The check of `publish`, if one was provided.
    pub fn publish_check(&self) -> Option<&PublishCheck> {
        self.publish_check.as_ref()
    }

    /// The implementation of `phase`, if a stage provided one.
    pub fn get(&self, phase: Phase) -> Option<&Hook> {
        self.by_name.get(phase.name())
    }
}
