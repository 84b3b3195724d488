//! Calibration-based planning (method §6) and shard assignment (§16).

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

pub use pqperf_model::{Plan, Planning};

/// The reference planning constants (method §6.1) with the given trial target and operation
/// budget (model's `reference_planning()` is all zeros; this is the harness default).
pub fn planning(trial_target_s: f64, op_budget_s: f64) -> Planning {
    Planning {
        trials: 5,
        trial_target_s,
        min_total: 100,
        max_iters_per_trial: 20_000,
        op_budget_s,
        separate_process_setup_s: 60.0,
        ..Default::default()
    }
}

/// The reference constants with a 1 s trial target and a 900 s operation budget.
pub fn reference_planning() -> Planning {
    planning(1.0, 900.0)
}

/// The `planning` object of campaign.json.
pub fn planning_json(p: &Planning) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

/// True when the calibration call itself is the measurement (§6.4).
pub fn reuses_calibration(p: &Plan) -> bool {
    p.trials == 1 && p.iterations_per_trial == 1 && p.warmups == 0
}

/// Estimated seconds of the whole operation (0 when the plan has none).
pub fn estimated_s(p: &Plan) -> f64 {
    p.estimated_s.unwrap_or(0.0)
}

/// Plans one operation from its calibration: `t1` = seconds of the single timed call,
/// `setup` = process wall − t1, `c` = cost of one iteration when it differs (KEX steps: the
/// exchange's t1).
pub fn plan_op(p: &Planning, t1: f64, setup: f64, c: Option<f64>) -> Plan {
    let t = c.unwrap_or(t1).max(t1).max(1e-8);
    let trials_f = p.trials as f64;
    let min_per_trial = (p.min_total as f64 / trials_f).ceil() as u64;
    let mut iters = ((p.trial_target_s / t).ceil() as u64).max(min_per_trial);
    iters = iters.min(p.max_iters_per_trial);
    if trials_f * iters as f64 * t > p.op_budget_s {
        iters = ((p.op_budget_s / (trials_f * t)).floor() as u64).max(1);
    }
    let trials = if trials_f * t <= p.op_budget_s {
        p.trials
    } else {
        ((p.op_budget_s / t).floor() as u64).max(1)
    };
    let warmups = if t < 0.05 {
        3
    } else if t < 5.0 {
        1
    } else {
        0
    };
    let separate = setup < p.separate_process_setup_s;
    let processes = if separate { trials } else { 1 };
    let estimated_s =
        trials as f64 * iters as f64 * t + processes as f64 * (warmups as f64 * t + setup);
    let per_process_iters = iters * if separate { 1 } else { trials };
    let timeout = 3.0 * (per_process_iters + warmups) as f64 * t + 3.0 * setup + 300.0;
    Plan {
        iterations_per_trial: iters,
        warmups,
        trials,
        separate_processes: separate,
        estimated_s: Some(estimated_s),
        timeout_per_process_s: Some(timeout),
        ..Default::default()
    }
}

/// Shard map (§16): greedy longest-processing-time over `cand/label` keys. `costs` holds the
/// prior cost (Σ process wall seconds over published records) of keys that have one; `built`
/// are the keys of this run's build.json; `deferred` tells which keys are left out.
pub fn shard_map(
    costs: &BTreeMap<String, f64>,
    built: &[String],
    n: usize,
    deferred: &dyn Fn(&str) -> bool,
) -> BTreeMap<String, usize> {
    let mut keys: Vec<(String, f64)> = costs
        .iter()
        .map(|(k, c)| (k.clone(), *c))
        .chain(
            built
                .iter()
                .filter(|k| !costs.contains_key(*k))
                .map(|k| (k.clone(), 60.0)),
        )
        .filter(|(k, _)| !deferred(k))
        .collect();
    keys.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keys.dedup_by(|a, b| a.0 == b.0);
    let mut load = vec![0.0f64; n.max(1)];
    let mut map = BTreeMap::new();
    for (k, c) in keys {
        let (i, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .expect("n >= 1");
        load[i] += c;
        map.insert(k, i);
    }
    map
}

/// Shard (0-based) of `key`: from the map, else SHA-256(key) mod n.
pub fn shard_of(map: &BTreeMap<String, usize>, key: &str, n: usize) -> usize {
    if let Some(&s) = map.get(key) {
        return s;
    }
    let d = Sha256::digest(key.as_bytes());
    // int(hex, 16) mod n: reduce the big-endian digest byte by byte.
    d.iter()
        .fold(0u128, |acc, &b| (acc * 256 + b as u128) % n.max(1) as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_example_aigis_keygen() {
        // Aigis-sig1 keygen t≈0.32 ms → 5 × 3131 (t chosen to give the published count).
        let p = plan_op(&reference_planning(), 0.000_319_4, 0.01, None);
        assert_eq!(p.iterations_per_trial, 3131);
        assert_eq!(p.trials, 5);
        assert_eq!(p.warmups, 3);
        assert!(p.separate_processes);
    }

    #[test]
    fn slow_operation_gets_one_trial_one_call() {
        // NIIKE exchange on arm_1: t1 = 315 s > 300 s budget.
        let p = plan_op(&planning(0.5, 300.0), 315.0, 2.0, None);
        assert_eq!((p.trials, p.iterations_per_trial, p.warmups), (1, 1, 0));
        assert!(reuses_calibration(&p));
    }

    #[test]
    fn fast_operation_is_capped_and_has_at_least_20_calls() {
        let p = plan_op(&reference_planning(), 1e-9, 0.0, None);
        assert_eq!(p.iterations_per_trial, 20_000);
        let p = plan_op(&planning(0.001, 900.0), 0.01, 0.0, None);
        assert_eq!(p.iterations_per_trial, 20);
        assert_eq!(p.warmups, 3);
        let p = plan_op(&reference_planning(), 0.01, 70.0, Some(0.02));
        assert!(!p.separate_processes);
        assert_eq!(p.iterations_per_trial, 50);
        let want = 3.0 * (50.0 * 5.0 + 3.0) * 0.02 + 3.0 * 70.0 + 300.0;
        assert!((p.timeout_per_process_s.unwrap() - want).abs() < 1e-9);
    }

    #[test]
    fn budget_limits_iterations() {
        let p = plan_op(&reference_planning(), 10.0, 1.0, None);
        assert_eq!(p.iterations_per_trial, 18);
        assert_eq!(p.trials, 5);
        assert_eq!(p.warmups, 0);
    }

    #[test]
    fn lpt_balances_and_falls_back_to_hash() {
        let mut costs = BTreeMap::new();
        costs.insert("a/x".to_string(), 100.0);
        costs.insert("a/y".to_string(), 50.0);
        costs.insert("a/z".to_string(), 40.0);
        let built = vec!["b/new".to_string(), "slow/one".to_string()];
        let m = shard_map(&costs, &built, 2, &|k| k.starts_with("slow/"));
        assert_eq!(m["a/x"], 0);
        assert_eq!(m["b/new"], 1);
        assert_eq!(m["a/y"], 1);
        assert_eq!(m["a/z"], 0);
        assert!(!m.contains_key("slow/one"));
        let s = shard_of(&m, "other/k", 3);
        assert!(s < 3);
        assert_eq!(s, shard_of(&m, "other/k", 3));
    }
}
