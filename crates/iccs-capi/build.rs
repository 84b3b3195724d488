//! Builds the C ABI artifact `libpqperf_iccs.a` into `OUT_DIR`.
//!
//! Each archive member is one small `#![no_std]` crate under `artifact/`, compiled by `$RUSTC`
//! with `--crate-type lib --emit obj -C panic=abort` (no Rust runtime, no core library code
//! linked: the sources are written to be panic-free, so the only undefined symbols are a few
//! libc functions). The members `#[path]`-include the primitive modules of `crates/iccs/src`,
//! so the C symbols and the Rust API run the same code. One member per group of C symbols
//! keeps a candidate that defines e.g. its own `randombytes` or `drng_algorithm` linkable:
//! the linker only pulls members whose symbols are still undefined.
//!
//! Compiling this way (rather than as a cargo `staticlib` crate type) keeps `cargo test`
//! from rebuilding the artifact with `panic=unwind` and the test harness.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Archive members, in archive order.
const MEMBERS: &[&str] = &[
    "iccs_aux",
    "iccs_drng",
    "iccs_drng_ctx",
    "nist_rng",
    "hqc_rng",
    "pqclean_rng",
    "rng_mode",
];

/// Codegen options of every member (`-C <opt>`).
const CODEGEN: &[&str] = &[
    "opt-level=2",
    "panic=abort",
    "overflow-checks=off",
    "debug-assertions=off",
    "debuginfo=0",
    "codegen-units=1",
    "relocation-model=pic",
];

/// Primitive sources shared with `pqperf-iccs`.
const SHARED: &[&str] = &[
    "sm3.rs",
    "auxfunc.rs",
    "drng.rs",
    "soft_aes.rs",
    "ctr_drbg.rs",
    "keccak.rs",
    "shake_prng.rs",
];

fn run(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    if !out.status.success() {
        panic!(
            "{shown} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let target = env::var("TARGET").expect("TARGET");
    let ar = env::var("AR").unwrap_or_else(|_| "ar".into());
    let shared_dir = manifest.join("../iccs/src");

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=artifact");
    println!("cargo:rerun-if-env-changed=AR");
    for s in SHARED {
        println!("cargo:rerun-if-changed={}", shared_dir.join(s).display());
    }

    // Recorded as the pqperf provider's compiler and flags (build.json `iccs_provider`).
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc".into());
    println!("cargo:rustc-env=PQPERF_ICCS_ARTIFACT_RUSTC={version}");
    let flags: Vec<String> = CODEGEN.iter().map(|c| format!("-C {c}")).collect();
    println!(
        "cargo:rustc-env=PQPERF_ICCS_ARTIFACT_FLAGS=--edition 2024 {}",
        flags.join(" ")
    );

    let mut objects = Vec::new();
    for m in MEMBERS {
        let src = manifest.join("artifact").join(format!("{m}.rs"));
        println!("cargo:rerun-if-changed={}", src.display());
        let obj = out_dir.join(format!("{m}.o"));
        run(Command::new(&rustc)
            .args(["--edition", "2024", "--crate-type", "lib"])
            .arg("--crate-name")
            .arg(format!("pqperf_iccs_{m}"))
            .arg(format!("--emit=obj={}", obj.display()))
            .args(["--target", &target])
            .args(CODEGEN.iter().flat_map(|c| ["-C", c]))
            .arg("-C")
            .arg(format!("metadata=pqperf-iccs-{m}"))
            .args(["-A", "dead_code", "-A", "unused_imports"])
            .arg(&src));
        objects.push(obj);
    }

    archive(&ar, &out_dir, "libpqperf_iccs.a", &objects);
    let core: Vec<PathBuf> = objects
        .iter()
        .filter(|o| CORE_MEMBERS.iter().any(|m| o.ends_with(format!("{m}.o"))))
        .cloned()
        .collect();
    archive(&ar, &out_dir, "libpqperf_iccs_core.a", &core);
}

/// Members of the ICCS-only archive (no `randombytes`, so that a candidate that lost its own
/// `randombytes` wrapper still fails to link instead of silently getting the NIST DRBG).
const CORE_MEMBERS: &[&str] = &["iccs_aux", "iccs_drng", "iccs_drng_ctx"];

fn archive(ar: &str, out_dir: &Path, name: &str, objects: &[PathBuf]) {
    let lib = out_dir.join(name);
    let _ = std::fs::remove_file(&lib);
    run(Command::new(ar)
        .arg("crsD")
        .arg(&lib)
        .args(objects.iter().map(|p| p.as_path()))
        .current_dir(out_dir));
}
