//! Input streams of timing-driver processes (issue 37, docs/statistics.md "Independent
//! streams"; issue 36, docs/threat-model.md): the 48-byte DRNG seed a driver process starts
//! from and the per-call messages it signs.
//!
//! The reference seeds every process with [`REFERENCE_SEED`] (`00 01 … 2f`), so every process
//! draws the same keys, the same randomness and (for variable-time operations) the same
//! rejection counts. pqperf's own protocol (`--target-ci`) gives process `i` of an operation
//! the seed [`keyed_process_seed`]`(key, i)`:
//!
//! ```text
//! block(k) = SHA-256("pqperf keyed stream v3" ‖ key ‖ u64_le(i) ‖ u8(k))
//! seed(i)  = block(0)[0..32] ‖ block(1)[0..16]
//! ```
//!
//! where `key` is the run's secret stream key ([`fresh_key`], or an earlier run's reused on
//! purpose), published only after the run: its processes are independent samples of the
//! operation's variability, anyone can recompute a seed afterwards, and no candidate can
//! before ([`process_seed`], the public derivation of earlier versions, stays for the count
//! phase and tests). The seed is recorded in the process entry (`stream`: `index`, `seed`,
//! `key_id` ([`key_id`]), and what pairing two runs call by call needs: the mapping
//! [`CALL_INPUTS`], the call index of the first sampled call [`first_sampled_call`] and the
//! number of sampled trials). A timing process is never told it: it gets a one-way
//! [`setup_seed`] for its preparation and each window's [`WindowInput`] with the parent's
//! `go` that opens the window (keygen, sign, enc, exchange and each key-exchange step, hash:
//! [`window_seeded`]; verify and dec get relayed pools). A driver given `--seed HEX` ([`seed_hex`] / [`parse_seed_hex`]: the
//! replay, the preparer, a run by hand) derives the same windows itself.
//!
//! Messages: a signing process signs a different 64-byte message in every call (issue 36,
//! "no repeated inputs"): the call with input index `n` in a window with DRNG seed `w` signs
//! [`window_message_base`]`(w)` with `u64_le(n)` XORed into its first 8 bytes
//! ([`message_for_call`]; the whole 64-byte message is the window's base, `v4`: `v3` kept the
//! tail of the process's first message); verify's pool signs [`base_message`] of the process
//! seed that way. A hash process does the same on its message's head ([`hash_message`]).
//!
//! Input indices ([`CallLayout::input_index`]): under pqperf's own protocol the sampled
//! trials' calls take the indices `0, 1, …` (a block fixed whatever the calibrated calls per
//! trial, so two runs' sampled calls share their indices), the warm-ups and the reference
//! trials the indices after that block, and the DRNG is reseeded at the start of every
//! window with [`window_seed`]`(seed, index of its first call)`. The reference protocol keeps
//! the call order as the input index (parity with the reference harness).

use sha2::{Digest, Sha256};

/// The name of the mapping (process seed, call index) → timed input that every driver process
/// of pqperf's own protocol follows, recorded in each process entry's `stream` (`inputs`).
/// Two processes with the same seed and the same mapping give call `n` the same input (the
/// same message, the same DRNG bytes, the same rejection rounds), whatever their library:
/// what `pqperf compare` pairs on (`pqperf_compare::streams`). Any change of what call `n`
/// receives (its message, its randomness, where its bytes come from) must change this name,
/// so that records made before and after are not paired.
pub const CALL_INPUTS: &str = "seed+call-index v4";

/// Calls of one sampled trial at most (the driver's `SAMPLE_CALLS`).
pub const SAMPLE_CALLS_MAX: u64 = 400;

/// The calls of a driver process in the order it makes them: `warmups`, `trials` reference
/// trials of `iters` calls, then (when `sampled`) `trials` sampled trials of
/// `min(iters, 400)` calls, then the memory pass. `own_stream`: a process of pqperf's own
/// protocol (its own seed); the reference protocol keeps the call order as input order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLayout {
    /// Warm-up calls.
    pub warmups: u64,
    /// Reference trials (as many sampled trials follow when `sampled`).
    pub trials: u64,
    /// Calls per reference trial.
    pub iters: u64,
    /// Whether sampled trials follow (`--samples`, not a per-step kex).
    pub sampled: bool,
    /// A process of pqperf's own protocol (its own seed).
    pub own_stream: bool,
}

impl CallLayout {
    /// Calls of one sampled trial (0 without sampling).
    pub fn sample_calls(&self) -> u64 {
        if self.sampled {
            self.iters.min(SAMPLE_CALLS_MAX)
        } else {
            0
        }
    }

    /// The call position (counted from 0 over the process) of the first sampled call.
    pub fn first_sampled_position(&self) -> u64 {
        self.warmups
            .saturating_add(self.trials.saturating_mul(self.iters))
    }

    /// The input index of the call at `position` (counted from 0 over the whole process,
    /// warm-ups first): what its message, its pool entry (`index mod entries`) and its
    /// window's DRNG seed derive from, with the process seed. Own stream: the sampled
    /// calls take `0 .. trials · sample_calls` in order, the calls before them the indices
    /// after that block, the calls after them (the memory pass) their own position. A
    /// bijection of the positions (no two calls of a process share an index), consecutive
    /// within every window. Reference protocol: the position itself.
    pub fn input_index(&self, position: u64) -> u64 {
        if !self.own_stream {
            return position;
        }
        let first = self.first_sampled_position();
        let block = self.trials.saturating_mul(self.sample_calls());
        if position < first {
            position.saturating_add(block)
        } else if position - first < block {
            position - first
        } else {
            position
        }
    }
}

/// The input index of a process's first sampled call under pqperf's own protocol (0: the
/// sampled block comes first whatever the calibration; [`CallLayout::input_index`]); sampled
/// trial `t` (0-based) starts at `first_sampled_call + t · min(iters, 400)`. Recorded by the
/// parent from the argv it passed (`stream.first_sampled_call`), not from a line of the
/// driver.
pub fn first_sampled_call(warmups: u64, trials: u64, iters: u64) -> u64 {
    let l = CallLayout {
        warmups,
        trials,
        iters,
        sampled: true,
        own_stream: true,
    };
    l.input_index(l.first_sampled_position())
}

/// The DRNG seed a process of pqperf's own protocol reseeds with at the start of the window
/// whose first call has input index `index` (its warm-ups, each trial, the memory pass), so
/// the randomness a call draws depends on (seed, index) and not on how many calls ran
/// before it: SHA-256("pqperf window v2" ‖ seed ‖ u64_le(index) ‖ u8(k)), k = 0, 1.
pub fn window_seed(seed: &[u8; SEED_BYTES], index: u64) -> [u8; SEED_BYTES] {
    derive_seed(b"pqperf window v2", seed, index)
}

/// Seed bytes of a driver process's DRNG.
pub const SEED_BYTES: usize = 48;

/// The reference's fixed seed (`00 01 … 2f`), used by every process of the reference protocol.
pub const REFERENCE_SEED: [u8; SEED_BYTES] = {
    let mut s = [0u8; SEED_BYTES];
    let mut i = 0;
    while i < SEED_BYTES {
        s[i] = i as u8;
        i += 1;
    }
    s
};

/// Domain separation of the derivation (changing it changes every derived seed).
pub const STREAM_DOMAIN: &[u8] = b"pqperf stream v1";

/// The seed of process `index` of an operation under pqperf's own protocol (module doc).
pub fn process_seed(index: u64) -> [u8; SEED_BYTES] {
    derive_seed(STREAM_DOMAIN, &REFERENCE_SEED, index)
}

/// `block(k) = SHA-256(domain ‖ secret ‖ u64_le(index) ‖ u8(k))`; the seed is
/// `block(0)[0..32] ‖ block(1)[0..16]` (the stream and window derivations).
fn derive_seed(domain: &[u8], secret: &[u8], index: u64) -> [u8; SEED_BYTES] {
    let block = |k: u8| {
        let mut h = Sha256::new();
        h.update(domain);
        h.update(secret);
        h.update(index.to_le_bytes());
        h.update([k]);
        h.finalize()
    };
    let mut s = [0u8; SEED_BYTES];
    s[..32].copy_from_slice(&block(0));
    s[32..].copy_from_slice(&block(1)[..16]);
    s
}

/// Bytes of a campaign's stream key ([`keyed_process_seed`]).
pub const KEY_BYTES: usize = 32;

/// Domain separation of the keyed derivation.
pub const KEYED_STREAM_DOMAIN: &[u8] = b"pqperf keyed stream v3";

/// The seed of process `index` of an operation under pqperf's own protocol with the
/// campaign's secret stream `key` (issue 36: a candidate cannot compute its inputs ahead,
/// not even from a table embedded in its source, since the key is drawn fresh from the
/// operating system for every run unless an earlier run's key is reused on purpose):
/// `block(k) = SHA-256("pqperf keyed stream v3" ‖ key ‖ u64_le(index) ‖ u8(k))`, the seed
/// `block(0)[0..32] ‖ block(1)[0..16]`. One-way: a process's seed (recorded in its process
/// entry) tells nothing of another process's seed or of the key.
pub fn keyed_process_seed(key: &[u8; KEY_BYTES], index: u64) -> [u8; SEED_BYTES] {
    derive_seed(KEYED_STREAM_DOMAIN, key, index)
}

/// The public name of a stream key (`stream.key_id` in every process entry): the first 8
/// bytes of SHA-256("pqperf stream key id" ‖ key), hex. Two records whose processes were
/// seeded from the same key have the same name; the name does not reveal the key.
pub fn key_id(key: &[u8; KEY_BYTES]) -> String {
    let mut h = Sha256::new();
    h.update(b"pqperf stream key id");
    h.update(key);
    hex::encode(&h.finalize()[..8])
}

/// A fresh stream key from the operating system's randomness (`/dev/urandom`).
pub fn fresh_key() -> std::io::Result<[u8; KEY_BYTES]> {
    use std::io::Read;
    let mut k = [0u8; KEY_BYTES];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut k)?;
    Ok(k)
}

/// A stream key as 64 hex characters (what [`parse_key_hex`] reads).
pub fn key_hex(key: &[u8; KEY_BYTES]) -> String {
    hex::encode(key)
}

/// Parses a stream key written as 64 hex characters.
pub fn parse_key_hex(s: &str) -> Result<[u8; KEY_BYTES], String> {
    let v = hex::decode(s.trim()).map_err(|e| format!("stream key: {e}"))?;
    v.try_into().map_err(|v: Vec<u8>| {
        format!(
            "stream key: {} bytes, {KEY_BYTES} expected (64 hex characters)",
            v.len()
        )
    })
}

/// Whether an operation's timing processes get their DRNG seed and messages window by
/// window with the parent's `go` (issue 36; [`WindowInput`]): the operations whose timed
/// inputs come from the DRNG and the per-call messages — keygen, sign, enc, the whole key
/// exchange and each of its steps timed alone ([`kex_step`]), and hash, whose message head
/// comes from the window ([`hash_message`]). Verify and dec get relayed pools
/// (`pqperf_measure::relay`).
pub fn window_seeded(op: &str) -> bool {
    matches!(op, "keygen" | "sign" | "enc" | "exchange" | "hash") || kex_step(op)
}

/// Whether `op` is one step of a key exchange timed alone (`init_a`, `init_b`, `pass<K>`,
/// `derive_a`, `derive_b`): each call runs a whole exchange from the DRNG and times the step,
/// and such a process has no sampled trials whatever its `--samples` ([`sampled`]).
pub fn kex_step(op: &str) -> bool {
    matches!(op, "init_a" | "init_b" | "derive_a" | "derive_b")
        || op
            .strip_prefix("pass")
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a process of `op` given `--samples` (`samples`) runs sampled trials: every
/// operation but a key exchange's single steps ([`kex_step`]).
pub fn sampled(op: &str, samples: bool) -> bool {
    samples && !kex_step(op)
}

/// The DRNG seed a window-seeded process prepares with (its key pair for sign and enc):
/// SHA-256("pqperf setup v3" ‖ seed ‖ u8(k)), k = 0, 1. One-way, so the timing process,
/// which is told only this seed before its first gate, learns nothing of its windows' seeds.
pub fn setup_seed(seed: &[u8; SEED_BYTES]) -> [u8; SEED_BYTES] {
    let block = |k: u8| {
        let mut h = Sha256::new();
        h.update(b"pqperf setup v3");
        h.update(seed);
        h.update([k]);
        h.finalize()
    };
    let mut s = [0u8; SEED_BYTES];
    s[..32].copy_from_slice(&block(0));
    s[32..].copy_from_slice(&block(1)[..16]);
    s
}

/// The base message of the window whose DRNG seed is `wseed` ([`window_seed`]):
/// SHA-256("pqperf window message v3" ‖ wseed ‖ u8(k)), k = 0, 1. Call `n` of the window (its
/// input index) signs it with `u64_le(n)` XORed into its first 8 bytes
/// ([`message_for_call`]), so no window's messages follow from another's.
pub fn window_message_base(wseed: &[u8; SEED_BYTES]) -> [u8; 64] {
    let mut m = [0u8; 64];
    for k in 0..2u8 {
        let mut h = Sha256::new();
        h.update(b"pqperf window message v3");
        h.update(wseed);
        h.update([k]);
        m[32 * k as usize..32 * (k as usize + 1)].copy_from_slice(&h.finalize());
    }
    m
}

/// What opens one window of a window-seeded process: the window's DRNG seed
/// ([`window_seed`]) and the input index of its first call. Relayed by the parent with the
/// `go` of that window (56 bytes: seed ‖ u64_le(index)); a process with its seed on its argv
/// (the replay, a driver started by hand) derives the same itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowInput {
    /// The window's DRNG seed.
    pub seed: [u8; SEED_BYTES],
    /// The input index of its first call.
    pub index: u64,
}

/// Bytes of an encoded [`WindowInput`].
pub const WINDOW_INPUT_BYTES: usize = SEED_BYTES + 8;

impl WindowInput {
    /// The window of process `seed` whose first call has input `index`.
    pub fn of(seed: &[u8; SEED_BYTES], index: u64) -> WindowInput {
        WindowInput {
            seed: window_seed(seed, index),
            index,
        }
    }

    /// seed ‖ u64_le(index).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = self.seed.to_vec();
        v.extend_from_slice(&self.index.to_le_bytes());
        v
    }

    /// Parses what [`WindowInput::encode`] writes.
    pub fn decode(b: &[u8]) -> Result<WindowInput, String> {
        if b.len() != WINDOW_INPUT_BYTES {
            return Err(format!(
                "window input of {} bytes, {WINDOW_INPUT_BYTES} expected",
                b.len()
            ));
        }
        Ok(WindowInput {
            seed: b[..SEED_BYTES].try_into().expect("48 bytes"),
            index: u64::from_le_bytes(b[SEED_BYTES..].try_into().expect("8 bytes")),
        })
    }

    /// The setup payload of a window-seeded process: its [`setup_seed`] and the warm-ups'
    /// window.
    pub fn setup_payload(seed: &[u8; SEED_BYTES], warm: &WindowInput) -> Vec<u8> {
        let mut v = setup_seed(seed).to_vec();
        v.extend_from_slice(&warm.encode());
        v
    }

    /// Parses a setup payload: (setup seed, the warm-ups' window).
    pub fn parse_setup(b: &[u8]) -> Result<([u8; SEED_BYTES], WindowInput), String> {
        if b.len() != SEED_BYTES + WINDOW_INPUT_BYTES {
            return Err(format!(
                "window-seeded setup of {} bytes, {} expected",
                b.len(),
                SEED_BYTES + WINDOW_INPUT_BYTES
            ));
        }
        Ok((
            b[..SEED_BYTES].try_into().expect("48 bytes"),
            WindowInput::decode(&b[SEED_BYTES..])?,
        ))
    }
}

/// Lower-case hex of a seed (96 characters).
pub fn seed_hex(seed: &[u8; SEED_BYTES]) -> String {
    hex::encode(seed)
}

/// Parses what [`seed_hex`] writes.
pub fn parse_seed_hex(s: &str) -> Result<[u8; SEED_BYTES], String> {
    let v = hex::decode(s).map_err(|e| format!("seed {s:?}: {e}"))?;
    v.try_into()
        .map_err(|v: Vec<u8>| format!("seed: {} bytes, {SEED_BYTES} expected", v.len()))
}

/// The 64-byte message the reference signs every call.
pub fn reference_message() -> [u8; 64] {
    let mut m = [0u8; 64];
    for (i, b) in m.iter_mut().enumerate() {
        *b = ((i as u32 * 131 + 64) % 256) as u8;
    }
    m
}

/// The base message of a process with `seed`: the reference message for the reference seed,
/// else SHA-256(seed ‖ "message" ‖ k) for k = 0, 1.
pub fn base_message(seed: &[u8; SEED_BYTES]) -> [u8; 64] {
    if *seed == REFERENCE_SEED {
        return reference_message();
    }
    let mut m = [0u8; 64];
    for k in 0..2u8 {
        let mut h = Sha256::new();
        h.update(seed);
        h.update(b"message");
        h.update([k]);
        m[32 * k as usize..32 * (k as usize + 1)].copy_from_slice(&h.finalize());
    }
    m
}

/// Writes the message of call `n` into `m` (64 bytes for sign; a hash's message of any
/// length): the base with `u64_le(n)` XORed into its first 8 bytes (all of a shorter
/// message). The rest of `m` is the base's (written once per window). Cheap enough to stay
/// inside a timed loop (one 8-byte store).
#[inline(always)]
pub fn message_for_call(base: &[u8; 64], n: u64, m: &mut [u8]) {
    let head = u64::from_le_bytes(base[..8].try_into().expect("8 bytes")) ^ n;
    if m.len() >= 8 {
        m[..8].copy_from_slice(&head.to_le_bytes());
    } else {
        let k = m.len();
        m.copy_from_slice(&head.to_le_bytes()[..k]);
    }
}

/// The message a hash process starts from: `bytes` bytes of the fixed pattern
/// `(i · 131 + bytes) mod 256` (the reference protocol's message, the same in every call but
/// for the call's index XORed into its head, [`message_for_call`]). In a window of pqperf's
/// own protocol its first `min(64, bytes)` bytes are the window's base message
/// ([`window_message_base`]) instead, so no call's message is known before its window opens;
/// the tail stays the pattern (a hash absorbs its message from the start, so nothing of the
/// tail can be computed ahead of the head).
pub fn hash_message(bytes: u64) -> Vec<u8> {
    (0..bytes)
        .map(|i| ((i * 131 + bytes) % 256) as u8)
        .collect()
}

/// The first 64 bytes of `m` as a base message (zero-padded when `m` is shorter): what
/// [`message_for_call`] XORs the call index into.
pub fn head_of(m: &[u8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    let k = m.len().min(64);
    b[..k].copy_from_slice(&m[..k]);
    b
}

/// The digest of a driver process's timed outputs (`PQPERF output_digest`): SHA-256 over the
/// output of the last call of every trial, reference trials first, then the sampled trials
/// (the driver's and a replay's are compared by the parent).
#[derive(Clone, Default)]
pub struct OutputDigest {
    h: Sha256,
    parts: u64,
}

impl OutputDigest {
    /// An empty digest.
    pub fn new() -> OutputDigest {
        OutputDigest::default()
    }

    /// Adds one trial's output.
    pub fn update(&mut self, output: &[u8]) {
        self.h.update((output.len() as u64).to_le_bytes());
        self.h.update(output);
        self.parts += 1;
    }

    /// `<parts>:<hex>`.
    pub fn finish(self) -> String {
        format!("{}:{}", self.parts, hex::encode(self.h.finalize()))
    }
}

/// Runs of rejected pool positions in one relayed verify window (`PQPERF verify_rejected`):
/// comma-separated `k` or `a-b` (inclusive), in call order. A window's calls walk the pool
/// in order and wrap, so a verify that rejects every call of a window of any length is a few
/// runs, not one entry per call (the driver keeps at most [`Rejections::MAX_RUNS`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rejections {
    runs: Vec<(u64, u64)>,
    /// Rejections beyond the kept runs (the list is then incomplete).
    pub dropped: u64,
}

impl Rejections {
    /// Runs kept per window at most.
    pub const MAX_RUNS: usize = 4096;

    /// Notes the rejection of pool position `k` (extends the last run when `k` follows it).
    pub fn push(&mut self, k: u64) {
        if let Some(last) = self.runs.last_mut()
            && last.1.checked_add(1) == Some(k)
        {
            last.1 = k;
        } else if self.runs.len() < Self::MAX_RUNS {
            self.runs.push((k, k));
        } else {
            self.dropped += 1;
        }
    }

    /// Forgets every run (a new window).
    pub fn clear(&mut self) {
        self.runs.clear();
        self.dropped = 0;
    }

    /// No rejection noted.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.dropped == 0
    }

    /// The line's value: `-` for none; `!` at the end when rejections were dropped.
    pub fn encode(&self) -> String {
        if self.runs.is_empty() {
            return if self.dropped > 0 { "!" } else { "-" }.to_string();
        }
        let mut s = self
            .runs
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        if self.dropped > 0 {
            s.push_str(",!");
        }
        s
    }

    /// Parses [`Rejections::encode`]; also the plain `k,k,…` lists of earlier drivers. An
    /// incomplete list (`!`) or a malformed item is an error naming it.
    pub fn parse(s: &str) -> Result<Rejections, String> {
        let mut r = Rejections::default();
        if s == "-" {
            return Ok(r);
        }
        for item in s.split(',') {
            if item == "!" {
                return Err("the list of rejected positions is incomplete".into());
            }
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (a, b),
                None => (item, item),
            };
            let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) else {
                return Err(format!("`{item}` is not a pool position or a run"));
            };
            if b < a {
                return Err(format!("`{item}` is a run that ends before it starts"));
            }
            r.runs.push((a, b));
        }
        Ok(r)
    }

    /// The number of rejected calls (saturating: a run may claim more than a window holds).
    pub fn count(&self) -> u64 {
        self.runs.iter().fold(0u64, |n, &(a, b)| {
            n.saturating_add((b - a).saturating_add(1))
        })
    }

    /// How many rejected calls were at position `t`.
    pub fn count_at(&self, t: u64) -> u64 {
        self.runs.iter().filter(|&&(a, b)| a <= t && t <= b).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejections_compress_runs_and_parse_back() {
        let mut r = Rejections::default();
        assert_eq!(r.encode(), "-");
        // A verify rejecting every call of a window that wraps a pool of 5 entries twice.
        for c in 0..12u64 {
            r.push(c % 5);
        }
        assert_eq!(r.encode(), "0-4,0-4,0-1");
        let p = Rejections::parse(&r.encode()).unwrap();
        assert_eq!(p, r);
        assert_eq!(p.count(), 12);
        assert_eq!(p.count_at(1), 3);
        assert_eq!(p.count_at(4), 2);
        assert_eq!(Rejections::parse("3,7").unwrap().count(), 2);
        assert!(Rejections::parse("4-2").is_err());
        assert!(Rejections::parse("x").is_err());
        // More scattered rejections than runs kept: the list says it is incomplete.
        let mut r = Rejections::default();
        for k in 0..(Rejections::MAX_RUNS as u64 + 3) {
            r.push(2 * k);
        }
        assert_eq!(r.dropped, 3);
        assert!(r.encode().ends_with(",!"));
        assert!(
            Rejections::parse(&r.encode())
                .unwrap_err()
                .contains("incomplete")
        );
        // A hostile run cannot overflow the count.
        assert_eq!(
            Rejections::parse("0-18446744073709551615,1-2")
                .unwrap()
                .count(),
            u64::MAX
        );
    }

    #[test]
    fn process_seeds_are_distinct_fixed_and_round_trip() {
        let s0 = process_seed(0);
        let s1 = process_seed(1);
        assert_ne!(s0, s1);
        assert_ne!(s0, REFERENCE_SEED);
        assert_eq!(s0, process_seed(0), "deterministic");
        // Pinned: a change of the derivation changes recorded evidence.
        let mut h = Sha256::new();
        h.update(b"pqperf stream v1");
        h.update(REFERENCE_SEED);
        h.update(7u64.to_le_bytes());
        h.update([0u8]);
        assert_eq!(process_seed(7)[..32], h.finalize()[..]);
        let all: std::collections::HashSet<_> = (0..1000).map(process_seed).collect();
        assert_eq!(all.len(), 1000);
        let hx = seed_hex(&s1);
        assert_eq!(hx.len(), 96);
        assert_eq!(parse_seed_hex(&hx).unwrap(), s1);
        assert!(parse_seed_hex("00ff").unwrap_err().contains("48"));
        assert!(parse_seed_hex("zz").is_err());
    }

    #[test]
    fn input_indices_are_distinct_and_the_sampled_block_is_fixed() {
        for (warmups, trials, iters, sampled) in [
            (3, 1, 1000, true),
            (3, 1, 77, true),
            (0, 2, 450, true),
            (2, 3, 5, true),
            (3, 1, 50, false),
        ] {
            let l = CallLayout {
                warmups,
                trials,
                iters,
                sampled,
                own_stream: true,
            };
            // Every call, the memory pass's included.
            let total = l.first_sampled_position() + trials * l.sample_calls() + 1;
            let idx: Vec<u64> = (0..total).map(|p| l.input_index(p)).collect();
            let set: std::collections::HashSet<_> = idx.iter().collect();
            assert_eq!(set.len() as u64, total, "{l:?}");
            assert_eq!(*idx.iter().max().unwrap(), total - 1, "a permutation");
            // The sampled calls: 0, 1, … in order.
            let first = l.first_sampled_position();
            for k in 0..trials * l.sample_calls() {
                assert_eq!(l.input_index(first + k), k);
            }
            if sampled {
                assert_eq!(first_sampled_call(warmups, trials, iters), 0);
            }
            let r = CallLayout {
                own_stream: false,
                ..l
            };
            assert!((0..total).all(|p| r.input_index(p) == p), "reference order");
        }
        // Different calibrations: the sampled block's indices coincide.
        let at = |iters: u64| {
            let l = CallLayout {
                warmups: 3,
                trials: 1,
                iters,
                sampled: true,
                own_stream: true,
            };
            (0..l.sample_calls())
                .map(|k| l.input_index(l.first_sampled_position() + k))
                .collect::<Vec<_>>()
        };
        assert_eq!(at(1000), at(2000));
        assert_eq!(at(200)[..], at(1000)[..200]);
        let s = process_seed(3);
        assert_ne!(window_seed(&s, 0), window_seed(&s, 1));
        assert_ne!(window_seed(&s, 0), window_seed(&process_seed(4), 0));
        assert_eq!(window_seed(&s, 9), window_seed(&s, 9));
    }

    #[test]
    fn keyed_seeds_depend_on_the_key_and_window_inputs_round_trip() {
        let (k1, k2) = ([1u8; KEY_BYTES], [2u8; KEY_BYTES]);
        assert_ne!(keyed_process_seed(&k1, 0), keyed_process_seed(&k2, 0));
        assert_ne!(keyed_process_seed(&k1, 0), keyed_process_seed(&k1, 1));
        assert_ne!(keyed_process_seed(&k1, 0), process_seed(0));
        assert_eq!(key_id(&k1), key_id(&k1));
        assert_ne!(key_id(&k1), key_id(&k2));
        assert_eq!(key_id(&k1).len(), 16);
        assert_eq!(parse_key_hex(&hex::encode(k2)).unwrap(), k2);
        assert!(parse_key_hex("00ff").unwrap_err().contains("64 hex"));
        assert_ne!(fresh_key().unwrap(), fresh_key().unwrap());
        let s = keyed_process_seed(&k1, 3);
        assert_ne!(setup_seed(&s), s);
        let w = WindowInput::of(&s, 400);
        assert_eq!(w.seed, window_seed(&s, 400));
        assert_eq!(WindowInput::decode(&w.encode()).unwrap(), w);
        assert!(WindowInput::decode(&w.encode()[1..]).is_err());
        let (ss, warm) = WindowInput::parse_setup(&WindowInput::setup_payload(&s, &w)).unwrap();
        assert_eq!((ss, warm), (setup_seed(&s), w));
        assert_ne!(
            window_message_base(&w.seed),
            window_message_base(&WindowInput::of(&s, 0).seed)
        );
        assert!(window_seeded("sign") && !window_seeded("verify") && !window_seeded("dec"));
        // Hash and the key exchange's steps timed alone too (issue 36).
        for op in [
            "hash", "exchange", "init_a", "init_b", "pass1", "pass12", "derive_b",
        ] {
            assert!(window_seeded(op), "{op}");
        }
        assert!(kex_step("pass3") && !kex_step("pass") && !kex_step("passx"));
        assert!(!kex_step("exchange") && !kex_step("hash"));
        assert!(sampled("hash", true) && sampled("exchange", true));
        assert!(!sampled("init_a", true) && !sampled("sign", false));
    }

    #[test]
    fn hash_messages_keep_the_pattern_and_vary_their_head_per_call() {
        let m = hash_message(100);
        assert_eq!(m.len(), 100);
        assert_eq!(m[2], ((2 * 131 + 100) % 256) as u8);
        let head = head_of(&m);
        assert_eq!(head[..], m[..64]);
        let short = hash_message(5);
        assert_eq!(head_of(&short)[..5], short[..]);
        assert_eq!(head_of(&short)[5..], [0; 59]);
        // A message shorter than 8 bytes takes the low bytes of the index.
        let mut s = short.clone();
        message_for_call(&head_of(&short), 0x0102, &mut s);
        assert_eq!(s[0], short[0] ^ 2);
        assert_eq!(s[1], short[1] ^ 1);
        assert_eq!(s[2..], short[2..]);
        let mut seen = std::collections::HashSet::new();
        let mut x = m.clone();
        for n in 0..1000 {
            message_for_call(&head, n, &mut x);
            assert_eq!(x[8..], m[8..]);
            assert!(seen.insert(x.clone()), "call {n} repeats a message");
        }
    }

    #[test]
    fn messages_differ_per_call_and_the_reference_keeps_its_base() {
        assert_eq!(base_message(&REFERENCE_SEED), reference_message());
        assert_ne!(base_message(&process_seed(0)), reference_message());
        let base = reference_message();
        let mut m = base;
        message_for_call(&base, 0, &mut m);
        assert_eq!(m, base, "call 0 signs the base message");
        let mut seen = std::collections::HashSet::new();
        for n in 0..10_000 {
            message_for_call(&base, n, &mut m);
            assert_eq!(m[8..], base[8..]);
            assert!(seen.insert(m), "call {n} repeats a message");
        }
    }
}
