//! The shared vocabulary of pqperf, one home for each word the stages and pages agree on:
//!
//! - [`Category`]: a candidate's category (`sign`, `kem`, `kex`, `hash`): its catalog and id
//!   words, its page titles, and the operations measured, profiled and shown for it;
//! - [`Operation`]: one timed operation, with its record key (the record file's stem), the
//!   driver call it runs, its input size, and its order within an instance; the per-call KEX
//!   steps ([`Operation::kex_steps`]) and the hash input sizes ([`HASH_SIZES`],
//!   [`PAGE_HASH_SIZES`]);
//! - [`Counter`]: the timing counter a measurement was taken with, as named in the evidence
//!   (`cycles`, `tsc`, `cntvct_el0`, …), with its display name, unit and page sentence.
//!
//! The serde forms are the evidence strings (`"sign"`, `"cycles"`); a counter name read from
//! evidence that the model does not know is kept as recorded ([`Counter::Other`]), never
//! refused and never a panic.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Input sizes (bytes) of the measured hash operations (`hash_32` … `hash_65536`).
pub const HASH_SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];

/// The hash input sizes the summary and ranking pages show.
pub const PAGE_HASH_SIZES: [u64; 3] = [32, 1024, 65536];

/// Category of a candidate, as in the candidate id prefix and the catalog's `type`; the
/// variant order is the page order sign, kem, kex, hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Digital signature (`sign-NN`).
    Sign,
    /// Key encapsulation (`kem-NN`).
    Kem,
    /// Key exchange (`kex-NN`).
    Kex,
    /// Hash function (`hash-NN`).
    Hash,
}

impl Category {
    /// All categories in page order.
    pub const ALL: [Category; 4] = [Category::Sign, Category::Kem, Category::Kex, Category::Hash];

    /// The id prefix / catalog word (`sign`, `kem`, `kex`, `hash`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Sign => "sign",
            Category::Kem => "kem",
            Category::Kex => "kex",
            Category::Hash => "hash",
        }
    }

    /// The word used by the reference KAT logs and metadata (`sig`, `kem`, `kex`, `hash`).
    pub fn meta_word(self) -> &'static str {
        match self {
            Category::Sign => "sig",
            other => other.as_str(),
        }
    }

    /// The ICCS header name of this category (`SIG_AlgorithmInstance.h`, …).
    pub fn iccs_header(self) -> &'static str {
        match self {
            Category::Sign => "SIG_AlgorithmInstance.h",
            Category::Kem => "KEM_AlgorithmInstance.h",
            Category::Kex => "KEX_AlgorithmInstance.h",
            Category::Hash => "CryptHash_AlgorithmInstance.h",
        }
    }

    /// Exactly one of the id-prefix words [`Category::as_str`] gives; `None` otherwise.
    pub fn from_name(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// A type word (`sign`/`sig`/`signature`, `kem`, `kex`, `hash`).
    pub fn from_word(s: &str) -> Option<Category> {
        match s {
            "sig" | "signature" => Some(Category::Sign),
            _ => Category::from_name(s),
        }
    }

    /// From the id prefix (`sign-02` → Sign, `sig-…` too); `None` for other ids.
    pub fn from_id(id: &str) -> Option<Category> {
        match id.split('-').next().unwrap_or("") {
            "sig" => Some(Category::Sign),
            prefix => Category::from_name(prefix),
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

    /// Section title on the summary page.
    pub fn summary_title(self) -> &'static str {
        match self {
            Category::Sign => "Digital signatures",
            Category::Kem => "Key encapsulation",
            Category::Kex => "Key exchange",
            Category::Hash => "Hash functions",
        }
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

    /// The operations measured for every instance of the category (method §2.8), in order;
    /// a key exchange adds its per-call steps ([`Operation::kex_steps`]) once calibrated.
    pub fn operations(self) -> Vec<Operation> {
        match self {
            Category::Sign => vec![Operation::Keygen, Operation::Sign, Operation::Verify],
            Category::Kem => vec![Operation::Keygen, Operation::Enc, Operation::Dec],
            Category::Kex => vec![Operation::Exchange],
            Category::Hash => HASH_SIZES.into_iter().map(Operation::Hash).collect(),
        }
    }

    /// The operations the symmetric-primitive profile runs (a key exchange: only `exchange`;
    /// a hash: none).
    pub fn profiled(self) -> Vec<Operation> {
        match self {
            Category::Hash => Vec::new(),
            other => other.operations(),
        }
    }

    /// The operation keys the summary and ranking pages show, in page order.
    pub fn ops(self) -> &'static [&'static str] {
        match self {
            Category::Sign => &["keygen", "sign", "verify"],
            Category::Kem => &["keygen", "enc", "dec"],
            Category::Kex => &["exchange"],
            Category::Hash => &["hash_32", "hash_1024", "hash_65536"],
        }
    }

    /// From a set of operation keys (for ids without a category prefix): the category of the
    /// first key that names one.
    pub fn from_operations<'a>(ops: impl IntoIterator<Item = &'a str>) -> Option<Category> {
        ops.into_iter().find_map(|o| match Operation::parse(o) {
            Some(op) => op.category(),
            // Keys the model cannot size or number still name their category.
            None if o == "hash" || o.starts_with("hash_") => Some(Category::Hash),
            None if o.starts_with("pass") => Some(Category::Kex),
            None => None,
        })
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One timed operation of an instance, as keyed in the records (`keygen`, `enc`, `pass2`,
/// `hash_1024`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Key generation (`keygen`).
    Keygen,
    /// Encapsulation (`enc`; the NIST API's `encaps` reads as this).
    Enc,
    /// Decapsulation (`dec`; `decaps` reads as this).
    Dec,
    /// Signing (`sign`).
    Sign,
    /// Verification (`verify`).
    Verify,
    /// A whole key exchange (`exchange`).
    Exchange,
    /// KEX step: party A's first message (`init_a`).
    InitA,
    /// KEX step: party B's first message (`init_b`).
    InitB,
    /// KEX step: the k-th intermediate pass (`pass<k>`).
    Pass(u32),
    /// KEX step: party A derives the shared key (`derive_a`).
    DeriveA,
    /// KEX step: party B derives the shared key (`derive_b`).
    DeriveB,
    /// Hashing an input of this many bytes (`hash_<n>`).
    Hash(u64),
}

impl Operation {
    /// The record key (`hash_1024`, `pass2`, `keygen`): the record file's stem and the
    /// `opkey` of the pages.
    pub fn key(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Operation::Keygen => "keygen",
            Operation::Enc => "enc",
            Operation::Dec => "dec",
            Operation::Sign => "sign",
            Operation::Verify => "verify",
            Operation::Exchange => "exchange",
            Operation::InitA => "init_a",
            Operation::InitB => "init_b",
            Operation::DeriveA => "derive_a",
            Operation::DeriveB => "derive_b",
            Operation::Pass(k) => return Cow::Owned(format!("pass{k}")),
            Operation::Hash(n) => return Cow::Owned(format!("hash_{n}")),
        })
    }

    /// The operation the driver runs: `hash` for every hash size (with [`Operation::bytes`]
    /// as input), else the record key.
    pub fn call(self) -> Cow<'static, str> {
        match self {
            Operation::Hash(_) => Cow::Borrowed("hash"),
            other => other.key(),
        }
    }

    /// The driver's `(record key, call, input bytes)` of this operation.
    pub fn driver_unit(self) -> (String, String, u64) {
        (
            self.key().into_owned(),
            self.call().into_owned(),
            self.bytes(),
        )
    }

    /// Input bytes the driver is given (a hash's size; 0 for the others).
    pub fn bytes(self) -> u64 {
        match self {
            Operation::Hash(n) => n,
            _ => 0,
        }
    }

    /// A record key, or the NIST spellings `encaps`/`decaps`; `None` for keys the model does
    /// not know (including a bare `hash`, which has no size).
    pub fn parse(key: &str) -> Option<Operation> {
        let fixed = match key {
            "keygen" => Some(Operation::Keygen),
            "enc" | "encaps" => Some(Operation::Enc),
            "dec" | "decaps" => Some(Operation::Dec),
            "sign" => Some(Operation::Sign),
            "verify" => Some(Operation::Verify),
            "exchange" => Some(Operation::Exchange),
            "init_a" => Some(Operation::InitA),
            "init_b" => Some(Operation::InitB),
            "derive_a" => Some(Operation::DeriveA),
            "derive_b" => Some(Operation::DeriveB),
            _ => None,
        };
        fixed
            .or_else(|| {
                key.strip_prefix("pass")
                    .and_then(|k| k.parse().ok())
                    .map(Operation::Pass)
            })
            .or_else(|| {
                key.strip_prefix("hash_")
                    .and_then(|n| n.parse().ok())
                    .map(Operation::Hash)
            })
    }

    /// The category whose instances have this operation.
    pub fn category(self) -> Option<Category> {
        Some(match self {
            Operation::Keygen => return None,
            Operation::Enc | Operation::Dec => Category::Kem,
            Operation::Sign | Operation::Verify => Category::Sign,
            Operation::Exchange
            | Operation::InitA
            | Operation::InitB
            | Operation::Pass(_)
            | Operation::DeriveA
            | Operation::DeriveB => Category::Kex,
            Operation::Hash(_) => Category::Hash,
        })
    }

    /// True for the per-call steps of a key exchange (`init_a` … `derive_b`).
    pub fn is_kex_step(self) -> bool {
        matches!(
            self,
            Operation::InitA
                | Operation::InitB
                | Operation::Pass(_)
                | Operation::DeriveA
                | Operation::DeriveB
        )
    }

    /// The per-call step operations of a key exchange with `passes` passes: `init_a`,
    /// `init_b`, `pass1`…, `derive_a`, `derive_b`.
    pub fn kex_steps(passes: u32) -> Vec<Operation> {
        let mut v = vec![Operation::InitA, Operation::InitB];
        v.extend((1..=passes).map(Operation::Pass));
        v.push(Operation::DeriveA);
        v.push(Operation::DeriveB);
        v
    }

    /// Order within an instance: keygen, enc, dec, sign, verify, exchange, init_a, init_b,
    /// pass1 …, derive_a, derive_b, then hashes by size.
    fn rank(self) -> (u32, u64) {
        match self {
            Operation::Keygen => (0, 0),
            Operation::Enc => (1, 0),
            Operation::Dec => (2, 0),
            Operation::Sign => (3, 0),
            Operation::Verify => (4, 0),
            Operation::Exchange => (5, 0),
            Operation::InitA => (6, 0),
            Operation::InitB => (7, 0),
            Operation::Pass(k) => (8u32.saturating_add(k), 0),
            Operation::DeriveA => (30, 0),
            Operation::DeriveB => (31, 0),
            Operation::Hash(n) => (40, n),
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

/// An operation key as typed (`--op sign`): [`Operation::parse`], refused with the keys the
/// model knows.
impl std::str::FromStr for Operation {
    type Err = String;

    fn from_str(key: &str) -> Result<Operation, String> {
        Operation::parse(key).ok_or_else(|| {
            format!(
                "{key:?}: not an operation key (keygen, enc, dec, sign, verify, exchange, init_a, init_b, pass<K>, derive_a, derive_b, hash_<BYTES>)"
            )
        })
    }
}

/// Rank of an operation key within an instance ([`Operation`] order); a bare `hash` sorts
/// with the hashes, any key the model does not know last, by name.
pub fn op_rank(opkey: &str) -> (u32, u64, String) {
    match Operation::parse(opkey) {
        Some(o) => {
            let (a, b) = o.rank();
            (a, b, String::new())
        }
        None if opkey == "hash" => (40, 0, String::new()),
        None => (50, 0, opkey.to_string()),
    }
}

/// The other spelling of a record key that readers accept for it: `encaps` for `enc`,
/// `decaps` for `dec` (the NIST API's names), and back; `None` for every other key.
pub fn other_spelling(key: &str) -> Option<&'static str> {
    match key {
        "enc" => Some("encaps"),
        "encaps" => Some("enc"),
        "dec" => Some("decaps"),
        "decaps" => Some("dec"),
        _ => None,
    }
}

/// The timing counter a measurement was taken with, as named in the evidence
/// (`pqperf.counter` of a record; the driver's `counter` meta).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Counter {
    /// Hardware core cycles, user mode (`cycles`; older spellings `perf-cycles`,
    /// `perf_cycles`, `core-cycles` read as this).
    Cycles,
    /// The x86-64 time-stamp counter (`tsc`): reference cycles at a fixed rate.
    Tsc,
    /// The AArch64 generic timer (`cntvct_el0`): a constant-rate timer.
    CntvctEl0,
    /// A counter name the model does not know, kept as recorded.
    Other(String),
}

impl Counter {
    /// The counter named `name` in the evidence; never fails (an unknown name is
    /// [`Counter::Other`]).
    pub fn parse(name: &str) -> Counter {
        match name {
            "cycles" | "perf-cycles" | "perf_cycles" | "core-cycles" => Counter::Cycles,
            "tsc" => Counter::Tsc,
            "cntvct_el0" => Counter::CntvctEl0,
            other => Counter::Other(other.to_string()),
        }
    }

    /// The name written to the evidence (`cycles`, `tsc`, `cntvct_el0`, or as recorded).
    pub fn evidence_name(&self) -> &str {
        match self {
            Counter::Cycles => "cycles",
            Counter::Tsc => "tsc",
            Counter::CntvctEl0 => "cntvct_el0",
            Counter::Other(s) => s,
        }
    }

    /// True for hardware core cycles; every other counter counts ticks.
    pub fn is_core_cycles(&self) -> bool {
        matches!(self, Counter::Cycles)
    }

    /// Display name: `cycles`, `TSC`, `CNTVCT_EL0`, else the name as recorded.
    pub fn display_name(&self) -> &str {
        match self {
            Counter::Tsc => "TSC",
            Counter::CntvctEl0 => "CNTVCT_EL0",
            other => other.evidence_name(),
        }
    }

    /// The unit of a figure counted with it: `cycles`, or `ticks (TSC)` for a tick counter.
    pub fn unit(&self) -> Cow<'static, str> {
        if self.is_core_cycles() {
            Cow::Borrowed("cycles")
        } else {
            Cow::Owned(format!("ticks ({})", self.display_name()))
        }
    }

    /// The sentence the pages show where they speak of cycles, given the tick frequency (Hz)
    /// when recorded; `None` for core cycles (the pages need no sentence).
    pub fn sentence(&self, hz: Option<f64>) -> Option<String> {
        if self.is_core_cycles() {
            return None;
        }
        let kind = if *self == Counter::Tsc {
            " (reference cycles)"
        } else {
            " (a constant-rate timer)"
        };
        Some(format!(
            "Cycle counts are {} ticks at {}{kind}, not core cycles: this host has no hardware cycle counter.",
            self.display_name(),
            freq_text(hz)
        ))
    }
}

/// A tick frequency in words: `2.10 GHz`, `24.00 MHz`, or `an unrecorded frequency`.
pub fn freq_text(hz: Option<f64>) -> String {
    match hz {
        Some(h) if h >= 1e9 => format!("{:.2} GHz", h / 1e9),
        Some(h) if h > 0.0 => format!("{:.2} MHz", h / 1e6),
        _ => "an unrecorded frequency".into(),
    }
}

impl From<String> for Counter {
    fn from(s: String) -> Counter {
        Counter::parse(&s)
    }
}

impl From<Counter> for String {
    fn from(c: Counter) -> String {
        c.evidence_name().to_string()
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.evidence_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_words() {
        for c in Category::ALL {
            assert_eq!(Category::from_name(c.as_str()), Some(c));
            assert_eq!(Category::from_word(c.meta_word()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<Category>(&json).unwrap(), c);
        }
        assert_eq!(Category::from_word("signature"), Some(Category::Sign));
        assert_eq!(Category::from_name("sig"), None);
        assert_eq!(Category::from_id("sig-01"), Some(Category::Sign));
        assert_eq!(Category::from_id("ml-dsa-44"), None);
        assert_eq!(Category::parse("Signature"), Some(Category::Sign));
        assert!(serde_json::from_str::<Category>("\"sig\"").is_err());
    }

    #[test]
    fn operations_of_categories() {
        let keys = |v: Vec<Operation>| v.into_iter().map(|o| o.key()).collect::<Vec<_>>();
        assert_eq!(keys(Category::Kem.operations()), ["keygen", "enc", "dec"]);
        assert_eq!(keys(Category::Kex.profiled()), ["exchange"]);
        assert!(Category::Hash.profiled().is_empty());
        let hash = Category::Hash.operations();
        assert_eq!(hash.len(), HASH_SIZES.len());
        assert_eq!(
            hash[1].driver_unit(),
            ("hash_128".into(), "hash".into(), 128)
        );
        assert_eq!(
            Operation::Pass(3).driver_unit(),
            ("pass3".into(), "pass3".into(), 0)
        );
        // The page keys are measured keys, in page order.
        for c in Category::ALL {
            let measured = keys(c.operations());
            for k in c.ops() {
                assert!(measured.iter().any(|m| m == k), "{c}: {k}");
                assert_eq!(Operation::parse(k).map(|o| o.key()), Some(Cow::from(*k)));
            }
        }
        let page: Vec<String> = PAGE_HASH_SIZES
            .iter()
            .map(|n| format!("hash_{n}"))
            .collect();
        assert_eq!(Category::Hash.ops(), page.as_slice());
        assert_eq!(
            keys(Operation::kex_steps(2)),
            ["init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b"]
        );
        assert!(Operation::kex_steps(1).iter().all(|o| o.is_kex_step()));
        assert_eq!(Operation::parse("decaps"), Some(Operation::Dec));
        for k in ["enc", "encaps", "dec", "decaps"] {
            let other = other_spelling(k).unwrap();
            assert_eq!(Operation::parse(other), Operation::parse(k));
            assert_eq!(other_spelling(other), Some(k));
        }
        assert_eq!(other_spelling("sign"), None);
        assert_eq!(Operation::parse("hash"), None);
        assert_eq!(Operation::parse("passx"), None);
        assert_eq!(
            Category::from_operations(["keygen", "decaps"]),
            Some(Category::Kem)
        );
        assert_eq!(Category::from_operations(["pass3"]), Some(Category::Kex));
        assert_eq!(Category::from_operations(["keygen", "x"]), None);
        assert_eq!(Category::from_operations(["hash"]), Some(Category::Hash));
    }

    #[test]
    fn ranks() {
        assert_eq!(op_rank("encaps"), op_rank("enc"));
        assert_eq!(op_rank("hash"), (40, 0, String::new()));
        assert_eq!(op_rank("pass3"), (11, 0, String::new()));
        assert_eq!(op_rank("zz"), (50, 0, "zz".to_string()));
        assert!(op_rank("hash_32") < op_rank("hash_1024"));
        // A hostile pass number does not overflow.
        assert_eq!(op_rank(&format!("pass{}", u32::MAX)).0, u32::MAX);
    }

    #[test]
    fn counters() {
        for (name, unit) in [
            ("cycles", "cycles"),
            ("tsc", "ticks (TSC)"),
            ("cntvct_el0", "ticks (CNTVCT_EL0)"),
            ("hpet<x>", "ticks (hpet<x>)"),
        ] {
            let c = Counter::parse(name);
            assert_eq!(c.evidence_name(), name);
            assert_eq!(c.unit(), unit);
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<Counter>(&json).unwrap(), c);
        }
        assert!(Counter::parse("perf-cycles").is_core_cycles());
        assert_eq!(Counter::parse("cycles").sentence(Some(3e9)), None);
        assert_eq!(
            Counter::Tsc.sentence(Some(2.1e9)).unwrap(),
            "Cycle counts are TSC ticks at 2.10 GHz (reference cycles), not core cycles: this host has no hardware cycle counter."
        );
        assert_eq!(freq_text(Some(2.4e7)), "24.00 MHz");
        assert_eq!(freq_text(Some(-1.0)), "an unrecorded frequency");
        assert_eq!(freq_text(None), "an unrecorded frequency");
    }
}
