//! KAT check logs (`kat/<id>/<label>.log`; evidence-formats.md §6) and `<id>/kat.sha256`
//! manifests (iccs-api-and-kat.md §4.6).

use std::path::Path;

use indexmap::IndexMap;
use sha2::{Digest, Sha256};

use crate::error::ModelError;

/// sha256 of bytes as 64 lower-case hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A `manifest <sha256> <mode> <file>` line of a reference KAT log, or pqperf's
/// `computed <sha256> <mode> <file>`: in both the digest is the one computed from the
/// generated text (in the manifest's mode), not the manifest's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatLogManifest {
    /// Digest computed from the generated text.
    pub sha256: String,
    /// Comparison mode (`strict`, `nolen`, optionally `:N`).
    pub mode: String,
    /// KAT file name.
    pub file: String,
}

/// The final `RESULT <id> <instance> <STATUS>[ detail]` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatResult {
    /// Candidate id.
    pub id: String,
    /// Instance name.
    pub instance: String,
    /// `PASS`, `MISMATCH`, `TIMEOUT`, …
    pub status: String,
    /// Rest of the line after the status (without the separating space; may be empty).
    pub detail: String,
    /// The whole line as written (the PASS line ends with a space).
    pub line: String,
}

/// A parsed KAT log. The text is kept so that the file's digest can be checked.
#[derive(Debug, Clone, PartialEq)]
pub struct KatLog {
    /// `key = value` header lines (`library`, `id`, `type`, `algorithm`, `instance`, …) in order.
    pub header: IndexMap<String, String>,
    /// `timing …` lines (without the `timing` word).
    pub timing: Vec<String>,
    /// `wrote …` lines (without the `wrote` word).
    pub wrote: Vec<String>,
    /// `manifest` (reference) and `computed` (pqperf) lines: digests of the generated text.
    pub manifests: Vec<KatLogManifest>,
    /// The last line matching `^RESULT \S+ \S+ (\S+)` (the verdict the validator uses).
    pub result: Option<KatResult>,
    /// The text (invalid UTF-8, if any, replaced).
    pub text: String,
    /// sha256 of the file's bytes (of `text` when parsed from a string).
    pub sha256: String,
}

impl KatLog {
    /// Parse a KAT log. Never fails on unknown lines (free-form tool output is kept in
    /// `text`); `path` is only used in errors for malformed known lines.
    pub fn parse(path: &Path, text: &str) -> Result<KatLog, ModelError> {
        let mut log = KatLog {
            header: IndexMap::new(),
            timing: Vec::new(),
            wrote: Vec::new(),
            manifests: Vec::new(),
            result: None,
            text: text.to_string(),
            sha256: sha256_hex(text.as_bytes()),
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("RESULT ") {
                let mut parts = rest.splitn(3, ' ');
                let id = parts.next().unwrap_or("");
                let instance = parts.next().unwrap_or("");
                let tail = parts.next().unwrap_or("");
                let (status, detail) = tail.split_once(' ').unwrap_or((tail, ""));
                if !id.is_empty() && !instance.is_empty() && !status.is_empty() {
                    log.result = Some(KatResult {
                        id: id.to_string(),
                        instance: instance.to_string(),
                        status: status.to_string(),
                        detail: detail.to_string(),
                        line: line.to_string(),
                    });
                }
            } else if let Some(rest) = line
                .strip_prefix("manifest ")
                .or_else(|| line.strip_prefix("computed "))
            {
                let parts: Vec<&str> = rest.splitn(3, ' ').collect();
                if parts.len() != 3 || !is_sha256_hex(parts[0]) {
                    return Err(ModelError::text(
                        path,
                        Some(i + 1),
                        Some("manifest"),
                        format!(
                            "malformed manifest line {line:?} (want `manifest <sha256> <mode> <file>`)"
                        ),
                    ));
                }
                log.manifests.push(KatLogManifest {
                    sha256: parts[0].to_string(),
                    mode: parts[1].to_string(),
                    file: parts[2].to_string(),
                });
            } else if let Some(rest) = line.strip_prefix("timing ") {
                log.timing.push(rest.trim_start().to_string());
            } else if let Some(rest) = line.strip_prefix("wrote ") {
                log.wrote.push(rest.trim_start().to_string());
            } else if let Some((k, v)) = line.split_once(" = ") {
                let k = k.trim_end();
                if !k.is_empty() && !k.contains(' ') && log.result.is_none() {
                    log.header.insert(k.to_string(), v.to_string());
                }
            }
        }
        Ok(log)
    }

    /// Read and parse a KAT log file (bounded: [`crate::limits::read_bounded`]).
    pub fn read(path: &Path, shown_as: &Path) -> Result<KatLog, ModelError> {
        let bytes = crate::limits::read_bounded(path, shown_as)?;
        // Digest checks are on bytes; parsing tolerates stray invalid UTF-8.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut log = KatLog::parse(shown_as, &text)?;
        log.sha256 = sha256_hex(&bytes);
        Ok(log)
    }

    /// Header value (`instance`, `algorithm`, …).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.header.get(key).map(String::as_str)
    }

    /// The sha256 of the library this log's KAT ran on (`library_sha256 = …`, written by
    /// the KAT parent, never taken from the child), if the log names it.
    pub fn library_sha256(&self) -> Option<&str> {
        self.get(LIBRARY_SHA256_KEY)
    }

    /// Status of the RESULT line (`PASS`, `TIMEOUT`, …), if any.
    pub fn status(&self) -> Option<&str> {
        self.result.as_ref().map(|r| r.status.as_str())
    }
}

/// Header key of the tested library's sha256 in a KAT log (pqperf's addition to §6).
pub const LIBRARY_SHA256_KEY: &str = "library_sha256";

/// Header key of the digest of the catalog entry and import the tested library was built
/// from (build.json `inputs_sha256`) in a KAT log.
pub const INPUTS_SHA256_KEY: &str = "inputs_sha256";

/// True for 64 lower-case hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Comparison mode of a manifest line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KatMode {
    /// Canonical text compared as a whole.
    Strict,
    /// Like strict, but `*_Len` lines dropped.
    NoLen,
}

/// One line of `<id>/kat.sha256`: `<sha256> <mode>[:<records>] <label>/<file>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Digest of the canonical KAT text.
    pub sha256: String,
    /// `strict` or `nolen`.
    pub mode: KatMode,
    /// Digest limited to the first N records.
    pub records: Option<u64>,
    /// `<label>/<reference KAT file name>`.
    pub path: String,
}

impl ManifestEntry {
    /// Label part of the path (before the first `/`).
    pub fn label(&self) -> &str {
        self.path.split_once('/').map(|(l, _)| l).unwrap_or("")
    }

    /// File-name part of the path.
    pub fn file(&self) -> &str {
        self.path
            .rsplit_once('/')
            .map(|(_, f)| f)
            .unwrap_or(&self.path)
    }

    /// The line as written (without newline).
    pub fn to_line(&self) -> String {
        let mode = match self.mode {
            KatMode::Strict => "strict",
            KatMode::NoLen => "nolen",
        };
        match self.records {
            Some(n) => format!("{} {mode}:{n} {}", self.sha256, self.path),
            None => format!("{} {mode} {}", self.sha256, self.path),
        }
    }
}

/// A `<id>/kat.sha256` manifest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KatManifest {
    /// Lines in file order.
    pub entries: Vec<ManifestEntry>,
}

impl KatManifest {
    /// Parse manifest text; every non-empty line must be `<sha256> <mode>[:N] <path>`.
    pub fn parse(path: &Path, text: &str) -> Result<KatManifest, ModelError> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |msg: String| ModelError::text(path, Some(i + 1), None, msg);
            let parts: Vec<&str> = line.splitn(3, ' ').collect();
            if parts.len() != 3 {
                return Err(bad(format!(
                    "expected `<sha256> <mode> <label>/<file>`, got {line:?}"
                )));
            }
            if !is_sha256_hex(parts[0]) {
                return Err(bad(format!(
                    "not a sha256 (64 lower-case hex digits): {:?}",
                    parts[0]
                )));
            }
            let (mode, records) = match parts[1].split_once(':') {
                Some((m, n)) => (
                    m,
                    Some(
                        n.parse::<u64>()
                            .map_err(|_| bad(format!("bad record count in mode {:?}", parts[1])))?,
                    ),
                ),
                None => (parts[1], None),
            };
            let mode = match mode {
                "strict" => KatMode::Strict,
                "nolen" => KatMode::NoLen,
                other => return Err(bad(format!("unknown mode {other:?} (strict or nolen)"))),
            };
            entries.push(ManifestEntry {
                sha256: parts[0].to_string(),
                mode,
                records,
                path: parts[2].to_string(),
            });
        }
        Ok(KatManifest { entries })
    }

    /// Read a manifest file.
    pub fn read(path: &Path, shown_as: &Path) -> Result<KatManifest, ModelError> {
        let text = crate::limits::read_text(path, shown_as)?;
        Self::parse(shown_as, &text)
    }

    /// Manifest text (one `\n`-terminated line per entry).
    pub fn to_text(&self) -> String {
        self.entries.iter().map(|e| e.to_line() + "\n").collect()
    }

    /// Entry for `<label>/<file>`, falling back to the bare file name.
    pub fn lookup(&self, label: &str, file: &str) -> Option<&ManifestEntry> {
        let want = format!("{label}/{file}");
        self.entries
            .iter()
            .find(|e| e.path == want)
            .or_else(|| self.entries.iter().find(|e| e.file() == file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "library     = lib/libBiT-128.so\nid          = sign-02\ninstance    = BiT-128\nbuild_flags = -O2 -x = y\ntiming  keygen 0.160 ms  sign 0.964 ms  verify 0.164 ms (avg over 10)\nwrote  kat/KAT_SIG_BiT-128.txt (92534 bytes)\nmanifest 294c774baf60b96309b21b3b8dccf95a04887e449a705efcbd73c0212c9fc318 strict KAT_SIG_BiT-128.txt\nRESULT sign-02 BiT-128 PASS \n";

    #[test]
    fn parses_log() {
        let log = KatLog::parse(Path::new("x.log"), LOG).unwrap();
        assert_eq!(log.get("instance"), Some("BiT-128"));
        assert_eq!(log.get("build_flags"), Some("-O2 -x = y"));
        assert_eq!(log.status(), Some("PASS"));
        assert_eq!(
            log.result.as_ref().unwrap().line,
            "RESULT sign-02 BiT-128 PASS "
        );
        assert_eq!(log.manifests[0].mode, "strict");
        assert_eq!(log.wrote, vec!["kat/KAT_SIG_BiT-128.txt (92534 bytes)"]);
        let t = KatLog::parse(
            Path::new("x.log"),
            "RESULT sign-33 VDOO-512 TIMEOUT signal=14\n",
        )
        .unwrap();
        assert_eq!(t.status(), Some("TIMEOUT"));
        assert_eq!(t.result.unwrap().detail, "signal=14");
    }

    #[test]
    fn manifest_round_trip_and_errors() {
        let text = "294c774baf60b96309b21b3b8dccf95a04887e449a705efcbd73c0212c9fc318 strict BiT-128/KAT_SIG_BiT-128.txt\n16a641e1db1fdfa1d441a8566706083237dacead5f51dee7da20f9659ae2b677 nolen:10 X/KAT_2_12_X.txt\n";
        let m = KatManifest::parse(Path::new("sign-02/kat.sha256"), text).unwrap();
        assert_eq!(m.to_text(), text);
        assert_eq!(m.entries[1].records, Some(10));
        assert_eq!(m.entries[1].mode, KatMode::NoLen);
        assert_eq!(
            m.lookup("BiT-128", "KAT_SIG_BiT-128.txt").unwrap().label(),
            "BiT-128"
        );
        let e =
            KatManifest::parse(Path::new("sign-02/kat.sha256"), "abc strict x/y\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("sign-02/kat.sha256:1: not a sha256"),
            "{e}"
        );
    }
}
