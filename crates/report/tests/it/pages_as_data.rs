//! Pages as data: every page of the golden dataset rendered as blocks gives the published
//! Markdown, every evidence file a table cell names exists in the dataset, and every value of
//! the summary tables names one; on a pqperf dataset (campaign.json with a `pqperf` block,
//! records with a robust estimate) the summary shows the estimate with its interval beside
//! each operation, and the export carries it.

use pqperf_model::dataset::Dataset;
use pqperf_report::export::{CsvExporter, Exporter, JsonExporter};
use pqperf_report::page::{Block, Evidence};
use pqperf_report::{Form, PageKind, render_docs, render_pages, summary_doc, summary_export};
use serde_json::json;

use crate::common;
use common::*;

#[test]
fn every_cell_evidence_exists_and_blocks_give_the_markdown() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let ds = Dataset::load(&root).unwrap();
    let mut named = 0;
    for sys in ["x86_1", "arm_1"] {
        for form in [Form::Harness, Form::Site] {
            let docs = render_docs(&ds, sys, form).unwrap();
            let md = render_pages(&ds, sys, form).unwrap();
            assert_eq!(docs.len(), md.len());
            for ((_, path, doc), (_, path2, text)) in docs.iter().zip(&md) {
                assert_eq!(path, path2);
                assert_eq!(&doc.to_markdown(), text, "{path}");
                for t in doc.tables() {
                    for cell in t.rows.iter().flatten() {
                        let Some(ev) = &cell.evidence else { continue };
                        named += 1;
                        let file = match ev {
                            Evidence::Run { system, path } => {
                                root.join(format!("performance/data/{system}/{path}"))
                            }
                            Evidence::Side(name) => root.join("performance").join(name),
                        };
                        assert!(
                            file.is_file(),
                            "{path}: cell '{}' names {} which does not exist",
                            cell.text,
                            file.display()
                        );
                    }
                }
            }
        }
    }
    assert!(named > 500, "only {named} cells name evidence");
}

#[test]
fn summary_values_all_name_their_evidence() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let ds = Dataset::load(&root).unwrap();
    let doc = summary_doc(&ds, "x86_1", Form::Site).unwrap();
    let mut values = 0;
    for t in doc.tables() {
        let notes = t.header.iter().position(|h| h == "notes");
        for row in &t.rows {
            // Name columns: id, algorithm, instance (category tables) or helper, bits.
            let first_value = if t.header[0] == "ICCS helper" { 2 } else { 3 };
            for (i, cell) in row.iter().enumerate().skip(first_value) {
                if Some(i) == notes || !cell.text.chars().any(|c| c.is_ascii_digit()) {
                    continue;
                }
                values += 1;
                assert!(
                    cell.evidence.is_some(),
                    "summary value '{}' ({}) names no evidence",
                    cell.text,
                    t.header[i]
                );
            }
        }
    }
    assert!(values > 30, "{values} summary values");
    // Numbered candidate sections come from the guide's items, in order.
    let docs = render_docs(&ds, "x86_1", Form::Harness).unwrap();
    let (_, _, cand) = docs
        .iter()
        .find(|(k, p, _)| *k == PageKind::Candidate && p.starts_with("sign-02/"))
        .unwrap();
    let numbers: Vec<String> = cand
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading {
                section: Some(_), ..
            } => b.heading_text(),
            _ => None,
        })
        .collect();
    assert_eq!(
        numbers,
        [
            "1. Basic information",
            "2. Assessment environment",
            "3. Functional testing (KAT)",
            "4. Performance",
            "5. Resource consumption",
            "6. Transmission and storage overhead",
            "7. Raw evidence index",
        ]
    );
}

#[test]
fn pqperf_summary_shows_the_robust_estimate_beside_each_operation() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_json(&sys.join("campaign.json"), |c| {
        c["pqperf"] = json!({"version": "0.1.0", "commands": ["pqperf campaign all"]});
    });
    let rec = sys.join("records/sign-02/BiT-128__sign.json");
    edit_json(&rec, |r| {
        r["pqperf"] = json!({"version": "0.1.0", "robust": {
            "estimator": "trimmed_mean_20", "tick_hz": 2.1e9, "method": "bootstrap",
            "resamples": 1000, "seed": 1, "confidence": 0.95, "calls": 500,
            "estimate_ticks": 2.2e6, "ci_low_ticks": 2.19e6, "ci_high_ticks": 2.23e6,
            "estimate_seconds": 1.0476e-3, "ci_low_seconds": 1.0429e-3,
            "ci_high_seconds": 1.0619e-3, "ci_half_width_rel": 0.0068, "samples": []}});
    });
    let ds = Dataset::load(&root).unwrap();
    let doc = summary_doc(&ds, "x86_1", Form::Harness).unwrap();
    let md = doc.to_markdown();
    let sign = doc
        .tables()
        .find(|t| t.header.iter().any(|h| h.starts_with("sign ")))
        .unwrap();
    let col = sign
        .header
        .iter()
        .position(|h| h == "sign robust ± CI")
        .unwrap_or_else(|| panic!("no robust column: {:?}", sign.header));
    // The robust estimate is the headline: the reference mean follows it.
    assert_eq!(sign.header[col + 1], "sign reference mean cycles (sym %)");
    let row = sign
        .rows
        .iter()
        .find(|r| r[2].text.starts_with("`BiT-128`"))
        .unwrap();
    assert_eq!(row[col].text, "1.05 ms ± 0.7 %");
    assert_eq!(
        row[col].evidence,
        Some(Evidence::Run {
            system: "x86_1".into(),
            path: "records/sign-02/BiT-128__sign.json".into()
        })
    );
    // Other records carry no estimate: a dash, not a made-up figure.
    let other = sign
        .rows
        .iter()
        .find(|r| r[2].text.starts_with("`BiT-256`"))
        .unwrap();
    assert_eq!(other[col].text, "–");
    assert!(md.contains("Independent measurements of the NGCC Round 1 implementations"));
    // The export carries the estimate and its interval.
    let rows = summary_export(&ds, "x86_1").unwrap();
    let r = rows
        .iter()
        .find(|r| r.id == "sign-02" && r.instance == "BiT-128" && r.operation == "sign")
        .unwrap();
    assert_eq!(r.robust_ci_low_seconds, Some(1.0429e-3));
    let csv = String::from_utf8(CsvExporter.serialize(&rows)).unwrap();
    assert_eq!(csv.lines().count(), rows.len() + 1);
    assert!(csv.contains(";0.0010476;0.0010429;0.0010619;"), "{csv}");
    let json: serde_json::Value = serde_json::from_slice(&JsonExporter.serialize(&rows)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), rows.len());
}

#[test]
fn method_page_is_built_as_blocks() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    // An emulated system has a host notice on its method page.
    edit_json(&root.join("performance/data/arm_1/campaign.json"), |c| {
        c["pqperf"] = json!({"version": "0.1.0", "emulated": "qemu-user"});
    });
    let ds = Dataset::load(&root).unwrap();
    for (sys, notice) in [("x86_1", false), ("arm_1", true)] {
        for form in [Form::Harness, Form::Site] {
            let docs = render_docs(&ds, sys, form).unwrap();
            let (_, _, doc) = docs
                .iter()
                .find(|(k, _, _)| *k == PageKind::Method)
                .unwrap();
            let headings: Vec<(u8, String)> = doc
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Heading { level, text, .. } => Some((*level, text.clone())),
                    _ => None,
                })
                .collect();
            assert_eq!(
                headings,
                [
                    (
                        1,
                        format!("Performance method and limitations — system {sys}")
                    ),
                    (2, "Measurement".to_string()),
                    (2, "Share of the ICCS placeholder functions".to_string()),
                    (2, "Limitations".to_string()),
                ]
            );
            // No heading or notice hides in a plain line (the site leaves a framed notice out).
            for b in &doc.blocks {
                if let Block::Line(l) = b {
                    assert!(!l.starts_with('#'), "{l}");
                    assert!(!l.contains("emulated: timings"), "{l}");
                }
            }
            let notices = doc
                .blocks
                .iter()
                .filter(|b| matches!(b, Block::Notice(n) if n.contains("emulated: timings")))
                .count();
            assert_eq!(notices, usize::from(notice), "{sys} {form:?}");
        }
    }
}
