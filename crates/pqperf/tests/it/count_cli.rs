//! `pqperf campaign count` and `pqperf compare --counter instructions` end to end on the
//! count-toy-sig test candidate (real gcc, real valgrind): two separate runs of the same
//! source compare exactly "no change" (exit 0), and the variant with one extra hash call per
//! sign is "slower" with the exact ratio (exit 1 with --fail-on-regression); without valgrind
//! the phase says so and ends done.

use crate::common;

use common::{exits, ok, repo};
use std::path::Path;

fn counted_run(dir: &Path, defines: &[&str]) -> String {
    let run = dir.to_str().unwrap();
    let src = repo().join("testdata/candidates/count-toy-sig");
    let mut args = vec!["import", "iccs", "--id", "sign-90", "--run-dir", run];
    for d in defines {
        args.extend(["-D", d]);
    }
    args.push(src.to_str().unwrap());
    ok(None, &args);
    ok(None, &["build", "--run-dir", run]);
    // No KAT files: NOKAT, which is measured and counted.
    exits(None, &["kat", "--run-dir", run], 1);
    ok(None, &["campaign", "count", "--run-dir", run])
}

#[test]
fn separate_runs_compare_exactly_and_one_extra_hash_call_is_slower() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, a2, b) = (
        tmp.path().join("a"),
        tmp.path().join("a2"),
        tmp.path().join("b"),
    );
    let out = counted_run(&a, &[]);
    assert!(out.contains("3 counted, 0 refused, 0 failed"), "{out}");
    counted_run(&a2, &[]);
    counted_run(&b, &["COUNT_EXTRA_HASH"]);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let aa = exits(
        None,
        &[
            "compare",
            &s(&a),
            &s(&a2),
            "--counter",
            "instructions",
            "--fail-on-regression",
        ],
        0,
    );
    assert_eq!(
        aa.matches("| no change | identical counts |").count(),
        3,
        "{aa}"
    );
    let json = ok(
        None,
        &[
            "compare",
            &s(&a),
            &s(&b),
            "--counter",
            "instructions",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sign = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "sign")
        .unwrap();
    assert_eq!(sign["verdict"], "slower", "{json}");
    let (x, y) = (sign["a"].as_f64().unwrap(), sign["b"].as_f64().unwrap());
    assert!(y > x);
    assert_eq!(sign["ratio"].as_f64().unwrap(), y / x);
    exits(
        None,
        &[
            "compare",
            &s(&a),
            &s(&b),
            "--counter",
            "instructions",
            "--fail-on-regression",
        ],
        1,
    );
    // The campaign recorded that the phase ran.
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(c["pqperf"]["count"]["status"], "done");

    // Without valgrind (not on PATH) the phase says so, records it and is not an error.
    let o = std::process::Command::new(common::exe())
        .args(["campaign", "count", "--run-dir", &s(&a2)])
        .env("PATH", tmp.path())
        .output()
        .unwrap();
    let t = common::text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("count: not run: valgrind is not installed"),
        "{t}"
    );
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a2.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(c["pqperf"]["count"]["status"], "not run");
    // The counts made before stay.
    assert_eq!(
        std::fs::read_dir(a2.join("count/sign-90")).unwrap().count(),
        3
    );
}
