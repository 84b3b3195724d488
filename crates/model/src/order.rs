//! Orderings and categories shared by the Markdown pages (report) and the site: natural label
//! order, operation order within an instance, candidate category (with its page and ranking
//! orders).

use std::cmp::Ordering;

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

/// Rank of an operation key within an instance: keygen, enc, dec, sign, verify, exchange,
/// init_a, init_b, pass1 … pass16, derive_a, derive_b; hash keys after those by size; anything
/// else last, by name.
pub fn op_rank(opkey: &str) -> (u32, u64, String) {
    let fixed = [
        "keygen", "enc", "dec", "sign", "verify", "exchange", "init_a", "init_b",
    ];
    let base = match opkey {
        "encaps" => Some(1),
        "decaps" => Some(2),
        _ => fixed.iter().position(|o| *o == opkey).map(|p| p as u32),
    };
    if let Some(p) = base {
        return (p, 0, String::new());
    }
    if let Some(k) = opkey.strip_prefix("pass")
        && let Ok(k) = k.parse::<u32>()
    {
        return (8 + k, 0, String::new());
    }
    match opkey {
        "derive_a" => return (30, 0, String::new()),
        "derive_b" => return (31, 0, String::new()),
        _ => {}
    }
    if let Some(n) = opkey.strip_prefix("hash_")
        && let Ok(n) = n.parse::<u64>()
    {
        return (40, n, String::new());
    }
    if opkey == "hash" {
        return (40, 0, String::new());
    }
    (50, 0, opkey.to_string())
}

/// Category of a candidate, in the page order sign, kem, kex, hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Digital signature.
    Sign,
    /// Key encapsulation.
    Kem,
    /// Key exchange.
    Kex,
    /// Hash function.
    Hash,
}

impl Category {
    /// From the id prefix (`sign-02` → Sign); `None` for other ids.
    pub fn from_id(id: &str) -> Option<Category> {
        let prefix = id.split('-').next().unwrap_or("");
        match prefix {
            "sign" | "sig" => Some(Category::Sign),
            "kem" => Some(Category::Kem),
            "kex" => Some(Category::Kex),
            "hash" => Some(Category::Hash),
            _ => None,
        }
    }

    /// Lenient form for the site: an NGCC id prefix (`sign-09`) or a catalog type word (`sig`,
    /// `signature`, `kem`, …), any case.
    pub fn parse(word: &str) -> Option<Category> {
        let w = word.to_ascii_lowercase();
        let head = w.split('-').next().unwrap_or("");
        match head {
            "signature" => Some(Category::Sign),
            _ => Category::from_id(head),
        }
    }

    /// Section title on the ranking pages.
    pub fn title(self) -> &'static str {
        match self {
            Category::Sign => "Digital Signatures",
            Category::Kem => "Key Encapsulation",
            Category::Kex => "Key Exchange",
            Category::Hash => "Hash Functions",
        }
    }

    /// Timed operations in ranking-page order.
    pub fn ops(self) -> &'static [&'static str] {
        match self {
            Category::Sign => &["keygen", "sign", "verify"],
            Category::Kem => &["keygen", "enc", "dec"],
            Category::Kex => &["exchange"],
            Category::Hash => &["hash_32", "hash_1024", "hash_65536"],
        }
    }

    /// From a set of operation names (for ids without a category prefix).
    pub fn from_operations<'a>(ops: impl IntoIterator<Item = &'a str>) -> Option<Category> {
        let mut cat = None;
        for op in ops {
            let c = match op {
                "sign" | "verify" => Category::Sign,
                "enc" | "dec" | "encaps" | "decaps" => Category::Kem,
                "exchange" | "init_a" | "init_b" | "derive_a" | "derive_b" => Category::Kex,
                o if o == "hash" || o.starts_with("hash_") => Category::Hash,
                o if o.starts_with("pass") => Category::Kex,
                _ => continue,
            };
            cat = Some(c);
            break;
        }
        cat
    }

    /// Function text of the basic-information bullet.
    pub fn function(self) -> &'static str {
        match self {
            Category::Sign => "digital signature",
            Category::Kem => "key encapsulation",
            Category::Kex => "key exchange",
            Category::Hash => "hash",
        }
    }

    /// Category order on the survey page (hash, kem, kex, sign).
    pub fn survey_rank(self) -> u8 {
        match self {
            Category::Hash => 0,
            Category::Kem => 1,
            Category::Kex => 2,
            Category::Sign => 3,
        }
    }
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
