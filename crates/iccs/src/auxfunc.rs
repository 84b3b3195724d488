//! The ICCS placeholder primitives of `auxfunc.h`: `sm3hash`, `pseudohash`, `pseudoXOF`
//! (iccs-api-and-kat.md §1), on bit strings, with the official return codes.
//!
//! Shared verbatim with the C artifact, hence `no_std`, allocation-free and panic-free.
//! Cost profile follows the reference on purpose: `pseudoXOF` re-hashes the message once per
//! 32-byte output block (no mid-state caching), so that candidates linking this port spend
//! about as much time in the helper as with the official C file.

use crate::sm3::{Sm3, sm3_parts};

/// Return code: success.
pub const ICCS_OK: i32 = 0;
/// Return code of a null pointer with a non-zero length (pqperf extension: the official code
/// would crash) and, in the Rust API, of a buffer shorter than the stated length.
pub const ICCS_ERR_INVALID: i32 = -1;
/// Return code: allocation failure (never produced by this port, which does not allocate).
pub const ICCS_ERR_ALLOC: i32 = -2;
/// Return code: internal HMAC failure (never produced by this port).
pub const ICCS_ERR_HMAC: i32 = -3;
/// Return code: digest length not supported.
pub const ICCS_ERR_DIGEST_LEN: i32 = -4;

/// The line the reference prints to stderr for an unsupported digest length (trailing space).
pub const DIGEST_LEN_ERROR_LINE: &str = "ERROR: Digestbitlen not in the limitation. \n";

/// The fixed HMAC key: SM3("3.14159265358979") ‖ SM3("2.71828182845904").
pub const HMAC_KEY: [u8; 64] = [
    0x53, 0x07, 0xf6, 0xd5, 0xeb, 0x6a, 0x3c, 0xed, 0x3d, 0x24, 0xc5, 0x3c, 0xc9, 0xc8, 0x2c, 0xce,
    0x2f, 0x89, 0x36, 0x39, 0x70, 0x23, 0xf0, 0x69, 0x5c, 0x26, 0xc8, 0x0c, 0x1a, 0xb1, 0x82, 0xa7,
    0x1d, 0xb0, 0x2b, 0xa9, 0x2f, 0x54, 0x40, 0x18, 0x11, 0x5a, 0x96, 0xe7, 0x19, 0x66, 0x2c, 0xa3,
    0x2b, 0x7c, 0x7e, 0xfc, 0x0a, 0x6d, 0x24, 0x82, 0x15, 0x07, 0x66, 0xba, 0x6f, 0x65, 0x5b, 0x8e,
];

/// Number of bytes holding a bit string of `bits` bits.
pub const fn bytes_for_bits(bits: u64) -> u64 {
    bits / 8 + !bits.is_multiple_of(8) as u64
}

/// HMAC-SM3 with [`HMAC_KEY`] over the concatenation of `parts` (bit strings).
pub fn hmac_parts(parts: &[(&[u8], u64)]) -> [u8; 32] {
    let mut ipad = HMAC_KEY;
    let mut opad = HMAC_KEY;
    for b in ipad.iter_mut() {
        *b ^= 0x36;
    }
    for b in opad.iter_mut() {
        *b ^= 0x5C;
    }
    let mut h = Sm3::new();
    h.update(&ipad);
    for (d, n) in parts {
        h.update_bits(d, *n);
    }
    let inner = h.finalize();
    let mut h = Sm3::new();
    h.update(&opad);
    h.update(&inner);
    h.finalize()
}

/// Output length in bytes of `pseudohash` for a digest width, or `None` if unsupported.
pub const fn pseudohash_len(digest_bits: i32) -> Option<usize> {
    match digest_bits {
        512 => Some(64),
        768 => Some(96),
        1024 => Some(128),
        _ => None,
    }
}

/// `sm3hash` core: `out` receives SM3 of the first `msg_bits` bits of `msg`.
/// Returns `ICCS_ERR_DIGEST_LEN` unless `digest_bits == 256`.
pub fn sm3hash_core(digest_bits: i32, msg: &[u8], msg_bits: u64, out: &mut [u8; 32]) -> i32 {
    if digest_bits != 256 {
        return ICCS_ERR_DIGEST_LEN;
    }
    *out = sm3_parts(&[(msg, msg_bits)]);
    ICCS_OK
}

/// `pseudohash` core; `out` must hold [`pseudohash_len`] bytes (extra bytes are untouched;
/// a shorter `out` yields `ICCS_ERR_INVALID`).
pub fn pseudohash_core(digest_bits: i32, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    let Some(n) = pseudohash_len(digest_bits) else {
        return ICCS_ERR_DIGEST_LEN;
    };
    if out.len() < n {
        return ICCS_ERR_INVALID;
    }
    let dom = [(digest_bits / 256) as u8, 0u8];
    let k1 = hmac_parts(&[(&dom, 16), (msg, msg_bits)]);
    let h1 = sm3_parts(&[(msg, msg_bits), (&dom, 16)]);
    let h2 = sm3_parts(&[(&k1, 256), (&h1, 256)]);
    let mut blocks = out.chunks_exact_mut(32);
    let mut put = |v: &[u8; 32]| {
        if let Some(o) = blocks.next() {
            o.copy_from_slice(v);
        }
    };
    put(&h1);
    put(&h2);
    if digest_bits == 512 {
        return ICCS_OK;
    }
    let k2 = hmac_parts(&[(&h1, 256)]);
    let h3 = sm3_parts(&[(&h2, 256), (&k2, 256)]);
    put(&h3);
    if digest_bits == 768 {
        return ICCS_OK;
    }
    let k3 = hmac_parts(&[(&h2, 256)]);
    let k4 = hmac_parts(&[(&h3, 256)]);
    let h4 = sm3_parts(&[(&k3, 256), (&h3, 256), (&k4, 256)]);
    put(&h4);
    ICCS_OK
}

/// `pseudoXOF` core (KDF-SM3, 32-bit big-endian counter from 1): writes exactly
/// `ceil(out_bits/8)` bytes of `out`, masking the unused low bits of the last byte.
/// A shorter `out` yields `ICCS_ERR_INVALID` (nothing written).
pub fn pseudoxof_core(out_bits: u64, msg: &[u8], msg_bits: u64, out: &mut [u8]) -> i32 {
    let nbytes = bytes_for_bits(out_bits);
    if (out.len() as u64) < nbytes {
        return ICCS_ERR_INVALID;
    }
    let (dst, _) = out.split_at_mut(nbytes as usize);
    let mut counter: u32 = 1;
    for chunk in dst.chunks_mut(32) {
        let ctr = counter.to_be_bytes();
        let k = sm3_parts(&[(msg, msg_bits), (&ctr, 32)]);
        for (o, v) in chunk.iter_mut().zip(k) {
            *o = v;
        }
        counter = counter.wrapping_add(1);
    }
    let rem = (out_bits % 8) as u32;
    if rem != 0
        && let Some(last) = dst.last_mut()
    {
        *last &= 0xFFu8 << (8 - rem);
    }
    ICCS_OK
}
