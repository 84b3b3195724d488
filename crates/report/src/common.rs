//! Text shared by several pages: the clock text (method.md §13.3), the assessment
//! environment table (§3.3) and small cell helpers.

use pqperf_model::fields::Fields;

use crate::fmt::{DASH, fmt_f};
use crate::view::SystemView;

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

/// SMT state with `notsupported`/`notimplemented` shown as `none`.
pub fn smt(env: &Fields) -> String {
    match env.str("smt_control") {
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
    format!(
        "max {} GHz, governor {governor}, turbo {}, SMT {}",
        max.and_then(ghz_from_khz).unwrap_or_else(|| DASH.into()),
        turbo(env),
        env.str("smt_control").unwrap_or("unknown")
    )
}

/// First 19 characters of a timestamp (`YYYY-MM-DDTHH:MM:SS`), `–` when missing.
pub fn stamp(s: Option<&str>) -> String {
    match s {
        Some(s) if !s.is_empty() => s.chars().take(19).collect(),
        _ => DASH.into(),
    }
}

/// The "Assessment environment" table rows (method.md §3.3), header included.
pub fn environment_table(v: &SystemView) -> Vec<String> {
    let env = v.env();
    let text = |k: &str| env.str(k).unwrap_or(DASH).to_string();
    let mut lines = vec!["| item | value |".to_string(), "|---|---|".to_string()];
    lines.push(format!(
        "| processor | {} (CPU {}, one core) |",
        text("cpu_model"),
        crate::view::cpu_str(env)
    ));
    if let Some(m) = env.str("machine") {
        lines.push(format!("| machine | {m} |"));
    }
    lines.push(format!("| clock | {} |", clock_text(env)));
    let mem = env
        .u64("memory_total_kib")
        .map(|k| format!("{} MiB", k / 1024))
        .unwrap_or_else(|| DASH.into());
    lines.push(format!("| memory | {mem} |"));
    lines.push(format!(
        "| OS / kernel | {} / {} |",
        text("os"),
        text("kernel")
    ));
    lines.push(format!(
        "| compiler / build tool | {} / {} |",
        text("compiler"),
        text("cmake")
    ));
    lines.push(format!(
        "| campaign start / end (UTC) | {} / {} |",
        stamp(v.campaign.started_utc.as_deref()),
        stamp(v.campaign.ended_utc.as_deref())
    ));
    lines
}

/// Backtick-wrapped code span.
pub fn code(s: &str) -> String {
    format!("`{s}`")
}
