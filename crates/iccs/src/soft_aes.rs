//! A small, table-light AES-256 block encryption (FIPS 197), used only by the C artifact's
//! NIST CTR DRBG (the Rust API uses the `aes` crate; tests cross-check the two).
//!
//! Not constant-time (S-box lookups): it only ever processes public KAT seeds.

/// Multiply by x in GF(2^8) with the AES polynomial.
const fn xtime(a: u8) -> u8 {
    (a << 1) ^ (((a >> 7) & 1) * 0x1B)
}

const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    p
}

/// The AES S-box, computed at compile time (inverse in GF(2^8), then the affine map).
const SBOX: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0usize;
    while i < 256 {
        // inverse by exponentiation: a^254
        let a = i as u8;
        let mut inv = 1u8;
        let mut k = 0;
        while k < 254 {
            inv = gmul(inv, a);
            k += 1;
        }
        if a == 0 {
            inv = 0;
        }
        let s = inv
            ^ inv.rotate_left(1)
            ^ inv.rotate_left(2)
            ^ inv.rotate_left(3)
            ^ inv.rotate_left(4)
            ^ 0x63;
        t[i] = s;
        i += 1;
    }
    t
};

/// An expanded AES-256 key (15 round keys).
#[derive(Clone)]
pub struct SoftAes256 {
    rk: [[u8; 16]; 15],
}

impl SoftAes256 {
    /// Key expansion.
    pub fn new(key: &[u8; 32]) -> Self {
        let mut w = [[0u8; 4]; 60];
        for (wi, k) in w.iter_mut().zip(key.chunks_exact(4)) {
            wi.copy_from_slice(k);
        }
        let mut rcon = 1u8;
        for i in 8..60 {
            let mut t = w[i - 1];
            if i % 8 == 0 {
                t = [
                    SBOX[t[1] as usize] ^ rcon,
                    SBOX[t[2] as usize],
                    SBOX[t[3] as usize],
                    SBOX[t[0] as usize],
                ];
                rcon = xtime(rcon);
            } else if i % 8 == 4 {
                t = [
                    SBOX[t[0] as usize],
                    SBOX[t[1] as usize],
                    SBOX[t[2] as usize],
                    SBOX[t[3] as usize],
                ];
            }
            let p = w[i - 8];
            w[i] = [p[0] ^ t[0], p[1] ^ t[1], p[2] ^ t[2], p[3] ^ t[3]];
        }
        let mut rk = [[0u8; 16]; 15];
        for (r, ws) in rk.iter_mut().zip(w.chunks_exact(4)) {
            for (dst, src) in r.chunks_exact_mut(4).zip(ws) {
                dst.copy_from_slice(src);
            }
        }
        SoftAes256 { rk }
    }

    /// Encrypt one block.
    pub fn encrypt(&self, input: &[u8; 16]) -> [u8; 16] {
        let mut s = *input;
        xor16(&mut s, &self.rk[0]);
        for round in 1..15 {
            // SubBytes + ShiftRows (state is column-major: byte 4c + r is row r, column c)
            let mut t = [0u8; 16];
            for c in 0..4 {
                for r in 0..4 {
                    t[4 * c + r] = SBOX[s[4 * ((c + r) % 4) + r] as usize];
                }
            }
            if round != 14 {
                for c in 0..4 {
                    let a0 = t[4 * c];
                    let a1 = t[4 * c + 1];
                    let a2 = t[4 * c + 2];
                    let a3 = t[4 * c + 3];
                    let all = a0 ^ a1 ^ a2 ^ a3;
                    t[4 * c] = a0 ^ all ^ xtime(a0 ^ a1);
                    t[4 * c + 1] = a1 ^ all ^ xtime(a1 ^ a2);
                    t[4 * c + 2] = a2 ^ all ^ xtime(a2 ^ a3);
                    t[4 * c + 3] = a3 ^ all ^ xtime(a3 ^ a0);
                }
            }
            s = t;
            xor16(&mut s, &self.rk[round]);
        }
        s
    }
}

fn xor16(s: &mut [u8; 16], k: &[u8; 16]) {
    for (a, b) in s.iter_mut().zip(k) {
        *a ^= b;
    }
}
