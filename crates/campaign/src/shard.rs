//! The parallel launcher (method §16): one shard chain (calibrate → measure → profile) per
//! benchmark CPU plus a chain for the deferred instances on its own CPU, with the launcher's
//! own work kept off those CPUs.

use std::path::Path;
use std::process::Stdio;

use crate::CampaignError;
use crate::Logger;

/// Runs `exe campaign <phase> --run-dir RUN --cpu C --shard k/n --defer <extra>` for each
/// phase of `phases`, one background chain per CPU, plus the deferred chain on `deferred_cpu`
/// (if given). Returns 0 if every chain succeeded, 1 otherwise.
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
    let log = Logger::open(&run.join("campaign.log"), false)?;
    let n = cpus.len();
    let chain = |args_for: Vec<Vec<String>>, out: std::path::PathBuf| {
        let exe = exe.to_path_buf();
        std::thread::spawn(move || -> i32 {
            let Ok(f) = std::fs::File::create(&out) else {
                return 1;
            };
            for args in args_for {
                let st = pqperf_ffi::emulation::self_command(&exe)
                    .args(pqperf_ffi::untrusted::policy_args(
                        &pqperf_ffi::untrusted::policy(),
                    ))
                    .args(&args)
                    .stdin(Stdio::null())
                    .stdout(f.try_clone().map(Stdio::from).unwrap_or(Stdio::null()))
                    .stderr(f.try_clone().map(Stdio::from).unwrap_or(Stdio::null()))
                    .status();
                match st {
                    Ok(s) if s.success() => {}
                    Ok(s) => return s.code().unwrap_or(1),
                    Err(_) => return 1,
                }
            }
            0
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
        handles.push(chain(args, run.join(format!("shard-{}.out", k + 1))));
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
        (d, chain(args, run.join("deferred.out")))
    });
    let mut status = 0;
    for h in handles {
        status = status.max(h.join().unwrap_or(1));
    }
    match &deferred {
        Some((d, _)) => log.log(format!(
            "shards finished (status {status}); deferred instances still running on CPU {d}"
        )),
        None => log.log(format!("shards finished (status {status})")),
    }
    if let Some((_, h)) = deferred {
        let s = h.join().unwrap_or(1);
        log.log(format!("deferred instances finished (status {s})"));
        status = status.max(s);
    }
    Ok(i32::from(status != 0))
}
