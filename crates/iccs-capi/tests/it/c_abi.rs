//! The C ABI artifact, driven from real C compiled with gcc: same values as the Rust API,
//! error codes instead of crashes, archive-member isolation, baseline hash instances, the
//! symbol inventory, and the number of bytes the artifact adds to a candidate's ELF image.

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_iccs::{Drng, HqcPrng, NistDrbg, pseudohash, pseudoxof, sm3hash};
use pqperf_iccs_capi::{Provider, exported_symbols, hash_instances, write_provider};

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "gcc".into())
}

fn c_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

fn run_ok(cmd: &mut Command) -> std::process::Output {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn provider() -> (tempfile::TempDir, Provider) {
    let dir = tempfile::tempdir().unwrap();
    let p = write_provider(&dir.path().join("prov")).unwrap();
    (dir, p)
}

/// Compile `srcs` + extra args into an executable, return its path.
fn build_exe(p: &Provider, dir: &Path, name: &str, srcs: &[PathBuf], extra: &[&str]) -> PathBuf {
    let exe = dir.join(name);
    run_ok(
        Command::new(cc())
            .args(["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror"])
            .arg(format!("-I{}", p.include_dir.display()))
            .args(srcs)
            .args(extra)
            .arg(&p.static_lib)
            .arg("-o")
            .arg(&exe),
    );
    exe
}

fn m(n: usize) -> Vec<u8> {
    (0..n).map(|i| ((7 * i + 1) % 256) as u8).collect()
}

/// The lines `iccs_check.c` must print, computed with the Rust API.
fn expected_lines() -> Vec<String> {
    let msg = m(2048);
    let mut v = Vec::new();
    let msg_bits = [
        0u64, 1, 7, 8, 9, 20, 24, 255, 256, 257, 440, 447, 448, 449, 511, 512, 513, 1000, 1024,
        4095, 8192,
    ];
    for &l in &msg_bits {
        v.push(format!(
            "sm3hash {l} {} 0",
            hex::encode(sm3hash(256, &msg, l).unwrap())
        ));
        for w in [512, 768, 1024] {
            let mut o = [0u8; 128];
            let n = pseudohash(w, &msg, l, &mut o).unwrap();
            v.push(format!("pseudohash {w} {l} {} 0", hex::encode(&o[..n])));
        }
        for n in [1u64, 8, 100, 255, 256, 257, 768, 2048, 4100] {
            let mut o = vec![0u8; 600];
            let k = pseudoxof(n, &msg, l, &mut o).unwrap();
            v.push(format!("pseudoxof {n} {l} {} a5 0", hex::encode(&o[..k])));
        }
    }
    for s in [0usize, 1, 48, 55, 64, 200] {
        let mut d = Drng::new(&msg[..s]);
        for bits in [512u64, 0, 13, 256, 1, 257, 4096, 8] {
            let mut o = vec![0u8; 600];
            let k = d.generate(&mut o, bits).unwrap();
            v.push(format!("drng {s} {bits} {} a5 0", hex::encode(&o[..k])));
        }
    }
    let mut d = Drng::new(&b"seed".repeat(16));
    let mut o = [0u8; 64];
    d.generate(&mut o, 512).unwrap();
    v.push(format!("drng_algorithm {}", hex::encode(o)));
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let sizes = [48usize, 33, 0, 1, 16, 17, 300];
    let mut nist = NistDrbg::new(&entropy, None);
    for n in sizes {
        let mut o = vec![0u8; n];
        nist.fill(&mut o);
        v.push(format!("nist {n} {}", hex::encode(&o)));
    }
    let mut hqc = HqcPrng::new(&entropy, None);
    for n in sizes {
        let mut o = vec![0u8; n];
        hqc.fill(&mut o);
        v.push(format!("hqc {n} {}", hex::encode(&o)));
    }
    let pers: [u8; 48] = msg[..48].try_into().unwrap();
    let mut nist = NistDrbg::new(&entropy, Some(&pers));
    let mut o = [0u8; 48];
    nist.fill(&mut o);
    v.push(format!("nist-pers 48 {}", hex::encode(o)));
    v
}

#[test]
fn c_program_prints_the_rust_values_and_error_codes() {
    let (dir, p) = provider();
    let exe = build_exe(
        &p,
        dir.path(),
        "iccs_check",
        &[c_dir().join("iccs_check.c")],
        &[],
    );
    let out = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let want = expected_lines();
    for (i, w) in want.iter().enumerate() {
        assert_eq!(lines.get(i).copied(), Some(w.as_str()), "line {}", i + 1);
    }
    let rc: std::collections::BTreeMap<&str, i32> = lines[want.len()..]
        .iter()
        .filter_map(|l| l.strip_prefix("rc "))
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k, v.parse().unwrap())
        })
        .collect();
    let expect_rc = [
        ("sm3hash-255", -4),
        ("sm3hash-512", -4),
        ("pseudohash-0", -4),
        ("pseudohash-256", -4),
        ("pseudohash-2048", -4),
        ("pseudohash-null-everything-bad-width", -4),
        ("sm3hash-nullmsg", -1),
        ("sm3hash-nullmsg-0", 0),
        ("sm3hash-nullout", -1),
        ("pseudohash-nullmsg", -1),
        ("pseudohash-nullmsg-0", 0),
        ("pseudohash-nullout", -1),
        ("pseudoxof-nullmsg", -1),
        ("pseudoxof-nullout", -1),
        ("pseudoxof-0-nulls", 0),
        ("init-nullctx", -1),
        ("init-nullseed", -1),
        ("init-nullseed-0", 0),
        ("get-nullctx", -1),
        ("get-nullout", -1),
        ("get-nullout-0", 0),
        ("randombytes-null", -2),
        ("randombytes-null-0", 0),
        ("pqclean-null-0", 0),
        ("hqc-null", -2),
        ("alias-xof", 0),
    ];
    for flag in [
        "alias-xof-same 1",
        "alias-xof-shifted-same 1",
        "alias-ph-same 1",
        "alias-sm3-same 1",
    ] {
        assert!(lines.contains(&flag), "{flag}");
    }
    for (k, v) in expect_rc {
        assert_eq!(rc.get(k), Some(&v), "return code of {k}");
    }
    // After init(ctx, NULL, 0) (= empty seed) a 0-bit draw with a null buffer still advances
    // the state: the next 256-bit draw is the second draw of the empty-seed DRNG.
    let mut d = Drng::new(b"");
    d.generate(&mut [], 0).unwrap();
    let mut o = [0u8; 32];
    d.generate(&mut o, 256).unwrap();
    assert!(
        lines.contains(&format!("drng-after-null-0 {}", hex::encode(o)).as_str()),
        "0-bit draw with a null buffer must advance the state"
    );
    // the official stderr line, once per unsupported width
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr
            .lines()
            .filter(|l| *l == "ERROR: Digestbitlen not in the limitation. ")
            .count(),
        6,
        "stderr: {stderr}"
    );
}

#[test]
fn candidate_definitions_of_randombytes_and_drng_algorithm_win() {
    let (dir, p) = provider();
    let exe = build_exe(&p, dir.path(), "own", &[c_dir().join("own_symbols.c")], &[]);
    let out = run_ok(&mut Command::new(&exe));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut d = Drng::new(b"");
    let mut o = [0u8; 32];
    d.generate(&mut o, 256).unwrap();
    assert_eq!(
        stdout,
        format!(
            "{}\n{}\n",
            hex::encode(o),
            hex::encode(sm3hash(256, b"abc", 24).unwrap())
        )
    );
}

/// The ICCS-only archive leaves a missing `randombytes` undefined (link error), while the
/// full archive resolves it with the NIST DRBG.
#[test]
fn core_archive_has_no_randombytes() {
    let (dir, p) = provider();
    let src = dir.path().join("uses_randombytes.c");
    std::fs::write(
        &src,
        "#include \"auxfunc.h\"\nint randombytes(unsigned char *x, unsigned long long n);\n\
         int main(void) { unsigned char d[32]; randombytes(d, 32); \
         return sm3hash(256, d, 256, d); }\n",
    )
    .unwrap();
    let link = |lib: &Path| {
        Command::new(cc())
            .arg(format!("-I{}", p.include_dir.display()))
            .arg(&src)
            .arg(lib)
            .arg("-o")
            .arg(dir.path().join("a.out"))
            .output()
            .unwrap()
    };
    let core = link(&p.iccs_core_lib);
    assert!(!core.status.success());
    assert!(String::from_utf8_lossy(&core.stderr).contains("randombytes"));
    assert!(link(&p.static_lib).status.success());
    let defined = nm(&["--defined-only", "-g"], &p.iccs_core_lib);
    let names: std::collections::BTreeSet<&str> = defined
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| !n.starts_with("_ZN") && !n.starts_with("_R"))
        .collect();
    let want: std::collections::BTreeSet<&str> =
        pqperf_iccs_capi::ICCS_SYMBOLS.iter().copied().collect();
    assert_eq!(names, want);
}

fn nm(args: &[&str], file: &Path) -> String {
    let out = run_ok(Command::new("nm").args(args).arg(file));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn archive_symbols_are_exactly_the_documented_ones() {
    let (_dir, p) = provider();
    // every documented C symbol is defined (global) in the archive
    let defined = nm(&["--defined-only", "-g"], &p.static_lib);
    let names: std::collections::BTreeSet<&str> = defined
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| !n.starts_with("_ZN") && !n.starts_with("_R"))
        .collect();
    let want: std::collections::BTreeSet<&str> = exported_symbols().into_iter().collect();
    assert_eq!(names, want);
    // no Rust runtime, no core library: undefined symbols are libc's or the archive's own
    let undefined = nm(&["-u"], &p.static_lib);
    for l in undefined
        .lines()
        .filter(|l| l.trim_start().starts_with("U "))
    {
        let sym = l.split_whitespace().nth(1).unwrap();
        assert!(
            pqperf_iccs_capi::UNDEFINED_LIBC_SYMBOLS.contains(&sym) || want.contains(sym),
            "unexpected undefined symbol {sym}"
        );
    }
}

fn shared_lib(p: &Provider, dir: &Path, name: &str, extra: &[&Path]) -> u64 {
    let so = dir.join(name);
    run_ok(
        Command::new(cc())
            .args([
                "-O2", "-fPIC", "-shared", "-s", "-std=c99", "-Wall", "-Werror",
            ])
            .arg(format!("-I{}", p.include_dir.display()))
            .arg(c_dir().join("candidate.c"))
            .args(extra)
            .args(["-Wl,--no-undefined", "-o"])
            .arg(&so),
    );
    std::fs::metadata(&so).unwrap().len()
}

/// What the artifact adds to a candidate `.so` (stripped, no --gc-sections), compared with
/// empty stubs. Printed for the report (`cargo test -- --nocapture`); goal ≤ 16 KiB.
#[test]
fn bytes_added_to_a_candidate_elf_image() {
    let (dir, p) = provider();
    let with = shared_lib(&p, dir.path(), "libwith.so", &[&p.static_lib]);
    let stubs = c_dir().join("stubs.c");
    let without = shared_lib(&p, dir.path(), "libstubs.so", &[&stubs]);
    let added = with.saturating_sub(without);
    println!("artifact adds {added} bytes to a stripped candidate .so ({with} vs {without})");
    assert!(with > without, "the real helpers must be bigger than stubs");
    assert!(
        added <= 16 * 1024,
        "artifact adds {added} bytes (goal ≤ 16 KiB)"
    );
}

#[test]
fn baseline_hash_instances_compute_the_helpers() {
    let (dir, p) = provider();
    let main_c = dir.path().join("hash_main.c");
    std::fs::write(
        &main_c,
        r#"#include <stdio.h>
#include "iccs_crypthash.h"
int main(void) {
    unsigned char m[65], d[256];
    for (int i = 0; i < 65; i++) m[i] = (unsigned char)((7 * i + 1) % 256);
    int rc = CryptHash(DIGEST_BIT_LENGTH, m, 8 * 65, d);
    printf("%s %d ", ALGORITHM_INSTANCE, rc);
    for (int i = 0; i < DIGEST_BIT_LENGTH / 8; i++) printf("%02x", d[i]);
    printf(" %d\n", CryptHash(DIGEST_BIT_LENGTH + 8, m, 8, d));
    return 0;
}
"#,
    )
    .unwrap();
    let msg = m(65);
    for inst in hash_instances() {
        let args = p.hash_instance_args(&inst);
        // build the instance as a shared library exactly as documented, then link a driver
        let so = dir.path().join(format!("lib{}.so", inst.label));
        run_ok(
            Command::new(cc())
                .args(["-O2", "-Wall", "-Werror"])
                .args(&args)
                .arg("-o")
                .arg(&so),
        );
        let defs: Vec<String> = inst
            .defines()
            .into_iter()
            .map(|(k, v)| format!("-D{k}={v}"))
            .collect();
        let exe = dir.path().join(format!("drv-{}", inst.label));
        run_ok(
            Command::new(cc())
                .arg(format!("-I{}", p.include_dir.display()))
                .args(&defs)
                .arg(&main_c)
                .arg(&so)
                .arg(format!("-Wl,-rpath,{}", dir.path().display()))
                .arg("-o")
                .arg(&exe),
        );
        let out = String::from_utf8(run_ok(&mut Command::new(&exe)).stdout).unwrap();
        let mut want = vec![0u8; inst.digest_bytes()];
        match inst.helper {
            pqperf_iccs_capi::Helper::Sm3hash => {
                want.copy_from_slice(&sm3hash(256, &msg, 520).unwrap())
            }
            pqperf_iccs_capi::Helper::Pseudohash => {
                pseudohash(inst.digest_bits as i32, &msg, 520, &mut want).unwrap();
            }
            pqperf_iccs_capi::Helper::PseudoXof => {
                pseudoxof(inst.digest_bits as u64, &msg, 520, &mut want).unwrap();
            }
        }
        assert_eq!(
            out,
            format!("{} 0 {} -4\n", inst.label, hex::encode(want)),
            "instance {}",
            inst.label
        );
    }
}
