//! Links the allocation interposer (`c/memhook.c`) into the `pqperf-driver` executable only
//! (never into the library part, which `pqperf-measure` and the `pqperf` binary use), and
//! exports its symbols so that candidate libraries and the C library resolve the allocation
//! functions to it and the driver finds `pqperf_memhook_*` (`pqperf_ffi::memprobe::HeapHook`).

fn main() {
    println!("cargo::rerun-if-changed=c/memhook.c");
    let objs = cc::Build::new()
        .file("c/memhook.c")
        .opt_level(2)
        .warnings(true)
        .compile_intermediates();
    for o in objs {
        println!("cargo::rustc-link-arg-bins={}", o.display());
    }
    for sym in [
        "pqperf_memhook_begin",
        "pqperf_memhook_end",
        "malloc",
        "calloc",
        "realloc",
        "reallocarray",
        "free",
        "posix_memalign",
        "aligned_alloc",
        "memalign",
        "valloc",
        "pvalloc",
    ] {
        println!("cargo::rustc-link-arg-bins=-Wl,--export-dynamic-symbol={sym}");
    }
}
