//! Errors of the model: every one names the file (as shown to the user, normally relative to
//! the dataset root) and, where known, the line, column and field.

use std::fmt;
use std::path::{Path, PathBuf};

/// Separator between a field path and a message inside nested deserialisation errors
/// (internal; see `ordered.rs`).
pub(crate) const FIELD_SEP: char = '\u{1f}';

/// Where in a file a problem is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// JSON field path (`processes[0].trials[1].seconds`) or CSV column name, if known.
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        Ok(())
    }
}

/// An error reading evidence.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// File as shown.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Malformed JSON, or JSON of the wrong shape.
    #[error("{}{loc}: {}{message}", path.display(), field_prefix(loc))]
    Json {
        /// File as shown.
        path: PathBuf,
        /// Line/column/field.
        loc: Location,
        /// What is wrong.
        message: String,
    },
    /// Malformed text file (CSV, KAT log, manifest).
    #[error("{}{loc}: {}{message}", path.display(), field_prefix(loc))]
    Text {
        /// File as shown.
        path: PathBuf,
        /// Line/field.
        loc: Location,
        /// What is wrong.
        message: String,
    },
    /// A record or profile carries a schema this version cannot read.
    #[error(
        "{}: schema: schema {found} is newer than the newest this pqperf reads ({supported}); upgrade pqperf",
        path.display()
    )]
    NewerSchema {
        /// File as shown.
        path: PathBuf,
        /// Schema in the file.
        found: u64,
        /// Newest schema supported.
        supported: u64,
    },
}

fn field_prefix(loc: &Location) -> String {
    match &loc.field {
        Some(f) if !f.is_empty() => format!("{f}: "),
        _ => String::new(),
    }
}

impl ModelError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ModelError::Io { path, .. }
            | ModelError::Json { path, .. }
            | ModelError::Text { path, .. }
            | ModelError::NewerSchema { path, .. } => path,
        }
    }

    /// The field the error is about, if known.
    pub fn field(&self) -> Option<&str> {
        match self {
            ModelError::Json { loc, .. } | ModelError::Text { loc, .. } => loc.field.as_deref(),
            ModelError::NewerSchema { .. } => Some("schema"),
            ModelError::Io { .. } => None,
        }
    }

    /// The message without the path/location prefix.
    pub fn message(&self) -> String {
        match self {
            ModelError::Io { source, .. } => source.to_string(),
            ModelError::Json { message, .. } | ModelError::Text { message, .. } => message.clone(),
            ModelError::NewerSchema {
                found, supported, ..
            } => format!(
                "schema {found} is newer than the newest this pqperf reads ({supported}); upgrade pqperf"
            ),
        }
    }

    /// A text-format error at a line.
    pub fn text(
        path: &Path,
        line: Option<usize>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        ModelError::Text {
            path: path.to_path_buf(),
            loc: Location {
                line,
                column: None,
                field: field.map(str::to_string),
            },
            message: message.into(),
        }
    }

    /// Build a JSON error from serde_json's error, splitting out nested field paths and
    /// locating the field in `text` when serde_json had no position.
    pub(crate) fn json(path: &Path, text: &str, outer_field: &str, err: serde_json::Error) -> Self {
        let (line, column) = (err.line(), err.column());
        let mut msg = err.to_string();
        // serde_json appends " at line L column C" to positioned errors; we print it ourselves.
        if line > 0 {
            let suffix = format!(" at line {line} column {column}");
            if let Some(stripped) = msg.strip_suffix(&suffix) {
                msg = stripped.to_string();
            }
        }
        let (field, message) = split_field(outer_field, &msg);
        let mut loc = Location {
            line: (line > 0).then_some(line),
            column: (line > 0).then_some(column),
            field: (!field.is_empty()).then_some(field.clone()),
        };
        // A value of the wrong shape is pointed at by its field (the key's line and column),
        // whether serde_json reported it while streaming or it was found after parsing.
        if (loc.line.is_none() || err.classify() == serde_json::error::Category::Data)
            && !field.is_empty()
            && let Some((l, c)) = crate::locate::locate(text, &field)
        {
            loc.line = Some(l);
            loc.column = Some(c);
        }
        ModelError::Json {
            path: path.to_path_buf(),
            loc,
            message,
        }
    }
}

/// Join an outer field path with a nested message of the form `inner<SEP>message`.
pub(crate) fn split_field(outer: &str, msg: &str) -> (String, String) {
    match msg.split_once(FIELD_SEP) {
        Some((inner, rest)) => {
            let (inner2, rest2) = split_field(inner, rest);
            (join_path(outer, &inner2), rest2)
        }
        None => (clean_path(outer), msg.to_string()),
    }
}

/// A field path without serde_path_to_error's unknown segments (`?`).
fn clean_path(p: &str) -> String {
    p.split('.')
        .filter(|s| *s != "?" && !s.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// `a` + `b` as a field path (`a.b`, `a[0]`).
pub(crate) fn join_path(a: &str, b: &str) -> String {
    let (a, b) = (clean_path(a), clean_path(b));
    let (a, b) = (a.as_str(), b.as_str());
    if a.is_empty() {
        b.to_string()
    } else if b.is_empty() {
        a.to_string()
    } else if b.starts_with('[') {
        format!("{a}{b}")
    } else {
        format!("{a}.{b}")
    }
}
