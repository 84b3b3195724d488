//! Orderings shared by the Markdown pages (report) and the site: natural label order; the
//! operation order within an instance and the candidate category are the vocabulary's
//! ([`crate::vocab`]), re-exported here.

use std::cmp::Ordering;

pub use crate::vocab::{Category, op_rank};

/// One run of a natural-sort key: text runs and digit runs alternate, text first (as Python's
/// `re.split(r"(\d+)", s)`), digit runs compare as integers.
#[derive(Debug, PartialEq, Eq)]
enum Part<'a> {
    Text(&'a str),
    Num(&'a str),
}

fn parts(s: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            out.push(Part::Text(&s[start..i]));
            let d = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Part::Num(&s[d..i]));
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(Part::Text(&s[start..]));
    out
}

fn cmp_num(a: &str, b: &str) -> Ordering {
    let a = a.trim_start_matches('0');
    let b = b.trim_start_matches('0');
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// Natural order of labels: digit runs compare as integers, other runs as strings.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let pa = parts(a);
    let pb = parts(b);
    for (x, y) in pa.iter().zip(pb.iter()) {
        let o = match (x, y) {
            (Part::Text(x), Part::Text(y)) => x.cmp(y),
            (Part::Num(x), Part::Num(y)) => cmp_num(x, y),
            // Positions alternate identically in both keys, so mixed pairs cannot occur.
            (Part::Text(_), Part::Num(_)) => Ordering::Less,
            (Part::Num(_), Part::Text(_)) => Ordering::Greater,
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

/// Sort labels naturally (stable).
pub fn sort_natural(labels: &mut [String]) {
    labels.sort_by(|a, b| natural_cmp(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v: Vec<String> = ["BiT-512", "BiT-128-avx2", "BiT-128", "BiT-256", "x10", "x9"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        sort_natural(&mut v);
        assert_eq!(
            v,
            ["BiT-128", "BiT-128-avx2", "BiT-256", "BiT-512", "x9", "x10"]
        );
        assert_eq!(natural_cmp("DARTS128", "DARTS1024"), Ordering::Less);
        assert_eq!(natural_cmp("a", "a1"), Ordering::Less);
    }

    #[test]
    fn operation_order() {
        let mut ops = vec![
            "verify",
            "hash_1024",
            "derive_b",
            "pass2",
            "keygen",
            "hash_32",
            "pass10",
            "sign",
            "exchange",
            "dec",
            "enc",
        ];
        ops.sort_by_key(|o| op_rank(o));
        assert_eq!(
            ops,
            [
                "keygen",
                "enc",
                "dec",
                "sign",
                "verify",
                "exchange",
                "pass2",
                "pass10",
                "derive_b",
                "hash_32",
                "hash_1024"
            ]
        );
    }
}
