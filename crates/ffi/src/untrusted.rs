//! Running a child that executes candidate code (driver, KAT child, hash profiler,
//! calibrations), the one mechanism all spawn sites use.
//!
//! Parent side ([`run`]): the child reports over a private pipe (an inherited descriptor that
//! is not 0/1/2, announced in `PQPERF_RESULT_FD`), never over stdout; its stdout/stderr go to
//! size-capped [`Capture`]s (first and last 64 KiB plus the byte count); it runs in its own
//! session (process group) and, where available, a pids cgroup; the whole group is killed when
//! the child exits or times out, and every wait is bounded. With the sandbox on, the child
//! gets new network and mount namespaces (and a user namespace when not root), rlimits, a
//! private scratch directory as `HOME`/`TMPDIR`, and confines its own writes with Landlock
//! ([`child_enter`]) before it loads candidate code.
//!
//! The process-wide [`Policy`] is set once by the CLI (`--no-sandbox`, `--mem-limit`).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use nix::sched::CloneFlags;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::sandbox::{self, Limits, PreExec};

/// Environment variable with the number of the control descriptor of a conducted child
/// ([`run_conducted`]).
pub const CONTROL_FD_ENV: &str = "PQPERF_CONTROL_FD";
/// Environment variable with the number of the result descriptor.
pub const RESULT_FD_ENV: &str = "PQPERF_RESULT_FD";

/// Bytes kept at each end of a captured stream.
pub const CAPTURE_KEEP: usize = 64 * 1024;
/// Cap of the result channel (pqperf's own lines; more is counted and dropped).
pub const RESULT_CAP: usize = 64 << 20;
/// How long readers may take to drain after the group is killed.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Process-wide containment policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Namespaces, Landlock and rlimits on (`--no-sandbox` turns them off; the own session,
    /// result pipe, capture and group kill stay).
    pub sandbox: bool,
    /// Resource limits applied with the sandbox.
    pub limits: Limits,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            sandbox: true,
            limits: Limits::default(),
        }
    }
}

static POLICY: RwLock<Option<Policy>> = RwLock::new(None);

/// Sets the process-wide policy (CLI flags).
pub fn set_policy(p: Policy) {
    *POLICY.write().unwrap_or_else(|e| e.into_inner()) = Some(p);
}

/// The process-wide policy (default: sandbox on, 8 GiB address space).
pub fn policy() -> Policy {
    POLICY
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_default()
}

/// The pqperf command-line flags that reproduce `p` in a pqperf child process that is itself
/// an orchestrator (shards, demo steps); they follow the subcommand that runs candidate code
/// (`pqperf campaign measure … --no-sandbox --mem-limit 8589934592`).
pub fn policy_args(p: &Policy) -> Vec<String> {
    let mut v = Vec::new();
    if !p.sandbox {
        v.push("--no-sandbox".to_string());
    }
    v.push("--mem-limit".to_string());
    v.push(match p.limits.address_space {
        Some(b) => b.to_string(),
        None => "none".to_string(),
    });
    v
}

/// Whether a `true` started with `pre` exits 0 (the probe of each protection).
fn probe(pre: &PreExec) -> bool {
    let mut c = Command::new("true");
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    sandbox::prepare(&mut c, pre);
    c.status().is_ok_and(|s| s.success())
}

/// Namespaces this kernel lets us create (probed once with `true`): PID (with a fresh
/// `/proc`), network, mount, IPC and UTS, else network and mount only, else none.
fn namespaces() -> CloneFlags {
    static NS: OnceLock<CloneFlags> = OnceLock::new();
    *NS.get_or_init(|| {
        let base = CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWNS;
        let full =
            base | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
        let user = if nix::unistd::geteuid().is_root() {
            CloneFlags::empty()
        } else {
            CloneFlags::CLONE_NEWUSER
        };
        for f in [full | user, base | user] {
            if probe(&PreExec {
                namespaces: f,
                private_mounts: true,
                parent_death: true,
                ..Default::default()
            }) {
                return f;
            }
        }
        CloneFlags::empty()
    })
}

/// System directories and files every child may read (and execute): libraries, the dynamic
/// loader's configuration, devices without host data, `/proc` (its own PID namespace's
/// when that is in force) and `/sys`.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/proc",
    "/sys",
];

/// The Landlock ABI in force (0: none): the kernel's, when a child restricted to the system
/// directories still starts (probed once).
fn landlock_abi() -> i64 {
    static LL: OnceLock<i64> = OnceLock::new();
    *LL.get_or_init(|| {
        let abi = sandbox::landlock_abi();
        if abi == 0 {
            return 0;
        }
        let read: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
        let ok = match sandbox::landlock_ruleset(&read, &[]) {
            Ok(Some(fd)) => probe(&PreExec {
                landlock: Some(Arc::new(fd)),
                ..Default::default()
            }),
            _ => false,
        };
        if ok { abi } else { 0 }
    })
}

/// The seccomp filters, when this host applies them (probed once).
fn seccomp() -> Option<Arc<Vec<seccompiler::BpfProgram>>> {
    static SC: OnceLock<Option<Arc<Vec<seccompiler::BpfProgram>>>> = OnceLock::new();
    SC.get_or_init(|| {
        let progs = Arc::new(sandbox::seccomp_programs().ok()?);
        probe(&PreExec {
            seccomp: Some(progs.clone()),
            ..Default::default()
        })
        .then_some(progs)
    })
    .clone()
}

/// The seccomp filters of a timing child ([`run_conducted`]): [`seccomp`]'s and the refusal of
/// process creation (`sandbox::NO_PROCESS_CALLS`), when this host applies them (probed once
/// with `true`; the ffi test `containment::a_timing_child_keeps_its_threads_but_cannot_fork`
/// shows threads keep working).
fn seccomp_timing() -> Option<Arc<Vec<seccompiler::BpfProgram>>> {
    static SC: OnceLock<Option<Arc<Vec<seccompiler::BpfProgram>>>> = OnceLock::new();
    SC.get_or_init(|| {
        seccomp()?;
        let progs = Arc::new(sandbox::seccomp_timing_programs().ok()?);
        probe(&PreExec {
            seccomp: Some(progs.clone()),
            ..Default::default()
        })
        .then_some(progs)
    })
    .clone()
}

/// Whether a timing child ([`run_conducted`]) runs under the process-wide policy's seccomp
/// filters (the sandbox on and the filters applied on this host): it is then killed at
/// `sched_setaffinity`, so only its parent sets its CPUs.
pub fn timing_seccomp_in_force() -> bool {
    policy().sandbox && seccomp_timing().is_some()
}

/// What a probe child started like every candidate child (the policy's namespaces, the
/// capabilities dropped) reports in its `/proc/self/status`: `Ok(())` when its effective,
/// permitted, inheritable, bounding and ambient sets are all empty and `no_new_privs` is set,
/// else what it had (probed once per sandbox setting).
fn capabilities_probe(sandbox_on: bool) -> Result<(), String> {
    static ON: OnceLock<Result<(), String>> = OnceLock::new();
    static OFF: OnceLock<Result<(), String>> = OnceLock::new();
    let cell = if sandbox_on { &ON } else { &OFF };
    cell.get_or_init(|| {
        let cat = ["/bin/cat", "/usr/bin/cat"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .ok_or("no cat to probe with")?;
        let mut c = Command::new(cat);
        c.arg("/proc/self/status")
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        sandbox::prepare(
            &mut c,
            &PreExec {
                namespaces: if sandbox_on {
                    namespaces()
                } else {
                    CloneFlags::empty()
                },
                private_mounts: sandbox_on,
                parent_death: true,
                drop_capabilities: true,
                ..Default::default()
            },
        );
        let out = c.output().map_err(|e| format!("probe child: {e}"))?;
        let status = String::from_utf8_lossy(&out.stdout);
        let field = |k: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let mut had = Vec::new();
        for k in ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"] {
            match field(k) {
                Some(v) if v.chars().all(|c| c == '0') => {}
                Some(v) => had.push(format!("{}{v}", k)),
                None => had.push(format!("{k} unknown")),
            }
        }
        if field("NoNewPrivs:").as_deref() != Some("1") {
            had.push("no_new_privs not set".into());
        }
        if had.is_empty() {
            Ok(())
        } else {
            Err(had.join(", "))
        }
    })
    .clone()
}

/// Where pqperf's argv and environment lie, for the PID namespace's init to zero (read once;
/// not under an emulator, whose `/proc/self/stat` describes the emulator's memory).
fn hidden_ranges() -> Option<sandbox::ArgEnvRanges> {
    static R: OnceLock<Option<sandbox::ArgEnvRanges>> = OnceLock::new();
    *R.get_or_init(|| {
        if crate::emulation::emulated().is_some() || !crate::emulation::emulator_prefix().is_empty()
        {
            return None;
        }
        sandbox::arg_env_ranges()
    })
}

/// Variables of pqperf's environment a child receives unchanged: the emulator's (an emulated
/// pqperf starts its own children through it, and the emulator needs its sysroot).
const PASSED_ENV: &[&str] = &[
    crate::emulation::EMULATOR_ENV,
    crate::emulation::EMULATED_ENV,
    "QEMU_LD_PREFIX",
];

/// The system part of every child's `PATH`.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A child's `PATH`: [`SYSTEM_PATH`], after the directory of a program that is not pqperf's
/// own (a compiler installed elsewhere finds its assembler and linker beside it).
fn child_path(program: &Path, own: bool) -> std::ffi::OsString {
    let dir = (!own)
        .then(|| std::fs::canonicalize(program).ok())
        .flatten()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .filter(|d| !SYSTEM_PATH.split(':').any(|s| Path::new(s) == d));
    match dir {
        Some(d) => {
            let mut p = d.into_os_string();
            p.push(":");
            p.push(SYSTEM_PATH);
            p
        }
        None => SYSTEM_PATH.into(),
    }
}

/// The whole environment of a child: a fixed `PATH` ([`child_path`]), `LC_ALL=C`, `HOME` and
/// `TMPDIR` (its scratch directory), the result descriptor's number, [`PASSED_ENV`] where
/// set, and the spec's own variables. Nothing else of pqperf's environment reaches a child.
fn child_env(
    scratch: &Path,
    result_fd: i32,
    control_fd: Option<i32>,
    spec: &ChildSpec,
) -> Vec<(String, std::ffi::OsString)> {
    let mut v: Vec<(String, std::ffi::OsString)> = vec![
        (
            "PATH".into(),
            child_path(&spec.program, is_own_program(&spec.program)),
        ),
        ("LC_ALL".into(), "C".into()),
        ("HOME".into(), scratch.as_os_str().to_owned()),
        ("TMPDIR".into(), scratch.as_os_str().to_owned()),
        (RESULT_FD_ENV.into(), result_fd.to_string().into()),
    ];
    if let Some(fd) = control_fd {
        v.push((CONTROL_FD_ENV.into(), fd.to_string().into()));
    }
    for k in PASSED_ENV {
        if let Some(x) = std::env::var_os(k) {
            v.push((k.to_string(), x));
        }
    }
    for (k, x) in &spec.env {
        v.retain(|(name, _)| name != k);
        v.push((k.clone(), x.into()));
    }
    v
}

/// What a child may read: [`SYSTEM_READ`], its program's directory (and pqperf's own), the
/// emulator's library prefix, its working directory and `spec.readable`.
fn readable_for(spec: &ChildSpec) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
    let dir_of = |p: &Path| {
        std::fs::canonicalize(p)
            .ok()
            .and_then(|c| c.parent().map(Path::to_path_buf))
    };
    v.extend(dir_of(&spec.program));
    // The kernel's path of the running image is absolute and resolved; its directory stays
    // readable when the file itself was replaced (`…/pqperf (deleted)`).
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        v.push(dir);
    }
    if let Some(prefix) = std::env::var_os("QEMU_LD_PREFIX") {
        v.push(PathBuf::from(prefix));
    }
    v.push(spec.cwd.clone());
    v.extend(spec.readable.iter().cloned());
    v
}

/// A pids cgroup (v1 hierarchy at /sys/fs/cgroup/pids, or cgroup v2 with the pids controller
/// enabled) for one child; removed on drop after its processes are killed.
struct PidsCgroup {
    dir: PathBuf,
    procs: File,
}

fn cgroup_base() -> Option<PathBuf> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        let v1 = PathBuf::from("/sys/fs/cgroup/pids");
        let base = if v1.join("cgroup.procs").exists() {
            v1
        } else {
            let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
            let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
            let dir = Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
            let ctl = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
            ctl.split_whitespace().any(|c| c == "pids").then_some(dir)?
        };
        // Probe: a child must be able to join a fresh cgroup there (delegation, cgroup v2's
        // no-internal-process rule); otherwise the pids limit is recorded as not in force.
        let cg = PidsCgroup::create_in(&base, 8)?;
        let ok = probe(&PreExec {
            cgroup_procs: Some(cg.procs.as_raw_fd()),
            ..Default::default()
        });
        drop(cg);
        ok.then_some(base)
    })
    .clone()
}

impl PidsCgroup {
    fn create(max: u64) -> Option<PidsCgroup> {
        PidsCgroup::create_in(&cgroup_base()?, max)
    }

    fn create_in(base: &Path, max: u64) -> Option<PidsCgroup> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        static SWEEP: std::sync::Once = std::sync::Once::new();
        // Cgroups left by pqperf processes that are gone (their killed children were reaped
        // too late for the removal): remove the empty ones once.
        SWEEP.call_once(|| {
            for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let owner = name
                    .strip_prefix("pqperf-")
                    .and_then(|r| r.split('-').next())
                    .and_then(|p| p.parse::<u32>().ok());
                if let Some(pid) = owner
                    && !Path::new(&format!("/proc/{pid}")).exists()
                {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        });
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = base.join(format!("pqperf-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let ok = std::fs::write(dir.join("pids.max"), max.to_string()).is_ok();
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"));
        match (ok, procs) {
            (true, Ok(procs)) => Some(PidsCgroup { dir, procs }),
            _ => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Kill every process in the cgroup until it is empty (bounded); the number killed.
    fn kill_all(&self) -> usize {
        let mut killed = 0;
        let t0 = Instant::now();
        let mut pause = Duration::from_micros(100);
        while t0.elapsed() < DRAIN_LIMIT {
            let pids: Vec<i32> = std::fs::read_to_string(self.dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            if pids.is_empty() {
                break;
            }
            for p in pids {
                if kill(Pid::from_raw(p), Signal::SIGKILL).is_ok() {
                    killed += 1;
                }
            }
            backoff(&mut pause, Duration::from_millis(5));
        }
        killed
    }
}

/// How long the removal of a cgroup is retried (its killed processes are still exiting).
const CGROUP_REMOVE_LIMIT: Duration = Duration::from_secs(3);

/// Sleeps of a polling loop: 100 µs, doubling up to `max` (an ended child is usually gone
/// within a millisecond; issue 41: fixed 10 ms sleeps were a large part of a short process).
fn backoff(pause: &mut Duration, max: Duration) {
    std::thread::sleep(*pause);
    *pause = (*pause * 2).min(max);
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        self.kill_all();
        let t0 = Instant::now();
        let mut pause = Duration::from_micros(100);
        while std::fs::remove_dir(&self.dir).is_err() && t0.elapsed() < CGROUP_REMOVE_LIMIT {
            backoff(&mut pause, Duration::from_millis(10));
        }
    }
}

/// What contained a child (recorded in the campaign evidence and on the method page).
pub fn in_force_json(p: &Policy) -> Value {
    let emulator = crate::emulation::emulator_prefix();
    let mut v = in_force_inner(p);
    if !emulator.is_empty()
        && let Value::Object(m) = &mut v
    {
        // The children are emulator processes running pqperf: every limit above applies to
        // the emulator (address space included), the namespaces and Landlock to both.
        m.insert("children_started_through".into(), json!(emulator.join(" ")));
    }
    v
}

fn in_force_inner(p: &Policy) -> Value {
    let capabilities = match capabilities_probe(p.sandbox) {
        Ok(()) => "none (probed: a child started like every candidate child has empty effective, permitted, inheritable, bounding and ambient sets and no_new_privs)".to_string(),
        Err(had) => format!("not in force (a probe child had {had})"),
    };
    let mut passed: Vec<&str> = PASSED_ENV
        .iter()
        .copied()
        .filter(|k| std::env::var_os(k).is_some())
        .collect();
    passed.sort_unstable();
    let environment = format!(
        "cleared: PATH (the system directories, after the program's own unless it is pqperf's), LC_ALL=C, HOME and TMPDIR (the scratch directory), the result channel's number (removed by the child before candidate code is loaded){}; nothing else of pqperf's environment",
        if passed.is_empty() {
            String::new()
        } else {
            format!(", {}", passed.join(", "))
        }
    );
    let always = json!({
        "process_group": "own session, killed on exit and timeout",
        "result_channel": "private pipe",
        "descriptors": "only stdin, stdout, stderr and the result channel (every other descriptor closed on exec)",
        "parent_death": "SIGKILL when pqperf ends (PR_SET_PDEATHSIG); SIGINT/SIGTERM to pqperf kill every child group first",
        "capabilities": capabilities,
        "environment": environment,
    });
    if !p.sandbox {
        let mut v = always;
        v["sandbox"] = json!("off (--no-sandbox)");
        return v;
    }
    let ns = namespaces();
    let mut names = Vec::new();
    for (flag, name) in [
        (CloneFlags::CLONE_NEWUSER, "user"),
        (CloneFlags::CLONE_NEWPID, "pid"),
        (CloneFlags::CLONE_NEWNET, "network"),
        (CloneFlags::CLONE_NEWNS, "mount"),
        (CloneFlags::CLONE_NEWIPC, "ipc"),
        (CloneFlags::CLONE_NEWUTS, "uts"),
    ] {
        if ns.contains(flag) {
            names.push(name);
        }
    }
    let abi = landlock_abi();
    let filter = seccomp().is_some();
    let why_not = |what: &str| match crate::emulation::emulated() {
        Some(e) => format!("not in force ({what} unavailable under {e})"),
        None => format!("not in force (kernel without {what})"),
    };
    let pidns = ns.contains(CloneFlags::CLONE_NEWPID);
    let mut v = always;
    let m = v.as_object_mut().expect("object");
    let mut put = |k: &str, x: Value| {
        m.insert(k.to_string(), x);
    };
    put("sandbox", json!("on"));
    put("namespaces", json!(names));
    put(
        "network",
        json!(match (ns.contains(CloneFlags::CLONE_NEWNET), abi > 0) {
            (true, _) => "none (empty network namespace)",
            (false, true) => "TCP bind/connect denied by Landlock",
            _ => "not contained",
        }),
    );
    put(
        "unix_sockets",
        json!(if filter {
            "refused (seccomp: creating one kills the process)".to_string()
        } else {
            why_not("seccomp")
        }),
    );
    put(
        "write_confinement",
        json!(if abi > 0 {
            "landlock (scratch directory only)".to_string()
        } else {
            why_not("Landlock")
        }),
    );
    put(
        "read_confinement",
        json!(if abi > 0 {
            "landlock (system libraries, the program, its inputs, /proc, scratch)".to_string()
        } else {
            why_not("Landlock")
        }),
    );
    put("landlock_abi", json!(abi));
    put(
        "signals",
        json!(match (abi >= 6, pidns) {
            (true, _) => "only within the child's own processes (Landlock signal scope)",
            (false, true) => "only within the child's PID namespace",
            _ => "not contained",
        }),
    );
    put(
        "scheduling",
        json!(if filter {
            "CPU pinned by pqperf before exec; sched_setaffinity, setpriority and scheduler changes kill the process (seccomp)".to_string()
        } else {
            why_not("seccomp")
        }),
    );
    put(
        "privileged_calls",
        json!(if filter {
            format!(
                "refused with EPERM (seccomp): {}",
                sandbox::REFUSED_CALLS.join(", ")
            )
        } else {
            why_not("seccomp")
        }),
    );
    put(
        "process_creation",
        json!(match (seccomp_timing().is_some(), filter) {
            (true, _) => format!(
                "refused to timing children (seccomp: {}; the process is killed); allowed to the build's compiler, the KAT child and the profilers",
                sandbox::NO_PROCESS_CALLS.join(", ")
            ),
            (false, true) =>
                "allowed (the host did not apply the timing children's filter)".to_string(),
            (false, false) => why_not("seccomp"),
        }),
    );
    put(
        "device_nodes",
        json!(if abi > 0 {
            "none can be made, scratch included (Landlock without MAKE_CHAR/MAKE_BLOCK)".to_string()
        } else {
            why_not("Landlock")
        }),
    );
    if pidns {
        put(
            "namespace_init",
            json!(if hidden_ranges().is_some() {
                "a fork of pqperf named init, its argv and environment zeroed, not dumpable, without capabilities"
            } else {
                "a fork of pqperf named init, not dumpable, without capabilities (its argv not zeroed: where it lies is unknown here)"
            }),
        );
    }
    put(
        "leftover_processes",
        json!(if pidns {
            "killed with the PID namespace's init"
        } else {
            "killed with the process group (and the pids cgroup where in force)"
        }),
    );
    put("address_space_limit_bytes", json!(p.limits.address_space));
    put("file_size_limit_bytes", json!(p.limits.file_size));
    put("open_files_limit", json!(p.limits.open_files));
    put("process_limit", json!(p.limits.processes));
    put(
        "pids_limit",
        json!(if cgroup_base().is_some() {
            "pids cgroup"
        } else if nix::unistd::geteuid().is_root() {
            "not in force (root without pids cgroup)"
        } else {
            "RLIMIT_NPROC"
        }),
    );
    put("core_dumps", json!("off"));
    v
}

/// A size-capped capture: the first and last [`CAPTURE_KEEP`] bytes and the byte count.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// First bytes.
    pub head: Vec<u8>,
    /// Last bytes (ring order resolved).
    pub tail: Vec<u8>,
    /// Bytes written in total.
    pub total: u64,
}

impl Capture {
    fn push(&mut self, b: &[u8]) {
        self.total += b.len() as u64;
        let room = CAPTURE_KEEP.saturating_sub(self.head.len());
        let (h, rest) = b.split_at(room.min(b.len()));
        self.head.extend_from_slice(h);
        if !rest.is_empty() {
            self.tail.extend_from_slice(rest);
            if self.tail.len() > 2 * CAPTURE_KEEP {
                let cut = self.tail.len() - CAPTURE_KEEP;
                self.tail.drain(..cut);
            }
        }
    }

    fn finish(&mut self) {
        if self.tail.len() > CAPTURE_KEEP {
            let cut = self.tail.len() - CAPTURE_KEEP;
            self.tail.drain(..cut);
        }
    }

    /// Bytes counted but not kept.
    pub fn omitted(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text, with a marker where bytes were omitted.
    pub fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted() > 0 {
            s.push_str(&format!("\n[… {} bytes omitted …]\n", self.omitted()));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }

    /// The last `n` characters of the kept text.
    pub fn tail_chars(&self, n: usize) -> String {
        let t = self.text();
        let t = t.trim();
        let count = t.chars().count();
        t.chars().skip(count.saturating_sub(n)).collect()
    }
}

/// One child to run.
#[derive(Debug, Clone, Default)]
pub struct ChildSpec {
    /// Executable (normally pqperf itself).
    pub program: PathBuf,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Hard timeout.
    pub timeout: Duration,
    /// Extra directories the child may write below (besides its scratch directory); they must
    /// exist.
    pub writable: Vec<PathBuf>,
    /// Files and directories the child may read besides the system directories, its
    /// program's directory, its working directory and what it may write (its inputs).
    pub readable: Vec<PathBuf>,
    /// The CPU pqperf pins the child to before `exec` (the child cannot change it when the
    /// seccomp filter is in force).
    pub cpu: Option<usize>,
    /// Resource limits instead of the policy's (the build stage's compiler limits).
    pub limits: Option<Limits>,
    /// Extra environment variables (e.g. `LC_ALL=C` for a compiler whose messages are read).
    pub env: Vec<(String, String)>,
}

/// What happened.
#[derive(Debug, Default)]
pub struct ChildOutcome {
    /// Exit status (None when it could not be waited for).
    pub status: Option<ExitStatus>,
    /// The hard timeout fired.
    pub timed_out: bool,
    /// Seconds from spawn to exit (or kill).
    pub wall_s: f64,
    /// Bytes on the result channel.
    pub result: Vec<u8>,
    /// When the result channel's bytes arrived, as seen by the parent: `(bytes received so
    /// far, seconds since the child was started)` after every read (the per-process time
    /// budget of the measure phase, `pqperf_measure::budget`).
    pub result_arrivals: Vec<(usize, f64)>,
    /// Seconds from the start of [`run`] until the child was started (`exec` done): the
    /// parent's and the child's confinement set-up before the program's first instruction.
    pub spawned_s: f64,
    /// The result channel exceeded [`RESULT_CAP`] (the rest was dropped).
    pub result_truncated: bool,
    /// Candidate stdout.
    pub stdout: Capture,
    /// Candidate stderr (and the child's own error messages).
    pub stderr: Capture,
    /// Could not start the child.
    pub spawn_error: Option<String>,
    /// Leftover processes killed after the child ended.
    pub leftovers_killed: usize,
    /// A reader did not finish within the drain limit (an escaped process kept a pipe open).
    pub drain_timeout: bool,
    /// The kernel's accounting of the child (CPU time, schedstat), read when it was reaped.
    pub accounting: Option<crate::procinfo::ChildAccounting>,
    /// The child's scratch folder could not be removed (what was left and why); every later
    /// child is refused (see [`scratch_left_behind`]).
    pub scratch_left: Option<String>,
}

impl ChildOutcome {
    /// Seconds since the start of [`run`] at which each line of [`ChildOutcome::result_lines`]
    /// had arrived in full (the read that brought its newline; the child writes a line at a
    /// time, so this is when the child had reached it, up to the parent's read latency).
    pub fn line_arrivals(&self) -> Vec<f64> {
        let mut out = Vec::new();
        let mut marks = self.result_arrivals.iter().peekable();
        for (i, b) in self.result.iter().enumerate() {
            if *b == b'\n' {
                while marks.next_if(|m| m.0 <= i).is_some() {}
                out.push(marks.peek().map_or(self.wall_s, |m| m.1));
            }
        }
        if self.result.last().is_some_and(|b| *b != b'\n') {
            out.push(self.result_arrivals.last().map_or(self.wall_s, |m| m.1));
        }
        out
    }

    /// Result channel as lines.
    pub fn result_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.result)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Exit code, or minus the signal number.
    pub fn code(&self) -> Option<i64> {
        use std::os::unix::process::ExitStatusExt;
        self.status
            .and_then(|s| s.code().map(i64::from).or(s.signal().map(|g| -(g as i64))))
    }

    /// Size facts of the captured output, for a record's process entry.
    pub fn output_json(&self) -> Value {
        json!({
            "stdout_bytes": self.stdout.total,
            "stderr_bytes": self.stderr.total,
        })
    }
}

/// What a reader thread hands back: which stream, its capture, the kept bytes (result
/// channel) and when they arrived.
type Drained = (usize, Capture, Vec<u8>, Vec<(usize, f64)>);

fn reader<R: Read + Send + 'static>(
    mut r: R,
    cap: Option<usize>,
    tx: std::sync::mpsc::Sender<Drained>,
    which: usize,
    lines: Option<std::sync::mpsc::Sender<String>>,
    start: Instant,
) {
    std::thread::spawn(move || {
        let mut c = Capture::default();
        let mut all = Vec::new();
        let mut arrivals = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut sent = 0usize;
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => match cap {
                    Some(cap) => {
                        c.total += n as u64;
                        let room = cap.saturating_sub(all.len());
                        all.extend_from_slice(&buf[..n.min(room)]);
                        if arrivals.len() < MAX_ARRIVALS {
                            arrivals.push((all.len(), start.elapsed().as_secs_f64()));
                        }
                        // Complete lines, as they arrive, to a conducting parent.
                        if let Some(l) = &lines {
                            while let Some(i) = all[sent..].iter().position(|b| *b == b'\n') {
                                let line = String::from_utf8_lossy(&all[sent..sent + i]);
                                let _ = l.send(line.into_owned());
                                sent += i + 1;
                            }
                        }
                    }
                    None => c.push(&buf[..n]),
                },
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        drop(lines);
        c.finish();
        let _ = tx.send((which, c, all, arrivals));
    });
}

/// The parent's side of a conducted child ([`run_conducted`]) while it runs: the result lines
/// as they arrive, the control pipe, and the exact CPU time of the child's processes.
pub struct Session {
    lines: std::sync::mpsc::Receiver<String>,
    control: Option<std::io::PipeWriter>,
    root: i32,
    deadline: Instant,
    /// Result lines received so far.
    pub received: usize,
}

/// How long [`Session::cpu`] waits for the child's tasks to stop running.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(1);

impl Session {
    /// The next result line (`None`: the channel ended or the child's time is up).
    pub fn next_line(&mut self) -> Option<String> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        let l = self.lines.recv_timeout(left).ok()?;
        self.received += 1;
        Some(l)
    }

    /// Writes `word` and a newline on the control pipe; false when the child cannot read it.
    pub fn send(&mut self, word: &str) -> bool {
        match &mut self.control {
            Some(w) => w.write_all(format!("{word}\n").as_bytes()).is_ok(),
            None => false,
        }
    }

    /// Writes `word <len>`, a newline and `payload` on the control pipe (relayed inputs, see
    /// `pqperf_driver::inputs::Relay`); false when the child cannot read it. The write blocks
    /// until the child has read what the pipe cannot hold.
    pub fn send_payload(&mut self, word: &str, payload: &[u8]) -> bool {
        match &mut self.control {
            Some(w) => w
                .write_all(format!("{word} {}\n", payload.len()).as_bytes())
                .and_then(|_| w.write_all(payload))
                .is_ok(),
            None => false,
        }
    }

    /// Moves the child's hard timeout `by` later: the time a held child waited, blocked on
    /// its control pipe, for the measuring CPU (`pqperf_measure::runner`).
    pub fn extend_deadline(&mut self, by: Duration) {
        self.deadline += by;
    }

    /// The host pid of the child's process group leader (the root of [`Session::cpu`]'s tree).
    pub fn root(&self) -> i32 {
        self.root
    }

    /// Closes the control pipe (the child reads its end).
    pub fn close(&mut self) {
        self.control = None;
    }

    /// The CPU time of the child's processes now (all of them, every thread), read when none
    /// of their tasks is running ([`crate::procinfo::TreeCpu`]).
    pub fn cpu(&self) -> crate::procinfo::TreeCpu {
        crate::procinfo::TreeCpu::read(self.root, SETTLE_LIMIT)
    }

    /// Called right after the parent let the child go from a gate read as `at`: waits (at
    /// most [`SETTLE_LIMIT`]) until a main thread of the child arrives on a CPU and returns
    /// the main threads' schedstat then ([`crate::procinfo::wait_for_arrival`]): the run-queue
    /// wait between `go` and the child's first instruction, which no interval can hold.
    pub fn arrival(
        &self,
        at: &crate::procinfo::TreeCpu,
    ) -> Option<Vec<crate::procinfo::TaskSched>> {
        let before: Vec<_> = at
            .tasks
            .iter()
            .filter(|t| at.pids.contains(&t.tid))
            .copied()
            .collect();
        crate::procinfo::wait_for_arrival(&at.pids, &before, SETTLE_LIMIT)
    }
}

/// Arrival marks kept of a result channel at most (a child writing many small pieces cannot
/// make the parent keep more).
const MAX_ARRIVALS: usize = 4096;

/// Whether `program` is pqperf's own executable or one of its siblings.
fn is_own_program(program: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    std::env::current_exe()
        .ok()
        .and_then(|e| canon(&e))
        .zip(canon(program))
        .is_some_and(|(a, b)| a == b || (a.parent().is_some() && a.parent() == b.parent()))
}

/// The command that starts `program`: pqperf's own executables (the running one and its
/// siblings, such as the lean timing driver `pqperf-driver`) go through the emulator named in
/// `PQPERF_EMULATOR` when one is set (an emulated pqperf on a host without binfmt_misc);
/// other programs (valgrind) start directly.
fn child_command(program: &Path) -> Command {
    if is_own_program(program) {
        crate::emulation::self_command(program)
    } else {
        Command::new(program)
    }
}

/// Runs one contained child under the process-wide [`policy`].
pub fn run(spec: &ChildSpec) -> ChildOutcome {
    run_with(spec, &policy())
}

/// Runs one contained child under `pol`.
pub fn run_with(spec: &ChildSpec, pol: &Policy) -> ChildOutcome {
    run_inner(spec, pol, None)
}

/// Runs one contained child under the process-wide [`policy`] with a control pipe: the read
/// end is inherited as a descriptor announced in [`CONTROL_FD_ENV`] (the child adopts it
/// with [`child_control`] before loading candidate code), and `conduct` runs in the calling
/// thread while the child lives, with the child's result lines as they arrive, the pipe's
/// write end and the child's CPU time ([`Session`]). When `conduct` returns the pipe is
/// closed, and the child is waited for as by [`run`] (same timeout, from the start).
pub fn run_conducted(spec: &ChildSpec, conduct: &mut dyn FnMut(&mut Session)) -> ChildOutcome {
    run_inner(spec, &policy(), Some(conduct))
}

fn run_inner(
    spec: &ChildSpec,
    pol: &Policy,
    conduct: Option<&mut dyn FnMut(&mut Session)>,
) -> ChildOutcome {
    let start = Instant::now();
    let fail = |msg: String| ChildOutcome {
        spawn_error: Some(msg),
        ..Default::default()
    };
    if let Some(left) = scratch_left_behind().first() {
        return fail(format!("refusing to start another child: {left}"));
    }
    let (res_r, res_w) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return fail(format!("result pipe: {e}")),
    };
    let (ctl_r, mut ctl_w) = if conduct.is_some() {
        match std::io::pipe() {
            Ok((r, w)) => (Some(r), Some(w)),
            Err(e) => return fail(format!("control pipe: {e}")),
        }
    } else {
        (None, None)
    };
    let scratch = match tempfile::Builder::new().prefix("pqperf-child-").tempdir() {
        Ok(d) => d,
        Err(e) => return fail(format!("scratch directory: {e}")),
    };
    let mut cmd = child_command(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .envs(child_env(
            scratch.path(),
            res_w.as_raw_fd(),
            ctl_r.as_ref().map(|r| r.as_raw_fd()),
            spec,
        ));
    let limits = spec.limits.unwrap_or(pol.limits);
    let cgroup = if pol.sandbox {
        PidsCgroup::create(limits.processes)
    } else {
        None
    };
    let mut pre = PreExec {
        private_mounts: true,
        keep_fd: Some(res_w.as_raw_fd()),
        control_fd: ctl_r.as_ref().map(|r| r.as_raw_fd()),
        cgroup_procs: cgroup.as_ref().map(|c| c.procs.as_raw_fd()),
        parent_death: true,
        close_fds: true,
        cpu: spec.cpu,
        drop_capabilities: true,
        ..Default::default()
    };
    if pol.sandbox {
        pre.namespaces = namespaces();
        pre.hide_from_init = hidden_ranges();
        pre.limits = Some(limits);
        pre.seccomp = if conduct.is_some() {
            seccomp_timing()
        } else {
            seccomp()
        };
        if landlock_abi() > 0 {
            let mut w: Vec<PathBuf> = vec![scratch.path().to_path_buf()];
            w.extend(spec.writable.iter().cloned());
            w.push(PathBuf::from("/dev/null"));
            match sandbox::landlock_ruleset(&readable_for(spec), &w) {
                Ok(Some(fd)) => pre.landlock = Some(Arc::new(fd)),
                // Probed as working: a ruleset that cannot be built now is an error, never a
                // child without its confinement.
                Ok(None) => return fail("landlock: the kernel refused the ruleset".into()),
                Err(e) => return fail(e),
            }
        }
    }
    sandbox::prepare(&mut cmd, &pre);
    let spawned = cmd.spawn();
    let spawned_s = start.elapsed().as_secs_f64();
    drop(res_w);
    drop(ctl_r);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start {}: {e}", spec.program.display())),
    };
    let pgid = Pid::from_raw(child.id() as i32);
    sandbox::register_group(pgid.as_raw());
    let (tx, rx) = std::sync::mpsc::channel();
    let (line_tx, line_rx) = std::sync::mpsc::channel();
    let conducted = conduct.is_some();
    reader(
        res_r,
        Some(RESULT_CAP),
        tx.clone(),
        0,
        conducted.then_some(line_tx),
        start,
    );
    reader(
        child.stdout.take().expect("piped"),
        None,
        tx.clone(),
        1,
        None,
        start,
    );
    reader(
        child.stderr.take().expect("piped"),
        None,
        tx,
        2,
        None,
        start,
    );
    let mut deadline = start + spec.timeout;
    if let Some(f) = conduct {
        let mut session = Session {
            lines: line_rx,
            control: ctl_w.take(),
            root: pgid.as_raw(),
            deadline,
            received: 0,
        };
        f(&mut session);
        // A held child's wait for its CPU does not count against its timeout.
        deadline = session.deadline;
    }
    // A child still waiting for the parent reads the end of its control pipe.
    drop(ctl_w);
    let mut pause = Duration::from_micros(200);
    let mut out = ChildOutcome {
        spawned_s,
        ..Default::default()
    };
    // Reaped here (not through `child`) to keep the kernel's accounting of the child.
    // With a PID namespace the reaped process is the waiter outside it: its rusage includes
    // the program's (waited for through the init), its schedstat does not, so none is kept.
    let waiter = pre.namespaces.contains(CloneFlags::CLONE_NEWPID);
    let reaped = |out: &mut ChildOutcome, r: Option<(i32, crate::procinfo::ChildAccounting)>| {
        use std::os::unix::process::ExitStatusExt;
        if let Some((st, mut acc)) = r {
            if waiter {
                acc.run_ns = None;
                acc.run_delay_ns = None;
            }
            out.status = Some(ExitStatus::from_raw(st));
            out.accounting = Some(acc);
        }
    };
    loop {
        match crate::procinfo::wait_accounted(pgid.as_raw(), false) {
            Ok(Some(r)) => {
                reaped(&mut out, Some(r));
                break;
            }
            Ok(None) => {}
            Err(_) => break,
        }
        if Instant::now() >= deadline {
            out.timed_out = true;
            let _ = killpg(pgid, Signal::SIGKILL);
            let _ = child.kill();
            reaped(
                &mut out,
                crate::procinfo::wait_accounted(pgid.as_raw(), true)
                    .ok()
                    .flatten(),
            );
            break;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
    out.wall_s = start.elapsed().as_secs_f64();
    // The child is gone: nothing it started may outlive it.
    if killpg(pgid, Signal::SIGKILL).is_ok() {
        out.leftovers_killed += 1;
    }
    if let Some(cg) = &cgroup {
        out.leftovers_killed += cg.kill_all();
    }
    sandbox::unregister_group(pgid.as_raw());
    let drain_deadline = Instant::now() + DRAIN_LIMIT;
    for _ in 0..3 {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((0, c, all, arrivals)) => {
                out.result_truncated = c.total > all.len() as u64;
                out.result = all;
                out.result_arrivals = arrivals;
            }
            Ok((1, c, _, _)) => out.stdout = c,
            Ok((_, c, _, _)) => out.stderr = c,
            Err(_) => {
                out.drain_timeout = true;
                break;
            }
        }
    }
    drop(cgroup);
    out.scratch_left = remove_scratch(scratch, &LEFT_BEHIND);
    out
}

/// Scratch folders that could not be removed, one message each.
static LEFT_BEHIND: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The scratch folders of earlier children this process could not remove (each message names
/// the folder, what is left in it and the error). Once there is one, [`run`] starts no other
/// child, and a campaign stops after the unit that left it: one candidate must not fill the
/// disk for every candidate after it.
pub fn scratch_left_behind() -> Vec<String> {
    LEFT_BEHIND
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Files and bytes below `dir` (links not followed; at most 100 000 entries looked at).
fn tree_size(dir: &Path) -> (u64, u64) {
    let (mut files, mut bytes, mut seen) = (0u64, 0u64, 0usize);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            seen += 1;
            if seen > 100_000 {
                return (files, bytes);
            }
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                bytes += m.len();
            }
        }
    }
    (files, bytes)
}

/// Removes a child's scratch folder; when that fails, says so (and records it in `sink`)
/// instead of leaving it silently.
fn remove_scratch(dir: tempfile::TempDir, sink: &std::sync::Mutex<Vec<String>>) -> Option<String> {
    let path = dir.path().to_path_buf();
    let err = dir.close().err()?;
    let (files, bytes) = tree_size(&path);
    let msg = format!(
        "scratch folder {} of a child could not be removed ({files} files, {bytes} bytes left): {err}",
        path.display()
    );
    eprintln!("pqperf: {msg}");
    sink.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(msg.clone());
    Some(msg)
}

/// Makes SIGINT, SIGTERM and SIGHUP to this process kill every live child group before the
/// process ends with the signal (call once, early, in an orchestrating process).
pub fn end_children_on_termination() {
    sandbox::install_termination_handler();
}

/// The child's side: adopt the result channel (the confinement was applied by the parent
/// before `exec`). Call first thing in a child, before any candidate library is loaded.
/// Without the environment (a child started by hand) the channel is stdout.
pub fn child_enter() -> Result<Box<dyn Write>, String> {
    let announced = std::env::var(RESULT_FD_ENV);
    sandbox::forget_env(&[RESULT_FD_ENV]);
    match announced {
        Ok(v) => {
            let fd: i32 = v
                .parse()
                .map_err(|_| format!("{RESULT_FD_ENV}={v} is not a descriptor number"))?;
            Ok(Box::new(sandbox::adopt_result_fd(fd)?))
        }
        Err(_) => Ok(Box::new(std::io::stdout())),
    }
}

/// The child's side of the control pipe of a conducted child ([`run_conducted`]): adopt the
/// descriptor announced in [`CONTROL_FD_ENV`] (close-on-exec) and remove the variable. Call
/// first thing in a child, before any candidate library is loaded. `Ok(None)`: no control
/// pipe (the child runs on its own).
pub fn child_control() -> Result<Option<File>, String> {
    let announced = std::env::var(CONTROL_FD_ENV);
    sandbox::forget_env(&[CONTROL_FD_ENV]);
    match announced {
        Ok(v) => {
            let fd: i32 = v
                .parse()
                .map_err(|_| format!("{CONTROL_FD_ENV}={v} is not a descriptor number"))?;
            Ok(Some(sandbox::adopt_control_fd(fd)?))
        }
        Err(_) => Ok(None),
    }
}

/// [`child_enter`] for a child whose own memory is evidence (the lean timing driver). Since
/// the parent confines the child between `fork` and `exec`, the image that loads the
/// candidate runs no confinement code of its own, and nothing needs to be executed again.
pub fn child_enter_fresh() -> Result<Box<dyn Write>, String> {
    child_enter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_result_line_arrives_with_the_read_that_brought_its_newline() {
        let out = ChildOutcome {
            result: b"META\ta\t1\nMETA\tb\t2\nTRI".to_vec(),
            result_arrivals: vec![(5, 0.1), (22, 0.3), (25, 0.4)],
            wall_s: 0.5,
            ..Default::default()
        };
        assert_eq!(out.result_lines().len(), 3);
        // Line 1 ends at byte 10 (read 2), line 2 at byte 21 (read 2), the cut line last.
        assert_eq!(out.line_arrivals(), vec![0.3, 0.3, 0.4]);
        let none = ChildOutcome {
            result: b"X\n".to_vec(),
            wall_s: 0.5,
            ..Default::default()
        };
        assert_eq!(none.line_arrivals(), vec![0.5]);
    }

    #[test]
    fn a_scratch_folder_that_cannot_be_removed_is_reported_never_ignored() {
        let sink = std::sync::Mutex::new(Vec::new());
        let ok = tempfile::Builder::new()
            .prefix("pqperf-child-")
            .tempdir()
            .unwrap();
        std::fs::write(ok.path().join("f"), b"x").unwrap();
        assert_eq!(remove_scratch(ok, &sink), None);
        assert!(sink.lock().unwrap().is_empty());
        // An immutable file (what a root candidate could make before capabilities were
        // dropped); needs root and a filesystem with inode flags.
        let bad = tempfile::Builder::new()
            .prefix("pqperf-child-")
            .tempdir()
            .unwrap();
        let f = bad.path().join("immutable");
        std::fs::write(&f, vec![0u8; 4096]).unwrap();
        let path = bad.path().to_path_buf();
        let made = Command::new("chattr")
            .arg("+i")
            .arg(&f)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("skipped: chattr +i is not possible here");
            return;
        }
        let msg = remove_scratch(bad, &sink).expect("reported");
        let _ = Command::new("chattr").arg("-i").arg(&f).status();
        let _ = std::fs::remove_dir_all(&path);
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("1 files, 4096 bytes left"), "{msg}");
        assert_eq!(sink.lock().unwrap().as_slice(), [msg]);
    }
}
