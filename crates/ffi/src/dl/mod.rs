//! Typed, safe wrapper around a dlopened candidate library: [`Library`] and the metadata
//! block ([`Meta`]) in `library.rs`, one file per API family beside it, re-exported here.
//!
//! A candidate library is one `lib<label>.so` built by `pqperf build`: the candidate's sources,
//! the harness shim and the ICCS provider (DRNG, placeholder primitives) or the NIST DRBG,
//! exporting only the API symbols. This module opens it with `RTLD_NOW | RTLD_LOCAL` (so many
//! libraries, each with its own `sm3hash`/`shake256`, can live in one process), resolves the
//! API of its kind and exposes safe methods taking slices whose lengths are checked against
//! the sizes the library claims.
//!
//! APIs:
//! * ICCS (`api = "iccs"`): [`SigApi`], [`KemApi`], [`KexApi`], [`HashApi`] over the official
//!   symbols (`sig_keygen`, `kem_enc`, `kex_init_a`, `CryptHash`, …) plus the shim's
//!   [`IccsDrng`] (`ngcc_seed` = `init_random_number(&drng_algorithm, …)`, `ngcc_random`).
//! * NIST/PQClean (`api = "nist"`): [`NistSign`], [`NistKem`] over the namespaced symbols
//!   (`PQCLEAN_<SCHEME>_<IMPL>_crypto_sign_keypair`, …), sizes from the catalog (META.yml /
//!   `api.h`), and the shim's [`NistRng`] (`pqperf_nist_seed`, `pqperf_nist_random`).
//!
//! Memory-safety contract. Every call hands the C function pointers to buffers at least as
//! large as the sizes the library *claims* (checked here, [`DlError::Buffer`] otherwise) and
//! sets every in/out length variable to the claimed capacity first. Whether the C code keeps
//! within those claims is outside Rust's control: a misbehaving candidate can corrupt memory
//! like any C code. The KAT gate and the timing driver therefore run candidates in child
//! processes and surround every buffer with guard bytes (see [`GuardedBuf`]), which the caller
//! checks after each call. ICCS inputs are not `const` in C, so input buffers are taken as
//! `&mut [u8]`: a candidate that writes into its inputs does not violate Rust's aliasing rules.

mod guard;
mod iccs_hash;
mod iccs_helpers;
mod iccs_kem;
mod iccs_kex;
mod iccs_sign;
mod library;
mod nist;

pub use guard::*;
pub use iccs_hash::*;
pub use iccs_helpers::*;
pub use iccs_kem::*;
pub use iccs_kex::*;
pub use iccs_sign::*;
pub use library::{DlError, Library, META_COMMON, META_MAGIC, Meta};
pub use nist::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn open_missing_library_is_an_error() {
        let e = Library::open(Path::new("/nonexistent/libx.so")).unwrap_err();
        assert!(matches!(e, DlError::Open { .. }), "{e}");
    }

    #[test]
    fn pass_symbol_names() {
        assert_eq!(kex_pass_symbol(1), "kex_generate_pass1_msg_a");
        assert_eq!(kex_pass_symbol(4), "kex_generate_pass4_msg_b");
    }
}

#[cfg(test)]
mod gcc_tests {
    use super::*;

    /// Build a tiny ICCS signature library with gcc and drive it through the typed API.
    #[test]
    fn iccs_sig_roundtrip_through_dlopen() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path().join("s.c");
        std::fs::write(
            &c,
            r#"
unsigned long long sig_get_pk_len_bytes(void) { return 4; }
unsigned long long sig_get_sk_len_bytes(void) { return 4; }
unsigned long long sig_get_sn_len_bytes(void) { return 8; }
int sig_keygen(unsigned char *pk, unsigned long long *pl, unsigned char *sk, unsigned long long *sl) {
  for (int i = 0; i < 4; i++) { sk[i] = (unsigned char)(i + 1); pk[i] = (unsigned char)(2 * (i + 1)); }
  *pl = 4; *sl = 4; return 0; }
int sig_sign(unsigned char *sk, unsigned long long sl, unsigned char *m, unsigned long long ml,
             unsigned char *sn, unsigned long long *snl) {
  (void)sl; for (int i = 0; i < 8; i++) sn[i] = (unsigned char)(sk[i % 4] ^ (ml ? m[0] : 0));
  *snl = 6; sn[8] = 0xEE; /* one byte past the claimed maximum */ return 0; }
int sig_verify(unsigned char *pk, unsigned long long pl, unsigned char *sn, unsigned long long snl,
               unsigned char *m, unsigned long long ml) {
  (void)pl; (void)ml; return (snl == 6 && sn[0] == (unsigned char)((pk[0] / 2) ^ m[0])) ? 0 : -1; }
"#,
        )
        .unwrap();
        let so = dir.path().join("libs.so");
        let st = std::process::Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&so)
            .arg(&c)
            .status()
            .unwrap();
        assert!(st.success());
        let lib = Library::open(&so).unwrap();
        assert!(lib.has_symbol("sig_sign"));
        assert!(!lib.has_symbol("kem_enc"));
        assert!(KemApi::new(&lib).is_err());
        let sig = SigApi::new(&lib).unwrap();
        assert_eq!(
            sig.sizes,
            SigSizes {
                pk: 4,
                sk: 4,
                sn: 8
            }
        );
        let mut pk = GuardedBuf::new(4);
        let mut sk = GuardedBuf::new(4);
        let k = sig.keygen(pk.as_mut_slice(), sk.as_mut_slice()).unwrap();
        assert_eq!((k.rc, k.pk_len, k.sk_len), (0, 4, 4));
        assert_eq!(sk.as_slice(), &[1, 2, 3, 4]);
        let mut m = GuardedBuf::from_slice(&[7u8; 16]);
        let mut sn = GuardedBuf::new(8);
        let (rc, len) = sig
            .sign(sk.as_mut_slice(), m.as_mut_slice(), sn.as_mut_slice())
            .unwrap();
        assert_eq!((rc, len), (0, 6));
        assert!(
            !sn.guards_intact(),
            "the write past the claimed length must hit the guard"
        );
        assert!(m.guards_intact() && pk.guards_intact());
        assert_eq!(
            sig.verify(pk.as_mut_slice(), sn.prefix_mut(6), m.as_mut_slice()),
            0
        );
        m.as_mut_slice()[0] ^= 0x80;
        assert_eq!(
            sig.verify(pk.as_mut_slice(), sn.prefix_mut(6), m.as_mut_slice()),
            -1
        );
        let mut short = [0u8; 3];
        assert!(matches!(
            sig.keygen(&mut short, sk.as_mut_slice()),
            Err(DlError::Buffer {
                what: "pk",
                need: 4,
                got: 3
            })
        ));
    }
}
