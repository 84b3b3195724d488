//! The untimed memory pass: after the timed trials (and after the peak RSS was read), one more
//! call of the prepared operation with the stack below the call painted and the allocation
//! interposer counting (`pqperf_ffi::memprobe`). Reported as `PQPERF mem_…` lines:
//! `mem_stack_bytes` (bytes from the calling frame to the deepest byte the call wrote),
//! `mem_stack_region_bytes` (bytes painted), `mem_stack_overflow` (1: the call reached the
//! bottom of the region, its use is at least `mem_stack_bytes`), `mem_heap_peak_bytes` (peak
//! of live requested bytes allocated by the call), `mem_heap_allocations`,
//! `mem_heap_untracked` (allocations the interposer could not follow; the peak is then an upper
//! bound). Without the interposer (the library used in-process) the heap lines are absent. A
//! key-exchange step (`timing_scope per_call_step`) has no memory pass (`mem_pass skipped`).

use super::*;

use pqperf_ffi::memprobe::{HeapCount, HeapHook, StackPaint, StackUse};

/// Stack painted below the calling frame by default (1 MiB).
pub const DEFAULT_STACK_REGION: u64 = 1 << 20;

/// One call of `op` with the stack painted below this frame and the heap counted.
#[inline(never)]
fn measure_call(
    op: &mut Op,
    stats: &mut SigStats,
    region: usize,
    hook: Option<&HeapHook>,
) -> (Result<(), String>, StackUse, Option<HeapCount>) {
    let paint = StackPaint::paint(region);
    if let Some(h) = hook {
        h.begin();
    }
    let r = op.call(stats);
    let heap = hook.map(|h| h.end());
    let used = paint.used();
    (r, used, heap)
}

/// Runs the memory pass and writes its lines; a failure of the call is reported as
/// `mem_error`, never as a failure of the (already complete) timing run.
pub(super) fn memory_pass(p: &mut Prepared, region: u64, o: &mut Out) {
    if p.kex_step.is_some_and(|s| s != Step::Whole) {
        o.line("PQPERF\tmem_pass\tskipped");
        return;
    }
    let hook = HeapHook::this_program();
    let mut stats = SigStats::default();
    let (r, stack, heap) = measure_call(&mut p.op, &mut stats, region as usize, hook.as_ref());
    if let Err(e) = r {
        o.line(format_args!("PQPERF\tmem_error\t{e}"));
        return;
    }
    if !p.op.guards_intact() {
        o.line("PQPERF\tmem_error\tguard bytes overwritten (buffer overflow)");
        return;
    }
    o.line(format_args!("PQPERF\tmem_stack_bytes\t{}", stack.bytes));
    o.line(format_args!(
        "PQPERF\tmem_stack_region_bytes\t{}",
        stack.region
    ));
    o.line(format_args!(
        "PQPERF\tmem_stack_overflow\t{}",
        u8::from(stack.overflow)
    ));
    if let Some(h) = heap {
        o.line(format_args!(
            "PQPERF\tmem_heap_peak_bytes\t{}",
            h.peak_bytes
        ));
        o.line(format_args!(
            "PQPERF\tmem_heap_allocations\t{}",
            h.allocations
        ));
        o.line(format_args!("PQPERF\tmem_heap_untracked\t{}", h.untracked));
    }
}
