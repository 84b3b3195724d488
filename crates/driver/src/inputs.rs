//! Inputs the candidate has not seen (issue 36, "no repeated inputs"): a timed call never gets
//! the input of an earlier call of its trial, so a library that caches its outputs by input
//! gains nothing.
//!
//! - **sign**: the call of input index `n` signs the process's base message with `u64_le(n)`
//!   XORed into its first 8 bytes ([`Messages`], `pqperf_model::stream::message_for_call`):
//!   one 8-byte store before each call, no message repeats in the process. The input index
//!   of a call is `pqperf_model::stream::CallLayout::input_index` of its position (the
//!   driver seeks to it at the start of each window, `timing::Stream`; pool entries: index
//!   mod entries).
//! - **verify** and **dec**: a pool of [`pool_size`] distinct inputs (signatures of distinct
//!   messages, ciphertexts of distinct encapsulations) prepared untimed during the
//!   preparation (before the driver's first gate, `timing::Gate`), taken in
//!   turn ([`SigPool`], [`CtPool`]). The pool holds every call of a one-trial process (its
//!   warm-ups, the reference trial, the sampled trial and the memory pass: [`pool_size`])
//!   unless that exceeds [`POOL_MAX_ENTRIES`], [`POOL_MAX_BYTES`] or `--pool-max` (an
//!   experiment's bound; pqperf's own runs pass none); then it rotates, so no input repeats within any
//!   run of as many consecutive calls as the pool has entries, and the number of entries is
//!   reported (`META input_pool`). The pool depends on the argv only (calls per trial,
//!   `--pool-max`), so the output check's replay builds the same one. A process of
//!   several trials walks the pool again in its later trials (a cache kept across trials can
//!   hit there); under `--target-ci` every process has one trial and its own stream.

use super::*;

/// Most entries of a verify/dec input pool.
pub const POOL_MAX_ENTRIES: u64 = 4096;
/// Most bytes of a verify/dec input pool.
pub const POOL_MAX_BYTES: u64 = 32 << 20;

/// Calls of a process besides its trials' that take pool entries: the warm-ups (at most 3
/// in a plan) and the memory pass.
pub const POOL_EXTRA_CALLS: u64 = 4;

/// Entries of the input pool of process `a` with entries of `entry_bytes`: [`pool_size`],
/// at most the parent's `--pool-max` (its time budget for the preparation; at least 1).
pub fn pool_entries(a: &DriverArgs, entry_bytes: u64) -> usize {
    let n = pool_size(a.iters, entry_bytes);
    match a.pool_max {
        Some(m) => n.min(m.max(1).try_into().unwrap_or(usize::MAX)),
        None => n,
    }
}

/// Entries of an input pool of `entry_bytes` each for a process with trials of `iters`
/// calls: a reference trial, its sampled trial (at most [`SAMPLE_CALLS`] calls), the
/// warm-ups and the memory pass, within the bounds (at least 1).
pub fn pool_size(iters: u64, entry_bytes: u64) -> usize {
    iters
        .saturating_add(iters.min(SAMPLE_CALLS))
        .saturating_add(POOL_EXTRA_CALLS)
        .min(POOL_MAX_ENTRIES)
        .min(POOL_MAX_BYTES / entry_bytes.max(1))
        .max(1) as usize
}

/// The per-call messages of a signing process.
pub(super) struct Messages {
    base: [u8; 64],
    /// The base's first 8 bytes as a little-endian word (what each call's index is XORed
    /// into: `pqperf_model::stream::message_for_call`, kept apart so that the timed loop's
    /// one store needs no other load).
    head: u64,
    next: u64,
}

impl Messages {
    pub(super) fn new(seed: &[u8; pqperf_model::stream::SEED_BYTES]) -> Messages {
        Messages::from_base(pqperf_model::stream::base_message(seed))
    }

    /// Messages on `base` (a hash's message head, `pqperf_model::stream::head_of`).
    pub(super) fn from_base(base: [u8; 64]) -> Messages {
        Messages {
            base,
            head: u64::from_le_bytes(base[..8].try_into().expect("8 bytes")),
            next: 0,
        }
    }

    /// The message of call `n` (0, 1, …) of the process.
    pub(super) fn message(&self, n: u64) -> [u8; 64] {
        let mut m = self.base;
        pqperf_model::stream::message_for_call(&self.base, n, &mut m);
        m
    }

    /// The messages derive from `base` from now on (a window's own base message).
    pub(super) fn rebase(&mut self, base: [u8; 64]) {
        *self = Messages {
            next: self.next,
            ..Messages::from_base(base)
        };
    }

    /// The next call signs the message of input index `n`.
    pub(super) fn seek(&mut self, n: u64) {
        self.next = n;
    }

    /// Writes the next call's message head into `m` (64 bytes for sign; a hash's message).
    /// The same bytes as `message_for_call(base, n, m)`: one 8-byte store (a message shorter
    /// than 8 bytes takes the low bytes).
    #[inline(always)]
    pub(super) fn advance(&mut self, m: &mut [u8]) {
        let h = (self.head ^ self.next).to_le_bytes();
        match m.first_chunk_mut::<8>() {
            Some(c) => *c = h,
            None => {
                let k = m.len();
                m.copy_from_slice(&h[..k]);
            }
        }
        self.next = self.next.wrapping_add(1);
    }
}

/// Signatures of distinct messages, for verify.
pub(super) struct SigPool {
    /// `n` signatures, `stride` bytes apart.
    pub(super) sn: GuardedBuf,
    /// `n` messages of 64 bytes.
    pub(super) m: GuardedBuf,
    /// Signature lengths.
    pub(super) lens: Vec<u64>,
    pub(super) stride: usize,
    pub(super) next: usize,
}

impl SigPool {
    /// Fills a pool of `n` entries with `sign(message(k), sn)` (returning the signature
    /// length or `None` when signing failed) for k = 0, 1, ….
    /// A pool of room for `n` entries, none loaded yet (a relayed process, [`Relay`]).
    pub(super) fn empty(n: usize, stride: usize) -> R<SigPool> {
        Ok(SigPool {
            sn: gb((n * stride) as u64)?,
            m: gb(n as u64 * 64)?,
            lens: vec![0],
            stride,
            next: 0,
        })
    }

    pub(super) fn build(
        n: usize,
        stride: usize,
        msgs: &Messages,
        mut sign: impl FnMut(&mut [u8], &mut [u8]) -> R<Option<u64>>,
    ) -> R<SigPool> {
        let mut p = SigPool {
            sn: gb((n * stride) as u64)?,
            m: gb(n as u64 * 64)?,
            lens: Vec::with_capacity(n),
            stride,
            next: 0,
        };
        for k in 0..n {
            let m = &mut p.m.as_mut_slice()[k * 64..(k + 1) * 64];
            m.copy_from_slice(&msgs.message(k as u64));
            let sn = &mut p.sn.as_mut_slice()[k * stride..(k + 1) * stride];
            let mut got = None;
            for _ in 0..16 {
                if let Some(l) = sign(m, sn)? {
                    got = Some(l);
                    break;
                }
            }
            p.lens
                .push(got.ok_or_else(|| setup("setup signing failed"))?);
        }
        Ok(p)
    }

    /// The next entry: (signature, message).
    #[inline(always)]
    pub(super) fn take(&mut self) -> (&mut [u8], &mut [u8]) {
        let k = self.next;
        self.next = if k + 1 == self.lens.len() { 0 } else { k + 1 };
        let l = self.lens[k] as usize;
        let s = self.stride;
        (
            &mut self.sn.as_mut_slice()[k * s..k * s + l],
            &mut self.m.as_mut_slice()[k * 64..(k + 1) * 64],
        )
    }

    pub(super) fn len(&self) -> usize {
        self.lens.len()
    }

    /// Loads relayed entries ([`Relay`]'s encoding) at slots 0, 1, … and starts again at
    /// slot 0.
    pub(super) fn load(&mut self, mut bytes: &[u8]) -> Result<(), String> {
        let cap = self.m.len() / 64;
        self.lens.clear();
        while !bytes.is_empty() {
            let k = self.lens.len();
            let l = bytes
                .get(..4)
                .map(|x| u32::from_le_bytes(x.try_into().expect("4 bytes")) as usize)
                .ok_or("relayed signature entry cut short")?;
            if k >= cap || l > self.stride || bytes.len() < 4 + l + 64 {
                self.lens.push(0);
                return Err("relayed signature entries do not fit the pool".into());
            }
            let s = self.stride;
            self.sn.as_mut_slice()[k * s..k * s + l].copy_from_slice(&bytes[4..4 + l]);
            self.m.as_mut_slice()[k * 64..(k + 1) * 64].copy_from_slice(&bytes[4 + l..4 + l + 64]);
            self.lens.push(l as u64);
            bytes = &bytes[4 + l + 64..];
        }
        if self.lens.is_empty() {
            self.lens.push(0);
        }
        self.next = 0;
        Ok(())
    }

    /// The next [`SigPool::take`] hands out entry `index mod entries`.
    pub(super) fn seek(&mut self, index: u64) {
        self.next = (index % self.lens.len().max(1) as u64) as usize;
    }

    /// The position of the entry the next [`SigPool::take`] hands out.
    #[inline(always)]
    pub(super) fn position(&self) -> usize {
        self.next
    }

    pub(super) fn guards_intact(&self) -> bool {
        self.sn.guards_intact() && self.m.guards_intact()
    }
}

/// Ciphertexts of distinct encapsulations, for dec, with the shared secrets the
/// encapsulations gave (`expected`, the preparer reports them) and one output slot per entry
/// (`out`: call `k` of a window writes its shared secret into slot `k`, so the parent can
/// check every timed output, [`Relay`]).
pub(super) struct CtPool {
    /// `n` ciphertexts, `stride` bytes apart (each `len` bytes long).
    pub(super) ct: GuardedBuf,
    pub(super) stride: usize,
    pub(super) len: usize,
    pub(super) n: usize,
    pub(super) next: usize,
    /// Shared-secret slot bytes (the declared size).
    pub(super) ss_stride: usize,
    /// The encapsulations' shared secrets (`n` × `ss_stride`; empty in a relayed process).
    pub(super) expected: Vec<u8>,
    /// The decapsulations' outputs, one slot per entry.
    pub(super) out: GuardedBuf,
    /// The slot of the last call.
    pub(super) last: usize,
}

impl CtPool {
    /// Fills a pool of `n` entries with `enc(ct, ss)` (returning the ciphertext length; `ss`
    /// is the entry's `ss_stride` bytes of shared secret).
    pub(super) fn build(
        n: usize,
        stride: usize,
        ss_stride: usize,
        mut enc: impl FnMut(&mut [u8], &mut [u8]) -> R<u64>,
    ) -> R<CtPool> {
        let mut p = CtPool::empty(n, stride, ss_stride)?;
        p.expected = vec![0; n * ss_stride];
        for k in 0..n {
            let c = &mut p.ct.as_mut_slice()[k * stride..(k + 1) * stride];
            let l = enc(c, &mut p.expected[k * ss_stride..(k + 1) * ss_stride])? as usize;
            if l > stride || (k > 0 && l != p.len) {
                return Err(setup(
                    "setup encapsulation gave ciphertexts of different lengths",
                ));
            }
            p.len = l;
        }
        Ok(p)
    }

    /// A pool of room for `n` entries, none loaded yet (a relayed process, [`Relay`]).
    pub(super) fn empty(n: usize, stride: usize, ss_stride: usize) -> R<CtPool> {
        Ok(CtPool {
            ct: gb((n * stride) as u64)?,
            stride,
            len: stride,
            n,
            next: 0,
            ss_stride,
            expected: Vec::new(),
            out: gb((n * ss_stride.max(1)) as u64)?,
            last: 0,
        })
    }

    /// The next entry: (ciphertext, output slot).
    #[inline(always)]
    pub(super) fn take(&mut self) -> (&mut [u8], &mut [u8]) {
        let k = self.next;
        self.next = if k + 1 == self.n { 0 } else { k + 1 };
        self.last = k;
        let (s, q) = (self.stride, self.ss_stride);
        (
            &mut self.ct.as_mut_slice()[k * s..k * s + self.len],
            &mut self.out.as_mut_slice()[k * q..(k + 1) * q],
        )
    }

    /// The next [`CtPool::take`] hands out entry `index mod entries`.
    pub(super) fn seek(&mut self, index: u64) {
        self.next = (index % self.n.max(1) as u64) as usize;
    }

    /// The output slot of the last call.
    pub(super) fn last_out(&self) -> &[u8] {
        let q = self.ss_stride;
        &self.out.as_slice()[self.last * q..(self.last + 1) * q]
    }

    /// Loads relayed ciphertexts (each `len` bytes, [`Relay`]) at slots 0, 1, …, clears the
    /// output slots and starts again at slot 0.
    pub(super) fn load(&mut self, bytes: &[u8]) -> Result<(), String> {
        let l = self.len.max(1);
        if !bytes.len().is_multiple_of(l) || bytes.len() / l > self.ct.len() / self.stride.max(1) {
            return Err(format!(
                "relayed ciphertexts: {} bytes do not fit the pool",
                bytes.len()
            ));
        }
        let k = bytes.len() / l;
        for (i, c) in bytes.chunks(l).enumerate() {
            self.ct.as_mut_slice()[i * self.stride..i * self.stride + l].copy_from_slice(c);
        }
        self.out.as_mut_slice().fill(0);
        self.n = k.max(1);
        self.next = 0;
        Ok(())
    }

    /// The outputs of slots `0..k` (the calls of one relayed window), digested.
    /// (`ss_len` bytes of each slot).
    pub(super) fn outputs_digest(&self, k: usize, ss_len: usize) -> String {
        let q = self.ss_stride;
        let l = ss_len.min(q);
        let mut d = pqperf_model::stream::OutputDigest::new();
        for i in 0..k.min(self.out.len() / q.max(1)) {
            d.update(&self.out.as_slice()[i * q..i * q + l]);
        }
        d.finish()
    }

    pub(super) fn guards_intact(&self) -> bool {
        self.ct.guards_intact() && self.out.guards_intact()
    }
}

/// Hex of `b` (the preparer's lines).
pub fn to_hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

/// Bytes of the hex string `s`.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    let v = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|p| Some(v(p[0])? << 4 | v(p[1])?))
        .collect()
}

/// **Relayed inputs** (issue 36): in pqperf's own protocol (a process with its own stream) the
/// verify/dec inputs are made by a separate *preparer* process of the same candidate
/// (`pqperf-driver … --prepare`, [`prepare_lines`]) and relayed by the parent: the timing
/// process (`--relayed`, no seed on its argv) gets the key and the warm-ups' entries before
/// its preparation ([`Relay::parse_setup`]) and each timed window's entries only after the
/// parent has read its CPU time at the gate before it (`timing::Gate`). The candidate code in
/// the timing process never ran the signing or encapsulation of its inputs, so nothing it
/// kept from them can answer a timed call, and it cannot compute a window's inputs ahead of
/// that window. Encodings: a verify entry is `u32 LE signature length ‖ signature ‖ 64-byte
/// message`; a dec entry is the ciphertext; the setup payload is `u32 LE key length ‖ key ‖
/// entries of the warm-ups`.
pub struct Relay {
    /// pk (verify) or sk (dec).
    pub key: Vec<u8>,
    /// Ciphertext bytes of a dec entry (0 for verify).
    pub ct_len: u32,
    /// Shared-secret bytes of a dec output (0 for verify).
    pub ss_len: u32,
    /// The warm-ups' entries (encoded).
    pub warm: Vec<u8>,
}

impl Relay {
    /// Parses the setup payload.
    pub fn parse_setup(b: &[u8]) -> Result<Relay, String> {
        let n = b
            .get(..4)
            .map(|x| u32::from_le_bytes(x.try_into().expect("4 bytes")) as usize)
            .ok_or("relayed setup shorter than 4 bytes")?;
        let key = b.get(4..4 + n).ok_or("relayed key cut short")?.to_vec();
        let u = |i: usize| {
            b.get(i..i + 4)
                .map(|x| u32::from_le_bytes(x.try_into().expect("4 bytes")))
                .ok_or("relayed sizes cut short")
        };
        Ok(Relay {
            key,
            ct_len: u(4 + n)?,
            ss_len: u(8 + n)?,
            warm: b[12 + n..].to_vec(),
        })
    }

    /// The setup payload of `key`, the dec sizes and the warm-ups' entries.
    pub fn setup_payload(key: &[u8], ct_len: u32, ss_len: u32, warm: &[&[u8]]) -> Vec<u8> {
        let mut v = (key.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(key);
        v.extend_from_slice(&ct_len.to_le_bytes());
        v.extend_from_slice(&ss_len.to_le_bytes());
        for e in warm {
            v.extend_from_slice(e);
        }
        v
    }
}

/// The stream seed of an untimed child the parent conducts (issue 36): the verify/dec
/// **preparer** (`--prepare`) and the output check's replay (`pqperf replay-child`) get
/// their seed as the `setup` payload of their control pipe, never on their argv (which a
/// timing process could read in `/proc` without the sandbox's PID namespace): the
/// [`pqperf_model::stream::SEED_BYTES`] bytes of the seed, or no byte for the reference's
/// fixed seed.
pub fn seed_payload(seed: Option<&[u8; pqperf_model::stream::SEED_BYTES]>) -> Vec<u8> {
    seed.map(|s| s.to_vec()).unwrap_or_default()
}

/// Parses a [`seed_payload`].
pub fn parse_seed_payload(
    b: &[u8],
) -> Result<Option<[u8; pqperf_model::stream::SEED_BYTES]>, String> {
    match b.len() {
        0 => Ok(None),
        pqperf_model::stream::SEED_BYTES => Ok(Some(b.try_into().expect("seed bytes"))),
        n => Err(format!(
            "a relayed seed of {n} bytes (expected 0 or {})",
            pqperf_model::stream::SEED_BYTES
        )),
    }
}

/// The preparer's report of a verify/dec pool: `PQPERF prep_key <hex>`, `PQPERF prep_sizes
/// <ct bytes> <ss bytes>` and one `PQPERF prep_entry <hex entry> <hex expected shared secret,
/// or ->` per entry, in pool order.
pub(super) fn prepare_lines(op: &Op, key: &[u8]) -> Vec<String> {
    let mut v = vec![format!("PQPERF\tprep_key\t{}", to_hex(key))];
    let (c, q) = match op {
        Op::KemDec { pool, ss_len, .. } => (pool.len, *ss_len as usize),
        Op::NKemDec(_, _, pool) => (pool.len, pool.ss_stride),
        _ => (0, 0),
    };
    v.push(format!("PQPERF\tprep_sizes\t{c} {q}"));
    match op {
        Op::SigVerify { pool, .. } | Op::NSignVerify(_, _, pool) => {
            for k in 0..pool.len() {
                let l = pool.lens[k] as usize;
                let s = pool.stride;
                let mut e = (l as u32).to_le_bytes().to_vec();
                e.extend_from_slice(&pool.sn.as_slice()[k * s..k * s + l]);
                e.extend_from_slice(&pool.m.as_slice()[k * 64..(k + 1) * 64]);
                v.push(format!("PQPERF\tprep_entry\t{}\t-", to_hex(&e)));
            }
        }
        Op::KemDec { pool, .. } | Op::NKemDec(_, _, pool) => {
            let (s, w) = (pool.stride, pool.ss_stride);
            for k in 0..pool.n {
                v.push(format!(
                    "PQPERF\tprep_entry\t{}\t{}",
                    to_hex(&pool.ct.as_slice()[k * s..k * s + pool.len]),
                    to_hex(&pool.expected[k * w..k * w + q])
                ));
            }
        }
        _ => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_travel_as_a_payload_of_the_seed_or_nothing() {
        let s = pqperf_model::stream::process_seed(7);
        assert_eq!(parse_seed_payload(&seed_payload(Some(&s))), Ok(Some(s)));
        assert_eq!(parse_seed_payload(&seed_payload(None)), Ok(None));
        assert!(parse_seed_payload(&[1, 2, 3]).is_err());
    }

    #[test]
    fn pools_cover_a_trial_within_their_bounds() {
        assert_eq!(pool_size(300, 2420), 604);
        assert_eq!(pool_size(1000, 2420), 1404);
        assert_eq!(pool_size(1_000_000, 32), POOL_MAX_ENTRIES as usize);
        assert_eq!(
            pool_size(10_000, 49_856),
            (POOL_MAX_BYTES / 49_856) as usize
        );
        assert_eq!(pool_size(0, 10), 4);
        assert_eq!(pool_size(10, u64::MAX), 1);
        let mut a = crate::DriverArgs::parse(
            &["l", "verify", "0", "1", "1", "300", "3", "--pool-max", "50"].map(String::from),
        )
        .unwrap();
        assert_eq!(pool_entries(&a, 2420), 50);
        a.pool_max = Some(0);
        assert_eq!(pool_entries(&a, 2420), 1);
        a.pool_max = Some(100_000);
        assert_eq!(pool_entries(&a, 2420), 604);
        a.pool_max = None;
        assert_eq!(pool_entries(&a, 2420), 604);
    }

    #[test]
    fn advance_writes_what_the_model_derives() {
        let base = pqperf_model::stream::head_of(&pqperf_model::stream::hash_message(80));
        let mut msgs = Messages::from_base(base);
        msgs.seek(5);
        for len in [80usize, 64, 8, 3, 0] {
            let mut got = pqperf_model::stream::hash_message(len as u64);
            let mut want = got.clone();
            let n = msgs.next;
            msgs.advance(&mut got);
            pqperf_model::stream::message_for_call(&base, n, &mut want);
            assert_eq!(got, want, "{len}");
        }
        let other = [9u8; 64];
        msgs.rebase(other);
        let mut got = [0u8; 64];
        let n = msgs.next;
        msgs.advance(&mut got);
        let mut want = other;
        pqperf_model::stream::message_for_call(&other, n, &mut want);
        assert_eq!(got[..8], want[..8]);
    }

    #[test]
    fn pools_hand_out_distinct_entries_in_turn() {
        let msgs = Messages::new(&pqperf_model::stream::REFERENCE_SEED);
        let mut p = SigPool::build(5, 8, &msgs, |m, sn| {
            sn.copy_from_slice(&m[..8]);
            Ok(Some(8))
        })
        .unwrap_or_else(|Fail(_, m)| panic!("{m}"));
        let mut seen = std::collections::HashSet::new();
        for _ in 0..5 {
            let (sn, m) = p.take();
            assert_eq!(sn, &m[..8]);
            assert!(seen.insert(m.to_vec()));
        }
        let (_, m) = p.take();
        assert!(!seen.insert(m.to_vec()), "rotates after 5");
        let mut c = 0u8;
        let mut ct = CtPool::build(3, 4, 2, |ct, ss| {
            c += 1;
            ct.fill(c);
            ss.fill(c + 10);
            Ok(4)
        })
        .unwrap_or_else(|Fail(_, m)| panic!("{m}"));
        let got: Vec<u8> = (0..4).map(|_| ct.take().0[0]).collect();
        assert_eq!(got, [1, 2, 3, 1]);
        assert_eq!(ct.expected, [11, 11, 12, 12, 13, 13]);
        // Relayed: two ciphertexts loaded at slots 0 and 1, outputs cleared.
        ct.take().1.fill(9);
        ct.load(&[7, 7, 7, 7, 8, 8, 8, 8]).unwrap();
        let (c0, o0) = ct.take();
        assert_eq!((c0.to_vec(), o0.to_vec()), (vec![7; 4], vec![0; 2]));
        o0.fill(5);
        assert_eq!(ct.take().0, [8; 4]);
        assert_eq!(ct.take().0, [7; 4], "rotates over the loaded entries");
        assert!(ct.load(&[1; 5]).is_err());
        assert!(ct.load(&[1; 16]).is_err(), "more than the pool holds");
        let mut d = pqperf_model::stream::OutputDigest::new();
        d.update(&[5, 5]);
        d.update(&[0, 0]);
        assert_eq!(ct.outputs_digest(2, 2), d.finish());
        // A relayed verify window: loaded entries in turn.
        let mut e = Vec::new();
        for k in 0..2u8 {
            e.extend_from_slice(&3u32.to_le_bytes());
            e.extend_from_slice(&[k; 3]);
            e.extend_from_slice(&[k + 1; 64]);
        }
        p.load(&e).unwrap();
        let (sn, m) = p.take();
        assert_eq!((sn.to_vec(), m[0]), (vec![0; 3], 1));
        assert_eq!(p.take().0, [1; 3]);
        assert!(p.load(&e[..10]).is_err());
        assert_eq!(from_hex(&to_hex(&[0, 255, 16])), Some(vec![0, 255, 16]));
        assert_eq!(from_hex("0g"), None);
        let mut calls = 0;
        let e = SigPool::build(2, 8, &msgs, |_, _| {
            calls += 1;
            Ok(None)
        });
        assert!(e.is_err());
        assert_eq!(calls, 16, "16 tries, then the setup fails");
    }
}
