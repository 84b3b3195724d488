//! `cargo bench -p pqperf-iccs-capi`: builds `benches/c/artifact_bench.c` with gcc -O2 against
//! the artifact written by `write_provider` and runs it, pinned to the last CPU with
//! `taskset` when available. The C program reads `rdtsc` itself (x86-64), so the figures are
//! TSC ticks per byte of the artifact exactly as candidate libraries call it.

use std::process::Command;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let p = pqperf_iccs_capi::write_provider(&dir.path().join("prov")).expect("provider");
    let exe = dir.path().join("artifact_bench");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/c/artifact_bench.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let st = Command::new(&cc)
        .args(["-O2", "-std=gnu11"])
        .arg(format!("-I{}", p.include_dir.display()))
        .arg(&src)
        .arg(&p.static_lib)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run the C compiler");
    assert!(st.success(), "compiling {}", src.display());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pinned = Command::new("taskset")
        .arg("-c")
        .arg((cpus - 1).to_string())
        .arg(&exe)
        .status();
    match pinned {
        Ok(s) if s.success() => {}
        _ => {
            let s = Command::new(&exe).status().expect("run the bench");
            assert!(s.success());
        }
    }
}
