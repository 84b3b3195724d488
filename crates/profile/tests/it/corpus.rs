//! Heavier check (ignored by default; `cargo test -p pqperf-profile --test it corpus:: --
//! --ignored`): profiling builds of one clean implementation of each PQClean family relink,
//! run and give complete profiles with a positive hash share and unchanged KAT-relevant
//! behaviour (the driver's honest setup, including verify/decapsulation, succeeds on them).

use std::path::PathBuf;

use pqperf_measure::Instance;
use pqperf_measure::driver::ApiSpec;
use pqperf_model::catalog::Catalog;
use pqperf_model::profile::Profile;
use pqperf_model::vocab::Category;
use pqperf_profile::phase::{self, ChildExe, ProfileOptions};

#[test]
#[ignore]
fn one_of_each_family() {
    let ids = [
        "ml-kem-768",
        "falcon-512",
        "sphincs-shake-128f-simple",
        "sphincs-sha2-128f-simple",
        "hqc-128",
        "ml-dsa-65",
    ];
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::canonicalize(dir.path()).unwrap();
    pqperf_build::import_pqclean(&pqperf_build::PqcleanImportOptions {
        run_dir: run.clone(),
        catalog: None,
        tree: None,
    })
    .unwrap();
    let mut bo = pqperf_build::BuildOptions::new(&run);
    bo.select = pqperf_model::select::Selection::only(Some(&format!(
        "^({})/({})$",
        ids.join("|"),
        ids.join("|")
    )))
    .unwrap();
    let b = pqperf_build::build(&bo).unwrap();
    assert!(b.failed.is_empty(), "{:?}", b.failed);
    let bj = pqperf_build::read_build_json(&run).unwrap();
    let cat = Catalog::load(&run.join("catalog.toml")).unwrap();
    let mut insts = Vec::new();
    for (c, i) in cat.instances() {
        if !ids.contains(&i.label.as_str()) {
            continue;
        }
        let n = i.nist.clone().unwrap();
        let kind = if c.kind == Category::Sign {
            "sign"
        } else {
            "kem"
        };
        insts.push(Instance {
            entry: bj.instances[&format!("{}/{}", c.id, i.label)].clone(),
            category: Some(c.kind),
            api: ApiSpec::nist(kind, &n, &c.id, &i.instance),
            kat_not_passed: false,
        });
    }
    let opts = ProfileOptions {
        run_dir: run.clone(),
        cpu: None,
        target_s: 5.0,
        prep_share: None,
        child: ChildExe {
            exe: PathBuf::from(env!("CARGO_BIN_EXE_pqperf-hashprof")),
            pre_args: vec![],
        },
    };
    let logs = std::sync::Mutex::new(Vec::new());
    let s = phase::profile_instances(&opts, &insts, &|m| {
        eprintln!("{m}");
        logs.lock().unwrap().push(m)
    })
    .unwrap();
    assert_eq!(s.failed + s.relink_failed, 0, "{:?}", logs.lock().unwrap());
    assert_eq!(s.written, 3 * ids.len());
    for i in &insts {
        for op in phase::profile_ops(i.category) {
            let p: Profile = serde_json::from_str(
                &std::fs::read_to_string(run.join(format!(
                    "profile/{}/{}__{op}.json",
                    i.entry.candidate, i.entry.label
                )))
                .unwrap(),
            )
            .unwrap();
            assert!(p.hash_share_f64() > 0.0, "{} {op}", i.entry.label);
        }
    }
}
