//! `pqperf ab A B`: the interleaved A/B measurement, thin wrapper over
//! [`pqperf_campaign::ab`] (units, lease and pairs there; here the arguments, the
//! evidence file under B's run-directory lock, the report and the exit status).

use std::path::PathBuf;

use anyhow::Context;
use std::process::ExitCode;

use pqperf_campaign::Exit;
use pqperf_campaign::ab::{self as interleave, AbOptions};

const LONG_HELP: &str = "The recommended regression gate on a shared machine. A and B are run \
directories with built, KAT-checked libraries (build.json). Each (candidate, instance, \
operation) of A is paired with the same candidate and label of B, or with --map \
A_LABEL=B_LABEL (A and B may then be one run directory: two labels of one run). Every pair \
is one fresh driver process of A and one of B right after each other, pinned to the same \
CPU (leased host-wide for the whole measurement), in a seeded random order: rounds of one \
pair per operation in shuffled order, half the pairs AB, half BA. Whatever slows the machine \
for a while slows both processes of a pair, so the ratio B/A is exp(median of the pairs' \
ln(B/A)) with the sign-test (distribution-free) interval of the median. Each operation \
is judged after --pairs pairs, then after twice as many, up to --max-pairs; it stops at the \
first look whose verdict is slower, faster or no change (every look's interval at 1 - \
5 %/looks confidence, so the looks together keep the 5 % error). Verdicts: \
slower/faster when the interval excludes 1.0 and the change is at least --threshold, no \
change when the whole interval lies inside the ±threshold band, otherwise inconclusive, \
with the reason; also inconclusive when the canary (a fixed workload every driver process \
times) says the machine differed between the A and B processes at least as much as the \
change. Both processes of a pair time the same inputs: their seed derives from the run's \
secret stream key and the pair's index and reaches each timing process window by window \
with the parent's go (never on an argv); the key is drawn fresh for every run (or reused \
with --stream-key) and written to the evidence only after the pairs. The evidence (every \
process, its estimate and environment, the seed, the stream key) is written to --out or \
<B>/ab/ab-<UTC>-<seed>.json.

--max-time SECONDS sets a deadline: no pair is started after it, and each operation is \
judged on the pairs it has (its reason says so). The last line on stderr is the verdict in \
one line (`ab: verdict slower: 1 slower, 0 faster, …; exit 1`); -q prints only errors.

--counter instructions counts instead of timing: every operation of both libraries runs \
under valgrind's callgrind with the same seeded inputs (pqperf count's method, nothing written \
into the run directories; --jobs valgrind processes at once, no CPU lease: counts do not \
depend on load), and the ratio B/A of the mean instructions per call is exact. A-A is exactly \
no change (ratio 1) on any host; a change of at least --threshold (default 0.5 %) is \
slower/faster with its exact ratio; a smaller one is no change with its exact difference. \
It is the gate for shared runners; timing is the second opinion (counts are work done, not \
time). --out writes the comparison as JSON; an operation that could not be counted or \
compared (valgrind refused it, another testbed) fails like an unmeasured one.

Exit status: 0; 1 when an operation could not be measured, or with --fail-on-regression \
when any operation is slower (never for inconclusive); 2 on refused input (missing run \
directory or build.json, nothing pairs up, bad --map, fewer than 6 pairs, a --cpu that is \
not online or not allowed, an emulated host). The campaign's host checks of the benchmark \
CPU run first; what they find is printed and recorded in the evidence (host_problems), not \
refused: the pairs cancel what the host does to both sides alike.

Examples:
  pqperf ab runs/before runs/after --pairs 12 --fail-on-regression
  pqperf ab runs/x runs/x --map ml-dsa-44=ml-dsa-44-avx2 --op sign --json
  pqperf ab runs/x runs/x --only '^ml-dsa-44/ml-dsa-44$'   # A-A: the same library twice
  pqperf ab runs/base runs/head --counter instructions --fail-on-regression";

#[derive(clap::Args)]
#[command(after_long_help = LONG_HELP)]
pub struct AbArgs {
    /// Side A (baseline): run directory.
    a: PathBuf,
    /// Side B (candidate): run directory (may be A's with --map).
    b: PathBuf,
    /// Pair instance A_LABEL of A with B_LABEL of B (repeatable); with a mapping only the
    /// mapped pairs are measured.
    #[arg(long = "map", value_name = "A_LABEL=B_LABEL")]
    map: Vec<String>,
    /// Only A's instances whose `<id>/<label>` matches this regular expression.
    #[arg(long)]
    only: Option<String>,
    /// Only these operation keys (`keygen`, `sign`, `hash_32`, …; repeatable).
    #[arg(long = "op", value_name = "OPKEY")]
    ops: Vec<pqperf_model::vocab::Operation>,
    /// Pairs per operation at the first look (at least 6).
    #[arg(long, default_value_t = 10)]
    pairs: usize,
    /// Most pairs per operation: an operation still inconclusive after --pairs gets twice as
    /// many, and so on up to this (each look at a confidence that keeps the 5 % error over
    /// all looks). Equal to --pairs: one look.
    #[arg(long, default_value_t = 40)]
    max_pairs: usize,
    /// Seed of the pair order (default: from the clock; recorded either way).
    #[arg(long)]
    seed: Option<u64>,
    /// Smallest relative change (percent) that counts as faster/slower (default 2; 0.5 with
    /// --counter instructions).
    #[arg(long)]
    threshold: Option<f64>,
    /// What to compare: `time` (interleaved timed pairs) or `instructions` (both libraries
    /// counted under callgrind with the same seeded inputs: exact, no quiet CPU needed).
    #[arg(long, default_value = "time", value_parser = ["time", "instructions"])]
    counter: String,
    /// With --counter instructions: valgrind processes at once (default: one per CPU).
    #[arg(long)]
    jobs: Option<usize>,
    /// Seconds per timed trial to plan the calls per process for.
    #[arg(long, default_value_t = 0.05)]
    trial_target: f64,
    /// Benchmark CPU (a number, or `auto`: a free one of the allowed set). A CPU that is
    /// not online or not in this process's allowed CPUs is refused (exit 2).
    #[arg(long)]
    cpu: Option<String>,
    /// Clock-probe attempts of the host check made before measuring (as the campaign's).
    #[arg(long, default_value_t = 3)]
    probe_attempts: usize,
    /// Evidence file (default <B>/ab/ab-<UTC>-<seed>.json).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The evidence as JSON on stdout instead of the Markdown report.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 when any operation is slower.
    #[arg(long)]
    fail_on_regression: bool,
    /// A deadline in seconds for the whole measurement (CPU lease wait and calibration
    /// included): when it passes no further pair is started and each operation is judged on
    /// the pairs it has (said in its reason and on the console).
    #[arg(long, value_name = "SECONDS")]
    max_time: Option<f64>,
    /// Reuse an earlier run's stream key (64 hex characters: `key` in its evidence's
    /// `stream_key` or a campaign's `pqperf.stream_keys`). Without it every run draws a fresh
    /// secret key, written to the evidence only after the pairs, so no candidate can know its
    /// inputs before their window opens.
    #[arg(long, value_name = "HEX", value_parser = super::options::parse_stream_key)]
    stream_key: Option<[u8; pqperf_model::stream::KEY_BYTES]>,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

/// Runs the interleaved measurement.
pub fn run(a: AbArgs) -> anyhow::Result<ExitCode> {
    let mut map = Vec::new();
    for m in &a.map {
        let Some((x, y)) = m
            .split_once('=')
            .filter(|(x, y)| !x.is_empty() && !y.is_empty())
        else {
            return super::refuse(format!("--map {m}: expected A_LABEL=B_LABEL"));
        };
        map.push((x.to_string(), y.to_string()));
    }
    let counting = a.counter == "instructions";
    let threshold = a.threshold.unwrap_or(if counting {
        pqperf_compare::counts::DEFAULT_THRESHOLD * 100.0
    } else {
        2.0
    });
    if !(0.0..100.0).contains(&threshold) {
        return super::refuse(format!(
            "--threshold {threshold}: expected a percentage in [0, 100)"
        ));
    }
    if !(a.trial_target > 0.0 && a.trial_target <= 60.0) {
        return super::refuse(format!(
            "--trial-target {}: expected seconds in (0, 60]",
            a.trial_target
        ));
    }
    if let Some(t) = a.max_time
        && !(t > 0.0 && t.is_finite())
    {
        return super::refuse(format!(
            "--max-time {t}: expected a positive number of seconds"
        ));
    }
    let select = super::only(a.only.as_deref())?;
    let cpu = match a.cpu.as_deref() {
        None => pqperf_campaign::lease::CpuRequest::Fixed(pqperf_campaign::default_cpu()),
        Some("auto") => pqperf_campaign::lease::CpuRequest::Auto,
        Some(n) => match n.parse::<usize>() {
            Ok(c) => pqperf_campaign::lease::CpuRequest::Fixed(c),
            Err(_) => return super::refuse(format!("--cpu {n}: expected a number or auto")),
        },
    };
    let o = AbOptions {
        a_run: a.a.clone(),
        b_run: a.b.clone(),
        map,
        select,
        ops: a.ops.clone(),
        pairs: a.pairs,
        max_pairs: a.max_pairs.max(a.pairs),
        seed: a.seed.unwrap_or_else(interleave::clock_seed),
        threshold: threshold / 100.0,
        trial_target_s: a.trial_target,
        cpu,
        driver: None,
        probe_attempts: a.probe_attempts,
        max_time: a.max_time.map(std::time::Duration::from_secs_f64),
        stream_key: a.stream_key,
    };
    if let pqperf_campaign::lease::CpuRequest::Fixed(c) = o.cpu
        && let Err(e) = interleave::check_cpu(c)
    {
        return super::refuse(e.to_string());
    }
    let units = match interleave::units(&o) {
        Ok(u) => u,
        Err(pqperf_compare::CompareError::Refused(m)) => return super::refuse(m),
        Err(e) => return Err(e.into()),
    };
    if counting {
        return run_counts(&a, &o, &units);
    }
    if o.pairs < interleave::MIN_PAIRS {
        return super::refuse(format!(
            "--pairs {}: at least {} pairs are needed for a distribution-free 95 % interval",
            o.pairs,
            interleave::MIN_PAIRS
        ));
    }
    // `-q`: only what could not be measured (an error), no progress.
    let mut say = |m: String| {
        if !super::ui::quiet() || m.contains("not measured") {
            eprintln!("{m}");
        }
    };
    let ev = match interleave::run(&o, &units, &mut say) {
        Ok(ev) => ev,
        Err(pqperf_compare::CompareError::Refused(m)) => return super::refuse(m),
        Err(e) => return Err(e.into()),
    };
    let path = match &a.out {
        Some(p) => p.clone(),
        None => {
            let p = interleave::default_evidence_path(&a.b, &ev);
            let _lock = pqperf_campaign::lock_run_dir(&a.b, false)?;
            interleave::write_evidence(&p, &ev)?;
            p
        }
    };
    if a.out.is_some() {
        interleave::write_evidence(&path, &ev)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&ev)?);
    } else {
        print!("{}", interleave::markdown(&ev));
    }
    super::ui::note(format!("ab: evidence written to {}", path.display()));
    work_notes(&o, &units, &ev);
    let unmeasured = ev
        .units
        .iter()
        .filter(|u| u.result.verdict == pqperf_model::ab::Verdict::NoEstimate)
        .count();
    if unmeasured > 0 {
        eprintln!(
            "ab: {unmeasured} of {} operation(s) could not be measured",
            ev.units.len()
        );
    }
    let failed = unmeasured > 0 || (a.fail_on_regression && ev.any_slower());
    // The closing line a CI log shows last.
    super::ui::note(format!(
        "{}; exit {}",
        interleave::verdict_line(&ev),
        if failed { 1 } else { 0 }
    ));
    Ok(if failed {
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}

/// `--counter instructions`: both sides counted now ([`interleave::count_gate`]), the exact
/// comparison as Markdown or JSON (also to --out), the verdict line, the timing gate's exit
/// status (1 when an operation could not be compared, or slower with --fail-on-regression).
fn run_counts(
    a: &AbArgs,
    o: &AbOptions,
    units: &[interleave::UnitPlan],
) -> anyhow::Result<ExitCode> {
    let mut say = |m: String| super::ui::note(m);
    let g = match interleave::count_gate(o, units, a.jobs, &mut say) {
        Ok(g) => g,
        Err(pqperf_compare::CompareError::Refused(m)) => return super::refuse(m),
        Err(e) => return Err(e.into()),
    };
    let c = &g.comparison;
    let json = serde_json::to_string_pretty(c)?;
    if let Some(p) = &a.out {
        pqperf_model::fsutil::write_atomic(p, format!("{json}\n").as_bytes())
            .with_context(|| format!("writing {}", p.display()))?;
        super::ui::note(format!("ab: comparison written to {}", p.display()));
    }
    if a.json {
        println!("{json}");
    } else {
        print!("{}", pqperf_compare::counts::markdown(c));
    }
    let missing: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.ratio.is_none())
        .map(|r| format!("{} {}: {} ({})", r.instance, r.operation, r.verdict, r.note))
        .chain(c.only_a.iter().map(|k| format!("{k}: not counted in B")))
        .collect();
    for m in &missing {
        eprintln!("ab: {m}");
    }
    let failed = !missing.is_empty() || (a.fail_on_regression && c.any_slower());
    super::ui::note(format!(
        "ab: counted in {:.1} s; {}; exit {}",
        g.seconds,
        interleave::count_verdict_line(c),
        if failed { 1 } else { 0 }
    ));
    Ok(if failed {
        Exit::Failed.into()
    } else {
        Exit::Done.into()
    })
}

/// Says per measured operation whether a timing change is the work (the counts changed) or
/// the code's layout or the host (identical counts). With valgrind present both libraries are
/// counted now, with the same seeded inputs ([`interleave::count_gate`]: seconds for most
/// operations, no CPU lease, nothing written), so the note is about the libraries just timed;
/// without valgrind, the counts of both run directories (`pqperf campaign count`) when both
/// hold some. Counts that could not be made or compared say nothing here.
fn work_notes(o: &AbOptions, units: &[interleave::UnitPlan], ev: &pqperf_model::ab::AbEvidence) {
    use pqperf_compare::counts;
    let fresh = pqperf_count::counting_tool()
        .filter(|_| pqperf_count::count_emulator().is_empty())
        .and_then(|_| interleave::count_gate(o, units, None, &mut |_| {}).ok());
    let cc = match fresh {
        Some(g) => {
            super::ui::note(format!(
                "ab: both libraries counted under callgrind in {:.1} s (the work or the layout)",
                g.seconds
            ));
            g.comparison
        }
        None => {
            let (Ok(ca), Ok(cb)) = (
                counts::load_counts(&o.a_run, None),
                counts::load_counts(&o.b_run, None),
            ) else {
                return;
            };
            if ca.is_empty() || cb.is_empty() {
                return;
            }
            counts::compare_counts(&ca, &cb, counts::DEFAULT_THRESHOLD, &o.map)
        }
    };
    for u in &ev.units {
        let inst = format!("{}/{}", u.candidate, u.label_a);
        if let Some(note) = cc
            .rows
            .iter()
            .find(|k| k.instance == inst && k.operation == u.op && k.ratio.is_some())
            .and_then(counts::work_note)
        {
            super::ui::note(format!(
                "ab: {} {} {}: {note}",
                u.candidate, u.label_a, u.op
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use pqperf_model::vocab::Operation;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: super::AbArgs,
    }

    /// `--op` is parsed into the vocabulary's operation once, here; a key it does not know is
    /// refused naming the option and the keys it knows.
    #[test]
    fn an_operation_is_parsed_once_with_a_clear_error() {
        let t = T::try_parse_from(["ab", "a", "b", "--op", "sign", "--op", "hash_32"]).unwrap();
        assert_eq!(t.a.ops, vec![Operation::Sign, Operation::Hash(32)]);
        let e = T::try_parse_from(["ab", "a", "b", "--op", "sgn"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("--op") && e.contains("\"sgn\": not an operation key (keygen"),
            "{e}"
        );
    }
}
