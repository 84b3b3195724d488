//! Emulated AArch64 instruction counts on the candidate page (golden copy, system arm_1, with
//! added count evidence as the qemu TCG plugin counter writes it): the `instructions/call`
//! column with the sentence naming the method and what a count compares across
//! architectures; an emulator without plugin support shows "not available" with its reason.
//! Validation accepts both. (Golden pages stay byte-identical: tests/it/golden_pages.rs.)

use pqperf_model::count::{ACROSS_ARCHITECTURES, CountEvidence, Spread};
use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page};

use crate::common;
use common::*;

const METHOD: &str = "qemu-tcg-plugin (qemu-aarch64 version 7.2.22)";

fn write(root: &std::path::Path, ev: &CountEvidence) {
    let p = root.join(format!(
        "performance/data/arm_1/count/{}/{}__{}.json",
        ev.candidate, ev.label, ev.operation
    ));
    let text = pqperf_model::pyjson::to_string(ev).unwrap();
    pqperf_model::fsutil::write_atomic(&p, text.as_bytes()).unwrap();
}

#[test]
fn emulated_counts_and_their_absence_are_said() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let ds = Dataset::load(&root).unwrap();
    let sha = |cand: &str, label: &str| {
        ds.system("arm_1")
            .unwrap()
            .build
            .as_ref()
            .unwrap()
            .value
            .entry(cand, label)
            .unwrap()
            .library_sha256
            .clone()
    };
    let s = Spread::of(&[16_914, 16_914, 16_914]).unwrap();
    let counted = CountEvidence {
        schema: 1,
        candidate: "sign-08".into(),
        label: "DARTS128".into(),
        operation: "sign".into(),
        architecture: Some("aarch64".into()),
        method: Some(METHOD.into()),
        status: "counted".into(),
        library_sha256: sha("sign-08", "DARTS128"),
        symbol: "sig_sign".into(),
        calls: 3,
        calls_run: 4,
        instructions_per_call: Some(s),
        instructions: vec![16_914; 3],
        ..Default::default()
    };
    // The cross-check against the record of the same library (validate requires it).
    let rel = "records/sign-08/DARTS128__sign.json";
    let record: pqperf_model::record::Record = pqperf_model::pyjson::read(
        &root.join("performance/data/arm_1").join(rel),
        std::path::Path::new(rel),
    )
    .unwrap();
    let counted = CountEvidence {
        timing_check: pqperf_model::count::timing_check(&counted, &record, rel),
        ..counted
    };
    assert!(counted.timing_check.is_some());
    assert!(counted.problems().is_empty(), "{:?}", counted.problems());
    write(&root, &counted);
    let reason = "not available: the emulator (qemu-aarch64 version 10.0.0) did not load the TCG plugin (static builds of qemu-user have no plugin support)";
    let label02 = ds
        .system("arm_1")
        .unwrap()
        .build
        .as_ref()
        .unwrap()
        .value
        .instances
        .values()
        .find(|e| e.candidate == "sign-02")
        .unwrap()
        .label
        .clone();
    let absent = CountEvidence {
        candidate: "sign-02".into(),
        library_sha256: sha("sign-02", &label02),
        label: label02,
        status: "refused".into(),
        reason: Some(reason.into()),
        instructions_per_call: None,
        instructions: Vec::new(),
        calls: 0,
        calls_run: 0,
        timing_check: None,
        ..counted.clone()
    };
    assert!(absent.problems().is_empty(), "{:?}", absent.problems());
    assert!(absent.not_available());
    write(&root, &absent);
    let ds = Dataset::load(&root).unwrap();
    for form in [Form::Harness, Form::Site] {
        let page = candidate_page(&ds, "arm_1", "sign-08", form).unwrap();
        assert!(
            page.contains("| 16.91 k |") || page.contains("| 16.9 k |"),
            "{page}"
        );
        let note = page
            .lines()
            .find(|l| l.starts_with("`instructions/call` is the median number of aarch64"))
            .unwrap_or_else(|| panic!("{page}"));
        assert!(note.contains(METHOD), "{note}");
        assert!(note.contains(ACROSS_ARCHITECTURES), "{note}");
        let other = candidate_page(&ds, "arm_1", "sign-02", form).unwrap();
        assert!(other.contains("| not available |"), "{other}");
        assert!(
            other.contains(&format!("`instructions/call`: {reason}.")),
            "{other}"
        );
    }
    let rep = pqperf_validate::validate(&root, Some("arm_1"));
    assert!(
        !rep.problems
            .iter()
            .any(|p| format!("{p:?}").contains("count")),
        "{:?}",
        rep.problems
    );
}
