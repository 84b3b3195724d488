//! ICCS randomness and helpers: the shim's DRNG entry points ([`IccsDrng`]: `ngcc_seed`,
//! `ngcc_random`) and the helper functions of an ICCS provider library ([`IccsHelpers`]:
//! `sm3hash`, `pseudohash`, `pseudoXOF`, the DRNG of `drng.h`).

use std::ffi::c_int;

use super::library::*;

/// The library's SM3 Hash_DRBG context `drng_algorithm`, reached through the shim.
#[derive(Clone)]
pub struct IccsDrng {
    _lib: Library,
    seed: extern "C" fn(*const u8, Ull) -> c_int,
    random: Option<extern "C" fn(Uc, Ull) -> c_int>,
}

impl IccsDrng {
    /// Resolve `ngcc_seed` (required) and `ngcc_random` (optional).
    pub fn new(lib: &Library) -> Result<IccsDrng, DlError> {
        // SAFETY: the shim declares `int ngcc_seed(const unsigned char *, unsigned long long)`
        // and `int ngcc_random(unsigned char *, unsigned long long bits)`.
        unsafe {
            Ok(IccsDrng {
                _lib: lib.clone(),
                seed: lib.func("ngcc_seed")?,
                random: lib.func_opt("ngcc_random"),
            })
        }
    }

    /// `init_random_number(&drng_algorithm, seed, len)`; returns the C status.
    pub fn seed(&self, seed: &[u8]) -> i32 {
        // The callee reads exactly seed.len() bytes (length in bytes).
        (self.seed)(seed.as_ptr(), ull(seed.len()))
    }

    /// `get_random_number(&drng_algorithm, out, bits)` with `bits ≤ 8·out.len()`.
    pub fn random(&self, out: &mut [u8], bits: u64) -> Result<i32, DlError> {
        let f = self.random.ok_or_else(|| DlError::Symbol {
            name: "ngcc_random".into(),
            message: "not exported".into(),
        })?;
        need("random", out, bits.div_ceil(8))?;
        Ok(f(out.as_mut_ptr(), bits))
    }
}

/// Size of the C `DRNG_ctx` (three 55-byte big-endian integers).
pub const DRNG_CTX_BYTES: usize = 165;

type AuxFn = extern "C" fn(c_int, *const u8, Ull, Uc) -> c_int;
type XofFn = extern "C" fn(Ull, *const u8, Ull, Uc) -> c_int;
type DrngInitFn = extern "C" fn(Uc, *const u8, Ull) -> c_int;
type DrngGetFn = extern "C" fn(Uc, Uc, Ull) -> c_int;

/// The ICCS helpers exported by a provider library (not a candidate: a shared library
/// made of pqperf's `libpqperf_iccs_core.a` or of the official `auxfunc.c`/`drng.c`), for
/// `pqperf iccs bench`. The DRNG context is a caller-owned [`DRNG_CTX_BYTES`]-byte buffer.
#[derive(Clone)]
pub struct IccsHelpers {
    _lib: Library,
    sm3hash: AuxFn,
    pseudohash: AuxFn,
    pseudoxof: XofFn,
    init: DrngInitFn,
    get: DrngGetFn,
}

impl IccsHelpers {
    /// Resolve `sm3hash`, `pseudohash`, `pseudoXOF`, `init_random_number`,
    /// `get_random_number`.
    pub fn new(lib: &Library) -> Result<IccsHelpers, DlError> {
        // SAFETY: auxfunc.h / drng.h declarations (spec §1.1, §2): `int sm3hash(int,
        // const unsigned char *, unsigned long long, unsigned char *)`, same for `pseudohash`;
        // `int pseudoXOF(unsigned long long, const unsigned char *, unsigned long long,
        // unsigned char *)`; `int init_random_number(DRNG_ctx *, const unsigned char *,
        // unsigned long long)`; `int get_random_number(DRNG_ctx *, unsigned char *,
        // unsigned long long)`.
        unsafe {
            Ok(IccsHelpers {
                _lib: lib.clone(),
                sm3hash: lib.func("sm3hash")?,
                pseudohash: lib.func("pseudohash")?,
                pseudoxof: lib.func("pseudoXOF")?,
                init: lib.func("init_random_number")?,
                get: lib.func("get_random_number")?,
            })
        }
    }

    /// `sm3hash(256, msg, bits, out)`.
    pub fn sm3hash(&self, msg: &[u8], bits: u64, out: &mut [u8; 32]) -> Result<i32, DlError> {
        need("msg", msg, bits.div_ceil(8))?;
        Ok((self.sm3hash)(256, msg.as_ptr(), bits, out.as_mut_ptr()))
    }

    /// `pseudohash(d, msg, bits, out)`, d ∈ {512, 768, 1024} (others: not called, buffer
    /// error); `out` holds d/8 bytes.
    pub fn pseudohash(
        &self,
        digest_bits: u32,
        msg: &[u8],
        bits: u64,
        out: &mut [u8],
    ) -> Result<i32, DlError> {
        if !matches!(digest_bits, 512 | 768 | 1024) {
            return Err(DlError::Buffer {
                what: "pseudohash width",
                need: 512,
                got: u64::from(digest_bits),
            });
        }
        need("msg", msg, bits.div_ceil(8))?;
        need("digest", out, u64::from(digest_bits) / 8)?;
        Ok((self.pseudohash)(
            digest_bits as c_int,
            msg.as_ptr(),
            bits,
            out.as_mut_ptr(),
        ))
    }

    /// `pseudoXOF(out_bits, msg, bits, out)`; `out` holds ceil(out_bits/8) bytes.
    pub fn pseudoxof(
        &self,
        out_bits: u64,
        msg: &[u8],
        bits: u64,
        out: &mut [u8],
    ) -> Result<i32, DlError> {
        need("msg", msg, bits.div_ceil(8))?;
        need("output", out, out_bits.div_ceil(8))?;
        Ok((self.pseudoxof)(
            out_bits,
            msg.as_ptr(),
            bits,
            out.as_mut_ptr(),
        ))
    }

    /// `init_random_number(ctx, seed, seed.len())`.
    pub fn drng_init(&self, ctx: &mut [u8; DRNG_CTX_BYTES], seed: &[u8]) -> i32 {
        // The callee writes the 165-byte context and reads seed.len() bytes.
        (self.init)(ctx.as_mut_ptr(), seed.as_ptr(), ull(seed.len()))
    }

    /// `get_random_number(ctx, out, bits)`; `out` holds ceil(bits/8) bytes.
    pub fn drng_get(
        &self,
        ctx: &mut [u8; DRNG_CTX_BYTES],
        out: &mut [u8],
        bits: u64,
    ) -> Result<i32, DlError> {
        need("random", out, bits.div_ceil(8))?;
        Ok((self.get)(ctx.as_mut_ptr(), out.as_mut_ptr(), bits))
    }
}
