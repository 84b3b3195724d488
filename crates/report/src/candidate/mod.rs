//! The candidate page (`<id>/perf_<sys>.md`, site: `performance/<sys>/<id>.md`),
//! method.md §13.2 and site-pages.md: the page frame, crumbs and evidence index here, the
//! larger sections in [`kat`], [`perf`], [`sizes`] and [`symmetric`].

use crate::Form;
use crate::ReportError;
use crate::common::{code, environment_table};
use crate::links::{HARNESS_URL, PageRef, link};
use crate::page::{Cell, Page, Section, Table};
use crate::view::SystemView;
use pqperf_model::fmt::{DASH, digest_prefix, kib};
use pqperf_model::order::Category;

mod built;
mod kat;
pub(crate) mod perf;
mod sizes;
mod symmetric;

use kat::kat_section;
use perf::performance_table;
use sizes::sizes_section;
pub use symmetric::calls_per_operation;
use symmetric::symmetric_section;

/// Render the page of candidate `cand` on the system of `v` as Markdown.
pub fn render(v: &SystemView, cand: &str, form: Form) -> Result<String, ReportError> {
    Ok(page(v, cand, form)?.to_markdown())
}

/// The page of candidate `cand` on the system of `v`, as blocks.
pub fn page(v: &SystemView, cand: &str, form: Form) -> Result<Page, ReportError> {
    let labels = v.labels(cand);
    if labels.is_empty() {
        return Err(ReportError::UnknownCandidate {
            system: v.id.clone(),
            id: cand.to_string(),
        });
    }
    let sys = v.id.as_str();
    let me = PageRef::Candidate {
        sys: sys.to_string(),
        id: cand.to_string(),
    };
    let cat = v.category(cand);
    let algorithm = v.side.algorithm(cand).unwrap_or(cand).to_string();
    // Only http/https (or relative) submission URLs become links (downloads.csv is input).
    let url = v.side.page_url(cand).filter(|u| crate::md::safe_url(u));
    let method_link = link(&me, &PageRef::Method(sys.into()), form);

    let mut out = Page::new();
    let title = format!(
        "# {cand} {algorithm} — performance on {} (system {sys})",
        v.arch_label()
    );
    match form {
        Form::Harness => {
            out.line(title);
            out.blank();
            let mut nav = format!(
                "[Performance {sys}]({}) › `{cand}` · [method]({method_link})",
                link(&me, &PageRef::Summary(sys.into()), form)
            );
            if let Some(url) = url {
                nav.push_str(&format!(" · [NICCS page]({url})"));
            }
            out.line(nav);
        }
        Form::Site => {
            out.line(format!(
                "<!-- synchronized from harness: {} -->",
                me.harness_path()
            ));
            out.line(site_crumb(v, cand, &me));
            out.blank();
            out.line(title);
        }
    }
    out.blank();
    out.line(format!(
        "Independent measurement following the structure of the NICCS {} self-assessment guide, §3.5 (1)–(7). Not a submitter self-assessment.",
        v.guide_name()
    ));
    out.blank();
    if let Some(n) = crate::common::host_notice(v) {
        out.blocks.push(crate::page::Block::Notice(n));
        out.blank();
    }

    // 1. Basic information
    out.section(Section::BasicInformation);
    out.blank();
    if cat == Category::Hash {
        out.line("- Category: cryptographic hash algorithm; function: hash");
    } else {
        out.line(format!(
            "- Category: public-key algorithm; function: {}",
            cat.function()
        ));
    }
    out.line(format!("- Algorithm: {algorithm}"));
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
    out.line(format!(
        "- Implementation versions measured: {}",
        versions.join(", ")
    ));
    out.line(format!(
        "- Parameter sets: {}",
        labels
            .iter()
            .map(|l| code(l))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if form == Form::Site {
        if !crate::common::by_pqperf(v) {
            out.line(format!(
                "- Security evaluation: [{cand} report]({})",
                link(&me, &PageRef::SecurityReport(cand.into()), form)
            ));
        }
        out.line(format!(
            "- Measurement method: [{sys} method]({method_link})"
        ));
        if let Some(url) = url {
            out.line(format!("- Submission: [NICCS page]({url})"));
        }
    }
    out.blank();

    // 2. Assessment environment
    out.section(Section::Environment);
    out.blank();
    out.table(environment_table(v, Some(cand)));
    out.blank();
    let ticks = crate::counter::tick_counter(v);
    if let Some(t) = &ticks {
        out.line(t.sentence());
        out.blank();
    }
    if let Some(s) = crate::provider::sentence(v, Some(cand)) {
        out.line(s);
        out.blank();
    }

    // 3. Functional testing
    out.extend(kat_section(v, cand, &labels));

    // 4. Performance
    out.section(Section::Performance);
    out.blank();
    out.table(performance_table(v, cand, &labels, cat, ticks.as_ref()));
    out.blank();
    if let Some(s) = perf::inconsistent_note(v, cand, &labels) {
        out.line(s);
        out.blank();
    }
    if let Some(s) = perf::interrupted_note(v, cand, &labels) {
        out.line(s);
        out.blank();
    }
    if let Some(s) = perf::robust_note(v, cand, &labels) {
        out.line(s);
        out.blank();
    }
    if let Some(s) = perf::count_note(v, cand, &labels) {
        out.line(s);
        out.blank();
    }
    if let Some(t) = &ticks {
        out.line(format!(
            "The `mean {}` column counts {} ticks at {}, not core cycles.",
            t.unit(),
            t.name(),
            t.freq()
        ));
        out.blank();
    }

    // 5. Resource consumption
    out.section(Section::Resources);
    out.blank();
    out.line("Static memory is approximated by the library's loadable ELF segments; peak memory is the process high-water mark (VmHWM) including the benchmark driver and libc, so both are upper-bound proxies rather than isolated algorithm memory.");
    out.blank();
    // Per-operation stack and heap (pqperf's memory pass) only where records carry them.
    let with_mem = labels.iter().any(|l| {
        v.records_of(cand, l)
            .iter()
            .any(|r| r.rec.memory().is_some())
    });
    let mut header = vec![
        "instance",
        "operation",
        "static: ELF image (bytes)",
        "baseline RSS",
        "peak RSS",
    ];
    if with_mem {
        out.line("Stack is the deepest stack use of one call measured by painting the stack below the driver's calling frame (\"≥\" when the call went past the painted region); heap peak is the largest sum of live bytes the call requested through `malloc` and its relatives, and heap allocations counts them (untimed memory pass, largest over the driver processes).");
        out.blank();
        header.extend(["stack (bytes)", "heap peak (bytes)", "heap allocations"]);
    }
    let mut t = Table::new(header);
    let build_ev = Some(v.file_evidence("build.json"));
    for label in &labels {
        let elf = v.entry(cand, label).and_then(|e| e.elf_load_bytes);
        let elf = Cell::value(
            elf.map(|b| b.to_string()).unwrap_or_else(|| DASH.into()),
            elf.and(build_ev.clone()),
        );
        for r in v.records_of(cand, label) {
            if r.rec.peak_rss_bytes.is_none() {
                continue;
            }
            let ev = Some(r.evidence(&v.id));
            let mut row = vec![
                Cell::text(code(label)),
                Cell::text(r.opkey()),
                elf.clone(),
                Cell::value(kib(r.rec.baseline_rss_bytes), ev.clone()),
                Cell::value(kib(r.rec.peak_rss_bytes), ev.clone()),
            ];
            if with_mem {
                let cells: [String; 3] = match r.rec.memory() {
                    Some((stack, heap, allocs, overflow)) => {
                        let n =
                            |x: Option<u64>| x.map_or_else(|| DASH.to_string(), |x| x.to_string());
                        [
                            format!("{}{stack}", if overflow { "≥ " } else { "" }),
                            n(heap),
                            n(allocs),
                        ]
                    }
                    None => [DASH.into(), DASH.into(), DASH.into()],
                };
                row.extend(cells.into_iter().map(|c| Cell::value(c, ev.clone())));
            }
            t.row(row);
        }
    }
    out.table(t);
    out.blank();

    // 6. Transmission and storage (not for hash)
    if cat != Category::Hash {
        out.extend(sizes_section(v, cand, &labels, cat, &me, form));
        out.extend(symmetric_section(v, cand, &labels, &me, form));
    }

    // Constant-time check (pqperf datasets only)
    out.extend(crate::ct::section(v, cand, &labels));

    // 7. Raw evidence index
    out.section(Section::RawEvidence);
    out.blank();
    let provenance = crate::common::pqperf_provenance(v);
    if provenance.is_some() {
        out.line(format!(
            "Paths are relative to `{}/` in this dataset; each JSON file records its commands, environment and trials.",
            v.run_dir
        ));
    } else {
        out.line(format!(
            "Paths are relative to `{}/` in the [harness]({HARNESS_URL}); each JSON file records its commands, environment and trials.",
            v.run_dir
        ));
    }
    out.blank();
    let mut t = Table::new(["instance", "item", "file"]);
    for label in &labels {
        t.rows.extend(evidence_rows(v, cand, label));
    }
    out.table(t);
    out.blank();
    out.lines(built::built_from(v, cand, &labels));
    match provenance {
        Some(p) => out.line(p),
        None => out.line(format!("Scripts: `performance/campaign.py`, `performance/ngcc_perf.c`, `performance/hashprof/` in the [harness]({HARNESS_URL}).")),
    }
    out.blank();
    Ok(out)
}

/// `<p class="crumb">…</p>` of a site candidate page.
fn site_crumb(v: &SystemView, cand: &str, me: &PageRef) -> String {
    let sys = v.id.as_str();
    let mut s = format!(
        "<p class=\"crumb\"><a href=\"{}\">Performance measurements</a> › <a href=\"{}\">{sys}</a> › <code>{cand}</code> · system: ",
        link(me, &PageRef::Root, Form::Site),
        link(me, &PageRef::Summary(sys.into()), Form::Site)
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
            let target = PageRef::Candidate {
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

fn evidence_rows(v: &SystemView, cand: &str, label: &str) -> Vec<Vec<Cell>> {
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
        let ev = Some(v.file_evidence(&log));
        out.push(vec![
            Cell::text(code(label)),
            Cell::value(format!("KAT log{digest}"), ev.clone()),
            Cell::value(code(&log), ev),
        ]);
    }
    let mut timing: Vec<(String, String)> =
        recs.iter().map(|r| (r.opkey(), slash(r.path))).collect();
    timing.sort();
    for (op, path) in timing {
        out.push(vec![
            Cell::text(code(label)),
            Cell::text(format!("timing {op}")),
            Cell::value(code(&path), Some(v.file_evidence(&path))),
        ]);
    }
    let mut profs: Vec<(String, String)> = v
        .profiles_of(cand, label)
        .iter()
        .map(|p| (p.opkey(), slash(p.path)))
        .collect();
    profs.sort();
    for (op, path) in profs {
        out.push(vec![
            Cell::text(code(label)),
            Cell::text(format!("hash profile {op}")),
            Cell::value(code(&path), Some(v.file_evidence(&path))),
        ]);
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
