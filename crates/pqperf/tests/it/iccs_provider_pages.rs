//! The ICCS provider through the whole pipeline on the WOTS test candidate: built with the
//! official files (`../shared/iccs-official` or `$PQPERF_ICCS_OFFICIAL`; `skip` opts out) and
//! with pqperf's own helpers, calibrated and measured with a tiny budget, published and
//! rendered: records and campaign.json name the provider, `pqperf iccs bench` adds the cost
//! table, and the candidate, method and summary pages (and the site) say which helpers the
//! numbers include.

use crate::common;

use std::path::{Path, PathBuf};

fn run(cwd: &Path, args: &[&str]) -> String {
    common::ok(Some(cwd), args)
}

fn last_cpu() -> String {
    common::last_cpu()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// Measure WOTS in `d/run` with `provider`, publish and render; returns the dataset's system
/// directory.
fn measured_dataset(d: &Path, provider: &str, bench: Option<&Path>) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sub = std::fs::canonicalize(repo.join("testdata/candidates/wots-pxof")).unwrap();
    let sub = sub.to_string_lossy().to_string();
    run(
        d,
        &[
            "import",
            "iccs",
            &sub,
            "--id",
            "sign-90",
            "--run-dir",
            "run",
        ],
    );
    run(
        d,
        &["build", "--run-dir", "run", "--iccs-provider", provider],
    );
    run(d, &["kat", "--run-dir", "run"]);
    if let Some(off) = bench {
        let o = off.to_string_lossy().to_string();
        run(
            d,
            &[
                "iccs",
                "bench",
                "--run-dir",
                "run",
                "--official",
                &o,
                "--batches",
                "1",
                "--batch-ticks",
                "20000",
            ],
        );
    }
    let cpu = last_cpu();
    let common = [
        "--run-dir",
        "run",
        "--cpu",
        &cpu,
        "--allow-unfixed-host",
        "--probe-attempts",
        "1",
        "--trial-target",
        "0.001",
        "--register",
        "iccs provider test machine",
    ];
    for phase in ["calibrate", "measure", "publish"] {
        let mut a = vec!["campaign", phase];
        a.extend(common);
        run(d, &a);
    }
    run(d, &["report", "run/dataset"]);
    // The provider keys are pqperf additions the validator accepts; pages regenerate.
    let v = run(d, &["validate", "run/dataset"]);
    assert!(v.contains(" 0 problem(s)"), "{v}");
    std::fs::read_dir(d.join("run/dataset/performance/data"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

fn page(dir: &Path, pred: impl Fn(&str) -> bool) -> String {
    let p = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| pred(&p.file_name().unwrap().to_string_lossy()))
        .unwrap_or_else(|| panic!("no such page in {}", dir.display()));
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn records_campaign_and_pages_name_the_provider() {
    let Some(official) = pqperf_model::golden::iccs_official_dir() else {
        return;
    };
    for kind in ["official", "pqperf"] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let arg = if kind == "official" {
            format!("official:{}", official.display())
        } else {
            "pqperf".to_string()
        };
        let bench = (kind == "official").then_some(official.as_path());
        let sys = measured_dataset(d, &arg, bench);
        let rec = json(&sys.join("records/sign-90/WOTS-PXOF-128__sign.json"));
        assert_eq!(rec["status"], "complete", "{rec}");
        assert_eq!(
            rec["pqperf"]["iccs_provider"]["kind"], kind,
            "{}",
            rec["pqperf"]
        );
        let camp = json(&sys.join("campaign.json"));
        assert_eq!(
            camp["pqperf"]["iccs_provider"]["kind"], kind,
            "{}",
            camp["pqperf"]
        );
        let text = serde_json::to_string(&camp).unwrap();
        assert!(
            !text.contains(&*official.to_string_lossy()),
            "machine path in campaign.json"
        );
        let want = if kind == "official" {
            "ICCS helpers: the timings of the NGCC libraries include the official ICCS helpers (auxfunc.c sha256 9b99c0bb3807…, drng.c sha256 0df0ac78c828…; gcc"
        } else {
            "ICCS helpers: the timings of the NGCC libraries include pqperf's own ICCS helpers (libpqperf_iccs.a sha256 "
        };
        let ds = d.join("run/dataset");
        let cand = page(&ds.join("sign-90"), |n| n.ends_with(".md"));
        assert!(cand.contains(want), "{cand}");
        let perf = ds.join("performance");
        let method = page(&perf, |n| n.starts_with("method") && n.ends_with(".md"));
        assert!(method.contains(&format!("- {want}")), "{method}");
        let summary = page(&perf, |n| {
            n.starts_with("README") || n.starts_with("summary")
        });
        assert!(summary.contains(&format!("- {want}")), "{summary}");
        if kind == "official" {
            assert!(
                camp["pqperf"]["iccs_provider_cost"]["rows"]
                    .as_array()
                    .unwrap()
                    .len()
                    == 9
            );
            assert!(
                method.contains("- ICCS provider cost on this system (`pqperf iccs bench`, median tsc ticks per call")
                    && method.contains("× the per-call ticks of the `official -fno-tree-vectorize` build (median over 9 calls; range "),
                "{method}"
            );
            // The site shows the pages' statement too.
            run(d, &["site", "run/dataset", "--out", "site"]);
            let found = walk(&d.join("site")).into_iter().any(|p| {
                p.extension().is_some_and(|e| e == "html")
                    && std::fs::read_to_string(&p)
                        .is_ok_and(|t| t.contains("the official ICCS helpers"))
            });
            assert!(found, "no site page names the provider");
        } else {
            assert!(camp["pqperf"].get("iccs_provider_cost").is_none());
            assert!(!method.contains("ICCS provider cost"), "{method}");
        }
    }
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}
