//! The evidence viewer: one HTML page per JSON evidence file of the site
//! (`evidence/<sys>/records/<id>/<f>.json.html` beside the copied file), the file's text one
//! field a line, each line with the field's JSON pointer (RFC 6901) as its `id`, so a page's
//! value link (`…json.html#/environment/cpu_model`) opens the file at the field that holds
//! the value (highlighted by the stylesheet's `:target` rule). Scalars are shown as the file
//! spells them (the text is scanned, not re-serialised); an array of scalars stays on one
//! line. No script, no fetch: the page is static HTML like the rest of the site.

use crate::html::escape;

/// One reference token of a JSON pointer (`~` → `~0`, `/` → `~1`).
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The viewer page of the evidence file at `dest` (site-root-relative) with these bytes;
/// `None` when the bytes are not one JSON value (the page then links the raw file).
pub fn render(dest: &str, bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut s = Scanner {
        t: text.as_bytes(),
        src: text,
        i: 0,
        out: String::with_capacity(text.len() * 2),
    };
    s.ws();
    s.value("", 0, None, false)?;
    s.ws();
    if s.i != s.t.len() {
        return None;
    }
    let root = "../".repeat(dest.matches('/').count());
    let name = dest.rsplit('/').next().unwrap_or(dest);
    let shown = dest.strip_prefix("evidence/").unwrap_or(dest);
    Some(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t} · evidence</title>\n<link rel=\"stylesheet\" href=\"{root}style.css\">\n\
         </head>\n<body class=\"evidence-view\">\n<main>\n<h1><code>{t}</code></h1>\n\
         <p>The evidence file as published (<a href=\"{raw}\">raw JSON</a>, {n} bytes), one \
         field a line. A value's link on a page opens this file at the field that holds it \
         (highlighted); its JSON pointer is the part of the address after <code>#</code>. \
         <a href=\"{root}index.html\">Site index</a>.</p>\n<pre class=\"json\">{body}</pre>\n\
         </main>\n</body>\n</html>\n",
        t = escape(shown),
        raw = escape(name),
        n = bytes.len(),
        body = s.out,
    ))
}

/// A scanner over the file's text that writes the viewer lines as it goes.
struct Scanner<'a> {
    t: &'a [u8],
    src: &'a str,
    i: usize,
    out: String,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.t.len() && matches!(self.t[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.t.get(self.i).copied()
    }

    /// A string token as the file spells it (quotes included).
    fn string_raw(&mut self) -> Option<&str> {
        let start = self.i;
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return self.src.get(start..self.i);
                }
                _ => self.i += 1,
            }
        }
    }

    /// A scalar (number, true, false, null) as the file spells it.
    fn scalar_raw(&mut self) -> Option<&str> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.i += 1;
        }
        (self.i > start).then(|| &self.src[start..self.i])
    }

    /// Does the container starting here hold only scalars (shown on one line)?
    fn flat_array(&self) -> bool {
        let mut j = self.i + 1;
        let mut in_str = false;
        while j < self.t.len() {
            let c = self.t[j];
            if in_str {
                match c {
                    b'\\' => j += 1,
                    b'"' => in_str = false,
                    _ => {}
                }
            } else {
                match c {
                    b'"' => in_str = true,
                    b'[' | b'{' => return false,
                    b']' => return true,
                    _ => {}
                }
            }
            j += 1;
        }
        false
    }

    /// Open a line: the element with this pointer as its id, its indentation and key.
    fn open(&mut self, ptr: &str, depth: usize, key: Option<&str>) {
        self.out.push_str("<span id=\"");
        self.out
            .push_str(&escape(if ptr.is_empty() { "/" } else { ptr }));
        self.out.push_str("\">");
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        if let Some(k) = key {
            self.out.push_str("<b>");
            self.out.push_str(&escape(k));
            self.out.push_str("</b>: ");
        }
    }

    fn close_line(&mut self, comma: bool) {
        if comma {
            self.out.push(',');
        }
        self.out.push_str("</span>\n");
    }

    /// One value at `ptr`; `key` is its member name as spelled; `comma` when more follow.
    fn value(&mut self, ptr: &str, depth: usize, key: Option<&str>, comma: bool) -> Option<()> {
        match self.peek()? {
            b'{' => {
                self.open(ptr, depth, key);
                self.out.push('{');
                self.i += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.i += 1;
                    self.out.push('}');
                    self.close_line(comma);
                    return Some(());
                }
                self.out.push_str("</span>\n");
                loop {
                    self.ws();
                    let raw = self.string_raw()?.to_string();
                    let name: String = serde_json::from_str(&raw).ok()?;
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    let child = format!("{ptr}/{}", token(&name));
                    // Is another member after this one? Scan the value first.
                    self.value(&child, depth + 1, Some(&raw), false)?;
                    self.ws();
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            // Put the comma before the line's closing tag.
                            let end = self.out.len() - "</span>\n".len();
                            self.out.insert(end, ',');
                        }
                        b'}' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                self.out.push_str("<span>");
                for _ in 0..depth {
                    self.out.push_str("  ");
                }
                self.out.push('}');
                self.close_line(comma);
            }
            b'[' => {
                self.open(ptr, depth, key);
                if self.flat_array() {
                    self.out.push('[');
                    self.i += 1;
                    let mut first = true;
                    loop {
                        self.ws();
                        match self.peek()? {
                            b']' => {
                                self.i += 1;
                                break;
                            }
                            b',' => {
                                self.i += 1;
                                continue;
                            }
                            b'"' => {
                                let raw = self.string_raw()?.to_string();
                                if !first {
                                    self.out.push_str(", ");
                                }
                                self.out.push_str(&escape(&raw));
                            }
                            _ => {
                                let raw = self.scalar_raw()?.to_string();
                                if !first {
                                    self.out.push_str(", ");
                                }
                                self.out.push_str(&escape(&raw));
                            }
                        }
                        first = false;
                    }
                    self.out.push(']');
                    self.close_line(comma);
                    return Some(());
                }
                self.out.push('[');
                self.out.push_str("</span>\n");
                self.i += 1;
                let mut n = 0usize;
                loop {
                    self.ws();
                    if self.peek()? == b']' {
                        self.i += 1;
                        break;
                    }
                    let child = format!("{ptr}/{n}");
                    self.value(&child, depth + 1, None, false)?;
                    n += 1;
                    self.ws();
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            let end = self.out.len() - "</span>\n".len();
                            self.out.insert(end, ',');
                        }
                        b']' => {
                            self.i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                self.out.push_str("<span>");
                for _ in 0..depth {
                    self.out.push_str("  ");
                }
                self.out.push(']');
                self.close_line(comma);
            }
            b'"' => {
                let raw = self.string_raw()?.to_string();
                self.open(ptr, depth, key);
                self.out.push_str(&escape(&raw));
                self.close_line(comma);
            }
            _ => {
                let raw = self.scalar_raw()?.to_string();
                self.open(ptr, depth, key);
                self.out.push_str(&escape(&raw));
                self.close_line(comma);
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{fragment, unfragment};

    #[test]
    fn every_field_is_a_line_with_its_pointer_as_id() {
        let json = br#"{"a": 1.50, "env": {"cpu_model": "X <1>", "k/~": null}, "xs": [1, 2e-05], "ps": [{"s": "ok"}, {}], "e": []}"#;
        let html = render("evidence/x86_1/records/c/l__sign.json", json).unwrap();
        for id in [
            "id=\"/a\"",
            "id=\"/env\"",
            "id=\"/env/cpu_model\"",
            "id=\"/env/k~1~0\"",
            "id=\"/xs\"",
            "id=\"/ps/0/s\"",
            "id=\"/ps/1\"",
            "id=\"/e\"",
        ] {
            assert!(html.contains(id), "{id} missing in {html}");
        }
        // Scalars as the file spells them, escaped; a flat array on one line.
        assert!(
            html.contains("<b>&quot;a&quot;</b>: 1.50,</span>"),
            "{html}"
        );
        assert!(html.contains("&quot;X &lt;1&gt;&quot;"));
        assert!(
            html.contains("<b>&quot;xs&quot;</b>: [1, 2e-05],</span>"),
            "{html}"
        );
        assert!(html.contains("href=\"../../../../style.css\""));
        assert!(html.contains("href=\"l__sign.json\""));
        assert!(render("x.json", b"{\"a\": }").is_none());
        assert!(render("x.json", b"{} x").is_none());
    }

    #[test]
    fn fragments_round_trip() {
        assert_eq!(fragment("/environment/cpu_model"), "/environment/cpu_model");
        assert_eq!(fragment("/a b/%"), "/a%20b/%25");
        assert_eq!(unfragment(&fragment("/a b/%/é")), "/a b/%/é");
    }
}
