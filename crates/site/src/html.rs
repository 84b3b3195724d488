//! HTML for the site pages from the report stage's blocks ([`render_page`]): text blocks
//! through pulldown-cmark (relative `.md` links become `.html`, also inside raw HTML such as
//! the crumb; links to pages the site does not contain lose their target, text stays; headings
//! get slug ids), tables from their cells (wrapped for horizontal scrolling, each value linked
//! to the evidence file its cell names, long tables folded by their group column).

use std::collections::HashSet;

use pqperf_report::page::{Block, Cell, Evidence, Page, Section, Table};
use pulldown_cmark::{CowStr, Event, HeadingLevel, Parser, Tag, TagEnd};

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

/// The published place of a page the site does not hold, when it has one: a candidate's
/// security report (`…/reports/<id>.md`) is the `README.md` of its folder in the harness.
pub fn outside_link(href: &str) -> Option<String> {
    let id = href.rsplit_once("reports/")?.1.strip_suffix(".md")?;
    let ok = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    ok.then(|| {
        format!(
            "{}/blob/main/{}",
            pqperf_report::links::HARNESS_URL,
            pqperf_report::PageRef::SecurityReport(id.to_string()).harness_path()
        )
    })
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

/// Tags that raw HTML inside the Markdown pages may use (crumbs, badges, ranking tables,
/// folded notes).
const ALLOWED_TAGS: &[&str] = &[
    "a", "abbr", "b", "br", "code", "details", "div", "em", "i", "li", "ol", "p", "small", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
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

/// Mark code spans that hold a digest or commit id (40 to 128 hex digits) as
/// `<code class="digest" title="…">`: the stylesheet lets them wrap and, on a phone, shows
/// their start with an ellipsis; the element keeps the whole value (hover shows it, copying
/// the element copies it).
pub fn mark_digests(html: &str) -> std::borrow::Cow<'_, str> {
    use std::sync::OnceLock;
    static HEX: OnceLock<regex::Regex> = OnceLock::new();
    let re = HEX.get_or_init(|| {
        regex::Regex::new(r"<code>([0-9a-f]{40,128})</code>").expect("static regex")
    });
    re.replace_all(html, "<code class=\"digest\" title=\"$1\">$1</code>")
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

/// What the renderer sees of one table cell.
#[derive(Clone, Debug, Default)]
struct CellInfo {
    /// Plain text (code spans included, without backticks).
    text: String,
    /// The cell already contains a link.
    has_link: bool,
}

/// Result of rendering one page.
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
    /// Byte offsets in `html` where each numbered candidate-page section starts.
    pub section_at: Vec<(Section, usize)>,
}

fn cell_info(events: &[Event]) -> CellInfo {
    let mut info = CellInfo::default();
    for e in events {
        match e {
            Event::Text(t) | Event::Code(t) => info.text.push_str(t),
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

/// Rewrites of one Markdown event for the site: links to pages the site holds get their
/// `.html` target, dead links lose their tag (`None`: drop the event), raw HTML is sanitised.
struct LinkFixer<'a> {
    page: &'a str,
    known: &'a HashSet<String>,
    stack: Vec<bool>,
}

impl<'a> LinkFixer<'a> {
    fn new(page: &'a str, known: &'a HashSet<String>) -> LinkFixer<'a> {
        LinkFixer {
            page,
            known,
            stack: Vec::new(),
        }
    }

    fn fix<'e>(&mut self, ev: Event<'e>) -> Option<Event<'e>> {
        Some(match ev {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => match fix_href(&dest_url, self.page, self.known)
                .or_else(|| outside_link(&dest_url))
            {
                Some(h) => {
                    self.stack.push(true);
                    Event::Start(Tag::Link {
                        link_type,
                        dest_url: CowStr::from(h),
                        title,
                        id,
                    })
                }
                None => {
                    self.stack.push(false);
                    return None;
                }
            },
            Event::End(TagEnd::Link) => {
                if self.stack.pop() == Some(true) {
                    Event::End(TagEnd::Link)
                } else {
                    return None;
                }
            }
            Event::Html(h) => Event::Html(CowStr::from(fix_raw_html(&h, self.page, self.known))),
            Event::InlineHtml(h) => {
                Event::InlineHtml(CowStr::from(fix_raw_html(&h, self.page, self.known)))
            }
            other => other,
        })
    }
}

/// The inline events of one cell's Markdown text (links fixed); text that would parse as a
/// block of its own (a list marker, a heading) is kept as plain text.
fn cell_events<'e>(text: &'e str, page: &str, known: &HashSet<String>) -> Vec<Event<'e>> {
    let mut events: Vec<Event<'e>> = Parser::new(text).collect();
    match (events.first(), events.last()) {
        (None, _) => return Vec::new(),
        (Some(Event::Start(Tag::Paragraph)), Some(Event::End(TagEnd::Paragraph))) => {
            events.remove(0);
            events.pop();
        }
        _ => return vec![Event::Text(CowStr::from(text))],
    }
    if events.iter().any(|e| {
        matches!(
            e,
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph)
        )
    }) {
        return vec![Event::Text(CowStr::from(text))];
    }
    let mut fixer = LinkFixer::new(page, known);
    events.into_iter().filter_map(|e| fixer.fix(e)).collect()
}

/// Where a table value's evidence file is in the site (site-root-relative), if it has one.
pub type EvidenceHref<'a> = &'a dyn Fn(&Evidence) -> Option<String>;

/// Markdown chunks of one page rendered in order, with heading ids unique over the page.
struct PageRenderer<'a> {
    page: &'a str,
    known: &'a HashSet<String>,
    used_ids: HashSet<String>,
    out: Rendered,
}

impl PageRenderer<'_> {
    /// Render a Markdown chunk (no tables: those come as table blocks) and append it.
    fn chunk(&mut self, md: &str) {
        if md.is_empty() {
            return;
        }
        let mut fixer = LinkFixer::new(self.page, self.known);
        let mut events: Vec<Event> = Vec::new();
        let mut heading: Option<(HeadingLevel, Vec<Event>)> = None;
        for ev in Parser::new(md) {
            let Some(ev) = fixer.fix(ev) else { continue };
            match (&mut heading, ev) {
                (None, Event::Start(Tag::Heading { level, .. })) => {
                    heading = Some((level, Vec::new()))
                }
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
                    while !self.used_ids.insert(id.clone()) {
                        id = format!("{base}-{k}");
                        k += 1;
                    }
                    let level = *level;
                    if level == HeadingLevel::H1 && self.out.title.is_empty() {
                        self.out.title = text.clone();
                    }
                    if level == HeadingLevel::H2 {
                        self.out.sections.push((id.clone(), text));
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
        pulldown_cmark::html::push_html(&mut self.out.html, events.into_iter());
    }
}

/// Render a page (blocks of the report stage) living at site path `page` (e.g.
/// `x86_1/sign-02.html`): text blocks through pulldown-cmark (links rewritten, headings
/// named), tables from their cells, each value linked to its evidence file when the site holds
/// it. `table_class` is put on every `<table>` (e.g. `performance-summary`); with
/// `framed_notice` the page's host notice is left out (the page frame shows it).
pub fn render_page(
    doc: &Page,
    page: &str,
    known: &HashSet<String>,
    evidence: EvidenceHref,
    table_class: Option<&str>,
    framed_notice: bool,
) -> Rendered {
    let mut r = PageRenderer {
        page,
        known,
        used_ids: HashSet::new(),
        out: Rendered::default(),
    };
    r.out.has_crumb = doc
        .blocks
        .iter()
        .any(|b| matches!(b, Block::Line(l) if l.contains("class=\"crumb\"")));
    let mut lines: Vec<String> = Vec::new();
    let flush = |r: &mut PageRenderer, lines: &mut Vec<String>| {
        if !lines.is_empty() {
            let mut md = lines.join("\n");
            md.push('\n');
            r.chunk(&md);
            lines.clear();
        }
    };
    for b in &doc.blocks {
        match b {
            Block::Table(t) => {
                flush(&mut r, &mut lines);
                write_table(&mut r.out.html, page, known, evidence, table_class, t);
            }
            Block::Heading {
                section: Some(s), ..
            } => {
                flush(&mut r, &mut lines);
                let at = r.out.html.len();
                r.out.section_at.push((*s, at));
                b.push_markdown(&mut lines);
            }
            Block::Notice(_) if framed_notice => {}
            other => other.push_markdown(&mut lines),
        }
    }
    flush(&mut r, &mut lines);
    r.out
}

/// One table block of a generated page (rankings, joint view) rendered by the one table
/// writer at site path `page`: each value linked to its evidence file when the site holds it.
pub fn table_html(t: Table, page: &str, known: &HashSet<String>) -> String {
    let doc = Page {
        blocks: vec![Block::Table(t)],
    };
    let href = |e: &Evidence| Some(crate::evidence::href(e));
    render_page(&doc, page, known, &href, None, false).html
}

/// Rows of a table, folded by `group_column` when the table is long: (group key, rows).
fn row_groups(t: &Table) -> Vec<(Option<String>, Vec<&Vec<Cell>>)> {
    const FOLD_ABOVE: usize = 12;
    match t.group_column {
        Some(g) if t.rows.len() > FOLD_ABOVE => {
            let mut groups: Vec<(Option<String>, Vec<&Vec<Cell>>)> = Vec::new();
            for row in &t.rows {
                let key = row.get(g).map(|c| c.text.clone()).unwrap_or_default();
                match groups
                    .iter_mut()
                    .find(|(k, _)| k.as_deref() == Some(key.as_str()))
                {
                    Some((_, rows)) => rows.push(row),
                    None => groups.push((Some(key), vec![row])),
                }
            }
            groups
        }
        _ => vec![(None, t.rows.iter().collect())],
    }
}

fn write_table(
    html: &mut String,
    page: &str,
    known: &HashSet<String>,
    evidence: EvidenceHref,
    table_class: Option<&str>,
    t: &Table,
) {
    // Column titles as plain text: each value carries its own, for the card layout.
    let labels: Vec<String> = t
        .header
        .iter()
        .map(|h| escape(&cell_info(&cell_events(h, page, known)).text))
        .collect();
    // Every table becomes cards on narrow screens (style.css): each value beside its title.
    let mut classes: Vec<&str> = vec!["cards"];
    classes.extend(table_class);
    let open = |html: &mut String| {
        html.push_str("<div class=\"table-wrap\"><table");
        if !classes.is_empty() {
            html.push_str(" class=\"");
            html.push_str(&classes.join(" "));
            html.push('"');
        }
        html.push_str(">\n<thead>\n<tr>\n");
        for h in &t.header {
            html.push_str("<th>");
            push_cell_html(html, cell_events(h, page, known));
            html.push_str("</th>\n");
        }
        html.push_str("</tr>\n</thead>\n<tbody>\n");
    };
    let close = "</tbody>\n</table></div>\n";
    let groups = row_groups(t);
    let folded = groups.len() > 1 || groups.first().is_some_and(|g| g.0.is_some());
    for (key, rows) in groups {
        if folded {
            let head: String = key
                .as_deref()
                .map(|k| cell_info(&cell_events(k, page, known)).text)
                .unwrap_or_default();
            let _ = std::fmt::Write::write_fmt(
                html,
                format_args!(
                    "<details class=\"fold\"><summary><code>{}</code> ({} row{})</summary>\n",
                    escape(&head),
                    rows.len(),
                    if rows.len() == 1 { "" } else { "s" }
                ),
            );
        }
        open(html);
        for row in rows {
            html.push_str("<tr>\n");
            for (i, cell) in row.iter().enumerate() {
                let events = cell_events(&cell.text, page, known);
                let info = cell_info(&events);
                let numeric = !t.prose && info.text.bytes().any(|b| b.is_ascii_digit());
                let class = if Some(i) == t.status_column {
                    if info.text.starts_with("PASS")
                        || info.text == "no findings"
                        || info.text == "no unaccepted findings"
                    {
                        Some("st ok")
                    } else if info.text == "–" || info.text.is_empty() {
                        Some("st")
                    } else {
                        Some("st bad")
                    }
                } else if numeric && i > 0 {
                    Some("num")
                } else {
                    None
                };
                html.push_str("<td");
                if let Some(c) = class {
                    html.push_str(" class=\"");
                    html.push_str(c);
                    html.push('"');
                }
                if let Some(l) = labels.get(i) {
                    html.push_str(" data-label=\"");
                    html.push_str(l);
                    html.push('"');
                }
                html.push('>');
                let href = cell
                    .evidence
                    .as_ref()
                    .and_then(evidence)
                    .filter(|h| !info.has_link && !info.text.is_empty() && known.contains(h));
                match href {
                    Some(h) => {
                        // A value whose field is named opens the evidence viewer at it.
                        let viewer = crate::evidence::page_path(&h);
                        let target = match &cell.pointer {
                            Some(ptr) if known.contains(&viewer) => format!(
                                "{}#{}",
                                relative(page, &viewer),
                                crate::evidence::fragment(ptr)
                            ),
                            _ => relative(page, &h),
                        };
                        html.push_str("<a class=\"ev\" href=\"");
                        html.push_str(&escape(&target));
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
        html.push_str(close);
        if folded {
            html.push_str("</details>\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(paths: &[&str]) -> HashSet<String> {
        paths.iter().map(|s| s.to_string()).collect()
    }

    fn render(md: &str, page: &str, known: &HashSet<String>) -> Rendered {
        render_page(
            &Page::from_markdown_lines(md),
            page,
            known,
            &|_| None,
            None,
            false,
        )
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
        let r = render(md, "x86_1/sign-02.html", &k);
        assert!(r.has_crumb);
        assert_eq!(r.title, "T_1 title");
        assert!(r.html.contains("<a href=\"../index.html\">Performance</a>"));
        assert!(
            r.html
                .contains("<a href=\"../arm_1/sign-02.html\">arm_1</a>")
        );
        assert!(r.html.contains("<a data-missing=\"\">r</a>"));
        // A security report the site does not hold links to its published place.
        assert!(r.html.contains(
            "<a href=\"https://github.com/ngcc-dev/ngcc-harness/blob/main/sign-02/README.md\">report</a>"
        ));
        assert!(r.html.contains("<a href=\"index.html#x\">summary</a>"));

        assert!(r.html.contains("href=\"https://example.org/a.md\""));
        assert!(r.html.contains("<h1 id=\"t_1-title\">"));
    }

    #[test]
    fn tables_wrap_and_link_cells() {
        let k = known(&["evidence/x86_1/records/BiT-128.json"]);
        let mut doc = Page::new();
        let mut t = Table::new(["instance", "mean cycles", "KAT"]);
        t.status_column = Some(2);
        let ev = |l: &str| {
            Some(Evidence::Run {
                system: "x86_1".into(),
                path: format!("records/{l}.json"),
            })
        };
        t.row(vec![
            Cell::text("`BiT-128`"),
            Cell::value("2.25 M", ev("BiT-128")),
            Cell::text("PASS"),
        ]);
        t.row(vec![
            Cell::text("`BiT-256`"),
            Cell::value("3 M", ev("BiT-256")),
            Cell::text("MISMATCH"),
        ]);
        doc.table(t);
        let href = |e: &Evidence| match e {
            Evidence::Run { system, path } => Some(format!("evidence/{system}/{path}")),
            Evidence::Side(_) => None,
        };
        let r = render_page(&doc, "x86_1/sign-02.html", &k, &href, None, false);
        // Cards on a phone.
        assert!(
            r.html
                .contains("<div class=\"table-wrap\"><table class=\"cards\">"),
            "{}",
            r.html
        );
        assert!(r.html.contains(
            "<a class=\"ev\" href=\"../evidence/x86_1/records/BiT-128.json\">2.25 M</a>"
        ));
        // Evidence the site does not hold is not linked.
        assert!(
            r.html
                .contains("<td class=\"num\" data-label=\"mean cycles\">3 M</td>"),
            "{}",
            r.html
        );
        assert!(
            r.html
                .contains("<td class=\"st ok\" data-label=\"KAT\">PASS</td>")
        );
        assert!(
            r.html
                .contains("<td class=\"st bad\" data-label=\"KAT\">MISMATCH</td>")
        );
    }

    #[test]
    fn long_tables_fold_by_their_group_column() {
        let mut doc = Page::new();
        let mut t = Table::new(["instance", "function"]);
        t.group_column = Some(1);
        for i in 0..20 {
            let f = if i < 15 {
                "`poly_reduce`"
            } else {
                "`rej_sample`"
            };
            t.row(vec![Cell::text(format!("`x{i}`")), Cell::text(f)]);
        }
        doc.table(t.clone());
        let r = render_page(&doc, "p.html", &HashSet::new(), &|_| None, None, false);
        assert_eq!(
            r.html.matches("<details class=\"fold\">").count(),
            2,
            "{}",
            r.html
        );
        assert!(
            r.html
                .contains("<summary><code>poly_reduce</code> (15 rows)</summary>")
        );
        assert!(
            r.html
                .contains("<summary><code>rej_sample</code> (5 rows)</summary>")
        );
        // A short table stays one table.
        t.rows.truncate(5);
        let mut doc = Page::new();
        doc.table(t);
        let r = render_page(&doc, "p.html", &HashSet::new(), &|_| None, None, false);
        assert!(!r.html.contains("<details"), "{}", r.html);
    }

    #[test]
    fn cells_that_look_like_blocks_stay_text() {
        let ev = cell_events("- 3", "p.html", &HashSet::new());
        assert_eq!(cell_info(&ev).text, "- 3");
    }

    #[test]
    fn digests_are_marked_with_their_whole_value() {
        let h = "<p>sha256 <code>f40a56d5d0590ad50badb8216dcbf59553127753b2a80dbb49b60aeb0cc497de</code> and <code>abc</code></p>";
        let m = mark_digests(h);
        assert!(m.contains("<code class=\"digest\" title=\"f40a56d5d0590ad50badb8216dcbf59553127753b2a80dbb49b60aeb0cc497de\">f40a56d5d0590ad50badb8216dcbf59553127753b2a80dbb49b60aeb0cc497de</code>"), "{m}");
        assert!(m.contains("<code>abc</code>"));
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
        let out = render(md, "p.html", &k);
        assert!(!out.html.contains("<script"), "{}", out.html);
        assert!(!out.html.contains("<img"), "{}", out.html);
        assert!(out.html.contains("<b>bold</b>"));
    }

    #[test]
    fn text_is_escaped() {
        let mut doc = Page::from_markdown_lines("# a \"q\" <b>x</b>\n\n");
        let mut t = Table::new(["n"]);
        t.row(vec![Cell::text("`<script>alert(1)</script>`")]);
        doc.table(t);
        let r = render_page(&doc, "p.html", &HashSet::new(), &|_| None, None, false);
        assert!(
            r.html
                .contains("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>")
        );
    }
}
