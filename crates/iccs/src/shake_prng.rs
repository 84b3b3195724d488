//! The SHAKE-256 KAT generator PQClean uses for HQC (`nistkat-rng: hqc`,
//! `test/common/hqckatrng.c`): init absorbs the 48-byte entropy input, the optional 48-byte
//! personalization string and one domain byte 0x01, then finalizes; every request squeezes
//! the next bytes of the same output stream (so request sizes do not matter, unlike the
//! CTR DRBG). Release discards the state.
//!
//! Generic over the sponge so that the Rust API (`shake` crate) and the C artifact
//! (`keccak` module) share this one implementation.

/// Domain byte appended after the seed material.
pub const HQC_PRNG_DOMAIN: u8 = 0x01;

/// An incremental SHAKE-256: absorb*, finalize, squeeze*.
pub trait Shake256Sponge {
    /// A fresh sponge.
    fn fresh() -> Self;
    /// Absorb bytes (before `finish`).
    fn absorb_bytes(&mut self, data: &[u8]);
    /// Finalize absorbing.
    fn finish(&mut self);
    /// Next bytes of the output stream.
    fn squeeze_bytes(&mut self, out: &mut [u8]);
}

impl Shake256Sponge for crate::keccak::Shake256 {
    fn fresh() -> Self {
        crate::keccak::Shake256::new()
    }
    fn absorb_bytes(&mut self, data: &[u8]) {
        self.absorb(data)
    }
    fn finish(&mut self) {
        self.finalize()
    }
    fn squeeze_bytes(&mut self, out: &mut [u8]) {
        self.squeeze(out)
    }
}

/// The HQC KAT generator state.
#[derive(Clone)]
pub struct ShakePrngCore<S: Shake256Sponge> {
    sponge: S,
}

impl<S: Shake256Sponge> ShakePrngCore<S> {
    /// `hqc_kat_init(entropy, personalization, 256)`.
    pub fn new(entropy: &[u8; 48], personalization: Option<&[u8; 48]>) -> Self {
        let mut sponge = S::fresh();
        sponge.absorb_bytes(entropy);
        if let Some(p) = personalization {
            sponge.absorb_bytes(p);
        }
        sponge.absorb_bytes(&[HQC_PRNG_DOMAIN]);
        sponge.finish();
        ShakePrngCore { sponge }
    }

    /// `randombytes(out, out.len())`.
    pub fn fill(&mut self, out: &mut [u8]) {
        self.sponge.squeeze_bytes(out);
    }
}
