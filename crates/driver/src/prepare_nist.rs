//! Preparation for NIST-API (PQClean) libraries: the library's DRBG seeded, sizes from the
//! catalog, honest inputs for the operation to be timed.

use super::*;

pub(super) fn prepare_nist(
    lib: &Library,
    a: &DriverArgs,
    head: &mut Vec<(String, String)>,
    relay: Option<&Relay>,
    seed: &[u8; pqperf_model::stream::SEED_BYTES],
) -> R<Prepared> {
    let ApiSpec::Nist {
        kind,
        namespace,
        pk,
        sk,
        out,
        ss,
        ctx,
        id,
        instance,
    } = &a.api
    else {
        unreachable!()
    };
    head.push(("id".into(), id.clone()));
    head.push(("instance".into(), instance.clone()));
    head.push(("variant".into(), "Reference_Implementation".into()));
    let rng = NistRng::new(lib).map_err(|e| usage(format!("missing symbol: {e}")))?;
    if rng.seed(seed) != 0 {
        return Err(setup("DRBG seeding failed"));
    }
    let sym = |e: pqperf_ffi::dl::DlError| usage(format!("missing symbol: {e}"));
    let op = a.op.as_str();
    let (mut pkb, mut skb) = (gb(*pk)?, gb(*sk)?);
    let stats = SigStats::default();
    let mut key = Vec::new();
    let prepared = match kind.as_str() {
        "sign" => {
            let sizes = NistSignSizes {
                pk: *pk as usize,
                sk: *sk as usize,
                sig: *out as usize,
            };
            let api = NistSign::new(lib, namespace, sizes, *ctx).map_err(sym)?;
            let msgs = Messages::new(seed);
            let meta = sizes_meta(*pk, *sk, 0, 0, *out, 0);
            if op == "keygen" {
                (Op::NSignKeygen(api, pkb, skb), meta)
            } else if let (Some(r), "verify") = (relay, op) {
                // Relayed: the preparer's public key and entries (inputs::Relay).
                if r.key.len() as u64 != *pk {
                    return Err(setup("relayed public key of the wrong size"));
                }
                pkb.as_mut_slice().copy_from_slice(&r.key);
                let stride = *out as usize + 4096;
                let n = inputs::pool_entries(a, stride as u64 + 64);
                let mut pool = SigPool::empty(n, stride)?;
                pool.load(&r.warm).map_err(setup)?;
                let mut meta = meta;
                meta.push(("input_pool".into(), n.to_string()));
                (Op::NSignVerify(api, pkb, pool), meta)
            } else {
                let rc = api
                    .keypair(pkb.as_mut_slice(), skb.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if rc != 0 {
                    return Err(setup("setup keygen failed"));
                }
                match op {
                    "sign" => {
                        let m = msgs.message(0).to_vec();
                        (Op::NSignSign(api, skb, m, msgs, gb(*out + 4096)?), meta)
                    }
                    "verify" => {
                        let stride = *out as usize + 4096;
                        let n = inputs::pool_entries(a, stride as u64 + 64);
                        let pool = SigPool::build(n, stride, &msgs, |m, sig| {
                            let (rc, l) = api
                                .signature(sig, m, skb.as_slice())
                                .map_err(|e| setup(e.to_string()))?;
                            Ok((rc == 0 && l <= stride).then_some(l as u64))
                        })?;
                        let mut meta = meta;
                        meta.push(("input_pool".into(), pool.len().to_string()));
                        key = pkb.as_slice().to_vec();
                        (Op::NSignVerify(api, pkb, pool), meta)
                    }
                    _ => return Err(usage(format!("unknown operation {op}"))),
                }
            }
        }
        "kem" => {
            let sizes = NistKemSizes {
                pk: *pk as usize,
                sk: *sk as usize,
                ct: *out as usize,
                ss: *ss as usize,
            };
            let api = NistKem::new(lib, namespace, sizes).map_err(sym)?;
            let meta = sizes_meta(*pk, *sk, *out, *ss, 0, 0);
            if op == "keygen" {
                (Op::NKemKeygen(api, pkb, skb), meta)
            } else if let (Some(r), "dec") = (relay, op) {
                // Relayed: the preparer's secret key and ciphertexts (inputs::Relay).
                if r.key.len() as u64 != *sk || r.ct_len as u64 != *out || r.ss_len as u64 != *ss {
                    return Err(setup(
                        "relayed secret key or sizes differ from the declared",
                    ));
                }
                skb.as_mut_slice().copy_from_slice(&r.key);
                let n = inputs::pool_entries(a, *out);
                let mut pool = CtPool::empty(n, *out as usize, *ss as usize)?;
                pool.load(&r.warm).map_err(setup)?;
                let mut meta = meta;
                meta.push(("input_pool".into(), n.to_string()));
                (Op::NKemDec(api, skb, pool), meta)
            } else {
                let rc = api
                    .keypair(pkb.as_mut_slice(), skb.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if rc != 0 {
                    return Err(setup("setup keygen failed"));
                }
                let (mut ct, mut ssb) = (gb(*out)?, gb(*ss)?);
                let rc = api
                    .enc(ct.as_mut_slice(), ssb.as_mut_slice(), pkb.as_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if rc != 0 {
                    return Err(setup("setup encapsulation failed"));
                }
                match op {
                    "enc" => (Op::NKemEnc(api, pkb, ct, ssb), meta),
                    "dec" => {
                        let mut ss2 = gb(*ss)?;
                        let rc = api
                            .dec(ss2.as_mut_slice(), ct.as_slice(), skb.as_slice())
                            .map_err(|e| setup(e.to_string()))?;
                        if rc != 0 || ss2.as_slice() != ssb.as_slice() {
                            return Err(setup("honest decapsulation mismatch; refusing timing"));
                        }
                        // Distinct ciphertexts for the timed calls, none of them the one
                        // decapsulated above.
                        let n = inputs::pool_entries(a, *out);
                        let pool = CtPool::build(n, *out as usize, *ss as usize, |c, ssk| {
                            let rc = api
                                .enc(c, ssk, pkb.as_slice())
                                .map_err(|e| setup(e.to_string()))?;
                            if rc != 0 {
                                return Err(setup("setup encapsulation failed"));
                            }
                            Ok(*out)
                        })?;
                        let mut meta = meta;
                        meta.push(("input_pool".into(), pool.n.to_string()));
                        key = skb.as_slice().to_vec();
                        (Op::NKemDec(api, skb, pool), meta)
                    }
                    _ => return Err(usage(format!("unknown operation {op}"))),
                }
            }
        }
        k => return Err(usage(format!("unknown NIST API kind {k}"))),
    };
    Ok(Prepared {
        op: prepared.0,
        meta: prepared.1,
        stats,
        kex_step: None,
        key,
        drng: Some(timing::Drng::Nist(rng)),
        next_window: None,
    })
}
