//! NIST SP 800-90A AES-256 CTR_DRBG exactly as NIST's PQCgenKAT `rng.c` and PQClean's
//! `test/common/nistkatrng.c` use it (no derivation function, 48-byte entropy input,
//! optional 48-byte personalization XORed in, no reseed).
//!
//! Generate(n bytes): for each 16-byte block, increment V (128-bit big-endian) and output
//! AES-256(Key, V), the last block truncated; then Update(no data) and count the request.
//! Update(data): three blocks AES(Key, ++V), XOR the 48 bytes with `data` (if any), then
//! Key = first 32 bytes, V = last 16.
//!
//! Generic over the block cipher so that the Rust API (the `aes` crate) and the C artifact
//! (`soft_aes`) share this one implementation.

/// AES-256 single-block encryption, as the DRBG needs it.
pub trait Aes256Block {
    /// Expand a key.
    fn with_key(key: &[u8; 32]) -> Self;
    /// Encrypt one block.
    fn encrypt_block(&self, block: &[u8; 16]) -> [u8; 16];
}

impl Aes256Block for crate::soft_aes::SoftAes256 {
    fn with_key(key: &[u8; 32]) -> Self {
        crate::soft_aes::SoftAes256::new(key)
    }
    fn encrypt_block(&self, block: &[u8; 16]) -> [u8; 16] {
        self.encrypt(block)
    }
}

fn increment_be(v: &mut [u8; 16]) {
    for b in v.iter_mut().rev() {
        let (s, carry) = b.overflowing_add(1);
        *b = s;
        if !carry {
            break;
        }
    }
}

/// The DRBG state (key schedule cached; re-expanded whenever the key changes).
#[derive(Clone)]
pub struct CtrDrbgCore<A: Aes256Block> {
    key: [u8; 32],
    v: [u8; 16],
    cipher: A,
    reseed_counter: u64,
}

impl<A: Aes256Block> CtrDrbgCore<A> {
    /// The state before any `init` (Key = 0, V = 0), as a zero-initialised C global.
    pub fn zeroed() -> Self {
        CtrDrbgCore {
            key: [0; 32],
            v: [0; 16],
            cipher: A::with_key(&[0; 32]),
            reseed_counter: 0,
        }
    }

    /// `randombytes_init(entropy, personalization, 256)`.
    pub fn new(entropy: &[u8; 48], personalization: Option<&[u8; 48]>) -> Self {
        let mut d = Self::zeroed();
        d.init(entropy, personalization);
        d
    }

    /// Re-instantiate in place.
    pub fn init(&mut self, entropy: &[u8; 48], personalization: Option<&[u8; 48]>) {
        let mut seed = *entropy;
        if let Some(p) = personalization {
            for (s, x) in seed.iter_mut().zip(p) {
                *s ^= x;
            }
        }
        self.key = [0; 32];
        self.v = [0; 16];
        self.cipher = A::with_key(&self.key);
        self.update(Some(&seed));
        self.reseed_counter = 1;
    }

    fn update(&mut self, data: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for blk in temp.chunks_exact_mut(16) {
            increment_be(&mut self.v);
            blk.copy_from_slice(&self.cipher.encrypt_block(&self.v));
        }
        if let Some(d) = data {
            for (t, x) in temp.iter_mut().zip(d) {
                *t ^= x;
            }
        }
        let (k, v) = temp.split_at(32);
        self.key.copy_from_slice(k);
        self.v.copy_from_slice(v);
        self.cipher = A::with_key(&self.key);
    }

    /// `randombytes(out, out.len())`: fill `out` and update the state (one request).
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(16) {
            increment_be(&mut self.v);
            let blk = self.cipher.encrypt_block(&self.v);
            for (o, b) in chunk.iter_mut().zip(blk) {
                *o = b;
            }
        }
        self.update(None);
        self.reseed_counter = self.reseed_counter.wrapping_add(1);
    }

    /// Number of requests since instantiation, plus one (SP 800-90A `reseed_counter`).
    pub fn reseed_counter(&self) -> u64 {
        self.reseed_counter
    }
}
