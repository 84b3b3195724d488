//! Archive member `rng_mode.o`: which generator `PQCLEAN_randombytes` serves
//! (0 = NIST AES-256 CTR DRBG, 1 = HQC SHAKE-256 generator); set by the init functions.

#![no_std]

/// Selected generator of `PQCLEAN_randombytes`.
#[unsafe(no_mangle)]
pub static mut pqperf_iccs_rng_mode: u8 = 0;
