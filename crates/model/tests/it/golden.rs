//! The model against the published golden dataset (`../shared/golden/harness`, or
//! `$PQPERF_GOLDEN/harness`): byte-identical JSON round trips, statistics recomputed from
//! trials, KAT log digests, side files.

use std::path::{Path, PathBuf};

use pqperf_model::golden::golden_harness;
use pqperf_model::stats::{ProcessTotals, opt_close};
use pqperf_model::{BuildJson, Campaign, Dataset, Profile, Record, RecordStats, pyjson};

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(p: &Path, text: &str) -> String {
    let v: T = pyjson::from_str(p, text).unwrap_or_else(|e| panic!("{e}"));
    pyjson::to_string(&v).unwrap()
}

#[test]
fn every_json_file_round_trips_byte_identically() {
    let Some(root) = golden_harness() else { return };
    let mut files = Vec::new();
    json_files(&root.join("performance/data"), &mut files);
    assert!(
        files.len() >= 100,
        "only {} JSON files under {}",
        files.len(),
        root.display()
    );
    let (mut records, mut profiles) = (0, 0);
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        let parent = p
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        // Untyped first: the writer alone.
        let v: serde_json::Value = pyjson::from_str(p, &text).unwrap();
        assert_eq!(
            pyjson::value_to_string(&v),
            text,
            "untyped round trip of {}",
            p.display()
        );
        let typed = match (name, parent) {
            ("build.json", _) => roundtrip::<BuildJson>(p, &text),
            ("campaign.json", _) => roundtrip::<Campaign>(p, &text),
            (_, "records") => {
                records += 1;
                roundtrip::<Record>(p, &text)
            }
            (_, "profile") => {
                profiles += 1;
                roundtrip::<Profile>(p, &text)
            }
            _ => panic!("unexpected JSON file {}", p.display()),
        };
        assert_eq!(typed, text, "typed round trip of {}", p.display());
    }
    assert!(
        records >= 60 && profiles >= 50,
        "records {records}, profiles {profiles}"
    );
}

#[test]
fn typed_fields_are_read() {
    let Some(root) = golden_harness() else { return };
    let ds = Dataset::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let x86 = ds.system("x86_1").expect("x86_1");
    let c = &x86.campaign.as_ref().unwrap().value;
    assert_eq!(c.system_id.as_deref(), Some("x86_1"));
    assert_eq!(
        c.arch_config.as_ref().unwrap().optimized_families,
        ["mithril", "scloud", "zcdmc", "bit"]
    );
    assert_eq!(c.planning.as_ref().unwrap().trial_target_s, 1.0);
    let arm = ds.system("arm_1").expect("arm_1");
    assert_eq!(arm.campaign.as_ref().unwrap().value.shards, Some(3));
    let b = &x86.build.as_ref().unwrap().value;
    assert!(b.optimized.is_some());
    let e = b.entry("sign-02", "BiT-128").unwrap();
    assert_eq!(e.elf_load_bytes, Some(54005));
    let r = x86.record("sign-02", "BiT-128", "sign").unwrap();
    assert_eq!(r.plan.trials, 5);
    assert_eq!(r.processes.len(), 5);
    assert_eq!(r.sizes["signature_bytes"], 1504);
    assert_eq!(
        r.environment.str("cpu_model"),
        Some("12th Gen Intel(R) Core(TM) i7-12700")
    );
    assert_eq!(
        r.processes[0].meta.u64("measurement_count"),
        Some(r.plan.iterations_per_trial)
    );
    assert!(r.extra.is_empty() && r.pqperf.is_none());
    // Side files.
    assert_eq!(ds.systems_csv.as_ref().unwrap()[0].id, "x86_1");
    assert_eq!(ds.systems[0].id, "x86_1", "systems.csv order");
    assert_eq!(ds.algorithm("sign-06"), Some("COMPASS-SIG"));
    let survey = ds.symmetric_survey.as_ref().unwrap();
    assert!(
        survey
            .iter()
            .any(|s| s.id == "kem-04" && s.notes.contains("; AES-256-CTR dead;"))
    );
    assert!(
        ds.external_sizes
            .as_ref()
            .unwrap()
            .iter()
            .any(|s| s.instance == "BiT-128-avx2")
    );
    assert_eq!(ds.manifest("sign-02").unwrap().entries.len(), 3);
    assert!(ds.stray.is_empty());
    for s in &ds.systems {
        assert!(s.stray.is_empty(), "stray files in {}: {:?}", s.id, s.stray);
    }
}

#[test]
fn statistics_recomputed_from_trials_match_every_record() {
    let Some(root) = golden_harness() else { return };
    let ds = Dataset::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let tol = 1e-9;
    let (mut n, mut exact) = (0, 0);
    for sys in &ds.systems {
        for l in &sys.records {
            let r = &l.value;
            let p = l.shown.display();
            let st = RecordStats::of_record(r).unwrap_or_else(|| panic!("{p}: no trials"));
            assert_eq!(Some(st.measurements), r.measurements, "{p}: measurements");
            assert_eq!(
                Some(st.guide_100_measurements_met),
                r.guide_100_measurements_met,
                "{p}"
            );
            let pairs = [
                ("mean_seconds", st.mean_seconds, r.mean_seconds),
                (
                    "median_trial_seconds",
                    st.median_trial_seconds,
                    r.median_trial_seconds,
                ),
                (
                    "min_trial_seconds",
                    st.min_trial_seconds,
                    r.min_trial_seconds,
                ),
                (
                    "max_trial_seconds",
                    st.max_trial_seconds,
                    r.max_trial_seconds,
                ),
                ("mean_cycles", st.mean_cycles, r.mean_cycles),
                (
                    "median_trial_cycles",
                    st.median_trial_cycles,
                    r.median_trial_cycles,
                ),
                (
                    "operations_per_second",
                    st.operations_per_second,
                    r.operations_per_second,
                ),
                (
                    "throughput_MB_per_second",
                    st.throughput_mb_per_second,
                    r.throughput_mb_per_second,
                ),
            ];
            let mut all_exact = true;
            for (f, got, want) in pairs {
                assert!(
                    opt_close(got, want, tol),
                    "{p}: {f}: recomputed {got:?}, record {want:?}"
                );
                all_exact &= got == want;
            }
            exact += all_exact as usize;
            let md = pqperf_model::stats::MetaDerived::of(&r.processes).unwrap();
            assert_eq!(md.sizes, r.sizes, "{p}: sizes");
            assert_eq!(md.kex, r.kex, "{p}: kex");
            assert_eq!(
                md.build_flags.as_deref(),
                Some(r.build_flags.as_str()),
                "{p}"
            );
            assert_eq!(
                md.timing_scope.as_deref(),
                Some(r.timing_scope.as_str()),
                "{p}"
            );
            let pt = ProcessTotals::of(&r.processes);
            assert_eq!(
                pt.trials, r.trials,
                "{p}: trials = concatenation of processes' trials"
            );
            assert_eq!(
                pt.disturbed_retries, r.disturbed_retries,
                "{p}: disturbed_retries"
            );
            assert_eq!(
                pt.baseline_rss_bytes, r.baseline_rss_bytes,
                "{p}: baseline_rss_bytes"
            );
            assert_eq!(pt.peak_rss_bytes, r.peak_rss_bytes, "{p}: peak_rss_bytes");
            // Writing the recomputed stats back leaves the file unchanged when all are exact.
            if all_exact {
                let mut r2 = r.clone();
                st.apply_to(&mut r2);
                assert_eq!(
                    pyjson::to_string(&r2).unwrap(),
                    pyjson::to_string(r).unwrap()
                );
            }
            n += 1;
        }
    }
    assert!(n >= 60, "only {n} records");
    eprintln!("statistics: {n} records agree within 1e-9; {exact} bit-identical");
    assert!(
        exact * 10 >= n * 9,
        "only {exact} of {n} records bit-identical"
    );
}

#[test]
fn profile_shares_recompute() {
    let Some(root) = golden_harness() else { return };
    let ds = Dataset::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let mut n = 0;
    for sys in &ds.systems {
        for l in &sys.profiles {
            let (share, hash_share) = l.value.recompute_shares().unwrap();
            assert_eq!(
                share.keys().collect::<Vec<_>>(),
                l.value.share.keys().collect::<Vec<_>>(),
                "{}",
                l.shown.display()
            );
            for (k, v) in &share {
                assert!(
                    pqperf_model::stats::rel_close(*v, l.value.share[k], 1e-9),
                    "{}: share.{k}",
                    l.shown.display()
                );
            }
            assert!(pqperf_model::stats::rel_close(
                hash_share.as_f64().unwrap(),
                l.value.hash_share_f64(),
                1e-9
            ));
            n += 1;
        }
    }
    assert!(n >= 50);
}

#[test]
fn kat_logs_parse_and_match_build_json_digests() {
    let Some(root) = golden_harness() else { return };
    let ds = Dataset::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let mut n = 0;
    for sys in &ds.systems {
        let build = &sys.build.as_ref().unwrap().value;
        for e in build.instances.values() {
            let Some(rel) = &e.kat_log else { continue };
            let log = sys
                .kat_log(rel)
                .unwrap_or_else(|| panic!("{}: {rel} missing", sys.id));
            assert_eq!(
                Some(&log.value.sha256),
                e.kat_log_sha256.as_ref(),
                "{}",
                log.shown.display()
            );
            assert_eq!(
                log.value.status(),
                Some(e.kat.as_str()),
                "{}",
                log.shown.display()
            );
            assert_eq!(log.value.get("instance"), Some(e.instance.as_str()));
            for r in sys
                .records
                .iter()
                .filter(|r| r.value.candidate == e.candidate && r.value.label == e.label)
            {
                assert_eq!(
                    r.value.kat_log_sha256,
                    e.kat_log_sha256,
                    "{}",
                    r.shown.display()
                );
                assert_eq!(
                    r.value.library_sha256,
                    e.library_sha256,
                    "{}",
                    r.shown.display()
                );
            }
            // A reference KAT log's manifest line agrees with <id>/kat.sha256.
            if let (Some(m), Some(ml)) = (ds.manifest(&e.candidate), log.value.manifests.first()) {
                let entry = m.lookup(&e.label, &ml.file);
                if e.variant == "reference" {
                    assert_eq!(
                        entry.map(|x| &x.sha256),
                        Some(&ml.sha256),
                        "{}",
                        log.shown.display()
                    );
                }
            }
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} KAT logs");
}

#[test]
fn truncated_json_error_names_file_line_and_column() {
    let Some(root) = golden_harness() else { return };
    let rel = Path::new("performance/data/x86_1/records/sign-02/BiT-128__sign.json");
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    let cut: String = text.lines().take(12).collect::<Vec<_>>().join("\n");
    let err = pqperf_model::dataset::record_from_str(rel, &cut)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("performance/data/x86_1/records/sign-02/BiT-128__sign.json:12:"),
        "{err}"
    );
    // Wrong type deep inside: field path and line of the field.
    let bad = text.replacen("\"seconds\": ", "\"seconds\": \"x\" , \"_\": ", 1);
    let err = pqperf_model::dataset::record_from_str(rel, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("processes[0].trials[0].seconds: invalid type"),
        "{err}"
    );
    assert!(err.starts_with(&format!("{}:", rel.display())), "{err}");
    // A newer schema is refused clearly.
    let newer = text.replacen("\"schema\": 2", "\"schema\": 3", 1);
    let err = pqperf_model::dataset::record_from_str(rel, &newer)
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema 3 is newer"), "{err}");
}
