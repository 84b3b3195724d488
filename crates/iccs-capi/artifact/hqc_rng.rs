//! Archive member `hqc_rng.o`: PQClean's HQC KAT generator (`hqc_kat_init`,
//! `hqc_kat_release`, and its `randombytes` under the name `pqperf_hqc_randombytes`), on
//! `crates/iccs/src/shake_prng.rs` with the artifact's own Keccak (`keccak.rs`,
//! cross-checked against the `shake` crate in tests). Not thread-safe, like the reference.

#![no_std]

#[path = "../../iccs/src/keccak.rs"]
mod keccak;
#[path = "../../iccs/src/shake_prng.rs"]
mod shake_prng;

use keccak::Shake256;
use shake_prng::ShakePrngCore;

static mut STATE: Option<ShakePrngCore<Shake256>> = None;

unsafe extern "C" {
    static mut pqperf_iccs_rng_mode: u8;
}

/// `void hqc_kat_init(uint8_t *entropy_input, uint8_t *personalization_string,
/// int security_strength)` — 48-byte entropy, optional 48-byte personalization (null =
/// none); also makes `PQCLEAN_randombytes` serve this generator. Null entropy is ignored.
///
/// # Safety
/// Non-null pointers must point to 48 readable bytes; single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hqc_kat_init(
    entropy_input: *const u8,
    personalization_string: *const u8,
    _security_strength: i32,
) {
    if entropy_input.is_null() {
        return;
    }
    // SAFETY: caller contract (48 readable bytes, alignment 1).
    let e = unsafe { &*(entropy_input as *const [u8; 48]) };
    let p = if personalization_string.is_null() {
        None
    } else {
        // SAFETY: caller contract.
        Some(unsafe { &*(personalization_string as *const [u8; 48]) })
    };
    // SAFETY: single-threaded use.
    unsafe {
        *(&raw mut STATE) = Some(ShakePrngCore::new(e, p));
        pqperf_iccs_rng_mode = 1;
    }
}

/// `void hqc_kat_release(void)`: forget the state.
///
/// # Safety
/// Single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hqc_kat_release() {
    // SAFETY: single-threaded use.
    unsafe { *(&raw mut STATE) = None };
}

/// `int pqperf_hqc_randombytes(uint8_t *buf, size_t n)`: the next `n` bytes of the stream
/// (before any init: the stream of an all-zero entropy input); −2 for null with n > 0.
///
/// # Safety
/// `buf` must point to `n` writable bytes; single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pqperf_hqc_randombytes(buf: *mut u8, n: usize) -> i32 {
    if n == 0 {
        return 0;
    }
    if buf.is_null() {
        return -2;
    }
    // SAFETY: caller contract.
    let out = unsafe { core::slice::from_raw_parts_mut(buf, n) };
    // SAFETY: single-threaded use.
    let s = unsafe { &mut *(&raw mut STATE) };
    s.get_or_insert_with(|| ShakePrngCore::new(&[0u8; 48], None))
        .fill(out);
    0
}
