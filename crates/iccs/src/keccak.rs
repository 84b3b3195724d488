//! Keccak-f[1600] and an incremental SHAKE-256 sponge, used only by the C artifact's HQC KAT
//! generator (the Rust API uses the `shake` crate; tests cross-check the two).

/// Round constants, generated at compile time from the degree-8 LFSR of FIPS 202 §3.2.5.
const RC: [u64; 24] = {
    let mut rc = [0u64; 24];
    let mut r: u8 = 1;
    let mut i = 0;
    while i < 24 {
        let mut c = 0u64;
        let mut j = 0;
        while j < 7 {
            if r & 1 != 0 {
                c |= 1u64 << ((1u32 << j) - 1);
            }
            r = (r << 1) ^ (((r >> 7) & 1) * 0x71);
            j += 1;
        }
        rc[i] = c;
        i += 1;
    }
    rc
};

/// Rotation offsets ρ indexed by lane x + 5y, from the (x, y) walk of FIPS 202 §3.2.2.
const RHO: [u32; 25] = {
    let mut rho = [0u32; 25];
    let (mut x, mut y) = (1usize, 0usize);
    let mut t = 0u32;
    while t < 24 {
        rho[x + 5 * y] = ((t + 1) * (t + 2) / 2) % 64;
        let nx = y;
        let ny = (2 * x + 3 * y) % 5;
        x = nx;
        y = ny;
        t += 1;
    }
    rho
};

/// The Keccak-f[1600] permutation; lane (x, y) is `a[x + 5y]`.
pub fn keccak_f1600(a: &mut [u64; 25]) {
    for rc in RC {
        // θ
        let mut c = [0u64; 5];
        for x in 0..5 {
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        }
        for x in 0..5 {
            let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
            for y in 0..5 {
                a[x + 5 * y] ^= d;
            }
        }
        // ρ and π
        let mut b = [0u64; 25];
        for x in 0..5 {
            for y in 0..5 {
                b[y + 5 * ((2 * x + 3 * y) % 5)] = a[x + 5 * y].rotate_left(RHO[x + 5 * y]);
            }
        }
        // χ
        for y in 0..5 {
            for x in 0..5 {
                a[x + 5 * y] = b[x + 5 * y] ^ (!b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
            }
        }
        // ι
        a[0] ^= rc;
    }
}

/// SHAKE-256 rate in bytes.
pub const SHAKE256_RATE: usize = 136;

/// Incremental SHAKE-256: absorb any number of times, finalize once, squeeze any number of
/// times (the output is one continuous stream).
#[derive(Clone)]
pub struct Shake256 {
    a: [u64; 25],
    /// Absorb: bytes already absorbed into the current block. Squeeze: bytes already taken.
    pos: usize,
    squeezing: bool,
}

impl Default for Shake256 {
    fn default() -> Self {
        Self::new()
    }
}

impl Shake256 {
    /// A fresh sponge.
    pub const fn new() -> Self {
        Shake256 {
            a: [0; 25],
            pos: 0,
            squeezing: false,
        }
    }

    fn xor_byte(&mut self, i: usize, b: u8) {
        if let Some(l) = self.a.get_mut(i / 8) {
            *l ^= (b as u64) << (8 * (i % 8));
        }
    }

    fn get_byte(&self, i: usize) -> u8 {
        match self.a.get(i / 8) {
            Some(l) => (l >> (8 * (i % 8))) as u8,
            None => 0,
        }
    }

    /// Absorb bytes (ignored after `finalize`).
    pub fn absorb(&mut self, data: &[u8]) {
        if self.squeezing {
            return;
        }
        for &b in data {
            self.xor_byte(self.pos, b);
            self.pos += 1;
            if self.pos == SHAKE256_RATE {
                keccak_f1600(&mut self.a);
                self.pos = 0;
            }
        }
    }

    /// Pad (domain bits 1111, then pad10*1) and switch to squeezing.
    pub fn finalize(&mut self) {
        if self.squeezing {
            return;
        }
        self.xor_byte(self.pos, 0x1F);
        self.xor_byte(SHAKE256_RATE - 1, 0x80);
        keccak_f1600(&mut self.a);
        self.pos = 0;
        self.squeezing = true;
    }

    /// Squeeze the next `out.len()` bytes of the stream (finalizes first if needed).
    pub fn squeeze(&mut self, out: &mut [u8]) {
        if !self.squeezing {
            self.finalize();
        }
        for o in out.iter_mut() {
            if self.pos == SHAKE256_RATE {
                keccak_f1600(&mut self.a);
                self.pos = 0;
            }
            *o = self.get_byte(self.pos);
            self.pos += 1;
        }
    }
}
