//! Pages of candidates with shapes the golden set does not have, from evidence derived in the
//! test from the golden files (copied to a temporary directory and edited): a KEM record set,
//! a failed KAT with a kat_issues footnote, short counts, a single-process record, a missing
//! ELF size, a failed record, retried signing attempts, a hash candidate. Exact lines asserted.

use std::path::Path;

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page, summary_page};
use serde_json::{Value, json};

use crate::common;
use common::*;

fn append(p: &Path, line: &str) {
    let mut s = std::fs::read_to_string(p).unwrap();
    s.push_str(line);
    s.push('\n');
    std::fs::write(p, s).unwrap();
}

fn lines(page: &str) -> Vec<&str> {
    page.lines().collect()
}

/// Turn sign-08 on arm_1 into a KEM candidate `kem-90` with labels KEMX128/256/512
/// (keygen/sign/verify → keygen/enc/dec) and API sizes of a KEM.
fn make_kem(root: &Path) {
    let sys = root.join("performance/data/arm_1");
    for kind in ["records", "profile"] {
        let src = sys.join(kind).join("sign-08");
        for e in std::fs::read_dir(&src).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let (label, op) = name.trim_end_matches(".json").split_once("__").unwrap();
            let new_op = match op {
                "sign" => "enc",
                "verify" => "dec",
                o => o,
            };
            let new_label = label.replace("DARTS", "KEMX");
            let mut v = read_json(&src.join(&name));
            v["candidate"] = json!("kem-90");
            v["label"] = json!(new_label);
            v["operation"] = json!(new_op);
            if kind == "records" {
                v["instance"] = json!(new_label);
                v["kat_log"] = json!(format!("kat/kem-90/{new_label}.log"));
                v["sizes"] = json!({"input_bytes": 0, "pk_bytes": 800, "sk_bytes": 1632,
                    "ct_bytes": 768, "ss_bytes": 32, "signature_bytes": 0, "digest_bytes": 0});
            }
            write_json(
                &sys.join(kind)
                    .join("kem-90")
                    .join(format!("{new_label}__{new_op}.json")),
                &v,
            );
        }
    }
    edit_json(&sys.join("build.json"), |b| {
        let inst = b["instances"].as_object_mut().unwrap();
        for n in ["128", "256", "512"] {
            let mut e = inst[&format!("sign-08/DARTS{n}")].clone();
            e["candidate"] = json!("kem-90");
            e["label"] = json!(format!("KEMX{n}"));
            e["instance"] = json!(format!("KEMX{n}"));
            e["kat_log"] = json!(format!("kat/kem-90/KEMX{n}.log"));
            inst.insert(format!("kem-90/KEMX{n}"), e);
        }
    });
    append(
        &root.join("downloads.csv"),
        "kem-90;KEM-X;https://example.org/kem-90",
    );
    append(
        &root.join("performance/external_sizes.csv"),
        "kem-90;KEMX128;800;768;;encoded",
    );
    append(
        &root.join("performance/external_sizes.csv"),
        "kem-90;KEMX256;1184;1088;;encoded",
    );
    append(
        &root.join("performance/symmetric_survey.csv"),
        "kem-90;mixed;own AES for the mask",
    );
}

#[test]
fn kem_shaped_candidate() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    make_kem(&root);
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "arm_1", "kem-90", Form::Harness).unwrap();
    let l = lines(&page);
    assert_eq!(
        l[0],
        "# kem-90 KEM-X — performance on AArch64 (system arm_1)"
    );
    assert_has(
        &page,
        "- Category: public-key algorithm; function: key encapsulation",
    );
    assert_has(&page, "- Parameter sets: `KEMX128`, `KEMX256`, `KEMX512`");
    // Operation order keygen, enc, dec; numbers are those of the DARTS128 records.
    let perf: Vec<&str> = l
        .iter()
        .copied()
        .filter(|x| {
            x.starts_with("| `KEMX128` | ") && x.ends_with(" × 3351) |")
                || x.starts_with("| `KEMX128` | enc | ")
                || x.starts_with("| `KEMX128` | dec | ")
        })
        .filter(|x| x.contains(" (5 × "))
        .collect();
    assert_eq!(
        perf,
        [
            "| `KEMX128` | keygen | 792.1 k | 294 µs | 3.4e+03 | 293 µs | 16755 (5 × 3351) |",
            "| `KEMX128` | enc | 42.56 M | 15.8 ms | 63.3 | 15.7 ms | 205 (5 × 41) |",
            "| `KEMX128` | dec | 316.0 k | 117 µs | 8.53e+03 | 117 µs | 25825 (5 × 5165) |",
        ]
    );
    assert_has(
        &page,
        "| instance | public key | secret key | ciphertext | shared secret |",
    );
    // pk and ct from the catalog, sk and ss from the API.
    assert_has(&page, "| `KEMX128` | 800 | 1632 | 768 | 32 |");
    assert_has(&page, "| `KEMX256` | 1184 | 1632 | 1088 | 32 |");
    // No catalog row: API capacities.
    assert_has(&page, "| `KEMX512` | 800 | 1632 | 768 | 32 |");
    assert_has(
        &page,
        "[Survey](../performance/symmetric-survey.md) verdict: **mixed** — own AES for the mask",
    );
    assert_has(
        &page,
        "| `KEMX128` | enc | 90% | 0.0% | pseudoXOF 210, pseudohash 83 |",
    );
    assert_has(
        &page,
        "| `KEMX128` | timing dec | `records/kem-90/KEMX128__dec.json` |",
    );
    assert_has(
        &page,
        "| `KEMX128` | hash profile enc | `profile/kem-90/KEMX128__enc.json` |",
    );

    let summary = summary_page(&ds, "arm_1", Form::Harness).unwrap();
    assert_has(&summary, "## Key encapsulation");
    assert_has(
        &summary,
        "| id | algorithm | instance performance report | keygen cycles (sym %) | enc cycles (sym %) | dec cycles (sym %) | public key (B) | ciphertext (B) | notes |",
    );
    assert_has(
        &summary,
        "| [kem-90](../kem-90/perf_arm_1.md) | KEM-X [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/kem-90/kem-90-spec.pdf) | `KEMX128` | 792.1 k (53%) | 42.56 M (90%) | 316.0 k (68%) | 800 | 768 | mixed own/ICCS primitives |",
    );
    // Key encapsulation comes after the signatures.
    let sig = summary.find("## Digital signatures").unwrap();
    let kem = summary.find("## Key encapsulation").unwrap();
    assert!(sig < kem);
}

#[test]
fn failed_kat_short_counts_single_process_missing_elf() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    // DARTS256: KAT MISMATCH, explained by a kat_issues row; no ELF size (as x86_1 omits it
    // for failed instances).
    edit_json(&sys.join("build.json"), |b| {
        let e = &mut b["instances"]["sign-08/DARTS256"];
        e["kat"] = json!("MISMATCH");
        e.as_object_mut().unwrap().remove("elf_load_bytes");
    });
    append(
        &root.join("performance/kat_issues.csv"),
        "sign-08;^DARTS256$;measure;MISMATCH: the submitted vectors were produced by different code.",
    );
    // DARTS512: a KAT TIMEOUT note that must be ignored because the instance passes here.
    append(
        &root.join("performance/kat_issues.csv"),
        "sign-08;^DARTS512$;measure;KAT TIMEOUT only: passes elsewhere.",
    );
    // DARTS128 sign: one process of 5 trials with 7 calls each (35 < 100), with retries.
    edit_json(&sys.join("records/sign-08/DARTS128__sign.json"), |r| {
        let mut p = r["processes"][0].clone();
        let trials: Vec<Value> = (0..5)
            .map(|_| json!({"measurements": 7, "seconds": 0.15, "cycles": 315000000}))
            .collect();
        p["trials"] = json!(trials.clone());
        p["meta"]["sign_failures_retried"] = json!("12");
        r["processes"] = json!([p]);
        r["trials"] = json!(trials);
        r["plan"]["separate_processes"] = json!(false);
        r["plan"]["iterations_per_trial"] = json!(7);
        r["measurements"] = json!(35);
        r["guide_100_measurements_met"] = json!(false);
        r["mean_seconds"] = json!(0.15 / 7.0);
        r["median_trial_seconds"] = json!(0.15 / 7.0);
        r["mean_cycles"] = json!(45000000.0);
        r["operations_per_second"] = json!(7.0 / 0.15);
    });
    // DARTS512 verify: failed record.
    edit_json(&sys.join("records/sign-08/DARTS512__verify.json"), |r| {
        r["status"] = json!("failed_or_partial");
    });
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    let l = lines(&page);
    let kat_start = l
        .iter()
        .position(|x| *x == "| instance | build flags | KAT |")
        .unwrap();
    assert_eq!(
        &l[kat_start..kat_start + 8],
        [
            "| instance | build flags | KAT |",
            "|---|---|---|",
            "| `DARTS128` | guide | PASS |",
            "| `DARTS256` | guide | MISMATCH [1] |",
            "| `DARTS512` | guide | PASS |",
            "",
            "[1] MISMATCH: the submitted vectors were produced by different code. These instances are timed anyway; their output is not validated.",
            "",
        ]
    );
    assert_eq!(l[kat_start + 8], "## 4. Performance");
    assert_has(
        &page,
        "| `DARTS128` | sign | 45.00 M | 21.4 ms | 46.7 | 21.4 ms | 35 (5 × 7); 12 failed signing attempts retried |",
    );
    assert_has(&page, "| `DARTS512` | verify | failed | | | | |");
    assert_has(&page, "| `DARTS256` | keygen | – | 1696 KiB | 1876 KiB |");
    assert_has(&page, "| `DARTS128` | sign | 55669 | 1740 KiB | 1924 KiB |");

    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    let row = |label: &str| -> String {
        summary
            .lines()
            .find(|l| l.contains(&format!("| `{label}`")))
            .unwrap_or_else(|| panic!("no summary row for {label}:\n{summary}"))
            .to_string()
    };
    assert!(
        row("DARTS128").contains(
            "| `DARTS128` | 953.3 k (46%) | 45.00 M (88%, n=35) | 353.5 k (64%) | 1120 | 1449 | – |"
        ),
        "{}",
        row("DARTS128")
    );
    assert!(row("DARTS256").contains("| `DARTS256` ⚠ KAT MISMATCH | 1.24 M (64%) | 33.85 M (87%) | 875.1 k (72%) | 2208 | 2489 | KAT/output caveat; see candidate page |"), "{}", row("DARTS256"));
    assert!(
        row("DARTS512").contains("| 10.74 M (87%) | failed | 4672 | 5851 | – |"),
        "{}",
        row("DARTS512")
    );
}

#[test]
fn hash_candidate_page_and_summary() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    // A hash candidate from the DARTS128 keygen record at three message lengths.
    let base = read_json(&sys.join("records/sign-08/DARTS128__keygen.json"));
    for (len, cycles, secs) in [
        (32u64, 4068.0, 2.0e-6),
        (1024, 23700.0, 1.1e-5),
        (65536, 1.4e6, 6.5e-4),
    ] {
        let mut r = base.clone();
        r["candidate"] = json!("hash-90");
        r["label"] = json!("HX256");
        r["instance"] = json!("HX256");
        r["operation"] = json!("hash");
        r["input_bytes"] = json!(len);
        r["mean_cycles"] = json!(cycles);
        r["mean_seconds"] = json!(secs);
        r["throughput_MB_per_second"] = json!(len as f64 / secs / 1e6);
        r["sizes"] = json!({"input_bytes": len, "digest_bytes": 32});
        r["kat_log"] = Value::Null;
        r["kat_log_sha256"] = Value::Null;
        write_json(
            &sys.join(format!("records/hash-90/HX256__hash_{len}.json")),
            &r,
        );
    }
    append(
        &root.join("downloads.csv"),
        "hash-90;HX;https://example.org/hash-90",
    );
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "hash-90", Form::Harness).unwrap();
    assert_has(
        &page,
        "- Category: cryptographic hash algorithm; function: hash",
    );
    assert_has(
        &page,
        "| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |",
    );
    assert_has(
        &page,
        "| `HX256` | 32 B | 4068 | 127.1 | 2 µs | 16.0 | 17240 (5 × 3448) |",
    );
    assert_has(
        &page,
        "| `HX256` | 1024 B | 23.7 k | 23.1 | 11 µs | 93.1 | 17240 (5 × 3448) |",
    );
    assert_has(
        &page,
        "| `HX256` | 65536 B | 1.40 M | 21.4 | 650 µs | 100.8 | 17240 (5 × 3448) |",
    );
    assert!(!page.contains("## 6."), "hash pages have no size section");
    assert!(!page.contains("## Symmetric primitives"));
    // Evidence rows sorted by operation key as plain strings; no KAT log recorded.
    let ev: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `HX256` | timing"))
        .collect();
    assert_eq!(
        ev,
        [
            "| `HX256` | timing hash_1024 | `records/hash-90/HX256__hash_1024.json` |",
            "| `HX256` | timing hash_32 | `records/hash-90/HX256__hash_32.json` |",
            "| `HX256` | timing hash_65536 | `records/hash-90/HX256__hash_65536.json` |",
        ]
    );
    assert!(!page.contains("| `HX256` | KAT log"));
    assert_has(&page, "| `HX256` | hash_32 | – | 1728 KiB | 1856 KiB |");
    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    assert_has(&summary, "## Hash functions");
    assert_has(
        &summary,
        "| id | algorithm | instance performance report | 32 B cycles (vs pseudoXOF) | 1 KiB cycles | 64 KiB cycles | notes |",
    );
    // No ICCS baseline and no pseudoXOF 256→256 calls in the profiles: the ratio is unknown.
    assert_has(
        &summary,
        "| [hash-90](../hash-90/perf_x86_1.md) | HX [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/hash-90/hash-90-spec.pdf) | `HX256` | 4068 (ratio –) | 23.7 k | 1.40 M | – |",
    );
}

#[test]
fn bad_regex_is_reported_with_file_and_line() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    append(
        &root.join("performance/summary_notes.csv"),
        "sign-08;DARTS(;broken",
    );
    let ds = Dataset::load(&root).unwrap();
    let err = summary_page(&ds, "x86_1", Form::Harness)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("performance/summary_notes.csv:23: Label: bad regular expression 'DARTS('"),
        "{err}"
    );
}

/// A key-exchange candidate from the DARTS records: `exchange` plus one step, raw message
/// sizes from the API, bandwidth from kex_bandwidth.csv.
#[test]
fn kex_shaped_candidate() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    for (op, src) in [("exchange", "keygen"), ("init_a", "verify")] {
        let mut r = read_json(&sys.join(format!("records/sign-08/DARTS128__{src}.json")));
        r["candidate"] = json!("kex-90");
        r["label"] = json!("KX1");
        r["instance"] = json!("KX1");
        r["operation"] = json!(op);
        r["kat_log"] = Value::Null;
        r["kat_log_sha256"] = Value::Null;
        r["sizes"] = json!({"input_bytes": 0, "pk_bytes": 1000, "sk_bytes": 2000,
            "msg2_bytes": 900, "msg1_bytes": 800, "ss_bytes": 32});
        r["kex"] = json!({"kex_passes": 2});
        write_json(&sys.join(format!("records/kex-90/KX1__{op}.json")), &r);
    }
    std::fs::write(
        root.join("performance/kex_bandwidth.csv"),
        "ID;Instance;PkABytes;PkBBytes;ProtocolMessageBytes\nkex-90;KX1;1000;0;1700\n",
    )
    .unwrap();
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "kex-90", Form::Harness).unwrap();
    assert_has(
        &page,
        "- Category: public-key algorithm; function: key exchange",
    );
    assert_has(
        &page,
        "| `KX1` | 2 | 800 / 900 | 1700 | 1000 / 0 | 2700 | 2000 | 32 |",
    );
    // exchange before the single steps.
    let ops: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `KX1` | ") && l.ends_with(")) |") || l.contains(" (5 × "))
        .map(|l| l.split(" | ").nth(1).unwrap())
        .collect();
    assert_eq!(ops, ["exchange", "init_a"]);
    assert_has(
        &page,
        "[Survey](../performance/symmetric-survey.md) verdict: **not surveyed**",
    );
    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    assert_has(&summary, "## Key exchange");
    assert_has(
        &summary,
        "| id | algorithm | instance performance report | exchange cycles (sym %) | bandwidth (bytes) | notes |",
    );
    assert_has(
        &summary,
        "| [kex-90](../kex-90/perf_x86_1.md) | kex-90 [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/kex-90/kex-90-spec.pdf) | `KX1` | 953.3 k | 2700 | – |",
    );
}

/// method.md §13.4 item 6: zero-placeholder rows of a non-ICCS-only candidate are omitted when
/// another label uses the ICCS helpers, and shown with `??%` when none does.
#[test]
fn summary_non_iccs_rule() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/arm_1");
    let zero = |label: &str| {
        for op in ["keygen", "sign", "verify"] {
            edit_json(&sys.join(format!("profile/{label}__{op}.json")), |p| {
                p["hash_share"] = json!(0);
                p["share"] = json!({"drng": 0.01});
            });
        }
    };
    // sign-06: one label without placeholder share, verdict bypass → that row is omitted.
    zero("sign-06/COMPASS-SIG-256");
    // sign-08: every label without placeholder share → rows kept with ??%.
    for l in ["DARTS128", "DARTS256", "DARTS512"] {
        zero(&format!("sign-08/{l}"));
    }
    let survey = root.join("performance/symmetric_survey.csv");
    let text = std::fs::read_to_string(&survey)
        .unwrap()
        .replace("sign-06;ICCS-only;", "sign-06;bypass;")
        .replace("sign-08;ICCS-only;", "sign-08;mixed;");
    std::fs::write(&survey, text).unwrap();
    let ds = Dataset::load(&root).unwrap();
    let summary = summary_page(&ds, "arm_1", Form::Harness).unwrap();
    assert!(!summary.contains("`COMPASS-SIG-256`"), "{summary}");
    assert!(summary.contains("| `COMPASS-SIG-128` |"));
    let darts = summary.lines().find(|l| l.contains("`DARTS128`")).unwrap();
    assert!(
        darts.ends_with("| `DARTS128` | 792.1 k (??%) | 42.56 M (??%) | 316.0 k (??%) | 1120 | 1449 | mixed own/ICCS primitives |"),
        "{darts}"
    );
    let compass = summary
        .lines()
        .find(|l| l.contains("`COMPASS-SIG-128`"))
        .unwrap();
    assert!(
        compass.ends_with("| own symmetric primitives; placeholder share unavailable |"),
        "{compass}"
    );
    // The candidate page still shows every label, with 0.0% shares.
    let page = candidate_page(&ds, "arm_1", "sign-06", Form::Harness).unwrap();
    assert!(
        page.contains("| `COMPASS-SIG-256` | keygen | 0.0% | 1.0% | "),
        "{page}"
    );
}

/// An `exclude` kat_issues row marks the instance `(not timed)` without the "timed anyway"
/// sentence; two issues are numbered in order of first use.
#[test]
fn kat_footnotes_numbered_in_order_of_use() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let issues = root.join("performance/kat_issues.csv");
    append(
        &issues,
        "sign-06;^COMPASS-SIG-512$;exclude;No reference source.",
    );
    append(
        &issues,
        "sign-06;^COMPASS-SIG-(128|256)$;measure;NOKAT: no vectors; with a; semicolon.",
    );
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "arm_1", "sign-06", Form::Harness).unwrap();
    let l = lines(&page);
    let start = l
        .iter()
        .position(|x| *x == "| instance | build flags | KAT |")
        .unwrap();
    assert_eq!(
        &l[start + 2..start + 12],
        [
            "| `COMPASS-SIG-128` | guide | PASS [1] |",
            "| `COMPASS-SIG-256` | guide | PASS [1] |",
            "| `COMPASS-SIG-384` | guide | PASS |",
            "| `COMPASS-SIG-512` | guide | PASS [2] (not timed) |",
            "",
            "[1] NOKAT: no vectors; with a; semicolon. These instances are timed anyway; their output is not validated.",
            "",
            "[2] No reference source.",
            "",
            "## 4. Performance",
        ]
    );
}

/// Hash rows against ICCS baseline records (`records/iccs/`): the helper table, the ratio to
/// the same-width, same-length `pseudoXOF`, ` (ratio –)` without a baseline record, and a
/// self-test mark.
#[test]
fn hash_rows_with_iccs_baseline() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    let base = read_json(&sys.join("records/sign-08/DARTS128__keygen.json"));
    let add = |cand: &str, label: &str, len: u64, cycles: f64, digest: u64| {
        let mut r = base.clone();
        r["candidate"] = json!(cand);
        r["label"] = json!(label);
        r["instance"] = json!(label);
        r["variant"] = json!(if cand == "iccs" {
            "iccs-baseline"
        } else {
            "reference"
        });
        r["operation"] = json!("hash");
        r["input_bytes"] = json!(len);
        r["mean_cycles"] = json!(cycles);
        r["sizes"] = json!({"input_bytes": len, "digest_bytes": digest});
        r["kat_log"] = Value::Null;
        write_json(
            &sys.join(format!("records/{cand}/{label}__hash_{len}.json")),
            &r,
        );
    };
    add("hash-90", "HX256", 32, 4068.0, 32);
    add("hash-90", "HX256", 1024, 23700.0, 32);
    add("hash-90", "HX256", 65536, 1.4e6, 32);
    add("iccs", "pseudoXOF-256", 32, 4530.0, 32);
    add("iccs", "pseudoXOF-256", 65536, 1.3959e6, 32);
    add("iccs", "sm3hash-256", 32, 1469.0, 32);
    add("iccs", "pseudohash-512", 32, 9999.6, 64);
    edit_json(&sys.join("build.json"), |b| {
        let inst = b["instances"].as_object_mut().unwrap();
        for (label, kat) in [
            ("pseudoXOF-256", "PASS"),
            ("sm3hash-256", "PASS"),
            ("pseudohash-512", "MISMATCH"),
        ] {
            inst.insert(
                format!("iccs/{label}"),
                json!({"candidate": "iccs", "label": label, "instance": label,
                       "variant": "iccs-baseline", "flags": "guide", "kat": kat}),
            );
        }
    });
    let ds = Dataset::load(&root).unwrap();
    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    let l = lines(&summary);
    let at = l.iter().position(|x| *x == "## ICCS hash helpers").unwrap();
    assert_eq!(
        &l[at + 4..at + 10],
        [
            "| ICCS helper | output bits | 32 B | 128 B | 512 B | 1 KiB | 4 KiB | 8 KiB | 16 KiB | 64 KiB | cycles/byte (64 KiB) |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            "| `sm3hash` | 256 | 1469 | – | – | – | – | – | – | – | – |",
            "| `pseudohash` ⚠ self-test MISMATCH | 512 | 10000 | – | – | – | – | – | – | – | – |",
            "| `pseudoXOF` | 256 | 4530 | – | – | – | – | – | – | 1.40 M | 21.3 |",
            "",
        ]
    );
    assert_eq!(l[at + 10], "## Hash functions");
    assert_has(
        &summary,
        "| id | algorithm | instance performance report | 32 B cycles (× pseudoXOF) | 1 KiB cycles (× pseudoXOF) | 64 KiB cycles (× pseudoXOF) | notes |",
    );
    assert_has(
        &summary,
        "| [hash-90](../hash-90/perf_x86_1.md) | hash-90 [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/hash-90/hash-90-spec.pdf) | `HX256` | 4068 (0.90×) | 23.7 k (ratio –) | 1.40 M (1.00×) | – |",
    );
    assert!(summary.contains("([helper timings](#iccs-hash-helpers))"));
    // The baseline is not a candidate: no page, no summary row.
    assert!(!summary.contains("[iccs]"));
    let pages = pqperf_report::all_pages(&ds, "x86_1", Form::Harness).unwrap();
    assert!(!pages.iter().any(|(p, _)| p.starts_with("iccs/")));
}

/// Method page: records whose own environment deviates from the fixed host state are counted
/// by kind; a firmware-clocked system gets the measured-clock text.
#[test]
fn method_deviations_and_firmware_clock() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_json(&sys.join("records/sign-08/DARTS128__sign.json"), |r| {
        r["environment"]["cpufreq_governor"] = json!("powersave");
        r["environment"]["smt_control"] = json!("on");
    });
    edit_json(&sys.join("records/sign-08/DARTS256__sign.json"), |r| {
        r["environment"]["intel_pstate_no_turbo"] = json!("0");
    });
    let ds = Dataset::load(&root).unwrap();
    let m = pqperf_report::method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(
        m.contains("`CLOCK_MONOTONIC_RAW`. Of 39 timing records, some deviate from the fixed host state: SMT on (1); governor powersave (1); turbo enabled (1).\n"),
        "{m}"
    );

    // arm_1 as a firmware-clocked host: no cpufreq driver in any environment.
    let arm = root.join("performance/data/arm_1");
    for e in std::fs::read_dir(arm.join("records")).unwrap() {
        for f in std::fs::read_dir(e.unwrap().path()).unwrap() {
            edit_json(&f.unwrap().path(), |r| {
                let env = &mut r["environment"];
                for k in [
                    "cpufreq_governor",
                    "cpufreq_driver",
                    "cpufreq_min_khz",
                    "cpufreq_max_khz",
                ] {
                    env[k] = Value::Null;
                }
                env["core_clock_mhz"] = json!(3400);
            });
        }
    }
    let ds = Dataset::load(&root).unwrap();
    let m = pqperf_report::method_page(&ds, "arm_1", Form::Harness).unwrap();
    assert!(m.contains("- One Qualcomm Oryon core (CPU 2; measured 3.40 GHz, set by firmware (no OS frequency scaling or boost), SMT none). "), "{m}");
    assert!(m.contains("All 30 timing records were taken in this state (no cpufreq driver; the firmware-set clock, measured on the timing core with the cycle counter before each phase, was steady at 3.40 GHz; SMT none; hardware cycle counter available), as stored in each record. A trial that ran below 95% of that clock was repeated, up to twice.\n"), "{m}");
    let page = candidate_page(&ds, "arm_1", "sign-08", Form::Harness).unwrap();
    assert_has(
        &page,
        "| clock | measured 3.40 GHz, set by firmware (no OS frequency scaling or boost), SMT none |",
    );
}

/// Site crumbs link only to pages that exist: a candidate measured on one system only names
/// the other system without a link.
#[test]
fn site_crumb_without_page_on_other_system() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    make_kem(&root); // kem-90 exists on arm_1 only
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "arm_1", "kem-90", Form::Site).unwrap();
    assert_eq!(
        page.lines().nth(1).unwrap(),
        "<p class=\"crumb\"><a href=\"../index.md\">Performance measurements</a> › <a href=\"index.md\">arm_1</a> › <code>kem-90</code> · system: x86_1 · <strong>arm_1</strong></p>"
    );
    let page = candidate_page(&ds, "arm_1", "sign-08", Form::Site).unwrap();
    assert!(page.contains(
        "· system: <a href=\"../x86_1/sign-08.md\">x86_1</a> · <strong>arm_1</strong></p>"
    ));
}

/// A candidate without any hash profile (e.g. only optimized builds measured) says so instead
/// of printing an empty share table, and its evidence index has no profile rows.
#[test]
fn candidate_without_profiles() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    std::fs::remove_dir_all(root.join("performance/data/x86_1/profile/sign-06")).unwrap();
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-06", Form::Harness).unwrap();
    let l = lines(&page);
    let at = l
        .iter()
        .position(|x| *x == "## Symmetric primitives")
        .unwrap();
    assert_eq!(
        &l[at + 1..at + 6],
        [
            "",
            "[Survey](../performance/symmetric-survey.md) verdict: **ICCS-only** — `shake*` names are shims over pseudoXOF",
            "",
            "No hash profile was recorded for this candidate on this system (profiles are measured on reference builds with link-time wrappers).",
            "",
        ]
    );
    assert_eq!(l[at + 6], "## 7. Raw evidence index");
    assert!(!page.contains("| hash profile "));
}
