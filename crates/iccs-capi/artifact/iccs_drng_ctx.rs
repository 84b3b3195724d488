//! Archive member `iccs_drng_ctx.o`: only the global `DRNG_ctx drng_algorithm` (zeroed).
//! Kept alone so that a shim or a candidate defining `drng_algorithm` itself wins without a
//! multiple-definition error (this member is then never pulled from the archive).
//! Declared as 165 raw bytes (`DRNG_ctx` = three 55-byte arrays, alignment 1, see
//! `crates/iccs/src/drng.rs`), so that no DRNG code is dragged into this member.

#![no_std]

/// `DRNG_ctx drng_algorithm;` (size 3 × 55 bytes).
#[unsafe(no_mangle)]
pub static mut drng_algorithm: [u8; 165] = [0; 165];
