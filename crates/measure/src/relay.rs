//! The parent's side of relayed inputs (issue 36; the driver's side is
//! `pqperf_driver::inputs::Relay`): for a verify or dec process of pqperf's own protocol (a
//! process with its own input stream), a separate contained **preparer** process of the same
//! candidate (`pqperf-driver … --prepare`, same executable and sandbox, not pinned to the
//! measuring CPU) makes the key and the pool of signatures or ciphertexts from the process's
//! stream seed, with the shared secrets its encapsulations gave. The preparer gets that seed
//! on its control pipe (`pqperf_driver::inputs::seed_payload`), never on its argv, under
//! the timing processes' seccomp filters. The timing process
//! (`--relayed`, no seed on its argv) gets the key and the warm-ups' entries before its
//! preparation, and each timed window's entries only after the parent has read its CPU time
//! at the gate before that window ([`Plan`]). The window starts after the loading (the
//! driver says `PQPERF loaded`, the parent reads the CPU time again); the loading's CPU time
//! is bounded by [`load_allowance_s`], so no more than that can be spent on the coming
//! inputs before their window.
//!
//! **One pool per operation** (issue 41): the preparer runs once per operation (from the
//! seed of its first process, for its longest trials; made again, once, when a later process
//! has longer trials), and every timing process of the operation gets that pool. Timing
//! processes are fresh and contained and carry nothing from one to the next, so the
//! no-repeated-input rule holds per process. Call `c` of a process (warm-ups first, then the
//! windows in order) gets pool entry `(offset + i) mod n` (`i`: its input index,
//! `pqperf_model::stream::CallLayout::input_index`, which puts the sampled calls first under
//! pqperf's own protocol; `n`: the pool's entries, `pqperf_driver::inputs::pool_entries` of
//! the longest trials; `offset`: [`offset_of`] the process's own stream seed, 0 under the
//! reference's fixed seed), so no entry repeats within a process and the processes do not
//! all time the same first entries. `relayed_inputs.pool` records the pool's id, entries and
//! the offset, and `made_s` the preparer's seconds for it; the process's `prepare_s` is
//! that cost in the process that used the pool first (a pool made during calibration is
//! reused by the measure phase of the same pqperf process), 0 (`reused`) in the others.
//! The measure phase starts a library's pools when its turn begins and, while one is still
//! being made ([`pool_pending`]), times the library's other operations in its slot, so the
//! measuring CPU waits for a pool only when nothing else of the library is left to time.
//!
//! Where these checks cover every timed output (dec; verify when every unaltered entry was
//! accepted) no replay runs (`crate::outcheck::parent_verified`).
//!
//! The parent checks what it can ([`Plan::check`]):
//! - **dec**: after each window the driver reports the digest of the shared secrets the
//!   window's calls wrote (one output slot per entry); the parent computes the digest of the
//!   shared secrets the preparer's encapsulations gave for the entries it relayed, and they
//!   must be equal. A library that decapsulates wrongly or not at all is `inconsistent`.
//! - **verify**: in every window the parent flips one bit of the message of one entry,
//!   chosen with its own randomness after the window's inputs were prepared; that call must
//!   be rejected. A verify that accepts what it is given is `inconsistent`. The altered
//!   call's per-call sample is left out of the samples, and `verify_rejections` counts only
//!   the rejections of unaltered entries.

use pqperf_driver::DriverArgs;
use pqperf_driver::inputs::{self, Relay};
use pqperf_ffi::untrusted::{self, ChildSpec};
use pqperf_model::stream::Rejections;
use serde_json::{Value, json};
use std::time::Duration;

use crate::runner::DriverExe;

/// CPU time a window's loading may take besides [`LOAD_S_PER_BYTE`] (reading the words,
/// writing the last window's output line).
pub const LOAD_ABS_S: f64 = 500e-6;
/// CPU time a window's loading may take per relayed byte (the pipe's copy and the pool's)
/// and per byte of shared secret digested.
pub const LOAD_S_PER_BYTE: f64 = 4e-9;

/// The CPU time the loading of `bytes` relayed bytes (and a digest of `digested` bytes) may
/// take.
pub fn load_allowance_s(bytes: usize, digested: usize) -> f64 {
    LOAD_ABS_S + LOAD_S_PER_BYTE * (bytes + digested) as f64
}

/// Whether the parent relays the inputs of `a`: verify and dec in both protocols (a pool made
/// by a preparer, [`pooled`]), and the window-seeded operations (keygen, sign, enc, exchange,
/// each key-exchange step, hash: `pqperf_model::stream::window_seeded`) of a process with its
/// own stream, whose windows' DRNG seeds and message bases the parent sends with each
/// window's `go`
/// (`pqperf_model::stream::WindowInput`). (Under the reference protocol every process uses
/// the reference's fixed, public seed, so the inputs can still be computed ahead by a library
/// that knows the seed; pqperf's own protocol gives each process a seed, derived from the
/// campaign's secret stream key, that the timing process is never told.)
pub fn relayed(a: &DriverArgs) -> bool {
    !a.prepare
        && !a.relayed
        && (pooled(a) || (a.seed.is_some() && pqperf_model::stream::window_seeded(&a.op)))
}

/// Whether the relayed inputs of `a` are a pool made by a preparer process (verify, dec).
pub fn pooled(a: &DriverArgs) -> bool {
    matches!(a.op.as_str(), "verify" | "dec")
}

/// The argv of the timing process of relayed `a`: no seed, `--relayed` (every timing process
/// of the operation has the same argv).
pub fn timing_args(a: &DriverArgs) -> DriverArgs {
    let mut t = a.clone();
    t.seed = None;
    t.relayed = true;
    t
}

/// The timed windows of process `a` in order: (calls, sampled) — its reference trials, then
/// its sampled trials (at most `SAMPLE_CALLS` calls each) when it samples.
fn window_shapes(a: &DriverArgs) -> Vec<(u64, bool)> {
    let sample_calls = a.iters.min(pqperf_driver::SAMPLE_CALLS);
    let mut shapes: Vec<(u64, bool)> = vec![(a.iters, false); a.trials as usize];
    if pqperf_model::stream::sampled(&a.op, a.samples) && sample_calls > 0 {
        shapes.extend(std::iter::repeat_n((sample_calls, true), a.trials as usize));
    }
    shapes
}

/// What the preparer made.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// pk (verify) or sk (dec).
    pub key: Vec<u8>,
    /// Ciphertext and shared-secret bytes (dec).
    pub ct_len: u32,
    /// Shared-secret bytes (dec).
    pub ss_len: u32,
    /// Encoded entries, pool order.
    pub entries: Vec<Vec<u8>>,
    /// The encapsulations' shared secrets (dec), pool order.
    pub expected: Vec<Vec<u8>>,
    /// The preparer's wall seconds (0 when the pool was made for an earlier process).
    pub wall_s: f64,
    /// The pool's id ([`prepare`]: the digest of its key and entries).
    pub id: String,
    /// The process's first pool position: call `c` gets entry `(offset + i) mod n`.
    pub offset: u64,
    /// The pool was made for an earlier process of the operation.
    pub reused: bool,
    /// The preparer's wall seconds for the pool, whichever process paid them.
    pub made_s: f64,
}

/// Parses the preparer's lines (`PQPERF prep_key`, `prep_sizes`, `prep_entry`, `STATUS
/// prepared`).
pub fn parse_prepared(lines: &[String]) -> Result<Prepared, String> {
    let mut p = Prepared {
        key: Vec::new(),
        ct_len: 0,
        ss_len: 0,
        entries: Vec::new(),
        expected: Vec::new(),
        wall_s: 0.0,
        id: String::new(),
        offset: 0,
        reused: false,
        made_s: 0.0,
    };
    let mut done = false;
    let hex = |s: &str| inputs::from_hex(s).ok_or_else(|| "preparer: bad hex".to_string());
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        match f.as_slice() {
            ["PQPERF", "prep_key", k] => p.key = hex(k)?,
            ["PQPERF", "prep_sizes", v] => {
                let mut it = v.split(' ').map(|x| x.parse::<u32>());
                match (it.next(), it.next()) {
                    (Some(Ok(c)), Some(Ok(s))) => (p.ct_len, p.ss_len) = (c, s),
                    _ => return Err(format!("preparer: bad sizes line {v:?}")),
                }
            }
            ["PQPERF", "prep_entry", e, x] => {
                p.entries.push(hex(e)?);
                p.expected
                    .push(if *x == "-" { Vec::new() } else { hex(x)? });
            }
            ["STATUS", "prepared"] => done = true,
            _ => {}
        }
    }
    if !done || p.entries.is_empty() || p.key.is_empty() {
        return Err("the preparer reported no complete preparation".into());
    }
    Ok(p)
}

/// The preparer's arguments for relayed `a`.
fn prep_args(a: &DriverArgs) -> DriverArgs {
    let mut pa = a.clone();
    pa.prepare = true;
    pa.cpu = None;
    pa
}

/// What identifies an operation's pool ([`prepare`]): executable, working directory and the
/// preparer's argv without what differs between the operation's processes (the seed, the
/// calls per trial, the trials), but with whether the processes have their own streams.
fn op_key(exe: &DriverExe, a: &DriverArgs) -> Vec<String> {
    let mut k = vec![
        exe.exe.to_string_lossy().into_owned(),
        exe.cwd.to_string_lossy().into_owned(),
        format!("own_stream={}", a.seed.is_some()),
    ];
    let mut pa = prep_args(a);
    pa.seed = None;
    pa.iters = 0;
    pa.trials = 1;
    pa.warmups = 0;
    k.extend(pa.to_argv());
    k
}

/// The pool of one operation: made once by a preparer from the seed of the operation's
/// first process, for trials of `iters` calls (grown once when a later process has longer
/// trials), and relayed to each of its timing processes from that process's own offset.
#[derive(Clone)]
struct OpPool {
    key: Vec<String>,
    /// The seed the preparer used (`None`: the reference's fixed seed).
    seed: Option<[u8; pqperf_model::stream::SEED_BYTES]>,
    /// Calls per trial the pool holds a process of.
    iters: u64,
    pool: Prepared,
    /// The preparation's cost was not yet recorded (by the process that uses it first).
    unpaid: bool,
}

type Ahead = std::thread::JoinHandle<Result<Prepared, String>>;

/// Preparations started ahead of their timing process ([`prepare_ahead`]): the operation's
/// key, the calls per trial and the seed it prepares for.
#[allow(clippy::type_complexity)]
static AHEAD: std::sync::Mutex<
    Vec<(
        Vec<String>,
        u64,
        Option<[u8; pqperf_model::stream::SEED_BYTES]>,
        Ahead,
    )>,
> = std::sync::Mutex::new(Vec::new());
/// The operations' pools (issue 41: one preparation per operation, reused by its processes).
static POOLS: std::sync::Mutex<Vec<OpPool>> = std::sync::Mutex::new(Vec::new());

/// Preparations kept ahead at most (the oldest go first): one per relayed operation of a
/// library, whose turn in the measure phase starts them all.
const AHEAD_MAX: usize = 8;
/// Pools kept at most, and their bytes (the oldest go first, but never below [`AHEAD_MAX`]
/// pools): every verify/dec operation of a run keeps its pool from its first turn to its
/// last, so none is made twice (a demo has 9).
const POOLS_MAX: usize = 64;
const POOLS_MAX_BYTES: usize = 256 << 20;

/// The bytes a pool holds.
fn pool_bytes(p: &Prepared) -> usize {
    p.key.len()
        + p.entries.iter().map(Vec::len).sum::<usize>()
        + p.expected.iter().map(Vec::len).sum::<usize>()
}

/// Makes room for one more pool in `g`.
fn evict(g: &mut Vec<OpPool>) {
    let bytes = |g: &Vec<OpPool>| g.iter().map(|p| pool_bytes(&p.pool)).sum::<usize>();
    while g.len() >= POOLS_MAX || (g.len() >= AHEAD_MAX && bytes(g) > POOLS_MAX_BYTES) {
        g.remove(0);
    }
}

/// Environment variable that makes [`pool_pending`] always false (set and not empty): a
/// slot whose pool is being made waits for it on the measuring CPU's path, as before issue
/// 41's fillers (the A/B switch of the measure phase's efficiency and of the intervals of the
/// processes timed while a pool is made beside them).
pub const POOLS_ON_PATH_ENV: &str = "PQPERF_POOLS_ON_PATH";

/// Whether verify/dec pools are made beside the measuring CPU's path while the library's other
/// operations are timed ([`pool_pending`]; off with [`POOLS_ON_PATH_ENV`]).
pub fn pools_beside() -> bool {
    std::env::var_os(POOLS_ON_PATH_ENV).is_none_or(|v| v.is_empty())
}

/// Whether the pool of relayed `a`'s operation is being made now, not ready yet: its
/// preparer ([`prepare_ahead`]) still runs, or a [`prepare`] waits for it or makes it. A
/// caller with other work of the same library runs that first (issue 41: the measuring
/// CPU waits for a pool only when nothing else of the library is left to time).
pub fn pool_pending(exe: &DriverExe, a: &DriverArgs) -> bool {
    if !relayed(a) || !pooled(a) || !pools_beside() {
        return false;
    }
    let key = op_key(exe, a);
    if ready_pool(&key, a.iters).is_some() {
        return false;
    }
    let running = AHEAD.lock().is_ok_and(|g| {
        g.iter()
            .any(|(k, i, _, h)| *k == key && *i >= a.iters && !h.is_finished())
    });
    running
        || MAKING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&key)
}

/// The pool of `key` when it holds a process of `iters` calls per trial.
fn ready_pool(key: &[String], iters: u64) -> Option<OpPool> {
    POOLS
        .lock()
        .ok()?
        .iter()
        .find(|p| p.key == key && p.iters >= iters)
        .cloned()
}

/// What the preparer of `a`'s operation is asked for: the seed of the pool (the existing
/// pool's when it grows, else `a`'s) and the calls per trial (the larger of the two).
fn prep_target(
    key: &[String],
    a: &DriverArgs,
) -> (Option<[u8; pqperf_model::stream::SEED_BYTES]>, u64) {
    let have = POOLS
        .lock()
        .ok()
        .and_then(|g| g.iter().find(|p| p.key == key).map(|p| (p.seed, p.iters)));
    match have {
        Some((seed, iters)) => (seed, iters.max(a.iters)),
        None => (a.seed, a.iters),
    }
}

/// The preparer's argv for pool seed `seed` and trials of `iters` calls.
fn pool_args(
    a: &DriverArgs,
    seed: Option<[u8; pqperf_model::stream::SEED_BYTES]>,
    iters: u64,
) -> DriverArgs {
    let mut pa = a.clone();
    pa.seed = seed;
    pa.iters = iters;
    pa
}

/// Starts the preparation of relayed `a`'s operation pool in the background (a thread waiting
/// for the contained preparer, which is not pinned to the measuring CPU) unless the pool is
/// there or already being made, so that it runs while the process before it is timed:
/// [`prepare`] then finds it ready (pipelining, issue 41).
pub fn prepare_ahead(exe: &DriverExe, a: &DriverArgs, timeout: Duration) {
    if !relayed(a) || !pooled(a) {
        return;
    }
    let key = op_key(exe, a);
    if ready_pool(&key, a.iters).is_some() {
        return;
    }
    let (seed, iters) = prep_target(&key, a);
    let Ok(mut g) = AHEAD.lock() else {
        return;
    };
    if g.iter().any(|(k, i, _, _)| *k == key && *i >= a.iters) {
        return;
    }
    while g.len() >= AHEAD_MAX {
        g.remove(0);
    }
    let (exe, pa) = (exe.clone(), pool_args(a, seed, iters));
    g.push((
        key,
        iters,
        seed,
        std::thread::spawn(move || prepare_now(&exe, &pa, timeout)),
    ));
}

/// The relayed inputs of `a`: its operation's pool ([`prepare_ahead`] started it, or it is
/// made now, or kept from an earlier process of the operation, or grown once for longer
/// trials), with `a`'s own offset into it ([`Prepared::offset`]). `wall_s` is the preparer's
/// wall seconds for the process that uses a new pool first, 0 for the others (`reused`).
pub fn prepare(exe: &DriverExe, a: &DriverArgs, timeout: Duration) -> Result<Prepared, String> {
    if !pooled(a) {
        // Window-seeded: the parent derives every window itself, nothing to prepare.
        return Ok(Prepared {
            key: Vec::new(),
            ct_len: 0,
            ss_len: 0,
            entries: Vec::new(),
            expected: Vec::new(),
            wall_s: 0.0,
            id: String::new(),
            offset: 0,
            reused: false,
            made_s: 0.0,
        });
    }
    let key = op_key(exe, a);
    // One maker of an operation's pool at a time: two processes of the operation started
    // ahead (held, `crate::runner::Held`) wait for the same pool instead of making it twice.
    let _making = Making::enter(&key, a.iters);
    if ready_pool(&key, a.iters).is_none() {
        let ahead = AHEAD.lock().ok().and_then(|mut g| {
            let i = g
                .iter()
                .position(|(k, i, _, _)| *k == key && *i >= a.iters)?;
            Some(g.remove(i))
        });
        let (iters, seed, made) = match ahead {
            Some((_, iters, seed, h)) => (
                iters,
                seed,
                h.join()
                    .unwrap_or_else(|_| Err("the preparer's thread panicked".into())),
            ),
            None => {
                let (seed, iters) = prep_target(&key, a);
                (
                    iters,
                    seed,
                    prepare_now(exe, &pool_args(a, seed, iters), timeout),
                )
            }
        };
        let mut pool = made?;
        pool.id = pool_id(&pool);
        pool.made_s = pool.wall_s;
        if let Ok(mut g) = POOLS.lock() {
            g.retain(|p| p.key != key);
            evict(&mut g);
            g.push(OpPool {
                key: key.clone(),
                seed,
                iters,
                pool,
                unpaid: true,
            });
        }
    }
    let Ok(mut g) = POOLS.lock() else {
        return Err("the operation's pool is not available".into());
    };
    let Some(op) = g.iter_mut().find(|p| p.key == key && p.iters >= a.iters) else {
        return Err("the operation's pool is not available".into());
    };
    let mut p = op.pool.clone();
    p.reused = !op.unpaid;
    if !op.unpaid {
        p.wall_s = 0.0;
    }
    op.unpaid = false;
    p.offset = offset_of(a, p.entries.len());
    Ok(p)
}

/// The operations whose pool a [`prepare`] is making or taking now.
static MAKING: std::sync::Mutex<Vec<Vec<String>>> = std::sync::Mutex::new(Vec::new());

/// A [`prepare`]'s claim on its operation's pool while it makes or takes it (released when
/// dropped).
struct Making(Option<Vec<String>>);

impl Making {
    /// Waits until no other [`prepare`] makes `key`'s pool, then claims it (nothing to claim
    /// when the pool is ready by then).
    fn enter(key: &[String], iters: u64) -> Making {
        loop {
            if ready_pool(key, iters).is_some() {
                return Making(None);
            }
            {
                let mut g = MAKING.lock().unwrap_or_else(|e| e.into_inner());
                if !g.iter().any(|k| k == key) {
                    g.push(key.to_vec());
                    return Making(Some(key.to_vec()));
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Making {
    fn drop(&mut self) {
        if let Some(k) = self.0.take() {
            MAKING
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|x| *x != k);
        }
    }
}

/// The pool's id: the digest of its key and entries (`pqperf_model::stream::OutputDigest`).
fn pool_id(p: &Prepared) -> String {
    let mut d = pqperf_model::stream::OutputDigest::new();
    d.update(&p.key);
    for e in &p.entries {
        d.update(e);
    }
    d.finish()
}

/// Where process `a` starts in a pool of `n` entries: derived from its own stream seed (the
/// timing process is never told it), 0 under the reference's fixed seed.
pub fn offset_of(a: &DriverArgs, n: usize) -> u64 {
    match (&a.seed, n) {
        (Some(s), n) if n > 0 => {
            let w = u64::from_le_bytes(s[8..16].try_into().expect("8 bytes"));
            w % n as u64
        }
        _ => 0,
    }
}

/// Runs the preparer of relayed `a` (contained, not pinned: it inherits the parent's CPUs,
/// which leave out the measuring CPU where the campaign keeps it free).
fn prepare_now(exe: &DriverExe, a: &DriverArgs, timeout: Duration) -> Result<Prepared, String> {
    let pa = prep_args(a);
    // No seed on its argv (issue 36): it goes on the control pipe, the timing processes'
    // seccomp filters in force (no process creation, no CPU change).
    let seed = inputs::seed_payload(pa.seed.as_ref());
    let mut on_argv = pa.clone();
    on_argv.seed = None;
    let out = untrusted::run_conducted(
        &ChildSpec {
            program: exe.exe.clone(),
            args: on_argv.to_argv(),
            cwd: exe.cwd.clone(),
            timeout,
            readable: vec![exe.cwd.join(&a.lib)],
            cpu: None,
            ..Default::default()
        },
        &mut |s| {
            s.send_payload("setup", &seed);
        },
    );
    if let Some(e) = &out.spawn_error {
        return Err(format!("cannot start the preparer: {e}"));
    }
    if out.timed_out {
        return Err("the preparer timed out".into());
    }
    if out.code() != Some(0) {
        return Err(format!(
            "the preparer failed (exit {:?}): {}",
            out.code(),
            out.stderr.tail_chars(300)
        ));
    }
    let mut p = parse_prepared(&out.result_lines())?;
    p.wall_s = out.wall_s;
    Ok(p)
}

/// One timed window's relayed inputs and what the parent expects of them.
#[derive(Debug, Clone)]
pub struct Window {
    /// The encoded entries loaded at pool slots 0, 1, ….
    pub payload: Vec<u8>,
    /// Calls of the window.
    pub calls: u64,
    /// Entries loaded.
    pub loaded: usize,
    /// The slot whose message the parent altered (verify).
    pub tampered: Option<u64>,
    /// The digest the window's shared secrets must have (dec).
    pub expect_dec: Option<String>,
    /// A sampled trial (its per-call samples are kept).
    pub sampled: bool,
}

/// The relayed inputs of one timing process.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The setup payload (key, sizes, warm-ups' entries).
    pub setup: Vec<u8>,
    /// The timed windows in order.
    pub windows: Vec<Window>,
    /// The preparer's wall seconds.
    pub prepare_s: f64,
    verify: bool,
    /// Window seeds relayed (a window-seeded operation), no pool.
    seeded: bool,
    /// The operation's pool this process got (id, entries, offset, reused).
    pool: Option<Value>,
}

/// The parent's own randomness (SipHash keyed from the operating system, stepped per call).
fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::process::id() as u64);
    h.finish()
}

impl Plan {
    /// The windows of process `a` (reference trials, then sampled trials) with the entries of
    /// `p`, one altered message per verify window.
    pub fn new(a: &DriverArgs, p: &Prepared) -> Plan {
        Plan::with_draw(a, p, &mut rand_u64)
    }

    /// [`Plan::new`] with the parent's randomness `draw`.
    pub fn with_draw(a: &DriverArgs, p: &Prepared, draw: &mut dyn FnMut() -> u64) -> Plan {
        if !pooled(a)
            && let Some(seed) = &a.seed
        {
            return Plan::seeded(a, seed, p.wall_s);
        }
        let n = p.entries.len() as u64;
        let verify = a.op == "verify";
        let layout = pqperf_model::stream::CallLayout {
            warmups: a.warmups,
            trials: u64::from(a.trials),
            iters: a.iters,
            sampled: a.samples,
            own_stream: a.seed.is_some(),
        };
        let slot = |c: u64| ((p.offset + layout.input_index(c)) % n) as usize;
        let entry = |c: u64| &p.entries[slot(c)];
        let warm: Vec<&[u8]> = (0..a.warmups).map(|c| entry(c).as_slice()).collect();
        let setup = Relay::setup_payload(&p.key, p.ct_len, p.ss_len, &warm);
        let shapes = window_shapes(a);
        let mut c = a.warmups;
        let mut windows = Vec::new();
        let last = shapes.len().saturating_sub(1);
        for (i, (calls, sampled)) in shapes.into_iter().enumerate() {
            // The last window also carries the memory pass's entries (after it), so that
            // none repeats an entry of the process either.
            let extra = if i == last {
                inputs::POOL_EXTRA_CALLS
            } else {
                0
            };
            let loaded = (calls + extra).min(n).max(1);
            let checked = calls.min(loaded).max(1);
            let mut entries: Vec<Vec<u8>> = (0..loaded).map(|i| entry(c + i).clone()).collect();
            let mut tampered = None;
            if verify {
                let k = draw() % checked;
                let e = &mut entries[k as usize];
                // The message follows the signature: flip one of its 512 bits.
                let bit = draw() % 512;
                let at = e.len() - 64 + (bit / 8) as usize;
                e[at] ^= 1 << (bit % 8);
                tampered = Some(k);
            }
            let expect_dec = (!verify).then(|| {
                let mut d = pqperf_model::stream::OutputDigest::new();
                for i in 0..checked {
                    d.update(&p.expected[slot(c + i)]);
                }
                d.finish()
            });
            windows.push(Window {
                payload: entries.concat(),
                calls,
                loaded: loaded as usize,
                tampered,
                expect_dec,
                sampled,
            });
            c += calls;
        }
        Plan {
            setup,
            windows,
            prepare_s: p.wall_s,
            verify,
            seeded: false,
            pool: Some(json!({
                "id": p.id,
                "entries": n,
                "offset": p.offset,
                "reused": p.reused,
                "made_s": (p.made_s * 1e6).round() / 1e6,
            })),
        }
    }

    /// The windows of window-seeded process `a` with stream `seed`: the setup payload is the
    /// one-way setup seed (its key pair) and the warm-ups' window, every timed window's
    /// payload its `WindowInput` (seed `window_seed(seed, i)`, first input index `i`), the
    /// same windows a process with the seed on its argv enters (the replay).
    fn seeded(a: &DriverArgs, seed: &[u8; pqperf_model::stream::SEED_BYTES], prep: f64) -> Plan {
        use pqperf_model::stream::WindowInput;
        let layout = pqperf_model::stream::CallLayout {
            warmups: a.warmups,
            trials: u64::from(a.trials),
            iters: a.iters,
            sampled: pqperf_model::stream::sampled(&a.op, a.samples),
            own_stream: true,
        };
        let at = |c: u64| WindowInput::of(seed, layout.input_index(c));
        let setup = WindowInput::setup_payload(seed, &at(0));
        let shapes = window_shapes(a);
        let mut c = a.warmups;
        let mut windows = Vec::new();
        for (calls, sampled) in shapes {
            windows.push(Window {
                payload: at(c).encode(),
                calls,
                loaded: 1,
                tampered: None,
                expect_dec: None,
                sampled,
            });
            c += calls;
        }
        Plan {
            setup,
            windows,
            prepare_s: prep,
            verify: false,
            seeded: true,
            pool: None,
        }
    }

    /// The bytes of shared secret digested at the loading before window `w` (0-based): the
    /// last window's outputs.
    pub fn digested_before(&self, w: usize) -> usize {
        if self.seeded {
            return 0;
        }
        match (
            self.verify,
            w.checked_sub(1).and_then(|i| self.windows.get(i)),
        ) {
            (false, Some(prev)) => prev.loaded * 64,
            _ => 0,
        }
    }

    /// Problems found in the driver's result `lines` (empty: every check held), and the
    /// evidence.
    pub fn check(&self, lines: &[String]) -> (Vec<String>, Value) {
        if self.seeded {
            // Nothing to check line by line: the outputs of these windows are checked by the
            // replay (crate::outcheck), which enters the same windows.
            let ev = json!({
                "preparer": "none: the parent relays each window's DRNG seed and first input index with its go",
                "windows": self.windows.len(),
                "check": "outputs replayed (output_check)",
                "problems": [],
            });
            return (Vec::new(), ev);
        }
        let mut bad = Vec::new();
        let mut reported: std::collections::HashMap<usize, String> = Default::default();
        let key = if self.verify {
            "verify_rejected"
        } else {
            "dec_outputs"
        };
        for l in lines {
            if let ["PQPERF", k, v] = l.split('\t').collect::<Vec<_>>().as_slice()
                && *k == key
                && let Some((w, rest)) = v.split_once(' ')
                && let Ok(w) = w.parse::<usize>()
            {
                reported.insert(w, rest.to_string());
            }
        }
        let mut valid_rejections = 0u64;
        for (i, w) in self.windows.iter().enumerate() {
            let Some(got) = reported.get(&(i + 1)) else {
                bad.push(format!(
                    "window {}: no {key} line for its relayed inputs",
                    i + 1
                ));
                continue;
            };
            if let Some(t) = w.tampered {
                match Rejections::parse(got) {
                    Ok(r) => {
                        if r.count_at(t) == 0 {
                            bad.push(format!(
                                "window {}: verify accepted a signature whose message the parent had altered (pool position {t})",
                                i + 1
                            ));
                        }
                        valid_rejections += r.count() - r.count_at(t);
                    }
                    Err(e) => bad.push(format!("window {}: its verify_rejected line: {e}", i + 1)),
                }
            }
            if let Some(e) = &w.expect_dec
                && got != e
            {
                bad.push(format!(
                    "window {}: the shared secrets of the timed decapsulations (digest {got}) are not those of the encapsulations that made the ciphertexts ({e})",
                    i + 1
                ));
            }
        }
        let ev = json!({
            "preparer": "separate contained process of the same candidate (not on the measuring CPU)",
            "prepare_s": (self.prepare_s * 1e6).round() / 1e6,
            "windows": self.windows.len(),
            "check": if self.verify { "one altered message per window, rejection required" } else { "every timed shared secret equals the encapsulation's" },
            "tampered": self.windows.iter().filter_map(|w| w.tampered).collect::<Vec<_>>(),
            "valid_rejections": valid_rejections,
            "pool": self.pool,
            "problems": bad,
        });
        (bad, ev)
    }

    /// Removes the altered calls' per-call samples from `trials` (the sampled trials, in
    /// order).
    pub fn drop_tampered_samples(&self, trials: &mut [Vec<u64>]) {
        let sampled = self.windows.iter().filter(|w| w.sampled);
        for (w, v) in sampled.zip(trials.iter_mut()) {
            if let Some(t) = w.tampered {
                let n = w.loaded.max(1);
                let mut i = 0;
                v.retain(|_| {
                    let keep = i % n != t as usize;
                    i += 1;
                    keep
                });
            }
        }
    }

    /// The output digest the replay of an honest library gives for the verify windows:
    /// the rejections of unaltered entries after every window, counted as the driver does.
    pub fn verify_digest(&self, lines: &[String]) -> Option<String> {
        if !self.verify || self.seeded {
            return None;
        }
        // A missing or unreadable line counts as no rejection (its window is refused by
        // `check` already).
        let rejections = |w: usize| -> Rejections {
            let want = format!("{w} ");
            lines
                .iter()
                .find_map(|l| {
                    l.strip_prefix("PQPERF\tverify_rejected\t")?
                        .strip_prefix(&want)
                })
                .and_then(|r| Rejections::parse(r).ok())
                .unwrap_or_default()
        };
        let mut d = pqperf_model::stream::OutputDigest::new();
        // The warm-ups' rejections (window 0), then every window's.
        let mut count = rejections(0).count();
        for (i, w) in self.windows.iter().enumerate() {
            let r = rejections(i + 1);
            let t = w.tampered;
            let valid = r.count() - t.map_or(0, |t| r.count_at(t));
            // The altered calls' own entries: rejected in the replay too when the library
            // rejected every other call of the window (a verify that rejects everything).
            let altered = (0..w.calls)
                .filter(|c| Some(c % w.loaded.max(1) as u64) == t)
                .count() as u64;
            let twins = if valid.saturating_add(altered) == w.calls {
                altered
            } else {
                0
            };
            count = count.saturating_add(valid.saturating_add(twins));
            d.update(&count.to_le_bytes());
        }
        Some(d.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(op: &str) -> DriverArgs {
        let mut a =
            DriverArgs::parse(&["l", op, "0", "2", "1", "5", "2", "--samples"].map(String::from))
                .unwrap();
        a.seed = Some(pqperf_model::stream::process_seed(1));
        a
    }

    fn prepared(verify: bool) -> Prepared {
        let entries: Vec<Vec<u8>> = (0..8u8)
            .map(|k| {
                if verify {
                    let mut e = 2u32.to_le_bytes().to_vec();
                    e.extend_from_slice(&[k; 2]);
                    e.extend_from_slice(&[k; 64]);
                    e
                } else {
                    vec![k; 3]
                }
            })
            .collect();
        Prepared {
            key: vec![9; 4],
            ct_len: if verify { 0 } else { 3 },
            ss_len: if verify { 0 } else { 2 },
            expected: (0..8u8)
                .map(|k| if verify { vec![] } else { vec![k + 100; 2] })
                .collect(),
            entries,
            wall_s: 0.5,
            id: "8:pool".into(),
            offset: 0,
            reused: false,
            made_s: 0.5,
        }
    }

    #[test]
    fn windows_take_the_pool_entries_of_their_calls_in_turn() {
        let a = args("dec");
        assert!(relayed(&a));
        let t = timing_args(&a);
        assert!(t.relayed && t.seed.is_none() && !relayed(&t));
        let p = prepared(false);
        let plan = Plan::with_draw(&a, &p, &mut || 0);
        let r = Relay::parse_setup(&plan.setup).unwrap();
        assert_eq!((r.key, r.ct_len, r.ss_len), (vec![9; 4], 3, 2));
        // Input indices (own stream): the 2 sampled windows of 5 calls take 0..10, the 2
        // warm-ups 10, 11, the 2 reference windows of 5 calls 12..22; entry = index mod 8.
        assert_eq!(r.warm, [[2u8; 3], [3; 3]].concat());
        assert_eq!(plan.windows.len(), 4);
        assert_eq!(plan.windows[0].payload[..3], [4; 3]);
        assert_eq!(
            plan.windows[0].payload[12..15],
            [0; 3],
            "wraps at the pool's end"
        );
        assert_eq!(plan.windows[1].payload[..3], [1; 3]);
        assert!(plan.windows[2].sampled);
        assert_eq!(plan.windows[2].payload[..3], [0; 3], "sampled calls first");
        assert_eq!(plan.windows[3].payload[..3], [5; 3]);
        // The memory pass's entries after the last window: indices 22.. (6, 7, …).
        assert_eq!(plan.windows[3].payload[15..18], [6; 3]);
        // The reference protocol keeps the call order.
        let mut fixed = a.clone();
        fixed.seed = None;
        let plan_ref = Plan::with_draw(&fixed, &p, &mut || 0);
        let r = Relay::parse_setup(&plan_ref.setup).unwrap();
        assert_eq!(r.warm, [[0u8; 3], [1; 3]].concat());
        assert_eq!(plan_ref.windows[0].payload[..3], [2; 3]);
        assert_eq!(plan_ref.windows[1].payload[..3], [7; 3]);
        // The dec check: the driver's digest of what it wrote against the encapsulations'.
        let mut lines = Vec::new();
        for (i, w) in plan.windows.iter().enumerate() {
            lines.push(format!(
                "PQPERF\tdec_outputs\t{} {}",
                i + 1,
                w.expect_dec.clone().unwrap()
            ));
        }
        assert!(plan.check(&lines).0.is_empty());
        lines[1] = "PQPERF\tdec_outputs\t2 5:00".into();
        let (bad, ev) = plan.check(&lines);
        assert!(bad[0].contains("window 2"), "{bad:?}");
        assert_eq!(ev["problems"].as_array().unwrap().len(), 1);
        lines.pop();
        assert!(
            plan.check(&lines)
                .0
                .iter()
                .any(|b| b.contains("no dec_outputs"))
        );
    }

    #[test]
    fn processes_of_one_operation_start_at_their_own_offset_in_its_pool() {
        let a = args("dec");
        let mut b = a.clone();
        b.seed = Some(pqperf_model::stream::process_seed(2));
        let (oa, ob) = (offset_of(&a, 8), offset_of(&b, 8));
        assert!(oa < 8 && ob < 8);
        let mut fixed = a.clone();
        fixed.seed = None;
        assert_eq!(
            offset_of(&fixed, 8),
            0,
            "the reference's fixed seed: no offset"
        );
        let base = Plan::with_draw(&a, &prepared(false), &mut || 0);
        let mut p = prepared(false);
        p.offset = 3;
        p.reused = true;
        let plan = Plan::with_draw(&a, &p, &mut || 0);
        // Every window's entries move by the offset (mod 8), and the expected digests with them.
        assert_eq!(base.windows[0].payload[..3], [4; 3]);
        assert_eq!(plan.windows[0].payload[..3], [7; 3]);
        assert_eq!(plan.windows[2].payload[..3], [3; 3], "sampled calls first");
        let r = Relay::parse_setup(&plan.setup).unwrap();
        assert_eq!(r.warm, [[5u8; 3], [6; 3]].concat());
        let mut d = pqperf_model::stream::OutputDigest::new();
        for k in [7u8, 0, 1, 2, 3] {
            d.update(&[k + 100; 2]);
        }
        assert_eq!(
            plan.windows[0].expect_dec.as_deref(),
            Some(d.finish().as_str())
        );
        let (_, ev) = plan.check(&[]);
        assert_eq!(ev["pool"]["offset"], 3);
        assert_eq!(ev["pool"]["reused"], true);
        assert_eq!(ev["pool"]["id"], "8:pool");
    }

    #[test]
    fn a_verify_rejecting_every_call_of_long_windows_is_counted_not_refused() {
        // Windows of 20 000 calls walk a pool of 8 entries 2 500 times: the driver used to keep
        // 4 096 positions, so such a verifier was refused as a digest mismatch.
        let a = DriverArgs::parse(
            &["l", "verify", "0", "2", "1", "20000", "2", "--samples"].map(String::from),
        )
        .map(|mut a| {
            a.seed = Some(pqperf_model::stream::process_seed(1));
            a
        })
        .unwrap();
        let plan = Plan::with_draw(&a, &prepared(true), &mut || 5);
        let mut lines = vec!["PQPERF\tverify_rejected\t0 0-1".to_string()];
        let mut expect = 2u64;
        let mut d = pqperf_model::stream::OutputDigest::new();
        for (i, w) in plan.windows.iter().enumerate() {
            assert!(w.loaded <= 8, "{}", w.loaded);
            let mut r = Rejections::default();
            for c in 0..w.calls {
                r.push(c % w.loaded as u64);
            }
            assert_eq!(r.dropped, 0);
            lines.push(format!("PQPERF\tverify_rejected\t{} {}", i + 1, r.encode()));
            expect += w.calls;
            d.update(&expect.to_le_bytes());
        }
        assert!(plan.windows.iter().any(|w| w.calls >= 20_000));
        assert!(plan.windows.iter().any(|w| w.calls >= 20_000));
        let (bad, ev) = plan.check(&lines);
        assert!(bad.is_empty(), "{bad:?}");
        let altered: u64 = plan
            .windows
            .iter()
            .map(|w| {
                (0..w.calls)
                    .filter(|c| Some(c % w.loaded as u64) == w.tampered)
                    .count() as u64
            })
            .sum();
        let calls: u64 = plan.windows.iter().map(|w| w.calls).sum();
        assert_eq!(ev["valid_rejections"], calls - altered);
        // The replay of such a library counts every call, the altered ones included.
        assert_eq!(plan.verify_digest(&lines), Some(d.finish()));
        // A list the driver could not complete is a problem, never a count.
        lines[1] = "PQPERF\tverify_rejected\t1 0-3,!".into();
        let (bad, _) = plan.check(&lines);
        assert!(bad.iter().any(|b| b.contains("incomplete")), "{bad:?}");
    }

    #[test]
    fn verify_windows_carry_one_altered_message_that_must_be_rejected() {
        let a = args("verify");
        let p = prepared(true);
        let mut k = 0;
        let plan = Plan::with_draw(&a, &p, &mut || {
            k += 1;
            k * 3
        });
        let w = &plan.windows[0];
        // Slot 3 % 5 = 3 (call 5: input index 15, entry 7), bit 6: byte 0 of the message.
        assert_eq!(w.tampered, Some(3));
        let e = &w.payload[3 * 70..4 * 70];
        assert_eq!(e[6], 7 ^ (1 << 6));
        assert_eq!(e[7..], [7; 63]);
        let t: Vec<u64> = plan.windows.iter().map(|w| w.tampered.unwrap()).collect();
        let honest: Vec<String> = t
            .iter()
            .enumerate()
            .map(|(i, t)| format!("PQPERF\tverify_rejected\t{} {t}", i + 1))
            .collect();
        let (bad, ev) = plan.check(&honest);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev["valid_rejections"], 0);
        let accepts: Vec<String> = (1..=4)
            .map(|i| format!("PQPERF\tverify_rejected\t{i} -"))
            .collect();
        let (bad, _) = plan.check(&accepts);
        assert_eq!(bad.len(), 4, "{bad:?}");
        assert!(bad[0].contains("accepted"), "{bad:?}");
        // The replay of an honest library counts no rejection.
        let mut d = pqperf_model::stream::OutputDigest::new();
        for _ in 0..4 {
            d.update(&0u64.to_le_bytes());
        }
        assert_eq!(plan.verify_digest(&honest), Some(d.finish()));
        // The altered call's samples leave the sampled trials.
        let mut s = vec![vec![10, 11, 12, 13, 14], vec![20, 21, 22, 23, 24]];
        plan.drop_tampered_samples(&mut s);
        assert_eq!(s[0].len(), 4);
        assert!(!s[0].contains(&(10 + t[2])));
        assert!(!s[1].contains(&(20 + t[3])));
    }

    #[test]
    fn window_seeded_processes_get_each_windows_seed_with_its_go() {
        use pqperf_model::stream::{CallLayout, WindowInput, setup_seed};
        let a = args("sign");
        assert!(relayed(&a) && !pooled(&a));
        let mut fixed = a.clone();
        fixed.seed = None;
        assert!(!relayed(&fixed), "the reference's public seed: not relayed");
        let t = timing_args(&a);
        assert!(t.relayed && t.seed.is_none());
        let p = prepare(
            &DriverExe {
                exe: "/nonexistent".into(),
                cwd: ".".into(),
            },
            &a,
            Duration::from_secs(1),
        )
        .unwrap();
        let plan = Plan::new(&a, &p);
        let seed = a.seed.unwrap();
        let l = CallLayout {
            warmups: 2,
            trials: 2,
            iters: 5,
            sampled: true,
            own_stream: true,
        };
        let (ss, warm) = WindowInput::parse_setup(&plan.setup).unwrap();
        assert_eq!(ss, setup_seed(&seed));
        assert_eq!(warm, WindowInput::of(&seed, l.input_index(0)));
        // Reference windows at positions 2, 7; sampled at 12, 17 (input indices 0, 5).
        let at: Vec<u64> = plan
            .windows
            .iter()
            .map(|w| WindowInput::decode(&w.payload).unwrap().index)
            .collect();
        assert_eq!(at, [12, 17, 0, 5]);
        for w in &plan.windows {
            let wi = WindowInput::decode(&w.payload).unwrap();
            assert_eq!(wi, WindowInput::of(&seed, wi.index));
            assert!(!w.payload.windows(48).any(|x| x == seed), "no process seed");
        }
        assert!(!plan.setup.windows(48).any(|x| x == seed));
        let (bad, ev) = plan.check(&[]);
        assert!(bad.is_empty());
        assert_eq!(ev["windows"], 4);
        assert_eq!(plan.digested_before(1), 0);
        assert_eq!(plan.verify_digest(&[]), None);
        // Hash too; a key-exchange step timed alone has no sampled windows (its input
        // indices are its call positions).
        let h = args("hash");
        assert!(relayed(&h));
        assert_eq!(Plan::new(&h, &p).windows.len(), 4);
        let step = args("init_a");
        assert!(relayed(&step) && !pooled(&step));
        let plan = Plan::new(&step, &p);
        let at: Vec<u64> = plan
            .windows
            .iter()
            .map(|w| WindowInput::decode(&w.payload).unwrap().index)
            .collect();
        assert_eq!(at, [2, 7]);
        assert!(plan.windows.iter().all(|w| !w.sampled));
    }

    #[test]
    fn the_preparers_lines_parse_or_are_refused() {
        let l: Vec<String> = [
            "META\tid\tx",
            "PQPERF\tprep_key\t0a0b",
            "PQPERF\tprep_sizes\t3 2",
            "PQPERF\tprep_entry\t010203\t0405",
            "STATUS\tprepared",
        ]
        .map(String::from)
        .to_vec();
        let p = parse_prepared(&l).unwrap();
        assert_eq!((p.key, p.ct_len, p.ss_len), (vec![10, 11], 3, 2));
        assert_eq!(
            (p.entries[0].clone(), p.expected[0].clone()),
            (vec![1, 2, 3], vec![4, 5])
        );
        assert!(parse_prepared(&l[..4]).is_err(), "no STATUS prepared");
        let mut bad = l.clone();
        bad[3] = "PQPERF\tprep_entry\tzz\t-".into();
        assert!(parse_prepared(&bad).is_err());
    }
}
