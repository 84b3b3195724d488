//! The memory pass of the lean driver executable, end to end: `testdata/candidates/mem-sig`
//! built with gcc (plus a minimal harness shim), run by `pqperf-driver` contained like every
//! driver child (`pqperf_ffi::untrusted`); its `PQPERF mem_…` lines must give the stack within
//! ±2 % and the heap peak exactly, and next to nothing for operations that use neither.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pqperf_driver::{ApiSpec, DEFAULT_STACK_REGION, DriverArgs};
use pqperf_ffi::untrusted::{self, ChildSpec};

/// The harness shim the driver needs (`ngcc_meta`, `ngcc_seed`, `ngcc_build_flags`), as
/// `pqperf build` generates it in spirit; the candidate has no randomness.
const SHIM: &str = r#"
#include <stdint.h>
typedef struct {
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64],
        build_flags[128];
    uint64_t pk, sk, sn;
} ngcc_meta_t;
static const ngcc_meta_t META = {0x4347474Eu, 1, 2, sizeof(ngcc_meta_t), "sign-88", "MemSig",
    "MEM-SIG", "Reference_Implementation", "MEM-SIG", "gcc", "-O2 -fPIC ", 32, 32, 32};
const ngcc_meta_t *ngcc_meta(void) { return &META; }
const char *ngcc_build_flags(void) { return "-O2 -fPIC "; }
int ngcc_seed(const unsigned char *seed, unsigned long long len) { (void)seed; (void)len; return 0; }
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn build(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let src = repo().join("testdata/candidates/mem-sig/Reference_Implementation/MEM-SIG");
    let shim = dir.join("shim.c");
    std::fs::write(&shim, SHIM).unwrap();
    let out = dir.join(format!("lib{name}.so"));
    let mut c = Command::new("gcc");
    c.args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(&out)
        .arg(src.join("sig.c"))
        .arg(&shim)
        .arg("-I")
        .arg(&src);
    for d in defines {
        c.arg(format!("-D{d}"));
    }
    assert!(c.status().expect("gcc").success());
    out
}

/// `mem_…` values of one contained driver run (asserting that it completed its trials).
fn mem(lib: &Path, op: &str, region: u64) -> std::collections::HashMap<String, u64> {
    numbers(&run(lib, op, region, true), "PQPERF", "mem_")
}

/// The numeric `<tag>\t<key>\t<value>` lines whose key starts with `prefix`.
fn numbers(lines: &[String], tag: &str, prefix: &str) -> std::collections::HashMap<String, u64> {
    lines
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            match f.as_slice() {
                [t, k, v] if *t == tag && k.starts_with(prefix) => {
                    v.parse().ok().map(|v| (k.to_string(), v))
                }
                _ => None,
            }
        })
        .collect()
}

/// The result lines of one contained driver run (asserting that it completed its trials).
fn run(lib: &Path, op: &str, region: u64, force_ticks: bool) -> Vec<String> {
    let a = DriverArgs {
        lib: lib.to_path_buf(),
        op: op.into(),
        bytes: 0,
        trials: 2,
        iters: 3,
        warmups: 1,
        cpu: None,
        samples: false,
        force_ticks,
        api: ApiSpec::Iccs,
        stack_region: region,
        seed: None,
        pool_max: None,
        prepare: false,
        relayed: false,
    };
    let out = untrusted::run(&ChildSpec {
        program: PathBuf::from(env!("CARGO_BIN_EXE_pqperf-driver")),
        args: a.to_argv(),
        cwd: lib.parent().unwrap().to_path_buf(),
        timeout: Duration::from_secs(60),
        ..Default::default()
    });
    let lines = out.result_lines();
    assert!(
        lines.iter().any(|l| l == "STATUS\tcomplete"),
        "{op}: {lines:?} {}",
        out.stderr.text()
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("TRIAL\t")).count(), 2);
    lines
}

#[test]
fn stack_within_two_percent_and_heap_peak_exact() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build(tmp.path(), "memsig", &[]);
    let m = mem(&lib, "sign", DEFAULT_STACK_REGION);
    let stack = m["mem_stack_bytes"] as f64;
    assert!(
        (stack - 100_000.0).abs() <= 2_000.0,
        "stack {stack} not within 2 % of 100000: {m:?}"
    );
    assert_eq!(m["mem_stack_overflow"], 0);
    assert_eq!(m["mem_stack_region_bytes"], DEFAULT_STACK_REGION);
    assert_eq!(m["mem_heap_peak_bytes"], 1_048_576, "{m:?}");
    assert_eq!(m["mem_heap_allocations"], 1, "{m:?}");
    assert_eq!(m["mem_heap_untracked"], 0);
    for op in ["keygen", "verify"] {
        let m = mem(&lib, op, DEFAULT_STACK_REGION);
        assert!(m["mem_stack_bytes"] < 4096, "{op}: {m:?}");
        assert_eq!(m["mem_heap_peak_bytes"], 0, "{op}: {m:?}");
        assert_eq!(m["mem_heap_allocations"], 0, "{op}: {m:?}");
    }
}

#[test]
fn no_stack_array_no_malloc_reports_next_to_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build(tmp.path(), "memnone", &["MEM_SIG_NONE"]);
    let m = mem(&lib, "sign", DEFAULT_STACK_REGION);
    assert!(m["mem_stack_bytes"] < 4096, "{m:?}");
    assert_eq!(m["mem_stack_overflow"], 0);
    assert_eq!(m["mem_heap_peak_bytes"], 0, "{m:?}");
    assert_eq!(m["mem_heap_allocations"], 0, "{m:?}");
}

#[test]
fn overflowing_the_painted_region_is_reported_as_at_least_the_region() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build(tmp.path(), "memsig", &[]);
    let m = mem(&lib, "sign", 65_536);
    assert_eq!(m["mem_stack_overflow"], 1, "{m:?}");
    assert_eq!(m["mem_stack_region_bytes"], 65_536);
    assert!(m["mem_stack_bytes"] >= 65_536, "{m:?}");
    // The heap is still counted exactly.
    assert_eq!(m["mem_heap_peak_bytes"], 1_048_576);
}

/// The counter is chosen before the baseline and the peak reset: a do-nothing operation's
/// growth from baseline to peak RSS is the same whether the driver tries the cycle counter
/// (and, on a host without a PMU, is refused) or is told to use the tick counter. A refusal
/// formatted inside the measured window once cost ≈ 0.35 MB in every run (uncontained). Only
/// page counts are compared, never a time: the median growth of twelve interleaved runs per
/// side. The kernel's fault-around moves single runs by 0–250 KiB on both sides alike (CI:
/// 409–623 KiB against 479–618 KiB, so neither the least nor the mean of eight runs was
/// stable); medians of twelve stayed within 40 KiB of each other in four runs here. What this
/// catches is a cost of ≥ 160 KiB paid in every run; a small one is below its noise (opening
/// the counter after the baseline today moves the median by 16–24 KiB: not caught).
#[test]
fn trying_the_cycle_counter_costs_the_memory_figures_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build(tmp.path(), "memnone", &["MEM_SIG_NONE"]);
    let growth = |force_ticks: bool| {
        let m = numbers(
            &run(&lib, "sign", DEFAULT_STACK_REGION, force_ticks),
            "META",
            "",
        );
        m["peak_rss_bytes"].saturating_sub(m["baseline_rss_bytes"])
    };
    let (mut tried, mut ticks) = (Vec::new(), Vec::new());
    for _ in 0..12 {
        tried.push(growth(false));
        ticks.push(growth(true));
    }
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2
    };
    let (m_tried, m_ticks) = (median(&mut tried), median(&mut ticks));
    // Half of the cost this guards against: a refusal formatted in the window adds ≈ 350 KiB.
    assert!(
        m_tried <= m_ticks + 160 * 1024,
        "median growth {m_tried} B tried against {m_ticks} B with --ticks; baseline→peak RSS grows by {tried:?} B when the cycle counter is tried, {ticks:?} B with --ticks"
    );
}
