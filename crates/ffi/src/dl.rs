//! Typed, safe wrapper around a dlopened candidate library.
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

use std::ffi::{CStr, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libloading::os::unix::{Library as RawLibrary, RTLD_LOCAL, RTLD_NOW};

/// Errors of the dl layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DlError {
    /// `dlopen` failed.
    Open { path: PathBuf, message: String },
    /// A required symbol is missing.
    Symbol { name: String, message: String },
    /// A buffer is smaller than the library's claimed size (or a length does not fit).
    Buffer {
        what: &'static str,
        need: u64,
        got: u64,
    },
    /// The shim's metadata block is missing or malformed.
    Meta(String),
}

impl std::fmt::Display for DlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DlError::Open { path, message } => write!(f, "dlopen {}: {message}", path.display()),
            DlError::Symbol { name, message } => write!(f, "symbol {name}: {message}"),
            DlError::Buffer { what, need, got } => {
                write!(f, "buffer {what}: {got} bytes given, {need} needed")
            }
            DlError::Meta(m) => write!(f, "metadata: {m}"),
        }
    }
}

impl std::error::Error for DlError {}

/// An open candidate library. Cheap to clone (reference counted); API objects keep it open.
#[derive(Clone)]
pub struct Library {
    inner: Arc<LibInner>,
}

struct LibInner {
    raw: RawLibrary,
    path: PathBuf,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Library {
    /// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`. A path without `/` is made `./`-relative so the
    /// system search path is never used.
    pub fn open(path: &Path) -> Result<Library, DlError> {
        let p = if path.components().count() == 1 {
            Path::new(".").join(path)
        } else {
            path.to_path_buf()
        };
        // SAFETY: loading a library runs its ELF constructors. Candidate libraries are built
        // by pqperf from catalogued sources; constructors of such C code are trusted exactly
        // as much as the functions we are about to call. RTLD_NOW resolves every symbol now,
        // so a missing dependency fails here and not in the middle of a timed call.
        let raw = unsafe { RawLibrary::open(Some(&p), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| {
            DlError::Open {
                path: p.clone(),
                message: e.to_string(),
            }
        })?;
        Ok(Library {
            inner: Arc::new(LibInner { raw, path: p }),
        })
    }

    /// Path the library was opened from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// True if the library exports `name`.
    pub fn has_symbol(&self, name: &str) -> bool {
        // SAFETY: we only ask for the address and never dereference or call it.
        unsafe { self.inner.raw.get::<*const ()>(name.as_bytes()) }.is_ok()
    }

    /// Resolve `name` as a value of the function-pointer type `T`.
    ///
    /// # Safety
    /// `T` must be an `extern "C"` function-pointer type matching the C declaration of `name`.
    /// The returned pointer may only be called while `self` (or a clone) is alive; the API
    /// structs below guarantee this by holding a clone next to the pointers.
    unsafe fn func<T: Copy>(&self, name: &str) -> Result<T, DlError> {
        // SAFETY: the caller guarantees that T matches the symbol's real type.
        let sym =
            unsafe { self.inner.raw.get::<T>(name.as_bytes()) }.map_err(|e| DlError::Symbol {
                name: name.to_string(),
                message: e.to_string(),
            })?;
        Ok(*sym)
    }

    /// Like [`Library::func`] but `None` when the symbol is absent.
    ///
    /// # Safety
    /// As for [`Library::func`].
    unsafe fn func_opt<T: Copy>(&self, name: &str) -> Option<T> {
        // SAFETY: forwarded contract.
        unsafe { self.func::<T>(name) }.ok()
    }

    /// The shim's full build-flags string (`ngcc_build_flags`), if exported.
    pub fn build_flags(&self) -> Option<String> {
        // SAFETY: the shim declares `const char *ngcc_build_flags(void)`.
        let f: extern "C" fn() -> *const c_char = unsafe { self.func_opt("ngcc_build_flags") }?;
        let p = f();
        if p.is_null() {
            return None;
        }
        // SAFETY: the shim returns a pointer to a NUL-terminated static string literal.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// The shim's metadata block (`ngcc_meta`, ABI 1), if exported.
    pub fn meta(&self) -> Result<Meta, DlError> {
        // SAFETY: the shim declares `const ngcc_meta_t *ngcc_meta(void)`.
        let f: extern "C" fn() -> *const u8 = unsafe { self.func("ngcc_meta") }?;
        let p = f();
        if p.is_null() {
            return Err(DlError::Meta("ngcc_meta returned NULL".into()));
        }
        // SAFETY: the shim returns a pointer to a static block of at least `struct_size`
        // bytes whose first 16 bytes are the header (magic, abi, type, struct_size).
        let head = unsafe { std::slice::from_raw_parts(p, 16) };
        let word = |i: usize| u32::from_le_bytes(head[i * 4..i * 4 + 4].try_into().unwrap());
        if word(0) != META_MAGIC {
            return Err(DlError::Meta(format!("bad magic {:#x}", word(0))));
        }
        if word(1) != 1 {
            return Err(DlError::Meta(format!("unsupported ABI {}", word(1))));
        }
        let size = word(3) as usize;
        if !(META_COMMON..=META_COMMON + 8 * 16).contains(&size) {
            return Err(DlError::Meta(format!("implausible struct_size {size}")));
        }
        // SAFETY: struct_size was checked to be within the block the shim defines.
        let block = unsafe { std::slice::from_raw_parts(p, size) };
        Meta::parse(block)
    }
}

/// `ngcc_meta` magic: the bytes "NGGC" read as a little-endian u32.
pub const META_MAGIC: u32 = 0x4347_474E;
/// Size of the common metadata header.
pub const META_COMMON: usize = 640;

/// The shim's metadata block (spec §3.7), decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// 1 KEM, 2 SIG, 3 KEX, 4 HASH.
    pub kind: u32,
    pub id: String,
    pub algorithm: String,
    pub instance: String,
    pub variant: String,
    pub source_dir: String,
    pub compiler: String,
    pub build_flags: String,
    /// The type-specific u64 sizes in ABI order (KEM pk, sk, ct, ss; SIG pk, sk, sn; KEX
    /// passes, pk, sk, sta, stb, ss, total_msg; HASH digest_bits, digest_len).
    pub sizes: Vec<u64>,
}

impl Meta {
    fn parse(b: &[u8]) -> Result<Meta, DlError> {
        let word = |i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        let mut off = 16;
        let mut field = |n: usize| {
            let raw = &b[off..off + n];
            off += n;
            let end = raw.iter().position(|&c| c == 0).unwrap_or(n);
            String::from_utf8_lossy(&raw[..end]).into_owned()
        };
        let id = field(16);
        let algorithm = field(64);
        let instance = field(64);
        let variant = field(32);
        let source_dir = field(256);
        let compiler = field(64);
        let build_flags = field(128);
        debug_assert_eq!(off, META_COMMON);
        let sizes = b[META_COMMON..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Ok(Meta {
            kind: word(2),
            id,
            algorithm,
            instance,
            variant,
            source_dir,
            compiler,
            build_flags,
            sizes,
        })
    }
}

/// Convert a buffer length to the C `unsigned long long`.
fn ull(n: usize) -> u64 {
    n as u64
}

/// Check that a buffer holds at least `need` bytes.
fn need(what: &'static str, buf: &[u8], need: u64) -> Result<(), DlError> {
    if (buf.len() as u64) < need {
        Err(DlError::Buffer {
            what,
            need,
            got: buf.len() as u64,
        })
    } else {
        Ok(())
    }
}

type Ull = u64;
type Uc = *mut u8;
type Len = *mut Ull;

// ---------------------------------------------------------------------------------------
// ICCS DRNG (shim)
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// ICCS helpers of a provider library (auxfunc.h, drng.h)
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// ICCS signature
// ---------------------------------------------------------------------------------------

/// Claimed sizes of an ICCS signature instance (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SigSizes {
    pub pk: u64,
    pub sk: u64,
    /// Maximum signature length.
    pub sn: u64,
}

type SigKeygen = extern "C" fn(Uc, Len, Uc, Len) -> c_int;
type SigSign = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Len) -> c_int;
type SigVerify = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Ull) -> c_int;
type GetLen = extern "C" fn() -> Ull;

/// ICCS signature API (`sig_*`).
#[derive(Clone)]
pub struct SigApi {
    _lib: Library,
    pub sizes: SigSizes,
    keygen: SigKeygen,
    sign: SigSign,
    verify: SigVerify,
}

/// Result of a keygen-like call: C status and the two returned lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOut {
    pub rc: i32,
    pub pk_len: u64,
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

// ---------------------------------------------------------------------------------------
// ICCS KEM
// ---------------------------------------------------------------------------------------

/// Claimed sizes of an ICCS KEM instance (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KemSizes {
    pub pk: u64,
    pub sk: u64,
    pub ct: u64,
    pub ss: u64,
}

type KemKeygen = extern "C" fn(Uc, Len, Uc, Len) -> c_int;
type KemEnc = extern "C" fn(Uc, Ull, Uc, Len, Uc, Len) -> c_int;
type KemDec = extern "C" fn(Uc, Ull, Uc, Ull, Uc, Len) -> c_int;

/// ICCS KEM API (`kem_*`).
#[derive(Clone)]
pub struct KemApi {
    _lib: Library,
    pub sizes: KemSizes,
    keygen: KemKeygen,
    enc: KemEnc,
    dec: KemDec,
}

/// Result of `kem_enc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncOut {
    pub rc: i32,
    pub ss_len: u64,
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

// ---------------------------------------------------------------------------------------
// ICCS key exchange
// ---------------------------------------------------------------------------------------

/// Claimed sizes of an ICCS KEX instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KexSizes {
    pub passes: u64,
    pub pk: u64,
    pub sk: u64,
    pub sta: u64,
    pub stb: u64,
    pub ss: u64,
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
    pub rc: i32,
    pub pk_len: u64,
    pub sk_len: u64,
    pub st_len: u64,
}

/// Result of a pass: status (1 finished, 0 not finished, < 0 error), new state length,
/// message length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassOut {
    pub rc: i32,
    pub st_len: u64,
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

// ---------------------------------------------------------------------------------------
// ICCS hash
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// NIST / PQClean namespaced API
// ---------------------------------------------------------------------------------------

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
    pub pk: usize,
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
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<i32, DlError> {
        need("pk", pk, self.sizes.pk as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()))
    }

    /// Detached `crypto_sign_signature(sig, &siglen, m, mlen, sk)`; returns (status, siglen).
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
    pub pk: usize,
    pub sk: usize,
    pub ct: usize,
    pub ss: usize,
}

type NEnc = extern "C" fn(Uc, Uc, *const u8) -> c_int;
type NDec = extern "C" fn(Uc, *const u8, *const u8) -> c_int;

/// PQClean KEM API with namespace `PQCLEAN_<SCHEME>_<IMPL>`.
#[derive(Clone)]
pub struct NistKem {
    _lib: Library,
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
    pub fn keypair(&self, pk: &mut [u8], sk: &mut [u8]) -> Result<i32, DlError> {
        need("pk", pk, self.sizes.pk as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.keypair)(pk.as_mut_ptr(), sk.as_mut_ptr()))
    }

    /// `crypto_kem_enc(ct, ss, pk)`.
    pub fn enc(&self, ct: &mut [u8], ss: &mut [u8], pk: &[u8]) -> Result<i32, DlError> {
        need("ct", ct, self.sizes.ct as u64)?;
        need("ss", ss, self.sizes.ss as u64)?;
        need("pk", pk, self.sizes.pk as u64)?;
        Ok((self.enc)(ct.as_mut_ptr(), ss.as_mut_ptr(), pk.as_ptr()))
    }

    /// `crypto_kem_dec(ss, ct, sk)`.
    pub fn dec(&self, ss: &mut [u8], ct: &[u8], sk: &[u8]) -> Result<i32, DlError> {
        need("ss", ss, self.sizes.ss as u64)?;
        need("ct", ct, self.sizes.ct as u64)?;
        need("sk", sk, self.sizes.sk as u64)?;
        Ok((self.dec)(ss.as_mut_ptr(), ct.as_ptr(), sk.as_ptr()))
    }
}

// ---------------------------------------------------------------------------------------
// Guard zones
// ---------------------------------------------------------------------------------------

/// Guard byte value (as the reference harness).
pub const GUARD_BYTE: u8 = 0xA5;
/// Guard bytes on each side of a buffer.
pub const GUARD_LEN: usize = 64;

/// A heap buffer of `len` usable bytes with [`GUARD_LEN`] bytes of [`GUARD_BYTE`] on each
/// side. Hand [`GuardedBuf::as_mut`] to the C call, then [`GuardedBuf::guards_intact`].
#[derive(Debug, Clone)]
pub struct GuardedBuf {
    raw: Vec<u8>,
    len: usize,
}

impl GuardedBuf {
    /// A zeroed buffer of `len` bytes between two guard zones.
    pub fn new(len: usize) -> GuardedBuf {
        let mut raw = vec![GUARD_BYTE; len + 2 * GUARD_LEN];
        raw[GUARD_LEN..GUARD_LEN + len].fill(0);
        GuardedBuf { raw, len }
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[u8]) -> GuardedBuf {
        let mut b = GuardedBuf::new(data.len());
        b.as_mut_slice().copy_from_slice(data);
        b
    }

    /// Usable length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the usable part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The usable bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.raw[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// The usable bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[GUARD_LEN..GUARD_LEN + self.len]
    }

    /// The first `n` usable bytes, mutable (`n` clamped to the length).
    pub fn prefix_mut(&mut self, n: usize) -> &mut [u8] {
        let n = n.min(self.len);
        &mut self.raw[GUARD_LEN..GUARD_LEN + n]
    }

    /// True if both guard zones still hold only [`GUARD_BYTE`].
    pub fn guards_intact(&self) -> bool {
        self.raw[..GUARD_LEN].iter().all(|&b| b == GUARD_BYTE)
            && self.raw[GUARD_LEN + self.len..]
                .iter()
                .all(|&b| b == GUARD_BYTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_detects_overflow() {
        let mut g = GuardedBuf::new(8);
        assert!(g.guards_intact());
        g.as_mut_slice().fill(1);
        assert!(g.guards_intact());
        g.raw[GUARD_LEN + 8] = 0;
        assert!(!g.guards_intact());
    }

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
