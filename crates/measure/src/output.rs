//! What a timing-driver process said on its private result channel: the META / TRIAL /
//! SAMPLES / STATUS / `PQPERF …` lines parsed into [`Parsed`] (claims of the child, checked
//! by [`crate::verify`]), and the memory figures of its untimed pass ([`MemFigures`]).

use pqperf_model::fields::Fields;
use pqperf_model::limits;
use pqperf_model::record::{Trial, TrialSched};
use serde_json::Value;

/// Per-operation memory from the driver's untimed memory pass (`pqperf_driver` `mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemFigures {
    /// Stack bytes from the driver's calling frame to the deepest byte the call wrote.
    pub stack_bytes: u64,
    /// Stack bytes painted.
    pub stack_region_bytes: u64,
    /// The call reached the bottom of the painted region (its use is at least the region).
    pub stack_overflow: bool,
    /// Peak of live heap bytes the call allocated (requested sizes), with the interposer.
    pub heap_peak_bytes: Option<u64>,
    /// Allocations the call made, with the interposer.
    pub heap_allocations: Option<u64>,
    /// Allocations the interposer could not follow (the peak is then an upper bound).
    pub heap_untracked: Option<u64>,
}

impl MemFigures {
    /// The figures as stored in a calibration file (`pqperf_mem`).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "stack_bytes": self.stack_bytes,
            "stack_region_bytes": self.stack_region_bytes,
            "stack_overflow": self.stack_overflow,
            "heap_peak_bytes": self.heap_peak_bytes,
            "heap_allocations": self.heap_allocations,
            "heap_untracked": self.heap_untracked,
        })
    }

    /// Reads what [`MemFigures::to_json`] wrote.
    pub fn from_json(v: &Value) -> Option<MemFigures> {
        Some(MemFigures {
            stack_bytes: v["stack_bytes"].as_u64()?,
            stack_region_bytes: v["stack_region_bytes"].as_u64()?,
            stack_overflow: v["stack_overflow"].as_bool()?,
            heap_peak_bytes: v["heap_peak_bytes"].as_u64(),
            heap_allocations: v["heap_allocations"].as_u64(),
            heap_untracked: v["heap_untracked"].as_u64(),
        })
    }

    /// The larger of two passes (several driver processes per record), field by field.
    pub fn max(self, o: MemFigures) -> MemFigures {
        let m = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        MemFigures {
            stack_bytes: self.stack_bytes.max(o.stack_bytes),
            stack_region_bytes: self.stack_region_bytes.max(o.stack_region_bytes),
            stack_overflow: self.stack_overflow || o.stack_overflow,
            heap_peak_bytes: m(self.heap_peak_bytes, o.heap_peak_bytes),
            heap_allocations: m(self.heap_allocations, o.heap_allocations),
            heap_untracked: m(self.heap_untracked, o.heap_untracked),
        }
    }
}

/// What the driver printed.
#[derive(Debug, Default, Clone)]
pub struct Parsed {
    /// META key → value (strings), in order.
    pub meta: Fields,
    /// TRIAL lines.
    pub trials: Vec<Trial>,
    /// STATUS value.
    pub status: Option<String>,
    /// SAMPLES values, concatenated.
    pub samples: Vec<u64>,
    /// SAMPLES values, one vector per line.
    pub sample_trials: Vec<Vec<u64>>,
    /// `PQPERF trial_sched` / `sample_sched` lines.
    pub sched: Vec<TrialSched>,
    /// The `run_ns` (on-CPU nanoseconds) of each `sched` line, in the same order.
    pub sched_run_ns: Vec<Option<u64>>,
    /// PQPERF counter.
    pub counter: Option<String>,
    /// `PQPERF canary before=… after=…`: the canary figures (ticks), a claim of the child.
    pub canary: Option<(u64, u64)>,
    /// PQPERF mem_… lines (complete stack figures required).
    pub mem: Option<MemFigures>,
    /// Why sampled trials were refused (a SAMPLES line over
    /// `pqperf_model::limits::MAX_SAMPLES_PER_TRIAL`, which the driver never writes): such a
    /// process is never complete.
    pub samples_refused: Option<String>,
    /// `PQPERF output_digest`: the digest of the timed calls' outputs (a claim, compared with
    /// a replay by `crate::outcheck`).
    pub output_digest: Option<String>,
}

/// Parses driver stdout lines (tab-separated).
pub fn parse_output(lines: &[String]) -> Parsed {
    let mut p = Parsed::default();
    let mut mem = std::collections::HashMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        match f.as_slice() {
            ["META", k, v] => p.meta.insert(k.to_string(), v.to_string()),
            ["TRIAL", _, m, s, c] => {
                if let (Ok(m), Ok(s), Ok(c)) = (m.parse(), s.parse(), c.parse()) {
                    p.trials.push(Trial {
                        measurements: m,
                        seconds: s,
                        cycles: Some(c),
                        ..Default::default()
                    });
                }
            }
            ["STATUS", s] => p.status = Some(s.to_string()),
            ["SAMPLES", _, xs] => {
                let v: Vec<u64> = xs
                    .split(' ')
                    .take(limits::MAX_SAMPLES_PER_TRIAL + 1)
                    .filter_map(|x| x.parse::<u64>().ok())
                    .collect();
                if v.len() > limits::MAX_SAMPLES_PER_TRIAL {
                    p.samples_refused = Some(format!(
                        "a SAMPLES line with more than the {} samples a trial may have (refused)",
                        limits::MAX_SAMPLES_PER_TRIAL
                    ));
                    continue;
                }
                p.samples.extend_from_slice(&v);
                p.sample_trials.push(v);
            }
            ["PQPERF", "counter", v] => p.counter = Some(v.to_string()),
            ["PQPERF", "output_digest", v] => p.output_digest = Some(v.to_string()),
            ["PQPERF", "canary", v] => {
                if let (Some(b), Some(a)) = (sched_field(v, "before"), sched_field(v, "after")) {
                    p.canary = Some((b, a));
                }
            }
            ["PQPERF", key @ ("trial_sched" | "sample_sched"), v] => {
                if let Some(t) = parse_sched(key, v) {
                    p.sched.push(t);
                    p.sched_run_ns.push(sched_field(v, "run_ns"));
                }
            }
            ["PQPERF", k, v] if k.starts_with("mem_") => {
                if let Ok(n) = v.parse::<u64>() {
                    mem.insert(k.to_string(), n);
                }
            }
            _ => {}
        }
    }
    let get = |k: &str| mem.get(k).copied();
    if let (Some(s), Some(r), Some(o)) = (
        get("mem_stack_bytes"),
        get("mem_stack_region_bytes"),
        get("mem_stack_overflow"),
    ) {
        p.mem = Some(MemFigures {
            stack_bytes: s,
            stack_region_bytes: r,
            stack_overflow: o != 0,
            heap_peak_bytes: get("mem_heap_peak_bytes"),
            heap_allocations: get("mem_heap_allocations"),
            heap_untracked: get("mem_heap_untracked"),
        });
    }
    p
}

/// The number `key=` of a scheduler line (`-` or absent: None).
fn sched_field(v: &str, key: &str) -> Option<u64> {
    v.split(' ')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .and_then(|x| x.parse().ok())
}

/// One `key=value …` scheduler line (`-` = not available).
fn parse_sched(key: &str, v: &str) -> Option<TrialSched> {
    let mut m = std::collections::HashMap::new();
    for kv in v.split(' ') {
        let (k, x) = kv.split_once('=')?;
        m.insert(k, x);
    }
    let opt = |k: &str| m.get(k).and_then(|x| x.parse::<u64>().ok());
    let req = |k: &str| opt(k);
    let ns = req("ns")?;
    let count = req("count")?;
    let runq = opt("runq_ns");
    let seconds = ns as f64 / 1e9;
    Some(TrialSched {
        kind: if key == "trial_sched" {
            "reference"
        } else {
            "sampled"
        }
        .to_string(),
        trial: req("trial")?,
        calls: req("calls")?,
        seconds,
        count,
        counter_per_ns: (ns > 0).then(|| count as f64 / ns as f64),
        nivcsw: req("nivcsw")?,
        nvcsw: opt("nvcsw").unwrap_or(0),
        runq_ns: runq,
        minflt: opt("minflt").unwrap_or(0),
        majflt: opt("majflt").unwrap_or(0),
        migrations: opt("migrations"),
        cpu_changed: opt("cpu_changed").map(|c| c != 0),
        preempted_share: runq.filter(|_| ns > 0).map(|r| r as f64 / ns as f64),
        disturbed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_reference_lines() {
        let lines: Vec<String> = [
            "META\tid\tsign-02",
            "META\tbuild_flags\t-O2 -fPIC ",
            "PQPERF\tcounter\ttsc",
            "TRIAL\t1\t20\t0.001000000\t2100000",
            "PQPERF\ttrial_sched\ttrial=1 calls=20 ns=1000000 count=2100000 nivcsw=3 nvcsw=0 runq_ns=250000 run_ns=750000 minflt=0 majflt=0 migrations=- cpu_changed=0",
            "SAMPLES\t1\t5 6 7",
            "PQPERF\tcanary\tbefore=1000 after=1100 reps=5 steps=20000",
            "PQPERF\tmem_stack_bytes\t100480",
            "PQPERF\tmem_stack_region_bytes\t1048576",
            "PQPERF\tmem_stack_overflow\t0",
            "PQPERF\tmem_heap_peak_bytes\t1048576",
            "PQPERF\tmem_heap_allocations\t1",
            "STATUS\tcomplete",
            "garbage",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let p = parse_output(&lines);
        assert_eq!(p.meta.str("id"), Some("sign-02"));
        assert_eq!(p.meta.str("build_flags"), Some("-O2 -fPIC "));
        assert_eq!(p.trials.len(), 1);
        assert_eq!(p.trials[0].measurements, 20);
        assert_eq!(p.trials[0].cycles, Some(2_100_000));
        assert_eq!(p.samples, vec![5, 6, 7]);
        assert_eq!(p.sample_trials, vec![vec![5, 6, 7]]);
        let t = &p.sched[0];
        assert_eq!(
            (t.kind.as_str(), t.trial, t.calls, t.nivcsw),
            ("reference", 1, 20, 3)
        );
        assert_eq!(t.preempted_share, Some(0.25));
        assert_eq!((t.migrations, t.cpu_changed), (None, Some(false)));
        assert_eq!(p.status.as_deref(), Some("complete"));
        assert_eq!(p.counter.as_deref(), Some("tsc"));
        assert_eq!(p.canary, Some((1000, 1100)));
        assert_eq!(pqperf_model::record::runq_share_of(&p.sched), Some(0.25));
        let m = p.mem.unwrap();
        assert_eq!((m.stack_bytes, m.stack_overflow), (100480, false));
        assert_eq!(m.heap_peak_bytes, Some(1048576));
        assert_eq!(m.heap_allocations, Some(1));
        assert_eq!(m.heap_untracked, None);
    }
}
