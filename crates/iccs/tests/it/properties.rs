//! Property tests: the bit-level SM3 against the `sm3` crate on byte strings, bit-aligned vs
//! byte-aligned equivalences, pseudoXOF prefix consistency, the artifact's own AES and Keccak
//! against the `aes` and `shake` crates, and the ICCS length-field quirk.

use pqperf_iccs::ctr_drbg::{Aes256Block, CtrDrbgCore};
use pqperf_iccs::keccak::Shake256 as SoftShake;
use pqperf_iccs::shake_prng::ShakePrngCore;
use pqperf_iccs::sm3::{Sm3, length_field, sm3, sm3_bits, sm3_parts};
use pqperf_iccs::soft_aes::SoftAes256;
use pqperf_iccs::{Drng, HqcPrng, NistDrbg, RustCryptoAes256, pseudohash, pseudoxof, sm3hash};
use proptest::prelude::*;
use sm3::Digest;

fn reference_sm3(data: &[u8]) -> [u8; 32] {
    sm3::Sm3::digest(data).into()
}

/// Bit string → bytes with the given bit offset handling: `bits` of `data` shifted so that they
/// start at bit `off` of a fresh buffer (used to build concatenations by hand).
fn concat_bits(a: &[u8], abits: u64, b: &[u8], bbits: u64) -> (Vec<u8>, u64) {
    let total = abits + bbits;
    let mut out = vec![0u8; total.div_ceil(8) as usize];
    let get = |d: &[u8], i: u64| (d[(i / 8) as usize] >> (7 - i % 8)) & 1;
    for i in 0..abits {
        out[(i / 8) as usize] |= get(a, i) << (7 - i % 8);
    }
    for i in 0..bbits {
        let j = abits + i;
        out[(j / 8) as usize] |= get(b, i) << (7 - j % 8);
    }
    (out, total)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn byte_aligned_sm3_matches_sm3_crate(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let want = reference_sm3(&data);
        prop_assert_eq!(sm3(&data), want);
        prop_assert_eq!(sm3_bits(&data, 8 * data.len() as u64), want);
        prop_assert_eq!(sm3hash(256, &data, 8 * data.len() as u64).unwrap(), want);
    }

    #[test]
    fn split_updates_match_one_shot(data in proptest::collection::vec(any::<u8>(), 0..400),
                                    cuts in proptest::collection::vec(0usize..400, 0..6)) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.sort();
        let mut h = Sm3::new();
        let mut prev = 0;
        for c in cuts.into_iter().chain([data.len()]) {
            h.update(&data[prev..c]);
            prev = c;
        }
        prop_assert_eq!(h.finalize(), reference_sm3(&data));
    }

    /// Ignored low bits of the last byte do not matter; a bit string of L bits equals the same
    /// bits given MSB-first with any garbage after them.
    #[test]
    fn stray_low_bits_are_ignored(data in proptest::collection::vec(any::<u8>(), 1..200),
                                  cut in 0u64..8, junk in any::<u8>()) {
        let l = 8 * data.len() as u64 - cut;
        let mut dirty = data.clone();
        let last = dirty.len() - 1;
        let keep = 0xFFu8.checked_shl(cut as u32).unwrap_or(0);
        dirty[last] = (dirty[last] & keep) | (junk & !keep);
        prop_assert_eq!(sm3_bits(&data, l), sm3_bits(&dirty, l));
    }

    /// Concatenation at a non-aligned offset (streamed) equals hashing the hand-built string.
    #[test]
    fn bit_concatenation_equals_hand_built(a in proptest::collection::vec(any::<u8>(), 0..80),
                                           acut in 0u64..8,
                                           b in proptest::collection::vec(any::<u8>(), 0..80),
                                           bcut in 0u64..8) {
        let abits = (8 * a.len() as u64).saturating_sub(acut);
        let bbits = (8 * b.len() as u64).saturating_sub(bcut);
        let (joined, total) = concat_bits(&a, abits, &b, bbits);
        prop_assert_eq!(sm3_parts(&[(&a, abits), (&b, bbits)]), sm3_bits(&joined, total));
        // and when the whole thing is byte-aligned, it is ordinary SM3 of the bytes
        if total % 8 == 0 {
            prop_assert_eq!(sm3_bits(&joined, total), reference_sm3(&joined));
        }
    }

    /// pseudoXOF: shorter outputs are prefixes of longer ones (up to the last-byte mask).
    #[test]
    fn pseudoxof_prefix_consistency(msg in proptest::collection::vec(any::<u8>(), 0..100),
                                    mcut in 0u64..8, n1 in 0u64..1200, extra in 0u64..1200) {
        let l = (8 * msg.len() as u64).saturating_sub(mcut);
        let n2 = n1 + extra;
        let mut o1 = vec![0u8; 200];
        let mut o2 = vec![0u8; 400];
        let k1 = pseudoxof(n1, &msg, l, &mut o1).unwrap();
        let k2 = pseudoxof(n2, &msg, l, &mut o2).unwrap();
        prop_assert_eq!(k1 as u64, n1.div_ceil(8));
        prop_assert!(k1 <= k2);
        if k1 > 0 {
            prop_assert_eq!(&o1[..k1 - 1], &o2[..k1 - 1]);
            let mask = if n1 % 8 == 0 { 0xFF } else { 0xFFu8 << (8 - n1 % 8) };
            prop_assert_eq!(o1[k1 - 1], o2[k1 - 1] & mask);
        }
        // nothing beyond ceil(n/8) bytes is written
        prop_assert!(o1[k1..].iter().all(|&b| b == 0));
    }

    /// Byte-aligned pseudohash/pseudoXOF equal the formulas spelled out with the `sm3` crate
    /// and a textbook HMAC (the self-test model of the method).
    #[test]
    fn byte_aligned_helpers_match_model(msg in proptest::collection::vec(any::<u8>(), 0..300)) {
        let l = 8 * msg.len() as u64;
        let key = pqperf_iccs::HMAC_KEY;
        let hmac = |x: &[u8]| -> [u8; 32] {
            let ipad: Vec<u8> = key.iter().map(|k| k ^ 0x36).collect();
            let opad: Vec<u8> = key.iter().map(|k| k ^ 0x5C).collect();
            let inner = reference_sm3(&[&ipad[..], x].concat());
            reference_sm3(&[&opad[..], &inner[..]].concat())
        };
        for d in [512i32, 768, 1024] {
            let dom = [(d / 256) as u8, 0];
            let k1 = hmac(&[&dom[..], &msg].concat());
            let h1 = reference_sm3(&[&msg[..], &dom].concat());
            let h2 = reference_sm3(&[k1, h1].concat());
            let mut want = [h1, h2].concat();
            if d >= 768 {
                let h3 = reference_sm3(&[h2, hmac(&h1)].concat());
                want.extend(h3);
                if d == 1024 {
                    want.extend(reference_sm3(&[hmac(&h2), h3, hmac(&h3)].concat()));
                }
            }
            let mut out = [0u8; 128];
            let n = pseudohash(d, &msg, l, &mut out).unwrap();
            prop_assert_eq!(&out[..n], &want[..]);
        }
        let mut want = Vec::new();
        for i in 1u32..=3 {
            want.extend(reference_sm3(&[&msg[..], &i.to_be_bytes()].concat()));
        }
        let mut out = [0u8; 96];
        pseudoxof(768, &msg, l, &mut out).unwrap();
        prop_assert_eq!(&out[..], &want[..]);
    }

    /// Non-aligned messages: pseudoXOF and pseudohash equal their definitions written with
    /// hand-built bit strings (counter / domain word spliced at bit offset L).
    #[test]
    fn non_aligned_helpers_match_bit_string_definitions(
        msg in proptest::collection::vec(any::<u8>(), 1..120), cut in 1u64..8) {
        let l = 8 * msg.len() as u64 - cut;
        let mut out = [0u8; 64];
        pseudoxof(512, &msg, l, &mut out).unwrap();
        for i in 1u32..=2 {
            let (s, n) = concat_bits(&msg, l, &i.to_be_bytes(), 32);
            prop_assert_eq!(&out[32 * (i as usize - 1)..32 * i as usize], &sm3_bits(&s, n)[..]);
        }
        let dom = [2u8, 0];
        let (md, mdn) = concat_bits(&msg, l, &dom, 16);
        let (dm, dmn) = concat_bits(&dom, 16, &msg, l);
        let h1 = sm3_bits(&md, mdn);
        let key = pqperf_iccs::HMAC_KEY;
        let ipad: Vec<u8> = key.iter().map(|k| k ^ 0x36).collect();
        let opad: Vec<u8> = key.iter().map(|k| k ^ 0x5C).collect();
        let (inner, inn) = concat_bits(&ipad, 512, &dm, dmn);
        let k1 = reference_sm3(&[&opad[..], &sm3_bits(&inner, inn)].concat());
        let h2 = reference_sm3(&[k1, h1].concat());
        let mut ph = [0u8; 64];
        pseudohash(512, &msg, l, &mut ph).unwrap();
        prop_assert_eq!(&ph[..], &[h1, h2].concat()[..]);
    }

    #[test]
    fn soft_aes_matches_aes_crate(key in any::<[u8; 32]>(), block in any::<[u8; 16]>()) {
        prop_assert_eq!(SoftAes256::with_key(&key).encrypt_block(&block),
                        RustCryptoAes256::with_key(&key).encrypt_block(&block));
    }

    #[test]
    fn soft_ctr_drbg_matches_aes_crate_drbg(entropy in any::<[u8; 32]>(),
                                            sizes in proptest::collection::vec(0usize..100, 1..6)) {
        let mut e = [0u8; 48];
        e[..32].copy_from_slice(&entropy);
        let mut a = CtrDrbgCore::<SoftAes256>::new(&e, Some(&[7u8; 48]));
        let mut b = NistDrbg::new(&e, Some(&[7u8; 48]));
        for n in sizes {
            let mut x = vec![0u8; n];
            let mut y = vec![0u8; n];
            a.fill(&mut x);
            b.fill(&mut y);
            prop_assert_eq!(x, y);
        }
    }

    #[test]
    fn soft_shake_matches_shake_crate(data in proptest::collection::vec(any::<u8>(), 0..500),
                                      sizes in proptest::collection::vec(0usize..300, 1..5)) {
        use shake::digest::{ExtendableOutput, Update, XofReader};
        let mut soft = SoftShake::new();
        soft.absorb(&data);
        let mut h = shake::Shake256::default();
        h.update(&data);
        let mut r = h.finalize_xof();
        for n in sizes {
            let mut x = vec![0u8; n];
            let mut y = vec![0u8; n];
            soft.squeeze(&mut x);
            r.read(&mut y);
            prop_assert_eq!(x, y);
        }
    }

    #[test]
    fn soft_hqc_prng_matches_shake_crate_prng(entropy in any::<[u8; 32]>(), pers in any::<bool>(),
                                              sizes in proptest::collection::vec(0usize..300, 1..5)) {
        let mut e = [0u8; 48];
        e[..32].copy_from_slice(&entropy);
        let p = [0x5Au8; 48];
        let p = pers.then_some(&p);
        let mut a = ShakePrngCore::<SoftShake>::new(&e, p);
        let mut b = HqcPrng::new(&e, p);
        for n in sizes {
            let mut x = vec![0u8; n];
            let mut y = vec![0u8; n];
            a.fill(&mut x);
            b.fill(&mut y);
            prop_assert_eq!(x, y);
        }
    }

    /// DRNG draws of n bits equal the first bits of the same-state byte draw.
    #[test]
    fn drng_bit_draw_is_masked_byte_draw(seed in proptest::collection::vec(any::<u8>(), 0..70),
                                         bits in 1u64..700) {
        let mut a = Drng::new(&seed);
        let mut b = Drng::new(&seed);
        let mut x = vec![0u8; 100];
        let mut y = vec![0u8; 100];
        let k = a.generate(&mut x, bits).unwrap();
        b.generate(&mut y, 8 * bits.div_ceil(8)).unwrap();
        prop_assert_eq!(&x[..k - 1], &y[..k - 1]);
        let mask = if bits % 8 == 0 { 0xFF } else { 0xFFu8 << (8 - bits % 8) };
        prop_assert_eq!(x[k - 1], y[k - 1] & mask);
        prop_assert!(x[k..].iter().all(|&v| v == 0));
        // the state advance does not depend on the request size
        prop_assert_eq!(a, b);
    }

    /// `DrngCtx::generate` against the Hash_DRBG definition written out with the `sm3` crate
    /// and schoolbook big-endian addition, from arbitrary states whose V ends in runs of
    /// 0xFF bytes (the data counter then carries across several bytes, up to a full wrap).
    #[test]
    fn drng_generate_matches_hash_drbg_model(v in any::<[u8; 55]>(), c in any::<[u8; 55]>(),
                                             rc in any::<[u8; 55]>(), ff_tail in 0usize..=55,
                                             bits in 0u64..1200) {
        let mut v = v;
        for b in v.iter_mut().rev().take(ff_tail) {
            *b = 0xFF;
        }
        let mut ctx = pqperf_iccs::DrngCtx { v, c, reseed_counter: rc };
        let nbytes = bits.div_ceil(8) as usize;
        let mut out = vec![0u8; nbytes];
        ctx.generate(&mut out, bits);
        let add = |acc: &mut [u8; 55], x: &[u8]| {
            let mut carry = 0u16;
            for i in 0..55 {
                let xi = if i < x.len() { x[x.len() - 1 - i] } else { 0 };
                let s = acc[54 - i] as u16 + xi as u16 + carry;
                acc[54 - i] = s as u8;
                carry = s >> 8;
            }
        };
        let mut want = Vec::new();
        let mut data = v;
        while want.len() < nbytes {
            want.extend_from_slice(&reference_sm3(&data));
            add(&mut data, &[1]);
        }
        want.truncate(nbytes);
        if bits % 8 != 0 {
            want[nbytes - 1] &= 0xFFu8 << (8 - bits % 8);
        }
        prop_assert_eq!(out, want);
        let mut pre = vec![3u8];
        pre.extend_from_slice(&v);
        let mut v2 = v;
        add(&mut v2, &reference_sm3(&pre));
        add(&mut v2, &c);
        add(&mut v2, &rc);
        let mut rc2 = rc;
        add(&mut rc2, &[1]);
        prop_assert_eq!(ctx.v, v2);
        prop_assert_eq!(ctx.reseed_counter, rc2);
        prop_assert_eq!(ctx.c, c);
    }
}

#[test]
fn hqc_stream_ignores_request_sizes() {
    let e = [3u8; 48];
    let mut a = HqcPrng::new(&e, None);
    let mut b = HqcPrng::new(&e, None);
    let mut x = [0u8; 200];
    a.fill(&mut x);
    let mut y = [0u8; 200];
    let (y1, y2) = y.split_at_mut(77);
    b.fill(y1);
    b.fill(&mut []);
    b.fill(y2);
    assert_eq!(x, y);
}

#[test]
fn ctr_drbg_requests_are_not_a_stream() {
    let e = [3u8; 48];
    let mut a = NistDrbg::new(&e, None);
    let mut b = NistDrbg::new(&e, None);
    let mut x = [0u8; 64];
    a.fill(&mut x);
    let mut y = [0u8; 64];
    let (y1, y2) = y.split_at_mut(32);
    b.fill(y1);
    b.fill(y2);
    assert_eq!(x[..32], y[..32]);
    assert_ne!(x[32..], y[32..]);
    assert_eq!(a.reseed_counter(), 2);
    assert_eq!(b.reseed_counter(), 3);
}

/// The ICCS length field: standard below 2^32 bits, high word of 0 for 2^32 ≤ L < 2^41
/// (inputs of 512 MiB … 256 GiB), `((L/512) >> 32) << 9` above.
#[test]
fn length_field_quirk() {
    for l in [0u64, 1, 24, 512, 0xFFFF_FFFF] {
        assert_eq!(length_field(l), l);
    }
    assert_eq!(length_field(1 << 32), 0);
    assert_eq!(length_field((1 << 33) + 5), 5);
    assert_eq!(length_field((1 << 41) - 1), 0xFFFF_FFFF);
    assert_eq!(length_field(1 << 41), 512 << 32);
    assert_eq!(length_field((3 << 41) | 7), (3 * 512) << 32 | 7);
    assert_eq!(
        length_field(u64::MAX),
        ((u64::MAX >> 41) << 9 & 0xFFFF_FFFF) << 32 | 0xFFFF_FFFF
    );
}
