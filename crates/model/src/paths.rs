//! Absolute machine paths: the one check that evidence and pages carry none (`validate` scans
//! every dataset file with it; `publish` refuses to copy a file that has one).

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

#[cfg(test)]
mod tests {
    use super::*;

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
