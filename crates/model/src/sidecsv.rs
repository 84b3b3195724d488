//! The `;`-separated side files of a dataset (evidence-formats.md §9, method.md §1.1):
//! a generic [`CsvTable`] that keeps comment lines and line numbers (so it round-trips and
//! errors point at lines), and typed rows for each known file.
//!
//! Dialect (Python's `csv` module as the harness uses it): delimiter `;`, quote `"`, a quote
//! inside a quoted field doubled, quoted fields may span lines; lines starting with `#` and
//! blank lines are not data. Writing quotes a field only when it contains `;`, `"`, CR or LF
//! (`QUOTE_MINIMAL`) and ends every line with `\n`.

use std::path::{Path, PathBuf};

use crate::error::ModelError;

/// A data row with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsvRow {
    /// Line where the row starts.
    pub line: usize,
    /// Fields.
    pub fields: Vec<String>,
    /// Comment or blank lines just before this row (verbatim, without newline).
    pub before: Vec<String>,
}

/// A parsed side CSV.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsvTable {
    /// File as shown in errors.
    pub path: PathBuf,
    /// Comment/blank lines before the header (verbatim, without newline).
    pub comments: Vec<String>,
    /// Header fields.
    pub header: Vec<String>,
    /// Line of the header.
    pub header_line: usize,
    /// Data rows.
    pub rows: Vec<CsvRow>,
    /// Comment/blank lines after the last row.
    pub trailing: Vec<String>,
}

fn needs_quotes(f: &str) -> bool {
    f.contains([';', '"', '\n', '\r'])
}

fn write_fields(out: &mut String, fields: &[String]) {
    if fields.len() == 1 && fields[0].is_empty() {
        out.push_str("\"\"\n");
        return;
    }
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        if needs_quotes(f) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push('\n');
}

enum Item {
    Raw(String),
    Fields(usize, Vec<String>),
}

fn split_items(path: &Path, text: &str) -> Result<Vec<Item>, ModelError> {
    let mut items = Vec::new();
    let mut line_no = 1usize;
    let mut rest = text;
    while !rest.is_empty() {
        let start_line = line_no;
        let at_line_start_raw =
            rest.starts_with('#') || rest.starts_with('\n') || rest.starts_with("\r\n");
        if at_line_start_raw {
            let (line, tail) = match rest.find('\n') {
                Some(p) => (&rest[..p], &rest[p + 1..]),
                None => (rest, ""),
            };
            items.push(Item::Raw(
                line.strip_suffix('\r').unwrap_or(line).to_string(),
            ));
            rest = tail;
            line_no += 1;
            continue;
        }
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = rest.char_indices().peekable();
        let mut in_quotes = false;
        let mut field_start = true;
        let mut consumed = rest.len();
        while let Some((i, c)) = chars.next() {
            if in_quotes {
                match c {
                    '"' => {
                        if let Some(&(_, '"')) = chars.peek() {
                            field.push('"');
                            chars.next();
                        } else {
                            in_quotes = false;
                        }
                    }
                    '\n' => {
                        line_no += 1;
                        field.push(c);
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                '"' if field_start => {
                    in_quotes = true;
                    field_start = false;
                }
                ';' => {
                    fields.push(std::mem::take(&mut field));
                    field_start = true;
                }
                '\r' if matches!(chars.peek(), Some(&(_, '\n'))) => {}
                '\n' => {
                    consumed = i + 1;
                    line_no += 1;
                    break;
                }
                _ => {
                    field.push(c);
                    field_start = false;
                }
            }
        }
        if in_quotes {
            return Err(ModelError::text(
                path,
                Some(start_line),
                None,
                "unterminated quoted field",
            ));
        }
        fields.push(field);
        items.push(Item::Fields(start_line, fields));
        rest = &rest[consumed..];
    }
    Ok(items)
}

impl CsvTable {
    /// Parse CSV text. The first data line is the header; an empty file is an error.
    pub fn parse(path: &Path, text: &str) -> Result<CsvTable, ModelError> {
        let mut t = CsvTable {
            path: path.to_path_buf(),
            ..Default::default()
        };
        let mut pending = Vec::new();
        let mut have_header = false;
        for item in split_items(path, text)? {
            match item {
                Item::Raw(l) => pending.push(l),
                Item::Fields(line, fields) if !have_header => {
                    t.comments = std::mem::take(&mut pending);
                    t.header = fields;
                    t.header_line = line;
                    have_header = true;
                }
                Item::Fields(line, fields) => t.rows.push(CsvRow {
                    line,
                    fields,
                    before: std::mem::take(&mut pending),
                }),
            }
        }
        if !have_header {
            return Err(ModelError::text(path, None, None, "no header line"));
        }
        t.trailing = pending;
        Ok(t)
    }

    /// Read a CSV file.
    pub fn read(path: &Path, shown_as: &Path) -> Result<CsvTable, ModelError> {
        let text = crate::limits::read_text(path, shown_as)?;
        Self::parse(shown_as, &text)
    }

    /// The table as text (round-trips files written with minimal quoting and `\n` line ends).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.comments {
            out.push_str(c);
            out.push('\n');
        }
        write_fields(&mut out, &self.header);
        for r in &self.rows {
            for c in &r.before {
                out.push_str(c);
                out.push('\n');
            }
            write_fields(&mut out, &r.fields);
        }
        for c in &self.trailing {
            out.push_str(c);
            out.push('\n');
        }
        out
    }

    /// Index of a header column.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Error unless every column in `names` is in the header.
    pub fn require_columns(&self, names: &[&str]) -> Result<(), ModelError> {
        for n in names {
            if self.column(n).is_none() {
                return Err(ModelError::text(
                    &self.path,
                    Some(self.header_line),
                    Some(n),
                    format!(
                        "missing column {n:?} (header is {:?})",
                        self.header.join(";")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Field `name` of `row` (`""` when the row is short, as Python's DictReader gives None).
    pub fn get<'a>(&self, row: &'a CsvRow, name: &str) -> Option<&'a str> {
        let i = self.column(name)?;
        Some(row.fields.get(i).map(String::as_str).unwrap_or(""))
    }

    fn req<'a>(&self, row: &'a CsvRow, name: &str) -> &'a str {
        self.get(row, name).unwrap_or("")
    }

    fn opt_u64(&self, row: &CsvRow, name: &str) -> Result<Option<u64>, ModelError> {
        let v = self.req(row, name).trim();
        if v.is_empty() {
            return Ok(None);
        }
        v.parse().map(Some).map_err(|_| {
            ModelError::text(
                &self.path,
                Some(row.line),
                Some(name),
                format!("not a non-negative integer: {v:?}"),
            )
        })
    }
}

/// `performance/systems.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemRow {
    /// System id (`x86_1`).
    pub id: String,
    /// Architecture (`x86_64`, `aarch64`).
    pub arch: String,
    /// Hostname of the machine.
    pub hostname: String,
    /// Prose description.
    pub description: String,
    /// Line in the file.
    pub line: usize,
}

/// `performance/kat_issues.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KatIssue {
    /// Candidate id.
    pub id: String,
    /// Regex (search) over labels.
    pub label: String,
    /// `measure` or `exclude`.
    pub action: String,
    /// Prose; extra `;`-separated fields are re-joined with `;`.
    pub cause: String,
    /// Line in the file.
    pub line: usize,
}

/// `performance/summary_notes.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryNote {
    /// Candidate id.
    pub id: String,
    /// Regex over labels.
    pub label: String,
    /// Note.
    pub note: String,
    /// Line in the file.
    pub line: usize,
}

/// `performance/external_sizes.csv` row (empty field = n/a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalSize {
    /// Candidate id.
    pub id: String,
    /// Harness label (includes `-avx2` labels).
    pub instance: String,
    /// Public key bytes.
    pub public_key_bytes: Option<u64>,
    /// Ciphertext bytes.
    pub ciphertext_bytes: Option<u64>,
    /// Signature bytes.
    pub signature_bytes: Option<u64>,
    /// `encoded`, `maximum-variable`, `nominal-variable`.
    pub basis: String,
    /// Line in the file.
    pub line: usize,
}

/// `performance/symmetric_survey.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurveyRow {
    /// Candidate id.
    pub id: String,
    /// `ICCS-only`, `mixed`, `bypass`, `instance-dependent`.
    pub verdict: String,
    /// Notes (may contain backticks and `;`).
    pub notes: String,
    /// Line in the file.
    pub line: usize,
}

/// The security targets a `TargetBits` cell may hold (empty = no known target). 192 is the
/// NIST level 3–4 target (the reference harness had 128, 256 and 512 only).
pub const TARGET_BITS: [u64; 4] = [128, 192, 256, 512];

/// The target an instance label states, when it states exactly one: the label's digit runs
/// of three or more digits (`BiT-128-avx2` → 128; the `2` of `avx2` is a variant number) must
/// be exactly one run, and that run one of [`TARGET_BITS`]. `COMPASS-SIG-384`,
/// `X-256-1024` and labels without digits give `None` (unknown; nothing is guessed).
pub fn target_bits_from_label(label: &str) -> Option<u64> {
    let mut runs = label
        .split(|c: char| !c.is_ascii_digit())
        .filter(|d| d.len() >= 3);
    let only = runs.next()?;
    if runs.next().is_some() || only.starts_with('0') {
        return None;
    }
    only.parse::<u64>().ok().filter(|b| TARGET_BITS.contains(b))
}

/// `performance/security_targets.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityTarget {
    /// Candidate id.
    pub id: String,
    /// Harness label.
    pub instance: String,
    /// One of [`TARGET_BITS`], or none (no known target).
    pub target_bits: Option<u64>,
    /// Line in the file.
    pub line: usize,
}

/// `performance/kex_bandwidth.csv` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KexBandwidth {
    /// Candidate id.
    pub id: String,
    /// Harness label.
    pub instance: String,
    /// Party A public key bytes.
    pub pk_a_bytes: u64,
    /// Party B public key bytes.
    pub pk_b_bytes: u64,
    /// Protocol message bytes.
    pub protocol_message_bytes: u64,
    /// Line in the file.
    pub line: usize,
}

impl KexBandwidth {
    /// Bandwidth = sum of the three sizes.
    pub fn bandwidth(&self) -> u64 {
        self.pk_a_bytes + self.pk_b_bytes + self.protocol_message_bytes
    }
}

/// `downloads.csv` row (`ID;Algorithm;PageURL;…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// Candidate id.
    pub id: String,
    /// Algorithm name.
    pub algorithm: String,
    /// NICCS page URL.
    pub page_url: String,
    /// Line in the file.
    pub line: usize,
}

fn check_dupes<'a>(
    t: &CsvTable,
    keys: impl Iterator<Item = (usize, String)> + 'a,
) -> Result<(), ModelError> {
    let mut seen = std::collections::HashMap::new();
    for (line, k) in keys {
        if let Some(first) = seen.insert(k.clone(), line) {
            return Err(ModelError::text(
                &t.path,
                Some(line),
                None,
                format!("duplicate row {k:?} (first on line {first})"),
            ));
        }
    }
    Ok(())
}

impl CsvTable {
    /// Rows of `systems.csv` (`ID;Arch;Hostname;Description`), in file order.
    pub fn systems(&self) -> Result<Vec<SystemRow>, ModelError> {
        self.require_columns(&["ID", "Arch", "Hostname", "Description"])?;
        Ok(self
            .rows
            .iter()
            .map(|r| SystemRow {
                id: self.req(r, "ID").to_string(),
                arch: self.req(r, "Arch").to_string(),
                hostname: self.req(r, "Hostname").to_string(),
                description: self.req(r, "Description").to_string(),
                line: r.line,
            })
            .collect())
    }

    /// Rows of `kat_issues.csv` (`ID;Label;Action;Cause`); fields past Cause are re-joined.
    pub fn kat_issues(&self) -> Result<Vec<KatIssue>, ModelError> {
        self.require_columns(&["ID", "Label", "Action", "Cause"])?;
        let ci = self.column("Cause").unwrap_or(3);
        Ok(self
            .rows
            .iter()
            .map(|r| KatIssue {
                id: self.req(r, "ID").to_string(),
                label: self.req(r, "Label").to_string(),
                action: self.req(r, "Action").to_string(),
                cause: r.fields.get(ci..).map(|f| f.join(";")).unwrap_or_default(),
                line: r.line,
            })
            .collect())
    }

    /// Rows of `summary_notes.csv` (`ID;Label;Note`).
    pub fn summary_notes(&self) -> Result<Vec<SummaryNote>, ModelError> {
        self.require_columns(&["ID", "Label", "Note"])?;
        Ok(self
            .rows
            .iter()
            .map(|r| SummaryNote {
                id: self.req(r, "ID").to_string(),
                label: self.req(r, "Label").to_string(),
                note: self.req(r, "Note").to_string(),
                line: r.line,
            })
            .collect())
    }

    /// Rows of `external_sizes.csv`; duplicates (ID, Instance) are an error.
    pub fn external_sizes(&self) -> Result<Vec<ExternalSize>, ModelError> {
        self.require_columns(&[
            "ID",
            "Instance",
            "PublicKeyBytes",
            "CiphertextBytes",
            "SignatureBytes",
            "Basis",
        ])?;
        let mut out = Vec::new();
        for r in &self.rows {
            out.push(ExternalSize {
                id: self.req(r, "ID").to_string(),
                instance: self.req(r, "Instance").to_string(),
                public_key_bytes: self.opt_u64(r, "PublicKeyBytes")?,
                ciphertext_bytes: self.opt_u64(r, "CiphertextBytes")?,
                signature_bytes: self.opt_u64(r, "SignatureBytes")?,
                basis: self.req(r, "Basis").to_string(),
                line: r.line,
            });
        }
        check_dupes(
            self,
            out.iter()
                .map(|e| (e.line, format!("{};{}", e.id, e.instance))),
        )?;
        Ok(out)
    }

    /// Rows of `symmetric_survey.csv` (columns `ID`, `Verdict`, `Notes`).
    pub fn symmetric_survey(&self) -> Result<Vec<SurveyRow>, ModelError> {
        self.require_columns(&["ID", "Verdict"])?;
        Ok(self
            .rows
            .iter()
            .map(|r| SurveyRow {
                id: self.req(r, "ID").to_string(),
                verdict: self.req(r, "Verdict").to_string(),
                notes: self.get(r, "Notes").unwrap_or("").to_string(),
                line: r.line,
            })
            .collect())
    }

    /// Rows of `security_targets.csv` (header exactly `ID;Instance;TargetBits`).
    pub fn security_targets(&self) -> Result<Vec<SecurityTarget>, ModelError> {
        if self.header != ["ID", "Instance", "TargetBits"] {
            return Err(ModelError::text(
                &self.path,
                Some(self.header_line),
                None,
                format!(
                    "header must be exactly ID;Instance;TargetBits, got {:?}",
                    self.header.join(";")
                ),
            ));
        }
        let mut out = Vec::new();
        for r in &self.rows {
            let bits = self.opt_u64(r, "TargetBits")?;
            if let Some(b) = bits
                && !TARGET_BITS.contains(&b)
            {
                return Err(ModelError::text(
                    &self.path,
                    Some(r.line),
                    Some("TargetBits"),
                    format!("{b} is not one of 128, 192, 256, 512 or empty"),
                ));
            }
            out.push(SecurityTarget {
                id: self.req(r, "ID").to_string(),
                instance: self.req(r, "Instance").to_string(),
                target_bits: bits,
                line: r.line,
            });
        }
        check_dupes(
            self,
            out.iter()
                .map(|e| (e.line, format!("{};{}", e.id, e.instance))),
        )?;
        Ok(out)
    }

    /// Rows of `kex_bandwidth.csv`; duplicates are an error.
    pub fn kex_bandwidth(&self) -> Result<Vec<KexBandwidth>, ModelError> {
        self.require_columns(&[
            "ID",
            "Instance",
            "PkABytes",
            "PkBBytes",
            "ProtocolMessageBytes",
        ])?;
        let mut out = Vec::new();
        for r in &self.rows {
            let need = |name: &str| -> Result<u64, ModelError> {
                self.opt_u64(r, name)?.ok_or_else(|| {
                    ModelError::text(&self.path, Some(r.line), Some(name), "empty size")
                })
            };
            out.push(KexBandwidth {
                id: self.req(r, "ID").to_string(),
                instance: self.req(r, "Instance").to_string(),
                pk_a_bytes: need("PkABytes")?,
                pk_b_bytes: need("PkBBytes")?,
                protocol_message_bytes: need("ProtocolMessageBytes")?,
                line: r.line,
            });
        }
        check_dupes(
            self,
            out.iter()
                .map(|e| (e.line, format!("{};{}", e.id, e.instance))),
        )?;
        Ok(out)
    }

    /// Rows of `downloads.csv` (`ID;Algorithm;PageURL;…`), in submission order.
    pub fn downloads(&self) -> Result<Vec<Download>, ModelError> {
        self.require_columns(&["ID", "Algorithm", "PageURL"])?;
        Ok(self
            .rows
            .iter()
            .map(|r| Download {
                id: self.req(r, "ID").to_string(),
                algorithm: self.req(r, "Algorithm").to_string(),
                page_url: self.req(r, "PageURL").to_string(),
                line: r.line,
            })
            .collect())
    }
}

/// Writes a side table from scratch: the `header` line, then one line per row, `;`-separated,
/// a field quoted only when it holds `;`, `"`, CR or LF (a quote doubled inside), every line
/// ending in `\n`. The one writer of the side CSVs that pqperf produces (publish); what it
/// writes reads back through [`CsvTable::parse`] field for field.
pub fn write_csv(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut w = csv::WriterBuilder::new()
        .delimiter(b';')
        .quote_style(csv::QuoteStyle::Necessary)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing into memory cannot fail; field counts may differ (the reader allows that).
    let _ = w.write_record(header);
    for r in rows {
        let _ = w.write_record(r);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_quotes_and_round_trips() {
        let text = "# c1\n# c2\nID;Verdict;Notes\nkem-04;ICCS-only;\"a; b \"\"q\"\"\"\n\nsign-02;mixed;plain\n# end\n";
        let t = CsvTable::parse(Path::new("performance/symmetric_survey.csv"), text).unwrap();
        assert_eq!(t.comments, vec!["# c1", "# c2"]);
        assert_eq!(t.header_line, 3);
        assert_eq!(t.rows[0].fields[2], "a; b \"q\"");
        assert_eq!(t.rows[1].line, 6);
        assert_eq!(t.to_text(), text);
        let s = t.symmetric_survey().unwrap();
        assert_eq!(s[1].verdict, "mixed");
        // Python csv: a quote opens quoting only at the start of a field, elsewhere it is text
        // (the short_names.csv case the site's own reader used to test).
        let t = CsvTable::parse(
            Path::new("short_names.csv"),
            "ID;ShortName\nsign-02;x \"q\" y\n",
        )
        .unwrap();
        assert_eq!(t.rows[0].fields, ["sign-02", "x \"q\" y"]);
    }

    #[test]
    fn target_bits_from_labels_only_when_stated_once() {
        for (label, want) in [
            ("BiT-128", Some(128)),
            ("BiT-512-avx2", Some(512)),
            ("DARTS256", Some(256)),
            ("XYZ-192f", Some(192)),
            ("COMPASS-SIG-384", None),
            ("X-256-1024", None),
            ("X-128-256", None),
            ("ml-dsa-44", None),
            ("plain", None),
            ("v0128", None),
            ("K1280", None),
        ] {
            assert_eq!(target_bits_from_label(label), want, "{label}");
        }
        let t = CsvTable::parse(
            Path::new("performance/security_targets.csv"),
            "ID;Instance;TargetBits\nml-dsa-65;ml-dsa-65;192\nsign-06;C-384;\n",
        )
        .unwrap();
        let rows = t.security_targets().unwrap();
        assert_eq!(rows[0].target_bits, Some(192));
        assert_eq!(rows[1].target_bits, None);
        let bad = CsvTable::parse(
            Path::new("performance/security_targets.csv"),
            "ID;Instance;TargetBits\nx;y;384\n",
        )
        .unwrap();
        assert!(bad.security_targets().is_err());
    }

    #[test]
    fn errors_name_line_and_field() {
        let text = "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nsign-02;BiT-128;10x;;1504;encoded\n";
        let t = CsvTable::parse(Path::new("performance/external_sizes.csv"), text).unwrap();
        let e = t.external_sizes().unwrap_err().to_string();
        assert_eq!(
            e,
            "performance/external_sizes.csv:2: PublicKeyBytes: not a non-negative integer: \"10x\""
        );
        let e = CsvTable::parse(Path::new("x.csv"), "A;B\n\"open;x\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x.csv:2: unterminated quoted field");
    }

    #[test]
    fn kat_issue_cause_rejoins_extra_fields() {
        let t = CsvTable::parse(
            Path::new("k.csv"),
            "ID;Label;Action;Cause\nsign-33;^vdoo_512$;measure;a;b;c\n",
        )
        .unwrap();
        assert_eq!(t.kat_issues().unwrap()[0].cause, "a;b;c");
    }

    #[test]
    fn write_csv_quotes_and_round_trips() {
        let rows = vec![
            vec!["x86_1".to_string(), "a VM; not fixed".to_string()],
            vec!["x86_2".to_string(), "say \"hi\"\nthere".to_string()],
            vec!["x86_3".to_string(), String::new()],
        ];
        let text = write_csv(&["ID", "Description"], &rows);
        assert!(
            text.starts_with("ID;Description\nx86_1;\"a VM; not fixed\"\n"),
            "{text}"
        );
        let t = CsvTable::parse(Path::new("t.csv"), &text).unwrap();
        assert_eq!(t.header, ["ID", "Description"]);
        let got: Vec<Vec<String>> = t.rows.iter().map(|r| r.fields.clone()).collect();
        assert_eq!(got, rows);
    }
}
