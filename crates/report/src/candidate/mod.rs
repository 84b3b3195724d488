//! The candidate page (`<id>/perf_<sys>.md`, site: `performance/<sys>/<id>.md`),
//! method.md §13.2 and site-pages.md: the page frame, crumbs and evidence index here, the
//! larger sections in [`kat`], [`perf`], [`sizes`] and [`symmetric`].

use crate::Form;
use crate::common::{code, environment_table};
use crate::links::{HARNESS_URL, Page, link};
use crate::view::SystemView;
use crate::{ReportError, join_lines};
use pqperf_model::fmt::{DASH, digest_prefix, kib};
use pqperf_model::order::Category;

mod built;
mod kat;
mod perf;
mod sizes;
mod symmetric;

use kat::kat_section;
use perf::performance_table;
use sizes::sizes_section;
use symmetric::symmetric_section;
pub use symmetric::{calls_per_operation, own_primitive_profile};

/// Render the page of candidate `cand` on the system of `v`.
pub fn render(v: &SystemView, cand: &str, form: Form) -> Result<String, ReportError> {
    let labels = v.labels(cand);
    if labels.is_empty() {
        return Err(ReportError::UnknownCandidate {
            system: v.id.clone(),
            id: cand.to_string(),
        });
    }
    let sys = v.id.as_str();
    let me = Page::Candidate {
        sys: sys.to_string(),
        id: cand.to_string(),
    };
    let cat = v.category(cand);
    let algorithm = v.side.algorithm(cand).unwrap_or(cand).to_string();
    // Only http/https (or relative) submission URLs become links (downloads.csv is input).
    let url = v.side.page_url(cand).filter(|u| crate::md::safe_url(u));
    let method_link = link(&me, &Page::Method(sys.into()), form);

    let mut out: Vec<String> = Vec::new();
    let title = format!(
        "# {cand} {algorithm} — performance on {} (system {sys})",
        v.arch_label()
    );
    match form {
        Form::Harness => {
            out.push(title);
            out.push(String::new());
            let mut nav = format!(
                "[Performance {sys}]({}) › `{cand}` · [method]({method_link})",
                link(&me, &Page::Summary(sys.into()), form)
            );
            if let Some(url) = url {
                nav.push_str(&format!(" · [NICCS page]({url})"));
            }
            out.push(nav);
        }
        Form::Site => {
            out.push(format!(
                "<!-- synchronized from harness: {} -->",
                me.harness_path()
            ));
            out.push(site_crumb(v, cand, &me));
            out.push(String::new());
            out.push(title);
        }
    }
    out.push(String::new());
    out.push(format!(
        "Independent measurement following the structure of the NICCS {} self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment.",
        v.guide_name()
    ));
    out.push(String::new());
    if let Some(n) = crate::common::host_notice(v) {
        out.push(n);
        out.push(String::new());
    }

    // 1. Basic information
    out.push("## 1. Basic information".into());
    out.push(String::new());
    if cat == Category::Hash {
        out.push("- Category: cryptographic hash algorithm; function: hash".into());
    } else {
        out.push(format!(
            "- Category: public-key algorithm; function: {}",
            cat.function()
        ));
    }
    out.push(format!("- Algorithm: {algorithm}"));
    let mut versions: Vec<&str> = labels
        .iter()
        .map(|l| {
            if l.ends_with("-avx2") {
                "optimized (AVX2)"
            } else {
                "reference"
            }
        })
        .collect();
    versions.sort();
    versions.dedup();
    out.push(format!(
        "- Implementation versions measured: {}",
        versions.join(", ")
    ));
    out.push(format!(
        "- Parameter sets: {}",
        labels
            .iter()
            .map(|l| code(l))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if form == Form::Site {
        if !crate::common::by_pqperf(v) {
            out.push(format!(
                "- Security evaluation: [{cand} report]({})",
                link(&me, &Page::SecurityReport(cand.into()), form)
            ));
        }
        out.push(format!(
            "- Measurement method: [{sys} method]({method_link})"
        ));
        if let Some(url) = url {
            out.push(format!("- Submission: [NICCS page]({url})"));
        }
    }
    out.push(String::new());

    // 2. Assessment environment
    out.push("## 2. Assessment environment".into());
    out.push(String::new());
    out.extend(environment_table(v));
    out.push(String::new());
    let ticks = crate::counter::tick_counter(v);
    if let Some(t) = &ticks {
        out.push(t.sentence());
        out.push(String::new());
    }
    if let Some(s) = crate::provider::sentence(v, Some(cand)) {
        out.push(s);
        out.push(String::new());
    }

    // 3. Functional testing
    out.extend(kat_section(v, cand, &labels));

    // 4. Performance
    out.push("## 4. Performance".into());
    out.push(String::new());
    out.extend(performance_table(v, cand, &labels, cat, ticks.as_ref()));
    out.push(String::new());
    if let Some(s) = perf::inconsistent_note(v, cand, &labels) {
        out.push(s);
        out.push(String::new());
    }
    if let Some(s) = perf::robust_note(v, cand, &labels) {
        out.push(s);
        out.push(String::new());
    }
    if let Some(t) = &ticks {
        out.push(format!(
            "The `mean {}` column counts {} ticks at {}, not core cycles.",
            t.unit(),
            t.name(),
            t.freq()
        ));
        out.push(String::new());
    }

    // 5. Resource consumption
    out.push("## 5. Resource consumption".into());
    out.push(String::new());
    out.push("Static memory is approximated by the library's loadable ELF segments; peak memory is the process high-water mark (VmHWM) including the benchmark driver and libc, so both are upper-bound proxies rather than isolated algorithm memory.".into());
    out.push(String::new());
    // Per-operation stack and heap (pqperf's memory pass) only where records carry them.
    let with_mem = labels.iter().any(|l| {
        v.records_of(cand, l)
            .iter()
            .any(|r| r.rec.memory().is_some())
    });
    if with_mem {
        out.push("Stack is the deepest stack use of one call measured by painting the stack below the driver's calling frame (\"≥\" when the call went past the painted region); heap peak is the largest sum of live bytes the call requested through `malloc` and its relatives, and heap allocations counts them (untimed memory pass, largest over the driver processes).".into());
        out.push(String::new());
        out.push(
            "| instance | operation | static: ELF image (bytes) | baseline RSS | peak RSS | stack (bytes) | heap peak (bytes) | heap allocations |".into(),
        );
        out.push("|---|---|---|---|---|---|---|---|".into());
    } else {
        out.push(
            "| instance | operation | static: ELF image (bytes) | baseline RSS | peak RSS |".into(),
        );
        out.push("|---|---|---|---|---|".into());
    }
    for label in &labels {
        let elf = v
            .entry(cand, label)
            .and_then(|e| e.elf_load_bytes)
            .map(|b| b.to_string())
            .unwrap_or_else(|| DASH.into());
        for r in v.records_of(cand, label) {
            if r.rec.peak_rss_bytes.is_none() {
                continue;
            }
            let mem = if !with_mem {
                String::new()
            } else if let Some((stack, heap, allocs, overflow)) = r.rec.memory() {
                let n = |x: Option<u64>| x.map_or_else(|| DASH.to_string(), |x| x.to_string());
                format!(
                    " {}{stack} | {} | {} |",
                    if overflow { "≥ " } else { "" },
                    n(heap),
                    n(allocs)
                )
            } else {
                format!(" {DASH} | {DASH} | {DASH} |")
            };
            out.push(format!(
                "| {} | {} | {elf} | {} | {} |{mem}",
                code(label),
                r.opkey(),
                kib(r.rec.baseline_rss_bytes),
                kib(r.rec.peak_rss_bytes)
            ));
        }
    }
    out.push(String::new());

    // 6. Transmission and storage (not for hash)
    if cat != Category::Hash {
        out.extend(sizes_section(v, cand, &labels, cat, &me, form));
        out.extend(symmetric_section(v, cand, &labels, &me, form));
    }

    // Constant-time check (pqperf datasets only)
    out.extend(crate::ct::section(v, cand, &labels));

    // 7. Raw evidence index
    out.push("## 7. Raw evidence index".into());
    out.push(String::new());
    let provenance = crate::common::pqperf_provenance(v);
    if provenance.is_some() {
        out.push(format!(
            "Paths are relative to `{}/` in this dataset; each JSON file records its commands, environment and trials.",
            v.run_dir
        ));
    } else {
        out.push(format!(
            "Paths are relative to `{}/` in the [harness]({HARNESS_URL}); each JSON file records its commands, environment and trials.",
            v.run_dir
        ));
    }
    out.push(String::new());
    out.push("| instance | item | file |".into());
    out.push("|---|---|---|".into());
    for label in &labels {
        out.extend(evidence_rows(v, cand, label));
    }
    out.push(String::new());
    out.extend(built::built_from(v, cand, &labels));
    match provenance {
        Some(p) => out.push(p),
        None => out.push(format!("Scripts: `performance/campaign.py`, `performance/ngcc_perf.c`, `performance/hashprof/` in the [harness]({HARNESS_URL}).")),
    }
    out.push(String::new());
    Ok(join_lines(&out))
}

/// `<p class="crumb">…</p>` of a site candidate page.
fn site_crumb(v: &SystemView, cand: &str, me: &Page) -> String {
    let sys = v.id.as_str();
    let mut s = format!(
        "<p class=\"crumb\"><a href=\"{}\">Performance measurements</a> › <a href=\"{}\">{sys}</a> › <code>{cand}</code> · system: ",
        link(me, &Page::Root, Form::Site),
        link(me, &Page::Summary(sys.into()), Form::Site)
    );
    let mut parts = Vec::new();
    let mut systems: Vec<&str> = v.side.systems.iter().map(|s| s.id.as_str()).collect();
    if !systems.contains(&sys) {
        systems.push(sys);
    }
    for other in systems {
        if other == sys {
            parts.push(format!("<strong>{sys}</strong>"));
        } else if !v.side.has_page(other, cand) {
            // No evidence of this candidate on that system: no page to link to.
            parts.push(other.to_string());
        } else {
            let target = Page::Candidate {
                sys: other.into(),
                id: cand.into(),
            };
            parts.push(format!(
                "<a href=\"{}\">{other}</a>",
                link(me, &target, Form::Site)
            ));
        }
    }
    s.push_str(&parts.join(" · "));
    s.push_str("</p>");
    s
}

fn evidence_rows(v: &SystemView, cand: &str, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let recs = v.records_of(cand, label);
    let (log, sha) = match v.entry(cand, label) {
        Some(e) if e.kat_log.is_some() => (e.kat_log.clone(), e.kat_log_sha256.clone()),
        _ => recs
            .iter()
            .find(|r| r.rec.kat_log.is_some())
            .map(|r| (r.rec.kat_log.clone(), r.rec.kat_log_sha256.clone()))
            .unwrap_or((None, None)),
    };
    if let Some(log) = log {
        let digest = sha
            .map(|s| format!(" (sha256 `{}`)", digest_prefix(&s)))
            .unwrap_or_default();
        out.push(format!(
            "| {} | KAT log{digest} | {} |",
            code(label),
            code(&log)
        ));
    }
    let mut timing: Vec<(String, String)> =
        recs.iter().map(|r| (r.opkey(), slash(r.path))).collect();
    timing.sort();
    for (op, path) in timing {
        out.push(format!(
            "| {} | timing {op} | {} |",
            code(label),
            code(&path)
        ));
    }
    let mut profs: Vec<(String, String)> = v
        .profiles_of(cand, label)
        .iter()
        .map(|p| (p.opkey(), slash(p.path)))
        .collect();
    profs.sort();
    for (op, path) in profs {
        out.push(format!(
            "| {} | hash profile {op} | {} |",
            code(label),
            code(&path)
        ));
    }
    out
}

/// A relative path with `/` separators.
fn slash(p: &std::path::Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
