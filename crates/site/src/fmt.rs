//! Number formatting for the site's own tables (rankings, joint view, chart labels), following
//! the page rules of `method.md` §13.1: cycles as `k`/`M`/`G`, shares as percentages, byte
//! counts with thousands separators (`1,220 B`).

/// Cycles: `–` for none; `x/1e9` with 2 decimals + ` G`, `x/1e6` 2 decimals + ` M`,
/// `x/1e3` 1 decimal + ` k` from 10⁴ on, else an integer. Thresholds use the unrounded value.
pub fn cycles(x: Option<f64>) -> String {
    let Some(x) = x else {
        return "–".to_string();
    };
    if !x.is_finite() {
        return "–".to_string();
    }
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{:.0}", x)
    }
}

/// Share: `–` for none; 0 decimals from 9.5 % on, else 1 decimal.
pub fn pct(x: Option<f64>) -> String {
    match x {
        None => "–".to_string(),
        Some(x) if x >= 0.095 => format!("{:.0}%", x * 100.0),
        Some(x) => format!("{:.1}%", x * 100.0),
    }
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

/// A ratio with 2 decimals and `×`.
pub fn ratio(x: f64) -> String {
    format!("{x:.2}×")
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
    use super::*;

    #[test]
    fn cycles_follow_page_rules() {
        assert_eq!(cycles(Some(610_812.0)), "610.8 k");
        assert_eq!(cycles(Some(10_503_000.0)), "10.50 M");
        assert_eq!(cycles(Some(3.27e9)), "3.27 G");
        assert_eq!(cycles(Some(4068.0)), "4068");
        assert_eq!(cycles(Some(9_999.6)), "10000");
        assert_eq!(cycles(None), "–");
    }

    #[test]
    fn shares_bytes_ranks() {
        assert_eq!(pct(Some(0.88)), "88%");
        assert_eq!(pct(Some(0.09816)), "10%");
        assert_eq!(pct(Some(0.074)), "7.4%");
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
