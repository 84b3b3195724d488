//! Archive member `pqclean_rng.o`: `PQCLEAN_randombytes`, the symbol PQClean scheme code
//! references (its `common/randombytes.h` maps `randombytes` to it). Serves the generator
//! initialised last: `nist_kat_init`/`randombytes_init` (default) or `hqc_kat_init`.

#![no_std]

unsafe extern "C" {
    static mut pqperf_iccs_rng_mode: u8;
    fn randombytes(x: *mut u8, xlen: u64) -> i32;
    fn pqperf_hqc_randombytes(buf: *mut u8, n: usize) -> i32;
}

/// `int PQCLEAN_randombytes(uint8_t *output, size_t n)`.
///
/// # Safety
/// `output` must point to `n` writable bytes; single-threaded use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn PQCLEAN_randombytes(output: *mut u8, n: usize) -> i32 {
    // SAFETY: caller contract; the mode byte is only written by the init functions.
    unsafe {
        if pqperf_iccs_rng_mode == 1 {
            pqperf_hqc_randombytes(output, n)
        } else {
            randombytes(output, n as u64)
        }
    }
}
