//! Number formatting of every page and table (method.md §13.1): the Markdown pages (report)
//! and the site's own tables and charts. Reproduces Python's `%g`, `%.Nf` and the report's
//! unit rules exactly.
//!
//! Python formats floats with correct rounding of the exact binary value, ties to even on the
//! decimal expansion. Rust's `{:.N}` and `{:.Ne}` do the same (exact Dragon/Grisu modes), so
//! the `g` logic is built on top of `{:.Ne}`: the digits and the exponent come from the
//! correctly rounded scientific form, and the fixed/scientific choice and trailing-zero
//! stripping follow CPython's `format_float_short` for the `g` type without `#`.

/// The dash shown for a missing value (U+2013).
pub const DASH: &str = "–";

/// Python `'%.{prec}g' % x` (also `format(x, '.{prec}g')`), for finite and non-finite x.
pub fn fmt_g(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let p = prec.max(1);
    // Correctly rounded scientific form with p significant digits: "-d.ddde-5".
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci
        .split_once('e')
        .expect("scientific format has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if -4 <= exp && exp < p as i32 {
        // Fixed notation with p - 1 - exp decimals.
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let int_part = &digits[..int_len];
            let frac = digits[int_len..].trim_end_matches('0');
            out.push_str(int_part);
            if !frac.is_empty() {
                out.push('.');
                out.push_str(frac);
            }
        } else {
            let zeros = (-exp - 1) as usize;
            let frac = digits.trim_end_matches('0');
            if frac.is_empty() {
                // x rounds to zero only when x == 0, which has exp 0; keep the form anyway.
                out.push('0');
            } else {
                out.push_str("0.");
                out.push_str(&"0".repeat(zeros));
                out.push_str(frac);
            }
        }
    } else {
        let first = &digits[..1];
        let rest = digits[1..].trim_end_matches('0');
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    }
    out
}

/// Python `'%.{decimals}f' % x` (correctly rounded, ties to even on the exact value).
pub fn fmt_f(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format!("{:.*}", decimals, x)
}

/// Cycles with a unit suffix: `–` when missing or not finite; ≥ 10⁹ → `x.xx G`; ≥ 10⁶ →
/// `x.xx M`; ≥ 10⁴ → `x.x k`; else an integer. Thresholds use the unrounded value.
pub fn fmt_cycles(x: Option<f64>) -> String {
    match x {
        None => DASH.into(),
        Some(x) if !x.is_finite() => DASH.into(),
        Some(x) if x >= 1e9 => format!("{} G", fmt_f(x / 1e9, 2)),
        Some(x) if x >= 1e6 => format!("{} M", fmt_f(x / 1e6, 2)),
        Some(x) if x >= 1e4 => format!("{} k", fmt_f(x / 1e3, 1)),
        Some(x) => fmt_f(x, 0),
    }
}

/// Time in seconds: first unit among s, ms, µs, ns whose scaled value is ≥ 1, `%.3g`.
pub fn fmt_time(s: Option<f64>) -> String {
    let Some(s) = s else {
        return DASH.into();
    };
    for (factor, unit) in [(1.0, "s"), (1e3, "ms"), (1e6, "µs")] {
        let v = s * factor;
        if v >= 1.0 {
            return format!("{} {}", fmt_g(v, 3), unit);
        }
    }
    format!("{} ns", fmt_g(s * 1e9, 3))
}

/// Operations per second (or any 3-significant-digit `g` value): `%.3g`; `–` when missing.
pub fn fmt_ops(x: Option<f64>) -> String {
    match x {
        None => DASH.into(),
        Some(x) => fmt_g(x, 3),
    }
}

/// Operations per second as pqperf's own pages write them (never in reference form, whose
/// pages keep [`fmt_ops`]): a whole number with a thin space between thousands from 1 000 on
/// (`8 270`, `1 204 533`), three significant digits below (`457`, `12.3`, `0.0841`).
pub fn fmt_ops_plain(x: Option<f64>) -> String {
    match x {
        None => DASH.into(),
        Some(x) if !x.is_finite() => DASH.into(),
        Some(x) if x >= 999.5 => {
            let digits = format!("{:.0}", x);
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push('\u{2009}');
                }
                out.push(c);
            }
            out
        }
        Some(x) if x >= 99.95 => format!("{:.0}", x),
        Some(x) if x >= 9.995 => format!("{:.1}", x),
        Some(x) if x >= 0.9995 => format!("{:.2}", x),
        Some(x) => fmt_g(x, 3),
    }
}

/// Percent of a share: `–`; x ≥ 0.095 → 0 decimals; else 1 decimal; then `%`.
pub fn pct(x: Option<f64>) -> String {
    match x {
        None => DASH.into(),
        Some(x) if x >= 0.095 => format!("{}%", fmt_f(100.0 * x, 0)),
        Some(x) => format!("{}%", fmt_f(100.0 * x, 1)),
    }
}

/// Ratio to pseudoXOF: ` (r.rr×)`-style inner text `r.rr×`.
pub fn ratio(x: f64) -> String {
    format!("{}×", fmt_f(x, 2))
}

/// Message size: `n KiB` when a multiple of 1024 (and ≥ 1024), else `n B`.
pub fn size_text(n: u64) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

/// Memory: bytes // 1024 + ` KiB`; `–` when missing.
pub fn kib(bytes: Option<u64>) -> String {
    match bytes {
        None => DASH.into(),
        Some(b) => format!("{} KiB", b / 1024),
    }
}

/// KAT digest prefix: the first 16 hex characters followed by `…` (U+2026).
pub fn digest_prefix(hex: &str) -> String {
    let n = hex
        .char_indices()
        .nth(16)
        .map(|(i, _)| i)
        .unwrap_or(hex.len());
    format!("{}…", &hex[..n])
}

/// Python `str(float)` for the few places the pages print a float as Python would
/// (e.g. `trial_target_s` = `1.0`, `0.5`): shortest round-trip repr, `.0` for integral values,
/// exponent form outside 1e-4 ≤ |x| < 1e16.
pub fn py_float_str(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Python 3's str(float) is repr(float), which the model implements for JSON (including
    // the choice among shortest digit strings on exact ties).
    crate::pyjson::py_float_repr(x)
}

/// An integer with `,` thousands separators: `1,220`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A compact axis label for a power of ten or a plain value: `1k`, `10M`, `1G`, `100`.
pub fn axis(x: f64) -> String {
    let (v, suffix) = if x >= 1e9 {
        (x / 1e9, "G")
    } else if x >= 1e6 {
        (x / 1e6, "M")
    } else if x >= 1e3 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    let mut s = format!("{v:.1}");
    if s.ends_with(".0") {
        s.truncate(s.len() - 2);
    }
    s + suffix
}

/// Mean rank with one decimal (`9.2`); whole ranks keep `.0` like the published pages.
pub fn mean_rank(x: f64) -> String {
    format!("{x:.1}")
}

/// A metric rank: integers bare (`11`), averaged ties with their fraction (`11.5`).
pub fn rank(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ops_plain_has_no_exponent() {
        use super::fmt_ops_plain;
        assert_eq!(fmt_ops_plain(Some(8270.4)), "8\u{2009}270");
        assert_eq!(fmt_ops_plain(Some(1_204_533.0)), "1\u{2009}204\u{2009}533");
        assert_eq!(fmt_ops_plain(Some(457.2)), "457");
        assert_eq!(fmt_ops_plain(Some(12.34)), "12.3");
        assert_eq!(fmt_ops_plain(Some(1.5)), "1.50");
        assert_eq!(fmt_ops_plain(None), super::DASH);
    }

    use super::*;

    #[test]
    fn spec_examples_cycles() {
        assert_eq!(fmt_cycles(Some(96.51e6)), "96.51 M");
        assert_eq!(fmt_cycles(Some(3.27e9)), "3.27 G");
        assert_eq!(fmt_cycles(Some(792_100.0)), "792.1 k");
        assert_eq!(fmt_cycles(Some(12_000.0)), "12.0 k");
        assert_eq!(fmt_cycles(Some(4068.0)), "4068");
        assert_eq!(fmt_cycles(Some(317.0)), "317");
        assert_eq!(fmt_cycles(Some(9999.6)), "10000");
        assert_eq!(fmt_cycles(Some(999_999.97)), "1000.0 k");
        assert_eq!(fmt_cycles(Some(610_812.0)), "610.8 k");
        assert_eq!(fmt_cycles(Some(10_503_000.0)), "10.50 M");
        assert_eq!(fmt_cycles(Some(48.2e9)), "48.20 G");
        assert_eq!(fmt_cycles(None), "–");
    }

    #[test]
    fn spec_examples_time_ops_pct() {
        assert_eq!(fmt_time(Some(822e-6)), "822 µs");
        assert_eq!(fmt_time(Some(5.01e-3)), "5.01 ms");
        assert_eq!(fmt_time(Some(0.0010004)), "1 ms");
        assert_eq!(fmt_time(Some(50.2e-9)), "50.2 ns");
        assert_eq!(fmt_time(Some(1.08)), "1.08 s");
        assert_eq!(fmt_time(Some(315.0)), "315 s");
        assert_eq!(fmt_time(Some(999.7e-6)), "1e+03 µs");
        assert_eq!(fmt_time(Some(2.92e-4)), "292 µs");
        assert_eq!(fmt_time(Some(0.4e-9)), "0.4 ns");
        assert_eq!(fmt_ops(Some(3431.0)), "3.43e+03");
        assert_eq!(fmt_ops(Some(199.4)), "199");
        assert_eq!(fmt_ops(Some(1000.4)), "1e+03");
        assert_eq!(fmt_ops(Some(1100.0)), "1.1e+03");
        assert_eq!(fmt_ops(Some(0.928)), "0.928");
        assert_eq!(fmt_ops(Some(1.99e7)), "1.99e+07");
        assert_eq!(pct(Some(0.074)), "7.4%");
        assert_eq!(pct(Some(0.0004)), "0.0%");
        assert_eq!(pct(Some(0.09816)), "10%");
        assert_eq!(pct(Some(0.092)), "9.2%");
        assert_eq!(pct(Some(0.64)), "64%");
        assert_eq!(pct(None), "–");
    }

    #[test]
    fn small_helpers() {
        assert_eq!(size_text(32), "32 B");
        assert_eq!(size_text(1024), "1 KiB");
        assert_eq!(size_text(65536), "64 KiB");
        assert_eq!(size_text(1000), "1000 B");
        assert_eq!(kib(Some(1_896_447)), "1851 KiB");
        assert_eq!(ratio(0.6789), "0.68×");
        assert_eq!(
            digest_prefix("7484d9731dcb0814aaaaaaaaaaaa"),
            "7484d9731dcb0814…"
        );
        assert_eq!(py_float_str(1.0), "1.0");
        assert_eq!(py_float_str(0.5), "0.5");
        assert_eq!(py_float_str(9.145442809457579e-05), "9.145442809457579e-05");
        assert_eq!(py_float_str(848720276707.0), "848720276707.0");
        assert_eq!(py_float_str(1e16), "1e+16");
        assert_eq!(fmt_g(0.0, 3), "0");
        assert_eq!(fmt_g(-0.0, 3), "-0");
        assert_eq!(fmt_g(0.0001234, 3), "0.000123");
        assert_eq!(fmt_g(1e-5, 3), "1e-05");
    }

    #[test]
    fn site_tables() {
        assert_eq!(fmt_cycles(Some(f64::NAN)), "–");
        assert_eq!(thousands(1220), "1,220");
        assert_eq!(thousands(7002), "7,002");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(rank(11.0), "11");
        assert_eq!(rank(11.5), "11.5");
        assert_eq!(mean_rank(9.25), "9.2");
        assert_eq!(axis(1e6), "1M");
        assert_eq!(axis(2.5e3), "2.5k");
    }
}
