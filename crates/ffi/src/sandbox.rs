//! The unsafe steps of containing a child that runs candidate code: what runs between `fork`
//! and `exec` (own session, new namespaces, rlimits, the inherited result descriptor, joining a
//! pids cgroup), adopting the inherited result descriptor in the child, and Landlock write
//! confinement (safe crate, applied by the child itself before it loads candidate code).
//!
//! The safe orchestration around it (pipes, capture, waits, group kill) is
//! [`crate::untrusted`].

use std::fs::File;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

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
    /// Namespaces to unshare (empty: none).
    pub namespaces: CloneFlags,
    /// Make every mount private in the new mount namespace.
    pub private_mounts: bool,
    /// Rlimits (None: leave the parent's).
    pub limits: Option<Limits>,
    /// Descriptor that must survive `exec` (the write end of the result pipe; close-on-exec in
    /// the parent so that concurrently spawned children never inherit it).
    pub keep_fd: Option<RawFd>,
    /// An open `cgroup.procs` of a pids cgroup the child joins.
    pub cgroup_procs: Option<RawFd>,
}

/// Installs the pre-exec steps: `setsid`, optional cgroup join, namespaces, rlimits, core dumps
/// off, and clears close-on-exec on `keep_fd`. A failing step makes `spawn` fail with its
/// error.
pub fn prepare(cmd: &mut Command, p: &PreExec) {
    let p = p.clone();
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // operations are allowed. It calls only raw system calls through nix/libc (setsid, write,
    // unshare, mount with static C strings, setrlimit, fcntl) and allocates nothing: `p` was
    // cloned before the fork and is only read.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            if let Some(fd) = p.cgroup_procs {
                // "0" moves the writing process (this child) into the cgroup.
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if !p.namespaces.is_empty() {
                nix::sched::unshare(p.namespaces)?;
                if p.private_mounts && p.namespaces.contains(CloneFlags::CLONE_NEWNS) {
                    nix::mount::mount(
                        None::<&str>,
                        c"/",
                        None::<&str>,
                        nix::mount::MsFlags::MS_REC | nix::mount::MsFlags::MS_PRIVATE,
                        None::<&str>,
                    )?;
                }
            }
            setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
            if let Some(l) = p.limits {
                if let Some(a) = l.address_space {
                    setrlimit(Resource::RLIMIT_AS, a, a)?;
                }
                setrlimit(Resource::RLIMIT_FSIZE, l.file_size, l.file_size)?;
                setrlimit(Resource::RLIMIT_NOFILE, l.open_files, l.open_files)?;
                setrlimit(Resource::RLIMIT_NPROC, l.processes, l.processes)?;
            }
            if let Some(fd) = p.keep_fd
                && libc::fcntl(fd, libc::F_SETFD, 0) == -1
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Removes `names` from the environment, so that candidate code loaded later cannot look up
/// the result descriptor or the sandbox settings with `getenv`.
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
    if fd <= 2 {
        return Err(format!("result descriptor {fd} is a standard stream"));
    }
    // SAFETY: libc::stat is plain data; all-zero bytes are a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat only writes into the stat buffer we own; a closed fd returns -1.
    let rc = unsafe { libc::fstat(fd, &mut st) };
    if rc != 0 || (st.st_mode & libc::S_IFMT) != libc::S_IFIFO {
        return Err(format!("result descriptor {fd} is not an open pipe"));
    }
    // SAFETY: fd is open (fstat succeeded); fcntl only changes its flags.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    // SAFETY: the parent handed this descriptor to this process for this purpose only; nothing
    // else in the child owns it, so the File becomes its single owner.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Landlock: read and execute everywhere, write only below `writable` (plus `/dev/null`),
/// no TCP bind/connect. Returns what is in force (`landlock-abi-N` fully or partially, or
/// why not).
pub fn confine_writes(writable: &[PathBuf]) -> Result<String, String> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V5;
    let err = |e: landlock::RulesetError| format!("landlock: {e}");
    let mut rw: Vec<PathBuf> = writable.to_vec();
    rw.push(PathBuf::from("/dev/null"));
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(err)?
        .add_rules(path_beneath_rules(&rw, AccessFs::from_all(abi)))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => "landlock".to_string(),
        RulesetStatus::PartiallyEnforced => "landlock (partial: older kernel ABI)".to_string(),
        RulesetStatus::NotEnforced => "none (kernel without Landlock)".to_string(),
    })
}
