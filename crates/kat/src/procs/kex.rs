//! ICCS KAT_KEX: `count` complete key exchanges, pass by pass (spec §4.2).

use super::*;

/// ICCS KAT_KEX.
pub fn kat_kex(lib: &Library, count: u32, out: &mut String, t: &mut Timing) -> Result<(), Fail> {
    let drng = IccsDrng::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let api = KexApi::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let s = api.sizes;
    let passes = s.passes as usize;
    for k in 2..=passes {
        if !api.has_pass(k) {
            return Err(loadfail(format!(
                "Pass_Num = {passes} but {} is not exported",
                pqperf_ffi::dl::kex_pass_symbol(k)
            )));
        }
    }
    let (mut dseed, _) = seed_drngs();
    for i in 0..count {
        let _ = writeln!(out, "Count = {i}");
        let seed = draw(&mut dseed, 64);
        len_line(out, "Seed_Len", 64);
        hex_line(out, "Seed", &seed);
        drng.seed(&seed);
        len_line(out, "Pass_Num", s.passes);
        let mut pka = GuardedBuf::new(s.pk as usize);
        let mut ska = GuardedBuf::new(s.sk as usize);
        let mut sta = GuardedBuf::new(s.sta as usize);
        let a = timed(t, "init_a", || {
            api.init_a(pka.as_mut_slice(), ska.as_mut_slice(), sta.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("kex_init_a", &[("pk", &pka), ("sk", &ska), ("st", &sta)])?;
        if a.rc < 0 {
            return Err(crypto(format!("kex_init_a returned {} (record {i})", a.rc)));
        }
        let (pal, sal) = (
            within("kex_init_a", "pk_len", a.pk_len, s.pk)?,
            within("kex_init_a", "sk_len", a.sk_len, s.sk)?,
        );
        let mut sta_len = within("kex_init_a", "st_len", a.st_len, s.sta)?;
        len_line(out, "PKa_Len", a.pk_len);
        hex_line(out, "PKa", &pka.as_slice()[..pal]);
        len_line(out, "SKa_Len", a.sk_len);
        hex_line(out, "SKa", &ska.as_slice()[..sal]);
        len_line(out, "Init_Sta_Len", a.st_len);
        hex_line(out, "Init_Sta", &sta.as_slice()[..sta_len]);
        let mut pkb = GuardedBuf::new(s.pk as usize);
        let mut skb = GuardedBuf::new(s.sk as usize);
        let mut stb = GuardedBuf::new(s.stb as usize);
        let b = timed(t, "init_b", || {
            api.init_b(pkb.as_mut_slice(), skb.as_mut_slice(), stb.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("kex_init_b", &[("pk", &pkb), ("sk", &skb), ("st", &stb)])?;
        if b.rc < 0 {
            return Err(crypto(format!("kex_init_b returned {} (record {i})", b.rc)));
        }
        let (pbl, sbl) = (
            within("kex_init_b", "pk_len", b.pk_len, s.pk)?,
            within("kex_init_b", "sk_len", b.sk_len, s.sk)?,
        );
        let mut stb_len = within("kex_init_b", "st_len", b.st_len, s.stb)?;
        len_line(out, "PKb_Len", b.pk_len);
        hex_line(out, "PKb", &pkb.as_slice()[..pbl]);
        len_line(out, "SKb_Len", b.sk_len);
        hex_line(out, "SKb", &skb.as_slice()[..sbl]);
        len_line(out, "Init_Stb_Len", b.st_len);
        hex_line(out, "Init_Stb", &stb.as_slice()[..stb_len]);
        let mut last_a: Option<Vec<u8>> = None;
        let mut last_b: Option<Vec<u8>> = None;
        let mut prev: Vec<u8> = Vec::new();
        for k in 1..=passes.max(3) {
            if k > 1 && !api.has_pass(k) {
                break;
            }
            let a_side = k % 2 == 1;
            let mut m_in = GuardedBuf::from_slice(&prev);
            let mut m_out = GuardedBuf::new(s.total_msg as usize);
            let name = pqperf_ffi::dl::kex_pass_symbol(k);
            let r = if a_side {
                api.pass(
                    k,
                    ska.prefix_mut(sal),
                    pkb.prefix_mut(pbl),
                    m_in.as_mut_slice(),
                    sta.as_mut_slice(),
                    sta_len as u64,
                    m_out.as_mut_slice(),
                )
            } else {
                api.pass(
                    k,
                    skb.prefix_mut(sbl),
                    pka.prefix_mut(pal),
                    m_in.as_mut_slice(),
                    stb.as_mut_slice(),
                    stb_len as u64,
                    m_out.as_mut_slice(),
                )
            }
            .map_err(|e| loadfail(e.to_string()))?
            .ok_or_else(|| loadfail(format!("{name} not exported")))?;
            guards(
                &name,
                &[
                    ("sta", &sta),
                    ("stb", &stb),
                    ("m_in", &m_in),
                    ("m_out", &m_out),
                ],
            )?;
            if r.rc < 0 {
                return Err(crypto(format!("{name} returned {} (record {i})", r.rc)));
            }
            let (stk, claim) = if a_side { ("a", s.sta) } else { ("b", s.stb) };
            let stl = within(&name, "st_len", r.st_len, claim)?;
            let ml = within(&name, "msg_len", r.msg_len, s.total_msg)?;
            let st_bytes = if a_side {
                sta.as_slice()[..stl].to_vec()
            } else {
                stb.as_slice()[..stl].to_vec()
            };
            if a_side {
                sta_len = stl;
            } else {
                stb_len = stl;
            }
            len_line(out, &format!("Pass{k}_St{stk}_Len"), r.st_len);
            hex_line(out, &format!("Pass{k}_St{stk}"), &st_bytes);
            len_line(out, &format!("M{k}_Len"), r.msg_len);
            let msg = m_out.as_slice()[..ml].to_vec();
            hex_line(out, &format!("M{k}"), &msg);
            if a_side {
                last_a = Some(msg.clone());
            } else {
                last_b = Some(msg.clone());
            }
            prev = msg;
            if r.rc == 1 {
                if passes != k {
                    return Err(crypto(format!(
                        "{name} finished the exchange but Pass_Num = {passes} (record {i})"
                    )));
                }
                break;
            }
        }
        let mut ssa = GuardedBuf::new(s.ss as usize);
        let mut ssb = GuardedBuf::new(s.ss as usize);
        let mut lb = last_b.as_ref().map(|m| GuardedBuf::from_slice(m));
        let mut la = last_a.as_ref().map(|m| GuardedBuf::from_slice(m));
        let (rca, la_len) = timed(t, "derive_a", || {
            api.derive_a(
                ska.prefix_mut(sal),
                pkb.prefix_mut(pbl),
                lb.as_mut().map(|b| b.as_mut_slice()),
                sta.prefix_mut(sta_len),
                ssa.as_mut_slice(),
            )
        })
        .map_err(|e| loadfail(e.to_string()))?;
        let (rcb, lb_len) = timed(t, "derive_b", || {
            api.derive_b(
                skb.prefix_mut(sbl),
                pka.prefix_mut(pal),
                la.as_mut().map(|b| b.as_mut_slice()),
                stb.prefix_mut(stb_len),
                ssb.as_mut_slice(),
            )
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards(
            "kex_derive_ss",
            &[("ssa", &ssa), ("ssb", &ssb), ("sta", &sta), ("stb", &stb)],
        )?;
        if rca != 0 || rcb != 0 {
            return Err(crypto(format!(
                "kex_derive_ss_a/b returned {rca}/{rcb} (record {i})"
            )));
        }
        let la_len = within("kex_derive_ss_a", "ss_len", la_len, s.ss)?;
        let lb_len = within("kex_derive_ss_b", "ss_len", lb_len, s.ss)?;
        if la_len != lb_len || ssa.as_slice()[..la_len] != ssb.as_slice()[..lb_len] {
            return Err(crypto(format!(
                "shared secrets of A and B differ (record {i})"
            )));
        }
        len_line(out, "SS_Len", la_len as u64);
        hex_line(out, "SS", &ssa.as_slice()[..la_len]);
        out.push('\n');
    }
    Ok(())
}
