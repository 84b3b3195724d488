//! Independent cross-check of the wrapper shares with valgrind's callgrind: run a program
//! under `valgrind --tool=callgrind` with collection toggled on an operation's API function,
//! then read the output file and compute the *inclusive* cost (instructions, event `Ir`) of
//! the hash functions as seen from non-hash callers, divided by the operation's total.
//!
//! Counting calls from non-hash callers into hash functions counts each outermost hash call
//! once (a hash function calling the Keccak permutation is not counted twice), which is the
//! same rule the wrappers' depth counter applies.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use crate::ProfileError;

/// Cost of one callgrind profile split by a function-name predicate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallgrindShare {
    /// Total collected cost (event `Ir` of the `summary:`/`totals:` line).
    pub total: u64,
    /// Inclusive cost of calls from non-matching callers into matching callees.
    pub matched: u64,
}

impl CallgrindShare {
    /// matched ÷ total (0 when nothing was collected).
    pub fn share(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.matched as f64 / self.total as f64
        }
    }
}

/// Strip callgrind's name compression (`(12) name` / `(12)`) using the table `names`.
fn resolve_name(raw: &str, names: &mut HashMap<String, String>) -> String {
    let raw = raw.trim();
    if let Some((id, name)) = raw.strip_prefix('(').and_then(|r| r.split_once(')')) {
        let name = name.trim();
        if name.is_empty() {
            return names.get(id).cloned().unwrap_or_default();
        }
        names.insert(id.to_string(), name.to_string());
        return name.to_string();
    }
    raw.to_string()
}

/// Base name of a callgrind function entry: drops recursion (`'2`) suffixes.
fn base(name: &str) -> &str {
    match name.find('\'') {
        Some(i) => &name[..i],
        None => name,
    }
}

/// Parse callgrind output text and split its cost with `is_match` (called with the
/// function's base name).
pub fn parse_share(text: &str, is_match: &dyn Fn(&str) -> bool) -> CallgrindShare {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut total: Option<u64> = None;
    let mut totals_line: Option<u64> = None;
    let mut caller = String::new();
    let mut callee = String::new();
    let mut expect_call_cost = false;
    let mut matched = 0u64;
    for line in text.lines() {
        if expect_call_cost {
            expect_call_cost = false;
            let mut it = line.split_whitespace();
            let _pos = it.next();
            let cost: u64 = it.next().and_then(|c| c.parse().ok()).unwrap_or(0);
            if is_match(base(&callee)) && !is_match(base(&caller)) {
                matched += cost;
            }
            continue;
        }
        if let Some(v) = line.strip_prefix("summary:") {
            total = v.split_whitespace().next().and_then(|c| c.parse().ok());
        } else if let Some(v) = line.strip_prefix("totals:") {
            totals_line = v.split_whitespace().next().and_then(|c| c.parse().ok());
        } else if let Some(v) = line.strip_prefix("fn=") {
            // fn and cfn share one compression table in callgrind's format.
            caller = resolve_name(v, &mut names);
        } else if let Some(v) = line.strip_prefix("cfn=") {
            callee = resolve_name(v, &mut names);
        } else if line.starts_with("calls=") {
            expect_call_cost = true;
        }
    }
    CallgrindShare {
        total: total.or(totals_line).unwrap_or(0),
        matched,
    }
}

/// Does a PQClean common-code function name belong to Keccak/SHAKE/SHA-3?
pub fn is_keccak_fn(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("shake128")
        || n.starts_with("shake256")
        || n.starts_with("sha3_")
        || n.starts_with("cshake")
        || n.contains("keccak")
}

/// Run `program args…` under callgrind with collection toggled on `toggle_fn` (the API
/// function of the operation) in `cwd` and return the output file's text.
pub fn run_callgrind(
    program: &Path,
    args: &[String],
    toggle_fn: &str,
    out_file: &Path,
    cwd: &Path,
) -> Result<String, ProfileError> {
    let out = Command::new("valgrind")
        .current_dir(cwd)
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg("--compress-strings=no")
        .arg("--compress-pos=no")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={toggle_fn}"))
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| ProfileError::Tool(format!("valgrind: {e}")))?;
    if !out.status.success() {
        return Err(ProfileError::Tool(format!(
            "valgrind exited with {}: {}",
            out.status,
            tail(&String::from_utf8_lossy(&out.stderr), 2000)
        )));
    }
    std::fs::read_to_string(out_file).map_err(|e| ProfileError::io(out_file, e))
}

/// Last `n` characters of `s`.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    let start = chars.len().saturating_sub(n);
    chars[start..].iter().collect::<String>().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_outermost_calls_only() {
        let text = "events: Ir\nsummary: 1000\nfn=main\n0 100\ncfn=shake256\ncalls=2 0\n0 600\n\
                    cfn=ntt\ncalls=1 0\n0 300\nfn=shake256\n0 100\ncfn=KeccakF1600_StatePermute\n\
                    calls=4 0\n0 500\n";
        let s = parse_share(text, &is_keccak_fn);
        assert_eq!(s.total, 1000);
        assert_eq!(s.matched, 600);
        assert!((s.share() - 0.6).abs() < 1e-12);
    }

    #[test]
    fn resolves_compressed_names() {
        let text = "summary: 10\nfn=(1) main\ncfn=(2) shake128_inc_squeeze\ncalls=1 0\n0 4\n\
                    cfn=(2)\ncalls=1 0\n0 3\n";
        let s = parse_share(text, &is_keccak_fn);
        assert_eq!(s.matched, 7);
    }
}
