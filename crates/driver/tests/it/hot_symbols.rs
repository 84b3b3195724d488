//! `hot-symbols.txt` (the code layout lld gives the lean driver, see build.rs) is current:
//! every function it names is defined in the `pqperf-driver` executable this build produced.
//! Rust symbol names carry hashes of the build settings, which differ between a workspace
//! build and `cargo build -p pqperf-driver` (the list holds the names of both), so names are
//! compared without them. A name the linker can no longer find is dead weight and means the
//! list was not regenerated after a driver change: `bash scripts/driver-hot-symbols.sh`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// `name` without the parts that depend on build settings: legacy `17h<16 hex>E` hashes,
/// v0 crate disambiguators `Cs<base-62>_`, and `.llvm.<digits>` suffixes of promoted locals.
fn normalise(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &name[i..];
        if rest.starts_with("17h")
            && b.len() >= i + 20
            && b[i + 3..i + 19].iter().all(u8::is_ascii_hexdigit)
            && b[i + 19] == b'E'
        {
            out.push_str("17hE");
            i += 20;
            continue;
        }
        if let Some(tail) = rest.strip_prefix("Cs") {
            let n = tail.bytes().take_while(u8::is_ascii_alphanumeric).count();
            if n > 0 && tail.as_bytes().get(n) == Some(&b'_') {
                out.push_str("Cs_");
                i += 3 + n;
                continue;
            }
        }
        if let Some(tail) = rest.strip_prefix(".llvm.") {
            let n = tail.bytes().take_while(u8::is_ascii_digit).count();
            if n > 0 {
                i += 6 + n;
                continue;
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[test]
fn normalising_removes_only_build_dependent_parts() {
    assert_eq!(
        normalise("_ZN10pqperf_ffi8affinity6pin_to17h3d70d182798298e4E"),
        "_ZN10pqperf_ffi8affinity6pin_to17hE"
    );
    assert_eq!(
        normalise("_RNvCsfLfy6EI15iL_7___rustc12___rust_alloc"),
        "_RNvCs_7___rustc12___rust_alloc"
    );
    assert_eq!(
        normalise("drop17habcE.llvm.4309316645294234318"),
        "drop17habcE"
    );
    assert_eq!(normalise("malloc"), "malloc");
}

#[test]
fn every_listed_function_exists_in_the_driver() {
    let exe = env!("CARGO_BIN_EXE_pqperf-driver");
    let out = Command::new("nm")
        .args(["--defined-only", exe])
        .output()
        .expect("nm (binutils) runs");
    assert!(out.status.success(), "nm {exe} failed");
    let defined: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(normalise)
        .collect();
    assert!(defined.contains("main"), "no main in nm {exe}");
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
    let text = std::fs::read_to_string(&list).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert!(
        names.len() > 20,
        "{} lists {} names",
        list.display(),
        names.len()
    );
    let stale: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !defined.contains(&normalise(n)))
        .collect();
    assert!(
        stale.is_empty(),
        "{} of {} names in crates/driver/hot-symbols.txt are not defined in {exe}; \
         regenerate it with `bash scripts/driver-hot-symbols.sh`:\n{}",
        stale.len(),
        names.len(),
        stale.join("\n")
    );
}
