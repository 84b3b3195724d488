//! The KAT procedures run inside the child process: the official ICCS drivers (KAT_SIG,
//! KAT_KEM, KAT_KEX, KAT_CryptHash; spec §4.2–§4.3 with the harness additions of §4.5) and
//! PQClean's NIST `nistkat` first entry, over a dlopened library ([`pqperf_ffi::dl`]).
//!
//! Every buffer handed to the candidate sits between guard zones; a damaged guard or a
//! returned length above the claimed size is OVERFLOW. Failing calls are CRYPTOFAIL.

use std::fmt::Write as _;
use std::time::Instant;

use pqperf_ffi::dl::{
    GuardedBuf, HashApi, IccsDrng, KemApi, KexApi, Library, NistKem, NistKemSizes, NistRng,
    NistSign, NistSignSizes, SigApi,
};
use pqperf_iccs::drng::DrngCtx;

/// A failure that ends the KAT run with a status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fail {
    pub status: &'static str,
    pub detail: String,
}

fn crypto(detail: impl Into<String>) -> Fail {
    Fail {
        status: "CRYPTOFAIL",
        detail: detail.into(),
    }
}

fn overflow(detail: impl Into<String>) -> Fail {
    Fail {
        status: "OVERFLOW",
        detail: detail.into(),
    }
}

fn loadfail(detail: impl Into<String>) -> Fail {
    Fail {
        status: "LOADFAIL",
        detail: detail.into(),
    }
}

/// Uppercase hex.
pub fn hex_up(b: &[u8]) -> String {
    hex::encode_upper(b)
}

/// Check the guards of buffers after a call named `call`.
fn guards(call: &str, bufs: &[(&str, &GuardedBuf)]) -> Result<(), Fail> {
    for (name, b) in bufs {
        if !b.guards_intact() {
            return Err(overflow(format!(
                "{call} wrote outside the {name} buffer ({} bytes)",
                b.len()
            )));
        }
    }
    Ok(())
}

/// Check a returned length against the claimed capacity.
fn within(call: &str, what: &str, got: u64, claimed: u64) -> Result<usize, Fail> {
    if got > claimed {
        Err(overflow(format!(
            "{call} returned {what} = {got} > claimed {claimed}"
        )))
    } else {
        Ok(got as usize)
    }
}

/// Per-operation timing accumulator for the `timing` line.
#[derive(Default)]
pub struct Timing {
    ops: Vec<(&'static str, f64, u32)>,
}

impl Timing {
    fn add(&mut self, op: &'static str, secs: f64) {
        if let Some(e) = self.ops.iter_mut().find(|e| e.0 == op) {
            e.1 += secs;
            e.2 += 1;
        } else {
            self.ops.push((op, secs, 1));
        }
    }

    /// `keygen 0.160 ms  sign 0.964 ms  verify 0.164 ms (avg over 10)`.
    pub fn line(&self) -> Option<String> {
        let n = self.ops.first()?.2;
        let parts: Vec<String> = self
            .ops
            .iter()
            .map(|(op, s, c)| format!("{op} {:.3} ms", s * 1000.0 / f64::from(*c)))
            .collect();
        Some(format!("{} (avg over {n})", parts.join("  ")))
    }
}

fn timed<T>(t: &mut Timing, op: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = Instant::now();
    let r = f();
    t.add(op, t0.elapsed().as_secs_f64());
    r
}

/// Number of records written so far (for error context).
fn seed_drngs() -> (DrngCtx, DrngCtx) {
    let seed: Vec<u8> = b"seed".repeat(16);
    let mut msg: Vec<u8> = b"msg".repeat(21);
    msg.push(b'm');
    (DrngCtx::new(&seed), DrngCtx::new(&msg))
}

fn draw(d: &mut DrngCtx, bytes: usize) -> Vec<u8> {
    let mut v = vec![0u8; bytes];
    d.generate(&mut v, 8 * bytes as u64);
    v
}

fn len_line(out: &mut String, key: &str, v: u64) {
    let _ = writeln!(out, "{key} = {v}");
}

fn hex_line(out: &mut String, key: &str, b: &[u8]) {
    let _ = writeln!(out, "{key} = {}", hex_up(b));
}

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

/// Which hash KAT files to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashFile {
    K2_12,
    K2_23,
    K2_33,
    Loop,
}

impl HashFile {
    /// File-name prefix and DRNG seed word.
    pub fn word(self) -> &'static str {
        match self {
            HashFile::K2_12 => "KAT_2_12",
            HashFile::K2_23 => "KAT_2_23",
            HashFile::K2_33 => "KAT_2_33",
            HashFile::Loop => "KAT_Loop",
        }
    }
}

/// ICCS KAT_CryptHash, one file, digest width `d` bits.
pub fn kat_hash(
    lib: &Library,
    d: u32,
    file: HashFile,
    out: &mut String,
    t: &mut Timing,
) -> Result<(), Fail> {
    let api = HashApi::new(lib).map_err(|e| loadfail(e.to_string()))?;
    if d == 0 || !d.is_multiple_of(8) {
        return Err(loadfail(format!(
            "DIGEST_BIT_LENGTH {d} is not a positive multiple of 8"
        )));
    }
    let dl = (d / 8) as usize;
    let seed = file.word().as_bytes().repeat(8);
    let mut drng = DrngCtx::new(&seed);
    let h = |msg: &GuardedBuf, bits: u64, t: &mut Timing| -> Result<Vec<u8>, Fail> {
        let mut dig = GuardedBuf::new(dl);
        let rc = timed(t, "hash", || {
            api.hash(d, msg.as_slice(), bits, dig.as_mut_slice())
        })
        .map_err(|e| loadfail(e.to_string()))?;
        guards("CryptHash", &[("msg", msg), ("digest", &dig)])?;
        if rc != 0 {
            return Err(crypto(format!(
                "CryptHash returned {rc} for a {bits}-bit message"
            )));
        }
        Ok(dig.as_slice().to_vec())
    };
    match file {
        HashFile::K2_12 => {
            for b in 0..=4096u64 {
                let mut buf = vec![0u8; 512];
                drng.generate(&mut buf, b);
                let n = b.div_ceil(8) as usize;
                let msg = GuardedBuf::from_slice(&buf[..n]);
                let _ = writeln!(out, "Msg_Len = {b}");
                let _ = writeln!(out, "Msg = {}", hex_up(&buf[..n]));
                let dig = h(&msg, b, t)?;
                let _ = writeln!(out, "Dst_Len = {d}");
                let _ = writeln!(out, "Dst = {}", hex_up(&dig));
                out.push('\n');
            }
        }
        HashFile::K2_23 | HashFile::K2_33 => {
            let bits: u64 = if file == HashFile::K2_23 {
                1 << 23
            } else {
                1 << 33
            };
            let n = (bits / 8) as usize;
            for rec in 0..3 {
                let mut buf = match rec {
                    0 => vec![0u8; n],
                    1 => vec![0xFFu8; n],
                    _ => {
                        let mut v = vec![0u8; n];
                        drng.generate(&mut v, bits);
                        v
                    }
                };
                let _ = writeln!(out, "Msg_Len = {bits}");
                if rec == 2 {
                    let _ = writeln!(out, "Msg_Seed = {}", hex_up(&seed));
                } else {
                    let _ = writeln!(out, "Msg_Seed = ");
                }
                let _ = writeln!(
                    out,
                    "Msg_Exp = {} .... {}",
                    hex_up(&buf[..8]),
                    hex_up(&buf[n - 8..])
                );
                let msg = GuardedBuf::from_slice(&buf);
                buf.clear();
                let dig = h(&msg, bits, t)?;
                let _ = writeln!(out, "Dst_Len = {d}");
                let _ = writeln!(out, "Dst = {}", hex_up(&dig));
                out.push('\n');
            }
        }
        HashFile::Loop => {
            let mut m = vec![0u8; 1024];
            drng.generate(&mut m, 8192);
            let _ = writeln!(out, "Msg_Len = 8192");
            let _ = writeln!(out, "Msg = {}", hex_up(&m));
            let mut hcur = h(&GuardedBuf::from_slice(&m), 8192, t)?;
            for _ in 0..1_000_000u32 {
                m.rotate_left(dl);
                for (x, y) in m.iter_mut().zip(&hcur) {
                    *x ^= y;
                }
                let mut dig = vec![0u8; dl];
                let _ = api.hash(d, &m, 8192, &mut dig);
                hcur = dig;
            }
            let _ = writeln!(out, "Dst_Len = {d}");
            let _ = writeln!(out, "Dst = {}", hex_up(&hcur));
            out.push('\n');
        }
    }
    Ok(())
}

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
