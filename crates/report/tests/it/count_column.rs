//! The `instructions/call` column of the performance table, on a golden copy with added
//! count evidence (`performance/data/x86_1/count/<id>/<label>__<op>.json`): shown with its
//! sentence only for a candidate with counts, in both forms; other
//! candidates' pages are unchanged; validation accepts the count folder with its timing
//! cross-check, and a count that makes the timed figure impossible is named on the page and
//! found by validation. (Golden pages stay
//! byte-identical: tests/golden_pages.rs.)

use pqperf_model::count::{CountEvidence, ESTIMATED_CYCLES_FORMULA, Spread};
use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page, summary_page};

use crate::common;
use common::*;

#[test]
fn count_evidence_gives_the_column() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let ds = Dataset::load(&root).unwrap();
    let before = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    let other_before = candidate_page(&ds, "x86_1", "sign-02", Form::Harness).unwrap();
    assert!(!before.contains("instructions/call"), "golden page changed");
    // The reference's evidence has no counts: its summary has no instruction column or note.
    let summary_before = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(
        !summary_before.contains("nstructions/call"),
        "golden summary changed"
    );
    let sha = ds
        .system("x86_1")
        .unwrap()
        .build
        .as_ref()
        .unwrap()
        .value
        .entry("sign-08", "DARTS128")
        .unwrap()
        .library_sha256
        .clone();
    let s = Spread::of(&[434_542, 434_542]).unwrap();
    let mut ev = CountEvidence {
        schema: 1,
        candidate: "sign-08".into(),
        label: "DARTS128".into(),
        operation: "sign".into(),
        status: "counted".into(),
        library_sha256: sha,
        symbol: "sig_sign".into(),
        calls: 2,
        calls_run: 3,
        instructions_per_call: Some(s),
        estimated_cycles_per_call: Some(s),
        estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
        ..Default::default()
    };
    ev.classes.insert("candidate".into(), 434_542.0.into());
    // The cross-check with the record of the same library, as the count stage writes it.
    let rec = ds
        .system("x86_1")
        .unwrap()
        .records
        .iter()
        .find(|r| r.value.label == "DARTS128" && r.value.operation == "sign")
        .unwrap();
    let rel = rec.path.to_string_lossy().into_owned();
    ev.timing_check = pqperf_model::count::timing_check(&ev, &rec.value, &rel);
    assert_eq!(
        ev.timing_check.as_ref().map(|t| t.verdict.as_str()),
        Some("possible")
    );
    let record_value = rec.value.clone();
    let p = root.join("performance/data/x86_1/count/sign-08/DARTS128__sign.json");
    let text = pqperf_model::pyjson::to_string(&ev).unwrap();
    pqperf_model::fsutil::write_atomic(&p, text.as_bytes()).unwrap();
    let ds = Dataset::load(&root).unwrap();
    assert_eq!(ds.system("x86_1").unwrap().count.len(), 1);
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    let header = page
        .lines()
        .find(|l| l.starts_with("| instance | operation |"))
        .unwrap();
    assert!(header.ends_with("| instructions/call |"), "{header}");
    let sign = page
        .lines()
        .find(|l| l.starts_with("| `DARTS128` | sign |"))
        .unwrap();
    assert!(sign.ends_with("| 434.5 k |"), "{sign}");
    let keygen = page
        .lines()
        .find(|l| l.starts_with("| `DARTS128` | keygen |"))
        .unwrap();
    assert!(keygen.ends_with("| – |"), "{keygen}");
    let note = page
        .lines()
        .find(|l| l.starts_with("`instructions/call` is the median number of instructions"))
        .unwrap();
    assert!(note.contains("work done, not time"), "{note}");
    assert!(
        note.contains("Cross-check with the timings: every timed figure is at least")
            && note.contains("(1 operation(s) checked)"),
        "{note}"
    );
    let site = candidate_page(&ds, "x86_1", "sign-08", Form::Site).unwrap();
    assert!(site.contains("| 434.5 k |"), "{site}");
    // The summary: an instruction column beside each signature timing, the count where there
    // is one (linked to its file on the site), `–` elsewhere, and the sentence on what a
    // count compares; the other categories' tables are unchanged.
    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    let head = summary
        .lines()
        .find(|l| l.starts_with("| id |") && l.contains("sign instructions/call"))
        .unwrap_or_else(|| panic!("{summary}"));
    for op in ["keygen", "sign", "verify"] {
        assert!(
            head.contains(&format!("| {op} instructions/call |")),
            "{head}"
        );
    }
    let cols: Vec<&str> = head.split('|').map(str::trim).collect();
    let at = |name: &str| cols.iter().position(|c| *c == name).unwrap();
    let row_of = |page: &str, label: &str| -> Vec<String> {
        page.lines()
            .find(|l| l.starts_with("| [sign-") && l.contains(label))
            .unwrap_or_else(|| panic!("{label} in {page}"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let darts = row_of(&summary, "`DARTS128`");
    assert_eq!(darts[at("sign instructions/call")], "434.5 k", "{darts:?}");
    assert_eq!(darts[at("keygen instructions/call")], "–", "{darts:?}");
    let note = summary
        .lines()
        .find(|l| l.starts_with("- **Instructions/call** is the median number of instructions"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        note.contains("work done, not time") && note.contains("does not rank speed"),
        "{note}"
    );
    let kem = |p: &str| -> Vec<String> {
        p.lines()
            .skip_while(|l| !l.starts_with("## ") || !l.contains("KEM"))
            .take_while(|l| !l.starts_with("## Key") && !l.starts_with("## Hash"))
            .map(String::from)
            .collect()
    };
    assert_eq!(kem(&summary), kem(&summary_before));
    let site = pqperf_report::summary_doc(&ds, "x86_1", Form::Site).unwrap();
    // On the site the cell opens the count file (the cell's evidence).
    assert!(
        site.blocks
            .iter()
            .map(|b| format!("{b:?}"))
            .any(|b| b.contains("sign instructions/call")
                && b.contains("count/sign-08/DARTS128__sign.json")),
        "the summary's count cell names its file"
    );
    // Another candidate without counts: its page is what it was.
    assert_eq!(
        candidate_page(&ds, "x86_1", "sign-02", Form::Harness).unwrap(),
        other_before
    );
    let rep = pqperf_validate::validate(&root, Some("x86_1"));
    assert!(
        !rep.problems
            .iter()
            .any(|p| format!("{p:?}").contains("count")),
        "{:?}",
        rep.problems
    );

    // The exports carry the count beside the timing, with its file.
    let rows = pqperf_report::summary_export(&ds, "x86_1").unwrap();
    let row = rows
        .iter()
        .find(|r| r.instance == "DARTS128" && r.operation == "sign")
        .unwrap();
    assert_eq!(row.instructions_per_call, Some(434_542.0));
    assert_eq!(
        row.count_evidence.as_deref(),
        Some("performance/data/x86_1/count/sign-08/DARTS128__sign.json")
    );
    assert!(
        rows.iter()
            .filter(|r| r.operation != "sign" || r.instance != "DARTS128")
            .all(|r| r.instructions_per_call.is_none())
    );

    // A count far above what the timed figure allows: the timing is impossible, the page
    // says so and validation finds it.
    let big = Spread::of(&[400_000_000_000]).unwrap();
    ev.instructions_per_call = Some(big);
    ev.estimated_cycles_per_call = Some(big);
    ev.calls = 1;
    ev.classes.insert("candidate".into(), 4e11.into());
    ev.timing_check = pqperf_model::count::timing_check(&ev, &record_value, &rel);
    let t = ev.timing_check.clone().unwrap();
    assert!(t.impossible(), "{t:?}");
    eprintln!(
        "DARTS128 sign: {} {} s, lower bound {} s from {} instructions at {} per cycle and {} Hz ({})",
        t.timed_figure,
        t.timed_seconds,
        t.lower_bound_seconds,
        t.instructions,
        t.max_ipc,
        t.max_clock_hz,
        t.max_clock_source
    );
    let text = pqperf_model::pyjson::to_string(&ev).unwrap();
    pqperf_model::fsutil::write_atomic(&p, text.as_bytes()).unwrap();
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    assert!(
        page.contains("**Impossible timing**") && page.contains("DARTS128 sign:"),
        "{page}"
    );
    let rep = pqperf_validate::validate(&root, Some("x86_1"));
    assert!(
        rep.problems
            .iter()
            .any(|p| p.to_string().contains("impossible timing")),
        "{:?}",
        rep.problems
    );
}
