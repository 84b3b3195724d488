//! The wrapper C source and the symbols it can wrap.
//!
//! `c/wrap.c` is embedded in the binary and written next to each profiling build; only the
//! wrappers of symbols the instance's objects actually reference are compiled
//! (`-DPQPERF_WRAP_<sym>`) and passed to the linker as `-Wl,--wrap=<sym>`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ProfileError;

/// Source of the wrappers (method.md §10.3).
pub const WRAP_C: &str = include_str!("../c/wrap.c");

/// Symbols wrapped in ICCS instances.
pub const ICCS_SYMBOLS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash", "get_random_number"];

/// Every symbol `wrap.c` has a wrapper for (ICCS helpers, DRNG, PQClean common code).
pub fn all_symbols() -> Vec<&'static str> {
    WRAP_C
        .lines()
        .filter_map(|l| l.strip_prefix("#ifdef PQPERF_WRAP_"))
        .map(str::trim)
        .collect()
}

/// Symbols wrapped in `nist` (PQClean) instances: `PQCLEAN_randombytes` and the common
/// SHAKE/SHA-3/SHA-2/AES functions.
pub fn nist_symbols() -> Vec<&'static str> {
    all_symbols()
        .into_iter()
        .filter(|s| !ICCS_SYMBOLS.contains(s))
        .collect()
}

/// Function family a wrapped symbol is accounted under (`drng` for the random generators).
pub fn family(symbol: &str) -> &'static str {
    let s = symbol;
    if s == "get_random_number" || s.ends_with("randombytes") {
        return "drng";
    }
    for f in [
        "pseudohash",
        "pseudoXOF",
        "sm3hash",
        "shake128",
        "shake256",
        "sha3_256",
        "sha3_384",
        "sha3_512",
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "aes128",
        "aes192",
        "aes256",
    ] {
        if s.starts_with(f) {
            return f;
        }
    }
    "other"
}

/// Write `wrap.c` into `dir` and compile it with `cc` (gcc) for the given symbols, with
/// `extra_cflags` (e.g. `-m` flags matching the instance). Returns the object path.
pub fn compile_wrap_object(
    cc: &str,
    dir: &Path,
    symbols: &[String],
    extra_cflags: &[String],
) -> Result<PathBuf, ProfileError> {
    std::fs::create_dir_all(dir).map_err(|e| ProfileError::io(dir, e))?;
    let src = dir.join("pqperf_wrap.c");
    std::fs::write(&src, WRAP_C).map_err(|e| ProfileError::io(&src, e))?;
    let obj = dir.join("pqperf_wrap.o");
    let mut cmd = Command::new(cc);
    cmd.args(["-O2", "-fPIC", "-std=gnu11", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .args(extra_cflags);
    for s in symbols {
        cmd.arg(format!("-DPQPERF_WRAP_{s}"));
    }
    let out = cmd
        .output()
        .map_err(|e| ProfileError::Tool(format!("{cc}: {e}")))?;
    if !out.status.success() {
        return Err(ProfileError::Tool(format!(
            "compiling wrap.c failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(obj)
}

/// `-Wl,--wrap=<sym>` for each symbol.
pub fn wrap_link_args(symbols: &[String]) -> Vec<String> {
    symbols.iter().map(|s| format!("-Wl,--wrap={s}")).collect()
}

/// Names the exported control interface uses (add them to a version script).
pub const CONTROL_EXPORTS: &[&str] = &[
    "ngcc_hashprof_tick_source",
    "ngcc_hashprof_ticks",
    "ngcc_hashprof_enable",
    "ngcc_hashprof_reset",
    "ngcc_hashprof_entries",
    "ngcc_hashprof_overhead",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_sets() {
        let all = all_symbols();
        for s in ICCS_SYMBOLS {
            assert!(all.contains(s), "{s}");
        }
        let n = nist_symbols();
        assert!(n.contains(&"PQCLEAN_randombytes"));
        assert!(n.contains(&"shake256_inc_squeeze"));
        assert!(n.contains(&"sha3_512"));
        assert!(n.contains(&"aes256_ctr"));
        assert!(!n.contains(&"pseudoXOF"));
        assert_eq!(family("shake128_inc_absorb"), "shake128");
        assert_eq!(family("PQCLEAN_randombytes"), "drng");
        assert_eq!(family("sha3_256_inc_finalize"), "sha3_256");
    }
}
