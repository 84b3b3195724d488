//! The canary (issue 24): a fixed integer workload the driver times before and after its
//! trials, so that the parent sees how fast the machine itself ran during the process
//! (co-tenants on shared caches, a sibling hyperthread or hypervisor steal slow it like they
//! slow the operation). Reported as `PQPERF canary before=<ticks> after=<ticks> reps=… steps=…`,
//! each figure the median of [`REPS`] repetitions; it is kept apart from the timed trials (no
//! trial contains it) and costs well under a millisecond per process
//! (`pqperf_model::envevidence`).

use pqperf_ffi::counters;

/// Dependent multiply-xorshift steps of one repetition.
pub const STEPS: u64 = 20_000;
/// Repetitions per figure (the median is reported).
pub const REPS: usize = 5;

/// One repetition's work: a dependent chain the compiler cannot shorten.
fn work(seed: u64) -> u64 {
    let mut x = std::hint::black_box(seed) | 1;
    for _ in 0..std::hint::black_box(STEPS) {
        x = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        x ^= x >> 29;
    }
    std::hint::black_box(x)
}

/// The median tick count of [`REPS`] repetitions of the workload.
pub fn measure() -> u64 {
    let mut t = [0u64; REPS];
    for (i, slot) in t.iter_mut().enumerate() {
        let t0 = counters::ticks();
        let _ = work(i as u64);
        *slot = counters::ticks().saturating_sub(t0);
    }
    t.sort_unstable();
    t[REPS / 2]
}

/// The protocol line of the two figures.
pub fn line(before: u64, after: u64) -> String {
    format!("PQPERF\tcanary\tbefore={before} after={after} reps={REPS} steps={STEPS}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canary_takes_time_and_says_so() {
        // Work was done (ticks advance); no figure of this machine is judged.
        assert!(measure() > 0);
        assert_ne!(work(1), work(2));
        assert_eq!(
            line(10, 12),
            "PQPERF\tcanary\tbefore=10 after=12 reps=5 steps=20000"
        );
    }
}
