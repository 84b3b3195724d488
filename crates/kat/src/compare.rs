//! Comparison of generated KAT text with `kat.sha256` manifests (canonical form, modes
//! `strict` / `nolen`, `:N` record limits) and with reference files (spec §4.6).

use pqperf_model::katlog::{KatManifest, KatMode, sha256_hex};

/// True if a line's key (text before the first `=`, trailing spaces removed, at least 4
/// characters, `=` at position ≥ 5) ends in `_Len`.
pub fn is_len_line(line: &str) -> bool {
    match line.find('=') {
        Some(pos) if pos >= 4 => {
            let key = line[..pos].trim_end();
            key.len() >= 4 && key.ends_with("_Len")
        }
        _ => false,
    }
}

/// Canonical form: split on LF, strip trailing CR/space/tab, drop empty lines, (nolen: drop
/// `_Len` lines), stop at the `Count = ` line opening record `records + 1`, LF after each.
pub fn canonical(text: &str, mode: KatMode, records: Option<u64>) -> String {
    let mut out = String::new();
    let mut counts = 0u64;
    for raw in text.split('\n') {
        let line = raw.trim_end_matches(['\r', ' ', '\t']);
        if line.is_empty() {
            continue;
        }
        if line.starts_with("Count = ") {
            counts += 1;
            if records.is_some_and(|n| counts > n) {
                break;
            }
        }
        if mode == KatMode::NoLen && is_len_line(line) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// SHA-256 of the canonical form.
pub fn canonical_sha256(text: &str, mode: KatMode, records: Option<u64>) -> String {
    sha256_hex(canonical(text, mode, records).as_bytes())
}

/// Mode a manifest writer would choose for a text: `nolen` if any `_Len` line is blank.
pub fn auto_mode(text: &str) -> KatMode {
    if text
        .lines()
        .any(|l| is_len_line(l) && l.trim_end_matches(['\r', ' ', '\t']).ends_with('='))
    {
        KatMode::NoLen
    } else {
        KatMode::Strict
    }
}

/// Mode word for logs.
pub fn mode_word(mode: KatMode, records: Option<u64>) -> String {
    let m = match mode {
        KatMode::Strict => "strict",
        KatMode::NoLen => "nolen",
    };
    match records {
        Some(n) => format!("{m}:{n}"),
        None => m.to_string(),
    }
}

/// Outcome of checking one generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCheck {
    /// `PASS`, `MISMATCH` or `NOKAT`.
    pub status: &'static str,
    /// Detail for the RESULT line (empty for a plain PASS).
    pub detail: String,
    /// `computed <sha256> <mode> <file>` line to log (digest of the generated text).
    pub manifest_line: String,
}

/// Check a generated file against the manifest entry (precedence) or a reference text.
/// `count` is the number of PKC records generated (None for hash files).
pub fn check_file(
    label: &str,
    file: &str,
    generated: &str,
    manifest: Option<&KatManifest>,
    reference: Option<&str>,
    count: Option<u64>,
    default_count: u64,
) -> FileCheck {
    if let Some(e) = manifest.and_then(|m| m.lookup(label, file)) {
        let got = canonical_sha256(generated, e.mode, e.records);
        let manifest_line = format!("computed {got} {} {file}", mode_word(e.mode, e.records));
        if let Some(n) = e.records
            && count.unwrap_or(default_count) != n
        {
            return FileCheck {
                status: "MISMATCH",
                detail: format!(
                    "{file}: manifest covers {n} records, run generated {}",
                    count.unwrap_or(default_count)
                ),
                manifest_line,
            };
        }
        return if got == e.sha256 {
            FileCheck {
                status: "PASS",
                detail: String::new(),
                manifest_line,
            }
        } else {
            FileCheck {
                status: "MISMATCH",
                detail: format!("{file}: sha256 {got} != manifest {}", e.sha256),
                manifest_line,
            }
        };
    }
    let mode = auto_mode(reference.unwrap_or(""));
    let got = canonical_sha256(generated, mode, None);
    let manifest_line = format!("computed {got} {} {file}", mode_word(mode, None));
    let Some(reference) = reference else {
        return FileCheck {
            status: "NOKAT",
            detail: format!("{file}: no manifest entry and no reference file"),
            manifest_line,
        };
    };
    let (status, detail) = compare_reference(generated, reference, count);
    FileCheck {
        status,
        detail: if detail.is_empty() {
            detail
        } else {
            format!("{file}: {detail}")
        },
        manifest_line,
    }
}

/// A manifest entry that probably holds this instance's vectors under another name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMismatch {
    /// The manifest entry (`<label>/<file>`).
    pub entry: String,
    /// Name part of its file (`KAT_SIG_<name>.txt`).
    pub name: String,
    /// The generated text's canonical digest equals the entry's.
    pub same_digest: bool,
}

impl NameMismatch {
    /// Diagnosis for the log, the RESULT detail and the command output; `field` is the
    /// catalog field that sets the name (`instance`, or `kat.kat_name` when it is set).
    /// `key` is the instance's `<id>/<label>`.
    pub fn describe(&self, file: &str, field: &str, key: &str) -> String {
        let what = if self.same_digest {
            "its digest equals manifest entry"
        } else {
            "the manifest's only entry of this type is"
        };
        let fix = format!("set {field} = \"{}\" for {key} in the catalog", self.name);
        if self.same_digest {
            format!(
                "{file}: no manifest entry of this name; {what} {} (name {:?}): {fix}",
                self.entry, self.name
            )
        } else {
            format!(
                "{file}: no manifest entry of this name; {what} {} (name {:?}, digest differs): if that is this instance, {fix}",
                self.entry, self.name
            )
        }
    }
}

/// When `file` (`<prefix>_<name>.txt`) has no manifest entry: an entry of the same type
/// (`<prefix>_*.txt`) whose digest equals the generated text's, or else the manifest's only
/// entry of that type.
pub fn name_mismatch(
    file: &str,
    prefix: &str,
    generated: &str,
    manifest: &KatManifest,
) -> Option<NameMismatch> {
    let head = format!("{prefix}_");
    let name_of = |f: &str| -> Option<String> {
        Some(f.strip_prefix(&head)?.strip_suffix(".txt")?.to_string())
    };
    let same_type: Vec<_> = manifest
        .entries
        .iter()
        .filter(|e| name_of(e.file()).is_some_and(|n| !n.is_empty()))
        .collect();
    let found = |e: &&pqperf_model::katlog::ManifestEntry, same_digest| NameMismatch {
        entry: e.path.clone(),
        name: name_of(e.file()).unwrap_or_default(),
        same_digest,
    };
    if let Some(e) = same_type
        .iter()
        .find(|e| e.file() != file && canonical_sha256(generated, e.mode, e.records) == e.sha256)
    {
        return Some(found(e, true));
    }
    match same_type.as_slice() {
        [only] if only.file() != file => Some(found(only, false)),
        _ => None,
    }
}

/// Line-by-line comparison with a reference file: empty lines skipped, trailing CR/spaces
/// ignored, a blank `_Len =` reference line tolerated; a generated text that stops where the
/// reference continues with `Count = N` (with N = `count`) passes on the prefix.
pub fn compare_reference(
    generated: &str,
    reference: &str,
    count: Option<u64>,
) -> (&'static str, String) {
    let clean = |t: &str| -> Vec<String> {
        t.split('\n')
            .map(|l| l.trim_end_matches(['\r', ' ', '\t']).to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let g = clean(generated);
    let r = clean(reference);
    let mut blank = 0;
    for (i, rl) in r.iter().enumerate() {
        let Some(gl) = g.get(i) else {
            if let Some(n) = count
                && rl == &format!("Count = {n}")
            {
                return ("PASS", format!("(first {n} records only)"));
            }
            return (
                "MISMATCH",
                format!(
                    "generated text ends at line {}; reference has {:.60}",
                    i + 1,
                    rl
                ),
            );
        };
        if gl == rl {
            continue;
        }
        if rl.ends_with('=') && rl.contains("_Len =") && gl.starts_with(rl.as_str()) {
            blank += 1;
            continue;
        }
        return (
            "MISMATCH",
            format!(
                "line {}: generated {:.60} != reference {:.60}",
                i + 1,
                gl,
                rl
            ),
        );
    }
    if g.len() > r.len() {
        return (
            "MISMATCH",
            format!(
                "generated text longer than the reference ({} > {} lines)",
                g.len(),
                r.len()
            ),
        );
    }
    if blank > 0 {
        (
            "PASS",
            format!("({blank} blank _Len lines in reference: generated in template mode)"),
        )
    } else {
        ("PASS", String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const TXT: &str = "Count = 0\nSeed_Len = 64\nSeed = AA\nPK_Len = 2\nPK = 0102 \r\n\nCount = 1\nSeed_Len = 64\nSeed = BB\nPK_Len = 2\nPK = 0304\n\n";

    #[test]
    fn canonical_forms() {
        let s = canonical(TXT, KatMode::Strict, None);
        assert!(s.starts_with("Count = 0\nSeed_Len = 64\n"));
        assert!(s.contains("PK = 0102\nCount = 1\n"));
        let n = canonical(TXT, KatMode::NoLen, None);
        assert!(!n.contains("_Len"));
        let one = canonical(TXT, KatMode::Strict, Some(1));
        assert!(one.ends_with("PK = 0102\n"));
        assert!(is_len_line("Msg_Len = 3"));
        assert!(!is_len_line("Len = 3"));
        assert!(!is_len_line("PK = 00_Len"));
    }

    #[test]
    fn manifest_and_reference_checks() {
        let sha = canonical_sha256(TXT, KatMode::Strict, None);
        let m = KatManifest::parse(
            Path::new("kat.sha256"),
            &format!("{sha} strict L/KAT_SIG_X.txt\n"),
        )
        .unwrap();
        let ok = check_file("L", "KAT_SIG_X.txt", TXT, Some(&m), None, None, 10);
        assert_eq!(ok.status, "PASS");
        assert_eq!(
            ok.manifest_line,
            format!("computed {sha} strict KAT_SIG_X.txt")
        );
        let bad = check_file(
            "L",
            "KAT_SIG_X.txt",
            &TXT.replace("0304", "0305"),
            Some(&m),
            None,
            None,
            10,
        );
        assert_eq!(bad.status, "MISMATCH");
        assert!(bad.detail.contains("!= manifest"));
        let none = check_file("L", "KAT_SIG_Y.txt", TXT, Some(&m), None, None, 10);
        assert_eq!(none.status, "NOKAT");
        // Reference file in template mode.
        let reference = TXT.replace("PK_Len = 2", "PK_Len =");
        let r = check_file("L", "KAT_SIG_Y.txt", TXT, None, Some(&reference), None, 10);
        assert_eq!(
            (r.status, r.detail.contains("2 blank _Len")),
            ("PASS", true)
        );
        assert!(r.manifest_line.contains(" nolen "));
        // The same vectors under another name, and the only entry of the type.
        let m2 = KatManifest::parse(
            Path::new("kat.sha256"),
            &format!(
                "{} strict L/KAT_KEM_Z.txt\n{sha} strict L/KAT_SIG_X.txt\n",
                "0".repeat(64)
            ),
        )
        .unwrap();
        let d = name_mismatch("KAT_SIG_Y.txt", "KAT_SIG", TXT, &m2).unwrap();
        assert_eq!(
            (d.entry.as_str(), d.name.as_str(), d.same_digest),
            ("L/KAT_SIG_X.txt", "X", true)
        );
        assert_eq!(
            d.describe("KAT_SIG_Y.txt", "instance", "sign-01/L"),
            "KAT_SIG_Y.txt: no manifest entry of this name; its digest equals manifest entry L/KAT_SIG_X.txt (name \"X\"): set instance = \"X\" for sign-01/L in the catalog"
        );
        let other = name_mismatch("KAT_SIG_Y.txt", "KAT_SIG", "Count = 0\n", &m2).unwrap();
        assert!(!other.same_digest);
        assert!(
            other
                .describe("KAT_SIG_Y.txt", "kat.kat_name", "sign-01/L")
                .contains("digest differs): if that is this instance, set kat.kat_name = \"X\"")
        );
        // No entry of the type, or two entries none of which matches: no diagnosis.
        assert_eq!(name_mismatch("KAT_KEX_Y.txt", "KAT_KEX", TXT, &m2), None);
        let two = KatManifest::parse(
            Path::new("kat.sha256"),
            &format!("{sha} strict L/KAT_SIG_X.txt\n{sha} strict L/KAT_SIG_W.txt\n"),
        )
        .unwrap();
        assert_eq!(
            name_mismatch("KAT_SIG_Y.txt", "KAT_SIG", "Count = 0\n", &two),
            None
        );
        // Prefix run.
        let first = canonical(TXT, KatMode::Strict, Some(1));
        assert_eq!(compare_reference(&first, TXT, Some(1)).0, "PASS");
        assert_eq!(compare_reference(&first, TXT, None).0, "MISMATCH");
    }
}
