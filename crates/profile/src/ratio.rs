//! Hash-cost ratios for the summary's hash rows (method.md §11.1): a hash candidate's
//! `mean_cycles` at message length L divided by the `mean_cycles` of the complete ICCS
//! baseline record `pseudoXOF-<w>` / `hash_<L>` of the same digest width w
//! (w = 8 × `sizes.digest_bytes` of the candidate's record). Rendered ` (<r with 2
//! decimals>×)`, or ` (ratio –)` when either value is missing.
//!
//! Without baseline records (older datasets) the reference falls back, for 32-byte messages
//! only, to the median per-call cost of `pseudoXOF` calls with in_bits = 256 and out_bits = w
//! over all profiles, scaled by core_hz ÷ tick_hz ([`fallback_baseline_cycles`]).

use pqperf_model::profile::Profile;
use pqperf_model::record::Record;

/// Digest width (bits) of a hash record: 8 × `sizes.digest_bytes`.
pub fn digest_bits(rec: &Record) -> Option<u64> {
    rec.sizes
        .get("digest_bytes")
        .map(|b| 8 * b)
        .filter(|w| *w > 0)
}

/// The baseline record for width `w` and message length `bytes` among `baseline` (records
/// of candidate `iccs`): label `pseudoXOF-<w>`, operation `hash`, `input_bytes` = bytes,
/// status `complete`.
pub fn baseline_for(baseline: &[Record], w: u64, bytes: u64) -> Option<&Record> {
    let label = format!("pseudoXOF-{w}");
    baseline.iter().find(|r| {
        r.candidate == "iccs"
            && r.label == label
            && r.operation == "hash"
            && r.input_bytes == bytes
            && r.status == "complete"
    })
}

/// Candidate cycles ÷ pseudoXOF cycles at the same width and length (None when either
/// record or cycle count is missing, or the candidate record is not complete).
pub fn pseudoxof_ratio(candidate: &Record, baseline: &[Record]) -> Option<f64> {
    if candidate.status != "complete" {
        return None;
    }
    let w = digest_bits(candidate)?;
    let base = baseline_for(baseline, w, candidate.input_bytes)?;
    let c = candidate.mean_cycles?;
    let b = base.mean_cycles?;
    (b > 0.0).then_some(c / b)
}

/// The page text after the cycle cell: ` (0.68×)` or ` (ratio –)`.
pub fn ratio_text(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!(" ({r:.2}\u{d7})"),
        None => " (ratio \u{2013})".to_string(),
    }
}

/// Fallback baseline (no `iccs` records): median over profiles of the per-call cost of
/// `pseudoXOF` shapes with in_bits = 256 and out_bits = `w`, each (profile, shape) one
/// observation ticks ÷ calls × (core_hz ÷ tick_hz); factor 1 when either rate is unknown.
/// Median of an even count = mean of the two middle values.
pub fn fallback_baseline_cycles(profiles: &[Profile], w: u64, core_hz: Option<f64>) -> Option<f64> {
    let mut obs = Vec::new();
    for p in profiles {
        let tick_hz = p.meta.str("tick_hz").and_then(|s| s.parse::<f64>().ok());
        let factor = match (core_hz, tick_hz) {
            (Some(c), Some(t)) if t > 0.0 => c / t,
            _ => 1.0,
        };
        for c in &p.calls {
            if c.func == "pseudoXOF" && c.in_bits == 256 && c.out_bits == w && c.calls > 0 {
                obs.push(c.ticks as f64 / c.calls as f64 * factor);
            }
        }
    }
    if obs.is_empty() {
        return None;
    }
    obs.sort_by(|a, b| a.total_cmp(b));
    let n = obs.len();
    Some(if n % 2 == 1 {
        obs[n / 2]
    } else {
        (obs[n / 2 - 1] + obs[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(cand: &str, label: &str, bytes: u64, digest: u64, cycles: Option<f64>) -> Record {
        let mut r = Record {
            candidate: cand.into(),
            label: label.into(),
            operation: "hash".into(),
            input_bytes: bytes,
            status: "complete".into(),
            mean_cycles: cycles,
            ..Default::default()
        };
        r.sizes.insert("digest_bytes".into(), digest);
        r
    }

    #[test]
    fn ratio_against_same_width_and_length() {
        let base = vec![
            rec("iccs", "pseudoXOF-768", 32, 96, Some(4530.0)),
            rec("iccs", "pseudoXOF-768", 1024, 96, Some(20000.0)),
            rec("iccs", "pseudoXOF-256", 32, 32, Some(3000.0)),
        ];
        let c = rec("hash-09", "X-768", 32, 96, Some(4068.0));
        let r = pseudoxof_ratio(&c, &base).unwrap();
        assert!((r - 4068.0 / 4530.0).abs() < 1e-12);
        assert_eq!(ratio_text(Some(r)), " (0.90\u{d7})");
        let c = rec("hash-09", "X-768", 1024, 96, Some(10000.0));
        assert_eq!(pseudoxof_ratio(&c, &base), Some(0.5));
        let c = rec("hash-09", "X-1152", 32, 144, Some(1.0));
        assert_eq!(pseudoxof_ratio(&c, &base), None);
        assert_eq!(ratio_text(None), " (ratio \u{2013})");
        let c = rec("hash-09", "X-768", 32, 96, None);
        assert_eq!(pseudoxof_ratio(&c, &base), None);
    }
}
