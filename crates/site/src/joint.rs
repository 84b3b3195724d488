//! The joint view, present when the site has two or more systems: per candidate and operation
//! the mean count (cycles or ticks) and mean time on each system, their ratios to the first
//! system, each system's clock once, and a chart of the times (`joint/<cand>.html`), plus an
//! overview of all candidates (`joint/index.html`) with the geometric-mean count and time
//! ratios over the instances and operations measured on every system. Both tables are
//! `page::Table`s written by the site's one table writer (`html::table_html`); each figure
//! names its record as evidence, and a ratio of two robust estimates carries the interval both
//! estimates' intervals allow.

use std::collections::HashSet;
use std::fmt::Write;

use crate::PageOut;
use crate::data::{SiteData, SystemFacts};
use crate::html::{escape, relative};
use crate::svg;
use pqperf_model::fmt;
use pqperf_model::md::escape_text;
use pqperf_model::order::natural_cmp;
use pqperf_model::robust::Robust;
use pqperf_report::page::{Cell, Evidence, Table};
use pqperf_report::view::RecordRef;

/// Candidates shown in the joint view: those present on at least two systems.
fn joint_candidates(site: &SiteData) -> Vec<String> {
    if site.systems.len() < 2 {
        return Vec::new();
    }
    crate::candidate_systems(site)
        .into_iter()
        .filter(|(id, sys)| sys.len() >= 2 && id != "iccs")
        .map(|(id, _)| id)
        .collect()
}

/// Paths of the joint pages.
pub fn paths(site: &SiteData) -> Vec<String> {
    let cands = joint_candidates(site);
    if cands.is_empty() {
        return Vec::new();
    }
    let mut v = vec!["joint/index.html".to_string()];
    v.extend(cands.iter().map(|c| format!("joint/{c}.html")));
    v
}

/// (label, opkey) rows of a candidate across systems, in natural label and operation order.
fn rows(site: &SiteData, cand: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for s in &site.systems {
        for r in s.records().iter().filter(|r| r.rec.candidate == cand) {
            let k = (r.rec.label.clone(), r.opkey());
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    v.sort_by(|a, b| {
        natural_cmp(&a.0, &b.0).then_with(|| {
            pqperf_model::order::op_rank(&a.1).cmp(&pqperf_model::order::op_rank(&b.1))
        })
    });
    v
}

fn cycles_of(r: Option<RecordRef>) -> Option<f64> {
    r.filter(|r| r.complete()).and_then(|r| r.rec.mean_cycles)
}

fn seconds_of(r: Option<RecordRef>) -> Option<f64> {
    r.filter(|r| r.complete()).and_then(|r| r.rec.mean_seconds)
}

/// pqperf's robust estimate of a complete record.
fn robust_of(r: Option<RecordRef<'_>>) -> Option<&Robust> {
    r.filter(|r| r.complete())
        .and_then(|r| r.robust())
        .filter(|rb| rb.estimate_seconds > 0.0)
}

/// The figures a ratio between two records uses, `(a, c)` with an interval each: the robust
/// estimates with their intervals when both records carry one (in cycles at each record's
/// own cycles per second when `cycles`), else the reference means without.
type Figure = (f64, Option<(f64, f64)>);
fn ratio_figures(
    a: Option<RecordRef>,
    c: Option<RecordRef>,
    cycles: bool,
) -> Option<(Figure, Figure)> {
    let mean = |r: Option<RecordRef>| {
        if cycles { cycles_of(r) } else { seconds_of(r) }
    };
    let robust = |r: Option<RecordRef>| -> Option<Figure> {
        let rb = robust_of(r)?;
        let (e, lo, hi) = (rb.estimate_seconds, rb.ci_low_seconds, rb.ci_high_seconds);
        let k = if cycles {
            cycles_of(r)? / seconds_of(r).filter(|s| *s > 0.0)?
        } else {
            1.0
        };
        Some((e * k, Some((lo * k, hi * k))))
    };
    match (robust(a), robust(c)) {
        (Some(x), Some(y)) => Some((x, y)),
        _ => Some(((mean(a)?, None), (mean(c)?, None))),
    }
}

/// `ratio_cell` of c ÷ a; with intervals on both sides also the interval of the ratio
/// (`[c.low ÷ a.high – c.high ÷ a.low]`, which covers every ratio both intervals allow).
fn ratio_with_interval(f: Option<(Figure, Figure)>, acc: Option<&mut Vec<f64>>) -> String {
    let Some(((a, ai), (c, ci))) = f else {
        return "–".to_string();
    };
    let mut out = ratio_of(Some(a), Some(c), acc);
    if let (Some((alo, ahi)), Some((clo, chi))) = (ai, ci)
        && alo > 0.0
        && ahi > 0.0
    {
        out.push_str(&format!(
            " [{}–{}]",
            fmt::fmt_f(clo / ahi, 3),
            fmt::fmt_f(chi / alo, 3)
        ));
    }
    out
}

/// One overview row: candidate, rows, geometric-mean count ratios and time ratios per other
/// system.
type Overview = (String, usize, Option<Vec<f64>>, Option<Vec<f64>>);

/// What the systems' figures count, in words (`cycles`, `ticks (TSC)`, or both).
fn units_word(site: &SiteData) -> String {
    let mut u: Vec<&str> = site.systems.iter().map(|s| s.unit()).collect();
    u.sort();
    u.dedup();
    u.join(" or ")
}

fn clock_line(s: &SystemFacts) -> String {
    let ghz = s
        .clock_ghz
        .map(|g| format!("{g:.2} GHz"))
        .unwrap_or_else(|| "clock unknown".into());
    if s.clock_text.is_empty() {
        ghz
    } else {
        s.clock_text.clone()
    }
}

fn ratio_cell(r: f64) -> String {
    let class = if r > 1.0 { "ratio-up" } else { "ratio-down" };
    format!("<span class=\"{class}\">{}</span>", fmt::ratio(r))
}

/// A record's figure as a table cell naming the record as its evidence (the table writer
/// links it when the site holds the file).
fn ev_cell(sys: &SystemFacts, rec: Option<RecordRef>, text: &str) -> Cell {
    Cell::value(escape_text(text), rec.map(|r| r.evidence(&sys.id)))
}

/// The instructions per call of `cand`'s `label`/`opkey` on `sys` (its count evidence,
/// `count/<id>/<label>__<op>.json`, x86 callgrind or the emulator's plugin) as a table cell
/// naming the file; `–` without a counted file.
fn count_cell(sys: &SystemFacts, cand: &str, label: &str, opkey: &str) -> Cell {
    let rel = format!("count/{cand}/{label}__{opkey}.json");
    let ev = sys
        .view
        .count
        .iter()
        .find(|l| pqperf_report::view::rel_path(&l.path) == rel);
    match ev.and_then(|e| e.value.instructions_per_call.as_ref()) {
        Some(sp) => Cell::value(
            escape_text(&fmt::fmt_cycles(Some(sp.median))),
            Some(Evidence::Run {
                system: sys.id.clone(),
                path: rel,
            }),
        ),
        None => Cell::text("–".to_string()),
    }
}

/// Whether any system holds count evidence of `cand`.
fn has_counts(site: &SiteData, cand: &str) -> bool {
    site.systems
        .iter()
        .any(|s| s.view.count.iter().any(|c| c.value.candidate == cand))
}

/// A ratio cell `c / a` (`–` without both); the ratio is kept in `acc` when given.
fn ratio_of(a: Option<f64>, c: Option<f64>, acc: Option<&mut Vec<f64>>) -> String {
    match (a, c) {
        (Some(a), Some(c)) if a > 0.0 => {
            if let Some(acc) = acc {
                acc.push(c / a);
            }
            ratio_cell(c / a)
        }
        _ => "–".to_string(),
    }
}

/// The systems list with each clock linked to the campaign.json it came from.
fn systems_intro_linked(site: &SiteData, page: &str, known: &HashSet<String>) -> String {
    let mut b = String::from("<ul>\n");
    for s in &site.systems {
        let emulated = s
            .emulated
            .as_deref()
            .map(|e| {
                format!(
                    " <strong class=\"emulated\">emulated: timings are not performance figures</strong> ({})",
                    escape(e)
                )
            })
            .unwrap_or_default();
        let campaign = format!("evidence/{}/campaign.json", s.id);
        let clock = if known.contains(&campaign) {
            format!(
                "<a class=\"ev\" href=\"{}\">{}</a>",
                escape(&relative(page, &campaign)),
                escape(&clock_line(s))
            )
        } else {
            escape(&clock_line(s))
        };
        let _ = writeln!(
            b,
            "<li><strong>{}</strong> ({}): {}; clock: {clock}; counter: {}{emulated}</li>",
            escape(&s.id),
            escape(&s.arch),
            escape(&s.description),
            escape(s.unit())
        );
    }
    b.push_str("</ul>\n");
    b
}

/// The joint pages.
pub fn pages(site: &SiteData, known: &HashSet<String>) -> Vec<PageOut> {
    let cands = joint_candidates(site);
    if cands.is_empty() {
        return Vec::new();
    }
    let first = &site.systems[0];
    let others = &site.systems[1..];
    let mut out = Vec::new();
    let mut overview: Vec<Overview> = Vec::new();
    for cand in &cands {
        let path = format!("joint/{cand}.html");
        let name = site
            .candidate(cand)
            .map(|c| c.algorithm.clone())
            .unwrap_or_else(|| cand.clone());
        let mut b = format!(
            "<h1 id=\"joint\">{} {} — all systems</h1>\n<p>Mean {} per call and mean time per call of every measured operation on each system, and their ratios to {}. Counts are taken at each system's own clock (listed below with their evidence); the time ratio compares wall-clock cost directly.</p>\n",
            escape(cand),
            escape(&name),
            escape(&units_word(site)),
            escape(&first.id)
        );
        if site.systems.iter().any(|s| {
            s.records()
                .iter()
                .any(|r| r.rec.candidate == *cand && r.robust().is_some())
        }) {
            b.push_str("<p>Where both records carry pqperf's robust per-call estimate, the time column shows it first (with its 95 % interval) and the ratios use it, with the interval both estimates' intervals allow; otherwise the reference means.</p>\n");
        }
        let counts = has_counts(site, cand);
        if counts {
            let _ = writeln!(
                b,
                "<p>The <em>instructions/call</em> columns are each system's deterministic instruction counts per call (median over the counted calls; callgrind on x86, pqperf's TCG plugin under emulation for AArch64): work done, not time. {}</p>",
                escape(pqperf_model::count::ACROSS_ARCHITECTURES)
            );
        }
        b.push_str(&systems_intro_linked(site, &path, known));
        let mut labels: Vec<String> = vec!["instance".into(), "operation".into()];
        for s in &site.systems {
            labels.push(format!("{} {}", s.id, s.unit()));
            labels.push(format!("{} time", s.id));
            if counts {
                labels.push(format!("{} instructions/call", s.id));
            }
        }
        for s in others {
            labels.push(format!("{} ÷ {} ({})", s.id, first.id, s.unit()));
            labels.push(format!("{} ÷ {} (time)", s.id, first.id));
        }
        let mut table = Table::new(labels.iter().map(|l| escape_text(l)));
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); others.len()];
        let mut time_ratios: Vec<Vec<f64>> = vec![Vec::new(); others.len()];
        let rs = rows(site, cand);
        let mut chart_groups: Vec<(String, Vec<Option<svg::Value>>)> = Vec::new();
        for (label, opkey) in &rs {
            let mut cells: Vec<Cell> = vec![
                Cell::text(pqperf_model::md::code_span(label)),
                Cell::text(escape_text(opkey)),
            ];
            let recs: Vec<Option<RecordRef>> = site
                .systems
                .iter()
                .map(|s| s.record(cand, label, opkey))
                .collect();
            let mut bars = Vec::new();
            for (s, r) in site.systems.iter().zip(&recs) {
                let (text, time) = match r {
                    Some(r) if !r.complete() => ("failed".to_string(), "failed".to_string()),
                    Some(r) => (
                        fmt::fmt_cycles(r.rec.mean_cycles),
                        // pqperf records: the robust estimate with its interval first.
                        match r.robust_text() {
                            Some(rb) => {
                                format!("{rb} (mean {})", fmt::fmt_time(r.rec.mean_seconds))
                            }
                            None => fmt::fmt_time(r.rec.mean_seconds),
                        },
                    ),
                    None => ("–".to_string(), "–".to_string()),
                };
                cells.push(ev_cell(s, *r, &text));
                cells.push(ev_cell(s, *r, &time));
                if counts {
                    cells.push(count_cell(s, cand, label, opkey));
                }
                let shown = robust_of(*r)
                    .map(|rb| rb.estimate_seconds)
                    .or(seconds_of(*r));
                bars.push(shown.map(|t| svg::Value {
                    value: t * 1e6,
                    href: r.and_then(|r| {
                        let p = s.evidence_path(&r);
                        known.contains(&p).then(|| relative(&path, &p))
                    }),
                }));
            }
            chart_groups.push((format!("{label} {opkey}"), bars));
            let all_reference = recs
                .iter()
                .all(|r| r.is_some_and(|r| r.rec.variant == "reference"));
            for (k, r) in recs.iter().skip(1).enumerate() {
                let keep = all_reference;
                cells.push(Cell::text(ratio_with_interval(
                    ratio_figures(recs[0], *r, true),
                    keep.then_some(&mut ratios[k]),
                )));
                cells.push(Cell::text(ratio_with_interval(
                    ratio_figures(recs[0], *r, false),
                    keep.then_some(&mut time_ratios[k]),
                )));
            }
            table.row(cells);
        }
        b.push_str(&crate::html::table_html(table, &path, known));
        let series: Vec<String> = site.systems.iter().map(|s| s.id.clone()).collect();
        if let Some(chart) = svg::bars_log(
            &format!("{cand} {name}: mean time per call on each system"),
            "µs per call",
            &series,
            &chart_groups,
        ) {
            b.push_str(&chart);
        }
        let mut links = Vec::new();
        for s in &site.systems {
            let p = format!("{}/{cand}.html", s.id);
            if known.contains(&p) {
                links.push(format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&relative(&path, &p)),
                    escape(&s.id)
                ));
            }
        }
        if !links.is_empty() {
            let _ = writeln!(b, "<p>Full performance reports: {}.</p>", links.join(" · "));
        }
        let geo_of = |rs: &Vec<Vec<f64>>| -> Option<Vec<f64>> {
            (!rs.is_empty() && rs.iter().all(|v| !v.is_empty())).then(|| {
                rs.iter()
                    .map(|v| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
                    .collect()
            })
        };
        overview.push((
            cand.clone(),
            rs.len(),
            geo_of(&ratios),
            geo_of(&time_ratios),
        ));
        let crumb = format!(
            "<p class=\"crumb\"><a href=\"../index.html\">Performance measurements</a> › <a href=\"index.html\">all systems</a> › <code>{}</code></p>",
            escape(cand)
        );
        out.push(PageOut {
            path,
            title: format!("{cand} {name} — all systems"),
            body: b,
            crumb: Some(crumb),
            main_class: "",
            joint: None,
        });
    }
    // Overview.
    let path = "joint/index.html";
    let mut b = String::from(
        "<h1 id=\"joint\">All systems side by side</h1>\n<p>For each candidate, the geometric mean over its reference instances and operations measured on every system of the count ratio and of the time ratio to the first system. Follow a candidate for the per-operation numbers, a chart and their evidence.</p>\n",
    );
    b.push_str(&systems_intro_linked(site, path, known));
    let mut labels: Vec<String> = vec!["id".into(), "algorithm".into(), "rows".into()];
    for s in others {
        labels.push(format!(
            "{} ÷ {} ({}, geometric mean)",
            s.id,
            first.id,
            s.unit()
        ));
        labels.push(format!("{} ÷ {} (time, geometric mean)", s.id, first.id));
    }
    let mut table = Table::new(labels.iter().map(|l| escape_text(l)));
    for (cand, n, geo, geo_t) in &overview {
        let name = site
            .candidate(cand)
            .map(|c| c.algorithm.clone())
            .unwrap_or_else(|| cand.clone());
        let mut cells = vec![
            Cell::text(format!(
                "[{}]({cand}.html)",
                pqperf_model::md::code_span(cand)
            )),
            Cell::text(escape_text(&name)),
            Cell::text(n.to_string()),
        ];
        for k in 0..others.len() {
            for g in [geo, geo_t] {
                cells.push(Cell::text(
                    g.as_ref()
                        .and_then(|g: &Vec<f64>| g.get(k))
                        .map(|r| ratio_cell(*r))
                        .unwrap_or_else(|| "–".into()),
                ));
            }
        }
        table.row(cells);
    }
    b.push_str(&crate::html::table_html(table, path, known));
    out.push(PageOut {
        path: path.into(),
        title: "All systems side by side".into(),
        body: b,
        crumb: Some("<p class=\"crumb\"><a href=\"../index.html\">Performance measurements</a> › all systems</p>".into()),
        main_class: "",
        joint: None,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(mean_s: f64, mean_c: f64, robust: Option<[f64; 3]>) -> pqperf_model::record::Record {
        let mut r = pqperf_model::record::Record {
            status: "complete".into(),
            mean_seconds: Some(mean_s),
            mean_cycles: Some(mean_c),
            ..Default::default()
        };
        if let Some([e, lo, hi]) = robust {
            r.pqperf = Some(pqperf_model::record::PqperfRecordExt {
                robust: Some(Robust {
                    estimator: "p50".into(),
                    tick_hz: 1e9,
                    method: String::new(),
                    resamples: 0,
                    seed: 0,
                    confidence: 0.95,
                    calls: 0,
                    estimate_ticks: e * 1e9,
                    ci_low_ticks: lo * 1e9,
                    ci_high_ticks: hi * 1e9,
                    estimate_seconds: e,
                    ci_low_seconds: lo,
                    ci_high_seconds: hi,
                    ci_half_width_rel: 0.0,
                    samples: Vec::new(),
                    trials: None,
                    fenced_out: None,
                }),
                ..Default::default()
            });
        }
        r
    }

    fn at(r: &pqperf_model::record::Record) -> Option<RecordRef<'_>> {
        Some(RecordRef {
            path: std::path::Path::new("records/x/y__sign.json"),
            rec: r,
        })
    }

    #[test]
    fn ratios_use_the_robust_estimates_with_their_interval() {
        // Reference means say 2.5× slower; the robust estimates say 8 % faster.
        let a = rec(1e-5, 20_000.0, Some([1.0e-5, 0.99e-5, 1.01e-5]));
        let b = rec(2.5e-5, 50_000.0, Some([0.92e-5, 0.91e-5, 0.93e-5]));
        let (x, y) = ratio_figures(at(&a), at(&b), false).unwrap();
        assert_eq!((x.0, y.0), (1.0e-5, 0.92e-5));
        let cell = ratio_with_interval(Some((x, y)), None);
        assert!(cell.contains("[0.901–0.939]"), "{cell}");
        // In cycles: each estimate at its record's own cycles per second.
        let (x, y) = ratio_figures(at(&a), at(&b), true).unwrap();
        assert!((x.0 - 20_000.0).abs() < 1e-6 && (y.0 - 18_400.0).abs() < 1e-6);
        // One side without an estimate: the reference means, no interval.
        let c = rec(2.5e-5, 50_000.0, None);
        let f = ratio_figures(at(&a), at(&c), false).unwrap();
        assert_eq!(f, ((1e-5, None), (2.5e-5, None)));
        assert!(!ratio_with_interval(Some(f), None).contains('['));
    }
}
