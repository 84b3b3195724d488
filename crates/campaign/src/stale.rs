//! Evidence tied to the library it came from: a phase that finds evidence (a record, a
//! calibration, a KAT log, a profile, a ct result) naming a `library_sha256` other than the
//! one built now treats it as stale and does it again, or with `--keep-stale` keeps it and
//! says so (the log, campaign.json `pqperf.stale_kept`, which the method page states);
//! `--redo` does everything again. [`EvidenceCheck`] is that decision for every phase,
//! the campaign's own (calibrate, measure) and the stages' hooks (kat, profile, ct).

use std::path::Path;

use pqperf_model::pyjson::read_value;
use serde_json::Value;

use crate::rundir::update_campaign;
use crate::{CampaignError, CampaignOptions, Logger};

/// The stale-or-current decision of one phase over the evidence it finds, collecting what
/// `--keep-stale` kept; [`EvidenceCheck::finish`] records that in campaign.json.
pub struct EvidenceCheck<'a> {
    opts: &'a CampaignOptions,
    log: &'a Logger,
    redo: bool,
    kept: Vec<String>,
    /// Files found current or done again: no longer kept stale.
    cleared: Vec<String>,
}

impl<'a> EvidenceCheck<'a> {
    /// The check of a phase run with `opts`; `redo` does every existing file again
    /// (`--redo`, or the phase's own choice).
    pub fn new(opts: &'a CampaignOptions, log: &'a Logger, redo: bool) -> EvidenceCheck<'a> {
        EvidenceCheck {
            opts,
            log,
            redo,
            kept: Vec::new(),
            cleared: Vec::new(),
        }
    }

    /// Whether the evidence at `path` (already there), which names the library `named`, is
    /// done again: `redo`, or `named` is not the built library `built` (or names none),
    /// unless `--keep-stale`. Without a built library hash there is nothing to compare with
    /// and the evidence stays. Logs why; a kept stale file is remembered for [`Self::finish`].
    pub fn redo(&mut self, path: &Path, named: Option<&str>, built: Option<&str>) -> bool {
        let shown = path
            .strip_prefix(&self.opts.run_dir)
            .unwrap_or(path)
            .display()
            .to_string();
        if self.redo {
            self.log.log(format!("{shown}: done again (--redo)"));
            self.cleared.push(shown);
            return true;
        }
        if built.is_none() || (named.is_some() && named == built) {
            if built.is_some() {
                self.cleared.push(shown);
            }
            return false;
        }
        let short =
            |s: Option<&str>| s.map_or("none".to_string(), |s| s.chars().take(12).collect());
        let what = format!(
            "{shown}: stale (library {} is not the built {})",
            short(named),
            short(built)
        );
        if self.opts.keep_stale {
            self.log.log(format!("{what}; kept (--keep-stale)"));
            self.kept.push(shown);
            false
        } else {
            self.log.log(format!("{what}; done again"));
            self.cleared.push(shown);
            true
        }
    }

    /// [`Self::redo`] for a JSON evidence file naming its library at `key` (a path of
    /// object keys, e.g. `["pqperf", "library_sha256"]`).
    pub fn redo_json(&mut self, path: &Path, key: &[&str], built: Option<&str>) -> bool {
        let v = read_value(path);
        let mut named = v.as_ref();
        for k in key {
            named = named.and_then(|x| x.get(*k));
        }
        let named = named.and_then(Value::as_str).map(str::to_string);
        self.redo(path, named.as_deref(), built)
    }

    /// Records in campaign.json which stale evidence `--keep-stale` kept
    /// (`pqperf.stale_kept`: what earlier phases kept, plus what this one kept, minus what it
    /// found current or did again).
    pub fn finish(self) -> Result<(), CampaignError> {
        if self.kept.is_empty() && self.cleared.is_empty() {
            return Ok(());
        }
        update_campaign(&self.opts.run_dir, |c| {
            let pq = c.pqperf_mut();
            let mut all = pq.stale_kept.take().unwrap_or_default();
            all.retain(|s| !self.cleared.iter().any(|c| c == s));
            for k in &self.kept {
                if !all.contains(k) {
                    all.push(k.clone());
                }
            }
            if !all.is_empty() {
                pq.stale_kept = Some(all);
            }
        })
    }
}
