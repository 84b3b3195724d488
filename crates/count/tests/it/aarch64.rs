//! Emulated AArch64 instruction counts (qemu-user with pqperf's TCG plugin): the toy ICCS
//! signature cross-built for AArch64 counted twice gives identical figures; its variant with
//! one extra `sm3hash` call per sign differs by exactly that call (the plugin's count of the
//! instructions inside `sm3hash`, plus its call site in `sig_sign`); an emulator that
//! refuses `-plugin` gives "not available" evidence and no error.
//!
//! Needs qemu-aarch64, aarch64-linux-gnu-gcc, the cross-built lean driver and a run
//! directory where the emulated pqperf built the toy candidate twice (sign-92 as it is,
//! sign-93 with `-D COUNT_EXTRA_HASH`): `scripts/test-aarch64.sh` prepares both and runs this
//! module with `PQPERF_AARCH64_DRIVER` and `PQPERF_AARCH64_TOY_RUN` naming them; without
//! them the test says so and returns.

use std::path::{Path, PathBuf};
use std::time::Instant;

use pqperf_count::{CountOptions, run};
use pqperf_measure::driver::ApiSpec;
use pqperf_measure::instance::Instance;
use pqperf_model::count::CountEvidence;
use pqperf_model::layout::RunLayout;
use pqperf_model::vocab::Category;

/// The toy candidate's ids in the prepared run (`scripts/test-aarch64.sh`): as it is, and
/// built with `-D COUNT_EXTRA_HASH`.
const BASE: &str = "sign-92";
const EXTRA: &str = "sign-93";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn on_path(p: &str) -> bool {
    std::process::Command::new(p)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The cross-built driver, or why the test cannot run.
fn prerequisites() -> Result<PathBuf, String> {
    for tool in ["qemu-aarch64", "aarch64-linux-gnu-gcc"] {
        if !on_path(tool) {
            return Err(format!(
                "{tool} is not installed (scripts/setup-aarch64.sh)"
            ));
        }
    }
    let driver = std::env::var_os("PQPERF_AARCH64_DRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            repo().join("target/aarch64-cross/aarch64-unknown-linux-gnu/release/pqperf-driver")
        });
    if !driver.is_file() {
        return Err(format!(
            "no cross-built driver at {} (scripts/test-aarch64.sh builds it)",
            driver.display()
        ));
    }
    Ok(driver)
}

fn instances(run_dir: &Path) -> Vec<Instance> {
    let b = RunLayout::new(run_dir).read_build().unwrap();
    b.instances
        .values()
        .map(|e| Instance {
            entry: e.clone(),
            category: Some(Category::Sign),
            api: ApiSpec::Iccs,
            kat_not_passed: false,
        })
        .collect()
}

fn ev<'a>(s: &'a [CountEvidence], id: &str, op: &str) -> &'a CountEvidence {
    s.iter()
        .find(|e| e.candidate == id && e.operation == op)
        .unwrap_or_else(|| panic!("{id} {op} in {s:?}"))
}

#[test]
fn emulated_counts_are_exact_and_the_no_plugin_path_says_not_available() {
    let driver = match prerequisites() {
        Ok(d) => d,
        Err(why) => {
            eprintln!("aarch64 count test skipped: {why}");
            return;
        }
    };
    // The toy candidate built for AArch64 by the emulated pqperf (a native pqperf cannot
    // cross-build ICCS candidates: its helper library is built for the host).
    let Some(prepared) = std::env::var_os("PQPERF_AARCH64_TOY_RUN").map(PathBuf::from) else {
        eprintln!(
            "aarch64 count test skipped: PQPERF_AARCH64_TOY_RUN names no run directory with the toy candidate built for AArch64 (scripts/test-aarch64.sh prepares one)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let st = std::process::Command::new("cp")
        .arg("-r")
        .arg(&prepared)
        .arg(&run_dir)
        .status()
        .unwrap();
    assert!(st.success());
    let _ = std::fs::remove_dir_all(run_dir.join("count"));
    let insts: Vec<Instance> = instances(&run_dir)
        .into_iter()
        .filter(|i| [BASE, EXTRA].contains(&i.entry.candidate.as_str()))
        .collect();
    assert_eq!(insts.len(), 2, "{insts:?}");
    let mut o = CountOptions::new(&run_dir, insts).unwrap();
    o.driver = driver;
    o.emulator = vec!["qemu-aarch64".into()];
    o.calls = 3;
    o.auto_calls = false;
    o.sub_symbol = Some("sm3hash".into());
    let t0 = Instant::now();
    let first = run(&o).unwrap();
    eprintln!(
        "aarch64 count: 2 instances × 3 operations in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(first.written.len(), 6, "{:?}", first.written);
    for e in &first.evidence {
        assert_eq!(e.status, "counted", "{e:?}");
        assert!(e.problems().is_empty(), "{:?}", e.problems());
        assert_eq!((e.calls, e.instructions.len()), (3, 3));
        assert_eq!(e.architecture.as_deref(), Some("aarch64"));
        let m = e.method.as_deref().unwrap();
        assert!(
            m.starts_with("qemu-tcg-plugin (qemu-aarch64 version "),
            "{m}"
        );
        assert_eq!(e.testbed.aslr, "off (setarch -R)");
        assert!(e.estimated_cycles_per_call.is_none() && e.per_call.is_none());
    }
    let rel = format!("count/{BASE}/COUNT-TOY-SIG__sign.json");
    let text = std::fs::read_to_string(run_dir.join(&rel)).unwrap();
    assert!(
        pqperf_model::paths::find_machine_path(&text).is_none(),
        "{text}"
    );

    // Deterministic: a second run gives the same figures, call by call.
    o.redo = true;
    let second = run(&o).unwrap();
    for (a, b) in first.evidence.iter().zip(&second.evidence) {
        assert_eq!(
            (&a.instructions, &a.functions),
            (&b.instructions, &b.functions),
            "{} {}",
            a.candidate,
            a.operation
        );
    }

    // One extra sm3hash call per sign shows up exactly.
    let a = ev(&first.evidence, BASE, "sign");
    let b = ev(&first.evidence, EXTRA, "sign");
    let (sa, sb) = (
        a.instructions_per_call.unwrap(),
        b.instructions_per_call.unwrap(),
    );
    assert_eq!(sa.min, sa.max, "{sa:?}");
    assert_eq!(sb.min, sb.max, "{sb:?}");
    let hash = |e: &CountEvidence| {
        let f = e
            .functions
            .iter()
            .find(|f| f.function == "sm3hash")
            .unwrap();
        (f.inclusive_per_call, f.calls_per_call)
    };
    assert_eq!(hash(a), (0.0, 0.0), "{:?}", a.functions);
    let (hash_ins, hash_calls) = hash(b);
    assert_eq!(hash_calls, 1.0);
    let site = (sb.max - sa.max) as f64 - hash_ins;
    eprintln!(
        "aarch64 sign: {} instructions per call, with the extra call {} (sm3hash {hash_ins} + call site {site})",
        sa.max, sb.max
    );
    assert!(
        (1.0..=16.0).contains(&site),
        "call site {site} instructions"
    );
    for op in ["keygen", "verify"] {
        assert_eq!(
            ev(&first.evidence, BASE, op).instructions,
            ev(&first.evidence, EXTRA, op).instructions,
            "{op}"
        );
    }

    // An emulator that cannot load plugins: "not available" evidence, never an error.
    let wrapper = tmp.path().join("qemu-noplugin");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -plugin ] && { echo 'qemu-aarch64: -plugin: this qemu was built without plugin support' >&2; exit 1; }; done\nexec qemu-aarch64 \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    o.emulator = vec![wrapper.to_string_lossy().into_owned()];
    let none = run(&o).unwrap();
    assert_eq!(none.evidence.len(), 6);
    for e in &none.evidence {
        assert_eq!(e.status, "refused", "{e:?}");
        let r = e.reason.as_deref().unwrap();
        assert!(r.starts_with("not available: the emulator"), "{r}");
        assert!(r.contains("without plugin support"), "{r}");
        assert!(e.problems().is_empty(), "{:?}", e.problems());
    }
    eprintln!("no plugin: {}", none.evidence[0].reason.as_deref().unwrap());
    // "Not available" evidence is not kept: with the plugin back, the units are counted.
    o.emulator = vec!["qemu-aarch64".into()];
    o.redo = false;
    let back = run(&o).unwrap();
    assert_eq!((back.kept, back.written.len()), (0, 6));
    assert_eq!(
        ev(&back.evidence, BASE, "sign").instructions,
        a.instructions
    );
}
