//! Hostile candidates that forge what the parent is told (issue 31): the parent decides from
//! what it can check. Timing forgeries (`measure/forge.h` compiled into the toy signature):
//! a whole forged protocol written to the result pipe found with fstat, 3 s per call claimed
//! from a short process, real work reported as 1 µs per call (the calibration line). KAT
//! forgeries (forge.h in copies of `testdata/candidates/wots-pxof`): a constructor and an
//! atexit handler that write a clean log ending in `RESULT … PASS`. Each ends recorded as
//! what it is (`inconsistent`, `FORGED`), and the honest instances next to them are measured
//! and pass as before.

use crate::common;
use pqperf_test_support::pqperf;

use std::path::Path;
use std::process::Command;

use common::toy::{Lib, TOY_SIG as TOY, toy_run};
use pqperf_model::buildjson::BuildJson;

const FORGE: &str = include_str!("../measure/forge.h");

fn ok(mut c: Command) -> String {
    let out = c.output().expect("run pqperf");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pqperf failed: {text}");
    text
}

/// Runs pqperf and returns its output, failing unless it exits 1 (something did not complete).
fn exits1(mut c: Command) -> String {
    let out = c.output().expect("run pqperf");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "pqperf: {text}");
    text
}

/// toy_sig.c with forge.h included and its hook called at the top of `sig_sign`.
fn hostile_toy() -> String {
    let anchor = "    work();\n    mix(sk, m, ml, sn);";
    assert!(TOY.contains(anchor));
    format!(
        "#include \"forge.h\"\n{}",
        TOY.replace(anchor, &format!("    (void)forge_hook();\n{anchor}"))
    )
}

/// Builds the toy instances (`label`, defines) of `sign-95` into `run`, KAT PASS.
fn setup_toys(run: &Path, instances: &[(&str, &[&str])]) {
    std::fs::create_dir_all(run).unwrap();
    std::fs::write(run.join("forge.h"), FORGE).unwrap();
    let libs: Vec<Lib> = instances
        .iter()
        .map(|(l, d)| Lib::new("sign-95", l).defines(d))
        .collect();
    toy_run(run, "toy_forge.c", &hostile_toy(), &libs);
}

fn campaign(run: &Path, phase: &str, extra: &[&str]) -> Command {
    let mut c = pqperf();
    c.args(common::toy::campaign_args(run, phase)).args(extra);
    c
}

fn record(run: &Path, label: &str, op: &str) -> serde_json::Value {
    let p = run.join(format!("records/sign-95/{label}__{op}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// The problems of the record's inconsistent processes, joined.
fn inconsistent(r: &serde_json::Value) -> String {
    r["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"] == "inconsistent")
        .map(|p| p["kernel_check"]["problems"].to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn forged_timings_are_inconsistent_and_the_campaign_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    setup_toys(
        &run,
        &[
            ("good", &[]),
            ("work", &["TOY_WORK=200000"]),
            ("protocol", &["FORGE_PROTOCOL"]),
            ("claim3s", &["FORGE_3S"]),
            ("fast", &["FORGE_FAST"]),
        ],
    );
    let cpu = common::last_cpu();
    let common = [
        "--cpu",
        &cpu,
        "--trial-target",
        "0.002",
        "--calibration-timeout",
        "20",
        "--stack-region",
        "262144",
    ];
    // Units whose processes are inconsistent did not complete: exit 1, the others done.
    exits1(campaign(&run, "calibrate", &common));
    let log = exits1(campaign(&run, "measure", &common));
    // Honest instances: complete, every process checked and consistent.
    for label in ["good", "work"] {
        for op in ["keygen", "sign", "verify"] {
            let r = record(&run, label, op);
            assert_eq!(r["status"], "complete", "{label} {op}: {}\n{log}", r);
            for p in r["processes"].as_array().unwrap() {
                assert_eq!(p["status"], "complete");
                assert_eq!(
                    p["kernel_check"]["problems"],
                    serde_json::json!([]),
                    "{label} {op}"
                );
                assert!(p["kernel_check"]["cpu_s"].as_f64().unwrap() > 0.0);
            }
        }
    }
    // The whole forged protocol (5 x 20000 calls at 1 µs from a process asked for one call).
    let r = record(&run, "protocol", "sign");
    assert_eq!(r["status"], "failed_or_partial");
    let why = inconsistent(&r);
    assert!(why.contains("5 reference trial(s) reported"), "{r}");
    // 3 s per call from a process that lived a fraction of that, after an honest
    // calibration: re-run once, both attempts inconsistent.
    let r = record(&run, "claim3s", "sign");
    assert_eq!(r["status"], "failed_or_partial");
    let why = inconsistent(&r);
    assert!(why.contains("in a process that lived"), "{r}");
    let attempts: Vec<_> = r["pqperf"]["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(attempts, ["inconsistent", "inconsistent"], "{r}");
    // Real work (about 0.5 s of CPU) reported as 1 µs: the calibration is inconsistent, so
    // nothing is planned from it.
    let r = record(&run, "fast", "sign");
    assert_eq!(r["status"], "failed_or_partial");
    let why = inconsistent(&r);
    assert!(why.contains("gate"), "{r}");
    let cal: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("calibrate/sign-95/fast__sign.json")).unwrap(),
    )
    .unwrap();
    assert!(cal["t1_s"].is_null(), "{cal}");
    // Nothing else of the forging candidates is lost.
    for label in ["protocol", "claim3s", "fast"] {
        for op in ["keygen", "verify"] {
            assert_eq!(
                record(&run, label, op)["status"],
                "complete",
                "{label} {op}"
            );
        }
    }
    // Published, validated, and named on the candidate page.
    let ds = tmp.path().join("ds");
    let mut c = campaign(&run, "publish", &[]);
    c.arg("--publish-to").arg(&ds);
    ok(c);
    let mut r = pqperf();
    r.arg("report").arg(&ds).args(["--pages", "candidates"]);
    ok(r);
    let mut v = pqperf();
    v.arg("validate").arg(&ds);
    ok(v);
    let page = find_page(&ds, "sign-95");
    assert!(
        page.contains("| `claim3s` | sign | inconsistent |"),
        "{page}"
    );
    assert!(page.contains("Inconsistent timing (not shown)"), "{page}");
    assert!(page.contains("`fast` sign (process 1:"), "{page}");
    assert!(!page.contains("| `good` | sign | inconsistent"), "{page}");
}

/// The candidate page of `cand` in a published dataset (harness layout `<id>/perf_<sys>.md`).
fn find_page(ds: &Path, cand: &str) -> String {
    let dir = ds.join(cand);
    for e in std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("perf_") && name.ends_with(".md") {
            return std::fs::read_to_string(e.path()).unwrap();
        }
    }
    panic!("no perf_*.md under {}", dir.display());
}

#[test]
fn forged_kat_pass_is_recorded_as_forged() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let rd = run.to_str().unwrap();
    let cases: [(&str, Option<&str>); 3] = [
        ("sign-96", Some("FORGE_KAT_CTOR")),
        ("sign-97", Some("FORGE_KAT_ATEXIT")),
        ("sign-98", None),
    ];
    for (id, mode) in cases {
        let dir = tmp.path().join(id);
        pqperf_model::fsutil::copy_tree(
            &common::repo().join("testdata/candidates/wots-pxof"),
            &dir,
        )
        .unwrap();
        if let Some(mode) = mode {
            let src = dir.join("Reference_Implementation/WOTS-PXOF-128/SIG_AlgorithmInstance.c");
            let text = std::fs::read_to_string(&src).unwrap();
            let anchor = "if (sk_len_bytes != WOTS_SK_BYTES) return -3;";
            assert!(text.contains(anchor));
            let text = format!(
                "#define {mode}\n#define FORGE_ID \"{id}\"\n#define FORGE_INSTANCE \"WOTS-PXOF-128\"\n{FORGE}\n{}",
                text.replace(
                    anchor,
                    &format!("{anchor}\n    if (forge_hook()) sk[0] ^= 1;")
                )
            );
            std::fs::write(&src, text).unwrap();
        }
        common::ok(
            None,
            &[
                "import",
                "iccs",
                dir.to_str().unwrap(),
                "--id",
                id,
                "--run-dir",
                rd,
            ],
        );
    }
    let out = common::ok(None, &["build", "--run-dir", rd]);
    assert!(out.contains("built 3 libraries, 0 BUILDFAIL"), "{out}");
    // FORGED is not PASS: exit 1 (the documented code for a KAT that did not pass).
    common::exits(None, &["kat", "--run-dir", rd, "--no-fallback"], 1);
    let bj: BuildJson =
        pqperf_model::pyjson::read(&run.join("build.json"), Path::new("build.json")).unwrap();
    let kat = |id: &str| bj.instances[&format!("{id}/WOTS-PXOF-128")].kat.clone();
    assert_eq!(kat("sign-98"), "PASS");
    for id in ["sign-96", "sign-97"] {
        assert_eq!(kat(id), "FORGED", "{id}");
        let log = std::fs::read_to_string(run.join(format!("kat/{id}/WOTS-PXOF-128.log"))).unwrap();
        let last = log.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("RESULT {id} WOTS-PXOF-128 FORGED the child reported PASS; the parent's check of the generated files: MISMATCH")),
            "{log}"
        );
    }
}
