//! The timing loop (method §4.5–§4.8): pin, load, prepare, warm up, run the trials with the
//! counter and the raw monotonic clock around each, check the guards, report.
//!
//! Reference trials read the counter and the clock only around the whole loop. With
//! `--samples` the reference trials are followed by as many separate *sampled* trials of at
//! most [`SAMPLE_CALLS`] calls each that reads the tick counter after every call (`SAMPLES` line), so
//! per-call reads never inflate the reference figures. Around every trial the driver takes a
//! scheduler snapshot ([`SchedSnap`]) and reports the differences as a
//! `PQPERF trial_sched` / `PQPERF sample_sched` line (`key=value` pairs: calls, wall ns,
//! counter, involuntary switches, run-queue wait, faults, migrations, CPU change), from which
//! the orchestrator decides whether the trial was disturbed.
//!
//! **The parent owns the interval boundaries** (issue 36). With a control pipe
//! (`pqperf_ffi::untrusted::run_conducted`, announced in `PQPERF_CONTROL_FD`) the driver stops
//! at a [`Gate`] after its preparation (warm-ups and the first canary included), after every
//! timed interval (reference or sampled trial, once its lines are written) and after its last
//! line: it writes `PQPERF wait <n>` and blocks reading the pipe until the parent, which has
//! read the exact CPU time of every process and thread of the child in the meantime, writes
//! `go`. So each interval runs inside a window the parent measured from outside, whatever
//! the lines say (`pqperf_measure::verify`). `end` (or the pipe's end) at the first gate
//! stops the driver after its preparation (`STATUS setup_only`); anywhere else it is a
//! failure. Before the warm-ups a conducted driver also stops at the *hold* gate
//! (`PQPERF hold`, answered by `go`; anything else ends it): the parent may have started it
//! beside the process it is timing, off the measuring CPU, and moves it there at that gate
//! (issue 41; a conducted driver never pins itself). Every process has the same argv,
//! environment and preparation up to the first gate. Without a control pipe (a driver started by hand, the benchmarks) the gates are
//! open. With 0 trials the driver also stops after the preparation.

use super::*;
use pqperf_ffi::procinfo::SchedSnap;

/// Calls in one sampled trial at most (bounds the per-call samples kept in a record).
pub const SAMPLE_CALLS: u64 = pqperf_model::stream::SAMPLE_CALLS_MAX;

/// `PQPERF <key>\t<trial> calls=… ns=… count=… nivcsw=… runq_ns=… …` for one trial.
fn sched_line(
    key: &str,
    t: u32,
    calls: u64,
    ns: u64,
    count: u64,
    a: &SchedSnap,
    b: &SchedSnap,
) -> String {
    let d = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => y.saturating_sub(x).to_string(),
        _ => "-".to_string(),
    };
    let cpu_changed = match (a.cpu, b.cpu) {
        (Some(x), Some(y)) => u64::from(x != y).to_string(),
        _ => "-".to_string(),
    };
    format!(
        "PQPERF\t{key}\ttrial={t} calls={calls} ns={ns} count={count} nivcsw={} nvcsw={} runq_ns={} run_ns={} minflt={} majflt={} migrations={} cpu_changed={cpu_changed}",
        b.nivcsw.saturating_sub(a.nivcsw),
        b.nvcsw.saturating_sub(a.nvcsw),
        d(a.runq_wait_ns, b.runq_wait_ns),
        d(a.run_ns, b.run_ns),
        b.minflt.saturating_sub(a.minflt),
        b.majflt.saturating_sub(a.majflt),
        d(a.migrations, b.migrations),
    )
}

/// Where the driver waits for the parent (module doc). `None`: no control pipe, never waits.
///
/// Words on the control pipe: `setup <len>` + `len` bytes before the preparation of a
/// `--relayed` process ([`Gate::setup`], `inputs::Relay`); at a gate `go` (the next
/// window starts), `go <len>` + `len` bytes (the next window's relayed inputs: the driver
/// loads them, says `PQPERF loaded <n>` and waits for a plain `go`, so the parent reads the
/// CPU time again after the loading and the window starts there), or `end`.
pub struct Gate<'a> {
    control: Option<&'a mut dyn std::io::Read>,
    n: u32,
}

/// Most bytes of one relayed payload.
pub const MAX_PAYLOAD: usize = 256 << 20;

impl<'a> Gate<'a> {
    /// A gate on `control` (`None`: always open).
    pub fn new(control: Option<&'a mut dyn std::io::Read>) -> Gate<'a> {
        Gate { control, n: 0 }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> bool {
        let Some(c) = self.control.as_mut() else {
            return false;
        };
        let mut got = 0;
        while got < buf.len() {
            match c.read(&mut buf[got..]) {
                Ok(0) => return false,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// The rest of a word's line after `head` (at most 24 bytes), without the newline.
    fn rest_of_line(&mut self, head: &[u8]) -> Option<String> {
        let mut v = head.to_vec();
        while v.last() != Some(&b'\n') {
            if v.len() > 24 {
                return None;
            }
            let mut b = [0u8];
            if !self.read_exact(&mut b) {
                return None;
            }
            v.push(b[0]);
        }
        v.pop();
        String::from_utf8(v).ok()
    }

    /// The payload announced by `<word> <len>`.
    fn payload(&mut self, line: &str, word: &str) -> Option<Vec<u8>> {
        let len: usize = line.strip_prefix(word)?.strip_prefix(' ')?.parse().ok()?;
        if len > MAX_PAYLOAD {
            return None;
        }
        let mut b = vec![0u8; len];
        self.read_exact(&mut b).then_some(b)
    }

    /// The setup payload of a relayed process (`None`: no control pipe, or no valid word).
    pub fn setup(&mut self) -> Option<Vec<u8>> {
        self.control.as_ref()?;
        let line = self.rest_of_line(&[])?;
        self.payload(&line, "setup")
    }

    /// Says `PQPERF wait <n>` and waits for the parent's word: `Some(empty)` for `go`,
    /// `Some(bytes)` for `go <len>` and its payload, `None` for `end`, the pipe's end or
    /// anything else. Without a control pipe: `Some(empty)`.
    fn wait(&mut self, o: &mut Out) -> Option<Vec<u8>> {
        self.control.as_ref()?;
        o.line(format_args!("PQPERF\twait\t{}", self.n));
        self.n += 1;
        let mut word = [0u8; 3];
        if !self.read_exact(&mut word) {
            return None;
        }
        if &word == b"go\n" {
            return Some(Vec::new());
        }
        if &word != b"go " {
            return None;
        }
        let line = self.rest_of_line(&word)?;
        self.payload(&line, "go")
    }

    /// After a payload was loaded: says `PQPERF loaded <n>` and waits for `go`.
    fn loaded(&mut self, o: &mut Out) -> bool {
        o.line(format_args!("PQPERF\tloaded\t{}", self.n - 1));
        let mut word = [0u8; 3];
        self.read_exact(&mut word) && &word == b"go\n"
    }

    /// Passes a gate: waits for the parent; with relayed inputs, first writes `pending` (the
    /// last window's output line), loads the payload into `p` and waits again. False: the
    /// parent ended the run (or relayed what does not fit).
    fn pass_loading(
        &mut self,
        o: &mut Out,
        p: &mut Prepared,
        pending: &mut Option<String>,
    ) -> bool {
        if self.control.is_none() {
            return true;
        }
        let Some(payload) = self.wait(o) else {
            return false;
        };
        if let Some(l) = pending.take() {
            o.line(l);
        }
        if payload.is_empty() {
            return true;
        }
        if let Err(e) = load_window(p, &payload) {
            o.line(format_args!("PQPERF\tload_failed\t{e}"));
            return false;
        }
        self.loaded(o)
    }

    /// The hold gate after the preparation, before the warm-ups (issue 41): says `PQPERF hold`
    /// and waits for `go`. The parent may have started this process beside the one it is
    /// timing, off the measuring CPU; it moves every task of the child onto the measuring CPU
    /// while the driver waits here. False: the parent ended the run. Without a control pipe:
    /// open.
    fn hold(&mut self, o: &mut Out) -> bool {
        if self.control.is_none() {
            return true;
        }
        o.line("PQPERF\thold");
        let mut word = [0u8; 3];
        self.read_exact(&mut word) && &word == b"go\n"
    }

    /// A gate without relayed inputs.
    fn pass(&mut self, o: &mut Out) -> bool {
        match self.control {
            None => true,
            Some(_) => self.wait(o).is_some(),
        }
    }
}

/// The input stream of a process of pqperf's own protocol that makes its own inputs (a seed
/// on its argv, not relayed: the output check's replay, a driver started by hand): at the
/// start of each window (the warm-ups, every trial, the memory pass) the next call takes the
/// input of its input index (`pqperf_model::stream::CallLayout::input_index`) and the window
/// is entered as the parent's relayed `go` enters it ([`enter_window`] with
/// `WindowInput::of(seed, index)`), so what a call gets depends on (seed, index) only.
/// `None`: the reference protocol's order (no seeking, one seeding) or relayed inputs (the
/// parent relays each window's seed or entries with its `go`, `pqperf_measure::relay`).
pub(crate) struct Stream {
    layout: pqperf_model::stream::CallLayout,
    seed: [u8; pqperf_model::stream::SEED_BYTES],
}

/// The library's DRNG, for reseeding at each window.
pub(crate) enum Drng {
    Nist(NistRng),
    Iccs(IccsDrng),
}

impl Drng {
    /// Seeds the DRNG (0: done).
    pub(crate) fn seed(&self, s: &[u8; pqperf_model::stream::SEED_BYTES]) -> i32 {
        match self {
            Drng::Nist(r) => r.seed(s),
            Drng::Iccs(d) => d.seed(s),
        }
    }
}

/// Enters window `w`: the next call takes the input of index `w.index` (its message, on the
/// window's own base message `window_message_base(w.seed)`, or its pool entry) and the DRNG
/// is reseeded with `w.seed`.
pub(crate) fn enter_window(p: &mut Prepared, w: &pqperf_model::stream::WindowInput) -> R<()> {
    p.op.seek_input(w.index);
    p.op.rebase_messages(pqperf_model::stream::window_message_base(&w.seed));
    let rc = p.drng.as_ref().map_or(0, |d| d.seed(&w.seed));
    if rc != 0 {
        return Err(setup("DRNG reseeding failed"));
    }
    Ok(())
}

impl Stream {
    pub(crate) fn new(a: &DriverArgs, sampled: bool) -> Option<Stream> {
        let seed = a.seed.filter(|_| !a.relayed)?;
        Some(Stream {
            layout: pqperf_model::stream::CallLayout {
                warmups: a.warmups,
                trials: u64::from(a.trials),
                iters: a.iters,
                sampled,
                own_stream: true,
            },
            seed,
        })
    }

    /// Positions the inputs and the DRNG for the window whose first call is at `position`:
    /// the window the parent relayed with this window's `go` when there is one (entered
    /// only now, inside the window: the library's reseeding is its code, and the loading
    /// before the window runs none of it), else the stream's own.
    pub(crate) fn at(s: &Option<Stream>, p: &mut Prepared, position: u64) -> R<()> {
        if let Some(w) = p.next_window.take() {
            return enter_window(p, &w);
        }
        let Some(s) = s else { return Ok(()) };
        let i = s.layout.input_index(position);
        enter_window(p, &pqperf_model::stream::WindowInput::of(&s.seed, i))
    }
}

/// Loads one window's relayed inputs: a verify/dec pool's entries, or the window's seed and
/// first input index (a window-seeded operation, `pqperf_model::stream::WindowInput`, entered
/// when the window starts, [`Stream::at`]).
fn load_window(p: &mut Prepared, b: &[u8]) -> Result<(), String> {
    p.stats.rejected.clear();
    match &mut p.op {
        Op::SigVerify { pool, .. } | Op::NSignVerify(_, _, pool) => pool.load(b),
        Op::KemDec { pool, .. } | Op::NKemDec(_, _, pool) => pool.load(b),
        _ => {
            p.next_window = Some(pqperf_model::stream::WindowInput::decode(b)?);
            Ok(())
        }
    }
}

/// The output line of relayed window `w` of `calls` calls (`None`: not relayed, or an
/// operation without one): the pool positions verify rejected, or the digest of the
/// shared secrets dec wrote.
fn window_outputs(p: &Prepared, relayed: bool, w: u32, calls: u64) -> Option<String> {
    if !relayed {
        return None;
    }
    match &p.op {
        Op::SigVerify { .. } | Op::NSignVerify(..) => Some(format!(
            "PQPERF\tverify_rejected\t{w} {}",
            p.stats.rejected.encode()
        )),
        Op::KemDec { pool, ss_len, .. } => Some(format!(
            "PQPERF\tdec_outputs\t{w} {}",
            pool.outputs_digest((calls as usize).min(pool.n), *ss_len as usize)
        )),
        Op::NKemDec(_, _, pool) => Some(format!(
            "PQPERF\tdec_outputs\t{w} {}",
            pool.outputs_digest((calls as usize).min(pool.n), pool.ss_stride)
        )),
        _ => None,
    }
}

/// Runs the driver and returns its exit status; everything goes to `out`, errors also to
/// `err`.
pub fn run(a: &DriverArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    run_gated(a, out, Gate::new(None), err)
}

/// [`run`] with the parent's control pipe ([`Gate`]).
pub fn run_gated(a: &DriverArgs, out: &mut dyn Write, gate: Gate, err: &mut dyn Write) -> i32 {
    match run_inner(a, out, gate) {
        Ok(code) => code,
        Err(Fail(code, msg)) => {
            let _ = writeln!(err, "{msg}");
            code
        }
    }
}

pub(super) fn run_inner(a: &DriverArgs, w: &mut dyn Write, mut gate: Gate) -> R<i32> {
    let ended = || setup("the parent ended the run (control pipe)");
    if a.trials > 16 || a.iters < 1 {
        return Err(usage(
            "trials must be 1..16 (0: setup only) and iterations >= 1",
        ));
    }
    // A conducted driver never pins itself: its parent sets the CPU of its every task, before
    // `exec` or at the hold gate (a held process, `Gate::hold`).
    if let Some(c) = a.cpu.filter(|_| gate.control.is_none()) {
        affinity::pin_to(c).map_err(|e| usage(format!("cannot pin to CPU {c}: {e}")))?;
    }
    procinfo::disable_core_dumps();
    // A conducted preparer takes its stream seed from the control pipe (issue 36: no seed
    // on any argv, `inputs::seed_payload`); one started by hand keeps its `--seed`.
    let piped;
    let a = if a.prepare && gate.control.is_some() {
        let b = gate
            .setup()
            .ok_or_else(|| usage("--prepare: no setup word on the control pipe"))?;
        let mut c = a.clone();
        c.seed = inputs::parse_seed_payload(&b).map_err(setup)?;
        piped = c;
        &piped
    } else {
        a
    };
    // A relayed process takes its key and warm-up inputs (verify, dec) or its setup seed
    // and the warm-ups' window (a window-seeded operation) from the parent first.
    let mut relay = None;
    let mut seeded = None;
    if a.relayed {
        let b = gate
            .setup()
            .ok_or_else(|| usage("--relayed: no setup word on the control pipe"))?;
        if pqperf_model::stream::window_seeded(&a.op) {
            seeded = Some(pqperf_model::stream::WindowInput::parse_setup(&b).map_err(setup)?);
        } else {
            relay = Some(Relay::parse_setup(&b).map_err(setup)?);
        }
    }
    let seed = seeded.map_or_else(|| prep_seed(a), |(s, _)| s);
    let lib = Library::open(&a.lib).map_err(|e| usage(e.to_string()))?;
    let mut head = Vec::new();
    let mut p = match a.api {
        ApiSpec::Iccs => prepare_iccs(&lib, a, &mut head, relay.as_ref(), &seed)?,
        ApiSpec::Nist { .. } => prepare_nist(&lib, a, &mut head, relay.as_ref(), &seed)?,
    };
    if !p.op.guards_intact() {
        return Err(setup(
            "guard bytes overwritten during setup (buffer overflow)",
        ));
    }
    if a.prepare {
        // The preparer: report the inputs, time nothing.
        let mut o = Out(w);
        for l in inputs::prepare_lines(&p.op, &p.key) {
            o.line(l);
        }
        o.line("STATUS\tprepared");
        return Ok(0);
    }
    let mut pending: Option<String>;
    let mut window = 0u32;
    // The counter is opened (and a refused perf_event_open dealt with) before the baseline
    // and the peak reset, so that nothing the counter costs lands in the memory figures.
    let counter = if a.force_ticks {
        Counter::ticks()
    } else {
        Counter::best()
    };
    let baseline = procinfo::rss_bytes().unwrap_or(0);
    let peak_reset = procinfo::reset_peak_rss();
    let mut o = Out(w);
    for (k, v) in &head {
        o.meta(k, v);
    }
    o.meta("operation", &a.op);
    o.meta("input_bytes", a.bytes);
    let flags = lib
        .build_flags()
        .or_else(|| lib.meta().ok().map(|m| m.build_flags))
        .unwrap_or_default();
    o.meta("build_flags", flags);
    o.meta("baseline_rss_bytes", baseline);
    for (k, v) in &p.meta {
        o.meta(k, v);
    }
    let step = p.kex_step.filter(|s| *s != Step::Whole);
    o.meta("mode", "fixed_iterations");
    o.meta(
        "cpu_cycles_available",
        if counter.kind() == CounterKind::Cycles {
            "yes"
        } else {
            "no"
        },
    );
    o.meta(
        "timing_scope",
        if step.is_some() {
            "per_call_step"
        } else {
            "loop"
        },
    );
    let _ = writeln!(o.0, "PQPERF\tcounter\t{}", counter.kind().evidence_name());
    let _ = writeln!(o.0, "PQPERF\tpeak_rss_reset\t{}", peak_reset);
    // Prepared: the parent moves a held process onto the measuring CPU here.
    if !gate.hold(&mut o) {
        o.line("STATUS\tsetup_only");
        return Ok(0);
    }
    let stream = Stream::new(a, a.samples && step.is_none());
    Stream::at(&stream, &mut p, 0)?;
    if let Some((_, warm)) = &seeded {
        enter_window(&mut p, warm)?;
    }
    for _ in 0..a.warmups {
        p.op.call(&mut p.stats)
            .map_err(|e| setup(format!("warm-up operation failed: {e}")))?;
    }
    o.meta("warmups", a.warmups);
    let mut total = 0u64;
    // Sampled trials (separate from the reference trials, which read no clock per call):
    // at most SAMPLE_CALLS calls each. Touch the sample buffer and warm the clock and
    // counter paths (first vDSO call, page faults) so none of that lands inside a timed trial.
    let sample_calls = a.iters.min(SAMPLE_CALLS);
    let sampling = a.samples && step.is_none();
    let mut stamps: Vec<u64> = if sampling {
        vec![1; sample_calls as usize + 1]
    } else {
        Vec::new()
    };
    for _ in 0..2 {
        let b = counter.begin();
        let _ = counters::monotonic_raw_ns();
        let _ = counters::ticks();
        let _ = counter.end(b);
    }
    let _ = SchedSnap::now();
    // The warm-ups' rejections (window 0): the parent counts them as a replay does.
    pending = window_outputs(&p, a.relayed, 0, a.warmups);
    let canary_before = super::canary::measure();
    if a.trials == 0 || !gate.pass_loading(&mut o, &mut p, &mut pending) {
        // Setup only: everything a timing run does before its first call.
        o.line("STATUS\tsetup_only");
        return Ok(0);
    }
    // The outputs of the last call of every trial, read after the trial (untimed), digested
    // for the parent's replay check (`pqperf_measure::outcheck`).
    let mut outputs = pqperf_model::stream::OutputDigest::new();
    let digest = step.is_none() && p.op.output(&p.stats).is_some();
    for t in 1..=a.trials {
        if t > 1 && !gate.pass_loading(&mut o, &mut p, &mut pending) {
            return Err(ended());
        }
        Stream::at(&stream, &mut p, a.warmups + u64::from(t - 1) * a.iters)?;
        let s0 = SchedSnap::now();
        let (ns, count) = if let (Some(s), Op::Kex(k)) = (step, &mut p.op) {
            let mut acc = Acc {
                counter: &counter,
                ns: 0,
                count: 0,
            };
            for _ in 0..a.iters {
                k.exchange(s, Some(&mut acc))
                    .map_err(|e| setup(format!("measured operation failed: {e}")))?;
            }
            (acc.ns, acc.count)
        } else {
            let b = counter.begin();
            let t0 = counters::monotonic_raw_ns();
            p.op.call_n(a.iters, &mut p.stats)
                .map_err(|e| setup(format!("measured operation failed: {e}")))?;
            let t1 = counters::monotonic_raw_ns();
            (t1 - t0, counter.end(b))
        };
        let s1 = SchedSnap::now();
        if !p.op.guards_intact() {
            return Err(setup("guard bytes overwritten (buffer overflow)"));
        }
        total += a.iters;
        if let Some(x) = p.op.output(&p.stats).filter(|_| digest) {
            outputs.update(&x);
        }
        o.line(format_args!(
            "TRIAL\t{t}\t{}\t{}.{:09}\t{count}",
            a.iters,
            ns / 1_000_000_000,
            ns % 1_000_000_000
        ));
        o.line(sched_line("trial_sched", t, a.iters, ns, count, &s0, &s1));
        window += 1;
        pending = window_outputs(&p, a.relayed, window, a.iters);
    }
    // The sampled trials follow all reference trials, so that the reference trials run in the
    // same sequence with and without sampling.
    for t in 1..=a.trials {
        if sampling && stamps.len() > 1 {
            if !gate.pass_loading(&mut o, &mut p, &mut pending) {
                return Err(ended());
            }
            Stream::at(
                &stream,
                &mut p,
                a.warmups + total + u64::from(t - 1) * sample_calls,
            )?;
            let s0 = SchedSnap::now();
            let b = counter.begin();
            let t0 = counters::monotonic_raw_ns();
            stamps[0] = counters::ticks();
            for slot in stamps[1..].iter_mut() {
                p.op.call(&mut p.stats)
                    .map_err(|e| setup(format!("measured operation failed: {e}")))?;
                *slot = counters::ticks();
            }
            let t1 = counters::monotonic_raw_ns();
            let count = counter.end(b);
            let s1 = SchedSnap::now();
            if !p.op.guards_intact() {
                return Err(setup("guard bytes overwritten (buffer overflow)"));
            }
            if let Some(x) = p.op.output(&p.stats).filter(|_| digest) {
                outputs.update(&x);
            }
            o.line(sched_line(
                "sample_sched",
                t,
                sample_calls,
                t1 - t0,
                count,
                &s0,
                &s1,
            ));
            let mut line = format!("SAMPLES\t{t}\t");
            for w in stamps.windows(2) {
                line.push_str(&(w[1] - w[0]).to_string());
                line.push(' ');
            }
            line.pop();
            o.line(line);
            window += 1;
            pending = window_outputs(&p, a.relayed, window, sample_calls);
        }
    }
    // The gate after the last interval closes its window.
    if !gate.pass_loading(&mut o, &mut p, &mut pending) {
        return Err(ended());
    }
    if let Some(l) = pending.take() {
        o.line(l);
    }
    o.line(super::canary::line(canary_before, super::canary::measure()));
    if digest {
        o.line(format_args!("PQPERF\toutput_digest\t{}", outputs.finish()));
    }
    if matches!(
        p.op,
        Op::SigKeygen(..)
            | Op::SigSign { .. }
            | Op::SigVerify { .. }
            | Op::NSignKeygen(..)
            | Op::NSignSign(..)
            | Op::NSignVerify(..)
    ) {
        let s = &p.stats;
        o.meta("sign_failures_retried", s.sign_failures_retried);
        o.meta("message_tweaks", s.message_tweaks);
        o.meta("setup_verify_failed", 0);
        o.meta("signature_length_excess", s.signature_length_excess);
        o.meta("verify_rejections", s.verify_rejections);
    }
    o.meta("peak_rss_bytes", procinfo::vm_hwm_bytes().unwrap_or(0));
    if let Some(s) = &stream {
        let l = s.layout;
        let at = l.first_sampled_position() + l.trials * l.sample_calls();
        Stream::at(&stream, &mut p, at)?;
    }
    memory_pass(&mut p, a.stack_region, &mut o);
    o.meta("measurement_count", total);
    o.meta(
        "guide_100_measurements",
        if total >= 100 { "met" } else { "not_met" },
    );
    o.line("STATUS\tcomplete");
    // The last gate: what follows is the process's exit.
    gate.pass(&mut o);
    Ok(0)
}
