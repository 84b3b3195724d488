//! The verdict rules, one definition for `pqperf compare` (two separately measured runs) and
//! `pqperf ab` (interleaved pairs).
//!
//! With threshold `t` the no-change band is `[1/(1+t), 1+t]` (symmetric in log space):
//!
//! * **slower** / **faster**: the interval lies above / below 1 and the ratio is at least
//!   `1+t` / at most `1/(1+t)`;
//! * **no change**: the whole interval lies inside the band;
//! * **inconclusive** otherwise: the interval reaches across a band edge, so the data cannot
//!   tell a change of the threshold's size from none. The reason says which, and what would
//!   narrow it.
//!
//! The environment gate then weighs the canary (how fast the machine itself ran on each
//! side, `pqperf_model::envevidence`): when the machine differed between the sides at least
//! as much as the change judged (or, for "no change", more than the band), the verdict is
//! inconclusive, since the difference may be the machine's. Two separately measured runs
//! pass two more gates ([`stability_gate`], [`fast_calls_gate`]): the canary is one fixed
//! workload and does not see every way a shared machine slows code down, so a verdict
//! between runs also needs each run's own processes to agree more closely than the change,
//! and the fast calls to show the change the estimates show.

use pqperf_model::ab::Verdict;

/// `x` as a signed percentage change (`1.1` → `+10.0 %`).
pub fn pct(x: f64) -> String {
    format!("{:+.1} %", (x - 1.0) * 100.0)
}

/// The verdict of `ratio` with interval `[lo, hi]` at threshold `t`, and the reason of an
/// inconclusive one.
pub fn judge(ratio: f64, lo: f64, hi: f64, t: f64) -> (Verdict, Option<String>) {
    let band = (1.0 + t).ln();
    let big = ratio.ln().abs() >= band * (1.0 - 1e-9);
    let band_text = format!("±{:.1} %", t * 100.0);
    if lo > 1.0 && big {
        return (Verdict::Slower, None);
    }
    if hi < 1.0 && big {
        return (Verdict::Faster, None);
    }
    if lo >= 1.0 / (1.0 + t) && hi <= 1.0 + t {
        return (Verdict::NoChange, None);
    }
    let iv = format!("[{lo:.4}, {hi:.4}]");
    let why = if big {
        format!(
            "the change {} is beyond the {band_text} band but its interval {iv} includes 1.0: the noise is as large as the change; more pairs (pqperf ab --pairs) or a quieter machine would narrow it",
            pct(ratio)
        )
    } else {
        format!(
            "the change {} is within the {band_text} band but its interval {iv} reaches beyond it: a change of the threshold's size cannot be ruled out; more pairs (pqperf ab --pairs) or a quieter machine would narrow it",
            pct(ratio)
        )
    };
    (Verdict::Inconclusive, Some(why))
}

/// Confidence of the interval a "no change" verdict of two separately measured runs needs
/// inside the band: the two one-sided tests of equivalence (Schuirmann's TOST) at 5 % each
/// are one (1 − 2·0.05) = 90 % interval inside the band, so "no change" is said wrongly in at
/// most 5 % of comparisons whose true change is at the band's edge — the same 5 % a
/// faster/slower verdict (the 95 % interval beyond 1) allows.
pub const EQUIVALENCE_CONFIDENCE: f64 = 0.90;

/// The equivalence rule after [`judge`] of the 95 % interval: a verdict that is not faster
/// or slower is **no change** when the [`EQUIVALENCE_CONFIDENCE`] interval `[lo, hi]` lies
/// inside the band `[1/(1+t), 1+t]`, else inconclusive (the reason names that interval).
pub fn equivalence(
    judged: (Verdict, Option<String>),
    ratio: f64,
    (lo, hi): (f64, f64),
    t: f64,
) -> (Verdict, Option<String>) {
    if matches!(
        judged.0,
        Verdict::Faster | Verdict::Slower | Verdict::NoChange
    ) {
        return judged;
    }
    if lo >= 1.0 / (1.0 + t) && hi <= 1.0 + t {
        return (Verdict::NoChange, None);
    }
    let big = ratio.ln().abs() >= (1.0 + t).ln() * (1.0 - 1e-9);
    if big {
        return judged;
    }
    // The smallest band this interval lies in: what the data do rule out.
    let bound = (hi - 1.0).max(1.0 / lo.max(f64::MIN_POSITIVE) - 1.0);
    (
        Verdict::Inconclusive,
        Some(format!(
            "the change {} is within the ±{:.1} % band but its {:.0} % interval [{lo:.4}, {hi:.4}] (the equivalence test's) reaches beyond it: a change of the threshold's size cannot be ruled out, only one beyond ±{:.1} %; more processes a side, interleaved pairs (pqperf ab) or a quieter machine would narrow it",
            pct(ratio),
            t * 100.0,
            EQUIVALENCE_CONFIDENCE * 100.0,
            (bound * 1000.0).ceil() / 10.0
        )),
    )
}

/// The environment gate: `env_ratio` is B/A of the canary (the machine's own speed). A
/// faster/slower verdict whose change is not larger than the machine's difference, or a
/// no-change verdict beside a machine difference beyond the band, becomes inconclusive.
pub fn environment_gate(
    judged: (Verdict, Option<String>),
    ratio: f64,
    env_ratio: Option<f64>,
    t: f64,
) -> (Verdict, Option<String>) {
    let Some(e) = env_ratio.filter(|e| e.is_finite() && *e > 0.0) else {
        return judged;
    };
    let de = e.ln().abs();
    let dc = ratio.ln().abs();
    let machine = format!(
        "the machine itself ran {} on side B than on side A (canary B/A {e:.4})",
        if e >= 1.0 {
            format!("{:.1} % slower", (e - 1.0) * 100.0)
        } else {
            format!("{:.1} % faster", (1.0 / e - 1.0) * 100.0)
        }
    );
    match judged.0 {
        Verdict::Faster | Verdict::Slower if de >= dc => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, at least as much as the change {} being judged; measure both sides interleaved (pqperf ab) or on a quieter machine",
                pct(ratio)
            )),
        ),
        Verdict::NoChange if de > (1.0 + t).ln() => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, more than the ±{:.1} % band: a change of that size could be hidden; measure both sides interleaved (pqperf ab) or on a quieter machine",
                t * 100.0
            )),
        ),
        _ => judged,
    }
}

/// The stability gate of two separately measured runs: `spread_a` / `spread_b` are the
/// largest ÷ smallest per-process estimate of each side, or with `middle_half` (the rank
/// interval) the 75th ÷ 25th percentile (`crate::analysis::spread_of`; the same library
/// measured in fresh processes of one run, so every difference among them is the
/// machine's). When the machine changed that much within a run, a difference of that size
/// between two runs taken at different times can be the machine's too: a faster/slower
/// verdict whose change is not larger, or a no-change verdict beside a spread beyond the
/// band, becomes inconclusive. `middle_half` also words the reason.
pub fn stability_gate(
    judged: (Verdict, Option<String>),
    ratio: f64,
    spreads: [(&str, usize, Option<f64>); 2],
    middle_half: bool,
    t: f64,
) -> (Verdict, Option<String>) {
    let widest = spreads
        .iter()
        .filter_map(|(side, n, s)| {
            s.filter(|s| s.is_finite() && *s >= 1.0)
                .map(|s| (*side, *n, s))
        })
        .max_by(|x, y| x.2.total_cmp(&y.2));
    let Some((side, n, s)) = widest else {
        return judged;
    };
    let ds = s.ln();
    let machine = if middle_half {
        format!(
            "the middle half of side {side}'s own {n} processes of the same library spans {:.1} % (the machine changed while that run measured)",
            (s - 1.0) * 100.0
        )
    } else {
        format!(
            "side {side}'s own {n} processes of the same library differ by up to {:.1} % (the machine changed while that run measured)",
            (s - 1.0) * 100.0
        )
    };
    match judged.0 {
        Verdict::Faster | Verdict::Slower if ds >= ratio.ln().abs() => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, at least as much as the change {} being judged: a difference of that size between two runs can be the machine's; measure both sides interleaved (pqperf ab) or on a quieter machine",
                pct(ratio)
            )),
        ),
        Verdict::NoChange if ds > (1.0 + t).ln() => (
            Verdict::Inconclusive,
            Some(format!(
                "{machine}, more than the ±{:.1} % band: a change of that size could be hidden; measure both sides interleaved (pqperf ab) or on a quieter machine",
                t * 100.0
            )),
        ),
        _ => judged,
    }
}

/// The fast-calls gate of two separately measured runs: `fast_ratio` is B/A of a low
/// quantile of each side's calls ([`crate::analysis::FAST_QUANTILE`]). A change of the code
/// moves the fast calls with the typical ones; a busy machine changes how many calls run
/// slowly (a sibling hyperthread, a co-tenant's memory traffic), which moves the estimate but
/// hardly the fast calls. A faster/slower verdict whose fast calls show less than half of the
/// change (in log space; or the opposite change), or a no-change verdict whose fast calls
/// differ beyond the band, becomes inconclusive.
pub fn fast_calls_gate(
    judged: (Verdict, Option<String>),
    ratio: f64,
    fast_ratio: Option<f64>,
    t: f64,
) -> (Verdict, Option<String>) {
    let Some(f) = fast_ratio.filter(|f| f.is_finite() && *f > 0.0) else {
        return judged;
    };
    let (lr, lf) = (ratio.ln(), f.ln());
    let fast = format!(
        "the fast calls (10th percentile) of B differ from A's by {} (B/A {f:.4})",
        pct(f)
    );
    match judged.0 {
        Verdict::Faster | Verdict::Slower if (lr - lf).abs() >= lr.abs() / 2.0 => (
            Verdict::Inconclusive,
            Some(format!(
                "{fast}, while the estimates differ by {}: the difference lies in how many calls ran slowly, which a busy machine changes between runs; measure both sides interleaved (pqperf ab) or on a quieter machine",
                pct(ratio)
            )),
        ),
        Verdict::NoChange if lf.abs() > (1.0 + t).ln() => (
            Verdict::Inconclusive,
            Some(format!(
                "{fast}, beyond the ±{:.1} % band, while the estimates agree: the sides ran differently; measure both sides interleaved (pqperf ab) or on a quieter machine",
                t * 100.0
            )),
        ),
        _ => judged,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn no_change_needs_the_equivalence_interval_inside_the_band() {
        // 95 % [0.975, 1.025] reaches beyond ±2 %; the 90 % [0.982, 1.019] does not.
        let j = judge(1.0, 0.975, 1.025, 0.02);
        assert_eq!(j.0, Verdict::Inconclusive);
        assert_eq!(
            equivalence(j.clone(), 1.0, (0.982, 1.019), 0.02),
            (Verdict::NoChange, None)
        );
        let (v, why) = equivalence(j, 1.0, (0.975, 1.021), 0.02);
        assert_eq!(v, Verdict::Inconclusive);
        let why = why.unwrap();
        assert!(why.contains("90 % interval [0.9750, 1.0210]"), "{why}");
        // 1/0.975 − 1 = 2.56 %: what the data rule out, rounded up.
        assert!(why.contains("only one beyond ±2.6 %"), "{why}");
        // Faster and slower are the 95 % interval's; a change beyond the band whose interval
        // includes 1 keeps its reason.
        let s = judge(1.2, 1.1, 1.3, 0.02);
        assert_eq!(equivalence(s.clone(), 1.2, (1.12, 1.28), 0.02), s);
        let big = judge(1.05, 0.99, 1.11, 0.02);
        assert_eq!(equivalence(big.clone(), 1.05, (1.0, 1.1), 0.02), big);
    }

    use super::*;

    #[test]
    fn rules() {
        let t = 0.02;
        assert_eq!(judge(1.10, 1.05, 1.15, t).0, Verdict::Slower);
        assert_eq!(judge(0.90, 0.85, 0.95, t).0, Verdict::Faster);
        // A real but small change (interval inside the band): no change.
        assert_eq!(judge(1.01, 1.005, 1.015, t), (Verdict::NoChange, None));
        // Big change, interval includes 1: inconclusive, and says why.
        let (v, why) = judge(1.10, 0.95, 1.3, t);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.unwrap().contains("includes 1.0"));
        // Small change, interval reaches beyond the band.
        let (v, why) = judge(1.01, 0.99, 1.04, t);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.unwrap().contains("cannot be ruled out"));
        // Significant but below the threshold and reaching beyond the band: inconclusive.
        assert_eq!(judge(1.015, 1.005, 1.03, t).0, Verdict::Inconclusive);
        // The band is symmetric in log space: 1/1.02 is at the edge.
        assert_eq!(judge(1.0 / 1.02, 0.97, 0.99, t).0, Verdict::Faster);
        assert_eq!(judge(0.999, 1.0 / 1.02, 1.019, t).0, Verdict::NoChange);
    }

    #[test]
    fn the_machine_can_make_a_verdict_inconclusive_never_decide_one() {
        let t = 0.02;
        let slower = judge(1.10, 1.05, 1.15, t);
        // The machine was 12 % slower on B: the 10 % change may be the machine's.
        let (v, why) = environment_gate(slower.clone(), 1.10, Some(1.12), t);
        assert_eq!(v, Verdict::Inconclusive);
        let why = why.unwrap();
        assert!(
            why.contains("12.0 % slower") && why.contains("+10.0 %"),
            "{why}"
        );
        // 5 % machine difference beside a 10 % change: the verdict stands.
        assert_eq!(
            environment_gate(slower.clone(), 1.10, Some(1.05), t).0,
            Verdict::Slower
        );
        // A faster machine on B hides a regression as "no change".
        let (v, why) = environment_gate(judge(1.0, 0.99, 1.01, t), 1.0, Some(0.8), t);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.unwrap().contains("25.0 % faster"));
        // No canary: nothing changes; an inconclusive verdict stays one.
        assert_eq!(environment_gate(slower.clone(), 1.10, None, t), slower);
        let inc = judge(1.10, 0.95, 1.3, t);
        assert_eq!(environment_gate(inc.clone(), 1.10, Some(1.0), t), inc);
    }

    #[test]
    fn a_machine_that_changed_within_a_run_cannot_decide_between_runs() {
        let t = 0.02;
        let slower = judge(1.25, 1.2, 1.3, t);
        // A's processes spread 30 %: a +25 % between runs may be the machine's.
        let (v, why) = stability_gate(
            slower.clone(),
            1.25,
            [("A", 5, Some(1.30)), ("B", 5, Some(1.01))],
            false,
            t,
        );
        assert_eq!(v, Verdict::Inconclusive);
        let why = why.unwrap();
        assert!(
            why.contains("side A's own 5 processes") && why.contains("30.0 %"),
            "{why}"
        );
        // With the rank interval the spread is of the middle half, and the reason says so.
        let (_, why) = stability_gate(
            slower.clone(),
            1.25,
            [("A", 20, Some(1.30)), ("B", 20, Some(1.01))],
            true,
            t,
        );
        assert!(
            why.unwrap()
                .contains("the middle half of side A's own 20 processes"),
            "middle half"
        );
        // Both stable: the verdict stands; an unknown spread changes nothing.
        let ok = [("A", 5, Some(1.02)), ("B", 5, Some(1.05))];
        assert_eq!(stability_gate(slower.clone(), 1.25, ok, false, t), slower);
        assert_eq!(
            stability_gate(
                slower.clone(),
                1.25,
                [("A", 1, None), ("B", 1, None)],
                false,
                t
            ),
            slower
        );
        // The faster direction is judged the same way (B's spread, 1/0.8 = 1.25).
        let faster = judge(0.8, 0.75, 0.85, t);
        let (v, why) = stability_gate(
            faster,
            0.8,
            [("A", 5, Some(1.0)), ("B", 4, Some(1.25))],
            false,
            t,
        );
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.unwrap().contains("side B's own 4"));
        // "No change" beside a spread beyond the band.
        let same = judge(1.0, 0.99, 1.01, t);
        assert_eq!(same.0, Verdict::NoChange);
        assert_eq!(
            stability_gate(
                same.clone(),
                1.0,
                [("A", 5, Some(1.05)), ("B", 5, Some(1.0))],
                false,
                t
            )
            .0,
            Verdict::Inconclusive
        );
        assert_eq!(
            stability_gate(
                same.clone(),
                1.0,
                ok.map(|(s, n, _)| (s, n, Some(1.01))),
                false,
                t
            ),
            same
        );
    }

    #[test]
    fn the_fast_calls_must_show_the_change() {
        let t = 0.02;
        let slower = judge(3.4, 1.5, 7.1, t);
        // Estimates 3.4×, fast calls 1.38×: the difference is how many calls ran slowly.
        let (v, why) = fast_calls_gate(slower.clone(), 3.4, Some(1.38), t);
        assert_eq!(v, Verdict::Inconclusive);
        let why = why.unwrap();
        assert!(why.contains("+38.0 %") && why.contains("+240.0 %"), "{why}");
        // A change of the code moves the fast calls too: the verdict stands.
        let s25 = judge(1.25, 1.2, 1.3, t);
        assert_eq!(fast_calls_gate(s25.clone(), 1.25, Some(1.24), t), s25);
        assert_eq!(fast_calls_gate(s25.clone(), 1.25, Some(1.13), t), s25);
        assert_eq!(fast_calls_gate(s25.clone(), 1.25, None, t), s25);
        // Fast calls in the opposite direction, or barely moved.
        assert_eq!(
            fast_calls_gate(s25.clone(), 1.25, Some(0.97), t).0,
            Verdict::Inconclusive
        );
        assert_eq!(
            fast_calls_gate(s25.clone(), 1.25, Some(1.10), t).0,
            Verdict::Inconclusive
        );
        let faster = judge(0.8, 0.75, 0.85, t);
        assert_eq!(fast_calls_gate(faster.clone(), 0.8, Some(0.81), t), faster);
        assert_eq!(
            fast_calls_gate(faster, 0.8, Some(1.0), t).0,
            Verdict::Inconclusive
        );
        // "No change" while the fast calls differ beyond the band.
        let same = judge(1.0, 0.99, 1.01, t);
        assert_eq!(
            fast_calls_gate(same.clone(), 1.0, Some(1.05), t).0,
            Verdict::Inconclusive
        );
        assert_eq!(fast_calls_gate(same.clone(), 1.0, Some(1.01), t), same);
    }
}
