//! Per-operation memory of candidate code (the driver's untimed memory pass): stack high-water
//! mark by painting ([`StackPaint`]) and heap accounting through the allocation interposer that
//! the lean driver executable links (`crates/driver/c/memhook.c`), reached here by symbol
//! lookup in the running program ([`HeapHook`]).
//!
//! Stack: [`StackPaint::paint`] fills `region` bytes of the stack below the caller's frame
//! (starting [`STACK_MARGIN`] bytes below it) with a pattern; after the operation
//! [`StackPaint::used`] finds the deepest byte that no longer holds the pattern and reports the
//! distance from the caller's frame to it. The driver is single-threaded and installs no
//! signal handlers, so nothing but the called code writes there. The region is clamped to the
//! stack size limit; a call that reaches the bottom of the region is reported as overflowing
//! it (its use is then at least the region).

/// Byte written over the painted region.
pub const PATTERN: u8 = 0xA5;
/// Distance kept between the painting frame and the painted region, so that the frames of
/// [`StackPaint::paint`] and [`StackPaint::used`] themselves never touch it.
pub const STACK_MARGIN: usize = 512;
/// Stack kept unpainted below the limit (the C library's own start-up use, the environment).
const LIMIT_RESERVE: usize = 256 * 1024;

/// A painted stack region (addresses, not pointers: it is only read back through
/// [`StackPaint::used`] from the same frame depth).
#[derive(Debug, Clone, Copy)]
pub struct StackPaint {
    /// Address of a local in the painting frame (≈ the caller's stack pointer).
    frame: usize,
    /// Top (exclusive) of the painted region.
    top: usize,
    /// Bottom (inclusive) of the painted region.
    bottom: usize,
}

/// What the operation used of the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackUse {
    /// Bytes from the caller's frame down to the deepest overwritten byte (the region plus
    /// the margin when it overflowed).
    pub bytes: u64,
    /// Bytes painted (after clamping to the stack limit).
    pub region: u64,
    /// The bottom of the region was overwritten: the use is at least `bytes`.
    pub overflow: bool,
}

fn stack_limit() -> Option<usize> {
    let (soft, _) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_STACK).ok()?;
    (soft != nix::sys::resource::RLIM_INFINITY).then_some(soft as usize)
}

impl StackPaint {
    /// Paint `region` bytes below the caller's frame (clamped to the stack size limit minus
    /// 256 KiB). Call [`StackPaint::used`] from the same function after the operation.
    #[inline(never)]
    pub fn paint(region: usize) -> StackPaint {
        let marker = 0u8;
        let frame = std::hint::black_box(&marker) as *const u8 as usize;
        let region = match stack_limit() {
            Some(l) => region.min(l.saturating_sub(LIMIT_RESERVE + STACK_MARGIN)),
            None => region,
        } & !7;
        let top = (frame - STACK_MARGIN) & !7;
        let bottom = top - region;
        let mut a = bottom;
        while a < top {
            // SAFETY: [bottom, top) lies in this thread's stack below the current frame and
            // above the stack limit minus a reserve (clamped above), so the kernel extends
            // the stack mapping on first touch; nothing live is stored there (it is below the
            // stack pointer of this frame), the process is single-threaded and installs no
            // signal handlers, so no other code writes there concurrently. Aligned u64 writes.
            unsafe { std::ptr::write_volatile(a as *mut u64, u64::from_ne_bytes([PATTERN; 8])) };
            a += 8;
        }
        StackPaint { frame, top, bottom }
    }

    /// The stack the code run since [`StackPaint::paint`] used. Call it from the function that
    /// painted, at the same depth.
    #[inline(never)]
    pub fn used(&self) -> StackUse {
        let region = (self.top - self.bottom) as u64;
        let mut a = self.bottom;
        let mut deepest = None;
        while a < self.top {
            // SAFETY: [bottom, top) was mapped and written by `paint` (stack pages are never
            // unmapped while the thread lives) and is still below this frame, which is at the
            // painting depth; aligned u64 reads of plain bytes.
            let w = unsafe { std::ptr::read_volatile(a as *const u64) };
            if w != u64::from_ne_bytes([PATTERN; 8]) {
                let lowest = w
                    .to_ne_bytes()
                    .iter()
                    .position(|&b| b != PATTERN)
                    .unwrap_or(0);
                deepest = Some(a + lowest);
                break;
            }
            a += 8;
        }
        match deepest {
            Some(d) => StackUse {
                bytes: (self.frame - d) as u64,
                region,
                overflow: d < self.bottom + 8,
            },
            // Nothing below the margin was touched.
            None => StackUse {
                bytes: (self.frame - self.top) as u64,
                region,
                overflow: false,
            },
        }
    }
}

/// Heap figures of one operation, as the interposer counted them (C layout shared with
/// `memhook.c`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapCount {
    /// Peak of live bytes (requested sizes) allocated during the operation.
    pub peak_bytes: u64,
    /// Allocations (malloc, calloc, realloc to a new block, the memalign family) made.
    pub allocations: u64,
    /// Bytes still live at the end of the operation.
    pub live_bytes: u64,
    /// Allocations the interposer could not track (its table was full): their frees were not
    /// subtracted, so the peak is an upper bound when this is not 0.
    pub untracked: u64,
}

type BeginFn = unsafe extern "C" fn();
type EndFn = unsafe extern "C" fn(*mut HeapCount);

/// The allocation interposer of the running program (`pqperf_memhook_begin`/`_end`, exported
/// by the lean driver executable), or none in other programs.
pub struct HeapHook {
    begin: BeginFn,
    end: EndFn,
}

impl HeapHook {
    /// Look the interposer up in the running program.
    pub fn this_program() -> Option<HeapHook> {
        let this = libloading::os::unix::Library::this();
        // SAFETY: the symbols, when present, are the interposer's C functions with exactly
        // these signatures (`void pqperf_memhook_begin(void)`, `void pqperf_memhook_end(struct
        // pqperf_heap *)`, see memhook.c); the main program is never unloaded, so the plain
        // function pointers stay valid for the process lifetime.
        unsafe {
            let begin = *this.get::<BeginFn>(b"pqperf_memhook_begin\0").ok()?;
            let end = *this.get::<EndFn>(b"pqperf_memhook_end\0").ok()?;
            Some(HeapHook { begin, end })
        }
    }

    /// Start counting (resets the figures).
    pub fn begin(&self) {
        // SAFETY: no arguments; the C function only resets its own counters and sets a flag.
        unsafe { (self.begin)() }
    }

    /// Stop counting and return the figures since [`HeapHook::begin`].
    pub fn end(&self) -> HeapCount {
        let mut c = HeapCount::default();
        // SAFETY: `c` is a valid, writable `HeapCount` with the C struct's layout (repr(C),
        // four u64), alive for the call; the function writes it and keeps no pointer.
        unsafe { (self.end)(&mut c as *mut HeapCount) };
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn use_stack(n: usize) -> u8 {
        let mut a = [0u8; 16384];
        for (i, b) in a.iter_mut().enumerate().take(n) {
            *b = std::hint::black_box(i as u8 | 1);
        }
        std::hint::black_box(&a)[n - 1]
    }

    #[test]
    fn painting_sees_a_touched_array_and_an_overflow() {
        let p = StackPaint::paint(64 * 1024);
        std::hint::black_box(use_stack(16000));
        let u = p.used();
        assert!(!u.overflow, "{u:?}");
        assert!(u.bytes >= 16000 && u.bytes < 16000 + 4096, "{u:?}");
        let p = StackPaint::paint(4096);
        std::hint::black_box(use_stack(16000));
        let u = p.used();
        assert!(u.overflow, "{u:?}");
        assert_eq!(u.region, 4096);
    }

    #[test]
    fn no_hook_in_a_test_binary() {
        assert!(HeapHook::this_program().is_none());
    }
}
