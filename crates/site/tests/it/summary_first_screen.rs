//! The summary of a pqperf dataset puts the numbers first: the first table comes before
//! the notes, which follow the tables folded (`<details>`), only those that apply (a
//! PQClean-only dataset has no KEX, hash or ICCS notes), a long `--only` regex of the
//! recorded commands shortened; a note shared by rows is one numbered footnote; the page
//! fits at 1400 px and 420 px.

use crate::common;

use common::*;

fn rel(to: &str, from: &str) -> Relabel {
    let (fc, fl) = from.split_once('/').unwrap();
    let (tc, tl) = to.split_once('/').unwrap();
    Relabel {
        from: (fc.into(), fl.into()),
        to: (tc.into(), tl.into()),
        ops: Vec::new(),
    }
}

#[test]
fn pqclean_summary_numbers_first_notes_folded_and_only_those_that_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let map = vec![
        rel("ml-dsa-44/clean", "sign-02/BiT-128"),
        rel("ml-dsa-87/clean", "sign-08/DARTS256"),
        rel("falcon-512/clean", "sign-06/COMPASS-SIG-128"),
    ];
    let downloads: Vec<(String, String)> = ["ml-dsa-44", "ml-dsa-87", "falcon-512"]
        .iter()
        .map(|s| (s.to_string(), s.to_uppercase()))
        .collect();
    synth_dataset(&data, &["x86_1"], &map, &downloads, true);
    let long_only = format!("'^({})/clean$'", vec!["ml-dsa-44"; 30].join("|"));
    let camp = data.join("performance/data/x86_1/campaign.json");
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&camp).unwrap()).unwrap();
    c["pqperf"] = serde_json::json!({"version": "0.1.0", "commands": [
        "pqperf import pqclean",
        format!("pqperf campaign all --cpu 2 --only {long_only}"),
    ]});
    std::fs::write(&camp, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    // The same long note on every row.
    let note =
        "measured with a deliberately long curated note that repeats on every row of the table";
    std::fs::write(
        data.join("performance/summary_notes.csv"),
        format!("ID;Label;Note\nml-dsa-44;.*;{note}\nml-dsa-87;.*;{note}\nfalcon-512;.*;{note}\n"),
    )
    .unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    let html = std::fs::read_to_string(out.join("x86_1/index.html")).unwrap();
    let table = html.find("<table").expect("a table");
    let notes = html
        .find("<details class=\"notes\">")
        .expect("folded notes");
    assert!(table < notes, "the first table comes after the notes");
    assert!(html.contains(">Notes</h2>"), "{html}");
    for absent in ["KEX", "Hash rows", " ICCS", "pseudoXOF", "KEM public-key"] {
        assert!(!html.contains(absent), "{absent} on a PQClean-only summary");
    }
    assert!(
        !html.contains(&long_only),
        "the long --only regex is shown whole"
    );
    assert!(html.contains("long arguments shortened here"), "{html}");
    // One footnote instead of the note in every row.
    assert_eq!(html.matches(note).count(), 1, "{html}");
    assert!(
        html.contains("note 1: measured with a deliberately long"),
        "{html}"
    );
    assert_eq!(
        html.matches("data-label=\"notes\">note 1</td>").count(),
        3,
        "{html}"
    );
    assert_fits(&out, "x86_1/index.html");
}
