//! The ICCS provider a build links (issue 19): pqperf's own `libpqperf_iccs.a` or the user's
//! official `auxfunc.c`/`drng.c`, compiled with the reference flags and checked bit-exact
//! against pqperf's vectors before use.
//!
//! * [`ProviderChoice`]: `pqperf` or `official:DIR` (CLI `--iccs-provider`, catalog key
//!   `iccs_provider`, or the choice remembered in `<run>/provider/choice`).
//! * [`prepare_official`]: compile the two sources (harness-default flags, the API folder
//!   `DIR` as include path) into `<out>/libiccs_official.a`, then run the check program
//!   `c/iccs_provider_check.c` linked against that archive over [`vectors`] and compare each
//!   result with pqperf's own implementation; the first differing vector refuses the copy.
//! * [`ProviderRecord`]: what build.json, records and campaign evidence say about the
//!   provider (kind, sha256 of the sources or of pqperf's library, compiler, flags).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use indexmap::IndexMap;
use pqperf_model::layout::RunLayout;
use serde::{Deserialize, Serialize};

use crate::BuildError;
use crate::compile::{compiler_version, sha256_file};
use crate::flags::HARNESS_DEFAULT;

/// The official C sources compiled into the provider archive.
pub const OFFICIAL_SOURCES: &[&str] = &["auxfunc.c", "drng.c"];
/// The official headers (the API folder of the build's include order).
pub const OFFICIAL_HEADERS: &[&str] = &["auxfunc.h", "drng.h"];
/// File name of the official provider archive.
pub const OFFICIAL_LIB_NAME: &str = "libiccs_official.a";

/// Source of the vector-check program.
const CHECK_C: &str = include_str!("../c/iccs_provider_check.c");

/// Which ICCS helpers the candidate libraries link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProviderChoice {
    /// pqperf's own library (`libpqperf_iccs.a`).
    #[default]
    Pqperf,
    /// The official `auxfunc.c`/`drng.c` (and headers) in this folder.
    Official(PathBuf),
}

impl ProviderChoice {
    /// Parse `pqperf` or `official:DIR` (a relative `DIR` is taken relative to `base`).
    pub fn parse(s: &str, base: &Path) -> Result<ProviderChoice, BuildError> {
        let s = s.trim();
        if s == "pqperf" {
            return Ok(ProviderChoice::Pqperf);
        }
        match s.strip_prefix("official:") {
            Some(d) if !d.is_empty() => Ok(ProviderChoice::Official(base.join(d))),
            _ => Err(BuildError::Input(format!(
                "ICCS provider {s:?}: expected `pqperf` or `official:DIR`"
            ))),
        }
    }

    /// `pqperf` or `official`.
    pub fn kind(&self) -> &'static str {
        match self {
            ProviderChoice::Pqperf => "pqperf",
            ProviderChoice::Official(_) => "official",
        }
    }
}

impl std::fmt::Display for ProviderChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProviderChoice::Pqperf => f.write_str("pqperf"),
            ProviderChoice::Official(d) => write!(f, "official:{}", d.display()),
        }
    }
}

/// The provider as recorded in evidence (pqperf's own key `iccs_provider`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRecord {
    /// `pqperf` or `official`.
    pub kind: String,
    /// Official provider: file name → sha256 of `auxfunc.c`, `auxfunc.h`, `drng.c`, `drng.h`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub sources_sha256: IndexMap<String, String>,
    /// pqperf provider: sha256 of `libpqperf_iccs.a`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_sha256: Option<String>,
    /// `gcc 12.2.0` / `rustc 1.x.y (…)`.
    pub compiler: String,
    /// Compiler flags the provider was built with.
    pub flags: String,
    /// Number of pqperf vectors the provider reproduced before use (official provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors_checked: Option<usize>,
}

impl ProviderRecord {
    /// pqperf's own library.
    pub fn pqperf() -> ProviderRecord {
        use sha2::Digest as _;
        ProviderRecord {
            kind: "pqperf".into(),
            sources_sha256: IndexMap::new(),
            library_sha256: Some(hex::encode(sha2::Sha256::digest(
                pqperf_iccs_capi::STATIC_LIB_BYTES,
            ))),
            compiler: pqperf_iccs_capi::ARTIFACT_COMPILER.into(),
            flags: pqperf_iccs_capi::ARTIFACT_FLAGS.into(),
            vectors_checked: None,
        }
    }

    /// As a JSON value (for the `extra` maps of the evidence types).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// One line for logs and pages: `official ICCS helpers (auxfunc.c 9b99c0bb…, drng.c
    /// 0df0ac78…; gcc 12.2.0 -O2 …)` / `pqperf's ICCS helpers (libpqperf_iccs.a 1234abcd…;
    /// rustc …)`.
    pub fn describe(&self) -> String {
        describe_json(&self.to_json())
    }
}

/// [`ProviderRecord::describe`] on the JSON form (`pqperf_model::iccsprovider::describe`).
pub fn describe_json(v: &serde_json::Value) -> String {
    pqperf_model::iccsprovider::describe(v)
}

/// A prepared official provider.
#[derive(Debug, Clone)]
pub struct OfficialProvider {
    /// `<out>/libiccs_official.a` (`auxfunc.o`, `drng.o`).
    pub archive: PathBuf,
    /// The folder holding the official headers (the API include folder).
    pub include_dir: PathBuf,
    /// What evidence records.
    pub record: ProviderRecord,
}

/// One vector: a name (used in the refusal message) and the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vector {
    /// Vector name.
    pub name: String,
    /// What the check program calls.
    pub call: Call,
}

/// A call of the check program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// `sm3hash` of `msg_bits` bits of `msg`.
    Sm3hash {
        /// Digest length (bits).
        digest_bits: i32,
        /// Message bytes.
        msg: Vec<u8>,
        /// Message length (bits).
        msg_bits: u64,
    },
    /// `pseudohash` of `msg_bits` bits of `msg`.
    Pseudohash {
        /// Digest length (bits).
        digest_bits: i32,
        /// Message bytes.
        msg: Vec<u8>,
        /// Message length (bits).
        msg_bits: u64,
    },
    /// `pseudoXOF` of `msg_bits` bits of `msg`.
    PseudoXof {
        /// Output length (bits).
        out_bits: u64,
        /// Message bytes.
        msg: Vec<u8>,
        /// Message length (bits).
        msg_bits: u64,
    },
    /// DRNG initialisation with `seed`.
    DrngInit {
        /// Seed bytes.
        seed: Vec<u8>,
    },
    /// DRNG output.
    DrngGet {
        /// Output length (bits).
        bits: u64,
    },
}

/// Message of `n` bytes, `m[i] = (7i + 1) mod 256` (the self-test messages).
fn msg(n: usize) -> Vec<u8> {
    (0..n).map(|i| ((7 * i + 1) % 256) as u8).collect()
}

fn hexs(b: &[u8]) -> String {
    if b.is_empty() {
        "-".into()
    } else {
        hex::encode(b)
    }
}

/// pqperf's vectors: every helper at its edge lengths (empty, single bit, non-aligned, block
/// boundaries 447/448/449/511/512 bits, multi-block), every pseudohash width and an invalid
/// one, pseudoXOF output widths around the 256-bit block, and a DRNG sequence (the
/// performance seed, 0-bit draws, non-aligned and multi-chunk draws, re-instantiation).
pub fn vectors() -> Vec<Vector> {
    let mut v = Vec::new();
    let mut add = |name: String, call: Call| v.push(Vector { name, call });
    let abc = b"abc".to_vec();
    add(
        "sm3hash(256, \"abc\", 24 bits)".into(),
        Call::Sm3hash {
            digest_bits: 256,
            msg: abc.clone(),
            msg_bits: 24,
        },
    );
    for bits in [0u64, 1, 20, 447, 448, 449, 511, 512, 513, 1000, 4096, 65536] {
        add(
            format!("sm3hash(256, m, {bits} bits)"),
            Call::Sm3hash {
                digest_bits: 256,
                msg: msg(bits.div_ceil(8) as usize),
                msg_bits: bits,
            },
        );
    }
    add(
        "sm3hash(255, \"abc\", 24 bits) (unsupported width)".into(),
        Call::Sm3hash {
            digest_bits: 255,
            msg: abc.clone(),
            msg_bits: 24,
        },
    );
    for d in [512, 768, 1024] {
        for bits in [0u64, 20, 24, 511, 4096, 4099] {
            add(
                format!("pseudohash({d}, m, {bits} bits)"),
                Call::Pseudohash {
                    digest_bits: d,
                    msg: msg(bits.div_ceil(8) as usize),
                    msg_bits: bits,
                },
            );
        }
    }
    add(
        "pseudohash(256, \"abc\", 24 bits) (unsupported width)".into(),
        Call::Pseudohash {
            digest_bits: 256,
            msg: abc.clone(),
            msg_bits: 24,
        },
    );
    for out in [0u64, 1, 255, 256, 257, 1000, 8192] {
        for bits in [21u64, 24, 4096] {
            add(
                format!("pseudoXOF({out} bits, m, {bits} bits)"),
                Call::PseudoXof {
                    out_bits: out,
                    msg: msg(bits.div_ceil(8) as usize),
                    msg_bits: bits,
                },
            );
        }
    }
    let perf_seed: Vec<u8> = (0u8..48).collect();
    add(
        "DRNG init_random_number(seed 00..2f, 48 bytes)".into(),
        Call::DrngInit { seed: perf_seed },
    );
    for (i, bits) in [256u64, 0, 13, 512, 1, 440, 8192, 7, 257]
        .into_iter()
        .enumerate()
    {
        add(
            format!(
                "DRNG draw {} after seed 00..2f: get_random_number({bits} bits)",
                i + 1
            ),
            Call::DrngGet { bits },
        );
    }
    add(
        "DRNG init_random_number(empty seed)".into(),
        Call::DrngInit { seed: Vec::new() },
    );
    add(
        "DRNG draw 1 after the empty seed: get_random_number(256 bits)".into(),
        Call::DrngGet { bits: 256 },
    );
    add(
        "DRNG init_random_number(m, 100 bytes)".into(),
        Call::DrngInit { seed: msg(100) },
    );
    for (i, bits) in [8200u64, 8, 1024].into_iter().enumerate() {
        add(
            format!(
                "DRNG draw {} after the 100-byte seed: get_random_number({bits} bits)",
                i + 1
            ),
            Call::DrngGet { bits },
        );
    }
    v
}

impl Call {
    /// The check program's input line.
    fn line(&self) -> String {
        match self {
            Call::Sm3hash {
                digest_bits,
                msg,
                msg_bits,
            } => {
                format!("H {digest_bits} {msg_bits} {}", hexs(msg))
            }
            Call::Pseudohash {
                digest_bits,
                msg,
                msg_bits,
            } => {
                format!("P {digest_bits} {msg_bits} {}", hexs(msg))
            }
            Call::PseudoXof {
                out_bits,
                msg,
                msg_bits,
            } => {
                format!("X {out_bits} {msg_bits} {}", hexs(msg))
            }
            Call::DrngInit { seed } => format!("I {}", hexs(seed)),
            Call::DrngGet { bits } => format!("G {bits}"),
        }
    }

    /// pqperf's result line for this call (`drng` carries the DRNG state across calls).
    fn expected(&self, drng: &mut pqperf_iccs::Drng) -> String {
        const FILL: u8 = 0xA5;
        let rc =
            |r: Result<usize, pqperf_iccs::IccsError>| r.map(|_| 0).unwrap_or_else(|e| e.code());
        match self {
            Call::Sm3hash {
                digest_bits,
                msg,
                msg_bits,
            } => match pqperf_iccs::sm3hash(*digest_bits, msg, *msg_bits) {
                Ok(d) => format!("0 {}", hexs(&d)),
                Err(e) => format!("{} {}", e.code(), hexs(&[FILL; 32])),
            },
            Call::Pseudohash {
                digest_bits,
                msg,
                msg_bits,
            } => {
                let n = pqperf_iccs::pseudohash_len(*digest_bits).unwrap_or(0);
                let mut out = vec![FILL; n];
                let r = rc(pqperf_iccs::pseudohash(
                    *digest_bits,
                    msg,
                    *msg_bits,
                    &mut out,
                ));
                format!("{r} {}", hexs(&out))
            }
            Call::PseudoXof {
                out_bits,
                msg,
                msg_bits,
            } => {
                let mut out = vec![FILL; out_bits.div_ceil(8) as usize];
                let r = rc(pqperf_iccs::pseudoxof(*out_bits, msg, *msg_bits, &mut out));
                format!("{r} {}", hexs(&out))
            }
            Call::DrngInit { seed } => {
                drng.init(seed);
                "0".into()
            }
            Call::DrngGet { bits } => {
                let mut out = vec![FILL; bits.div_ceil(8) as usize];
                let r = rc(drng.generate(&mut out, *bits));
                format!("{r} {}", hexs(&out))
            }
        }
    }
}

/// pqperf's expected output lines for [`vectors`].
pub fn expected_lines(vs: &[Vector]) -> Vec<String> {
    let mut drng = pqperf_iccs::Drng::new(&[]);
    vs.iter().map(|v| v.call.expected(&mut drng)).collect()
}

/// The reference compile flags of the official provider (harness defaults).
pub fn official_cflags() -> Vec<String> {
    HARNESS_DEFAULT.iter().map(|s| s.to_string()).collect()
}

fn run_tool(cwd: &Path, argv: &[String], log: &mut String) -> Result<(), BuildError> {
    log.push_str(&crate::flags::log_command(argv));
    log.push('\n');
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .output()
        .map_err(|e| BuildError::Tool(format!("cannot run {}: {e}", argv[0])))?;
    log.push_str(&String::from_utf8_lossy(&o.stdout));
    log.push_str(&String::from_utf8_lossy(&o.stderr));
    if !o.status.success() {
        return Err(BuildError::Tool(format!(
            "{} failed ({}):\n{}",
            argv.first().map(String::as_str).unwrap_or(""),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        )));
    }
    Ok(())
}

/// Wall-clock limit of the check program (the vectors take milliseconds).
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// What the check program did: its stdout and how it ended.
struct CheckOutput {
    stdout: Vec<u8>,
    status: String,
}

/// Run the check program with `input` on stdin, in `cwd`, killed after [`CHECK_TIMEOUT`].
fn run_check(exe: &Path, cwd: &Path, input: String) -> Result<CheckOutput, BuildError> {
    use std::io::Read as _;
    let mut child = Command::new(exe)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| BuildError::Tool(format!("running the ICCS provider check: {e}")))?;
    let mut sin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        // A provider that dies early closes the pipe; the missing lines are reported.
        if let Some(s) = sin.as_mut() {
            let _ = s.write_all(input.as_bytes());
        }
    });
    let mut sout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = sout.as_mut() {
            let _ = s.read_to_end(&mut v);
        }
        v
    });
    let t0 = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break format!("exit status {st}"),
            Ok(None) if t0.elapsed() > CHECK_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break format!("killed after {} s", CHECK_TIMEOUT.as_secs());
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(e) => {
                return Err(BuildError::Tool(format!(
                    "waiting for the ICCS provider check: {e}"
                )));
            }
        }
    };
    let _ = writer.join();
    let stdout = reader.join().unwrap_or_default();
    Ok(CheckOutput { stdout, status })
}

/// Compile the official files of `dir` into `out/libiccs_official.a` with `cflags`, check
/// them against [`vectors`] and return the provider. Errors name the missing file, the
/// failing compile, or the first vector whose result differs from pqperf's.
pub fn prepare_official_with(
    dir: &Path,
    out: &Path,
    cflags: &[String],
) -> Result<OfficialProvider, BuildError> {
    let dir = std::fs::canonicalize(dir).map_err(|e| BuildError::io(dir, e))?;
    let mut sources_sha256 = IndexMap::new();
    for f in OFFICIAL_SOURCES.iter().chain(OFFICIAL_HEADERS) {
        let p = dir.join(f);
        if !p.is_file() {
            return Err(BuildError::Input(format!(
                "official ICCS provider {}: {f} is missing (expected {} and {})",
                dir.display(),
                OFFICIAL_SOURCES.join(", "),
                OFFICIAL_HEADERS.join(", ")
            )));
        }
        sources_sha256.insert(
            f.to_string(),
            sha256_file(&p).map_err(|e| BuildError::io(&p, e))?,
        );
    }
    std::fs::create_dir_all(out).map_err(|e| BuildError::io(out, e))?;
    let mut log = format!("# official ICCS provider from {}\n", dir.display());
    let inc = format!("-I{}", dir.display());
    let mut objects = Vec::new();
    for src in OFFICIAL_SOURCES {
        let obj = format!("{}.o", src.trim_end_matches(".c"));
        let mut argv = vec!["gcc".to_string()];
        argv.extend(cflags.iter().cloned());
        argv.extend([
            inc.clone(),
            "-c".into(),
            dir.join(src).display().to_string(),
        ]);
        argv.extend(["-o".into(), obj.clone()]);
        run_tool(out, &argv, &mut log)?;
        objects.push(obj);
    }
    let archive = out.join(OFFICIAL_LIB_NAME);
    let _ = std::fs::remove_file(&archive);
    let mut argv = vec!["ar".to_string(), "crsD".into(), OFFICIAL_LIB_NAME.into()];
    argv.extend(objects);
    run_tool(out, &argv, &mut log)?;
    // The check program: pqperf's vectors through the archive, in a child process.
    let check_c = out.join("iccs_provider_check.c");
    std::fs::write(&check_c, CHECK_C).map_err(|e| BuildError::io(&check_c, e))?;
    let argv: Vec<String> = [
        "gcc",
        "-O1",
        "-std=gnu11",
        &inc,
        "iccs_provider_check.c",
        OFFICIAL_LIB_NAME,
        "-o",
        "iccs_provider_check",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    run_tool(out, &argv, &mut log)?;
    let vs = vectors();
    let want = expected_lines(&vs);
    let input: String = vs.iter().map(|v| v.call.line() + "\n").collect();
    let o = run_check(&out.join("iccs_provider_check"), out, input)?;
    let got_text = String::from_utf8_lossy(&o.stdout);
    let got: Vec<&str> = got_text.lines().collect();
    let log_path = out.join("provider.log");
    for (i, (v, w)) in vs.iter().zip(&want).enumerate() {
        let g = got.get(i).copied();
        if g != Some(w.as_str()) {
            log.push_str(&format!("# REFUSED at vector {}: {}\n", i + 1, v.name));
            let _ = std::fs::write(&log_path, &log);
            let shown = |s: &str| {
                if s.len() > 80 {
                    format!("{}…", &s[..80])
                } else {
                    s.to_string()
                }
            };
            return Err(BuildError::Input(format!(
                "official ICCS provider {} refused: vector {} of {} differs from pqperf's value: {}\n  pqperf:   {}\n  provider: {}",
                dir.display(),
                i + 1,
                vs.len(),
                v.name,
                shown(w),
                match g {
                    Some(g) => shown(g),
                    None => format!("no output (check program: {})", o.status),
                }
            )));
        }
    }
    log.push_str(&format!("# {} vectors bit-exact\n", vs.len()));
    let _ = std::fs::write(&log_path, &log);
    Ok(OfficialProvider {
        archive,
        include_dir: dir,
        record: ProviderRecord {
            kind: "official".into(),
            sources_sha256,
            library_sha256: None,
            compiler: compiler_version("gcc"),
            flags: format!("{} ", cflags.join(" ")),
            vectors_checked: Some(vs.len()),
        },
    })
}

/// [`prepare_official_with`] with the reference flags ([`official_cflags`]).
pub fn prepare_official(dir: &Path, out: &Path) -> Result<OfficialProvider, BuildError> {
    prepare_official_with(dir, out, &official_cflags())
}

/// The choice remembered for a run (`<run>/provider/choice`), if any.
pub fn remembered_choice(run_dir: &Path) -> Option<ProviderChoice> {
    let t = std::fs::read_to_string(RunLayout::new(run_dir).remembered_provider()).ok()?;
    ProviderChoice::parse(t.trim(), Path::new("/")).ok()
}

/// Remember the choice for later stages of the run (KAT fallback builds, ICCS baseline).
pub fn remember_choice(run_dir: &Path, choice: &ProviderChoice) -> Result<(), BuildError> {
    let p = RunLayout::new(run_dir).remembered_provider();
    pqperf_model::fsutil::write_atomic(&p, format!("{choice}\n").as_bytes())
        .map_err(|e| BuildError::io(&p, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_parses_and_rejects() {
        let base = Path::new("/base");
        assert_eq!(
            ProviderChoice::parse("pqperf", base).unwrap(),
            ProviderChoice::Pqperf
        );
        assert_eq!(
            ProviderChoice::parse("official:x/y", base).unwrap(),
            ProviderChoice::Official(PathBuf::from("/base/x/y"))
        );
        assert_eq!(
            ProviderChoice::parse("official:/abs", base).unwrap(),
            ProviderChoice::Official(PathBuf::from("/abs"))
        );
        for bad in ["", "official:", "openssl", "official"] {
            let e = ProviderChoice::parse(bad, base).unwrap_err().to_string();
            assert!(e.contains("official:DIR"), "{e}");
        }
    }

    #[test]
    fn vectors_have_unique_names_and_known_values() {
        let vs = vectors();
        let mut names: Vec<&str> = vs.iter().map(|v| v.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), vs.len());
        let want = expected_lines(&vs);
        // GB/T 32905 "abc" and the unsupported widths.
        assert_eq!(
            want[0],
            "0 66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
        );
        let i = vs
            .iter()
            .position(|v| v.name.starts_with("sm3hash(255"))
            .unwrap();
        assert_eq!(want[i], format!("-4 {}", "a5".repeat(32)));
        let i = vs
            .iter()
            .position(|v| v.name.starts_with("pseudohash(256"))
            .unwrap();
        assert_eq!(want[i], "-4 -");
        // pqperf record: the library digest and the artifact compiler.
        let r = ProviderRecord::pqperf();
        assert_eq!(r.library_sha256.as_ref().unwrap().len(), 64);
        assert!(r.compiler.starts_with("rustc"), "{}", r.compiler);
        assert!(r.describe().starts_with("pqperf's own ICCS helpers"));
    }
}
