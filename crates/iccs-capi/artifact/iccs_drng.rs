//! Archive member `iccs_drng.o`: `init_random_number` / `get_random_number` (drng.h) on
//! `crates/iccs/src/drng.rs`. The context global `drng_algorithm` lives in its own member.
//!
//! Null context, or null buffer with a non-zero length: −1, state untouched (the official
//! code would crash).

#![no_std]

#[path = "../../iccs/src/drng.rs"]
mod drng;
#[path = "../../iccs/src/sm3.rs"]
mod sm3;

use drng::DrngCtx;

/// `int init_random_number(DRNG_ctx *drng, const unsigned char *seed,
/// unsigned long long seed_len)` — seed length in **bytes** (0 allowed); returns 0.
///
/// # Safety
/// `drng`: a valid `DRNG_ctx` (165 bytes); `seed`: `seed_len` readable bytes or null with
/// `seed_len == 0`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn init_random_number(
    drng: *mut DrngCtx,
    seed: *const u8,
    seed_len: u64,
) -> i32 {
    if drng.is_null() || (seed.is_null() && seed_len != 0) {
        return -1;
    }
    let s: &[u8] = if seed_len == 0 {
        &[]
    } else {
        // SAFETY: caller contract.
        unsafe { core::slice::from_raw_parts(seed, seed_len as usize) }
    };
    // SAFETY: non-null, valid context (caller contract); DrngCtx has alignment 1.
    unsafe { &mut *drng }.instantiate(s);
    0
}

/// `int get_random_number(DRNG_ctx *drng, unsigned char *random_number,
/// unsigned long long random_number_len)` — length in **bits**; writes `ceil(bits/8)` bytes;
/// every call (also 0 bits) advances the state; returns 0.
///
/// # Safety
/// `drng`: a valid `DRNG_ctx`; `random_number`: `ceil(bits/8)` writable bytes or null with
/// 0 bits.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn get_random_number(
    drng: *mut DrngCtx,
    random_number: *mut u8,
    random_number_len: u64,
) -> i32 {
    let n = (random_number_len / 8 + (random_number_len % 8 != 0) as u64) as usize;
    if drng.is_null() || (random_number.is_null() && n != 0) {
        return -1;
    }
    let out: &mut [u8] = if n == 0 {
        &mut []
    } else {
        // SAFETY: caller contract.
        unsafe { core::slice::from_raw_parts_mut(random_number, n) }
    };
    // SAFETY: non-null, valid context (caller contract).
    unsafe { &mut *drng }.generate(out, random_number_len);
    0
}
