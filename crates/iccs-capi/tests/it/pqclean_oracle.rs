//! Cross-check of the NIST CTR DRBG and the HQC SHAKE generator against PQClean's own C
//! generators, compiled with gcc from the vendored PQClean tree of the pinned
//! `pqcrypto-mldsa 0.1.2` crate in the cargo registry (read in place, never copied into the
//! repository). Skipped, with a note, when that crate has not been fetched on this machine
//! (`pqperf import pqclean` fetches it).

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_iccs::{HqcPrng, NistDrbg};

const DRAWS: &[usize] = &[48, 33, 0, 1, 16, 17, 300, 2000];

fn pqclean_dir() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let src = home.join("registry/src");
    std::fs::read_dir(src)
        .ok()?
        .flatten()
        .map(|e| e.path().join("pqcrypto-mldsa-0.1.2/pqclean"))
        .find(|p| p.join("test/common/hqckatrng.c").is_file())
}

fn run_pqclean(pq: &Path, hqc: bool, dir: &Path) -> Vec<String> {
    let exe = dir.join(if hqc { "hqc" } else { "nist" });
    let main = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/pqclean_rng_main.c");
    let (rng, prim) = if hqc {
        ("test/common/hqckatrng.c", "common/fips202.c")
    } else {
        ("test/common/nistkatrng.c", "common/aes.c")
    };
    let mut cmd = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()));
    cmd.args(["-O2", "-std=c99"])
        .arg(format!("-I{}", pq.join("common").display()))
        .arg(&main)
        .arg(pq.join(rng))
        .arg(pq.join(prim))
        .arg("-o")
        .arg(&exe);
    if hqc {
        cmd.arg("-DUSE_HQC");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe)
        .args(DRAWS.iter().map(|n| n.to_string()))
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn nist_and_hqc_generators_match_pqclean() {
    let Some(pq) = pqclean_dir() else {
        eprintln!("note: pqcrypto-mldsa-0.1.2 not in the cargo registry; oracle check skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let entropy: [u8; 48] = core::array::from_fn(|i| i as u8);
    let mut nist = NistDrbg::new(&entropy, None);
    let mut hqc = HqcPrng::new(&entropy, None);
    let mut want_nist = Vec::new();
    let mut want_hqc = Vec::new();
    for &n in DRAWS {
        let mut b = vec![0u8; n];
        nist.fill(&mut b);
        want_nist.push(hex::encode(&b));
        hqc.fill(&mut b);
        want_hqc.push(hex::encode(&b));
    }
    assert_eq!(run_pqclean(&pq, false, dir.path()), want_nist);
    assert_eq!(run_pqclean(&pq, true, dir.path()), want_hqc);
}
