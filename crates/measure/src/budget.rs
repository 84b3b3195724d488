//! Where a driver process's wall time went (issue 41): the per-process time budget, from what
//! the parent saw itself — when the child was started, when each line of its result channel
//! arrived (`pqperf_ffi::untrusted::ChildOutcome::line_arrivals`), when it was reaped, and
//! how long the parent's own work around it took. The child is trusted only for which phase a
//! line ends (the first line comes after the preparation, `META warmups` after the warm-ups,
//! the last `TRIAL`/`SAMPLES` line after the trials, `STATUS` at the end); the seconds inside
//! the trials are its claims, which the kernel check bounds (`crate::verify`).
//!
//! | part | from … to … |
//! |---|---|
//! | `sandbox_s` | the parent's set-up (scratch folder, cgroup, landlock ruleset) to `exec` done |
//! | `prepare_s` | `exec` to the first result line: start-up, dlopen, keys, the verify/dec input pool, counter |
//! | `warmup_s` | first line to `META warmups` |
//! | `timed_s` | Σ reference trial seconds |
//! | `sampled_s` | Σ sampled trial seconds (the per-call samples the robust estimate uses) |
//! | `trial_other_s` | the rest up to the last trial line: canary, scheduler snapshots, reporting |
//! | `tail_s` | last trial line to `STATUS`: the canary after, the untimed memory pass |
//! | `exit_s` | `STATUS` to the reaped child (exit, address-space teardown) |
//! | `reap_s` | reaped to the outcome: draining, leftovers, scratch removal |
//! | `check_s` | the parent's kernel check |
//! | `replay_s` | the measuring loop's wait for the output check's replay (`crate::outcheck`; a replay made beside the timed process counts only what was left when it ended) |
//!
//! **The measuring CPU's path** (issue 41): the next process of the same library is started
//! beside the one being timed, off the measuring CPU, and waits at its hold gate
//! (`crate::runner::Held`); the parent moves it onto the measuring CPU at the last gate of
//! the one before. The parts are then split ([`ProcessBudget::split_beside`]): what ran
//! beside the path (a held process's set-up and preparation; the exit, reaping, check and
//! replay of a process that handed the CPU over) is summed apart ([`PhaseBudget::beside`])
//! and is in no share; the shares are of the path only, and `parent_s` (the wall time no
//! part on the path holds) includes the hand-overs between two processes.
//!
//! `prepare_s` holds the measuring loop's wait for a relayed preparation (`crate::relay`,
//! none when it was made ahead) besides the child's own preparation, once: every part is
//! time the measuring loop spent on the process (its critical path), so that a phase's
//! parts never add up to more than its wall time. The phase's *efficiency* is the seconds
//! inside timed trials, reference and sampled (both are timed calls of the operation; the
//! sampled ones carry the robust estimate), ÷ the phase's wall time; the reference trials'
//! share alone is logged beside it.
//!
//! A part the parent could not place (a process that failed before a line) stays 0 and its
//! time is in the part after the last mark it saw; lines that arrived in one read (a child
//! that buffers) leave the trials no span, and their claimed seconds are then taken from the
//! warm-up and preparation spans before them, never more than those hold. The parts always
//! add up to the process's whole time in the parent ([`ProcessBudget::total_s`]).

use serde_json::{Value, json};

/// The parts of one driver process's time in the parent (seconds), see the module doc.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessBudget {
    /// Set-up before the program's first instruction.
    pub sandbox_s: f64,
    /// Start-up, dlopen and preparation (input pool included).
    pub prepare_s: f64,
    /// The warm-up calls.
    pub warmup_s: f64,
    /// Σ reference trial seconds.
    pub timed_s: f64,
    /// Σ sampled trial seconds.
    pub sampled_s: f64,
    /// Between and around the trials (canary before, snapshots, reporting).
    pub trial_other_s: f64,
    /// Canary after and the memory pass.
    pub tail_s: f64,
    /// Exit and teardown of the child.
    pub exit_s: f64,
    /// The parent's draining and clean-up after the child ended.
    pub reap_s: f64,
    /// The parent's kernel check.
    pub check_s: f64,
    /// The output check's replay.
    pub replay_s: f64,
}

/// Names and values of the parts, in order (the JSON keys).
const PARTS: [&str; 11] = [
    "sandbox_s",
    "prepare_s",
    "warmup_s",
    "timed_s",
    "sampled_s",
    "trial_other_s",
    "tail_s",
    "exit_s",
    "reap_s",
    "check_s",
    "replay_s",
];

impl ProcessBudget {
    /// The budget of a child from the parent's marks: `spawned_s` (exec done), the result
    /// lines with their arrival seconds, `wall_s` (reaped) and `outcome_s` (the parent had
    /// the outcome); `timed_s`, `sampled_s` are the trials' seconds.
    pub fn from_marks(
        spawned_s: f64,
        lines: &[String],
        arrivals: &[f64],
        wall_s: f64,
        outcome_s: f64,
        timed_s: f64,
        sampled_s: f64,
    ) -> ProcessBudget {
        ProcessBudget::from_marks_released(
            spawned_s, lines, arrivals, None, wall_s, outcome_s, timed_s, sampled_s,
        )
    }

    /// [`ProcessBudget::from_marks`] of a process that may have been held (issue 41):
    /// `released_s`, when it is known, is when the parent let it go from the hold gate (the
    /// warm-ups start there; everything before it is start-up, preparation and the wait at
    /// the gate, `prepare_s`).
    #[allow(clippy::too_many_arguments)]
    pub fn from_marks_released(
        spawned_s: f64,
        lines: &[String],
        arrivals: &[f64],
        released_s: Option<f64>,
        wall_s: f64,
        outcome_s: f64,
        timed_s: f64,
        sampled_s: f64,
    ) -> ProcessBudget {
        let at = |pred: &dyn Fn(&str) -> bool, last: bool| -> Option<f64> {
            let mut it = lines.iter().zip(arrivals).filter(|(l, _)| pred(l));
            let hit = if last { it.last() } else { it.next() };
            hit.map(|(_, t)| *t)
        };
        let first = released_s.or(arrivals.first().copied());
        let warm = at(&|l| l.starts_with("META\twarmups\t"), false);
        let trials_end = at(
            &|l| l.starts_with("TRIAL\t") || l.starts_with("SAMPLES\t"),
            true,
        );
        let status = at(&|l| l.starts_with("STATUS\t"), false);
        // Each mark no earlier than the one before it and no later than the reaping.
        let mut t = spawned_s.clamp(0.0, wall_s.max(0.0));
        let mut step = |m: Option<f64>| -> f64 {
            match m {
                Some(m) => {
                    let m = m.clamp(t, wall_s.max(t));
                    let d = m - t;
                    t = m;
                    d
                }
                None => 0.0,
            }
        };
        // A missing mark: the time up to the reaping goes to the part after the last mark
        // seen (a child that died while preparing spent it preparing).
        let marks = [first, warm, trials_end, status];
        let after_last = marks.iter().rposition(Option::is_some).map_or(0, |k| k + 1);
        let mut part = [0.0f64; 4];
        for (i, m) in marks.iter().enumerate() {
            part[i] = match m {
                Some(_) => step(*m),
                None if i == after_last => step(Some(wall_s)),
                None => 0.0,
            };
        }
        let exit_s = step(Some(wall_s));
        // Lines that arrived in one read (a child that buffers its output) leave the trials
        // no span of their own: their claimed seconds are taken from the parts before them,
        // never more than those hold.
        let claimed = timed_s.max(0.0) + sampled_s.max(0.0);
        let mut short = (claimed - part[2]).max(0.0);
        for i in [1, 0] {
            let take = short.min(part[i]);
            part[i] -= take;
            part[2] += take;
            short -= take;
        }
        let [prepare_s, warmup_s, trials_s, tail_s] = part;
        let timed_s = timed_s.max(0.0).min(trials_s);
        let sampled_s = sampled_s.max(0.0).min(trials_s - timed_s);
        ProcessBudget {
            sandbox_s: spawned_s.clamp(0.0, wall_s.max(0.0)),
            prepare_s,
            warmup_s,
            timed_s,
            sampled_s,
            trial_other_s: trials_s - timed_s - sampled_s,
            tail_s,
            exit_s,
            reap_s: (outcome_s - wall_s).max(0.0),
            check_s: 0.0,
            replay_s: 0.0,
        }
    }

    fn values(&self) -> [f64; 11] {
        [
            self.sandbox_s,
            self.prepare_s,
            self.warmup_s,
            self.timed_s,
            self.sampled_s,
            self.trial_other_s,
            self.tail_s,
            self.exit_s,
            self.reap_s,
            self.check_s,
            self.replay_s,
        ]
    }

    fn values_mut(&mut self) -> [&mut f64; 11] {
        [
            &mut self.sandbox_s,
            &mut self.prepare_s,
            &mut self.warmup_s,
            &mut self.timed_s,
            &mut self.sampled_s,
            &mut self.trial_other_s,
            &mut self.tail_s,
            &mut self.exit_s,
            &mut self.reap_s,
            &mut self.check_s,
            &mut self.replay_s,
        ]
    }

    /// Moves the parts that ran beside the measuring CPU's path out of `self` into the
    /// returned budget. `held_on_path_s`: the process was held (started beside the one being
    /// timed, released at its hold gate), and of its set-up and preparation only this many
    /// seconds were on the path (the measuring CPU was free, waiting for it); the rest ran
    /// beside, the set-up first. `handed_over`: the exit, reaping, check and replay (the
    /// next process had the measuring CPU by then).
    pub fn split_beside(
        &mut self,
        held_on_path_s: Option<f64>,
        handed_over: bool,
    ) -> ProcessBudget {
        let mut beside = ProcessBudget::default();
        if let Some(keep) = held_on_path_s {
            let mut off = (self.sandbox_s + self.prepare_s - keep.max(0.0)).max(0.0);
            for (from, to) in [
                (&mut self.sandbox_s, &mut beside.sandbox_s),
                (&mut self.prepare_s, &mut beside.prepare_s),
            ] {
                let take = off.min(*from);
                *from -= take;
                *to += take;
                off -= take;
            }
        }
        if handed_over {
            beside.exit_s = std::mem::take(&mut self.exit_s);
            beside.reap_s = std::mem::take(&mut self.reap_s);
            beside.check_s = std::mem::take(&mut self.check_s);
            beside.replay_s = std::mem::take(&mut self.replay_s);
        }
        beside
    }

    /// The process's whole time in the parent: the sum of the parts.
    pub fn total_s(&self) -> f64 {
        self.values().iter().sum()
    }

    /// Adds `o` part by part.
    pub fn add(&mut self, o: &ProcessBudget) {
        for (a, b) in self.values_mut().into_iter().zip(o.values()) {
            *a += b;
        }
    }

    /// The parts as a JSON object (seconds, µs precision), as a process entry keeps them
    /// (`time_budget`).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (k, v) in PARTS.iter().zip(self.values()) {
            m.insert(k.to_string(), json!(round6(v)));
        }
        Value::Object(m)
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A measure phase's budget: the processes' parts summed, and the phase's wall time, whose
/// rest (`parent_s`) is the parent's own work between processes (decisions, bootstrap,
/// records, progress).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseBudget {
    /// Σ of the driver processes' parts on the measuring CPU's path (every attempt, the output
    /// checks' replays included).
    pub processes: ProcessBudget,
    /// Σ of the parts that ran beside the path ([`ProcessBudget::split_beside`]): a held
    /// process's start and preparation while the one before it was timed, a process's exit
    /// and the parent's checks of it while the next one was timed. Never in a share.
    pub beside: ProcessBudget,
    /// Driver processes counted.
    pub count: u64,
    /// Of them, started beside the process before and held at their hold gate.
    pub held: u64,
}

impl PhaseBudget {
    /// Counts one process.
    pub fn add(&mut self, b: &ProcessBudget) {
        self.processes.add(b);
        self.count += 1;
    }

    /// Counts one process with its parts beside the path (`held`: it was started held).
    pub fn add_split(&mut self, b: &ProcessBudget, beside: &ProcessBudget, held: bool) {
        self.add(b);
        self.beside.add(beside);
        self.held += u64::from(held);
    }

    /// Σ seconds inside timed trials (reference and sampled) ÷ `wall_s` (0 without a wall
    /// time).
    pub fn efficiency(&self, wall_s: f64) -> f64 {
        if wall_s > 0.0 {
            (self.processes.timed_s + self.processes.sampled_s) / wall_s
        } else {
            0.0
        }
    }

    /// Σ reference trial seconds ÷ `wall_s` (0 without a wall time).
    pub fn reference_share(&self, wall_s: f64) -> f64 {
        if wall_s > 0.0 {
            self.processes.timed_s / wall_s
        } else {
            0.0
        }
    }

    /// The phase's wall time not spent in a driver process or the parent's checks of one.
    pub fn parent_s(&self, wall_s: f64) -> f64 {
        (wall_s - self.processes.total_s()).max(0.0)
    }

    /// `pqperf.measure_budget` of campaign.json: the phase's wall time, the efficiency, the
    /// parts summed over its processes and each part's share of the wall time.
    pub fn to_json(&self, wall_s: f64) -> Value {
        let mut shares = serde_json::Map::new();
        let share = |v: f64| {
            if wall_s > 0.0 {
                (v / wall_s * 1e4).round() / 1e4
            } else {
                0.0
            }
        };
        for (k, v) in PARTS.iter().zip(self.processes.values()) {
            shares.insert(k.to_string(), json!(share(v)));
        }
        shares.insert("parent_s".into(), json!(share(self.parent_s(wall_s))));
        let mut parts = match self.processes.to_json() {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        parts.insert("parent_s".into(), json!(round6(self.parent_s(wall_s))));
        json!({
            "phase_wall_s": round6(wall_s),
            "processes": self.count,
            "held_processes": self.held,
            "beside_seconds": self.processes_beside_json(),
            "efficiency": (self.efficiency(wall_s) * 1e4).round() / 1e4,
            "efficiency_of": "seconds inside timed trials (reference and sampled) / phase wall",
            "reference_share": (self.reference_share(wall_s) * 1e4).round() / 1e4,
            "seconds": parts,
            "shares": shares,
        })
    }

    fn processes_beside_json(&self) -> Value {
        self.beside.to_json()
    }

    /// One log line: the efficiency and every part's share of the phase's wall time, largest
    /// first (the measuring CPU's path), then the work done beside the path.
    pub fn log_line(&self, wall_s: f64) -> String {
        let mut parts: Vec<(&str, f64)> = PARTS
            .iter()
            .copied()
            .zip(self.processes.values())
            .chain([("parent_s", self.parent_s(wall_s))])
            .collect();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        let shown: Vec<String> = parts
            .iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(k, v)| {
                format!(
                    "{} {:.1} s ({:.1} %)",
                    k.trim_end_matches("_s"),
                    v,
                    if wall_s > 0.0 {
                        100.0 * v / wall_s
                    } else {
                        0.0
                    }
                )
            })
            .collect();
        let mut beside: Vec<(&str, f64)> = PARTS
            .iter()
            .copied()
            .zip(self.beside.values())
            .filter(|(_, v)| *v > 0.0)
            .collect();
        beside.sort_by(|a, b| b.1.total_cmp(&a.1));
        let beside = if beside.is_empty() {
            String::new()
        } else {
            format!(
                "; beside the path ({} held process(es) started while the one before was timed): {}",
                self.held,
                beside
                    .iter()
                    .map(|(k, v)| format!("{} {v:.1} s", k.trim_end_matches("_s")))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "measure budget: {} driver process(es), phase wall {:.1} s, efficiency {:.1} % (Σ timed trials, reference + sampled, ÷ phase wall; reference trials alone {:.1} %); {}{beside}",
            self.count,
            wall_s,
            100.0 * self.efficiency(wall_s),
            100.0 * self.reference_share(wall_s),
            shown.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_parts_follow_the_marks_and_add_up() {
        let l = lines(&[
            "META\tid\tx",
            "META\twarmups\t3",
            "TRIAL\t1\t100\t0.200000000\t5",
            "PQPERF\tsample_sched\ttrial=1",
            "SAMPLES\t1\t1 2 3",
            "PQPERF\tcanary\tbefore=1 after=1",
            "STATUS\tcomplete",
        ]);
        let t = [0.5, 0.6, 0.85, 0.95, 0.95, 1.0, 1.1];
        let b = ProcessBudget::from_marks(0.1, &l, &t, 1.2, 1.25, 0.2, 0.08);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(b.sandbox_s, 0.1));
        assert!(near(b.prepare_s, 0.4));
        assert!(near(b.warmup_s, 0.1));
        assert!(near(b.timed_s, 0.2));
        assert!(near(b.sampled_s, 0.08));
        assert!(near(b.trial_other_s, 0.35 - 0.28));
        assert!(near(b.tail_s, 0.15));
        assert!(near(b.exit_s, 0.1));
        assert!(near(b.reap_s, 0.05));
        assert!(near(b.total_s(), 1.25));
        let mut ph = PhaseBudget::default();
        ph.add(&b);
        ph.add(&b);
        assert!(near(ph.efficiency(5.0), 0.112));
        assert!(near(ph.reference_share(5.0), 0.08));
        assert!(near(ph.parent_s(5.0), 2.5));
        let j = ph.to_json(5.0);
        assert_eq!(j["processes"], 2);
        assert_eq!(j["seconds"]["prepare_s"], 0.8);
        assert_eq!(j["shares"]["parent_s"], 0.5);
        assert!(
            ph.log_line(5.0).contains("efficiency 11.2 %"),
            "{}",
            ph.log_line(5.0)
        );
        assert!(ph.log_line(5.0).contains("reference trials alone 8.0 %"));
    }

    #[test]
    fn a_held_process_keeps_on_the_path_only_what_the_cpu_waited_for() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let l = lines(&[
            "META\tid\tx",
            "PQPERF\thold",
            "META\twarmups\t3",
            "TRIAL\t1\t100\t0.200000000\t5",
            "STATUS\tcomplete",
        ]);
        // Started at 0, exec done at 0.02, ready at 0.05, released at 0.30 (it waited for
        // the process before), reaped at 0.62.
        let t = [0.04, 0.05, 0.35, 0.55, 0.60];
        let mut b =
            ProcessBudget::from_marks_released(0.02, &l, &t, Some(0.30), 0.62, 0.62, 0.2, 0.0);
        assert!(near(b.prepare_s, 0.28) && near(b.warmup_s, 0.05), "{b:?}");
        let whole = b.total_s();
        // The measuring CPU was free for 0.01 s of it: only that stays on the path.
        let beside = b.split_beside(Some(0.01), true);
        assert!(near(b.sandbox_s + b.prepare_s, 0.01), "{b:?}");
        assert!(
            near(beside.sandbox_s, 0.02) && near(beside.prepare_s, 0.27),
            "{beside:?}"
        );
        assert!(near(beside.exit_s, 0.02) && b.exit_s == 0.0);
        assert!(near(b.total_s() + beside.total_s(), whole));
        let mut ph = PhaseBudget::default();
        ph.add_split(&b, &beside, true);
        assert_eq!(ph.held, 1);
        // The shares are of the path only; the log says what ran beside it.
        assert!(near(ph.parent_s(1.0), 1.0 - b.total_s()));
        let line = ph.log_line(1.0);
        assert!(
            line.contains("beside the path (1 held process(es)"),
            "{line}"
        );
        assert_eq!(ph.to_json(1.0)["held_processes"], 1);
        // Not held, not handed over: nothing moves.
        let mut c = ProcessBudget::from_marks(0.02, &l, &t, 0.62, 0.62, 0.2, 0.0);
        let d = c;
        assert_eq!(c.split_beside(None, false), ProcessBudget::default());
        assert_eq!(c, d);
    }

    #[test]
    fn a_child_that_failed_early_or_lied_keeps_the_sum() {
        // No line at all: everything after exec is preparation up to the reaping.
        let b = ProcessBudget::from_marks(0.5, &[], &[], 2.0, 2.0, 0.0, 0.0);
        assert_eq!((b.prepare_s, b.exit_s), (1.5, 0.0));
        assert!((b.total_s() - 2.0).abs() < 1e-9);
        // Claimed trial seconds beyond what the parent saw are cut to it (the time before the
        // trial line included).
        let l = lines(&[
            "META\twarmups\t0",
            "TRIAL\t1\t1\t9.0\t1",
            "STATUS\tcomplete",
        ]);
        let b = ProcessBudget::from_marks(0.0, &l, &[0.1, 0.2, 0.3], 0.4, 0.4, 9.0, 5.0);
        assert!(
            (b.timed_s - 0.2).abs() < 1e-9 && b.sampled_s == 0.0,
            "{b:?}"
        );
        assert_eq!((b.prepare_s, b.warmup_s), (0.0, 0.0));
        assert!((b.total_s() - 0.4).abs() < 1e-9);
        // Every line in one read: the trials' seconds come out of the preparation's span.
        let l = lines(&[
            "META\twarmups\t0",
            "TRIAL\t1\t1\t0.1\t1",
            "STATUS\tcomplete",
        ]);
        let b = ProcessBudget::from_marks(0.0, &l, &[0.3, 0.3, 0.3], 0.4, 0.4, 0.1, 0.05);
        assert!((b.timed_s - 0.1).abs() < 1e-9 && (b.sampled_s - 0.05).abs() < 1e-9);
        assert!((b.prepare_s - 0.15).abs() < 1e-9, "{b:?}");
        assert!((b.total_s() - 0.4).abs() < 1e-9);
    }
}
