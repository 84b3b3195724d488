//! Property tests: our `%g` / `%.Nf` / `str(float)` against Python itself (python3 must be on
//! PATH, as on every developer machine and CI).

use pqperf_model::fmt::{fmt_f, fmt_g, py_float_str};
use proptest::prelude::*;
use std::process::Command;

/// Ask python3 for `'%.{p}g' % x`, `'%.{d}f' % x` and `str(x)` for every value, one line each.
fn python_reference(values: &[f64]) -> Vec<String> {
    let input: String = values.iter().map(|v| format!("{v:?}\n")).collect();
    let script = r#"
import sys
for line in sys.stdin.read().split():
    x = float(line)
    print('|'.join(['%.1g' % x, '%.2g' % x, '%.3g' % x, '%.6g' % x,
                    '%.0f' % x, '%.1f' % x, '%.2f' % x, str(x)]))
"#;
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed for the formatting property tests");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ours(x: f64) -> String {
    [
        fmt_g(x, 1),
        fmt_g(x, 2),
        fmt_g(x, 3),
        fmt_g(x, 6),
        fmt_f(x, 0),
        fmt_f(x, 1),
        fmt_f(x, 2),
        py_float_str(x),
    ]
    .join("|")
}

fn check(values: Vec<f64>) {
    let reference = python_reference(&values);
    assert_eq!(reference.len(), values.len());
    for (x, want) in values.iter().zip(reference) {
        assert_eq!(ours(*x), want, "value {x:?}");
    }
}

/// Values that exercise rounding: arbitrary doubles, decimal-looking values near the unit and
/// exponent thresholds, and exact binary ties (k + 1/2, k/8 …) where half-even matters.
fn interesting() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (1u64..100_000_000, -12i32..12).prop_map(|(m, e)| m as f64 * 10f64.powi(e)),
        (0u64..1_000_000, 0u32..6).prop_map(|(k, s)| (2 * k + 1) as f64 / (1u64 << (s + 1)) as f64),
        (-1_000_000i64..1_000_000).prop_map(|k| k as f64 + 0.5),
        (0.0f64..2.0, -10i32..12).prop_map(|(m, e)| m * 10f64.powi(e)),
        (9950u64..10050, -8i32..8).prop_map(|(m, e)| m as f64 * 10f64.powi(e - 4)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn matches_python(values in proptest::collection::vec(interesting(), 400)) {
        check(values);
    }
}

#[test]
fn fixed_edge_values_match_python() {
    check(vec![
        0.0,
        -0.0,
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        999.5,
        9995.0,
        999.7,
        1000.4,
        9.5,
        0.095,
        9.999e-5,
        1e-4,
        0.0001,
        1e16,
        1e15,
        123456789.0,
        5e-324,
        1.7976931348623157e308,
        0.30000000000000004,
        2.675,
        1.005,
        // Exact binary ties between two shortest repr candidates (Python keeps the even one;
        // found by the proptest above).
        3113633765811281.0 / 4.0, // 778408441452820.25
        132205.0 / 131072.0,      // 1.00864410400390625
        0.045,
        99.95,
        999.95,
        9.816,
    ]);
}
