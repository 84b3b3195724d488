//! Instruction-count evidence (`count/<id>/<label>__<op>.json`, run directory and dataset
//! system directory): one operation of one library counted under valgrind's callgrind, only
//! inside the operation's API function, over a fixed number of calls with the driver's seeded
//! inputs. Counts are deterministic: the same library, inputs and testbed give the same
//! figures on any host and under any load (see `docs/counting.md`).
//!
//! Format (Python `json.dumps(indent=1)` + newline, keys in this order):
//!
//! ```text
//! schema                     1
//! candidate, label, operation
//! architecture, method       only when not counted by callgrind on the host: the guest
//!                            architecture (`aarch64`) and the method with its tool
//!                            (`qemu-tcg-plugin (qemu-aarch64 version 7.2.22 …)`); such
//!                            evidence has no cache figures (estimated cycles, per_call)
//! status                     "counted" | "refused" | "failed"
//! reason                     why not counted (null when counted)
//! library_sha256             sha256 of the library counted (build.json's)
//! symbol                     the API function whose calls were counted (`--toggle-collect`)
//! symbols                    only when several functions make one call (a whole key
//!                            exchange: every step's API function, `symbol` the last one)
//! calls                      calls counted (parts of the profile, one per call)
//! calls_run                  calls of the function in the process (preparation and memory
//!                            pass included; only `calls` of them are counted)
//! seeds                      the driver's DRNG seed(s), hex
//! instructions_per_call      {median, mean, min, max} of Ir over the counted calls
//! instructions               Ir of each counted call, in order
//! estimated_cycles_per_call  {median, mean, min, max} of the estimate below
//! per_call                   mean per call: data_reads, data_writes, l1_misses, ll_misses
//!                            (and the raw callgrind events, `events`)
//! estimated_cycles_formula   "callgrind-estimated-cycles-v1: …" (named and versioned)
//! functions                  [ CountFunction … ] inclusive instructions per call, classified
//! classes                    class → instructions per call attributed to it (outermost)
//! testbed                    valgrind version, exact flags, cache geometry, compiler,
//!                            C library; counts compare exactly only within one testbed
//! command                    the driver command line (relative paths)
//! seconds                    wall seconds of the valgrind process
//! utc                        when it was counted
//! timing_check               (present when a timing record of the same library exists)
//!                            the timed per-call figures against the lower bound the count
//!                            allows ([`TimingCheck`], rule [`TIMING_CHECK_RULE`])
//! ```

use serde::{Deserialize, Serialize};

/// Newest `schema` of count evidence.
pub const COUNT_SCHEMA: u64 = 1;

/// The estimated-cycles formula, named and versioned (the Iai/Gungraun figure).
pub const ESTIMATED_CYCLES_FORMULA: &str = "callgrind-estimated-cycles-v1: L1 hits + 5·LL hits + 35·RAM hits (RAM hits = ILmr+DLmr+DLmw; LL hits = I1mr+D1mr+D1mw − RAM hits; L1 hits = Ir+Dr+Dw − LL hits − RAM hits)";

/// What an instruction count compares across architectures, in one sentence (pages showing
/// x86 and AArch64 counts side by side say it).
pub const ACROSS_ARCHITECTURES: &str = "Across architectures a count compares the number of instructions each build executes for the same inputs, not speed and not the same unit of work: x86-64 and AArch64 are different instruction sets (an x86 instruction may read memory and compute at once, an AArch64 one does not), and their vector widths differ (AVX2 has 256-bit registers, NEON 128-bit; SVE's depends on the CPU), so one vector instruction does a different amount of work on each.";

/// The function classes of the per-function table, in display order.
pub const CLASSES: &[&str] = &[
    "keccak/shake",
    "sha-2",
    "sm3",
    "aes",
    "iccs-helpers",
    "drng",
    "libc",
    "candidate",
];

/// One operation's instruction count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CountEvidence {
    /// Format version ([`COUNT_SCHEMA`]).
    pub schema: u64,
    /// Catalog id.
    pub candidate: String,
    /// Instance label.
    pub label: String,
    /// Operation (record key: `keygen`, `sign`, `verify`, `enc`, `dec`, `hash_64`, …).
    pub operation: String,
    /// The architecture counted, when not the host's under callgrind (`aarch64`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
    /// The method, when not callgrind: `qemu-tcg-plugin (<emulator --version>)`. Such
    /// counts have no cache simulation (no estimated cycles, no `per_call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// `counted`, `refused` (valgrind cannot count it exactly: AVX-512, an operation without
    /// a single API function) or `failed` (the process did not finish).
    pub status: String,
    /// Why not counted (null when counted).
    pub reason: Option<String>,
    /// sha256 of the library counted.
    pub library_sha256: Option<String>,
    /// The API function whose calls were counted (with [`CountEvidence::symbols`]: the one
    /// whose return ends a counted call, the last step of a key exchange).
    pub symbol: String,
    /// The API functions counted together as one call, when more than one: a whole key
    /// exchange counts every step's function (`kex_init_a` … `kex_derive_ss_b`) and its
    /// callees, not the driver's code between them. Absent for every other operation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// Calls counted.
    pub calls: u64,
    /// Calls of `symbol` in the whole process (preparation and memory pass included).
    pub calls_run: u64,
    /// The driver's DRNG seed(s), hex.
    pub seeds: Vec<String>,
    /// Instructions (callgrind `Ir`) per call.
    pub instructions_per_call: Option<Spread>,
    /// Instructions of each counted call, in call order (the k-th call has the k-th input of
    /// the seeded stream: two counts compare call by call over their common calls).
    #[serde(default)]
    pub instructions: Vec<u64>,
    /// Estimated cycles per call ([`ESTIMATED_CYCLES_FORMULA`]).
    pub estimated_cycles_per_call: Option<Spread>,
    /// Mean per call of the cache-simulation figures.
    pub per_call: Option<PerCall>,
    /// The formula of `estimated_cycles_per_call`.
    pub estimated_cycles_formula: String,
    /// Functions reached by the operation, by inclusive instructions per call (largest first).
    pub functions: Vec<CountFunction>,
    /// Class → instructions per call attributed to it: a call from a function of another
    /// class into a function of this class counts with its inclusive cost (the outermost
    /// classified frame wins); `candidate` is the rest. The values add up to
    /// `instructions_per_call.mean`.
    pub classes: serde_json::Map<String, serde_json::Value>,
    /// What the counts depend on besides the library and the inputs.
    pub testbed: Testbed,
    /// The driver command line (relative paths).
    pub command: Vec<String>,
    /// Wall seconds of the valgrind process.
    pub seconds: f64,
    /// When it was counted (UTC).
    pub utc: String,
    /// The cross-check of the timing record of the same library and operation (absent when
    /// there is none): written by the count stage, recomputed by `validate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_check: Option<TimingCheck>,
}

/// The most instructions per cycle any core retires, as the cross-check assumes it: twice the
/// widest retire width of the cores of 2026 (8), so that macro-fused pairs (two instructions,
/// one slot) are inside it. Generous on purpose: the check only catches the impossible.
pub const MAX_IPC: f64 = 16.0;

/// The maximum clock (Hz) the cross-check assumes when the record names none of the host's
/// (`cpufreq_max_khz`, `core_clock_max_hz`): above every shipped core's boost clock (6.2 GHz).
pub const ASSUMED_MAX_CLOCK_HZ: f64 = 7.0e9;

/// The cross-check's rule, named and versioned.
pub const TIMING_CHECK_RULE: &str = "timing-lower-bound-v1: a call cannot take less than the fewest instructions of one counted call ÷ 16 instructions per cycle ÷ the host's maximum clock (the largest of the record's cpufreq_max_khz and core_clock_max_hz, else 7 GHz); a timed per-call figure of the record (mean_seconds, median_trial_seconds, min_trial_seconds, pqperf.robust.estimate_seconds) below it is impossible";

/// A timing record checked against the count of the same library and operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TimingCheck {
    /// `possible`, or `impossible`: a timed figure below the lower bound.
    pub verdict: String,
    /// The record checked (run-relative path).
    pub record: String,
    /// The record's smallest timed per-call figure (seconds).
    pub timed_seconds: f64,
    /// Which figure of the record that is (`mean_seconds`, `min_trial_seconds`, …).
    pub timed_figure: String,
    /// The fewest instructions of one counted call.
    pub instructions: u64,
    /// [`MAX_IPC`].
    pub max_ipc: f64,
    /// The host's maximum clock (Hz).
    pub max_clock_hz: f64,
    /// Where that clock comes from (`cpufreq_max_khz`, `core_clock_max_hz`, `assumed`).
    pub max_clock_source: String,
    /// instructions ÷ max_ipc ÷ max_clock_hz (seconds).
    pub lower_bound_seconds: f64,
}

impl TimingCheck {
    /// Whether the timed figure is impossible.
    pub fn impossible(&self) -> bool {
        self.verdict == "impossible"
    }
}

/// The cross-check of `record` (at run-relative `record_rel`) against `count`: None when
/// the count has no figures, the two name different libraries or operations, or the record
/// has no timed per-call figure.
pub fn timing_check(
    count: &CountEvidence,
    record: &crate::record::Record,
    record_rel: &str,
) -> Option<TimingCheck> {
    let instructions = count
        .instructions_per_call
        .filter(|_| count.status == "counted")?
        .min;
    if count.library_sha256.is_none()
        || record.library_sha256 != count.library_sha256
        || record.candidate != count.candidate
        || record.label != count.label
        || record.operation != count.operation
    {
        return None;
    }
    let robust = record
        .pqperf
        .as_ref()
        .and_then(|p| p.robust.as_ref())
        .map(|r| r.estimate_seconds);
    let (timed_figure, timed_seconds) = [
        ("mean_seconds", record.mean_seconds),
        ("median_trial_seconds", record.median_trial_seconds),
        ("min_trial_seconds", record.min_trial_seconds),
        ("pqperf.robust.estimate_seconds", robust),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.filter(|x| x.is_finite() && *x > 0.0).map(|x| (n, x)))
    .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let env = &record.environment;
    let (max_clock_source, max_clock_hz) = [
        (
            "cpufreq_max_khz",
            env.f64("cpufreq_max_khz").map(|k| k * 1e3),
        ),
        ("core_clock_max_hz", env.f64("core_clock_max_hz")),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.filter(|x| x.is_finite() && *x > 0.0).map(|x| (n, x)))
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .unwrap_or(("assumed", ASSUMED_MAX_CLOCK_HZ));
    let lower_bound_seconds = instructions as f64 / MAX_IPC / max_clock_hz;
    Some(TimingCheck {
        verdict: if timed_seconds < lower_bound_seconds {
            "impossible"
        } else {
            "possible"
        }
        .into(),
        record: record_rel.to_string(),
        timed_seconds,
        timed_figure: timed_figure.into(),
        instructions,
        max_ipc: MAX_IPC,
        max_clock_hz,
        max_clock_source: max_clock_source.into(),
        lower_bound_seconds,
    })
}

/// Median, mean, minimum and maximum over the counted calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Spread {
    /// Median (the mean of the two middle values for an even count).
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Smallest.
    pub min: u64,
    /// Largest.
    pub max: u64,
}

impl Spread {
    /// The spread of `v` (None when empty).
    pub fn of(v: &[u64]) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        let mut s = v.to_vec();
        s.sort_unstable();
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2] as f64
        } else {
            (s[n / 2 - 1] as f64 + s[n / 2] as f64) / 2.0
        };
        let sum: u128 = s.iter().map(|&x| x as u128).sum();
        Some(Spread {
            median,
            mean: sum as f64 / n as f64,
            min: s[0],
            max: s[n - 1],
        })
    }
}

/// Cache-simulation figures, mean per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PerCall {
    /// Data reads (`Dr`).
    pub data_reads: f64,
    /// Data writes (`Dw`).
    pub data_writes: f64,
    /// L1 misses (`I1mr + D1mr + D1mw`).
    pub l1_misses: f64,
    /// Last-level misses (`ILmr + DLmr + DLmw`).
    pub ll_misses: f64,
    /// Every callgrind event, mean per call, in callgrind's order.
    pub events: serde_json::Map<String, serde_json::Value>,
}

/// One function reached by the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CountFunction {
    /// Function name (callgrind's).
    pub function: String,
    /// Its class (one of [`CLASSES`]).
    pub class: String,
    /// Inclusive instructions per operation call (self and callees).
    pub inclusive_per_call: f64,
    /// Own instructions per operation call.
    pub self_per_call: f64,
    /// Calls of it per operation call.
    pub calls_per_call: f64,
}

/// What a count depends on besides the library and its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Testbed {
    /// `valgrind --version`.
    pub valgrind: String,
    /// The exact valgrind options.
    pub flags: Vec<String>,
    /// Address-space randomisation (`off (setarch -R)`).
    pub aslr: String,
    /// The compiler of the library (build.json `compiler`).
    pub compiler: String,
    /// The C flags of the library (build.json `build_flags`).
    pub build_flags: String,
    /// The C library (`glibc 2.36`).
    pub libc: String,
    /// Machine architecture.
    pub machine: String,
}

impl Testbed {
    /// The key under which counts compare exactly: every field.
    pub fn key(&self) -> String {
        format!(
            "{} | {} | {} | {} | {} | {} | {}",
            self.valgrind,
            self.flags.join(" "),
            self.aslr,
            self.compiler,
            self.build_flags,
            self.libc,
            self.machine
        )
    }
}

impl CountEvidence {
    /// Whether the counter could not count at all here (`not available: …`: an emulator
    /// without TCG plugin support).
    pub fn not_available(&self) -> bool {
        self.status == "refused"
            && self
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with("not available"))
    }

    /// Mean instructions per call over the first `k` counted calls (all with the per-call
    /// list absent); None when not counted.
    pub fn instructions_over(&self, k: usize) -> Option<f64> {
        if self.status != "counted" {
            return None;
        }
        if self.instructions.is_empty() || k == 0 {
            return self.instructions();
        }
        let v = &self.instructions[..k.min(self.instructions.len())];
        Some(v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64)
    }

    /// Instructions per call (the mean; None when not counted).
    pub fn instructions(&self) -> Option<f64> {
        (self.status == "counted")
            .then_some(self.instructions_per_call.map(|s| s.mean))
            .flatten()
    }

    /// Problems of an evidence file's own consistency (empty: consistent): the status and
    /// its figures, the spread's order, the classes adding up to the mean.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if self.schema > COUNT_SCHEMA {
            p.push(format!(
                "schema {} is newer than {COUNT_SCHEMA}",
                self.schema
            ));
        }
        match self.status.as_str() {
            "counted" => {
                if self.reason.is_some() {
                    p.push("status counted with a reason".into());
                }
                if self.calls == 0 {
                    p.push("status counted with 0 calls".into());
                }
                if !self.instructions.is_empty() && self.instructions.len() as u64 != self.calls {
                    p.push(format!(
                        "{} per-call counts for {} calls",
                        self.instructions.len(),
                        self.calls
                    ));
                }
                if self.calls > self.calls_run {
                    p.push(format!(
                        "calls {} above calls_run {}",
                        self.calls, self.calls_run
                    ));
                }
                match &self.instructions_per_call {
                    None => p.push("status counted without instructions_per_call".into()),
                    Some(s) => {
                        let (lo, hi) = (s.min as f64, s.max as f64);
                        if !(lo <= s.median && s.median <= hi && lo <= s.mean && s.mean <= hi) {
                            p.push(format!(
                                "instructions_per_call not ordered: min {} median {} mean {} max {}",
                                s.min, s.median, s.mean, s.max
                            ));
                        }
                        let sum: f64 = self.classes.values().filter_map(|v| v.as_f64()).sum();
                        if !self.classes.is_empty() && (sum - s.mean).abs() > 1e-6 * s.mean.max(1.0)
                        {
                            p.push(format!(
                                "classes add up to {sum}, not to the mean {}",
                                s.mean
                            ));
                        }
                    }
                }
                if self.estimated_cycles_per_call.is_none() && self.method.is_none() {
                    p.push("status counted without estimated_cycles_per_call".into());
                }
                if self.library_sha256.is_none() {
                    p.push("status counted without library_sha256".into());
                }
            }
            "refused" | "failed" => {
                if self.reason.is_none() {
                    p.push(format!("status {} without a reason", self.status));
                }
            }
            other => p.push(format!("unknown status {other:?}")),
        }
        if !self.symbols.is_empty() && !self.symbols.contains(&self.symbol) {
            p.push(format!(
                "symbol {:?} is not one of the symbols counted together ({})",
                self.symbol,
                self.symbols.join(", ")
            ));
        }
        for k in self.classes.keys() {
            if !CLASSES.contains(&k.as_str()) {
                p.push(format!("unknown class {k:?}"));
            }
        }
        for f in &self.functions {
            if !CLASSES.contains(&f.class.as_str()) {
                p.push(format!(
                    "function {}: unknown class {:?}",
                    f.function, f.class
                ));
            }
        }
        if self.estimated_cycles_formula != ESTIMATED_CYCLES_FORMULA
            && self.status == "counted"
            && self.method.is_none()
        {
            p.push(format!(
                "estimated_cycles_formula {:?} is not this version's",
                self.estimated_cycles_formula
            ));
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_consistency() {
        let s = Spread::of(&[5, 1, 3, 3]).unwrap();
        assert_eq!((s.min, s.max, s.median, s.mean), (1, 5, 3.0, 3.0));
        assert!(Spread::of(&[]).is_none());
        let mut ev = CountEvidence {
            schema: 1,
            status: "counted".into(),
            calls: 4,
            calls_run: 5,
            instructions_per_call: Some(s),
            estimated_cycles_per_call: Some(s),
            library_sha256: Some("ab".into()),
            estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
            ..Default::default()
        };
        ev.classes.insert("candidate".into(), 2.0.into());
        ev.classes.insert("sm3".into(), 1.0.into());
        assert!(ev.problems().is_empty(), "{:?}", ev.problems());
        assert_eq!(ev.instructions(), Some(3.0));
        ev.classes.insert("sm3".into(), 2.0.into());
        assert!(ev.problems()[0].contains("add up"), "{:?}", ev.problems());
        let text = crate::pyjson::to_string(&ev).unwrap();
        assert!(
            !text.contains("\"symbols\""),
            "absent unless several: {text}"
        );
        let back: CountEvidence = crate::pyjson::from_str("x".as_ref(), &text).unwrap();
        assert_eq!(back, ev);
        // A whole key exchange: the call ends with the last of the functions counted together.
        ev.classes.insert("sm3".into(), 1.0.into());
        ev.symbols = vec!["kex_init_a".into(), "kex_derive_ss_b".into()];
        ev.symbol = "kex_derive_ss_b".into();
        assert!(ev.problems().is_empty(), "{:?}", ev.problems());
        let text = crate::pyjson::to_string(&ev).unwrap();
        let back: CountEvidence = crate::pyjson::from_str("x".as_ref(), &text).unwrap();
        assert_eq!(back, ev);
        ev.symbol = "sig_sign".into();
        assert!(
            ev.problems()[0].contains("not one of the symbols"),
            "{:?}",
            ev.problems()
        );
    }

    #[test]
    fn a_timing_below_what_the_count_allows_is_impossible() {
        let count = CountEvidence {
            candidate: "sign-90".into(),
            label: "X".into(),
            operation: "sign".into(),
            status: "counted".into(),
            library_sha256: Some("aa".into()),
            instructions_per_call: Spread::of(&[16_000_000, 17_000_000]),
            ..Default::default()
        };
        let mut r = crate::record::Record {
            candidate: "sign-90".into(),
            label: "X".into(),
            operation: "sign".into(),
            library_sha256: Some("aa".into()),
            mean_seconds: Some(4e-3),
            min_trial_seconds: Some(3.9e-3),
            ..Default::default()
        };
        r.environment.insert("cpufreq_max_khz", "2000000");
        r.environment
            .insert("core_clock_max_hz", serde_json::Value::Null);
        let rel = "records/sign-90/X__sign.json";
        // 16 M instructions ÷ 16 per cycle ÷ 2 GHz = 0.5 ms: 3.9 ms is possible.
        let t = timing_check(&count, &r, rel).unwrap();
        assert_eq!(t.lower_bound_seconds, 5e-4);
        assert_eq!(
            (t.verdict.as_str(), t.timed_figure.as_str(), t.timed_seconds),
            ("possible", "min_trial_seconds", 3.9e-3)
        );
        assert_eq!(
            (t.max_clock_source.as_str(), t.instructions),
            ("cpufreq_max_khz", 16_000_000)
        );
        // A forged 0.4 ms trial is below it.
        r.min_trial_seconds = Some(4e-4);
        let t = timing_check(&count, &r, rel).unwrap();
        assert!(t.impossible(), "{t:?}");
        assert_eq!(t.timed_seconds, 4e-4);
        // Without a clock of the host the generous 7 GHz is assumed: 16e6/16/7e9 s.
        r.environment = Default::default();
        let t = timing_check(&count, &r, rel).unwrap();
        assert_eq!(t.max_clock_source, "assumed");
        assert_eq!(t.lower_bound_seconds, 16e6 / 16.0 / 7e9);
        assert!(!t.impossible());
        // Another library, or no count: no check.
        r.library_sha256 = Some("bb".into());
        assert!(timing_check(&count, &r, rel).is_none());
        r.library_sha256 = Some("aa".into());
        let refused = CountEvidence {
            status: "refused".into(),
            ..count.clone()
        };
        assert!(timing_check(&refused, &r, rel).is_none());
    }
}
