//! Findings of a variant build (AVX2, …) that match an accepted finding of the reference
//! build of the same scheme, by *function family*.
//!
//! A row `same as <reference label>: <note>` of the accepted-findings table (a reviewer read
//! the variant's code beside the reference's) lets the findings of a variant inherit the
//! acceptance of the reference's accepted findings. The rule, for one operation:
//!
//! 1. only `conditional jump` and `memory index` findings take part, on both sides;
//! 2. the **family** of a variant finding is the function deciding it: the function whose
//!    body holds the finding's source line, read from the staged source (valgrind's name
//!    when the source cannot be read; `UnknownInlinedFun` is never a name). When that
//!    function is the operation's entry point (`crypto_sign_signature`, `crypto_kem_dec`,
//!    the frame the driver called, …) the family is the function *called on the line*
//!    (`if (poly_chknorm(…)) goto rej;`); a line in the entry point with no call has no
//!    family and never matches;
//! 3. the **chain** of a reference finding is its family together with every function of
//!    its stack between the innermost frame and the entry point (its callers inside the
//!    scheme: `rej_eta` ← `poly_uniform_eta` ← `polyvecl_uniform_eta`);
//! 4. names are compared after [`normalize`]: the `PQCLEAN_<SCHEME>_<IMPL>_` namespace,
//!    compiler clone suffixes (`.constprop.0`, `.isra.0`, …) and the implementation
//!    suffixes `_avx2`, `_avx`, `_4x`, `_x4` removed (`PQCLEAN_MLDSA44_AVX2_rej_eta_avx` and
//!    `rej_eta.constprop.0` are both `rej_eta`);
//! 5. a variant finding whose family is in the chain of an accepted reference finding of
//!    the same operation is accepted with a reason naming that finding and repeating its
//!    reason; the first such reference finding (evidence order) decides. Everything else
//!    stays a finding.

use std::path::Path;

use pqperf_model::ct::{CtEvidence, CtFinding};

/// Kinds that can be inherited (secret-dependent branch or address).
const INHERITED_KINDS: [&str; 2] = ["conditional jump", "memory index"];

/// Implementation suffixes removed by [`normalize`] (repeatedly, longest first).
const IMPL_SUFFIXES: [&str; 4] = ["_avx2", "_avx", "_4x", "_x4"];

/// Compare-ready function name: namespace, clone and implementation suffixes removed.
pub fn normalize(name: &str) -> String {
    let mut n = name.split('.').next().unwrap_or("").to_string();
    // PQCLEAN_<SCHEME>_<IMPL>_name: three upper-case/digit components.
    if let Some(rest) = n.strip_prefix("PQCLEAN_") {
        let mut parts = rest.splitn(3, '_');
        let (a, b, c) = (parts.next(), parts.next(), parts.next());
        let upper = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit())
        };
        if let (Some(a), Some(b), Some(c)) = (a, b, c)
            && upper(a)
            && upper(b)
            && !c.is_empty()
        {
            n = c.to_string();
        }
    }
    while let Some(s) = IMPL_SUFFIXES
        .iter()
        .find(|s| n.len() > s.len() && n.ends_with(*s))
    {
        n.truncate(n.len() - s.len());
    }
    n
}

/// Whether a (normalized) function is an operation entry point of the NIST API.
fn nist_entry(norm: &str) -> bool {
    norm.starts_with("crypto_sign") || norm.starts_with("crypto_kem")
}

/// `func (file:line)` of a recorded stack frame.
fn frame(s: &str) -> (&str, &str) {
    match s.rsplit_once(" (") {
        Some((f, loc)) => (f, loc.strip_suffix(')').unwrap_or(loc)),
        None => (s, ""),
    }
}

fn is_driver(loc: &str) -> bool {
    loc.starts_with(".pqperf-ct-")
}

/// The frame the driver called (`func`, `file:line`), when the recorded stack reaches it.
fn driver_callee(stack: &[String]) -> Option<(&str, &str)> {
    let frames: Vec<(&str, &str)> = stack.iter().map(|s| frame(s)).collect();
    let i = frames.iter().position(|(_, loc)| is_driver(loc))?;
    i.checked_sub(1).map(|j| frames[j])
}

/// C source with comments, string and character literals blanked (same line structure) and
/// preprocessor lines emptied.
fn blank(text: &str) -> Vec<String> {
    let mut out = String::with_capacity(text.len());
    let b: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                out.push(if b[i] == '\n' { '\n' } else { ' ' });
                i += 1;
            }
            i += 2;
            out.push_str("  ");
        } else if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != c && b[i] != '\n' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// The first `identifier (` of `s` that is not a keyword, attribute or cast-like word.
fn first_call(s: &str) -> Option<String> {
    const NOT: [&str; 9] = [
        "if",
        "while",
        "for",
        "switch",
        "return",
        "sizeof",
        "__attribute__",
        "__declspec",
        "_Alignas",
    ];
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &s[start..i];
            let mut j = i;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if b.get(j) == Some(&b'(') && !NOT.contains(&word) {
                return Some(word.to_string());
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The function whose body holds line `line` (1-based) of a C file, by brace structure:
/// a top-level `{` whose preceding declaration text has a parameter list and no `=`
/// opens a function named by the first call-like identifier of that text.
pub fn enclosing_function(text: &str, line: usize) -> Option<String> {
    let lines = blank(text);
    let mut depth = 0usize;
    let mut header = String::new();
    let mut current: Option<(String, usize)> = None;
    for (n, l) in lines.iter().enumerate() {
        let n = n + 1;
        for ch in l.chars() {
            match ch {
                '{' => {
                    if depth == 0 {
                        let h = header.trim();
                        current = if h.contains('(') && !h.contains('=') {
                            first_call(h).map(|f| (f, n))
                        } else {
                            None
                        };
                        header.clear();
                    }
                    depth += 1;
                }
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if n >= line
                            && let Some((f, start)) = current.take()
                        {
                            return (start <= line).then_some(f);
                        }
                        current = None;
                        header.clear();
                    }
                }
                ';' if depth == 0 => header.clear(),
                c if depth == 0 => header.push(c),
                _ => {}
            }
        }
        if depth == 0 {
            header.push(' ');
        }
        if n > line && current.is_none() && depth == 0 {
            return None;
        }
    }
    None
}

/// Source line `line` of `file` (blanked: no comments or literals).
fn source_line(text: &str, line: usize) -> Option<String> {
    blank(text).into_iter().nth(line.checked_sub(1)?)
}

/// Staged sources of one instance (`tree` = its build work directory).
struct Sources<'a> {
    tree: &'a Path,
}

impl Sources<'_> {
    fn read(&self, loc: &str) -> Option<(String, usize)> {
        let (file, line) = loc.rsplit_once(':')?;
        let line: usize = line.parse().ok()?;
        // Locations are relative to the tree; nothing outside it is read.
        if file.starts_with('/') || file.split('/').any(|c| c == "..") {
            return None;
        }
        let text = std::fs::read_to_string(self.tree.join(file)).ok()?;
        Some((text, line))
    }

    /// The function holding `loc`, from the source, else valgrind's name.
    fn function(&self, loc: &str, valgrind: &str) -> Option<String> {
        self.read(loc)
            .and_then(|(t, l)| enclosing_function(&t, l))
            .or_else(|| {
                (!valgrind.is_empty() && valgrind != "UnknownInlinedFun")
                    .then(|| valgrind.to_string())
            })
    }

    /// The entry point the driver called, normalized, when the stack shows it.
    fn entry(&self, stack: &[String]) -> Option<String> {
        let (f, loc) = driver_callee(stack)?;
        self.function(loc, f).map(|c| normalize(&c))
    }

    /// The family of a finding (rule 2), normalized.
    fn family(&self, g: &CtFinding) -> Option<String> {
        let f = normalize(&self.function(&g.location, &g.function)?);
        let entry = nist_entry(&f) || self.entry(&g.stack).is_some_and(|c| c == f);
        if !entry {
            return Some(f);
        }
        let (text, line) = self.read(&g.location)?;
        first_call(&source_line(&text, line)?).map(|c| normalize(&c))
    }

    /// The chain of a reference finding (rule 3), normalized.
    fn chain(&self, a: &CtFinding) -> Vec<String> {
        let mut out: Vec<String> = self.family(a).into_iter().collect();
        let entry = self.entry(&a.stack);
        for s in a.stack.iter().skip(1) {
            let (f, loc) = frame(s);
            if is_driver(loc) {
                break;
            }
            let Some(name) = self.function(loc, f) else {
                continue;
            };
            let n = normalize(&name);
            if nist_entry(&n) || entry.as_deref() == Some(n.as_str()) {
                break;
            }
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }
}

/// Accept the findings of `variant` (operations matching `ops`) whose family is in the
/// chain of an accepted finding of `reference` (rules above); `note` is the reviewer's note
/// of the table row. Returns the number of groups newly accepted.
pub fn inherit(
    variant: &mut CtEvidence,
    variant_tree: &Path,
    reference: &CtEvidence,
    reference_tree: &Path,
    ops: &regex::Regex,
    note: &str,
) -> usize {
    let vsrc = Sources { tree: variant_tree };
    let rsrc = Sources {
        tree: reference_tree,
    };
    let mut n = 0;
    for op in variant
        .operations
        .iter_mut()
        .filter(|o| o.status == "run" && ops.is_match(&o.operation))
    {
        let Some(rop) = reference
            .operations
            .iter()
            .find(|r| r.operation == op.operation && r.status == "run")
        else {
            continue;
        };
        let refs: Vec<(&CtFinding, Vec<String>)> = rop
            .groups
            .iter()
            .filter(|a| a.accepted.is_some() && INHERITED_KINDS.contains(&a.kind.as_str()))
            .map(|a| (a, rsrc.chain(a)))
            .collect();
        for g in op
            .groups
            .iter_mut()
            .filter(|g| g.accepted.is_none() && INHERITED_KINDS.contains(&g.kind.as_str()))
        {
            let Some(fam) = vsrc.family(g) else {
                continue;
            };
            if let Some((a, _)) = refs.iter().find(|(_, chain)| chain.contains(&fam)) {
                g.accepted = Some(format!(
                    "same family ({fam}) as the accepted {} finding of {} {} at {} ({}); {note}: {}",
                    a.kind,
                    reference.label,
                    op.operation,
                    a.location,
                    a.function,
                    a.accepted.as_deref().unwrap_or("")
                ));
                n += 1;
            }
        }
        op.settle();
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalize_to_the_family() {
        for (a, b) in [
            ("PQCLEAN_MLDSA44_AVX2_rej_eta_avx", "rej_eta"),
            ("rej_eta.constprop.0", "rej_eta"),
            (
                "PQCLEAN_MLDSA44_AVX2_poly_uniform_eta_4x",
                "poly_uniform_eta",
            ),
            ("PQCLEAN_MLDSA44_CLEAN_poly_chknorm", "poly_chknorm"),
            ("PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec", "crypto_kem_dec"),
            ("make_hint_avx", "make_hint"),
            ("_avx", "_avx"),
            ("PQCLEAN_lower_case_name", "PQCLEAN_lower_case_name"),
        ] {
            assert_eq!(normalize(a), b, "{a}");
        }
    }

    fn group(kind: &str, location: &str, function: &str, stack: &[&str]) -> CtFinding {
        CtFinding {
            kind: kind.into(),
            location: location.into(),
            function: function.into(),
            count: 1,
            stack: stack.iter().map(|s| s.to_string()).collect(),
            accepted: None,
        }
    }

    fn evidence(label: &str, groups: Vec<CtFinding>) -> CtEvidence {
        let mut op = pqperf_model::ct::CtOperation {
            operation: "sign".into(),
            status: "run".into(),
            groups,
            ..Default::default()
        };
        op.settle();
        CtEvidence {
            label: label.into(),
            operations: vec![op],
            ..Default::default()
        }
    }

    #[test]
    fn only_findings_of_an_accepted_family_inherit() {
        let tmp = tempfile::tempdir().unwrap();
        let (r, v) = (tmp.path().join("r"), tmp.path().join("v"));
        std::fs::create_dir_all(&r).unwrap();
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(
            r.join("poly.c"),
            "int PQCLEAN_X_CLEAN_poly_chknorm(int a) {\n  if (a > 3) {\n    return 1;\n  }\n  return 0;\n}\n",
        )
        .unwrap();
        std::fs::write(
            v.join("sign.c"),
            "static int unpack(int a) {\n  return T[a];\n}\nint PQCLEAN_X_AVX2_crypto_sign_signature(int a) {\n  if (PQCLEAN_X_AVX2_poly_chknorm(a))\n    return 1;\n  if (a > 7)\n    return 2;\n  return unpack(a);\n}\n",
        )
        .unwrap();
        let mut accepted = group(
            "conditional jump",
            "poly.c:2",
            "PQCLEAN_X_CLEAN_poly_chknorm",
            &[
                "PQCLEAN_X_CLEAN_poly_chknorm (poly.c:2)",
                "PQCLEAN_X_CLEAN_crypto_sign_signature (sign.c:9)",
                "ct_run (.pqperf-ct-driver.c:9)",
            ],
        );
        accepted.accepted = Some("documented rejection check".into());
        let other = group("conditional jump", "poly.c:4", "g", &[]);
        let reference = evidence("x", vec![accepted, other]);
        let entry = "PQCLEAN_X_AVX2_crypto_sign_signature (sign.c:5)";
        let mut variant = evidence(
            "x-avx2",
            vec![
                // The entry point branches on poly_chknorm's result: family poly_chknorm.
                group(
                    "conditional jump",
                    "sign.c:5",
                    "UnknownInlinedFun",
                    &[entry],
                ),
                // A line of the entry point calling nothing: no family.
                group(
                    "conditional jump",
                    "sign.c:7",
                    "PQCLEAN_X_AVX2_crypto_sign_signature",
                    &[entry],
                ),
                // Another function: family unpack, in no accepted chain.
                group(
                    "memory index",
                    "sign.c:2",
                    "UnknownInlinedFun",
                    &["UnknownInlinedFun (sign.c:2)", entry],
                ),
                // Memory errors never inherit.
                group("other (InvalidRead)", "sign.c:5", "x", &[entry]),
            ],
        );
        let ops = regex::Regex::new("^(?:sign)$").unwrap();
        assert_eq!(inherit(&mut variant, &v, &reference, &r, &ops, "read"), 1);
        let op = &variant.operations[0];
        assert_eq!(
            op.groups[0].accepted.as_deref(),
            Some(
                "same family (poly_chknorm) as the accepted conditional jump finding of x sign \
                 at poly.c:2 (PQCLEAN_X_CLEAN_poly_chknorm); read: documented rejection check"
            )
        );
        assert!(op.groups[1..].iter().all(|g| g.accepted.is_none()));
        assert_eq!((op.findings, op.accepted), (3, 1));
        // Other operations are not touched.
        let none = regex::Regex::new("^(?:keygen)$").unwrap();
        let mut again = variant.clone();
        again.operations[0].groups[0].accepted = None;
        assert_eq!(inherit(&mut again, &v, &reference, &r, &none, "read"), 0);
    }

    #[test]
    fn enclosing_function_follows_braces_not_comments() {
        let src = "/* f() { */\n#include <x.h>\nstatic const int T[2] = {1, 2};\n\
                   static unsigned int rej_eta(int32_t *a,\n    unsigned int len) {\n  \
                   if (a[0] < 15) { // }\n    return 1;\n  }\n  return \"}\"[0];\n}\n\
                   __attribute__((unused)) int g(void)\n{\n  return 0;\n}\n";
        assert_eq!(enclosing_function(src, 3), None);
        assert_eq!(enclosing_function(src, 5).as_deref(), Some("rej_eta"));
        assert_eq!(enclosing_function(src, 7).as_deref(), Some("rej_eta"));
        assert_eq!(enclosing_function(src, 9).as_deref(), Some("rej_eta"));
        assert_eq!(enclosing_function(src, 13).as_deref(), Some("g"));
        assert_eq!(enclosing_function(src, 15), None);
        assert_eq!(
            first_call("    if (PQCLEAN_X_Y_poly_chknorm(&z.vec[i], B)) {").as_deref(),
            Some("PQCLEAN_X_Y_poly_chknorm")
        );
        assert_eq!(first_call("    if (pos + n > OMEGA) {"), None);
    }
}
