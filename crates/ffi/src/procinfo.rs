//! Process and host facts from the kernel: resident memory (`/proc/self/statm`), the peak
//! resident set (`VmHWM`, resettable through `/proc/self/clear_refs`), page size, `uname`,
//! load averages, core-dump limits and advisory file locks, and the scheduler facts of the
//! calling thread that tell whether a timed trial was disturbed ([`SchedSnap`]), and the
//! kernel's accounting of an exited child, read by the parent as it reaps it
//! ([`wait_accounted`]).

use std::path::Path;

/// Page size in bytes (`sysconf(_SC_PAGESIZE)`).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 { v as u64 } else { 4096 }
}

/// Resident bytes of this process: second field of `/proc/self/statm` × page size.
pub fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size())
}

/// Peak resident bytes of this process: `VmHWM` of `/proc/self/status` (kB × 1024).
pub fn vm_hwm_bytes() -> Option<u64> {
    status_kb("VmHWM:").map(|k| k * 1024)
}

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// Resets `VmHWM` to the current RSS (writes `5` to `/proc/self/clear_refs`). Returns false if
/// the kernel refused.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

/// `uname` fields.
#[derive(Debug, Clone)]
pub struct Uname {
    /// Host name (`nodename`).
    pub nodename: String,
    /// Kernel release (`uname -r`).
    pub release: String,
    /// Machine architecture (`uname -m`).
    pub machine: String,
}

/// The kernel's `uname`.
pub fn uname() -> Uname {
    // SAFETY: utsname is plain data; zeroed is valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is valid and writable; uname fills NUL-terminated fields.
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Uname {
        nodename: field(&u.nodename),
        release: field(&u.release),
        machine: field(&u.machine),
    }
}

/// The 1/5/15-minute load averages from `/proc/loadavg`.
pub fn load_average() -> [f64; 3] {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = s
        .split_whitespace()
        .map(|x| x.parse::<f64>().unwrap_or(0.0));
    [
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
    ]
}

/// Cumulative times of one CPU from its `cpuN` line of `/proc/stat` (USER_HZ ticks): the
/// total of the first eight columns (user … steal; guest time is already in user) and the
/// steal column, time the hypervisor gave that virtual CPU's host core to something else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system + idle + iowait + irq + softirq + steal.
    pub total: u64,
    /// steal.
    pub steal: u64,
}

impl CpuTimes {
    /// The times of `cpu` now; `None` when `/proc/stat` has no line for it.
    pub fn now(cpu: usize) -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?, cpu)
    }

    /// The `cpu<cpu>` line of a `/proc/stat` text.
    pub fn parse(text: &str, cpu: usize) -> Option<CpuTimes> {
        let name = format!("cpu{cpu}");
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|x| x.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        Some(CpuTimes {
            total: v.iter().sum(),
            steal: v.get(7).copied().unwrap_or(0),
        })
    }

    /// Share of the time since `earlier` that was stolen; `None` when no time passed (the
    /// columns advance in ticks of 10 ms: a short process may see none).
    pub fn steal_share_since(&self, earlier: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let steal = self.steal.checked_sub(earlier.steal)?;
        (total > 0).then(|| steal as f64 / total as f64)
    }
}

/// Scheduler and fault counters of the calling thread at one instant; the difference of two
/// snapshots taken around a timed trial says how much the trial was disturbed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SchedSnap {
    /// Involuntary context switches (`getrusage(RUSAGE_THREAD)`, `ru_nivcsw`).
    pub nivcsw: u64,
    /// Voluntary context switches (`ru_nvcsw`).
    pub nvcsw: u64,
    /// Minor page faults (`ru_minflt`).
    pub minflt: u64,
    /// Major page faults (`ru_majflt`).
    pub majflt: u64,
    /// Nanoseconds spent runnable but waiting on a run queue (second field of
    /// `/proc/thread-self/schedstat`); `None` when the kernel does not provide it.
    pub runq_wait_ns: Option<u64>,
    /// Nanoseconds on the CPU (first field of schedstat).
    pub run_ns: Option<u64>,
    /// CPU migrations (`se.nr_migrations` of `/proc/thread-self/sched`), when readable.
    pub migrations: Option<u64>,
    /// CPU the thread ran on when the snapshot was taken (`sched_getcpu`).
    pub cpu: Option<usize>,
}

impl SchedSnap {
    /// Takes a snapshot of the calling thread. Reads two small /proc files: call it outside
    /// timed regions.
    pub fn now() -> SchedSnap {
        // SAFETY: rusage is plain data; zeroed is a valid value for getrusage to overwrite.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD only reads kernel counters.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let (nivcsw, nvcsw, minflt, majflt) = if rc == 0 {
            (
                ru.ru_nivcsw as u64,
                ru.ru_nvcsw as u64,
                ru.ru_minflt as u64,
                ru.ru_majflt as u64,
            )
        } else {
            (0, 0, 0, 0)
        };
        let sched = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let mut f = sched.split_whitespace().map(|x| x.parse::<u64>().ok());
        let run_ns = f.next().flatten();
        let runq_wait_ns = f.next().flatten();
        let migrations = std::fs::read_to_string("/proc/thread-self/sched")
            .ok()
            .and_then(|s| {
                let l = s.lines().find(|l| l.starts_with("se.nr_migrations"))?;
                l.split(':').nth(1)?.trim().parse().ok()
            });
        SchedSnap {
            nivcsw,
            nvcsw,
            minflt,
            majflt,
            runq_wait_ns,
            run_ns,
            migrations,
            cpu: crate::affinity::current_cpu(),
        }
    }
}

/// Disables core dumps for this process and its children (a crashing candidate must not
/// fill the disk or slow the campaign).
pub fn disable_core_dumps() {
    let lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit; lowering RLIMIT_CORE is always permitted.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &lim);
    }
}

/// Exclusive advisory lock on `path` (created if missing), held until the returned file is
/// dropped. Blocks while another process holds it.
pub fn lock_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let f = open_lock_file(path)?;
    flock(&f, libc::LOCK_EX)?;
    Ok(f)
}

/// Like [`lock_exclusive`] but fails at once (`Ok(None)`) when the lock is held elsewhere.
pub fn try_lock_exclusive(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let f = open_lock_file(path)?;
    match flock(&f, libc::LOCK_EX | libc::LOCK_NB) {
        Ok(()) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens (creating) a lock file for `flock`; one another user created is opened read-only
/// (`flock` needs no write access).
fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    let rw = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path);
    match rw {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => std::fs::File::open(path),
        r => r,
    }
}

fn flock(f: &std::fs::File, op: libc::c_int) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: `f` is an open file; flock only takes the descriptor and an operation.
        let rc = unsafe { libc::flock(f.as_raw_fd(), op) };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_times_of_proc_stat() {
        let text =
            "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 10 1 5 100 2 0 1 3 7 0\ncpu1 1 1 1 1 1 1 1 1 0 0\n";
        let a = super::CpuTimes::parse(text, 0).unwrap();
        assert_eq!((a.total, a.steal), (122, 3));
        assert_eq!(super::CpuTimes::parse(text, 2), None);
        let b = super::CpuTimes {
            total: 222,
            steal: 28,
        };
        assert_eq!(b.steal_share_since(&a), Some(0.25));
        assert_eq!(a.steal_share_since(&a), None);
        // The real file has a line for a CPU this thread may run on.
        let cpu = crate::affinity::get_affinity().unwrap()[0];
        assert!(super::CpuTimes::now(cpu).is_some());
    }

    use super::*;

    #[test]
    fn rss_and_peak_follow_a_large_allocation() {
        let before = rss_bytes().unwrap();
        assert!(before > 0);
        assert!(reset_peak_rss(), "clear_refs refused");
        let hwm0 = vm_hwm_bytes().unwrap();
        let mut v = vec![0u8; 32 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let hwm1 = vm_hwm_bytes().unwrap();
        assert!(hwm1 >= hwm0 + (30 << 20), "{hwm0} -> {hwm1}");
        drop(v);
    }

    #[test]
    fn uname_and_loadavg() {
        let u = uname();
        assert!(!u.machine.is_empty() && !u.release.is_empty());
        assert!(load_average().iter().all(|x| *x >= 0.0));
    }

    #[test]
    fn sched_snapshot_sees_this_thread_run() {
        // This thread's CPU time so far (sum_exec_runtime plus the running slice).
        fn thread_cpu_ns() -> u64 {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID only reads
            // this thread's kernel accounting.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            assert_eq!(rc, 0);
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        }
        let a = SchedSnap::now();
        let c0 = thread_cpu_ns();
        // Busy until this thread got 20 ms of CPU (however long that takes on a loaded host),
        // then sleep: run time grows by at least that much, a voluntary switch happens. The
        // schedstat run time read at `a` lags c0 at most; after the sleep it includes c1.
        let mut x = 0u64;
        let c1 = loop {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            let c = thread_cpu_ns();
            if c >= c0 + 20_000_000 {
                break c;
            }
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = SchedSnap::now();
        assert!(b.nvcsw > a.nvcsw, "{a:?} {b:?}");
        assert!(b.nivcsw >= a.nivcsw && b.minflt >= a.minflt);
        if let (Some(r0), Some(r1)) = (a.run_ns, b.run_ns) {
            assert!(
                r1 >= r0 + (c1 - c0),
                "run time {r0} -> {r1}, thread CPU time {c0} -> {c1}"
            );
        }
        assert!(b.cpu.is_some());
    }

    #[test]
    fn lock_is_exclusive() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.lock");
        let _a = lock_exclusive(&p).unwrap();
        // A second open file description conflicts even within one process.
        assert!(try_lock_exclusive(&p).unwrap().is_none());
    }
}

/// What the kernel accounted for an exited child, read by its parent (the child cannot
/// touch these figures): CPU time from `wait4`'s rusage (the child and the descendants it
/// waited for) and, when the kernel provides schedstat, its main thread's on-CPU and
/// run-queue nanoseconds read from the zombie before it is reaped.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChildAccounting {
    /// User CPU seconds (`ru_utime`).
    pub user_s: f64,
    /// System CPU seconds (`ru_stime`).
    pub sys_s: f64,
    /// On-CPU nanoseconds of the main thread (`/proc/<pid>/schedstat`, first field).
    pub run_ns: Option<u64>,
    /// Run-queue wait nanoseconds of the main thread (schedstat, second field).
    pub run_delay_ns: Option<u64>,
    /// Largest resident set in KiB (`ru_maxrss`): the largest of the child's own (before
    /// and after `exec`, so at least what the parent's RSS was when it forked) and of the
    /// descendants it waited for.
    pub maxrss_kib: Option<u64>,
}

impl ChildAccounting {
    /// User + system CPU seconds.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// Waits for the child `pid` (blocking, or only when it already exited when `block` is
/// false) and reaps it with its kernel accounting. `Ok(None)`: still running (non-blocking).
/// The exit status is in the raw `wait` form (`ExitStatusExt::from_raw`).
pub fn wait_accounted(pid: i32, block: bool) -> std::io::Result<Option<(i32, ChildAccounting)>> {
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    let mut flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
    if !block {
        flags |= WaitPidFlag::WNOHANG;
    }
    // Leave the child a zombie first, so that its schedstat can still be read.
    match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), flags) {
        Ok(WaitStatus::StillAlive) => return Ok(None),
        Ok(_) => {}
        Err(nix::errno::Errno::EINTR) => return Ok(None),
        Err(e) => return Err(std::io::Error::from(e)),
    }
    let sched = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap_or_default();
    let mut f = sched.split_whitespace().map(|x| x.parse::<u64>().ok());
    let run_ns = f.next().flatten();
    let run_delay_ns = f.next().flatten();
    // SAFETY: rusage is plain data; zeroed is a valid value for wait4 to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` and `ru` are valid, writable locals; wait4 writes only them and
        // reaps `pid`, a child of this process that waitid just reported as exited.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Some((
        status,
        ChildAccounting {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
            run_ns,
            run_delay_ns,
            maxrss_kib: u64::try_from(ru.ru_maxrss).ok(),
        },
    )))
}

/// Exact CPU time of a live process tree, read by the parent between the timed intervals of a
/// conducted child (`untrusted::Session::cpu`): the processes are the root and all its
/// descendants (found through `/proc/<pid>/task/<tid>/children`), the time of each the
/// kernel's process CPU clock (`clock_gettime` of `MAKE_PROCESS_CPUCLOCK(pid, SCHED)`: the
/// `sum_exec_runtime` of every live thread plus that of its ended threads, in nanoseconds).
/// A task on a CPU has run since its figure was last brought up to date (at most a
/// scheduler tick), so a reading is taken only when no task of the tree is running
/// ([`TreeCpu::settled`]). With the CPU time it reads every task's schedstat (on-CPU and
/// run-queue nanoseconds, [`TaskSched`]): a task that is not running has no wait pending,
/// so its run-queue figure is final at a settled reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeCpu {
    /// Σ CPU nanoseconds of the processes read.
    pub cpu_ns: u64,
    /// Every live task of the processes read (empty when the kernel has no schedstat).
    pub tasks: Vec<TaskSched>,
    /// Host pids of the processes read, in walk order.
    pub pids: Vec<i32>,
    /// No task of the tree was running (state `R`) before and after the reading.
    pub settled: bool,
}

/// The process CPU clock of `pid` (any process: reading it needs no permission), ns.
pub fn process_cpu_ns(pid: i32) -> Option<u64> {
    // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) of the kernel's posix-cpu-timers.
    let clock: libc::clockid_t = ((!pid) << 3) | 2;
    // SAFETY: timespec is plain data; clock_gettime writes only into it and fails with EINVAL
    // for a process that is gone.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid, writable timespec owned by this frame.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `root` and its descendants (host pids, at most 4096), parents before children.
pub fn process_tree(root: i32) -> Vec<i32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() && out.len() < 4096 {
        let pid = out[i];
        i += 1;
        for t in tasks_of(pid) {
            let path = format!("/proc/{pid}/task/{t}/children");
            let text = std::fs::read_to_string(path).unwrap_or_default();
            for c in text
                .split_whitespace()
                .filter_map(|x| x.parse::<i32>().ok())
            {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// One task's schedstat (`/proc/<pid>/task/<tid>/schedstat`) at a reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskSched {
    /// Host thread id.
    pub tid: i32,
    /// Nanoseconds on a CPU (first field).
    pub run_ns: u64,
    /// Nanoseconds runnable but waiting in a run queue (second field, `run_delay`).
    pub run_delay_ns: u64,
    /// Times the task arrived on a CPU (third field, `pcount`): each arrival adds the wait
    /// before it to `run_delay_ns`, at the same moment.
    pub pcount: u64,
}

fn task_sched(pid: i32, tid: i32) -> Option<TaskSched> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat")).ok()?;
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some(TaskSched {
        tid,
        run_ns: f.next()??,
        run_delay_ns: f.next()??,
        pcount: f.next()??,
    })
}

/// The main thread's schedstat of each of `pids` (the task whose id is the process's).
pub fn main_threads_sched(pids: &[i32]) -> Vec<TaskSched> {
    pids.iter().filter_map(|p| task_sched(*p, *p)).collect()
}

/// Waits until a main thread of `pids` has arrived on a CPU since `before` (its `pcount`
/// grew) and returns the main threads' schedstat at that moment; `None` after `limit`.
/// Read right after the parent lets a gated child go, the first arrival's `run_delay_ns`
/// growth is the wait between the parent's `go` and the child's first instruction after it
/// (exactly, when `pcount` grew by one; an upper bound when the poll came later).
pub fn wait_for_arrival(
    pids: &[i32],
    before: &[TaskSched],
    limit: std::time::Duration,
) -> Option<Vec<TaskSched>> {
    let t0 = std::time::Instant::now();
    loop {
        let now = main_threads_sched(pids);
        if now.is_empty() {
            return None;
        }
        let arrived = now.iter().any(|t| {
            before
                .iter()
                .find(|x| x.tid == t.tid)
                .is_some_and(|x| t.pcount > x.pcount)
        });
        if arrived {
            return Some(now);
        }
        if t0.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_micros(20));
    }
}

/// The schedstat of every live task of `pids` (tasks whose file cannot be read are left out).
pub fn tasks_sched(pids: &[i32]) -> Vec<TaskSched> {
    let mut out = Vec::new();
    for pid in pids {
        for tid in tasks_of(*pid) {
            out.extend(task_sched(*pid, tid));
        }
    }
    out
}

/// Σ run-queue nanoseconds of the tasks of `b` since reading `a`: each task's figure less
/// its figure at `a` (a task new at `b` from zero). A task that ended in between is missing
/// from `b`, and its wait with it.
pub fn run_delay_between(a: &[TaskSched], b: &[TaskSched]) -> u64 {
    b.iter()
        .map(|t| {
            let before = a
                .iter()
                .find(|x| x.tid == t.tid)
                .map_or(0, |x| x.run_delay_ns);
            t.run_delay_ns.saturating_sub(before)
        })
        .sum()
}

fn tasks_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether any task of `pids` is in state `R` (running or waiting for a CPU).
pub fn any_task_running(pids: &[i32]) -> bool {
    pids.iter().any(|pid| {
        tasks_of(*pid).into_iter().any(|t| {
            let s =
                std::fs::read_to_string(format!("/proc/{pid}/task/{t}/stat")).unwrap_or_default();
            s.rfind(')')
                .and_then(|i| s[i + 1..].split_whitespace().next())
                .is_some_and(|st| st == "R")
        })
    })
}

impl TreeCpu {
    /// Reads the tree of `root` once no task of it is running, waiting for that at most
    /// `settle` (then reads anyway and says so).
    pub fn read(root: i32, settle: std::time::Duration) -> TreeCpu {
        let t0 = std::time::Instant::now();
        let mut pause = std::time::Duration::from_micros(20);
        loop {
            let pids = process_tree(root);
            let quiet = !any_task_running(&pids);
            if quiet || t0.elapsed() >= settle {
                let cpu_ns = pids.iter().filter_map(|p| process_cpu_ns(*p)).sum();
                let tasks = tasks_sched(&pids);
                let still = !any_task_running(&pids) && process_tree(root) == pids;
                if quiet && !still && t0.elapsed() < settle {
                    continue;
                }
                return TreeCpu {
                    cpu_ns,
                    tasks,
                    pids,
                    settled: quiet && still,
                };
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(2));
        }
    }
}

/// Interrupt work on one CPU, as the kernel counts it: the CPU's column of
/// `/proc/interrupts` (hardware interrupts, local timer ticks, IPIs: every line with a
/// per-CPU count) and of `/proc/softirqs` (every softirq raised there), summed. A kernel
/// built without `CONFIG_IRQ_TIME_ACCOUNTING` charges this work to whichever task was running
/// on the CPU, so it shows in that task's CPU time; these counts say how much of it there
/// was (events, not seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IrqCounts {
    /// Hardware interrupts, timer ticks and IPIs handled on the CPU.
    pub hard: u64,
    /// Softirqs handled on the CPU.
    pub soft: u64,
}

impl IrqCounts {
    /// Events (hard and soft) since `earlier` (0 where a counter went backwards).
    pub fn events_since(&self, earlier: &IrqCounts) -> u64 {
        self.hard.saturating_sub(earlier.hard) + self.soft.saturating_sub(earlier.soft)
    }
}

/// The sum of one CPU's column of a `/proc/interrupts` or `/proc/softirqs` text: the header
/// names the online CPUs (`CPU0 CPU1 …`); a line counts when it has a number for every one
/// of them after its label (lines such as `ERR:` with one host-wide figure do not).
/// `None` when the header does not name `cpu`.
pub fn irq_column_sum(text: &[u8], cpu: usize) -> Option<u64> {
    let mut lines = text.split(|b| *b == b'\n');
    let header = lines.next()?;
    let want = format!("CPU{cpu}");
    let words = |l: &'_ [u8]| {
        l.split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect::<Vec<_>>()
    };
    let cols = words(header);
    let col = cols.iter().position(|w| w == want.as_bytes())?;
    let ncpu = cols.len();
    let mut sum = 0u64;
    for l in lines {
        let Some(colon) = l.iter().position(|b| *b == b':') else {
            continue;
        };
        let mut nums = l[colon + 1..]
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        let mut mine = None;
        let mut n = 0;
        for w in nums.by_ref().take(ncpu) {
            let Some(v) = std::str::from_utf8(w)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
            else {
                break;
            };
            if n == col {
                mine = Some(v);
            }
            n += 1;
        }
        if n == ncpu
            && let Some(v) = mine
        {
            sum = sum.saturating_add(v);
        }
    }
    Some(sum)
}

/// Reads [`IrqCounts`] of one CPU again and again: the files stay open and are read from
/// the start into a buffer kept between reads. [`IrqReader::softirqs`] reads only
/// `/proc/softirqs`, cheap enough for every gate of a timing child (3–5 µs on the
/// development VM); [`IrqReader::read`] also reads `/proc/interrupts`, which costs 47–130 µs
/// there (48.5 µs median of 200 reads: the kernel walks every interrupt descriptor), so the
/// parent reads it only at the gates around sampled windows (the headline floor's hard
/// interrupt count, `pqperf_model::floor::Rule::V2`), while the child waits at its gate. A
/// per-CPU perf counter of the `irq:irq_handler_entry` tracepoint would be cheaper but needs
/// tracefs mounted and `perf_event_paranoid` ≤ 0 or root; these files need neither.
#[derive(Debug)]
pub struct IrqReader {
    cpu: usize,
    files: Option<(std::fs::File, std::fs::File)>,
    buf: Vec<u8>,
}

impl IrqReader {
    /// A reader of `cpu`'s counts (the files are opened at the first read).
    pub fn new(cpu: usize) -> IrqReader {
        IrqReader {
            cpu,
            files: None,
            buf: Vec::with_capacity(16 << 10),
        }
    }

    /// The CPU's softirq count now (its column of `/proc/softirqs`); `None` when the file is
    /// missing or does not name the CPU.
    pub fn softirqs(&mut self) -> Option<u64> {
        use std::io::{Read, Seek};
        if self.files.is_none() {
            self.files = Some((
                std::fs::File::open("/proc/interrupts").ok()?,
                std::fs::File::open("/proc/softirqs").ok()?,
            ));
        }
        let (_, f) = self.files.as_mut()?;
        self.buf.clear();
        f.rewind().ok()?;
        f.read_to_end(&mut self.buf).ok()?;
        irq_column_sum(&self.buf, self.cpu)
    }

    /// The CPU's counts now; `None` when either file is missing or does not name the CPU.
    pub fn read(&mut self) -> Option<IrqCounts> {
        use std::io::{Read, Seek};
        if self.files.is_none() {
            self.files = Some((
                std::fs::File::open("/proc/interrupts").ok()?,
                std::fs::File::open("/proc/softirqs").ok()?,
            ));
        }
        let (hard_f, soft_f) = self.files.as_mut()?;
        let one = |f: &mut std::fs::File, buf: &mut Vec<u8>| {
            buf.clear();
            f.rewind().ok()?;
            f.read_to_end(buf).ok()?;
            irq_column_sum(buf, self.cpu)
        };
        let hard = one(hard_f, &mut self.buf)?;
        let soft = one(soft_f, &mut self.buf)?;
        Some(IrqCounts { hard, soft })
    }
}

#[cfg(test)]
mod irq_tests {
    use super::*;

    #[test]
    fn one_cpu_column_is_summed() {
        let text = b"           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 36:          0    3450724 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nLOC:   14150670   11964588   Local timer interrupts\nERR:          0\nMIS:          0\n";
        assert_eq!(irq_column_sum(text, 0), Some(1 + 14150670));
        assert_eq!(irq_column_sum(text, 1), Some(3450724 + 11964588));
        assert_eq!(irq_column_sum(text, 2), None);
        let soft = b"                    CPU0       CPU1       \n          HI:          0          0\n       TIMER:    1473656    1748531\n       BLOCK:          0    3450372\n";
        assert_eq!(irq_column_sum(soft, 1), Some(1748531 + 3450372));
    }

    #[test]
    fn the_reader_sees_this_cpu_and_counts_do_not_go_back() {
        let cpu = crate::affinity::current_cpu().unwrap_or(0);
        let mut r = IrqReader::new(cpu);
        let Some(a) = r.read() else {
            eprintln!("no /proc/interrupts or /proc/softirqs here: nothing to check");
            return;
        };
        let b = r.read().unwrap();
        assert!(b.hard >= a.hard && b.soft >= a.soft, "{a:?} then {b:?}");
        assert!(r.softirqs().unwrap() >= b.soft);
        assert!(a.hard > 0, "no interrupt ever on CPU {cpu}: {a:?}");
        assert_eq!(IrqReader::new(usize::MAX >> 1).read(), None);
        assert_eq!(IrqReader::new(usize::MAX >> 1).softirqs(), None);
    }
}
