//! The KAT procedures run inside the child process: the official ICCS drivers (KAT_SIG,
//! KAT_KEM, KAT_KEX, KAT_CryptHash; spec §4.2–§4.3 with the harness additions of §4.5) and
//! PQClean's NIST `nistkat` first entry, over a dlopened library ([`pqperf_ffi::dl`]).
//!
//! Every buffer handed to the candidate sits between guard zones; a damaged guard or a
//! returned length above the claimed size is OVERFLOW. Failing calls are CRYPTOFAIL.

use std::fmt::Write as _;
use std::time::Instant;

use pqperf_ffi::dl::{
    GuardedBuf, HashApi, IccsDrng, KemApi, KexApi, Library, NistKem, NistKemSizes, NistRng,
    NistSign, NistSignSizes, SigApi,
};
use pqperf_iccs::drng::DrngCtx;

/// A failure that ends the KAT run with a status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    /// The status (`CRYPTOFAIL`, `OVERFLOW`, `LOADFAIL`).
    pub status: &'static str,
    /// What failed, for the RESULT line.
    pub detail: String,
}

fn crypto(detail: impl Into<String>) -> Fail {
    Fail {
        status: "CRYPTOFAIL",
        detail: detail.into(),
    }
}

fn overflow(detail: impl Into<String>) -> Fail {
    Fail {
        status: "OVERFLOW",
        detail: detail.into(),
    }
}

fn loadfail(detail: impl Into<String>) -> Fail {
    Fail {
        status: "LOADFAIL",
        detail: detail.into(),
    }
}

/// Uppercase hex.
pub fn hex_up(b: &[u8]) -> String {
    hex::encode_upper(b)
}

/// Check the guards of buffers after a call named `call`.
fn guards(call: &str, bufs: &[(&str, &GuardedBuf)]) -> Result<(), Fail> {
    for (name, b) in bufs {
        if !b.guards_intact() {
            return Err(overflow(format!(
                "{call} wrote outside the {name} buffer ({} bytes)",
                b.len()
            )));
        }
    }
    Ok(())
}

/// Check a returned length against the claimed capacity.
fn within(call: &str, what: &str, got: u64, claimed: u64) -> Result<usize, Fail> {
    if got > claimed {
        Err(overflow(format!(
            "{call} returned {what} = {got} > claimed {claimed}"
        )))
    } else {
        Ok(got as usize)
    }
}

/// Per-operation timing accumulator for the `timing` line.
#[derive(Default)]
pub struct Timing {
    ops: Vec<(&'static str, f64, u32)>,
}

impl Timing {
    fn add(&mut self, op: &'static str, secs: f64) {
        if let Some(e) = self.ops.iter_mut().find(|e| e.0 == op) {
            e.1 += secs;
            e.2 += 1;
        } else {
            self.ops.push((op, secs, 1));
        }
    }

    /// `keygen 0.160 ms  sign 0.964 ms  verify 0.164 ms (avg over 10)`.
    pub fn line(&self) -> Option<String> {
        let n = self.ops.first()?.2;
        let parts: Vec<String> = self
            .ops
            .iter()
            .map(|(op, s, c)| format!("{op} {:.3} ms", s * 1000.0 / f64::from(*c)))
            .collect();
        Some(format!("{} (avg over {n})", parts.join("  ")))
    }
}

fn timed<T>(t: &mut Timing, op: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let r = f();
    t.add(op, t0.elapsed().as_secs_f64());
    r
}

/// Number of records written so far (for error context).
fn seed_drngs() -> (DrngCtx, DrngCtx) {
    let seed: Vec<u8> = b"seed".repeat(16);
    let mut msg: Vec<u8> = b"msg".repeat(21);
    msg.push(b'm');
    (DrngCtx::new(&seed), DrngCtx::new(&msg))
}

fn draw(d: &mut DrngCtx, bytes: usize) -> Vec<u8> {
    let mut v = vec![0u8; bytes];
    d.generate(&mut v, 8 * bytes as u64);
    v
}

fn len_line(out: &mut String, key: &str, v: u64) {
    let _ = writeln!(out, "{key} = {v}");
}

fn hex_line(out: &mut String, key: &str, b: &[u8]) {
    let _ = writeln!(out, "{key} = {}", hex_up(b));
}

mod hash;
mod kem;
mod kex;
mod nist;
mod sig;

pub use hash::{HashFile, kat_hash};
pub use kem::kat_kem;
pub use kex::kat_kex;
pub use nist::{nist_kem, nist_sign};
pub use sig::kat_sig;
