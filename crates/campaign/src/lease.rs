//! Host-wide CPU leases: one `flock`ed file per CPU (`cpu<N>.lock`) in a folder shared by
//! every pqperf process of the host, so that shards, `campaign parallel` chains and separate
//! campaigns never measure on the same CPU at once. The kernel drops a lock when its holder
//! exits, killed or not, so a lease never outlives its process. A requested CPU that is taken
//! is waited for; `--cpu auto` takes a free CPU of the process's allowed set (its affinity
//! mask, which a cgroup cpuset such as a Slurm job's narrows), waiting only when all are taken.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pqperf_ffi::procinfo::{lock_exclusive, try_lock_exclusive};
use pqperf_model::campaign::LeaseWindow;
use serde_json::Value;

use crate::utc_now;

/// Environment variable naming the lease folder (default: [`default_lease_dir`]).
pub const LEASE_DIR_ENV: &str = "PQPERF_LEASE_DIR";

/// How the benchmark CPU is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuRequest {
    /// This CPU (`--cpu N`, or the default CPU): wait while another process leases it.
    Fixed(usize),
    /// A free CPU of the allowed set (`--cpu auto`), highest first.
    Auto,
}

/// A held lease; the CPU is free again when this is dropped (or the process ends).
#[derive(Debug)]
pub struct CpuLease {
    /// The leased CPU.
    pub cpu: usize,
    /// `requested` (`--cpu N` or the default) or `auto`.
    pub chosen: &'static str,
    /// The CPUs this process was allowed to run on when it chose.
    pub allowed: Vec<usize>,
    /// Seconds spent waiting for a lease.
    pub waited_s: f64,
    /// When the lease was taken (UTC, µs).
    pub acquired_utc: String,
    /// The lock file.
    pub path: PathBuf,
    _file: File,
}

/// The host-wide lease folder: `$PQPERF_LEASE_DIR`, else `/run/lock/pqperf` where `/run/lock`
/// exists (the FHS folder for lock files, writable by every user), else `pqperf-leases` in the
/// system temp dir.
pub fn default_lease_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(LEASE_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let run_lock = Path::new("/run/lock");
    if run_lock.is_dir() {
        return run_lock.join("pqperf");
    }
    std::env::temp_dir().join("pqperf-leases")
}

/// The lock file of `cpu` in `dir`.
pub fn lease_path(dir: &Path, cpu: usize) -> PathBuf {
    dir.join(format!("cpu{cpu}.lock"))
}

fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir_all(dir)?;
        // Other users' pqperf processes lease CPUs of this host too (sticky, like /tmp).
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
    }
    Ok(())
}

fn try_take(dir: &Path, cpu: usize) -> std::io::Result<Option<File>> {
    try_lock_exclusive(&lease_path(dir, cpu))
}

/// What the last holder of `cpu`'s lease wrote about itself (`pid … run …`), if anything.
fn holder(dir: &Path, cpu: usize) -> String {
    std::fs::read_to_string(dir.join(format!("cpu{cpu}.holder")))
        .ok()
        .map(|s| format!(" (last taken by {})", s.trim()))
        .unwrap_or_default()
}

/// Takes the lease of the CPU `req` asks for in `dir`, choosing among `allowed` for
/// [`CpuRequest::Auto`]. `say` gets one line when the lease has to be waited for. `run` is
/// written beside the lock (`cpu<N>.holder`) to name the holder to processes that wait.
pub fn acquire(
    dir: &Path,
    req: CpuRequest,
    allowed: &[usize],
    run: &Path,
    say: &mut dyn FnMut(String),
) -> std::io::Result<CpuLease> {
    prepare_dir(dir)?;
    let t0 = Instant::now();
    let (cpu, chosen, file) = match req {
        CpuRequest::Fixed(cpu) => match try_take(dir, cpu)? {
            Some(f) => (cpu, "requested", f),
            None => {
                say(format!(
                    "CPU {cpu} is leased by another pqperf process{}; waiting for it ({})",
                    holder(dir, cpu),
                    lease_path(dir, cpu).display()
                ));
                (cpu, "requested", lock_exclusive(&lease_path(dir, cpu))?)
            }
        },
        CpuRequest::Auto => {
            let mut order: Vec<usize> = allowed.to_vec();
            order.sort_unstable_by(|a, b| b.cmp(a));
            order.dedup();
            if order.is_empty() {
                return Err(std::io::Error::other("no allowed CPU to lease"));
            }
            let mut told = false;
            loop {
                let mut got = None;
                for &c in &order {
                    if let Some(f) = try_take(dir, c)? {
                        got = Some((c, f));
                        break;
                    }
                }
                if let Some((c, f)) = got {
                    break (c, "auto", f);
                }
                if !told {
                    say(format!(
                        "every allowed CPU ({}) is leased by another pqperf process; waiting for one ({})",
                        order
                            .iter()
                            .map(usize::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        dir.display()
                    ));
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    };
    let acquired_utc = utc_now();
    let _ = pqperf_model::fsutil::write_atomic(
        &dir.join(format!("cpu{cpu}.holder")),
        format!(
            "pid {} run {} since {acquired_utc}\n",
            std::process::id(),
            run.display()
        )
        .as_bytes(),
    );
    Ok(CpuLease {
        cpu,
        chosen,
        allowed: allowed.to_vec(),
        waited_s: t0.elapsed().as_secs_f64(),
        acquired_utc,
        path: lease_path(dir, cpu),
        _file: file,
    })
}

impl CpuLease {
    /// The lease as recorded: a record's `pqperf.cpu_lease`; campaign.json's
    /// `pqperf.cpu_leases` entries add `phase`, `pid` and `released_utc`. The lock file's path
    /// stays in the log: evidence names no machine paths.
    pub fn window(&self) -> LeaseWindow {
        LeaseWindow {
            cpu: self.cpu as u64,
            chosen: self.chosen.to_string(),
            allowed: self.allowed.iter().map(|&c| c as u64).collect(),
            waited_s: (self.waited_s * 1000.0).round() / 1000.0,
            acquired_utc: self.acquired_utc.clone(),
            ..Default::default()
        }
    }

    /// [`Self::window`] as JSON (a record's `pqperf.cpu_lease`).
    pub fn json(&self) -> Value {
        serde_json::to_value(self.window()).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_skips_a_leased_cpu_and_fixed_takes_a_free_one() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        let mut said = Vec::new();
        let a = acquire(tmp.path(), CpuRequest::Auto, &[0, 3, 1], &run, &mut |m| {
            said.push(m)
        })
        .unwrap();
        assert_eq!((a.cpu, a.chosen), (3, "auto"));
        let b = acquire(tmp.path(), CpuRequest::Auto, &[0, 3, 1], &run, &mut |m| {
            said.push(m)
        })
        .unwrap();
        assert_eq!(b.cpu, 1);
        let c = acquire(tmp.path(), CpuRequest::Fixed(0), &[0], &run, &mut |m| {
            said.push(m)
        })
        .unwrap();
        assert_eq!((c.cpu, c.chosen), (0, "requested"));
        assert!(said.is_empty(), "{said:?}");
        let holder = std::fs::read_to_string(tmp.path().join("cpu0.holder")).unwrap();
        assert!(
            holder.contains(&format!("pid {}", std::process::id())),
            "{holder}"
        );
        drop(a);
        let d = acquire(tmp.path(), CpuRequest::Auto, &[0, 3, 1], &run, &mut |m| {
            said.push(m)
        })
        .unwrap();
        assert_eq!(d.cpu, 3);
        assert_eq!(d.json()["chosen"], "auto");
    }
}
