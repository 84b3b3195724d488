//! Input indices end to end (issue 37, `pqperf_model::stream::CallLayout`): a toy signature
//! built with gcc writes, for every `sig_sign` call, the head of the message it got, the head
//! of the last DRNG seed (`ngcc_seed`) and the calls since that seeding. Two processes of the
//! same stream with different calls per trial give their sampled calls the same inputs (the
//! same messages and DRNG positions), and no message repeats within a process.

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_driver::{ApiSpec, DEFAULT_STACK_REGION, DriverArgs};

const CANDIDATE: &str = r#"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef struct {
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64],
        build_flags[128];
    uint64_t pk, sk, sn;
} ngcc_meta_t;
static const ngcc_meta_t META = {0x4347474Eu, 1, 2, sizeof(ngcc_meta_t), "sign-89", "IdxSig",
    "IDX-SIG", "Reference_Implementation", "IDX-SIG", "gcc", "-O2 -fPIC ", 32, 32, 32};
const ngcc_meta_t *ngcc_meta(void) { return &META; }
const char *ngcc_build_flags(void) { return "-O2 -fPIC "; }
static uint64_t seed_head, since;
int ngcc_seed(const unsigned char *seed, unsigned long long len) {
    if (len >= 8) memcpy(&seed_head, seed, 8);
    since = 0;
    return 0;
}
unsigned long long sig_get_pk_len_bytes(void) { return 32; }
unsigned long long sig_get_sk_len_bytes(void) { return 32; }
unsigned long long sig_get_sn_len_bytes(void) { return 32; }
int sig_keygen(unsigned char *pk, unsigned long long *pkl, unsigned char *sk,
               unsigned long long *skl) {
    memset(pk, 1, 32); memset(sk, 1, 32); *pkl = 32; *skl = 32; return 0;
}
int sig_sign(unsigned char *sk, unsigned long long skl, unsigned char *m,
             unsigned long long ml, unsigned char *sn, unsigned long long *snl) {
    uint64_t h = 0;
    (void)sk; (void)skl;
    memcpy(&h, m, 8);
    fprintf(stderr, "call %016llx %016llx %llu\n", (unsigned long long)h,
            (unsigned long long)seed_head, (unsigned long long)since++);
    memset(sn, 0, 32); memcpy(sn, m, ml < 32 ? ml : 32); *snl = 32; return 0;
}
int sig_verify(unsigned char *pk, unsigned long long pkl, unsigned char *sn,
               unsigned long long snl, unsigned char *m, unsigned long long ml) {
    (void)pk; (void)pkl;
    return snl == 32 && memcmp(sn, m, ml < 32 ? ml : 32) == 0 ? 0 : -1;
}
"#;

fn build(dir: &Path) -> PathBuf {
    let src = dir.join("idx.c");
    std::fs::write(&src, CANDIDATE).unwrap();
    let out = dir.join("libidx.so");
    let ok = Command::new("gcc")
        .args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("gcc")
        .success();
    assert!(ok);
    out
}

/// The `call …` lines of one `sign` process with `iters` calls per trial (its warm-up, the
/// reference trial, the sampled trial and the memory pass are the last `2 + iters + S`).
fn calls(lib: &Path, iters: u64, seed: Option<[u8; 48]>) -> Vec<String> {
    let a = DriverArgs {
        lib: lib.to_path_buf(),
        op: "sign".into(),
        bytes: 0,
        trials: 1,
        iters,
        warmups: 1,
        cpu: None,
        samples: true,
        force_ticks: true,
        api: ApiSpec::Iccs,
        stack_region: DEFAULT_STACK_REGION,
        seed,
        pool_max: None,
        prepare: false,
        relayed: false,
    };
    let out = Command::new(env!("CARGO_BIN_EXE_pqperf-driver"))
        .args(a.to_argv())
        .current_dir(lib.parent().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("STATUS\tcomplete"), "{stdout}\n{stderr}");
    let v: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with("call "))
        .map(String::from)
        .collect();
    let timed = (2 + iters + iters.min(400)) as usize;
    assert!(v.len() >= timed, "{v:?}");
    v[v.len() - timed..].to_vec()
}

#[test]
fn sampled_calls_get_the_same_inputs_whatever_the_calls_per_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build(tmp.path());
    let seed = Some(pqperf_model::stream::process_seed(3));
    let (a, b) = (calls(&lib, 40, seed), calls(&lib, 90, seed));
    // Own stream: warm-up, reference trial, then the sampled trial, then the memory pass.
    let sampled = |v: &[String], iters: usize| v[1 + iters..v.len() - 1].to_vec();
    let (sa, sb) = (sampled(&a, 40), sampled(&b, 90));
    assert_eq!(sa.len(), 40);
    assert_eq!(
        sa[..],
        sb[..40],
        "the sampled calls' message and DRNG position"
    );
    assert!(
        sa[0].ends_with(" 0"),
        "the DRNG reseeded for the window: {}",
        sa[0]
    );
    assert_ne!(
        a[0][22..38],
        sa[0][22..38],
        "the warm-ups' window has its own seed"
    );
    for v in [&a, &b] {
        let msgs: std::collections::HashSet<&str> = v.iter().map(|l| &l[5..21]).collect();
        assert_eq!(msgs.len(), v.len(), "a message repeats: {v:?}");
    }
    // The reference protocol keeps the call order: one seeding, messages base ^ n in turn.
    let r = calls(&lib, 40, None);
    let seeds: std::collections::HashSet<&str> = r.iter().map(|l| &l[22..38]).collect();
    assert_eq!(seeds.len(), 1, "{r:?}");
    assert_ne!(sampled(&r, 40), sa);
}
