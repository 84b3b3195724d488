//! Is this pqperf emulated? Under a user-mode emulator (qemu-user) the kernel is the host's:
//! `/proc/cpuinfo` describes the host CPU, not the architecture this binary was built for, so
//! a mismatch between the two is the signal. `--emulated` (or `PQPERF_EMULATED=1`) forces the
//! label. Timings taken under emulation are not performance figures; the evidence says so
//! (`pqperf.emulated` in records and campaign.json).
//!
//! An emulated pqperf cannot `exec` itself when the host has no binfmt_misc registration for
//! its architecture: `PQPERF_EMULATOR` (e.g. `qemu-aarch64`, with `QEMU_LD_PREFIX` naming the
//! sysroot) is then the command every re-execution of pqperf goes through ([`self_command`]).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Environment variable forcing the emulation label (`1`, or a label such as `qemu-user`).
pub const EMULATED_ENV: &str = "PQPERF_EMULATED";
/// Environment variable: the emulator command (whitespace-separated argv prefix) that
/// re-executions of pqperf go through.
pub const EMULATOR_ENV: &str = "PQPERF_EMULATOR";

static FORCED: AtomicBool = AtomicBool::new(false);

/// `--emulated`: label this process's evidence as emulated whatever detection says. Call
/// before the first [`emulated`].
pub fn force() {
    FORCED.store(true, Ordering::SeqCst);
}

/// The architecture family a `/proc/cpuinfo` text describes (`x86_64`, `aarch64`), if known.
pub fn cpuinfo_family(cpuinfo: &str) -> Option<&'static str> {
    let has_key = |k: &str| {
        cpuinfo
            .lines()
            .any(|l| l.split_once(':').is_some_and(|(a, _)| a.trim() == k))
    };
    if has_key("CPU implementer") || has_key("Features") {
        Some("aarch64")
    } else if has_key("vendor_id") || has_key("flags") {
        Some("x86_64")
    } else {
        None
    }
}

/// Emulation label from the facts: `forced` (flag or environment value), the architecture
/// this binary was built for, the `/proc/cpuinfo` text and the emulator command (if any).
pub fn detect(
    forced: Option<&str>,
    built_for: &str,
    cpuinfo: &str,
    emulator: Option<&str>,
) -> Option<String> {
    let tool = || match emulator {
        Some(e) if e.contains("qemu") => "qemu-user".to_string(),
        _ => "user-mode emulation".to_string(),
    };
    if let Some(f) = forced {
        return Some(if f.is_empty() || f == "1" {
            tool()
        } else {
            f.to_string()
        });
    }
    match cpuinfo_family(cpuinfo) {
        Some(host) if host != built_for => Some(tool()),
        _ => None,
    }
}

/// How this process is emulated (`qemu-user`, …), `None` on a native host. Detected once.
pub fn emulated() -> Option<String> {
    static E: OnceLock<Option<String>> = OnceLock::new();
    E.get_or_init(|| {
        let env = std::env::var(EMULATED_ENV).ok().filter(|v| v != "0");
        let forced = if FORCED.load(Ordering::SeqCst) {
            Some(env.unwrap_or_default())
        } else {
            env
        };
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let emulator = std::env::var(EMULATOR_ENV).ok();
        detect(
            forced.as_deref(),
            std::env::consts::ARCH,
            &cpuinfo,
            emulator.as_deref(),
        )
    })
    .clone()
}

/// The emulator argv prefix from `PQPERF_EMULATOR` (empty when unset).
pub fn emulator_prefix() -> Vec<String> {
    std::env::var(EMULATOR_ENV)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The path that re-executes the running program: `/proc/self/exe`, which names the image
/// this process runs even after the file was replaced or removed (a rebuild during a
/// campaign turns [`std::env::current_exe`] into `…/pqperf (deleted)`, which cannot be
/// started). Under `PQPERF_EMULATOR` the emulator opens the path itself, where
/// `/proc/self/exe` would be the emulator, so the resolved path is returned there.
pub fn self_exe() -> std::io::Result<std::path::PathBuf> {
    let proc_exe = Path::new("/proc/self/exe");
    if emulator_prefix().is_empty() && proc_exe.exists() {
        Ok(proc_exe.to_path_buf())
    } else {
        std::env::current_exe()
    }
}

/// A `Command` that runs the executable `exe` (pqperf itself): directly, or through the
/// emulator of `PQPERF_EMULATOR` when that is set.
pub fn self_command(exe: &Path) -> Command {
    let prefix = emulator_prefix();
    match prefix.split_first() {
        None => Command::new(exe),
        Some((tool, rest)) => {
            let mut c = Command::new(tool);
            c.args(rest).arg(exe);
            c
        }
    }
}

/// The target triple a compiler produces code for (`gcc -dumpmachine`), if it runs.
pub fn compiler_target(cc: &str) -> Option<String> {
    Command::new(cc)
        .arg("-dumpmachine")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Whether a compiler target triple (`aarch64-linux-gnu`) is for architecture `arch`.
pub fn target_is_arch(triple: &str, arch: &str) -> bool {
    triple.split('-').next() == Some(arch)
}

/// The system default C compiler for this pqperf's architecture (decided once): `$PQPERF_CC`
/// if set; else `gcc` when it produces code for this architecture (a native host); else
/// `<arch>-linux-gnu-gcc` when that does (an emulated pqperf, whose `gcc` is the host's);
/// else `gcc` (whose builds then fail and say why). The build stage compiles with it and the
/// environment snapshot records its version.
pub fn default_cc() -> String {
    static CC: OnceLock<String> = OnceLock::new();
    CC.get_or_init(|| {
        if let Ok(cc) = std::env::var("PQPERF_CC")
            && !cc.trim().is_empty()
        {
            return cc.trim().to_string();
        }
        let arch = std::env::consts::ARCH;
        let cross = format!("{arch}-linux-gnu-gcc");
        for cc in ["gcc", cross.as_str()] {
            if compiler_target(cc).is_some_and(|t| target_is_arch(&t, arch)) {
                return cc.to_string();
            }
        }
        "gcc".into()
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    const X86: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu sse2 avx2 hypervisor\n";
    const ARM: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";

    #[test]
    fn families() {
        assert_eq!(cpuinfo_family(X86), Some("x86_64"));
        assert_eq!(cpuinfo_family(ARM), Some("aarch64"));
        assert_eq!(cpuinfo_family(""), None);
    }

    #[test]
    fn detection() {
        assert_eq!(detect(None, "x86_64", X86, None), None);
        assert_eq!(detect(None, "aarch64", ARM, None), None);
        assert_eq!(
            detect(None, "aarch64", X86, Some("qemu-aarch64")).as_deref(),
            Some("qemu-user")
        );
        assert_eq!(
            detect(None, "aarch64", X86, None).as_deref(),
            Some("user-mode emulation")
        );
        // Unknown cpuinfo: no claim either way.
        assert_eq!(detect(None, "aarch64", "", None), None);
        assert_eq!(
            detect(Some("1"), "x86_64", X86, None).as_deref(),
            Some("user-mode emulation")
        );
        assert_eq!(
            detect(Some("box64"), "x86_64", X86, None).as_deref(),
            Some("box64")
        );
    }

    #[test]
    fn triples() {
        assert!(target_is_arch("aarch64-linux-gnu", "aarch64"));
        assert!(target_is_arch("x86_64-linux-gnu", "x86_64"));
        assert!(!target_is_arch("x86_64-linux-gnu", "aarch64"));
        // This host's default compiler builds for this architecture (gcc is installed).
        let t = compiler_target(&default_cc()).expect("the default compiler runs");
        assert!(target_is_arch(&t, std::env::consts::ARCH), "{t}");
    }

    #[test]
    fn this_host_is_consistent() {
        // The test binary runs natively on the CI host unless an emulator is named.
        if std::env::var(EMULATOR_ENV).is_err() && std::env::var(EMULATED_ENV).is_err() {
            assert_eq!(emulated(), None);
        }
    }
}
