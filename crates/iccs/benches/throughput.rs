//! Throughput of `sm3hash`, `pseudohash-512` and `pseudoXOF-256` over the guide's message
//! sizes S1–S8 (32 B … 64 KiB), plus the DRNG.
//!
//! Run with `cargo bench -p pqperf-iccs`. Timing uses `std::time::Instant` (no unsafe `rdtsc`
//! here); "cycles" are **nominal**: ns × the clock given by `PQPERF_BENCH_GHZ` (default 2.1,
//! this VM's invariant TSC rate), i.e. reference/TSC ticks, not core cycles. Reported per
//! size: median over 15 batches of ns/byte and nominal cycles/byte, and the minimum batch (useful
//! on a shared, noisy machine).

use std::hint::black_box;
use std::time::{Duration, Instant};

use pqperf_iccs::{Drng, pseudohash, pseudoxof, sm3hash};

const SIZES: &[usize] = &[32, 128, 512, 1024, 4096, 8192, 16384, 65536];
const BATCHES: usize = 15;

/// (median, minimum) seconds per call of `f`, each batch running ≈ `target` of calls.
fn time_per_call(mut f: impl FnMut(), target: Duration) -> (f64, f64) {
    // calibrate the batch size
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        if t.elapsed() >= target / 4 || n >= 1 << 24 {
            break;
        }
        n *= 2;
    }
    let mut per: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_secs_f64() / n as f64
        })
        .collect();
    per.sort_by(f64::total_cmp);
    (per[BATCHES / 2], per[0])
}

fn main() {
    // `cargo test --benches` / `cargo bench -- --list` pass flags; run only for real benching.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let ghz: f64 = std::env::var("PQPERF_BENCH_GHZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.1);
    let target = Duration::from_millis(20);
    println!(
        "ICCS helpers throughput (Rust build of the shared implementation; median of {BATCHES} batches)"
    );
    println!("cycles = nominal ticks = ns x {ghz} GHz (TSC-rate equivalent, not core cycles)\n");
    println!(
        "{:<16} {:>8} {:>12} {:>10} {:>12} {:>16}",
        "helper", "bytes", "ns/call", "ns/byte", "cycles/byte", "min cycles/byte"
    );
    let max = *SIZES.last().unwrap();
    let msg: Vec<u8> = (0..max).map(|i| ((131 * i + max) % 256) as u8).collect();
    for (name, which) in [
        ("sm3hash-256", 0),
        ("pseudohash-512", 1),
        ("pseudoXOF-256", 2),
    ] {
        for &n in SIZES {
            let m = &msg[..n];
            let bits = 8 * n as u64;
            let mut out = [0u8; 128];
            let (s, smin) = time_per_call(
                || {
                    let r = match which {
                        0 => sm3hash(256, black_box(m), bits).map(|d| d[0] as usize),
                        1 => pseudohash(512, black_box(m), bits, &mut out),
                        _ => pseudoxof(256, black_box(m), bits, &mut out),
                    };
                    black_box(r.ok());
                },
                target,
            );
            let ns = s * 1e9;
            println!(
                "{name:<16} {n:>8} {ns:>12.1} {:>10.3} {:>12.2} {:>16.2}",
                ns / n as f64,
                ns * ghz / n as f64,
                smin * 1e9 * ghz / n as f64
            );
        }
    }
    println!();
    let mut d = Drng::new(&(0u8..48).collect::<Vec<_>>());
    for bits in [256u64, 512, 8192] {
        let mut out = vec![0u8; bits as usize / 8];
        let (s, smin) = time_per_call(
            || {
                d.generate(black_box(&mut out), bits).ok();
            },
            target,
        );
        let ns = s * 1e9;
        let bytes = bits as f64 / 8.0;
        println!(
            "{:<16} {:>8} {ns:>12.1} {:>10.3} {:>12.2} {:>16.2}",
            "drng",
            bits / 8,
            ns / bytes,
            ns * ghz / bytes,
            smin * 1e9 * ghz / bytes
        );
    }
}
