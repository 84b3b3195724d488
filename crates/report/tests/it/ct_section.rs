//! The "Constant-time check" section of pqperf datasets, on a golden copy with added ct
//! evidence (`performance/data/x86_1/ct/<id>/<label>.json`): verdict table, findings with
//! the accepted reasons, tool line; a pqperf campaign without ct evidence says "Not run";
//! validation accepts the ct directory. (Golden pages stay byte-identical:
//! tests/it/golden_pages.rs.)

use pqperf_model::ct::{CtEvidence, CtFinding, CtOperation};
use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page};

use crate::common;
use common::*;

fn evidence() -> CtEvidence {
    let mut keygen = CtOperation {
        operation: "keygen".into(),
        secret_inputs: vec!["DRNG output".into()],
        status: "run".into(),
        command: "valgrind --tool=memcheck ./.pqperf-ct-driver keygen".into(),
        seconds: 1.5,
        ..Default::default()
    };
    keygen.settle();
    let mut sign = CtOperation {
        operation: "sign".into(),
        secret_inputs: vec!["secret key".into(), "DRNG output".into()],
        status: "run".into(),
        command: "valgrind --tool=memcheck ./.pqperf-ct-driver sign".into(),
        groups: vec![
            CtFinding {
                kind: "conditional jump".into(),
                location: "Reference_Implementation/DARTS128/sign.c:33".into(),
                function: "sig_sign".into(),
                count: 4,
                stack: vec![],
                accepted: None,
            },
            CtFinding {
                kind: "memory index".into(),
                location: "Reference_Implementation/DARTS128/poly.c:7".into(),
                function: "rej".into(),
                count: 2,
                stack: vec![],
                accepted: Some("rejection sampling of a public | seed".into()),
            },
        ],
        ..Default::default()
    };
    sign.settle();
    CtEvidence {
        schema: 1,
        candidate: "sign-08".into(),
        label: "DARTS128".into(),
        api: "iccs".into(),
        flags: "guide".into(),
        build_flags: "-O2 -g ".into(),
        tool: "valgrind-3.19.0".into(),
        utc: "2026-12-01T13:00:00+00:00".into(),
        operations: vec![keygen, sign],
        ..Default::default()
    }
}

#[test]
fn ct_evidence_gives_the_section() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    let before = candidate_page(
        &Dataset::load(&root).unwrap(),
        "x86_1",
        "sign-08",
        Form::Harness,
    )
    .unwrap();
    assert!(!before.contains("Constant-time"), "golden page changed");
    let p = sys.join("ct/sign-08/DARTS128.json");
    let text = pqperf_model::pyjson::to_string(&evidence()).unwrap();
    pqperf_model::fsutil::write_atomic(&p, text.as_bytes()).unwrap();
    let ds = Dataset::load(&root).unwrap();
    assert_eq!(ds.system("x86_1").unwrap().ct.len(), 1);
    for form in [Form::Harness, Form::Site] {
        let page = candidate_page(&ds, "x86_1", "sign-08", form).unwrap();
        let l: Vec<&str> = page.lines().collect();
        let ct = l
            .iter()
            .position(|x| *x == "## Constant-time check")
            .unwrap();
        let raw = l.iter().position(|x| x.starts_with("## 7. ")).unwrap();
        assert!(ct < raw);
        assert_eq!(l[ct + 2], pqperf_report::ct::CT_SENTENCE);
        assert_has(
            &page,
            "| `DARTS128` | keygen | DRNG output | no findings | 0 |",
        );
        assert_has(
            &page,
            "| `DARTS128` | sign | secret key, DRNG output | 1 finding | 1 |",
        );
        assert_has(
            &page,
            "| `DARTS128` | sign | `Reference_Implementation/DARTS128/sign.c:33` | `sig_sign` | conditional jump | 4 | **not accepted** |",
        );
        assert_has(
            &page,
            "| `DARTS128` | sign | `Reference_Implementation/DARTS128/poly.c:7` | `rej` | memory index | 2 | rejection sampling of a public \\| seed |",
        );
        assert_has(
            &page,
            "- `DARTS128`: valgrind-3.19.0, build flags `-O2 -g` (guide), evidence `performance/data/x86_1/ct/sign-08/DARTS128.json`, command `valgrind --tool=memcheck ./.pqperf-ct-driver keygen`",
        );
    }
    // Other candidates of this (now pqperf) dataset say the check was not run.
    let other = candidate_page(&ds, "x86_1", "sign-02", Form::Harness).unwrap();
    assert_has(
        &other,
        "Not run: no constant-time evidence was recorded for this candidate on this system (campaign phase `ct` or `pqperf ct`).",
    );
    let rep = pqperf_validate::validate(&root, Some("x86_1"));
    assert!(
        !rep.problems
            .iter()
            .any(|p| format!("{p:?}").contains("/ct/")),
        "{:?}",
        rep.problems
    );
}

#[test]
fn iccs_candidates_show_the_helper_check() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    let mut helpers = evidence();
    helpers.candidate = "iccs".into();
    helpers.label = "helpers".into();
    helpers.operations.truncate(1);
    helpers.operations[0].operation = "drng".into();
    for (ev, rel) in [
        (evidence(), "ct/sign-08/DARTS128.json"),
        (helpers, "ct/iccs/helpers.json"),
    ] {
        let text = pqperf_model::pyjson::to_string(&ev).unwrap();
        pqperf_model::fsutil::write_atomic(&sys.join(rel), text.as_bytes()).unwrap();
    }
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    assert_has(
        &page,
        "The ICCS helpers this candidate links, checked the same way with undefined seed and message: `drng` no findings (`performance/data/x86_1/ct/iccs/helpers.json`).",
    );
}

/// Only accepted findings: the page says "no unaccepted findings" beside the count, never
/// "no findings" (issue 40).
#[test]
fn accepted_findings_only_are_not_no_findings() {
    let mut ev = evidence();
    let sign = &mut ev.operations[1];
    sign.groups.retain(|g| g.accepted.is_some());
    sign.settle();
    assert_eq!(sign.verdict, "no findings");
    assert_eq!(
        pqperf_report::ct::shown_verdict(sign),
        "no unaccepted findings"
    );
    assert_eq!(
        pqperf_report::ct::shown_verdict(&ev.operations[0]),
        "no findings"
    );
}
