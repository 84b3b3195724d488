//! Hand-made run directories of test candidates: C sources compiled by gcc into
//! `lib/<cand>/lib<label>.so` and listed in build.json, the fake timing driver, and the
//! `campaign` command line the end-to-end tests share. Uses only std and `pqperf-model`.

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_model::buildjson::{BuildEntry, BuildJson};

/// The test candidate toy signature (`testdata`-style C source shared by the CLI tests).
pub const TOY_SIG: &str = include_str!("../../pqperf/tests/measure/toy_sig.c");

/// One library to build: candidate id, label, and extra gcc arguments (`-D…`, more sources).
pub struct Lib {
    /// Candidate id (`sign-95`).
    pub cand: String,
    /// Instance label, also the library's name.
    pub label: String,
    /// Extra gcc arguments after the source.
    pub args: Vec<String>,
}

impl Lib {
    /// `cand/label` with no extra arguments.
    pub fn new(cand: &str, label: &str) -> Lib {
        Lib {
            cand: cand.into(),
            label: label.into(),
            args: Vec::new(),
        }
    }

    /// With `-D<d>` for each of `defines`.
    pub fn defines(mut self, defines: &[&str]) -> Lib {
        self.args.extend(defines.iter().map(|d| format!("-D{d}")));
        self
    }

    /// With these extra gcc arguments.
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Lib {
        self.args
            .extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }
}

/// The build.json entry of a hand-made instance (reference variant, guide flags).
pub fn entry(cand: &str, label: &str, kat: &str, library: Option<String>) -> BuildEntry {
    BuildEntry {
        candidate: cand.into(),
        label: label.into(),
        instance: label.into(),
        variant: "reference".into(),
        flags: "guide".into(),
        kat: kat.into(),
        library,
        ..Default::default()
    }
}

/// Writes `bj` as the run's build.json in the reference serialisation.
pub fn write_build_json(run: &Path, bj: &BuildJson) {
    std::fs::create_dir_all(run).unwrap();
    std::fs::write(
        run.join("build.json"),
        pqperf_model::pyjson::to_string(bj).unwrap(),
    )
    .unwrap();
}

/// Writes `source` as `run/<file>`, compiles it with `-O2 -fPIC -shared -DTOY_ID=… -DTOY_INSTANCE=…`
/// into `lib/<cand>/lib<label>.so` for each of `libs`, and writes build.json listing them with
/// KAT PASS; returns the build.json (to amend and write again).
pub fn toy_run(run: &Path, file: &str, source: &str, libs: &[Lib]) -> BuildJson {
    std::fs::create_dir_all(run).unwrap();
    let src = run.join(file);
    std::fs::write(&src, source).unwrap();
    let mut bj = BuildJson::default();
    for l in libs {
        let rel = format!("lib/{}/lib{}.so", l.cand, l.label);
        let out = run.join(&rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let st = Command::new("gcc")
            .args(["-O2", "-fPIC", "-shared", "-o"])
            .arg(&out)
            .arg(&src)
            .arg(format!("-DTOY_ID=\"{}\"", l.cand))
            .arg(format!("-DTOY_INSTANCE=\"{}\"", l.label))
            .args(&l.args)
            .status()
            .expect("gcc");
        assert!(st.success(), "gcc failed for {}/{}", l.cand, l.label);
        bj.instances.insert(
            format!("{}/{}", l.cand, l.label),
            entry(&l.cand, &l.label, "PASS", Some(rel)),
        );
    }
    write_build_json(run, &bj);
    bj
}

/// Builds the fake timing driver (`testdata/fake_driver.c`, canned protocol lines) into `dir`
/// with gcc; tests point `$PQPERF_DRIVER` at it.
pub fn fake_driver(dir: &Path) -> PathBuf {
    let src = dir.join("fake_driver.c");
    std::fs::write(&src, include_str!("../../../testdata/fake_driver.c")).unwrap();
    let exe = dir.join("fake-driver");
    let st = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc");
    assert!(st.success(), "gcc failed for the fake driver");
    exe
}

/// The arguments of `pqperf campaign <phase>` on `run` that every end-to-end test passes: an
/// unfixed host allowed, one probe, a registered test system in `systems.csv` beside the run.
pub fn campaign_args(run: &Path, phase: &str) -> Vec<String> {
    vec![
        "campaign".into(),
        phase.into(),
        "--run-dir".into(),
        run.to_str().unwrap().into(),
        "--allow-unfixed-host".into(),
        "--probe-attempts".into(),
        "1".into(),
        "--register".into(),
        "test machine (host not fixed)".into(),
        "--systems".into(),
        run.parent()
            .unwrap()
            .join("systems.csv")
            .to_str()
            .unwrap()
            .into(),
    ]
}
