//! Ordered measurements per claimed security target (`method.md` §14, the site's
//! `ranking-<t>.md` pages): eligible reference instances at the target, one per candidate
//! (the recommended set, otherwise the one with the lowest mean cycle rank), each metric ranked
//! on its own (ties share the average rank; pqperf's robust figures tie when their intervals
//! overlap), overall = mean rank, lower is better; one row per candidate. [`rank_instructions`]
//! ranks the same instances by their instruction counts, a separate ranking.

use std::collections::{BTreeMap, HashMap};

use crate::data::{Category, SiteData, SystemFacts};
use pqperf_model::fmt;
use pqperf_model::order::natural_cmp;
use pqperf_report::page::Evidence;
use pqperf_report::summary::{ShareRule, share_rule};
use pqperf_report::view::RecordRef;

/// The claimed security targets with a ranking page each.
pub const TARGETS: [u32; 4] = [128, 192, 256, 512];

/// What a metric measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Mean cycles of this opkey.
    Cycles(&'static str),
    /// Public-key size in bytes.
    PublicKey,
    /// Signature size in bytes.
    Signature,
    /// Ciphertext size in bytes.
    Ciphertext,
    /// Bytes exchanged by a key exchange.
    Bandwidth,
}

/// A ranked column.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Column title (`sign cycles`, `public key`).
    pub name: &'static str,
    /// What the column measures.
    pub kind: MetricKind,
}

/// Metrics of a category (key generation and secret-key size deliberately excluded).
pub fn metrics(cat: Category) -> Vec<Metric> {
    use MetricKind::*;
    let m = |name, kind| Metric { name, kind };
    match cat {
        Category::Sign => vec![
            m("sign cycles", Cycles("sign")),
            m("verify cycles", Cycles("verify")),
            m("public key", PublicKey),
            m("signature", Signature),
        ],
        Category::Kem => vec![
            m("encapsulate cycles", Cycles("enc")),
            m("decapsulate cycles", Cycles("dec")),
            m("public key", PublicKey),
            m("ciphertext", Ciphertext),
        ],
        Category::Kex => vec![
            m("exchange cycles", Cycles("exchange")),
            m("bandwidth", Bandwidth),
        ],
        Category::Hash => vec![
            m("32 B cycles", Cycles("hash_32")),
            m("1 KiB cycles", Cycles("hash_1024")),
            m("64 KiB cycles", Cycles("hash_65536")),
        ],
    }
}

/// One metric value of one instance, with its display text and evidence file.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The value ranked (cycles or bytes).
    pub value: f64,
    /// The value as shown.
    pub text: String,
    /// The evidence file the value came from (`None`: a side table the site does not hold).
    pub evidence: Option<Evidence>,
    /// A second figure shown under the value: for pqperf records whose value is the robust
    /// estimate, the reference mean.
    pub robust: Option<String>,
    /// The value's 95 % interval (same unit), when the value is pqperf's robust estimate:
    /// values whose intervals overlap rank as ties.
    pub interval: Option<(f64, f64)>,
}

/// One ranked instance.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Candidate id.
    pub candidate: String,
    /// The instance label ranked for the candidate.
    pub label: String,
    /// One cell per metric, in metric order.
    pub cells: Vec<Cell>,
    /// Its rank per metric (ties share the average rank).
    pub ranks: Vec<f64>,
    /// Mean of `ranks` (the overall order; lower is better).
    pub mean_rank: f64,
}

/// The ranking of one category at one target on one system.
#[derive(Clone, Debug)]
pub struct CategoryRanking {
    /// The category ranked.
    pub category: Category,
    /// Its metrics (columns).
    pub metrics: Vec<Metric>,
    /// Sorted by (mean rank, candidate id): one row per candidate, each metric's value and
    /// rank in that row.
    pub entries: Vec<Entry>,
}

/// Average ranks (1-based; ties share the mean of their positions) of `values`.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for k in &idx[i..=j] {
            ranks[*k] = avg;
        }
        i = j + 1;
    }
    ranks
}

/// Average ranks like [`average_ranks`], where values with intervals also tie when their
/// intervals overlap: in value order, each value joins the tie group of the first value of
/// the group while its interval overlaps that one's (both must have one), so a group never
/// spans two values whose intervals are apart.
pub fn interval_ranks(values: &[f64], intervals: &[Option<(f64, f64)>]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let overlap = |a: usize, b: usize| match (intervals.get(a), intervals.get(b)) {
        (Some(Some((alo, ahi))), Some(Some((blo, bhi)))) => alo <= bhi && blo <= ahi,
        _ => false,
    };
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len()
            && (values[idx[j + 1]] == values[idx[i]] || overlap(idx[i], idx[j + 1]))
        {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for k in &idx[i..=j] {
            ranks[*k] = avg;
        }
        i = j + 1;
    }
    ranks
}

fn cycles_cell(sys: &SystemFacts, rule: ShareRule, rec: RecordRef) -> Option<Cell> {
    if !rec.complete() {
        return None;
    }
    let mean = rec.rec.mean_cycles?;
    // pqperf records with a robust estimate: the estimate is the value (in cycles at the
    // record's own cycles per second, so the column's unit stays), its interval decides ties,
    // and the reference mean is shown under it.
    let robust = rec
        .robust()
        .zip(rec.rec.mean_seconds)
        .filter(|(rb, s)| rb.estimate_seconds > 0.0 && *s > 0.0);
    let (value, interval, beside) = match robust {
        Some((rb, s)) => {
            let k = mean / s;
            (
                rb.estimate_seconds * k,
                Some((rb.ci_low_seconds * k, rb.ci_high_seconds * k)),
                Some(format!("reference mean {}", fmt::fmt_cycles(Some(mean)))),
            )
        }
        None => (mean, None, rec.robust_text().map(|t| format!("robust {t}"))),
    };
    let mut text = fmt::fmt_cycles(Some(value));
    if let Some((lo, hi)) = interval {
        text.push_str(&format!(
            " [{}–{}]",
            fmt::fmt_cycles(Some(lo)),
            fmt::fmt_cycles(Some(hi))
        ));
    }
    let opkey = rec.opkey();
    if opkey.starts_with("hash_") {
        let width = rec.rec.sizes.get("digest_bytes").map(|b| b * 8);
        let base = width.and_then(|w| sys.record("iccs", &format!("pseudoXOF-{w}"), &opkey));
        if let Some(b) = base
            .filter(|b| b.complete())
            .and_then(|b| b.rec.mean_cycles)
            && b > 0.0
        {
            text.push_str(&format!(" ({})", fmt::ratio(value / b)));
        }
    } else {
        let prof = sys
            .view
            .hash_share(&rec.rec.candidate, &rec.rec.label, &opkey);
        match (rule, prof) {
            (ShareRule::Unknown, _) => text.push_str(" (??%)"),
            (_, Some(s)) => text.push_str(&format!(" ({})", fmt::pct(Some(s)))),
            _ => {}
        }
    }
    Some(Cell {
        value,
        text,
        evidence: Some(rec.evidence(&sys.id)),
        robust: beside,
        interval,
    })
}

fn bytes_cell(
    site: &SiteData,
    sys: &SystemFacts,
    cand: &str,
    label: &str,
    kind: MetricKind,
) -> Option<Cell> {
    let key = (cand.to_string(), label.to_string());
    let first_sized = || sys.view.sized_record(cand, label);
    let side_file = |name: &str| {
        site.side_files
            .contains_key(name)
            .then(|| Evidence::Side(name.to_string()))
    };
    let (value, approx, evidence) = match kind {
        MetricKind::Bandwidth => {
            if let Some(b) = site.side.kex_bandwidth_bytes(cand, label) {
                (b, false, side_file("kex_bandwidth.csv"))
            } else {
                let r = first_sized()?;
                let b = r
                    .rec
                    .kex
                    .get("kex_total_msg_bytes")
                    .or_else(|| r.rec.sizes.get("total_msg_bytes"))?;
                (*b, false, Some(r.evidence(&sys.id)))
            }
        }
        _ => {
            let ext = site.side.external_sizes.get(&key);
            let from_ext = ext.and_then(|e| match kind {
                MetricKind::PublicKey => e.public_key_bytes,
                MetricKind::Signature => e.signature_bytes,
                MetricKind::Ciphertext => e.ciphertext_bytes,
                _ => None,
            });
            if let Some(v) = from_ext {
                let approx = kind == MetricKind::Signature
                    && ext.is_some_and(|e| e.basis == "nominal-variable");
                (v, approx, side_file("external_sizes.csv"))
            } else {
                let r = first_sized()?;
                let field = match kind {
                    MetricKind::PublicKey => "pk_bytes",
                    MetricKind::Signature => "signature_bytes",
                    MetricKind::Ciphertext => "ct_bytes",
                    _ => return None,
                };
                let v = *r.rec.sizes.get(field).filter(|v| **v > 0)?;
                (v, false, Some(r.evidence(&sys.id)))
            }
        }
    };
    let text = format!(
        "{}{} B",
        if approx { "≈" } else { "" },
        fmt::thousands(value)
    );
    Some(Cell {
        value: value as f64,
        text,
        evidence,
        robust: None,
        interval: None,
    })
}

fn is_recommended(site: &SiteData, cand: &str, label: &str) -> bool {
    site.side.summary_notes.iter().any(|n| {
        n.id == cand && n.note.contains("used in ordered measurements") && n.label.is_match(label)
    })
}

/// Rank one category at one target on one system.
pub fn rank_category(
    site: &SiteData,
    sys: &SystemFacts,
    cat: Category,
    target: u32,
) -> CategoryRanking {
    let ms = metrics(cat);
    // Eligible reference instances at this target with every metric present.
    let mut labels: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (cand, label, variant) in sys.built() {
        if variant == "reference" {
            labels
                .entry(cand.to_string())
                .or_default()
                .push(label.to_string());
        }
    }
    for r in sys.records() {
        if r.rec.variant == "reference" {
            let v = labels.entry(r.rec.candidate.clone()).or_default();
            if !v.contains(&r.rec.label) {
                v.push(r.rec.label.clone());
            }
        }
    }
    let mut pool: Vec<Entry> = Vec::new();
    for (cand, ls) in &mut labels {
        let Some(c) = site.candidate(cand) else {
            continue;
        };
        if c.category != cat {
            continue;
        }
        ls.sort_by(|a, b| natural_cmp(a, b));
        for label in ls.iter() {
            if site.side.security_target(cand, label) != Some(target) {
                continue;
            }
            let rule = share_rule(&sys.view, cand, label, cat);
            if rule == ShareRule::Omit {
                continue;
            }
            let cells: Option<Vec<Cell>> = ms
                .iter()
                .map(|m| match m.kind {
                    MetricKind::Cycles(op) => sys
                        .record(cand, label, op)
                        .and_then(|r| cycles_cell(sys, rule, r)),
                    k => bytes_cell(site, sys, cand, label, k),
                })
                .collect();
            if let Some(cells) = cells {
                pool.push(Entry {
                    candidate: cand.clone(),
                    label: label.clone(),
                    cells,
                    ranks: Vec::new(),
                    mean_rank: 0.0,
                });
            }
        }
    }
    // One instance per candidate.
    let cycle_cols: Vec<usize> = ms
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m.kind, MetricKind::Cycles(_)))
        .map(|(i, _)| i)
        .collect();
    let mut cycle_mean = vec![0.0; pool.len()];
    for &col in &cycle_cols {
        let vals: Vec<f64> = pool.iter().map(|e| e.cells[col].value).collect();
        let ivs: Vec<_> = pool.iter().map(|e| e.cells[col].interval).collect();
        for (i, r) in interval_ranks(&vals, &ivs).into_iter().enumerate() {
            cycle_mean[i] += r / cycle_cols.len() as f64;
        }
    }
    let mut chosen: HashMap<String, usize> = HashMap::new();
    for (i, e) in pool.iter().enumerate() {
        let rec = is_recommended(site, &e.candidate, &e.label);
        match chosen.get(&e.candidate) {
            None => {
                chosen.insert(e.candidate.clone(), i);
            }
            Some(&j) => {
                let rec_j = is_recommended(site, &pool[j].candidate, &pool[j].label);
                let better = if rec != rec_j {
                    rec
                } else {
                    cycle_mean[i] < cycle_mean[j]
                };
                if better {
                    chosen.insert(e.candidate.clone(), i);
                }
            }
        }
    }
    let mut keep: Vec<usize> = chosen.into_values().collect();
    keep.sort();
    let mut entries: Vec<Entry> = keep.into_iter().map(|i| pool[i].clone()).collect();
    let n_metrics = ms.len();
    for e in &mut entries {
        e.ranks = vec![0.0; n_metrics];
    }
    for col in 0..n_metrics {
        let vals: Vec<f64> = entries.iter().map(|e| e.cells[col].value).collect();
        let ivs: Vec<_> = entries.iter().map(|e| e.cells[col].interval).collect();
        for (i, r) in interval_ranks(&vals, &ivs).into_iter().enumerate() {
            entries[i].ranks[col] = r;
        }
    }
    for e in &mut entries {
        e.mean_rank = e.ranks.iter().sum::<f64>() / n_metrics as f64;
    }
    entries.sort_by(|a, b| {
        a.mean_rank
            .total_cmp(&b.mean_rank)
            .then_with(|| a.candidate.cmp(&b.candidate))
    });
    CategoryRanking {
        category: cat,
        metrics: ms,
        entries,
    }
}

/// The position shown for entry `i` of entries sorted by `mean_ranks`: 1 + how many rank
/// strictly better, and whether another entry shares its mean rank (a tie).
pub fn position(mean_ranks: &[f64], i: usize) -> (usize, bool) {
    let m = mean_ranks[i];
    let better = mean_ranks.iter().filter(|x| **x < m).count();
    let tied = mean_ranks
        .iter()
        .enumerate()
        .any(|(j, x)| j != i && *x == m);
    (better + 1, tied)
}

/// One instance ranked by its instructions per call.
#[derive(Clone, Debug)]
pub struct InstructionEntry {
    /// Candidate id.
    pub candidate: String,
    /// Instance label (the one the timing ranking ranks).
    pub label: String,
    /// Per timed metric: median instructions per call and its count file.
    pub cells: Vec<(f64, Evidence)>,
    /// Rank per metric (equal counts share the average rank).
    pub ranks: Vec<f64>,
    /// Mean of `ranks`.
    pub mean_rank: f64,
}

/// The ranking's timed operations ranked by instructions per call instead (exact figures:
/// ties only for equal counts): the instances of `r` counted for every timed operation.
/// Empty when none is.
pub fn rank_instructions(sys: &SystemFacts, r: &CategoryRanking) -> Vec<InstructionEntry> {
    let ops: Vec<&str> = r
        .metrics
        .iter()
        .filter_map(|m| match m.kind {
            MetricKind::Cycles(op) => Some(op),
            _ => None,
        })
        .collect();
    let mut out: Vec<InstructionEntry> = r
        .entries
        .iter()
        .filter_map(|e| {
            let cells: Option<Vec<(f64, Evidence)>> = ops
                .iter()
                .map(|op| {
                    let c = sys.view.counted(&e.candidate, &e.label, op)?;
                    let median = c.value.instructions_per_call.as_ref()?.median;
                    let ev = pqperf_report::view::run_evidence(&sys.id, &c.path);
                    Some((median, ev))
                })
                .collect();
            Some(InstructionEntry {
                candidate: e.candidate.clone(),
                label: e.label.clone(),
                cells: cells?,
                ranks: Vec::new(),
                mean_rank: 0.0,
            })
        })
        .collect();
    if out.is_empty() || ops.is_empty() {
        return Vec::new();
    }
    for e in &mut out {
        e.ranks = vec![0.0; ops.len()];
    }
    for col in 0..ops.len() {
        let vals: Vec<f64> = out.iter().map(|e| e.cells[col].0).collect();
        for (i, rk) in average_ranks(&vals).into_iter().enumerate() {
            out[i].ranks[col] = rk;
        }
    }
    for e in &mut out {
        e.mean_rank = e.ranks.iter().sum::<f64>() / ops.len() as f64;
    }
    out.sort_by(|a, b| {
        a.mean_rank
            .total_cmp(&b.mean_rank)
            .then_with(|| a.candidate.cmp(&b.candidate))
    });
    out
}

/// Instances of `sys` that claim `target` but are in no ranking of it, each with the reason.
pub fn left_out(site: &SiteData, sys: &SystemFacts, target: u32) -> Vec<(String, String, String)> {
    let ranked: Vec<(String, String)> = rank_target(site, sys, target)
        .iter()
        .flat_map(|r| {
            r.entries
                .iter()
                .map(|e| (e.candidate.clone(), e.label.clone()))
        })
        .collect();
    let mut instances: Vec<(String, String, String)> = Vec::new();
    for (cand, label, variant) in sys.built() {
        instances.push((cand.to_string(), label.to_string(), variant.to_string()));
    }
    for r in sys.records() {
        let r = r.rec;
        if !instances
            .iter()
            .any(|(c, l, _)| *c == r.candidate && *l == r.label)
        {
            instances.push((r.candidate.clone(), r.label.clone(), r.variant.clone()));
        }
    }
    instances.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| natural_cmp(&a.1, &b.1)));
    let mut out = Vec::new();
    for (cand, label, variant) in instances {
        if cand == "iccs"
            || site.side.security_target(&cand, &label) != Some(target)
            || ranked.contains(&(cand.clone(), label.clone()))
        {
            continue;
        }
        let Some(c) = site.candidate(&cand) else {
            continue;
        };
        let why = if variant != "reference" {
            format!("{variant} build (rankings compare reference builds)")
        } else if c.category == Category::Hash {
            "hash functions are not ranked".to_string()
        } else if share_rule(&sys.view, &cand, &label, c.category) == ShareRule::Omit {
            "its non-ICCS backend stays on the candidate page".to_string()
        } else {
            let missing: Vec<String> = metrics(c.category)
                .iter()
                .filter(|m| match m.kind {
                    MetricKind::Cycles(op) => sys
                        .record(&cand, &label, op)
                        .and_then(|r| cycles_cell(sys, ShareRule::Show, r))
                        .is_none(),
                    k => bytes_cell(site, sys, &cand, &label, k).is_none(),
                })
                .map(|m| sys.unit_name(m.name))
                .collect();
            if missing.is_empty() {
                "another instance of the candidate represents it".to_string()
            } else {
                format!("no complete value for {}", missing.join(", "))
            }
        };
        out.push((cand, label, why));
    }
    out
}

/// How many instances of `sys` claim each target (`None`: no claimed target), in target order.
pub fn claimed_targets(site: &SiteData, sys: &SystemFacts) -> Vec<(Option<u32>, Vec<String>)> {
    let mut m: BTreeMap<Option<u32>, Vec<String>> = BTreeMap::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    let keys = sys
        .built()
        .into_iter()
        .map(|(c, l, _)| (c.to_string(), l.to_string()))
        .chain(
            sys.records()
                .iter()
                .map(|r| (r.rec.candidate.clone(), r.rec.label.clone())),
        );
    for (cand, label) in keys {
        if cand == "iccs" || seen.contains(&(cand.clone(), label.clone())) {
            continue;
        }
        let t = site.side.security_target(&cand, &label);
        m.entry(t).or_default().push(format!("{cand}/{label}"));
        seen.push((cand, label));
    }
    m.into_iter().collect()
}

/// All categories with at least one ranked instance at `target` on `sys`.
pub fn rank_target(site: &SiteData, sys: &SystemFacts, target: u32) -> Vec<CategoryRanking> {
    [Category::Sign, Category::Kem, Category::Kex, Category::Hash]
        .into_iter()
        .map(|c| rank_category(site, sys, c, target))
        .filter(|r| !r.entries.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_show_ties() {
        let m = [1.5, 1.5, 3.0, 4.0];
        assert_eq!(position(&m, 0), (1, true));
        assert_eq!(position(&m, 1), (1, true));
        assert_eq!(position(&m, 2), (3, false));
        assert_eq!(position(&m, 3), (4, false));
    }

    #[test]
    fn ties_share_average_rank() {
        assert_eq!(
            average_ranks(&[5.0, 1.0, 5.0, 3.0]),
            vec![3.5, 1.0, 3.5, 2.0]
        );
        assert_eq!(average_ranks(&[2.0, 2.0, 2.0]), vec![2.0, 2.0, 2.0]);
        assert!(average_ranks(&[]).is_empty());
    }

    #[test]
    fn overlapping_intervals_tie() {
        let v = [10.0, 10.5, 12.0, 20.0];
        let iv = [
            Some((9.5, 10.6)),
            Some((10.2, 10.8)),
            Some((10.7, 12.5)),
            None,
        ];
        // 10.5 overlaps 10 (tie); 12's interval is apart from 10's: its own rank.
        assert_eq!(interval_ranks(&v, &iv), vec![1.5, 1.5, 3.0, 4.0]);
        // Without intervals: the reference ranks.
        assert_eq!(interval_ranks(&v, &[None; 4]), average_ranks(&v));
    }
}
