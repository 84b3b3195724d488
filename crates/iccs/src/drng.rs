//! The ICCS DRNG (`drng.h`): SP 800-90A Hash_DRBG structure with SM3, seedlen 440 bits
//! (iccs-api-and-kat.md §2). No reseed, no nonce, no personalization, no additional input.
//!
//! Every `generate` call advances the state once, whatever the request size (including
//! 0 bits), so callers must reproduce the exact request sequence of the official drivers.
//! Shared verbatim with the C artifact: `no_std`, allocation-free, panic-free.

use crate::sm3::{self, Sm3};

/// Seed length in bytes (440 bits).
pub const SEEDLEN: usize = 55;

/// The C `DRNG_ctx`: three 440-bit big-endian integers, 165 bytes, no padding.
#[repr(C)]
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DrngCtx {
    /// Working value V.
    pub v: [u8; SEEDLEN],
    /// Constant C.
    pub c: [u8; SEEDLEN],
    /// Reseed counter, as a 440-bit big-endian integer.
    pub reseed_counter: [u8; SEEDLEN],
}

impl Default for DrngCtx {
    fn default() -> Self {
        Self::zeroed()
    }
}

/// `x = (x + 1) mod 2^440`, big-endian, without a branch on the value: the counter is
/// secret DRBG state, so the carry runs through all 55 bytes (seven 64-bit limbs, a few
/// cycles per SM3 block) instead of stopping at the first byte that does not wrap as the
/// official `inc_Big_Number` does (same result; `pqperf ct` checks the helpers).
fn inc_be(x: &mut [u8; SEEDLEN]) {
    let Some((head, rest)) = x.split_first_chunk_mut::<{ SEEDLEN % 8 }>() else {
        return;
    };
    let mut carry = 1u64;
    for limb in rest.rchunks_exact_mut(8) {
        if let Ok(l) = <&mut [u8; 8]>::try_from(limb) {
            let (sum, c) = u64::from_be_bytes(*l).overflowing_add(carry);
            *l = sum.to_be_bytes();
            carry = c as u64;
        }
    }
    let mut w = [0u8; 8];
    if let Some(low) = w.last_chunk_mut::<{ SEEDLEN % 8 }>() {
        *low = *head;
    }
    let sum = u64::from_be_bytes(w).wrapping_add(carry).to_be_bytes();
    if let Some(low) = sum.last_chunk::<{ SEEDLEN % 8 }>() {
        *head = *low;
    }
}

/// Hash_df(input parts) → 55 bytes: SM3(0x01 ‖ BE32(440) ‖ input) ‖ SM3(0x02 ‖ …), truncated.
fn hash_df(parts: &[&[u8]]) -> [u8; SEEDLEN] {
    let mut out = [0u8; SEEDLEN];
    for (counter, dst) in [1u8, 2u8].into_iter().zip(out.chunks_mut(32)) {
        let mut h = Sm3::new();
        h.update(&[counter]);
        h.update(&440u32.to_be_bytes());
        for p in parts {
            h.update(p);
        }
        for (o, v) in dst.iter_mut().zip(h.finalize()) {
            *o = v;
        }
    }
    out
}

impl DrngCtx {
    /// An all-zero context (the state of a C global before `init_random_number`).
    pub const fn zeroed() -> Self {
        DrngCtx {
            v: [0; SEEDLEN],
            c: [0; SEEDLEN],
            reseed_counter: [0; SEEDLEN],
        }
    }

    /// A context instantiated with `seed` (any length, including 0).
    pub fn new(seed: &[u8]) -> Self {
        let mut ctx = Self::zeroed();
        ctx.instantiate(seed);
        ctx
    }

    /// Instantiate: V = Hash_df(seed), C = Hash_df(0x00 ‖ V), reseed_counter = 1.
    pub fn instantiate(&mut self, seed: &[u8]) {
        *self = Self::zeroed();
        self.v = hash_df(&[seed]);
        self.c = hash_df(&[&[0u8], &self.v]);
        self.reseed_counter[SEEDLEN - 1] = 1;
    }

    /// Generate `nbits` bits into the first `ceil(nbits/8)` bytes of `out` (unused low bits
    /// of the last byte are zeroed) and advance the state. If `out` is shorter, only
    /// `out.len()` bytes are produced (callers check lengths); the state advances anyway.
    ///
    /// Does no work the official `SM3_DRNG_Generate` does not: the 440-bit `data` counter
    /// lives inside one pre-padded SM3 block (55 bytes, the `1` bit, the length 440), so each
    /// 32-byte output chunk is one compression of that block from the IV, written straight
    /// into `out`; the counter is incremented in seven 64-bit limbs with no branch on its
    /// (secret) value; the state update adds H, C and the reseed counter in one pass
    /// (`plus_Big_Number`).
    pub fn generate(&mut self, out: &mut [u8], nbits: u64) {
        let nbytes = nbits / 8 + !nbits.is_multiple_of(8) as u64;
        let n = if (out.len() as u64) < nbytes {
            out.len()
        } else {
            nbytes as usize
        };
        let (dst, _) = out.split_at_mut(n);
        let mut block = [0u8; 64];
        if let Some(head) = block.first_chunk_mut::<SEEDLEN>() {
            *head = self.v;
        }
        block[SEEDLEN] = 0x80;
        if let Some(len) = block.last_chunk_mut::<8>() {
            *len = sm3::length_field(8 * SEEDLEN as u64).to_be_bytes();
        }
        let mut chunks = dst.chunks_exact_mut(32);
        for chunk in &mut chunks {
            let mut st = sm3::IV;
            sm3::compress(&mut st, &block);
            for (o, s) in chunk.chunks_exact_mut(4).zip(st) {
                o.copy_from_slice(&s.to_be_bytes());
            }
            if let Some(ctr) = block.first_chunk_mut::<SEEDLEN>() {
                inc_be(ctr);
            }
        }
        let tail = chunks.into_remainder();
        if !tail.is_empty() {
            let mut st = sm3::IV;
            sm3::compress(&mut st, &block);
            let mut w = [0u8; 32];
            for (o, s) in w.chunks_exact_mut(4).zip(st) {
                o.copy_from_slice(&s.to_be_bytes());
            }
            if let Some(src) = w.get(..tail.len()) {
                tail.copy_from_slice(src);
            }
        }
        let rem = (nbits % 8) as u32;
        if rem != 0
            && n as u64 == nbytes
            && let Some(last) = dst.last_mut()
        {
            *last &= 0xFFu8 << (8 - rem);
        }
        let mut h = Sm3::new();
        h.update(&[3u8]);
        h.update(&self.v);
        let hh = h.finalize();
        let mut carry = 0u16;
        let mut hs = hh.iter().rev();
        for ((v, c), r) in self
            .v
            .iter_mut()
            .rev()
            .zip(self.c.iter().rev())
            .zip(self.reseed_counter.iter().rev())
        {
            let s = *v as u16 + *c as u16 + *r as u16 + *hs.next().unwrap_or(&0) as u16 + carry;
            *v = s as u8;
            carry = s >> 8;
        }
        inc_be(&mut self.reseed_counter);
    }
}
