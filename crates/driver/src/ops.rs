//! The prepared operation ([`Op`]) called in the timed loop (method §4.4): one variant per API
//! and operation, each call checking return codes and lengths; signature statistics.

use super::*;

/// Signature statistics printed after the trials.
#[derive(Default)]
pub(super) struct SigStats {
    pub(super) sign_failures_retried: u64,
    pub(super) message_tweaks: u64,
    pub(super) signature_length_excess: u64,
    pub(super) verify_rejections: u64,
    /// Pool positions of the calls whose verify rejected, in the current relayed window (the
    /// parent compares them with the entries it tampered with, `inputs::Relay`).
    pub(super) rejected: pqperf_model::stream::Rejections,
}

/// The prepared operation called in the timed loop (§4.4).
pub(super) enum Op {
    SigKeygen(SigApi, GuardedBuf, GuardedBuf),
    SigSign {
        api: SigApi,
        sk: GuardedBuf,
        sk_len: u64,
        m: GuardedBuf,
        msgs: Messages,
        sn: GuardedBuf,
    },
    SigVerify {
        api: SigApi,
        pk: GuardedBuf,
        pk_len: u64,
        pool: SigPool,
    },
    KemKeygen(KemApi, GuardedBuf, GuardedBuf),
    KemEnc {
        api: KemApi,
        pk: GuardedBuf,
        pk_len: u64,
        ss: GuardedBuf,
        ct: GuardedBuf,
    },
    KemDec {
        api: KemApi,
        sk: GuardedBuf,
        sk_len: u64,
        pool: CtPool,
        ss_len: u64,
    },
    NSignKeygen(NistSign, GuardedBuf, GuardedBuf),
    NSignSign(NistSign, GuardedBuf, Vec<u8>, Messages, GuardedBuf),
    NSignVerify(NistSign, GuardedBuf, SigPool),
    NKemKeygen(NistKem, GuardedBuf, GuardedBuf),
    NKemEnc(NistKem, GuardedBuf, GuardedBuf, GuardedBuf),
    NKemDec(NistKem, GuardedBuf, CtPool),
    Hash {
        api: HashApi,
        bits: u32,
        msg: GuardedBuf,
        /// The head of each call's message (`pqperf_model::stream::hash_message`).
        msgs: Messages,
        digest: GuardedBuf,
    },
    Kex(Box<Kex>),
}

impl Op {
    /// One call of the operation, its return code and lengths checked.
    pub(super) fn call(&mut self, st: &mut SigStats) -> Result<(), String> {
        self.call_inline(st)
    }

    /// `n` calls of the operation (the reference trials' loop). The variant is matched once,
    /// outside the loop, and each arm's loop has the call inlined, so an empty call costs
    /// about what it costs in a C loop (see the driver benchmark).
    pub(super) fn call_n(&mut self, n: u64, st: &mut SigStats) -> Result<(), String> {
        macro_rules! looped {
            ($($v:ident),*) => {
                match self {
                    $(Op::$v { .. } => {
                        for _ in 0..n {
                            self.call_inline(st)?;
                        }
                    })*
                    _ => {
                        for _ in 0..n {
                            self.call(st)?;
                        }
                    }
                }
            };
        }
        looped!(
            SigKeygen,
            SigSign,
            SigVerify,
            KemKeygen,
            KemEnc,
            KemDec,
            NSignKeygen,
            NSignSign,
            NSignVerify,
            NKemKeygen,
            NKemEnc,
            NKemDec,
            Hash
        );
        Ok(())
    }

    #[inline(always)]
    fn call_inline(&mut self, st: &mut SigStats) -> Result<(), String> {
        let e = |e: pqperf_ffi::dl::DlError| e.to_string();
        match self {
            Op::SigKeygen(api, pk, sk) => {
                let o = api
                    .keygen(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(e)?;
                if o.rc != 0 || o.pk_len > api.sizes.pk || o.sk_len > api.sizes.sk {
                    return Err(format!("sig_keygen rc {}", o.rc));
                }
            }
            Op::SigSign {
                api,
                sk,
                sk_len,
                m,
                msgs,
                sn,
            } => {
                msgs.advance(m.as_mut_slice());
                for _ in 0..64 {
                    let (rc, len) = api
                        .sign(slice(sk, *sk_len), m.as_mut_slice(), sn.as_mut_slice())
                        .map_err(e)?;
                    if rc == 0 {
                        if len > api.sizes.sn + 4096 {
                            return Err(format!("signature length {len} exceeds capacity"));
                        }
                        return Ok(());
                    }
                    st.sign_failures_retried += 1;
                }
                return Err("sig_sign failed 64 times".into());
            }
            Op::SigVerify {
                api,
                pk,
                pk_len,
                pool,
            } => {
                let k = pool.position();
                let (sn, m) = pool.take();
                let rc = api.verify(slice(pk, *pk_len), sn, m);
                if rc != 0 {
                    st.verify_rejections += 1;
                    st.rejected.push(k as u64);
                }
            }
            Op::KemKeygen(api, pk, sk) => {
                let o = api
                    .keygen(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(e)?;
                if o.rc != 0 || o.pk_len > api.sizes.pk || o.sk_len > api.sizes.sk {
                    return Err(format!("kem_keygen rc {}", o.rc));
                }
            }
            Op::KemEnc {
                api,
                pk,
                pk_len,
                ss,
                ct,
            } => {
                let o = api
                    .enc(slice(pk, *pk_len), ss.as_mut_slice(), ct.as_mut_slice())
                    .map_err(e)?;
                if o.rc != 0 || o.ss_len > api.sizes.ss || o.ct_len > api.sizes.ct {
                    return Err(format!("kem_enc rc {}", o.rc));
                }
            }
            Op::KemDec {
                api,
                sk,
                sk_len,
                pool,
                ss_len,
            } => {
                let (ct, ss) = pool.take();
                let (rc, l) = api.dec(slice(sk, *sk_len), ct, ss).map_err(e)?;
                if rc != 0 || l > api.sizes.ss || l != *ss_len {
                    return Err(format!("kem_dec rc {rc}"));
                }
            }
            Op::NSignKeygen(api, pk, sk) => {
                let rc = api
                    .keypair(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(e)?;
                if rc != 0 {
                    return Err(format!("crypto_sign_keypair rc {rc}"));
                }
            }
            Op::NSignSign(api, sk, m, msgs, sig) => {
                msgs.advance(m);
                for _ in 0..64 {
                    let (rc, len) = api
                        .signature(sig.as_mut_slice(), m, sk.as_slice())
                        .map_err(e)?;
                    if rc == 0 {
                        if len > api.sizes.sig + 4096 {
                            return Err(format!("signature length {len} exceeds capacity"));
                        }
                        return Ok(());
                    }
                    st.sign_failures_retried += 1;
                }
                return Err("crypto_sign_signature failed 64 times".into());
            }
            Op::NSignVerify(api, pk, pool) => {
                let k = pool.position();
                let (sig, m) = pool.take();
                let rc = api.verify(sig, m, pk.as_slice()).map_err(e)?;
                if rc != 0 {
                    st.verify_rejections += 1;
                    st.rejected.push(k as u64);
                }
            }
            Op::NKemKeygen(api, pk, sk) => {
                let rc = api
                    .keypair(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(e)?;
                if rc != 0 {
                    return Err(format!("crypto_kem_keypair rc {rc}"));
                }
            }
            Op::NKemEnc(api, pk, ct, ss) => {
                let rc = api
                    .enc(ct.as_mut_slice(), ss.as_mut_slice(), pk.as_slice())
                    .map_err(e)?;
                if rc != 0 {
                    return Err(format!("crypto_kem_enc rc {rc}"));
                }
            }
            Op::NKemDec(api, sk, pool) => {
                let (ct, ss) = pool.take();
                let rc = api.dec(ss, ct, sk.as_slice()).map_err(e)?;
                if rc != 0 {
                    return Err(format!("crypto_kem_dec rc {rc}"));
                }
            }
            Op::Hash {
                api,
                bits,
                msg,
                msgs,
                digest,
            } => {
                msgs.advance(msg.as_mut_slice());
                let n = msg.len() as u64 * 8;
                let rc = api
                    .hash(*bits, msg.as_slice(), n, digest.as_mut_slice())
                    .map_err(e)?;
                if rc != 0 {
                    return Err(format!("CryptHash rc {rc}"));
                }
            }
            Op::Kex(k) => k.exchange(Step::Whole, None)?,
        }
        Ok(())
    }

    /// What the last call produced (untimed: the digest of timed outputs, `PQPERF
    /// output_digest`): keys, signature, ciphertext and shared secret, digest; for verify the
    /// count of rejections so far; `None` for a key exchange.
    pub(super) fn output(&self, st: &SigStats) -> Option<Vec<u8>> {
        let cat = |bs: &[&GuardedBuf]| bs.iter().flat_map(|b| b.as_slice().to_vec()).collect();
        Some(match self {
            Op::SigKeygen(_, a, b)
            | Op::KemKeygen(_, a, b)
            | Op::NSignKeygen(_, a, b)
            | Op::NKemKeygen(_, a, b) => cat(&[a, b]),
            Op::SigSign { sn, .. } | Op::NSignSign(_, _, _, _, sn) => cat(&[sn]),
            Op::SigVerify { .. } | Op::NSignVerify(..) => {
                st.verify_rejections.to_le_bytes().to_vec()
            }
            Op::KemEnc { ct, ss, .. } | Op::NKemEnc(_, _, ct, ss) => cat(&[ct, ss]),
            Op::KemDec { pool, .. } | Op::NKemDec(_, _, pool) => pool.last_out().to_vec(),
            Op::Hash { digest, .. } => cat(&[digest]),
            Op::Kex(_) => return None,
        })
    }

    /// Makes the next call take the input of input index `index` (its message, or pool
    /// entry `index mod entries`; `pqperf_model::stream::CallLayout::input_index`). Called
    /// outside the timed loops, at the start of each window.
    pub(super) fn seek_input(&mut self, index: u64) {
        match self {
            Op::SigSign { msgs, .. } | Op::NSignSign(_, _, _, msgs, _) | Op::Hash { msgs, .. } => {
                msgs.seek(index)
            }
            Op::SigVerify { pool, .. } | Op::NSignVerify(_, _, pool) => pool.seek(index),
            Op::KemDec { pool, .. } | Op::NKemDec(_, _, pool) => pool.seek(index),
            _ => {}
        }
    }

    /// Makes the messages of a signing or hashing process derive from `base` (the window's
    /// own base message, `pqperf_model::stream::window_message_base`): the whole 64-byte
    /// message of sign, the first `min(64, bytes)` bytes of a hash's message, the call
    /// index XORed into its head at each call; nothing for other operations. Called
    /// outside the timed loops, at the start of each window.
    pub(super) fn rebase_messages(&mut self, base: [u8; 64]) {
        let (msgs, m) = match self {
            Op::SigSign { msgs, m, .. } => (msgs, m.as_mut_slice()),
            Op::NSignSign(_, _, m, msgs, _) => (msgs, m.as_mut_slice()),
            Op::Hash { msgs, msg, .. } => (msgs, msg.as_mut_slice()),
            _ => return,
        };
        let k = m.len().min(64);
        m[..k].copy_from_slice(&base[..k]);
        msgs.rebase(base);
    }

    pub(super) fn guards_intact(&self) -> bool {
        let all = |bs: &[&GuardedBuf]| bs.iter().all(|b| b.guards_intact());
        match self {
            Op::SigKeygen(_, a, b) | Op::KemKeygen(_, a, b) => all(&[a, b]),
            Op::SigSign { sk, m, sn, .. } => all(&[sk, m, sn]),
            Op::SigVerify { pk, pool, .. } => all(&[pk]) && pool.guards_intact(),
            Op::KemEnc { pk, ss, ct, .. } => all(&[pk, ss, ct]),
            Op::KemDec { sk, pool, .. } => all(&[sk]) && pool.guards_intact(),
            Op::NSignKeygen(_, a, b) | Op::NKemKeygen(_, a, b) => all(&[a, b]),
            Op::NSignSign(_, a, _, _, b) => all(&[a, b]),
            Op::NSignVerify(_, a, pool) => all(&[a]) && pool.guards_intact(),
            Op::NKemEnc(_, a, b, c) => all(&[a, b, c]),
            Op::NKemDec(_, a, pool) => all(&[a]) && pool.guards_intact(),
            Op::Hash { msg, digest, .. } => all(&[msg, digest]),
            Op::Kex(k) => k.guards_intact(),
        }
    }
}
