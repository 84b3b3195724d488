//! The comparison itself: pairing, ratio intervals, verdicts, refusals and the spread.

use serde::Serialize;

use pqperf_model::Record;
use pqperf_model::robust::percentile_ci;
use pqperf_model::stats::quantile_sorted;

use crate::{CompareError, Side};

/// Seed offset of side B's replicates (side A uses the record's stored seed).
const B_SEED_XOR: u64 = 0x9E37_79B9_7F4A_7C15;

/// Options of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Smallest relative change that counts (0.02 = 2 %).
    pub threshold: f64,
    /// Confidence of the ratio interval (0.95).
    pub confidence: f64,
    /// Instance mapping `A label → B label`; when given, only the mapped pairs are compared.
    pub map: Vec<(String, String)>,
    /// Compare emulated data and mixed ICCS providers anyway.
    pub force: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold: 0.02,
            confidence: 0.95,
            map: Vec::new(),
            force: false,
        }
    }
}

/// Verdict of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B is faster: the interval lies below 1 and the change is at least the threshold.
    Faster,
    /// B is slower.
    Slower,
    /// Neither.
    NoChange,
    /// A side has no robust estimate (no per-call samples).
    NoEstimate,
}

impl Verdict {
    /// Wording in tables.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::NoEstimate => "no estimate",
        }
    }
}

/// One compared (candidate, instance, operation).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Candidate id.
    pub candidate: String,
    /// Instance label on side A.
    pub label_a: String,
    /// Instance label on side B.
    pub label_b: String,
    /// Operation key (`keygen`, `hash_32`, …).
    pub op: String,
    /// Robust estimate of A (s per call).
    pub a_seconds: Option<f64>,
    /// Robust estimate of B (s per call).
    pub b_seconds: Option<f64>,
    /// B/A of the robust estimates.
    pub ratio: Option<f64>,
    /// Lower bound of the ratio interval.
    pub ratio_ci_low: Option<f64>,
    /// Upper bound of the ratio interval.
    pub ratio_ci_high: Option<f64>,
    /// B/A of the reference `median_trial_seconds` (no interval), for comparison.
    pub naive_ratio: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Both sides measured the same library file (sha256).
    pub same_library: bool,
}

/// The spread of the ratios found (the A–A noise floor when every pair measured the same
/// library file).
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    /// Operations with both estimates.
    pub ops: usize,
    /// Median of |ratio − 1|.
    pub median_abs_change: f64,
    /// Largest |ratio − 1|.
    pub max_abs_change: f64,
    /// Largest half-width of a ratio interval.
    pub max_ci_half_width: f64,
    /// Every pair measured the same library file: this spread is an A–A noise floor.
    pub same_libraries: bool,
}

/// The result of `pqperf compare`.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Side A as given.
    pub a: String,
    /// Side B as given.
    pub b: String,
    /// Threshold used.
    pub threshold: f64,
    /// Confidence used.
    pub confidence: f64,
    /// Compared operations.
    pub rows: Vec<Row>,
    /// `candidate/label op` present in A only.
    pub only_a: Vec<String>,
    /// `candidate/label op` present in B only.
    pub only_b: Vec<String>,
    /// Spread of the ratios.
    pub spread: Option<Spread>,
    /// Notes (forced comparisons and what was overridden).
    pub notes: Vec<String>,
}

impl Comparison {
    /// True when any operation is slower.
    pub fn any_slower(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Slower)
    }
}

fn op_key(r: &Record) -> String {
    if r.input_bytes > 0 {
        format!("{}_{}", r.operation, r.input_bytes)
    } else {
        r.operation.clone()
    }
}

fn provider_kind(r: &Record) -> Option<String> {
    r.pqperf
        .as_ref()?
        .extra
        .get("iccs_provider")?
        .get("kind")?
        .as_str()
        .map(str::to_string)
}

/// Refusals: emulated records, mixed ICCS providers.
fn check_sides(
    a: &Side,
    b: &Side,
    o: &Options,
    notes: &mut Vec<String>,
) -> Result<(), CompareError> {
    for s in [a, b] {
        if let Some(r) = s.records.iter().find(|r| r.emulated().is_some()) {
            let m = format!(
                "{}: {}/{} {} was measured on an emulated host ({}): its timings are not performance figures",
                s.shown,
                r.candidate,
                r.label,
                op_key(r),
                r.emulated().unwrap_or_default()
            );
            if !o.force {
                return Err(CompareError::Refused(format!(
                    "{m} (use --force to compare anyway)"
                )));
            }
            notes.push(format!("forced: {m}"));
        }
    }
    let kinds = |s: &Side| {
        let mut k: Vec<String> = s.records.iter().filter_map(provider_kind).collect();
        k.sort();
        k.dedup();
        k
    };
    let (ka, kb) = (kinds(a), kinds(b));
    let mixed = ka.len() > 1 || kb.len() > 1 || (!ka.is_empty() && !kb.is_empty() && ka != kb);
    if mixed {
        let m = format!(
            "mixed ICCS providers: A uses {}, B uses {}",
            ka.join("+"),
            kb.join("+")
        );
        if !o.force {
            return Err(CompareError::Refused(format!(
                "{m} (use --force to compare anyway)"
            )));
        }
        notes.push(format!("forced: {m}"));
    }
    Ok(())
}

/// Ratio B/A with its percentile interval, from the two records' robust estimates.
fn ratio_ci(a: &Record, b: &Record, confidence: f64) -> Option<(f64, f64, f64)> {
    let ra = a.pqperf.as_ref()?.robust.as_ref()?;
    let rb = b.pqperf.as_ref()?.robust.as_ref()?;
    let xa = ra.replicates_seconds(ra.seed).ok()?;
    let xb = rb.replicates_seconds(rb.seed ^ B_SEED_XOR).ok()?;
    let mut r: Vec<f64> = xa
        .iter()
        .zip(&xb)
        .filter(|(x, _)| **x > 0.0)
        .map(|(x, y)| y / x)
        .collect();
    if ra.estimate_seconds <= 0.0 {
        return None;
    }
    let (lo, hi) = percentile_ci(&mut r, confidence)?;
    Some((rb.estimate_seconds / ra.estimate_seconds, lo, hi))
}

/// Compares B against A.
pub fn compare(a: &Side, b: &Side, o: &Options) -> Result<Comparison, CompareError> {
    let mut notes = Vec::new();
    check_sides(a, b, o, &mut notes)?;
    for (la, lb) in &o.map {
        if !a.records.iter().any(|r| &r.label == la) {
            return Err(CompareError::Refused(format!(
                "--map {la}={lb}: no instance {la} in {}",
                a.shown
            )));
        }
        if !b.records.iter().any(|r| &r.label == lb) {
            return Err(CompareError::Refused(format!(
                "--map {la}={lb}: no instance {lb} in {}",
                b.shown
            )));
        }
    }
    let mapped = |label: &str| -> Option<String> {
        if o.map.is_empty() {
            Some(label.to_string())
        } else {
            o.map
                .iter()
                .find(|(x, _)| x == label)
                .map(|(_, y)| y.clone())
        }
    };
    let in_b_selection = |label: &str| o.map.is_empty() || o.map.iter().any(|(_, y)| y == label);
    let mut rows = Vec::new();
    let mut only_a = Vec::new();
    let mut used_b = vec![false; b.records.len()];
    for ra in &a.records {
        let Some(lb) = mapped(&ra.label) else {
            continue;
        };
        let key = op_key(ra);
        let hit = b.records.iter().position(|rb| {
            rb.label == lb
                && op_key(rb) == key
                && (rb.candidate == ra.candidate || !o.map.is_empty())
        });
        let Some(i) = hit else {
            only_a.push(format!("{}/{} {key}", ra.candidate, ra.label));
            continue;
        };
        used_b[i] = true;
        let rb = &b.records[i];
        let naive_ratio = match (ra.median_trial_seconds, rb.median_trial_seconds) {
            (Some(x), Some(y)) if x > 0.0 => Some(y / x),
            _ => None,
        };
        let est = |r: &Record| {
            r.pqperf
                .as_ref()?
                .robust
                .as_ref()
                .map(|x| x.estimate_seconds)
        };
        let (ratio, lo, hi, verdict) = match ratio_ci(ra, rb, o.confidence) {
            Some((ratio, lo, hi)) => {
                let big = (ratio - 1.0).abs() >= o.threshold;
                let v = if hi < 1.0 && big {
                    Verdict::Faster
                } else if lo > 1.0 && big {
                    Verdict::Slower
                } else {
                    Verdict::NoChange
                };
                (Some(ratio), Some(lo), Some(hi), v)
            }
            None => (None, None, None, Verdict::NoEstimate),
        };
        rows.push(Row {
            candidate: ra.candidate.clone(),
            label_a: ra.label.clone(),
            label_b: rb.label.clone(),
            op: key,
            a_seconds: est(ra),
            b_seconds: est(rb),
            ratio,
            ratio_ci_low: lo,
            ratio_ci_high: hi,
            naive_ratio,
            verdict,
            same_library: ra.library_sha256.is_some() && ra.library_sha256 == rb.library_sha256,
        });
    }
    let only_b = b
        .records
        .iter()
        .zip(&used_b)
        .filter(|(r, used)| !**used && in_b_selection(&r.label))
        .map(|(r, _)| format!("{}/{} {}", r.candidate, r.label, op_key(r)))
        .collect();
    let spread = spread(&rows);
    Ok(Comparison {
        a: a.shown.clone(),
        b: b.shown.clone(),
        threshold: o.threshold,
        confidence: o.confidence,
        rows,
        only_a,
        only_b,
        spread,
        notes,
    })
}

fn spread(rows: &[Row]) -> Option<Spread> {
    let with: Vec<&Row> = rows.iter().filter(|r| r.ratio.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let mut ch: Vec<f64> = with
        .iter()
        .map(|r| (r.ratio.unwrap_or(1.0) - 1.0).abs())
        .collect();
    ch.sort_by(f64::total_cmp);
    let hw = with
        .iter()
        .map(|r| (r.ratio_ci_high.unwrap_or(1.0) - r.ratio_ci_low.unwrap_or(1.0)) / 2.0)
        .fold(0.0, f64::max);
    Some(Spread {
        ops: with.len(),
        median_abs_change: quantile_sorted(&ch, 0.5).unwrap_or(0.0),
        max_abs_change: ch.last().copied().unwrap_or(0.0),
        max_ci_half_width: hw,
        same_libraries: with.iter().all(|r| r.same_library),
    })
}

/// The A–A noise floor as recorded under campaign.json's `pqperf.noise_floor`.
pub fn noise_floor_json(c: &Comparison, utc: &str) -> Option<serde_json::Value> {
    let s = c.spread.as_ref().filter(|s| s.same_libraries)?;
    Some(serde_json::json!({
        "method": "pqperf compare of two campaigns of the same library files (A-A): spread of the ratios of the robust estimates",
        "ops": s.ops,
        "median_abs_change": s.median_abs_change,
        "max_abs_change": s.max_abs_change,
        "max_ci_half_width": s.max_ci_half_width,
        "recorded_utc": utc,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::record::PqperfRecordExt;
    use pqperf_model::robust::{Robust, SplitMix64};

    /// A record of `label`/`op` whose five sampled trials are `base` ± 2 % noise × `scale`.
    fn rec(label: &str, op: &str, scale: f64, seed: u64) -> Record {
        let mut rng = SplitMix64::new(seed);
        let trials: Vec<Vec<u64>> = (0..5)
            .map(|_| {
                (0..400)
                    .map(|_| ((100_000 + rng.next_u64() % 4_000) as f64 * scale) as u64)
                    .collect()
            })
            .collect();
        Record {
            candidate: "ml-dsa-44".into(),
            label: label.into(),
            operation: op.into(),
            median_trial_seconds: Some(4e-5 * scale),
            library_sha256: Some(label.into()),
            pqperf: Some(PqperfRecordExt {
                robust: Robust::compute(&trials, op, 2.5e9),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn side(recs: Vec<Record>) -> Side {
        Side {
            shown: "x".into(),
            system_dir: "x".into(),
            records: recs,
        }
    }

    #[test]
    fn verdicts_need_the_interval_and_the_threshold() {
        let a = side(vec![rec("l", "keygen", 1.0, 1), rec("l", "sign", 1.0, 2)]);
        let b = side(vec![rec("l", "keygen", 1.05, 3), rec("l", "sign", 0.9, 4)]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        let v: Vec<Verdict> = c.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(v, vec![Verdict::Slower, Verdict::Faster]);
        assert!(c.any_slower());
        let r = &c.rows[0];
        assert!(r.ratio_ci_low.unwrap() > 1.0 && (r.ratio.unwrap() - 1.05).abs() < 0.01);
        // 1 % slower: a clear interval, but below the 2 % threshold.
        let b1 = side(vec![rec("l", "keygen", 1.01, 5)]);
        let a1 = side(vec![rec("l", "keygen", 1.0, 1)]);
        let c = compare(&a1, &b1, &Options::default()).unwrap();
        assert_eq!(c.rows[0].verdict, Verdict::NoChange);
        let o = Options {
            threshold: 0.005,
            ..Default::default()
        };
        assert_eq!(
            compare(&a1, &b1, &o).unwrap().rows[0].verdict,
            Verdict::Slower
        );
    }

    #[test]
    fn mapping_one_side_only_and_missing_estimates() {
        let a = side(vec![
            rec("clean", "verify", 1.0, 1),
            rec("gone", "verify", 1.0, 2),
        ]);
        let mut no_est = rec("avx2", "keygen", 1.0, 3);
        no_est.pqperf = None;
        let b = side(vec![rec("avx2", "verify", 0.3, 4), no_est]);
        let o = Options {
            map: vec![("clean".into(), "avx2".into())],
            ..Default::default()
        };
        let c = compare(&a, &b, &o).unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!(
            (c.rows[0].label_b.as_str(), c.rows[0].verdict),
            ("avx2", Verdict::Faster)
        );
        assert_eq!(c.only_b, vec!["ml-dsa-44/avx2 keygen".to_string()]);
        assert!(c.only_a.is_empty());
        let bad = Options {
            map: vec![("nope".into(), "avx2".into())],
            ..Default::default()
        };
        assert!(compare(&a, &b, &bad).is_err());
        // Without the mapping nothing pairs up; a pair without estimates has no verdict.
        let c = compare(&a, &b, &Options::default()).unwrap();
        assert!(c.rows.is_empty() && c.only_a.len() == 2 && c.only_b.len() == 2);
        let mut x = rec("clean", "verify", 1.0, 1);
        x.pqperf = None;
        let c = compare(&side(vec![x.clone()]), &side(vec![x]), &Options::default()).unwrap();
        assert_eq!(c.rows[0].verdict, Verdict::NoEstimate);
        assert!(c.spread.is_none());
    }
}
