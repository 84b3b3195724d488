//! Constant-time check evidence (`ct/<id>/<label>.json`, run directory and dataset system
//! directory): per operation, the verdict of a valgrind memcheck run with the secret inputs
//! marked undefined, and the findings grouped by source location.
//!
//! Format (Python `json.dumps(indent=1)` + newline, keys in this order):
//!
//! ```text
//! schema        1
//! candidate     "ml-kem-512"          catalog id ("iccs" for the ICCS helper check)
//! label         "ml-kem-512"          instance label ("helpers" for the ICCS helper check)
//! api           "nist" | "iccs"
//! flags         "guide"               build.json flag set the dedicated -g build used
//! build_flags   "-std=c99 … -g "      full C flag string of that build
//! tool          "valgrind-3.19.0"     `valgrind --version`
//! utc           "2026-12-01T13:00:00Z"
//! operations    [ CtOperation … ]
//! ```
//!
//! A [`CtOperation`] holds `operation` (`keygen`, `sign`, `enc`, `dec`, `init_a`, `init_b`,
//! `exchange`, or a helper name), `secret_inputs` (what was marked undefined), `status`
//! (`run` / `not run`), `reason` (why not run, else null), `verdict` (`no findings`,
//! `N findings`, `not run (reason)`), `findings` (groups not accepted), `accepted` (groups
//! accepted by the curated table), `command` (the valgrind command line, relative paths),
//! `seconds`, and `groups` ([`CtFinding`]: `kind` = `conditional jump` | `memory index` |
//! `syscall param` | `other (<valgrind kind>)`, `location` `file:line` relative to the
//! candidate tree, `function`, `count` = occurrences, `stack` = up to four
//! `function (file:line)` frames, `accepted` = the accepted-findings reason or null).

use serde::{Deserialize, Serialize};

/// Newest `schema` of constant-time evidence.
pub const CT_SCHEMA: u64 = 1;

/// One instance's constant-time check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CtEvidence {
    /// Format version ([`CT_SCHEMA`]).
    pub schema: u64,
    /// Catalog id (`iccs` for the ICCS helper check).
    pub candidate: String,
    /// Instance label (`helpers` for the ICCS helper check).
    pub label: String,
    /// `nist` or `iccs`.
    pub api: String,
    /// build.json flag set of the dedicated `-g` build.
    pub flags: String,
    /// Full C flag string of that build.
    pub build_flags: String,
    /// `valgrind --version`.
    pub tool: String,
    /// When the check ran (UTC).
    pub utc: String,
    /// One entry per operation.
    pub operations: Vec<CtOperation>,
    /// What contained the valgrind runs, as recorded by `pqperf ct` (the same object as a
    /// campaign's `pqperf.sandbox`); absent in evidence written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<serde_json::Value>,
    /// build.json `library_sha256` of the instance this check describes (the `-g` build is
    /// made from the same sources and flags): a rebuild makes the evidence stale. Absent for
    /// the ICCS helper check and in evidence written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_sha256: Option<String>,
    /// build.json `inputs_sha256` of that instance (catalog entry and import digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_sha256: Option<String>,
}

/// One operation under memcheck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CtOperation {
    /// Operation (`keygen`, `sign`, `enc`, `dec`, …, or a helper name).
    pub operation: String,
    /// What was marked undefined.
    pub secret_inputs: Vec<String>,
    /// `run` or `not run`.
    pub status: String,
    /// Why it was not run.
    pub reason: Option<String>,
    /// `no findings`, `N findings` or `not run (reason)`.
    pub verdict: String,
    /// Groups not covered by the accepted-findings table.
    pub findings: u64,
    /// Groups covered by the accepted-findings table.
    pub accepted: u64,
    /// The valgrind command line (relative paths).
    pub command: String,
    /// Wall seconds of the run.
    pub seconds: f64,
    /// The finding groups.
    pub groups: Vec<CtFinding>,
}

/// Findings of one kind at one source location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CtFinding {
    /// `conditional jump`, `memory index`, `syscall param` or `other (<valgrind kind>)`.
    pub kind: String,
    /// `file:line` relative to the candidate tree.
    pub location: String,
    /// Function at that location.
    pub function: String,
    /// Occurrences.
    pub count: u64,
    /// Up to four `function (file:line)` frames.
    pub stack: Vec<String>,
    /// The accepted-findings reason, if accepted.
    pub accepted: Option<String>,
}

impl CtOperation {
    /// The verdict text for `findings` groups not accepted (`no findings` / `N findings`).
    pub fn verdict_for(findings: u64) -> String {
        match findings {
            0 => "no findings".into(),
            1 => "1 finding".into(),
            n => format!("{n} findings"),
        }
    }

    /// Recompute `findings`, `accepted` and `verdict` from the groups (status `run`).
    pub fn settle(&mut self) {
        if self.status != "run" {
            self.findings = 0;
            self.accepted = 0;
            self.verdict = format!(
                "not run ({})",
                self.reason.as_deref().unwrap_or("no reason recorded")
            );
            return;
        }
        self.accepted = self.groups.iter().filter(|g| g.accepted.is_some()).count() as u64;
        self.findings = self.groups.len() as u64 - self.accepted;
        self.verdict = Self::verdict_for(self.findings);
    }
}
