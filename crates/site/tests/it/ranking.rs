//! The ranking page as rows of candidates: every row of a category's table is one candidate
//! (its values and ranks in that row, each value linked to its evidence), written by the
//! site's one table writer; with instruction counts a separate ranking by instructions per
//! call follows, labelled with what a count compares.

use crate::common;

use common::*;
use pqperf_model::count::{CountEvidence, ESTIMATED_CYCLES_FORMULA, Spread};

fn relabel(c: &str, l: &str) -> Relabel {
    Relabel {
        from: (c.into(), l.into()),
        to: (c.into(), l.into()),
        ops: Vec::new(),
    }
}

/// The `<tr>` rows of the `n`-th table of `html`.
fn rows(html: &str, n: usize) -> Vec<String> {
    let t = html.split("<table").nth(n + 1).expect("table");
    let body = &t[..t.find("</table>").unwrap()];
    body.split("<tr>").skip(2).map(str::to_string).collect()
}

#[test]
fn one_candidate_per_row_and_a_separate_ranking_by_instructions() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let map = vec![
        relabel("sign-02", "BiT-128"),
        relabel("sign-08", "DARTS128"),
    ];
    let downloads = vec![
        ("sign-02".to_string(), "BiT".to_string()),
        ("sign-08".to_string(), "DARTS".to_string()),
    ];
    synth_dataset(&data, &["x86_1"], &map, &downloads, false);
    let sys = data.join("performance/data/x86_1");
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sys.join("build.json")).unwrap()).unwrap();
    // Counts of sign and verify: DARTS128 does less work in both.
    for (cand, label, sign, verify) in [
        ("sign-02", "BiT-128", 900_000u64, 300_000u64),
        ("sign-08", "DARTS128", 400_000, 200_000),
    ] {
        for (op, n) in [("sign", sign), ("verify", verify)] {
            let s = Spread::of(&[n]).unwrap();
            let mut ev = CountEvidence {
                schema: 1,
                candidate: cand.into(),
                label: label.into(),
                operation: op.into(),
                status: "counted".into(),
                library_sha256: build["instances"][format!("{cand}/{label}")]["library_sha256"]
                    .as_str()
                    .map(str::to_string),
                calls: 1,
                calls_run: 1,
                instructions_per_call: Some(s),
                estimated_cycles_per_call: Some(s),
                estimated_cycles_formula: ESTIMATED_CYCLES_FORMULA.into(),
                ..Default::default()
            };
            ev.classes.insert("candidate".into(), (n as f64).into());
            let p = sys.join(format!("count/{cand}/{label}__{op}.json"));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, pqperf_model::pyjson::to_string(&ev).unwrap()).unwrap();
        }
    }
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    let page = std::fs::read_to_string(out.join("x86_1/ranking-128.html")).unwrap();
    // The timing ranking: each row names one candidate, and its values link to evidence.
    let timing = rows(&page, 0);
    assert_eq!(timing.len(), 2, "{page}");
    for r in &timing {
        let n = ["sign-02", "sign-08"]
            .iter()
            .filter(|c| r.contains(&format!("<code>{c}</code>")))
            .count();
        assert_eq!(n, 1, "a row mixes candidates: {r}");
        assert!(
            r.contains("class=\"ev\" href=\"../evidence/x86_1/records/"),
            "{r}"
        );
        assert!(r.contains(" · rank "), "{r}");
    }
    // The separate ranking by instructions: DARTS128 first, both values exact, linked.
    assert!(
        page.contains("Digital Signatures by instructions per call")
            && page.contains("it is not time: one AVX2 or NEON instruction"),
        "{page}"
    );
    let counted = rows(&page, 1);
    assert_eq!(counted.len(), 2, "{page}");
    assert!(
        counted[0].contains("<code>sign-08</code>"),
        "{}",
        counted[0]
    );
    assert!(counted[0].contains("400.0 k · rank 1"), "{}", counted[0]);
    assert!(
        counted[0].contains("href=\"../evidence/x86_1/count/sign-08/DARTS128__sign.json\""),
        "{}",
        counted[0]
    );
    assert!(
        counted[1].contains("<code>sign-02</code>"),
        "{}",
        counted[1]
    );
    // One table writer: every table on the page is the generic writer's.
    assert_eq!(
        page.matches("<table").count(),
        page.matches("<div class=\"table-wrap\"><table class=\"cards\">")
            .count()
    );
}
