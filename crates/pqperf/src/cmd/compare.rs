//! `pqperf compare A B`: thin wrapper over [`pqperf_compare`] (load both sides, compare,
//! render Markdown or JSON, exit status for CI gates).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::Exit;

const LONG_HELP: &str = "A and B are run directories (records/) or datasets \
(performance/data/<system>/records/; --system when there are several). For every (candidate, \
instance, operation) on both sides: the ratio B/A of the robust per-call estimates \
(pqperf.robust: p50, or for variable-time operations such as sign the fenced mean per call) \
with an interval that knows the between-run noise: the widest of the per-call bootstrap \
interval and the between-process interval of the per-trial estimates (Welch t, or with 8 or \
more processes a side the Mann-Whitney interval of their shift), widened by the A-A noise \
floor recorded for either side (--record-noise-floor), else by the drift measured within the \
runs' own processes (8 or more a side), else by an assumed 2 %. Verdict: slower/faster when the interval excludes 1.0 \
and |change| >= --threshold (default 2 %); no change when the whole interval lies inside the \
+-threshold band; otherwise inconclusive, with the reason. Also inconclusive when the two \
records' canary (a fixed workload every driver process times) says the machine itself \
differed at least as much as the change. The reference median-trial ratio is shown beside \
it. Instances on one side only are listed. The spread of the ratios is reported; when both \
sides measured the same library files it is the A-A noise floor. For a gate on a shared \
machine prefer `pqperf ab` (interleaved pairs).

Refuses records measured on an emulated host and mixed ICCS providers unless --force, and a \
comparison in which no operation has an estimate on both sides.

Exit status: 0, or 1 with --fail-on-regression when any operation is slower (never for \
inconclusive); 2 on errors and refusals.

Examples:
  pqperf compare runs/before runs/after
  pqperf compare runs/x runs/x --map ml-dsa-44=ml-dsa-44-avx2
  pqperf compare base/dataset new/dataset --system x86_1 --json --fail-on-regression
  pqperf compare runs/aa-1 runs/aa-2 --record-noise-floor   # A-A: noise floor of runs/aa-2
  pqperf compare runs/before runs/after --counter instructions --fail-on-regression";

#[derive(clap::Args)]
#[command(after_long_help = LONG_HELP)]
pub struct CompareArgs {
    /// Side A (baseline): run directory or dataset.
    a: PathBuf,
    /// Side B (candidate): run directory or dataset.
    b: PathBuf,
    /// System of a dataset with several systems.
    #[arg(long)]
    system: Option<String>,
    /// Compare instance A_LABEL of A with B_LABEL of B (repeatable); with a mapping only the
    /// mapped pairs are compared.
    #[arg(long = "map", value_name = "A_LABEL=B_LABEL")]
    map: Vec<String>,
    /// Smallest relative change (percent) that counts as faster/slower (default 2; 0.5 with
    /// --counter instructions).
    #[arg(long)]
    threshold: Option<f64>,
    /// What to compare: `time` (the timing records) or `instructions` (the callgrind counts
    /// of count/, deterministic).
    #[arg(long, default_value = "time", value_parser = ["time", "instructions"])]
    counter: String,
    /// JSON instead of Markdown.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 when any operation is slower (inconclusive never fails the gate).
    #[arg(long)]
    fail_on_regression: bool,
    /// Compare emulated data or mixed ICCS providers anyway.
    #[arg(long)]
    force: bool,
    /// Record the spread as the noise floor of B: writes `pqperf.noise_floor` into the
    /// campaign.json next to B's records (only for an A-A comparison: every pair measured
    /// the same library file). Re-render the pages afterwards (`pqperf report`).
    #[arg(long)]
    record_noise_floor: bool,
}

/// Runs the comparison; errors are printed here and give exit status 2 (status 1 is the
/// regression signal).
pub fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    match run_inner(a) {
        Ok(c) => Ok(c),
        Err(e) => {
            eprintln!("pqperf compare: error: {}", super::error_chain(&e));
            Ok(Exit::Refused.into())
        }
    }
}

fn run_inner(a: CompareArgs) -> anyhow::Result<ExitCode> {
    super::existing_dir(&a.a)?;
    super::existing_dir(&a.b)?;
    if a.counter == "instructions" {
        return run_counts(&a);
    }
    let threshold = a.threshold.unwrap_or(2.0);
    let map = label_map(&a.map)?;
    anyhow::ensure!(
        (0.0..100.0).contains(&threshold),
        "--threshold {threshold}: expected a percentage in [0, 100)"
    );
    let sa = pqperf_compare::load(&a.a, a.system.as_deref())?;
    let sb = pqperf_compare::load(&a.b, a.system.as_deref())?;
    for (side, name) in [(&sa, "A"), (&sb, "B")] {
        // Nothing to compare is not "no regression".
        anyhow::ensure!(
            !side.records.is_empty(),
            "{name} ({}) holds no records: nothing to compare",
            side.shown
        );
    }
    let o = pqperf_compare::Options {
        threshold: threshold / 100.0,
        map,
        force: a.force,
        ..Default::default()
    };
    let mut c = pqperf_compare::compare(&sa, &sb, &o)?;
    // Where both sides were counted, say whether a timing change is the work or the layout.
    if let (Ok(ca), Ok(cb)) = (
        pqperf_compare::counts::load_counts(&a.a, a.system.as_deref()),
        pqperf_compare::counts::load_counts(&a.b, a.system.as_deref()),
    ) && !ca.is_empty()
        && !cb.is_empty()
    {
        let cc = pqperf_compare::counts::compare_counts(
            &ca,
            &cb,
            pqperf_compare::counts::DEFAULT_THRESHOLD,
            &o.map,
        );
        pqperf_compare::counts::attach(&mut c, &cc);
    }
    // Nothing comparable is not "no regression" either.
    anyhow::ensure!(
        c.comparable() > 0,
        "no operation has a robust estimate on both sides ({} row(s) without one; only in A: {}; only in B: {}): nothing to compare",
        c.rows.len(),
        if c.only_a.is_empty() {
            "none".to_string()
        } else {
            c.only_a.join(", ")
        },
        if c.only_b.is_empty() {
            "none".to_string()
        } else {
            c.only_b.join(", ")
        }
    );
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", pqperf_compare::render::markdown(&c));
    }
    if a.record_noise_floor {
        let same = |x: &std::path::Path| std::fs::canonicalize(x).ok();
        anyhow::ensure!(
            same(&sa.system_dir) != same(&sb.system_dir),
            "--record-noise-floor: A and B are the same campaign ({}); an A-A noise floor needs two campaigns",
            sb.system_dir.display()
        );
        let floor = pqperf_compare::noise_floor_json(&c, &pqperf_campaign::utc_now()).context(
            "--record-noise-floor needs an A-A comparison: both sides must have measured the same library files",
        )?;
        // B's campaign.json is written like any run directory's: under its lock (a dataset's
        // system folder has no writer but publish and takes none).
        let in_dataset = sb
            .system_dir
            .parent()
            .is_some_and(|p| p.ends_with("performance/data"));
        let _lock = (!in_dataset)
            .then(|| pqperf_campaign::lock_run_dir(&sb.system_dir, false))
            .transpose()?;
        let p = pqperf_compare::record_noise_floor(&sb, floor)?;
        super::ui::note(format!("noise floor recorded in {}", p.display()));
    }
    Ok(if a.fail_on_regression && c.any_slower() {
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}

/// `--counter instructions`: the count evidence of both sides (`pqperf_compare::counts`).
fn run_counts(a: &CompareArgs) -> anyhow::Result<ExitCode> {
    use pqperf_compare::counts;
    let threshold = a.threshold.map_or(counts::DEFAULT_THRESHOLD, |t| t / 100.0);
    anyhow::ensure!(
        (0.0..1.0).contains(&threshold),
        "--threshold {}: expected a percentage in [0, 100)",
        threshold * 100.0
    );
    let map = label_map(&a.map)?;
    let ca = counts::load_counts(&a.a, a.system.as_deref())?;
    let cb = counts::load_counts(&a.b, a.system.as_deref())?;
    for (side, name, p) in [(&ca, "A", &a.a), (&cb, "B", &a.b)] {
        anyhow::ensure!(
            !side.is_empty(),
            "{name} ({}) holds no instruction counts (count/): run `pqperf campaign count` there",
            p.display()
        );
    }
    let c = counts::compare_counts(&ca, &cb, threshold, &map);
    anyhow::ensure!(
        c.comparable() > 0,
        "no operation has comparable counts on both sides ({} row(s); only in A: {}; only in B: {})",
        c.rows.len(),
        c.only_a.len(),
        c.only_b.len()
    );
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", counts::markdown(&c));
    }
    Ok(if a.fail_on_regression && c.any_slower() {
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}

/// `--map A_LABEL=B_LABEL` options as pairs.
fn label_map(maps: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    maps.iter()
        .map(|m| {
            m.split_once('=')
                .filter(|(x, y)| !x.is_empty() && !y.is_empty())
                .map(|(x, y)| (x.to_string(), y.to_string()))
                .with_context(|| format!("--map {m}: expected A_LABEL=B_LABEL"))
        })
        .collect()
}
