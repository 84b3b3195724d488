//! The C ABI artifact of `pqperf-iccs`, for gcc builds of candidate libraries.
//!
//! [`write_provider`] writes `libpqperf_iccs.a` and the ICCS-only subset
//! `libpqperf_iccs_core.a` (built by `build.rs` from the very same
//! primitive sources as `pqperf-iccs`; `no_std`, `panic=abort`, no Rust runtime: its only
//! undefined symbols are libc's `memcpy`, `write`, `malloc`, `free`) plus an `include/` directory with
//! `auxfunc.h`, `drng.h`, `rng.h`, `pqperf_iccs.h` and the ICCS-baseline hash-instance
//! source `iccs_crypthash.c` / `iccs_crypthash.h`.
//!
//! Archive members (a member is linked only if one of its symbols is still undefined, so a
//! candidate's own `randombytes`, `drng_algorithm`, `drng.c` or `auxfunc.c` wins cleanly):
//!
//! | member | C symbols |
//! |---|---|
//! | `iccs_aux.o` | `sm3hash`, `pseudohash`, `pseudoXOF` |
//! | `iccs_drng.o` | `init_random_number`, `get_random_number` |
//! | `iccs_drng_ctx.o` | `drng_algorithm` (data, 165 bytes) |
//! | `nist_rng.o` | `randombytes_init`, `randombytes`, `nist_kat_init` |
//! | `hqc_rng.o` | `hqc_kat_init`, `hqc_kat_release`, `pqperf_hqc_randombytes` |
//! | `pqclean_rng.o` | `PQCLEAN_randombytes` (serves the generator initialised last) |
//! | `rng_mode.o` | `pqperf_iccs_rng_mode` (data: 0 = NIST DRBG, 1 = HQC) |
//!
//! Typical link line of a candidate: `gcc -shared ... <objects> -L<dir> -lpqperf_iccs`
//! (or the archive path itself) **after** the candidate's objects.

#![forbid(unsafe_code)]

use std::io;
use std::path::{Path, PathBuf};

pub mod selftest;

/// The static library bytes (built by `build.rs`).
pub const STATIC_LIB_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libpqperf_iccs.a"));

/// `rustc --version` of the compiler that built the archive members (recorded as the pqperf
/// provider's compiler).
pub const ARTIFACT_COMPILER: &str = env!("PQPERF_ICCS_ARTIFACT_RUSTC");

/// The rustc options of every archive member (recorded as the pqperf provider's flags).
pub const ARTIFACT_FLAGS: &str = env!("PQPERF_ICCS_ARTIFACT_FLAGS");

/// File name of the static library written by [`write_provider`].
pub const STATIC_LIB_NAME: &str = "libpqperf_iccs.a";

/// The ICCS-only static library bytes: members `iccs_aux.o`, `iccs_drng.o`,
/// `iccs_drng_ctx.o` (no `randombytes`, no PQClean/HQC generators).
pub const CORE_LIB_BYTES: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/libpqperf_iccs_core.a"));

/// File name of the ICCS-only static library.
pub const CORE_LIB_NAME: &str = "libpqperf_iccs_core.a";

/// Name for `-l` (`-lpqperf_iccs`).
pub const LINK_NAME: &str = "pqperf_iccs";

/// Headers and C sources written into `include/`, as (file name, contents).
pub const INCLUDE_FILES: &[(&str, &str)] = &[
    ("auxfunc.h", include_str!("../include/auxfunc.h")),
    ("drng.h", include_str!("../include/drng.h")),
    ("rng.h", include_str!("../include/rng.h")),
    ("pqperf_iccs.h", include_str!("../include/pqperf_iccs.h")),
    (
        "iccs_crypthash.h",
        include_str!("../include/iccs_crypthash.h"),
    ),
    (
        "iccs_crypthash.c",
        include_str!("../include/iccs_crypthash.c"),
    ),
];

/// ICCS symbols (official names): auxfunc.h and drng.h, plus the DRNG context global.
pub const ICCS_SYMBOLS: &[&str] = &[
    "sm3hash",
    "pseudohash",
    "pseudoXOF",
    "init_random_number",
    "get_random_number",
    "drng_algorithm",
];

/// NIST PQCgenKAT `rng.h` symbols (AES-256 CTR_DRBG) and PQClean's `nist_kat_init`.
pub const NIST_SYMBOLS: &[&str] = &["randombytes_init", "randombytes", "nist_kat_init"];

/// PQClean HQC KAT generator symbols (`randombytes` of that generator is renamed).
pub const HQC_SYMBOLS: &[&str] = &["hqc_kat_init", "hqc_kat_release", "pqperf_hqc_randombytes"];

/// The randomness symbol PQClean scheme code references, and the mode byte behind it.
pub const PQCLEAN_SYMBOLS: &[&str] = &["PQCLEAN_randombytes", "pqperf_iccs_rng_mode"];

/// Every C symbol the static library defines (global, C linkage).
pub fn exported_symbols() -> Vec<&'static str> {
    [ICCS_SYMBOLS, NIST_SYMBOLS, HQC_SYMBOLS, PQCLEAN_SYMBOLS].concat()
}

/// libc symbols the static library needs from the final link.
pub const UNDEFINED_LIBC_SYMBOLS: &[&str] = &["memcpy", "write", "malloc", "free"];

/// What [`write_provider`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// `<dir>/libpqperf_iccs.a`: every symbol (ICCS, NIST, HQC, PQClean).
    pub static_lib: PathBuf,
    /// `<dir>/libpqperf_iccs_core.a`: the ICCS symbols only ([`ICCS_SYMBOLS`]). Recommended
    /// for ICCS candidates: a candidate that references `randombytes` without defining it
    /// then fails to link (as with the official files) instead of silently getting the NIST
    /// DRBG of the full library.
    pub iccs_core_lib: PathBuf,
    /// `<dir>/include` (pass as `-I`; put it after the candidate's own include directory so
    /// that a candidate's `drng.h`/`auxfunc.h` shadow these).
    pub include_dir: PathBuf,
}

impl Provider {
    /// The directory holding the static library (for `-L`).
    pub fn lib_dir(&self) -> &Path {
        self.static_lib.parent().unwrap_or(Path::new("."))
    }

    /// Path of the ICCS-baseline `CryptHash` source (`include/iccs_crypthash.c`).
    pub fn crypthash_source(&self) -> PathBuf {
        self.include_dir.join("iccs_crypthash.c")
    }

    /// gcc arguments (no compiler, no optimisation flags, no `-o`) that build the shared
    /// library of one ICCS-baseline hash instance: `-shared -fPIC -I<include> -D...
    /// <iccs_crypthash.c> <libpqperf_iccs_core.a>`. Append your flags and `-o lib<label>.so`.
    pub fn hash_instance_args(&self, inst: &HashInstance) -> Vec<String> {
        let mut v = vec![
            "-shared".to_string(),
            "-fPIC".to_string(),
            format!("-I{}", self.include_dir.display()),
        ];
        v.extend(
            inst.defines()
                .into_iter()
                .map(|(k, val)| format!("-D{k}={val}")),
        );
        v.push(self.crypthash_source().display().to_string());
        v.push(self.iccs_core_lib.display().to_string());
        v
    }
}

/// Write the static library and the `include/` directory into `dir` (created if missing;
/// existing files are overwritten).
pub fn write_provider(dir: &Path) -> io::Result<Provider> {
    std::fs::create_dir_all(dir)?;
    let include_dir = dir.join("include");
    std::fs::create_dir_all(&include_dir)?;
    let static_lib = dir.join(STATIC_LIB_NAME);
    write_if_changed(&static_lib, STATIC_LIB_BYTES)?;
    let iccs_core_lib = dir.join(CORE_LIB_NAME);
    write_if_changed(&iccs_core_lib, CORE_LIB_BYTES)?;
    for (name, text) in INCLUDE_FILES {
        write_if_changed(&include_dir.join(name), text.as_bytes())?;
    }
    Ok(Provider {
        static_lib,
        iccs_core_lib,
        include_dir,
    })
}

/// Write via a unique temporary file and rename (readers never see a half-written archive,
/// concurrent writers of the same provider directory do not clash); skip identical contents
/// so that make-style timestamps stay put.
fn write_if_changed(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!(".{file_name}.tmp{}-{seq}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Which ICCS helper a baseline hash instance wraps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Helper {
    /// `sm3hash` (256 bits only).
    Sm3hash,
    /// `pseudohash` (512, 768, 1024).
    Pseudohash,
    /// `pseudoXOF` (any width).
    PseudoXof,
}

impl Helper {
    /// The C function name.
    pub const fn c_name(self) -> &'static str {
        match self {
            Helper::Sm3hash => "sm3hash",
            Helper::Pseudohash => "pseudohash",
            Helper::PseudoXof => "pseudoXOF",
        }
    }

    fn macro_name(self) -> &'static str {
        match self {
            Helper::Sm3hash => "ICCS_HELPER_SM3HASH",
            Helper::Pseudohash => "ICCS_HELPER_PSEUDOHASH",
            Helper::PseudoXof => "ICCS_HELPER_PSEUDOXOF",
        }
    }
}

/// One ICCS-baseline hash instance (`CryptHash` at a fixed digest width).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HashInstance {
    /// Label, e.g. `sm3hash-256`, `pseudohash-768`, `pseudoXOF-1152` (also the instance name).
    pub label: String,
    /// Wrapped helper.
    pub helper: Helper,
    /// `DIGEST_BIT_LENGTH`.
    pub digest_bits: u32,
}

impl HashInstance {
    /// A helper at a width; `None` for widths the helper does not support (sm3hash: 256;
    /// pseudohash: 512/768/1024; pseudoXOF: any positive multiple of 8).
    pub fn new(helper: Helper, digest_bits: u32) -> Option<Self> {
        let ok = match helper {
            Helper::Sm3hash => digest_bits == 256,
            Helper::Pseudohash => matches!(digest_bits, 512 | 768 | 1024),
            Helper::PseudoXof => digest_bits > 0 && digest_bits.is_multiple_of(8),
        };
        ok.then(|| HashInstance {
            label: format!("{}-{digest_bits}", helper.c_name()),
            helper,
            digest_bits,
        })
    }

    /// Preprocessor definitions for `iccs_crypthash.c`, as (name, value); the value of
    /// `ALGORITHM_INSTANCE` is a C string literal including its quotes.
    pub fn defines(&self) -> Vec<(String, String)> {
        vec![
            ("ICCS_HELPER".into(), self.helper.macro_name().into()),
            ("DIGEST_BIT_LENGTH".into(), self.digest_bits.to_string()),
            ("ALGORITHM_INSTANCE".into(), format!("\"{}\"", self.label)),
        ]
    }

    /// Digest length in bytes.
    pub fn digest_bytes(&self) -> usize {
        self.digest_bits as usize / 8
    }
}

/// pseudoXOF widths of the baseline: every digest width of a hash candidate (method §2.11).
pub const PSEUDOXOF_WIDTHS: &[u32] = &[256, 384, 512, 768, 1024, 1152, 1280, 2048];

/// The 12 ICCS-baseline instances in order: `sm3hash-256`, `pseudohash-512|768|1024`,
/// `pseudoXOF-<w>` for [`PSEUDOXOF_WIDTHS`].
pub fn hash_instances() -> Vec<HashInstance> {
    let mut v = Vec::new();
    v.extend(HashInstance::new(Helper::Sm3hash, 256));
    for w in [512, 768, 1024] {
        v.extend(HashInstance::new(Helper::Pseudohash, w));
    }
    for &w in PSEUDOXOF_WIDTHS {
        v.extend(HashInstance::new(Helper::PseudoXof, w));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_baseline_labels() {
        let labels: Vec<String> = hash_instances().into_iter().map(|i| i.label).collect();
        assert_eq!(labels.len(), 12);
        assert_eq!(labels[0], "sm3hash-256");
        assert_eq!(labels[3], "pseudohash-1024");
        assert_eq!(labels[11], "pseudoXOF-2048");
        assert!(HashInstance::new(Helper::Pseudohash, 256).is_none());
        assert!(HashInstance::new(Helper::PseudoXof, 12).is_none());
    }

    #[test]
    fn write_provider_is_idempotent_and_thread_safe() {
        let dir = std::env::temp_dir().join(format!("pqperf-iccs-capi-{}", std::process::id()));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let d = dir.clone();
                std::thread::spawn(move || write_provider(&d).unwrap())
            })
            .collect();
        let provs: Vec<Provider> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(provs.windows(2).all(|w| w[0] == w[1]));
        let p = &provs[0];
        assert_eq!(std::fs::read(&p.static_lib).unwrap(), STATIC_LIB_BYTES);
        assert_eq!(std::fs::read(&p.iccs_core_lib).unwrap(), CORE_LIB_BYTES);
        for (name, text) in INCLUDE_FILES {
            assert_eq!(
                std::fs::read_to_string(p.include_dir.join(name)).unwrap(),
                *text
            );
        }
        let leftovers = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .count();
        assert_eq!(leftovers, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn static_lib_is_an_archive() {
        assert!(STATIC_LIB_BYTES.starts_with(b"!<arch>\n"));
    }
}
