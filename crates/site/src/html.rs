//! Markdown → HTML for the site pages (pulldown-cmark, tables on): relative `.md` links become
//! `.html` (also inside raw HTML such as the crumb), links to pages the site does not contain
//! lose their target (text stays), headings get slug ids, tables are wrapped for horizontal
//! scrolling on phones, and table cells holding numbers link to their evidence file through a
//! [`TableLinker`].

use std::collections::HashSet;

use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Escape text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    if !s
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Normalise a `/`-separated relative path (`a/../b/./c` → `b/c`); `None` if it leaves the root.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Directory of a site-root-relative file path (`x86_1/a.html` → `x86_1`).
pub fn dir_of(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

/// Relative href from the page at `from` (site-root-relative file) to `to` (site-root-relative).
pub fn relative(from: &str, to: &str) -> String {
    let from_dir = dir_of(from);
    // Skip the directories both paths share (whole components only; never `to`'s file name).
    let (mut f, mut t) = (from_dir, to);
    while !f.is_empty() {
        let (fh, fr) = f.split_once('/').unwrap_or((f, ""));
        match t.split_once('/') {
            Some((th, tr)) if th == fh => {
                f = fr;
                t = tr;
            }
            _ => break,
        }
    }
    let ups = f.split('/').filter(|s| !s.is_empty()).count();
    let mut out = String::with_capacity(3 * ups + t.len());
    for _ in 0..ups {
        out.push_str("../");
    }
    out.push_str(t);
    out
}

/// Is this href external or a pure anchor (left untouched)?
pub fn is_external(href: &str) -> bool {
    href.starts_with('#')
        || href.starts_with("mailto:")
        || href.starts_with("data:")
        || href.contains("://")
}

/// Rewrite a page-relative href: `.md` → `.html`; `None` if the target is not in `known`.
/// `known` holds site-root-relative paths of every generated page and copied evidence file.
pub fn fix_href(href: &str, page: &str, known: &HashSet<String>) -> Option<String> {
    if is_external(href) {
        return Some(href.to_string());
    }
    let (path, frag) = match href.find('#') {
        Some(i) => (&href[..i], &href[i..]),
        None => (href, ""),
    };
    let path = match path.strip_suffix(".md") {
        Some(stem) => format!("{stem}.html"),
        None => path.to_string(),
    };
    let joined = if dir_of(page).is_empty() {
        path.clone()
    } else {
        format!("{}/{}", dir_of(page), path)
    };
    let target = normalize(&joined)?;
    let target = if target.is_empty()
        || known.contains(&format!("{target}/index.html")) && !known.contains(&target)
    {
        if target.is_empty() {
            "index.html".to_string()
        } else {
            format!("{target}/index.html")
        }
    } else {
        target
    };
    if known.contains(&target) {
        Some(format!("{path}{frag}"))
    } else {
        None
    }
}

/// Rewrite the `href="…"` attributes of a raw HTML fragment; a link whose target is missing
/// keeps its text but loses the attribute.
pub fn fix_raw_html(html: &str, page: &str, known: &HashSet<String>) -> String {
    let safe = sanitize_raw(html);
    let mut out = String::with_capacity(safe.len());
    let mut rest = safe.as_str();
    while let Some(i) = rest.find("href=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 6..];
        let Some(j) = after.find('"') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let href = &after[..j];
        match fix_href(href, page, known) {
            Some(h) => {
                out.push_str("href=\"");
                out.push_str(&h);
                out.push('"');
            }
            None => out.push_str("data-missing=\"\""),
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    out
}

/// Tags that raw HTML inside the Markdown pages may use (crumbs, badges, ranking tables).
const ALLOWED_TAGS: &[&str] = &[
    "a", "abbr", "b", "br", "code", "div", "em", "i", "li", "ol", "p", "small", "span", "strong",
    "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
];

/// Escape every raw HTML tag that is not in the allow-list or that carries an event handler,
/// a `style` or a `javascript:` URL, so that names and notes can never inject script.
pub fn sanitize_raw(html: &str) -> String {
    use std::sync::OnceLock;
    static TAG: OnceLock<regex::Regex> = OnceLock::new();
    static BAD: OnceLock<regex::Regex> = OnceLock::new();
    let tag = TAG.get_or_init(|| {
        regex::Regex::new(r"<(/?)([A-Za-z][A-Za-z0-9-]*)([^<>]*)>").expect("static regex")
    });
    let bad = BAD.get_or_init(|| {
        regex::Regex::new(r#"(?i)(\bon[a-z]+\s*=|javascript:|\bstyle\s*=|\bsrcdoc\s*=)"#)
            .expect("static regex")
    });
    let mut out = String::with_capacity(html.len());
    let mut last = 0;
    for m in tag.captures_iter(html) {
        let whole = m.get(0).expect("match");
        out.push_str(&html[last..whole.start()]);
        let name = m[2].to_ascii_lowercase();
        if ALLOWED_TAGS.contains(&name.as_str()) && !bad.is_match(&m[3]) {
            out.push_str(whole.as_str());
        } else {
            out.push_str(&escape(whole.as_str()));
        }
        last = whole.end();
    }
    out.push_str(&html[last..]);
    // A lone `<script` without a closing `>` in this fragment is escaped too.
    if out.to_ascii_lowercase().contains("<script") {
        out = out.replace('<', "&lt;");
    }
    out
}

/// Heading slug: lowercase, punctuation dropped, spaces to `-`, underscores kept.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    out
}

/// What a linker sees of one table cell.
#[derive(Clone, Debug, Default)]
pub struct CellInfo {
    /// Plain text (code spans included, without backticks).
    pub text: String,
    /// Text of the first code span, if any.
    pub code: Option<String>,
    /// The cell already contains a link.
    pub has_link: bool,
}

/// Maps table cells to evidence files (site-root-relative paths).
pub trait TableLinker {
    /// One entry per cell of `row` (may be shorter; missing = no link).
    fn link(&self, header: &[String], row: &[CellInfo]) -> Vec<Option<String>>;
}

/// A linker that links nothing.
pub struct NoLinks;

impl TableLinker for NoLinks {
    fn link(&self, _: &[String], _: &[CellInfo]) -> Vec<Option<String>> {
        Vec::new()
    }
}

/// Result of rendering one Markdown page.
#[derive(Debug, Default)]
pub struct Rendered {
    /// The page body as HTML.
    pub html: String,
    /// Text of the first H1.
    pub title: String,
    /// The page carries its own `<p class="crumb">`.
    pub has_crumb: bool,
    /// Slug ids of the `##` headings with their text (for charts to anchor on).
    pub sections: Vec<(String, String)>,
}

struct Cell<'a> {
    events: Vec<Event<'a>>,
    info: CellInfo,
}

fn cell_info(events: &[Event]) -> CellInfo {
    let mut info = CellInfo::default();
    for e in events {
        match e {
            Event::Text(t) => info.text.push_str(t),
            Event::Code(t) => {
                info.text.push_str(t);
                if info.code.is_none() {
                    info.code = Some(t.to_string());
                }
            }
            Event::Start(Tag::Link { .. }) => info.has_link = true,
            Event::InlineHtml(h) | Event::Html(h) if h.contains("<a ") && h.contains("href") => {
                info.has_link = true
            }
            _ => {}
        }
    }
    info.text = info.text.trim().to_string();
    info
}

/// Append a table cell's HTML: plain text and code spans directly (escaped as pulldown-cmark
/// escapes them), anything else through pulldown-cmark.
fn push_cell_html(html: &mut String, events: Vec<Event>) {
    let simple = events
        .iter()
        .all(|e| matches!(e, Event::Text(_) | Event::Code(_)));
    if !simple {
        pulldown_cmark::html::push_html(html, events.into_iter());
        return;
    }
    for e in &events {
        match e {
            Event::Text(t) => {
                let _ = pulldown_cmark_escape::escape_html_body_text(&mut *html, t);
            }
            Event::Code(t) => {
                html.push_str("<code>");
                let _ = pulldown_cmark_escape::escape_html_body_text(&mut *html, t);
                html.push_str("</code>");
            }
            _ => {}
        }
    }
}

/// Render a Markdown page living at site path `page` (e.g. `x86_1/sign-02.html`).
/// `table_class` is put on every `<table>` (e.g. `performance-summary`).
pub fn render(
    md: &str,
    page: &str,
    known: &HashSet<String>,
    linker: &dyn TableLinker,
    table_class: Option<&str>,
) -> Rendered {
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES);
    let mut out = Rendered {
        has_crumb: md.contains("class=\"crumb\""),
        ..Default::default()
    };
    // Stage 1: rewrite links and raw HTML, drop dead link tags, name headings.
    let mut events: Vec<Event> = Vec::new();
    let mut link_stack: Vec<bool> = Vec::new();
    let mut heading: Option<(HeadingLevel, Vec<Event>)> = None;
    let mut used_ids: HashSet<String> = HashSet::new();
    for ev in parser {
        let ev = match ev {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => match fix_href(&dest_url, page, known) {
                Some(h) => {
                    link_stack.push(true);
                    Event::Start(Tag::Link {
                        link_type,
                        dest_url: CowStr::from(h),
                        title,
                        id,
                    })
                }
                None => {
                    link_stack.push(false);
                    continue;
                }
            },
            Event::End(TagEnd::Link) => {
                if link_stack.pop() == Some(true) {
                    Event::End(TagEnd::Link)
                } else {
                    continue;
                }
            }
            Event::Html(h) => Event::Html(CowStr::from(fix_raw_html(&h, page, known))),
            Event::InlineHtml(h) => Event::InlineHtml(CowStr::from(fix_raw_html(&h, page, known))),
            other => other,
        };
        match (&mut heading, ev) {
            (None, Event::Start(Tag::Heading { level, .. })) => heading = Some((level, Vec::new())),
            (Some((level, buf)), Event::End(TagEnd::Heading(_))) => {
                let text: String = buf
                    .iter()
                    .filter_map(|e| match e {
                        Event::Text(t) | Event::Code(t) => Some(t.to_string()),
                        _ => None,
                    })
                    .collect();
                let mut id = slug(&text);
                let base = id.clone();
                let mut k = 1;
                while !used_ids.insert(id.clone()) {
                    id = format!("{base}-{k}");
                    k += 1;
                }
                let level = *level;
                if level == HeadingLevel::H1 && out.title.is_empty() {
                    out.title = text.clone();
                }
                if level == HeadingLevel::H2 {
                    out.sections.push((id.clone(), text));
                }
                events.push(Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(id)),
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }));
                events.append(buf);
                events.push(Event::End(TagEnd::Heading(level)));
                heading = None;
            }
            (Some((_, buf)), ev) => buf.push(ev),
            (None, ev) => events.push(ev),
        }
    }
    // Stage 2: emit, rendering tables ourselves.
    let mut html = String::with_capacity(md.len() * 2);
    let mut pending: Vec<Event> = Vec::new();
    let mut iter = events.into_iter();
    while let Some(ev) = iter.next() {
        if let Event::Start(Tag::Table(_)) = ev {
            pulldown_cmark::html::push_html(&mut html, std::mem::take(&mut pending).into_iter());
            let mut header: Vec<Cell> = Vec::new();
            let mut rows: Vec<Vec<Cell>> = Vec::new();
            let mut cur: Option<Vec<Event>> = None;
            let mut in_head = false;
            for ev in iter.by_ref() {
                match ev {
                    Event::End(TagEnd::Table) => break,
                    Event::Start(Tag::TableHead) => in_head = true,
                    Event::End(TagEnd::TableHead) => in_head = false,
                    Event::Start(Tag::TableRow) => rows.push(Vec::new()),
                    Event::End(TagEnd::TableRow) => {}
                    Event::Start(Tag::TableCell) => cur = Some(Vec::new()),
                    Event::End(TagEnd::TableCell) => {
                        let events = cur.take().unwrap_or_default();
                        let cell = Cell {
                            info: cell_info(&events),
                            events,
                        };
                        if in_head {
                            header.push(cell);
                        } else if let Some(r) = rows.last_mut() {
                            r.push(cell);
                        }
                    }
                    other => {
                        if let Some(c) = cur.as_mut() {
                            c.push(other);
                        }
                    }
                }
            }
            write_table(&mut html, page, known, linker, table_class, header, rows);
        } else {
            pending.push(ev);
        }
    }
    pulldown_cmark::html::push_html(&mut html, pending.into_iter());
    out.html = html;
    out
}

fn write_table(
    html: &mut String,
    page: &str,
    known: &HashSet<String>,
    linker: &dyn TableLinker,
    table_class: Option<&str>,
    header: Vec<Cell>,
    rows: Vec<Vec<Cell>>,
) {
    let names: Vec<String> = header.iter().map(|c| c.info.text.clone()).collect();
    let kat_col = names.iter().position(|n| n == "KAT");
    html.push_str("<div class=\"table-wrap\"><table");
    if let Some(c) = table_class {
        html.push_str(" class=\"");
        html.push_str(c);
        html.push('"');
    }
    html.push_str(">\n<thead>\n<tr>\n");
    for c in header {
        html.push_str("<th>");
        push_cell_html(html, c.events);
        html.push_str("</th>\n");
    }
    html.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in rows {
        let (infos, events): (Vec<CellInfo>, Vec<Vec<Event>>) =
            row.into_iter().map(|c| (c.info, c.events)).unzip();
        let links = linker.link(&names, &infos);
        html.push_str("<tr>\n");
        for (i, (info, events)) in infos.iter().zip(events).enumerate() {
            let numeric = info.text.bytes().any(|b| b.is_ascii_digit());
            if Some(i) == kat_col {
                html.push_str(if info.text.starts_with("PASS") {
                    "<td class=\"st ok\">"
                } else if info.text == "–" {
                    "<td class=\"st\">"
                } else {
                    "<td class=\"st bad\">"
                });
            } else if numeric && i > 0 {
                html.push_str("<td class=\"num\">");
            } else {
                html.push_str("<td>");
            }
            let href = links
                .get(i)
                .and_then(Option::as_deref)
                .filter(|h| !info.has_link && known.contains(*h));
            match href {
                Some(h) => {
                    html.push_str("<a class=\"ev\" href=\"");
                    html.push_str(&escape(&relative(page, h)));
                    html.push_str("\">");
                    push_cell_html(html, events);
                    html.push_str("</a>");
                }
                None => push_cell_html(html, events),
            }
            html.push_str("</td>\n");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(paths: &[&str]) -> HashSet<String> {
        paths.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paths() {
        assert_eq!(relative("x86_1/a.html", "arm_1/a.html"), "../arm_1/a.html");
        assert_eq!(relative("x86_1/a.html", "x86_1/b.html"), "b.html");
        assert_eq!(
            relative("index.html", "x86_1/index.html"),
            "x86_1/index.html"
        );
        assert_eq!(
            relative("x86_1/a.html", "evidence/x86_1/records/s/l__op.json"),
            "../evidence/x86_1/records/s/l__op.json"
        );
        assert_eq!(relative("a/b/x.html", "a/b"), "../b");
        assert_eq!(relative("a/b/x.html", "a/c/y.html"), "../c/y.html");
        assert_eq!(relative("a/b/x.html", "index.html"), "../../index.html");
        assert_eq!(normalize("a/../b/./c").as_deref(), Some("b/c"));
        assert_eq!(normalize("../x"), None);
    }

    #[test]
    fn links_are_rewritten_or_dropped() {
        let k = known(&["index.html", "x86_1/index.html", "arm_1/sign-02.html"]);
        let md = "<p class=\"crumb\"><a href=\"../index.md\">Performance</a> · <a href=\"../arm_1/sign-02.md\">arm_1</a> · <a href=\"../../reports/sign-02.md\">r</a></p>\n\n# T_1 title\n\nSee [summary](index.md#x) and [report](../../reports/sign-02.md) and [ext](https://example.org/a.md).\n";
        let r = render(md, "x86_1/sign-02.html", &k, &NoLinks, None);
        assert!(r.has_crumb);
        assert_eq!(r.title, "T_1 title");
        assert!(r.html.contains("<a href=\"../index.html\">Performance</a>"));
        assert!(
            r.html
                .contains("<a href=\"../arm_1/sign-02.html\">arm_1</a>")
        );
        assert!(r.html.contains("<a data-missing=\"\">r</a>"));
        assert!(r.html.contains("<a href=\"index.html#x\">summary</a>"));
        assert!(r.html.contains(" and report and "));
        assert!(r.html.contains("href=\"https://example.org/a.md\""));
        assert!(r.html.contains("<h1 id=\"t_1-title\">"));
    }

    struct L;
    impl TableLinker for L {
        fn link(&self, _h: &[String], row: &[CellInfo]) -> Vec<Option<String>> {
            vec![
                None,
                Some(format!(
                    "evidence/x86_1/{}.json",
                    row[0].code.clone().unwrap_or_default()
                )),
            ]
        }
    }

    #[test]
    fn tables_wrap_and_link_cells() {
        let k = known(&["evidence/x86_1/BiT-128.json"]);
        let md = "| instance | mean cycles | KAT |\n|---|---|---|\n| `BiT-128` | 2.25 M | PASS |\n| `BiT-256` | 3 M | MISMATCH |\n";
        let r = render(md, "x86_1/sign-02.html", &k, &L, None);
        assert!(r.html.contains("<div class=\"table-wrap\"><table>"));
        assert!(
            r.html
                .contains("<a class=\"ev\" href=\"../evidence/x86_1/BiT-128.json\">2.25 M</a>")
        );
        assert!(r.html.contains("<td class=\"num\">3 M</td>"), "{}", r.html);
        assert!(r.html.contains("<td class=\"st ok\">PASS</td>"));
        assert!(r.html.contains("<td class=\"st bad\">MISMATCH</td>"));
    }

    #[test]
    fn raw_html_is_sanitised() {
        let k = known(&["a.html"]);
        let r = fix_raw_html(
            "<p class=\"crumb\"><a href=\"a.md\">x</a><script>alert('x')</script><img src=x onerror=alert(1)><span onclick=\"f()\">y</span></p>",
            "b.html",
            &k,
        );
        assert!(r.contains("<a href=\"a.html\">x</a>"));
        assert!(!r.contains("<script"));
        assert!(!r.contains("<img"));
        assert!(!r.contains("<span onclick"));
        let md = "# Name <script>alert(1)</script> \"q\"\n\nText <img src=x onerror=alert(1)> and <b>bold</b>.\n";
        let out = render(md, "p.html", &k, &NoLinks, None);
        assert!(!out.html.contains("<script"), "{}", out.html);
        assert!(!out.html.contains("<img"), "{}", out.html);
        assert!(out.html.contains("<b>bold</b>"));
    }

    #[test]
    fn text_is_escaped() {
        let md = "# a \"q\" <b>x</b>\n\n| n |\n|---|\n| `<script>alert(1)</script>` |\n";
        let r = render(md, "p.html", &HashSet::new(), &NoLinks, None);
        assert!(
            r.html
                .contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>")
        );
    }
}
