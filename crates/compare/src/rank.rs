//! Rank statistics of two independent samples (the per-process log estimates of two
//! separately measured runs): the Hodges–Lehmann shift and its distribution-free
//! Mann–Whitney interval.
//!
//! * **Shift**: the median of the `m·n` differences `y_j − x_i`.
//! * **Interval**: `[d₍ₖ₎, d₍ₘₙ₋ₖ₊₁₎]` of the sorted differences with the largest `k` for
//!   which `2·P(U ≤ k − 1) ≤ 1 − confidence`, `U` the Mann–Whitney statistic under no shift
//!   (exact distribution up to [`EXACT_MAX_PRODUCT`] differences, the normal approximation
//!   above). It assumes only that the two sides' processes vary alike (a shift between them),
//!   not how: a minority of processes that ran in one of a shared host's slow phases moves
//!   neither the shift nor, much, the interval, while it drags a mean and inflates a variance.

use pqperf_model::pynum::quantile_sorted;

/// Largest `m·n` for which the exact distribution of `U` is used.
pub const EXACT_MAX_PRODUCT: usize = 2500;

/// Fewest values a side needs before [`interval`] is used instead of the t-interval (the
/// exact interval exists from 4 a side at 95 %, but is then the range of the differences).
pub const MIN_PER_SIDE: usize = 8;

/// The sorted differences `y_j − x_i` (NaN-free input assumed; NaNs sort last).
pub fn differences(x: &[f64], y: &[f64]) -> Vec<f64> {
    let mut d: Vec<f64> = y
        .iter()
        .flat_map(|b| x.iter().map(move |a| b - a))
        .collect();
    d.sort_by(f64::total_cmp);
    d
}

/// The Hodges–Lehmann shift of `y` against `x` (`None` when a side is empty).
pub fn hodges_lehmann(x: &[f64], y: &[f64]) -> Option<f64> {
    quantile_sorted(&differences(x, y), 0.5)
}

/// `P(U ≤ u)` for `u = 0, 1, …, m·n` of the Mann–Whitney statistic with sides of `m` and
/// `n` values and no shift: the coefficients of the Gaussian binomial `[m+n choose m]`,
/// counted by adding one value at a time (`N(i, j, u) = N(i−1, j, u−j) + N(i, j−1, u)`),
/// divided by `C(m+n, m)`.
fn exact_cdf(m: usize, n: usize) -> Vec<f64> {
    // row[j] = counts for (i, j); start with i = 0: only u = 0, one way.
    let mut row: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut next: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        next.push(vec![1.0]);
        for j in 1..=n {
            let mut c = vec![0.0; i * j + 1];
            // The largest of the i + j values is an x (i−1 x's left; it exceeds all j y's:
            // U grows by j) or a y (j−1 y's left; U unchanged).
            for (u, v) in row[j].iter().enumerate() {
                c[u + j] += v;
            }
            for (u, v) in next[j - 1].iter().enumerate() {
                c[u] += v;
            }
            next.push(c);
        }
        row = next;
    }
    let counts = &row[n];
    let total: f64 = counts.iter().sum();
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

/// Standard normal upper quantile `z` with `P(Z > z) = p` (Acklam's rational approximation,
/// relative error below 1.2e-9), for `0 < p < 0.5`.
pub(crate) fn z_upper(p: f64) -> f64 {
    // Coefficients of the central and tail regions.
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    // Lower quantile of p (negative), negated.
    let lower = if p < 0.02425 {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    -lower
}

/// The `k` of the interval (1-based rank of its lower end among the `m·n` sorted
/// differences) and its exact or approximate coverage; `None` when no interval of that
/// confidence exists (too few values).
pub fn rank_k(m: usize, n: usize, confidence: f64) -> Option<(usize, f64)> {
    if m == 0 || n == 0 {
        return None;
    }
    let alpha_half = (1.0 - confidence) / 2.0;
    let mn = m * n;
    if mn <= EXACT_MAX_PRODUCT {
        let cdf = exact_cdf(m, n);
        // Largest k with P(U ≤ k−1) ≤ α/2.
        let k = cdf.iter().take_while(|&&p| p <= alpha_half).count();
        if k == 0 {
            return None;
        }
        Some((k, 1.0 - 2.0 * cdf[k - 1]))
    } else {
        normal_k(m, n, confidence).map(|k| (k, confidence))
    }
}

/// The `k` of the normal approximation: `⌊m·n/2 − z·σ_U⌋ + 1` with continuity correction
/// (`P(U ≤ k − 1) ≈ Φ((k − 1 + ½ − m·n/2) / σ_U) ≤ α/2`).
fn normal_k(m: usize, n: usize, confidence: f64) -> Option<usize> {
    let (mf, nf) = (m as f64, n as f64);
    let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
    let z = z_upper((1.0 - confidence) / 2.0);
    let k = (mf * nf / 2.0 - z * sd - 0.5).floor() + 1.0;
    (k >= 1.0).then_some(k as usize)
}

/// The Hodges–Lehmann shift of two samples with its Mann–Whitney interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// The median of the differences.
    pub estimate: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// Its exact (or, above [`EXACT_MAX_PRODUCT`], nominal) coverage.
    pub coverage: f64,
}

/// The shift of `y` against `x` and its Mann–Whitney interval at `confidence` (one sort of
/// the differences); `None` when a side is too small for that confidence.
pub fn interval(x: &[f64], y: &[f64], confidence: f64) -> Option<Shift> {
    let (k, coverage) = rank_k(x.len(), y.len(), confidence)?;
    let d = differences(x, y);
    let mn = d.len();
    Some(Shift {
        estimate: quantile_sorted(&d, 0.5)?,
        low: d[k - 1],
        high: d[mn - k],
        coverage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binom(n: usize, k: usize) -> f64 {
        (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
    }

    #[test]
    fn exact_distribution_small_cases() {
        // m = n = 2: U ∈ {0,1,2,2,3,4} over the C(4,2) = 6 arrangements.
        let c = exact_cdf(2, 2);
        let want = [1.0, 2.0, 4.0, 5.0, 6.0].map(|x| x / 6.0);
        for (a, b) in c.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{c:?}");
        }
        // P(U = 0) = 1 / C(m+n, m) for any sizes; the distribution is symmetric.
        for (m, n) in [(3, 5), (5, 5), (8, 12)] {
            let c = exact_cdf(m, n);
            assert_eq!(c.len(), m * n + 1);
            assert!((c[0] - 1.0 / binom(m + n, m)).abs() < 1e-15);
            assert!((c[m * n] - 1.0).abs() < 1e-12);
            let pmf = |u: usize| c[u] - if u == 0 { 0.0 } else { c[u - 1] };
            for u in 0..=m * n {
                assert!((pmf(u) - pmf(m * n - u)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn critical_ranks_match_the_tables() {
        // Two-sided 5 % critical values of U (reject when U ≤ c): m = n = 5: 2; 8: 13;
        // 10: 23; 5 and 10: 8. The interval's k is c + 1.
        assert_eq!(rank_k(5, 5, 0.95).unwrap().0, 3);
        assert_eq!(rank_k(8, 8, 0.95).unwrap().0, 14);
        assert_eq!(rank_k(10, 10, 0.95).unwrap().0, 24);
        assert_eq!(rank_k(5, 10, 0.95).unwrap().0, 9);
        // Three a side: no 95 % interval (P(U = 0) = 1/20 > 2.5 %).
        assert!(rank_k(3, 3, 0.95).is_none());
        let (_, cov) = rank_k(10, 10, 0.95).unwrap();
        assert!((0.95..0.97).contains(&cov), "{cov}");
    }

    #[test]
    fn normal_approximation_joins_the_exact_one() {
        // Where the exact distribution is still used, the approximation gives the same rank
        // within one.
        for (m, n) in [(20, 20), (30, 40), (50, 50)] {
            let ke = rank_k(m, n, 0.95).unwrap().0;
            let ka = normal_k(m, n, 0.95).unwrap();
            assert!(ke.abs_diff(ka) <= 1, "{m}×{n}: exact {ke}, normal {ka}");
        }
        assert!(rank_k(51, 50, 0.95).unwrap().0 > rank_k(50, 50, 0.95).unwrap().0);
        assert!((z_upper(0.025) - 1.959_964).abs() < 1e-5);
        assert!((z_upper(0.005) - 2.575_829).abs() < 1e-5);
    }

    #[test]
    fn shift_and_interval_survive_a_minority_of_slow_values() {
        // Side x at 0.0 ± small, y shifted by 0.22 (≈ +25 %); two of twelve values of each
        // side ran 2–6× slower (ln 0.7–1.8 more).
        let jitter = |i: usize| ((i * 7919) % 13) as f64 * 0.002 - 0.012;
        let mut x: Vec<f64> = (0..12).map(jitter).collect();
        let mut y: Vec<f64> = (0..12).map(|i| 0.22 + jitter(i + 3)).collect();
        x[3] += 1.8;
        x[9] += 0.7;
        y[5] += 1.1;
        y[0] += 0.9;
        let hl = hodges_lehmann(&x, &y).unwrap();
        assert!((hl - 0.22).abs() < 0.03, "{hl}");
        let sh = interval(&x, &y, 0.95).unwrap();
        assert_eq!(sh.estimate, hl);
        let (lo, hi) = (sh.low, sh.high);
        assert!(lo > 0.15 && hi < 0.3, "[{lo}, {hi}]");
    }

    #[test]
    fn no_shift_interval_covers_zero() {
        let x: Vec<f64> = (0..9).map(|i| (i as f64 * 0.37).sin() * 0.05).collect();
        let y: Vec<f64> = (0..9)
            .map(|i| (i as f64 * 0.91 + 1.0).sin() * 0.05)
            .collect();
        let sh = interval(&x, &y, 0.95).unwrap();
        let (lo, hi) = (sh.low, sh.high);
        assert!(lo < 0.0 && hi > 0.0, "[{lo}, {hi}]");
    }
}
