//! Paired statistics of an interleaved A/B measurement: the seeded schedule of pairs, and
//! the ratio from the paired log-ratios with a distribution-free interval.
//!
//! * **Schedule**: rounds of one pair per unit; within a round the units come in a seeded
//!   random order, and each unit's pairs are half `AB`, half `BA` (one more `AB` for an odd
//!   count), shuffled. So slow drifts of the machine fall on both sides alike, and which side
//!   runs first (warm caches, frequency) does not favour either. SplitMix64 from the seed,
//!   Fisher–Yates with `index = ⌊r·n / 2⁶⁴⌋` (`pqperf_model::robust::SplitMix64`).
//! * **Ratio**: exp(median of the pairs' ln(B/A)).
//! * **Interval**: the sign-test interval of the median, `[x₍ₖ₎, x₍ₙ₋ₖ₊₁₎]` of the sorted
//!   log-ratios with the largest `k` for which `P(Bin(n, ½) < k) ≤ (1 − confidence)/2`; it
//!   assumes nothing about the noise's distribution (preemption tails, bimodal caches), only
//!   that pairs are independent. Its coverage is binomial and reported. Below 6 pairs no
//!   95 % interval of this kind exists.

use pqperf_model::pynum::quantile_sorted;
use pqperf_model::robust::SplitMix64;

/// One scheduled pair: which unit, its pair number, and whether A runs first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Unit index.
    pub unit: usize,
    /// Pair number of that unit (0-based).
    pub pair: usize,
    /// A runs first (`AB`), else B (`BA`).
    pub a_first: bool,
}

fn shuffle<T>(v: &mut [T], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = rng.index(i + 1);
        v.swap(i, j);
    }
}

/// The measurement order of `pairs` pairs of each of `units` units, from `seed` (one look:
/// [`schedule_looks`] with `[pairs]`).
pub fn schedule(seed: u64, units: usize, pairs: usize) -> Vec<Slot> {
    schedule_looks(seed, units, &[pairs])
}

/// The measurement order of a sequential design whose units are judged after `looks[0]`,
/// `looks[1]`, … pairs (increasing; the last is the most pairs a unit gets): rounds of one
/// pair per unit in shuffled unit order, and each unit's AB/BA orders shuffled within each
/// block between two looks, so a unit that stops at a look has as many AB as BA pairs (one
/// more AB when the block is odd).
pub fn schedule_looks(seed: u64, units: usize, looks: &[usize]) -> Vec<Slot> {
    let mut rng = SplitMix64::new(seed);
    let pairs = looks.last().copied().unwrap_or(0);
    let orders: Vec<Vec<bool>> = (0..units)
        .map(|_| {
            let mut o = Vec::with_capacity(pairs);
            let mut from = 0;
            for &to in looks {
                let mut block: Vec<bool> =
                    (from..to.max(from)).map(|i| (i - from) % 2 == 0).collect();
                shuffle(&mut block, &mut rng);
                o.extend(block);
                from = to.max(from);
            }
            o
        })
        .collect();
    let mut out = Vec::with_capacity(units * pairs);
    for pair in 0..pairs {
        let mut round: Vec<usize> = (0..units).collect();
        shuffle(&mut round, &mut rng);
        for unit in round {
            out.push(Slot {
                unit,
                pair,
                a_first: orders[unit].get(pair).copied().unwrap_or(true),
            });
        }
    }
    out
}

/// The looks of a sequential design from `first` to `most` pairs: `first`, then doubling,
/// and `most` last (`[first]` when `most <= first`).
pub fn looks(first: usize, most: usize) -> Vec<usize> {
    let mut v = vec![first];
    let mut n = first;
    while most > n {
        n = (n * 2).min(most);
        v.push(n);
    }
    v
}

/// The confidence of each of `looks` intervals so that the chance of any look calling a
/// change that is not there stays within `1 − confidence` (Bonferroni: valid whatever the
/// looks' dependence).
pub fn look_confidence(confidence: f64, looks: usize) -> f64 {
    1.0 - (1.0 - confidence) / looks.max(1) as f64
}

/// P(Bin(n, ½) ≤ k).
fn binom_cdf_half(n: usize, k: usize) -> f64 {
    let mut c = 1.0f64; // C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The paired summary of a list of log-ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// Pairs used.
    pub n: usize,
    /// Median log-ratio.
    pub median: f64,
    /// The sign-test interval of the median (log-ratios) and its coverage, when there is one.
    pub interval: Option<(f64, f64, f64)>,
}

/// Median and sign-test interval at `confidence` of `x` (log-ratios; non-finite values are
/// dropped). `None` when empty.
pub fn paired(x: &[f64], confidence: f64) -> Option<Paired> {
    let mut v: Vec<f64> = x.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let alpha2 = (1.0 - confidence) / 2.0;
    // Largest k ≥ 1 with P(Bin ≤ k−1) ≤ α/2.
    let mut k = 0;
    while k < n / 2 && binom_cdf_half(n, k) <= alpha2 {
        k += 1;
    }
    let interval = (k >= 1).then(|| {
        let tail = binom_cdf_half(n, k - 1);
        (v[k - 1], v[n - k], 1.0 - 2.0 * tail)
    });
    Some(Paired {
        n,
        median: quantile_sorted(&v, 0.5)?,
        interval,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_double_up_to_the_most_and_split_the_error() {
        assert_eq!(looks(10, 40), vec![10, 20, 40]);
        assert_eq!(looks(10, 30), vec![10, 20, 30]);
        assert_eq!(looks(10, 10), vec![10]);
        assert_eq!(looks(10, 6), vec![10]);
        assert!((look_confidence(0.95, 3) - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
        assert_eq!(look_confidence(0.95, 1), 0.95);
    }

    #[test]
    fn a_unit_stopping_at_a_look_has_balanced_orders() {
        let l = looks(10, 40);
        let s = schedule_looks(7, 3, &l);
        assert_eq!(s.len(), 3 * 40);
        for unit in 0..3 {
            let o: Vec<bool> = s
                .iter()
                .filter(|x| x.unit == unit)
                .map(|x| x.a_first)
                .collect();
            for &n in &l {
                let ab = o[..n].iter().filter(|a| **a).count();
                assert_eq!(ab * 2, n, "unit {unit}, first {n} pairs: {ab} AB");
            }
        }
        // One look is the fixed design, slot for slot.
        assert_eq!(schedule_looks(7, 3, &[10]), schedule(7, 3, 10));
    }

    #[test]
    fn schedule_is_seeded_balanced_and_complete() {
        let s = schedule(42, 3, 10);
        assert_eq!(s, schedule(42, 3, 10), "same seed, same order");
        assert_ne!(s, schedule(43, 3, 10), "another seed, another order");
        assert_eq!(s.len(), 30);
        for u in 0..3 {
            let mine: Vec<&Slot> = s.iter().filter(|x| x.unit == u).collect();
            // Every pair once, in pair order.
            assert_eq!(
                mine.iter().map(|x| x.pair).collect::<Vec<_>>(),
                (0..10).collect::<Vec<_>>()
            );
            // Half AB, half BA.
            assert_eq!(mine.iter().filter(|x| x.a_first).count(), 5);
        }
        // Each round holds one pair of every unit.
        for r in 0..10 {
            let mut units: Vec<usize> = s[r * 3..r * 3 + 3].iter().map(|x| x.unit).collect();
            units.sort();
            assert_eq!(units, vec![0, 1, 2]);
            assert!(s[r * 3..r * 3 + 3].iter().all(|x| x.pair == r));
        }
        // The orders are not simply alternating for every seed tried.
        let any_shuffled = (0..20u64).any(|seed| {
            let o: Vec<bool> = schedule(seed, 1, 8).iter().map(|x| x.a_first).collect();
            o != [true, false, true, false, true, false, true, false]
        });
        assert!(any_shuffled);
        // Odd count: one more AB.
        assert_eq!(schedule(1, 1, 7).iter().filter(|x| x.a_first).count(), 4);
    }

    #[test]
    fn sign_test_interval() {
        assert!((binom_cdf_half(10, 1) - 11.0 / 1024.0).abs() < 1e-15);
        // n = 10: k = 2 (P(Bin ≤ 1) = 0.0107 ≤ 0.025 < P(Bin ≤ 2) = 0.0547).
        let x: Vec<f64> = (1..=10).map(|i| i as f64 / 100.0).collect();
        let p = paired(&x, 0.95).unwrap();
        assert_eq!(p.n, 10);
        assert!((p.median - 0.055).abs() < 1e-12);
        let (lo, hi, cov) = p.interval.unwrap();
        assert_eq!((lo, hi), (0.02, 0.09));
        assert!((cov - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        // n = 6 is the smallest with a 95 % interval (the extremes, coverage 31/32).
        let p = paired(&x[..6], 0.95).unwrap();
        assert_eq!(p.interval, Some((0.01, 0.06, 1.0 - 2.0 / 64.0)));
        assert_eq!(paired(&x[..5], 0.95).unwrap().interval, None);
        // Order does not matter; non-finite values are dropped.
        let mut y = x.clone();
        y.reverse();
        y.push(f64::NAN);
        assert_eq!(paired(&y, 0.95), paired(&x, 0.95));
        assert_eq!(paired(&[], 0.95), None);
    }
}
