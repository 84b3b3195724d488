//! The parent's check of the outputs of timed calls (issue 36): a library that returns wrong
//! outputs only while it is timed (for example when its executable is `pqperf-driver`) is
//! caught, and recorded as `inconsistent`, never as a number.
//!
//! The timed driver digests, untimed, the output of the last call of every trial
//! (`PQPERF output_digest`, `pqperf_model::stream::OutputDigest`). The parent starts a
//! *replay* of the same process, contained like every candidate child, in another executable
//! (`pqperf replay-child <driver argv>`: the pqperf executable, as the KAT child, where the
//! library's outputs are checked against its known answers): the same preparation, seed,
//! inputs and calls, untimed, and the digest of the same outputs
//! (`pqperf_driver::replay`). Equal digests: the timed outputs are those the library computes
//! outside the measurement. Different: the replay runs again; when the two replays agree with
//! each other and not with the timed process, the process is `inconsistent` (the caller
//! re-runs it once); when they disagree with each other the library is not deterministic
//! given its seed and the check is recorded as not possible (`output_check`), never as a
//! verdict.
//!
//! Where the parent's CPUs leave the measuring CPU out, the first process's replay runs
//! beside it and a drawn replay beside the same library's next process ([`Deferred`]; no
//! process of another library starts before it has ended, [`settle_others`]); its verdict is
//! applied when that process has ended.
//!
//! The replay costs as much CPU as the process, so the parent checks the first process of
//! every operation and, drawn after each later process has ended, one in [`REPLAY_ONE_IN`]
//! of the others ([`drawn`]: the parent's own randomness, which the candidate can neither
//! read nor predict, so a library wrong only in some processes cannot know which are
//! checked), plus the re-run of a checked process that failed; only where a replay
//! executable was declared ([`set_replay_exe`]: `pqperf campaign`, `pqperf demo`) and the
//! driver is pqperf's own `pqperf-driver` (not a test's fake driver). A library
//! that tells the replay from the timing process by more than the executable (its argv, its
//! run time) can still compute correctly in the replay: see docs/threat-model.md.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use pqperf_ffi::untrusted::{self, ChildSpec};
use serde_json::json;

use crate::driver::DriverArgs;
use crate::runner::{DriverExe, Run};

/// A process after the first of an operation is replayed with probability 1 in this.
pub const REPLAY_ONE_IN: u64 = 8;

/// The parent's draw for one ended process: replay it? (1 in [`REPLAY_ONE_IN`], from the
/// standard library's randomly keyed SipHash, keyed from the operating system's randomness
/// once per pqperf process and stepped per call.)
pub fn drawn() -> bool {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id() as u64);
    h.finish().is_multiple_of(REPLAY_ONE_IN)
}

/// The hidden subcommand of the replay child.
pub const REPLAY_CHILD: &str = "replay-child";

static REPLAY_EXE: OnceLock<PathBuf> = OnceLock::new();

/// Declares the executable that runs `<exe> replay-child <driver argv>` (pqperf itself).
/// Without it no output check is made.
pub fn set_replay_exe(exe: PathBuf) {
    let _ = REPLAY_EXE.set(exe);
}

/// The replay child's main: parse the driver argv, take the result channel, replay, and write
/// `REPLAY <digest>` (or `REPLAY none`). Returns the exit status.
pub fn replay_child_main(argv: &[String]) -> i32 {
    let a = match DriverArgs::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("replay-child: {e}");
            return 2;
        }
    };
    let mut out = match untrusted::child_enter_fresh() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("replay-child: {e}");
            return 2;
        }
    };
    // The seed comes on the control pipe (issue 36: none on the argv,
    // `pqperf_driver::inputs::seed_payload`), taken before the library is loaded; a replay
    // started by hand keeps its `--seed`.
    let mut a = a;
    match untrusted::child_control() {
        Ok(Some(mut c)) => {
            let got = pqperf_driver::Gate::new(Some(&mut c as &mut dyn std::io::Read))
                .setup()
                .ok_or_else(|| "no setup word on the control pipe".to_string())
                .and_then(|b| pqperf_driver::inputs::parse_seed_payload(&b));
            match got {
                Ok(s) => a.seed = s,
                Err(e) => {
                    eprintln!("replay-child: {e}");
                    return 2;
                }
            }
        }
        Ok(None) => {}
        Err(e) => {
            eprintln!("replay-child: {e}");
            return 2;
        }
    }
    match crate::driver::replay(&a) {
        Ok(d) => {
            let _ = writeln!(out, "REPLAY\t{}", d.as_deref().unwrap_or("none"));
            let _ = out.flush();
            0
        }
        Err((code, msg)) => {
            eprintln!("replay-child: {msg}");
            code
        }
    }
}

/// One replay: its digest, or why there is none.
fn replay_once(
    exe: &Path,
    d: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
) -> Result<String, String> {
    // No seed on the argv (issue 36): it goes on the control pipe.
    let mut argv = vec![REPLAY_CHILD.to_string()];
    let mut on_argv = args.clone();
    on_argv.seed = None;
    argv.extend(on_argv.to_argv());
    let seed = pqperf_driver::inputs::seed_payload(args.seed.as_ref());
    let out = untrusted::run_conducted(
        &ChildSpec {
            program: exe.to_path_buf(),
            args: argv,
            cwd: d.cwd.clone(),
            timeout,
            readable: vec![d.cwd.join(&args.lib)],
            cpu: args.cpu,
            ..Default::default()
        },
        &mut |s| {
            s.send_payload("setup", &seed);
        },
    );
    if let Some(e) = &out.spawn_error {
        return Err(format!("cannot start the replay: {e}"));
    }
    if out.timed_out {
        return Err("the replay timed out".into());
    }
    let digest = out
        .result_lines()
        .iter()
        .find_map(|l| l.strip_prefix("REPLAY\t").map(str::to_string));
    match (digest, out.code()) {
        (Some(d), Some(0)) => Ok(d),
        (_, code) => Err(format!(
            "the replay ended without a digest (exit {code:?}): {}",
            out.stderr.tail_chars(300)
        )),
    }
}

/// Whether [`check`] replays processes of `d` (a replay executable was declared and `d` is
/// pqperf's own driver): the measure phase's estimate counts one replay per operation then.
pub fn replays(d: &DriverExe) -> bool {
    REPLAY_EXE.get().is_some()
        && d.exe.file_name() == Some(std::ffi::OsStr::new(crate::runner::DRIVER_BIN))
}

/// Replays running beside a later process (issue 41): the library each replays, and whether
/// it has ended.
#[allow(clippy::type_complexity)]
static BESIDE: std::sync::Mutex<Vec<(PathBuf, std::sync::Arc<std::sync::atomic::AtomicBool>)>> =
    std::sync::Mutex::new(Vec::new());

/// A drawn replay started after its process ended, running beside the same library's next
/// process (off the measuring CPU); [`Deferred::settle`] applies its verdict.
pub struct Deferred {
    handle: std::thread::JoinHandle<Result<String, String>>,
    /// The process entry as it ended (the verdict is made on it).
    pub process: pqperf_model::record::Process,
    claimed: Option<String>,
    args: DriverArgs,
    why: &'static str,
}

impl Deferred {
    /// Starts the replay of the ended `run` on the parent's CPUs (which leave out the
    /// measuring CPU: the caller checked) and marks its check pending.
    pub fn start(
        run: &mut Run,
        d: &DriverExe,
        args: &DriverArgs,
        timeout: Duration,
        why: &'static str,
    ) -> Deferred {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Ok(mut g) = BESIDE.lock() {
            g.push((args.lib.clone(), done.clone()));
        }
        let (d2, a2) = (d.clone(), args.clone());
        let handle = std::thread::spawn(move || {
            let r = replay_digest(&d2, &a2, timeout, None);
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            r
        });
        run.process.extra.insert(
            "output_check".into(),
            json!({ "verdict": "pending", "chosen": why }),
        );
        Deferred {
            handle,
            process: run.process.clone(),
            claimed: run.output_digest.clone(),
            args: args.clone(),
            why,
        }
    }

    /// Waits for the replay and makes the verdict on the process entry as it ended (a
    /// second replay, when the first disagrees, runs now); returns the entry.
    pub fn settle(self, d: &DriverExe, timeout: Duration) -> pqperf_model::record::Process {
        let first = self
            .handle
            .join()
            .unwrap_or_else(|_| Err("the replay's thread panicked".into()));
        let mut p = self.process;
        check_process(
            &mut p,
            self.claimed,
            d,
            &self.args,
            timeout,
            self.why,
            first,
        );
        if let Some(c) = p.extra.get_mut("output_check") {
            c["replay_beside"] = json!(true);
        }
        p
    }
}

/// Waits until no replay of a library other than `lib` runs beside (what runs beside a timed
/// process is the same library's: docs/threat-model.md).
pub fn settle_others(lib: &Path) {
    loop {
        let busy = match BESIDE.lock() {
            Ok(mut g) => {
                g.retain(|(_, done)| !done.load(std::sync::atomic::Ordering::SeqCst));
                g.iter().any(|(l, _)| l != lib)
            }
            Err(_) => false,
        };
        if !busy {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The method text of an output check the parent made itself from a relayed pool
/// ([`parent_verified`]).
pub fn parent_method(op: &str) -> &'static str {
    if op == "dec" {
        "verified by the parent from the relayed pool: every timed shared secret's digest equals that of the preparer's encapsulations"
    } else {
        "verified by the parent from the relayed pool: every unaltered signature accepted and the message the parent altered rejected, in every window"
    }
}

/// Whether the parent's own checks of a relayed pooled process (verify, dec:
/// `crate::relay::Plan::check`) already cover every timed output, so that no replay is
/// needed (issue 41): dec, whose every shared secret's digest the parent compared with the
/// preparer's encapsulations; verify when every unaltered entry was accepted (the preparer
/// signed them) and the altered one rejected. A verify that rejected valid entries (a library
/// that rejects what it signed, or signed wrongly in the preparer) is replayed as before.
/// When true, `output_check` records the parent's verdict.
pub fn parent_verified(run: &mut Run, args: &DriverArgs) -> bool {
    if !run.complete() || !crate::relay::pooled(args) {
        return false;
    }
    let Some(rel) = run.process.extra.get("relayed_inputs") else {
        return false;
    };
    let covered = rel.get("pool").is_some_and(|p| p.is_object())
        && rel["problems"].as_array().is_some_and(|v| v.is_empty())
        && (args.op == "dec" || rel["valid_rejections"].as_u64() == Some(0));
    if covered {
        let pool = rel["pool"]["id"].clone();
        run.process.extra.insert(
            "output_check".into(),
            json!({
                "verdict": "match",
                "chosen": "parent",
                "method": parent_method(&args.op),
                "pool": pool,
            }),
        );
    }
    covered
}

/// Checks the outputs of a complete run against replays (module doc); marks it
/// `inconsistent` when they differ. Records `output_check` in the process entry.
/// `why` says how the process was chosen (`first`, `drawn`, `rerun`).
pub fn check(run: &mut Run, d: &DriverExe, args: &DriverArgs, timeout: Duration, why: &str) {
    if !replays(d) || !run.complete() {
        return;
    }
    let first = replay_digest(d, args, timeout, args.cpu);
    check_with(run, d, args, timeout, why, first);
}

/// The first replay of [`check`] alone, on `cpu` (`None`: the parent's CPUs), made before
/// the timed process has ended: the measuring loop starts it beside the process it checks
/// (issue 41; the same library, off the measuring CPU) and hands it to [`check_with`].
pub fn replay_digest(
    d: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    cpu: Option<usize>,
) -> Result<String, String> {
    let Some(exe) = REPLAY_EXE.get() else {
        return Err("no replay executable".into());
    };
    let mut on = args.clone();
    on.cpu = cpu;
    replay_once(exe, d, &on, timeout)
}

/// [`check`] with its first replay's result already made ([`replay_digest`]); a second
/// replay, when the first disagrees, runs now.
pub fn check_with(
    run: &mut Run,
    d: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    why: &str,
    first: Result<String, String>,
) {
    let claimed = run.output_digest.clone();
    check_process(&mut run.process, claimed, d, args, timeout, why, first);
}

/// [`check_with`] on a process entry and the digest its driver claimed.
pub fn check_process(
    process: &mut pqperf_model::record::Process,
    claimed: Option<String>,
    d: &DriverExe,
    args: &DriverArgs,
    timeout: Duration,
    why: &str,
    first: Result<String, String>,
) {
    let Some(exe) = REPLAY_EXE.get() else {
        return;
    };
    // Only pqperf's own driver writes the digest (not a fake driver of the tests).
    if process.status != "complete"
        || d.exe.file_name() != Some(std::ffi::OsStr::new(crate::runner::DRIVER_BIN))
    {
        return;
    }
    let (verdict, problem) = match (&claimed, &first) {
        (_, Err(e)) => (format!("not checked: {e}"), None),
        (None, Ok(r)) if r == "none" => ("no outputs to check".to_string(), None),
        (None, Ok(_)) => (
            "mismatch".to_string(),
            Some("no output digest reported although the replay produced one".to_string()),
        ),
        (Some(c), Ok(r)) if c == r => ("match".to_string(), None),
        (Some(c), Ok(r)) => match replay_once(exe, d, args, timeout) {
            Ok(r2) if &r2 == r => (
                "mismatch".to_string(),
                Some(format!(
                    "output digest {c} of the timed calls differs from {r}, what the library computes for the same inputs outside the timing driver (replayed twice)"
                )),
            ),
            Ok(_) => (
                "not checked: the library's outputs differ between replays of the same seed (not deterministic)".to_string(),
                None,
            ),
            Err(e) => (format!("not checked: {e}"), None),
        },
    };
    process.extra.insert(
        "output_check".into(),
        json!({ "claimed": claimed, "replay": first.ok(), "verdict": verdict, "chosen": why }),
    );
    if let Some(p) = problem {
        process.status = crate::verify::INCONSISTENT.into();
        let kc = process
            .extra
            .entry("kernel_check".to_string())
            .or_insert_with(|| json!({ "problems": [] }));
        if let Some(v) = kc.get_mut("problems").and_then(|v| v.as_array_mut()) {
            v.push(json!(p));
        } else {
            kc["problems"] = json!([p]);
        }
    }
}
