//! Captured candidate output (a driver's stderr in `processes[].stderr`, the `child:` lines of
//! a KAT log): what the measured code printed is kept as evidence, never as a weapon. It is
//! stored capped (the caller keeps a bounded tail or head) with every control character other
//! than newline and tab, and every Unicode bidirectional control, written as a visible escape
//! (`\x1b`, `\u{202e}`), so that it cannot move a terminal's cursor, hide text or reorder what
//! a reader sees. Absolute machine paths in it are redacted on publish
//! ([`crate::paths::redact_machine_paths`]).

use std::fmt::Write as _;

/// Most characters of candidate stderr a record's process entry keeps (the last ones).
pub const STDERR_KEEP_CHARS: usize = 2000;

/// True for the characters [`escape_captured`] writes as escapes.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with control characters (except newline and tab) and bidirectional controls written
/// as visible escapes: `\x1b` below U+0080, `\u{202e}` above. Ordinary text is unchanged.
pub fn escape_captured(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

/// The last `n` characters of `s`, escaped ([`escape_captured`]); the escape of a character is
/// never cut.
pub fn captured_tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    let tail: String = s.chars().skip(count.saturating_sub(n)).collect();
    escape_captured(&tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_become_visible() {
        assert_eq!(
            escape_captured("plain\ttext\nline 2"),
            "plain\ttext\nline 2"
        );
        assert_eq!(
            escape_captured("\u{1b}[2J\rok\u{0}"),
            "\\x1b[2J\\x0dok\\x00"
        );
        assert_eq!(escape_captured("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(captured_tail("abcdef", 3), "def");
        assert_eq!(captured_tail("ab\u{7}", 2), "b\\x07");
    }
}
