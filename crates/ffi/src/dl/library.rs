//! The opened library ([`Library`]: `dlopen` with `RTLD_NOW | RTLD_LOCAL`, symbol lookup), its
//! metadata block ([`Meta`]), the errors of the dl layer and the C types the API files share.

use std::ffi::{CStr, c_char};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libloading::os::unix::{Library as RawLibrary, RTLD_LOCAL, RTLD_NOW};

/// Errors of the dl layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DlError {
    /// `dlopen` failed.
    Open {
        /// The library file.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// A required symbol is missing.
    Symbol {
        /// The symbol.
        name: String,
        /// The loader's message.
        message: String,
    },
    /// A buffer is smaller than the library's claimed size (or a length does not fit).
    Buffer {
        /// Which buffer.
        what: &'static str,
        /// Bytes needed.
        need: u64,
        /// Bytes given.
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
    pub(super) unsafe fn func<T: Copy>(&self, name: &str) -> Result<T, DlError> {
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
    pub(super) unsafe fn func_opt<T: Copy>(&self, name: &str) -> Option<T> {
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
    /// Candidate id (`sign-02`).
    pub id: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Instance (parameter set) name.
    pub instance: String,
    /// Implementation variant (`reference`, `optimized`, …).
    pub variant: String,
    /// Source folder the library was built from.
    pub source_dir: String,
    /// Compiler that built it.
    pub compiler: String,
    /// Flags it was built with.
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
pub(super) fn ull(n: usize) -> u64 {
    n as u64
}

/// Check that a buffer holds at least `need` bytes.
#[inline]
pub(super) fn need(what: &'static str, buf: &[u8], need: u64) -> Result<(), DlError> {
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

pub(super) type Ull = u64;
pub(super) type Uc = *mut u8;
pub(super) type Len = *mut Ull;
pub(super) type GetLen = extern "C" fn() -> Ull;
