//! Pages of a pqperf dataset say what was built from what (issue 27), derived in the test
//! from the golden files with the keys `pqperf build`/`kat` write: the KAT section names where
//! the manifest came from and the computed digests, section 7 names the import command, the
//! submission digest, the folder / evaluated name / manifest entry, catalog edits, the source
//! selection and who defines `drng_algorithm`, the helper sentence names the submission's own
//! helpers, and the producer line names pqperf's commit. Exact lines asserted. (Golden pages
//! without these keys stay byte-identical: tests/it/golden_pages.rs.)

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page};
use serde_json::json;

use crate::common;
use common::*;

#[test]
fn provenance_kat_origin_and_helpers_on_the_candidate_page() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_json(&sys.join("campaign.json"), |c| {
        c["pqperf"] = json!({"version": "0.1.0", "commit": "0123456789abcdef0123456789abcdef01234567",
            "commands": ["pqperf import iccs darts.zip --id sign-08 --sets MODE=128,256,512", "pqperf build"]});
    });
    let sha = "6b5b75cbc386c7e55cb7f1dd5551541ed7ba2b0fc9d8f3dea1be99575b1a8cfb";
    edit_json(&sys.join("build.json"), |b| {
        for (k, e) in b["instances"].as_object_mut().unwrap() {
            if !k.starts_with("sign-08/") {
                continue;
            }
            let label = k.trim_start_matches("sign-08/").to_string();
            e["provenance"] = json!({
                "import": {"command": "pqperf import iccs darts.zip --id sign-08 --sets MODE=128,256,512",
                    "tool": "pqperf 0.1.0 (commit 0123456789ab)", "source": "archive darts.zip", "source_sha256": "ab".repeat(32)},
                "identity": {"folder": "DARTS", "evaluated_instance": label, "built_instance": label,
                    "manifest_entry": format!("{label}/KAT_SIG_{label}.txt"), "note": "names differ"},
                "catalog_edits": if label == "DARTS128" { json!(["exclude = [\"x.c\"] (not set by the import)"]) } else { json!([]) },
                "kat_manifest": {"origin": "submission", "path": "kat.sha256", "sha256": "cd".repeat(32)}
            });
            e["sources"] = json!({"linked": ["R/DARTS/sign.c", "R/DARTS/drng.c"],
                "left_out": {"R/DARTS/darts-keygen.c": "defines main (a program, not part of the library)"}});
            e["drng_algorithm"] = json!("defined by R/DARTS/sign.c");
            if label == "DARTS128" {
                e["kat_computed"] = json!([format!("{sha} strict KAT_SIG_DARTS128.txt")]);
            }
        }
    });
    for f in std::fs::read_dir(sys.join("records/sign-08")).unwrap() {
        edit_json(&f.unwrap().path(), |r| {
            r["pqperf"] = json!({"version": "0.1.0", "iccs_provider": {"kind": "pqperf",
                "library_sha256": "4b6da607a8e9ffff", "compiler": "rustc 1.95.0",
                "submission_sources": {"R/DARTS/drng.c": {"sha256": "99887766554433221100", "defines": ["init_random_number", "get_random_number"]}}}});
        });
    }
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    assert_has(
        &page,
        "The generated KAT text was hashed (canonical SHA-256) and compared with the manifest the submission ships (`kat.sha256`, sha256 cdcdcdcdcdcd…); this was done for each library before timing.",
    );
    assert!(!page.contains("in the harness) before timing"), "{page}");
    assert_has(
        &page,
        &format!("- `DARTS128`: computed `{sha}` strict `KAT_SIG_DARTS128.txt`"),
    );
    assert_has(
        &page,
        &format!(
            "- `DARTS128`: imported with `pqperf import iccs darts.zip --id sign-08 --sets MODE=128,256,512` (pqperf 0.1.0 (commit 0123456789ab)) from `archive darts.zip` (sha256 `{}`); built instance `DARTS128` from folder `DARTS`; ALGORITHM_INSTANCE as gcc evaluates it: `DARTS128`; manifest entry: `DARTS128/KAT_SIG_DARTS128.txt` — these names disagree; catalog edits: `exclude = [\"x.c\"] (not set by the import)`; sources linked: `R/DARTS/sign.c`, `R/DARTS/drng.c`; left out: `R/DARTS/darts-keygen.c` (defines main (a program, not part of the library)); `drng_algorithm` defined by R/DARTS/sign.c.",
            "ab".repeat(32)
        ),
    );
    assert!(
        page.contains("- `DARTS256`: imported with ")
            && page.contains("catalog as imported (no edits)"),
        "{page}"
    );
    assert!(
        page.contains("ICCS helpers: the timings of the NGCC libraries include the submission's own ICCS helpers (drng.c sha256 998877665544…: init_random_number, get_random_number; compiled into the library and linked first), then pqperf's own ICCS helpers (libpqperf_iccs.a sha256 4b6da607a8e9…; rustc 1.95.0) for what they do not define."),
        "{page}"
    );
    assert!(
        page.contains("Produced by pqperf 0.1.0 (git commit 0123456789abcdef0123456789abcdef01234567); commands run: `pqperf import iccs darts.zip --id sign-08 --sets MODE=128,256,512`, `pqperf build`."),
        "{page}"
    );
}

/// Issue 40: when every NGCC library linked its submission's own helpers (each its own
/// files, one provider for the rest), the method and summary pages say so and never
/// "different providers"; the helper baseline is described as the provider its records
/// name (pqperf's Rust helpers), not as `api/auxfunc.c` built with the reference flags.
#[test]
fn own_helpers_everywhere_and_the_baseline_provider_are_stated() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_json(&sys.join("campaign.json"), |c| {
        c["pqperf"] =
            json!({"version": "0.1.0", "commands": ["pqperf campaign all --allow-unfixed-host"]});
    });
    let recs = sys.join("records");
    for cand in std::fs::read_dir(&recs).unwrap() {
        let cand = cand.unwrap().path();
        let id = cand.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&cand).unwrap() {
            edit_json(&f.unwrap().path(), |r| {
                r["pqperf"] = json!({"version": "0.1.0", "iccs_provider": {"kind": "pqperf",
                    "library_sha256": "4b6da607a8e9ffff", "compiler": "rustc 1.95.0",
                    "submission_sources": {format!("R/{id}/auxfunc.c"): {"sha256": format!("{id}00112233445566"), "defines": ["pseudoXOF"]}}}});
            });
        }
    }
    // A helper-baseline record (candidate `iccs`) built over pqperf's provider.
    let first = std::fs::read_dir(recs.join("sign-08"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::create_dir_all(recs.join("iccs")).unwrap();
    let base = recs.join("iccs/pseudoXOF-256__hash_32.json");
    std::fs::copy(&first, &base).unwrap();
    edit_json(&base, |r| {
        r["candidate"] = json!("iccs");
        r["label"] = json!("pseudoXOF-256");
        r["instance"] = json!("pseudoXOF-256");
        r["operation"] = json!("hash_32");
        r["pqperf"] = json!({"version": "0.1.0", "iccs_provider": {"kind": "pqperf",
            "library_sha256": "4b6da607a8e9ffff", "compiler": "rustc 1.95.0"}});
    });
    let ds = Dataset::load(&root).unwrap();
    let method = pqperf_report::method_page(&ds, "x86_1", Form::Harness).unwrap();
    let summary = pqperf_report::summary_page(&ds, "x86_1", Form::Harness).unwrap();
    for page in [&method, &summary] {
        assert!(!page.contains("different providers"), "{page}");
        assert!(
            page.contains("- ICCS helpers: every NGCC library linked its submission's own ICCS helpers first (compiled into the library; named on its candidate page); pqperf's own ICCS helpers (libpqperf_iccs.a sha256 4b6da607a8e9…; rustc 1.95.0) supplies what they do not define."),
            "{page}"
        );
    }
    assert!(
        method.contains("timed directly, as hash instances of pqperf's own ICCS helpers (libpqperf_iccs.a sha256 4b6da607a8e9…; rustc 1.95.0) (records under `iccs/`)")
            && !method.contains("as hash instances of `api/auxfunc.c`")
            && !method.contains("OpenSSL's SM3"),
        "{method}"
    );
}
