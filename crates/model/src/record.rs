//! Timing record, schema 2 (`records/<id>/<label>__<op>.json`; evidence-formats.md §4,
//! method.md §7.2), and the pqperf additions kept under the record's own `pqperf` key.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::evidence_struct;
use crate::fields::Fields;

/// Newest record/profile schema this version reads and writes.
pub const RECORD_SCHEMA: u64 = 2;

evidence_struct! {
    /// One timing record: one (instance, operation) measured in `plan.trials` trials.
    ///
    /// The statistics fields are `None` when the record has no trial (failed run); they are
    /// defined in method.md §8 and computed by `stats::RecordStats`.
    pub struct Record {
        /// Record schema (2).
        pub schema: u64,
        /// `complete` or `failed_or_partial`.
        pub status: String,
        /// Candidate id (`sign-02`).
        pub candidate: String,
        /// Harness label (file-name key).
        pub label: String,
        /// Name the implementation reports.
        pub instance: String,
        /// `reference`, `optimized-avx2`, …
        pub variant: String,
        /// `guide`, `guide-performance`, `harness-default`.
        pub flags: String,
        /// `keygen`, `sign`, `verify`, `encaps`, `decaps`, `exchange`, `hash`.
        pub operation: String,
        /// Message bytes (0 except hash).
        pub input_bytes: u64,
        /// Iteration plan (§6.3).
        pub plan: Plan,
        /// KAT verdict of the instance.
        pub kat: String,
        /// `kat != "PASS"` (timed anyway).
        pub kat_not_passed: bool,
        /// Σ of the processes' disturbed retries.
        pub disturbed_retries: u64,
        /// Library path relative to the dataset (`sign-02/lib/libBiT-128.so`).
        pub library: Option<String>,
        /// sha256 of the library.
        pub library_sha256: Option<String>,
        /// KAT log path relative to the system dataset (`kat/sign-02/BiT-128.log`), may be null.
        pub kat_log: Option<String>,
        /// sha256 of the KAT log.
        pub kat_log_sha256: Option<String>,
        /// ISO-8601 start (µs, `+00:00`).
        pub started_utc: String,
        /// ISO-8601 end.
        pub ended_utc: String,
        /// /proc/loadavg 1/5/15 min at start.
        pub load_average_start: Vec<f64>,
        /// /proc/loadavg 1/5/15 min at end.
        pub load_average_end: Vec<f64>,
        /// Environment snapshot (method.md §3.2); keys differ per system.
        pub environment: Fields,
        /// One element per driver process.
        pub processes: Vec<Process>,
        /// Concatenation of every process's trials.
        pub trials: Vec<Trial>,
        /// Σ measurements.
        pub measurements: Option<u64>,
        /// `measurements >= 100`.
        pub guide_100_measurements_met: Option<bool>,
        /// Σ seconds ÷ measurements.
        pub mean_seconds: Option<f64>,
        /// Median of per-trial means (seconds).
        pub median_trial_seconds: Option<f64>,
        /// Minimum per-trial mean (seconds).
        pub min_trial_seconds: Option<f64>,
        /// Maximum per-trial mean (seconds).
        pub max_trial_seconds: Option<f64>,
        /// Σ cycles ÷ measurements (null unless every trial has cycles > 0).
        pub mean_cycles: Option<f64>,
        /// Median of per-trial mean cycles.
        pub median_trial_cycles: Option<f64>,
        /// measurements ÷ Σ seconds.
        pub operations_per_second: Option<f64>,
        /// Hash throughput (MB/s) when input_bytes > 0, else null.
        #[serde(rename = "throughput_MB_per_second")]
        pub throughput_mb_per_second: Option<f64>,
        /// API sizes (`pk_bytes`, `signature_bytes`, …) as integers.
        pub sizes: IndexMap<String, u64>,
        /// `kex_*` META values (empty for non-KEX).
        pub kex: IndexMap<String, u64>,
        /// Full CFLAGS (ends with a space).
        pub build_flags: String,
        /// Max over processes of meta.baseline_rss_bytes.
        pub baseline_rss_bytes: Option<u64>,
        /// Max over processes of meta.peak_rss_bytes.
        pub peak_rss_bytes: Option<u64>,
        /// `loop` (or `per_call_step`).
        pub timing_scope: String,
        /// pqperf additions (absent in reference records); never changes reference fields.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pqperf: Option<PqperfRecordExt>,
    }
}

evidence_struct! {
    /// Iteration plan of a record (method.md §6.3).
    pub struct Plan {
        /// Timed calls per trial.
        pub iterations_per_trial: u64,
        /// Untimed warm-up calls per process.
        pub warmups: u64,
        /// Number of trials (5).
        pub trials: u64,
        /// One process per trial (true) or one process for all trials.
        pub separate_processes: bool,
        /// Estimated total seconds.
        pub estimated_s: Option<f64>,
        /// Per-process timeout (s).
        pub timeout_per_process_s: Option<f64>,
    }
}

evidence_struct! {
    /// One driver process (method.md §4.9).
    pub struct Process {
        /// `complete` or a failure status.
        pub status: String,
        /// Exit code of the driver.
        pub exit_code: Option<i64>,
        /// Driver `key=value` output, all values strings.
        pub meta: Fields,
        /// Trials run by this process.
        pub trials: Vec<Trial>,
        /// Captured stderr.
        pub stderr: String,
        /// argv (`taskset -c <cpu> performance/ngcc_perf <lib> <op> …`).
        pub command: Vec<String>,
        /// Process wall time (s).
        pub wall_s: Option<f64>,
        /// Attempt index of the kept run (disturbed-trial retry); pqperf writes the number of
        /// re-runs of this process and marks the kept attempt in `pqperf.attempts`.
        pub disturbed_retries: Option<u64>,
    }
}

evidence_struct! {
    /// One trial: `measurements` timed calls taking `seconds` wall time and `cycles` cycles.
    pub struct Trial {
        /// Timed calls in the trial.
        pub measurements: u64,
        /// Wall time of the trial (s).
        pub seconds: f64,
        /// User-mode core cycles (0 or null when unavailable).
        pub cycles: Option<i64>,
    }
}

evidence_struct! {
    /// pqperf's own additions to a record, under the record key `pqperf`.
    pub struct PqperfRecordExt {
        /// pqperf version that wrote the record.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub version: Option<String>,
        /// Quantiles of per-call wall time (s), when the driver sampled single calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub per_call_seconds: Option<Quantiles>,
        /// Quantiles of per-call cycles, when the driver sampled single calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub per_call_cycles: Option<Quantiles>,
        /// Set when the host that measured was emulated (for example `"qemu-user"`): the
        /// timings are then not performance figures. Absent on native hosts.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub emulated: Option<String>,
        /// Memory pass (untimed, one call, the largest over the record's driver processes):
        /// stack bytes from the driver's calling frame down to the deepest byte the operation
        /// wrote (painted region; at least this when `stack_overflow`). The three keys
        /// `stack_bytes`, `heap_peak_bytes`, `heap_allocations` come together (a record "with a
        /// memory pass"); absent in records without one.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stack_bytes: Option<u64>,
        /// Stack bytes painted in the memory pass.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stack_region_bytes: Option<u64>,
        /// The operation reached the bottom of the painted region: `stack_bytes` is a lower
        /// bound.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stack_overflow: Option<bool>,
        /// Peak of live heap bytes (requested sizes) allocated by the operation, counted by the
        /// driver's interposed allocation functions.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub heap_peak_bytes: Option<u64>,
        /// Heap allocations the operation made (malloc, calloc, realloc to a new block, the
        /// memalign family).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub heap_allocations: Option<u64>,
        /// Allocations the interposer could not follow (present only when not 0: the heap peak
        /// is then an upper bound).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub heap_untracked: Option<u64>,
        /// Robust per-call estimate with its bootstrap CI, from the sampled trials
        /// (`crate::robust`); `validate` recomputes it from the stored samples.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub robust: Option<crate::robust::Robust>,
        /// The rule that marked a trial disturbed (text, see `pqperf_measure::record`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub disturbance_rule: Option<String>,
        /// Every driver process run, including disturbed attempts that were re-run.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub attempts: Option<Vec<Attempt>>,
        /// Adaptive stopping: what was added after the planned trials and why it stopped.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub adaptive: Option<Adaptive>,
        /// The machine's state during the kept processes: canary, steal, run-queue share,
        /// load (`crate::envevidence`); what `pqperf compare` weighs against the change.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub environment_evidence: Option<crate::envevidence::EnvSummary>,
        /// Which protocol made the reference fields (`mean_*`, `median_trial_*`, `trials`):
        /// [`PROTOCOL_REFERENCE`], [`PROTOCOL_REFERENCE_ADAPTIVE`] or [`PROTOCOL_TARGET_CI`].
        /// Absent in records written before pqperf recorded it.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub protocol: Option<String>,
        /// Disturbed processes kept without a re-run, `process <i>: <why>` (`no_effect`: the
        /// disturbed run's per-call figures agree with the kept ones within the interval
        /// target; `budget`; `host_always_disturbed`; `max_reruns`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub reruns_declined: Option<Vec<String>>,
    }
}

/// One run of one driver process (pqperf addition, `pqperf.attempts`): a disturbed run is
/// re-run a bounded number of times; every attempt is listed, the kept one marked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Index of the process in the plan (0-based; adaptive additions continue the count).
    pub process: u64,
    /// Attempt number for that process (0 = first run).
    pub attempt: u64,
    /// True for the attempt whose process entry is in `processes`.
    pub kept: bool,
    /// Process status (`complete`, `failed`, …).
    pub status: String,
    /// True when any of its trials was disturbed.
    pub disturbed: bool,
    /// Per-trial scheduler facts (reference and sampled trials).
    pub trials: Vec<TrialSched>,
    /// The machine's state during the process (canary, steal, run-queue share, load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<crate::envevidence::ProcessEnv>,
    /// Why the parent did not accept it (its kernel check's, relayed inputs' and output
    /// check's problems), so that a re-run attempt's reason is kept with the record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Scheduler facts of one trial, from the driver's `PQPERF trial_sched`/`sample_sched` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialSched {
    /// `reference` or `sampled`.
    pub kind: String,
    /// Trial number within the process (1-based).
    pub trial: u64,
    /// Calls in the trial.
    pub calls: u64,
    /// Wall time (s, raw monotonic clock).
    pub seconds: f64,
    /// Counter value (cycles or ticks) of the trial.
    pub count: u64,
    /// Counter per wall nanosecond (GHz); drops below the clock when a cycle counter was
    /// descheduled, constant for a tick counter.
    pub counter_per_ns: Option<f64>,
    /// Involuntary context switches during the trial.
    pub nivcsw: u64,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Run-queue wait (ns): runnable but not running.
    pub runq_ns: Option<u64>,
    /// Minor page faults.
    pub minflt: u64,
    /// Major page faults.
    pub majflt: u64,
    /// CPU migrations.
    pub migrations: Option<u64>,
    /// CPU at the end differs from the CPU at the start.
    pub cpu_changed: Option<bool>,
    /// Share of the trial's wall time lost to preemption (run-queue wait ÷ wall time).
    pub preempted_share: Option<f64>,
    /// True when the disturbance rule marked it.
    pub disturbed: bool,
}

/// Share of the trials' wall time spent waiting on the run queue (Σ `runq_ns` ÷ Σ seconds),
/// the `runq_share` of a process's [`crate::envevidence::ProcessEnv`]; `None` when a trial
/// has no `runq_ns` (no schedstat) or no time passed.
pub fn runq_share_of(trials: &[TrialSched]) -> Option<f64> {
    let ns: f64 = trials.iter().map(|t| t.seconds).sum();
    let q: Option<u64> = trials.iter().map(|t| t.runq_ns).sum();
    q.filter(|_| ns > 0.0).map(|q| q as f64 / 1e9 / ns)
}

/// `pqperf.protocol`: the reference protocol as planned (trials of the trial target).
pub const PROTOCOL_REFERENCE: &str = "reference";
/// `pqperf.protocol`: the reference plan, then trials added while the interval was wide
/// (`--adaptive`, retired: records of earlier versions carry it; none are written now).
pub const PROTOCOL_REFERENCE_ADAPTIVE: &str = "reference+adaptive";
/// `pqperf.protocol`: short trials in fresh processes until the robust interval is narrow
/// enough or the budget is spent (`--target-ci`).
pub const PROTOCOL_TARGET_CI: &str = "target_ci";

/// Adaptive stopping of one record (pqperf addition, `pqperf.adaptive`; with `--target-ci`
/// also its trial length and budget).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    /// Target relative CI half-width (0.01).
    pub target_half_width_rel: f64,
    /// Trials planned before adaptive additions.
    pub planned_trials: u64,
    /// Trials added.
    pub added_trials: u64,
    /// `ci_reached`, `budget_spent`, `ci_out_of_reach` (the rest of the budget could not
    /// bring the interval to the target), `max_trials`, `no_samples` or `failed`.
    pub stopped: String,
    /// Relative half-width when it stopped.
    pub final_half_width_rel: Option<f64>,
    /// `--target-ci`: seconds of timed work aimed at per trial, chosen from the calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_target_s: Option<f64>,
    /// `--target-ci`: driver seconds the operation may spend (what the reference protocol
    /// would spend on it, at most the operation budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// Driver seconds the operation spent (every attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_s: Option<f64>,
}

impl Record {
    /// Record file name for a label and operation key: `<label>__<opkey>.json`.
    pub fn file_name(label: &str, opkey: &str) -> String {
        format!("{label}__{opkey}.json")
    }

    /// How the measuring host was emulated (`pqperf.emulated`), `None` on a native host.
    pub fn emulated(&self) -> Option<&str> {
        self.pqperf.as_ref().and_then(|p| p.emulated.as_deref())
    }

    /// The memory pass (`stack_bytes`, `heap_peak_bytes`, `heap_allocations`, overflow flag),
    /// when the record has one.
    pub fn memory(&self) -> Option<(u64, Option<u64>, Option<u64>, bool)> {
        let p = self.pqperf.as_ref()?;
        Some((
            p.stack_bytes?,
            p.heap_peak_bytes,
            p.heap_allocations,
            p.stack_overflow.unwrap_or(false),
        ))
    }

    /// `<candidate>/<label>`, the build.json key of the record's instance.
    pub fn instance_key(&self) -> String {
        format!("{}/{}", self.candidate, self.label)
    }
}

/// Quantiles of per-call samples (pqperf addition; stored under `pqperf` in records;
/// computed by `stats`).
///
/// Method: sort the samples, then linear interpolation between closest ranks — for
/// probability p the position is h = (n − 1)·p, and the quantile is
/// x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]) (Hyndman–Fan type 7, the default of NumPy and R).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Number of samples.
    pub samples: u64,
    /// Quantile method (`"linear"`, Hyndman–Fan type 7).
    pub method: String,
    /// Smallest sample.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
}
