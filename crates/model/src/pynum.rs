//! Python-compatible number primitives every statistic builds on: CPython's `sum()` of floats
//! (Neumaier compensated summation, CPython ≥ 3.12, which wrote the reference data), true
//! int/int division, the median of an even count as the mean of the two middle values, and
//! the type-7 quantile of sorted data. Pure functions of numbers, no evidence type, so the
//! robust-estimate, statistics and environment-evidence modules all build on it.

/// CPython's `sum()` over floats (3.12+: Neumaier compensated summation), starting from the
/// integer 0 as `sum(xs)` does.
pub fn py_sum(xs: &[f64]) -> f64 {
    let mut iter = xs.iter();
    let Some(&first) = iter.next() else {
        return 0.0;
    };
    // 0 + x0 (int + float) is x0 (except that -0.0 becomes 0.0).
    let mut f = 0.0 + first;
    let mut c = 0.0f64;
    for &x in iter {
        let t = f + x;
        if f.abs() >= x.abs() {
            c += (f - t) + x;
        } else {
            c += (x - t) + f;
        }
        f = t;
    }
    if c != 0.0 && c.is_finite() {
        f += c;
    }
    f
}

/// Python `a / b` for non-negative integers (true division): the correctly rounded quotient
/// (round half to even), also when `a` or `b` exceed 2^53. `b` = 0 gives infinity (or NaN for
/// 0/0); callers check first, as Python would raise.
pub fn int_div(a: u128, b: u128) -> f64 {
    const EXACT: u128 = 1 << 53;
    if (a < EXACT && b < EXACT) || b == 0 || a == 0 {
        return a as f64 / b as f64;
    }
    let bits = |x: u128| 128 - x.leading_zeros() as i32;
    // Scale so that the integer quotient has 55 or 56 bits, then fold the remainder into a
    // sticky bit below the rounding position; the u128 → f64 conversion rounds half to even.
    let s = bits(b) - bits(a) + 55;
    let (num, den) = if s >= 0 {
        if bits(a) + s > 127 {
            return a as f64 / b as f64; // beyond u64-sized inputs: rounded inputs
        }
        (a << s, b)
    } else {
        (a, b << -s)
    };
    let q = num / den;
    let sticky = (num % den != 0) as u128;
    let f = (q | sticky) as f64;
    f * 2f64.powi(-s)
}

/// Median as Python computes it: middle value, or mean of the two middle values.
/// `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Type-7 quantile of sorted data (`p` in [0, 1]). `None` if empty.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_sum_compensates_like_cpython() {
        // CPython 3.12+: sum([0.1]*10) == 1.0 (naive left fold gives 0.9999999999999999).
        assert_eq!(py_sum(&[0.1; 10]), 1.0);
        assert_eq!(py_sum(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(py_sum(&[]), 0.0);
    }

    #[test]
    fn int_div_is_correctly_rounded_beyond_2_53() {
        assert_eq!(int_div(7, 2), 3.5);
        // (2^60 + 1) / 1 is not representable: ties to even gives 2^60.
        assert_eq!(int_div((1 << 60) + 1, 1), (1u64 << 60) as f64);
        // 2^54 + 3 → nearest representable (multiples of 4): 2^54 + 4.
        assert_eq!(int_div((1 << 54) + 3, 1), ((1u64 << 54) + 4) as f64);
        // Python: (10**17 + 1) / 3 == 3.3333333333333332e+16
        assert_eq!(
            int_div(100_000_000_000_000_001, 3),
            3.333_333_333_333_333_2e16
        );
        // Python: 12345678901234567891 / 1000 == 1.2345678901234568e+16
        assert_eq!(
            int_div(12_345_678_901_234_567_891, 1000),
            1.2345678901234568e16
        );
    }

    #[test]
    fn median_even_is_mean_of_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[]), None);
    }
}
