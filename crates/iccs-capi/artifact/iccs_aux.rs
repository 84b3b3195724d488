//! Archive member `iccs_aux.o`: the ICCS placeholder primitives `sm3hash`, `pseudohash`,
//! `pseudoXOF` with the official C prototypes (auxfunc.h), on `crates/iccs/src/auxfunc.rs`.
//!
//! Pointer rules: a null pointer is accepted only with a zero length; otherwise −1 (the
//! official code would crash). Outputs may overlap the message: the result is that of the
//! message as it was at entry (the reference hashes copies), so in-place seed expansion such
//! as `pseudoXOF(512, buf, 256, buf)` reproduces the reference. Unsupported digest widths return −4 and print the official
//! stderr line, before any pointer is looked at.

#![no_std]

#[path = "../../iccs/src/auxfunc.rs"]
mod auxfunc;
#[path = "../../iccs/src/sm3.rs"]
mod sm3;

use auxfunc::{ICCS_ERR_DIGEST_LEN, ICCS_ERR_INVALID, bytes_for_bits};

unsafe extern "C" {
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    fn malloc(size: usize) -> *mut u8;
    fn free(ptr: *mut u8);
}

fn digest_len_error() -> i32 {
    let line = auxfunc::DIGEST_LEN_ERROR_LINE;
    // SAFETY: `line` is a valid buffer of `line.len()` bytes; fd 2 may be closed, then
    // write(2) just fails.
    let _ = unsafe { write(2, line.as_ptr(), line.len()) };
    ICCS_ERR_DIGEST_LEN
}

/// The message as a slice of `ceil(bits/8)` bytes, `None` for a null pointer with bits > 0.
///
/// # Safety
/// A non-null `msg` must point to at least `ceil(bits/8)` readable bytes.
unsafe fn msg_slice<'a>(msg: *const u8, bits: u64) -> Option<&'a [u8]> {
    let n = bytes_for_bits(bits) as usize;
    if n == 0 {
        Some(&[])
    } else if msg.is_null() {
        None
    } else {
        // SAFETY: caller contract.
        Some(unsafe { core::slice::from_raw_parts(msg, n) })
    }
}

/// `int sm3hash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
/// unsigned char *digest)` — lengths in bits; writes 32 bytes.
///
/// # Safety
/// `msg`: `ceil(msg_len/8)` readable bytes or null with `msg_len == 0`; `digest`: 32 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sm3hash(
    digest_len: i32,
    msg: *const u8,
    msg_len: u64,
    digest: *mut u8,
) -> i32 {
    if digest_len != 256 {
        return digest_len_error();
    }
    // SAFETY: caller contract.
    let Some(m) = (unsafe { msg_slice(msg, msg_len) }) else {
        return ICCS_ERR_INVALID;
    };
    if digest.is_null() {
        return ICCS_ERR_INVALID;
    }
    // Compute into a local buffer first: `digest` may overlap `msg`.
    let mut d = [0u8; 32];
    let rc = auxfunc::sm3hash_core(digest_len, m, msg_len, &mut d);
    // SAFETY: `digest` points to 32 writable bytes (caller contract); `d` is local.
    unsafe { core::ptr::copy_nonoverlapping(d.as_ptr(), digest, 32) };
    rc
}

/// `int pseudohash(int digest_len, const unsigned char *msg, unsigned long long msg_len,
/// unsigned char *digest)` — digest_len ∈ {512, 768, 1024} bits; writes digest_len/8 bytes.
///
/// # Safety
/// `msg`: `ceil(msg_len/8)` readable bytes or null with `msg_len == 0`; `digest`:
/// `digest_len/8` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pseudohash(
    digest_len: i32,
    msg: *const u8,
    msg_len: u64,
    digest: *mut u8,
) -> i32 {
    let Some(n) = auxfunc::pseudohash_len(digest_len) else {
        return digest_len_error();
    };
    // SAFETY: caller contract.
    let Some(m) = (unsafe { msg_slice(msg, msg_len) }) else {
        return ICCS_ERR_INVALID;
    };
    if digest.is_null() {
        return ICCS_ERR_INVALID;
    }
    // Compute into a local buffer first: `digest` may overlap `msg`.
    let mut d = [0u8; 128];
    let rc = auxfunc::pseudohash_core(digest_len, m, msg_len, &mut d);
    // SAFETY: `digest` points to `n` ≤ 128 writable bytes (caller contract); `d` is local.
    unsafe { core::ptr::copy_nonoverlapping(d.as_ptr(), digest, n) };
    rc
}

/// `int pseudoXOF(unsigned long long output_len, const unsigned char *msg,
/// unsigned long long msg_len, unsigned char *output)` — lengths in bits; writes exactly
/// `ceil(output_len/8)` bytes (last byte masked); `output_len == 0` writes nothing.
///
/// # Safety
/// `msg`: `ceil(msg_len/8)` readable bytes or null with `msg_len == 0`; `output`:
/// `ceil(output_len/8)` writable bytes or null with `output_len == 0`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pseudoXOF(
    output_len: u64,
    msg: *const u8,
    msg_len: u64,
    output: *mut u8,
) -> i32 {
    let n = bytes_for_bits(output_len) as usize;
    if n == 0 {
        return auxfunc::ICCS_OK;
    }
    let n_in = bytes_for_bits(msg_len) as usize;
    if (msg.is_null() && n_in != 0) || output.is_null() {
        return ICCS_ERR_INVALID;
    }
    let (lo, hi) = (msg as usize, msg as usize + n_in);
    let (olo, ohi) = (output as usize, output as usize + n);
    if n_in != 0 && lo < ohi && olo < hi {
        // Output overlaps the message (e.g. expanding a seed in place). The reference hashes
        // a copy of the message taken at entry, so do the same (−2 if that copy fails).
        // SAFETY: plain libc allocation of n_in > 0 bytes.
        let copy = unsafe { malloc(n_in) };
        if copy.is_null() {
            return auxfunc::ICCS_ERR_ALLOC;
        }
        // SAFETY: `msg` has n_in readable bytes; `copy` is a fresh, disjoint allocation.
        unsafe { core::ptr::copy_nonoverlapping(msg, copy, n_in) };
        // SAFETY: `copy` (n_in bytes, ours) and `output` (n bytes) are disjoint.
        let rc = unsafe {
            let m = core::slice::from_raw_parts(copy as *const u8, n_in);
            let out = core::slice::from_raw_parts_mut(output, n);
            auxfunc::pseudoxof_core(output_len, m, msg_len, out)
        };
        // SAFETY: allocated above.
        unsafe { free(copy) };
        return rc;
    }
    // SAFETY: caller contract; the two ranges are disjoint (checked above).
    let Some(m) = (unsafe { msg_slice(msg, msg_len) }) else {
        return ICCS_ERR_INVALID;
    };
    // SAFETY: `output` points to `n` writable bytes (caller contract).
    let out = unsafe { core::slice::from_raw_parts_mut(output, n) };
    auxfunc::pseudoxof_core(output_len, m, msg_len, out)
}
