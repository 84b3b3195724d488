//! The cost of the count phase on the test candidates: count-toy-sig with and without its
//! extra hash call (2 instances × 3 operations), every operation counted with the automatic
//! number of calls, `--jobs` 1 and one per CPU; prints wall seconds and the instructions per
//! call (which never change). `PQPERF_BENCH_ROUNDS` (default 3) repeats each setting.
//!
//! The demo's count phase: with `PQPERF_BENCH_DEMO_RUN=<folder>` the bench also times
//! `pqperf count --run-dir <folder> --redo` (every measured operation of the demo set counted
//! again, `--jobs` one per CPU) and prints its wall seconds and summary line; a folder without
//! a `build.json` is first made with `pqperf demo --run-dir <folder>` (several minutes). The
//! `pqperf` binary is the one next to this bench's (`cargo build --release -p pqperf` first).

use std::path::Path;
use std::time::Instant;

use pqperf_build::{BuildOptions, IccsImportOptions};
use pqperf_count::{CountOptions, run};
use pqperf_measure::driver::ApiSpec;
use pqperf_measure::instance::Instance;
use pqperf_model::layout::RunLayout;
use pqperf_model::vocab::Category;

/// `pqperf count --run-dir <demo> --redo`, timed (the demo made first when missing).
fn demo_count_phase(dir: &Path) {
    let exe = std::env::current_exe().expect("bench path");
    let pqperf = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("pqperf"))
        .filter(|p| p.is_file());
    let Some(pqperf) = pqperf else {
        println!(
            "demo count phase: no pqperf binary beside the bench (cargo build --release -p pqperf)"
        );
        return;
    };
    if !dir.join("build.json").is_file() {
        println!("demo count phase: making the demo run in {}", dir.display());
        let st = std::process::Command::new(&pqperf)
            .args(["demo", "--run-dir"])
            .arg(dir)
            .status()
            .expect("pqperf demo");
        assert!(st.success(), "pqperf demo failed: {st}");
    }
    let load = pqperf_ffi::procinfo::load_average()[0];
    let t0 = Instant::now();
    let out = std::process::Command::new(&pqperf)
        .args(["count", "--redo", "--run-dir"])
        .arg(dir)
        .output()
        .expect("pqperf count");
    let wall = t0.elapsed().as_secs_f64();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = text
        .lines()
        .rev()
        .find(|l| l.contains("counted,"))
        .unwrap_or("(no summary line)");
    println!(
        "demo count phase: {wall:.1} s wall at load average {load:.1}, exit {:?}; {summary}",
        out.status.code()
    );
}

fn main() {
    if pqperf_count::valgrind_version("valgrind").is_none() {
        eprintln!("bench count: valgrind is not installed; nothing to measure");
        return;
    }
    if let Some(dir) = std::env::var_os("PQPERF_BENCH_DEMO_RUN") {
        demo_count_phase(Path::new(&dir));
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
