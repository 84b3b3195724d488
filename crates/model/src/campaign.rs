//! `campaign.json` of a system dataset (evidence-formats.md §2). Key order differs between
//! systems (arm_1 starts with `system_id`, x86_1 has it near the end) and is kept as read.

use indexmap::IndexMap;

use crate::evidence_struct;
use crate::fields::Fields;

evidence_struct! {
    /// Campaign metadata: system, times, environments, host checks, planning constants.
    pub struct Campaign {
        /// System id (`arm_1`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub system_id: Option<String>,
        /// ISO-8601 start.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub started_utc: Option<String>,
        /// Environment snapshot at start.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub environment_at_start: Option<Fields>,
        /// Host checks per phase.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_checks: Option<Vec<HostCheck>>,
        /// Build flags per architecture.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub arch_config: Option<ArchConfig>,
        /// Flags appended to every build.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub harness_additions: Option<String>,
        /// Planning constants.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub planning: Option<Planning>,
        /// ISO-8601 end.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub ended_utc: Option<String>,
        /// Environment snapshot at end.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub environment_at_end: Option<Fields>,
        /// Host problems (normally empty).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems: Option<Vec<String>>,
        /// Union of host problems of every phase (x86_1).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems_any_phase: Option<Vec<String>>,
        /// Prose about `host_problems_any_phase`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems_note: Option<String>,
        /// Number of shards.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shards: Option<u64>,
        /// Shard (`"1/3"`) → CPU.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shard_cpus: Option<IndexMap<String, u64>>,
        /// Prose about re-measurements.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub history_note: Option<String>,
    }
}

evidence_struct! {
    /// One host check.
    pub struct HostCheck {
        /// Phase (`build`, `baseline`, `calibrate`, `measure`, `profile`).
        pub phase: String,
        /// CPU checked.
        pub cpu: Option<u64>,
        /// When.
        pub utc: String,
        /// Problems found.
        pub problems: Vec<String>,
        /// Shard (`"3/3"`) for sharded phases.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shard: Option<String>,
    }
}

evidence_struct! {
    /// Build flags of a system.
    pub struct ArchConfig {
        /// Reference CFLAGS.
        pub reference: String,
        /// Performance CFLAGS.
        pub performance: String,
        /// Families with optimized builds.
        pub optimized_families: Vec<String>,
    }
}

evidence_struct! {
    /// Planning constants (method.md §6.1).
    pub struct Planning {
        /// Trials per operation (5).
        pub trials: u64,
        /// Target seconds per trial.
        pub trial_target_s: f64,
        /// Minimum total measurements (100).
        pub min_total: u64,
        /// Cap on iterations per trial.
        pub max_iters_per_trial: u64,
        /// Budget per operation (s).
        pub op_budget_s: f64,
        /// Setup allowance per separate process (s).
        pub separate_process_setup_s: f64,
    }
}

/// What the host checks recorded in `campaign.json` say about the host of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostState {
    /// `host_problems` is recorded and empty: every check passed.
    Fixed,
    /// Problems found by the checks of measuring phases, by name.
    NotFixed(Vec<String>),
    /// No host-check outcome recorded.
    Unknown,
}

/// The tool that produced a dataset, as its `campaign.json` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Producer {
    /// pqperf (its `pqperf` object): version and the commands it ran, as recorded.
    Pqperf {
        /// `pqperf.version`, if recorded.
        version: Option<String>,
        /// `pqperf.commit`: the git commit pqperf was built from (`unknown` when it was not
        /// known at build time); `None` when not recorded (older datasets).
        commit: Option<String>,
        /// `pqperf.commands`, in order.
        commands: Vec<String>,
    },
    /// No `pqperf` object: the reference harness.
    ReferenceHarness,
}

impl Campaign {
    /// The host-check outcome: [`HostState::Fixed`] only when `host_problems` is recorded and
    /// empty; problems of the measuring phases otherwise (`host_problems`, else the union of
    /// the recorded checks of measuring phases).
    pub fn host_state(&self) -> HostState {
        match &self.host_problems {
            Some(p) if p.is_empty() => HostState::Fixed,
            Some(p) => HostState::NotFixed(p.clone()),
            None => {
                let mut probs: Vec<String> = Vec::new();
                for c in self.host_checks.iter().flatten() {
                    if c.phase != "build" && c.phase != "kat" {
                        for p in &c.problems {
                            if !probs.contains(p) {
                                probs.push(p.clone());
                            }
                        }
                    }
                }
                if probs.is_empty() {
                    HostState::Unknown
                } else {
                    HostState::NotFixed(probs)
                }
            }
        }
    }

    /// How the measuring host was emulated (`pqperf.emulated`, e.g. `qemu-user`), `None` on a
    /// native host. Timings of such a dataset are not performance figures.
    pub fn emulated(&self) -> Option<&str> {
        self.extra
            .get("pqperf")
            .and_then(|p| p.get("emulated"))
            .and_then(|v| v.as_str())
    }

    /// Who produced the dataset: pqperf when `campaign.json` has a `pqperf` object.
    pub fn producer(&self) -> Producer {
        match self.extra.get("pqperf").and_then(|v| v.as_object()) {
            Some(p) => Producer::Pqperf {
                version: p
                    .get("version")
                    .and_then(|v| v.as_str())
                    .map(str::to_string),
                commit: p.get("commit").and_then(|v| v.as_str()).map(str::to_string),
                commands: p
                    .get("commands")
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|c| c.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            None => Producer::ReferenceHarness,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_state_and_producer() {
        let mut c = Campaign::default();
        assert_eq!(c.host_state(), HostState::Unknown);
        assert_eq!(c.producer(), Producer::ReferenceHarness);
        assert_eq!(c.emulated(), None);
        c.extra.insert(
            "pqperf".into(),
            serde_json::json!({"version": "0.1.0", "emulated": "qemu-user"}),
        );
        assert_eq!(c.emulated(), Some("qemu-user"));
        c.extra.remove("pqperf");
        c.host_checks = Some(vec![HostCheck {
            phase: "measure".into(),
            problems: vec!["turbo unknown".into()],
            ..Default::default()
        }]);
        assert_eq!(
            c.host_state(),
            HostState::NotFixed(vec!["turbo unknown".into()])
        );
        c.host_problems = Some(vec![]);
        assert_eq!(c.host_state(), HostState::Fixed);
        c.extra.insert(
            "pqperf".into(),
            serde_json::json!({"version": "0.1.0", "commands": ["pqperf campaign all"]}),
        );
        assert_eq!(
            c.producer(),
            Producer::Pqperf {
                version: Some("0.1.0".into()),
                commit: None,
                commands: vec!["pqperf campaign all".into()]
            }
        );
    }
}
