//! Key-exchange counts on real C under real valgrind: the toy key exchange, calibrated as the
//! campaign does (which names its per-call steps), is counted step by step (`init_a`,
//! `init_b`, `pass1`, `pass2`, `derive_a`, `derive_b`) and as a whole exchange (every step's
//! API function counted together), twice in separate runs with identical figures; the whole
//! exchange is exactly the sum of its steps, call by call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_build::{BuildOptions, IccsImportOptions};
use pqperf_count::{CountOptions, run};
use pqperf_measure::driver::ApiSpec;
use pqperf_measure::instance::Instance;
use pqperf_model::count::CountEvidence;
use pqperf_model::layout::RunLayout;
use pqperf_model::vocab::Category;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const STEPS: [&str; 6] = ["init_a", "init_b", "pass1", "pass2", "derive_a", "derive_b"];

fn ev<'a>(s: &'a [CountEvidence], op: &str) -> &'a CountEvidence {
    s.iter()
        .find(|e| e.operation == op)
        .unwrap_or_else(|| panic!("{op} in {s:?}"))
}

#[test]
fn every_timed_step_is_counted_identically_in_two_runs_and_adds_up_to_the_exchange() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let src = repo().join("testdata/candidates/toy-kex");
    pqperf_build::import_iccs(&IccsImportOptions::new(&run_dir, &src, "kex-90")).unwrap();
    let b = pqperf_build::build(&BuildOptions::new(&run_dir)).unwrap();
    assert_eq!(b.built.len(), 1, "{b:?}");
    let insts: Vec<Instance> = RunLayout::new(&run_dir)
        .read_build()
        .unwrap()
        .instances
        .values()
        .map(|e| Instance {
            entry: e.clone(),
            category: Some(Category::Kex),
            api: ApiSpec::Iccs,
            kat_not_passed: false,
        })
        .collect();
    let mut o = CountOptions::new(&run_dir, insts.clone()).unwrap();
    o.calls = 4;
    o.auto_calls = false;

    // Before the calibration only the whole exchange is a timed operation.
    let early = run(&o).unwrap();
    assert_eq!(early.written, ["count/kex-90/TOY-KEX__exchange.json"]);

    // The calibration of the exchange names its passes: the steps become timed operations.
    let unit = pqperf_measure::UnitSettings {
        run_dir: run_dir.clone(),
        cpu: 0,
        samples: false,
        independent_streams: false,
        stack_region: 0,
        driver: pqperf_measure::runner::DriverExe::current(&run_dir).unwrap(),
        calibration_timeout: Duration::from_secs(120),
        planning: pqperf_measure::plan::reference_planning(),
        target_ci: None,
        stream_key: [0; pqperf_model::stream::KEY_BYTES],
    };
    let cal = pqperf_measure::calibrate::calibrate_one(
        &unit,
        &|_| {},
        &insts[0],
        pqperf_model::vocab::Operation::Exchange,
    )
    .unwrap();
    assert!(cal.t1_s.is_some(), "{cal:?}");

    o.redo = true;
    let first = run(&o).unwrap();
    let second = run(&o).unwrap();
    let mut ops: Vec<&str> = first
        .evidence
        .iter()
        .map(|e| e.operation.as_str())
        .collect();
    ops.sort();
    let mut want: Vec<&str> = STEPS.iter().copied().chain(["exchange"]).collect();
    want.sort();
    assert_eq!(ops, want);
    for (a, b) in first.evidence.iter().zip(&second.evidence) {
        assert_eq!(a.status, "counted", "{a:?}");
        assert!(a.problems().is_empty(), "{:?}", a.problems());
        assert_eq!(a.calls, 4);
        // Identical in two runs, call by call, function by function (the cache-miss
        // figures within 1 %: toy::same_counts says why).
        assert_eq!(a.operation, b.operation);
        crate::toy::same_counts(a, b);
    }
    // Each step counts its own API function; the exchange counts them all together.
    assert_eq!(
        ev(&first.evidence, "pass2").symbol,
        "kex_generate_pass2_msg_b"
    );
    assert!(ev(&first.evidence, "pass2").symbols.is_empty());
    let x = ev(&first.evidence, "exchange");
    assert_eq!(x.symbol, "kex_derive_ss_b");
    assert!(x.symbols.contains(&"kex_init_a".to_string()));
    for s in ["kex_init_a", "kex_generate_pass1_msg_a", "kex_derive_ss_b"] {
        let f = x.functions.iter().find(|f| f.function == s);
        let f = f.unwrap_or_else(|| panic!("{s} in {:?}", x.functions));
        assert_eq!(f.calls_per_call, 1.0, "{s}");
        assert_eq!(f.class, "candidate");
    }
    // Call k of every step is in exchange k of its process, with the same seeded inputs as
    // exchange k of the whole exchange's process: the sum is exact.
    for k in 0..4 {
        let sum: u64 = STEPS
            .iter()
            .map(|s| ev(&first.evidence, s).instructions[k])
            .sum();
        assert_eq!(x.instructions[k], sum, "call {k}");
    }
    eprintln!(
        "toy-kex instructions per call: exchange {} = {}",
        x.instructions[0],
        STEPS
            .iter()
            .map(|s| format!("{s} {}", ev(&first.evidence, s).instructions[0]))
            .collect::<Vec<_>>()
            .join(" + ")
    );
    // The evidence is what `validate` accepts, on disk.
    let rel = "count/kex-90/TOY-KEX__exchange.json";
    let on_disk: CountEvidence =
        pqperf_model::pyjson::read(&run_dir.join(rel), Path::new(rel)).unwrap();
    assert_eq!(&on_disk.symbols, &x.symbols);
}
