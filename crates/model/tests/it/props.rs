//! Property tests of the Python-compatible JSON writer, float repr and the side-CSV format.

use std::path::Path;

use pqperf_model::pyjson::{self, py_float_repr};
use pqperf_model::sidecsv::{CsvRow, CsvTable};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn any_finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (-1e6f64..1e6),
        (1e-6f64..1e-3),
        (1e15f64..1e17),
        (0u64..1u64 << 53).prop_map(|i| i as f64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn float_repr_round_trips_and_uses_python_layout(x in any_finite()) {
        let s = py_float_repr(x);
        prop_assert_eq!(s.parse::<f64>().unwrap(), x, "{}", s);
        let a = x.abs();
        let exponent_form = s.contains('e');
        prop_assert_eq!(exponent_form, a != 0.0 && !(1e-4..1e16).contains(&a), "{}", s);
        if exponent_form {
            let (m, e) = s.split_once('e').unwrap();
            prop_assert!(e.starts_with('-') || e.starts_with('+'), "{}", s);
            prop_assert!(e.len() >= 3, "{}", s);
            prop_assert!(!m.ends_with(".0") && !m.ends_with('.'), "{}", s);
        } else {
            prop_assert!(s.contains('.') && !s.ends_with('.'), "{}", s);
        }
        // Shortest: same number of significant digits as Rust's shortest round-trip form.
        let rust = format!("{:e}", a);
        let rust_digits = rust.split('e').next().unwrap().replace('.', "").len();
        let ours: String = s.split('e').next().unwrap().chars().filter(|c| c.is_ascii_digit()).collect();
        let ours = ours.trim_start_matches('0');
        let ours = if exponent_form { ours } else { ours.trim_end_matches('0') };
        prop_assert!(ours.len() <= rust_digits.max(1), "{} vs {}", s, rust);
    }

    #[test]
    fn json_values_round_trip(v in json_value()) {
        let text = pyjson::value_to_string(&v);
        let back: Value = pyjson::from_str(Path::new("p.json"), &text).unwrap();
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(pyjson::value_to_string(&back), text.clone());
        prop_assert!(text.is_ascii());
    }

    #[test]
    fn csv_tables_round_trip(t in csv_table()) {
        let text = t.to_text();
        let back = CsvTable::parse(Path::new("t.csv"), &text).unwrap();
        prop_assert_eq!(&back.header, &t.header);
        prop_assert_eq!(&back.comments, &t.comments);
        let fields: Vec<_> = back.rows.iter().map(|r| r.fields.clone()).collect();
        let want: Vec<_> = t.rows.iter().map(|r| r.fields.clone()).collect();
        prop_assert_eq!(fields, want);
        prop_assert_eq!(back.to_text(), text.clone());
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any_finite().prop_map(Value::from),
        ".*".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".*", inner), 0..6).prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(k, v);
                }
                Value::Object(m)
            }),
        ]
    })
}

fn field() -> impl Strategy<Value = String> {
    // Fields may hold the delimiter, quotes and newlines; a leading '#' or an empty first
    // field of a one-field row would change the row's meaning, so rows start with an id.
    "[a-zA-Z0-9 ;\"`é\n_.-]{0,12}"
}

fn csv_table() -> impl Strategy<Value = CsvTable> {
    (1usize..5).prop_flat_map(|ncols| {
        (
            prop::collection::vec("# [a-z ;]{0,10}", 0..3),
            prop::collection::vec("[A-Za-z]{1,8}", ncols),
            prop::collection::vec(
                (
                    "[a-z]{1,3}-[0-9]{2}",
                    prop::collection::vec(field(), ncols - 1),
                ),
                0..6,
            ),
        )
            .prop_map(|(comments, header, rows)| CsvTable {
                comments,
                header,
                rows: rows
                    .into_iter()
                    .map(|(id, mut rest)| {
                        rest.insert(0, id);
                        CsvRow {
                            fields: rest,
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            })
    })
}

/// Compare float repr with the real Python (`python3`, installed by scripts/setup.sh) on many
/// values; a missing python3 fails the test with a message saying so.
#[test]
fn float_repr_equals_cpython_repr() {
    let out = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .expect("python3 is needed to compare float repr with CPython (scripts/setup.sh)");
    assert!(out.status.success());
    let mut xs: Vec<f64> = vec![
        1.008_644_104_003_906_2,
        1e16,
        9999999999999998.0,
        1e-4,
        0.0001234,
        5e-324,
    ];
    let mut state = 0x9E3779B97F4A7C15u64;
    for i in 0..20000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = match i % 4 {
            0 => f64::from_bits(state),
            1 => (state >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((i % 40) - 20),
            2 => ((state >> 40) as f64) / 1024.0,
            _ => (state % 1_000_000_000) as f64 / 1e9 + (i % 7) as f64,
        };
        if x.is_finite() {
            xs.push(x);
        }
    }
    let input: String = xs.iter().map(|x| format!("{}\n", x.to_bits())).collect();
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("bits.txt");
    std::fs::write(&inp, input).unwrap();
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg("import struct,sys\nfor l in open(sys.argv[1]):\n print(repr(struct.unpack('<d', struct.pack('<Q', int(l)))[0]))")
        .arg(&inp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut bad = 0;
    for (x, want) in xs.iter().zip(text.lines()) {
        let got = py_float_repr(*x);
        if got != want {
            bad += 1;
            eprintln!("repr mismatch: ours {got}, python {want}");
        }
    }
    assert_eq!(text.lines().count(), xs.len());
    assert_eq!(
        bad,
        0,
        "{bad} of {} floats differ from CPython repr",
        xs.len()
    );
}
