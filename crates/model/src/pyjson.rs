//! Python-compatible JSON: the reference serialisation of every evidence file.
//!
//! The reference harness writes JSON with Python's `json.dumps(obj, indent=1)` followed by one
//! `"\n"`. [`to_string`] / [`value_to_string`] reproduce that byte for byte:
//!
//! * one space of indentation per level, `", "`-free layout (newline after each comma),
//!   `": "` between key and value, `{}` / `[]` for empty containers;
//! * keys in insertion order (serde_json is built with `preserve_order`);
//! * `ensure_ascii` escaping: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, every other
//!   character outside `' '..='~'` as `\uXXXX` (lower-case hex, UTF-16 surrogate pairs above
//!   U+FFFF);
//! * integers as integers, floats as Python `repr` ([`py_float_repr`]).
//!
//! [`parse`] reads JSON text into a [`Value`] keeping key order and the int/float distinction,
//! with errors that carry the file path, line and column.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ModelError;

/// Python `repr(float)`: the shortest decimal string that round-trips, in Python's layout.
///
/// Fixed notation when the decimal exponent `e` of the leading digit satisfies
/// `-5 < e < 16` (i.e. `1e-4 <= |x| < 1e16`), always with a fractional part (`4.0`,
/// `128838241389.0`); otherwise exponent notation with at least two exponent digits and an
/// explicit sign (`1.1630938684598989e-05`, `1e+16`, `5e-324`). Non-finite values give
/// `NaN`, `Infinity`, `-Infinity` (what `json.dumps` writes with its default `allow_nan`).
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-5", "1e16".
    let s = format!("{x:e}");
    let (mantissa, exp) = s.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut exp = exp;
    // Among the shortest digit strings that round-trip, Python (David Gay's dtoa, mode 0)
    // takes the one closest to the exact binary value, ties to even; Rust may break an exact
    // tie upwards (1.00864410400390625 → Rust ...063, Python ...062). Recompute that choice.
    if let Some((d, e)) = closest_digits(x.abs(), digits.len()) {
        let candidate = format!("{}.{}e{e}", &d[..1], &d[1..]);
        if candidate.parse::<f64>() == Ok(x.abs()) {
            digits = d;
            exp = e;
        }
    }
    // Python's decpt: value = 0.d1d2... × 10^decpt.
    let decpt = exp + 1;
    let mut out = String::with_capacity(digits.len() + 8);
    if neg {
        out.push('-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(out, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..(-decpt) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let d = decpt as usize;
        if digits.len() <= d {
            out.push_str(&digits);
            for _ in digits.len()..d {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..d]);
            out.push('.');
            out.push_str(&digits[d..]);
        }
    }
    out
}

/// The `n` significant decimal digits closest to the exact value of `x` (> 0, finite), ties to
/// even, with the decimal exponent of the first digit.
fn closest_digits(x: f64, n: usize) -> Option<(String, i32)> {
    if n == 0 {
        return None;
    }
    // Exact expansion: a double has at most 767 significant digits.
    let s = format!("{x:.1100e}");
    let (m, e) = s.split_once('e')?;
    let mut exp: i32 = e.parse().ok()?;
    let all: Vec<u8> = m.bytes().filter(|b| *b != b'.').collect();
    if all.len() <= n {
        return None;
    }
    let mut head: Vec<u8> = all[..n].to_vec();
    let next = all[n];
    let rest_nonzero = all[n + 1..].iter().any(|b| *b != b'0');
    let last_odd = (head[n - 1] - b'0') % 2 == 1;
    let up = next > b'5' || (next == b'5' && (rest_nonzero || last_odd));
    if up {
        let mut i = n;
        loop {
            if i == 0 {
                head.insert(0, b'1');
                head.truncate(n);
                exp += 1;
                break;
            }
            i -= 1;
            if head[i] == b'9' {
                head[i] = b'0';
            } else {
                head[i] += 1;
                break;
            }
        }
    }
    Some((String::from_utf8(head).ok()?, exp))
}

/// Append `s` as a JSON string literal with Python's `ensure_ascii` escaping.
pub fn write_py_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&py_float_repr(f));
    } else {
        // Only reachable with serde_json's arbitrary_precision; keep the text.
        out.push_str(&n.to_string());
    }
}

fn write_indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push(' ');
    }
}

fn write_value(out: &mut String, v: &Value, level: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_py_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_indent(out, level + 1);
                write_value(out, item, level + 1);
            }
            write_indent(out, level);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_indent(out, level + 1);
                write_py_string(out, k);
                out.push_str(": ");
                write_value(out, item, level + 1);
            }
            write_indent(out, level);
            out.push('}');
        }
    }
}

/// `json.dumps(value, indent=1) + "\n"`.
pub fn value_to_string(v: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, v, 0);
    out.push('\n');
    out
}

/// Serialise any evidence type as `json.dumps(obj, indent=1) + "\n"`.
pub fn to_string<T: Serialize + ?Sized>(obj: &T) -> Result<String, serde_json::Error> {
    Ok(value_to_string(&serde_json::to_value(obj)?))
}

/// Parse JSON text into a [`Value`] (key order and int/float kept). `path` only labels errors.
pub fn parse(path: &Path, text: &str) -> Result<Value, ModelError> {
    from_str(path, text)
}

/// Parse JSON text into an evidence type. Syntax errors carry `path:line:column`; type errors
/// carry the JSON path of the field (`processes[0].trials[1].seconds`) and, where it can be
/// found, the line and column of that field in the text.
pub fn from_str<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ModelError> {
    // Fast path: a plain parse. Field-path tracking costs about a quarter of the parse time
    // of a record, so it runs only to explain a failure (the second parse sees the same
    // text and fails at the same place).
    if let Ok(v) = serde_json::from_str::<T>(text) {
        return Ok(v);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let result: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = match result {
        Ok(v) => v,
        Err(e) => {
            let field = e.path().to_string();
            let inner = e.into_inner();
            return Err(ModelError::json(path, text, &field, inner));
        }
    };
    if let Err(e) = de.end() {
        return Err(ModelError::json(path, text, "", e));
    }
    Ok(value)
}

/// Read and parse a JSON evidence file.
pub fn read<T: DeserializeOwned>(path: &Path, shown_as: &Path) -> Result<T, ModelError> {
    let text = crate::limits::read_text(path, shown_as)?;
    from_str(shown_as, &text)
}

/// The JSON file at `path` as a [`Value`], if it can be read and parses; `None` otherwise
/// (a missing or half-written file is no evidence). The one such reader of the stages.
pub fn read_value(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    parse(path, &text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::excessive_precision)]
    fn float_repr_matches_python_examples() {
        let cases: &[(f64, &str)] = &[
            (0.035793789050000004, "0.035793789050000004"),
            (128838241389.0, "128838241389.0"),
            (1.1630938684598989e-05, "1.1630938684598989e-05"),
            (4.0, "4.0"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (1e-05, "1e-05"),
            (9.145442809457579e-05, "9.145442809457579e-05"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.5e16, "1.5e+16"),
            (1e22, "1e+22"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-0.0, "-0.0"),
            (-2.5, "-2.5"),
            (1.008_644_104_003_906_2, "1.0086441040039062"),
            (1.0086441040039063, "1.0086441040039062"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            (1e-4 * 0.999, "9.99e-05"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float_repr(*x), *want, "repr of {x:e}");
        }
    }

    #[test]
    fn strings_are_ascii_escaped_like_python() {
        let mut s = String::new();
        write_py_string(&mut s, "a\"b\\c\nd\te\u{1}µ–😀\u{7f}");
        assert_eq!(
            s,
            "\"a\\\"b\\\\c\\nd\\te\\u0001\\u00b5\\u2013\\ud83d\\ude00\\u007f\""
        );
    }

    #[test]
    fn layout_matches_json_dumps_indent_1() {
        let v: Value = serde_json::from_str(
            r#"{"b": 1, "a": [1.0, {"x": null, "y": true}], "e": {}, "f": [], "g": 2.5e-7}"#,
        )
        .unwrap();
        assert_eq!(
            value_to_string(&v),
            "{\n \"b\": 1,\n \"a\": [\n  1.0,\n  {\n   \"x\": null,\n   \"y\": true\n  }\n ],\n \"e\": {},\n \"f\": [],\n \"g\": 2.5e-07\n}\n"
        );
    }

    #[test]
    fn syntax_error_names_path_line_and_column() {
        let err = from_str::<Value>(Path::new("records/x.json"), "{\n \"a\": 1,\n \"b\": \n")
            .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("records/x.json:4:"), "{msg}");
    }
}
