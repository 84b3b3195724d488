//! The parallel launcher (method §16): one shard chain (calibrate → measure → profile) per
//! benchmark CPU plus a chain for the deferred instances on its own CPU, with the launcher's
//! own work kept off those CPUs.

use std::path::Path;
use std::process::Stdio;

use crate::CampaignError;
use crate::Logger;

/// Runs `exe campaign <phase> --run-dir RUN --cpu C --shard k/n --defer <extra>` for each
/// phase of `phases`, one background chain per CPU, plus the deferred chain on `deferred_cpu`
/// (if given). Returns 0 if every chain succeeded, 1 otherwise; each failed chain is named on
/// stderr and in `campaign.log` with how its child ended and the last lines of its output.
/// `extra` carries `--options FILE` ([`crate::OptionsData`], the containment of candidate
/// code included): the children get no containment flags of their own.
pub fn launch(
    exe: &Path,
    run: &Path,
    cpus: &[usize],
    deferred_cpu: Option<usize>,
    phases: &[&str],
    extra: &[String],
) -> Result<i32, CampaignError> {
    let mut bench: Vec<usize> = cpus.to_vec();
    bench.extend(deferred_cpu);
    crate::keep_off_cpus(&bench);
    std::fs::create_dir_all(run)?;
    let layout = pqperf_model::layout::RunLayout::new(run);
    let log = Logger::open(&layout.campaign_log(), false)?;
    let n = cpus.len();
    let chain = |who: String, args_for: Vec<Vec<String>>, out: std::path::PathBuf| {
        let exe = exe.to_path_buf();
        std::thread::spawn(move || -> Result<(), String> {
            let f = std::fs::File::create(&out)
                .map_err(|e| format!("{who}: cannot create {}: {e}", out.display()))?;
            for args in args_for {
                let phase = args.get(1).cloned().unwrap_or_default();
                let io = || {
                    f.try_clone()
                        .map(Stdio::from)
                        .map_err(|e| format!("{who}: cannot share {}: {e}", out.display()))
                };
                // The containment travels in the options file (`OptionsData::containment`).
                let st = pqperf_ffi::emulation::self_command(&exe)
                    .args(&args)
                    .stdin(Stdio::null())
                    .stdout(io()?)
                    .stderr(io()?)
                    .status()
                    .map_err(|e| {
                        format!(
                            "{who}: cannot start {} campaign {phase}: {e}",
                            exe.display()
                        )
                    })?;
                if !st.success() {
                    return Err(format!(
                        "{who}: `pqperf campaign {phase}` {}; {}",
                        exit_words(st),
                        tail_of(&out)
                    ));
                }
            }
            Ok(())
        })
    };
    let runs = run.to_string_lossy().into_owned();
    let mut handles = Vec::new();
    for (k, cpu) in cpus.iter().enumerate() {
        let args: Vec<Vec<String>> = phases
            .iter()
            .map(|ph| {
                let mut a = vec![
                    "campaign".to_string(),
                    ph.to_string(),
                    "--run-dir".into(),
                    runs.clone(),
                    "--cpu".into(),
                    cpu.to_string(),
                    "--shard".into(),
                    format!("{}/{n}", k + 1),
                    "--defer".into(),
                ];
                a.extend(extra.iter().cloned());
                a
            })
            .collect();
        handles.push(chain(
            format!("shard {}/{n} on CPU {cpu}", k + 1),
            args,
            layout.shard_output(k + 1),
        ));
    }
    let deferred = deferred_cpu.map(|d| {
        let args: Vec<Vec<String>> = phases
            .iter()
            .map(|ph| {
                let mut a = vec![
                    "campaign".to_string(),
                    ph.to_string(),
                    "--run-dir".into(),
                    runs.clone(),
                    "--cpu".into(),
                    d.to_string(),
                    "--deferred-only".into(),
                ];
                a.extend(extra.iter().cloned());
                a
            })
            .collect();
        (
            d,
            chain(
                format!("deferred chain on CPU {d}"),
                args,
                layout.deferred_output(),
            ),
        )
    });
    // Every failed chain is named, on stderr and in campaign.log: the children's own output
    // went to their `.out` files, so the launcher is the only one who can say what failed.
    let failure = |r: std::thread::Result<Result<(), String>>| -> bool {
        let why = match r {
            Ok(Ok(())) => return false,
            Ok(Err(why)) => why,
            Err(_) => "a launcher thread panicked".to_string(),
        };
        eprintln!("campaign parallel: {why}");
        log.log(format!("FAILED {why}"));
        true
    };
    let mut status = 0;
    for h in handles {
        status = status.max(i32::from(failure(h.join())));
    }
    match &deferred {
        Some((d, _)) => log.log(format!(
            "shards finished (status {status}); deferred instances still running on CPU {d}"
        )),
        None => log.log(format!("shards finished (status {status})")),
    }
    if let Some((_, h)) = deferred {
        let s = i32::from(failure(h.join()));
        log.log(format!("deferred instances finished (status {s})"));
        status = status.max(s);
    }
    Ok(status)
}

/// How a child ended, in words: `exited with status N` or `was killed by signal S`.
fn exit_words(st: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended abnormally".to_string(),
    }
}

/// The last lines of a chain's output file, to quote in its failure message.
fn tail_of(out: &Path) -> String {
    const LINES: usize = 8;
    let text = std::fs::read_to_string(out).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return format!("it printed nothing ({})", out.display());
    }
    let from = lines.len().saturating_sub(LINES);
    format!(
        "last lines of {}:\n  {}",
        out.display(),
        lines[from..].join("\n  ")
    )
}
