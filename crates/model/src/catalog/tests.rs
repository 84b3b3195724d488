//! Unit tests of the catalog: parsing, semantic checks with line numbers, id rules.

use super::*;

#[test]
fn iccs_provider_key_round_trips_before_the_candidates() {
    let text = format!("iccs_provider = \"official:../iccs-official\"\n{SAMPLE}");
    let cat = Catalog::parse(&text, Path::new("c.toml")).unwrap();
    assert_eq!(
        cat.iccs_provider.as_deref(),
        Some("official:../iccs-official")
    );
    let out = cat.to_toml_string();
    let key = out.find("iccs_provider = ").unwrap();
    assert!(key < out.find("[[candidate]]").unwrap(), "{out}");
    assert_eq!(Catalog::parse(&out, Path::new("c.toml")).unwrap(), cat);
    let plain = Catalog::parse(SAMPLE, Path::new("c.toml")).unwrap();
    assert!(plain.iccs_provider.is_none());
    assert!(!plain.to_toml_string().contains("iccs_provider"));
}

const SAMPLE: &str = r#"
[[candidate]]
id = "ml-dsa-44"
type = "sign"
algorithm = "ML-DSA-44"
root = "/tmp/pqclean"

[[candidate.instance]]
label = "ml-dsa-44_clean"
instance = "ML-DSA-44"
source_dir = "crypto_sign/ml-dsa-44/clean"
files = ["*.c", "../../../common/fips202.c"]
include_dirs = ["../../../common"]
api = "nist"
nist = { namespace = "PQCLEAN_MLDSA44_CLEAN", pk_bytes = 1312, sk_bytes = 2560, sig_bytes = 2420, ctx = true }
kat = { kind = "nistkat", sha256 = "9a196e7fb32fbc93757dc2d8dc1924460eab66303c0c08aeb8b798fb8d8f8cf3" }

[[candidate]]
id = "sign-99"
type = "sign"
algorithm = "WOTS-PXOF"
root = "../testdata/candidates/wots"

[[candidate.instance]]
label = "WOTS-PXOF-128"
instance = "WOTS-PXOF-128"
source_dir = "Reference_Implementation/WOTS-PXOF-128"
kat = { kind = "manifest", manifest = "kat.sha256", reference_dir = "KAT" }
"#;

#[test]
fn parses_and_roundtrips() {
    let c = Catalog::parse(SAMPLE, Path::new("catalog.toml")).unwrap();
    assert_eq!(c.candidates.len(), 2);
    let (cand, inst) = c.instances().next().unwrap();
    assert_eq!(inst.key(cand), "ml-dsa-44/ml-dsa-44_clean");
    assert_eq!(inst.variant, "reference");
    assert_eq!(inst.api, ApiKind::Nist);
    assert!(matches!(
        inst.kat,
        Kat::Nistkat {
            rng: NistRng::Nist,
            ..
        }
    ));
    assert!(inst.nist.as_ref().unwrap().ctx);
    let text = c.to_toml_string();
    let back = Catalog::parse(&text, Path::new("x.toml")).unwrap();
    assert_eq!(back, c);
    assert_eq!(c.candidates[1].instances[0].api, ApiKind::Iccs);
    assert_eq!(
        c.candidates[1].root_path(Path::new("/r/runs/default")),
        PathBuf::from("/r/runs/default/../testdata/candidates/wots")
    );
}

#[test]
fn syntax_error_names_file_and_line() {
    let bad = SAMPLE
        .replace("variant", "x")
        .replace("algorithm = \"WOTS-PXOF\"", "algorithm = ");
    let e = Catalog::parse(&bad, Path::new("runs/x/catalog.toml")).unwrap_err();
    let s = e.to_string();
    assert!(s.starts_with("runs/x/catalog.toml:21:"), "{s}");
}

#[test]
fn unknown_key_names_line() {
    let bad = SAMPLE.replace("source_dir = \"Reference", "sourcedir = \"Reference");
    let e = Catalog::parse(&bad, Path::new("c.toml")).unwrap_err();
    assert_eq!(e.line, Some(27), "{e}");
    assert!(e.message.contains("sourcedir"), "{e}");
}

#[test]
fn semantic_errors_name_line() {
    let bad = SAMPLE.replace("id = \"sign-99\"", "id = \"kem-99\"");
    let e = Catalog::parse(&bad, Path::new("c.toml")).unwrap_err();
    assert_eq!(e.line, Some(19), "{e}");
    let bad = SAMPLE
        .replace("label = \"WOTS-PXOF-128\"", "label = \"ml-dsa-44_clean\"")
        .replace("id = \"sign-99\"", "id = \"ml-dsa-44\"");
    let e = Catalog::parse(&bad, Path::new("c.toml")).unwrap_err();
    assert!(e.message.contains("duplicate candidate id"), "{e}");
    let bad = SAMPLE.replace("sig_bytes = 2420, ", "");
    let e = Catalog::parse(&bad, Path::new("c.toml")).unwrap_err();
    assert!(e.message.contains("sig_bytes"), "{e}");
    assert_eq!(e.line, Some(9));
}

#[test]
fn id_rules() {
    assert!(is_submission_id("sign-02"));
    assert!(!is_submission_id("sign-2"));
    assert!(!is_submission_id("ml-dsa-44"));
    assert!(valid_candidate_id("ml-dsa-44"));
    assert!(!valid_candidate_id("ML-DSA"));
    assert!(valid_label("BiT-128-avx2"));
    assert!(!valid_label("a/b"));
    assert!(valid_instance_name("dove_classic_128"));
    assert!(!valid_instance_name("a.b"));
}

#[test]
fn upsert_replaces_in_place() {
    let mut c = Catalog::parse(SAMPLE, Path::new("c.toml")).unwrap();
    let mut first = c.candidates[0].clone();
    first.algorithm = "X".into();
    c.upsert(first);
    assert_eq!(c.candidates[0].algorithm, "X");
    assert_eq!(c.candidates.len(), 2);
}
