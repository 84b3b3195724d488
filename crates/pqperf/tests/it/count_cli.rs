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

/// A run directory with the count-toy-sig candidate imported and built (no count yet).
fn built_run(dir: &Path, defines: &[&str]) {
    let run = dir.to_str().unwrap();
    let src = repo().join("testdata/candidates/count-toy-sig");
    let mut args = vec!["import", "iccs", "--id", "sign-90", "--run-dir", run];
    for d in defines {
        args.extend(["-D", d]);
    }
    args.push(src.to_str().unwrap());
    ok(None, &args);
    ok(None, &["build", "--run-dir", run]);
    exits(None, &["kat", "--run-dir", run], 1);
}

/// `pqperf ab --counter instructions`: A–A (one library counted twice, in separate valgrind
/// processes) is exactly "no change" with ratio 1 on every operation (exit 0 with
/// --fail-on-regression); one extra hash call per sign is "slower" with its exact ratio
/// (exit 1), keygen and verify unchanged; -q prints only the report; nothing is written into
/// the run directories.
#[test]
fn ab_counts_a_a_exactly_and_one_extra_hash_call_is_slower() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    built_run(&a, &[]);
    built_run(&b, &["COUNT_EXTRA_HASH"]);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let aa = exits(
        None,
        &[
            "ab",
            &s(&a),
            &s(&a),
            "--counter",
            "instructions",
            "--json",
            "--fail-on-regression",
        ],
        0,
    );
    let json = &aa[..aa.rfind('}').unwrap() + 1];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{aa}");
    for r in rows {
        assert_eq!(
            (r["verdict"].as_str(), r["ratio"].as_f64()),
            (Some("no change"), Some(1.0)),
            "{r}"
        );
        assert_eq!(r["note"], "identical counts");
        eprintln!(
            "A-A {}: {} instructions per call on both sides",
            r["operation"], r["a"]
        );
    }
    assert!(
        aa.contains("ab: verdict no change (instructions): 0 slower, 0 faster, 3 no change"),
        "{aa}"
    );

    let out = tmp.path().join("ab-count.json");
    let ab = exits(
        None,
        &[
            "ab",
            &s(&a),
            &s(&b),
            "--counter",
            "instructions",
            "--fail-on-regression",
            "--out",
            &s(&out),
        ],
        1,
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let row = |op: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["operation"] == op)
            .unwrap()
            .clone()
    };
    let sign = row("sign");
    let (x, y) = (sign["a"].as_f64().unwrap(), sign["b"].as_f64().unwrap());
    assert!(y > x, "{sign}");
    assert_eq!(sign["verdict"], "slower", "{ab}");
    assert_eq!(sign["ratio"].as_f64().unwrap(), y / x);
    assert_eq!(sign["note"], format!("{:+} instructions per call", y - x));
    eprintln!(
        "A-B sign: {x} → {y} instructions per call (+{}), ratio {}",
        y - x,
        y / x
    );
    for op in ["keygen", "verify"] {
        assert_eq!(row(op)["ratio"].as_f64(), Some(1.0), "{op}: {ab}");
    }
    assert!(ab.contains("| slower |"), "{ab}");
    assert!(
        ab.contains("ab: verdict slower (instructions): 1 slower"),
        "{ab}"
    );
    assert!(ab.contains("exit 1"), "{ab}");
    // Without --fail-on-regression a slower operation is not a failure.
    let o = common::output(
        None,
        &["-q", "ab", &s(&a), &s(&b), "--counter", "instructions"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    assert!(o.stderr.is_empty(), "{}", common::text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("| slower |"));
    // ab counted afresh and wrote nothing into the run directories.
    assert!(!a.join("count").exists() && !b.join("count").exists());
}

/// Timing `pqperf ab` with valgrind present counts both libraries too: on the toy signer and
/// its variant with one extra hash call per sign, sign's timing change is "the work changed"
/// with the exact count ratio, and keygen, whose counts are identical, is "the layout or the
/// host, not the work" whatever its timing did. No figure of the timing is asserted.
#[test]
fn timing_ab_says_whether_a_change_is_the_work_or_the_layout() {
    if pqperf_count::valgrind_version("valgrind").is_none() {
        eprintln!("skipped: valgrind is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    built_run(&a, &[]);
    built_run(&b, &["COUNT_EXTRA_HASH"]);
    let cpu = pqperf_ffi::affinity::get_affinity()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let o = common::output(
        None,
        &[
            "ab",
            &s(&a),
            &s(&b),
            "--cpu",
            &cpu,
            "--trial-target",
            "0.001",
            "--pairs",
            "6",
            "--op",
            "keygen",
            "--op",
            "sign",
            "--out",
            &s(&tmp.path().join("ab.json")),
        ],
    );
    let text = common::text(&o);
    assert!(
        text.contains("ab: both libraries counted under callgrind"),
        "{text}"
    );
    let line = |op: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("ab: sign-90 COUNT-TOY-SIG {op}: ")))
            .unwrap_or_else(|| panic!("{op} in {text}"))
            .to_string()
    };
    let keygen = line("keygen");
    assert!(
        keygen.contains("identical") && keygen.contains("layout or the host, not the work"),
        "{keygen}"
    );
    let sign = line("sign");
    assert!(
        sign.contains("the work changed: instructions per call ×1.4"),
        "{sign}"
    );
    eprintln!("{keygen}\n{sign}");
    // Nothing written into the run directories by the counting.
    assert!(!a.join("count").exists() && !b.join("count").exists());
}
