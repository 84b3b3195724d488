//! ICCS KAT_SIG: `count` records of keygen, sign and verify (spec §4.2).

use super::*;

/// ICCS KAT_SIG (count records). Appends to `out`; on failure the text so far stays.
pub fn kat_sig(lib: &Library, count: u32, out: &mut String, t: &mut Timing) -> Result<(), Fail> {
    let drng = IccsDrng::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let api = SigApi::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let s = api.sizes;
    let (mut dseed, mut dmsg) = seed_drngs();
    for i in 0..count {
        let _ = writeln!(out, "Count = {i}");
        let seed = draw(&mut dseed, 64);
        let mlen = 56 + 8 * i as usize;
        let msg = draw(&mut dmsg, mlen);
        len_line(out, "Seed_Len", 64);
        hex_line(out, "Seed", &seed);
        drng.seed(&seed);
        let mut pk = GuardedBuf::new(s.pk as usize);
        let mut sk = GuardedBuf::new(s.sk as usize);
        let k = timed(t, "keygen", || {
            api.keygen(pk.as_mut_slice(), sk.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("sig_keygen", &[("pk", &pk), ("sk", &sk)])?;
        if k.rc != 0 {
            return Err(crypto(format!("sig_keygen returned {} (record {i})", k.rc)));
        }
        let pl = within("sig_keygen", "pk_len", k.pk_len, s.pk)?;
        let sl = within("sig_keygen", "sk_len", k.sk_len, s.sk)?;
        len_line(out, "PK_Len", k.pk_len);
        hex_line(out, "PK", &pk.as_slice()[..pl]);
        len_line(out, "SK_Len", k.sk_len);
        hex_line(out, "SK", &sk.as_slice()[..sl]);
        len_line(out, "M_Len", mlen as u64);
        hex_line(out, "M", &msg);
        let mut m = GuardedBuf::from_slice(&msg);
        let mut sn = GuardedBuf::new(s.sn as usize);
        let (rc, snl) = timed(t, "sign", || {
            api.sign(sk.prefix_mut(sl), m.as_mut_slice(), sn.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("sig_sign", &[("sk", &sk), ("m", &m), ("sn", &sn)])?;
        if rc != 0 {
            return Err(crypto(format!("sig_sign returned {rc} (record {i})")));
        }
        let snl = within("sig_sign", "sn_len", snl, s.sn)?;
        len_line(out, "Sn_Len", snl as u64);
        hex_line(out, "Sn", &sn.as_slice()[..snl]);
        let rc = timed(t, "verify", || {
            api.verify(pk.prefix_mut(pl), sn.prefix_mut(snl), m.as_mut_slice())
        });
        guards("sig_verify", &[("pk", &pk), ("m", &m), ("sn", &sn)])?;
        if rc != 0 {
            return Err(crypto(format!(
                "sig_verify rejected the honest signature: {rc} (record {i})"
            )));
        }
        m.as_mut_slice()[0] ^= 0x80;
        let rc = api.verify(pk.prefix_mut(pl), sn.prefix_mut(snl), m.as_mut_slice());
        guards("sig_verify", &[("pk", &pk), ("m", &m), ("sn", &sn)])?;
        if rc == 0 {
            return Err(crypto(format!(
                "sig_verify accepted a signature on a message with one flipped bit (record {i})"
            )));
        }
        out.push('\n');
    }
    Ok(())
}
