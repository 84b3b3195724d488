//! The pages of the site: report pages rendered from their blocks (with charts added to the
//! candidate pages and ranking links to the summaries), and the pages the site generates
//! itself: root index, ordered measurements per security target, joint view.

use std::collections::HashSet;
use std::fmt::Write;

use crate::data::{Category, SiteData, SystemFacts};
use crate::evidence::{PageKind, page_kind};
use crate::html::{self, escape, relative};
use crate::rank::{self, CategoryRanking, MetricKind, TARGETS};
use crate::svg;
use crate::{PageOut, joint};
use pqperf_model::md::escape_text;
use pqperf_model::order::natural_cmp;
use pqperf_model::record::Quantiles;
use pqperf_report::page::{Block, Cell, Evidence, Page, Section, Table};
use pqperf_report::view::RecordRef;

/// Paths of the pages the site generates itself (besides the report's Markdown pages).
pub fn generated_paths(site: &SiteData) -> Vec<String> {
    let mut v = Vec::new();
    if !site.pages.iter().any(|(p, _)| p == "index.md") {
        v.push("index.html".to_string());
    }
    for s in &site.systems {
        for t in TARGETS {
            v.push(format!("{}/ranking-{t}.html", s.id));
        }
    }
    v.extend(joint::paths(site));
    v
}

/// All generated pages.
pub fn generated_pages(site: &SiteData, known: &HashSet<String>) -> Vec<PageOut> {
    let mut v = Vec::new();
    if !site.pages.iter().any(|(p, _)| p == "index.md") {
        v.push(root_index(site, known));
    }
    for s in &site.systems {
        for t in TARGETS {
            v.push(ranking_page(site, s, t, known));
        }
    }
    v.extend(joint::pages(site, known));
    v
}

/// Render one report page (site form, as blocks) at `md_path`.
pub fn report_page(
    site: &SiteData,
    systems: &[String],
    md_path: &str,
    doc: &Page,
    known: &HashSet<String>,
) -> PageOut {
    let path = md_path
        .strip_suffix(".md")
        .map(|s| format!("{s}.html"))
        .unwrap_or_else(|| md_path.to_string());
    let (kind, sys_id) = page_kind(md_path, systems);
    let sys = sys_id
        .as_deref()
        .and_then(|id| site.systems.iter().find(|s| s.id == id));
    let class = matches!(kind, PageKind::Summary).then_some("performance-summary");
    let href = |e: &pqperf_report::page::Evidence| Some(crate::evidence::href(e));
    let framed = crate::host_notice(site, &path).1.is_some();
    let r = html::render_page(doc, &path, known, &href, class, framed);
    let mut body = r.html;
    let mut joint_page = None;
    let has_rankings = doc
        .blocks
        .iter()
        .any(|b| matches!(b, Block::Line(l) if l.contains("ranking-128")));
    match (&kind, sys) {
        (PageKind::Candidate(cand), Some(sys)) => {
            let charts = candidate_charts(site, sys, cand, &path, known);
            // Charts go before resource consumption (else sizes, else the evidence index).
            let at = [
                Section::Resources,
                Section::Transmission,
                Section::RawEvidence,
            ]
            .iter()
            .find_map(|want| r.section_at.iter().find(|(s, _)| s == want))
            .map(|(_, at)| *at);
            match at {
                Some(i) => body.insert_str(i, &charts),
                None => body.push_str(&charts),
            }
            let j = format!("joint/{cand}.html");
            if known.contains(&j) {
                joint_page = Some(j);
            }
        }
        (PageKind::Summary, Some(sys)) if !has_rankings => {
            let mut extra =
                String::from("<h2 id=\"ordered-measurements\">Ordered measurements</h2>\n<p>");
            for (i, t) in TARGETS.iter().enumerate() {
                if i > 0 {
                    extra.push_str(" · ");
                }
                let _ = write!(extra, "<a href=\"ranking-{t}.html\">{t}-bit</a>");
            }
            extra.push_str("</p>\n<p>Compare candidates at a common claimed security target: each table orders the measured metrics and summarizes their mean ordinal position.</p>\n");
            if known.contains("joint/index.html") {
                let _ = writeln!(
                    extra,
                    "<p>The <a href=\"{}\">joint view</a> puts the cycles of every system side by side.</p>",
                    relative(&path, "joint/index.html")
                );
            }
            let _ = sys;
            insert_before_first_h2(&mut body, &extra);
        }
        _ => {}
    }
    if let (PageKind::Summary, Some(sys)) = (&kind, sys) {
        let files: Vec<String> = ["csv", "json"]
            .iter()
            .map(|e| format!("{}/summary.{e}", sys.id))
            .filter(|p| known.contains(p))
            .map(|p| {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&relative(&path, &p)),
                    &p[p.len() - 4..].trim_start_matches('.').to_uppercase()
                )
            })
            .collect();
        if !files.is_empty() {
            let extra = format!(
                "<p class=\"downloads\">This summary as data: {} (every timing record of {}: mean, time, robust estimate with its interval, KAT verdict and evidence path).</p>\n",
                files.join(" · "),
                escape(&sys.id)
            );
            insert_before_first_h2(&mut body, &extra);
        }
    }
    let title = if r.title.is_empty() {
        path.clone()
    } else {
        r.title
    };
    let crumb = (!r.has_crumb).then(|| default_crumb(&path, sys_id.as_deref(), &title));
    PageOut {
        path,
        title,
        body,
        crumb,
        main_class: if matches!(kind, PageKind::Summary) {
            "performance-index"
        } else {
            ""
        },
        joint: joint_page,
    }
}

fn default_crumb(path: &str, sys: Option<&str>, title: &str) -> String {
    let mut c = format!(
        "<p class=\"crumb\"><a href=\"{}\">Performance measurements</a>",
        relative(path, "index.html")
    );
    if let Some(s) = sys {
        let _ = write!(
            c,
            " › <a href=\"{}\">{}</a>",
            relative(path, &format!("{s}/index.html")),
            escape(s)
        );
    }
    let _ = write!(c, " › {}</p>", escape(title));
    c
}

fn insert_before_first_h2(body: &mut String, extra: &str) {
    match body.find("<h2") {
        Some(i) => body.insert_str(i, extra),
        None => body.push_str(extra),
    }
}

/// Charts of a candidate page: cycles per operation per instance (log scale) and per-call
/// distributions where records carry percentiles.
pub fn candidate_charts(
    site: &SiteData,
    sys: &SystemFacts,
    cand: &str,
    page: &str,
    known: &HashSet<String>,
) -> String {
    // (record, its operation key) of the candidate's complete records.
    let recs: Vec<(RecordRef, String)> = sys
        .records()
        .iter()
        .filter(|r| r.rec.candidate == cand && r.complete())
        .map(|r| (*r, r.opkey()))
        .collect();
    if recs.is_empty() {
        return String::new();
    }
    let mut labels: Vec<&str> = Vec::new();
    let mut ops: Vec<&str> = Vec::new();
    for (r, opkey) in &recs {
        if !labels.contains(&r.rec.label.as_str()) {
            labels.push(&r.rec.label);
        }
        if !ops.contains(&opkey.as_str()) {
            ops.push(opkey);
        }
    }
    labels.sort_by(|a, b| natural_cmp(a, b));
    ops.sort_by_key(|o| pqperf_model::order::op_rank(o));
    if ops.iter().any(|o| o.starts_with("hash_")) && ops.len() > 4 {
        let keep: Vec<&str> = Category::Hash
            .ops()
            .iter()
            .copied()
            .filter(|o| ops.contains(o))
            .collect();
        if !keep.is_empty() {
            ops = keep;
        }
    }
    let href = |r: &RecordRef| {
        let p = sys.evidence_path(r);
        known.contains(&p).then(|| relative(page, &p))
    };
    let groups: Vec<(String, Vec<Option<svg::Value>>)> = labels
        .iter()
        .map(|l| {
            let vals = ops
                .iter()
                .map(|o| {
                    recs.iter()
                        .find(|(r, k)| r.rec.label == *l && k == o)
                        .and_then(|(r, _)| {
                            r.rec.mean_cycles.map(|v| svg::Value {
                                value: v,
                                href: href(r),
                            })
                        })
                })
                .collect();
            (l.to_string(), vals)
        })
        .collect();
    let series: Vec<String> = ops.iter().map(|o| o.replace('_', " ")).collect();
    let name = site
        .candidate(cand)
        .map(|c| c.algorithm.clone())
        .unwrap_or_else(|| cand.to_string());
    let mut out = String::new();
    if let Some(chart) = svg::bars_log(
        &format!(
            "{cand} {name}: mean {} per operation on {}",
            sys.unit(),
            sys.id
        ),
        sys.unit(),
        &series,
        &groups,
    ) {
        out.push_str("<h2 id=\"charts\">Charts</h2>\n");
        out.push_str(&chart);
    }
    let rows: Vec<(String, &Quantiles, Option<String>)> = labels
        .iter()
        .flat_map(|l| {
            let mut rs: Vec<_> = recs
                .iter()
                .filter_map(|(r, k)| Some((r, k, r.per_call_cycles()?)))
                .filter(|(r, _, _)| r.rec.label == *l)
                .collect();
            rs.sort_by_key(|(_, k, _)| pqperf_model::order::op_rank(k));
            rs.into_iter()
                .map(|(r, k, q)| (format!("{} {k}", r.rec.label), q, href(r)))
                .collect::<Vec<_>>()
        })
        .collect();
    if let Some(chart) = svg::distribution(
        &format!(
            "{cand}: per-call {} on {} (p50, p90, p99)",
            sys.unit(),
            sys.id
        ),
        sys.unit(),
        &rows,
    ) {
        out.push_str(&chart);
    }
    out
}

fn cand_link(
    cand: &str,
    label: &str,
    sys: &SystemFacts,
    page: &str,
    known: &HashSet<String>,
) -> String {
    let target = format!("{}/{cand}.html", sys.id);
    let code = format!("<code>{}</code>", escape(cand));
    if known.contains(&target) {
        format!(
            "<a href=\"{}\" title=\"{}\">{code}</a>",
            escape(&relative(page, &target)),
            escape(label)
        )
    } else {
        format!("<span title=\"{}\">{code}</span>", escape(label))
    }
}

/// A candidate as a ranking cell (Markdown): its code name linked to its page (the link's
/// title names the algorithm and the instance ranked) and its display name.
fn cand_cell(site: &SiteData, cand: &str, label: &str) -> String {
    let (shown, algorithm) = match site.candidate(cand) {
        Some(c) => (
            c.short_name.clone().unwrap_or_else(|| c.algorithm.clone()),
            c.algorithm.clone(),
        ),
        None => (cand.to_string(), cand.to_string()),
    };
    let title = format!("{algorithm} ({label})")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        "[{}]({cand}.md \"{title}\") {}",
        pqperf_model::md::code_span(cand),
        pqperf_model::md::escape_text(&shown)
    )
}

/// The shown position of each row (`2`, `2 (tie)`) from the rows' mean ranks.
fn positions(means: &[f64]) -> Vec<String> {
    (0..means.len())
        .map(|i| match rank::position(means, i) {
            (p, true) => format!("{p} (tie)"),
            (p, false) => p.to_string(),
        })
        .collect()
}

/// A table block rendered by the site's one table writer, in the ranking's wrapper.
fn table_html(t: Table, page: &str, known: &HashSet<String>) -> String {
    format!(
        "<div class=\"ranking-table\">{}</div>\n",
        html::table_html(t, page, known)
    )
}

/// The ranking of one category as a table: one row per candidate in overall order (ties in
/// the mean rank share a position), each value with its rank and evidence.
fn ranking_table(
    site: &SiteData,
    sys: &SystemFacts,
    r: &CategoryRanking,
    page: &str,
    known: &HashSet<String>,
) -> String {
    let mut header = vec![
        "rank".to_string(),
        "candidate".to_string(),
        "overall (mean rank)".to_string(),
    ];
    header.extend(r.metrics.iter().map(|m| sys.unit_name(m.name)));
    let mut t = Table::new(header);
    let means: Vec<f64> = r.entries.iter().map(|e| e.mean_rank).collect();
    for (e, pos) in r.entries.iter().zip(positions(&means)) {
        let mut row = vec![
            Cell::text(pos),
            Cell::text(cand_cell(site, &e.candidate, &e.label)),
            Cell::text(pqperf_model::fmt::mean_rank(e.mean_rank)),
        ];
        for (cell, rk) in e.cells.iter().zip(&e.ranks) {
            let mut text = format!(
                "{} · rank {}",
                pqperf_model::md::escape_text(&cell.text),
                pqperf_model::fmt::rank(*rk)
            );
            if let Some(b) = &cell.robust {
                text.push_str(&format!(
                    "<br><small class=\"robust\">{}</small>",
                    escape(b)
                ));
            }
            row.push(Cell::value(text, cell.evidence.clone()));
        }
        t.row(row);
    }
    table_html(t, page, known)
}

/// The same instances ranked by instructions per call (callgrind counts), when they were
/// counted: a separate table under its own heading, saying what a count compares.
fn instruction_ranking(
    site: &SiteData,
    sys: &SystemFacts,
    r: &CategoryRanking,
    page: &str,
    known: &HashSet<String>,
) -> Option<String> {
    let entries = rank::rank_instructions(sys, r);
    if entries.is_empty() {
        return None;
    }
    let ops: Vec<&str> = r
        .metrics
        .iter()
        .filter_map(|m| match m.kind {
            MetricKind::Cycles(op) => Some(op),
            _ => None,
        })
        .collect();
    let mut header = vec![
        "rank".to_string(),
        "candidate".to_string(),
        "overall (mean rank)".to_string(),
    ];
    header.extend(ops.iter().map(|op| format!("{op} instructions/call")));
    let mut t = Table::new(header);
    let means: Vec<f64> = entries.iter().map(|e| e.mean_rank).collect();
    for (e, pos) in entries.iter().zip(positions(&means)) {
        let mut row = vec![
            Cell::text(pos),
            Cell::text(cand_cell(site, &e.candidate, &e.label)),
            Cell::text(pqperf_model::fmt::mean_rank(e.mean_rank)),
        ];
        for ((n, ev), rk) in e.cells.iter().zip(&e.ranks) {
            row.push(Cell::value(
                format!(
                    "{} · rank {}",
                    pqperf_model::fmt::fmt_cycles(Some(*n)),
                    pqperf_model::fmt::rank(*rk)
                ),
                Some(ev.clone()),
            ));
        }
        t.row(row);
    }
    let h3 = format!("{} by instructions per call", r.category.title());
    Some(format!(
        "<h3 id=\"{}\">{}</h3>\n<p class=\"note\">A separate ranking, not the order above: the median number of instructions one call executes under valgrind's callgrind (the driver's seeded inputs, only the operation's API function counted), {} of the {} instances ranked above counted. A count is exact and the same on any host under any load, so equal counts tie and nothing else does. It compares the work two builds of comparable code do; it is not time: one AVX2 or NEON instruction does the work of several scalar ones, memory stalls and the clock are not in it, and system calls are not counted. Each value links to its count file.</p>\n{}",
        html::slug(&h3),
        escape(&h3),
        entries.len(),
        r.entries.len(),
        table_html(t, page, known)
    ))
}

fn ranking_scatter(
    r: &CategoryRanking,
    sys: &SystemFacts,
    target: u32,
    page: &str,
    known: &HashSet<String>,
) -> Option<String> {
    let (x_kind, y_op, x_label, y_label) = match r.category {
        Category::Sign => (
            MetricKind::Signature,
            "sign",
            "signature bytes",
            "sign cycles",
        ),
        Category::Kem => (
            MetricKind::Ciphertext,
            "dec",
            "ciphertext bytes",
            "decapsulation cycles",
        ),
        Category::Kex => (
            MetricKind::Bandwidth,
            "exchange",
            "bandwidth bytes",
            "exchange cycles",
        ),
        Category::Hash => return None,
    };
    let xi = r.metrics.iter().position(|m| m.kind == x_kind)?;
    let yi = r
        .metrics
        .iter()
        .position(|m| m.kind == MetricKind::Cycles(y_op))?;
    if r.entries.len() < 2 {
        // One point shows no relation; its values are in the table.
        return None;
    }
    let y_name = sys.unit_name(y_label);
    let points: Vec<svg::Point> = r
        .entries
        .iter()
        .map(|e| svg::Point {
            label: e.candidate.clone(),
            title: format!(
                "{} {}: {}, {}",
                e.candidate, e.label, e.cells[xi].text, e.cells[yi].text
            ),
            x: e.cells[xi].value,
            y: e.cells[yi].value,
            href: e.cells[yi]
                .evidence
                .as_ref()
                .map(crate::evidence::href)
                .filter(|p| known.contains(p))
                .map(|p| relative(page, &p)),
        })
        .collect();
    svg::scatter_log(
        &format!(
            "{} at {target}-bit on {}: {x_label} vs {y_name}",
            r.category.title(),
            sys.id
        ),
        x_label,
        &y_name,
        &points,
    )
}

/// `<sys>/ranking-<t>.html`.
pub fn ranking_page(
    site: &SiteData,
    sys: &SystemFacts,
    target: u32,
    known: &HashSet<String>,
) -> PageOut {
    let path = format!("{}/ranking-{target}.html", sys.id);
    let title = format!("Ordered measurements ({}, {target}-bit)", sys.id);
    let mut b = format!(
        "<h1 id=\"ordered-measurements\">{}</h1>\n<p>Target: ",
        escape(&title)
    );
    for (i, t) in TARGETS.iter().enumerate() {
        if i > 0 {
            b.push_str(" · ");
        }
        if *t == target {
            let _ = write!(b, "<strong>{t}-bit</strong>");
        } else {
            let _ = write!(b, "<a href=\"ranking-{t}.html\">{t}-bit</a>");
        }
    }
    b.push_str("</p>\n<ul>\n<li><strong>Order:</strong> one row per candidate. Each metric is ranked separately (its rank beside each value); overall is their mean rank. Lower is better; ties share the average rank, and candidates with the same mean rank share a position.</li>\n");
    let _ = writeln!(
        b,
        "<li><strong>Scope:</strong> eligible reference instances at the {target}-bit target (curated <code>security_targets.csv</code>; a PQClean scheme's row comes from its claimed NIST level, 1–2 → 128, 3–4 → 192 and 5 → 256; an NGCC instance's row, and an instance without a row, takes the one 128, 192, 256 or 512 its label states). The recommended set represents a candidate; otherwise the fastest eligible set by mean cycle rank does. Key generation and secret-key size are excluded.</li>"
    );
    let _ = write!(
        b,
        "<li><strong>{unit_title}:</strong> <code>(hash %)</code> is time in ICCS placeholder hashes (instances using their own SHAKE/SHA-2/AES show none); <code>(??%)</code> means no ICCS-facing backend was measured. Hash <code>×</code> values compare with the matching <code>pseudoXOF</code>.</li>\n<li><strong>Bytes:</strong> KEX bandwidth includes exchanged public keys. <code>≈</code> marks a nominal variable-length signature.</li>\n<li><strong>Evidence:</strong> every value links to the record or size catalog it came from. Where pqperf recorded it, the value is its robust per-call estimate (in the column's unit, converted at the record's own counter rate) with its 95 % interval, and the order uses it: values whose intervals overlap share a rank; the reference mean is shown under it.</li>\n</ul>\n",
        unit_title = if sys.counter_unit.is_some() {
            "Ticks"
        } else {
            "Cycles"
        }
    );
    let cats = rank::rank_target(site, sys, target);
    let left_out = rank::left_out(site, sys, target);
    if cats.is_empty() && left_out.is_empty() {
        // Say why the page is empty: which targets the instances of this system claim.
        let claims: Vec<String> = rank::claimed_targets(site, sys)
            .into_iter()
            .map(|(t, list)| {
                let what = match t {
                    Some(t) => format!("{t}-bit"),
                    None => "no target".to_string(),
                };
                let n = list.len();
                let shown: Vec<String> = list
                    .iter()
                    .take(6)
                    .map(|i| format!("<code>{}</code>", escape(i)))
                    .collect();
                let more = if n > 6 {
                    format!(", … ({n} in all)")
                } else {
                    String::new()
                };
                format!("{what}: {}{more}", shown.join(", "))
            })
            .collect();
        let _ = writeln!(
            b,
            "<p class=\"empty-reason\">Empty: no instance of system {} claims the {target}-bit target{}. Targets come from <code>performance/security_targets.csv</code> (for PQClean schemes, from their claimed NIST level).</p>",
            escape(&sys.id),
            if claims.is_empty() {
                " (the system has no instances)".to_string()
            } else {
                format!(" (claimed: {})", claims.join("; "))
            }
        );
    }
    if !left_out.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"empty-reason\">{} at the {target}-bit target but not ranked:</p>\n<ul>",
            if cats.is_empty() {
                "Empty: instances"
            } else {
                "Instances"
            }
        );
        for (cand, label, why) in &left_out {
            let _ = writeln!(
                b,
                "<li>{} <code>{}</code>: {}</li>",
                cand_link(cand, label, sys, &path, known),
                escape(label),
                escape(why)
            );
        }
        b.push_str("</ul>\n");
    }
    for r in &cats {
        let h2 = format!("{} ({target}-bit security)", r.category.title());
        let _ = writeln!(b, "<h2 id=\"{}\">{}</h2>", html::slug(&h2), escape(&h2));
        b.push_str(&ranking_table(site, sys, r, &path, known));
        if let Some(s) = ranking_scatter(r, sys, target, &path, known) {
            b.push_str(&s);
        }
        if let Some(s) = instruction_ranking(site, sys, r, &path, known) {
            b.push_str(&s);
        }
    }
    let crumb = format!(
        "<p class=\"crumb\"><a href=\"../index.html\">Performance measurements</a> › <a href=\"index.html\">{}</a> › ordered measurements, {target}-bit</p>",
        escape(&sys.id)
    );
    PageOut {
        path,
        title,
        body: b,
        crumb: Some(crumb),
        main_class: "",
        joint: None,
    }
}

/// The host column of the index (Markdown): the host-check outcome recorded in campaign.json.
fn host_cell(s: &SystemFacts) -> String {
    use pqperf_model::HostState;
    let state = match &s.host_state {
        Some(HostState::Fixed) => {
            "<span class=\"st ok\">fixed</span> (host checks passed)".to_string()
        }
        Some(HostState::NotFixed(problems)) => format!(
            "<span class=\"st bad\">not fixed</span>: {}",
            escape_text(&problems.join("; "))
        ),
        Some(HostState::Unknown) => {
            "<span class=\"st bad\">unknown</span> (no host-check outcome recorded)".to_string()
        }
        None => "unknown (no campaign.json)".to_string(),
    };
    match &s.emulated {
        Some(e) => format!("emulated ({}); {state}", escape_text(e)),
        None => state,
    }
}

/// A root-index cell: Markdown text naming the file (and field) its fact came from.
fn fact_cell(text: String, source: &Option<(Evidence, Option<String>)>) -> Cell {
    match source {
        Some((e, Some(ptr))) => Cell::value(text, Some(e.clone())).at(ptr.clone()),
        Some((e, None)) => Cell::value(text, Some(e.clone())),
        None => Cell::text(text),
    }
}

/// The systems table of the root index: one row per system, each fact linked to the file it
/// came from, the system to its summary and the ordered measurements to their pages.
fn systems_table(site: &SiteData) -> Table {
    let mut t = Table::new([
        "system",
        "architecture",
        "machine",
        "clock",
        "counter",
        "host",
        "ordered measurements",
    ]);
    t.prose = true;
    for s in &site.systems {
        let ranks: Vec<String> = TARGETS
            .iter()
            .map(|t| format!("[{t}-bit]({}/ranking-{t}.html)", s.id))
            .collect();
        let clock = if s.clock_text.is_empty() {
            "unknown".to_string()
        } else {
            s.clock_text.clone()
        };
        let src = &s.sources;
        t.row(vec![
            Cell::text(format!("[{}]({}/index.html)", escape_text(&s.id), s.id)),
            fact_cell(escape_text(&s.arch), &src.arch),
            fact_cell(escape_text(&s.description), &src.description),
            fact_cell(escape_text(&clock), &src.clock),
            fact_cell(escape_text(s.unit()), &src.counter),
            fact_cell(host_cell(s), &src.host),
            Cell::text(ranks.join(" · ")),
        ]);
    }
    t
}

/// Root `index.html`: the systems, their summaries, rankings and the joint view.
pub fn root_index(site: &SiteData, known: &HashSet<String>) -> PageOut {
    // What the figures count: core cycles, or a tick counter's ticks on hosts without one.
    let units: Vec<&str> = {
        let mut u: Vec<&str> = site.systems.iter().map(|s| s.unit()).collect();
        u.dedup();
        u
    };
    let what = match units.as_slice() {
        ["cycles"] => "Independent cycle-count measurements".to_string(),
        [one] => format!("Independent timing measurements in {}", escape(one)),
        _ => "Independent timing measurements (core cycles, or ticks of a tick counter where the host has no cycle counter; the table names each system's)".to_string(),
    };
    let mut b = format!(
        "<h1 id=\"performance\">Performance</h1>\n<p>{what}, one dataset per test system. Each system summary lists every candidate; per-candidate pages carry the KAT status, sizes, memory proxies, charts and the raw-evidence index, and every number links to the evidence file it came from.</p>\n",
    );
    let unfixed: Vec<&str> = site
        .systems
        .iter()
        .filter(|s| {
            !matches!(s.host_state, Some(pqperf_model::HostState::Fixed)) || s.emulated.is_some()
        })
        .map(|s| s.id.as_str())
        .collect();
    if !unfixed.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"host-notice\"><strong>Host not fixed or not known on {}.</strong> Their numbers come from a host whose clock, turbo, governor or SMT state the host checks did not confirm (see the host column); they are not comparable with those of a fixed-clock system.</p>",
            unfixed
                .iter()
                .map(|s| escape(s))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    b.push_str(&html::table_html(systems_table(site), "index.html", known));
    if known.contains("joint/index.html") {
        b.push_str("<p>The <a href=\"joint/index.html\">joint view</a> shows each candidate's cycles on every system side by side, with their ratio and each system's clock.</p>\n");
    }
    if known.contains("symmetric-survey.html") {
        b.push_str("<p>The <a href=\"symmetric-survey.html\">symmetric cryptography survey</a> records how each public-key submission implements hashing and randomness.</p>\n");
    }
    b.push_str("<p>Evidence files (timing records, hash profiles, KAT logs, build and campaign metadata) are copied under <code>evidence/</code>.</p>\n");
    PageOut {
        path: "index.html".into(),
        title: "Performance".into(),
        body: b,
        crumb: None,
        main_class: "",
        joint: None,
    }
}
