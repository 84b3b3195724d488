//! Section 2 of the candidate page: the KAT table per instance and the footnotes naming the
//! identified cause of each verdict (kat_issues.csv).

use std::collections::BTreeMap;

use crate::common::code;
use crate::page::{Cell, Page, Section, Table};
use crate::view::SystemView;
use pqperf_model::fmt::DASH;
use pqperf_model::layout::RunLayout;

pub(super) fn kat_section(v: &SystemView, cand: &str, labels: &[String]) -> Page {
    let opening = if crate::common::by_pqperf(v) {
        super::built::kat_origin_sentence(v, cand, labels)
    } else {
        format!(
            "Each library was checked against the submitted KAT vectors (SHA-256 manifest `{cand}/kat.sha256` in the harness) before timing."
        )
    };
    let mut out = Page::new();
    out.section(Section::Kat);
    out.blank();
    out.line(opening);
    out.blank();
    let mut t = Table::new(["instance", "build flags", "KAT"]);
    t.status_column = Some(2);
    // Footnotes numbered in order of first use, keyed by the issue's position in the CSV.
    let mut notes: Vec<(usize, String, bool)> = Vec::new();
    let mut numbers: BTreeMap<usize, usize> = BTreeMap::new();
    for label in labels {
        let entry = v.entry(cand, label);
        let flags = entry
            .map(|e| e.flags.clone())
            .or_else(|| {
                v.records_of(cand, label)
                    .first()
                    .map(|r| r.rec.flags.clone())
            })
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| DASH.into());
        let mut kat = v
            .kat_status(cand, label)
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| DASH.into());
        if let Some(issue) = v.kat_issue(cand, label) {
            let idx = v
                .side
                .kat_issues
                .iter()
                .position(|k| std::ptr::eq(k, issue))
                .unwrap_or(usize::MAX);
            let n = *numbers.entry(idx).or_insert_with(|| {
                notes.push((idx, issue.cause.clone(), issue.action == "measure"));
                notes.len()
            });
            kat.push_str(&format!(" [{n}]"));
            if issue.action == "exclude" {
                kat.push_str(" (not timed)");
            }
        }
        let log = entry
            .and_then(|e| e.kat_log.clone())
            .unwrap_or_else(|| RunLayout::kat_log_rel(cand, label));
        t.row(vec![
            Cell::text(code(label)),
            Cell::value(flags, Some(v.file_evidence("build.json"))),
            Cell::value(kat, Some(v.file_evidence(&log))),
        ]);
    }
    out.table(t);
    out.blank();
    out.lines(super::built::computed_digests(v, cand, labels));
    for (n, (_, cause, measure)) in notes.iter().enumerate() {
        let mut p = format!("[{}] {}", n + 1, crate::md::sanitize_fragment(cause));
        if *measure {
            p.push_str(" These instances are timed anyway; their output is not validated.");
        }
        out.line(p);
        out.blank();
    }
    out
}
