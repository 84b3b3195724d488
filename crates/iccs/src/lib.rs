//! ICCS placeholder primitives (`sm3hash`, `pseudohash`, `pseudoXOF`), the ICCS SM3
//! Hash_DRBG, the NIST AES-256 CTR DRBG and the HQC SHAKE-256 KAT generator; `no_std`.
//!
//! All ICCS lengths are in **bits** over MSB-first bit strings (iccs-api-and-kat.md §1–§2).
//! The modules [`sm3`], [`auxfunc`], [`drng`], [`ctr_drbg`], [`shake_prng`], [`soft_aes`] and
//! [`keccak`] are dependency-free and panic-free; the C ABI artifact of `pqperf-iccs-capi`
//! compiles exactly these files, so the Rust API and the C symbols share one implementation.
//! The Rust API runs the NIST DRBG on the `aes` crate and the HQC generator on the `shake`
//! crate; the artifact uses [`soft_aes`] and [`keccak`] instead (cross-checked in tests).

#![no_std]
#![forbid(unsafe_code)]

pub mod auxfunc;
pub mod ctr_drbg;
pub mod drng;
pub mod keccak;
pub mod shake_prng;
pub mod sm3;
pub mod soft_aes;

pub use auxfunc::{HMAC_KEY, bytes_for_bits, pseudohash_len};
pub use drng::{DrngCtx, SEEDLEN};

use aes::cipher::{Array, BlockCipherEncrypt, KeyInit};
use shake::{ExtendableOutput, Update, XofReader};

/// An ICCS return code other than 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IccsError {
    /// −1: a buffer shorter than the stated bit length (C API: a null pointer with a
    /// non-zero length). Not an official code; the official code would crash.
    InvalidArgument,
    /// −2: allocation failure (never produced here).
    Alloc,
    /// −3: internal HMAC failure (never produced here).
    Hmac,
    /// −4: digest length not supported.
    DigestLength,
}

impl IccsError {
    /// The C return code.
    pub const fn code(self) -> i32 {
        match self {
            IccsError::InvalidArgument => auxfunc::ICCS_ERR_INVALID,
            IccsError::Alloc => auxfunc::ICCS_ERR_ALLOC,
            IccsError::Hmac => auxfunc::ICCS_ERR_HMAC,
            IccsError::DigestLength => auxfunc::ICCS_ERR_DIGEST_LEN,
        }
    }

    /// The error for a C return code (`None` for 0 or unknown codes).
    pub const fn from_code(code: i32) -> Option<Self> {
        match code {
            -1 => Some(IccsError::InvalidArgument),
            -2 => Some(IccsError::Alloc),
            -3 => Some(IccsError::Hmac),
            -4 => Some(IccsError::DigestLength),
            _ => None,
        }
    }
}

impl core::fmt::Display for IccsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = match self {
            IccsError::InvalidArgument => "buffer shorter than the stated length",
            IccsError::Alloc => "allocation failure",
            IccsError::Hmac => "internal HMAC failure",
            IccsError::DigestLength => "digest length not supported",
        };
        write!(f, "{what} (return code {})", self.code())
    }
}

impl core::error::Error for IccsError {}

fn check(code: i32) -> Result<(), IccsError> {
    match IccsError::from_code(code) {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

fn need_bits(buf: &[u8], bits: u64) -> Result<(), IccsError> {
    if (buf.len() as u64) < bytes_for_bits(bits) {
        Err(IccsError::InvalidArgument)
    } else {
        Ok(())
    }
}

/// `sm3hash(digest_bits, msg, msg_bits)`: SM3 of the first `msg_bits` bits of `msg`.
/// Only `digest_bits == 256` is accepted (else [`IccsError::DigestLength`]).
pub fn sm3hash(digest_bits: i32, msg: &[u8], msg_bits: u64) -> Result<[u8; 32], IccsError> {
    if digest_bits != 256 {
        return Err(IccsError::DigestLength);
    }
    need_bits(msg, msg_bits)?;
    let mut out = [0u8; 32];
    check(auxfunc::sm3hash_core(digest_bits, msg, msg_bits, &mut out))?;
    Ok(out)
}

/// `pseudohash(digest_bits, msg, msg_bits, out)` for `digest_bits` ∈ {512, 768, 1024};
/// writes `digest_bits / 8` bytes of `out` and returns that count.
pub fn pseudohash(
    digest_bits: i32,
    msg: &[u8],
    msg_bits: u64,
    out: &mut [u8],
) -> Result<usize, IccsError> {
    let n = pseudohash_len(digest_bits).ok_or(IccsError::DigestLength)?;
    need_bits(msg, msg_bits)?;
    check(auxfunc::pseudohash_core(digest_bits, msg, msg_bits, out))?;
    Ok(n)
}

/// `pseudoXOF(out_bits, msg, msg_bits, out)`: writes `ceil(out_bits/8)` bytes of `out`
/// (last byte masked) and returns that count.
pub fn pseudoxof(
    out_bits: u64,
    msg: &[u8],
    msg_bits: u64,
    out: &mut [u8],
) -> Result<usize, IccsError> {
    need_bits(msg, msg_bits)?;
    check(auxfunc::pseudoxof_core(out_bits, msg, msg_bits, out))?;
    Ok(bytes_for_bits(out_bits) as usize)
}

/// The ICCS DRNG with the Rust calling convention (`init_random_number` /
/// `get_random_number`); [`DrngCtx`] is the C layout the candidates see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drng {
    ctx: DrngCtx,
}

impl Drng {
    /// `init_random_number(ctx, seed, seed.len())` (seed length in bytes, may be 0).
    pub fn new(seed: &[u8]) -> Self {
        Drng {
            ctx: DrngCtx::new(seed),
        }
    }

    /// Re-instantiate with a new seed.
    pub fn init(&mut self, seed: &[u8]) {
        self.ctx.instantiate(seed);
    }

    /// `get_random_number(ctx, out, bits)`: writes `ceil(bits/8)` bytes (unused low bits of
    /// the last byte zeroed). The state advances once per call, also for 0 bits.
    /// A too-short `out` is an error and leaves the state untouched.
    pub fn generate(&mut self, out: &mut [u8], bits: u64) -> Result<usize, IccsError> {
        need_bits(out, bits)?;
        self.ctx.generate(out, bits);
        Ok(bytes_for_bits(bits) as usize)
    }

    /// The C-layout state.
    pub fn ctx(&self) -> &DrngCtx {
        &self.ctx
    }
}

/// AES-256 from the `aes` crate (AES-NI when available) for the Rust-side NIST DRBG.
#[derive(Clone)]
pub struct RustCryptoAes256(aes::Aes256);

impl ctr_drbg::Aes256Block for RustCryptoAes256 {
    fn with_key(key: &[u8; 32]) -> Self {
        RustCryptoAes256(aes::Aes256::new(&Array::from(*key)))
    }
    fn encrypt_block(&self, block: &[u8; 16]) -> [u8; 16] {
        let mut b = Array::from(*block);
        self.0.encrypt_block(&mut b);
        b.into()
    }
}

/// The NIST/PQClean KAT DRBG (AES-256 CTR_DRBG, `randombytes_init` / `randombytes`).
pub type NistDrbg = ctr_drbg::CtrDrbgCore<RustCryptoAes256>;

/// SHAKE-256 from the `shake` crate for the Rust-side HQC generator.
#[derive(Clone)]
pub enum RustCryptoShake256 {
    /// Absorbing.
    Absorb(shake::Shake256),
    /// Squeezing.
    Squeeze(shake::Shake256Reader),
}

impl shake_prng::Shake256Sponge for RustCryptoShake256 {
    fn fresh() -> Self {
        RustCryptoShake256::Absorb(shake::Shake256::default())
    }
    fn absorb_bytes(&mut self, data: &[u8]) {
        if let RustCryptoShake256::Absorb(h) = self {
            h.update(data);
        }
    }
    fn finish(&mut self) {
        if let RustCryptoShake256::Absorb(h) = self {
            let r = h.clone().finalize_xof();
            *self = RustCryptoShake256::Squeeze(r);
        }
    }
    fn squeeze_bytes(&mut self, out: &mut [u8]) {
        self.finish();
        if let RustCryptoShake256::Squeeze(r) = self {
            r.read(out);
        }
    }
}

/// PQClean's HQC KAT generator (`hqc_kat_init` / `randombytes`).
pub type HqcPrng = shake_prng::ShakePrngCore<RustCryptoShake256>;
