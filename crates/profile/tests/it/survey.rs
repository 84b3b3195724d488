//! Survey verdicts from real gcc objects: a candidate that only calls the ICCS helpers, one
//! with its own Keccak, one with both, and the curated-CSV override.

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_profile::objscan;
use pqperf_profile::survey::{self, Verdict};

fn cc(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let o = dir.join(format!("{name}.o"));
    let st = Command::new("gcc")
        .args(["-O2", "-fPIC", "-std=c99", "-c"])
        .arg(&c)
        .arg("-o")
        .arg(&o)
        .status()
        .unwrap();
    assert!(st.success(), "gcc {name}");
    o
}

const API_ICCS: &str = r#"
int pseudoXOF(unsigned long long n, const unsigned char *m, unsigned long long l, unsigned char *o);
int get_random_number(void *ctx, unsigned char *o, unsigned long long bits);
extern char drng_algorithm[165];
static int helper(unsigned char *o) { return pseudoXOF(256, o, 256, o); }
int sig_keygen(unsigned char *pk, unsigned long long *pkl, unsigned char *sk, unsigned long long *skl) {
  (void)pkl; (void)skl; get_random_number(drng_algorithm, sk, 256); return helper(pk);
}
"#;

const OWN_KECCAK: &str = r#"
#include <stdint.h>
static const uint64_t RC[4] = {0x0000000000000001ULL, 0x0000000000008082ULL,
                               0x800000000000808aULL, 0x8000000080008000ULL};
void own_permute(uint64_t *s) { for (uint64_t r = s[1]; r < 4; r++) s[0] ^= RC[r]; }
"#;

const UNUSED_AES: &str = r#"
static const unsigned char sbox[8] = {0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5};
unsigned char never_called(int i) { return sbox[i & 7]; }
"#;

#[test]
fn verdicts_from_call_graph() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let api = cc(d, "api", API_ICCS);
    let keccak = cc(d, "keccak", OWN_KECCAK);
    let aes = cc(d, "aes", UNUSED_AES);
    let api_mixed = cc(
        d,
        "api_mixed",
        r#"
#include <stdint.h>
int pseudoXOF(unsigned long long n, const unsigned char *m, unsigned long long l, unsigned char *o);
void own_permute(uint64_t *s);
int sig_sign(unsigned char *sk, unsigned long long skl, const unsigned char *m, unsigned long long ml,
             unsigned char *sn, unsigned long long *snl) {
  uint64_t s[25] = {0}; own_permute(s); (void)skl; (void)ml; (void)snl;
  sn[0] = (unsigned char)s[0]; return pseudoXOF(256, m, 8, sk);
}
"#,
    );
    let api_bypass = cc(
        d,
        "api_bypass",
        r#"
#include <stdint.h>
void own_permute(uint64_t *s);
int kem_keygen(unsigned char *pk, unsigned long long *pkl, unsigned char *sk, unsigned long long *skl) {
  uint64_t s[25] = {0}; own_permute(s); pk[0] = (unsigned char)s[0]; (void)pkl; (void)sk; (void)skl; return 0;
}
"#,
    );

    // ICCS-only: helper reached (through a static function), unused AES table ignored.
    let objs = objscan::read_inputs(&[api.clone(), aes.clone()]).unwrap();
    let entries = survey::api_entries(&objs);
    assert_eq!(entries, vec!["sig_keygen".to_string()]);
    let s = survey::survey_objects("a", &objs, &entries);
    assert_eq!(s.iccs_helpers, vec!["pseudoXOF".to_string()]);
    assert!(s.drng);
    assert!(s.own_primitives.is_empty(), "{:?}", s.own_primitives);
    assert_eq!(s.verdict, Verdict::IccsOnly);

    // Mixed: helper and own Keccak constants reached.
    let objs = objscan::read_inputs(&[api_mixed, keccak.clone()]).unwrap();
    let s = survey::survey_objects("b", &objs, &survey::api_entries(&objs));
    assert_eq!(s.verdict, Verdict::Mixed);
    assert!(s.own_primitives.contains_key("Keccak"));

    // Bypass: own Keccak only.
    let objs = objscan::read_inputs(&[api_bypass, keccak, aes]).unwrap();
    let s = survey::survey_objects("c", &objs, &survey::api_entries(&objs));
    assert_eq!(s.verdict, Verdict::Bypass);
    assert!(
        !s.own_primitives.contains_key("AES"),
        "unreachable AES counted"
    );

    // Wrappable: referenced and defined somewhere.
    let objs = objscan::read_inputs(&[api]).unwrap();
    assert!(objscan::wrappable(&objs, &["pseudoXOF", "sm3hash"]).is_empty());
}

#[test]
fn candidate_combination_and_curated_override() {
    let mk = |label: &str, v: Verdict| survey::InstanceSurvey {
        label: label.into(),
        entries: vec![],
        iccs_helpers: vec![],
        drng: false,
        own_primitives: Default::default(),
        named_symmetric: vec![],
        verdict: v,
    };
    let c = survey::combine(
        "sign-90",
        vec![mk("x", Verdict::Bypass), mk("y", Verdict::Bypass)],
    );
    assert_eq!(c.verdict, Verdict::Bypass);
    let c = survey::combine(
        "sign-90",
        vec![mk("x", Verdict::IccsOnly), mk("y", Verdict::Bypass)],
    );
    assert_eq!(c.verdict, Verdict::InstanceDependent);
    assert!(c.notes.contains("x: ICCS-only"));

    let csv = "# comment\nID;Verdict;Notes\nsign-90;mixed;\"own `shake`; ICCS DRNG\"\n";
    let rows = survey::parse_curated(csv, "symmetric_survey.csv").unwrap();
    assert_eq!(rows[0].notes, "own `shake`; ICCS DRNG");
    let c = survey::apply_curated(c, &rows);
    assert_eq!(c.verdict, Verdict::Mixed);
    assert_eq!(c.derived, Verdict::InstanceDependent);
    assert_eq!(c.source, "curated");
    let text = survey::to_csv(&[c]);
    let back = survey::parse_curated(&text, "x").unwrap();
    assert_eq!(back[0].verdict, Verdict::Mixed);
    assert_eq!(back[0].notes, "own `shake`; ICCS DRNG");

    let bad = survey::parse_curated("ID;Verdict;Notes\nsign-1;maybe;x\n", "f.csv").unwrap_err();
    assert!(bad.to_string().contains("f.csv"), "{bad}");
}

#[test]
fn golden_curated_csv_parses() {
    // Fails with a clear message when the fixtures are absent; PQPERF_GOLDEN=skip skips.
    let Some(golden) = pqperf_model::golden::golden_harness() else {
        return;
    };
    let p = golden.join("performance/symmetric_survey.csv");
    let rows = survey::read_curated(&p).unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .any(|r| r.id == "kem-04" && r.verdict == Verdict::IccsOnly)
    );
}

#[test]
fn dataset_survey_merges_curated_and_derived() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let ds = dir.path().join("ds");
    std::fs::create_dir_all(run.join("survey")).unwrap();
    std::fs::create_dir_all(ds.join("performance")).unwrap();
    let inst = |l: &str, v: Verdict| survey::InstanceSurvey {
        label: l.into(),
        entries: vec![],
        iccs_helpers: vec!["pseudoXOF".into()],
        drng: true,
        own_primitives: Default::default(),
        named_symmetric: vec![],
        verdict: v,
    };
    for (id, v) in [
        ("sign-90", Verdict::IccsOnly),
        ("ml-dsa-44", Verdict::Bypass),
    ] {
        let c = survey::combine(id, vec![inst("x", v)]);
        std::fs::write(
            run.join(format!("survey/{id}.json")),
            serde_json::to_string(&c).unwrap(),
        )
        .unwrap();
    }
    std::fs::write(
        ds.join("performance/symmetric_survey.csv"),
        "ID;Verdict;Notes\nsign-90;mixed;hand-checked\nkem-04;ICCS-only;curated only\n\
         sign-77;bypass;derived from the call graph: own Keccak\n",
    )
    .unwrap();
    assert_eq!(survey::write_dataset_survey(&run, &ds).unwrap(), 4);
    let rows = survey::read_curated(&ds.join("performance/symmetric_survey.csv")).unwrap();
    let get = |id: &str| rows.iter().find(|r| r.id == id).unwrap().clone();
    assert_eq!(get("sign-90").verdict, Verdict::Mixed);
    assert_eq!(get("sign-90").notes, "hand-checked");
    assert_eq!(get("kem-04").notes, "curated only");
    assert_eq!(get("ml-dsa-44").verdict, Verdict::Bypass);
    assert!(get("ml-dsa-44").notes.starts_with(survey::DERIVED_PREFIX));
    // Another system's derived row (a candidate this run does not survey) is kept.
    assert_eq!(get("sign-77").verdict, Verdict::Bypass);
    assert_eq!(
        get("sign-77").notes,
        "derived from the call graph: own Keccak"
    );
    // Idempotent: derived rows are refreshed, not frozen into curated ones.
    assert_eq!(survey::write_dataset_survey(&run, &ds).unwrap(), 4);
}
