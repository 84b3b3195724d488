//! Issue 17 end to end on real C (testdata/candidates/macro-sig): `pqperf import iccs` names
//! instances through the preprocessor, `pqperf kat` passes with no hand edits, a manifest
//! entry under another name is diagnosed (NOKAT with the cause and the catalog field to set),
//! and the harness-default rebuild follows MISMATCH but not NOKAT.

use crate::common;

use std::path::{Path, PathBuf};

use pqperf_model::BuildJson;

use common::repo;

fn run(args: &[&str]) -> String {
    common::ok(None, args)
}

/// A copy of macro-sig with `manifest` as its kat.sha256.
fn copy_with_manifest(tmp: &Path, name: &str, manifest: &str) -> PathBuf {
    let dir = tmp.join(name);
    pqperf_model::fsutil::copy_tree(&repo().join("testdata/candidates/macro-sig"), &dir).unwrap();
    std::fs::write(dir.join("kat.sha256"), manifest).unwrap();
    dir
}

const SHA_192: &str = "b33dcfb98bae08dd1df5748dced7bc6626f1d8d102dd17188e0a114df2028f7d";
const SHA_128: &str = "4b8c5bcbc904c956453fcd20bc8123283be1c142891e35c78e351c1bfa7fd221";

#[test]
fn macro_names_pass_and_name_mismatches_are_diagnosed() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let rd = run_dir.to_str().unwrap();
    let good = repo().join("testdata/candidates/macro-sig");
    // The vectors of MSIG-192 under another name (the only KAT_SIG entry).
    let renamed = copy_with_manifest(
        tmp.path(),
        "renamed",
        &format!("{SHA_192} strict MSIG/KAT_SIG_MSIG192.txt\n"),
    );
    // The manifest's only KAT_SIG entry has another name and other vectors.
    let other = copy_with_manifest(
        tmp.path(),
        "other",
        &format!("{SHA_128} strict MSIG/KAT_SIG_SOMETHING.txt\n"),
    );
    // The right name with the wrong vectors: MISMATCH.
    let wrong = copy_with_manifest(
        tmp.path(),
        "wrong",
        &format!("{SHA_128} strict MSIG/KAT_SIG_MSIG-192.txt\n"),
    );
    let g = good.to_str().unwrap();
    for args in [
        vec![g, "--id", "sign-95"],
        vec![g, "--id", "sign-96", "--define", "MSIG_MODE=1"],
        vec![renamed.to_str().unwrap(), "--id", "sign-97"],
        vec![other.to_str().unwrap(), "--id", "sign-98"],
        vec![wrong.to_str().unwrap(), "--id", "sign-99"],
    ] {
        let mut a = vec!["import", "iccs"];
        a.extend(args);
        a.extend(["--run-dir", rd]);
        run(&a);
    }
    let cat = pqperf_model::catalog::Catalog::load(&run_dir.join("catalog.toml")).unwrap();
    let name = |id: &str| {
        let c = cat.candidate(id).unwrap();
        (c.algorithm.clone(), c.instances[0].instance.clone())
    };
    assert_eq!(name("sign-95"), ("MSIG".into(), "MSIG-192".into()));
    assert_eq!(name("sign-96"), ("MSIG".into(), "MSIG-128".into()));
    assert_eq!(
        cat.candidate("sign-96").unwrap().instances[0].defines,
        vec!["MSIG_MODE=1".to_string()]
    );

    let out = run(&["build", "--run-dir", rd]);
    assert!(out.contains("built 5 libraries, 0 BUILDFAIL"), "{out}");
    // The build records the header's name as gcc sees it with the catalog defines.
    let blog = std::fs::read_to_string(run_dir.join("build/sign-96.log")).unwrap();
    assert!(
        blog.contains("-DMSIG_MODE=1")
            && blog.contains("# SIG_AlgorithmInstance.h: ALGORITHM_INSTANCE = \"MSIG-128\"\n"),
        "{blog}"
    );
    assert!(!blog.contains("# note:"), "{blog}");

    // NOKAT is not PASS: exit 1.
    let out = common::exits(None, &["kat", "--run-dir", rd, "--timeout", "120"], 1);
    assert!(out.contains("kat: 5 instance(s)"), "{out}");
    assert!(out.contains("RESULT sign-95 MSIG-192 PASS"), "{out}");
    assert!(out.contains("RESULT sign-96 MSIG-128 PASS"), "{out}");
    let diag = "RESULT sign-97 MSIG-192 NOKAT KAT_SIG_MSIG-192.txt: no manifest entry of this name; its digest equals manifest entry MSIG/KAT_SIG_MSIG192.txt (name \"MSIG192\"): set instance = \"MSIG192\" for sign-97/MSIG-192 in the catalog";
    assert!(out.contains(diag), "{out}");
    assert!(
        out.contains("RESULT sign-98 MSIG-192 NOKAT KAT_SIG_MSIG-192.txt: no manifest entry of this name; the manifest's only entry of this type is MSIG/KAT_SIG_SOMETHING.txt (name \"SOMETHING\", digest differs): if that is this instance, set instance = \"SOMETHING\" for sign-98/MSIG-192 in the catalog"),
        "{out}"
    );
    assert!(out.contains("RESULT sign-99 MSIG-192 MISMATCH"), "{out}");
    // The KAT logs: sizes from the macros of each parameter set, the diagnosis line.
    // Labels are the evaluated parameter-set names (issue 27), not the folder name MSIG.
    let log = |id: &str| {
        let label = if id == "sign-96" {
            "MSIG-128"
        } else {
            "MSIG-192"
        };
        std::fs::read_to_string(run_dir.join(format!("kat/{id}/{label}.log"))).unwrap()
    };
    let l95 = log("sign-95");
    assert!(
        l95.contains("pk_len      = 48\nsk_len      = 72\nsn_len      = 1248\n"),
        "{l95}"
    );
    assert!(l95.contains(&format!("computed {SHA_192} strict KAT_SIG_MSIG-192.txt\n")));
    let l96 = log("sign-96");
    assert!(
        l96.contains("pk_len      = 32\nsk_len      = 48\nsn_len      = 576\n"),
        "{l96}"
    );
    assert!(l96.contains(&format!("computed {SHA_128} strict KAT_SIG_MSIG-128.txt\n")));
    let l97 = log("sign-97");
    assert!(
        l97.contains(&format!(
            "name mismatch: {}\n",
            &diag["RESULT sign-97 MSIG-192 NOKAT ".len()..]
        )),
        "{l97}"
    );
    assert!(l97.ends_with(&format!("{diag}\n")), "{l97}");
    // Fallback: NOKAT keeps the guide build; MISMATCH was rebuilt with the harness defaults.
    let bj: BuildJson =
        pqperf_model::pyjson::read(&run_dir.join("build.json"), Path::new("build.json")).unwrap();
    for id in ["sign-95", "sign-96", "sign-97", "sign-98"] {
        let label = if id == "sign-96" {
            "MSIG-128"
        } else {
            "MSIG-192"
        };
        let e = &bj.instances[&format!("{id}/{label}")];
        assert_eq!(
            (e.flags.as_str(), e.guide_result.as_deref()),
            ("guide", None),
            "{id}"
        );
    }
    let e = &bj.instances["sign-97/MSIG-192"];
    assert_eq!(e.kat, "NOKAT");
    let e = &bj.instances["sign-99/MSIG-192"];
    assert_eq!(
        (e.flags.as_str(), e.guide_result.as_deref(), e.kat.as_str()),
        ("harness-default", Some("MISMATCH"), "MISMATCH")
    );
    let blog = std::fs::read_to_string(run_dir.join("build/sign-99.log")).unwrap();
    assert!(blog.contains("flags harness-default"), "{blog}");
    let blog = std::fs::read_to_string(run_dir.join("build/sign-97.log")).unwrap();
    assert!(!blog.contains("flags harness-default"), "{blog}");
}
