//! Issue 27 end to end on real C, as a submitter runs it (`import iccs` → `build` → `kat`):
//! a folder whose name lies about the parameter set its mode macro builds, several sets from
//! one folder (`--sets`, `--define`), command-line programs with `main` beside the library
//! (testdata/candidates/messy-sig); an upper-case benchmark that defines `drng_algorithm`
//! and calls a helper of `cpucycles.c`, the submission's own `auxfunc.c`, no manifest
//! (testdata/candidates/speed-kem). Every recorded command and path is checked for machine
//! paths.

use crate::common;

use std::path::Path;

use pqperf_model::BuildJson;
use serde_json::Value;

use common::repo;

fn run(args: &[&str]) -> String {
    common::ok(None, args)
}

fn build_json(run_dir: &Path) -> BuildJson {
    pqperf_model::pyjson::read(&run_dir.join("build.json"), Path::new("build.json")).unwrap()
}

const SHA_192: &str = "b33dcfb98bae08dd1df5748dced7bc6626f1d8d102dd17188e0a114df2028f7d";

#[test]
fn a_folder_that_lies_several_sets_and_tool_programs() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let rd = run_dir.to_str().unwrap();
    let sub = repo().join("testdata/candidates/messy-sig");
    let s = sub.to_str().unwrap();
    // Folder MSIG-128, mode macro defaulting to 3: the code builds MSIG-192, and import says
    // so in one line naming folder, evaluated name and manifest entries.
    let out = run(&["import", "iccs", s, "--id", "sign-80", "--run-dir", rd]);
    assert!(
        out.contains("import: sign-80/MSIG-192: folder MSIG-128, ALGORITHM_INSTANCE MSIG-192 (gcc, no defines), manifest entry of the folder MSIG-128/KAT_SIG_MSIG-128.txt: they disagree; built MSIG-192 (its manifest entry: MSIG-192/KAT_SIG_MSIG-192.txt); the folder's entry is another parameter set")
            // The hint names the macro that selects the set (issue 40).
            && out.contains("select it with --define or --sets (the sources test MSIG_MODE (1, 3): e.g. --define MSIG_MODE=1)"),
        "{out}"
    );
    let cat = || pqperf_model::catalog::Catalog::load(&run_dir.join("catalog.toml")).unwrap();
    let labels = |c: &pqperf_model::catalog::Catalog| -> Vec<(String, String, Vec<String>)> {
        c.candidate("sign-80")
            .unwrap()
            .instances
            .iter()
            .map(|i| (i.label.clone(), i.instance.clone(), i.defines.clone()))
            .collect()
    };
    assert_eq!(
        labels(&cat()),
        vec![("MSIG-192".into(), "MSIG-192".into(), vec![])]
    );
    assert_eq!(cat().candidate("sign-80").unwrap().algorithm, "MSIG");
    // A --define adds its set beside the one imported before.
    let out = run(&[
        "import",
        "iccs",
        s,
        "--id",
        "sign-80",
        "--define",
        "MSIG_MODE=1",
        "--run-dir",
        rd,
    ]);
    assert!(
        out.contains("import: sign-80/MSIG-128: added beside MSIG-192; MSIG-192 came from the same folder MSIG-128 in an earlier import and stays: it will be built, measured and published too"),
        "{out}"
    );
    // --sets imports several at once; the same set again replaces it and says so.
    let out = run(&[
        "import",
        "iccs",
        s,
        "--id",
        "sign-80",
        "--sets",
        "MSIG_MODE=1,3",
        "--run-dir",
        rd,
    ]);
    assert!(
        out.contains("import: sign-80/MSIG-128: replaces the instance imported before under this label (defines [MSIG_MODE=1] → [MSIG_MODE=1])")
            && out.contains("import: sign-80/MSIG-192: replaces the instance imported before under this label (defines [] → [MSIG_MODE=3])"),
        "{out}"
    );
    assert_eq!(
        labels(&cat()),
        vec![
            (
                "MSIG-192".into(),
                "MSIG-192".into(),
                vec!["MSIG_MODE=3".into()]
            ),
            (
                "MSIG-128".into(),
                "MSIG-128".into(),
                vec!["MSIG_MODE=1".into()]
            ),
        ]
    );
    // A bad --sets value is refused with the expected form.
    let (code, _, err) = common::status(&[
        "import",
        "iccs",
        s,
        "--id",
        "sign-80",
        "--sets",
        "MSIG_MODE",
        "--run-dir",
        rd,
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("expected NAME=V1,V2"), "{err}");

    // The three programs with main are left out (found from their objects, not names).
    let out = run(&["build", "--run-dir", rd]);
    assert!(out.contains("built 2 libraries, 0 BUILDFAIL"), "{out}");
    let log = std::fs::read_to_string(run_dir.join("build/sign-80.log")).unwrap();
    for p in ["keygen", "sign", "verif"] {
        assert!(
            log.contains(&format!("# left out: Reference_Implementation/MSIG-128/msig-{p}.c: defines main (a program, not part of the library)\n")),
            "{log}"
        );
    }
    assert!(log.contains("# sources linked: Reference_Implementation/MSIG-128/msig.c\n"));
    assert!(log.contains("# drng_algorithm: defined by the shim\n"));

    let out = run(&["kat", "--run-dir", rd, "--timeout", "120", "--no-fallback"]);
    assert!(out.contains("RESULT sign-80 MSIG-192 PASS"), "{out}");
    assert!(out.contains("RESULT sign-80 MSIG-128 PASS"), "{out}");
    // The KAT log labels the digest it computed as computed.
    let klog = std::fs::read_to_string(run_dir.join("kat/sign-80/MSIG-192.log")).unwrap();
    assert!(
        klog.contains(&format!("computed {SHA_192} strict KAT_SIG_MSIG-192.txt\n")),
        "{klog}"
    );
    assert!(!klog.contains("\nmanifest "), "{klog}");

    // build.json: provenance with the exact command, the tree digest, the identity.
    let bj = build_json(&run_dir);
    let e = &bj.instances["sign-80/MSIG-192"].extra;
    let p = &e["provenance"];
    assert_eq!(
        p["import"]["command"],
        "pqperf import iccs messy-sig --id sign-80 --sets MSIG_MODE=1,3"
    );
    assert_eq!(p["import"]["source"], "tree messy-sig");
    assert_eq!(
        p["import"]["source_sha256"].as_str().unwrap(),
        pqperf_model::provenance::tree_sha256(&sub).unwrap()
    );
    assert!(
        p["import"]["tool"]
            .as_str()
            .unwrap()
            .starts_with("pqperf 0.1.0 (commit ")
    );
    assert_eq!(p["identity"]["folder"], "MSIG-128");
    assert_eq!(p["identity"]["evaluated_instance"], "MSIG-192");
    assert_eq!(
        p["identity"]["manifest_entry"],
        "MSIG-192/KAT_SIG_MSIG-192.txt"
    );
    assert!(p["identity"]["note"].is_string());
    assert_eq!(p["catalog_edits"], serde_json::json!([]));
    assert_eq!(p["kat_manifest"]["origin"], "submission");
    assert_eq!(
        e["sources"]["left_out"].as_object().unwrap().keys().count(),
        3
    );
    assert_eq!(
        e["kat_computed"],
        serde_json::json!([format!("{SHA_192} strict KAT_SIG_MSIG-192.txt")])
    );
    // MSIG-128: folder and instance agree, no note.
    let p128 = &bj.instances["sign-80/MSIG-128"].extra["provenance"]["identity"];
    assert!(p128.get("note").is_none(), "{p128}");
    // campaign.json: the commands with their flags, pqperf's commit.
    let camp: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("campaign.json")).unwrap())
            .unwrap();
    let cmds: Vec<&str> = camp["pqperf"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        cmds.contains(&"pqperf import iccs messy-sig --id sign-80 --define MSIG_MODE=1"),
        "{cmds:?}"
    );
    assert!(cmds.contains(&"pqperf build"), "{cmds:?}");
    assert!(camp["pqperf"]["commit"].is_string());
    for f in ["build.json", "campaign.json"] {
        let t = std::fs::read_to_string(run_dir.join(f)).unwrap();
        assert_eq!(pqperf_model::paths::find_machine_path(&t), None, "{f}");
    }

    // A hand edit of the catalog is named in the next build's provenance.
    let cp = run_dir.join("catalog.toml");
    let text = std::fs::read_to_string(&cp).unwrap();
    let text = text.replacen(
        "defines = [\"MSIG_MODE=3\"]",
        "defines = [\"MSIG_MODE=3\"]\nexclude = [\"MSIG-VERIF.C\"]",
        1,
    );
    std::fs::write(&cp, text).unwrap();
    run(&["build", "--run-dir", rd, "--only", "MSIG-192"]);
    let bj = build_json(&run_dir);
    let e = &bj.instances["sign-80/MSIG-192"].extra;
    assert_eq!(
        e["provenance"]["catalog_edits"],
        serde_json::json!(["exclude = [\"MSIG-VERIF.C\"] (not set by the import)"])
    );
    // The exclude pattern matches regardless of case, and says so.
    assert_eq!(
        e["sources"]["left_out"]["Reference_Implementation/MSIG-128/msig-verif.c"],
        "exclude pattern \"MSIG-VERIF.C\""
    );
}

#[test]
fn a_benchmark_file_own_helpers_and_no_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let rd = run_dir.to_str().unwrap();
    let sub = repo().join("testdata/candidates/speed-kem");
    let s = sub.to_str().unwrap();
    run(&["import", "iccs", s, "--id", "kem-80", "--run-dir", rd]);
    let cat = pqperf_model::catalog::Catalog::load(&run_dir.join("catalog.toml")).unwrap();
    let c = cat.candidate("kem-80").unwrap();
    // SPEEDKEM128 has no '-'/'_': the algorithm is the name without its digits.
    assert_eq!(c.algorithm, "SPEEDKEM");
    // The benchmark's drng_algorithm does not decide anything at import.
    assert!(!c.instances[0].no_drng);

    let out = run(&["build", "--run-dir", rd]);
    assert!(out.contains("built 1 library, 0 BUILDFAIL"), "{out}");
    let log = std::fs::read_to_string(run_dir.join("build/kem-80.log")).unwrap();
    assert!(
        log.contains("# left out: Reference_Implementation/SPEEDKEM128/SPEED_KEM.c: name of a driver, test or benchmark (default rule; keep it with --include)\n"),
        "{log}"
    );
    assert!(
        log.contains("# drng_algorithm: defined by the shim\n"),
        "{log}"
    );
    assert!(
        log.contains("# ICCS helpers from the submission: Reference_Implementation/SPEEDKEM128/auxfunc.c defines sm3hash pseudohash pseudoXOF (linked before the provider)\n"),
        "{log}"
    );
    let bj = build_json(&run_dir);
    let e = &bj.instances["kem-80/SPEEDKEM128"].extra;
    let own =
        &e["iccs_provider"]["submission_sources"]["Reference_Implementation/SPEEDKEM128/auxfunc.c"];
    assert_eq!(
        own["sha256"].as_str().unwrap(),
        pqperf_build::sha256_file(&sub.join("Reference_Implementation/SPEEDKEM128/auxfunc.c"))
            .unwrap()
    );
    let sentence = pqperf_model::iccsprovider::describe(&e["iccs_provider"]);
    assert!(
        sentence.starts_with("the submission's own ICCS helpers (auxfunc.c sha256 ")
            && sentence.contains("then pqperf's own ICCS helpers"),
        "{sentence}"
    );

    // Kept by --include, the benchmark is still left out: it defines main. cpucycles.c, which
    // it calls, is linked (harmless), and the benchmark's drng_algorithm is not the library's.
    run(&[
        "import",
        "iccs",
        s,
        "--id",
        "kem-80",
        "--include",
        "speed_kem.c",
        "--include",
        "CPUCYCLES.C",
        "--run-dir",
        rd,
    ]);
    let out = run(&["build", "--run-dir", rd]);
    assert!(out.contains("built 1 library, 0 BUILDFAIL"), "{out}");
    let log = std::fs::read_to_string(run_dir.join("build/kem-80.log")).unwrap();
    assert!(
        log.contains("# left out: Reference_Implementation/SPEEDKEM128/SPEED_KEM.c: defines main (a program, not part of the library)\n"),
        "{log}"
    );
    assert!(
        log.contains("# drng_algorithm: defined by the shim\n"),
        "{log}"
    );
    let bj = build_json(&run_dir);
    let e = &bj.instances["kem-80/SPEEDKEM128"].extra;
    let linked: Vec<&str> = e["sources"]["linked"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        linked,
        vec![
            "Reference_Implementation/SPEEDKEM128/auxfunc.c",
            "Reference_Implementation/SPEEDKEM128/cpucycles.c",
            "Reference_Implementation/SPEEDKEM128/kem.c"
        ]
    );
    assert_eq!(e["drng_algorithm"], "defined by the shim");

    // No manifest: NOKAT, and build.json says there was none.
    // NOKAT is not PASS: exit 1, the documented code.
    let out = common::exits(None, &["kat", "--run-dir", rd, "--timeout", "120"], 1);
    assert!(out.contains("RESULT kem-80 SPEEDKEM128 NOKAT"), "{out}");
    let bj = build_json(&run_dir);
    assert_eq!(
        bj.instances["kem-80/SPEEDKEM128"].extra["provenance"]["kat_manifest"],
        serde_json::json!({"origin": "none"})
    );
}
