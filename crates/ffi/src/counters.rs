//! Counters and clocks for timing: the monotonic raw clock, the invariant tick counter
//! (`rdtsc` on x86-64, `cntvct_el0` on AArch64) and hardware core cycles through
//! `perf_event_open` (user mode only) where the kernel exposes a PMU.
//!
//! A [`Counter`] says which source it is ([`CounterKind`]): TSC ticks are reference ticks at a
//! fixed frequency, not core cycles, and the evidence must say so.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Nanoseconds of `CLOCK_MONOTONIC_RAW` (not slewed by NTP).
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists on every Linux
    // kernel this program supports, so the call cannot fail except with EFAULT (impossible).
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads the architecture's free-running tick counter: `rdtsc` (x86-64) or `cntvct_el0`
/// (AArch64). Returns 0 on other architectures.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` is available on every x86-64 CPU and has no memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading the virtual counter is permitted at EL0 on Linux and has no side
        // effects; the `isb` orders it after preceding instructions.
        unsafe { core::arch::asm!("isb", "mrs {0}, cntvct_el0", out(reg) v, options(nostack)) };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// Name of the tick source returned by [`ticks`]: `"tsc"`, `"cntvct_el0"` or `"none"`.
pub fn ticks_source() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "tsc"
    } else if cfg!(target_arch = "aarch64") {
        "cntvct_el0"
    } else {
        "none"
    }
}

/// True when the tick counter can be trusted as a constant-rate clock: on x86-64 the CPU
/// flags `constant_tsc` and `nonstop_tsc` (invariant TSC); on AArch64 always (the generic
/// timer is architecturally constant-rate).
pub fn ticks_invariant() -> bool {
    if cfg!(target_arch = "aarch64") {
        return true;
    }
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = text
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// Frequency of [`ticks`] in Hz. AArch64: `cntfrq_el0`. x86-64: measured against
/// `CLOCK_MONOTONIC_RAW` over `window_ms` milliseconds (median of three windows), rounded to
/// the nearest kHz. `None` if no tick counter exists.
pub fn ticks_hz(window_ms: u64) -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let _ = window_ms;
        let v: u64;
        // SAFETY: cntfrq_el0 is readable at EL0 and side-effect free.
        unsafe { core::arch::asm!("mrs {0}, cntfrq_el0", out(reg) v, options(nostack)) };
        Some(v)
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        let mut rates: Vec<f64> = (0..3)
            .map(|_| {
                let n0 = monotonic_raw_ns();
                let t0 = ticks();
                let mut n1 = n0;
                while n1 - n0 < window_ms.max(1) * 1_000_000 {
                    std::hint::spin_loop();
                    n1 = monotonic_raw_ns();
                }
                let t1 = ticks();
                (t1 - t0) as f64 * 1e9 / (n1 - n0) as f64
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        Some(((rates[1] / 1000.0).round() * 1000.0) as u64)
    }
}

/// Which source a [`Counter`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    /// Hardware core cycles, user mode only (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles,
    /// The invariant tick counter ([`ticks`]): reference ticks at a fixed rate, not core cycles.
    Ticks,
}

impl CounterKind {
    /// Name stored in the evidence: `"cycles"` for hardware cycles, else the tick source
    /// (`"tsc"`, `"cntvct_el0"`).
    pub fn evidence_name(self) -> &'static str {
        match self {
            CounterKind::Cycles => "cycles",
            CounterKind::Ticks => ticks_source(),
        }
    }
}

/// A counter bracketing timed work: [`Counter::begin`] then [`Counter::end`] gives the count
/// in between.
#[derive(Debug)]
pub struct Counter {
    kind: CounterKind,
    fd: Option<OwnedFd>,
}

// perf_event ABI constants (linux/perf_event.h).
const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_RESET: libc::c_ulong = 0x2403;
// attr.flags bits: disabled (0), exclude_kernel (5), exclude_hv (6).
const ATTR_DISABLED: u64 = 1 << 0;
const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
const ATTR_EXCLUDE_HV: u64 = 1 << 6;

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0`+ (the kernel accepts any published
/// size; fields past `size` are zero).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved2: u16,
}

impl Counter {
    /// Hardware cycles of the calling thread in user mode, if the kernel has a PMU and
    /// `perf_event_paranoid` allows it; the error text says why not.
    pub fn cycles() -> Result<Counter, String> {
        Counter::open_cycles().map_err(|errno| {
            format!(
                "perf_event_open(cycles): {}",
                std::io::Error::from_raw_os_error(errno)
            )
        })
    }

    /// [`Counter::cycles`] without the error text: the `errno` of a refused
    /// `perf_event_open`. Formats nothing and allocates nothing on failure, so a caller that
    /// measures its own memory (the driver's peak RSS) is not charged for `strerror`'s
    /// locale tables.
    fn open_cycles() -> Result<Counter, i32> {
        let attr = PerfEventAttr {
            type_: PERF_TYPE_HARDWARE,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: PERF_COUNT_HW_CPU_CYCLES,
            flags: ATTR_DISABLED | ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_HV,
            ..Default::default()
        };
        // SAFETY: `attr` is a properly sized, initialised perf_event_attr that lives across the
        // call; pid 0 / cpu -1 / group -1 / flags 0 are valid arguments. The kernel returns a
        // new file descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                0 as libc::c_ulong,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        // SAFETY: `fd` is a fresh descriptor returned by the kernel and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Ok(Counter {
            kind: CounterKind::Cycles,
            fd: Some(fd),
        })
    }

    /// The tick counter ([`ticks`]).
    pub fn ticks() -> Counter {
        Counter {
            kind: CounterKind::Ticks,
            fd: None,
        }
    }

    /// Hardware cycles when available, else the tick counter (the refusal is not formatted).
    pub fn best() -> Counter {
        Counter::open_cycles().unwrap_or_else(|_| Counter::ticks())
    }

    /// Which source this counter reads.
    pub fn kind(&self) -> CounterKind {
        self.kind
    }

    /// Starts a measurement; pass the returned value to [`Counter::end`].
    #[inline(always)]
    pub fn begin(&self) -> u64 {
        match &self.fd {
            Some(fd) => {
                ioctl(fd, PERF_EVENT_IOC_RESET);
                ioctl(fd, PERF_EVENT_IOC_ENABLE);
                0
            }
            None => ticks(),
        }
    }

    /// Ends a measurement begun with [`Counter::begin`] and returns the count.
    #[inline(always)]
    pub fn end(&self, begin: u64) -> u64 {
        match &self.fd {
            Some(fd) => {
                ioctl(fd, PERF_EVENT_IOC_DISABLE);
                let mut v: u64 = 0;
                // SAFETY: reading a perf event fd without read_format yields exactly one u64
                // into `v`, which is valid and writable for 8 bytes.
                let n = unsafe {
                    libc::read(
                        fd.as_raw_fd(),
                        (&mut v as *mut u64).cast::<libc::c_void>(),
                        8,
                    )
                };
                if n == 8 { v } else { 0 }
            }
            None => ticks().wrapping_sub(begin),
        }
    }
}

#[inline(always)]
fn ioctl(fd: &OwnedFd, request: libc::c_ulong) {
    // SAFETY: `fd` is an open perf event descriptor; these requests take an integer argument
    // (0 = this event only) and do not touch memory.
    unsafe {
        libc::ioctl(fd.as_raw_fd(), request as _, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_advance_with_time() {
        let t0 = ticks();
        let n0 = monotonic_raw_ns();
        while monotonic_raw_ns() - n0 < 2_000_000 {}
        let t1 = ticks();
        if ticks_source() != "none" {
            assert!(t1 > t0, "tick counter did not advance: {t0} -> {t1}");
        }
    }

    #[test]
    fn tick_rate_is_plausible() {
        if let Some(hz) = ticks_hz(5) {
            assert!(hz > 1_000_000 && hz < 10_000_000_000, "{hz}");
        }
    }

    #[test]
    fn best_counter_counts_a_busy_loop() {
        let c = Counter::best();
        let b = c.begin();
        let mut x = 0u64;
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let n = c.end(b);
        assert!(n > 1000, "{:?} counted {n}", c.kind());
        assert!(!c.kind().evidence_name().is_empty());
    }
}
