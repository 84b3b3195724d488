//! Text into Markdown, defined once for every page: evidence strings (system descriptions,
//! instance names, algorithm names) are escaped so that they render as the literal text and
//! can never add a heading, a table cell, a link or HTML; [`structure_char`] is the rule
//! `validate` applies to refuse such strings at the source; [`safe_url`] says which URLs may
//! become link targets. For the characters of ordinary names (letters, digits, spaces,
//! `-().,:;=/+'`) every function here is the identity, so reference pages stay byte-identical.

/// Characters that Markdown (or inline HTML) would interpret and [`escape_text`] escapes.
const MD_SPECIAL: &[char] = &[
    '\\', '`', '*', '_', '[', ']', '<', '>', '!', '|', '#', '~', '&',
];

/// Escapes the characters Markdown (and inline HTML) would interpret, so `s` renders as the
/// literal text: a backslash before each of ``\ ` * _ [ ] < > ! | # ~ &``, and every control
/// character (newline, carriage return, tab, escape, …) becomes a space, so the text stays on
/// its line (no injected heading or table row). Plain words, digits, spaces and
/// `.,:;()/-=+'` pass unchanged.
pub fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if MD_SPECIAL.contains(&c) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` as a code span that is safe inside a table cell: `` `s` `` for ordinary names; a
/// backtick inside gets a longer fence (padded with spaces), `|` is escaped as `\|` (GFM
/// tables split on it even inside code spans) and control characters become spaces.
pub fn code_span(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let clean = clean.replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    if longest == 0 {
        return format!("`{clean}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {clean} {fence}")
}

/// The first character of `s` that would change a page's structure if it were placed raw into
/// Markdown (a control character such as a newline, or one of ``| < > [ ] ` \``), if any.
/// `validate` refuses descriptions and names with one, naming the file and line or instance.
pub fn structure_char(s: &str) -> Option<char> {
    s.chars()
        .find(|&c| c.is_control() || matches!(c, '|' | '<' | '>' | '[' | ']' | '`' | '\\'))
}

/// True if `url` may become a link target: `http://`, `https://` or a relative reference (no
/// scheme, not protocol-relative), without whitespace, control characters or `<>()`
/// (which would end a Markdown link early).
pub fn safe_url(url: &str) -> bool {
    let u = url.trim();
    if u.chars()
        .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '<' | '>' | '(' | ')'))
    {
        return false;
    }
    let lower = u.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return true;
    }
    if u.starts_with("//") {
        return false;
    }
    // A scheme is `alpha *( alpha / digit / + / - / . ) ":"` before any `/`, `?` or `#`.
    let head = u.split(['/', '?', '#']).next().unwrap_or("");
    !head.contains(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_are_unchanged() {
        for s in [
            "Intel Core i7-12700 (Alder Lake), one performance core, turbo off, fixed 2.1 GHz, SMT off",
            "clock pinned at 2.71 GHz (cpufreq performance, min = max), no SMT",
            "BIT: Bimodal Triangular distribution based lattice signatures",
            "WOTS-PXOF-128",
        ] {
            assert_eq!(escape_text(s), s);
            assert_eq!(code_span(s), format!("`{s}`"));
            assert_eq!(structure_char(s), None);
        }
    }

    #[test]
    fn hostile_text_stays_on_its_line() {
        let s = "x | y\n# Owned <script>alert(1)</script> [a](javascript:alert(1))";
        let e = escape_text(s);
        assert!(!e.contains('\n'));
        assert_eq!(
            e,
            "x \\| y \\# Owned \\<script\\>alert(1)\\</script\\> \\[a\\](javascript:alert(1))"
        );
        assert_eq!(structure_char(s), Some('|'));
        assert_eq!(structure_char("a\nb"), Some('\n'));
        assert_eq!(structure_char("[a](javascript:x)"), Some('['));
        assert_eq!(code_span("a|b\nc"), "`a\\|b c`");
        assert_eq!(code_span("a`b"), "`` a`b ``");
    }

    #[test]
    fn urls() {
        assert!(safe_url("https://www.niccs.org.cn/a/b_1.html"));
        assert!(safe_url("../x.md"));
        assert!(!safe_url("javascript:alert(1)"));
        assert!(!safe_url("JavaScript:alert(1)"));
        assert!(!safe_url("//evil.example/x"));
        assert!(!safe_url("https://e.example/x) [y](javascript:z"));
        assert!(!safe_url("https://e.example/a b"));
    }
}
