//! Inline SVG charts drawn by our own code: log-scale grouped bars (cycles per operation per
//! instance), a log-log size-vs-speed scatter, and per-call distributions (p50/p90/p99).
//! Output is deterministic (fixed decimals, input order) and every text is escaped; marks
//! link to the evidence file of their value. Colours come from CSS classes so the charts
//! follow the light/dark theme.

use std::fmt::Write;

use crate::html::escape;
use pqperf_model::fmt;
use pqperf_model::record::Quantiles;

const W: f64 = 720.0;

/// One bar or point value with its evidence link (site-relative href, already relative to
/// the page that embeds the chart).
#[derive(Clone, Debug)]
pub struct Value {
    /// The value drawn.
    pub value: f64,
    /// Link to the evidence the value came from.
    pub href: Option<String>,
}

/// A log10 axis over [lo, hi] (decades).
struct LogAxis {
    lo: f64,
    hi: f64,
}

impl LogAxis {
    fn over(values: impl Iterator<Item = f64>) -> Option<LogAxis> {
        let (mut min, mut max) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            min = min.min(v);
            max = max.max(v);
        }
        if !min.is_finite() {
            return None;
        }
        let mut lo = min.log10().floor();
        let mut hi = max.log10().ceil();
        if hi <= lo {
            hi = lo + 1.0;
        }
        if hi - lo > 12.0 {
            lo = hi - 12.0;
        }
        if lo < 0.0 && min >= 1.0 {
            lo = 0.0;
        }
        Some(LogAxis { lo, hi })
    }

    /// Position in [0, 1].
    fn frac(&self, v: f64) -> f64 {
        if v <= 0.0 {
            return 0.0;
        }
        ((v.log10() - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0)
    }

    fn ticks(&self) -> Vec<f64> {
        let span = (self.hi - self.lo) as i32;
        let step = if span > 8 { 2 } else { 1 };
        (0..=span)
            .step_by(step)
            .map(|k| 10f64.powi(self.lo as i32 + k))
            .collect()
    }
}

fn open(out: &mut String, h: f64, title: &str, class: &str) {
    let _ = write!(
        out,
        "<figure class=\"chart {class}\"><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W:.0} {h:.0}\" role=\"img\" aria-label=\"{t}\"><title>{t}</title>",
        t = escape(title)
    );
}

fn close(out: &mut String, caption: &str) {
    let _ = writeln!(
        out,
        "</svg><figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

fn mark_open(out: &mut String, href: &Option<String>) {
    if let Some(h) = href {
        let _ = write!(out, "<a href=\"{}\">", escape(h));
    }
}

fn mark_close(out: &mut String, href: &Option<String>) {
    if href.is_some() {
        out.push_str("</a>");
    }
}

/// Grouped horizontal bars on a log scale: one group per instance, one bar per series
/// (operation). `groups` = (instance label, one value per series, `None` where missing).
pub fn bars_log(
    title: &str,
    unit: &str,
    series: &[String],
    groups: &[(String, Vec<Option<Value>>)],
) -> Option<String> {
    let axis = LogAxis::over(
        groups
            .iter()
            .flat_map(|(_, vs)| vs.iter().flatten().map(|v| v.value)),
    )?;
    let (left, right, top) = (170.0, 20.0, 34.0);
    let bar = 11.0;
    let gap = 10.0;
    let group_h = bar * series.len() as f64 + gap;
    let plot_h = group_h * groups.len() as f64;
    let h = top + plot_h + 40.0;
    let pw = W - left - right;
    let mut out = String::new();
    open(&mut out, h, title, "bars");
    // Legend.
    let mut lx = left;
    for (i, s) in series.iter().enumerate() {
        let _ = write!(
            out,
            "<rect class=\"s{i}\" x=\"{lx:.1}\" y=\"8\" width=\"10\" height=\"10\"/><text x=\"{:.1}\" y=\"17\">{}</text>",
            lx + 14.0,
            escape(s)
        );
        lx += 24.0 + 8.5 * s.chars().count() as f64;
    }
    // Grid and ticks.
    for t in axis.ticks() {
        let x = left + axis.frac(t) * pw;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top + plot_h,
            top + plot_h + 14.0,
            fmt::axis(t)
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} (log scale)</text>",
        left + pw / 2.0,
        h - 6.0,
        escape(unit)
    );
    for (g, (label, values)) in groups.iter().enumerate() {
        let gy = top + g as f64 * group_h;
        let _ = write!(
            out,
            "<text class=\"cat\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            gy + (group_h - gap) / 2.0 + 4.0,
            escape(label)
        );
        for (i, v) in values.iter().enumerate() {
            let Some(v) = v else { continue };
            let y = gy + i as f64 * bar;
            let wbar = (axis.frac(v.value) * pw).max(1.0);
            mark_open(&mut out, &v.href);
            let _ = write!(
                out,
                "<rect class=\"s{i}\" x=\"{left:.1}\" y=\"{y:.1}\" width=\"{wbar:.1}\" height=\"{:.1}\"><title>{} {}: {} {}</title></rect>",
                bar - 1.0,
                escape(label),
                escape(series.get(i).map(String::as_str).unwrap_or("")),
                fmt::fmt_cycles(Some(v.value)),
                escape(unit)
            );
            mark_close(&mut out, &v.href);
        }
    }
    close(&mut out, title);
    Some(out)
}

/// A point of the size-vs-speed scatter.
#[derive(Clone, Debug)]
pub struct Point {
    /// Text next to the point.
    pub label: String,
    /// Tooltip (`<title>`).
    pub title: String,
    /// x value (bytes).
    pub x: f64,
    /// y value (cycles).
    pub y: f64,
    /// Link to the evidence the point came from.
    pub href: Option<String>,
}

/// Log-log scatter (x: bytes, y: cycles), each point labelled.
pub fn scatter_log(title: &str, x_label: &str, y_label: &str, points: &[Point]) -> Option<String> {
    let xa = LogAxis::over(points.iter().map(|p| p.x))?;
    let ya = LogAxis::over(points.iter().map(|p| p.y))?;
    let (left, right, top, bottom) = (64.0, 24.0, 16.0, 46.0);
    let h = 420.0;
    let (pw, ph) = (W - left - right, h - top - bottom);
    let mut out = String::new();
    open(&mut out, h, title, "scatter");
    for t in xa.ticks() {
        let x = left + xa.frac(t) * pw;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top + ph,
            top + ph + 14.0,
            fmt::axis(t)
        );
    }
    for t in ya.ticks() {
        let y = top + (1.0 - ya.frac(t)) * ph;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left + pw,
            left - 4.0,
            y + 4.0,
            fmt::axis(t)
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} (log scale)</text><text class=\"axis-label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{} (log scale)</text>",
        left + pw / 2.0,
        h - 8.0,
        escape(x_label),
        top + ph / 2.0,
        escape(y_label)
    );
    for p in points {
        let x = left + xa.frac(p.x) * pw;
        let y = top + (1.0 - ya.frac(p.y)) * ph;
        // Labels of points in the right half go to their left, so they stay in the chart.
        let right_half = x > left + pw * 0.6;
        mark_open(&mut out, &p.href);
        let _ = write!(
            out,
            "<circle class=\"pt\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\"><title>{}</title></circle><text class=\"pt-label\" x=\"{:.1}\" y=\"{:.1}\"{}>{}</text>",
            escape(&p.title),
            if right_half { x - 6.0 } else { x + 6.0 },
            y - 5.0,
            if right_half {
                " text-anchor=\"end\""
            } else {
                ""
            },
            escape(&p.label)
        );
        mark_close(&mut out, &p.href);
    }
    close(&mut out, title);
    Some(out)
}

/// Per-call distribution rows: (label, the record's per-call quantiles, evidence href); the
/// chart draws p50, p90 and p99.
pub fn distribution(
    title: &str,
    unit: &str,
    rows: &[(String, &Quantiles, Option<String>)],
) -> Option<String> {
    let axis = LogAxis::over(rows.iter().flat_map(|(_, q, _)| [q.p50, q.p90, q.p99]))?;
    let (left, right, top) = (200.0, 20.0, 30.0);
    let row_h = 18.0;
    let plot_h = row_h * rows.len() as f64;
    let h = top + plot_h + 40.0;
    let pw = W - left - right;
    let mut out = String::new();
    open(&mut out, h, title, "dist");
    let _ = write!(
        out,
        "<line class=\"s0 whisker\" x1=\"{left:.1}\" y1=\"13\" x2=\"{:.1}\" y2=\"13\"/><circle class=\"s1\" cx=\"{left:.1}\" cy=\"13\" r=\"4\"/><text x=\"{:.1}\" y=\"17\">p50 (dot), p90 (bar end), p99 (line end)</text>",
        left + 30.0,
        left + 38.0
    );
    for t in axis.ticks() {
        let x = left + axis.frac(t) * pw;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top + plot_h,
            top + plot_h + 14.0,
            fmt::axis(t)
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} per call (log scale)</text>",
        left + pw / 2.0,
        h - 6.0,
        escape(unit)
    );
    for (i, (label, q, href)) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h + row_h / 2.0;
        let [x50, x90, x99] = [q.p50, q.p90, q.p99].map(|v| left + axis.frac(v) * pw);
        let _ = write!(
            out,
            "<text class=\"cat\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 4.0,
            escape(label)
        );
        mark_open(&mut out, href);
        let _ = write!(
            out,
            "<g><title>{}: p50 {}, p90 {}, p99 {} {}</title><line class=\"s0 whisker\" x1=\"{x50:.1}\" y1=\"{y:.1}\" x2=\"{x99:.1}\" y2=\"{y:.1}\"/><rect class=\"s0\" x=\"{x50:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"8\"/><circle class=\"s1\" cx=\"{x50:.1}\" cy=\"{y:.1}\" r=\"4\"/></g>",
            escape(label),
            fmt::fmt_cycles(Some(q.p50)),
            fmt::fmt_cycles(Some(q.p90)),
            fmt::fmt_cycles(Some(q.p99)),
            escape(unit),
            y - 4.0,
            (x90 - x50).max(1.0)
        );
        mark_close(&mut out, href);
    }
    close(&mut out, title);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64) -> Option<Value> {
        Some(Value {
            value: x,
            href: Some("evidence/a \"b\".json".into()),
        })
    }

    #[test]
    fn bars_are_deterministic_and_escaped() {
        let groups = vec![
            (
                "<script>alert(1)</script>".to_string(),
                vec![v(1e3), v(2.5e6), None],
            ),
            ("x\"y".to_string(), vec![v(4e4), v(9e9), v(12.0)]),
        ];
        let series = vec![
            "keygen".to_string(),
            "sign".to_string(),
            "verify".to_string(),
        ];
        let a = bars_log("t <b>", "cycles", &series, &groups).unwrap();
        let b = bars_log("t <b>", "cycles", &series, &groups).unwrap();
        assert_eq!(a, b);
        assert!(!a.contains("<script>"));
        assert!(a.contains("&lt;script&gt;"));
        assert!(a.contains("x&quot;y"));
        assert!(a.contains("href=\"evidence/a &quot;b&quot;.json\""));
        assert_eq!(a.matches("<rect class=\"s").count(), 3 + 5);
        assert!(bars_log("t", "c", &series, &[]).is_none());
    }

    #[test]
    fn log_axis_covers_decades() {
        let a = LogAxis::over([150.0, 3.2e6].into_iter()).unwrap();
        assert_eq!((a.lo, a.hi), (2.0, 7.0));
        assert_eq!(a.ticks().len(), 6);
        assert!((a.frac(1e3) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn scatter_and_distribution() {
        let pts = vec![Point {
            label: "sign-02".into(),
            title: "BiT-128".into(),
            x: 1504.0,
            y: 1.7e6,
            href: None,
        }];
        let s = scatter_log("s", "signature bytes", "sign cycles", &pts).unwrap();
        assert!(s.contains("<circle class=\"pt\""));
        let q = Quantiles {
            samples: 100,
            method: "linear".into(),
            min: 0.9e6,
            p50: 1e6,
            p90: 1.2e6,
            p99: 2e6,
            max: 3e6,
        };
        let rows = [("BiT-128 sign".into(), &q, None)];
        let d = distribution("d", "cycles", &rows).unwrap();
        assert!(d.contains("p50 1.00 M, p90 1.20 M, p99 2.00 M cycles"));
        assert!(d.contains(">cycles per call (log scale)<"));
        let t = distribution("d", "ticks (TSC)", &rows).unwrap();
        assert!(t.contains("p99 2.00 M ticks (TSC)"), "{t}");
        assert!(t.contains(">ticks (TSC) per call (log scale)<"), "{t}");
        assert!(!t.contains("cycles"), "{t}");
    }
}
