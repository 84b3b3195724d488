//! ICCS signature API ([`SigApi`]: `sig_keygen`, `sig_sign`, `sig_verify`, the size getters).

use std::ffi::c_int;

use super::library::*;

/// Claimed sizes of an ICCS signature instance (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SigSizes {
    /// Public key.
    pub pk: u64,
    /// Secret key.
    pub sk: u64,
    /// Maximum signature length.
    pub sn: u64,
}

type SigKeygen = extern "C" fn(Uc, Len, Uc, Len) -> c_int;
type SigSign = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Len) -> c_int;
type SigVerify = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Ull) -> c_int;

/// ICCS signature API (`sig_*`).
#[derive(Clone)]
pub struct SigApi {
    _lib: Library,
    /// The sizes the library claims.
    pub sizes: SigSizes,
    keygen: SigKeygen,
    sign: SigSign,
    verify: SigVerify,
}

/// Result of a keygen-like call: C status and the two returned lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOut {
    /// C status.
    pub rc: i32,
    /// Public-key length returned.
    pub pk_len: u64,
    /// Secret-key length returned.
    pub sk_len: u64,
}

impl SigApi {
    /// Resolve the six `sig_*` symbols and read the claimed sizes.
    pub fn new(lib: &Library) -> Result<SigApi, DlError> {
        // SAFETY: the types below are the ICCS API_PKC declarations (spec §3.3):
        // `unsigned long long sig_get_*_len_bytes(void)`, `int sig_keygen(unsigned char *pk,
        // unsigned long long *pk_len, unsigned char *sk, unsigned long long *sk_len)`, `int
        // sig_sign(sk, sk_len, m, m_len, sn, *sn_len)`, `int sig_verify(pk, pk_len, sn,
        // sn_len, m, m_len)`.
        unsafe {
            let pk: GetLen = lib.func("sig_get_pk_len_bytes")?;
            let sk: GetLen = lib.func("sig_get_sk_len_bytes")?;
            let sn: GetLen = lib.func("sig_get_sn_len_bytes")?;
            Ok(SigApi {
                _lib: lib.clone(),
                sizes: SigSizes {
                    pk: pk(),
                    sk: sk(),
                    sn: sn(),
                },
                keygen: lib.func("sig_keygen")?,
                sign: lib.func("sig_sign")?,
                verify: lib.func("sig_verify")?,
            })
        }
    }

    /// `sig_keygen`: `pk`, `sk` must hold the claimed sizes; length variables start at the
    /// claimed sizes.
    #[inline]
    pub fn keygen(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<KeyOut, DlError> {
        need("pk", pk, self.sizes.pk)?;
        need("sk", sk, self.sizes.sk)?;
        let (mut pl, mut sl) = (self.sizes.pk, self.sizes.sk);
        let rc = (self.keygen)(pk.as_mut_ptr(), &mut pl, sk.as_mut_ptr(), &mut sl);
        Ok(KeyOut {
            rc,
            pk_len: pl,
            sk_len: sl,
        })
    }

    /// `sig_sign(sk, sk.len(), m, m.len(), sn, &sn_len)`; `sn` holds the claimed maximum.
    /// Returns (status, returned signature length).
    #[inline]
    pub fn sign(&self, sk: &mut [u8], m: &mut [u8], sn: &mut [u8]) -> Result<(i32, u64), DlError> {
        need("sn", sn, self.sizes.sn)?;
        let mut len = self.sizes.sn;
        let rc = (self.sign)(
            sk.as_mut_ptr(),
            ull(sk.len()),
            m.as_mut_ptr(),
            ull(m.len()),
            sn.as_mut_ptr(),
            &mut len,
        );
        Ok((rc, len))
    }

    /// `sig_verify(pk, pk.len(), sn, sn.len(), m, m.len())`: 0 = valid, −1 = invalid.
    #[inline]
    pub fn verify(&self, pk: &mut [u8], sn: &mut [u8], m: &mut [u8]) -> i32 {
        (self.verify)(
            pk.as_mut_ptr(),
            ull(pk.len()),
            sn.as_mut_ptr(),
            ull(sn.len()),
            m.as_mut_ptr(),
            ull(m.len()),
        )
    }
}
