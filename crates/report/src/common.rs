//! Text shared by several pages: the clock text (method.md §13.3), the assessment
//! environment table (§3.3) and small cell helpers.

use pqperf_model::fields::Fields;

use crate::view::SystemView;
use pqperf_model::fmt::{DASH, fmt_f};

fn nonempty<'a>(env: &'a Fields, key: &str) -> Option<&'a str> {
    env.str(key).filter(|s| !s.is_empty())
}

/// turbo/boost state: `off`/`on` from intel_pstate no_turbo, else cpufreq boost, else unknown.
pub fn turbo(env: &Fields) -> &'static str {
    match nonempty(env, "intel_pstate_no_turbo") {
        Some("1") => return "off",
        Some("0") => return "on",
        _ => {}
    }
    match nonempty(env, "cpufreq_boost") {
        Some("0") => "off",
        Some("1") => "on",
        _ => "unknown",
    }
}

/// SMT state in words: sysfs `notsupported`/`notimplemented` shown as `none`, an empty or
/// missing value as `unknown`.
pub fn smt(env: &Fields) -> String {
    match nonempty(env, "smt_control") {
        Some("notsupported") | Some("notimplemented") => "none".into(),
        Some(s) => s.into(),
        None => "unknown".into(),
    }
}

fn ghz_from_khz(khz: &str) -> Option<String> {
    let v: f64 = khz.trim().parse().ok()?;
    Some(fmt_f(v / 1e6, 2))
}

/// Clock text of an environment (method.md §13.3).
pub fn clock_text(env: &Fields) -> String {
    let driver = nonempty(env, "cpufreq_driver");
    let mhz = env.f64("core_clock_mhz");
    if driver.is_none()
        && let Some(mhz) = mhz
    {
        return format!(
            "measured {} GHz, set by firmware (no OS frequency scaling or boost), SMT {}",
            fmt_f(mhz / 1000.0, 2),
            smt(env)
        );
    }
    let governor = env.str("cpufreq_governor").unwrap_or("unknown");
    let min = nonempty(env, "cpufreq_min_khz");
    let max = nonempty(env, "cpufreq_max_khz");
    if env.str("architecture") == Some("aarch64")
        && let (Some(min), Some(max)) = (min, max)
        && min == max
    {
        return format!(
            "fixed {} GHz (governor {governor}, minimum = maximum), boost {}, SMT {}",
            ghz_from_khz(max).unwrap_or_else(|| DASH.into()),
            turbo(env),
            smt(env)
        );
    }
    let max = match max.and_then(ghz_from_khz) {
        Some(g) => format!("max {g} GHz"),
        None => "clock unknown".into(),
    };
    format!(
        "{max}, governor {governor}, turbo {}, SMT {}",
        turbo(env),
        smt(env)
    )
}

/// First 19 characters of a timestamp (`YYYY-MM-DDTHH:MM:SS`), `–` when missing.
pub fn stamp(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.chars().take(19).collect(),
        _ => DASH.into(),
    }
}

/// The "Assessment environment" table (method.md §3.3). Values come from the environment of
/// the record the pages show (campaign.json's when none has one) and campaign.json's times.
/// On a candidate page (`cand`) each value links to a record of that candidate whose
/// environment holds the same value, at the field (else to the record the value was read
/// from); elsewhere to the record it was read from.
pub fn environment_table(v: &SystemView, cand: Option<&str>) -> crate::page::Table {
    use crate::page::{Cell, Table};
    let env = v.env();
    // The evidence of the environment: the record it was read from, else campaign.json
    // (whose snapshot is `environment_at_start`).
    let (shown_ev, env_root) = match v
        .records
        .iter()
        .find(|r| std::ptr::eq(&r.rec.environment, env))
    {
        Some(r) => (r.evidence(&v.id), "/environment"),
        None => (v.file_evidence("campaign.json"), "/environment_at_start"),
    };
    // This candidate's complete records with an environment, those on the shown CPU first.
    let own: Vec<crate::view::RecordRef> = match cand {
        Some(c) => {
            let cpu = crate::view::cpu_str(env);
            let mut rs: Vec<_> = v
                .labels(c)
                .iter()
                .flat_map(|l| v.records_of(c, l))
                .filter(|r| r.complete() && !r.rec.environment.is_empty())
                .collect();
            rs.sort_by_key(|r| crate::view::cpu_str(&r.rec.environment) != cpu);
            rs
        }
        None => Vec::new(),
    };
    let mut t = Table::new(["item", "value"]);
    // One row: its text from an environment, and the field that holds it.
    let mut row = |item: &str, text_of: &dyn Fn(&Fields) -> String, key: &str| {
        let value = text_of(env);
        let cell = match own.iter().find(|r| text_of(&r.rec.environment) == value) {
            Some(r) => {
                Cell::value(value, Some(r.evidence(&v.id))).at(format!("/environment/{key}"))
            }
            None => Cell::value(value, Some(shown_ev.clone())).at(format!("{env_root}/{key}")),
        };
        t.row(vec![Cell::text(item), cell]);
    };
    row(
        "processor",
        &|e: &Fields| {
            format!(
                "{} (CPU {}, one core)",
                e.str("cpu_model").unwrap_or(DASH),
                crate::view::cpu_str(e)
            )
        },
        "cpu_model",
    );
    if env.str("machine").is_some() {
        row(
            "machine",
            &|e: &Fields| e.str("machine").unwrap_or(DASH).to_string(),
            "machine",
        );
    }
    let clock_key =
        if nonempty(env, "cpufreq_driver").is_none() && env.f64("core_clock_mhz").is_some() {
            "core_clock_mhz"
        } else {
            "cpufreq_max_khz"
        };
    row("clock", &|e: &Fields| clock_text(e), clock_key);
    row(
        "memory",
        &|e: &Fields| {
            e.u64("memory_total_kib")
                .map(|k| format!("{} MiB", k / 1024))
                .unwrap_or_else(|| DASH.into())
        },
        "memory_total_kib",
    );
    row(
        "OS / kernel",
        &|e: &Fields| {
            format!(
                "{} / {}",
                e.str("os").unwrap_or(DASH),
                e.str("kernel").unwrap_or(DASH)
            )
        },
        "os",
    );
    row(
        "compiler / build tool",
        &|e: &Fields| {
            format!(
                "{} / {}",
                e.str("compiler").unwrap_or(DASH),
                e.str("cmake").unwrap_or(DASH)
            )
        },
        "compiler",
    );
    t.row(vec![
        Cell::text("campaign start / end (UTC)"),
        Cell::value(
            format!(
                "{} / {}",
                stamp(v.campaign.started_utc.as_deref()),
                stamp(v.campaign.ended_utc.as_deref())
            ),
            Some(v.file_evidence("campaign.json")),
        )
        .at("/started_utc"),
    ]);
    t
}

/// Backtick-wrapped code span, safe in a table cell (`pqperf_model::md::code_span`: the
/// identity wrap for ordinary names).
pub fn code(s: &str) -> String {
    crate::md::code_span(s)
}

/// `5` → `five` (one to ten spelled out as the reference pages do), else digits.
pub fn count_word(n: u64) -> String {
    const W: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    W.get(n as usize)
        .map(|w| w.to_string())
        .unwrap_or_else(|| n.to_string())
}

/// Trials per operation and minimum total calls from the dataset's planning (reference
/// constants 5 and 100 only when campaign.json records no planning).
pub fn trials_and_min_calls(v: &SystemView) -> (u64, u64) {
    v.campaign
        .planning
        .as_ref()
        .map(|p| (p.trials, p.min_total))
        .unwrap_or((5, 100))
}

/// The number of trials as the pages state it: the plan's count (`five`) for reference
/// datasets and when every pqperf record ran exactly that many; else the range the records
/// hold (`5–72`), since pqperf's `--target-ci` adds trials per operation.
pub fn trials_text(v: &SystemView) -> String {
    let (planned, _) = trials_and_min_calls(v);
    let counts: Vec<usize> = v
        .records
        .iter()
        .map(|r| r.rec.trials.len())
        .filter(|n| *n > 0)
        .collect();
    let (Some(lo), Some(hi)) = (counts.iter().min(), counts.iter().max()) else {
        return count_word(planned);
    };
    if !by_pqperf(v) || (*lo as u64 == planned && *hi as u64 == planned) {
        count_word(planned)
    } else if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// The host state as read from a record or campaign environment: turbo, governor and SMT,
/// each `unknown` when it could not be read.
pub fn host_properties(env: &Fields) -> String {
    format!(
        "turbo {}, governor {}, SMT {}",
        turbo(env),
        nonempty(env, "cpufreq_governor").unwrap_or("unknown"),
        smt(env)
    )
}

/// The notice every page of a system shows when the evidence does not record a fixed host:
/// each problem the host checks found, by name. `None` when every check passed.
pub fn host_notice(v: &SystemView) -> Option<String> {
    let host = host_state_notice(v);
    match v.campaign.emulated() {
        None => host,
        Some(e) => {
            let first = format!(
                "**emulated: timings are not performance figures.** This system ran its code under {e} (`pqperf.emulated` in `campaign.json`): the figures show that the pipeline ran, not how fast the code is on real hardware."
            );
            Some(match host {
                Some(h) => format!("{first}\n\n{h}"),
                None => first,
            })
        }
    }
}

fn host_state_notice(v: &SystemView) -> Option<String> {
    use pqperf_model::HostState;
    match v.campaign.host_state() {
        HostState::Fixed => None,
        HostState::NotFixed(problems) => Some(format!(
            "**The host was not fixed.** The host checks recorded in `campaign.json` found: {}. These numbers come from an unprepared machine and are not comparable with those of a fixed-clock system.",
            problems.join("; ")
        )),
        HostState::Unknown => Some(
            "**Host state unknown.** `campaign.json` records no host-check outcome, so nothing is known about the clock, turbo, governor or SMT state during timing.".into(),
        ),
    }
}

/// The producer of the dataset as one sentence, for pqperf datasets: tool, version and the
/// commands it ran (as recorded in `campaign.json`). `None` for the reference harness.
pub fn pqperf_provenance(v: &SystemView) -> Option<String> {
    match v.campaign.producer() {
        pqperf_model::Producer::ReferenceHarness => None,
        pqperf_model::Producer::Pqperf {
            version,
            commit,
            commands,
        } => {
            let version = version
                .map(|s| format!(" {s}"))
                .unwrap_or_else(|| " (version not recorded)".into());
            let version = match commit.as_deref() {
                None => version,
                Some("unknown") => format!("{version} (git commit unknown)"),
                Some(c) => format!("{version} (git commit {c})"),
            };
            let cmds = if commands.is_empty() {
                "the commands are not recorded".to_string()
            } else {
                format!(
                    "commands run: {}",
                    commands
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Some(format!("Produced by pqperf{version}; {cmds}."))
        }
    }
}

/// [`pqperf_provenance`] for a page's notes: each argument longer than 48 characters (a long
/// `--only` regex) shortened to its first 40 and `…`; the method page has them whole.
pub fn pqperf_provenance_short(v: &SystemView) -> Option<String> {
    let full = pqperf_provenance(v)?;
    let mut shortened = false;
    let words: Vec<String> = full
        .split(' ')
        .map(|w| {
            if w.chars().count() > 48 {
                shortened = true;
                let mut s: String = w.chars().take(40).collect();
                s.push('…');
                // Keep a code span closed when the word ended one.
                if w.ends_with("`,") {
                    s.push_str("`,");
                } else if w.ends_with("`.") {
                    s.push_str("`.");
                } else if w.ends_with('`') {
                    s.push('`');
                }
                s
            } else {
                w.to_string()
            }
        })
        .collect();
    let mut out = words.join(" ");
    if shortened {
        out.push_str(" (long arguments shortened here; the method page has them whole)");
    }
    Some(out)
}

/// True when the dataset was produced by pqperf (its pages link only to files pqperf
/// publishes, not to the reference harness's documents).
pub fn by_pqperf(v: &SystemView) -> bool {
    matches!(v.campaign.producer(), pqperf_model::Producer::Pqperf { .. })
}
