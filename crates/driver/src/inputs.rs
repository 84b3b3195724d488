//! Inputs the candidate has not seen (issue 36, "no repeated inputs"): a timed call never gets
//! the input of an earlier call of its trial, so a library that caches its outputs by input
//! gains nothing.
//!
//! - **sign**: call `n` of the process signs the process's base message with `u64_le(n)`
//!   XORed into its first 8 bytes ([`Messages`], `pqperf_model::stream::message_for_call`):
//!   one 8-byte store before each call, no message repeats in the process.
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
    next: u64,
}

impl Messages {
    pub(super) fn new(seed: &[u8; pqperf_model::stream::SEED_BYTES]) -> Messages {
        Messages {
            base: pqperf_model::stream::base_message(seed),
            next: 0,
        }
    }

    /// The message of call `n` (0, 1, …) of the process.
    pub(super) fn message(&self, n: u64) -> [u8; 64] {
        let mut m = self.base;
        pqperf_model::stream::message_for_call(&self.base, n, &mut m);
        m
    }

    /// Writes the next call's message into `m` (64 bytes).
    #[inline(always)]
    pub(super) fn advance(&mut self, m: &mut [u8]) {
        pqperf_model::stream::message_for_call(&self.base, self.next, m);
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

    pub(super) fn guards_intact(&self) -> bool {
        self.sn.guards_intact() && self.m.guards_intact()
    }
}

/// Ciphertexts of distinct encapsulations, for dec.
pub(super) struct CtPool {
    /// `n` ciphertexts, `stride` bytes apart (each `len` bytes long).
    pub(super) ct: GuardedBuf,
    pub(super) stride: usize,
    pub(super) len: usize,
    pub(super) n: usize,
    pub(super) next: usize,
}

impl CtPool {
    /// Fills a pool of `n` entries with `enc(ct)` (returning the ciphertext length).
    pub(super) fn build(
        n: usize,
        stride: usize,
        mut enc: impl FnMut(&mut [u8]) -> R<u64>,
    ) -> R<CtPool> {
        let mut p = CtPool {
            ct: gb((n * stride) as u64)?,
            stride,
            len: stride,
            n,
            next: 0,
        };
        for k in 0..n {
            let l = enc(&mut p.ct.as_mut_slice()[k * stride..(k + 1) * stride])? as usize;
            if k > 0 && l != p.len {
                return Err(setup("setup encapsulation: ciphertext lengths differ"));
            }
            p.len = l.min(stride);
        }
        Ok(p)
    }

    /// The next ciphertext.
    #[inline(always)]
    pub(super) fn take(&mut self) -> &mut [u8] {
        let k = self.next;
        self.next = if k + 1 == self.n { 0 } else { k + 1 };
        let s = self.stride;
        &mut self.ct.as_mut_slice()[k * s..k * s + self.len]
    }

    pub(super) fn guards_intact(&self) -> bool {
        self.ct.guards_intact()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut ct = CtPool::build(3, 4, |ct| {
            c += 1;
            ct.fill(c);
            Ok(4)
        })
        .unwrap_or_else(|Fail(_, m)| panic!("{m}"));
        let got: Vec<u8> = (0..4).map(|_| ct.take()[0]).collect();
        assert_eq!(got, [1, 2, 3, 1]);
        let mut calls = 0;
        let e = SigPool::build(2, 8, &msgs, |_, _| {
            calls += 1;
            Ok(None)
        });
        assert!(e.is_err());
        assert_eq!(calls, 16, "16 tries, then the setup fails");
    }
}
