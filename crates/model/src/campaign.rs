//! `campaign.json` of a system dataset (evidence-formats.md §2). Key order differs between
//! systems (arm_1 starts with `system_id`, x86_1 has it near the end) and is kept as read.

use indexmap::IndexMap;
use serde_json::Value;

use crate::evidence_struct;
use crate::fields::Fields;

evidence_struct! {
    /// Campaign metadata: system, times, environments, host checks, planning constants, and
    /// pqperf's own facts ([`CampaignPqperf`]). The reader's type and the writer's: pqperf's
    /// campaign commands read it, change their own fields and write it back, so keys of other
    /// commands and the reference harness (`extra`) and the key order as read are kept.
    /// Fields are declared in the order of a first write by `campaign` (system id, start,
    /// host checks, shards, flags, planning, `pqperf`; the end times are appended at the end
    /// of the phase).
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
        /// Host problems (normally empty).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems: Option<Vec<String>>,
        /// Number of shards.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shards: Option<u64>,
        /// Shard (`"1/3"`) → CPU.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shard_cpus: Option<IndexMap<String, u64>>,
        /// Build flags per architecture.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub arch_config: Option<ArchConfig>,
        /// Flags appended to every build.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub harness_additions: Option<String>,
        /// Planning constants.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub planning: Option<Planning>,
        /// pqperf's own object (absent in the reference harness's files).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pqperf: Option<CampaignPqperf>,
        /// ISO-8601 end.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub ended_utc: Option<String>,
        /// Environment snapshot at end.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub environment_at_end: Option<Fields>,
        /// Union of host problems of every phase (x86_1).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems_any_phase: Option<Vec<String>>,
        /// Prose about `host_problems_any_phase`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub host_problems_note: Option<String>,
        /// Prose about re-measurements.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub history_note: Option<String>,
    }
}

evidence_struct! {
    /// campaign.json's `pqperf` object: what pqperf's commands recorded about the run. Each
    /// command replaces only its own keys; the rest (other commands' keys, keys of later
    /// versions in `extra`) stays. The first four fields are the counter facts of
    /// `measure::host::counter_info`, which the records' `pqperf` object carries too.
    pub struct CampaignPqperf {
        /// Evidence name of the timing counter (`vocab::Counter`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub counter: Option<String>,
        /// Counter frequency (Hz) as measured (a number as written, or `null`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub counter_hz: Option<Value>,
        /// Whether the counter counts core cycles.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cycles_are_core_cycles: Option<bool>,
        /// Whether the tick counter is invariant (tick counters only).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub counter_invariant: Option<bool>,
        /// The tick counter's source on this architecture.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub tick_source: Option<String>,
        /// Tick frequency (Hz).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub tick_hz: Option<u64>,
        /// What contained the candidate code of the last phase (`ffi::untrusted::in_force_json`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub sandbox: Option<Value>,
        /// pqperf's version.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
        /// The commands pqperf ran in the run directory, each once, in order (no paths).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub commands: Option<Vec<String>>,
        /// The host-wide CPU lease of every measuring phase.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cpu_leases: Option<Vec<LeaseWindow>>,
        /// How the host was emulated (`qemu-user`), once any phase ran emulated.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub emulated: Option<String>,
        /// The git commit pqperf was built from (`unknown` when not known at build time).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub commit: Option<String>,
        /// The A–A noise floor (`pqperf compare --record-noise-floor`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub noise_floor: Option<Value>,
        /// Stale evidence `--keep-stale` kept (run-relative paths).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stale_kept: Option<Vec<String>>,
        /// What the baseline phase took from the host-wide ICCS helper baseline cache.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub iccs_baseline_reuse: Option<BaselineReuse>,
        /// The shard run directories `campaign merge` joined (their names).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub merged_from: Option<Vec<String>>,
        /// The ICCS provider the run's ICCS instances linked (a list when they differ).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub iccs_provider: Option<Value>,
        /// The last `pqperf iccs bench` table of the run.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub iccs_provider_cost: Option<Value>,
        /// Where the last measure phase's wall time went (`pqperf_measure::budget`): its
        /// efficiency (Σ timed ÷ phase wall) and the driver processes' parts.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub measure_budget: Option<Value>,
        /// The stream keys the measure phases of pqperf's own protocol derived their
        /// processes' seeds from (`stream::keyed_process_seed`), written once the phase has
        /// measured (never while candidate code runs): `key_id` (what each process entry's
        /// `stream.key_id` names), `key` (64 hex characters: anyone can now recompute every
        /// seed), `reused` (`--stream-key`: the inputs were predictable from an earlier
        /// run's published key).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stream_keys: Option<Vec<Value>>,
    }
}

evidence_struct! {
    /// One phase's host-wide CPU lease (`pqperf.cpu_leases[]`; a record's `pqperf.cpu_lease`
    /// has the first five fields).
    pub struct LeaseWindow {
        /// The leased CPU.
        pub cpu: u64,
        /// `requested` or `auto`.
        pub chosen: String,
        /// The CPUs the process was allowed to run on when it chose.
        pub allowed: Vec<u64>,
        /// Seconds spent waiting (ms precision).
        pub waited_s: f64,
        /// When the lease was taken.
        pub acquired_utc: String,
        /// The phase that held it.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub phase: Option<String>,
        /// The process that held it.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pid: Option<u64>,
        /// When it was released: `Some(None)` is written as `null` (held, or the phase died).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub released_utc: Option<Option<String>>,
        /// The shard run directory of the window (`campaign merge`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shard_run: Option<String>,
    }
}

evidence_struct! {
    /// `pqperf.iccs_baseline_reuse`: records of the ICCS helper baseline copied from the
    /// host-wide cache.
    pub struct BaselineReuse {
        /// The host key the cache was looked up with.
        pub host_key: String,
        /// Records copied (with their calibrations).
        pub records_reused: u64,
        /// Libraries of the run whose records were all found.
        pub libraries_found: u64,
        /// ICCS helper libraries of the run.
        pub libraries: u64,
    }
}

impl CampaignPqperf {
    /// `self` with every key of `earlier` that `self` does not have (set or `null`) added
    /// after its own, in `earlier`'s order: how a phase records its facts over what earlier
    /// commands recorded (`cpu_lease`, the current lease of old versions, is dropped).
    pub fn keep_earlier(
        self,
        earlier: &CampaignPqperf,
    ) -> Result<CampaignPqperf, serde_json::Error> {
        let Value::Object(mut new) = serde_json::to_value(&self)? else {
            return Ok(self);
        };
        if let Value::Object(old) = serde_json::to_value(earlier)? {
            for (k, v) in old {
                if k != "cpu_lease" {
                    new.entry(k).or_insert(v);
                }
            }
        }
        serde_json::from_value(Value::Object(new))
    }

    /// Adds `command` to [`Self::commands`] unless it is there.
    pub fn note_command(&mut self, command: &str) {
        let cmds = self.commands.get_or_insert_with(Vec::new);
        if !cmds.iter().any(|c| c == command) {
            cmds.push(command.to_string());
        }
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
        self.pqperf.as_ref()?.emulated.as_deref()
    }

    /// Who produced the dataset: pqperf when `campaign.json` has a `pqperf` object.
    pub fn producer(&self) -> Producer {
        match &self.pqperf {
            Some(p) => Producer::Pqperf {
                version: p.version.clone(),
                commit: p.commit.clone(),
                commands: p.commands.clone().unwrap_or_default(),
            },
            None => Producer::ReferenceHarness,
        }
    }

    /// The `pqperf` object, created empty when there is none.
    pub fn pqperf_mut(&mut self) -> &mut CampaignPqperf {
        self.pqperf.get_or_insert_with(CampaignPqperf::default)
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
        c.pqperf = Some(CampaignPqperf {
            version: Some("0.1.0".into()),
            emulated: Some("qemu-user".into()),
            ..Default::default()
        });
        assert_eq!(c.emulated(), Some("qemu-user"));
        c.pqperf = None;
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
        c.pqperf_mut().version = Some("0.1.0".into());
        c.pqperf_mut().note_command("pqperf campaign all");
        c.pqperf_mut().note_command("pqperf campaign all");
        assert_eq!(
            c.producer(),
            Producer::Pqperf {
                version: Some("0.1.0".into()),
                commit: None,
                commands: vec!["pqperf campaign all".into()]
            }
        );
    }

    /// A campaign.json as pqperf writes it reads into the typed fields and is written back
    /// byte for byte (key order, `null`s, integers and floats, keys of other commands); a
    /// change to one field changes only that key.
    #[test]
    fn pqperf_campaign_round_trips() {
        let text = r#"{
 "system_id": "x86_7",
 "started_utc": "2026-01-01T00:00:00.000000Z",
 "host_checks": [
  {
   "phase": "measure",
   "cpu": 1,
   "utc": "2026-01-01T00:00:00.000000Z",
   "problems": [],
   "shard": "1/2"
  }
 ],
 "host_problems": [],
 "shards": 2,
 "shard_cpus": {
  "1/2": 1
 },
 "pqperf": {
  "counter": "tsc",
  "counter_hz": 2100000000,
  "cycles_are_core_cycles": false,
  "counter_invariant": true,
  "tick_source": "rdtsc",
  "tick_hz": 2100000000,
  "version": "0.1.0",
  "commands": [
   "pqperf campaign measure"
  ],
  "cpu_leases": [
   {
    "cpu": 1,
    "chosen": "requested",
    "allowed": [
     0,
     1
    ],
    "waited_s": 0.0,
    "acquired_utc": "2026-01-01T00:00:00.000000Z",
    "phase": "measure",
    "pid": 42,
    "released_utc": null
   }
  ],
  "noise_floor": {
   "median_abs_change": 0.07
  },
  "future_key": [
   1
  ],
  "iccs_baseline_reuse": {
   "host_key": "k",
   "records_reused": 3,
   "libraries_found": 1,
   "libraries": 2
  }
 },
 "reference_key": "kept",
 "ended_utc": "2026-01-01T00:01:00.000000Z"
}
"#;
        let p = std::path::Path::new("campaign.json");
        let mut c: Campaign = crate::pyjson::from_str(p, text).unwrap();
        assert_eq!(crate::pyjson::to_string(&c).unwrap(), text);
        let pq = c.pqperf.as_ref().unwrap();
        assert_eq!(pq.counter_hz, Some(serde_json::json!(2100000000u64)));
        let lease = &pq.cpu_leases.as_ref().unwrap()[0];
        assert_eq!(
            lease.released_utc, None,
            "null reads as None, kept by key order"
        );
        assert_eq!(pq.iccs_baseline_reuse.as_ref().unwrap().libraries, 2);
        assert_eq!(pq.extra["future_key"], serde_json::json!([1]));
        c.pqperf_mut().cpu_leases.as_mut().unwrap()[0].released_utc =
            Some(Some("2026-01-01T00:01:00.000000Z".into()));
        c.pqperf_mut().note_command("pqperf campaign merge");
        let out = crate::pyjson::to_string(&c).unwrap();
        let want = text
            .replace(
                "\"released_utc\": null",
                "\"released_utc\": \"2026-01-01T00:01:00.000000Z\"",
            )
            .replace(
                "   \"pqperf campaign measure\"\n",
                "   \"pqperf campaign measure\",\n   \"pqperf campaign merge\"\n",
            );
        assert_eq!(out, want);
    }

    /// A phase's own facts come first, what earlier commands recorded follows; a key the phase
    /// recorded is replaced, a `null` of an earlier command is kept.
    #[test]
    fn keep_earlier_replaces_only_own_keys() {
        let p = std::path::Path::new("campaign.json");
        let old: CampaignPqperf = crate::pyjson::from_str(
            p,
            r#"{"version": "0.0.1", "commit": "abc", "emulated": null, "cpu_lease": {"cpu": 1}, "x": 1}"#,
        )
        .unwrap();
        let new = CampaignPqperf {
            version: Some("0.1.0".into()),
            tick_hz: Some(7),
            ..Default::default()
        }
        .keep_earlier(&old)
        .unwrap();
        let v = serde_json::to_value(&new).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["tick_hz", "version", "commit", "emulated", "x"]);
        assert_eq!(v["version"], "0.1.0");
        assert_eq!(v["commit"], "abc");
        assert!(v["emulated"].is_null());
    }
}
