//! The symmetric survey page (`performance/symmetric-survey.md`, first system only),
//! method.md §13.6.

use crate::links::{PageRef, link};
use crate::page::{Cell, Page, Table};
use crate::view::SystemView;
use crate::{Form, ReportError};
use pqperf_model::fmt::{DASH, pct};
use pqperf_model::order::Category;

/// `Totals: 67 ICCS-only, 7 bypass, …`: counts by descending count, ties in first-appearance
/// order.
pub fn totals(verdicts: &[&str]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for v in verdicts {
        match counts.iter_mut().find(|(k, _)| k == v) {
            Some((_, c)) => *c += 1,
            None => counts.push((v, 1)),
        }
    }
    // Stable sort keeps first-appearance order among equal counts.
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let items: Vec<String> = counts.iter().map(|(k, c)| format!("{c} {k}")).collect();
    format!("Totals: {}.", items.join(", "))
}

/// The largest `hash_share` over all complete profiles of a candidate (first maximum wins), as
/// `<pct> (<label> <opkey>)`.
fn largest_share(v: &SystemView, cand: &str) -> Cell {
    let mut best: Option<(f64, String, String, crate::page::Evidence)> = None;
    for p in &v.profiles {
        if p.prof.candidate != cand || !p.usable() {
            continue;
        }
        let s = p.prof.hash_share_f64();
        if best.as_ref().is_none_or(|(b, _, _, _)| s > *b) {
            best = Some((s, p.prof.label.clone(), p.opkey(), p.evidence(&v.id)));
        }
    }
    match best {
        Some((s, label, op, ev)) => {
            Cell::value(format!("{} ({label} {op})", pct(Some(s))), Some(ev))
        }
        None => Cell::text(DASH),
    }
}

/// Render the survey page with the measured column from the system of `v`, as Markdown.
pub fn render(v: &SystemView, form: Form) -> Result<String, ReportError> {
    Ok(page(v, form)?.to_markdown())
}

/// The survey page with the measured column from the system of `v`, as blocks.
pub fn page(v: &SystemView, form: Form) -> Result<Page, ReportError> {
    let sys = v.id.as_str();
    let me = PageRef::Survey;
    let mut out = Page::new();
    if form == Form::Site {
        out.line(format!(
            "<!-- synchronized from harness: {} -->",
            me.harness_path()
        ));
    }
    out.line("# Symmetric cryptography survey");
    out.blank();
    out.line("NGCC Round 1 public-key candidates were asked to use the ICCS placeholder functions for their symmetric primitives: `pseudohash` (SM3/HMAC-SM3), `pseudoXOF` (KDF-SM3), `sm3hash` and the ICCS SM3 DRNG, so that the hash selected in the NGCC hash track can later be substituted without touching the schemes. This page records, per candidate, whether the reference implementation actually does so.");
    out.blank();
    let verdicts: Vec<&str> = v.side.survey.iter().map(|s| s.verdict.as_str()).collect();
    out.line(totals(&verdicts));
    out.blank();
    out.line("Verdicts come from call-graph reachability from the exported API in the built libraries, object-level constant scans for Keccak, SHA-2, SM3, AES, SM4 and ChaCha, and source reading; primitives that are compiled but unreachable are not counted. `ICCS-only`: every symmetric primitive goes through the ICCS functions; `bypass`: the candidate uses its own primitives; `mixed`: both; `instance-dependent`: the backend differs between parameter sets.");
    out.blank();
    let description = v
        .side
        .system(sys)
        .map(|s| crate::md::escape_text(&s.description))
        .unwrap_or_else(|| v.env().str("cpu_model").unwrap_or(DASH).to_string());
    out.line(format!(
        "The last column is measured on system {sys} ({description}); see its [summary]({}).",
        link(&me, &PageRef::Summary(sys.into()), form)
    ));
    out.blank();
    let mut t = Table::new([
        "id".to_string(),
        "algorithm".into(),
        "verdict".into(),
        "notes".into(),
        format!("largest hash share on {sys} (op)"),
    ]);
    let mut rows: Vec<&crate::view::SurveyRow> = v.side.survey.iter().collect();
    let rank = |id: &str| Category::from_id(id).map(|c| c.survey_rank()).unwrap_or(4);
    rows.sort_by(|a, b| (rank(&a.id), &a.id).cmp(&(rank(&b.id), &b.id)));
    let measured = v.candidates();
    for row in rows {
        let id_cell = if measured.contains(&row.id) {
            let page = PageRef::Candidate {
                sys: sys.into(),
                id: row.id.clone(),
            };
            format!("[{}]({})", row.id, link(&me, &page, form))
        } else {
            row.id.clone()
        };
        let notes = if row.notes.is_empty() {
            DASH.to_string()
        } else {
            row.notes.clone()
        };
        t.row(vec![
            Cell::text(id_cell),
            Cell::text(v.side.algorithm(&row.id).unwrap_or(DASH)),
            Cell::text(row.verdict.clone()),
            Cell::text(notes),
            largest_share(v, &row.id),
        ]);
    }
    out.table(t);
    out.blank();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::totals;

    #[test]
    fn totals_order_by_count_then_first_appearance() {
        let v = [
            "mixed",
            "ICCS-only",
            "bypass",
            "ICCS-only",
            "bypass",
            "instance-dependent",
        ];
        assert_eq!(
            totals(&v),
            "Totals: 2 ICCS-only, 2 bypass, 1 mixed, 1 instance-dependent."
        );
    }
}
