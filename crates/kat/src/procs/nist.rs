//! PQClean `nistkat` first entry for NIST-API signatures and KEMs, over the library's own
//! randombytes DRBG.

use super::*;

fn fprint_bstr(out: &mut String, key: &str, b: &[u8]) {
    if b.is_empty() {
        let _ = writeln!(out, "{key} = 00");
    } else {
        hex_line(out, key, b);
    }
}

/// Start of a PQClean `nistkat` run: the DRBG seeded with bytes 0..47, `count = 0` and the
/// drawn per-entry seed printed; returns that seed.
fn nist_start(rng: &NistRng, out: &mut String) -> [u8; 48] {
    let entropy: [u8; 48] = std::array::from_fn(|i| i as u8);
    rng.seed(&entropy);
    out.push_str("count = 0\n");
    let mut seed = [0u8; 48];
    rng.random(&mut seed);
    fprint_bstr(out, "seed", &seed);
    seed
}

/// `crypto_*_keypair` into guarded buffers of `(pk, sk)` bytes: timed as keygen, buffer
/// guards and return code checked, pk and sk printed.
fn nist_keypair(
    call: &str,
    (pk_len, sk_len): (usize, usize),
    out: &mut String,
    t: &mut Timing,
    keypair: impl FnOnce(&mut [u8], &mut [u8]) -> Result<i32, String>,
) -> Result<(GuardedBuf, GuardedBuf), Fail> {
    let mut pk = GuardedBuf::new(pk_len);
    let mut sk = GuardedBuf::new(sk_len);
    let rc = timed(t, "keygen", || {
        keypair(pk.as_mut_slice(), sk.as_mut_slice())
    })
    .map_err(loadfail)?;
    guards(call, &[("pk", &pk), ("sk", &sk)])?;
    if rc != 0 {
        return Err(crypto(format!("{call} returned {rc}")));
    }
    fprint_bstr(out, "pk", pk.as_slice());
    fprint_bstr(out, "sk", sk.as_slice());
    Ok((pk, sk))
}

/// PQClean `nistkat` for a signature scheme (first entry), plus a detached signature whose
/// message has one flipped bit, which must be rejected.
pub fn nist_sign(
    lib: &Library,
    ns: &str,
    sizes: NistSignSizes,
    ctx: bool,
    out: &mut String,
    t: &mut Timing,
) -> Result<(), Fail> {
    let rng = NistRng::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let api = NistSign::new(lib, ns, sizes, ctx).map_err(|e| loadfail(e.to_string()))?;
    let seed = nist_start(&rng, out);
    out.push_str("mlen = 33\n");
    let mut m = [0u8; 33];
    rng.random(&mut m);
    fprint_bstr(out, "msg", &m);
    rng.seed(&seed);
    let (pk, sk) = nist_keypair(
        "crypto_sign_keypair",
        (sizes.pk, sizes.sk),
        out,
        t,
        |pk, sk| api.keypair(pk, sk).map_err(|e| e.to_string()),
    )?;
    let mut sm = GuardedBuf::new(sizes.sig + m.len());
    let (rc, smlen) = timed(t, "sign", || api.sign(sm.as_mut_slice(), &m, sk.as_slice()))
        .map_err(|e| loadfail(e.to_string()))?;
    guards("crypto_sign", &[("sm", &sm), ("sk", &sk)])?;
    if rc != 0 {
        return Err(crypto(format!("crypto_sign returned {rc}")));
    }
    let smlen = within(
        "crypto_sign",
        "smlen",
        smlen as u64,
        (sizes.sig + m.len()) as u64,
    )?;
    let _ = writeln!(out, "smlen = {smlen}");
    fprint_bstr(out, "sm", &sm.as_slice()[..smlen]);
    let mut m1 = GuardedBuf::new(smlen);
    let (rc, mlen1) = timed(t, "open", || {
        api.open(m1.as_mut_slice(), &sm.as_slice()[..smlen], pk.as_slice())
    })
    .map_err(|e| loadfail(e.to_string()))?;
    guards("crypto_sign_open", &[("m", &m1), ("pk", &pk)])?;
    if rc != 0 || mlen1 != 33 || m1.as_slice()[..33] != m {
        return Err(crypto(format!(
            "crypto_sign_open failed on the honest signature (rc {rc}, mlen {mlen1})"
        )));
    }
    // Harness addition: detached signature, honest verify, then one flipped message bit.
    let mut sig = GuardedBuf::new(sizes.sig);
    let (rc, siglen) = api
        .signature(sig.as_mut_slice(), &m, sk.as_slice())
        .map_err(|e| loadfail(e.to_string()))?;
    guards("crypto_sign_signature", &[("sig", &sig)])?;
    if rc != 0 {
        return Err(crypto(format!("crypto_sign_signature returned {rc}")));
    }
    let siglen = within(
        "crypto_sign_signature",
        "siglen",
        siglen as u64,
        sizes.sig as u64,
    )?;
    let rc = api
        .verify(&sig.as_slice()[..siglen], &m, pk.as_slice())
        .map_err(|e| loadfail(e.to_string()))?;
    if rc != 0 {
        return Err(crypto(
            "crypto_sign_verify rejected the honest detached signature",
        ));
    }
    let mut flipped = m;
    flipped[0] ^= 0x80;
    let rc = api
        .verify(&sig.as_slice()[..siglen], &flipped, pk.as_slice())
        .map_err(|e| loadfail(e.to_string()))?;
    if rc == 0 {
        return Err(crypto(
            "crypto_sign_verify accepted a signature on a message with one flipped bit",
        ));
    }
    Ok(())
}

/// PQClean `nistkat` / `hqckat` for a KEM (first entry).
pub fn nist_kem(
    lib: &Library,
    ns: &str,
    sizes: NistKemSizes,
    out: &mut String,
    t: &mut Timing,
) -> Result<(), Fail> {
    let rng = NistRng::new(lib).map_err(|e| loadfail(e.to_string()))?;
    let api = NistKem::new(lib, ns, sizes).map_err(|e| loadfail(e.to_string()))?;
    let seed = nist_start(&rng, out);
    rng.seed(&seed);
    let (pk, sk) = nist_keypair(
        "crypto_kem_keypair",
        (sizes.pk, sizes.sk),
        out,
        t,
        |pk, sk| api.keypair(pk, sk).map_err(|e| e.to_string()),
    )?;
    let mut ct = GuardedBuf::new(sizes.ct);
    let mut ss = GuardedBuf::new(sizes.ss);
    let rc = timed(t, "enc", || {
        api.enc(ct.as_mut_slice(), ss.as_mut_slice(), pk.as_slice())
    })
    .map_err(|e| loadfail(e.to_string()))?;
    guards("crypto_kem_enc", &[("ct", &ct), ("ss", &ss), ("pk", &pk)])?;
    if rc != 0 {
        return Err(crypto(format!("crypto_kem_enc returned {rc}")));
    }
    fprint_bstr(out, "ct", ct.as_slice());
    fprint_bstr(out, "ss", ss.as_slice());
    let mut ss2 = GuardedBuf::new(sizes.ss);
    let rc = timed(t, "dec", || {
        api.dec(ss2.as_mut_slice(), ct.as_slice(), sk.as_slice())
    })
    .map_err(|e| loadfail(e.to_string()))?;
    guards("crypto_kem_dec", &[("ss", &ss2), ("ct", &ct), ("sk", &sk)])?;
    if rc != 0 {
        return Err(crypto(format!("crypto_kem_dec returned {rc}")));
    }
    if ss2.as_slice() != ss.as_slice() {
        return Err(crypto("crypto_kem_dec gave a different shared secret"));
    }
    Ok(())
}
