//! Markdown rendering of a [`Comparison`] (the JSON form is its serde serialisation).

use crate::Comparison;

fn pct(x: f64) -> String {
    format!("{:+.1} %", (x - 1.0) * 100.0)
}

fn time(s: Option<f64>) -> String {
    match s {
        Some(s) if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        Some(s) => format!("{:.2} µs", s * 1e6),
        None => "–".into(),
    }
}

/// The comparison as a Markdown report (table, one-side-only lists, spread, notes).
pub fn markdown(c: &Comparison) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "# pqperf compare\n\nA: `{}`  \nB: `{}`\n\n",
        c.a, c.b
    ));
    o.push_str(&format!(
        "Ratio B/A of the robust per-call estimates (with at least 8 processes a side: the Hodges–Lehmann shift of the per-process estimates); the interval is the widest of the per-call bootstrap ({:.0} %) and the between-process interval (with at least 8 processes a side, the Mann–Whitney interval of the per-process estimates alone), widened by the recorded A–A noise floor (when neither run records one: the drift measured within the runs' own processes with at least 8 a side, else an assumed ±{:.0} %); verdict faster/slower when it excludes 1.0 and the change is at least {:.1} %, no change when it lies inside ±{:.1} %, otherwise inconclusive (reasons below the table).\n\n",
        c.confidence * 100.0,
        crate::analysis::DEFAULT_NOISE_FLOOR * 100.0,
        c.threshold * 100.0,
        c.threshold * 100.0
    ));
    let mut reasons: Vec<String> = Vec::new();
    o.push_str("| candidate | instance | op | A | B | B/A | interval | change | verdict | median-trial B/A |\n");
    o.push_str("|---|---|---|---:|---:|---:|---|---:|---|---:|\n");
    for r in &c.rows {
        let inst = if r.label_a == r.label_b {
            r.label_a.clone()
        } else {
            format!("{} → {}", r.label_a, r.label_b)
        };
        let (ratio, ci, ch) = match (r.ratio, r.ratio_ci_low, r.ratio_ci_high) {
            (Some(x), Some(l), Some(h)) => (format!("{x:.4}"), format!("[{l:.4}, {h:.4}]"), pct(x)),
            _ => ("–".into(), "–".into(), "–".into()),
        };
        let naive = r
            .naive_ratio
            .map(|x| format!("{x:.4}"))
            .unwrap_or_else(|| "–".into());
        let mark = match &r.reason {
            Some(why) => {
                reasons.push(format!("{} {inst} {}: {why}", r.candidate, r.op));
                format!(" [{}]", reasons.len())
            }
            None => String::new(),
        };
        o.push_str(&format!(
            "| {} | {inst} | {} | {} | {} | {ratio} | {ci} | {ch} | {}{mark} | {naive} |\n",
            r.candidate,
            r.op,
            time(r.a_seconds),
            time(r.b_seconds),
            r.verdict.text()
        ));
    }
    for (i, why) in reasons.iter().enumerate() {
        o.push_str(&format!("\n[{}] {why}\n", i + 1));
    }
    let work: Vec<String> = c
        .rows
        .iter()
        .filter_map(|r| {
            let w = r.work.as_ref()?;
            Some(format!("- {} {} {}: {w}", r.candidate, r.label_a, r.op))
        })
        .collect();
    if !work.is_empty() {
        o.push_str("\nInstruction counts of the same operations (callgrind, both sides):\n\n");
        o.push_str(&work.join("\n"));
        o.push('\n');
    }
    o.push_str(&pairing_section(c));
    for (name, list) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !list.is_empty() {
            o.push_str(&format!("\nOnly in {name}: {}\n", list.join(", ")));
        }
    }
    if let Some(s) = &c.spread {
        o.push_str(&format!(
            "\nSpread over {} operation(s): median |change| {:.2} %, max |change| {:.2} %, largest interval half-width {:.2} %{}\n",
            s.ops,
            s.median_abs_change * 100.0,
            s.max_abs_change * 100.0,
            s.max_ci_half_width * 100.0,
            if s.same_libraries {
                " — both sides measured the same library files: this is the A–A noise floor"
            } else {
                ""
            }
        ));
    }
    for n in &c.notes {
        o.push_str(&format!("\nNote: {n}\n"));
    }
    o
}

/// How each variable-time operation was judged: paired by input stream (the view its verdict
/// used) or unpaired, with the reason (`crate::streams`).
fn pairing_section(c: &Comparison) -> String {
    let lines: Vec<String> = c
        .rows
        .iter()
        .filter_map(|r| {
            let what = format!("{} {} {}", r.candidate, r.label_a, r.op);
            if let Some(p) = &r.paired {
                return Some(format!(
                    "- {what}: paired, {} streams, {} calls at the same call indices: B/A {:.4} [{:.4}, {:.4}] (90 % [{:.4}, {:.4}]), the streams' ratios spread {:.1} %",
                    p.streams,
                    p.calls,
                    p.ratio,
                    p.low,
                    p.high,
                    p.equivalence_low,
                    p.equivalence_high,
                    (p.spread - 1.0) * 100.0
                ));
            }
            let why = r.unpaired_reason.as_ref()?;
            Some(format!("- {what}: unpaired ({why})"))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nVariable-time operations, their calls paired by input stream (the same process seed and call index on both sides: the same inputs, so the operation's own variability cancels):\n\n{}\n",
        lines.join("\n")
    )
}
