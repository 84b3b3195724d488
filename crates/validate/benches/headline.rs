//! What the headline estimator and the window rule (issue 36, `pqperf_model::floor`) give on
//! measured run directories, recomputed from their records' stored samples and windows (no
//! measurement): per record the fenced mean for every operation (`mean_robust_v3`) against
//! the median (`p50`) of the same calls — shift and interval half-widths — and per sampled
//! trial its fenced mean ÷ its window's verified per-call figure (the honest side of the
//! rule: how far above `1 − floor::PROCESS_REL` it stays), and the bound each record would
//! state. Figures only, nothing asserted.
//!
//! `PQPERF_HEADLINE_RUNS=<run dir>[:<run dir>…] cargo bench -p pqperf-validate --bench headline`
//! (a run dir holds `records/<candidate>/<label>__<op>.json`, e.g. the demo's).

use std::path::{Path, PathBuf};

use pqperf_model::floor::{
    PROCESS_REL, PROCESS_REL_V1, Rule, WindowFloor, rule_bound_rel, window_irqs,
};
use pqperf_model::kernelcheck::Windows;
use pqperf_model::robust::{self, Estimator};
use serde_json::Value;

fn records(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(cands) = std::fs::read_dir(dir.join("records")) else {
        return out;
    };
    for c in cands.flatten() {
        if let Ok(files) = std::fs::read_dir(c.path()) {
            out.extend(
                files
                    .flatten()
                    .map(|f| f.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json")),
            );
        }
    }
    out.sort();
    out
}

fn quantiles(name: &str, mut v: Vec<f64>) {
    if v.is_empty() {
        println!("{name}: none");
        return;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    println!(
        "{name}: n {} min {:.4} p1 {:.4} p5 {:.4} median {:.4} p95 {:.4} max {:.4}",
        v.len(),
        v[0],
        q(0.01),
        q(0.05),
        q(0.5),
        q(0.95),
        v[v.len() - 1]
    );
}

fn main() {
    let Ok(dirs) = std::env::var("PQPERF_HEADLINE_RUNS") else {
        println!("set PQPERF_HEADLINE_RUNS=<run dir>[:<run dir>…] (module doc)");
        return;
    };
    let (mut shift, mut hw_p50, mut hw_new) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratio, mut bounds) = (Vec::new(), Vec::new());
    let (mut below, mut below_v1, mut counted) = (0usize, 0usize, 0usize);
    let (mut deficit_50, mut deficit_short, mut bound_50, mut hard) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        for path in records(Path::new(dir)) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(r) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let Ok(rb) = serde_json::from_value::<robust::Robust>(r["pqperf"]["robust"].clone())
            else {
                continue;
            };
            let Ok(trials) = rb.sample_trials() else {
                continue;
            };
            let iv = |e| robust::interval(&trials, e, rb.resamples, rb.seed, rb.confidence);
            if let (Some(a), Some(b)) = (iv(Estimator::P50), iv(Estimator::Fenced)) {
                shift.push(b.estimate / a.estimate - 1.0);
                hw_p50.push(a.half_width_rel());
                hw_new.push(b.half_width_rel());
            }
            // The sampled trials of a complete record are its processes', in order.
            if r["status"] != "complete" {
                continue;
            }
            let mut at = 0usize;
            let mut worst: Option<f64> = None;
            for p in r["processes"].as_array().into_iter().flatten() {
                let kc = &p["kernel_check"];
                let Ok(Some(w)) = Windows::of(kc) else {
                    continue;
                };
                let calls: Vec<u64> = kc["window_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64)
                    .collect();
                let sampled: Vec<bool> = kc["window_sampled"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_bool)
                    .collect();
                let k = sampled.iter().filter(|s| **s).count();
                let Some(mine) = trials.get(at..at + k) else {
                    break;
                };
                at += k;
                let n = w.cpu_s.len();
                if calls.len() != n || sampled.len() != n {
                    continue;
                }
                let irqs = window_irqs(&w);
                let of = |rule| {
                    WindowFloor::of(rule, &w.cpu_s, &calls, &irqs, &sampled, mine, rb.tick_hz)
                };
                let (Some(now), Some(first)) = (of(Rule::V2), of(Rule::V1)) else {
                    continue;
                };
                let idx: Vec<usize> = (0..n).filter(|i| sampled[*i]).collect();
                for (j, (a, b)) in now.windows.iter().zip(&first.windows).enumerate() {
                    if let (Some(m), Some(v)) = (a.fenced_mean_s, a.per_call_s) {
                        ratio.push(m / v);
                        below += usize::from(m / v < 1.0 - PROCESS_REL);
                        let i = idx[j];
                        let deficit = (v - m) * calls[i] as f64 / w.cpu_s[i];
                        if w.cpu_s[i] >= 0.05 {
                            deficit_50.push(deficit);
                        } else {
                            deficit_short.push(deficit);
                        }
                        if w.hardirqs[i].is_some() {
                            counted += 1;
                            hard.push(w.hardirqs[i].unwrap_or(0) as f64 / w.cpu_s[i]);
                        }
                    }
                    if let (Some(m), Some(v)) = (b.fenced_mean_s, b.per_call_s) {
                        below_v1 += usize::from(m / v < 1.0 - PROCESS_REL_V1);
                    }
                }
                for (i, c) in w.cpu_s.iter().enumerate().filter(|(i, _)| sampled[*i]) {
                    let b = rule_bound_rel(Rule::V2, *c, calls[i], irqs[i]);
                    worst = Some(worst.map_or(b, |w: f64| w.max(b)));
                    if *c >= 0.05 {
                        bound_50.push(b);
                    }
                }
            }
            bounds.extend(worst);
        }
    }
    println!("records with samples: {}", shift.len());
    quantiles("fenced mean ÷ median − 1 (shift of the headline)", shift);
    quantiles("interval half-width, median (p50)", hw_p50);
    quantiles("interval half-width, fenced mean (mean_robust_v3)", hw_new);
    println!(
        "sampled trials below the current rule {} (ratio < {}, disturbed): {below}; below the first rule {} (ratio < {}, inconsistent): {below_v1}; with hard interrupts counted: {counted}",
        Rule::V2.name(),
        1.0 - PROCESS_REL,
        Rule::V1.name(),
        1.0 - PROCESS_REL_V1
    );
    quantiles(
        "fenced mean ÷ its window's verified per-call figure (current rule)",
        ratio,
    );
    quantiles(
        "unexplained deficit ÷ window CPU, windows ≥ 50 ms (current rule's allowance taken)",
        deficit_50,
    );
    quantiles(
        "unexplained deficit ÷ window CPU, windows < 50 ms",
        deficit_short,
    );
    quantiles("hard interrupts per second of window CPU", hard);
    quantiles("bound in force per sampled window ≥ 50 ms", bound_50);
    quantiles("bound in force per complete record (bound_rel)", bounds);
}
