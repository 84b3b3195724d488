//! ML-DSA-44 AVX2 beside ML-DSA-44 clean (PQClean, pinned crate) under the constant-time
//! check: the AVX2 findings that belong to the function family of an accepted clean finding
//! are accepted by the `same as ml-dsa-44` row with a reason naming that clean finding; the
//! findings without such a family (the hint lines of the signing loop) are not, and need
//! their own reviewed rows.

use crate::common;

use pqperf_ct::{AcceptedTable, CtOptions, family, run};

#[test]
fn mldsa44_avx2_inherits_the_clean_acceptances_by_family() {
    let only = "^ml-dsa-44/ml-dsa-44(-avx2)?$";
    let (_tmp, run_dir) = common::pqclean_run(only, 2);
    let mut o = CtOptions::new(&run_dir);
    o.select = pqperf_model::select::Selection::only(Some(only)).unwrap();
    let s = run(&o).unwrap();
    let clean = s.evidence.iter().find(|e| e.label == "ml-dsa-44").unwrap();
    let avx2 = s
        .evidence
        .iter()
        .find(|e| e.label == "ml-dsa-44-avx2")
        .unwrap();
    // What was written is what was returned (the inheritance pass rewrote the file).
    let on_disk: pqperf_model::ct::CtEvidence = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("ct/ml-dsa-44/ml-dsa-44-avx2.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(&on_disk, avx2);
    let mut inherited = 0;
    for op in &avx2.operations {
        assert_eq!(op.status, "run", "{op:?}");
        assert_eq!(op.verdict, "no findings", "{op:#?}");
        let clean_op = clean
            .operations
            .iter()
            .find(|c| c.operation == op.operation)
            .unwrap();
        for g in &op.groups {
            let reason = g.accepted.as_deref().unwrap();
            if !reason.starts_with("same family (") {
                continue;
            }
            inherited += 1;
            // The reason names an accepted clean finding of the same operation and repeats
            // its reason.
            let named = clean_op.groups.iter().find(|c| {
                c.accepted.is_some()
                    && reason.contains(&format!(
                        "of ml-dsa-44 {} at {} ({})",
                        op.operation, c.location, c.function
                    ))
            });
            let named = named.unwrap_or_else(|| panic!("{reason}"));
            assert!(
                reason.ends_with(named.accepted.as_deref().unwrap()),
                "{reason}"
            );
            assert!(
                g.location.starts_with("crypto_sign/ml-dsa-44/avx2/"),
                "{g:?}"
            );
        }
    }
    assert!(inherited >= 20, "{inherited} inherited: {avx2:#?}");

    // Without the two explicit hint rows, the hint lines of the AVX2 signing loop have no
    // family (a line of the entry point that calls nothing) and stay findings.
    let table = AcceptedTable::shipped().unwrap();
    let mut v = avx2.clone();
    for op in &mut v.operations {
        for g in &mut op.groups {
            g.accepted = None;
        }
        op.settle();
    }
    let scratch = run_dir.join("build").join("ct").join("build").join("src");
    let (reference, ops, note) = table.same_as("ml-dsa-44", "ml-dsa-44-avx2")[0];
    assert_eq!(reference, "ml-dsa-44");
    let n = family::inherit(
        &mut v,
        &scratch.join("ml-dsa-44/ml-dsa-44-avx2"),
        clean,
        &scratch.join("ml-dsa-44/ml-dsa-44"),
        ops,
        note,
    );
    assert_eq!(n, inherited);
    let sign = v.operations.iter().find(|o| o.operation == "sign").unwrap();
    let left: Vec<&str> = sign
        .groups
        .iter()
        .filter(|g| g.accepted.is_none())
        .map(|g| g.location.as_str())
        .collect();
    assert!(!left.is_empty());
    for l in &left {
        assert!(
            [
                "crypto_sign/ml-dsa-44/avx2/sign.c:235",
                "crypto_sign/ml-dsa-44/avx2/sign.c:240"
            ]
            .contains(l),
            "{left:?}"
        );
    }
    assert_eq!(sign.findings as usize, left.len());
}
