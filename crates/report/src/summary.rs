//! The system summary page (`performance/summary_<sys>.md`, site `performance/<sys>/index.md`),
//! method.md §13.4 and site-pages.md.

use crate::common::{clock_text, code};
use crate::links::{HARNESS_URL, PageRef, SITE_PDF_COMMIT, link};
use crate::page::{Cell, Evidence, Page, Table};
use crate::view::{RecordRef, SystemView};
use crate::{Form, ReportError};
use pqperf_model::fmt::{DASH, fmt_cycles, fmt_f, fmt_time, pct, ratio};
use pqperf_model::order::{Category, natural_cmp};
use pqperf_model::vocab::Operation;

/// True when a profile of the label is of a non-ICCS instance (its own SHAKE/SHA-2/AES).
fn own_primitive_label(v: &SystemView, cand: &str, label: &str) -> bool {
    v.profiles_of(cand, label)
        .iter()
        .any(|p| p.usable() && crate::view::own_primitive_profile(p))
}

/// `cell(rec)` of method.md §13.1: `–`, `failed`, cycles or time, plus ` (n=…)`.
pub fn cell(r: Option<RecordRef>) -> String {
    let Some(r) = r else {
        return DASH.into();
    };
    if !r.complete() {
        return "failed".into();
    }
    let mut s = value(r);
    if let Some(n) = short_count(r) {
        s.push_str(&format!(" (n={n})"));
    }
    s
}

fn value(r: RecordRef) -> String {
    match r.rec.mean_cycles {
        Some(c) => fmt_cycles(Some(c)),
        None => fmt_time(r.rec.mean_seconds),
    }
}

fn short_count(r: RecordRef) -> Option<u64> {
    let n = r
        .rec
        .measurements
        .unwrap_or_else(|| r.rec.trials.iter().map(|t| t.measurements).sum());
    (n < 100).then_some(n)
}

/// Public-key cell: value with the symmetric share and the short count in one parenthesis.
fn pk_cell(r: Option<RecordRef>, share: Option<&str>) -> String {
    let Some(r) = r else {
        return DASH.into();
    };
    if !r.complete() {
        return "failed".into();
    }
    let mut inner = Vec::new();
    if let Some(s) = share {
        inner.push(s.to_string());
    }
    if let Some(n) = short_count(r) {
        inner.push(format!("n={n}"));
    }
    if inner.is_empty() {
        value(r)
    } else {
        format!("{} ({})", value(r), inner.join(", "))
    }
}

/// ICCS baseline records (candidate `iccs`).
fn baseline<'a>(v: &SystemView<'a>) -> Vec<RecordRef<'a>> {
    v.records
        .iter()
        .filter(|r| r.rec.candidate == "iccs")
        .copied()
        .collect()
}

/// Median per-call cost (in core cycles) of `pseudoXOF` calls with 256 input bits and
/// `w` output bits over all profiles (the fallback baseline of method.md §11.1).
fn profile_baseline(v: &SystemView, w: u64) -> Option<f64> {
    // Records in core cycles: convert profile ticks at the core clock; records in ticks of a
    // tick counter (pqperf on a host without cycle counter): convert to that counter's rate.
    let core_hz = match crate::counter::tick_counter(v) {
        Some(t) => t.hz,
        None => v.env().f64("cpufreq_max_khz").map(|k| k * 1000.0),
    };
    let mut obs = Vec::new();
    for p in &v.profiles {
        let tick_hz = p.prof.meta.f64("tick_hz");
        let factor = match (core_hz, tick_hz) {
            (Some(c), Some(t)) if t > 0.0 => c / t,
            _ => 1.0,
        };
        for c in &p.prof.calls {
            if c.func == "pseudoXOF" && c.in_bits == 256 && c.out_bits == w && c.calls > 0 {
                obs.push(c.ticks as f64 / c.calls as f64 * factor);
            }
        }
    }
    pqperf_model::pynum::median(&obs)
}

fn hash_cell(v: &SystemView, r: Option<RecordRef>, len: u64, base: &[RecordRef]) -> String {
    let mut s = cell(r);
    let Some(r) = r else {
        return s;
    };
    if !r.complete() {
        return s;
    }
    let w = r.rec.sizes.get("digest_bytes").copied().unwrap_or(0) * 8;
    let reference = if !base.is_empty() {
        let label = format!("pseudoXOF-{w}");
        base.iter()
            .find(|b| b.rec.label == label && b.complete() && b.rec.input_bytes == len)
            .and_then(|b| b.rec.mean_cycles)
    } else if len == 32 {
        profile_baseline(v, w)
    } else {
        return s;
    };
    match (r.rec.mean_cycles, reference) {
        (Some(c), Some(b)) if b > 0.0 => s.push_str(&format!(" ({})", ratio(c / b))),
        _ => s.push_str(" (ratio –)"),
    }
    s
}

/// Survey verdict of a candidate.
fn verdict<'a>(v: &'a SystemView, cand: &str) -> Option<&'a str> {
    v.side.survey_of(cand).map(|s| s.verdict.as_str())
}

/// Notes column (`compact_notes`).
fn notes(v: &SystemView, cand: &str, label: &str) -> String {
    let mut items: Vec<String> = Vec::new();
    match verdict(v, cand) {
        Some("bypass") => {
            items.push("own symmetric primitives; placeholder share unavailable".into())
        }
        Some("mixed") => items.push("mixed own/ICCS primitives".into()),
        Some("instance-dependent") => items.push("hash backend varies by instance".into()),
        _ => {}
    }
    if let Some(k) = v.kat_status(cand, label)
        && !k.is_empty()
        && k != "PASS"
    {
        items.push("KAT/output caveat; see candidate page".into());
    }
    if own_primitive_label(v, cand, label) {
        items.push("no ICCS placeholders; own SHAKE/SHA-2/AES share on candidate page".into());
    }
    for n in &v.side.summary_notes {
        if n.id == cand && n.label.is_match(label) {
            items.push(crate::md::sanitize_fragment(&n.note));
        }
    }
    let mut seen = Vec::new();
    for i in items {
        if !seen.contains(&i) {
            seen.push(i);
        }
    }
    if seen.is_empty() {
        DASH.into()
    } else {
        seen.join("; ")
    }
}

/// Reference labels of a candidate in natural order (the rows the summary can show).
fn reference_labels(v: &SystemView, cand: &str) -> Vec<String> {
    v.labels(cand)
        .into_iter()
        .filter(|l| v.variant(cand, l).as_deref() == Some("reference"))
        .collect()
}

/// Shares of a label's summary operations that have a profile.
fn shares(v: &SystemView, cand: &str, label: &str, cat: Category) -> Vec<f64> {
    cat.ops()
        .iter()
        .filter_map(|op| v.hash_share(cand, label, op))
        .collect()
}

fn size_cells(v: &SystemView, cand: &str, label: &str, cat: Category) -> Vec<Cell> {
    let ext = v
        .side
        .external_sizes
        .get(&(cand.to_string(), label.to_string()));
    let sized = v
        .records_of(cand, label)
        .into_iter()
        .find(|r| !r.rec.sizes.is_empty());
    let api = sized.map(|r| r.rec.sizes.clone()).unwrap_or_default();
    let api_ev = sized.map(|r| r.evidence(&v.id));
    let catalog = Some(Evidence::Side("external_sizes.csv".into()));
    let num = |x: Option<u64>| x.map(|b| b.to_string()).unwrap_or_else(|| DASH.into());
    // A size from the catalog links to it; one from the API to the record that carries it.
    let sized_cell = |curated: Option<u64>, key: &str, prefix: &str| match curated {
        Some(b) => Cell::value(format!("{prefix}{b}"), catalog.clone()),
        None => {
            let b = api.get(key).copied();
            Cell::value(format!("{prefix}{}", num(b)), b.and(api_ev.clone()))
        }
    };
    match cat {
        Category::Sign => {
            let approx = if ext.map(|e| e.basis.as_str()) == Some("nominal-variable") {
                "≈"
            } else {
                ""
            };
            vec![
                sized_cell(ext.and_then(|e| e.public_key_bytes), "pk_bytes", ""),
                sized_cell(
                    ext.and_then(|e| e.signature_bytes),
                    "signature_bytes",
                    approx,
                ),
            ]
        }
        Category::Kem => vec![
            sized_cell(ext.and_then(|e| e.public_key_bytes), "pk_bytes", ""),
            sized_cell(ext.and_then(|e| e.ciphertext_bytes), "ct_bytes", ""),
        ],
        Category::Kex => {
            let bw = v
                .side
                .kex_bandwidth
                .get(&(cand.to_string(), label.to_string()))
                .map(|b| b.bandwidth());
            vec![Cell::value(
                num(bw),
                bw.map(|_| Evidence::Side("kex_bandwidth.csv".into())),
            )]
        }
        Category::Hash => vec![],
    }
}

fn size_headers(cat: Category) -> &'static [&'static str] {
    match cat {
        Category::Sign => &["public key (B)", "signature (B)"],
        Category::Kem => &["public key (B)", "ciphertext (B)"],
        Category::Kex => &["bandwidth (bytes)"],
        Category::Hash => &[],
    }
}

/// True when the summary shows a robust-estimate column beside each operation of `cat`:
/// pqperf datasets whose records of that category carry the estimate (`pqperf.robust`).
fn robust_columns(v: &SystemView, cat: Category) -> bool {
    crate::common::by_pqperf(v)
        && v.records.iter().any(|r| {
            r.rec.candidate != "iccs"
                && v.category(&r.rec.candidate) == cat
                && crate::candidate::perf::robust(r).is_some()
        })
}

/// True when the dataset holds instruction counts of some candidate of `cat`: the
/// `<op> instructions/call` columns are shown beside the timings (datasets without counts,
/// the reference's among them, keep their tables).
fn count_columns(v: &SystemView, cat: Category) -> bool {
    v.count
        .iter()
        .any(|c| c.value.candidate != "iccs" && v.category(&c.value.candidate) == cat)
}

/// The note on the `instructions/call` columns: what a count is and what it compares.
fn count_sentence(v: &SystemView) -> String {
    let emulated = v.count.iter().find_map(|c| {
        let m = c.value.method.as_deref()?;
        Some((
            c.value.architecture.clone().unwrap_or_default(),
            m.to_string(),
        ))
    });
    let how = match &emulated {
        Some((arch, m)) => format!(
            "{arch} instructions one call executes under emulation, counted by pqperf's TCG plugin ({m})"
        ),
        None => "instructions one call executes under valgrind's callgrind".into(),
    };
    let across = if emulated.is_some() {
        format!(" {}", pqperf_model::count::ACROSS_ARCHITECTURES)
    } else {
        String::new()
    };
    format!(
        "- **Instructions/call** is the median number of {how}, with the driver's seeded inputs and only the operation's API functions counted (a key exchange: every step's). It is deterministic, the same on any host under any load, and it is work done, not time: between two builds of the same code a changed count is a changed amount of work, but across implementations it does not rank speed (an AVX2 instruction does more than a scalar one).{across} `–` means not counted."
    )
}

/// True when some summary row of `cat` has a symmetric share to show.
fn any_share(v: &SystemView, cat: Category) -> bool {
    v.candidates()
        .iter()
        .filter(|c| v.category(c) == cat)
        .any(|c| {
            reference_labels(v, c)
                .iter()
                .any(|l| !shares(v, c, l, cat).is_empty())
        })
}

/// How the summary and the rankings show an instance's ICCS share (method.md §13.4 item 6,
/// the non-ICCS row rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareRule {
    /// Show the measured shares.
    Show,
    /// A zero-placeholder instance of a candidate without an ICCS backend: `??%`.
    Unknown,
    /// Left out of the summary and the rankings (its non-ICCS backend stays on the
    /// candidate page).
    Omit,
}

/// The [`ShareRule`] of one reference instance: when its profiled shares of `cat`'s operations
/// are all zero (a placeholder build) and the candidate has a reference instance with an ICCS
/// share, it is left out unless the survey says `ICCS-only`; with no such instance its share is
/// unknown. (The summary shows every hash function's row whatever this says; the rankings
/// apply it to hash functions too.)
pub fn share_rule(v: &SystemView, cand: &str, label: &str, cat: Category) -> ShareRule {
    let sh = shares(v, cand, label, cat);
    let zero = !sh.is_empty() && sh.iter().all(|s| *s == 0.0);
    if !zero {
        return ShareRule::Show;
    }
    let has_iccs = reference_labels(v, cand)
        .iter()
        .any(|l| shares(v, cand, l, cat).iter().any(|s| *s > 0.0));
    match (has_iccs, verdict(v, cand) == Some("ICCS-only")) {
        (false, _) => ShareRule::Unknown,
        (true, true) => ShareRule::Show,
        (true, false) => ShareRule::Omit,
    }
}

/// The table rows of one category (empty when nothing is shown).
fn category_rows(v: &SystemView, cat: Category, form: Form, me: &PageRef) -> Vec<Vec<Cell>> {
    let robust_cols = robust_columns(v, cat);
    let count_cols = count_columns(v, cat);
    let base = baseline(v);
    let mut rows = Vec::new();
    let cands: Vec<String> = v
        .candidates()
        .into_iter()
        .filter(|c| v.category(c) == cat)
        .collect();
    for cand in cands {
        let labels = reference_labels(v, &cand);
        let algorithm = v.side.algorithm(&cand).unwrap_or(&cand).to_string();
        for label in labels {
            let rule = match cat {
                Category::Hash => ShareRule::Show,
                _ => share_rule(v, &cand, &label, cat),
            };
            if rule == ShareRule::Omit {
                continue;
            }
            let unknown_share = rule == ShareRule::Unknown;
            let mut cells = Vec::new();
            for op in cat.ops() {
                let r = v.record_any_spelling(&cand, &label, op);
                let ev = r.map(|r| r.evidence(&v.id));
                // pqperf datasets: the robust estimate with its interval is the headline,
                // the reference mean beside it.
                if robust_cols {
                    let text = r
                        .filter(|r| r.complete())
                        .map(|r| crate::candidate::perf::robust_cell(&r))
                        .unwrap_or_else(|| DASH.into());
                    let mut c = Cell::value(text, ev.clone());
                    if r.is_some_and(|r| r.rec.pqperf.as_ref().is_some_and(|p| p.robust.is_some()))
                    {
                        c = c.at("/pqperf/robust");
                    }
                    cells.push(c);
                }
                // The site opens a value's link at the field that holds it.
                let mean_at = |c: Cell| {
                    if r.is_some_and(|r| r.rec.mean_cycles.is_some()) {
                        c.at("/mean_cycles")
                    } else {
                        c
                    }
                };
                if cat == Category::Hash {
                    let len = Operation::parse(op).map_or(0, Operation::bytes);
                    cells.push(mean_at(Cell::value(
                        hash_cell(v, r, len, &base),
                        ev.clone(),
                    )));
                } else {
                    let share = if unknown_share {
                        v.hash_share(&cand, &label, op).map(|_| "??%".to_string())
                    } else {
                        v.hash_share(&cand, &label, op).map(|s| pct(Some(s)))
                    };
                    cells.push(mean_at(Cell::value(
                        pk_cell(r, share.as_deref()),
                        ev.clone(),
                    )));
                }
                if count_cols {
                    cells.push(crate::candidate::perf::count_cell(v, &cand, &label, op));
                }
            }
            cells.extend(size_cells(v, &cand, &label, cat));
            cells.push(Cell::text(notes(v, &cand, &label)));
            let mut marks = String::new();
            if label.ends_with("-avx2") {
                marks.push_str(" (AVX2)");
            }
            if let Some(k) = v.entry(&cand, &label).map(|e| e.kat.as_str())
                && !k.is_empty()
                && k != "PASS"
            {
                marks.push_str(&format!(" ⚠ KAT {k}"));
            }
            let cand_page = PageRef::Candidate {
                sys: v.id.clone(),
                id: cand.clone(),
            };
            let pdf = format!("{HARNESS_URL}/blob/main/{cand}/{cand}-spec.pdf");
            let head: [String; 3] = match form {
                // pqperf datasets: no reference-harness PDF or security report to link to.
                Form::Harness | Form::Site if crate::common::by_pqperf(v) => [
                    format!("[{cand}]({})", link(me, &cand_page, form)),
                    algorithm.clone(),
                    format!("{}{marks}", code(&label)),
                ],
                Form::Harness => [
                    format!("[{cand}]({})", link(me, &cand_page, form)),
                    format!("{algorithm} [PDF]({pdf})"),
                    format!("{}{marks}", code(&label)),
                ],
                Form::Site => {
                    let report = link(me, &PageRef::SecurityReport(cand.clone()), form);
                    [
                        format!("[`{cand}`]({report})"),
                        format!(
                            "[{algorithm}]({report}) <a class=\"pdf-link\" href=\"https://cdn.jsdelivr.net/gh/ngcc-dev/ngcc-harness@{SITE_PDF_COMMIT}/{cand}/{cand}-spec.pdf\" title=\"Open the {cand} specification PDF\">PDF</a>"
                        ),
                        format!("[{}]({}){marks}", code(&label), link(me, &cand_page, form)),
                    ]
                }
            };
            let mut row: Vec<Cell> = head.into_iter().map(Cell::text).collect();
            row.extend(cells);
            rows.push(row);
        }
    }
    rows
}

/// ICCS helper table rows (method.md §13.4 item 7).
fn helper_rows(v: &SystemView) -> Vec<Vec<Cell>> {
    let base = baseline(v);
    let mut labels: Vec<(usize, u64, String)> = Vec::new();
    for r in &base {
        let (helper, bits) = match r.rec.label.rsplit_once('-') {
            Some((h, b)) => (h.to_string(), b.parse::<u64>().unwrap_or(0)),
            None => (r.rec.label.clone(), 0),
        };
        let rank = ["sm3hash", "pseudohash", "pseudoXOF"]
            .iter()
            .position(|h| *h == helper)
            .unwrap_or(3);
        if !labels.iter().any(|(_, _, l)| *l == r.rec.label) {
            labels.push((rank, bits, r.rec.label.clone()));
        }
    }
    labels.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(natural_cmp(&a.2, &b.2)));
    let mut rows = Vec::new();
    for (_, bits, label) in labels {
        let helper = label.rsplit_once('-').map(|(h, _)| h).unwrap_or(&label);
        let mut first = code(helper);
        if let Some(k) = v.kat_status("iccs", &label)
            && k != "PASS"
        {
            first.push_str(&format!(" ⚠ self-test {k}"));
        }
        let mut cells = vec![Cell::text(first), Cell::text(bits.to_string())];
        for len in [32u64, 128, 512, 1024, 4096, 8192, 16384, 65536] {
            let r = v.record("iccs", &label, &format!("hash_{len}"));
            cells.push(Cell::value(cell(r), r.map(|r| r.evidence(&v.id))));
        }
        let big = v
            .record("iccs", &label, "hash_65536")
            .filter(|r| r.complete());
        let cpb = big
            .and_then(|r| r.rec.mean_cycles)
            .map(|c| fmt_f(c / 65536.0, 1));
        cells.push(Cell::value(
            cpb.clone().unwrap_or_else(|| DASH.into()),
            cpb.and(big.map(|r| r.evidence(&v.id))),
        ));
        rows.push(cells);
    }
    rows
}

/// What the summary measures, in words: the NGCC Round 1 implementations (the reference
/// harness's datasets), or for a pqperf dataset what its candidates are: NGCC submissions
/// (ids `sign-NN`, `kem-NN`, …) and/or PQClean baselines.
fn implementations_word(v: &SystemView) -> &'static str {
    if !crate::common::by_pqperf(v) {
        return "NGCC Round 1 implementations";
    }
    let cands = v.candidates();
    let ngcc = cands
        .iter()
        .filter(|c| Category::from_id(c).is_some())
        .count();
    match (ngcc, cands.len() - ngcc) {
        (_, 0) => "NGCC Round 1 implementations",
        (0, _) => "PQClean baseline implementations",
        _ => "NGCC Round 1 implementations and PQClean baselines",
    }
}

/// Render the summary page as Markdown.
pub fn render(v: &SystemView, form: Form) -> Result<String, ReportError> {
    Ok(page(v, form)?.to_markdown())
}

/// The summary page as blocks.
pub fn page(v: &SystemView, form: Form) -> Result<Page, ReportError> {
    let sys = v.id.as_str();
    let me = PageRef::Summary(sys.into());
    let env = v.env();
    let has_baseline = !baseline(v).is_empty();
    let mut out = Page::new();
    if form == Form::Site {
        out.line(format!(
            "<!-- synchronized from harness: {} -->",
            me.harness_path()
        ));
        let mut systems: Vec<&str> = v.side.systems.iter().map(|s| s.id.as_str()).collect();
        if !systems.contains(&sys) {
            systems.push(sys);
        }
        let parts: Vec<String> = systems
            .iter()
            .map(|s| {
                if *s == sys {
                    format!("<strong>{s}</strong>")
                } else if !v.side.has_system(s) {
                    s.to_string()
                } else {
                    format!(
                        "<a href=\"{}\">{s}</a>",
                        link(&me, &PageRef::Summary((*s).into()), form)
                    )
                }
            })
            .collect();
        out.line(format!(
            "<p class=\"crumb\"><a href=\"{}\">Performance measurements</a> › system: {}</p>",
            link(&me, &PageRef::Root, form),
            parts.join(" · ")
        ));
        out.blank();
    }
    out.line(format!("# Performance — {}, system {sys}", v.arch_label()));
    out.blank();
    out.line(format!(
        "Independent measurements of the {} on one {} core ({}).",
        implementations_word(v),
        env.str("cpu_model").unwrap_or(DASH),
        clock_text(env)
    ));
    out.blank();
    if let Some(n) = crate::common::host_notice(v) {
        out.blocks.push(crate::page::Block::Notice(n));
        out.blank();
    }
    let pqperf = crate::common::by_pqperf(v);
    let (_, min_calls) = crate::common::trials_and_min_calls(v);
    let trials = crate::common::trials_text(v);
    let ticks = crate::counter::tick_counter(v);
    let unit = if ticks.is_some() { "ticks" } else { "cycles" };
    // The notes on the figures. Reference pages keep them above the tables as published;
    // pqperf pages put the numbers first and the notes that apply to this dataset after the
    // tables (folded on the site).
    let rows_of: Vec<(Category, Vec<Vec<Cell>>)> =
        [Category::Sign, Category::Kem, Category::Kex, Category::Hash]
            .into_iter()
            .map(|cat| (cat, category_rows(v, cat, form, &me)))
            .collect();
    let has = |c: Category| rows_of.iter().any(|(cat, r)| *cat == c && !r.is_empty());
    let ngcc = has_baseline
        || crate::provider::sentence(v, None).is_some()
        || v.candidates().iter().any(|c| Category::parse(c).is_some());
    let mut notes: Vec<String> = Vec::new();
    match &ticks {
        None => notes.push(format!("- **Cycles** are the mean of all timed calls in {trials} trials, normally with each trial in a fresh process.")),
        Some(t) => notes.push(format!(
            "- **Ticks** are the mean of all timed calls in {trials} trials, normally with each trial in a fresh process. {}",
            t.sentence()
        )),
    }
    let provenance = if pqperf {
        crate::common::pqperf_provenance_short(v)
    } else {
        crate::common::pqperf_provenance(v)
    };
    if let Some(p) = provenance {
        notes.push(format!("- {p}"));
    }
    if let Some(s) = crate::provider::sentence(v, None) {
        notes.push(format!("- {s}"));
    }
    let any_sym = [Category::Sign, Category::Kem, Category::Kex]
        .into_iter()
        .any(|c| has(c) && any_share(v, c));
    if pqperf && any_sym && !ngcc {
        notes.push(format!("- **Symmetric %** is the cycle share in the scheme's own hash/XOF primitives, measured by relinking the library with counting wrappers. See the [symmetric survey]({}).", link(&me, &PageRef::Survey, form)));
    } else if !pqperf || any_sym {
        notes.push(format!("- **Symmetric %** is the cycle share in ICCS placeholder hashes, excluding the DRNG and candidates' own hashes. `(??%)` means no ICCS-facing backend was measured. See the [symmetric survey]({}).", link(&me, &PageRef::Survey, form)));
    }
    notes.push("- Each instance links to its **performance report** with KAT status, all measured implementations, sizes, memory proxies, primitive profiles, and raw-evidence references.".into());
    notes.push(format!("- See [method and limitations]({}). These are independent measurements, not submitter self-assessments or NICCS results.", link(&me, &PageRef::Method(sys.into()), form)));
    notes.push(format!("- **Notation:** `–` means not measured, `n=` marks fewer than {min_calls} timed calls, and ⚠ marks an instance whose submitted KAT vectors are not reproduced by the submitted code{}.",
        if pqperf && rows_of.iter().any(|(c, r)| !r.is_empty() && robust_columns(v, *c)) {
            "; after a robust estimate, ⚠ marks an interval wider than ±2 % (not settled)"
        } else {
            ""
        }));
    if !pqperf || has(Category::Sign) || has(Category::Kem) || has(Category::Kex) {
        notes.push("- **Sizes** use a separate catalog, not timing-record buffer sizes. `≈` marks a nominal variable-length signature; other variable signatures use their maximum.".into());
    }
    if pqperf {
        // pqperf publishes no size audit: nothing to link to; only the kinds present.
        let mut b = Vec::new();
        if has(Category::Kex) {
            b.push("**KEX bandwidth** counts protocol messages plus required public keys once; certificates and transport framing are excluded.");
        }
        if has(Category::Kem) {
            b.push("KEM public-key size is listed separately from ciphertext size.");
        }
        if !b.is_empty() {
            notes.push(format!("- {}", b.join(" ")));
        }
    } else {
        notes.push(format!("- **KEX bandwidth** counts protocol messages plus required public keys once. KEM public-key size is listed separately from ciphertext size. Certificates and transport framing are excluded; see the [size audit]({}) for discrepancies and AFS-KEX's API mapping.", link(&me, &PageRef::SizeAudit, form)));
    }
    if !pqperf || has(Category::Hash) {
        if has_baseline {
            notes.push("- **Hash rows** show three message sizes. Parentheses give cycles relative to the same-width, same-length ICCS `pseudoXOF` ([helper timings](#iccs-hash-helpers)), not a production replacement estimate.".into());
        } else {
            notes.push("- **Hash rows** show three message sizes. The 32 B column compares with the median per-call cost of same-width ICCS `pseudoXOF` calls seen in the hash profiles (no direct helper timings in this dataset), not a production replacement estimate.".into());
        }
    }
    if rows_of
        .iter()
        .any(|(c, r)| !r.is_empty() && count_columns(v, *c))
    {
        notes.push(count_sentence(v));
    }
    if !pqperf || ngcc {
        notes.push("- **Scope:** reference sets are shown. When both ICCS and non-ICCS backends were measured, the non-ICCS one stays on the candidate report; notes flag caveats.".into());
    } else {
        notes.push("- **Scope:** reference sets are shown; the other implementations are on the candidate reports.".into());
    }
    if !pqperf {
        for n in &notes {
            out.line(n.clone());
        }
        out.blank();
    }

    let mut ordered_inserted = form == Form::Harness;
    for cat in [Category::Sign, Category::Kem, Category::Kex, Category::Hash] {
        if cat == Category::Hash && has_baseline {
            ordered_block(&mut out, &mut ordered_inserted, pqperf);
            out.heading(2, "ICCS hash helpers");
            out.blank();
            match crate::provider::baseline_provider(v) {
                Some(prov) => out.line(format!("The ICCS placeholder functions of {prov}, timed as hash instances (one `CryptHash` entry point per helper and width, built with the reference flags) at the guide's S1–S8 message lengths (mean {unit} per call). `pseudohash` exists only with 512-, 768- and 1024-bit output; `pseudoXOF` is given at every digest width of a hash candidate.")),
                None => out.line("The ICCS placeholder functions from `api/auxfunc.c`, built with the reference flags and timed as hash instances at the guide's S1–S8 message lengths (mean cycles per call). `pseudohash` exists only with 512-, 768- and 1024-bit output; `pseudoXOF` is given at every digest width of a hash candidate."),
            }
            out.blank();
            let mut t = Table::new([
                "ICCS helper".to_string(),
                "output bits".into(),
                "32 B".into(),
                "128 B".into(),
                "512 B".into(),
                "1 KiB".into(),
                "4 KiB".into(),
                "8 KiB".into(),
                "16 KiB".into(),
                "64 KiB".into(),
                format!("{unit}/byte (64 KiB)"),
            ]);
            t.rows = helper_rows(v);
            out.table(t);
            out.blank();
        }
        let rows = rows_of
            .iter()
            .find(|(c, _)| *c == cat)
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        if rows.is_empty() {
            continue;
        }
        // pqperf pages: a note shared by rows (or a long one) is a numbered footnote under
        // the table instead of its text in every row.
        let (rows, footnotes) = if pqperf {
            footnote_notes(rows)
        } else {
            (rows, Vec::new())
        };
        ordered_block(&mut out, &mut ordered_inserted, pqperf);
        out.heading(2, cat.summary_title());
        out.blank();
        let mut header = vec!["id", "algorithm", "instance performance report"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        if cat == Category::Hash {
            let times = if has_baseline {
                [
                    format!("32 B {unit} (× pseudoXOF)"),
                    format!("1 KiB {unit} (× pseudoXOF)"),
                    format!("64 KiB {unit} (× pseudoXOF)"),
                ]
            } else {
                [
                    format!("32 B {unit} (vs pseudoXOF)"),
                    format!("1 KiB {unit}"),
                    format!("64 KiB {unit}"),
                ]
            };
            for (t, size) in times.into_iter().zip(["32 B", "1 KiB", "64 KiB"]) {
                header.push(t);
                if count_columns(v, cat) {
                    header.push(format!("{size} instructions/call"));
                }
            }
        } else {
            // pqperf datasets: no "(sym %)" where no row has a share, and the robust
            // estimate with its interval beside each operation when recorded.
            let sym = if pqperf && !any_share(v, cat) {
                ""
            } else {
                " (sym %)"
            };
            let robust = robust_columns(v, cat);
            for op in cat.ops() {
                if robust {
                    header.push(format!("{op} robust ± CI"));
                    header.push(format!("{op} reference mean {unit}{sym}"));
                } else {
                    header.push(format!("{op} {unit}{sym}"));
                }
                if count_columns(v, cat) {
                    header.push(format!("{op} instructions/call"));
                }
            }
            header.extend(size_headers(cat).iter().map(|s| s.to_string()));
        }
        header.push("notes".into());
        let mut t = Table::new(header);
        t.rows = rows;
        out.table(t);
        out.blank();
        for (i, f) in footnotes.iter().enumerate() {
            out.line(format!("- note {}: {f}", i + 1));
        }
        if !footnotes.is_empty() {
            out.blank();
        }
    }
    if pqperf {
        out.heading(2, "Notes");
        out.blank();
        if form == Form::Site {
            out.line(format!(
                "<details class=\"notes\"><summary>{} notes on these figures</summary>",
                notes.len()
            ));
            out.blank();
        }
        for n in notes {
            out.line(n);
        }
        out.blank();
        if form == Form::Site {
            out.line("</details>");
            out.blank();
        }
    }
    Ok(out)
}

/// Notes shared by two or more rows, or longer than 60 characters, become `note N` in the
/// notes column (the last cell) and the texts are returned, numbered in order of first use.
fn footnote_notes(mut rows: Vec<Vec<Cell>>) -> (Vec<Vec<Cell>>, Vec<String>) {
    let items = |c: &Cell| -> Vec<String> {
        if c.text == DASH {
            Vec::new()
        } else {
            c.text.split("; ").map(str::to_string).collect()
        }
    };
    let mut uses: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for r in &rows {
        if let Some(c) = r.last() {
            for i in items(c) {
                *uses.entry(i).or_default() += 1;
            }
        }
    }
    let mut notes: Vec<String> = Vec::new();
    for r in &mut rows {
        let Some(c) = r.last_mut() else { continue };
        let parts: Vec<String> = items(c)
            .into_iter()
            .map(|i| {
                if uses[&i] >= 2 || i.chars().count() > 60 {
                    let n = match notes.iter().position(|x| *x == i) {
                        Some(p) => p + 1,
                        None => {
                            notes.push(i);
                            notes.len()
                        }
                    };
                    format!("note {n}")
                } else {
                    i
                }
            })
            .collect();
        if !parts.is_empty() {
            c.text = parts.join("; ");
        }
    }
    (rows, notes)
}

/// The site's `## Ordered measurements` block, inserted once before the first section.
fn ordered_block(out: &mut Page, inserted: &mut bool, pqperf: bool) {
    if *inserted {
        return;
    }
    *inserted = true;
    out.blank();
    out.heading(2, "Ordered measurements");
    out.blank();
    if pqperf {
        // pqperf datasets rank NIST level 3 (192-bit) instances too.
        out.line("[128-bit](ranking-128.md) · [192-bit](ranking-192.md) · [256-bit](ranking-256.md) · [512-bit](ranking-512.md)");
    } else {
        out.line(
            "[128-bit](ranking-128.md) · [256-bit](ranking-256.md) · [512-bit](ranking-512.md)",
        );
    }
    out.blank();
    out.line("Compare candidates at a common claimed security target. Each table orders the measured metrics and summarizes their mean ordinal position; see the individual performance reports for measurement details and caveats.");
    out.blank();
}
