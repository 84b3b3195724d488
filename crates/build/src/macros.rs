//! The macros a submission's sources test to choose a parameter set (`#if MODE == 256`,
//! `#ifdef SET_128`), read from the text of an instance folder's headers and sources, for the
//! hints of `import` and of a BUILDFAIL (issue 40). Only a hint: the instance's identity is
//! always read by compiling (`probe`), never from this text.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// At most this many files are read, each at most this many bytes.
const MAX_FILES: usize = 200;
const MAX_BYTES: u64 = 1 << 20;

/// A macro tested in a preprocessor condition that the sources do not define themselves
/// (other than as a default under `#ifndef NAME`), with the numbers it is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// The macro's name.
    pub name: String,
    /// Values it is compared with (`== 1`, `== 3`), in the order of the text, without repeats.
    pub values: Vec<String>,
}

impl Selector {
    /// `MSIG_MODE (1, 3)` or `VDOO_128`.
    pub fn shown(&self) -> String {
        if self.values.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.values.join(", "))
        }
    }
}

/// The selectors of the `.h`/`.c` files under `dir` (recursively, bounded), those compared
/// with numbers first; at most `limit`.
pub fn selectors(dir: &Path, limit: usize) -> Vec<Selector> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(t) = e.file_type() else { continue };
            let p = e.path();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file()
                && p.extension().is_some_and(|x| x == "h" || x == "c")
                && e.metadata().is_ok_and(|m| m.len() <= MAX_BYTES)
                && files.len() < MAX_FILES
            {
                files.push(p);
            }
        }
    }
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    from_texts(&texts, limit)
}

/// [`selectors`] over file texts.
pub fn from_texts(texts: &[String], limit: usize) -> Vec<Selector> {
    let mut tested: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut defined_elsewhere: BTreeSet<String> = BTreeSet::new();
    for text in texts {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (k, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix('#') else {
                continue;
            };
            let rest = rest.trim_start();
            let (word, expr) = rest
                .split_once(|c: char| c.is_whitespace() || c == '(')
                .map(|(w, e)| (w, e.trim()))
                .unwrap_or((rest, ""));
            match word {
                "define" => {
                    let name = ident_at(expr);
                    let has_value = !expr[name.len()..].trim().is_empty();
                    // `#ifndef NAME` / `#define NAME value`: a default, still selectable.
                    let default = k > 0
                        && lines[k - 1]
                            .strip_prefix('#')
                            .map(str::trim_start)
                            .and_then(|r| r.strip_prefix("ifndef"))
                            .is_some_and(|r| r.trim() == name);
                    // An include guard (no value) and every other definition are not
                    // selectors; a default value under its own `#ifndef` is.
                    if !name.is_empty() && (!default || !has_value) {
                        defined_elsewhere.insert(name.to_string());
                    }
                }
                "ifdef" | "ifndef" => {
                    let name = ident_at(expr);
                    note(&mut tested, &mut order, name, None);
                }
                "if" | "elif" => {
                    let toks = tokens(expr);
                    for (i, t) in toks.iter().enumerate() {
                        if !is_ident(t) || t == "defined" {
                            continue;
                        }
                        let value = match (toks.get(i + 1), toks.get(i + 2)) {
                            (Some(op), Some(v))
                                if op == "==" && v.chars().all(|c| c.is_ascii_digit()) =>
                            {
                                Some(v.clone())
                            }
                            _ => None,
                        };
                        note(&mut tested, &mut order, t, value);
                    }
                }
                _ => {}
            }
        }
    }
    let mut out: Vec<Selector> = order
        .into_iter()
        .filter(|n| !n.starts_with('_') && !defined_elsewhere.contains(n))
        .map(|n| Selector {
            values: tested.remove(&n).unwrap_or_default(),
            name: n,
        })
        .collect();
    out.sort_by_key(|s| s.values.is_empty());
    out.truncate(limit);
    out
}

fn note(
    tested: &mut BTreeMap<String, Vec<String>>,
    order: &mut Vec<String>,
    name: &str,
    value: Option<String>,
) {
    if name.is_empty() {
        return;
    }
    let v = tested.entry(name.to_string()).or_insert_with(|| {
        order.push(name.to_string());
        Vec::new()
    });
    if let Some(x) = value
        && !v.contains(&x)
    {
        v.push(x);
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Identifiers, numbers and `==` of a condition (comments cut).
fn tokens(expr: &str) -> Vec<String> {
    let expr = expr.split("//").next().unwrap_or("");
    let expr = expr.split("/*").next().unwrap_or("");
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' {
            cur.push(c);
            continue;
        }
        if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if c == '=' && chars.peek() == Some(&'=') {
            chars.next();
            out.push("==".into());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_macro_with_a_default_and_set_macros_without_one() {
        let config = "#ifndef MSIG_CONFIG_H\n#define MSIG_CONFIG_H\n#ifndef MSIG_MODE\n#define MSIG_MODE 3\n#endif\n#if MSIG_MODE == 1\n#define N 16\n#elif MSIG_MODE == 3 /* x */\n#define N 24\n#endif\n#ifdef __AVX2__\n#endif\n#endif\n";
        let s = from_texts(&[config.to_string()], 5);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(s[0].shown(), "MSIG_MODE (1, 3)");
        let vdoo = "#ifdef VDOO_128\n#define VDOO_D 8\n#elif defined(VDOO_192)\n#define VDOO_D 12\n#endif\n#if VDOO_D > 4\n#endif\n";
        let s = from_texts(&[vdoo.to_string()], 5);
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["VDOO_128", "VDOO_192"]);
    }
}
