//! Links the allocation interposer (`c/memhook.c`) into the `pqperf-driver` executable only
//! (never into the library part, which `pqperf-measure` and the `pqperf` binary use), and
//! exports its symbols so that candidate libraries and the C library resolve the allocation
//! functions to it and the driver finds `pqperf_memhook_*` (`pqperf_ffi::memprobe::HeapHook`).
//! Where the linker is lld, the functions the driver runs (`hot-symbols.txt`, see
//! `scripts/driver-hot-symbols.sh`) are laid out first, so that they share a few of the
//! kernel's 64 KiB fault-around windows: ≈ 0.2 MB less baseline RSS.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Does this rustc/linker pair accept `--symbol-ordering-file` (lld)? Probed by linking an
/// empty program with the same rustc, target and flags.
fn linker_orders_symbols(order: &std::path::Path) -> bool {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let src = out.join("order_probe.rs");
    if std::fs::write(&src, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut c = Command::new(rustc);
    c.arg(&src)
        .arg("-o")
        .arg(out.join("order_probe"))
        .arg("-C")
        .arg(format!(
            "link-arg=-Wl,--symbol-ordering-file={}",
            order.display()
        ))
        .arg("-C")
        .arg("link-arg=-Wl,--no-warn-symbol-ordering")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Ok(t) = std::env::var("TARGET") {
        c.args(["--target", &t]);
    }
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        c.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    c.status().is_ok_and(|s| s.success())
}

fn main() {
    println!("cargo::rerun-if-changed=c/memhook.c");
    println!("cargo::rerun-if-changed=c/lean.c");
    println!("cargo::rerun-if-changed=hot-symbols.txt");
    let order = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("hot-symbols.txt");
    if order.is_file() && linker_orders_symbols(&order) {
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    let objs = cc::Build::new()
        .file("c/memhook.c")
        .file("c/lean.c")
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
