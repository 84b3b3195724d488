//! The process allocator of the `pqperf` binary: mimalloc for pqperf's own work (the evidence
//! model is millions of small strings and maps; with glibc malloc a quarter of `pqperf site`
//! went to malloc/free), the C library's malloc in the child processes of this binary that run
//! candidate code (KAT child, hash profiler), so that their baseline and peak RSS carry no
//! second allocator (mimalloc there added ≈ 0.6 MB to every baseline RSS). The timing driver
//! is the separate lean executable `pqperf-driver`, which does not link this crate (linking
//! mimalloc at all runs its process initialisation at start-up).
//!
//! This crate is part of the Rust→C seam (like `pqperf-ffi`): its `unsafe` blocks forward the
//! `GlobalAlloc` contract to the C allocators, each with its invariant.
//!
//! The binary installs [`PqAlloc`] as `#[global_allocator]` and calls [`use_mimalloc`] once
//! it knows it is not such a child. Blocks allocated before that (argument parsing) come from
//! the C library and are given back to it: every free asks mimalloc whether it owns the block.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use mimalloc::MiMalloc;

/// Set once, never cleared: from then on new blocks come from mimalloc.
static MIMALLOC: AtomicBool = AtomicBool::new(false);

/// Allocate from mimalloc from now on (see the module docs). Idempotent.
pub fn use_mimalloc() {
    MIMALLOC.store(true, Ordering::Relaxed);
}

/// True once [`use_mimalloc`] has been called.
pub fn mimalloc_in_use() -> bool {
    MIMALLOC.load(Ordering::Relaxed)
}

/// Global allocator: C library malloc until [`use_mimalloc`], mimalloc after; every block is
/// freed or resized by the allocator that made it.
pub struct PqAlloc;

/// Did mimalloc make the block at `ptr`?
fn from_mimalloc(ptr: *mut u8) -> bool {
    // The flag only goes false → true, so while it is false no block can be mimalloc's.
    if !MIMALLOC.load(Ordering::Relaxed) {
        return false;
    }
    // SAFETY: mi_is_in_heap_region only looks `ptr` up in mimalloc's page map and accepts any
    // pointer value, including ones mimalloc never handed out (it then returns false).
    unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast()) }
}

// SAFETY: each method forwards the caller's obligations (valid layout; `ptr` from this
// allocator with that layout) unchanged to System or MiMalloc, both sound GlobalAllocs.
// Blocks are routed back by `from_mimalloc`, so a block is only ever freed or resized by the
// allocator that allocated it.
unsafe impl GlobalAlloc for PqAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl comment.
        unsafe {
            if mimalloc_in_use() {
                MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl comment.
        unsafe {
            if mimalloc_in_use() {
                MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: see the impl comment.
        unsafe {
            if from_mimalloc(ptr) {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl comment.
        unsafe {
            if from_mimalloc(ptr) {
                MiMalloc.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_go_back_to_the_allocator_that_made_them() {
        let layout = Layout::from_size_align(64, 16).unwrap();
        // SAFETY: valid non-zero layout; each block is freed once with the same layout.
        unsafe {
            let sys = System.alloc(layout);
            let mi = MiMalloc.alloc(layout);
            assert!(!sys.is_null() && !mi.is_null());
            use_mimalloc();
            assert!(
                !from_mimalloc(sys),
                "a C library block taken for mimalloc's"
            );
            assert!(from_mimalloc(mi), "a mimalloc block not recognised");
            // Resizing keeps the owner; freeing goes back to it.
            let sys2 = PqAlloc.realloc(sys, layout, 4096);
            assert!(!from_mimalloc(sys2));
            PqAlloc.dealloc(sys2, Layout::from_size_align(4096, 16).unwrap());
            PqAlloc.dealloc(mi, layout);
            let fresh = PqAlloc.alloc(layout);
            assert!(from_mimalloc(fresh));
            PqAlloc.dealloc(fresh, layout);
        }
    }
}
