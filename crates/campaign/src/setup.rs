//! The measuring set-up that a campaign phase ([`crate::run_phase`]) and `pqperf ab`
//! ([`crate::ab::run`]) share, built by one function ([`MeasuringSetup::open`]): the CPU
//! check, the emulation refusal (ab) or record (campaign), the host-wide CPU lease (taken
//! first: the host checks already probe that CPU), the host problems, the tick rate, the
//! environment snapshot, and pqperf keeping itself off the benchmark CPU.

use std::path::Path;

use pqperf_measure::host::{self, CheckOptions, ClockProbe};
use serde_json::Value;

use crate::lease::{self, CpuLease, CpuRequest};

/// How strictly the benchmark CPU is checked before anything is leased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuCheck {
    /// The CPU exists (is online); not this thread's affinity mask: an orchestrating pqperf
    /// moves itself (and the children it starts) off the benchmark CPUs, and pins each
    /// measuring child there itself (a campaign phase).
    Online,
    /// The CPU is online and in the affinity mask pqperf was started with (taskset, a CI
    /// runner's pinning), which is what it may use (`pqperf ab`).
    Allowed,
}

/// What a measuring set-up is asked for.
#[derive(Debug, Clone)]
pub struct SetupRequest<'a> {
    /// The benchmark CPU (`--cpu N`, the default, or `--cpu auto`).
    pub cpu: CpuRequest,
    /// How a fixed CPU is checked before anything is leased (`None`: the caller checked).
    pub check: Option<CpuCheck>,
    /// The run directory the lease names as its holder.
    pub owner: &'a Path,
    /// Clock-probe attempts of the host check.
    pub probe_attempts: usize,
    /// Refuse an emulated host (qemu-user, `--emulated`): its timings are not performance
    /// figures. A campaign records the emulation instead (`pqperf.emulated`).
    pub refuse_emulated: bool,
    /// Take the host-wide lease (a campaign's measuring phases; not check, build, kat, …).
    pub lease: bool,
}

/// Why a set-up was not built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupError {
    /// Refused before anything was leased (the CPU, an emulated host); the message says why.
    Refused(String),
    /// The lease could not be taken (I/O in the lease folder).
    Lease(String),
}

/// A measuring set-up: the leased CPU, held until this is dropped, and what the host
/// checks found there.
#[derive(Debug)]
pub struct MeasuringSetup {
    /// The benchmark CPU (the leased one when a lease was taken).
    pub cpu: usize,
    /// The host-wide lease (`None` when none was asked for).
    pub lease: Option<CpuLease>,
    /// Lines said while waiting for the lease.
    pub waits: Vec<String>,
    /// The host problems found on that CPU.
    pub host_problems: Vec<String>,
}

impl MeasuringSetup {
    /// Builds the set-up `req` asks for; `say` gets the lines about waiting for the lease.
    pub fn open(
        req: &SetupRequest,
        say: &mut dyn FnMut(String),
    ) -> Result<MeasuringSetup, SetupError> {
        if let (CpuRequest::Fixed(c), Some(check)) = (req.cpu, req.check)
            && let Some(why) = cpu_refusal(c, check)
        {
            return Err(SetupError::Refused(why));
        }
        if req.refuse_emulated
            && let Some(e) = pqperf_ffi::emulation::emulated()
        {
            return Err(SetupError::Refused(format!(
                "the host is emulated ({e}): its timings are not performance figures"
            )));
        }
        let mut waits: Vec<String> = Vec::new();
        let lease = if req.lease {
            Some(take_lease(req, &mut |m| {
                say(m.clone());
                waits.push(m);
            })?)
        } else {
            None
        };
        let cpu = match (&lease, req.cpu) {
            (Some(l), _) => l.cpu,
            (None, CpuRequest::Fixed(c)) => c,
            (None, CpuRequest::Auto) => crate::default_cpu(),
        };
        let host_problems = host::host_problems(&CheckOptions {
            probe_attempts: req.probe_attempts,
            ..CheckOptions::new(cpu)
        });
        Ok(MeasuringSetup {
            cpu,
            lease,
            waits,
            host_problems,
        })
    }

    /// The tick counter's rate, Hz (measured over 20 ms; `None` where it cannot be read).
    pub fn tick_hz(&self) -> Option<u64> {
        pqperf_ffi::counters::ticks_hz(20)
    }

    /// The clock probe of the benchmark CPU (21 samples of 50 ms), for the environment and
    /// the counter facts.
    pub fn clock_probe(&self) -> Option<ClockProbe> {
        host::clock_probe(self.cpu, 21, 50)
    }

    /// The environment snapshot of the benchmark CPU (§3.2).
    pub fn environment(&self, probe: Option<&ClockProbe>) -> Value {
        host::environment(self.cpu, probe)
    }

    /// pqperf (this thread and what it starts later) keeps off the benchmark CPU.
    pub fn keep_off(&self) {
        keep_off_cpu(self.cpu);
    }
}

/// Why `cpu` cannot be measured on, checked as `check` says; `None`: it can.
pub fn cpu_refusal(cpu: usize, check: CpuCheck) -> Option<String> {
    let online_text = host::read_trim("/sys/devices/system/cpu/online");
    let online = online_text
        .as_deref()
        .map(host::expand_cpu_list)
        .unwrap_or_default();
    let offline = !online.is_empty() && !online.contains(&cpu);
    match check {
        CpuCheck::Online => offline.then(|| {
            format!(
                "CPU {cpu} cannot be used (this host has CPU {})",
                online_text.unwrap_or_default()
            )
        }),
        CpuCheck::Allowed => {
            if offline {
                return Some(format!(
                    "--cpu {cpu}: CPU {cpu} is not online (online CPUs: {})",
                    online_text.unwrap_or_default()
                ));
            }
            let allowed = pqperf_ffi::affinity::get_affinity().unwrap_or_default();
            // The kernel would let pqperf widen its mask, which is not asked for.
            ((!allowed.is_empty() && !allowed.contains(&cpu)) || !host::cpu_usable(cpu)).then(
                || {
                    format!(
                        "--cpu {cpu}: CPU {cpu} is not among the CPUs this process may run on ({})",
                        allowed
                            .iter()
                            .map(usize::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                },
            )
        }
    }
}

/// Takes the host-wide lease `req` asks for (`--cpu N`, the default CPU, or `--cpu auto`
/// over this process's allowed CPUs).
fn take_lease(req: &SetupRequest, say: &mut dyn FnMut(String)) -> Result<CpuLease, SetupError> {
    let allowed = pqperf_ffi::affinity::get_affinity().unwrap_or_else(|_| match req.cpu {
        CpuRequest::Fixed(c) => vec![c],
        CpuRequest::Auto => Vec::new(),
    });
    let dir = lease::default_lease_dir();
    lease::acquire(&dir, req.cpu, &allowed, req.owner, say)
        .map_err(|e| SetupError::Lease(format!("CPU lease in {}: {e}", dir.display())))
}

/// Moves the calling thread (and threads and children it starts later) off `cpu` when another
/// CPU is available.
pub fn keep_off_cpu(cpu: usize) {
    keep_off_cpus(&[cpu]);
}

/// Like [`keep_off_cpu`] for several CPUs.
pub fn keep_off_cpus(cpus: &[usize]) {
    if let Ok(mine) = pqperf_ffi::affinity::get_affinity() {
        let others: Vec<usize> = mine.into_iter().filter(|c| !cpus.contains(c)).collect();
        if !others.is_empty() {
            let _ = pqperf_ffi::affinity::set_affinity(&others);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One check, the two strictnesses with the messages each caller has always given; a CPU
    /// this process runs on passes both.
    #[test]
    fn a_cpu_that_is_not_there_is_refused_as_each_caller_says_it() {
        let online = host::read_trim("/sys/devices/system/cpu/online").unwrap_or_default();
        if online.is_empty() {
            return;
        }
        let campaign = cpu_refusal(4095, CpuCheck::Online).unwrap();
        assert_eq!(
            campaign,
            format!("CPU 4095 cannot be used (this host has CPU {online})")
        );
        let ab = cpu_refusal(4095, CpuCheck::Allowed).unwrap();
        assert!(ab.starts_with("--cpu 4095: CPU 4095 is not online"), "{ab}");
        let mine = pqperf_ffi::affinity::get_affinity().unwrap()[0];
        assert_eq!(cpu_refusal(mine, CpuCheck::Online), None);
        assert_eq!(cpu_refusal(mine, CpuCheck::Allowed), None);
    }

    /// A set-up that is refused leases nothing: the CPU check comes first.
    #[test]
    fn a_refused_set_up_takes_no_lease() {
        let d = std::env::temp_dir();
        let r = MeasuringSetup::open(
            &SetupRequest {
                cpu: CpuRequest::Fixed(4095),
                check: Some(CpuCheck::Allowed),
                owner: &d,
                probe_attempts: 1,
                refuse_emulated: true,
                lease: true,
            },
            &mut |m| panic!("no lease is waited for: {m}"),
        );
        assert!(matches!(r, Err(SetupError::Refused(_))), "{r:?}");
    }
}
