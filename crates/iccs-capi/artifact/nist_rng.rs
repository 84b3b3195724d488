//! Archive member `nist_rng.o`: NIST PQCgenKAT `rng.h` (`randombytes_init`, `randombytes`)
//! and PQClean's `nist_kat_init`, on `crates/iccs/src/ctr_drbg.rs` with the artifact's own
//! AES (`soft_aes.rs`, cross-checked against the `aes` crate in tests).
//! Not thread-safe (one process-wide state, like the reference).

#![no_std]

#[path = "../../iccs/src/ctr_drbg.rs"]
mod ctr_drbg;
#[path = "../../iccs/src/soft_aes.rs"]
mod soft_aes;

use ctr_drbg::CtrDrbgCore;
use soft_aes::SoftAes256;

static mut STATE: Option<CtrDrbgCore<SoftAes256>> = None;

unsafe extern "C" {
    static mut pqperf_iccs_rng_mode: u8;
}

/// # Safety
/// Single-threaded use only.
unsafe fn state() -> &'static mut CtrDrbgCore<SoftAes256> {
    // SAFETY: the reference keeps one unsynchronised global too; callers are single-threaded.
    let s = unsafe { &mut *(&raw mut STATE) };
    s.get_or_insert_with(CtrDrbgCore::zeroed)
}

/// # Safety
/// `p` must be null or point to 48 readable bytes.
unsafe fn block48<'a>(p: *const u8) -> Option<&'a [u8; 48]> {
    if p.is_null() {
        None
    } else {
        // SAFETY: caller contract; alignment 1.
        Some(unsafe { &*(p as *const [u8; 48]) })
    }
}

/// # Safety
/// See `randombytes_init`.
unsafe fn init(entropy: *const u8, pers: *const u8) {
    // SAFETY: caller contract.
    let Some(e) = (unsafe { block48(entropy) }) else {
        return;
    };
    // SAFETY: caller contract.
    let p = unsafe { block48(pers) };
    // SAFETY: single-threaded use.
    unsafe { state() }.init(e, p);
}

/// `void randombytes_init(unsigned char *entropy_input, unsigned char
/// *personalization_string, int security_strength)` — 48-byte entropy, optional 48-byte
/// personalization (null = none); a null entropy input is ignored.
///
/// # Safety
/// Non-null pointers must point to 48 readable bytes; single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn randombytes_init(
    entropy_input: *const u8,
    personalization_string: *const u8,
    _security_strength: i32,
) {
    // SAFETY: caller contract.
    unsafe {
        init(entropy_input, personalization_string);
        pqperf_iccs_rng_mode = 0;
    }
}

/// PQClean's `void nist_kat_init(uint8_t *entropy_input, const uint8_t
/// *personalization_string, int security_strength)`; also makes `PQCLEAN_randombytes`
/// serve this DRBG.
///
/// # Safety
/// As `randombytes_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nist_kat_init(
    entropy_input: *const u8,
    personalization_string: *const u8,
    security_strength: i32,
) {
    // SAFETY: caller contract.
    unsafe { randombytes_init(entropy_input, personalization_string, security_strength) }
}

/// `int randombytes(unsigned char *x, unsigned long long xlen)`: 0 (`RNG_SUCCESS`), or −2
/// (`RNG_BAD_OUTBUF`) for a null buffer with a non-zero length.
///
/// # Safety
/// `x` must point to `xlen` writable bytes; single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn randombytes(x: *mut u8, xlen: u64) -> i32 {
    let out: &mut [u8] = if xlen == 0 {
        &mut []
    } else if x.is_null() {
        return -2;
    } else {
        // SAFETY: caller contract.
        unsafe { core::slice::from_raw_parts_mut(x, xlen as usize) }
    };
    // SAFETY: single-threaded use.
    unsafe { state() }.fill(out);
    0
}
