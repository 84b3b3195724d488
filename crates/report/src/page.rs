//! Pages as data: a [`Page`] is a list of [`Block`]s (lines of Markdown text, blank lines,
//! headings, tables); table cells carry their text and the [`Evidence`] file the value came
//! from. [`Page::to_markdown`] is the Markdown renderer (the published bytes); the site
//! renders HTML from the same blocks (`pqperf-site`), so it never reads Markdown back to find
//! out what a number is.
//!
//! Candidate-page section headings are numbered by the renderer from [`Section`], the seven
//! items of the NICCS self-assessment guide §3.5 (1)–(7): a page that leaves an item out (a
//! hash candidate has no transmission sizes) keeps the guide's numbers of the others.

/// The evidence file a table value came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Evidence {
    /// A file of a system's published run (`performance/data/<system>/<path>`).
    Run {
        /// System id.
        system: String,
        /// Path relative to the system's data directory (`records/<id>/<f>.json`).
        path: String,
    },
    /// A curated side table of the dataset (`performance/<file>`, e.g. `external_sizes.csv`).
    Side(String),
}

/// One table cell: Markdown text and, for a value, the evidence it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The cell's Markdown text.
    pub text: String,
    /// Where the value came from (`None` for labels and words).
    pub evidence: Option<Evidence>,
    /// The field of a JSON evidence file that holds the value, as a JSON pointer (RFC 6901,
    /// `/environment/cpu_model`); the site's evidence viewer opens the file at it. The
    /// Markdown form does not show it.
    pub pointer: Option<String>,
}

impl Cell {
    /// A cell without evidence.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            evidence: None,
            pointer: None,
        }
    }

    /// A cell with (optional) evidence.
    pub fn value(text: impl Into<String>, evidence: Option<Evidence>) -> Cell {
        Cell {
            text: text.into(),
            evidence,
            pointer: None,
        }
    }

    /// The same cell, naming the field of its (JSON) evidence that holds the value.
    pub fn at(mut self, pointer: impl Into<String>) -> Cell {
        self.pointer = Some(pointer.into());
        self
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

/// A table: header texts, rows of cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// Column titles (Markdown).
    pub header: Vec<String>,
    /// Rows (a row may be shorter than the header; it is rendered as it is).
    pub rows: Vec<Vec<Cell>>,
    /// The column holding a verdict (`PASS`, `MISMATCH`, …), styled as a status by the site.
    pub status_column: Option<usize>,
    /// A column whose runs of equal values a long table may be folded by (the site shows
    /// each group of rows as a collapsible block).
    pub group_column: Option<usize>,
    /// The cells are words, not figures: the site does not set a cell that holds a digit as
    /// a number (kept on one line).
    pub prose: bool,
}

impl Table {
    /// A table with these column titles and no rows.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            status_column: None,
            group_column: None,
            prose: false,
        }
    }

    /// Append a row.
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// The Markdown lines: header, `|---|` rule, rows; an empty cell is `| |`.
    pub fn markdown_lines(&self) -> Vec<String> {
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut s = String::from("|");
            for c in cells {
                if !c.is_empty() {
                    s.push(' ');
                    s.push_str(c);
                }
                s.push_str(" |");
            }
            s
        };
        let mut out = Vec::with_capacity(self.rows.len() + 2);
        out.push(line(&mut self.header.iter().map(String::as_str)));
        out.push(format!("|{}", "---|".repeat(self.header.len())));
        for r in &self.rows {
            out.push(line(&mut r.iter().map(|c| c.text.as_str())));
        }
        out
    }
}

/// The numbered sections of a candidate page: the NICCS guide's §3.5 items (1)–(7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// (1) Basic information.
    BasicInformation,
    /// (2) Assessment environment.
    Environment,
    /// (3) Functional testing (KAT).
    Kat,
    /// (4) Performance.
    Performance,
    /// (5) Resource consumption.
    Resources,
    /// (6) Transmission and storage overhead.
    Transmission,
    /// (7) Raw evidence index.
    RawEvidence,
}

impl Section {
    /// The guide's item number.
    pub fn number(self) -> u32 {
        match self {
            Section::BasicInformation => 1,
            Section::Environment => 2,
            Section::Kat => 3,
            Section::Performance => 4,
            Section::Resources => 5,
            Section::Transmission => 6,
            Section::RawEvidence => 7,
        }
    }

    /// The heading text (without its number).
    pub fn title(self) -> &'static str {
        match self {
            Section::BasicInformation => "Basic information",
            Section::Environment => "Assessment environment",
            Section::Kat => "Functional testing (KAT)",
            Section::Performance => "Performance",
            Section::Resources => "Resource consumption",
            Section::Transmission => "Transmission and storage overhead",
            Section::RawEvidence => "Raw evidence index",
        }
    }
}

/// One block of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// One line of Markdown (a paragraph, a list item, a crumb of raw HTML, a comment).
    Line(String),
    /// An empty line.
    Blank,
    /// The host-state notice of a system whose host was not fixed (Markdown; a renderer that
    /// shows the same notice in its frame, like the site, leaves it out).
    Notice(String),
    /// A heading; a numbered one takes its number and title from its [`Section`].
    Heading {
        /// 1 for `#`, 2 for `##`, …
        level: u8,
        /// The text (for a numbered section: its title).
        text: String,
        /// The guide item it numbers, if any.
        section: Option<Section>,
    },
    /// A table.
    Table(Table),
}

impl Block {
    /// The heading text as rendered (`4. Performance` for a numbered section).
    pub fn heading_text(&self) -> Option<String> {
        match self {
            Block::Heading {
                text,
                section: Some(s),
                ..
            } => Some(format!("{}. {text}", s.number())),
            Block::Heading { text, .. } => Some(text.clone()),
            _ => None,
        }
    }

    /// Append this block's Markdown lines.
    pub fn push_markdown(&self, out: &mut Vec<String>) {
        match self {
            Block::Line(s) | Block::Notice(s) => out.push(s.clone()),
            Block::Blank => out.push(String::new()),
            Block::Heading { level, .. } => out.push(format!(
                "{} {}",
                "#".repeat(usize::from(*level)),
                self.heading_text().unwrap_or_default()
            )),
            Block::Table(t) => out.extend(t.markdown_lines()),
        }
    }
}

/// A page: its blocks in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The blocks.
    pub blocks: Vec<Block>,
}

impl Page {
    /// An empty page.
    pub fn new() -> Page {
        Page::default()
    }

    /// Append a line of Markdown.
    pub fn line(&mut self, s: impl Into<String>) {
        self.blocks.push(Block::Line(s.into()));
    }

    /// Append lines of Markdown (an empty line becomes [`Block::Blank`]).
    pub fn lines(&mut self, lines: impl IntoIterator<Item = String>) {
        for l in lines {
            if l.is_empty() {
                self.blank();
            } else {
                self.line(l);
            }
        }
    }

    /// Append an empty line.
    pub fn blank(&mut self) {
        self.blocks.push(Block::Blank);
    }

    /// Append an unnumbered heading.
    pub fn heading(&mut self, level: u8, text: impl Into<String>) {
        self.blocks.push(Block::Heading {
            level,
            text: text.into(),
            section: None,
        });
    }

    /// Append a numbered `##` section heading.
    pub fn section(&mut self, s: Section) {
        self.blocks.push(Block::Heading {
            level: 2,
            text: s.title().into(),
            section: Some(s),
        });
    }

    /// Append a table.
    pub fn table(&mut self, t: Table) {
        self.blocks.push(Block::Table(t));
    }

    /// Append the blocks of another page.
    pub fn extend(&mut self, other: Page) {
        self.blocks.extend(other.blocks);
    }

    /// A page of plain Markdown lines (every report page is built as blocks; this reads a
    /// Markdown text, e.g. in tests); an empty line becomes [`Block::Blank`]. The text must
    /// end with `\n` (a rendered page does).
    pub fn from_markdown_lines(text: &str) -> Page {
        let mut p = Page::new();
        let body = text.strip_suffix('\n').unwrap_or(text);
        p.lines(body.split('\n').map(str::to_string));
        p
    }

    /// The Markdown lines of the page.
    pub fn markdown_lines(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.blocks.len() + 16);
        for b in &self.blocks {
            b.push_markdown(&mut out);
        }
        out
    }

    /// The page as Markdown: its lines joined with `\n`, plus a final `\n` (method.md §13.0).
    pub fn to_markdown(&self) -> String {
        crate::join_lines(&self.markdown_lines())
    }

    /// The tables of the page, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_of_blocks() {
        let mut p = Page::new();
        p.heading(1, "T");
        p.blank();
        p.section(Section::RawEvidence);
        let mut t = Table::new(["a", "b", "c"]);
        t.row(vec!["x".into(), "".into(), Cell::value("3", None)]);
        p.table(t);
        assert_eq!(
            p.to_markdown(),
            "# T\n\n## 7. Raw evidence index\n| a | b | c |\n|---|---|---|\n| x | | 3 |\n"
        );
    }
}
