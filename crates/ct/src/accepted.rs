//! The curated accepted-findings table: `;`-separated CSV with the header
//! `ID;Label;Operation;Location;Function;Reason`. `ID` is a catalog id (exact); `Label`,
//! `Operation`, `Location` (`file:line` as recorded) and `Function` are regular expressions
//! matched against the whole field (empty = any). A finding group matching a row is kept in
//! the evidence with the row's reason and no longer counts towards the verdict.
//!
//! A row whose `Reason` reads `same as <label>: <note>` (with `Location` and `Function`
//! empty) accepts nothing by itself: it records that a reviewer compared the matching
//! instances (variant builds such as AVX2) with instance `<label>` of the same candidate and
//! scheme, and lets their findings inherit the acceptance of `<label>`'s accepted findings
//! by the function-family rule of [`crate::family`].

use std::path::Path;

use pqperf_model::ct::CtFinding;
use regex::Regex;

use crate::CtError;

/// The table shipped with pqperf (`crates/ct/accepted_findings.csv`).
pub const DEFAULT_TABLE: &str = include_str!("../accepted_findings.csv");

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// Candidate id the row applies to (`ID`).
    pub id: String,
    /// Instance labels (`Label`, a whole-string regex; empty = any).
    pub label: Regex,
    /// Operations (`Operation`, a whole-string regex; empty = any).
    pub operation: Regex,
    /// Finding locations `file:line` (`Location`, a whole-string regex; empty = any).
    pub location: Regex,
    /// Functions at the location (`Function`, a whole-string regex; empty = any).
    pub function: Regex,
    /// Why such a finding is accepted (`Reason`, shown with the finding).
    pub reason: String,
    /// For a `same as <label>: <note>` row: the reference instance label whose accepted
    /// findings the matching instances inherit by family ([`crate::family`]).
    pub same_as: Option<String>,
}

/// The accepted-findings table.
#[derive(Debug, Clone, Default)]
pub struct AcceptedTable {
    /// The rows, in file order (the first matching row gives the reason).
    pub rows: Vec<Accepted>,
}

fn anchored(pat: &str, file: &str, line: usize, col: &str) -> Result<Regex, CtError> {
    let p = if pat.is_empty() { ".*" } else { pat };
    Regex::new(&format!("^(?:{p})$"))
        .map_err(|e| CtError::Input(format!("{file}:{line}: column {col}: {e}")))
}

impl AcceptedTable {
    /// Parse the table; `file` names it in errors (with the line).
    pub fn parse(text: &str, file: &str) -> Result<AcceptedTable, CtError> {
        let mut rdr = csv::ReaderBuilder::new()
            .delimiter(b';')
            .comment(Some(b'#'))
            .flexible(false)
            .from_reader(text.as_bytes());
        let headers = rdr
            .headers()
            .map_err(|e| CtError::Input(format!("{file}: {e}")))?
            .clone();
        let want = ["ID", "Label", "Operation", "Location", "Function", "Reason"];
        if headers.iter().collect::<Vec<_>>() != want {
            return Err(CtError::Input(format!(
                "{file}:1: header must be {}",
                want.join(";")
            )));
        }
        let mut rows = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                CtError::Input(format!("{file}:{line}: {e}"))
            })?;
            let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
            let f = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
            if f(0).is_empty() || f(5).is_empty() {
                return Err(CtError::Input(format!(
                    "{file}:{line}: ID and Reason must not be empty"
                )));
            }
            let reason = f(5);
            let same_as = match reason.strip_prefix("same as ") {
                None => None,
                Some(rest) => {
                    let (label, note) = rest
                        .split_once(':')
                        .map(|(l, n)| (l.trim(), n.trim()))
                        .unwrap_or(("", ""));
                    if label.is_empty() || note.is_empty() || !f(3).is_empty() || !f(4).is_empty() {
                        return Err(CtError::Input(format!(
                            "{file}:{line}: a `same as <label>: <note>` row needs the label, \
                             a note after the colon, and empty Location and Function columns"
                        )));
                    }
                    Some(label.to_string())
                }
            };
            rows.push(Accepted {
                same_as,
                id: f(0),
                label: anchored(&f(1), file, line, "Label")?,
                operation: anchored(&f(2), file, line, "Operation")?,
                location: anchored(&f(3), file, line, "Location")?,
                function: anchored(&f(4), file, line, "Function")?,
                reason,
            });
        }
        Ok(AcceptedTable { rows })
    }

    /// Read a table file.
    pub fn load(path: &Path) -> Result<AcceptedTable, CtError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CtError::Input(format!("{}: {e}", path.display())))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The shipped table.
    pub fn shipped() -> Result<AcceptedTable, CtError> {
        Self::parse(DEFAULT_TABLE, "crates/ct/accepted_findings.csv")
    }

    /// The reason accepting `g`, if a row matches.
    pub fn reason(&self, id: &str, label: &str, op: &str, g: &CtFinding) -> Option<&str> {
        self.rows
            .iter()
            .find(|r| {
                r.same_as.is_none()
                    && r.id == id
                    && r.label.is_match(label)
                    && r.operation.is_match(op)
                    && r.location.is_match(&g.location)
                    && r.function.is_match(&g.function)
            })
            .map(|r| r.reason.as_str())
    }

    /// The `same as` rows applying to an instance: (reference label, operation regex, note).
    pub fn same_as(&self, id: &str, label: &str) -> Vec<(&str, &Regex, &str)> {
        self.rows
            .iter()
            .filter(|r| r.id == id && r.label.is_match(label))
            .filter_map(|r| {
                let l = r.same_as.as_deref()?;
                let note = r.reason.split_once(':').map_or("", |(_, n)| n.trim());
                Some((l, &r.operation, note))
            })
            .collect()
    }

    /// Mark the groups the table accepts.
    pub fn apply(&self, id: &str, label: &str, op: &str, groups: &mut [CtFinding]) {
        for g in groups {
            g.accepted = self.reason(id, label, op, g).map(str::to_string);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses() {
        let t = AcceptedTable::shipped().unwrap();
        assert!(t.rows.len() >= 8);
        assert!(t.rows.iter().all(|r| r.reason.len() > 20));
    }

    #[test]
    fn matching_and_errors() {
        let t = AcceptedTable::parse(
            "ID;Label;Operation;Location;Function;Reason\nx;;keygen|sign;a\\.c:1[0-9];f;public seed\n",
            "t.csv",
        )
        .unwrap();
        let g = |loc: &str, f: &str| CtFinding {
            location: loc.into(),
            function: f.into(),
            ..Default::default()
        };
        assert_eq!(
            t.reason("x", "l", "sign", &g("a.c:12", "f")),
            Some("public seed")
        );
        assert_eq!(t.reason("x", "l", "dec", &g("a.c:12", "f")), None);
        assert_eq!(t.reason("x", "l", "sign", &g("a.c:120", "f")), None);
        assert_eq!(t.reason("y", "l", "sign", &g("a.c:12", "f")), None);
        let e = AcceptedTable::parse(
            "ID;Label;Operation;Location;Function;Reason\nx;(;;;;r\n",
            "t.csv",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("t.csv:2: column Label"), "{e}");
        let t = AcceptedTable::parse(
            "ID;Label;Operation;Location;Function;Reason\nx;x-avx2;sign;;;same as x: read beside x\n",
            "t.csv",
        )
        .unwrap();
        assert_eq!(t.rows[0].same_as.as_deref(), Some("x"));
        // A `same as` row accepts nothing by itself.
        assert_eq!(t.reason("x", "x-avx2", "sign", &g("a.c:12", "f")), None);
        let rows = t.same_as("x", "x-avx2");
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].0, rows[0].2), ("x", "read beside x"));
        assert!(t.same_as("x", "x").is_empty());
        for bad in ["same as x:", "same as : note", "same as x note"] {
            let e = AcceptedTable::parse(
                &format!("ID;Label;Operation;Location;Function;Reason\nx;;;;;{bad}\n"),
                "t.csv",
            )
            .unwrap_err();
            assert!(
                e.to_string().starts_with("t.csv:2: a `same as"),
                "{bad}: {e}"
            );
        }
        let e = AcceptedTable::parse(
            "ID;Label;Operation;Location;Function;Reason\nx;;;a\\.c:1;;same as y: n\n",
            "t.csv",
        )
        .unwrap_err();
        assert!(e.to_string().contains("empty Location and Function"), "{e}");
        let e = AcceptedTable::parse("ID;Where\n", "t.csv").unwrap_err();
        assert!(e.to_string().starts_with("t.csv:1: header"), "{e}");
    }
}
