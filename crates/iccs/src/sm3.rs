//! SM3 (GB/T 32905-2016) on MSB-first bit strings, with the ICCS length-field quirk.
//!
//! This is the single SM3 implementation of pqperf: the Rust API uses it directly and the C
//! artifact built by `pqperf-iccs-capi` compiles this very file into its objects. It is written
//! to be free of panics (no slice indexing that the optimiser cannot prove in range), because
//! the artifact links without the Rust core library.
//!
//! Bit strings: a string of `L` bits is stored in `ceil(L/8)` bytes, bit 0 being the `0x80`
//! bit of byte 0. Bits of the last byte beyond `L` are ignored. [`Sm3::update_bits`] appends
//! at any bit offset, so `A ‖ B` with `len(A) mod 8 ≠ 0` is plain bit-string concatenation.
//!
//! Length field: low word = `L mod 2^32`; high word = `((floor(L/512) >> 32) << 9) mod 2^32`
//! (ICCS `sm3_bit`), which equals standard SM3 for `L < 2^32` bits and differs above.

/// SM3 initial value.
pub const IV: [u32; 8] = [
    0x7380_166F,
    0x4914_B2B9,
    0x1724_42D7,
    0xDA8A_0600,
    0xA96F_30BC,
    0x1631_38AA,
    0xE38D_EE4D,
    0xB0FB_0E4E,
];

#[inline(always)]
fn p0(x: u32) -> u32 {
    x ^ x.rotate_left(9) ^ x.rotate_left(17)
}

#[inline(always)]
fn p1(x: u32) -> u32 {
    x ^ x.rotate_left(15) ^ x.rotate_left(23)
}

/// The SM3 compression function CF(V, B).
pub fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 68];
    for (wj, c) in w.iter_mut().zip(block.chunks_exact(4)) {
        let mut b = [0u8; 4];
        b.copy_from_slice(c);
        *wj = u32::from_be_bytes(b);
    }
    for j in 16..68 {
        w[j] = p1(w[j - 16] ^ w[j - 9] ^ w[j - 3].rotate_left(15))
            ^ w[j - 13].rotate_left(7)
            ^ w[j - 6];
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for j in 0..64 {
        let wj = w[j];
        let wj4 = w[j + 4];
        let (tj, ff, gg) = if j < 16 {
            (0x79CC_4519u32, a ^ b ^ c, e ^ f ^ g)
        } else {
            (
                0x7A87_9D8Au32,
                (a & b) | (a & c) | (b & c),
                (e & f) | (!e & g),
            )
        };
        let a12 = a.rotate_left(12);
        let ss1 = a12
            .wrapping_add(e)
            .wrapping_add(tj.rotate_left((j % 32) as u32))
            .rotate_left(7);
        let ss2 = ss1 ^ a12;
        let tt1 = ff.wrapping_add(d).wrapping_add(ss2).wrapping_add(wj ^ wj4);
        let tt2 = gg.wrapping_add(h).wrapping_add(ss1).wrapping_add(wj);
        d = c;
        c = b.rotate_left(9);
        b = a;
        a = tt1;
        h = g;
        g = f.rotate_left(19);
        f = e;
        e = p0(tt2);
    }
    for (s, x) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s ^= x;
    }
}

/// Incremental SM3 over a bit string.
#[derive(Clone)]
pub struct Sm3 {
    state: [u32; 8],
    /// Pending block; bits at and after the current position are always zero.
    buf: [u8; 64],
    /// Total number of bits absorbed so far (wraps at 2^64, like the C length type).
    bits: u64,
}

impl Default for Sm3 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sm3 {
    /// A fresh hasher.
    pub const fn new() -> Self {
        Sm3 {
            state: IV,
            buf: [0u8; 64],
            bits: 0,
        }
    }

    /// Number of bits absorbed so far.
    pub fn bit_len(&self) -> u64 {
        self.bits
    }

    fn flush(&mut self) {
        let blk = self.buf;
        compress(&mut self.state, &blk);
        self.buf = [0u8; 64];
    }

    /// Append the top `n` bits (1 ≤ n ≤ 8) of `b`; the other bits of `b` must be zero.
    fn push_partial(&mut self, b: u8, n: u32) {
        let pos = (self.bits % 512) as usize;
        let idx = pos / 8;
        let off = (pos % 8) as u32;
        if let Some(slot) = self.buf.get_mut(idx) {
            *slot |= b >> off;
        }
        let new_pos = pos + n as usize;
        let spill = off + n > 8;
        // Bits of `b` that did not fit into byte `idx` (only when off > 0).
        let rest = if off == 0 { 0 } else { b << (8 - off) };
        if new_pos >= 512 {
            self.flush();
            if spill {
                self.buf[0] = rest;
            }
        } else if spill && let Some(slot) = self.buf.get_mut(idx + 1) {
            *slot = rest;
        }
        self.bits = self.bits.wrapping_add(n as u64);
    }

    /// Append whole bytes when the current position is byte-aligned.
    fn push_aligned_bytes(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let pos = ((self.bits % 512) / 8) as usize;
            if pos == 0 {
                // Compress full blocks straight from the input.
                while let Some((blk, rest)) = data.split_first_chunk::<64>() {
                    compress(&mut self.state, blk);
                    self.bits = self.bits.wrapping_add(512);
                    data = rest;
                }
                if data.is_empty() {
                    return;
                }
            }
            let room = 64 - pos;
            let take = if data.len() < room { data.len() } else { room };
            let (head, rest) = data.split_at_checked(take).unwrap_or((data, &[]));
            if let Some(dst) = self.buf.get_mut(pos..pos + head.len()) {
                dst.copy_from_slice(head);
            }
            self.bits = self.bits.wrapping_add(8 * head.len() as u64);
            data = rest;
            if pos + head.len() == 64 {
                self.flush();
            }
        }
    }

    /// Append the first `nbits` bits of `data` (MSB-first). Never reads beyond
    /// `ceil(nbits/8)` bytes; if `data` is shorter than that, only `8 * data.len()` bits are
    /// appended (callers check lengths before).
    pub fn update_bits(&mut self, data: &[u8], nbits: u64) {
        let avail = (data.len() as u64).saturating_mul(8);
        let nbits = if nbits > avail { avail } else { nbits };
        let full = (nbits / 8) as usize;
        let rem = (nbits % 8) as u32;
        let (whole, tail) = data.split_at_checked(full).unwrap_or((data, &[]));
        if self.bits.is_multiple_of(8) {
            self.push_aligned_bytes(whole);
        } else {
            for &b in whole {
                self.push_partial(b, 8);
            }
        }
        if rem > 0
            && let Some(&last) = tail.first()
        {
            let mask = 0xFFu8 << (8 - rem);
            self.push_partial(last & mask, rem);
        }
    }

    /// Append whole bytes.
    pub fn update(&mut self, data: &[u8]) {
        if self.bits.is_multiple_of(8) {
            self.push_aligned_bytes(data);
        } else {
            for &b in data {
                self.push_partial(b, 8);
            }
        }
    }

    /// Pad (one `1` bit, zeros, 64-bit length field with the ICCS quirk) and return the digest.
    pub fn finalize(mut self) -> [u8; 32] {
        let total = self.bits;
        self.push_partial(0x80, 1);
        if self.bits % 512 > 448 {
            self.flush();
        }
        if let Some(dst) = self.buf.last_chunk_mut::<8>() {
            *dst = length_field(total).to_be_bytes();
        }
        self.flush();
        let mut out = [0u8; 32];
        for (o, s) in out.chunks_exact_mut(4).zip(self.state) {
            o.copy_from_slice(&s.to_be_bytes());
        }
        out
    }
}

/// The 64-bit length field the ICCS `sm3_bit` writes for an `L`-bit message: low word
/// `L mod 2^32`, high word `((floor(L/512) >> 32) << 9) mod 2^32` (standard SM3 writes `L`;
/// the two agree for `L < 2^32`).
pub const fn length_field(total_bits: u64) -> u64 {
    let hi = (((total_bits >> 9) >> 32) << 9) & 0xFFFF_FFFF;
    let lo = total_bits & 0xFFFF_FFFF;
    (hi << 32) | lo
}

/// SM3 of the first `nbits` bits of `data` (the ICCS `sm3_bit`).
pub fn sm3_bits(data: &[u8], nbits: u64) -> [u8; 32] {
    let mut h = Sm3::new();
    h.update_bits(data, nbits);
    h.finalize()
}

/// SM3 of a byte string.
pub fn sm3(data: &[u8]) -> [u8; 32] {
    let mut h = Sm3::new();
    h.update(data);
    h.finalize()
}

/// SM3 of the bit-string concatenation of `parts`, each `(bytes, bit length)`.
pub fn sm3_parts(parts: &[(&[u8], u64)]) -> [u8; 32] {
    let mut h = Sm3::new();
    for (d, n) in parts {
        h.update_bits(d, *n);
    }
    h.finalize()
}
