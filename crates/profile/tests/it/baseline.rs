//! ICCS baseline: the twelve helper instances are built by the build stage, self-tested
//! against the independent sm3-crate model, recorded in build.json as `iccs-baseline`, and
//! a library checked against the wrong instance is caught.

use pqperf_profile::baseline;

#[test]
fn baseline_builds_and_selftests() {
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::canonicalize(dir.path()).unwrap();
    let logs = std::sync::Mutex::new(Vec::new());
    let s = baseline::build_baseline(&run, &|m| logs.lock().unwrap().push(m)).unwrap();
    assert_eq!(
        s.passed.len(),
        12,
        "{s:?} {:?}\n{}",
        logs.lock().unwrap(),
        std::fs::read_to_string(run.join("build/iccs.log")).unwrap_or_default()
    );
    assert!(s.failed.is_empty());
    let bj = pqperf_build::read_build_json(&run).unwrap();
    let e = &bj.instances["iccs/pseudoXOF-1152"];
    assert_eq!(e.variant, "iccs-baseline");
    assert_eq!(e.kat, "PASS");
    let log = std::fs::read_to_string(run.join("kat/iccs/sm3hash-256.log")).unwrap();
    assert!(
        log.contains("ok   GB/T 32905 abc rc=0 66c7f0f462eeedd9d1f2d46bdc10e4e2..."),
        "{log}"
    );
    assert!(
        log.ends_with("RESULT iccs sm3hash-256 PASS (20/20)\n"),
        "{log}"
    );
    // A second run finds everything recorded and builds nothing.
    let again = baseline::build_baseline(&run, &|_| {}).unwrap();
    assert!(again.skipped);
    // The wrong width is caught (CryptHash refuses other widths; the model differs anyway).
    let wrong =
        pqperf_iccs_capi::HashInstance::new(pqperf_iccs_capi::Helper::PseudoXof, 384).unwrap();
    let lib = run.join(e.library.as_ref().unwrap());
    let (text, status) = baseline::selftest(&lib, "x", &wrong);
    assert_eq!(status, "MISMATCH", "{text}");

    // A hash candidate with a width outside the reference list (1536 bits) adds
    // pseudoXOF-1536 to the baseline, found from its built library's metadata.
    let cat = run.join("hash98.toml");
    std::fs::write(
        &cat,
        "[[candidate]]\nid = \"hash-98\"\ntype = \"hash\"\nalgorithm = \"Y\"\nroot = \"iccs-baseline\"\n\n\
         [[candidate.instance]]\nlabel = \"Y-1536\"\ninstance = \"Y-1536\"\nsource_dir = \"src\"\n\
         files = [\"iccs_crypthash.c\"]\ndefines = [\"ICCS_HELPER=ICCS_HELPER_PSEUDOXOF\", \"DIGEST_BIT_LENGTH=1536\", \"ALGORITHM_INSTANCE=\\\"Y-1536\\\"\"]\n\
         api = \"iccs\"\nheader = \"iccs_crypthash.h\"\n",
    )
    .unwrap();
    let mut bo = pqperf_build::BuildOptions::new(&run);
    bo.catalog = Some(cat);
    assert_eq!(pqperf_build::build(&bo).unwrap().built.len(), 1);
    let labels: Vec<String> = baseline::instances_for_run(&run)
        .into_iter()
        .map(|i| i.label)
        .collect();
    assert_eq!(labels.len(), 13);
    assert_eq!(labels[12], "pseudoXOF-1536");
    let more = baseline::build_baseline(&run, &|_| {}).unwrap();
    assert!(
        more.passed.contains(&"pseudoXOF-1536".to_string()),
        "{more:?}"
    );
    // hashcost prices a hash candidate's CryptHash at every profiled input length (and +32).
    let mut bj = pqperf_build::read_build_json(&run).unwrap();
    let mut h = bj.instances["iccs/pseudoXOF-256"].clone();
    h.candidate = "hash-99".into();
    h.label = "X-256".into();
    h.variant = "reference".into();
    bj.instances.insert("hash-99/X-256".into(), h);
    pqperf_build::write_build_json(&run, &bj).unwrap();
    std::fs::create_dir_all(run.join("records/hash-99")).unwrap();
    std::fs::write(
        run.join("records/hash-99/X-256__hash_32.json"),
        r#"{"sizes": {"digest_bytes": 32}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(run.join("profile/sign-99")).unwrap();
    std::fs::write(
        run.join("profile/sign-99/S__keygen.json"),
        r#"{"schema": 2, "candidate": "sign-99", "label": "S", "operation": "keygen",
            "input_bytes": 0, "status": "complete", "command": [], "stderr": "", "meta": {},
            "total": {"operations": 1, "ticks": 100},
            "calls": [{"fn": "pseudoXOF", "in_bits": 584, "out_bits": 256, "calls": 3, "ticks": 50},
                      {"fn": "drng", "in_bits": 0, "out_bits": 256, "calls": 1, "ticks": 5}],
            "share": {"pseudoXOF": 0.5, "drng": 0.05}, "hash_share": 0.5}"#,
    )
    .unwrap();
    let hc = pqperf_profile::hashcost::run_hashcost(&run, None, &|_| {}).unwrap();
    assert_eq!(hc.iccs_priced, 2);
    assert_eq!(hc.candidates.get("hash-99/X-256"), Some(&2));
    let tsv = std::fs::read_to_string(run.join("hashcost/hash-99/X-256.tsv")).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "#unit\tticks");
    assert!(
        lines[1].starts_with("256\t584\t") && lines[2].starts_with("256\t616\t"),
        "{tsv}"
    );
    let cost: f64 = lines[1].split('\t').nth(2).unwrap().parse().unwrap();
    assert!(cost > 0.0);
}

/// With the official provider chosen for the run (`pqperf build --iccs-provider official:DIR`
/// remembers it), the baseline instances link the official files: their timings are the
/// linked provider's per-call cost. Official files from `../shared/iccs-official` (or
/// `$PQPERF_ICCS_OFFICIAL`; `skip` opts out).
#[test]
fn baseline_links_the_runs_official_provider() {
    let official = match std::env::var("PQPERF_ICCS_OFFICIAL") {
        Ok(v) if v == "skip" => return,
        Ok(v) => std::path::PathBuf::from(v),
        Err(_) => {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/iccs-official")
        }
    };
    assert!(
        official.join("auxfunc.c").is_file(),
        "official ICCS files not found at {} (set PQPERF_ICCS_OFFICIAL=DIR, or =skip)",
        official.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::canonicalize(dir.path()).unwrap();
    pqperf_build::provider::remember_choice(
        &run,
        &pqperf_build::ProviderChoice::Official(std::fs::canonicalize(&official).unwrap()),
    )
    .unwrap();
    let s = baseline::build_baseline(&run, &|_| {}).unwrap();
    assert_eq!(s.passed.len(), 12, "{s:?}");
    let bj = pqperf_build::read_build_json(&run).unwrap();
    for (k, e) in &bj.instances {
        assert_eq!(e.extra["iccs_provider"]["kind"], "official", "{k}");
    }
    let lib = run.join(
        bj.instances["iccs/pseudohash-512"]
            .library
            .as_ref()
            .unwrap(),
    );
    let nm = std::process::Command::new("nm").arg(&lib).output().unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    assert!(syms.contains("sm3_bit_compress"), "{syms}");
}
