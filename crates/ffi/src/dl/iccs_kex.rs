//! ICCS key-exchange API ([`KexApi`]: `kex_init_a`/`kex_init_b`, up to
//! [`KEX_MAX_PASS`] passes, `kex_derive_a`/`kex_derive_b`, the size getters).

use std::ffi::c_int;

use super::library::*;

/// Claimed sizes of an ICCS KEX instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KexSizes {
    /// Message passes of the exchange.
    pub passes: u64,
    /// Public key.
    pub pk: u64,
    /// Secret key.
    pub sk: u64,
    /// State of party A.
    pub sta: u64,
    /// State of party B.
    pub stb: u64,
    /// Shared secret.
    pub ss: u64,
    /// All messages of one exchange together.
    pub total_msg: u64,
}

type KexInit = extern "C" fn(Uc, Len, Uc, Len, Uc, Len) -> c_int;
type KexPass1 = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Len, Uc, Len) -> c_int;
type KexPassN = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Ull, Uc, Len, Uc, Len) -> c_int;
type KexDerive = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Ull, Uc, Ull, Uc, Len) -> c_int;

/// Highest pass number looked up.
pub const KEX_MAX_PASS: usize = 16;

/// ICCS key-exchange API (`kex_*`).
#[derive(Clone)]
pub struct KexApi {
    _lib: Library,
    /// The sizes the library claims.
    pub sizes: KexSizes,
    init_a: KexInit,
    init_b: KexInit,
    pass1: KexPass1,
    /// `passes[k]` = `kex_generate_pass<k>_msg_<a|b>` for k = 2..=16 (index 0, 1 unused).
    passes: [Option<KexPassN>; KEX_MAX_PASS + 1],
    derive_a: KexDerive,
    derive_b: KexDerive,
}

/// Result of `kex_init_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOut {
    /// C status.
    pub rc: i32,
    /// Public-key length returned.
    pub pk_len: u64,
    /// Secret-key length returned.
    pub sk_len: u64,
    /// State length returned.
    pub st_len: u64,
}

/// Result of a pass: status (1 finished, 0 not finished, < 0 error), new state length,
/// message length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassOut {
    /// C status (1 finished, 0 not finished, < 0 error).
    pub rc: i32,
    /// New state length.
    pub st_len: u64,
    /// Message length.
    pub msg_len: u64,
}

/// Name of pass k's function (`kex_generate_pass3_msg_a`).
pub fn kex_pass_symbol(k: usize) -> String {
    format!(
        "kex_generate_pass{k}_msg_{}",
        if k % 2 == 1 { 'a' } else { 'b' }
    )
}

impl KexApi {
    /// Resolve the KEX symbols; passes 2…16 are optional.
    pub fn new(lib: &Library) -> Result<KexApi, DlError> {
        // SAFETY: ICCS API_PKC declarations (spec §3.4): getters `unsigned long long f(void)`
        // (`kex_get_passes_num` included); `kex_init_a(pk, *pk_len, sk, *sk_len, st,
        // *st_len)`; pass 1 `(sk, sk_len, peer_pk, peer_pk_len, st, *st_len, m, *m_len)`;
        // pass k ≥ 2 `(sk, sk_len, peer_pk, peer_pk_len, m_in, m_in_len, st, *st_len, m_out,
        // *m_out_len)`; derive `(sk, sk_len, peer_pk, peer_pk_len, m, m_len, st, st_len, ss,
        // *ss_len)`.
        unsafe {
            let g = |n: &str| -> Result<u64, DlError> {
                let f: GetLen = lib.func(n)?;
                Ok(f())
            };
            let sizes = KexSizes {
                passes: g("kex_get_passes_num")?,
                pk: g("kex_get_pk_len_bytes")?,
                sk: g("kex_get_sk_len_bytes")?,
                sta: g("kex_get_sta_len_bytes")?,
                stb: g("kex_get_stb_len_bytes")?,
                ss: g("kex_get_ss_len_bytes")?,
                total_msg: g("kex_get_total_msg_len_bytes")?,
            };
            let mut passes = [None; KEX_MAX_PASS + 1];
            for (k, slot) in passes.iter_mut().enumerate().skip(2) {
                *slot = lib.func_opt::<KexPassN>(&kex_pass_symbol(k));
            }
            Ok(KexApi {
                _lib: lib.clone(),
                sizes,
                init_a: lib.func("kex_init_a")?,
                init_b: lib.func("kex_init_b")?,
                pass1: lib.func("kex_generate_pass1_msg_a")?,
                passes,
                derive_a: lib.func("kex_derive_ss_a")?,
                derive_b: lib.func("kex_derive_ss_b")?,
            })
        }
    }

    /// True if pass `k` (1…16) is exported.
    pub fn has_pass(&self, k: usize) -> bool {
        k == 1 || ((2..=KEX_MAX_PASS).contains(&k) && self.passes[k].is_some())
    }

    fn init(
        &self,
        f: KexInit,
        st_claim: u64,
        pk: &mut [u8],
        sk: &mut [u8],
        st: &mut [u8],
    ) -> Result<InitOut, DlError> {
        need("pk", pk, self.sizes.pk)?;
        need("sk", sk, self.sizes.sk)?;
        need("st", st, st_claim)?;
        let (mut pl, mut sl, mut tl) = (self.sizes.pk, self.sizes.sk, st_claim);
        let rc = f(
            pk.as_mut_ptr(),
            &mut pl,
            sk.as_mut_ptr(),
            &mut sl,
            st.as_mut_ptr(),
            &mut tl,
        );
        Ok(InitOut {
            rc,
            pk_len: pl,
            sk_len: sl,
            st_len: tl,
        })
    }

    /// `kex_init_a(pka, &len, ska, &len, sta, &len)`.
    pub fn init_a(&self, pk: &mut [u8], sk: &mut [u8], st: &mut [u8]) -> Result<InitOut, DlError> {
        self.init(self.init_a, self.sizes.sta, pk, sk, st)
    }

    /// `kex_init_b(pkb, &len, skb, &len, stb, &len)`.
    pub fn init_b(&self, pk: &mut [u8], sk: &mut [u8], st: &mut [u8]) -> Result<InitOut, DlError> {
        self.init(self.init_b, self.sizes.stb, pk, sk, st)
    }

    /// Pass `k` (odd: A, even: B). `sk`/`peer_pk` are the own long-term secret key and the
    /// peer's public key (possibly empty), `m_in` the previous message (ignored for k = 1),
    /// `st` the own state buffer (claimed max size) whose current length is `st_len` on
    /// input, `m_out` a buffer of `total_msg` bytes. Returns `None` if pass k is not exported.
    #[allow(clippy::too_many_arguments)]
    pub fn pass(
        &self,
        k: usize,
        sk: &mut [u8],
        peer_pk: &mut [u8],
        m_in: &mut [u8],
        st: &mut [u8],
        st_len: u64,
        m_out: &mut [u8],
    ) -> Result<Option<PassOut>, DlError> {
        let st_claim = if k % 2 == 1 {
            self.sizes.sta
        } else {
            self.sizes.stb
        };
        need("st", st, st_claim)?;
        need("m_out", m_out, self.sizes.total_msg)?;
        if st_len > st.len() as u64 {
            return Err(DlError::Buffer {
                what: "st_len",
                need: st_len,
                got: st.len() as u64,
            });
        }
        let mut tl = st_len;
        // Message lengths start at 0 (official KAT_KEX driver; candidates must write them).
        let mut ml = 0;
        let rc = if k == 1 {
            (self.pass1)(
                sk.as_mut_ptr(),
                ull(sk.len()),
                peer_pk.as_mut_ptr(),
                ull(peer_pk.len()),
                st.as_mut_ptr(),
                &mut tl,
                m_out.as_mut_ptr(),
                &mut ml,
            )
        } else {
            let Some(f) = self.passes.get(k).copied().flatten() else {
                return Ok(None);
            };
            f(
                sk.as_mut_ptr(),
                ull(sk.len()),
                peer_pk.as_mut_ptr(),
                ull(peer_pk.len()),
                m_in.as_mut_ptr(),
                ull(m_in.len()),
                st.as_mut_ptr(),
                &mut tl,
                m_out.as_mut_ptr(),
                &mut ml,
            )
        };
        Ok(Some(PassOut {
            rc,
            st_len: tl,
            msg_len: ml,
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn derive(
        &self,
        f: KexDerive,
        sk: &mut [u8],
        peer_pk: &mut [u8],
        m: Option<&mut [u8]>,
        st: &mut [u8],
        ss: &mut [u8],
    ) -> Result<(i32, u64), DlError> {
        need("ss", ss, self.sizes.ss)?;
        let mut sl = self.sizes.ss;
        let (mp, ml) = match m {
            Some(m) => (m.as_mut_ptr(), ull(m.len())),
            None => (std::ptr::null_mut(), 0),
        };
        let rc = f(
            sk.as_mut_ptr(),
            ull(sk.len()),
            peer_pk.as_mut_ptr(),
            ull(peer_pk.len()),
            mp,
            ml,
            st.as_mut_ptr(),
            ull(st.len()),
            ss.as_mut_ptr(),
            &mut sl,
        );
        Ok((rc, sl))
    }

    /// `kex_derive_ss_a(ska, pkb, mb or NULL/0, sta, sta_len, ssa, &len)`; `st` is the state
    /// slice of its current length. Returns (status, secret length).
    pub fn derive_a(
        &self,
        sk: &mut [u8],
        peer_pk: &mut [u8],
        last_b: Option<&mut [u8]>,
        st: &mut [u8],
        ss: &mut [u8],
    ) -> Result<(i32, u64), DlError> {
        self.derive(self.derive_a, sk, peer_pk, last_b, st, ss)
    }

    /// `kex_derive_ss_b(skb, pka, ma, stb, stb_len, ssb, &len)`.
    pub fn derive_b(
        &self,
        sk: &mut [u8],
        peer_pk: &mut [u8],
        last_a: Option<&mut [u8]>,
        st: &mut [u8],
        ss: &mut [u8],
    ) -> Result<(i32, u64), DlError> {
        self.derive(self.derive_b, sk, peer_pk, last_a, st, ss)
    }
}
