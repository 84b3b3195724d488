//! The candidate page (`<id>/perf_<sys>.md`, site: `performance/<sys>/<id>.md`),
//! method.md §13.2 and site-pages.md.

use std::collections::{BTreeMap, BTreeSet};

use crate::Form;
use crate::common::{code, environment_table};
use crate::links::{HARNESS_URL, Page, link};
use crate::view::{ProfileRef, RecordRef, SystemView};
use crate::{ReportError, join_lines};
use pqperf_model::fmt::{
    DASH, digest_prefix, fmt_cycles, fmt_f, fmt_g, fmt_ops, fmt_time, kib, pct,
};
use pqperf_model::order::Category;

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
    out.push(
        "| instance | operation | static: ELF image (bytes) | baseline RSS | peak RSS |".into(),
    );
    out.push("|---|---|---|---|---|".into());
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
            out.push(format!(
                "| {} | {} | {elf} | {} | {} |",
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

fn kat_section(v: &SystemView, cand: &str, labels: &[String]) -> Vec<String> {
    let mut out = vec![
        "## 3. Functional testing (KAT)".to_string(),
        String::new(),
        format!(
            "Each library was checked against the submitted KAT vectors (SHA-256 manifest `{cand}/kat.sha256` in the harness) before timing."
        ),
        String::new(),
        "| instance | build flags | KAT |".into(),
        "|---|---|---|".into(),
    ];
    // Footnotes numbered in order of first use, keyed by the issue's position in the CSV.
    let mut notes: Vec<(usize, String, bool)> = Vec::new();
    let mut numbers: BTreeMap<usize, usize> = BTreeMap::new();
    for label in labels {
        let entry = v.entry(cand, label);
        let flags = entry
            .map(|e| e.flags.clone())
            .or_else(|| {
                v.records_of(cand, label)
                    .first()
                    .map(|r| r.rec.flags.clone())
            })
            .filter(|f| !f.is_empty())
            .unwrap_or_else(|| DASH.into());
        let mut kat = v
            .kat_status(cand, label)
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| DASH.into());
        if let Some(issue) = v.kat_issue(cand, label) {
            let idx = v
                .side
                .kat_issues
                .iter()
                .position(|k| std::ptr::eq(k, issue))
                .unwrap_or(usize::MAX);
            let n = *numbers.entry(idx).or_insert_with(|| {
                notes.push((idx, issue.cause.clone(), issue.action == "measure"));
                notes.len()
            });
            kat.push_str(&format!(" [{n}]"));
            if issue.action == "exclude" {
                kat.push_str(" (not timed)");
            }
        }
        out.push(format!("| {} | {flags} | {kat} |", code(label)));
    }
    out.push(String::new());
    for (n, (_, cause, measure)) in notes.iter().enumerate() {
        let mut p = format!("[{}] {}", n + 1, crate::md::sanitize_fragment(cause));
        if *measure {
            p.push_str(" These instances are timed anyway; their output is not validated.");
        }
        out.push(p);
        out.push(String::new());
    }
    out
}

/// Σ over processes of the driver META `sign_failures_retried`.
fn sign_failures(r: &RecordRef) -> u64 {
    r.rec
        .processes
        .iter()
        .filter_map(|p| p.meta.u64("sign_failures_retried"))
        .sum()
}

/// `n (trials × iters)` cell.
fn n_cell(r: &RecordRef) -> String {
    let n = r
        .rec
        .measurements
        .unwrap_or_else(|| r.rec.trials.iter().map(|t| t.measurements).sum());
    let mut s = format!(
        "{n} ({} × {})",
        r.rec.plan.trials, r.rec.plan.iterations_per_trial
    );
    let k = sign_failures(r);
    if k > 0 {
        s.push_str(&format!("; {k} failed signing attempts retried"));
    }
    s
}

fn performance_table(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    cat: Category,
    ticks: Option<&crate::counter::TickCounter>,
) -> Vec<String> {
    let mut out = Vec::new();
    let (mean, per_byte) = match ticks {
        Some(t) => (format!("mean {}", t.unit()), "ticks/byte".to_string()),
        None => ("mean cycles".to_string(), "cycles/byte".to_string()),
    };
    if cat == Category::Hash {
        out.push(format!(
            "| instance | message | {mean} | {per_byte} | mean time | MB/s | n |"
        ));
        out.push("|---|---|---|---|---|---|---|".into());
    } else {
        out.push(format!("| instance | operation | {mean} | mean time | ops/s | median trial | n (trials × iters) |"));
        out.push("|---|---|---|---|---|---|---|".into());
    }
    for label in labels {
        for r in v.records_of(cand, label) {
            let opkey = r.opkey();
            if !r.complete() {
                out.push(format!("| {} | {opkey} | failed | | | | |", code(label)));
                continue;
            }
            if cat == Category::Hash {
                let bytes = r.rec.input_bytes;
                let (cyc, cpb) = match r.rec.mean_cycles {
                    Some(c) if bytes > 0 => (fmt_cycles(Some(c)), fmt_f(c / bytes as f64, 1)),
                    Some(c) => (fmt_cycles(Some(c)), DASH.into()),
                    None => (DASH.into(), DASH.into()),
                };
                let mbs = fmt_f(r.rec.throughput_mb_per_second.unwrap_or(0.0), 1);
                out.push(format!(
                    "| {} | {bytes} B | {cyc} | {cpb} | {} | {mbs} | {} |",
                    code(label),
                    fmt_time(r.rec.mean_seconds),
                    n_cell(&r)
                ));
            } else {
                out.push(format!(
                    "| {} | {opkey} | {} | {} | {} | {} | {} |",
                    code(label),
                    fmt_cycles(r.rec.mean_cycles),
                    fmt_time(r.rec.mean_seconds),
                    fmt_ops(r.rec.operations_per_second),
                    fmt_time(r.rec.median_trial_seconds),
                    n_cell(&r)
                ));
            }
        }
    }
    out
}

/// Sizes of an instance: the first record that has `sizes`.
fn api_sizes<'a>(v: &SystemView<'a>, cand: &str, label: &str) -> Option<RecordRef<'a>> {
    v.records_of(cand, label)
        .into_iter()
        .find(|r| !r.rec.sizes.is_empty())
}

fn num(x: Option<u64>) -> String {
    x.map(|b| b.to_string()).unwrap_or_else(|| DASH.into())
}

fn sizes_section(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    cat: Category,
    me: &Page,
    form: Form,
) -> Vec<String> {
    let mut out = vec![
        "## 6. Transmission and storage overhead".to_string(),
        String::new(),
    ];
    // pqperf publishes no size audit (a reference-harness document): no link to it.
    let pqperf = crate::common::by_pqperf(v);
    let see_audit = |what: &str| {
        if pqperf {
            String::new()
        } else {
            format!(
                " See [the size audit]({}) for {what}.",
                link(me, &Page::SizeAudit, form)
            )
        }
    };
    match cat {
        Category::Kem | Category::Sign => {
            if pqperf && v.side.external_sizes.is_empty() {
                out.push("Sizes are the API figures recorded in the timing records (this dataset has no curated `performance/external_sizes.csv`).".into());
            } else {
                out.push(format!("External public-key, ciphertext and signature sizes follow the curated `performance/external_sizes.csv` catalog; secret-key and shared-secret lengths remain API figures.{}", see_audit("disagreements")));
            }
            out.push(String::new());
            if cat == Category::Kem {
                out.push(
                    "| instance | public key | secret key | ciphertext | shared secret |".into(),
                );
                out.push("|---|---|---|---|---|".into());
            } else {
                out.push("| instance | public key | secret key | signature |".into());
                out.push("|---|---|---|---|".into());
            }
            let mut nominal = false;
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let ext = v
                    .side
                    .external_sizes
                    .get(&(cand.to_string(), label.to_string()));
                let pk = ext.and_then(|e| e.pk).or(api.get("pk_bytes").copied());
                let sk = api.get("sk_bytes").copied();
                if cat == Category::Kem {
                    let ct = ext.and_then(|e| e.ct).or(api.get("ct_bytes").copied());
                    let ss = api.get("ss_bytes").copied();
                    out.push(format!(
                        "| {} | {} | {} | {} | {} |",
                        code(label),
                        num(pk),
                        num(sk),
                        num(ct),
                        num(ss)
                    ));
                } else {
                    let sig = ext
                        .and_then(|e| e.sig)
                        .or(api.get("signature_bytes").copied());
                    let suffix = match ext.map(|e| e.basis.as_str()) {
                        Some("nominal-variable") => {
                            nominal = true;
                            " ≈ nominal"
                        }
                        Some("maximum-variable") => " (maximum)",
                        _ => "",
                    };
                    out.push(format!(
                        "| {} | {} | {} | {}{suffix} |",
                        code(label),
                        num(pk),
                        num(sk),
                        num(sig)
                    ));
                }
            }
            out.push(String::new());
            if nominal {
                out.push("Signatures marked `≈ nominal` have a variable length: the API reports a capacity, actual signatures vary, and the catalog gives the specification's representative size.".into());
                out.push(String::new());
            }
        }
        Category::Kex => {
            out.push(format!("Bandwidth counts all specified protocol messages and each required public key once, following the curated `performance/kex_bandwidth.csv` catalog; raw message lengths are the API figures of the timing records.{}", see_audit("the accounting")));
            out.push(String::new());
            out.push("| instance | passes | messages (bytes; raw API) | protocol-message bytes | public key A / B | bandwidth (bytes) | long-term sk (API cap) | shared secret |".into());
            out.push("|---|---|---|---|---|---|---|---|".into());
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let passes = r
                    .rec
                    .kex
                    .get("kex_passes")
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| DASH.into());
                let mut msgs: Vec<(u64, u64)> = api
                    .iter()
                    .filter_map(|(k, b)| {
                        let n = k.strip_prefix("msg")?.strip_suffix("_bytes")?;
                        Some((n.parse().ok()?, *b))
                    })
                    .collect();
                msgs.sort();
                let msgs = if msgs.is_empty() {
                    DASH.to_string()
                } else {
                    msgs.iter()
                        .map(|(_, b)| b.to_string())
                        .collect::<Vec<_>>()
                        .join(" / ")
                };
                let bw = v
                    .side
                    .kex_bandwidth
                    .get(&(cand.to_string(), label.to_string()));
                let (proto, pks, total) = match bw {
                    Some(b) => (
                        b.messages.to_string(),
                        format!("{} / {}", b.pk_a, b.pk_b),
                        (b.messages + b.pk_a + b.pk_b).to_string(),
                    ),
                    None => (DASH.into(), DASH.into(), DASH.into()),
                };
                let ss = api.get("ss_actual_bytes").or(api.get("ss_bytes")).copied();
                out.push(format!(
                    "| {} | {passes} | {msgs} | {proto} | {pks} | {total} | {} | {} |",
                    code(label),
                    num(api.get("sk_bytes").copied()),
                    num(ss)
                ));
            }
            out.push(String::new());
        }
        Category::Hash => {}
    }
    out
}

/// `drng 2, pseudoXOF 15, sm3hash 1`: Σ calls per fn ÷ total operations, sorted by name.
pub fn calls_per_operation(p: &ProfileRef) -> String {
    let Some(total) = p.prof.total.as_ref() else {
        return DASH.into();
    };
    if total.operations == 0 {
        return DASH.into();
    }
    let mut per_fn: BTreeMap<&str, u64> = BTreeMap::new();
    for c in &p.prof.calls {
        *per_fn.entry(c.func.as_str()).or_insert(0) += c.calls;
    }
    let items: Vec<String> = per_fn
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(f, n)| format!("{f} {}", fmt_g(*n as f64 / total.operations as f64, 3)))
        .collect();
    if items.is_empty() {
        DASH.into()
    } else {
        items.join(", ")
    }
}

fn symmetric_section(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    me: &Page,
    form: Form,
) -> Vec<String> {
    let mut out = vec!["## Symmetric primitives".to_string(), String::new()];
    let survey = v.side.survey_of(cand);
    let verdict = survey
        .map(|s| s.verdict.as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("not surveyed");
    let mut line = format!(
        "[Survey]({}) verdict: **{verdict}**",
        link(me, &Page::Survey, form)
    );
    if let Some(s) = survey
        && !s.notes.is_empty()
    {
        line.push_str(&format!(" — {}", crate::md::sanitize_fragment(&s.notes)));
    }
    out.push(line);
    out.push(String::new());
    let rows: Vec<ProfileRef> = labels
        .iter()
        .flat_map(|label| v.profiles_of(cand, label))
        .filter(|p| p.usable())
        .collect();
    if rows.is_empty() {
        out.push("No hash profile was recorded for this candidate on this system (profiles are measured on reference builds with link-time wrappers).".into());
        out.push(String::new());
        return out;
    }
    let own = own_primitives(&rows);
    let overhead = rows.iter().any(|p| wrapper_overhead(p).is_some());
    match &own {
        None => out.push("Share of each operation spent in the ICCS placeholder hash functions and in the ICCS DRNG (reference build, measured in the same run with link-time wrappers):".into()),
        Some(fams) => out.push(format!(
            "This candidate does not call the ICCS placeholders. Share of each operation spent in its own symmetric primitives ({}, the scheme's common code) and in its random-byte generator (reference build, measured in the same run with link-time wrappers):",
            fams.iter().map(|f| code(f)).collect::<Vec<_>>().join(", ")
        )),
    }
    out.push(String::new());
    if overhead {
        out.push("Wrapper overhead per wrapped call is shown as ticks added to the operation total (outer) and ticks charged to the wrapped function itself (inner); it is not subtracted from the shares.".into());
        out.push(String::new());
    }
    let (sym_col, drng_col) = match &own {
        None => ("pseudohash/XOF/sm3", "DRNG"),
        Some(_) => ("own SHAKE/SHA-3/SHA-2/AES", "randombytes"),
    };
    let mut header =
        format!("| instance | operation | {sym_col} | {drng_col} | calls per operation |");
    let mut rule = "|---|---|---|---|---|".to_string();
    if overhead {
        header.push_str(" wrapper overhead per call |");
        rule.push_str("---|");
    }
    out.push(header);
    out.push(rule);
    for p in rows {
        let mut row = format!(
            "| {} | {} | {} | {} | {} |",
            code(&p.prof.label),
            p.opkey(),
            pct(Some(p.prof.hash_share_f64())),
            pct(Some(p.prof.share_of("drng"))),
            calls_per_operation(&p)
        );
        if overhead {
            row.push_str(&format!(
                " {} |",
                wrapper_overhead(&p).unwrap_or_else(|| DASH.into())
            ));
        }
        out.push(row);
    }
    out.push(String::new());
    out
}

/// ICCS placeholder functions (`calls[].fn` of ICCS profiles).
const ICCS_FNS: &[&str] = &["pseudohash", "pseudoXOF", "sm3hash"];

/// True for a profile of a non-ICCS (e.g. PQClean `nist`) instance: it called hash functions
/// of its own and none of the ICCS placeholders, so its `hash_share` is not an ICCS share.
pub fn own_primitive_profile(p: &ProfileRef) -> bool {
    own_primitives(std::slice::from_ref(p)).is_some()
}

/// For profiles of non-ICCS (e.g. PQClean `nist`) instances: the sorted hash-function
/// families they called. `None` when any profile called an ICCS placeholder, or when no
/// profile called anything but the DRNG (the ICCS titles apply).
fn own_primitives(rows: &[ProfileRef]) -> Option<Vec<String>> {
    let mut fams: BTreeSet<String> = BTreeSet::new();
    for p in rows {
        for c in &p.prof.calls {
            if ICCS_FNS.contains(&c.func.as_str()) {
                return None;
            }
            if c.func != "drng" {
                fams.insert(c.func.clone());
            }
        }
    }
    if fams.is_empty() {
        None
    } else {
        Some(fams.into_iter().collect())
    }
}

/// `outer 31, inner 12 ticks` from the profile's `pqperf.wrapper_overhead`, when recorded.
fn wrapper_overhead(p: &ProfileRef) -> Option<String> {
    let w = p.prof.extra.get("pqperf")?.get("wrapper_overhead")?;
    let outer = w
        .get("outer_ticks_per_call")
        .and_then(serde_json::Value::as_f64);
    let inner = w
        .get("inner_ticks_per_call")
        .and_then(serde_json::Value::as_f64);
    match (outer, inner) {
        (None, None) => None,
        (o, i) => {
            let f = |x: Option<f64>| x.map(|x| fmt_g(x, 3)).unwrap_or_else(|| DASH.into());
            Some(format!("outer {}, inner {} ticks", f(o), f(i)))
        }
    }
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
