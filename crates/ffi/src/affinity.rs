//! CPU affinity of the calling process (`sched_getaffinity` / `sched_setaffinity`) and the
//! nice value and scheduling class of one of its threads (`setpriority`,
//! `sched_setscheduler`).

/// The CPUs the calling process may run on, ascending.
pub fn get_affinity() -> std::io::Result<Vec<usize>> {
    affinity_of(0)
}

/// Restricts the calling process (its main thread and threads created later) to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    set_affinity_of(0, cpus)
}

/// Restricts the task (thread) `tid` to `cpus` (`0`: the calling thread). The parent moves a
/// held child's every task this way (`pqperf_measure::runner`): the child cannot, its
/// seccomp filter kills it at `sched_setaffinity`.
pub fn set_affinity_of(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("CPU {c} out of range"),
            ));
        }
        // SAFETY: c < CPU_SETSIZE, `set` is a valid set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the stated size; pid 0 = calling thread.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether `e` (from [`set_affinity_of`] or [`affinity_of`]) says the task is gone (`ESRCH`).
pub fn task_gone(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ESRCH)
}

/// Pins the calling thread to one CPU (no system call when it is pinned there already, as a
/// contained child is by its parent: inside the sandbox `sched_setaffinity` is forbidden).
pub fn pin_to(cpu: usize) -> std::io::Result<()> {
    if get_affinity().is_ok_and(|a| a == [cpu]) {
        return Ok(());
    }
    set_affinity(&[cpu])
}

/// The CPUs the task `tid` may run on, ascending (`0`: the calling thread; an error for a
/// task that is gone).
pub fn affinity_of(tid: i32) -> std::io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is valid and writable for size_of::<cpu_set_t>() bytes; tid 0 = self.
    let rc =
        unsafe { libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET only reads the set; i < CPU_SETSIZE.
    Ok((0..max)
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect())
}

/// CPU the calling thread is running on right now (`sched_getcpu`), if known.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments and no memory effects.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// Sets the nice value of the thread `tid` (`0`: the calling thread; threads and children
/// it starts later inherit it). Lowering it again needs privilege (`RLIMIT_NICE`,
/// `CAP_SYS_NICE`): an unprivileged caller gets `EACCES`.
pub fn set_nice_of(tid: i32, nice: i32) -> std::io::Result<()> {
    let who = libc::id_t::try_from(tid)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "negative tid"))?;
    // SAFETY: plain system call on integers; on Linux PRIO_PROCESS with a thread id applies
    // to that thread only.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, who, nice) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Puts the thread `tid` (`0`: the calling thread) in the `SCHED_IDLE` class when `idle`
/// (it runs only when its CPU has nothing else to run, and a waking normal task preempts it
/// at once; threads and children it starts later inherit the class), else back in
/// `SCHED_OTHER`. Entering `SCHED_IDLE` only ever lowers a thread's priority and needs no
/// privilege; leaving it needs the nice value's permission (`RLIMIT_NICE`, `CAP_SYS_NICE`),
/// else `EPERM`.
pub fn set_idle_of(tid: i32, idle: bool) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    let policy = if idle {
        libc::SCHED_IDLE
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: `param` is a valid sched_param for the call's duration; priority 0 is the only
    // one SCHED_IDLE and SCHED_OTHER accept; on Linux a thread id names that thread only.
    let rc = unsafe { libc::sched_setscheduler(tid, policy, &param) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the thread `tid` (`0`: the calling thread) is in the `SCHED_IDLE` class.
pub fn is_idle(tid: i32) -> std::io::Result<bool> {
    // SAFETY: plain system call on an integer.
    let p = unsafe { libc::sched_getscheduler(tid) };
    if p < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p == libc::SCHED_IDLE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_in_a_thread_and_observe_it() {
        let cpus = get_affinity().unwrap();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        std::thread::spawn(move || {
            pin_to(last).unwrap();
            assert_eq!(get_affinity().unwrap(), vec![last]);
            assert_eq!(current_cpu(), Some(last));
        })
        .join()
        .unwrap();
        assert!(set_affinity(&[100_000]).is_err());
    }

    /// The nice value is the thread's own: a thread that lowers its priority leaves the
    /// calling thread's as it was.
    #[test]
    fn nice_of_one_thread() {
        let nice = |tid: &str| -> i64 {
            let s = std::fs::read_to_string(format!("/proc/{tid}/stat")).unwrap();
            let after = &s[s.rfind(')').unwrap() + 2..];
            after.split(' ').nth(16).unwrap().parse().unwrap()
        };
        let mine = nice("thread-self");
        let other = std::thread::spawn(move || {
            set_nice_of(0, (mine + 5).min(19) as i32).unwrap();
            nice("thread-self")
        })
        .join()
        .unwrap();
        assert_eq!(other, (mine + 5).min(19));
        assert_eq!(nice("thread-self"), mine);
    }

    /// The scheduling class is the thread's own too, and what it starts inherits it: a
    /// thread put in SCHED_IDLE leaves the calling thread in its class, and a child process
    /// it starts (a shell reading its own policy from /proc) is in SCHED_IDLE.
    #[test]
    fn idle_class_of_one_thread_and_its_children() {
        assert!(!is_idle(0).unwrap());
        let (own, child) = std::thread::spawn(|| {
            set_idle_of(0, true).unwrap();
            // Field 41 of /proc/<pid>/stat: the policy (5: SCHED_IDLE).
            let out = std::process::Command::new("sh")
                .args(["-c", "cut -d' ' -f41 /proc/self/stat"])
                .output()
                .unwrap();
            (
                is_idle(0).unwrap(),
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
            )
        })
        .join()
        .unwrap();
        assert!(own);
        assert_eq!(child, libc::SCHED_IDLE.to_string());
        assert!(!is_idle(0).unwrap());
    }
}
