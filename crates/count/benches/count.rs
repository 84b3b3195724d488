//! The cost of the count phase on the test candidates: count-toy-sig with and without its
//! extra hash call (2 instances × 3 operations), every operation counted with the automatic
//! number of calls, `--jobs` 1 and one per CPU; prints wall seconds and the instructions per
//! call (which never change). `PQPERF_BENCH_ROUNDS` (default 3) repeats each setting.
//! For the demo set's figure see docs/counting.md (`pqperf campaign count` on a demo run).

use std::path::Path;
use std::time::Instant;

use pqperf_build::{BuildOptions, IccsImportOptions};
use pqperf_count::{CountOptions, run};
use pqperf_measure::driver::ApiSpec;
use pqperf_measure::instance::Instance;
use pqperf_model::layout::RunLayout;
use pqperf_model::vocab::Category;

fn main() {
    if pqperf_count::valgrind_version("valgrind").is_none() {
        eprintln!("bench count: valgrind is not installed; nothing to measure");
        return;
    }
    let rounds: usize = std::env::var("PQPERF_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let tmp = tempfile::tempdir().expect("tempdir");
    let run_dir = tmp.path().join("run");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/candidates/count-toy-sig");
    pqperf_build::import_iccs(&IccsImportOptions::new(&run_dir, &src, "sign-90")).expect("import");
    let mut extra = IccsImportOptions::new(&run_dir, &src, "sign-91");
    extra.defines = vec!["COUNT_EXTRA_HASH".into()];
    pqperf_build::import_iccs(&extra).expect("import");
    pqperf_build::build(&BuildOptions::new(&run_dir)).expect("build");
    let insts: Vec<Instance> = RunLayout::new(&run_dir)
        .read_build()
        .expect("build.json")
        .instances
        .values()
        .map(|e| Instance {
            entry: e.clone(),
            category: Some(Category::Sign),
            api: ApiSpec::Iccs,
            kat_not_passed: false,
        })
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "count phase, 2 instances × 3 operations, load average {:.1}",
        pqperf_ffi::procinfo::load_average()[0]
    );
    for jobs in [1, cores] {
        for round in 1..=rounds {
            let mut o = CountOptions::new(&run_dir, insts.clone()).expect("driver");
            o.jobs = jobs;
            o.redo = true;
            let t0 = Instant::now();
            let s = run(&o).expect("count");
            let wall = t0.elapsed().as_secs_f64();
            let per: Vec<String> = s
                .evidence
                .iter()
                .map(|e| {
                    format!(
                        "{} {} {}",
                        e.candidate,
                        e.operation,
                        e.instructions_per_call.map_or(0.0, |x| x.median)
                    )
                })
                .collect();
            println!(
                "jobs {jobs} round {round}: {wall:.2} s wall; {}",
                per.join(", ")
            );
        }
    }
}
