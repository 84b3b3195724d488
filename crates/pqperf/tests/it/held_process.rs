//! The next timing process started beside the current one and held at its hold gate (issue
//! 41), with the real lean driver on a tiny gcc-built candidate: a held process is started
//! off the measuring CPU, waits at its hold gate until the process before it has passed its
//! last gate, is moved (every task) onto the measuring CPU by the parent, and its windows
//! pass the kernel check; the one before hands the CPU over at its last gate.

use crate::common;

use std::path::{Path, PathBuf};

use common::toy::{Lib, TOY_SIG, toy_run, write_build_json};
use pqperf_measure::driver::{ApiSpec, DriverArgs};
use pqperf_measure::runner::{self, DriverExe};

fn setup_run(run: &Path) {
    let mut bj = toy_run(run, "toy_sig.c", TOY_SIG, &[Lib::new("held-1", "toy")]);
    for e in bj.instances.values_mut() {
        e.library_sha256 = Some(format!("sha-of-{}", e.label));
    }
    write_build_json(run, &bj);
}

fn args(cpu: usize, op: &str) -> DriverArgs {
    DriverArgs {
        lib: PathBuf::from("lib/held-1/libtoy.so"),
        op: op.into(),
        bytes: 0,
        trials: 2,
        iters: 40,
        warmups: 1,
        cpu: Some(cpu),
        samples: true,
        force_ticks: false,
        api: ApiSpec::Iccs,
        stack_region: 262_144,
        seed: None,
        pool_max: None,
        prepare: false,
        relayed: false,
    }
}

#[test]
fn a_held_process_is_moved_onto_the_measuring_cpu_and_passes_the_kernel_check() {
    let mine = pqperf_ffi::affinity::get_affinity().unwrap();
    if mine.len() < 2 || !pqperf_ffi::untrusted::timing_seccomp_in_force() {
        eprintln!("skipped: needs 2 CPUs and the timing child's seccomp filter");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path().join("run");
    setup_run(&r);
    let exe = DriverExe::current(&r).unwrap();
    // The measuring CPU is left out of this thread's CPUs (as a campaign leaves it out of
    // the parent's): what it starts runs on the others until it is moved.
    let measuring = *mine.last().unwrap();
    let rest: Vec<usize> = mine.iter().copied().filter(|c| *c != measuring).collect();
    let t = std::thread::spawn(move || {
        pqperf_ffi::affinity::set_affinity(&rest).unwrap();
        let (a, b) = (args(measuring, "sign"), args(measuring, "verify"));
        assert!(runner::holds(&exe, &a));
        // Two held processes back to back: the second waits for the first's last gate.
        let first = runner::start_held(&exe, &a, std::time::Duration::from_secs(120)).unwrap();
        let second = runner::start_held(&exe, &b, std::time::Duration::from_secs(120)).unwrap();
        let (ra, rb) = (first.join(), second.join());
        // Not needed: ended at its hold gate, never run.
        let unused = runner::start_held(&exe, &a, std::time::Duration::from_secs(120)).unwrap();
        drop(unused);
        let c = runner::run_driver(&exe, &a, std::time::Duration::from_secs(120));
        (ra, rb, c)
    });
    let (ra, rb, rc) = t.join().unwrap();
    for (what, run) in [("first", &ra), ("second", &rb)] {
        assert_eq!(run.process.status, "complete", "{what}: {:?}", run.process);
        let h = &run.process.extra["hold"];
        assert_eq!(h["held"], true, "{what}: {h}");
        assert!(h["tasks_moved"].as_u64().unwrap() >= 1, "{what}: {h}");
        assert!(h["cpu_s_before"].as_f64().unwrap() > 0.0, "{what}: {h}");
        assert!(run.held);
        // Its windows were checked against the kernel's readings and passed.
        let kc = &run.process.extra["kernel_check"];
        assert!(
            kc["problems"].as_array().is_none_or(|p| p.is_empty()),
            "{what}: {kc}"
        );
        assert_eq!(run.process.trials.len(), 2);
        // Its start and preparation ran beside the path.
        assert!(run.beside.sandbox_s + run.beside.prepare_s > 0.0 || run.budget.prepare_s > 0.0);
    }
    // The first handed the CPU over to the second at its last gate.
    assert!(ra.handed_over, "{:?}", ra.process.extra["hold"]);
    assert!(
        ra.beside.exit_s > 0.0 || ra.beside.reap_s > 0.0,
        "{:?}",
        ra.beside
    );
    // A process started the usual way (pinned before exec) after them still works and also
    // stops at its hold gate, where it is let go at once.
    assert_eq!(rc.process.status, "complete", "{:?}", rc.process);
    assert_eq!(rc.process.extra["hold"]["held"], false);
    assert!(!rc.held);
}
