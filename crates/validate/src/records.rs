//! Timing records: file name, the build entry's fields, the trials and the statistics
//! recomputed from them (method.md §8), process aggregates and the first process's meta.

use std::path::Path;

use pqperf_model::dataset::{Loaded, SystemData};
use pqperf_model::pyjson;
use pqperf_model::stats::{ProcessTotals, RecordStats, opt_close};
use pqperf_model::{BuildJson, Record};

use crate::problem::{Problem, REL_TOL, Report, show_float, show_num, show_opt};

pub(crate) fn cmp_str(
    rep: &mut Report,
    shown: &Path,
    field: &str,
    got: Option<&str>,
    want: Option<&str>,
    key: &str,
) {
    if got != want {
        rep.problems.push(Problem::new(
            shown,
            field,
            format!(
                "{} != build.json instances.{key}.{field} {}",
                show_opt(got),
                show_opt(want)
            ),
        ));
    }
}

pub(crate) fn check_record(
    rep: &mut Report,
    sys: &SystemData,
    build: Option<&BuildJson>,
    l: &Loaded<Record>,
) {
    rep.records += 1;
    let r = &l.value;
    let shown = &l.shown;
    let p = |f: &str, m: String| Problem::new(shown, f, m);

    // File name and directory.
    let want_name = Record::file_name(&r.label, &r.operation);
    let file_name = l
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir_name = l
        .path
        .parent()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_sized_op = file_name.starts_with(&format!("{}__{}_", r.label, r.operation));
    if file_name != want_name && !is_sized_op {
        rep.problems.push(p(
            "label",
            format!("file name {file_name} does not match label/operation ({want_name})"),
        ));
    }
    if dir_name != r.candidate {
        rep.problems.push(p(
            "candidate",
            format!("{:?} but the record is in records/{dir_name}/", r.candidate),
        ));
    }

    // Build entry links.
    let key = r.instance_key();
    if let Some(build) = build {
        match build.instances.get(&key) {
            None => rep
                .problems
                .push(p("label", format!("instance {key} is not in build.json"))),
            Some(e) => {
                cmp_str(
                    rep,
                    shown,
                    "library",
                    r.library.as_deref(),
                    e.library.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "library_sha256",
                    r.library_sha256.as_deref(),
                    e.library_sha256.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "kat_log",
                    r.kat_log.as_deref(),
                    e.kat_log.as_deref(),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "kat_log_sha256",
                    r.kat_log_sha256.as_deref(),
                    e.kat_log_sha256.as_deref(),
                    &key,
                );
                cmp_str(rep, shown, "kat", Some(&r.kat), Some(&e.kat), &key);
                cmp_str(rep, shown, "flags", Some(&r.flags), Some(&e.flags), &key);
                cmp_str(
                    rep,
                    shown,
                    "variant",
                    Some(&r.variant),
                    Some(&e.variant),
                    &key,
                );
                cmp_str(
                    rep,
                    shown,
                    "instance",
                    Some(&r.instance),
                    Some(&e.instance),
                    &key,
                );
            }
        }
    }
    if let (Some(rel), Some(want)) = (&r.kat_log, &r.kat_log_sha256)
        && let Some(log) = sys.kat_log(rel)
        && log.value.sha256 != *want
    {
        rep.problems.push(p(
            "kat_log_sha256",
            format!(
                "{want} != digest {} of {}",
                log.value.sha256,
                log.shown.display()
            ),
        ));
    }
    if r.kat_not_passed != (r.kat != "PASS") {
        rep.problems.push(p(
            "kat_not_passed",
            format!("{} but kat is {}", r.kat_not_passed, r.kat),
        ));
    }

    // A driver process the parent found inconsistent with the kernel's accounting
    // (`inconsistent`) carries its reasons and never counts towards a complete record.
    for (i, pr) in r.processes.iter().enumerate() {
        if pr.status != "inconsistent" {
            continue;
        }
        let reasons = pr
            .extra
            .get("kernel_check")
            .and_then(|k| k["problems"].as_array())
            .is_some_and(|a| !a.is_empty());
        if !reasons {
            rep.problems.push(p(
                &format!("processes[{i}].kernel_check"),
                "inconsistent process without kernel_check.problems".to_string(),
            ));
        }
        if r.status == "complete" {
            rep.problems.push(p(
                "status",
                format!("complete although processes[{i}] is inconsistent"),
            ));
        }
    }

    check_disturbed(rep, shown, r);
    check_floor(rep, shown, r);

    // The parent's windows (`kernel_check.window_*`): well formed, and a process recorded
    // complete obeys their rule (CPU time and run-queue wait bound each claimed interval).
    for (i, pr) in r.processes.iter().enumerate() {
        let Some(kc) = pr.extra.get("kernel_check") else {
            continue;
        };
        let at = format!("processes[{i}].kernel_check");
        match pqperf_model::kernelcheck::Windows::of(kc) {
            Err(e) => rep.problems.push(p(&at, e)),
            Ok(Some(w)) if pr.status == "complete" => {
                for b in w.broken() {
                    rep.problems
                        .push(p(&at, format!("complete process, but {b}")));
                }
            }
            Ok(_) => {}
        }
    }

    // Trials and process aggregates.
    let pt = ProcessTotals::of(&r.processes);
    if pt.trials != r.trials {
        let i = pt.trials.iter().zip(&r.trials).position(|(a, b)| a != b);
        let what = match i {
            Some(i) => format!("trials[{i}] differs from the processes' trial"),
            None => format!(
                "{} trial(s) but the processes hold {}",
                r.trials.len(),
                pt.trials.len()
            ),
        };
        rep.problems.push(p(
            "trials",
            format!("{what} (trials must be the concatenation of processes[].trials)"),
        ));
    }
    if r.disturbed_retries != pt.disturbed_retries {
        rep.problems.push(p(
            "disturbed_retries",
            format!(
                "{} != {} summed over processes",
                r.disturbed_retries, pt.disturbed_retries
            ),
        ));
    }
    if !r.processes.is_empty() {
        for (f, got, want) in [
            (
                "baseline_rss_bytes",
                r.baseline_rss_bytes,
                pt.baseline_rss_bytes,
            ),
            ("peak_rss_bytes", r.peak_rss_bytes, pt.peak_rss_bytes),
        ] {
            if got != want {
                rep.problems.push(p(
                    f,
                    format!(
                        "{} != maximum over processes' meta {}",
                        show_num(got),
                        show_num(want)
                    ),
                ));
            }
        }
    }
    if let Some(md) = pqperf_model::stats::MetaDerived::of(&r.processes) {
        if md.sizes != r.sizes {
            rep.problems.push(p(
                "sizes",
                format!("{:?} != {:?} from processes[0].meta", r.sizes, md.sizes),
            ));
        }
        if md.kex != r.kex {
            rep.problems.push(p(
                "kex",
                format!("{:?} != {:?} from processes[0].meta", r.kex, md.kex),
            ));
        }
        for (f, got, want) in [
            ("build_flags", &r.build_flags, &md.build_flags),
            ("timing_scope", &r.timing_scope, &md.timing_scope),
        ] {
            if let Some(want) = want
                && got != want
            {
                rep.problems
                    .push(p(f, format!("{got:?} != processes[0].meta.{f} {want:?}")));
            }
        }
    }
    check_memory(rep, shown, r);

    let complete = r.status == "complete";
    if complete && r.trials.len() as u64 != r.plan.trials {
        rep.problems.push(p(
            "trials",
            format!(
                "{} trial(s) but plan.trials is {}",
                r.trials.len(),
                r.plan.trials
            ),
        ));
    }

    // Statistics.
    match RecordStats::of_record(r) {
        None => {
            if complete {
                rep.problems
                    .push(p("trials", "complete record without trials".to_string()));
            }
        }
        Some(st) => {
            if r.measurements != Some(st.measurements) {
                rep.problems.push(p(
                    "measurements",
                    format!(
                        "{} != {} (sum of trials' measurements)",
                        show_num(r.measurements),
                        st.measurements
                    ),
                ));
            }
            if r.guide_100_measurements_met != Some(st.guide_100_measurements_met) {
                rep.problems.push(p(
                    "guide_100_measurements_met",
                    format!(
                        "{:?} but measurements = {}",
                        r.guide_100_measurements_met, st.measurements
                    ),
                ));
            }
            for (f, got, want) in [
                ("mean_seconds", r.mean_seconds, st.mean_seconds),
                (
                    "median_trial_seconds",
                    r.median_trial_seconds,
                    st.median_trial_seconds,
                ),
                (
                    "min_trial_seconds",
                    r.min_trial_seconds,
                    st.min_trial_seconds,
                ),
                (
                    "max_trial_seconds",
                    r.max_trial_seconds,
                    st.max_trial_seconds,
                ),
                ("mean_cycles", r.mean_cycles, st.mean_cycles),
                (
                    "median_trial_cycles",
                    r.median_trial_cycles,
                    st.median_trial_cycles,
                ),
                (
                    "operations_per_second",
                    r.operations_per_second,
                    st.operations_per_second,
                ),
                (
                    "throughput_MB_per_second",
                    r.throughput_mb_per_second,
                    st.throughput_mb_per_second,
                ),
            ] {
                if !opt_close(got, want, REL_TOL) {
                    rep.problems.push(p(
                        f,
                        format!(
                            "recorded {} but the trials give {} (relative tolerance 1e-9)",
                            show_float(got),
                            show_float(want)
                        ),
                    ));
                }
            }
        }
    }
    check_robust(rep, r, &p);
    check_attempts(rep, r, &p);
    crate::envevidence::check(rep, r, &p);
}

/// `pqperf.attempts`: one kept attempt per process, and the re-runs counted in
/// `disturbed_retries` are the attempts that were not kept.
fn check_attempts(rep: &mut Report, r: &Record, p: &dyn Fn(&str, String) -> Problem) {
    let Some(att) = r.pqperf.as_ref().and_then(|x| x.attempts.as_ref()) else {
        return;
    };
    let kept = att.iter().filter(|a| a.kept).count();
    if kept != r.processes.len() {
        rep.problems.push(p(
            "pqperf.attempts",
            format!(
                "{kept} kept attempt(s) but {} process(es)",
                r.processes.len()
            ),
        ));
    }
    let reruns = (att.len() - kept) as u64;
    if reruns != r.disturbed_retries {
        rep.problems.push(p(
            "disturbed_retries",
            format!(
                "{} but pqperf.attempts lists {reruns} re-run(s)",
                r.disturbed_retries
            ),
        ));
    }
}

/// `pqperf.robust`: the estimate and its bootstrap CI must be recomputed bit for bit from
/// the stored samples, seed and parameters.
fn check_robust(rep: &mut Report, r: &Record, p: &dyn Fn(&str, String) -> Problem) {
    let Some(rb) = r.pqperf.as_ref().and_then(|x| x.robust.as_ref()) else {
        return;
    };
    match rb.recompute() {
        Err(e) => rep.problems.push(p("pqperf.robust", e)),
        Ok(None) => rep.problems.push(p(
            "pqperf.robust",
            "no estimate can be computed from the stored samples".to_string(),
        )),
        Ok(Some(want)) => {
            let pairs = [
                ("estimate_ticks", rb.estimate_ticks, want.estimate_ticks),
                ("ci_low_ticks", rb.ci_low_ticks, want.ci_low_ticks),
                ("ci_high_ticks", rb.ci_high_ticks, want.ci_high_ticks),
                (
                    "estimate_seconds",
                    rb.estimate_seconds,
                    want.estimate_seconds,
                ),
                ("ci_low_seconds", rb.ci_low_seconds, want.ci_low_seconds),
                ("ci_high_seconds", rb.ci_high_seconds, want.ci_high_seconds),
                (
                    "ci_half_width_rel",
                    rb.ci_half_width_rel,
                    want.ci_half_width_rel,
                ),
            ];
            for (f, got, want) in pairs {
                if got.to_bits() != want.to_bits() {
                    rep.problems.push(p(
                        &format!("pqperf.robust.{f}"),
                        format!(
                            "recorded {} but the stored samples give {} (bootstrap recomputed bit for bit)",
                            pyjson::py_float_repr(got),
                            pyjson::py_float_repr(want)
                        ),
                    ));
                }
            }
            if (rb.trials, rb.fenced_out, &rb.method)
                != (want.trials, want.fenced_out, &want.method)
            {
                rep.problems.push(p(
                    "pqperf.robust",
                    format!(
                        "recorded trials {:?}, fenced_out {:?}, method {:?} but the stored samples give {:?}, {:?}, {:?}",
                        rb.trials, rb.fenced_out, rb.method, want.trials, want.fenced_out, want.method
                    ),
                ));
            }
            if rb.calls != want.calls {
                rep.problems.push(p(
                    "pqperf.robust.calls",
                    format!(
                        "recorded {} but {} samples are stored",
                        rb.calls, want.calls
                    ),
                ));
            }
        }
    }
}

/// A pqperf record that claims a memory pass (any of its keys under `pqperf`) must carry all of
/// them (their JSON types are checked when the record is loaded): `stack_bytes`,
/// `stack_region_bytes`, `stack_overflow`, `heap_peak_bytes`, `heap_allocations`; a stack use
/// within the region unless it overflowed, and no heap peak without an allocation.
pub(crate) fn check_memory(rep: &mut Report, shown: &Path, r: &Record) {
    let Some(x) = &r.pqperf else { return };
    let present = [
        ("stack_bytes", x.stack_bytes.is_some()),
        ("stack_region_bytes", x.stack_region_bytes.is_some()),
        ("stack_overflow", x.stack_overflow.is_some()),
        ("heap_peak_bytes", x.heap_peak_bytes.is_some()),
        ("heap_allocations", x.heap_allocations.is_some()),
    ];
    if !present.iter().any(|(_, p)| *p) {
        return;
    }
    for (k, p) in present {
        if !p {
            rep.problems.push(Problem::new(
                shown,
                format!("pqperf.{k}"),
                "missing: the record has other memory-pass keys (stack_bytes, stack_region_bytes, stack_overflow, heap_peak_bytes, heap_allocations come together)",
            ));
        }
    }
    if let (Some(s), Some(region), Some(false)) =
        (x.stack_bytes, x.stack_region_bytes, x.stack_overflow)
        && s > region + 4096
    {
        rep.problems.push(Problem::new(
            shown,
            "pqperf.stack_bytes",
            format!("{s} exceeds the painted region {region} but stack_overflow is false"),
        ));
    }
    if let (Some(h), Some(0)) = (x.heap_peak_bytes, x.heap_allocations)
        && h > 0
    {
        rep.problems.push(Problem::new(
            shown,
            "pqperf.heap_peak_bytes",
            format!("{h} bytes at peak but heap_allocations is 0"),
        ));
    }
}

/// The headline floor (issue 36, `pqperf_model::floor`), re-checked from the evidence. The
/// window rule (`kernel_check.floor.rule`: `floor::RULE`, the current one, counting the hard
/// interrupts of `window_hardirqs` too, or `floor::RULE_V1`, each re-checked under its own
/// constants): each process's verified per-call
/// figures of its sampled windows, recomputed from its window keys, agree with those it
/// recorded; a complete process's sampled trials' fenced means are not below them less
/// its rule's share; in a complete record (and in any other that stores as many sampled
/// trials as its processes' floors name) those fenced means are the ones its stored samples
/// give (in order), and in a complete record `pqperf.headline_floor.bound_rel` is the worst
/// window's bound. Processes of earlier versions get the earlier rule ([`check_floor_v1`]).
pub(crate) fn check_floor(rep: &mut Report, shown: &Path, r: &Record) {
    use pqperf_model::floor::{Rule, WindowFloor, record_bound, recorded_sampled_figures};
    let p = |f: &str, m: String| Problem::new(shown, f, m);
    let mut means: Vec<Option<f64>> = Vec::new();
    let mut all_ruled = true;
    let mut any_ruled = false;
    for (i, pr) in r.processes.iter().enumerate() {
        let kc = pr.extra.get("kernel_check");
        let at = format!("processes[{i}].kernel_check");
        let floor = match kc.map(WindowFloor::read).transpose() {
            Ok(f) => f.flatten(),
            Err(e) => {
                rep.problems.push(p(&at, e));
                all_ruled = false;
                continue;
            }
        };
        let (Some(kc), Some(mut f)) = (kc, floor) else {
            all_ruled = false;
            continue;
        };
        any_ruled = true;
        let figures = match recorded_sampled_figures(kc) {
            Ok(Some(x)) => x,
            Ok(None) => {
                rep.problems.push(p(
                    &format!("{at}.floor"),
                    "a window-rule floor without window keys in force".to_string(),
                ));
                continue;
            }
            Err(e) => {
                rep.problems.push(p(&at, e));
                continue;
            }
        };
        let calls: Vec<u64> = kc["window_calls"]
            .as_array()
            .map(|a| {
                a.iter()
                    .zip(kc["window_sampled"].as_array().into_iter().flatten())
                    .filter(|(_, s)| s.as_bool() == Some(true))
                    .map(|(x, _)| x.as_u64().unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        if figures.len() != f.windows.len() {
            rep.problems.push(p(
                &format!("{at}.floor"),
                format!(
                    "{} sampled window(s) recorded, the window keys have {}",
                    f.windows.len(),
                    figures.len()
                ),
            ));
            continue;
        }
        for (j, (w, (per_call, bound))) in f.windows.iter_mut().zip(&figures).enumerate() {
            // Window CPU seconds are rounded to the microsecond in the evidence.
            let n = calls.get(j).copied().unwrap_or(1).max(1) as f64;
            let agree = match (w.per_call_s, per_call) {
                (None, None) => true,
                (Some(a), Some(b)) => (a - b).abs() <= 1e-6 / n + 1e-12,
                _ => false,
            };
            if !agree {
                rep.problems.push(p(
                    &format!("{at}.floor.window_per_call_s[{j}]"),
                    format!(
                        "{:?} s recorded, its window gives {per_call:?} s",
                        w.per_call_s
                    ),
                ));
            }
            w.per_call_s = *per_call;
            w.bound_rel = *bound;
        }
        means.extend(f.windows.iter().map(|w| w.fenced_mean_ticks));
        if pr.status != "complete" {
            continue;
        }
        for b in f.problems() {
            rep.problems.push(p(
                &format!("{at}.floor"),
                format!("complete process, but {b}"),
            ));
        }
    }
    let hf = r
        .pqperf
        .as_ref()
        .and_then(|x| x.extra.get("headline_floor"));
    if !any_ruled && hf.is_none_or(|h| h["rule"].as_str().and_then(Rule::parse).is_none()) {
        check_floor_v1(rep, shown, r);
        return;
    }
    let Some(rb) = r.pqperf.as_ref().and_then(|x| x.robust.as_ref()) else {
        return;
    };
    // The recorded fenced means (ticks: the parent's tick rate and the record's may differ
    // by a fraction of a per cent) are the stored samples' (a complete record keeps every
    // process's sampled trials, in order; another record is compared where it stores as many
    // sampled trials as its processes' floors name).
    if all_ruled
        && means.iter().all(Option::is_some)
        && let Ok(trials) = rb.sample_trials()
        && (r.status == "complete" || trials.len() == means.len())
    {
        let est = pqperf_model::robust::Estimator::Fenced;
        let got: Vec<Option<f64>> = trials.iter().map(|t| est.of(&mut t.clone())).collect();
        if got != means {
            rep.problems.push(p(
                "pqperf.robust.samples",
                format!(
                    "the processes' floors record fenced means {means:?} ticks, the stored samples give {got:?} ticks"
                ),
            ));
        }
    }
    if r.status != "complete" {
        return;
    }
    let want = record_bound(
        r.processes
            .iter()
            .filter(|pr| pr.status == "complete")
            .filter_map(|pr| pr.extra.get("kernel_check")),
    );
    let agree = match (hf, &want) {
        (Some(h), Some(w)) => {
            h["rule"] == w["rule"]
                && h["bound_rel"]
                    .as_f64()
                    .zip(w["bound_rel"].as_f64())
                    .is_some_and(|(a, b)| (a - b).abs() <= 1e-8)
        }
        (None, None) => true,
        _ => false,
    };
    if !agree {
        rep.problems.push(p(
            "pqperf.headline_floor",
            format!(
                "{} recorded, the processes' windows give {}",
                hf.map_or("nothing".to_string(), |h| h.to_string()),
                want.map_or("nothing".to_string(), |w| w.to_string())
            ),
        ));
    }
}

/// The earlier rule of the headline floor (records of earlier versions), re-checked: each
/// complete process's verified per-call figures, recomputed from its windows, agree with
/// those it recorded and its samples' median and fenced mean are not below them (less the
/// stated shares); a complete record's estimate is not below the cheapest complete process's
/// verified per-call figure less `floor::RECORD_REL`.
fn check_floor_v1(rep: &mut Report, shown: &Path, r: &Record) {
    use pqperf_model::floor::{ProcessFloor, RecordFloor, agrees, window_figures};
    let p = |f: &str, m: String| Problem::new(shown, f, m);
    let mut figures = Vec::new();
    for (i, pr) in r.processes.iter().enumerate() {
        let Some(kc) = pr.extra.get("kernel_check") else {
            continue;
        };
        let at = format!("processes[{i}].kernel_check");
        let windows = match window_figures(kc) {
            Ok(w) => w,
            Err(e) => {
                rep.problems.push(p(&at, e));
                continue;
            }
        };
        let recorded = match ProcessFloor::of(kc) {
            Ok(f) => f,
            Err(e) => {
                rep.problems.push(p(&at, e));
                continue;
            }
        };
        let (Some((all, sampled)), Some(mut f)) = (windows, recorded) else {
            continue;
        };
        // Windows and calls of all windows, and of the sampled ones alone: each figure's
        // rounding allowance is its own windows' microseconds over its own calls.
        let per_window: Vec<(u64, bool)> = kc["window_calls"]
            .as_array()
            .map(|a| {
                a.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let s = kc["window_sampled"][i].as_bool().unwrap_or(false);
                        (x.as_u64().unwrap_or(0), s)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (n, calls) = (per_window.len(), per_window.iter().map(|w| w.0).sum());
        let sampled_windows: Vec<u64> = per_window.iter().filter(|w| w.1).map(|w| w.0).collect();
        let (n_s, calls_s) = (sampled_windows.len(), sampled_windows.iter().sum());
        if !agrees(f.verified_per_call_s, all, n, calls)
            || !agrees(f.sampled_per_call_s, sampled, n_s, calls_s)
        {
            rep.problems.push(p(
                &format!("{at}.floor"),
                format!(
                    "verified per-call figures {:?} / {:?} s, the windows give {all:?} / {sampled:?} s",
                    f.verified_per_call_s, f.sampled_per_call_s
                ),
            ));
        }
        if pr.status != "complete" {
            continue;
        }
        f.verified_per_call_s = all;
        f.sampled_per_call_s = sampled;
        for b in f.problems() {
            rep.problems.push(p(
                &format!("{at}.floor"),
                format!("complete process, but {b}"),
            ));
        }
        figures.extend(all);
    }
    let Some(rb) = r.pqperf.as_ref().and_then(|x| x.robust.as_ref()) else {
        return;
    };
    if r.status != "complete" {
        return;
    }
    if let Some(why) =
        RecordFloor::of_figures(figures, rb.estimate_seconds).and_then(|f| f.problem())
    {
        rep.problems
            .push(p("pqperf.robust", format!("complete record, but {why}")));
    }
}

/// A driver process over the kernel check's bounds only where interrupts on the measuring
/// CPU explain it (`disturbed`, `pqperf_measure::verify`): it says what was explained, every
/// window its softirqs do not explain would make it inconsistent, and it never counts
/// towards a complete record.
pub(crate) fn check_disturbed(rep: &mut Report, shown: &Path, r: &Record) {
    let p = |f: &str, m: String| Problem::new(shown, f, m);
    for (i, pr) in r.processes.iter().enumerate() {
        if pr.status != "disturbed" {
            continue;
        }
        let at = format!("processes[{i}].kernel_check");
        let kc = pr.extra.get("kernel_check");
        let explained = kc
            .and_then(|k| k["interrupted"].as_array())
            .is_some_and(|a| !a.is_empty());
        if !explained {
            rep.problems.push(p(
                &at,
                "disturbed process without kernel_check.interrupted".to_string(),
            ));
        }
        if let Some(Ok(Some(w))) = kc.map(pqperf_model::kernelcheck::Windows::of) {
            // Unexplained excesses in at most `isolated_max` of the windows disturb a process
            // (host work the softirqs do not count); more make it inconsistent.
            let u = w.unexplained();
            let max = pqperf_model::kernelcheck::isolated_max(w.cpu_s.len());
            if u.len() > max {
                for u in u {
                    rep.problems.push(p(
                        &at,
                        format!("disturbed process, but {u} (more than {max} such window(s))"),
                    ));
                }
            }
        }
        if r.status == "complete" {
            rep.problems.push(p(
                "status",
                format!("complete although processes[{i}] is disturbed"),
            ));
        }
    }
}

#[cfg(test)]
mod disturbed_tests {
    use super::*;
    use serde_json::json;

    fn problems(status: &str, kc: serde_json::Value) -> Vec<String> {
        let mut pr = pqperf_model::record::Process {
            status: "disturbed".into(),
            ..Default::default()
        };
        pr.extra.insert("kernel_check".into(), kc);
        let r = Record {
            status: status.into(),
            processes: vec![pr],
            ..Default::default()
        };
        let mut rep = Report::default();
        check_disturbed(&mut rep, Path::new("r.json"), &r);
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_disturbed_process_is_explained_by_its_softirqs_and_never_complete() {
        let kc = json!({
            "windows_bound": "in force",
            "window_cpu_s": [0.1017],
            "window_claimed_s": [0.1],
            "window_tolerance_s": 0.0006,
            "window_softirqs": [24],
            "interrupted": ["window 1: …"],
            "problems": [],
        });
        assert!(problems("failed_or_partial", kc.clone()).is_empty());
        let p = problems("complete", kc.clone());
        assert!(p.len() == 1 && p[0].contains("is disturbed"), "{p:?}");
        // One unexplained window of eight (isolated: the host) leaves it disturbed; the one
        // window of one, or two of eight, make it a problem.
        let mut one = kc.clone();
        one["window_cpu_s"] = json!([0.1017, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]);
        one["window_claimed_s"] = json!(vec![0.1; 8]);
        one["window_softirqs"] = json!([3, 0, 0, 0, 0, 0, 0, 0]);
        assert!(problems("failed_or_partial", one.clone()).is_empty());
        let mut two = one;
        two["window_cpu_s"][1] = json!(0.1017);
        let p = problems("failed_or_partial", two);
        assert!(p.len() == 2 && p[0].contains("3 softirq"), "{p:?}");
        let mut few = kc.clone();
        few["window_softirqs"] = json!([3]);
        let p = problems("failed_or_partial", few);
        assert!(p.len() == 1 && p[0].contains("3 softirq"), "{p:?}");
        let mut bare = kc;
        bare["interrupted"] = json!([]);
        let p = problems("failed_or_partial", bare);
        assert!(p.len() == 1 && p[0].contains("without"), "{p:?}");
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;
    use pqperf_model::record::PqperfRecordExt;

    fn problems(ext: PqperfRecordExt) -> Vec<String> {
        let r = Record {
            pqperf: Some(ext),
            ..Default::default()
        };
        let mut rep = Report::default();
        check_memory(&mut rep, Path::new("r.json"), &r);
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn memory_keys_come_together_and_agree() {
        let full = PqperfRecordExt {
            stack_bytes: Some(100_527),
            stack_region_bytes: Some(1 << 20),
            stack_overflow: Some(false),
            heap_peak_bytes: Some(1 << 20),
            heap_allocations: Some(1),
            ..Default::default()
        };
        assert!(problems(full.clone()).is_empty());
        assert!(problems(PqperfRecordExt::default()).is_empty());
        let p = problems(PqperfRecordExt {
            heap_allocations: None,
            ..full.clone()
        });
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("pqperf.heap_allocations"), "{p:?}");
        let p = problems(PqperfRecordExt {
            heap_allocations: Some(0),
            stack_bytes: Some(2 << 20),
            ..full
        });
        assert_eq!(p.len(), 2, "{p:?}");
    }
}

#[cfg(test)]
mod floor_tests {
    use super::*;
    use pqperf_model::record::PqperfRecordExt;
    use serde_json::json;

    /// A complete record of one process: two 10 ms windows of 1000 calls (the second
    /// sampled), the process's recorded floor, and an estimate of `estimate_s`.
    fn problems(median_s: f64, estimate_s: f64) -> Vec<String> {
        let v = (0.02 - 2.0 * 0.0006) / 1.01 / 2000.0;
        let s = (0.01 - 0.0006) / 1.01 / 1000.0;
        let mut pr = pqperf_model::record::Process {
            status: "complete".into(),
            ..Default::default()
        };
        pr.extra.insert(
            "kernel_check".into(),
            json!({
                "windows_bound": "in force",
                "window_cpu_s": [0.01, 0.01],
                "window_claimed_s": [0.01, 0.01],
                "window_tolerance_s": 0.0006,
                "window_calls": [1000, 1000],
                "window_sampled": [false, true],
                "floor": {
                    "verified_per_call_s": v,
                    "sampled_per_call_s": s,
                    "median_s": median_s,
                    "fenced_mean_s": 1e-5,
                },
            }),
        );
        let mut robust =
            pqperf_model::robust::Robust::compute(&[vec![1000; 10]], "keygen", 1e8).unwrap();
        robust.estimate_seconds = estimate_s;
        let r = Record {
            status: "complete".into(),
            processes: vec![pr],
            pqperf: Some(PqperfRecordExt {
                robust: Some(robust),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut rep = Report::default();
        check_floor(&mut rep, Path::new("r.json"), &r);
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn the_floor_is_rechecked_from_the_windows() {
        assert!(
            problems(1e-5, 1e-5).is_empty(),
            "{:?}",
            problems(1e-5, 1e-5)
        );
        // A median at half the verified cost: the process is not complete.
        let p = problems(0.5e-5, 1e-5);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("median"), "{p:?}");
        // An estimate 30 % below the verified cost: the record is not complete.
        let p = problems(1e-5, 0.7e-5);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("cheapest process"), "{p:?}");
    }

    /// A complete record of two processes under the window rule: each a 1 ms window of 1000
    /// reference calls and a sampled window of 400 calls of `cpu_s` CPU seconds, its samples
    /// `trials` (ticks at 1e8 Hz), the record's floor as `pqperf_measure` writes it.
    fn record(cpu_s: f64, trials: Vec<Vec<u64>>) -> Record {
        use pqperf_model::floor::{Irqs, Rule, WindowFloor, record_bound};
        let processes: Vec<_> = trials
            .iter()
            .map(|t| {
                let f = WindowFloor::of(
                    Rule::V2,
                    &[0.001, cpu_s],
                    &[1000, 400],
                    &[
                        Irqs::default(),
                        Irqs {
                            soft: Some(2),
                            hard: Some(3),
                        },
                    ],
                    &[false, true],
                    std::slice::from_ref(t),
                    1e8,
                )
                .unwrap();
                let mut pr = pqperf_model::record::Process {
                    status: "complete".into(),
                    ..Default::default()
                };
                pr.extra.insert(
                    "kernel_check".into(),
                    json!({
                        "windows_bound": "in force",
                        "window_cpu_s": [0.001, cpu_s],
                        "window_claimed_s": [0.001, cpu_s],
                        "window_tolerance_s": 0.0006,
                        "window_calls": [1000, 400],
                        "window_sampled": [false, true],
                        "window_softirqs": [null, 2],
                        "window_hardirqs": [null, 3],
                        "floor": f.to_json(),
                    }),
                );
                pr
            })
            .collect();
        let robust = pqperf_model::robust::Robust::compute(&trials, "keygen", 1e8).unwrap();
        let mut ext = PqperfRecordExt {
            robust: Some(robust),
            ..Default::default()
        };
        let b = record_bound(processes.iter().filter_map(|p| p.extra.get("kernel_check")));
        ext.extra.insert("headline_floor".into(), b.unwrap());
        Record {
            status: "complete".into(),
            processes,
            pqperf: Some(ext),
            ..Default::default()
        }
    }

    fn check(r: &Record) -> Vec<String> {
        let mut rep = Report::default();
        check_floor(&mut rep, Path::new("r.json"), r);
        rep.problems.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn the_window_rule_is_rechecked() {
        // 400 calls of 100 µs in a window of 40.45 ms (allowance 480 µs).
        let honest = || vec![vec![10_000u64; 400], vec![10_100u64; 400]];
        let r = record(0.04045, honest());
        assert!(check(&r).is_empty(), "{:?}", check(&r));
        // 3 % hidden above the fence (the rest at 97 %): caught under the current rule.
        let mut v = vec![9_700u64; 400];
        v[0] = 4_000_000 - 9_700 * 399;
        let p = check(&record(0.04045, vec![v, vec![10_000; 400]]));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains(pqperf_model::floor::RULE), "{p:?}");
        // Samples reshaped (one giant call above the fence, the rest at 90 %): a complete
        // process below its window.
        let mut v = vec![9_000u64; 400];
        v[0] = 4_000_000 - 9_000 * 399;
        let r = record(0.04045, vec![v, vec![10_000; 400]]);
        let p = check(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("below the CPU time their window verified"),
            "{p:?}"
        );
        // A recorded window figure its window does not give.
        let mut r = record(0.04045, honest());
        r.processes[0].extra.get_mut("kernel_check").unwrap()["window_cpu_s"][1] = json!(0.05);
        let p = check(&r);
        assert!(
            p.iter().any(|x| x.contains("window_per_call_s[0]")),
            "{p:?}"
        );
        // Fenced means that are not the stored samples'.
        let mut r = record(0.04045, honest());
        r.pqperf
            .as_mut()
            .unwrap()
            .robust
            .as_mut()
            .unwrap()
            .samples
            .swap(0, 1);
        let p = check(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("stored samples"), "{p:?}");
        // In a record that is not complete too, where it stores every process's trials.
        r.status = "failed_or_partial".into();
        let p = check(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("stored samples"), "{p:?}");
        // A bound that is not the windows'.
        let mut r = record(0.04045, honest());
        r.pqperf
            .as_mut()
            .unwrap()
            .extra
            .get_mut("headline_floor")
            .unwrap()["bound_rel"] = json!(0.001);
        let p = check(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("headline_floor"), "{p:?}");
    }
}
