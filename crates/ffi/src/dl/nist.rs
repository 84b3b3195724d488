//! NIST/PQClean namespaced API: the shim's DRBG ([`NistRng`]), signatures ([`NistSign`],
//! with or without the ML-DSA context API) and KEMs ([`NistKem`]).

use std::ffi::c_int;

use super::library::*;

/// The deterministic generator behind the library's `PQCLEAN_randombytes` (shim).
#[derive(Clone)]
pub struct NistRng {
    _lib: Library,
    seed: extern "C" fn(*const u8) -> c_int,
    random: extern "C" fn(Uc, usize) -> c_int,
}

impl NistRng {
    /// Resolve the shim's `pqperf_nist_seed(const uint8_t entropy[48])` and
    /// `pqperf_nist_random(uint8_t *out, size_t n)`.
    pub fn new(lib: &Library) -> Result<NistRng, DlError> {
        // SAFETY: declarations of the pqperf shim for `nist` libraries (crates/build shim.c).
        unsafe {
            Ok(NistRng {
                _lib: lib.clone(),
                seed: lib.func("pqperf_nist_seed")?,
                random: lib.func("pqperf_nist_random")?,
            })
        }
    }

    /// (Re)initialise the generator with 48 bytes of entropy (no personalisation), as
    /// `nist_kat_init(entropy, NULL, 256)` / `hqc_kat_init` do.
    pub fn seed(&self, entropy: &[u8; 48]) -> i32 {
        (self.seed)(entropy.as_ptr())
    }

    /// Draw `out.len()` bytes (`randombytes(out, n)`).
    pub fn random(&self, out: &mut [u8]) -> i32 {
        (self.random)(out.as_mut_ptr(), out.len())
    }
}

/// Sizes of a NIST signature scheme (`api.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NistSignSizes {
    /// `CRYPTO_PUBLICKEYBYTES`.
    pub pk: usize,
    /// `CRYPTO_SECRETKEYBYTES`.
    pub sk: usize,
    /// `CRYPTO_BYTES`: maximum signature length.
    pub sig: usize,
}

type NKeypair = extern "C" fn(Uc, Uc) -> c_int;
type NSignature = extern "C" fn(Uc, *mut usize, *const u8, usize, *const u8) -> c_int;
type NVerify = extern "C" fn(*const u8, usize, *const u8, usize, *const u8) -> c_int;
type NSign = extern "C" fn(Uc, *mut usize, *const u8, usize, *const u8) -> c_int;
type NOpen = extern "C" fn(Uc, *mut usize, *const u8, usize, *const u8) -> c_int;
type NSignatureCtx =
    extern "C" fn(Uc, *mut usize, *const u8, usize, *const u8, usize, *const u8) -> c_int;
type NVerifyCtx =
    extern "C" fn(*const u8, usize, *const u8, usize, *const u8, usize, *const u8) -> c_int;

#[derive(Clone, Copy)]
enum SignFns {
    Plain {
        signature: NSignature,
        verify: NVerify,
        sign: NSign,
        open: NOpen,
    },
    Ctx {
        signature: NSignatureCtx,
        verify: NVerifyCtx,
        sign: NSignatureCtx,
        open: NVerifyCtxOpen,
    },
}

type NVerifyCtxOpen =
    extern "C" fn(Uc, *mut usize, *const u8, usize, *const u8, usize, *const u8) -> c_int;

/// PQClean signature API with namespace `PQCLEAN_<SCHEME>_<IMPL>`. ML-DSA exports only the
/// `_ctx` functions; they are called with an empty context.
#[derive(Clone)]
pub struct NistSign {
    _lib: Library,
    /// The sizes of `api.h`.
    pub sizes: NistSignSizes,
    keypair: NKeypair,
    fns: SignFns,
}

impl NistSign {
    /// Resolve `<ns>_crypto_sign_keypair`, `_signature`, `_verify`, `crypto_sign`, `_open`
    /// (or their `_ctx` forms when `ctx`).
    pub fn new(
        lib: &Library,
        namespace: &str,
        sizes: NistSignSizes,
        ctx: bool,
    ) -> Result<NistSign, DlError> {
        let n = |s: &str| format!("{namespace}_{s}");
        // SAFETY: PQClean api.h declarations: `int crypto_sign_keypair(uint8_t *pk, uint8_t
        // *sk)`; `int crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m,
        // size_t mlen, const uint8_t *sk)`; `int crypto_sign_verify(const uint8_t *sig, size_t
        // siglen, const uint8_t *m, size_t mlen, const uint8_t *pk)`; `int crypto_sign(uint8_t
        // *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk)`; `int
        // crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const
        // uint8_t *pk)`; the `_ctx` forms insert `(const uint8_t *ctx, size_t ctxlen)` before
        // the key.
        unsafe {
            let keypair = lib.func(&n("crypto_sign_keypair"))?;
            let fns = if ctx {
                SignFns::Ctx {
                    signature: lib.func(&n("crypto_sign_signature_ctx"))?,
                    verify: lib.func(&n("crypto_sign_verify_ctx"))?,
                    sign: lib.func(&n("crypto_sign_ctx"))?,
                    open: lib.func(&n("crypto_sign_open_ctx"))?,
                }
            } else {
                SignFns::Plain {
                    signature: lib.func(&n("crypto_sign_signature"))?,
                    verify: lib.func(&n("crypto_sign_verify"))?,
                    sign: lib.func(&n("crypto_sign"))?,
                    open: lib.func(&n("crypto_sign_open"))?,
                }
            };
            Ok(NistSign {
                _lib: lib.clone(),
                sizes,
                keypair,
                fns,
            })
        }
    }

    /// `crypto_sign_keypair(pk, sk)`.
    #[inline]
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<i32, DlError> {
        need("pk", pk, self.sizes.pk as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()))
    }

    /// Detached `crypto_sign_signature(sig, &siglen, m, mlen, sk)`; returns (status, siglen).
    #[inline]
    pub fn signature(&self, sig: &mut [u8], m: &[u8], sk: &[u8]) -> Result<(i32, usize), DlError> {
        need("sig", sig, self.sizes.sig as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        let mut len = self.sizes.sig;
        let rc = match self.fns {
            SignFns::Plain { signature, .. } => {
                signature(sig.as_mut_ptr(), &mut len, m.as_ptr(), m.len(), sk.as_ptr())
            }
            SignFns::Ctx { signature, .. } => signature(
                sig.as_mut_ptr(),
                &mut len,
                m.as_ptr(),
                m.len(),
                std::ptr::null(),
                0,
                sk.as_ptr(),
            ),
        };
        Ok((rc, len))
    }

    /// Detached `crypto_sign_verify(sig, siglen, m, mlen, pk)`: 0 valid.
    #[inline]
    pub fn verify(&self, sig: &[u8], m: &[u8], pk: &[u8]) -> Result<i32, DlError> {
        need("pk", pk, self.sizes.pk as u64)?;
        Ok(match self.fns {
            SignFns::Plain { verify, .. } => {
                verify(sig.as_ptr(), sig.len(), m.as_ptr(), m.len(), pk.as_ptr())
            }
            SignFns::Ctx { verify, .. } => verify(
                sig.as_ptr(),
                sig.len(),
                m.as_ptr(),
                m.len(),
                std::ptr::null(),
                0,
                pk.as_ptr(),
            ),
        })
    }

    /// Attached `crypto_sign(sm, &smlen, m, mlen, sk)`; `sm` holds `sig + m.len()` bytes.
    /// Returns (status, smlen).
    #[inline]
    pub fn sign(&self, sm: &mut [u8], m: &[u8], sk: &[u8]) -> Result<(i32, usize), DlError> {
        need("sm", sm, (self.sizes.sig + m.len()) as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        let mut len = 0usize;
        let rc = match self.fns {
            SignFns::Plain { sign, .. } => {
                sign(sm.as_mut_ptr(), &mut len, m.as_ptr(), m.len(), sk.as_ptr())
            }
            SignFns::Ctx { sign, .. } => sign(
                sm.as_mut_ptr(),
                &mut len,
                m.as_ptr(),
                m.len(),
                std::ptr::null(),
                0,
                sk.as_ptr(),
            ),
        };
        Ok((rc, len))
    }

    /// Attached `crypto_sign_open(m, &mlen, sm, smlen, pk)`; `m` holds `sm.len()` bytes.
    /// Returns (status, mlen).
    pub fn open(&self, m: &mut [u8], sm: &[u8], pk: &[u8]) -> Result<(i32, usize), DlError> {
        need("m", m, sm.len() as u64)?;
        need("pk", pk, self.sizes.pk as u64)?;
        let mut len = 0usize;
        let rc = match self.fns {
            SignFns::Plain { open, .. } => {
                open(m.as_mut_ptr(), &mut len, sm.as_ptr(), sm.len(), pk.as_ptr())
            }
            SignFns::Ctx { open, .. } => open(
                m.as_mut_ptr(),
                &mut len,
                sm.as_ptr(),
                sm.len(),
                std::ptr::null(),
                0,
                pk.as_ptr(),
            ),
        };
        Ok((rc, len))
    }
}

/// Sizes of a NIST KEM (`api.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NistKemSizes {
    /// `CRYPTO_PUBLICKEYBYTES`.
    pub pk: usize,
    /// `CRYPTO_SECRETKEYBYTES`.
    pub sk: usize,
    /// `CRYPTO_CIPHERTEXTBYTES`.
    pub ct: usize,
    /// `CRYPTO_BYTES`: shared-secret length.
    pub ss: usize,
}

type NEnc = extern "C" fn(Uc, Uc, *const u8) -> c_int;
type NDec = extern "C" fn(Uc, *const u8, *const u8) -> c_int;

/// PQClean KEM API with namespace `PQCLEAN_<SCHEME>_<IMPL>`.
#[derive(Clone)]
pub struct NistKem {
    _lib: Library,
    /// The sizes of `api.h`.
    pub sizes: NistKemSizes,
    keypair: NKeypair,
    enc: NEnc,
    dec: NDec,
}

impl NistKem {
    /// Resolve `<ns>_crypto_kem_keypair`, `_enc`, `_dec`.
    pub fn new(lib: &Library, namespace: &str, sizes: NistKemSizes) -> Result<NistKem, DlError> {
        let n = |s: &str| format!("{namespace}_{s}");
        // SAFETY: PQClean api.h: `int crypto_kem_keypair(uint8_t *pk, uint8_t *sk)`, `int
        // crypto_kem_enc(uint8_t *ct, uint8_t *ss, const uint8_t *pk)`, `int
        // crypto_kem_dec(uint8_t *ss, const uint8_t *ct, const uint8_t *sk)`.
        unsafe {
            Ok(NistKem {
                _lib: lib.clone(),
                sizes,
                keypair: lib.func(&n("crypto_kem_keypair"))?,
                enc: lib.func(&n("crypto_kem_enc"))?,
                dec: lib.func(&n("crypto_kem_dec"))?,
            })
        }
    }

    /// `crypto_kem_keypair(pk, sk)`.
    #[inline]
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<i32, DlError> {
        need("pk", pk, self.sizes.pk as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()))
    }

    /// `crypto_kem_enc(ct, ss, pk)`.
    #[inline]
    pub fn enc(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<i32, DlError> {
        need("ct", ct, self.sizes.ct as u64)?;
        need("ss", ss, self.sizes.ss as u64)?;
        need("pk", pk, self.sizes.pk as u64)?;
        Ok((self.enc)(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr()))
    }

    /// `crypto_kem_dec(ss, ct, sk)`.
    #[inline]
    pub fn dec(&self, ss: &mut [u8], ct: &[u8], sk: &[u8]) -> Result<i32, DlError> {
        need("ss", ss, self.sizes.ss as u64)?;
        need("ct", ct, self.sizes.ct as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.dec)(ss.as_mut_ptr(), ct.as_ptr(), sk.as_ptr()))
    }
}
