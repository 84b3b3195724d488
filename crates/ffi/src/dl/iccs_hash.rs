//! ICCS hash API ([`HashApi`]: `CryptHash`).

use std::ffi::c_int;

use super::library::*;

type CryptHashFn = extern "C" fn(c_int, *const u8, Ull, Uc) -> c_int;

/// ICCS hash API (`CryptHash`).
#[derive(Clone)]
pub struct HashApi {
    _lib: Library,
    f: CryptHashFn,
}

impl HashApi {
    /// Resolve `CryptHash`.
    pub fn new(lib: &Library) -> Result<HashApi, DlError> {
        // SAFETY: API_CryptHash declaration (spec §3.5): `int CryptHash(int digest_len_bits,
        // const unsigned char *msg, unsigned long long msg_len_bits, unsigned char *digest)`.
        unsafe {
            Ok(HashApi {
                _lib: lib.clone(),
                f: lib.func("CryptHash")?,
            })
        }
    }

    /// `CryptHash(digest_bits, msg, msg_bits, digest)`; `msg` must hold `ceil(msg_bits/8)`
    /// bytes and `digest` `digest_bits/8` bytes (rounded up).
    #[inline]
    pub fn hash(
        &self,
        digest_bits: u32,
        msg: &[u8],
        msg_bits: u64,
        digest: &mut [u8],
    ) -> Result<i32, DlError> {
        need("msg", msg, msg_bits.div_ceil(8))?;
        need("digest", digest, u64::from(digest_bits).div_ceil(8))?;
        let bits = c_int::try_from(digest_bits).map_err(|_| DlError::Buffer {
            what: "digest_bits",
            need: u64::from(digest_bits),
            got: c_int::MAX as u64,
        })?;
        Ok((self.f)(bits, msg.as_ptr(), msg_bits, digest.as_mut_ptr()))
    }
}
