//! Orchestrator side of a driver run (method §4.9): spawn the lean `pqperf-driver …` contained, with a
//! hard timeout, kill its process group on exit or hang, parse the META/TRIAL/STATUS lines of
//! its private result channel ([`crate::output`]), check a complete process against the
//! kernel ([`crate::verify`], with the CPU readings the parent took at the driver's gates
//! while it ran, [`spawn`]), and turn a
//! crash or a hang into a process entry with a status instead of an error.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_model::envevidence::ProcessEnv;
use pqperf_model::record::{Process, TrialSched};
use serde_json::Value;

use crate::budget::ProcessBudget;
use crate::driver::DriverArgs;
use crate::output::{MemFigures, parse_output};

/// File name of the lean driver executable (the `pqperf-driver` crate's binary).
pub const DRIVER_BIN: &str = "pqperf-driver";
/// Environment variable naming the driver executable explicitly (overrides the lookup).
pub const DRIVER_ENV: &str = "PQPERF_DRIVER";

/// How to start the driver child.
#[derive(Debug, Clone)]
pub struct DriverExe {
    /// The lean driver executable (normally [`DriverExe::locate`]).
    pub exe: PathBuf,
    /// Working directory of the child (the run directory; library paths are relative to it).
    pub cwd: PathBuf,
}

impl DriverExe {
    /// The lean driver found by [`DriverExe::locate`], working in `cwd`.
    pub fn current(cwd: &Path) -> std::io::Result<DriverExe> {
        Ok(DriverExe {
            exe: DriverExe::locate()?,
            cwd: cwd.to_path_buf(),
        })
    }

    /// Where the lean driver executable is: `$PQPERF_DRIVER` if set, else `pqperf-driver` next
    /// to the running executable, else (a test or benchmark binary in `target/<profile>/deps/`)
    /// next to that directory. The error names the path that was expected.
    pub fn locate() -> std::io::Result<PathBuf> {
        let exe = std::env::current_exe()?;
        DriverExe::locate_from(&exe, std::env::var_os(DRIVER_ENV).map(PathBuf::from))
    }

    /// [`DriverExe::locate`] for a given running executable and `$PQPERF_DRIVER` value.
    pub fn locate_from(exe: &Path, env: Option<PathBuf>) -> std::io::Result<PathBuf> {
        let missing = |p: &Path, how: &str| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "the lean driver executable is missing: expected {} ({how}); build it with `cargo build --release -p pqperf-driver` (or the whole workspace) or set {DRIVER_ENV}",
                    p.display()
                ),
            )
        };
        if let Some(p) = env.filter(|p| !p.as_os_str().is_empty()) {
            return if p.is_file() {
                Ok(p)
            } else {
                Err(missing(&p, &format!("from {DRIVER_ENV}")))
            };
        }
        let dir = exe.parent().unwrap_or(Path::new("."));
        let sibling = dir.join(DRIVER_BIN);
        if sibling.is_file() {
            return Ok(sibling);
        }
        if dir.file_name().is_some_and(|n| n == "deps")
            && let Some(up) = dir.parent()
        {
            let p = up.join(DRIVER_BIN);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(missing(
                    &p,
                    "next to the deps/ directory of this test binary",
                ))
            };
        }
        Err(missing(&sibling, "next to the running executable"))
    }
}

/// One driver run: the reference process entry plus the per-call samples (ticks).
#[derive(Debug, Clone)]
pub struct Run {
    /// Process entry for the record (`status`, `exit_code`, `meta`, `trials`, …).
    pub process: Process,
    /// Per-call tick deltas of all sampled trials, in order.
    pub samples: Vec<u64>,
    /// Per-call tick deltas, one vector per sampled trial.
    pub sample_trials: Vec<Vec<u64>>,
    /// Scheduler facts of every trial (reference and sampled), `disturbed` still false.
    pub sched: Vec<TrialSched>,
    /// The driver's counter (`cycles`, `tsc`, `cntvct_el0`), if it said.
    pub counter: Option<String>,
    /// Process wall seconds (also in `process.wall_s`).
    pub wall_s: f64,
    /// Σ trial seconds.
    pub timed_s: f64,
    /// The untimed memory pass (`PQPERF mem_…` lines), when the driver made one.
    pub mem: Option<MemFigures>,
    /// The machine's state during the process: the driver's canary figures, the steal and
    /// load the parent read around it, the trials' run-queue share.
    pub env: ProcessEnv,
    /// The driver's `PQPERF output_digest` (a claim, `crate::outcheck`).
    pub output_digest: Option<String>,
    /// Where the process's time in the parent went on the measuring CPU's path
    /// ([`crate::budget`]).
    pub budget: ProcessBudget,
    /// Its parts that ran beside the path ([`ProcessBudget::split_beside`]).
    pub beside: ProcessBudget,
    /// It was started beside the process before and held at its hold gate ([`Held`]).
    pub held: bool,
    /// It gave the measuring CPU up at its last gate to another process.
    pub handed_over: bool,
}

impl Run {
    /// True if the driver printed `STATUS complete` and exited 0.
    pub fn complete(&self) -> bool {
        self.process.status == "complete"
    }
}

/// Most gates the parent answers in one driver process (a driver has at most 2 × 16
/// intervals + 2).
pub const MAX_READINGS: usize = 64;

/// Relayed inputs' loadings over their allowance that nothing explains: the window they
/// load (1-based) and the problem (`crate::verify::isolate`).
type LoadExcess = Vec<(usize, String)>;

/// Starts one driver process, contained, conducts its gates (`pqperf_driver::Gate`: at every
/// `PQPERF wait` line the parent reads the child's exact CPU time, then says `go`) and waits
/// for it (no parsing). With relayed inputs ([`crate::relay`]) it sends the setup payload
/// first and each window's inputs with the `go` that opens it; the window's reading is then
/// taken at the driver's `PQPERF loaded` line, after the loading, whose CPU time is bounded
/// (the problems are returned).
pub(crate) fn spawn(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    relay: Option<&crate::relay::Plan>,
    turn: &mut Turn,
) -> (
    untrusted::ChildOutcome,
    Vec<crate::verify::Reading>,
    Vec<String>,
    LoadExcess,
) {
    let spec = ChildSpec {
        program: exe.exe.clone(),
        args: args.to_argv(),
        cwd: exe.cwd.clone(),
        timeout,
        readable: vec![exe.cwd.join(&args.lib)],
        // A held child starts on the parent's CPUs (never the measuring one) and is moved at
        // its hold gate; any other is pinned before `exec`.
        cpu: if turn.held { None } else { args.cpu },
        ..Default::default()
    };
    let mut readings = Vec::new();
    let mut load_bad = Vec::new();
    let mut load_excess = Vec::new();
    if !turn.held && turn.ticket.is_none() {
        // Pinned before exec: its turn on the measuring CPU first (`run_turn` waited for it
        // already).
        let _ = turn.wait_turn();
    }
    let t0 = std::time::Instant::now();
    // The measuring CPU's softirq count, read with the CPU time (crate::verify).
    let mut irq_reader = args.cpu.map(pqperf_ffi::procinfo::IrqReader::new);
    turn.t0 = Some(t0);
    let out = untrusted::run_conducted(&spec, &mut |s| {
        if let Some(r) = relay
            && !s.send_payload("setup", &r.setup)
        {
            return;
        }
        // The gate whose window's inputs are being loaded: (window, CPU before, bytes).
        let mut loading: Option<(usize, u64, usize)> = None;
        // The softirq and hard interrupt counts at that gate's `wait`.
        let mut closing_irq = None;
        let mut closing_hard = None;
        // The reading at that gate's `wait`, where the window before the loading ended.
        let mut closing: Option<(u64, Vec<pqperf_ffi::procinfo::TaskSched>)> = None;
        let mut gate = 0usize;
        let mut status_seen = false;
        let mut slow_seen = false;
        while let Some(l) = s.next_line() {
            let wait = l.starts_with("PQPERF\twait\t");
            let loaded = l.starts_with("PQPERF\tloaded\t");
            status_seen |= l.starts_with("STATUS\t");
            if let Some(limit) = turn.stop_slow_s
                && first_trial_seconds(&l).is_some_and(|t| t >= limit)
            {
                slow_seen = true;
            }
            if wait && slow_seen && !status_seen {
                // A slow first call: the other trials would cost more than the process is
                // for (`run_calibration`); the driver ends as a failure.
                let _ = s.send("end");
                break;
            }
            if l == "PQPERF\thold" {
                if !turn.at_hold(s, gate == 0 && readings.is_empty() && loading.is_none()) {
                    break;
                }
                continue;
            }
            if wait && turn.held && turn.released_s.is_none() {
                turn.problem =
                    Some("the held driver passed its hold gate without stopping there".to_string());
                break;
            }
            if !wait && !loaded {
                continue;
            }
            if readings.len() >= MAX_READINGS {
                break;
            }
            let r = s.cpu();
            // The hard interrupts too (`/proc/interrupts`, ~50 µs a read) at the gates around
            // sampled windows, for the headline floor (crate::verify::headline_floor).
            let around_sampled = args.samples && readings.len() >= args.trials as usize;
            let (irq, hard) = match irq_reader.as_mut() {
                Some(x) if around_sampled => match x.read() {
                    Some(c) => (Some(c.soft), Some(c.hard)),
                    None => (x.softirqs(), None),
                },
                Some(x) => (x.softirqs(), None),
                None => (None, None),
            };
            let mut interrupted = None;
            if loaded {
                let Some((w, before, bytes)) = loading.take() else {
                    load_bad.push("the driver said `loaded` without relayed inputs".into());
                    break;
                };
                let digested = relay.map_or(0, |p| p.digested_before(w));
                let spent = r.cpu_ns.saturating_sub(before) as f64 / 1e9;
                let allowed = crate::relay::load_allowance_s(bytes, digested);
                if spent > allowed {
                    let msg = format!(
                        "gate {gate}: loading window {}'s relayed inputs ({bytes} bytes) took {spent:.6} s of CPU time ({allowed:.6} s allowed): work on the inputs before their window",
                        w + 1
                    );
                    let irq = crate::verify::softirqs_between(closing_irq, irq);
                    match crate::verify::explained(&msg, spent - allowed, irq) {
                        Some(e) => interrupted = Some(e),
                        None => {
                            load_excess.push((w + 1, msg.clone()));
                            load_bad.push(msg);
                        }
                    }
                }
            }
            if wait && let Some(w) = relay.and_then(|p| p.windows.get(gate)) {
                // The next window's inputs, relayed only now that its CPU time was read.
                loading = Some((gate, r.cpu_ns, w.payload.len()));
                closing = Some((r.cpu_ns, r.tasks.clone()));
                closing_irq = irq;
                closing_hard = hard;
                gate += 1;
                if !s.send_payload("go", &w.payload) {
                    break;
                }
                continue;
            }
            if wait {
                gate += 1;
            }
            readings.push(crate::verify::Reading {
                line: s.received,
                cpu_ns: r.cpu_ns,
                settled: r.settled,
                pids: r.pids.clone(),
                tasks: r.tasks.clone(),
                at_s: t0.elapsed().as_secs_f64(),
                arrival: None,
                closing_softirqs: closing.as_ref().and(closing_irq),
                closing_hardirqs: closing.as_ref().and(closing_hard),
                hardirqs: hard,
                closing: closing.take(),
                softirqs: irq,
                interrupted,
            });
            if wait && status_seen {
                // The last gate: the process's exit runs off the measuring CPU, and the next
                // process may have it now (issue 41).
                turn.at_last_gate(s);
            }
            if !s.send("go") {
                break;
            }
            crate::verify::note_arrival(&mut readings, s.arrival(&r));
        }
    });
    (out, readings, load_bad, load_excess)
}

/// The measuring CPU's turns (issue 41): every timing process pinned to a CPU takes a
/// ticket, in the order the processes are started, and has the CPU from when its ticket is
/// the oldest open one (a held process: at its hold gate; any other: before it is started)
/// until it retires it (at its last gate, once its tasks are moved off the CPU, or when it
/// has ended). So at most one timing process runs on a measuring CPU between its release and
/// its last gate, whatever runs beside it.
mod turns {
    use std::collections::{BTreeSet, HashMap};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Condvar, LazyLock, Mutex};
    use std::time::{Duration, Instant};

    #[derive(Default)]
    struct State {
        next: u64,
        open: HashMap<usize, BTreeSet<u64>>,
        /// When each CPU was last given up.
        free_since: HashMap<usize, Instant>,
    }

    static STATE: LazyLock<(Mutex<State>, Condvar)> =
        LazyLock::new(|| (Mutex::new(State::default()), Condvar::new()));

    /// One process's place in the measuring CPU's queue (retired when dropped).
    pub(crate) struct Ticket {
        cpu: usize,
        n: u64,
        open: bool,
    }

    /// A ticket for `cpu`, behind every open one.
    pub(crate) fn take(cpu: usize) -> Ticket {
        let (m, _) = &*STATE;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        let n = g.next;
        g.next += 1;
        g.open.entry(cpu).or_default().insert(n);
        Ticket { cpu, n, open: true }
    }

    impl Ticket {
        /// Waits until this is the oldest open ticket of its CPU: when the CPU was given up
        /// last (`None`: never); `Err` when `cancel` was set first.
        pub(crate) fn wait(&self, cancel: Option<&AtomicBool>) -> Result<Option<Instant>, ()> {
            let (m, cv) = &*STATE;
            let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(());
                }
                if g.open.get(&self.cpu).and_then(|s| s.first()) == Some(&self.n) {
                    return Ok(g.free_since.get(&self.cpu).copied());
                }
                g = cv
                    .wait_timeout(g, Duration::from_millis(20))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }

        /// Whether another ticket of the CPU is open (a process that waits for it or will).
        pub(crate) fn others_open(&self) -> bool {
            let (m, _) = &*STATE;
            let g = m.lock().unwrap_or_else(|e| e.into_inner());
            g.open
                .get(&self.cpu)
                .is_some_and(|s| s.iter().any(|n| *n != self.n))
        }

        /// Gives the CPU up; true when another ticket of the CPU is open (a process that has
        /// it now or will have it next).
        pub(crate) fn retire(&mut self) -> bool {
            if !std::mem::take(&mut self.open) {
                return false;
            }
            let (m, cv) = &*STATE;
            let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
            let others = g.open.get_mut(&self.cpu).is_some_and(|s| {
                s.remove(&self.n);
                !s.is_empty()
            });
            g.free_since.insert(self.cpu, Instant::now());
            cv.notify_all();
            others
        }
    }

    impl Drop for Ticket {
        fn drop(&mut self) {
            self.retire();
        }
    }
}

/// Sets the CPUs of every task (thread) of the process tree at `root` to `cpus`, until no new
/// task shows (a thread started during the move is moved too), and checks each: the number
/// of tasks moved, or what failed.
fn move_tree(root: i32, cpus: &[usize]) -> Result<usize, String> {
    let tasks = || -> Vec<i32> {
        pqperf_ffi::procinfo::process_tree(root)
            .into_iter()
            .flat_map(|pid| {
                std::fs::read_dir(format!("/proc/{pid}/task"))
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            })
            .collect()
    };
    let mut done: Vec<i32> = Vec::new();
    for _ in 0..4 {
        let now = tasks();
        let new: Vec<i32> = now.iter().copied().filter(|t| !done.contains(t)).collect();
        if new.is_empty() {
            if now.is_empty() {
                return Err("the child has no task left".into());
            }
            // Every task that is still there has exactly `cpus`.
            for t in &now {
                match pqperf_ffi::affinity::affinity_of(*t) {
                    Ok(a) if a == cpus => {}
                    Ok(a) => return Err(format!("task {t} kept CPUs {a:?}")),
                    Err(_) => {}
                }
            }
            return Ok(done.len());
        }
        for t in new {
            match pqperf_ffi::affinity::set_affinity_of(t, cpus) {
                Ok(()) => done.push(t),
                // A task that ended meanwhile.
                Err(e) if pqperf_ffi::affinity::task_gone(&e) => {}
                Err(e) => return Err(format!("task {t}: {e}")),
            }
        }
    }
    Err("the child kept starting threads while it was moved".into())
}

/// The parent's own CPUs, when they leave `cpu` out (the campaign keeps the measuring CPU
/// free of the parent).
fn parent_cpus_without(cpu: usize) -> Option<Vec<usize>> {
    pqperf_ffi::affinity::get_affinity()
        .ok()
        .filter(|mine| !mine.is_empty() && !mine.contains(&cpu))
}

/// A timing process's turn on the measuring CPU and what happened at its hold and last gates.
pub(crate) struct Turn {
    cpu: Option<usize>,
    ticket: Option<turns::Ticket>,
    /// Started beside, off the measuring CPU, moved at the hold gate.
    held: bool,
    cancel: Option<Arc<AtomicBool>>,
    t0: Option<std::time::Instant>,
    /// When its run began (before a relayed preparation).
    begun: Option<std::time::Instant>,
    /// When it was let go from the hold gate (seconds since it was started).
    released_s: Option<f64>,
    /// Its CPU time at the hold gate (the preparation's), ns.
    hold_cpu_ns: Option<u64>,
    /// The wait at the hold gate for the measuring CPU.
    waited_s: f64,
    /// Of its time before its release, the seconds the measuring CPU was free, waiting for it.
    idle_s: f64,
    /// Tasks moved onto the measuring CPU.
    moved: usize,
    /// It gave the CPU up at its last gate while another process had a ticket.
    handed_over: bool,
    /// Why it was ended at a gate.
    problem: Option<String>,
    /// A calibration process of several trials ([`run_calibration`]): ended at the gate
    /// after a trial that took at least this many seconds.
    stop_slow_s: Option<f64>,
}

impl Turn {
    /// A process pinned to `cpu` before it is started (its turn taken then).
    fn pinned(cpu: Option<usize>) -> Turn {
        Turn {
            cpu,
            ticket: None,
            held: false,
            cancel: None,
            t0: None,
            begun: None,
            released_s: None,
            hold_cpu_ns: None,
            waited_s: 0.0,
            idle_s: 0.0,
            moved: 0,
            handed_over: false,
            problem: None,
            stop_slow_s: None,
        }
    }

    /// Waits for the measuring CPU (a ticket is taken now unless the process has one): when
    /// the CPU was given up last; `Err` when the process is not needed any more.
    fn wait_turn(&mut self) -> Result<Option<std::time::Instant>, ()> {
        if self.ticket.is_none() {
            self.ticket = self.cpu.map(turns::take);
        }
        match &self.ticket {
            Some(t) => t.wait(self.cancel.as_deref()),
            None => Ok(None),
        }
    }

    /// The driver said `PQPERF hold`: its CPU time is read; a held process waits for the
    /// measuring CPU and every task of it is moved there; then `go`. False: the process is
    /// ended (the reason in `problem`).
    fn at_hold(&mut self, s: &mut untrusted::Session, in_place: bool) -> bool {
        if !in_place || self.hold_cpu_ns.is_some() {
            self.problem = Some("the driver said `hold` after its first gate".into());
            return false;
        }
        let r = s.cpu();
        self.hold_cpu_ns = Some(r.cpu_ns);
        if self.held {
            if !r.settled {
                self.problem = Some(format!(
                    "a task of the held child was still running {:.1} s after the driver stopped at its hold gate",
                    untrusted::SETTLE_LIMIT.as_secs_f64()
                ));
                return false;
            }
            let w0 = std::time::Instant::now();
            let Ok(free_at) = self.wait_turn() else {
                self.problem =
                    Some("the held process was not needed (ended at its hold gate)".into());
                return false;
            };
            let waited = w0.elapsed();
            s.extend_deadline(waited);
            self.waited_s = waited.as_secs_f64();
            let cpu = self.cpu.expect("a held process has a measuring CPU");
            match move_tree(s.root(), &[cpu]) {
                Ok(n) => self.moved = n,
                Err(e) => {
                    self.problem = Some(format!(
                        "the held child could not be moved onto CPU {cpu}: {e}"
                    ));
                    return false;
                }
            }
            self.released_s = self.t0.map(|t| t.elapsed().as_secs_f64());
            // The measuring CPU was free, waiting for this process, from when it was given up
            // (or from this process's start, if that came later) to now.
            let since = match (free_at, self.begun.or(self.t0)) {
                (Some(f), Some(t0)) => f.max(t0),
                (None, Some(t0)) => t0,
                (Some(f), None) => f,
                (None, None) => std::time::Instant::now(),
            };
            self.idle_s = since.elapsed().as_secs_f64();
        }
        s.send("go")
    }

    /// The driver's last gate: its tasks are moved off the measuring CPU (onto the parent's
    /// CPUs) and the CPU is given up, so that the exit runs beside the next process.
    fn at_last_gate(&mut self, s: &untrusted::Session) {
        let Some(cpu) = self.cpu.filter(|_| self.ticket.is_some()) else {
            return;
        };
        let Some(off) = parent_cpus_without(cpu) else {
            return;
        };
        // Nobody to hand the CPU to: the exit stays on the measuring CPU, where nothing else
        // runs (the parent's CPUs may be busier).
        if !self.ticket.as_ref().is_some_and(|t| t.others_open()) {
            return;
        }
        if move_tree(s.root(), &off).is_ok()
            && let Some(mut t) = self.ticket.take()
        {
            self.handed_over = t.retire();
        }
    }

    /// The hold gate's evidence for the process entry.
    fn evidence(&self) -> Option<Value> {
        let cpu = self.hold_cpu_ns?;
        Some(serde_json::json!({
            "held": self.held,
            "cpu_s_before": (cpu as f64 / 1e3).round() / 1e6,
            "waited_s": (self.waited_s * 1e6).round() / 1e6,
            "tasks_moved": self.moved,
            "handed_over": self.handed_over,
        }))
    }
}

/// A timing process started beside the one being timed (issue 41): fork, sandbox, exec, dlopen
/// and preparation run on the parent's CPUs (never the measuring one) while the other
/// process's windows run; the driver then waits at its hold gate, blocked on its control
/// pipe, until the measuring CPU is its turn ([`turns`]): the parent moves its every task
/// there and lets it go into its warm-ups and windows. [`Held::join`] gives its run; a
/// `Held` dropped before it ran is ended at the hold gate.
pub struct Held {
    args: DriverArgs,
    cancel: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Run>>,
}

impl Held {
    /// The arguments it was started with.
    pub fn args(&self) -> &DriverArgs {
        &self.args
    }

    /// Its run, when it has ended.
    pub fn join(mut self) -> Run {
        let h = self.handle.take().expect("joined once");
        h.join().unwrap_or_else(|_| {
            failed_run(
                vec![DRIVER_BIN.to_string()],
                "the held process's thread panicked".into(),
            )
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }
}

/// Environment variable that turns held processes off (set and not empty): every process is
/// pinned before `exec` and started when its turn comes, as before issue 41 (the A/B switch
/// of the measure phase's efficiency and interval quality).
pub const NO_HELD_ENV: &str = "PQPERF_NO_HELD";

/// Whether a process of `args` can be held (not with [`NO_HELD_ENV`] set): pqperf's own driver, a measuring CPU the parent's
/// CPUs leave out, and the timing child's seccomp filter in force (it kills a child that
/// calls `sched_setaffinity`, so a held child cannot reach the measuring CPU itself).
pub fn holds(exe: &DriverExe, args: &DriverArgs) -> bool {
    holds_on(exe, args.cpu)
}

/// [`holds`] for any process of `exe` measured on `cpu`.
pub fn holds_on(exe: &DriverExe, cpu: Option<usize>) -> bool {
    std::env::var_os(NO_HELD_ENV).is_none_or(|v| v.is_empty())
        && exe.exe.file_name() == Some(std::ffi::OsStr::new(DRIVER_BIN))
        && cpu.and_then(parent_cpus_without).is_some()
        && untrusted::timing_seccomp_in_force()
}

/// Starts the process of `args` held ([`Held`]); `None` when it cannot be held ([`holds`]).
/// Its place in the measuring CPU's queue is taken now: behind every process started before.
pub fn start_held(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Option<Held> {
    if !holds(exe, args) {
        return None;
    }
    let cpu = args.cpu?;
    let mut turn = Turn::pinned(Some(cpu));
    turn.held = true;
    turn.ticket = Some(turns::take(cpu));
    let cancel = Arc::new(AtomicBool::new(false));
    turn.cancel = Some(cancel.clone());
    let (e, a) = (exe.clone(), args.clone());
    let handle = std::thread::Builder::new()
        .name("held-driver".into())
        .spawn(move || run_turn(&e, &a, timeout, None, turn))
        .ok()?;
    Some(Held {
        args: args.clone(),
        cancel,
        handle: Some(handle),
    })
}

/// [`run_driver`] for a calibration process of several trials (`crate::calibrate`): when its
/// first trial took at least `slow_s` seconds, the parent ends the process at the gate after
/// it (the driver then fails: the process is not complete) instead of letting it run its
/// other trials, so that a slow first call costs one call, not one per trial.
pub fn run_calibration(exe: &DriverExe, args: &DriverArgs, timeout: Duration, slow_s: f64) -> Run {
    let mut turn = Turn::pinned(args.cpu);
    turn.stop_slow_s = Some(slow_s);
    run_turn(exe, args, timeout, None, turn)
}

/// The seconds of the first trial's `TRIAL 1 <calls> <seconds> <count>` result line.
fn first_trial_seconds(line: &str) -> Option<f64> {
    let mut f = line.strip_prefix("TRIAL\t1\t")?.split('\t');
    f.nth(1)?.parse().ok()
}

/// Whether the inputs of `args` are relayed from a preparer ([`crate::relay::relayed`]); only
/// pqperf's own driver relays (not a test's fake driver).
pub fn relays(exe: &DriverExe, args: &DriverArgs) -> bool {
    exe.exe.file_name() == Some(std::ffi::OsStr::new(DRIVER_BIN)) && crate::relay::relayed(args)
}

/// Runs one driver process, contained (`pqperf_ffi::untrusted`), with a hard timeout, and
/// parses what it reported on its private result channel. A process that says `complete` is
/// checked against the kernel's accounting ([`crate::verify`]) and becomes
/// [`crate::verify::INCONSISTENT`] when its claims disagree. The candidate's stdout/stderr are
/// captured with a size cap; the record keeps their byte counts and the stderr tail.
pub fn run_driver(exe: &DriverExe, args: &DriverArgs, timeout: Duration) -> Run {
    run_driver_then(exe, args, timeout, None)
}

/// [`run_driver`], and with `next` the relayed inputs of the process expected after this one
/// are prepared while this one is timed ([`crate::relay::prepare_ahead`]).
pub fn run_driver_then(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    next: Option<&DriverArgs>,
) -> Run {
    run_turn(exe, args, timeout, next, Turn::pinned(args.cpu))
}

/// [`run_driver_then`] with the process's turn on the measuring CPU (held or pinned).
fn run_turn(
    exe: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    next: Option<&DriverArgs>,
    mut turn: Turn,
) -> Run {
    turn.begun = Some(std::time::Instant::now());
    let mut command = vec![DRIVER_BIN.to_string()];
    command.extend(args.to_argv());
    let cpu_t0 = args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now);
    let load_1m = pqperf_ffi::procinfo::load_average()[0];
    let parent_rss_bytes = pqperf_ffi::procinfo::rss_bytes();
    // Relayed inputs: the preparer first (crate::relay), then the timing process without
    // its seed.
    let mut waited_s = 0.0;
    let plan = if relays(exe, args) {
        let tp = std::time::Instant::now();
        let prepared = crate::relay::prepare(exe, args, timeout);
        waited_s = tp.elapsed().as_secs_f64();
        if let Some(n) = next.filter(|n| crate::relay::relayed(n)) {
            crate::relay::prepare_ahead(exe, n, timeout);
        }
        match prepared {
            Ok(p) => Some(crate::relay::Plan::new(args, &p)),
            Err(e) => {
                return failed_run(command, format!("preparation of the relayed inputs: {e}"));
            }
        }
    } else {
        None
    };
    let targs = match &plan {
        Some(_) => crate::relay::timing_args(args),
        None => args.clone(),
    };
    if plan.is_some() {
        command = vec![DRIVER_BIN.to_string()];
        command.extend(targs.to_argv());
    }
    // A process pinned before exec waits for its turn on the measuring CPU first: another
    // process has it meanwhile, so the wait is no part of this one's time.
    if !turn.held {
        let _ = turn.wait_turn();
    }
    // The process's own time in the parent starts here: the wait for its preparation
    // (`waited_s`, above) is counted once, as preparation, never again as reaping.
    let t_spawn = std::time::Instant::now();
    // The forked child's `ru_maxrss` counts the parent's pages it shared until its exec: the
    // parent's RSS around the fork (the preparation and replays beside may have grown it
    // since the first reading), never a reading from before it alone.
    let rss_before_fork = pqperf_ffi::procinfo::rss_bytes();
    let (out, readings, load_bad, load_excess) =
        spawn(exe, &targs, timeout, plan.as_ref(), &mut turn);
    // Ended: the measuring CPU is the next process's (if it was not given up already).
    drop(turn.ticket.take());
    let parent_rss_bytes = [
        parent_rss_bytes,
        rss_before_fork,
        pqperf_ffi::procinfo::rss_bytes(),
    ]
    .into_iter()
    .flatten()
    .max();
    let outcome_s = t_spawn.elapsed().as_secs_f64();
    let steal_share = match (
        cpu_t0,
        args.cpu.and_then(pqperf_ffi::procinfo::CpuTimes::now),
    ) {
        (Some(t0), Some(t1)) => t1.steal_share_since(&t0),
        _ => None,
    };
    if let Some(e) = &out.spawn_error {
        return failed_run(command, format!("cannot start driver: {e}"));
    }
    let wall_s = out.wall_s;
    let lines = out.result_lines();
    let mut parsed = parse_output(&lines);
    // Captured candidate output: the last characters, control characters escaped.
    let mut stderr_tail = pqperf_model::captured::escape_captured(
        &out.stderr
            .tail_chars(pqperf_model::captured::STDERR_KEEP_CHARS),
    );
    let refused = out
        .result_truncated
        .then(|| "result channel exceeded its size limit".to_string())
        .or(parsed.samples_refused.clone());
    if let Some(why) = refused {
        // Samples or trials may be cut or forged: never a complete record.
        parsed.status = None;
        parsed.sample_trials.clear();
        parsed.samples.clear();
        if !stderr_tail.is_empty() {
            stderr_tail.push('\n');
        }
        stderr_tail.push_str(&why);
    }
    let mut process = if out.timed_out {
        let mut p = Process {
            status: "hard_timeout".into(),
            exit_code: None,
            stderr: stderr_tail,
            command,
            wall_s: Some(wall_s),
            ..Default::default()
        };
        p.extra
            .insert("timeout_s".into(), Value::from(timeout.as_secs_f64()));
        parsed.trials.clear();
        parsed.mem = None;
        parsed.sample_trials.clear();
        parsed.samples.clear();
        p
    } else {
        let code = out.code();
        let st = match (&parsed.status, code) {
            (Some(s), Some(0)) => s.clone(),
            (None, _) => "missing".to_string(),
            _ => "failed".to_string(),
        };
        // A crash may leave no STATUS line: say what killed it.
        let mut stderr = stderr_tail;
        if let Some(c) = code
            && c < 0
        {
            let sig = -c;
            if !stderr.is_empty() {
                stderr.push('\n');
            }
            stderr.push_str(&format!("killed by signal {sig} ({})", signal_name(sig)));
        }
        Process {
            status: if code.is_some_and(|c| c < 0) && parsed.status.is_none() {
                "failed".into()
            } else {
                st
            },
            exit_code: code,
            meta: parsed.meta.clone(),
            trials: parsed.trials.clone(),
            stderr,
            command,
            wall_s: Some(wall_s),
            ..Default::default()
        }
    };
    if let Some(why) = &turn.problem {
        // Ended at a gate of the parent's lifecycle (hold, move): never a complete record.
        process.status = "failed".into();
        if !process.stderr.is_empty() {
            process.stderr.push('\n');
        }
        process.stderr.push_str(why);
    }
    if let Some(e) = turn.evidence() {
        process.extra.insert("hold".into(), e);
    }
    if out.stdout.total > 0 || out.stderr.total > 0 {
        process
            .extra
            .insert("candidate_output".into(), out.output_json());
    }
    let check_t0 = std::time::Instant::now();
    if process.status == "complete" {
        let problems = match &out.accounting {
            Some(acc) => {
                let k = crate::verify::Kernel {
                    acc,
                    wall_s,
                    tick_hz: crate::verify::tick_hz(),
                    readings: &readings,
                    lines: &lines,
                    steal_s: steal_share.map_or(0.0, |f| f * wall_s),
                    parent_rss_bytes,
                };
                // The samples the record will publish (the altered verify calls dropped
                // below): the window rule holds their fenced means.
                let published = plan.as_ref().map(|pl| {
                    let mut t = parsed.sample_trials.clone();
                    pl.drop_tampered_samples(&mut t);
                    t
                });
                let (problems, evidence) =
                    crate::verify::check_published(args, &parsed, &k, published.as_deref());
                process.extra.insert("kernel_check".into(), evidence);
                problems
            }
            None => vec!["no kernel accounting of the process".to_string()],
        };
        let mut problems = problems;
        problems.extend(load_bad.iter().cloned());
        if let Some(pl) = &plan {
            let (bad, ev) = pl.check(&lines);
            problems.extend(bad);
            process.extra.insert("relayed_inputs".into(), ev);
        }
        if let Some(kc) = process.extra.get_mut("kernel_check") {
            let mut excess = crate::verify::unexplained_of(kc);
            excess.extend(load_excess.iter().cloned());
            let windows = kc["windows"].as_u64().unwrap_or(0) as usize;
            crate::verify::isolate(&mut problems, &excess, windows, kc);
        }
        if !problems.is_empty() {
            if let Some(kc) = process.extra.get_mut("kernel_check")
                && let Some(v) = kc.get_mut("problems").and_then(|v| v.as_array_mut())
            {
                for p in &problems {
                    if !v.iter().any(|x| x == p) {
                        v.push(Value::from(p.clone()));
                    }
                }
            }
            process.status = crate::verify::INCONSISTENT.into();
            process
                .extra
                .entry("kernel_check".to_string())
                .or_insert_with(|| serde_json::json!({ "problems": problems }));
        } else if process
            .extra
            .get("kernel_check")
            .is_some_and(crate::verify::interrupted)
        {
            // Over a bound only where interrupts on the measuring CPU explain it: re-run,
            // never published (crate::verify).
            process.status = crate::verify::DISTURBED.into();
        }
    }
    let timed_s = process.trials.iter().map(|t| t.seconds).sum();
    let sampled_s = parsed
        .sched
        .iter()
        .filter(|t| t.kind == "sampled")
        .map(|t| t.seconds)
        .sum();
    let mut budget = ProcessBudget::from_marks_released(
        out.spawned_s,
        &lines,
        &out.line_arrivals(),
        turn.released_s,
        wall_s,
        outcome_s,
        timed_s,
        sampled_s,
    );
    budget.check_s = check_t0.elapsed().as_secs_f64();
    let mut output_digest = parsed.output_digest.clone();
    if let Some(pl) = &plan {
        // The altered verify calls: their samples and rejections are the parent's doing.
        pl.drop_tampered_samples(&mut parsed.sample_trials);
        parsed.samples = parsed.sample_trials.concat();
        if let Some(d) = pl.verify_digest(&lines) {
            output_digest = Some(d);
            let valid = process
                .extra
                .get("relayed_inputs")
                .and_then(|e| e["valid_rejections"].as_u64());
            if let (Some(v), true) = (valid, process.meta.contains("verify_rejections")) {
                process.meta.insert("verify_rejections", v.to_string());
            }
        }
        // The parent's wait for the preparation (none when it was made ahead).
        budget.prepare_s += waited_s;
        if let Some(e) = process.extra.get_mut("relayed_inputs") {
            e["waited_s"] = Value::from((waited_s * 1e6).round() / 1e6);
        }
    }
    // What ran beside the measuring CPU's path (crate::budget).
    let on_path = turn.released_s.filter(|_| turn.held).map(|_| turn.idle_s);
    let beside = budget.split_beside(on_path, turn.handed_over);
    let mem = if process.status == "complete" {
        parsed.mem
    } else {
        None
    };
    let env = ProcessEnv {
        canary_before_ticks: parsed.canary.map(|c| c.0),
        canary_after_ticks: parsed.canary.map(|c| c.1),
        steal_share,
        runq_share: runq_share(&parsed.sched),
        load_1m: Some(load_1m),
    };
    Run {
        env,
        output_digest,
        budget,
        beside,
        held: turn.held,
        handed_over: turn.handed_over,
        process,
        samples: parsed.samples,
        sample_trials: parsed.sample_trials,
        sched: parsed.sched,
        counter: parsed.counter,
        wall_s,
        timed_s,
        mem,
    }
}

/// A run that never started (or whose inputs could not be prepared).
fn failed_run(command: Vec<String>, why: String) -> Run {
    let process = Process {
        status: "failed".into(),
        exit_code: None,
        stderr: why,
        command,
        wall_s: Some(0.0),
        ..Default::default()
    };
    Run {
        process,
        samples: Vec::new(),
        sample_trials: Vec::new(),
        sched: Vec::new(),
        counter: None,
        wall_s: 0.0,
        timed_s: 0.0,
        mem: None,
        env: ProcessEnv::default(),
        output_digest: None,
        budget: ProcessBudget::default(),
        beside: ProcessBudget::default(),
        held: false,
        handed_over: false,
    }
}

/// Share of the trials' wall time spent on the run queue (`None` without schedstat).
fn runq_share(sched: &[TrialSched]) -> Option<f64> {
    pqperf_model::record::runq_share_of(sched)
}

fn signal_name(sig: i64) -> &'static str {
    match sig {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        31 => "SIGSYS: a system call the sandbox forbids",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measuring_cpu_goes_to_the_oldest_open_ticket() {
        // A CPU number no other test uses.
        let cpu = 100_001;
        let mut a = turns::take(cpu);
        let b = turns::take(cpu);
        assert_eq!(a.wait(None), Ok(None));
        // b waits behind a: cancelled, it gives up.
        let stop = AtomicBool::new(true);
        assert_eq!(b.wait(Some(&stop)), Err(()));
        // a gives the CPU up while b is open: handed over; b has it now.
        assert!(a.retire());
        assert!(b.wait(None).unwrap().is_some());
        drop(b);
        let mut c = turns::take(cpu);
        assert!(c.wait(None).is_ok());
        assert!(!c.retire(), "nobody else was open");
        assert!(!c.retire(), "retired once");
    }

    #[test]
    fn lean_driver_is_found_next_to_the_executable_or_deps() {
        let d = tempfile::tempdir().unwrap();
        let deps = d.path().join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        let e = DriverExe::locate_from(&deps.join("t-123"), None).unwrap_err();
        assert!(
            e.to_string()
                .contains(&d.path().join(DRIVER_BIN).display().to_string()),
            "{e}"
        );
        std::fs::write(d.path().join(DRIVER_BIN), "").unwrap();
        assert_eq!(
            DriverExe::locate_from(&deps.join("t-123"), None).unwrap(),
            d.path().join(DRIVER_BIN)
        );
        assert_eq!(
            DriverExe::locate_from(&d.path().join("pqperf"), None).unwrap(),
            d.path().join(DRIVER_BIN)
        );
        let e = DriverExe::locate_from(&d.path().join("pqperf"), Some(d.path().join("nope")))
            .unwrap_err();
        assert!(e.to_string().contains("PQPERF_DRIVER"), "{e}");
    }
}
