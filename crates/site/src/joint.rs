//! The joint view, present when the site has two or more systems: per candidate and operation
//! the mean cycles on each system, their ratio to the first system, and each system's clock
//! (`joint/<cand>.html`), plus an overview of all candidates (`joint/index.html`) with the
//! geometric-mean ratio over the instances and operations measured on every system.

use std::collections::HashSet;
use std::fmt::Write;

use crate::PageOut;
use crate::data::{Rec, SiteData, SystemFacts};
use crate::html::{escape, relative};
use pqperf_model::fmt;
use pqperf_model::order::natural_cmp;

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

fn op_rank(op: &str) -> (usize, u64) {
    const ORDER: [&str; 9] = [
        "keygen", "enc", "encaps", "dec", "decaps", "sign", "verify", "exchange", "hash",
    ];
    if let Some(b) = op.strip_prefix("hash_") {
        return (100, b.parse().unwrap_or(0));
    }
    (ORDER.iter().position(|o| *o == op).unwrap_or(50), 0)
}

/// (label, opkey) rows of a candidate across systems, in natural label and operation order.
fn rows(site: &SiteData, cand: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for s in &site.systems {
        for r in s.records.iter().filter(|r| r.candidate == cand) {
            let k = (r.label.clone(), r.opkey.clone());
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    v.sort_by(|a, b| natural_cmp(&a.0, &b.0).then_with(|| op_rank(&a.1).cmp(&op_rank(&b.1))));
    v
}

fn cycles_of(r: Option<&Rec>) -> Option<f64> {
    r.filter(|r| r.complete).and_then(|r| r.mean_cycles)
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

fn ev_link(
    page: &str,
    sys: &SystemFacts,
    rec: Option<&Rec>,
    text: &str,
    known: &HashSet<String>,
) -> String {
    match rec {
        Some(r) => {
            let p = format!("evidence/{}/{}", sys.id, r.path);
            if known.contains(&p) {
                return format!(
                    "<a class=\"ev\" href=\"{}\">{}</a>",
                    escape(&relative(page, &p)),
                    escape(text)
                );
            }
            escape(text)
        }
        None => escape(text),
    }
}

fn systems_intro(site: &SiteData) -> String {
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
        let _ = writeln!(
            b,
            "<li><strong>{}</strong> ({}): {}; clock: {}{emulated}</li>",
            escape(&s.id),
            escape(&s.arch),
            escape(&s.description),
            escape(&clock_line(s))
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
    let mut overview: Vec<(String, usize, Option<Vec<f64>>)> = Vec::new();
    for cand in &cands {
        let path = format!("joint/{cand}.html");
        let name = site
            .candidate(cand)
            .map(|c| c.algorithm.clone())
            .unwrap_or_else(|| cand.clone());
        let mut b = format!(
            "<h1 id=\"joint\">{} {} — all systems</h1>\n<p>Mean cycles per call of every measured operation on each system, and the ratio to {}. Cycles are core cycles at each system's own clock; multiply by the clock period to compare time.</p>\n",
            escape(cand),
            escape(&name),
            escape(&first.id)
        );
        b.push_str(&systems_intro(site));
        b.push_str("<div class=\"table-wrap\"><table>\n<thead>\n<tr>\n<th>instance</th>\n<th>operation</th>\n");
        for s in &site.systems {
            let _ = writeln!(b, "<th>{} cycles</th>", escape(&s.id));
        }
        for s in others {
            let _ = writeln!(b, "<th>{} ÷ {}</th>", escape(&s.id), escape(&first.id));
        }
        for s in &site.systems {
            let _ = writeln!(b, "<th>{} clock</th>", escape(&s.id));
        }
        b.push_str("</tr>\n</thead>\n<tbody>\n");
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); others.len()];
        let rs = rows(site, cand);
        for (label, opkey) in &rs {
            let _ = write!(
                b,
                "<tr>\n<td><code>{}</code></td>\n<td>{}</td>\n",
                escape(label),
                escape(opkey)
            );
            let recs: Vec<Option<&Rec>> = site
                .systems
                .iter()
                .map(|s| s.record(cand, label, opkey))
                .collect();
            for (s, r) in site.systems.iter().zip(&recs) {
                let text = match r {
                    Some(r) if !r.complete => "failed".to_string(),
                    Some(r) => fmt::fmt_cycles(r.mean_cycles),
                    None => "–".to_string(),
                };
                let _ = writeln!(
                    b,
                    "<td class=\"num\">{}</td>",
                    ev_link(&path, s, *r, &text, known)
                );
            }
            let base = cycles_of(recs[0]);
            for (k, r) in recs.iter().skip(1).enumerate() {
                let cell = match (base, cycles_of(*r)) {
                    (Some(a), Some(c)) if a > 0.0 => {
                        let ratio = c / a;
                        if recs
                            .iter()
                            .all(|r| r.is_some_and(|r| r.variant == "reference"))
                        {
                            ratios[k].push(ratio);
                        }
                        ratio_cell(ratio)
                    }
                    _ => "–".to_string(),
                };
                let _ = writeln!(b, "<td class=\"num\">{cell}</td>");
            }
            for s in &site.systems {
                let g = s
                    .clock_ghz
                    .map(|g| format!("{g:.2} GHz"))
                    .unwrap_or_else(|| "–".into());
                let campaign = format!("evidence/{}/campaign.json", s.id);
                let cell = if known.contains(&campaign) {
                    format!(
                        "<a class=\"ev\" href=\"{}\">{g}</a>",
                        escape(&relative(&path, &campaign))
                    )
                } else {
                    g
                };
                let _ = writeln!(b, "<td class=\"num\">{cell}</td>");
            }
            b.push_str("</tr>\n");
        }
        b.push_str("</tbody>\n</table></div>\n");
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
        let geo = (!ratios.is_empty() && ratios.iter().all(|v| !v.is_empty())).then(|| {
            ratios
                .iter()
                .map(|v| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
                .collect()
        });
        overview.push((cand.clone(), rs.len(), geo));
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
        "<h1 id=\"joint\">All systems side by side</h1>\n<p>For each candidate, the geometric mean over its reference instances and operations measured on every system of the cycle ratio to the first system. Follow a candidate for the per-operation numbers and their evidence.</p>\n",
    );
    b.push_str(&systems_intro(site));
    b.push_str("<div class=\"table-wrap\"><table>\n<thead>\n<tr>\n<th>id</th>\n<th>algorithm</th>\n<th>rows</th>\n");
    for s in others {
        let _ = writeln!(
            b,
            "<th>{} ÷ {} (geometric mean)</th>",
            escape(&s.id),
            escape(&first.id)
        );
    }
    b.push_str("</tr>\n</thead>\n<tbody>\n");
    for (cand, n, geo) in &overview {
        let name = site
            .candidate(cand)
            .map(|c| c.algorithm.clone())
            .unwrap_or_else(|| cand.clone());
        let _ = write!(
            b,
            "<tr>\n<td><a href=\"{}.html\"><code>{}</code></a></td>\n<td>{}</td>\n<td class=\"num\">{n}</td>\n",
            escape(cand),
            escape(cand),
            escape(&name)
        );
        for k in 0..others.len() {
            let cell = geo
                .as_ref()
                .and_then(|g: &Vec<f64>| g.get(k))
                .map(|r| ratio_cell(*r))
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(b, "<td class=\"num\">{cell}</td>");
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody>\n</table></div>\n");
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
