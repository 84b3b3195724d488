//! `pqperf iccs bench`: the provider-cost table for pqperf's helpers and the official files
//! (reference flags and `-fno-tree-vectorize`), on real gcc builds of the official files in
//! `../shared/iccs-official` (or `$PQPERF_ICCS_OFFICIAL`; `skip` opts out). One short batch
//! per cell: the test checks the table's shape and the saved JSON, never a timing.

use std::process::Command;

#[test]
fn bench_prints_both_providers_side_by_side() {
    let Some(official) = pqperf_model::golden::iccs_official_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let out = Command::new(env!("CARGO_BIN_EXE_pqperf"))
        .args([
            "iccs",
            "bench",
            "--batches",
            "1",
            "--batch-ticks",
            "20000",
            "--run-dir",
        ])
        .arg(&run)
        .arg("--official")
        .arg(&official)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(
        "| call | pqperf | official | official -fno-tree-vectorize | pqperf ÷ official | pqperf ÷ official -fno-tree-vectorize |"
    ), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| call"))
        .collect();
    assert_eq!(rows.len(), 9, "{text}");
    for want in [
        "| sm3hash, 65536-bit msg |",
        "| pseudohash 1024, 4096-bit msg |",
        "| pseudoXOF 8192 bits, 512-bit msg |",
        "| get_random_number 8192 bits |",
    ] {
        assert!(rows.iter().any(|r| r.starts_with(want)), "{want}: {text}");
    }
    assert!(text.contains("auxfunc.c sha256 9b99c0bb3807"), "{text}");
    let j: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("profile/iccs-provider-bench.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(j["providers"].as_array().unwrap().len(), 3);
    assert_eq!(j["records"][1]["kind"], "official");
    for r in j["rows"].as_array().unwrap() {
        for t in r["ticks_per_call"].as_array().unwrap() {
            assert!(t.as_f64().unwrap() > 0.0, "{r}");
        }
    }
    // A modified copy is refused here too, before anything is timed.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    for f in ["auxfunc.c", "auxfunc.h", "drng.c", "drng.h"] {
        let mut t = std::fs::read_to_string(official.join(f)).unwrap();
        if f == "drng.c" {
            t = t.replacen("0x79cc4519U", "0x79cc4518U", 1);
        }
        std::fs::write(bad.join(f), t).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_pqperf"))
        .args(["iccs", "bench", "--batches", "1", "--run-dir"])
        .arg(&run)
        .arg("--official")
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("refused") && err.contains("DRNG draw 1"),
        "{err}"
    );
}
