//! The unsafe steps of containing a child that runs candidate code: what runs between `fork`
//! and `exec` (own session, parent-death signal, new namespaces with the PID namespace's init
//! forked off, a fresh `/proc`, rlimits, the CPU pin, descriptors ≥ 3 closed on exec except the
//! result descriptor, joining a pids cgroup, the Landlock domain and the seccomp filter),
//! adopting the inherited result descriptor in the child, and the termination handler that
//! kills the live child groups when pqperf is interrupted.
//!
//! The Landlock ruleset and the seccomp program are built by the parent before the fork
//! (the safe `landlock` and `seccompiler` crates); the forked child only hands them to the
//! kernel, so nothing between `fork` and `exec` allocates. The safe orchestration around it
//! (pipes, capture, waits, group kill, what is in force) is [`crate::untrusted`].

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sched::CloneFlags;
use nix::sys::resource::{Resource, setrlimit};

/// Resource limits of a contained child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// RLIMIT_AS bytes (None: unlimited).
    pub address_space: Option<u64>,
    /// RLIMIT_FSIZE bytes.
    pub file_size: u64,
    /// RLIMIT_NOFILE.
    pub open_files: u64,
    /// RLIMIT_NPROC (enforced by the kernel for non-root users only) and the pids cgroup limit.
    pub processes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            address_space: Some(8 << 30),
            file_size: 1 << 30,
            open_files: 256,
            processes: 64,
        }
    }
}

/// Everything [`prepare`] installs into a `Command`.
#[derive(Debug, Clone)]
pub struct PreExec {
    /// Namespaces to unshare (empty: none). With `CLONE_NEWPID` the child forks twice more:
    /// the first process stays outside and waits for the second (the namespace's init, a
    /// reaper), which waits for the third (the program, PID 2); the first exits with the
    /// program's status.
    pub namespaces: CloneFlags,
    /// Make every mount private in the new mount namespace (and, with a new PID namespace,
    /// mount a fresh `/proc` that shows only the namespace's processes).
    pub private_mounts: bool,
    /// Rlimits (None: leave the parent's).
    pub limits: Option<Limits>,
    /// Descriptor that must survive `exec` (the write end of the result pipe; close-on-exec in
    /// the parent so that concurrently spawned children never inherit it).
    pub keep_fd: Option<RawFd>,
    /// A second descriptor that must survive `exec` (the read end of the control pipe of a
    /// conducted child, `untrusted::run_conducted`).
    pub control_fd: Option<RawFd>,
    /// An open `cgroup.procs` of a pids cgroup the child joins.
    pub cgroup_procs: Option<RawFd>,
    /// `PR_SET_PDEATHSIG(SIGKILL)`: the child dies with the thread that started it.
    pub parent_death: bool,
    /// Mark every descriptor ≥ 3 close-on-exec (except `keep_fd`), so that nothing pqperf
    /// inherited from its own caller reaches the program.
    pub close_fds: bool,
    /// Pin the child to this CPU before the filter forbids `sched_setaffinity`.
    pub cpu: Option<usize>,
    /// A Landlock ruleset to enforce on the child (`landlock_restrict_self`).
    pub landlock: Option<Arc<OwnedFd>>,
    /// Seccomp BPF programs to install last (each one stacked on the previous).
    pub seccomp: Option<Arc<Vec<seccompiler::BpfProgram>>>,
    /// Start the program without any capability: the bounding set emptied, the securebits
    /// that deny root its capabilities on `exec` set and locked, the ambient set cleared and
    /// the effective, permitted and inheritable sets zeroed, with `no_new_privs` (a root
    /// pqperf's child is uid 0 without a single capability). The PID namespace's init drops
    /// them too.
    pub drop_capabilities: bool,
    /// Where pqperf's argv and environment strings lie in its memory: the PID namespace's
    /// init (a fork of pqperf that never executes anything) zeroes them, so that its
    /// `/proc/1/cmdline` and `/proc/1/environ` show nothing of pqperf; it also names itself
    /// `init` and becomes non-dumpable.
    pub hide_from_init: Option<ArgEnvRanges>,
}

impl Default for PreExec {
    fn default() -> Self {
        PreExec {
            namespaces: CloneFlags::empty(),
            private_mounts: false,
            limits: None,
            keep_fd: None,
            control_fd: None,
            cgroup_procs: None,
            parent_death: false,
            close_fds: false,
            cpu: None,
            landlock: None,
            seccomp: None,
            drop_capabilities: false,
            hide_from_init: None,
        }
    }
}

/// The number a process exits with when a step between fork and exec failed in the
/// intermediate process of a PID namespace (the init could not be started).
const INTERMEDIATE_FAILURE: i32 = 125;

/// Installs the pre-exec steps (see [`PreExec`]). A failing step makes `spawn` fail with its
/// error.
pub fn prepare(cmd: &mut Command, p: &PreExec) {
    let p = p.clone();
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // operations are allowed. It calls only raw system calls through nix/libc (setsid, write,
    // prctl, getppid, unshare, fork, waitpid, mount with static C strings, setrlimit,
    // sched_setaffinity on a stack cpu_set_t, close_range, fcntl, capset on stack structs,
    // landlock_restrict_self, seccomp), writes zeros over pqperf's argv and environment
    // strings in the init's own copy of that memory, and allocates nothing: `p` (the ruleset descriptor and the BPF program
    // included) was built and cloned before the fork and is only read. Errors are
    // `io::Error::last_os_error()` values, which do not allocate.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            if let Some(fd) = p.cgroup_procs {
                // "0" moves the writing process (this child) into the cgroup.
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if p.parent_death {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have gone between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(INTERMEDIATE_FAILURE);
                }
            }
            setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
            if !p.namespaces.is_empty() {
                nix::sched::unshare(p.namespaces)?;
                if p.namespaces.contains(CloneFlags::CLONE_NEWPID) {
                    become_pid_namespace_init(&p)?;
                }
                if p.private_mounts && p.namespaces.contains(CloneFlags::CLONE_NEWNS) {
                    nix::mount::mount(
                        None::<&str>,
                        c"/",
                        None::<&str>,
                        nix::mount::MsFlags::MS_REC | nix::mount::MsFlags::MS_PRIVATE,
                        None::<&str>,
                    )?;
                    if p.namespaces.contains(CloneFlags::CLONE_NEWPID) {
                        use nix::mount::MsFlags;
                        nix::mount::mount(
                            Some(c"proc"),
                            c"/proc",
                            Some(c"proc"),
                            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
                            None::<&str>,
                        )?;
                        // Landlock ignores rules on a covered mount point: the fresh /proc
                        // needs its own rule (read only), added to this child's ruleset.
                        if let Some(rs) = &p.landlock {
                            use std::os::fd::AsRawFd;
                            allow_read_beneath(rs.as_raw_fd(), c"/proc")?;
                        }
                    }
                }
            }
            if let Some(l) = p.limits {
                if let Some(a) = l.address_space {
                    setrlimit(Resource::RLIMIT_AS, a, a)?;
                }
                setrlimit(Resource::RLIMIT_FSIZE, l.file_size, l.file_size)?;
                setrlimit(Resource::RLIMIT_NOFILE, l.open_files, l.open_files)?;
                setrlimit(Resource::RLIMIT_NPROC, l.processes, l.processes)?;
            }
            if let Some(c) = p.cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                if c >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
                    return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
                }
                libc::CPU_SET(c, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if p.close_fds {
                close_on_exec_from_3()?;
            }
            for fd in [p.keep_fd, p.control_fd].into_iter().flatten() {
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if p.drop_capabilities {
                drop_capabilities()?;
            }
            if p.drop_capabilities || p.landlock.is_some() || p.seccomp.is_some() {
                // Required by Landlock and seccomp for a process without CAP_SYS_ADMIN; and
                // no setuid program or file capability can give the child privileges back.
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(rs) = &p.landlock {
                use std::os::fd::AsRawFd;
                if libc::syscall(libc::SYS_landlock_restrict_self, rs.as_raw_fd(), 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(progs) = &p.seccomp {
                for bpf in progs.iter() {
                    seccompiler::apply_filter(bpf).map_err(|e| match e {
                        seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => io,
                        _ => std::io::Error::from_raw_os_error(libc::EINVAL),
                    })?;
                }
            }
            Ok(())
        });
    }
}

/// After `unshare(CLONE_NEWPID)`: fork the namespace's init, which forks the program's
/// process (PID 2 of the namespace; this function returns in it). The calling process turns
/// into a waiter outside the namespace that closes every descriptor but the read end of a
/// status pipe (so that `spawn` learns of the `exec` from the program's process alone), waits
/// for the init and exits with the program's status. The init closes every descriptor but the
/// pipe's write end, reaps every process of the namespace until the program's has ended, sends
/// its raw wait status over the pipe and exits (which kills what is left of the namespace).
/// The program is not the init, so signals it raises at itself (`raise`, `abort`) act as
/// usual: a namespace's init ignores signals it has no handler for. The init shows nothing of
/// pqperf to the program: it zeroes pqperf's argv and environment strings in its memory
/// (`p.hide_from_init`; its `/proc/1/cmdline` and `/proc/1/environ`), names itself `init`,
/// becomes non-dumpable (no `ptrace`, `/proc/1/mem` or `/proc/1/environ` for the program) and
/// drops its capabilities when the program does.
///
/// # Safety
/// Only between fork and exec of a single-threaded child (see [`prepare`]).
unsafe fn become_pid_namespace_init(p: &PreExec) -> std::io::Result<()> {
    let parent_death = p.parent_death;
    // SAFETY: see the function's contract; fork in the single-threaded child is safe, and
    // every branch uses only async-signal-safe calls on stack memory.
    unsafe {
        let death_signal = || {
            !parent_death
                || libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) == 0
        };
        let close_all_but = |keep: i32| {
            if keep > 0 {
                libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
            }
            libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
        };
        let mut fds = [0i32; 2];
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let (rd, wr) = (fds[0], fds[1]);
        let pid = libc::fork();
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            // The init: it dies with the waiter (whose own death signal ties it to pqperf).
            libc::close(rd);
            if !death_signal() {
                libc::_exit(INTERMEDIATE_FAILURE);
            }

            // The program waits until the init has hidden pqperf (one byte on `ready`).
            let mut ready = [0i32; 2];
            if libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                libc::_exit(INTERMEDIATE_FAILURE);
            }
            let prog = libc::fork();
            if prog < 0 {
                libc::_exit(INTERMEDIATE_FAILURE);
            }
            if prog == 0 {
                // The program's process: it goes on to exec, and dies with the init.
                libc::close(wr);
                libc::close(ready[1]);
                if !death_signal() {
                    return Err(std::io::Error::last_os_error());
                }
                let mut b = 0u8;
                let n = loop {
                    let n = libc::read(ready[0], (&mut b as *mut u8).cast(), 1);
                    if n >= 0 || *libc::__errno_location() != libc::EINTR {
                        break n;
                    }
                };
                libc::close(ready[0]);
                if n != 1 {
                    return Err(std::io::Error::from_raw_os_error(libc::ECHILD));
                }
                return Ok(());
            }
            libc::close(ready[0]);
            // Only the init from here (the program's process needs its capabilities until
            // its own steps are done).
            if let Some(h) = p.hide_from_init {
                // This process's own copy of pqperf's stack: nothing reads it any more.
                for (a, b) in [h.args, h.env] {
                    std::ptr::write_bytes(a as *mut u8, 0, b - a);
                }
            }
            libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0);
            if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
                libc::kill(prog, libc::SIGKILL);
                libc::_exit(INTERMEDIATE_FAILURE);
            }
            if p.drop_capabilities && drop_capabilities().is_err() {
                libc::kill(prog, libc::SIGKILL);
                libc::_exit(INTERMEDIATE_FAILURE);
            }
            libc::write(ready[1], b"1".as_ptr().cast(), 1);
            libc::close(ready[1]);
            close_all_but(wr);
            let mut st = 0;
            loop {
                let r = libc::waitpid(-1, &mut st, 0);
                if r == prog {
                    break;
                }
                if r < 0 && *libc::__errno_location() != libc::EINTR {
                    libc::_exit(INTERMEDIATE_FAILURE);
                }
            }
            let bytes = st.to_ne_bytes();
            libc::write(wr, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
        libc::close(wr);
        close_all_but(rd);
        let mut st = 0;
        loop {
            let r = libc::waitpid(pid, &mut st, 0);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(INTERMEDIATE_FAILURE);
            }
        }
        // The program's status when the init reported it; otherwise the init's own (killed
        // with the group on a timeout, or failed before the program started).
        let mut buf = [0u8; 4];
        if libc::read(rd, buf.as_mut_ptr().cast(), buf.len()) == buf.len() as isize {
            st = i32::from_ne_bytes(buf);
        }
        if libc::WIFEXITED(st) {
            libc::_exit(libc::WEXITSTATUS(st));
        }
        if libc::WIFSIGNALED(st) {
            // Die of the same signal, so that the parent sees what the program died of.
            let sig = libc::WTERMSIG(st);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(INTERMEDIATE_FAILURE)
    }
}

/// Where this process's argv and environment strings lie in its memory (`[start, end)`
/// byte addresses, `/proc/self/stat` fields 48–51).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgEnvRanges {
    /// `arg_start`, `arg_end`.
    pub args: (usize, usize),
    /// `env_start`, `env_end`.
    pub env: (usize, usize),
}

/// This process's [`ArgEnvRanges`], only when both lie inside one writable mapping of
/// `/proc/self/maps` (the stack), so that zeroing them cannot fault; `None` otherwise (a
/// kernel or emulator that does not report them).
pub fn arg_env_ranges() -> Option<ArgEnvRanges> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields from 3 on follow the command name's closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3)?.parse::<usize>().ok();
    let r = ArgEnvRanges {
        args: (field(48)?, field(49)?),
        env: (field(50)?, field(51)?),
    };
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let writable = |(a, b): (usize, usize)| {
        a > 0
            && a < b
            && maps.lines().any(|l| {
                let mut w = l.split_whitespace();
                let (Some(range), Some(perms)) = (w.next(), w.next()) else {
                    return false;
                };
                let Some((lo, hi)) = range.split_once('-') else {
                    return false;
                };
                let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                else {
                    return false;
                };
                perms.starts_with("rw") && lo <= a && b <= hi
            })
    };
    (writable(r.args) && writable(r.env)).then_some(r)
}

/// `__user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// `__user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Drops every capability of the calling process for good: each capability of the bounding
/// set (`PR_CAPBSET_DROP`), the securebits that give root its capabilities on `exec` (set and
/// locked: `SECBIT_NOROOT`, `SECBIT_NO_CAP_AMBIENT_RAISE`, `SECBIT_KEEP_CAPS` off), the ambient
/// set, and the effective, permitted and inheritable sets (`capset` with zeros). Without
/// `CAP_SETPCAP` (an unprivileged pqperf without a user namespace) the bounding set and the
/// securebits cannot change: that is accepted only when the process is not root, whose `exec`
/// grants nothing from them under `no_new_privs`.
///
/// # Safety
/// Only between fork and exec (see [`prepare`]); raw system calls on stack data.
unsafe fn drop_capabilities() -> std::io::Result<()> {
    const SECBITS: libc::c_ulong = (1 << 0) // SECBIT_NOROOT
        | (1 << 1) // SECBIT_NOROOT_LOCKED
        | (1 << 5) // SECBIT_KEEP_CAPS_LOCKED
        | (1 << 6) // SECBIT_NO_CAP_AMBIENT_RAISE
        | (1 << 7); // SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    // SAFETY: see the function's contract.
    unsafe {
        let root = libc::geteuid() == 0;
        let errno = || *libc::__errno_location();
        let tolerated = |e: i32| e == libc::EPERM && !root;
        for cap in 0..64 as libc::c_ulong {
            // 1: in the set, 0: not, -1 (EINVAL): past the kernel's last capability.
            let r = libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0);
            if r < 0 {
                break;
            }
            if r == 1 && libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                let e = errno();
                if !tolerated(e) {
                    return Err(std::io::Error::from_raw_os_error(e));
                }
            }
        }
        if libc::prctl(libc::PR_SET_SECUREBITS, SECBITS, 0, 0, 0) != 0 {
            let e = errno();
            if !tolerated(e) {
                return Err(std::io::Error::from_raw_os_error(e));
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
            && errno() != libc::EINVAL
        {
            return Err(std::io::Error::last_os_error());
        }
        let mut hdr = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &mut hdr as *mut CapHeader, data.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// `landlock_path_beneath_attr` (packed, as the kernel declares it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Adds a read-and-execute rule for `dir` to the Landlock ruleset `ruleset` with raw system
/// calls (no allocation).
///
/// # Safety
/// Only between fork and exec (see [`prepare`]).
unsafe fn allow_read_beneath(ruleset: RawFd, dir: &std::ffi::CStr) -> std::io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;
    const READ: u64 = 1 | 4 | 8; // EXECUTE | READ_FILE | READ_DIR
    // SAFETY: `dir` is a NUL-terminated string; the attribute lives on the stack for the
    // call; the descriptor is closed before returning.
    unsafe {
        let fd = libc::open(
            dir.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let attr = PathBeneathAttr {
            allowed_access: READ,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        );
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(e);
        }
        Ok(())
    }
}

/// Marks every descriptor from 3 up close-on-exec (`close_range`, or a loop up to the
/// descriptor limit where the kernel lacks `CLOSE_RANGE_CLOEXEC`).
///
/// # Safety
/// Only between fork and exec (see [`prepare`]).
unsafe fn close_on_exec_from_3() -> std::io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;
    // SAFETY: raw system calls on descriptor numbers only.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) == 0 {
            return Ok(());
        }
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let top = rl.rlim_cur.min(1 << 20) as i32;
        for fd in 3..top {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        Ok(())
    }
}

/// Removes `names` from the environment, so that candidate code loaded later cannot look up
/// the result descriptor with `getenv`.
pub fn forget_env(names: &[&str]) {
    for n in names {
        // SAFETY: called by `untrusted::child_enter` first thing in a child process, before
        // any candidate library is loaded and before the child starts a thread, so no other
        // thread reads or writes the environment concurrently.
        unsafe { std::env::remove_var(n) };
    }
}

/// Adopts the result descriptor the parent announced (`fd`), marking it close-on-exec so that
/// programs the candidate might execute do not inherit it. Refuses 0/1/2 and anything that is
/// not an open pipe.
pub fn adopt_result_fd(fd: RawFd) -> Result<File, String> {
    adopt_pipe_fd(fd, "result")
}

/// Adopts the control descriptor the parent announced (the read end of the control pipe of a
/// conducted child), as [`adopt_result_fd`] does.
pub fn adopt_control_fd(fd: RawFd) -> Result<File, String> {
    adopt_pipe_fd(fd, "control")
}

fn adopt_pipe_fd(fd: RawFd, what: &str) -> Result<File, String> {
    if fd <= 2 {
        return Err(format!("{what} descriptor {fd} is a standard stream"));
    }
    // SAFETY: libc::stat is plain data; all-zero bytes are a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat only writes into the stat buffer we own; a closed fd returns -1.
    let rc = unsafe { libc::fstat(fd, &mut st) };
    if rc != 0 || (st.st_mode & libc::S_IFMT) != libc::S_IFIFO {
        return Err(format!("{what} descriptor {fd} is not an open pipe"));
    }
    // SAFETY: fd is open (fstat succeeded); fcntl only changes its flags.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    // SAFETY: the parent handed this descriptor to this process for this purpose only; nothing
    // else in the child owns it, so the File becomes its single owner.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The Landlock ABI of the running kernel (0: none).
pub fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the version query takes no attribute pointer (NULL, size 0) and touches no
    // memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    v.max(0)
}

/// What a child may do below a folder it may write: everything Landlock governs except
/// making character and block devices (`MAKE_CHAR`, `MAKE_BLOCK`), which stay denied
/// everywhere: scratch is `nodev` for the child whatever its privileges.
fn writable_access(abi: landlock::ABI) -> landlock::BitFlags<landlock::AccessFs> {
    use landlock::{Access, AccessFs};
    AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// A Landlock ruleset for one child (built in the parent, enforced by [`prepare`]): read and
/// execute only below `readable`, read and write (no device nodes) only below `writable`, no TCP bind or
/// connect, no abstract unix sockets and no signals to processes outside the child's domain.
/// `None` when the kernel has no Landlock.
pub fn landlock_ruleset(
    readable: &[PathBuf],
    writable: &[PathBuf],
) -> Result<Option<OwnedFd>, String> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
        path_beneath_rules,
    };
    let abi = ABI::V6;
    let err = |e: landlock::RulesetError| format!("landlock: {e}");
    let created = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(err)?
        .scope(Scope::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))
        .map_err(err)?
        .add_rules(path_beneath_rules(writable, writable_access(abi)))
        .map_err(err)?;
    Ok(created.into())
}

/// The system calls the first seccomp filter forbids by killing the process (`SIGSYS`):
/// unix-domain sockets (a socket file of the host is reachable from any network namespace),
/// changes of the CPU affinity and of the scheduling priority or policy, and `io_uring`
/// (whose operations bypass the system-call filter).
pub const KILLED_CALLS: &[&str] = &[
    "socket(AF_UNIX)",
    "sched_setaffinity",
    "setpriority",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "io_uring_setup",
];

/// The system calls the second filter refuses with `EPERM` (a benchmark needs none of them;
/// the call fails as it would for an unprivileged process, so honest code that probes one
/// goes on): clock and tick changes, the kernel keyrings (a key outlives the process), device
/// nodes, the kernel log, inode flag changes (`chattr +i` would make scratch unremovable),
/// mounts, swap, modules, kexec, reboot, process accounting and quotas.
pub const REFUSED_CALLS: &[&str] = &[
    "adjtimex",
    "clock_adjtime",
    "settimeofday",
    "clock_settime",
    "add_key",
    "keyctl",
    "request_key",
    "mknod(S_IFCHR, S_IFBLK)",
    "mknodat(S_IFCHR, S_IFBLK)",
    "syslog",
    "ioctl(FS_IOC_SETFLAGS)",
    "ioctl(FS_IOC_FSSETXATTR)",
    "mount",
    "umount2",
    "pivot_root",
    "swapon",
    "swapoff",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "acct",
    "quotactl",
];

/// The seccomp programs every contained child gets, in order: [`KILLED_CALLS`] (the process
/// is killed with `SIGSYS`), then [`REFUSED_CALLS`] (`EPERM`). Stacked filters: the kernel
/// applies the most severe action any of them returns.
pub fn seccomp_programs() -> Result<Vec<seccompiler::BpfProgram>, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let e = |e: seccompiler::BackendError| e.to_string();
    let arg_is = |arg: u8, v: u64| -> Result<SeccompRule, String> {
        SeccompRule::new(vec![
            SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, v).map_err(e)?,
        ])
        .map_err(e)
    };
    let unix = arg_is(0, libc::AF_UNIX as u64)?;
    let kill_always = [
        libc::SYS_sched_setaffinity,
        libc::SYS_setpriority,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
        libc::SYS_io_uring_setup,
    ];
    // `_IOW('f', 2, long)` and its 32-bit form, `_IOW('X', 32, struct fsxattr)`.
    const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
    const FS_IOC32_SETFLAGS: u64 = 0x4004_6602;
    const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;
    let ioctl = vec![
        arg_is(1, FS_IOC_SETFLAGS)?,
        arg_is(1, FS_IOC32_SETFLAGS)?,
        arg_is(1, FS_IOC_FSSETXATTR)?,
    ];
    // Device nodes only (S_IFCHR, S_IFBLK in the mode): FIFOs and regular files stay allowed
    // (valgrind makes its vgdb FIFOs with mknod).
    let device_mode = |arg: u8| -> Result<Vec<SeccompRule>, String> {
        let ifmt = libc::S_IFMT as u64;
        [libc::S_IFCHR as u64, libc::S_IFBLK as u64]
            .into_iter()
            .map(|t| {
                SeccompRule::new(vec![
                    SeccompCondition::new(
                        arg,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(ifmt),
                        t,
                    )
                    .map_err(e)?,
                ])
                .map_err(e)
            })
            .collect()
    };
    let eperm_always = [
        libc::SYS_adjtimex,
        libc::SYS_clock_adjtime,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_add_key,
        libc::SYS_keyctl,
        libc::SYS_request_key,
        libc::SYS_syslog,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_acct,
        libc::SYS_quotactl,
    ];
    let mut kill = std::collections::BTreeMap::new();
    let mut eperm = std::collections::BTreeMap::new();
    // x86-64 also accepts the x32 numbering of the same calls.
    let x32: &[i64] = if cfg!(target_arch = "x86_64") {
        &[0, 0x4000_0000]
    } else {
        &[0]
    };
    for bit in x32 {
        kill.insert(libc::SYS_socket | bit, vec![unix.clone()]);
        for nr in kill_always {
            kill.insert(nr | bit, vec![]);
        }
        eperm.insert(libc::SYS_ioctl | bit, ioctl.clone());
        eperm.insert(libc::SYS_mknodat | bit, device_mode(2)?);
        #[cfg(target_arch = "x86_64")]
        eperm.insert(libc::SYS_mknod | bit, device_mode(1)?);
        for nr in eperm_always {
            eperm.insert(nr | bit, vec![]);
        }
    }
    let build = |rules, action| -> Result<seccompiler::BpfProgram, String> {
        let f = SeccompFilter::new(rules, SeccompAction::Allow, action, arch)
            .map_err(|e| e.to_string())?;
        seccompiler::BpfProgram::try_from(f).map_err(|e| e.to_string())
    };
    Ok(vec![
        build(kill, SeccompAction::KillProcess)?,
        build(eperm, SeccompAction::Errno(libc::EPERM as u32))?,
    ])
}

/// The process-creating system calls the filters of a timing child (a conducted driver,
/// `untrusted::run_conducted`) add: a benchmark never needs a process of its own, and a
/// helper forked and reaped inside a timed window would take its CPU time out of the
/// parent's readings. `fork`, `vfork` and `clone` without `CLONE_THREAD` kill the process
/// (`SIGSYS`); `clone3`, whose flags lie in memory a filter cannot read, fails with `ENOSYS`,
/// so that glibc's thread creation falls back to `clone` (with `CLONE_THREAD`: threads keep
/// working, and their CPU time stays in the process's).
pub const NO_PROCESS_CALLS: &[&str] = &[
    "fork",
    "vfork",
    "clone without CLONE_THREAD",
    "clone3 (ENOSYS, glibc falls back to clone)",
];

/// [`seccomp_programs`] and two more for a timing child ([`NO_PROCESS_CALLS`]): process
/// creation kills the process, `clone3` fails with `ENOSYS`.
pub fn seccomp_timing_programs() -> Result<Vec<seccompiler::BpfProgram>, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let e = |e: seccompiler::BackendError| e.to_string();
    // clone's first argument holds its flags on x86-64 and arm64 alike.
    let no_thread = SeccompRule::new(vec![
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
            0,
        )
        .map_err(e)?,
    ])
    .map_err(e)?;
    let mut kill = std::collections::BTreeMap::new();
    let mut nosys = std::collections::BTreeMap::new();
    let x32: &[i64] = if cfg!(target_arch = "x86_64") {
        &[0, 0x4000_0000]
    } else {
        &[0]
    };
    for bit in x32 {
        kill.insert(libc::SYS_clone | bit, vec![no_thread.clone()]);
        #[cfg(target_arch = "x86_64")]
        {
            kill.insert(libc::SYS_fork | bit, vec![]);
            kill.insert(libc::SYS_vfork | bit, vec![]);
        }
        nosys.insert(libc::SYS_clone3 | bit, vec![]);
    }
    let build = |rules, action| -> Result<seccompiler::BpfProgram, String> {
        let f = SeccompFilter::new(rules, SeccompAction::Allow, action, arch)
            .map_err(|e| e.to_string())?;
        seccompiler::BpfProgram::try_from(f).map_err(|e| e.to_string())
    };
    let mut v = seccomp_programs()?;
    v.push(build(kill, SeccompAction::KillProcess)?);
    v.push(build(nosys, SeccompAction::Errno(libc::ENOSYS as u32))?);
    Ok(v)
}

/// Process groups of live children, killed by the termination handler.
static LIVE: [AtomicI32; 256] = [const { AtomicI32::new(0) }; 256];

/// Registers a live child's process group (a no-op when the table is full: the child still
/// dies with pqperf through its parent-death signal).
pub fn register_group(pgid: i32) {
    for s in &LIVE {
        if s.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Forgets a child's process group once it is gone.
pub fn unregister_group(pgid: i32) {
    for s in &LIVE {
        if s.compare_exchange(pgid, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

extern "C" fn on_termination(sig: libc::c_int) {
    // SAFETY: a signal handler: only atomics and async-signal-safe calls (killpg, signal,
    // raise).
    unsafe {
        for s in &LIVE {
            let g = s.load(Ordering::SeqCst);
            if g > 0 {
                libc::killpg(g, libc::SIGKILL);
            }
        }
        // Said, not silent (write(2) is async-signal-safe).
        let msg: &[u8] = match sig {
            libc::SIGINT => b"\npqperf: interrupted (SIGINT); its child processes were ended\n",
            libc::SIGTERM => b"\npqperf: terminated (SIGTERM); its child processes were ended\n",
            _ => b"\npqperf: hung up (SIGHUP); its child processes were ended\n",
        };
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// SIGINT, SIGTERM and SIGHUP to pqperf first kill every live child group, then end pqperf
/// with the signal's default action.
pub fn install_termination_handler() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that uses only async-signal-safe calls; sigaction with a
        // zeroed, filled-in struct.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_termination as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The host clock's tick in microseconds (`adjtimex` with no mode bits: a read-only query),
/// `None` when the kernel refuses the query. A candidate must not be able to change it (the
/// seccomp filter and the dropped capabilities refuse `adjtimex(ADJ_TICK)`).
pub fn host_clock_tick() -> Option<i64> {
    // SAFETY: timex is plain data; all-zero bytes are a valid value (modes = 0: query only).
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: adjtimex only writes into `tx`, which we own.
    let r = unsafe { libc::adjtimex(&mut tx) };
    (r >= 0).then_some(tx.tick as i64)
}
