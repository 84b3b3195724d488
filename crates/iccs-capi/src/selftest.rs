//! Self-test of an ICCS-baseline hash instance against an independent model (the method's
//! `iccs/selftest.py` role): the `sm3` crate (RustCrypto) plus a textbook HMAC, i.e. not the
//! bit-level SM3 the artifact runs. Byte-aligned messages `m[i] = (7i + 1) mod 256` of the
//! lengths in [`MESSAGE_LENGTHS`], plus the two GB/T 32905 examples for `sm3hash`.
//!
//! The caller supplies the library call (normally `CryptHash` of a built `lib<label>.so`,
//! through `pqperf-ffi`), so this module needs no unsafe code. Log format:
//!
//! ```text
//! instance = sm3hash-256
//! library = lib/sm3hash-256.so
//! model = auxfunc.c semantics on the sm3 crate (RustCrypto SM3, textbook HMAC)
//! ok   len=0 rc=0 1ab21d8355cfa17f8e61194831e81a8f...
//! ...
//! ok   GB/T 32905 abc 66c7f0f462eeedd9d1f2d46bdc10e4e2...
//! ok   GB/T 32905 abcdabcd... debe9ff92275b8a138604889c18e5a4d...
//! RESULT iccs sm3hash-256 PASS (20/20)
//! ```
//! A mismatch is `FAIL len=<n> rc=<rc> <got>... want <want>...` and the result is `FAIL`.

use std::fmt::Write as _;

use sm3::Digest;

use crate::{HashInstance, Helper};

/// Message lengths in bytes (the method's self-test list).
pub const MESSAGE_LENGTHS: &[usize] = &[
    0, 1, 3, 31, 32, 55, 56, 63, 64, 65, 119, 128, 512, 1024, 4096, 8192, 16384, 65536,
];

/// The model line of the log.
pub const MODEL: &str = "auxfunc.c semantics on the sm3 crate (RustCrypto SM3, textbook HMAC)";

/// Self-test message of `n` bytes: `m[i] = (7i + 1) mod 256`.
pub fn message(n: usize) -> Vec<u8> {
    (0..n).map(|i| ((7 * i + 1) % 256) as u8).collect()
}

fn sm3(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = sm3::Sm3::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn hmac(x: &[&[u8]]) -> [u8; 32] {
    let ipad: Vec<u8> = HMAC_KEY.iter().map(|k| k ^ 0x36).collect();
    let opad: Vec<u8> = HMAC_KEY.iter().map(|k| k ^ 0x5C).collect();
    let mut parts: Vec<&[u8]> = vec![&ipad];
    parts.extend_from_slice(x);
    let inner = sm3(&parts);
    sm3(&[&opad, &inner])
}

/// The HMAC key, derived here from its definition (not copied from the implementation).
static HMAC_KEY: std::sync::LazyLock<[u8; 64]> = std::sync::LazyLock::new(|| {
    let mut k = [0u8; 64];
    k[..32].copy_from_slice(&sm3(&[b"3.14159265358979"]));
    k[32..].copy_from_slice(&sm3(&[b"2.71828182845904"]));
    k
});

/// The model's digest of a byte-aligned message for an instance.
pub fn model_digest(inst: &HashInstance, msg: &[u8]) -> Vec<u8> {
    match inst.helper {
        Helper::Sm3hash => sm3(&[msg]).to_vec(),
        Helper::Pseudohash => {
            let dom = [(inst.digest_bits / 256) as u8, 0];
            let h1 = sm3(&[msg, &dom]);
            let h2 = sm3(&[&hmac(&[&dom, msg]), &h1]);
            let mut out = [h1, h2].concat();
            if inst.digest_bits >= 768 {
                let h3 = sm3(&[&h2, &hmac(&[&h1])]);
                out.extend(h3);
                if inst.digest_bits >= 1024 {
                    out.extend(sm3(&[&hmac(&[&h2]), &h3, &hmac(&[&h3])]));
                }
            }
            out
        }
        Helper::PseudoXof => {
            let n = inst.digest_bytes();
            let mut out = Vec::with_capacity(n + 32);
            let mut i: u32 = 1;
            while out.len() < n {
                out.extend(sm3(&[msg, &i.to_be_bytes()]));
                i += 1;
            }
            out.truncate(n);
            out
        }
    }
}

/// Outcome of [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTest {
    /// The log text (lines end in `\n`).
    pub log: String,
    /// All checks passed.
    pub passed: bool,
    /// Checks passed.
    pub ok: usize,
    /// Checks run.
    pub total: usize,
}

fn hex32(d: &[u8]) -> String {
    d.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Run the self-test of `inst`; `call(msg, msg_bits, digest)` must evaluate the library's
/// `CryptHash(inst.digest_bits, msg, msg_bits, digest)` (digest has `digest_bytes()` bytes)
/// and return its return code. `library` is only written into the log.
pub fn run(
    inst: &HashInstance,
    library: &str,
    mut call: impl FnMut(&[u8], u64, &mut [u8]) -> i32,
) -> SelfTest {
    let mut log = String::new();
    let _ = writeln!(log, "instance = {}", inst.label);
    let _ = writeln!(log, "library = {library}");
    let _ = writeln!(log, "model = {MODEL}");
    let (mut ok, mut total) = (0, 0);
    let mut check = |name: String, msg: &[u8], want: &[u8], log: &mut String| {
        let mut got = vec![0u8; inst.digest_bytes()];
        let rc = call(msg, 8 * msg.len() as u64, &mut got);
        total += 1;
        if rc == 0 && got == want {
            ok += 1;
            let _ = writeln!(log, "ok   {name} rc=0 {}...", hex32(&got));
        } else {
            let _ = writeln!(
                log,
                "FAIL {name} rc={rc} {}... want {}...",
                hex32(&got),
                hex32(want)
            );
        }
    };
    let longest = message(*MESSAGE_LENGTHS.last().unwrap_or(&0));
    for &n in MESSAGE_LENGTHS {
        let msg = &longest[..n];
        check(format!("len={n}"), msg, &model_digest(inst, msg), &mut log);
    }
    if inst.helper == Helper::Sm3hash {
        // GB/T 32905-2016 examples, digests as printed in the standard
        let abc = hex_digest("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
        let abcd = hex_digest("debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732");
        check("GB/T 32905 abc".into(), b"abc", &abc, &mut log);
        let m = b"abcd".repeat(16);
        check("GB/T 32905 abcdabcd...".into(), &m, &abcd, &mut log);
    }
    let passed = ok == total;
    let _ = writeln!(
        log,
        "RESULT iccs {} {} ({ok}/{total})",
        inst.label,
        if passed { "PASS" } else { "FAIL" }
    );
    SelfTest {
        log,
        passed,
        ok,
        total,
    }
}

fn hex_digest(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}
