//! The "Constant-time check" section of a candidate page (pqperf datasets only): per
//! instance and operation, the verdict of the valgrind memcheck run with the secret inputs
//! marked undefined (`ct/<id>/<label>.json`, written by `pqperf ct`), the findings by source
//! location, and the accepted findings with their reasons. Reference (golden) datasets have
//! neither ct evidence nor a pqperf campaign, so their pages are unchanged.

use crate::common::code;
use crate::view::SystemView;

/// What the check does and does not show (one paragraph on every page with the section).
pub const CT_SENTENCE: &str = "Each operation ran once under valgrind memcheck with its secret inputs (secret key, DRNG output, key-exchange private values) marked undefined, so that memcheck reports every conditional branch and every memory index computed from them (the TIMECOP method). \"No findings\" shows that this run — these inputs, this compiler, these flags, the code paths taken — executed no secret-dependent branch or memory index; it does not prove constant time on other inputs or paths, does not detect variable-latency instructions (such as division), and says nothing about other builds. Accepted findings trace to public data or to documented rejection loops; the reason of each is listed.";

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// True for a dataset written by pqperf (its campaign.json carries the `pqperf` block).
pub fn is_pqperf_dataset(v: &SystemView) -> bool {
    v.campaign.extra.contains_key("pqperf") || !v.ct.is_empty()
}

/// The section lines (empty for reference datasets).
pub fn section(v: &SystemView, cand: &str, labels: &[String]) -> Vec<String> {
    if !is_pqperf_dataset(v) {
        return Vec::new();
    }
    let mut out = vec!["## Constant-time check".to_string(), String::new()];
    let evs: Vec<_> = labels
        .iter()
        .filter_map(|l| {
            v.ct.iter()
                .find(|c| c.value.candidate == cand && &c.value.label == l)
        })
        .collect();
    if evs.is_empty() {
        out.push("Not run: no constant-time evidence was recorded for this candidate on this system (campaign phase `ct` or `pqperf ct`).".into());
        out.push(String::new());
        return out;
    }
    out.push(CT_SENTENCE.into());
    out.push(String::new());
    out.push("| instance | operation | secret inputs | verdict | accepted findings |".into());
    out.push("|---|---|---|---|---|".into());
    for ev in &evs {
        for o in &ev.value.operations {
            out.push(format!(
                "| {} | {} | {} | {} | {} |",
                code(&ev.value.label),
                o.operation,
                cell(&o.secret_inputs.join(", ")),
                cell(&o.verdict),
                o.accepted
            ));
        }
    }
    out.push(String::new());
    let rows: Vec<String> = evs
        .iter()
        .flat_map(|ev| {
            ev.value.operations.iter().flat_map(move |o| {
                o.groups.iter().map(move |g| {
                    format!(
                        "| {} | {} | {} | {} | {} | {} | {} |",
                        code(&ev.value.label),
                        o.operation,
                        code(&g.location),
                        code(&g.function),
                        g.kind,
                        g.count,
                        cell(g.accepted.as_deref().unwrap_or("**not accepted**"))
                    )
                })
            })
        })
        .collect();
    if !rows.is_empty() {
        out.push("Findings by source location (count = occurrences in the run):".into());
        out.push(String::new());
        out.push(
            "| instance | operation | location | function | kind | count | accepted because |"
                .into(),
        );
        out.push("|---|---|---|---|---|---|---|".into());
        out.extend(rows);
        out.push(String::new());
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
        out.push(format!(
            "The ICCS helpers this candidate links, checked the same way with undefined seed and message: {} ({}).",
            ops.join(", "),
            code(&format!("{}/{}", v.run_dir, h.path.to_string_lossy()))
        ));
        out.push(String::new());
    }
    for ev in &evs {
        let cmd = ev
            .value
            .operations
            .iter()
            .find(|o| !o.command.is_empty())
            .map(|o| o.command.as_str())
            .unwrap_or("");
        out.push(format!(
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
    out.push(String::new());
    out
}
