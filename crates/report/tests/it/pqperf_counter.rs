//! Pages of pqperf's own datasets (records and profiles with a `pqperf` object), derived in
//! the test from the golden files: a TSC tick counter instead of core cycles must be named on
//! the candidate, summary and method pages, and profiles of a non-ICCS (PQClean `nist`)
//! instance must title the share column for the scheme's own primitives and show the
//! recorded wrapper overhead. Exact lines asserted. (Golden pages without `pqperf` stay
//! byte-identical: tests/it/golden_pages.rs.)

use std::path::Path;

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page, method_page, summary_page};
use serde_json::{Value, json};

use crate::common;
use common::*;

/// Apply `f` to every JSON file under `dir/<candidate>/`.
fn edit_all(dir: &Path, f: impl Fn(&Path, &mut Value)) {
    for c in std::fs::read_dir(dir).unwrap() {
        for e in std::fs::read_dir(c.unwrap().path()).unwrap() {
            let p = e.unwrap().path();
            edit_json(&p, |v| f(&p, v));
        }
    }
}

const TSC: &str = "Cycle counts are TSC ticks at 2.10 GHz (reference cycles), not core cycles: this host has no hardware cycle counter.";

#[test]
fn tsc_counter_is_named_not_called_cycles() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_all(&sys.join("records"), |_, r| {
        r["pqperf"] = json!({"version": "0.1.0", "counter": "tsc", "counter_hz": 2.1e9,
            "cycles_are_core_cycles": false, "counter_invariant": true});
    });
    let ds = Dataset::load(&root).unwrap();

    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    let l: Vec<&str> = page.lines().collect();
    let env = l
        .iter()
        .position(|x| *x == "## 2. Assessment environment")
        .unwrap();
    let kat = l.iter().position(|x| x.starts_with("## 3. ")).unwrap();
    assert_eq!(&l[kat - 2..kat], [TSC, ""]);
    assert!(env < kat - 2);
    assert_has(
        &page,
        "| instance | operation | mean ticks (TSC) | mean time | ops/s | median trial | n (trials × iters) |",
    );
    assert!(!page.contains("mean cycles"), "{page}");
    assert_has(
        &page,
        "The `mean ticks (TSC)` column counts TSC ticks at 2.10 GHz, not core cycles.",
    );

    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    assert_has(
        &summary,
        &format!(
            "- **Ticks** are the mean of all timed calls in five trials, normally with each trial in a fresh process. {TSC}"
        ),
    );
    assert!(!summary.contains("- **Cycles**"), "{summary}");
    assert!(summary.contains("| sign ticks (sym %) |"), "{summary}");
    assert!(!summary.contains(" cycles (sym %)"), "{summary}");

    let m = method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(
        m.contains(&format!("). {TSC} Time comes from `CLOCK_MONOTONIC_RAW`. ")),
        "{m}"
    );
    assert!(!m.contains("Cycles come from the hardware counter"), "{m}");
    assert!(!m.contains("hardware cycle counter available"), "{m}");
    assert!(
        m.contains("no hardware cycle counter, TSC ticks instead"),
        "{m}"
    );
    assert_has(
        &m,
        "- Reported ticks are the arithmetic mean over all timed calls (the guide's metric, with ticks in place of cycles); the median of the trial means is also recorded as a robustness check.",
    );

    // arm_1 untouched: still cycles, no counter sentence.
    let arm = candidate_page(&ds, "arm_1", "sign-08", Form::Harness).unwrap();
    assert!(
        arm.contains("| mean cycles |") && !arm.contains("ticks"),
        "{arm}"
    );
}

/// A pqperf record with hardware cycles keeps the golden wording.
#[test]
fn cycle_counter_keeps_cycles() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let sys = root.join("performance/data/x86_1");
    edit_all(&sys.join("records"), |_, r| {
        r["pqperf"] =
            json!({"counter": "cycles", "counter_hz": 3.0e9, "cycles_are_core_cycles": true});
    });
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    assert_has(
        &page,
        "| instance | operation | mean cycles | mean time | ops/s | median trial | n (trials × iters) |",
    );
    assert!(!page.contains("ticks"), "{page}");
}

#[test]
fn nist_profiles_title_own_primitives_and_show_wrapper_overhead() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let dir = root.join("performance/data/x86_1/profile/sign-06");
    // PQClean-like profiles: the scheme's own shake256 and sha256 instead of pseudoXOF.
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        edit_json(&p, |v| {
            for (i, c) in v["calls"].as_array_mut().unwrap().iter_mut().enumerate() {
                if c["fn"] == "pseudoXOF" {
                    c["fn"] = json!(if i == 0 { "sha256" } else { "shake256" });
                }
            }
            if name == "COMPASS-SIG-128__sign.json" {
                v["pqperf"] = json!({"wrapper_overhead": {"outer_ticks_per_call": 31.5,
                    "inner_ticks_per_call": 12.0, "wrapped_calls_per_operation": 3.0}});
            }
        });
    }
    let ds = Dataset::load(&root).unwrap();
    let page = candidate_page(&ds, "x86_1", "sign-06", Form::Harness).unwrap();
    let l: Vec<&str> = page.lines().collect();
    let at = l
        .iter()
        .position(|x| *x == "## Symmetric primitives")
        .unwrap();
    assert_eq!(
        &l[at + 4..at + 10],
        [
            "This candidate does not call the ICCS placeholders. Share of each operation spent in its own symmetric primitives (`sha256`, `shake256`, the scheme's common code) and in its random-byte generator (reference build, measured in the same run with link-time wrappers):",
            "",
            "Wrapper overhead per wrapped call is shown as ticks added to the operation total (outer) and ticks charged to the wrapped function itself (inner); it is not subtracted from the shares.",
            "",
            "| instance | operation | own SHAKE/SHA-3/SHA-2/AES | randombytes | calls per operation | wrapper overhead per call |",
            "|---|---|---|---|---|---|",
        ]
    );
    assert!(!page.contains("pseudohash/XOF/sm3"), "{page}");
    assert_eq!(
        &l[at + 10..at + 13],
        [
            "| `COMPASS-SIG-128` | keygen | 93% | 0.3% | drng 1, sha256 7, shake256 17 | – |",
            "| `COMPASS-SIG-128` | sign | 88% | 0.0% | sha256 12, shake256 8 | outer 31.5, inner 12 ticks |",
            "| `COMPASS-SIG-128` | verify | 93% | 0.0% | sha256 3, shake256 16 | – |",
        ]
    );

    // ICCS profiles keep the placeholder title and gain no overhead column.
    let iccs = candidate_page(&ds, "x86_1", "sign-08", Form::Harness).unwrap();
    assert!(
        iccs.contains("| pseudohash/XOF/sm3 | DRNG | calls per operation |\n"),
        "{iccs}"
    );
    assert!(!iccs.contains("wrapper overhead"), "{iccs}");

    // The summary gives no ICCS share for the own-primitive rows and says why.
    let summary = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    let row = summary
        .lines()
        .find(|x| x.contains("| `COMPASS-SIG-128` |"))
        .unwrap();
    assert!(
        row.ends_with("no ICCS placeholders; own SHAKE/SHA-2/AES share on candidate page |"),
        "{row}"
    );
    assert!(!row.contains('%'), "{row}");
    let m = method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(m.contains(" Instances that do not use the ICCS placeholders (PQClean `nist` builds) are wrapped around their own common SHAKE/SHA-3/SHA-2/AES functions and `PQCLEAN_randombytes` instead: their share is the time in the scheme's own symmetric primitives, shown on the candidate page with the measured wrapper overhead per call, and the summary gives no ICCS share for them.\n"), "{m}");
}
