//! Absolute machine paths: the one check that evidence and pages carry none (`validate` scans
//! every dataset file with it; `publish` refuses to copy a file that has one outside captured
//! candidate output), and the redaction of such paths in captured output
//! ([`redact_machine_paths`]), so that what a candidate prints never blocks a publication.

/// Machine-path prefixes that must never appear in evidence.
const MACHINE_DIRS: [&str; 5] = ["home", "root", "Users", "tmp", "work"];

/// The first absolute machine path in `s` (`/home/…` etc. not preceded by a word character
/// or `.`), if any.
pub fn find_machine_path(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices('/') {
        if i > 0 {
            let prev = b[i - 1];
            if prev.is_ascii_alphanumeric() || prev == b'_' || prev == b'.' {
                continue;
            }
            // A non-ASCII word character before the slash.
            if prev >= 0x80
                && s[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
        }
        let rest = &s[i + 1..];
        for d in MACHINE_DIRS {
            if rest.starts_with(d) && rest[d.len()..].starts_with('/') {
                let end = s[i..]
                    .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                    .map(|e| i + e)
                    .unwrap_or(s.len());
                return Some(&s[i..end]);
            }
        }
    }
    None
}

/// What a redacted machine path becomes (contains no `/`, so it is never a path itself).
pub const REDACTED_PATH: &str = "[path redacted]";

/// `s` with every absolute machine path ([`find_machine_path`]) replaced by
/// [`REDACTED_PATH`], and how many were replaced. Only for captured candidate output: pqperf's
/// own fields must carry no machine path at all.
pub fn redact_machine_paths(s: &str) -> (String, usize) {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut n = 0;
    while let Some(m) = find_machine_path(rest) {
        // `m` is a slice of `rest`: its offset is the distance between the two.
        let at = m.as_ptr() as usize - rest.as_ptr() as usize;
        out.push_str(&rest[..at]);
        out.push_str(REDACTED_PATH);
        rest = &rest[at + m.len()..];
        n += 1;
    }
    out.push_str(rest);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_leaves_no_machine_path() {
        let (r, n) = redact_machine_paths("read /home/ann/.ssh/id_rsa: x\n/tmp/a and lib/x.so");
        assert_eq!(n, 2);
        assert_eq!(r, "read [path redacted] x\n[path redacted] and lib/x.so");
        assert_eq!(find_machine_path(&r), None);
        assert_eq!(
            redact_machine_paths("no paths"),
            ("no paths".to_string(), 0)
        );
    }

    #[test]
    fn machine_paths_are_found_only_when_rooted() {
        assert_eq!(
            find_machine_path("x /home/ann/lib.so y"),
            Some("/home/ann/lib.so")
        );
        assert_eq!(find_machine_path("\"/work/main/x\""), Some("/work/main/x"));
        assert_eq!(find_machine_path("/tmp/a"), Some("/tmp/a"));
        assert_eq!(find_machine_path("runs/x/home/a"), None);
        assert_eq!(find_machine_path("./tmp/a"), None);
        assert_eq!(find_machine_path("https://h/Users/x"), None);
        assert_eq!(find_machine_path("sign-02/lib/libBiT-128.so"), None);
        assert_eq!(find_machine_path("/homework/x"), None);
    }
}
