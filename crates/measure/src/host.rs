//! Host checks (method §3.1), the clock probe (§5) and the environment snapshot (§3.2).
//!
//! Problem strings follow the reference wording exactly; pqperf adds nothing to the list, but
//! its evidence names the counter it used ([`counter_info`]).

use std::path::Path;

use pqperf_ffi::{affinity, counters, procinfo};
use serde_json::{Map, Value, json};

const CPU_SYS: &str = "/sys/devices/system/cpu";

/// Reads a sysfs/proc file, whitespace stripped; unreadable counts as absent.
pub fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn cpufreq(cpu: usize, name: &str) -> Option<String> {
    read_trim(format!("{CPU_SYS}/cpu{cpu}/cpufreq/{name}"))
}

/// Expands a kernel CPU list such as `0-3,8,10-11`.
pub fn expand_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.parse() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Result of one clock probe (§5): window rates of the hardware cycle counter.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockProbe {
    /// Median rate (element ⌊n/2⌋ of the sorted rates).
    pub hz: u64,
    /// Lowest window rate.
    pub min_hz: u64,
    /// Highest window rate.
    pub max_hz: u64,
    /// Element ⌊3n/4⌋ − element ⌊n/4⌋.
    pub iqr_hz: u64,
}

impl ClockProbe {
    /// Steady = IQR ≤ 0.5 % of the median.
    pub fn steady(&self) -> bool {
        self.iqr_hz as f64 <= 0.005 * self.hz as f64
    }
}

/// Summarises window rates as the probe does.
pub fn summarise_rates(mut rates: Vec<f64>) -> Option<ClockProbe> {
    if rates.is_empty() || rates.iter().any(|r| r.is_nan() || *r <= 0.0) {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    let n = rates.len();
    Some(ClockProbe {
        hz: rates[n / 2].round() as u64,
        min_hz: rates[0].round() as u64,
        max_hz: rates[n - 1].round() as u64,
        iqr_hz: (rates[3 * n / 4] - rates[n / 4]).round() as u64,
    })
}

/// Measures the core clock of `cpu` with the user-mode hardware cycle counter: one warm-up
/// window, then `windows` windows of `window_ms`. `None` when there is no cycle counter (no
/// PMU, as on this project's VMs) or the CPU cannot be used.
pub fn clock_probe(cpu: usize, windows: usize, window_ms: u64) -> Option<ClockProbe> {
    std::thread::spawn(move || {
        affinity::pin_to(cpu).ok()?;
        let c = counters::Counter::cycles().ok()?;
        let window_ns = window_ms.max(1) * 1_000_000;
        let mut rates = Vec::with_capacity(windows);
        for w in 0..=windows {
            let b = c.begin();
            let n0 = counters::monotonic_raw_ns();
            let mut n1 = n0;
            let mut sink = 0u64;
            while n1 - n0 < window_ns {
                for i in 0..10_000u64 {
                    sink = std::hint::black_box(sink.wrapping_add(i));
                }
                n1 = counters::monotonic_raw_ns();
            }
            let cyc = c.end(b);
            if cyc == 0 {
                return None;
            }
            if w > 0 {
                rates.push(cyc as f64 * 1e9 / (n1 - n0) as f64);
            }
        }
        summarise_rates(rates)
    })
    .join()
    .ok()
    .flatten()
}

/// True if the calling process may run on `cpu` (the reference runs `taskset -c N true`).
pub fn cpu_usable(cpu: usize) -> bool {
    std::thread::spawn(move || affinity::pin_to(cpu).is_ok())
        .join()
        .unwrap_or(false)
}

/// Options of the host check.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Benchmark CPU.
    pub cpu: usize,
    /// Probe attempts when the clock steadiness is judged (reference: 3).
    pub probe_attempts: usize,
    /// Pause between probe attempts (reference: 5 s).
    pub probe_pause: std::time::Duration,
}

impl CheckOptions {
    /// The reference settings for `cpu`.
    pub fn new(cpu: usize) -> Self {
        CheckOptions {
            cpu,
            probe_attempts: 3,
            probe_pause: std::time::Duration::from_secs(5),
        }
    }
}

/// The host problem list of §3.1, in the reference order and wording. Empty = host ready.
pub fn host_problems(opts: &CheckOptions) -> Vec<String> {
    let n = opts.cpu;
    let mut p = Vec::new();
    let arch = procinfo::uname().machine;
    if arch != "x86_64" && arch != "aarch64" {
        p.push(format!("architecture {arch} has no guide configuration"));
    }
    if let Some(e) = pqperf_ffi::emulation::emulated() {
        p.push(format!(
            "the host is emulated ({e}): timings are not performance figures"
        ));
    }
    let paranoid = read_trim("/proc/sys/kernel/perf_event_paranoid");
    if !matches!(paranoid.as_deref(), Some("-1" | "0" | "1" | "2")) {
        p.push("hardware cycle counter unavailable: set kernel.perf_event_paranoid=2".to_string());
    }
    let no_turbo = read_trim(format!("{CPU_SYS}/intel_pstate/no_turbo"));
    let boost = read_trim(format!("{CPU_SYS}/cpufreq/boost"));
    if no_turbo.as_deref() == Some("0") || boost.as_deref() == Some("1") {
        p.push("turbo/boost is enabled".to_string());
    }
    let governor = cpufreq(n, "scaling_governor");
    if let Some(g) = &governor
        && g != "performance"
    {
        p.push(format!("CPU {n} governor is {g}, not performance"));
    }
    if governor.is_some() && arch == "aarch64" {
        let a = cpufreq(n, "scaling_min_freq").unwrap_or_default();
        let b = cpufreq(n, "scaling_max_freq").unwrap_or_default();
        if a != b {
            p.push(format!(
                "CPU {n} clock not pinned (scaling_min_freq {a} != scaling_max_freq {b})"
            ));
        }
    }
    if let Some(sib) = read_trim(format!("{CPU_SYS}/cpu{n}/topology/thread_siblings_list"))
        && sib != n.to_string()
    {
        p.push(format!("CPU {n} shares its core with CPUs {sib} (SMT on)"));
    }
    if let Some(cores) = read_trim("/sys/devices/cpu_core/cpus")
        && !expand_cpu_list(&cores).contains(&n)
    {
        p.push(format!(
            "CPU {n} is not a performance core (cpu_core: {cores})"
        ));
    }
    let usable = cpu_usable(n);
    if !usable {
        p.push(format!("CPU {n} cannot be used by this process (cpuset)"));
    }
    if usable && governor.is_none() && p.is_empty() {
        let mut last = None;
        for attempt in 0..opts.probe_attempts.max(1) {
            if attempt > 0 {
                std::thread::sleep(opts.probe_pause);
            }
            match clock_probe(n, 21, 50) {
                None => {
                    last = None;
                    break;
                }
                Some(pr) => {
                    let steady = pr.steady();
                    last = Some(pr);
                    if steady {
                        break;
                    }
                }
            }
        }
        match last {
            None => p.push(format!(
                "CPU {n}: no cpufreq and no cycle counter to measure the clock"
            )),
            Some(pr) if !pr.steady() => p.push(format!(
                "CPU {n} clock is not steady without cpufreq control ({:.3}-{:.3} GHz)",
                pr.min_hz as f64 / 1e9,
                pr.max_hz as f64 / 1e9
            )),
            Some(_) => {}
        }
    }
    p
}

fn first_line_of(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

fn cpu_model(cpuinfo: &str) -> String {
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    if let Some(m) = field("model name") {
        return m;
    }
    if let Ok(out) = std::process::Command::new("lscpu")
        .env("LC_ALL", "C")
        .output()
    {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let get = |key: &str| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let parts: Vec<String> = [get("Vendor ID"), get("Model name")]
            .into_iter()
            .flatten()
            .collect();
        if !parts.is_empty() {
            return parts.join(" ");
        }
    }
    field("Hardware")
        .or_else(|| field("CPU part"))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Known AArch64 cores by MIDR implementer and part number (as /proc/cpuinfo prints them,
/// `CPU implementer` / `CPU part`), from the kernel's `asm/cputype.h` and vendor documents.
const ARM_CORES: &[(u32, u32, &str)] = &[
    (0x41, 0xd03, "Arm Cortex-A53"),
    (0x41, 0xd05, "Arm Cortex-A55"),
    (0x41, 0xd07, "Arm Cortex-A57"),
    (0x41, 0xd08, "Arm Cortex-A72"),
    (0x41, 0xd0b, "Arm Cortex-A76"),
    (0x41, 0xd0c, "Arm Neoverse N1"),
    (0x41, 0xd0d, "Arm Cortex-A77"),
    (0x41, 0xd40, "Arm Neoverse V1"),
    (0x41, 0xd41, "Arm Cortex-A78"),
    (0x41, 0xd44, "Arm Cortex-X1"),
    (0x41, 0xd46, "Arm Cortex-A510"),
    (0x41, 0xd47, "Arm Cortex-A710"),
    (0x41, 0xd48, "Arm Cortex-X2"),
    (0x41, 0xd49, "Arm Neoverse N2"),
    (0x41, 0xd4f, "Arm Neoverse V2"),
    (0x41, 0xd84, "Arm Neoverse V3"),
    (0x41, 0xd8e, "Arm Neoverse N3"),
    (0x43, 0x0af, "Cavium ThunderX2"),
    (0x46, 0x001, "Fujitsu A64FX"),
    (0x48, 0xd01, "HiSilicon Kunpeng 920 (TaiShan v110)"),
    (0x48, 0xd02, "HiSilicon TaiShan v120"),
    (0x4e, 0x004, "NVIDIA Carmel"),
    (0x51, 0x001, "Qualcomm Oryon"),
    (0x61, 0x022, "Apple M1 Icestorm"),
    (0x61, 0x023, "Apple M1 Firestorm"),
    (0x61, 0x032, "Apple M2 Blizzard"),
    (0x61, 0x033, "Apple M2 Avalanche"),
    (0xc0, 0xac3, "Ampere Ampere-1"),
    (0xc0, 0xac4, "Ampere Ampere-1a"),
];

/// Implementer names for parts not in [`ARM_CORES`].
const ARM_IMPLEMENTERS: &[(u32, &str)] = &[
    (0x41, "Arm"),
    (0x42, "Broadcom"),
    (0x43, "Cavium"),
    (0x46, "Fujitsu"),
    (0x48, "HiSilicon"),
    (0x4e, "NVIDIA"),
    (0x50, "Applied Micro"),
    (0x51, "Qualcomm"),
    (0x61, "Apple"),
    (0x6d, "Microsoft"),
    (0xc0, "Ampere"),
];

/// The core of CPU `cpu` named from its MIDR fields in an AArch64 /proc/cpuinfo text
/// (`CPU implementer`, `CPU part`, `CPU variant`, `CPU revision` of the block whose
/// `processor` is `cpu`, else the first block): e.g. `Arm Neoverse N1 (MIDR 0x41/0xd0c r3p1)`.
/// An unknown part keeps its numbers (`Ampere part 0xabc (…)`); `None` when the text has no
/// MIDR fields (an x86 host, or an emulator showing the host's cpuinfo).
pub fn arm_core_name(cpuinfo: &str, cpu: usize) -> Option<String> {
    let blocks: Vec<&str> = cpuinfo.split("\n\n").collect();
    let field = |b: &str, key: &str| -> Option<u32> {
        b.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            if k.trim() != key {
                return None;
            }
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        })
    };
    let block = blocks
        .iter()
        .find(|b| field(b, "processor") == Some(cpu as u32) && field(b, "CPU part").is_some())
        .or_else(|| blocks.iter().find(|b| field(b, "CPU part").is_some()))?;
    let imp = field(block, "CPU implementer")?;
    let part = field(block, "CPU part")?;
    let midr = match (field(block, "CPU variant"), field(block, "CPU revision")) {
        (Some(v), Some(r)) => format!("MIDR {imp:#04x}/{part:#05x} r{v}p{r}"),
        _ => format!("MIDR {imp:#04x}/{part:#05x}"),
    };
    let name = match ARM_CORES.iter().find(|(i, p, _)| *i == imp && *p == part) {
        Some((_, _, n)) => n.to_string(),
        None => match ARM_IMPLEMENTERS.iter().find(|(i, _)| *i == imp) {
            Some((_, v)) => format!("{v} part {part:#05x}"),
            None => format!("implementer {imp:#04x} part {part:#05x}"),
        },
    };
    Some(format!("{name} ({midr})"))
}

fn machine_name() -> Option<String> {
    for p in [
        "/sys/firmware/devicetree/base/model",
        "/sys/class/dmi/id/product_name",
    ] {
        if let Ok(b) = std::fs::read(p) {
            let s = String::from_utf8_lossy(&b)
                .trim_end_matches(['\0', ' ', '\n'])
                .to_string();
            if !s.is_empty() {
                return Some(s);
            }
        }
    }
    None
}

/// Python's round-half-to-even of `x` to an integer.
fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

/// The environment snapshot of §3.2 for benchmark CPU `cpu`, keys in the reference order.
/// `probe` is the clock probe to record (`None` gives null `core_clock_*`).
pub fn environment(cpu: usize, probe: Option<&ClockProbe>) -> Value {
    let u = procinfo::uname();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mem_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    });
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
    let python = first_line_of("python3", &["--version"])
        .map(|l| l.trim_start_matches("Python ").to_string());
    let s = |v: Option<String>| v.map(Value::String).unwrap_or(Value::Null);
    let mut m = Map::new();
    m.insert("hostname".into(), json!(u.nodename));
    m.insert("architecture".into(), json!(u.machine));
    let emulated = pqperf_ffi::emulation::emulated();
    let model = match &emulated {
        // The emulator shows the host's /proc/cpuinfo: say whose CPU it is.
        Some(e) => format!(
            "{} running {} code under {e}",
            cpu_model(&cpuinfo),
            u.machine
        ),
        None => cpu_model(&cpuinfo),
    };
    m.insert("cpu_model".into(), json!(model));
    m.insert("machine".into(), s(machine_name()));
    m.insert("cpu_number".into(), json!(cpu));
    m.insert(
        "logical_cpus_online".into(),
        s(read_trim(format!("{CPU_SYS}/online"))),
    );
    m.insert("virtualized".into(), json!(cpuinfo.contains("hypervisor")));
    m.insert(
        "memory_total_kib".into(),
        mem_kib.map(Value::from).unwrap_or(Value::Null),
    );
    m.insert("os".into(), s(os));
    m.insert("kernel".into(), json!(u.release));
    m.insert(
        "compiler".into(),
        s(first_line_of(
            &pqperf_ffi::emulation::default_cc(),
            &["--version"],
        )),
    );
    m.insert("cmake".into(), s(first_line_of("cmake", &["--version"])));
    m.insert("python".into(), s(python));
    m.insert(
        "perf_event_paranoid".into(),
        s(read_trim("/proc/sys/kernel/perf_event_paranoid")),
    );
    for (k, f) in [
        ("cpufreq_governor", "scaling_governor"),
        ("cpufreq_driver", "scaling_driver"),
        ("cpufreq_min_khz", "scaling_min_freq"),
        ("cpufreq_max_khz", "scaling_max_freq"),
        ("cpufreq_avg_khz", "cpuinfo_avg_freq"),
    ] {
        m.insert(k.into(), s(cpufreq(cpu, f)));
    }
    m.insert(
        "intel_pstate_no_turbo".into(),
        s(read_trim(format!("{CPU_SYS}/intel_pstate/no_turbo"))),
    );
    m.insert(
        "cpufreq_boost".into(),
        s(read_trim(format!("{CPU_SYS}/cpufreq/boost"))),
    );
    m.insert(
        "smt_control".into(),
        s(read_trim(format!("{CPU_SYS}/smt/control"))),
    );
    let (hz, lo, hi, mhz) = match probe {
        Some(p) => (
            json!(p.hz),
            json!(p.min_hz),
            json!(p.max_hz),
            json!((50.0 * round_half_even(p.hz as f64 / 50_000_000.0)) as u64),
        ),
        None => (Value::Null, Value::Null, Value::Null, Value::Null),
    };
    m.insert("core_clock_hz".into(), hz);
    m.insert("core_clock_min_hz".into(), lo);
    m.insert("core_clock_max_hz".into(), hi);
    m.insert("core_clock_mhz".into(), mhz);
    // pqperf additions (after the reference keys): the AArch64 core from its MIDR fields, and
    // the emulator when the host is emulated.
    if let Some(core) = arm_core_name(&cpuinfo, cpu) {
        m.insert("cpu_core".into(), json!(core));
    }
    if let Some(e) = emulated {
        m.insert("emulated".into(), json!(e));
    }
    Value::Object(m)
}

/// The run's fixed clock in Hz (§3.2): `cpufreq_max_khz` × 1000, else `core_clock_hz`.
pub fn fixed_clock_hz(env: &Value) -> Option<f64> {
    env.get("cpufreq_max_khz")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<f64>().ok())
        .map(|k| k * 1000.0)
        .or_else(|| env.get("core_clock_hz").and_then(Value::as_f64))
}

/// What the evidence says about the counter: `{"counter", "counter_hz", "cycles_are_core_cycles"}`.
/// With hardware cycles `counter_hz` is the probed core clock (or null); with the tick counter
/// it is the tick frequency.
pub fn counter_info(kind: counters::CounterKind, probe: Option<&ClockProbe>) -> Value {
    match kind {
        counters::CounterKind::Cycles => json!({
            "counter": kind.evidence_name(),
            "counter_hz": probe.map(|p| p.hz),
            "cycles_are_core_cycles": true,
        }),
        counters::CounterKind::Ticks => json!({
            "counter": kind.evidence_name(),
            "counter_hz": counters::ticks_hz(20),
            "cycles_are_core_cycles": false,
            "counter_invariant": counters::ticks_invariant(),
        }),
    }
}

/// The counter the driver will use on this host: hardware cycles if a PMU is reachable.
pub fn counter_kind() -> counters::CounterKind {
    match counters::Counter::cycles() {
        Ok(_) => counters::CounterKind::Cycles,
        Err(_) => counters::CounterKind::Ticks,
    }
}

/// Prints the host problems as `pqperf check` and `campaign check` do: one `HOST:` line each,
/// then `host ready` or the count.
pub fn print_problems(problems: &[String]) {
    for p in problems {
        println!("HOST: {p}");
    }
    if problems.is_empty() {
        println!("host ready");
    } else {
        println!("{} problem(s)", problems.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the seam writes are the vocabulary's: cycles read as core cycles, the tick
    /// source of this architecture as a known tick counter.
    #[test]
    fn counter_names_are_the_vocabulary() {
        use pqperf_model::vocab::Counter;
        let info = counter_info(counters::CounterKind::Cycles, None);
        let cycles = Counter::parse(info["counter"].as_str().unwrap());
        assert!(cycles.is_core_cycles());
        assert_eq!(
            info["cycles_are_core_cycles"],
            json!(cycles.is_core_cycles())
        );
        let ticks = Counter::parse(counters::CounterKind::Ticks.evidence_name());
        assert!(!ticks.is_core_cycles());
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert!(!matches!(ticks, Counter::Other(_)), "{ticks:?}");
        }
    }

    #[test]
    fn cpu_lists_expand() {
        assert_eq!(expand_cpu_list("0-3,8,10-11"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(expand_cpu_list("5"), vec![5]);
    }

    #[test]
    fn probe_summary_follows_the_reference_indices() {
        let rates: Vec<f64> = (1..=21).map(|i| 1e9 + i as f64 * 1e6).collect();
        let p = summarise_rates(rates).unwrap();
        assert_eq!(p.hz, 1_011_000_000);
        assert_eq!(p.min_hz, 1_001_000_000);
        assert_eq!(p.max_hz, 1_021_000_000);
        assert_eq!(p.iqr_hz, 1_016_000_000 - 1_006_000_000);
        assert!(!p.steady());
        assert!(summarise_rates(vec![0.0]).is_none());
    }

    #[test]
    fn environment_has_reference_keys_in_order() {
        let env = environment(0, None);
        let keys: Vec<&str> = env
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            &keys[..5],
            &[
                "hostname",
                "architecture",
                "cpu_model",
                "machine",
                "cpu_number"
            ]
        );
        assert_eq!(env["cpu_number"], 0);
        assert!(env["memory_total_kib"].as_u64().unwrap() > 0);
        assert!(env["compiler"].as_str().unwrap_or("").contains("gcc"));
    }

    #[test]
    fn problems_on_this_host_are_reference_strings() {
        let mut o = CheckOptions::new(0);
        o.probe_attempts = 1;
        let p = host_problems(&o);
        for s in &p {
            assert!(
                s.starts_with("CPU 0")
                    || s.contains("turbo")
                    || s.contains("hardware")
                    || s.contains("architecture"),
                "{s}"
            );
        }
        // A CPU that does not exist cannot be used.
        let mut o = CheckOptions::new(4000);
        o.probe_attempts = 1;
        let p = host_problems(&o);
        assert!(
            p.iter()
                .any(|s| s == "CPU 4000 cannot be used by this process (cpuset)"),
            "{p:?}"
        );
    }

    /// Real /proc/cpuinfo texts (abridged to two CPUs) of AArch64 machines.
    const NEOVERSE_N1: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
    const KUNPENG_920: &str = "processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm ssbs\nCPU implementer\t: 0x48\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd01\nCPU revision\t: 0\n";
    const GRAVITON3: &str = "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n";
    /// A big.LITTLE phone-class SoC: CPU 0 a Cortex-A55, CPU 4 a Cortex-A76.
    const BIG_LITTLE: &str = "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\nCPU revision\t: 0\n\nprocessor\t: 4\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 0\n";
    const APPLE_M1_VM: &str = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 asimddp sha512 asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp flagm2 frint\nCPU implementer\t: 0x61\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0x023\nCPU revision\t: 1\n";
    const X86: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum\nflags\t\t: fpu sse2 avx2 hypervisor\n";

    #[test]
    fn arm_cores_from_midr() {
        assert_eq!(
            arm_core_name(NEOVERSE_N1, 1).as_deref(),
            Some("Arm Neoverse N1 (MIDR 0x41/0xd0c r3p1)")
        );
        assert_eq!(
            arm_core_name(KUNPENG_920, 0).as_deref(),
            Some("HiSilicon Kunpeng 920 (TaiShan v110) (MIDR 0x48/0xd01 r1p0)")
        );
        assert_eq!(
            arm_core_name(GRAVITON3, 0).as_deref(),
            Some("Arm Neoverse V1 (MIDR 0x41/0xd40 r1p1)")
        );
        assert_eq!(
            arm_core_name(APPLE_M1_VM, 0).as_deref(),
            Some("Apple M1 Firestorm (MIDR 0x61/0x023 r1p1)")
        );
        // Each CPU's own block; a CPU without one falls back to the first block.
        assert!(
            arm_core_name(BIG_LITTLE, 4)
                .unwrap()
                .starts_with("Arm Cortex-A76")
        );
        assert!(
            arm_core_name(BIG_LITTLE, 0)
                .unwrap()
                .starts_with("Arm Cortex-A55")
        );
        assert!(
            arm_core_name(BIG_LITTLE, 9)
                .unwrap()
                .starts_with("Arm Cortex-A55")
        );
        // Unknown part of a known implementer, unknown implementer.
        let odd = KUNPENG_920.replace("0xd01", "0xabc");
        assert_eq!(
            arm_core_name(&odd, 0).as_deref(),
            Some("HiSilicon part 0xabc (MIDR 0x48/0xabc r1p0)")
        );
        let odd = KUNPENG_920.replace("0x48", "0x99");
        assert!(
            arm_core_name(&odd, 0)
                .unwrap()
                .starts_with("implementer 0x99 part 0xd01")
        );
        assert_eq!(arm_core_name(X86, 0), None);
        assert_eq!(arm_core_name("", 0), None);
    }

    #[test]
    fn mhz_rounding_is_half_even() {
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(round_half_even(2.4), 2.0);
    }
}
