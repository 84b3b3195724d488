//! Site rendering benchmark (`cargo bench -p pqperf --bench site`).
//!
//! Synthesises a 119-candidate × 2-system dataset by replicating the golden records under new
//! ids (the site tests' `synth_dataset`), then times the real `pqperf site` binary against
//! `python3 -c` loading the same JSON files with the json module, alternating the two, and
//! prints every time, the medians and their ratio. Each site run writes a new output
//! directory (deleting one just before would make ext4 scan the freed inodes on the next
//! run's creates and time the file system instead).
//!
//! `PQPERF_BENCH_DATA=DIR` keeps the dataset in DIR (for profiling); `PQPERF_BENCH_RUNS=N`
//! sets the number of runs of each (default 7).

#[path = "../../site/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::{Relabel, synth_dataset};

const PY_LOAD: &str = "import json,glob,sys\nfs=sorted(glob.glob(sys.argv[1]+'/**/*.json',recursive=True))\nfor f in fs:\n  json.load(open(f))\nprint(len(fs))";

fn dataset(dst: &Path) {
    let golden: [(&str, &[&str]); 3] = [
        ("sign-02", &["BiT-128", "BiT-256", "BiT-512"]),
        (
            "sign-06",
            &[
                "COMPASS-SIG-128",
                "COMPASS-SIG-256",
                "COMPASS-SIG-384",
                "COMPASS-SIG-512",
            ],
        ),
        ("sign-08", &["DARTS128", "DARTS256", "DARTS512"]),
    ];
    let mut map = Vec::new();
    let mut downloads = Vec::new();
    for i in 0..119 {
        let id = if i < 100 {
            format!("sign-{i:02}")
        } else {
            format!("sigx-{:02}", i - 100)
        };
        let (gc, labels) = golden[i % 3];
        for l in labels {
            map.push(Relabel {
                from: (gc.into(), (*l).into()),
                to: (id.clone(), (*l).into()),
                ops: Vec::new(),
            });
        }
        downloads.push((id.clone(), format!("Synthetic {id}")));
    }
    synth_dataset(dst, &["x86_1", "arm_1"], &map, &downloads, true);
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let tmp = tempfile::tempdir().unwrap();
    let data: PathBuf = match std::env::var_os("PQPERF_BENCH_DATA") {
        Some(d) => PathBuf::from(d),
        None => tmp.path().join("data"),
    };
    if !data.join("performance").is_dir() {
        dataset(&data);
    }
    let runs: usize = std::env::var("PQPERF_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let exe = env!("CARGO_BIN_EXE_pqperf");
    let (mut site, mut py) = (Vec::new(), Vec::new());
    let mut pages = String::new();
    let mut n_json = 0usize;
    for i in 0..runs {
        let out = tmp.path().join(format!("site-{i}"));
        let t = Instant::now();
        let o = Command::new(exe)
            .arg("site")
            .arg(&data)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run pqperf site");
        site.push(t.elapsed().as_secs_f64());
        assert!(
            o.status.success(),
            "pqperf site failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        pages = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let t = Instant::now();
        let o = Command::new("python3")
            .args(["-c", PY_LOAD])
            .arg(&data)
            .output()
            .expect("python3");
        py.push(t.elapsed().as_secs_f64());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        n_json = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    }
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("site bench: 119 candidates x 2 systems, {n_json} JSON files; {pages}");
    println!("  pqperf site runs (s):      {}", fmt(&site));
    println!("  python3 json load runs (s): {}", fmt(&py));
    let (ms, mp) = (median(&mut site), median(&mut py));
    println!(
        "  median: pqperf site {ms:.3} s, python3 json load {mp:.3} s, ratio site/python {:.2}",
        ms / mp
    );
}
