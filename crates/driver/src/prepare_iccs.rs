//! Preparation for ICCS-API libraries: metadata, DRNG seeding and honest inputs (a key pair,
//! a signature, a ciphertext, a first exchange) for the operation to be timed.

use super::*;

pub(super) fn prepare_iccs(
    lib: &Library,
    a: &DriverArgs,
    head: &mut Vec<(String, String)>,
    relay: Option<&Relay>,
    seed: &[u8; pqperf_model::stream::SEED_BYTES],
) -> R<Prepared> {
    let meta = lib
        .meta()
        .map_err(|e| usage(format!("invalid harness metadata: {e}")))?;
    head.push(("id".into(), meta.id.clone()));
    head.push(("instance".into(), meta.instance.clone()));
    head.push(("variant".into(), meta.variant.clone()));
    let drng = IccsDrng::new(lib).map_err(|e| usage(format!("missing symbol ngcc_seed: {e}")))?;
    if drng.seed(seed) != 0 {
        return Err(setup("DRNG seeding failed"));
    }
    let sym = |e: pqperf_ffi::dl::DlError| usage(format!("missing symbol: {e}"));
    let mut stats = SigStats::default();
    let op = a.op.as_str();
    let mut kex_step = None;
    let mut key = Vec::new();
    let (op, sizes) = match meta.kind {
        2 => {
            let api = SigApi::new(lib).map_err(sym)?;
            let s = api.sizes;
            let sizes = sizes_meta(s.pk, s.sk, 0, 0, s.sn, 0);
            let (mut pk, mut sk) = (gb(s.pk)?, gb(s.sk)?);
            if op == "keygen" {
                (Op::SigKeygen(api, pk, sk), sizes)
            } else if let (Some(r), "verify") = (relay, op) {
                // Relayed: the preparer's public key and entries (inputs::Relay).
                if r.key.len() as u64 > s.pk {
                    return Err(setup("relayed public key longer than declared"));
                }
                pk.as_mut_slice()[..r.key.len()].copy_from_slice(&r.key);
                let stride = (s.sn + 4096) as usize;
                let n = inputs::pool_entries(a, stride as u64 + 64);
                let mut pool = SigPool::empty(n, stride)?;
                pool.load(&r.warm).map_err(setup)?;
                let mut sizes = sizes;
                sizes.push(("input_pool".into(), n.to_string()));
                (
                    Op::SigVerify {
                        api,
                        pk,
                        pk_len: r.key.len() as u64,
                        pool,
                    },
                    sizes,
                )
            } else {
                let o = api
                    .keygen(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if o.rc != 0 || o.pk_len > s.pk || o.sk_len > s.sk {
                    return Err(setup("setup keygen failed"));
                }
                let msgs = Messages::new(seed);
                match op {
                    "sign" => (
                        Op::SigSign {
                            api,
                            sk,
                            sk_len: o.sk_len,
                            m: GuardedBuf::from_slice(&msgs.message(0)),
                            msgs,
                            sn: gb(s.sn + 4096)?,
                        },
                        sizes,
                    ),
                    "verify" => {
                        let stride = (s.sn + 4096) as usize;
                        let n = inputs::pool_entries(a, stride as u64 + 64);
                        let pool = SigPool::build(n, stride, &msgs, |m, sn| {
                            let (rc, len) = api
                                .sign(slice(&mut sk, o.sk_len), m, sn)
                                .map_err(|e| setup(e.to_string()))?;
                            if rc == 0 && len <= s.sn + 4096 {
                                stats.signature_length_excess =
                                    stats.signature_length_excess.max(len.saturating_sub(s.sn));
                                return Ok(Some(len));
                            }
                            Ok(None)
                        })?;
                        let mut sizes = sizes;
                        sizes.push(("input_pool".into(), pool.len().to_string()));
                        key = pk.as_slice()[..o.pk_len as usize].to_vec();
                        (
                            Op::SigVerify {
                                api,
                                pk,
                                pk_len: o.pk_len,
                                pool,
                            },
                            sizes,
                        )
                    }
                    _ => return Err(usage(format!("unknown operation {op}"))),
                }
            }
        }
        1 => {
            let api = KemApi::new(lib).map_err(sym)?;
            let s = api.sizes;
            let sizes = sizes_meta(s.pk, s.sk, s.ct, s.ss, 0, 0);
            let (mut pk, mut sk) = (gb(s.pk)?, gb(s.sk)?);
            if op == "keygen" {
                (Op::KemKeygen(api, pk, sk), sizes)
            } else if let (Some(r), "dec") = (relay, op) {
                // Relayed: the preparer's secret key and ciphertexts (inputs::Relay).
                if r.key.len() as u64 > s.sk || r.ct_len as u64 > s.ct || r.ss_len as u64 > s.ss {
                    return Err(setup(
                        "relayed secret key or sizes above the declared sizes",
                    ));
                }
                sk.as_mut_slice()[..r.key.len()].copy_from_slice(&r.key);
                let count = inputs::pool_entries(a, s.ct);
                let mut pool = CtPool::empty(count, s.ct as usize, s.ss as usize)?;
                pool.len = r.ct_len as usize;
                pool.load(&r.warm).map_err(setup)?;
                let mut sizes = sizes;
                sizes.push(("input_pool".into(), count.to_string()));
                (
                    Op::KemDec {
                        api,
                        sk,
                        sk_len: r.key.len() as u64,
                        pool,
                        ss_len: r.ss_len as u64,
                    },
                    sizes,
                )
            } else {
                let o = api
                    .keygen(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if o.rc != 0 || o.pk_len > s.pk || o.sk_len > s.sk {
                    return Err(setup("setup keygen failed"));
                }
                let (mut ss, mut ct) = (gb(s.ss)?, gb(s.ct)?);
                let eo = api
                    .enc(
                        slice(&mut pk, o.pk_len),
                        ss.as_mut_slice(),
                        ct.as_mut_slice(),
                    )
                    .map_err(|e| setup(e.to_string()))?;
                if eo.rc != 0 || eo.ss_len > s.ss || eo.ct_len > s.ct {
                    return Err(setup("setup encapsulation failed"));
                }
                match op {
                    "enc" => (
                        Op::KemEnc {
                            api,
                            pk,
                            pk_len: o.pk_len,
                            ss,
                            ct,
                        },
                        sizes,
                    ),
                    "dec" => {
                        let mut ss2 = gb(s.ss)?;
                        let (rc, l) = api
                            .dec(
                                slice(&mut sk, o.sk_len),
                                slice(&mut ct, eo.ct_len),
                                ss2.as_mut_slice(),
                            )
                            .map_err(|e| setup(e.to_string()))?;
                        let n = eo.ss_len as usize;
                        if rc != 0 || l != eo.ss_len || ss2.as_slice()[..n] != ss.as_slice()[..n] {
                            return Err(setup("honest decapsulation mismatch; refusing timing"));
                        }
                        // Distinct ciphertexts for the timed calls, none of them the one
                        // decapsulated above.
                        let stride = s.ct as usize;
                        let count = inputs::pool_entries(a, s.ct);
                        let pool = CtPool::build(count, stride, s.ss as usize, |c, ssk| {
                            let e = api
                                .enc(slice(&mut pk, o.pk_len), ssk, c)
                                .map_err(|e| setup(e.to_string()))?;
                            if e.rc != 0 || e.ct_len != eo.ct_len || e.ss_len != eo.ss_len {
                                return Err(setup("setup encapsulation failed"));
                            }
                            Ok(e.ct_len)
                        })?;
                        let mut sizes = sizes;
                        sizes.push(("input_pool".into(), pool.n.to_string()));
                        key = sk.as_slice()[..o.sk_len as usize].to_vec();
                        (
                            Op::KemDec {
                                api,
                                sk,
                                sk_len: o.sk_len,
                                pool,
                                ss_len: eo.ss_len,
                            },
                            sizes,
                        )
                    }
                    _ => return Err(usage(format!("unknown operation {op}"))),
                }
            }
        }
        4 => {
            if op != "hash" {
                return Err(usage(format!("unknown operation {op}")));
            }
            if a.bytes > 16 << 20 {
                return Err(usage("message above 16 MiB"));
            }
            let api = HashApi::new(lib).map_err(sym)?;
            let bits = meta.sizes.first().copied().unwrap_or(0);
            let dlen = meta.sizes.get(1).copied().unwrap_or(bits.div_ceil(8));
            let msg = pqperf_model::stream::hash_message(a.bytes);
            (
                Op::Hash {
                    api,
                    bits: bits as u32,
                    msgs: Messages::from_base(pqperf_model::stream::head_of(&msg)),
                    msg: GuardedBuf::from_slice(&msg),
                    digest: gb(dlen)?,
                },
                sizes_meta(0, 0, 0, 0, 0, dlen),
            )
        }
        3 => {
            let api = KexApi::new(lib).map_err(sym)?;
            let s = api.sizes;
            if s.passes > 16 {
                return Err(usage(format!("{} passes declared (> 16)", s.passes)));
            }
            let step = match op {
                "exchange" => Step::Whole,
                "init_a" => Step::InitA,
                "init_b" => Step::InitB,
                "derive_a" => Step::DeriveA,
                "derive_b" => Step::DeriveB,
                p if p.starts_with("pass") => {
                    let k: usize = p[4..]
                        .parse()
                        .map_err(|_| usage(format!("unknown operation {op}")))?;
                    if k < 1 || k as u64 > s.passes.max(3) {
                        return Err(usage(format!("unknown operation {op}")));
                    }
                    Step::Pass(k)
                }
                _ => return Err(usage(format!("unknown operation {op}"))),
            };
            let mut k = Kex {
                api,
                declared: s.passes as usize,
                pka: gb(s.pk)?,
                ska: gb(s.sk)?,
                sta: gb(s.sta)?,
                pkb: gb(s.pk)?,
                skb: gb(s.sk)?,
                stb: gb(s.stb)?,
                ssa: gb(s.ss)?,
                ssb: gb(s.ss)?,
                msgs: (0..=16).map(|_| gb(s.total_msg)).collect::<R<_>>()?,
                lens: vec![0; 17],
                passes_run: 0,
                ss_len: 0,
            };
            k.exchange(Step::Whole, None)
                .map_err(|e| setup(format!("setup key exchange failed or secrets differ: {e}")))?;
            let sizes = sizes_meta(s.pk, s.sk, 0, s.ss, 0, 0);
            let mut kx = vec![
                ("kex_passes".to_string(), s.passes.to_string()),
                ("kex_passes_run".to_string(), k.passes_run.to_string()),
                ("sta_bytes".to_string(), s.sta.to_string()),
                ("stb_bytes".to_string(), s.stb.to_string()),
            ];
            let mut total = 0;
            for i in 1..=k.passes_run {
                kx.push((format!("msg{i}_bytes"), k.lens[i].to_string()));
                total += k.lens[i];
            }
            kx.push(("total_msg_bytes".into(), total.to_string()));
            kx.push(("ss_actual_bytes".into(), k.ss_len.to_string()));
            kex_step = Some(step);
            let mut all = sizes;
            all.extend(kx);
            (Op::Kex(Box::new(k)), all)
        }
        t => return Err(usage(format!("invalid harness metadata: type {t}"))),
    };
    Ok(Prepared {
        op,
        meta: sizes,
        stats,
        kex_step,
        key,
        drng: Some(timing::Drng::Iccs(drng)),
        next_window: None,
    })
}
