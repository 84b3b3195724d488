//! Archive member `iccs_aux.o`: the ICCS placeholder primitives `sm3hash`, `pseudohash`,
//! `pseudoXOF` with the official C prototypes (auxfunc.h), on `crates/iccs/src/auxfunc.rs`.
//!
//! Pointer rules: a null pointer is accepted only with a zero length; otherwise −1 (the
//! official code would crash). Unsupported digest widths return −4 and print the official
//! stderr line, before any pointer is looked at.

#![no_std]

#[path = "../../iccs/src/auxfunc.rs"]
mod auxfunc;
#[path = "../../iccs/src/sm3.rs"]
mod sm3;

use auxfunc::{ICCS_ERR_DIGEST_LEN, ICCS_ERR_INVALID, bytes_for_bits};

unsafe extern "C" {
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
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
    // SAFETY: `digest` points to 32 writable bytes (caller contract), alignment 1.
    let out = unsafe { &mut *(digest as *mut [u8; 32]) };
    auxfunc::sm3hash_core(digest_len, m, msg_len, out)
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
    // SAFETY: `digest` points to `n` writable bytes (caller contract).
    let out = unsafe { core::slice::from_raw_parts_mut(digest, n) };
    auxfunc::pseudohash_core(digest_len, m, msg_len, out)
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
    // SAFETY: caller contract.
    let Some(m) = (unsafe { msg_slice(msg, msg_len) }) else {
        return ICCS_ERR_INVALID;
    };
    if output.is_null() {
        return ICCS_ERR_INVALID;
    }
    // SAFETY: `output` points to `n` writable bytes (caller contract).
    let out = unsafe { core::slice::from_raw_parts_mut(output, n) };
    auxfunc::pseudoxof_core(output_len, m, msg_len, out)
}
