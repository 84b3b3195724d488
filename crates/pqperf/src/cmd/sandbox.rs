//! The options of the commands that run candidate code (import's header probes, build, kat,
//! ct, campaign, demo): sandbox, address-space limit and the emulation label. Commands that
//! only read evidence (report, site, validate, compare, …) do not have them.

/// How candidate code is contained (`--no-sandbox`, `--mem-limit`, `--emulated`).
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Candidate code")]
pub struct Containment {
    /// Run candidate code without namespaces, Landlock and rlimits (it still gets its own
    /// process group, a private result channel and capped output capture). Recorded in the
    /// campaign evidence and shown on the method page.
    #[arg(long, global = true)]
    pub no_sandbox: bool,
    /// Address-space limit of children that run candidate code (bytes, or with K/M/G suffix;
    /// `none` for no limit).
    #[arg(long, global = true, default_value = "8G", value_name = "BYTES",
        value_parser = parse_mem_limit)]
    pub mem_limit: MemLimit,
    /// Label the evidence as taken on an emulated host (timings are not performance figures)
    /// even where detection does not see it; qemu-user is detected on its own.
    #[arg(long, global = true)]
    pub emulated: bool,
}

/// An address-space limit: bytes, or `None` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemLimit(pub Option<u64>);

/// `8G`, `512M`, `65536`, `none` (at least 64 MiB).
pub fn parse_mem_limit(s: &str) -> Result<MemLimit, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(MemLimit(None));
    }
    let (num, mul) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M') => (&s[..s.len() - 1], 1 << 20),
        Some('G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .filter(|n| *n >= 64 << 20)
        .map(|n| MemLimit(Some(n)))
        .ok_or_else(|| format!("expected bytes >= 64M, e.g. 8G, 512M or none, not {s:?}"))
}

/// `--emulated` was given to this process (forwarded to child pqperf processes).
static FORCED_EMULATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Containment {
    /// Makes these options the process-wide policy (before any candidate code runs).
    pub fn apply(&self) {
        if self.emulated {
            FORCED_EMULATED.store(true, std::sync::atomic::Ordering::SeqCst);
            pqperf_ffi::emulation::force();
        }
        pqperf_ffi::untrusted::set_policy(pqperf_ffi::untrusted::Policy {
            sandbox: !self.no_sandbox,
            limits: pqperf_ffi::sandbox::Limits {
                address_space: self.mem_limit.0,
                ..Default::default()
            },
        });
    }
}

/// The flags that give a child pqperf process (a demo step, a shard) this process's
/// containment; they follow the subcommand name.
pub fn child_args() -> Vec<String> {
    let mut v = pqperf_ffi::untrusted::policy_args(&pqperf_ffi::untrusted::policy());
    if FORCED_EMULATED.load(std::sync::atomic::Ordering::SeqCst) {
        v.push("--emulated".into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limits_parse_and_small_ones_are_refused() {
        assert_eq!(parse_mem_limit("8G"), Ok(MemLimit(Some(8 << 30))));
        assert_eq!(parse_mem_limit("512m"), Ok(MemLimit(Some(512 << 20))));
        assert_eq!(parse_mem_limit("none"), Ok(MemLimit(None)));
        assert!(parse_mem_limit("1M").is_err());
        assert!(parse_mem_limit("lots").is_err());
    }
}
