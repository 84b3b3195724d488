//! Markdown safety for evidence strings: the escaping and URL rule of `pqperf_model::md`
//! (re-exported, defined once there) and [`sanitize_fragment`] for curated Markdown fragments.

pub use pqperf_model::md::{code_span, escape_text, safe_url};

/// A Markdown fragment from evidence (a note, a KAT cause) made safe to embed in a page: raw
/// HTML, images and links whose URL is not http/https/relative are replaced by their escaped
/// source text; everything else (emphasis, code, safe links) is kept byte for byte.
pub fn sanitize_fragment(s: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut bad: Vec<std::ops::Range<usize>> = Vec::new();
    let mut depth_skip: Option<(usize, std::ops::Range<usize>)> = None;
    let mut depth = 0usize;
    for (ev, range) in Parser::new(s).into_offset_iter() {
        match &ev {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth_skip.is_some() {
            if let Event::End(TagEnd::Image | TagEnd::Link) = ev
                && depth_skip.as_ref().is_some_and(|(d, _)| *d == depth)
            {
                bad.push(depth_skip.take().map(|(_, r)| r).unwrap_or(range));
            }
            continue;
        }
        match ev {
            Event::Html(_) | Event::InlineHtml(_) => bad.push(range),
            Event::Start(Tag::Image { .. }) => depth_skip = Some((depth - 1, range)),
            Event::Start(Tag::Link { dest_url, .. }) if !safe_url(&dest_url) => {
                depth_skip = Some((depth - 1, range))
            }
            _ => {}
        }
    }
    if let Some((_, r)) = depth_skip {
        bad.push(r);
    }
    if bad.is_empty() {
        return s.to_string();
    }
    bad.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(s.len() + 16);
    let mut at = 0;
    for r in bad {
        if r.start < at {
            continue;
        }
        out.push_str(&s[at..r.start]);
        out.push_str(&escape_text(&s[r.clone()]));
        at = r.end;
    }
    out.push_str(&s[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for ok in [
            "https://example.org/a",
            "HTTP://x",
            "../x/y.md",
            "a.md#b",
            "x?y=1:2",
        ] {
            assert!(safe_url(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "data:text/html,x",
            "//evil.example/x",
            "file:///etc/passwd",
            "vbscript:x",
        ] {
            assert!(!safe_url(bad), "{bad}");
        }
    }

    #[test]
    fn fragments() {
        let clean =
            "uses `shake256` *twice*; see [spec](https://example.org/x) and [page](../a.md)";
        assert_eq!(sanitize_fragment(clean), clean);
        let out = sanitize_fragment("a <script>x</script> b");
        assert!(!out.contains("<script>"), "{out}");
        let out = sanitize_fragment("see ![t](https://evil.example/p.png) now");
        assert!(out.contains("\\!\\[t\\]") && !out.contains("!["), "{out}");
        let out = sanitize_fragment("[click](javascript:alert(1)) and [d](data:text/html,x)");
        assert!(!out.contains("[click]("), "{out}");
        assert!(!out.contains("[d]("), "{out}");
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_text("plain text 1.2"), "plain text 1.2");
        assert_eq!(
            escape_text("<img src=x> [a](javascript:x)"),
            "\\<img src=x\\> \\[a\\](javascript:x)"
        );
    }
}
