//! The ICCS test candidate (testdata/candidates/wots-pxof: a Winternitz OTS over `pseudoXOF`
//! drawing from the ICCS DRNG) through import → build → profile. Calls per operation must
//! equal the counts implied by the candidate's source, computed here without instrumenting
//! anything: keygen = 2 DRNG draws, 67 secrets + 67 × 15 chain steps + 1 root; verify =
//! 1 digest + Σ(15 − digit) chain steps + 1 root, with the digits recomputed from the
//! driver's deterministic preparation (DRNG seed 00..2f, 64-byte message) on the Rust ICCS
//! model; sign = 1 draw, 1 digest, 67 secrets and the complementary chain steps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pqperf_measure::Instance;
use pqperf_measure::driver::ApiSpec;
use pqperf_model::profile::Profile;
use pqperf_profile::phase::{self, ChildExe, ProfileOptions};

const ID: &str = "sign-90";
const LABEL: &str = "WOTS-PXOF-128";
const N: usize = 32;
const LEN: usize = 67;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(run: &Path, op: &str) -> Profile {
    let p = run.join(format!("profile/{ID}/{LABEL}__{op}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// fn/in_bits → calls per operation.
fn per_op(p: &Profile) -> BTreeMap<(String, u64), f64> {
    let ops = p.total.as_ref().unwrap().operations as f64;
    let mut m = BTreeMap::new();
    for c in &p.calls {
        assert_eq!(c.out_bits, 256, "{c:?}");
        *m.entry((c.func.clone(), c.in_bits)).or_insert(0.0) += c.calls as f64 / ops;
    }
    m
}

/// Verify's chain steps for the driver's setup signature, from the source's definition.
/// Chain steps of verifying each of the first `n` signatures of the driver's verify pool
/// (`pqperf_driver::inputs`): entry k signs the reference message with `u64_le(k)` XORed into
/// its first 8 bytes, with the k-th randomizer the DRNG draws after the key pair.
fn expected_verify_steps(n: usize) -> Vec<u64> {
    let seed: Vec<u8> = (0u8..48).collect();
    let mut drng = pqperf_iccs::Drng::new(&seed);
    let mut sk_seed = [0u8; N];
    let mut pub_seed = [0u8; N];
    drng.generate(&mut sk_seed, 256).unwrap(); // keygen: secret seed
    drng.generate(&mut pub_seed, 256).unwrap(); // keygen: public seed
    (0..n)
        .map(|k| {
            let mut r = [0u8; N];
            drng.generate(&mut r, 256).unwrap(); // pool entry k: randomizer
            let base = pqperf_model::stream::reference_message();
            let mut m = base;
            pqperf_model::stream::message_for_call(&base, k as u64, &mut m);
            steps_of(&r, &pub_seed, &m)
        })
        .collect()
}

fn steps_of(r: &[u8; N], pub_seed: &[u8; N], m: &[u8]) -> u64 {
    let mut buf = vec![0x03u8];
    buf.extend_from_slice(r);
    buf.extend_from_slice(pub_seed);
    buf.extend_from_slice(m);
    let mut digest = [0u8; N];
    pqperf_iccs::pseudoxof(256, &buf, 8 * buf.len() as u64, &mut digest).unwrap();
    let mut digits = [0u64; LEN];
    let mut csum = 0u64;
    for i in 0..64 {
        let b = digest[i / 2] as u64;
        digits[i] = if i % 2 == 0 { b >> 4 } else { b & 15 };
        csum += 15 - digits[i];
    }
    for i in (64..LEN).rev() {
        digits[i] = csum & 15;
        csum >>= 4;
    }
    digits.iter().map(|d| 15 - d).sum()
}

#[test]
fn wots_calls_per_operation_match_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::canonicalize(dir.path()).unwrap();
    pqperf_build::import_iccs(&pqperf_build::IccsImportOptions::new(
        &run,
        repo().join("testdata/candidates/wots-pxof"),
        ID,
    ))
    .expect("import");
    let s = pqperf_build::build(&pqperf_build::BuildOptions::new(&run)).expect("build");
    assert_eq!(s.built.len(), 1, "{:?}", s.failed);
    let bj = pqperf_build::read_build_json(&run).unwrap();
    let entry = bj.instances[&format!("{ID}/{LABEL}")].clone();
    let inst = Instance {
        entry,
        category: Some(pqperf_model::vocab::Category::Sign),
        api: ApiSpec::Iccs,
        kat_not_passed: false,
    };
    let opts = ProfileOptions {
        run_dir: run.clone(),
        cpu: None,
        target_s: 20.0,
        prep_share: None,
        child: ChildExe {
            exe: PathBuf::from(env!("CARGO_BIN_EXE_pqperf-hashprof")),
            pre_args: vec![],
        },
    };
    let logs = std::sync::Mutex::new(Vec::new());
    let log = |m: String| logs.lock().unwrap().push(m);
    let sum = phase::profile_instances(&opts, std::slice::from_ref(&inst), &log).unwrap();
    assert_eq!(
        (sum.written, sum.failed),
        (3, 0),
        "{:?}",
        logs.lock().unwrap()
    );

    let secret = 8 * (1 + N + 4) as u64;
    let chain = 8 * (1 + N + 4 + 4 + N) as u64;
    let root = 8 * (1 + N + LEN * N) as u64;
    let digest = 8 * (1 + 2 * N + 64) as u64;
    let px = |b: u64| ("pseudoXOF".to_string(), b);
    let drng = ("drng".to_string(), 0u64);

    let kg = read(&run, "keygen");
    assert_eq!(kg.status, "complete");
    // The profiling build reproduces the committed KAT (kat.sha256 manifest).
    assert_eq!(
        kg.extra["pqperf"]["profiling_build_kat"],
        "PASS",
        "{:?}",
        logs.lock().unwrap()
    );
    let want: BTreeMap<_, _> = [
        (drng.clone(), 2.0),
        (px(secret), LEN as f64),
        (px(chain), (LEN * 15) as f64),
        (px(root), 1.0),
    ]
    .into_iter()
    .collect();
    assert_eq!(per_op(&kg), want, "keygen");
    assert_eq!(kg.extra["pqperf"]["drng_bytes_per_operation"], 64.0);

    // Verify takes a different signature in every call (the driver's input pool): its chain
    // steps per call are an average over the pool's entries, within their range.
    let steps = expected_verify_steps(64);
    let (lo, hi) = (*steps.iter().min().unwrap(), *steps.iter().max().unwrap());
    let vf = read(&run, "verify");
    let mut got = per_op(&vf);
    let chain_steps = got.remove(&px(chain)).unwrap_or(0.0);
    assert!(
        (lo as f64..=hi as f64).contains(&chain_steps),
        "verify: {chain_steps} chain steps, the pool's entries need {lo}..{hi}"
    );
    let want: BTreeMap<_, _> = [(px(digest), 1.0), (px(root), 1.0)].into_iter().collect();
    assert_eq!(got, want, "verify");

    let sg = read(&run, "sign");
    let got = per_op(&sg);
    assert_eq!(got[&drng], 1.0);
    assert_eq!(got[&px(digest)], 1.0);
    assert_eq!(got[&px(secret)], LEN as f64);
    let sign_steps = got.get(&px(chain)).copied().unwrap_or(0.0);
    assert!((0.0..=(LEN * 15) as f64).contains(&sign_steps));
    assert_eq!(got.len(), 3 + usize::from(sign_steps > 0.0), "{got:?}");
    for p in [&kg, &sg, &vf] {
        let (share, hash) = p.recompute_shares().unwrap();
        assert_eq!(share, p.share);
        assert_eq!(hash, p.hash_share);
        assert!(
            p.hash_share_f64() > 0.5,
            "{}: {}",
            p.operation,
            p.hash_share_f64()
        );
    }
    // Survey: only the ICCS helper is reached.
    let sv: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join(format!("survey/{ID}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(sv["verdict"], "ICCS-only", "{sv}");
    // hashcost prices every ICCS shape the profiles saw, once.
    let hc = pqperf_profile::hashcost::run_hashcost(&run, None, &|_| {}).unwrap();
    assert_eq!(
        hc.iccs_priced,
        pqperf_profile::hashcost::collect_shapes(&run).len()
    );
    let tsv = std::fs::read_to_string(run.join("hashcost/iccs.tsv")).unwrap();
    assert!(tsv.starts_with("#unit\tticks\n"), "{tsv}");
    assert!(tsv.contains(&format!("pseudoXOF\t{chain}\t256\t")), "{tsv}");
    let again = pqperf_profile::hashcost::run_hashcost(&run, None, &|_| {}).unwrap();
    assert_eq!(again.iccs_priced, 0);
    eprintln!(
        "WOTS-PXOF-128 calls per operation: keygen {:?}; sign {:?}; verify {:?} (pool entries need {lo}..{hi} verify chain steps)",
        per_op(&kg),
        got,
        per_op(&vf)
    );
}
