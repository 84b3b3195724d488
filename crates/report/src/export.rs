//! The summary as data files: one row per timing record of a system (instance, operation,
//! counter, mean, time, robust estimate and its interval, evidence path, instructions per
//! call where counted), gathered once by
//! [`summary_rows`] and serialised by an [`Exporter`]: [`CsvExporter`], [`JsonExporter`], or
//! [`MarkupExporter`], which builds one [`Table`] of the rows and renders it as Markdown.

use serde::Serialize;

use crate::page::{Cell, Evidence, Table};
use crate::view::SystemView;
use pqperf_model::fmt::{DASH, fmt_cycles, fmt_f, fmt_time};

/// One exported row: a timing record of one instance and operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// System id.
    pub system: String,
    /// Candidate id.
    pub id: String,
    /// Algorithm name (downloads.csv, else the id).
    pub algorithm: String,
    /// Instance label.
    pub instance: String,
    /// `reference`, `optimized`, …
    pub variant: String,
    /// Operation key (`sign`, `hash_1024`).
    pub operation: String,
    /// Record status (`complete`, `failed`, …).
    pub status: String,
    /// Unit of `mean`: `cycles`, or `ticks` of the named tick counter.
    pub counter: String,
    /// Mean per call in the counter's unit.
    pub mean: Option<f64>,
    /// Mean per call in seconds.
    pub mean_seconds: Option<f64>,
    /// Timed calls.
    pub measurements: Option<u64>,
    /// pqperf's robust per-call estimate (seconds), when recorded.
    pub robust_seconds: Option<f64>,
    /// Lower end of its interval (seconds).
    pub robust_ci_low_seconds: Option<f64>,
    /// Upper end of its interval (seconds).
    pub robust_ci_high_seconds: Option<f64>,
    /// The robust estimator (`p50`, `mean_robust_v2`, `trimmed_mean_20`), when recorded.
    pub robust_estimator: Option<String>,
    /// Per-call median of the sampled calls (seconds), when recorded.
    pub per_call_p50_seconds: Option<f64>,
    /// Per-call 90th percentile (seconds).
    pub per_call_p90_seconds: Option<f64>,
    /// Per-call 99th percentile (seconds).
    pub per_call_p99_seconds: Option<f64>,
    /// KAT verdict of the instance.
    pub kat: String,
    /// The record file, relative to the dataset root.
    pub evidence: String,
    /// Instructions one call executes (median over the counted calls, callgrind), when the
    /// dataset has a count of the same library: work done, not time.
    pub instructions_per_call: Option<f64>,
    /// The count file, relative to the dataset root, when counted.
    pub count_evidence: Option<String>,
}

/// The rows of system `v`: every timing record (the ICCS helpers included), in the view's
/// path order.
pub fn summary_rows(v: &SystemView) -> Vec<SummaryRow> {
    let counter =
        crate::counter::tick_counter(v).map_or_else(|| "cycles".to_string(), |t| t.unit());
    v.records
        .iter()
        .map(|r| {
            let rb = r.rec.pqperf.as_ref().and_then(|p| p.robust.as_ref());
            let q = r
                .rec
                .pqperf
                .as_ref()
                .and_then(|p| p.per_call_seconds.as_ref());
            let cand = r.rec.candidate.as_str();
            // The count of the same library and operation (never another build's).
            let count = v.count.iter().find(|c| {
                c.value.candidate == cand
                    && c.value.label == r.rec.label
                    && c.value.operation == r.opkey()
                    && c.value.status == "counted"
                    && c.value.library_sha256.is_some()
                    && c.value.library_sha256 == r.rec.library_sha256
            });
            let rel = match r.evidence(&v.id) {
                Evidence::Run { path, .. } => format!("{}/{path}", v.run_dir),
                Evidence::Side(name) => format!("performance/{name}"),
            };
            SummaryRow {
                system: v.id.clone(),
                id: cand.to_string(),
                algorithm: v.side.algorithm(cand).unwrap_or(cand).to_string(),
                instance: r.rec.label.clone(),
                variant: r.rec.variant.clone(),
                operation: r.opkey(),
                status: r.rec.status.clone(),
                counter: counter.clone(),
                mean: r.rec.mean_cycles,
                mean_seconds: r.rec.mean_seconds,
                measurements: r.rec.measurements,
                robust_seconds: rb.map(|b| b.estimate_seconds),
                robust_ci_low_seconds: rb.map(|b| b.ci_low_seconds),
                robust_ci_high_seconds: rb.map(|b| b.ci_high_seconds),
                robust_estimator: rb.map(|b| b.estimator.clone()),
                per_call_p50_seconds: q.map(|q| q.p50),
                per_call_p90_seconds: q.map(|q| q.p90),
                per_call_p99_seconds: q.map(|q| q.p99),
                kat: v.kat_status(cand, &r.rec.label).unwrap_or_default(),
                evidence: rel,
                instructions_per_call: count
                    .and_then(|c| c.value.instructions_per_call)
                    .map(|s| s.median),
                count_evidence: count
                    .map(|c| format!("{}/{}", v.run_dir, c.path.to_string_lossy())),
            }
        })
        .collect()
}

/// Serialises exported rows into the bytes of one file.
pub trait Exporter {
    /// The file's bytes.
    fn serialize(&self, rows: &[SummaryRow]) -> Vec<u8>;
    /// The usual file-name extension (`csv`, `json`, `md`).
    fn extension(&self) -> &'static str;
}

/// `;`-separated CSV with a header (the side tables' dialect, `sidecsv::write_csv`); numbers
/// in full precision, empty when unknown.
pub struct CsvExporter;

/// The column names of the CSV export (the [`SummaryRow`] fields).
pub const CSV_COLUMNS: [&str; 22] = [
    "system",
    "id",
    "algorithm",
    "instance",
    "variant",
    "operation",
    "status",
    "counter",
    "mean",
    "mean_seconds",
    "measurements",
    "robust_seconds",
    "robust_ci_low_seconds",
    "robust_ci_high_seconds",
    "kat",
    "evidence",
    "robust_estimator",
    "per_call_p50_seconds",
    "per_call_p90_seconds",
    "per_call_p99_seconds",
    "instructions_per_call",
    "count_evidence",
];

impl Exporter for CsvExporter {
    fn serialize(&self, rows: &[SummaryRow]) -> Vec<u8> {
        let f = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.system.clone(),
                    r.id.clone(),
                    r.algorithm.clone(),
                    r.instance.clone(),
                    r.variant.clone(),
                    r.operation.clone(),
                    r.status.clone(),
                    r.counter.clone(),
                    f(r.mean),
                    f(r.mean_seconds),
                    r.measurements.map(|n| n.to_string()).unwrap_or_default(),
                    f(r.robust_seconds),
                    f(r.robust_ci_low_seconds),
                    f(r.robust_ci_high_seconds),
                    r.kat.clone(),
                    r.evidence.clone(),
                    r.robust_estimator.clone().unwrap_or_default(),
                    f(r.per_call_p50_seconds),
                    f(r.per_call_p90_seconds),
                    f(r.per_call_p99_seconds),
                    f(r.instructions_per_call),
                    r.count_evidence.clone().unwrap_or_default(),
                ]
            })
            .collect();
        pqperf_model::sidecsv::write_csv(&CSV_COLUMNS, &table).into_bytes()
    }

    fn extension(&self) -> &'static str {
        "csv"
    }
}

/// A JSON array of row objects (pretty-printed, one trailing newline).
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, rows: &[SummaryRow]) -> Vec<u8> {
        // Serialising plain structs of strings and numbers cannot fail.
        let mut out = serde_json::to_vec_pretty(rows).unwrap_or_default();
        out.push(b'\n');
        out
    }

    fn extension(&self) -> &'static str {
        "json"
    }
}

/// A Markdown table of the rows (formatted as the pages format numbers), built once as a
/// [`Table`] whose value cells carry their record as evidence.
pub struct MarkupExporter;

impl MarkupExporter {
    /// The table of the rows.
    pub fn table(rows: &[SummaryRow]) -> Table {
        let mut t = Table::new([
            "id",
            "instance",
            "operation",
            "robust (95 % CI)",
            "mean",
            "time",
            "KAT",
        ]);
        t.status_column = Some(6);
        for r in rows {
            let ev = Some(Evidence::Run {
                system: r.system.clone(),
                path: r
                    .evidence
                    .split_once(&format!("{}/", r.system))
                    .map(|(_, p)| p.to_string())
                    .unwrap_or_else(|| r.evidence.clone()),
            });
            let robust = match (
                r.robust_seconds,
                r.robust_ci_low_seconds,
                r.robust_ci_high_seconds,
            ) {
                (Some(e), Some(lo), Some(hi)) => format!(
                    "{} ({} – {})",
                    fmt_time(Some(e)),
                    fmt_time(Some(lo)),
                    fmt_time(Some(hi))
                ),
                _ => DASH.into(),
            };
            let mean = match r.mean {
                Some(m) if r.counter == "cycles" => fmt_cycles(Some(m)),
                Some(m) => format!("{} ticks", fmt_f(m, 0)),
                None => DASH.into(),
            };
            t.row(vec![
                Cell::text(crate::common::code(&r.id)),
                Cell::text(crate::common::code(&r.instance)),
                Cell::text(r.operation.clone()),
                Cell::value(robust, ev.clone()),
                Cell::value(mean, ev.clone()),
                Cell::value(fmt_time(r.mean_seconds), ev),
                Cell::text(if r.kat.is_empty() { DASH } else { &r.kat }),
            ]);
        }
        t
    }
}

impl Exporter for MarkupExporter {
    fn serialize(&self, rows: &[SummaryRow]) -> Vec<u8> {
        crate::join_lines(&MarkupExporter::table(rows).markdown_lines()).into_bytes()
    }

    fn extension(&self) -> &'static str {
        "md"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> SummaryRow {
        SummaryRow {
            system: "x86_1".into(),
            id: "ml-kem-512".into(),
            algorithm: "ML-KEM-512".into(),
            instance: "clean".into(),
            variant: "reference".into(),
            operation: "enc".into(),
            status: "complete".into(),
            counter: "ticks (TSC)".into(),
            mean: Some(61234.0),
            mean_seconds: Some(2.5e-5),
            measurements: Some(500),
            robust_seconds: Some(2.4e-5),
            robust_ci_low_seconds: Some(2.3e-5),
            robust_ci_high_seconds: Some(2.6e-5),
            robust_estimator: Some("p50".into()),
            per_call_p50_seconds: Some(2.4e-5),
            per_call_p90_seconds: Some(2.5e-5),
            per_call_p99_seconds: Some(4e-5),
            kat: "PASS".into(),
            evidence: "performance/data/x86_1/records/ml-kem-512/clean__enc.json".into(),
            instructions_per_call: Some(18274.0),
            count_evidence: Some("performance/data/x86_1/count/ml-kem-512/clean__enc.json".into()),
        }
    }

    #[test]
    fn csv_json_and_markup_of_one_row() {
        let rows = vec![row()];
        let csv = String::from_utf8(CsvExporter.serialize(&rows)).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next().unwrap(), CSV_COLUMNS.join(";"));
        assert_eq!(
            lines.next().unwrap(),
            "x86_1;ml-kem-512;ML-KEM-512;clean;reference;enc;complete;ticks (TSC);61234;0.000025;500;0.000024;0.000023;0.000026;PASS;performance/data/x86_1/records/ml-kem-512/clean__enc.json;p50;0.000024;0.000025;0.00004;18274;performance/data/x86_1/count/ml-kem-512/clean__enc.json"
        );
        let json: serde_json::Value =
            serde_json::from_slice(&JsonExporter.serialize(&rows)).unwrap();
        assert_eq!(json[0]["robust_ci_high_seconds"], 2.6e-5);
        assert_eq!(json[0]["operation"], "enc");
        assert_eq!(json[0]["instructions_per_call"], 18274.0);
        let t = MarkupExporter::table(&rows);
        assert_eq!(
            t.rows[0][3].evidence,
            Some(Evidence::Run {
                system: "x86_1".into(),
                path: "records/ml-kem-512/clean__enc.json".into()
            })
        );
        let md = String::from_utf8(MarkupExporter.serialize(&rows)).unwrap();
        assert!(
            md.starts_with("| id | instance | operation | robust (95 % CI) | mean |"),
            "{md}"
        );
        assert!(
            md.contains("| `ml-kem-512` | `clean` | enc | 24 µs (23 µs – 26 µs) | 61234 ticks |"),
            "{md}"
        );
    }
}
