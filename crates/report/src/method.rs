//! The method page (`performance/method_<sys>.md`, site `performance/<sys>/method.md`),
//! method.md §13.5.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{clock_text, turbo};
use crate::links::{PageRef, link};
use crate::page::{Block, Page};
use crate::view::{SystemView, cpu_str};
use crate::{Form, ReportError};
use pqperf_model::fmt::{DASH, fmt_f, fmt_g, py_float_str};

/// Harness default reference flags (used when campaign.json has no `arch_config`).
const DEFAULT_REFERENCE: &str = "-std=c99 -Wpedantic -Wall -Wextra -O2";
/// Harness default additions.
const DEFAULT_ADDITIONS: &str = "-fPIC -D_GNU_SOURCE -Wno-error=implicit-function-declaration -Wno-error=incompatible-pointer-types -Wno-error=int-conversion -Wno-error=implicit-int";

/// Host-state deviations of complete records from the fixed state, by kind.
fn deviations(v: &SystemView) -> BTreeMap<String, usize> {
    let report_mhz = v.env().f64("core_clock_mhz");
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for r in v.records.iter().filter(|r| r.complete()) {
        let env = &r.rec.environment;
        let mut add = |k: String| *kinds.entry(k).or_insert(0) += 1;
        if turbo(env) == "on" {
            add("turbo enabled".into());
        }
        let governor = env.str("cpufreq_governor").filter(|g| !g.is_empty());
        if let Some(g) = governor
            && g != "performance"
        {
            add(format!("governor {g}"));
        }
        if let Some(s) = env.str("smt_control")
            && !["off", "forceoff", "notsupported", "notimplemented", ""].contains(&s)
        {
            add(format!("SMT {s}"));
        }
        if r.rec.mean_cycles.is_none() {
            add("no hardware cycle count".into());
        }
        if governor.is_none()
            && let Some(m) = env.f64("core_clock_mhz")
            && Some(m) != report_mhz
        {
            add(format!("clock {} MHz", fmt_g(m, 12)));
        }
    }
    kinds
}

/// What the evidence says about the host during timing. The fixed-host wording (turbo off,
/// governor, SMT off, …) appears only when every recorded host check passed; otherwise the
/// problems are named and each property is given as read (`unknown` when it could not be).
fn host_state_sentence(v: &SystemView) -> String {
    use pqperf_model::HostState;
    let env = v.env();
    let n = v.records.len();
    let counter = match crate::counter::tick_counter(v) {
        Some(t) => format!("no hardware cycle counter, {} ticks instead", t.name()),
        None => "hardware cycle counter available".into(),
    };
    match v.campaign.host_state() {
        HostState::Fixed => {}
        HostState::NotFixed(problems) => {
            return format!(
                "The host was not fixed: the host checks found {}. As read at the start of the campaign: {}; {counter}. The {n} timing records store the state each was measured in.",
                problems.join("; "),
                crate::common::host_properties(env)
            );
        }
        HostState::Unknown => {
            return format!(
                "No host-check outcome is recorded, so it is unknown whether the host was fixed. As read at the start of the campaign: {}; {counter}. The {n} timing records store the state each was measured in.",
                crate::common::host_properties(env)
            );
        }
    }
    let dev = deviations(v);
    if !dev.is_empty() {
        let items: Vec<String> = dev.iter().map(|(k, c)| format!("{k} ({c})")).collect();
        return format!(
            "Of {n} timing records, some deviate from the fixed host state: {}.",
            items.join("; ")
        );
    }
    let no_driver = env
        .str("cpufreq_driver")
        .filter(|s| !s.is_empty())
        .is_none();
    let retry = "A trial that ran below 95% of that clock was repeated, up to twice.";
    if no_driver && let Some(mhz) = env.f64("core_clock_mhz") {
        return format!(
            "All {n} timing records were taken in this state (no cpufreq driver; the firmware-set clock, measured on the timing core with the cycle counter before each phase, was steady at {} GHz; SMT {}; hardware cycle counter available), as stored in each record. {retry}",
            fmt_f(mhz / 1000.0, 2),
            crate::common::smt(env)
        );
    }
    let min = env.str("cpufreq_min_khz").filter(|s| !s.is_empty());
    let max = env.str("cpufreq_max_khz").filter(|s| !s.is_empty());
    if env.str("architecture") == Some("aarch64")
        && let (Some(min), Some(max)) = (min, max)
        && min == max
    {
        let ghz = max
            .parse::<f64>()
            .map(|k| fmt_f(k / 1e6, 2))
            .unwrap_or_else(|_| DASH.into());
        return format!(
            "All {n} timing records were taken in this state (clock pinned at {ghz} GHz on the clusters of the timing cores: `performance` governor with minimum = maximum frequency, below the level at which the firmware's thermal limiter intervenes; boost off; no SMT; hardware cycle counter available), as stored in each record. {retry}"
        );
    }
    format!(
        "All {n} timing records were taken in this state (turbo off, `performance` governor, SMT off, hardware cycle counter available), as stored in each record."
    )
}

fn cpu_list(cpus: &BTreeSet<u64>) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The core-usage sentence of the limitations (method.md §13.5 item 5).
fn core_usage(v: &SystemView) -> String {
    let cpu_of = |r: &crate::view::RecordRef| cpu_str(&r.rec.environment).parse::<u64>().ok();
    let record_cpus: BTreeSet<u64> = v.records.iter().filter_map(cpu_of).collect();
    let shard_cpus: BTreeSet<u64> = v
        .campaign
        .shard_cpus
        .as_ref()
        .map(|m| m.values().copied().collect())
        .unwrap_or_default();
    let slow_on = |cpus: &BTreeSet<u64>| -> Vec<String> {
        let mut keys: Vec<String> = v
            .records
            .iter()
            .filter(|r| r.rec.candidate != "iccs")
            .filter(|r| cpu_of(r).is_some_and(|c| !cpus.contains(&c)))
            .map(|r| format!("{} {}", r.rec.candidate, r.rec.label))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    if !shard_cpus.is_empty() && record_cpus.len() > 1 {
        let slow = slow_on(&shard_cpus);
        let further = if slow.is_empty() {
            String::new()
        } else {
            format!(
                "; the slowest instances ({}) ran on a further core",
                slow.join(", ")
            )
        };
        return format!(
            "Timing ran in parallel on cores {}. The instances were divided among cores {} by expected run time{further}. All operations of one instance ran on the same core, and each record states its CPU. Cycle counts are comparable across these identical cores.",
            cpu_list(&record_cpus),
            cpu_list(&shard_cpus)
        );
    }
    if record_cpus.len() <= 1 {
        let cpu = record_cpus
            .iter()
            .next()
            .map(|c| c.to_string())
            .unwrap_or_else(|| cpu_str(v.env()));
        return format!("All timing ran on CPU {cpu}.");
    }
    let perf = if v.arch() == "x86_64" {
        "performance "
    } else {
        ""
    };
    let main = cpu_str(v.env());
    let main_set: BTreeSet<u64> = main.parse().ok().into_iter().collect();
    let slow = slow_on(&main_set);
    format!(
        "Timing ran on {perf}cores {}. The slowest instances ({}) were timed on a second {perf}core in parallel with the main run on CPU {main}, as was the hash profiling; cycle counts are comparable across these identical cores.",
        cpu_list(&record_cpus),
        slow.join(", ")
    )
}

/// Median tick rate of the profiles and their first non-`rdtsc` tick source.
fn tick_text(v: &SystemView) -> Option<String> {
    let src = v
        .profiles
        .iter()
        .filter_map(|p| p.prof.meta.str("tick_source"))
        .find(|s| *s != "rdtsc")?
        .to_string();
    let hz: Vec<f64> = v
        .profiles
        .iter()
        .filter_map(|p| p.prof.meta.f64("tick_hz"))
        .filter(|h| *h > 0.0)
        .collect();
    let med = pqperf_model::pynum::median(&hz)?;
    Some(format!(
        " On this system the tick counter is `{src}` at {} MHz, so a single short call is resolved only to about {} ns; the rounding is unbiased and averages out over the many calls that make up a share.",
        fmt_f(med / 1e6, 1),
        fmt_f(1e9 / med, 0)
    ))
}

/// What contained candidate code, from the campaign's `pqperf.sandbox` (pqperf datasets
/// only; reference datasets have no such key and no such sentence).
fn sandbox_sentence(sb: &serde_json::Value) -> String {
    if sb.get("sandbox").and_then(|x| x.as_str()) != Some("on") {
        return "Candidate code ran **without the sandbox** (`--no-sandbox`): only in its own process group with a private result channel and capped output capture.".into();
    }
    format!(
        "Candidate code ran contained, in child processes with their own process group (killed with it on exit or timeout) that report over a private channel while their own output is captured with a size cap. {}",
        containment(sb)
    )
}

/// The recorded protections of a `pqperf.sandbox` object (the keys an older pqperf did not
/// record are left out, never assumed).
fn containment(sb: &serde_json::Value) -> String {
    let s = |k: &str| {
        sb.get(k)
            .and_then(|x| x.as_str())
            .map(crate::md::escape_text)
    };
    let ns = sb
        .get("namespaces")
        .and_then(|n| n.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "none".into());
    let mem = sb
        .get("address_space_limit_bytes")
        .and_then(|x| x.as_u64())
        .map(|b| format!("{} MiB", b >> 20))
        .unwrap_or_else(|| "unlimited".into());
    let mut out = format!(
        "Namespaces: {ns}; network: {}; writes: {}; process limit: {}; address space: {mem}; core dumps off.",
        s("network").unwrap_or_else(|| "unknown".into()),
        s("write_confinement").unwrap_or_else(|| "unknown".into()),
        s("pids_limit").unwrap_or_else(|| "unknown".into()),
    );
    let more: Vec<String> = [
        ("read_confinement", "reads"),
        ("unix_sockets", "unix-domain sockets"),
        ("signals", "signals"),
        ("scheduling", "CPU affinity and priority"),
        ("descriptors", "descriptors"),
        ("leftover_processes", "leftover processes"),
        ("parent_death", "when pqperf ends"),
        ("capabilities", "capabilities"),
        ("privileged_calls", "privileged system calls"),
        ("process_creation", "process creation"),
        ("device_nodes", "device nodes"),
        ("environment", "environment"),
        ("namespace_init", "PID 1 of the child's namespace"),
    ]
    .iter()
    .filter_map(|(k, name)| s(k).map(|v| format!("{name}: {v}")))
    .collect();
    if !more.is_empty() {
        out.push_str(&format!(" {}.", more.join("; ")));
    }
    out
}

/// The containment `pqperf ct` recorded in its evidence (the first record that carries it).
fn ct_sandbox_sentence(v: &SystemView) -> Option<String> {
    let sb = v.ct.iter().find_map(|l| l.value.sandbox.as_ref())?;
    Some(
        if sb.get("sandbox").and_then(|x| x.as_str()) != Some("on") {
            "The constant-time check (`pqperf ct`) ran valgrind **without the sandbox** (`--no-sandbox`).".to_string()
        } else {
            format!(
                "The constant-time check (`pqperf ct`) ran valgrind and its driver contained the same way. {}",
                containment(sb)
            )
        },
    )
}

/// The method page of the system of `v`, as blocks (headings, the host notice, lines):
/// rendered to Markdown by [`render`] and to HTML by the site.
pub fn page(v: &SystemView, form: Form) -> Result<Page, ReportError> {
    let sys = v.id.as_str();
    let me = PageRef::Method(sys.into());
    let env = v.env();
    let mut out = Page::new();
    if form == Form::Site {
        out.line(format!(
            "<!-- synchronized from harness: {} -->",
            me.harness_path()
        ));
    }
    out.heading(
        1,
        format!("Performance method and limitations — system {sys}"),
    );
    out.blank();
    let description = v
        .side
        .system(sys)
        .map(|s| crate::md::escape_text(&s.description))
        .unwrap_or_else(|| env.str("cpu_model").unwrap_or(DASH).to_string());
    out.line(format!(
        "System {sys}: {description}. [Summary]({}).",
        link(&me, &PageRef::Summary(sys.into()), form)
    ));
    out.blank();
    if let Some(n) = crate::common::host_notice(v) {
        out.blocks.push(Block::Notice(n));
        out.blank();
    }
    out.heading(2, "Measurement");
    out.blank();
    if let Some(p) = crate::common::pqperf_provenance(v) {
        out.line(format!("- {p}"));
    }
    let ticks = crate::counter::tick_counter(v);
    match &ticks {
        None => out.line(format!(
            "- One {} core (CPU {}; {}). Cycles come from the hardware counter (`perf_event_open`, user mode); time from `CLOCK_MONOTONIC_RAW`. {}",
            env.str("cpu_model").unwrap_or(DASH),
            cpu_str(env),
            clock_text(env),
            host_state_sentence(v)
        )),
        Some(t) => out.line(format!(
            "- One {} core (CPU {}; {}). {} Time comes from `CLOCK_MONOTONIC_RAW`. {}",
            env.str("cpu_model").unwrap_or(DASH),
            cpu_str(env),
            clock_text(env),
            t.sentence(),
            host_state_sentence(v).replace(
                "hardware cycle counter available",
                &format!("no hardware cycle counter, {} ticks instead", t.name())
            )
        )),
    }
    let (reference, additions) = match (&v.campaign.arch_config, &v.campaign.harness_additions) {
        (Some(a), Some(h)) => (a.reference.clone(), h.clone()),
        (Some(a), None) => (a.reference.clone(), DEFAULT_ADDITIONS.to_string()),
        _ => (DEFAULT_REFERENCE.to_string(), DEFAULT_ADDITIONS.to_string()),
    };
    out.line(format!("- Reference builds use the guide's flags `{reference}` plus `{additions}` for shared libraries and pre-C99 declarations; an instance that fails to build or to pass its KATs that way is rebuilt with the harness defaults, and its page says so. Optimized builds use the guide's performance flags."));
    if let Some(s) = crate::provider::sentence(v, None) {
        out.line(format!("- {s}"));
    }
    if let Some(s) = crate::provider::cost_sentence(v) {
        out.line(s);
    }
    out.line("- Every library is checked against the submitted KAT vectors before timing. Instances whose vectors are not reproduced by the submitted code are still timed and are marked ⚠, with the identified cause on their candidate page (`performance/kat_issues.csv`); an instance without a reference source of its own is not timed. The DRNG is seeded with bytes 00..2f; signatures use a 64-byte message; hash inputs are the guide's S1–S8 lengths.");
    let p = v.campaign.planning.clone().unwrap_or_default();
    let (trials, setup, target, min_total, budget) = if v.campaign.planning.is_some() {
        (
            p.trials,
            p.separate_process_setup_s,
            p.trial_target_s,
            p.min_total,
            p.op_budget_s,
        )
    } else {
        (5, 60.0, 1.0, 100, 900.0)
    };
    let recorded = crate::common::trials_text(v);
    let target_ci_only = !v.records.is_empty()
        && v.records.iter().all(|r| {
            r.rec.pqperf.as_ref().and_then(|p| p.protocol.as_deref())
                == Some(pqperf_model::record::PROTOCOL_TARGET_CI)
        });
    if target_ci_only {
        // Every operation ran the `--target-ci` protocol: its bullet below says how; the
        // reference plan's trial count and length were only its start.
        out.line(format!(
            "- Each operation is calibrated with one call, then measured in {recorded} trials (the `--target-ci` protocol below decided the count and the trial length per operation; each record holds both). Trials run in separate processes (fresh address-space layout); each runs a fixed number of calls, at least {min_total} calls in total per operation. No operation is cut short by a time limit."
        ));
    } else {
        out.line(format!(
        "- Each operation is calibrated with one call, then measured in {trials} trials. Trials normally run in separate processes (fresh address-space layout); if setup takes more than {} s, the trials share one process. Each trial runs a fixed number of calls, targeting {} s and at least {min_total} calls in total; if that would exceed {} minutes, fewer calls are used, but never fewer than one per trial. No operation is cut short by a time limit.",
        fmt_g(setup, 12),
        py_float_str(target),
        fmt_f(budget / 60.0, 0)
    ));
    }
    if ticks.is_some() {
        out.line("- Reported ticks are the arithmetic mean over all timed calls (the guide's metric, with ticks in place of cycles); the median of the trial means is also recorded as a robustness check.");
    } else {
        out.line("- Reported cycles are the arithmetic mean over all timed calls (the guide's metric); the median of the trial means is also recorded as a robustness check.");
    }
    out.lines(robust_bullets(v));
    if let Some(sb) = v.campaign.pqperf.as_ref().and_then(|p| p.sandbox.as_ref()) {
        out.line(format!("- {}", sandbox_sentence(sb)));
    }
    if let Some(t) = ct_sandbox_sentence(v) {
        out.line(format!("- {t}"));
    }
    out.line("- Key exchange: `exchange` covers both initialisations, every pass and both key derivations of one protocol run (no network time); single steps are timed call by call.");
    out.blank();
    out.heading(2, "Share of the ICCS placeholder functions");
    out.blank();
    let mut share = "Each reference library is relinked with link-time wrappers (`-Wl,--wrap`) around `pseudohash`, `pseudoXOF`, `sm3hash` and the DRNG's `get_random_number`. Every call that crosses an object-file boundary is timed with the CPU tick counter and recorded with its input and output length; nested calls are not counted twice. The reported share is the time inside these functions divided by the time of the whole operation, measured in the same process on the same inputs as the benchmark. The wrappers cost a few tens of cycles per call.".to_string();
    if ticks.is_some() {
        share = share.replace(
            "a few tens of cycles per call",
            "a few tens of ticks per call",
        );
    }
    if let Some(t) = tick_text(v) {
        share.push_str(&t);
    }
    if v.profiles
        .iter()
        .any(|p| p.usable() && crate::view::own_primitive_profile(p))
    {
        share.push_str(" Instances that do not use the ICCS placeholders (PQClean `nist` builds) are wrapped around their own common SHAKE/SHA-3/SHA-2/AES functions and `PQCLEAN_randombytes` instead: their share is the time in the scheme's own symmetric primitives, shown on the candidate page with the measured wrapper overhead per call, and the summary gives no ICCS share for them.");
    }
    out.line(share);
    out.blank();
    let has_baseline = v.records.iter().any(|r| r.rec.candidate == "iccs");
    let tail = "This is a direct, self-contained relative measurement, not an estimate of substituting that hash into a public-key scheme. Several hash submissions are not yet constant-time (e.g. table-based S-boxes), so their current timings are not production figures; the summary flags known cases.";
    if has_baseline && let Some(prov) = crate::provider::baseline_provider(v) {
        // pqperf evidence names the provider the baseline was built over.
        out.line(format!("The ICCS helpers `sm3hash`, `pseudohash` and `pseudoXOF` are also timed directly, as hash instances of {prov} (records under `iccs/`): one `CryptHash` entry point per helper and output width, built with the same reference flags and timed with the same driver, message lengths and planning as the hash candidates. Before timing, each is checked against an independent model (`api/auxfunc.c` semantics on the RustCrypto `sm3` crate with a textbook HMAC), and `sm3hash` against the GB/T 32905 examples. The summary divides each hash candidate's {} by those of `pseudoXOF` with the same output width and message length. {tail}", if ticks.is_some() { "ticks" } else { "cycles" }));
    } else if has_baseline {
        out.line(format!("The ICCS helpers `sm3hash`, `pseudohash` and `pseudoXOF` are also timed directly, as hash instances of `api/auxfunc.c` (`performance/iccs`, records under `iccs/`): same reference flags, driver, message lengths and planning as the hash candidates. Before timing, each is checked against an independent model on OpenSSL's SM3, and `sm3hash` against the GB/T 32905 examples. The summary divides each hash candidate's cycles by those of `pseudoXOF` with the same output width and message length. {tail}"));
    } else if let Some(t) = &ticks {
        out.line(format!("This dataset has no direct timings of the ICCS helpers. For 32-byte messages the summary divides each hash candidate's {} ticks by the median per-call cost of `pseudoXOF` calls with a 256-bit input and the same output width, taken from the hash profiles and converted to the same ticks. {tail}", t.name()));
    } else {
        out.line(format!("This dataset has no direct timings of the ICCS helpers. For 32-byte messages the summary divides each hash candidate's cycles by the median per-call cost of `pseudoXOF` calls with a 256-bit input and the same output width, taken from the hash profiles and converted from ticks to core cycles. {tail}"));
    }
    out.blank();
    out.heading(2, "Limitations");
    out.blank();
    out.line("- Static and peak memory are process-level proxies (ELF image, VmHWM), not isolated algorithm memory.");
    out.line("- The ICCS share covers only the three helper functions; candidates that implement their own SHAKE/AES/SM3 show that time as non-symmetric (see the survey).");
    out.line("- Link-time wrapping is not reliable with LTO, so shares are measured on reference builds.");
    out.line("- The complete functional test vectors are referenced by digest, not embedded.");
    out.line(format!("- Very slow operations have fewer than {min_total} timed calls; their pages say how many. Operations too slow for more than one call use their calibration call as the measurement."));
    out.line(format!("- {}", core_usage(v)));
    out.line("- A single key-exchange step is timed around each call, so its wall time includes the counter start/stop system calls (a floor of roughly a microsecond); its user-mode cycle count does not. The `exchange` figure has no such overhead.");
    out.lines(stale_bullets(v));
    out.blank();
    Ok(out)
}

/// The method page of the system of `v` as Markdown (the published bytes).
pub fn render(v: &SystemView, form: Form) -> Result<String, ReportError> {
    Ok(page(v, form)?.to_markdown())
}

/// Evidence kept although its library is no longer the built one (`--keep-stale`:
/// campaign.json `pqperf.stale_kept`); nothing when there is none.
fn stale_bullets(v: &SystemView) -> Vec<String> {
    let kept: Vec<&str> = v
        .campaign
        .pqperf
        .as_ref()
        .and_then(|p| p.stale_kept.as_ref())
        .map(|a| a.iter().map(String::as_str).collect())
        .unwrap_or_default();
    if kept.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "- Stale evidence kept (`--keep-stale`): {} file(s) were measured on a library that is no longer the one built for this run: {}.",
        kept.len(),
        kept.iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )]
}

/// The `--target-ci` protocol (pqperf `pqperf.protocol` `target_ci`): how its operations were
/// measured, and how many reached the target or stopped at the budget.
fn target_ci_bullet(a: &[&pqperf_model::record::Adaptive]) -> String {
    let count = |w: &str| a.iter().filter(|x| x.stopped == w).count();
    let pcts: std::collections::BTreeSet<String> = a
        .iter()
        .map(|x| fmt_f(x.target_half_width_rel * 100.0, 2))
        .collect();
    let lens: Vec<f64> = a.iter().filter_map(|x| x.trial_target_s).collect();
    let range = match (
        lens.iter().copied().reduce(f64::min),
        lens.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) if lo < hi => format!("{}–{} s", fmt_f(lo, 3), fmt_f(hi, 3)),
        (Some(lo), _) => format!("{} s", fmt_f(lo, 3)),
        _ => DASH.to_string(),
    };
    let short = count("ci_out_of_reach");
    let other = a.len() - count("ci_reached") - count("budget_spent") - short;
    format!(
        "- Protocol (pqperf `--target-ci`): {} operations were measured in short trials ({range} of timed work each, chosen from their calibration: about the process setup time, at least 20 calls so that the calls' spread can show variable work, and a `sign` longer, so that a process averages more of its rejection rounds), one fresh pinned process per trial, first the reference plan's trial count and at least 100 calls, then one trial at a time until the robust interval's half-width was at most ±{} % or the operation's budget, what the reference protocol would have spent on it, was spent. {} reached the target, {} stopped at the budget{}{}. Their reference figures (mean, median trial, calls) come from the trials they ran (`pqperf.protocol` in each record).",
        a.len(),
        pcts.into_iter().collect::<Vec<_>>().join(" / ±"),
        count("ci_reached"),
        count("budget_spent") + short,
        if short > 0 {
            format!(
                " ({short} of them before it was spent: what was left of it could not have narrowed the interval to the target)"
            )
        } else {
            String::new()
        },
        if other > 0 {
            format!(", {other} stopped otherwise (trial limit, failure or no samples)")
        } else {
            String::new()
        }
    )
}

/// The share of driver processes that were re-runs of disturbed ones, and the disturbed ones
/// not re-run with why (records with `pqperf.attempts`).
fn rerun_bullet(with: &[&pqperf_model::record::PqperfRecordExt]) -> Option<String> {
    let attempts: Vec<&pqperf_model::record::Attempt> = with
        .iter()
        .filter_map(|p| p.attempts.as_ref())
        .flatten()
        .collect();
    if attempts.is_empty() {
        return None;
    }
    let reruns = attempts.iter().filter(|a| a.attempt > 0).count();
    let disturbed = attempts.iter().filter(|a| a.disturbed).count();
    let mut why: std::collections::BTreeMap<String, usize> = Default::default();
    for d in with.iter().flat_map(|p| p.reruns_declined.iter().flatten()) {
        let reason = d.rsplit(": ").next().unwrap_or(d).to_string();
        *why.entry(reason).or_default() += 1;
    }
    let declined = if why.is_empty() {
        String::new()
    } else {
        format!(
            "; disturbed processes kept without a re-run: {}",
            why.iter()
                .map(|(k, n)| format!("{n} ({})", k.replace('_', " ")))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(format!(
        "- Re-runs: {reruns} of {} driver processes ({} %) were re-runs; {disturbed} had a disturbed trial{declined}. A disturbed process is re-run only while that can change the figures: not when its per-call figures agree with those already kept within the interval target (no effect), not beyond the operation's budget, and not after 8 disturbed processes in a row (host always disturbed).",
        attempts.len(),
        fmt_f(100.0 * reruns as f64 / attempts.len() as f64, 1)
    ))
}

/// pqperf datasets whose records carry `pqperf.robust`: how the robust estimate, its interval
/// and the disturbance re-runs were made, adaptive stopping when used, and the noise floor
/// when one was recorded (`pqperf compare --record-noise-floor`: campaign.json
/// `pqperf.noise_floor`).
fn robust_bullets(v: &SystemView) -> Vec<String> {
    let with: Vec<&pqperf_model::record::PqperfRecordExt> = v
        .records
        .iter()
        .filter_map(|r| r.rec.pqperf.as_ref())
        .filter(|p| p.robust.is_some())
        .collect();
    if with.is_empty() {
        return Vec::new();
    }
    let estimators: std::collections::BTreeSet<&str> = with
        .iter()
        .filter_map(|p| p.robust.as_ref())
        .map(|r| r.estimator.as_str())
        .collect();
    let mut out = vec!["- Robust estimate (pqperf): after the reference trials, which read no clock per call, each process runs as many sampled trials of at most 400 calls that read the tick counter after every call. This estimate with its 95 % interval is the headline figure of this dataset (summary, rankings, exports); the reference mean stays beside it. Every figure is recomputed by `pqperf validate` from the stored calls.".to_string()];
    // Input streams: pqperf's own protocol seeds each process apart (`stream` in the process
    // entry) from the run's stream key; the reference protocol keeps the reference's fixed
    // seed. Which inputs a candidate could know ahead (issue 36).
    let published: std::collections::BTreeMap<&str, bool> = v
        .campaign
        .pqperf
        .as_ref()
        .and_then(|p| p.stream_keys.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|k| {
            Some((
                k["key_id"].as_str()?,
                k["reused"].as_bool().unwrap_or(false),
            ))
        })
        .collect();
    let (mut secret, mut reused, mut public, mut fixed, mut on_argv) = (0, 0, 0, 0, 0);
    for r in v
        .records
        .iter()
        .filter(|r| r.rec.pqperf.as_ref().is_some_and(|p| p.robust.is_some()))
    {
        let key = r.rec.processes.iter().find_map(|p| {
            let s = p.extra.get("stream")?;
            Some(s.get("key_id").and_then(|k| k.as_str()))
        });
        // Before `seed+call-index v4` a hash's and a key-exchange step's timing process had
        // its seed on its argv (issue 36).
        let argv_seeded = {
            let op = r.rec.operation.as_str();
            (op.starts_with("hash") || pqperf_model::stream::kex_step(op))
                && r.rec.processes.iter().any(|p| {
                    p.extra
                        .get("stream")
                        .and_then(|s| s.get("inputs"))
                        .and_then(|i| i.as_str())
                        .is_some_and(|i| i != pqperf_model::stream::CALL_INPUTS)
                })
        };
        match key {
            None => fixed += 1,
            Some(None) => public += 1,
            Some(Some(id)) if published.get(id) == Some(&false) && argv_seeded => on_argv += 1,
            Some(Some(id)) if published.get(id) == Some(&false) => secret += 1,
            Some(Some(_)) => reused += 1,
        }
    }
    let streamed = secret + reused + public + on_argv;
    if streamed > 0 {
        let mut parts = Vec::new();
        if secret > 0 {
            parts.push(format!("in {secret} record(s) the seeds derive from the run's secret stream key (fresh from the operating system, published in campaign.json `pqperf.stream_keys` after the measure phase), and each timing process got its windows' seeds only with the parent's go that opened them (hash messages and key-exchange steps included; verify and dec their relayed inputs), so no candidate could compute its timed inputs ahead; `pqperf validate` recomputes every seed from the published key"));
        }
        if on_argv > 0 {
            parts.push(format!("in {on_argv} record(s) (hash or a key-exchange step, measured by an earlier pqperf) the seed was on the timing process's command line, which the library could read, so their inputs were predictable"));
        }
        if reused > 0 {
            parts.push(format!("in {reused} record(s) the key was reused from an earlier run (`--stream-key`, for pairing), so their inputs were predictable from that run's published key"));
        }
        if public > 0 {
            parts.push(format!("in {public} record(s) the seeds derive from public constants (recorded before the stream key), so their inputs were predictable"));
        }
        out.push(format!("- Input streams: every driver process drew its own inputs (its DRNG seed and messages from its own seed, recorded as `stream` in each process entry), so the processes are independent samples of the operation's variability; {}{}.", parts.join("; "), if fixed > 0 { format!("; the other {fixed} record(s) kept the reference's fixed, public seed in every process (reference protocol, for parity with the reference's figures): their inputs are public") } else { String::new() }));
    } else if fixed > 0 {
        out.push("- Input streams: every driver process used the reference's fixed DRNG seed (the reference protocol, for parity with the reference's figures), so its processes repeat the same inputs and the interval measures timing noise of one set of calls; the inputs are public, so a library could compute them ahead.".to_string());
    }
    if estimators.contains("mean_robust_v3") {
        let text = "- Every operation: the mean cost per call a user pays, over the operation's own variability — the one estimate the kernel's accounting can check. Per sampled trial (one driver process, its own input stream) the calls above an interference fence — 8 inter-quartile ranges above the upper quartile, at least 3 × it — are dropped (a call that lost the CPU for a time slice) and the rest averaged; the trials' means are combined by their 20 % trimmed mean, with the Tukey–McLaughlin t-interval over the trials (it includes the spread between independent streams). Each trial's fenced mean was checked against the kernel CPU time of the parent's window around it (less 400 µs and the measuring CPU's interrupt work, ÷ its calls, less 5 %): per-call samples the library could have rewritten cannot move the figure further than each record's `pqperf.headline_floor.bound_rel`. The per-call p50/p90/p99 shown beside it are the driver's samples as reported (their sum is checked, their shape is not).";
        // Records of the current window rule (issue 36) say how it differs from the first.
        let v2 = with.iter().any(|p| {
            p.extra
                .get("headline_floor")
                .and_then(|h| h["rule"].as_str())
                == Some(pqperf_model::floor::RULE)
        });
        out.push(if v2 {
            text.replace("(less 400 µs and the measuring CPU's interrupt work, ÷ its calls, less 5 %)", "(less 400 µs and the measuring CPU's counted interrupt work, ÷ its calls, less 1 %; 5 % and softirqs only in records of the first window rule, named in `pqperf.headline_floor.rule`)")
        } else {
            text.to_string()
        });
    }
    if estimators.contains("p50") {
        out.push("- Fixed-work operations: the median call, with a seeded two-level percentile bootstrap interval (trials, then calls within them; 1000 replicates).".to_string());
    }
    if estimators.contains("mean_robust_v2") {
        out.push("- Variable-work operations (`sign`, whose rejection sampling repeats a random number of rounds, and any operation whose middle half of calls spans 25 % or more): the mean cost per call a user pays, over the operation's own variability. Per sampled trial (one driver process, its own input stream) the calls above an interference fence — 8 inter-quartile ranges above the upper quartile, at least 3 × it — are dropped (a call that lost the CPU for a time slice; the rounds' own tail lies below it for all but about 1 call in 10 000) and the rest averaged; the trials' means are combined by their 20 % trimmed mean, so a minority of processes that ran in a slow phase of the host does not move it. The 95 % interval is the Tukey–McLaughlin t-interval of that trimmed mean over the trials, so it includes the spread between independent streams, not only the timing noise of one set of calls. A median or trimmed mean of calls would report a typical call, not what signing costs on average. The per-call p50/p90/p99 are shown beside it.".to_string());
    }
    if estimators.contains("trimmed_mean_20") {
        out.push("- Some records (measured by an earlier pqperf) use for `sign` the 20 % trimmed mean over calls with the two-level bootstrap interval: a typical call rather than the mean a user pays.".to_string());
    }
    out.push("- Intervals wider than ±2 % are flagged on the candidate pages.".to_string());
    out.push("- Disturbance: around every trial the driver reads the thread's run-queue wait (`/proc/thread-self/schedstat`), involuntary context switches, page faults and migrations. A trial that waited on the run queue for more than 2 % of its wall time is disturbed; its process is run again, at most twice, and the least disturbed attempt is kept. Every attempt is listed in the record (`pqperf.attempts`).".to_string());
    out.extend(rerun_bullet(&with));
    let target_ci: Vec<_> = with
        .iter()
        .filter(|p| p.protocol.as_deref() == Some(pqperf_model::record::PROTOCOL_TARGET_CI))
        .filter_map(|p| p.adaptive.as_ref())
        .collect();
    if !target_ci.is_empty() {
        out.push(target_ci_bullet(&target_ci));
    }
    let adaptive: Vec<_> = with
        .iter()
        .filter(|p| p.protocol.as_deref() != Some(pqperf_model::record::PROTOCOL_TARGET_CI))
        .filter_map(|p| p.adaptive.as_ref())
        .collect();
    if !adaptive.is_empty() {
        let reached = adaptive
            .iter()
            .filter(|a| a.stopped == "ci_reached")
            .count();
        out.push(format!(
            "- Adaptive stopping: after the planned trials, trials were added until the interval's half-width was at most ±1 % or the operation's budget was spent; {reached} of {} operations reached ±1 %.",
            adaptive.len()
        ));
    }
    if let Some(nf) = v
        .campaign
        .pqperf
        .as_ref()
        .and_then(|p| p.noise_floor.as_ref())
    {
        let pct = |k: &str| {
            nf.get(k)
                .and_then(|x| x.as_f64())
                .map(|x| fmt_f(x * 100.0, 2))
                .unwrap_or_else(|| DASH.to_string())
        };
        out.push(format!(
            "- Noise floor: two campaigns of the same library files on this system (A–A) differed by a median of {} % and at most {} % over {} operations (robust estimates; largest interval half-width {} %). Smaller differences between instances are not meaningful here.",
            pct("median_abs_change"),
            pct("max_abs_change"),
            nf.get("ops").and_then(|x| x.as_u64()).unwrap_or(0),
            pct("max_ci_half_width")
        ));
    } else {
        out.push("- Noise floor: no A–A comparison was recorded for this dataset.".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_states_what_was_recorded_and_nothing_else() {
        let old = serde_json::json!({"sandbox": "on", "namespaces": ["network", "mount"],
            "network": "none (empty network namespace)",
            "write_confinement": "landlock (scratch directory only)"});
        let t = containment(&old);
        assert!(t.ends_with("core dumps off."), "{t}");
        assert!(!t.contains("reads"), "{t}");
        let mut new = old.clone();
        new["namespaces"] = serde_json::json!(["pid", "network", "mount", "ipc", "uts"]);
        new["read_confinement"] = serde_json::json!("not in force (kernel without Landlock)");
        new["unix_sockets"] =
            serde_json::json!("refused (seccomp: creating one kills the process)");
        let t = sandbox_sentence(&new);
        assert!(
            t.contains("Namespaces: pid, network, mount, ipc, uts;"),
            "{t}"
        );
        assert!(
            t.contains(
                "reads: not in force (kernel without Landlock); unix-domain sockets: refused"
            ),
            "{t}"
        );
        assert!(!t.contains("signals"), "{t}");
        assert!(!t.contains("capabilities"), "{t}");
        // What issue 36 added is stated where it was recorded.
        new["capabilities"] = serde_json::json!("none (probed)");
        new["privileged_calls"] = serde_json::json!("refused with EPERM (seccomp): adjtimex");
        let t = sandbox_sentence(&new);
        assert!(
            t.contains("capabilities: none (probed); privileged system calls: refused with EPERM"),
            "{t}"
        );
        new["process_creation"] = serde_json::json!("refused to timing children (seccomp: fork)");
        let t = sandbox_sentence(&new);
        assert!(
            t.contains("; process creation: refused to timing children (seccomp: fork)"),
            "{t}"
        );
    }
}
