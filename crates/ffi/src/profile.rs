//! Control interface of pqperf's hash/DRNG profiling wrappers (`crates/profile/c/wrap.c`),
//! linked into a profiling copy of an instance library: resolve the `ngcc_hashprof_*`
//! functions with `dlopen`/`dlsym`, and read per-thread involuntary context switches (used to
//! set aside profiled iterations that lost the CPU).
//!
//! Opening the same path that the typed operation API opened returns the same loaded image
//! (glibc reference-counts `dlopen` by file identity), so the counters seen here are those
//! the operation's wrapped calls update.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::Path;

/// One call-shape bucket as the wrapper library reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashprofEntry {
    /// Function family (`drng`, `pseudoXOF`, `pseudohash`, `sm3hash`, `shake128`, …).
    pub func: String,
    /// Input bits of the call shape.
    pub in_bits: u64,
    /// Output bits of the call shape.
    pub out_bits: u64,
    /// Calls accounted.
    pub calls: u64,
    /// Ticks accounted.
    pub ticks: u64,
}

/// C layout of `struct ngcc_hashprof_entry` in wrap.c.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawEntry {
    func: [c_char; 24],
    in_bits: u64,
    out_bits: u64,
    calls: u64,
    ticks: u64,
}

type TickSourceFn = unsafe extern "C" fn() -> *const c_char;
type TicksFn = unsafe extern "C" fn() -> u64;
type EnableFn = unsafe extern "C" fn(c_int);
type ResetFn = unsafe extern "C" fn();
type EntriesFn = unsafe extern "C" fn(*mut RawEntry, usize, *mut u64) -> usize;
type OverheadFn = unsafe extern "C" fn(u64, *mut f64, *mut f64);

/// The wrapper control functions of one loaded profiling library.
pub struct Hashprof {
    handle: *mut c_void,
    tick_source: TickSourceFn,
    ticks: TicksFn,
    enable: EnableFn,
    reset: ResetFn,
    entries: EntriesFn,
    overhead: OverheadFn,
}

fn dlerror_string() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated thread-local string valid until the
    // next dl* call on this thread; it is copied immediately.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlopen error".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

impl Hashprof {
    /// `dlopen` the library (`RTLD_NOW | RTLD_LOCAL`) and resolve the six control functions.
    /// Missing symbols mean the library is not a profiling build.
    pub fn open(path: &Path) -> Result<Hashprof, String> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{}: path contains NUL", path.display()))?;
        // SAFETY: `c` is a valid NUL-terminated path; loading runs the library's
        // constructors, which for harness-built libraries are the compiler's defaults.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!("{}: {}", path.display(), dlerror_string()));
        }
        let sym = |name: &str| -> Result<*mut c_void, String> {
            let n = CString::new(name).expect("static symbol names have no NUL");
            // SAFETY: handle is a live dlopen handle; n is NUL-terminated.
            let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            if p.is_null() {
                Err(format!(
                    "{}: missing {name} (not a profiling build)",
                    path.display()
                ))
            } else {
                Ok(p)
            }
        };
        let resolved = (|| {
            Ok::<_, String>((
                sym("ngcc_hashprof_tick_source")?,
                sym("ngcc_hashprof_ticks")?,
                sym("ngcc_hashprof_enable")?,
                sym("ngcc_hashprof_reset")?,
                sym("ngcc_hashprof_entries")?,
                sym("ngcc_hashprof_overhead")?,
            ))
        })();
        let (a, b, c2, d, e, f) = match resolved {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: handle came from dlopen above and is not used afterwards.
                unsafe { libc::dlclose(handle) };
                return Err(e);
            }
        };
        // SAFETY: the symbols are the functions defined in wrap.c with exactly these C
        // signatures (the struct layout is mirrored by RawEntry).
        unsafe {
            Ok(Hashprof {
                handle,
                tick_source: std::mem::transmute::<*mut c_void, TickSourceFn>(a),
                ticks: std::mem::transmute::<*mut c_void, TicksFn>(b),
                enable: std::mem::transmute::<*mut c_void, EnableFn>(c2),
                reset: std::mem::transmute::<*mut c_void, ResetFn>(d),
                entries: std::mem::transmute::<*mut c_void, EntriesFn>(e),
                overhead: std::mem::transmute::<*mut c_void, OverheadFn>(f),
            })
        }
    }

    /// `rdtsc`, `cntvct_el0` or `clock_gettime_ns`.
    pub fn tick_source(&self) -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string in the library, which
        // stays loaded while self holds its handle.
        unsafe { CStr::from_ptr((self.tick_source)()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Current tick count of the wrappers' tick source.
    pub fn ticks(&self) -> u64 {
        // SAFETY: no arguments, no side effects beyond reading the counter.
        unsafe { (self.ticks)() }
    }

    /// Turn accounting on or off.
    pub fn enable(&self, on: bool) {
        // SAFETY: sets a static flag in the library.
        unsafe { (self.enable)(c_int::from(on)) }
    }

    /// Clear the aggregation table.
    pub fn reset(&self) {
        // SAFETY: clears static tables in the library; no wrapped call is active (the
        // driver is single-threaded and calls this between operations).
        unsafe { (self.reset)() }
    }

    /// Used buckets in order of first occurrence, and the number of calls that found no
    /// free slot.
    pub fn entries(&self) -> (Vec<HashprofEntry>, u64) {
        let empty = RawEntry {
            func: [0; 24],
            in_bits: 0,
            out_bits: 0,
            calls: 0,
            ticks: 0,
        };
        // Few shapes are usual: try a small buffer first, the table's full size if it fills.
        let mut buf = vec![empty; 256];
        let mut overflow = 0u64;
        let mut n = 0usize;
        for cap in [256usize, 8192] {
            buf.resize(cap, empty);
            // SAFETY: buf has room for buf.len() entries; the library writes at most that
            // many and stores the overflow count through a valid pointer.
            n = unsafe { (self.entries)(buf.as_mut_ptr(), buf.len(), &mut overflow) };
            if n < cap {
                break;
            }
        }
        let out = buf[..n.min(buf.len())]
            .iter()
            .map(|r| {
                // SAFETY: wrap.c NUL-terminates `fn` within its 24 bytes.
                let name = unsafe { CStr::from_ptr(r.func.as_ptr()) };
                HashprofEntry {
                    func: name.to_string_lossy().into_owned(),
                    in_bits: r.in_bits,
                    out_bits: r.out_bits,
                    calls: r.calls,
                    ticks: r.ticks,
                }
            })
            .collect();
        (out, overflow)
    }

    /// Wrapper self-measurement over `n` calls of an empty function: (extra ticks per call
    /// seen by the caller, ticks per call charged to the wrapped call itself).
    pub fn overhead(&self, n: u64) -> (f64, f64) {
        let mut outer = 0.0f64;
        let mut inner = 0.0f64;
        // SAFETY: both out-pointers are valid for writes; the function touches only private
        // static state of the library.
        unsafe { (self.overhead)(n, &mut outer, &mut inner) };
        (outer, inner)
    }
}

impl Drop for Hashprof {
    fn drop(&mut self) {
        // SAFETY: handle came from dlopen and is closed once; function pointers are not used
        // after drop.
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}

/// Involuntary context switches of the calling thread so far (`getrusage(RUSAGE_THREAD)`),
/// or `None` where unavailable.
pub fn involuntary_context_switches() -> Option<u64> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: ru points to writable memory of the right size; RUSAGE_THREAD is valid on
    // Linux.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded and filled the struct.
    let ru = unsafe { ru.assume_init() };
    Some(ru.ru_nivcsw as u64)
}
