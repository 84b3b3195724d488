//! ICCS KEM API ([`KemApi`]: `kem_keygen`, `kem_enc`, `kem_dec`, the size getters).

use std::ffi::c_int;

use super::iccs_sign::KeyOut;
use super::library::*;

/// Claimed sizes of an ICCS KEM instance (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KemSizes {
    /// Public key (`kem_pk_len`).
    pub pk: u64,
    /// Secret key (`kem_sk_len`).
    pub sk: u64,
    /// Ciphertext (`kem_ct_len`).
    pub ct: u64,
    /// Shared secret (`kem_ss_len`).
    pub ss: u64,
}

type KemKeygen = extern "C" fn(Uc, Len, Uc, Len) -> c_int;
type KemEnc = extern "C" fn(Uc, Ull, Uc, Len, Uc, Len) -> c_int;
type KemDec = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Len) -> c_int;

/// ICCS KEM API (`kem_*`).
#[derive(Clone)]
pub struct KemApi {
    _lib: Library,
    /// The sizes the library claims.
    pub sizes: KemSizes,
    keygen: KemKeygen,
    enc: KemEnc,
    dec: KemDec,
}

/// Result of `kem_enc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncOut {
    /// C status.
    pub rc: i32,
    /// Shared-secret length returned.
    pub ss_len: u64,
    /// Ciphertext length returned.
    pub ct_len: u64,
}

impl KemApi {
    /// Resolve the seven `kem_*` symbols and read the claimed sizes.
    pub fn new(lib: &Library) -> Result<KemApi, DlError> {
        // SAFETY: ICCS API_PKC declarations (spec §3.2): size getters `unsigned long long
        // f(void)`; `kem_keygen(pk, *pk_len, sk, *sk_len)`; `kem_enc(pk, pk_len, ss, *ss_len,
        // ct, *ct_len)`; `kem_dec(sk, sk_len, ct, ct_len, ss, *ss_len)`.
        unsafe {
            let pk: GetLen = lib.func("kem_get_pk_len_bytes")?;
            let sk: GetLen = lib.func("kem_get_sk_len_bytes")?;
            let ss: GetLen = lib.func("kem_get_ss_len_bytes")?;
            let ct: GetLen = lib.func("kem_get_ct_len_bytes")?;
            Ok(KemApi {
                _lib: lib.clone(),
                sizes: KemSizes {
                    pk: pk(),
                    sk: sk(),
                    ct: ct(),
                    ss: ss(),
                },
                keygen: lib.func("kem_keygen")?,
                enc: lib.func("kem_enc")?,
                dec: lib.func("kem_dec")?,
            })
        }
    }

    /// `kem_keygen`.
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

    /// `kem_enc(pk, pk.len(), ss, &ss_len, ct, &ct_len)` (note: ss before ct).
    #[inline]
    pub fn enc(&self, pk: &mut [u8], ss: &mut [u8], ct: &mut [u8]) -> Result<EncOut, DlError> {
        need("ss", ss, self.sizes.ss)?;
        need("ct", ct, self.sizes.ct)?;
        let (mut sl, mut cl) = (self.sizes.ss, self.sizes.ct);
        let rc = (self.enc)(
            pk.as_mut_ptr(),
            ull(pk.len()),
            ss.as_mut_ptr(),
            &mut sl,
            ct.as_mut_ptr(),
            &mut cl,
        );
        Ok(EncOut {
            rc,
            ss_len: sl,
            ct_len: cl,
        })
    }

    /// `kem_dec(sk, sk.len(), ct, ct.len(), ss, &ss_len)`: 0 ok, −1 decapsulation failure.
    /// Returns (status, returned secret length).
    #[inline]
    pub fn dec(&self, sk: &mut [u8], ct: &mut [u8], ss: &mut [u8]) -> Result<(i32, u64), DlError> {
        self.dec_len(sk, ct, ss, self.sizes.ss)
    }

    /// `kem_dec` with the in/out secret length starting at `ss_len_in` (≤ the claimed size;
    /// the KAT harness starts it at the length `kem_enc` returned).
    pub fn dec_len(
        &self,
        sk: &mut [u8],
        ct: &mut [u8],
        ss: &mut [u8],
        ss_len_in: u64,
    ) -> Result<(i32, u64), DlError> {
        need("ss", ss, self.sizes.ss)?;
        let mut sl = ss_len_in.min(self.sizes.ss);
        let rc = (self.dec)(
            sk.as_mut_ptr(),
            ull(sk.len()),
            ct.as_mut_ptr(),
            ull(ct.len()),
            ss.as_mut_ptr(),
            &mut sl,
        );
        Ok((rc, sl))
    }
}
