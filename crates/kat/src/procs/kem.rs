//! ICCS KAT_KEM: `count` records of keygen, encapsulation and decapsulation (spec §4.2).

use super::*;

/// ICCS KAT_KEM.
pub fn kat_kem(lib: &Library, count: u32, out: &mut String, t: &mut Timing) -> Result<(), Fail> {
    let drng = IccsDrng::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let api = KemApi::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let s = api.sizes;
    let (mut dseed, _) = seed_drngs();
    for i in 0..count {
        let _ = writeln!(out, "Count = {i}");
        let seed = draw(&mut dseed, 64);
        len_line(out, "Seed_Len", 64);
        hex_line(out, "Seed", &seed);
        drng.seed(&seed);
        let mut pk = GuardedBuf::new(s.pk as usize);
        let mut sk = GuardedBuf::new(s.sk as usize);
        let k = timed(t, "keygen", || {
            api.keygen(pk.as_mut_slice(), sk.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("kem_keygen", &[("pk", &pk), ("sk", &sk)])?;
        if k.rc != 0 {
            return Err(crypto(format!("kem_keygen returned {} (record {i})", k.rc)));
        }
        let pl = within("kem_keygen", "pk_len", k.pk_len, s.pk)?;
        let sl = within("kem_keygen", "sk_len", k.sk_len, s.sk)?;
        len_line(out, "PK_Len", k.pk_len);
        hex_line(out, "PK", &pk.as_slice()[..pl]);
        len_line(out, "SK_Len", k.sk_len);
        hex_line(out, "SK", &sk.as_slice()[..sl]);
        let mut ss = GuardedBuf::new(s.ss as usize);
        let mut ct = GuardedBuf::new(s.ct as usize);
        let e = timed(t, "enc", || {
            api.enc(pk.prefix_mut(pl), ss.as_mut_slice(), ct.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("kem_enc", &[("pk", &pk), ("ss", &ss), ("ct", &ct)])?;
        if e.rc != 0 {
            return Err(crypto(format!("kem_enc returned {} (record {i})", e.rc)));
        }
        let cl = within("kem_enc", "ct_len", e.ct_len, s.ct)?;
        let ssl = within("kem_enc", "ss_len", e.ss_len, s.ss)?;
        len_line(out, "CT_Len", e.ct_len);
        hex_line(out, "CT", &ct.as_slice()[..cl]);
        len_line(out, "SS_Len", e.ss_len);
        hex_line(out, "SS", &ss.as_slice()[..ssl]);
        let mut ss2 = GuardedBuf::new(s.ss as usize);
        let (rc, l2) = timed(t, "dec", || {
            api.dec_len(
                sk.prefix_mut(sl),
                ct.prefix_mut(cl),
                ss2.as_mut_slice(),
                ssl as u64,
            )
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("kem_dec", &[("sk", &sk), ("ct", &ct), ("ss", &ss2)])?;
        if rc != 0 {
            return Err(crypto(format!("kem_dec returned {rc} (record {i})")));
        }
        let l2 = within("kem_dec", "ss_len", l2, s.ss)?;
        if l2 != ssl || ss2.as_slice()[..l2] != ss.as_slice()[..ssl] {
            return Err(crypto(format!(
                "kem_dec gave a different shared secret (record {i})"
            )));
        }
        out.push('\n');
    }
    Ok(())
}
