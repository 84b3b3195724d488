//! The "Constant-time check" section of a candidate page (pqperf datasets only): per
//! instance and operation, the verdict of the valgrind memcheck run with the secret inputs
//! marked undefined (`ct/<id>/<label>.json`, written by `pqperf ct`), the findings by source
//! location, and the accepted findings with their reasons. Reference (golden) datasets have
//! neither ct evidence nor a pqperf campaign, so their pages are unchanged.

use crate::common::code;
use crate::page::{Cell, Page, Table};
use crate::view::SystemView;

/// What the check does and does not show (one paragraph on every page with the section).
pub const CT_SENTENCE: &str = "Each operation ran once under valgrind memcheck with its secret inputs (secret key, DRNG output, key-exchange private values) marked undefined, so that memcheck reports every conditional branch and every memory index computed from them (the TIMECOP method). \"No findings\" shows that this run — these inputs, this compiler, these flags, the code paths taken — executed no secret-dependent branch or memory index; it does not prove constant time on other inputs or paths, does not detect variable-latency instructions (such as division), and says nothing about other builds. Accepted findings trace to public data or to documented rejection loops; the reason of each is listed.";

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// True for a dataset written by pqperf (its campaign.json carries the `pqperf` block).
pub fn is_pqperf_dataset(v: &SystemView) -> bool {
    v.campaign.pqperf.is_some() || !v.ct.is_empty()
}

/// The section (empty for reference datasets).
pub fn section(v: &SystemView, cand: &str, labels: &[String]) -> Page {
    let mut out = Page::new();
    if !is_pqperf_dataset(v) {
        return out;
    }
    out.heading(2, "Constant-time check");
    out.blank();
    let evs: Vec<_> = labels
        .iter()
        .filter_map(|l| {
            v.ct.iter()
                .find(|c| c.value.candidate == cand && &c.value.label == l)
        })
        .collect();
    if evs.is_empty() {
        out.line("Not run: no constant-time evidence was recorded for this candidate on this system (campaign phase `ct` or `pqperf ct`).");
        out.blank();
        return out;
    }
    out.line(CT_SENTENCE);
    out.blank();
    let mut t = Table::new([
        "instance",
        "operation",
        "secret inputs",
        "verdict",
        "accepted findings",
    ]);
    t.status_column = Some(3);
    for ev in &evs {
        let file = Some(crate::view::run_evidence(&v.id, &ev.path));
        for o in &ev.value.operations {
            t.row(vec![
                Cell::text(code(&ev.value.label)),
                Cell::text(o.operation.clone()),
                Cell::text(cell(&o.secret_inputs.join(", "))),
                Cell::value(cell(&shown_verdict(o)), file.clone()),
                Cell::value(o.accepted.to_string(), file.clone()),
            ]);
        }
    }
    out.table(t);
    out.blank();
    let mut findings = Table::new([
        "instance",
        "operation",
        "location",
        "function",
        "kind",
        "count",
        "accepted because",
    ]);
    findings.group_column = Some(3);
    for ev in &evs {
        let file = Some(crate::view::run_evidence(&v.id, &ev.path));
        for o in &ev.value.operations {
            for g in &o.groups {
                findings.row(vec![
                    Cell::text(code(&ev.value.label)),
                    Cell::text(o.operation.clone()),
                    Cell::text(code(&g.location)),
                    Cell::text(code(&g.function)),
                    Cell::text(g.kind.clone()),
                    Cell::value(g.count.to_string(), file.clone()),
                    Cell::text(cell(g.accepted.as_deref().unwrap_or("**not accepted**"))),
                ]);
            }
        }
    }
    if !findings.rows.is_empty() {
        out.line("Findings by source location (count = occurrences in the run):");
        out.blank();
        out.table(findings);
        out.blank();
    }
    if evs.iter().any(|e| e.value.api == "iccs")
        && let Some(h) =
            v.ct.iter()
                .find(|c| c.value.candidate == "iccs" && c.value.label == "helpers")
    {
        let ops: Vec<String> = h
            .value
            .operations
            .iter()
            .map(|o| format!("{} {}", code(&o.operation), o.verdict))
            .collect();
        out.line(format!(
            "The ICCS helpers this candidate links, checked the same way with undefined seed and message: {} ({}).",
            ops.join(", "),
            code(&format!("{}/{}", v.run_dir, h.path.to_string_lossy()))
        ));
        out.blank();
    }
    for ev in &evs {
        let cmd = ev
            .value
            .operations
            .iter()
            .find(|o| !o.command.is_empty())
            .map(|o| o.command.as_str())
            .unwrap_or("");
        out.line(format!(
            "- {}: {}, build flags {} ({}), evidence {}{}",
            code(&ev.value.label),
            if ev.value.tool.is_empty() {
                "valgrind"
            } else {
                &ev.value.tool
            },
            code(ev.value.build_flags.trim_end()),
            ev.value.flags,
            code(&format!("{}/{}", v.run_dir, ev.path.to_string_lossy())),
            if cmd.is_empty() {
                String::new()
            } else {
                format!(", command {}", code(cmd))
            }
        ));
    }
    out.blank();
    out
}

/// The verdict as a page shows it: `no findings` only when there were none at all; with
/// accepted findings only, `no unaccepted findings` (the count is in the next column).
pub fn shown_verdict(o: &pqperf_model::ct::CtOperation) -> String {
    if o.status == "run" && o.findings == 0 && o.accepted > 0 {
        "no unaccepted findings".to_string()
    } else {
        o.verdict.clone()
    }
}
