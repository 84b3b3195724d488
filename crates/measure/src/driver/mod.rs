//! The timing driver: one child process = one operation of one library (method §4).
//!
//! The orchestrator re-executes `pqperf driver …`; the child pins itself, dlopens the library
//! through `pqperf_ffi::dl`, seeds the DRNG with `00 01 … 2f`, prepares honest inputs, runs the
//! warm-ups and the trials, and writes the reference META/TRIAL/STATUS lines to its private
//! result channel (tab-separated, flushed progressively; never stdout, which belongs to the
//! candidate, see `pqperf_ffi::untrusted`). pqperf additions are `PQPERF <key> <value>` lines
//! (counter name) and `SAMPLES <trial> <ticks>…` lines: per-call tick-counter deltas taken
//! inside the same timed loop, from which pages show p50/p90/p99.
//!
//! Exit status: 0 complete, 4 partial, 3 setup/operation failure, 2 usage/ABI/symbol errors.

use std::io::Write;
use std::path::PathBuf;

use pqperf_ffi::counters::{self, Counter, CounterKind};
use pqperf_ffi::dl::{
    GuardedBuf, HashApi, IccsDrng, KemApi, KexApi, Library, NistKem, NistKemSizes, NistRng,
    NistSign, NistSignSizes, SigApi,
};
use pqperf_ffi::{affinity, procinfo};

/// Operations of the hash type are `hash` with a byte count; the others have no input.
pub const HASH_SIZES: [u64; 8] = [32, 128, 512, 1024, 4096, 8192, 16384, 65536];

/// Which API the library exposes, with what the NIST API cannot tell by itself.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiSpec {
    /// ICCS API with the harness shim (`ngcc_meta`, `ngcc_seed`).
    Iccs,
    /// PQClean namespaced API (sizes from the catalog).
    Nist {
        /// `sign` or `kem`.
        kind: String,
        /// Symbol prefix (`PQCLEAN_MLDSA44_CLEAN`).
        namespace: String,
        /// Public key bytes.
        pk: u64,
        /// Secret key bytes.
        sk: u64,
        /// Signature (sign) or ciphertext (kem) bytes.
        out: u64,
        /// Shared-secret bytes (kem).
        ss: u64,
        /// ML-DSA `_ctx` functions.
        ctx: bool,
        /// Candidate id and instance name for the META lines.
        id: String,
        /// Instance name.
        instance: String,
    },
}

/// Arguments of one driver run.
#[derive(Debug, Clone)]
pub struct DriverArgs {
    /// Library path (relative to the working directory).
    pub lib: PathBuf,
    /// Operation name (`keygen`, `sign`, `verify`, `enc`, `dec`, `hash`, `exchange`, …).
    pub op: String,
    /// Hash message bytes (0 otherwise).
    pub bytes: u64,
    /// Trials in this process (1–16).
    pub trials: u32,
    /// Calls per trial.
    pub iters: u64,
    /// Untimed calls before the first trial.
    pub warmups: u64,
    /// CPU to pin to.
    pub cpu: Option<usize>,
    /// Record per-call tick deltas.
    pub samples: bool,
    /// Force the tick counter even where hardware cycles exist (benchmarks).
    pub force_ticks: bool,
    /// API description.
    pub api: ApiSpec,
}

/// A failure with the exit code it maps to.
struct Fail(i32, String);

type R<T> = Result<T, Fail>;

fn usage(m: impl Into<String>) -> Fail {
    Fail(2, m.into())
}
fn setup(m: impl Into<String>) -> Fail {
    Fail(3, m.into())
}

const SEED: [u8; 48] = {
    let mut s = [0u8; 48];
    let mut i = 0;
    while i < 48 {
        s[i] = i as u8;
        i += 1;
    }
    s
};

fn message64() -> Vec<u8> {
    (0..64u32).map(|i| ((i * 131 + 64) % 256) as u8).collect()
}

fn slice(b: &mut GuardedBuf, n: u64) -> &mut [u8] {
    let n = (n as usize).min(b.len());
    &mut b.as_mut_slice()[..n]
}

/// Signature statistics printed after the trials.
#[derive(Default)]
struct SigStats {
    sign_failures_retried: u64,
    message_tweaks: u64,
    signature_length_excess: u64,
    verify_rejections: u64,
}

struct Kex {
    api: KexApi,
    declared: usize,
    pka: GuardedBuf,
    ska: GuardedBuf,
    sta: GuardedBuf,
    pkb: GuardedBuf,
    skb: GuardedBuf,
    stb: GuardedBuf,
    ssa: GuardedBuf,
    ssb: GuardedBuf,
    msgs: Vec<GuardedBuf>,
    lens: Vec<u64>,
    passes_run: usize,
    ss_len: u64,
}

/// Timed step of a key exchange.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    Whole,
    InitA,
    InitB,
    Pass(usize),
    DeriveA,
    DeriveB,
}

struct Acc<'a> {
    counter: &'a Counter,
    ns: u64,
    count: u64,
}

impl Kex {
    fn timed<T>(step: Step, me: Step, acc: &mut Option<&mut Acc>, f: impl FnOnce() -> T) -> T {
        match acc {
            Some(a) if step == me => {
                let b = a.counter.begin();
                let t0 = counters::monotonic_raw_ns();
                let r = f();
                let t1 = counters::monotonic_raw_ns();
                a.count += a.counter.end(b);
                a.ns += t1 - t0;
                r
            }
            _ => f(),
        }
    }

    /// One complete exchange (mirrors the official KAT_KEX driver); `acc` brackets `step`.
    fn exchange(&mut self, step: Step, mut acc: Option<&mut Acc>) -> Result<(), String> {
        let api = self.api.clone();
        let s = api.sizes;
        let (pka, ska, sta) = (&mut self.pka, &mut self.ska, &mut self.sta);
        let ia = Self::timed(step, Step::InitA, &mut acc, || {
            api.init_a(pka.as_mut_slice(), ska.as_mut_slice(), sta.as_mut_slice())
        })
        .map_err(|e| e.to_string())?;
        if ia.rc != 0 || ia.pk_len > s.pk || ia.sk_len > s.sk || ia.st_len > s.sta {
            return Err(format!("kex_init_a failed (rc {})", ia.rc));
        }
        let (pkb, skb, stb) = (&mut self.pkb, &mut self.skb, &mut self.stb);
        let ib = Self::timed(step, Step::InitB, &mut acc, || {
            api.init_b(pkb.as_mut_slice(), skb.as_mut_slice(), stb.as_mut_slice())
        })
        .map_err(|e| e.to_string())?;
        if ib.rc != 0 || ib.pk_len > s.pk || ib.sk_len > s.sk || ib.st_len > s.stb {
            return Err(format!("kex_init_b failed (rc {})", ib.rc));
        }
        let (mut sta_len, mut stb_len) = (ia.st_len, ib.st_len);
        let last = self.declared.max(3);
        self.passes_run = 0;
        let mut empty = [0u8; 0];
        for k in 1..=last {
            if k > 1 && !api.has_pass(k) {
                if self.declared >= k {
                    return Err(format!("pass {k} declared but missing"));
                }
                break;
            }
            let (before, after) = self.msgs.split_at_mut(k);
            let out = &mut after[0];
            let prev_len = self.lens[k - 1];
            let m_in: &mut [u8] = if k == 1 {
                &mut empty
            } else {
                slice(&mut before[k - 1], prev_len)
            };
            let r = if k % 2 == 1 {
                let (sk, pk, st) = (
                    slice(&mut self.ska, ia.sk_len),
                    slice(&mut self.pkb, ib.pk_len),
                    self.sta.as_mut_slice(),
                );
                Self::timed(step, Step::Pass(k), &mut acc, || {
                    api.pass(k, sk, pk, m_in, st, sta_len, out.as_mut_slice())
                })
            } else {
                let (sk, pk, st) = (
                    slice(&mut self.skb, ib.sk_len),
                    slice(&mut self.pka, ia.pk_len),
                    self.stb.as_mut_slice(),
                );
                Self::timed(step, Step::Pass(k), &mut acc, || {
                    api.pass(k, sk, pk, m_in, st, stb_len, out.as_mut_slice())
                })
            }
            .map_err(|e| e.to_string())?;
            let Some(p) = r else {
                if self.declared >= k {
                    return Err(format!("pass {k} declared but missing"));
                }
                break;
            };
            let st_cap = if k % 2 == 1 { s.sta } else { s.stb };
            if p.rc < 0 || p.msg_len > s.total_msg || p.st_len > st_cap {
                return Err(format!("pass {k} failed (rc {})", p.rc));
            }
            if k % 2 == 1 {
                sta_len = p.st_len;
            } else {
                stb_len = p.st_len;
            }
            self.lens[k] = p.msg_len;
            self.passes_run = k;
            if p.rc == 1 {
                if k != self.declared {
                    return Err(format!(
                        "protocol finished at pass {k}, {} declared",
                        self.declared
                    ));
                }
                break;
            }
        }
        let run = self.passes_run;
        let last_b = (1..=run).rev().find(|k| k % 2 == 0);
        let last_a = (1..=run).rev().find(|k| k % 2 == 1);
        let (lb_idx, la_idx) = (last_b.unwrap_or(0), last_a.unwrap_or(0));
        let lb_len = self.lens[lb_idx];
        let la_len = self.lens[la_idx];
        let (ska, pkb, sta, ssa) = (
            slice(&mut self.ska, ia.sk_len),
            slice(&mut self.pkb, ib.pk_len),
            slice(&mut self.sta, sta_len),
            self.ssa.as_mut_slice(),
        );
        let mb = if last_b.is_some() {
            Some(slice(&mut self.msgs[lb_idx], lb_len))
        } else {
            None
        };
        let (ra, la) = Self::timed(step, Step::DeriveA, &mut acc, || {
            api.derive_a(ska, pkb, mb, sta, ssa)
        })
        .map_err(|e| e.to_string())?;
        let (skb, pka, stb, ssb) = (
            slice(&mut self.skb, ib.sk_len),
            slice(&mut self.pka, ia.pk_len),
            slice(&mut self.stb, stb_len),
            self.ssb.as_mut_slice(),
        );
        let ma = if last_a.is_some() {
            Some(slice(&mut self.msgs[la_idx], la_len))
        } else {
            None
        };
        let (rb, lb) = Self::timed(step, Step::DeriveB, &mut acc, || {
            api.derive_b(skb, pka, ma, stb, ssb)
        })
        .map_err(|e| e.to_string())?;
        if ra != 0 || rb != 0 || la != lb || la > s.ss {
            return Err(format!("derive failed (rc {ra}/{rb}, lengths {la}/{lb})"));
        }
        let n = la as usize;
        if self.ssa.as_slice()[..n] != self.ssb.as_slice()[..n] {
            return Err("shared secrets differ".into());
        }
        self.ss_len = la;
        Ok(())
    }

    fn guards_intact(&self) -> bool {
        [
            &self.pka, &self.ska, &self.sta, &self.pkb, &self.skb, &self.stb, &self.ssa, &self.ssb,
        ]
        .iter()
        .all(|b| b.guards_intact())
            && self.msgs.iter().all(|b| b.guards_intact())
    }
}

/// The prepared operation called in the timed loop (§4.4).
enum Op {
    SigKeygen(SigApi, GuardedBuf, GuardedBuf),
    SigSign {
        api: SigApi,
        sk: GuardedBuf,
        sk_len: u64,
        m: GuardedBuf,
        sn: GuardedBuf,
    },
    SigVerify {
        api: SigApi,
        pk: GuardedBuf,
        pk_len: u64,
        sn: GuardedBuf,
        sn_len: u64,
        m: GuardedBuf,
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
        ct: GuardedBuf,
        ct_len: u64,
        ss: GuardedBuf,
        ss_len: u64,
    },
    NSignKeygen(NistSign, GuardedBuf, GuardedBuf),
    NSignSign(NistSign, GuardedBuf, Vec<u8>, GuardedBuf),
    NSignVerify(NistSign, GuardedBuf, Vec<u8>, GuardedBuf, usize),
    NKemKeygen(NistKem, GuardedBuf, GuardedBuf),
    NKemEnc(NistKem, GuardedBuf, GuardedBuf, GuardedBuf),
    NKemDec(NistKem, GuardedBuf, GuardedBuf, GuardedBuf),
    Hash {
        api: HashApi,
        bits: u32,
        msg: GuardedBuf,
        digest: GuardedBuf,
    },
    Kex(Box<Kex>),
}

impl Op {
    fn call(&mut self, st: &mut SigStats) -> Result<(), String> {
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
                sn,
            } => {
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
                sn,
                sn_len,
                m,
            } => {
                let rc = api.verify(slice(pk, *pk_len), slice(sn, *sn_len), m.as_mut_slice());
                if rc != 0 {
                    st.verify_rejections += 1;
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
                ct,
                ct_len,
                ss,
                ss_len,
            } => {
                let (rc, l) = api
                    .dec(slice(sk, *sk_len), slice(ct, *ct_len), ss.as_mut_slice())
                    .map_err(e)?;
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
            Op::NSignSign(api, sk, m, sig) => {
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
            Op::NSignVerify(api, pk, m, sig, len) => {
                let rc = api
                    .verify(&sig.as_slice()[..*len], m, pk.as_slice())
                    .map_err(e)?;
                if rc != 0 {
                    st.verify_rejections += 1;
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
            Op::NKemDec(api, sk, ct, ss) => {
                let rc = api
                    .dec(ss.as_mut_slice(), ct.as_slice(), sk.as_slice())
                    .map_err(e)?;
                if rc != 0 {
                    return Err(format!("crypto_kem_dec rc {rc}"));
                }
            }
            Op::Hash {
                api,
                bits,
                msg,
                digest,
            } => {
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

    fn guards_intact(&self) -> bool {
        let all = |bs: &[&GuardedBuf]| bs.iter().all(|b| b.guards_intact());
        match self {
            Op::SigKeygen(_, a, b) | Op::KemKeygen(_, a, b) => all(&[a, b]),
            Op::SigSign { sk, m, sn, .. } => all(&[sk, m, sn]),
            Op::SigVerify { pk, sn, m, .. } => all(&[pk, sn, m]),
            Op::KemEnc { pk, ss, ct, .. } => all(&[pk, ss, ct]),
            Op::KemDec { sk, ct, ss, .. } => all(&[sk, ct, ss]),
            Op::NSignKeygen(_, a, b) | Op::NKemKeygen(_, a, b) => all(&[a, b]),
            Op::NSignSign(_, a, _, b) | Op::NSignVerify(_, a, _, b, _) => all(&[a, b]),
            Op::NKemEnc(_, a, b, c) | Op::NKemDec(_, a, b, c) => all(&[a, b, c]),
            Op::Hash { msg, digest, .. } => all(&[msg, digest]),
            Op::Kex(k) => k.guards_intact(),
        }
    }
}

/// What the preparation reports besides the operation.
struct Prepared {
    op: Op,
    meta: Vec<(String, String)>,
    stats: SigStats,
    kex_step: Option<Step>,
}

fn gb(n: u64) -> R<GuardedBuf> {
    if n > 1 << 29 {
        return Err(usage(format!("declared size {n} above 2^29 bytes")));
    }
    Ok(GuardedBuf::new(n as usize))
}

fn sizes_meta(pk: u64, sk: u64, ct: u64, ss: u64, sig: u64, dig: u64) -> Vec<(String, String)> {
    [
        ("pk_bytes", pk),
        ("sk_bytes", sk),
        ("ct_bytes", ct),
        ("ss_bytes", ss),
        ("signature_bytes", sig),
        ("digest_bytes", dig),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn prepare_iccs(lib: &Library, a: &DriverArgs, head: &mut Vec<(String, String)>) -> R<Prepared> {
    let meta = lib
        .meta()
        .map_err(|e| usage(format!("invalid harness metadata: {e}")))?;
    head.push(("id".into(), meta.id.clone()));
    head.push(("instance".into(), meta.instance.clone()));
    head.push(("variant".into(), meta.variant.clone()));
    let drng = IccsDrng::new(lib).map_err(|e| usage(format!("missing symbol ngcc_seed: {e}")))?;
    if drng.seed(&SEED) != 0 {
        return Err(setup("DRNG seeding failed"));
    }
    let sym = |e: pqperf_ffi::dl::DlError| usage(format!("missing symbol: {e}"));
    let mut stats = SigStats::default();
    let op = a.op.as_str();
    let mut kex_step = None;
    let (op, sizes) = match meta.kind {
        2 => {
            let api = SigApi::new(lib).map_err(sym)?;
            let s = api.sizes;
            let sizes = sizes_meta(s.pk, s.sk, 0, 0, s.sn, 0);
            let (mut pk, mut sk) = (gb(s.pk)?, gb(s.sk)?);
            if op == "keygen" {
                (Op::SigKeygen(api, pk, sk), sizes)
            } else {
                let o = api
                    .keygen(pk.as_mut_slice(), sk.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if o.rc != 0 || o.pk_len > s.pk || o.sk_len > s.sk {
                    return Err(setup("setup keygen failed"));
                }
                let mut m = GuardedBuf::from_slice(&message64());
                let mut sn = gb(s.sn + 4096)?;
                match op {
                    "sign" => (
                        Op::SigSign {
                            api,
                            sk,
                            sk_len: o.sk_len,
                            m,
                            sn,
                        },
                        sizes,
                    ),
                    "verify" => {
                        let mut got = None;
                        'outer: for t in 0..16 {
                            if t > 0 {
                                let last = m.len() - 1;
                                let b = &mut m.as_mut_slice()[last];
                                *b = b.wrapping_add(1);
                                stats.message_tweaks += 1;
                            }
                            for _ in 0..16 {
                                let (rc, len) = api
                                    .sign(
                                        slice(&mut sk, o.sk_len),
                                        m.as_mut_slice(),
                                        sn.as_mut_slice(),
                                    )
                                    .map_err(|e| setup(e.to_string()))?;
                                if rc == 0 && len <= s.sn + 4096 {
                                    stats.signature_length_excess =
                                        stats.signature_length_excess.max(len.saturating_sub(s.sn));
                                    got = Some(len);
                                    break 'outer;
                                }
                            }
                        }
                        let Some(sn_len) = got else {
                            return Err(setup("setup signing failed"));
                        };
                        (
                            Op::SigVerify {
                                api,
                                pk,
                                pk_len: o.pk_len,
                                sn,
                                sn_len,
                                m,
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
                        (
                            Op::KemDec {
                                api,
                                sk,
                                sk_len: o.sk_len,
                                ct,
                                ct_len: eo.ct_len,
                                ss: ss2,
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
            let msg: Vec<u8> = (0..a.bytes)
                .map(|i| ((i * 131 + a.bytes) % 256) as u8)
                .collect();
            (
                Op::Hash {
                    api,
                    bits: bits as u32,
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
    })
}

fn prepare_nist(lib: &Library, a: &DriverArgs, head: &mut Vec<(String, String)>) -> R<Prepared> {
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
    if rng.seed(&SEED) != 0 {
        return Err(setup("DRBG seeding failed"));
    }
    let sym = |e: pqperf_ffi::dl::DlError| usage(format!("missing symbol: {e}"));
    let op = a.op.as_str();
    let (mut pkb, mut skb) = (gb(*pk)?, gb(*sk)?);
    let stats = SigStats::default();
    let prepared = match kind.as_str() {
        "sign" => {
            let sizes = NistSignSizes {
                pk: *pk as usize,
                sk: *sk as usize,
                sig: *out as usize,
            };
            let api = NistSign::new(lib, namespace, sizes, *ctx).map_err(sym)?;
            let m = message64();
            let meta = sizes_meta(*pk, *sk, 0, 0, *out, 0);
            if op == "keygen" {
                (Op::NSignKeygen(api, pkb, skb), meta)
            } else {
                let rc = api
                    .keypair(pkb.as_mut_slice(), skb.as_mut_slice())
                    .map_err(|e| setup(e.to_string()))?;
                if rc != 0 {
                    return Err(setup("setup keygen failed"));
                }
                let mut sig = gb(*out + 4096)?;
                match op {
                    "sign" => (Op::NSignSign(api, skb, m, sig), meta),
                    "verify" => {
                        let mut len = None;
                        for _ in 0..16 {
                            let (rc, l) = api
                                .signature(sig.as_mut_slice(), &m, skb.as_slice())
                                .map_err(|e| setup(e.to_string()))?;
                            if rc == 0 && l <= *out as usize + 4096 {
                                len = Some(l);
                                break;
                            }
                        }
                        let len = len.ok_or_else(|| setup("setup signing failed"))?;
                        (Op::NSignVerify(api, pkb, m, sig, len), meta)
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
                        (Op::NKemDec(api, skb, ct, ss2), meta)
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
    })
}

struct Out<'a>(&'a mut dyn Write);

impl Out<'_> {
    fn meta(&mut self, k: &str, v: impl std::fmt::Display) {
        let _ = writeln!(self.0, "META\t{k}\t{v}");
        let _ = self.0.flush();
    }
    fn line(&mut self, s: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{s}");
        let _ = self.0.flush();
    }
}

/// Runs the driver and returns its exit status; everything goes to `out`, errors also to
/// `err`.
pub fn run(a: &DriverArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run_inner(a, out) {
        Ok(code) => code,
        Err(Fail(code, msg)) => {
            let _ = writeln!(err, "{msg}");
            code
        }
    }
}

fn run_inner(a: &DriverArgs, w: &mut dyn Write) -> R<i32> {
    if !(1..=16).contains(&a.trials) || a.iters < 1 {
        return Err(usage("trials must be 1..16 and iterations >= 1"));
    }
    if let Some(c) = a.cpu {
        affinity::pin_to(c).map_err(|e| usage(format!("cannot pin to CPU {c}: {e}")))?;
    }
    procinfo::disable_core_dumps();
    let lib = Library::open(&a.lib).map_err(|e| usage(e.to_string()))?;
    let mut head = Vec::new();
    let mut p = match a.api {
        ApiSpec::Iccs => prepare_iccs(&lib, a, &mut head)?,
        ApiSpec::Nist { .. } => prepare_nist(&lib, a, &mut head)?,
    };
    if !p.op.guards_intact() {
        return Err(setup(
            "guard bytes overwritten during setup (buffer overflow)",
        ));
    }
    let baseline = procinfo::rss_bytes().unwrap_or(0);
    let peak_reset = procinfo::reset_peak_rss();
    let counter = if a.force_ticks {
        Counter::ticks()
    } else {
        Counter::best()
    };
    let mut o = Out(w);
    for (k, v) in &head {
        o.meta(k, v);
    }
    o.meta("operation", &a.op);
    o.meta("input_bytes", a.bytes);
    let flags = lib
        .build_flags()
        .or_else(|| lib.meta().ok().map(|m| m.build_flags))
        .unwrap_or_default();
    o.meta("build_flags", flags);
    o.meta("baseline_rss_bytes", baseline);
    for (k, v) in &p.meta {
        o.meta(k, v);
    }
    let step = p.kex_step.filter(|s| *s != Step::Whole);
    o.meta("mode", "fixed_iterations");
    o.meta(
        "cpu_cycles_available",
        if counter.kind() == CounterKind::Cycles {
            "yes"
        } else {
            "no"
        },
    );
    o.meta(
        "timing_scope",
        if step.is_some() {
            "per_call_step"
        } else {
            "loop"
        },
    );
    let _ = writeln!(o.0, "PQPERF\tcounter\t{}", counter.kind().evidence_name());
    let _ = writeln!(o.0, "PQPERF\tpeak_rss_reset\t{}", peak_reset);
    for _ in 0..a.warmups {
        p.op.call(&mut p.stats)
            .map_err(|e| setup(format!("warm-up operation failed: {e}")))?;
    }
    o.meta("warmups", a.warmups);
    let mut total = 0u64;
    // Touch the sample buffer and warm the clock and counter paths (first vDSO call, page
    // faults) so none of that lands inside a timed trial.
    let mut stamps: Vec<u64> = if a.samples {
        vec![1; a.iters as usize + 1]
    } else {
        Vec::new()
    };
    for _ in 0..2 {
        let b = counter.begin();
        let _ = counters::monotonic_raw_ns();
        let _ = counters::ticks();
        let _ = counter.end(b);
    }
    for t in 1..=a.trials {
        let (ns, count) = if let (Some(s), Op::Kex(k)) = (step, &mut p.op) {
            let mut acc = Acc {
                counter: &counter,
                ns: 0,
                count: 0,
            };
            for _ in 0..a.iters {
                k.exchange(s, Some(&mut acc))
                    .map_err(|e| setup(format!("measured operation failed: {e}")))?;
            }
            (acc.ns, acc.count)
        } else if a.samples {
            let b = counter.begin();
            let t0 = counters::monotonic_raw_ns();
            stamps[0] = counters::ticks();
            for slot in stamps[1..].iter_mut() {
                p.op.call(&mut p.stats)
                    .map_err(|e| setup(format!("measured operation failed: {e}")))?;
                *slot = counters::ticks();
            }
            let t1 = counters::monotonic_raw_ns();
            (t1 - t0, counter.end(b))
        } else {
            let b = counter.begin();
            let t0 = counters::monotonic_raw_ns();
            for _ in 0..a.iters {
                p.op.call(&mut p.stats)
                    .map_err(|e| setup(format!("measured operation failed: {e}")))?;
            }
            let t1 = counters::monotonic_raw_ns();
            (t1 - t0, counter.end(b))
        };
        if !p.op.guards_intact() {
            return Err(setup("guard bytes overwritten (buffer overflow)"));
        }
        total += a.iters;
        o.line(format_args!(
            "TRIAL\t{t}\t{}\t{}.{:09}\t{count}",
            a.iters,
            ns / 1_000_000_000,
            ns % 1_000_000_000
        ));
        if a.samples && stamps.len() > 1 {
            let mut line = format!("SAMPLES\t{t}\t");
            for w in stamps.windows(2) {
                line.push_str(&(w[1] - w[0]).to_string());
                line.push(' ');
            }
            line.pop();
            o.line(line);
        }
    }
    if matches!(
        p.op,
        Op::SigKeygen(..)
            | Op::SigSign { .. }
            | Op::SigVerify { .. }
            | Op::NSignKeygen(..)
            | Op::NSignSign(..)
            | Op::NSignVerify(..)
    ) {
        let s = &p.stats;
        o.meta("sign_failures_retried", s.sign_failures_retried);
        o.meta("message_tweaks", s.message_tweaks);
        o.meta("setup_verify_failed", 0);
        o.meta("signature_length_excess", s.signature_length_excess);
        o.meta("verify_rejections", s.verify_rejections);
    }
    o.meta("peak_rss_bytes", procinfo::vm_hwm_bytes().unwrap_or(0));
    o.meta("measurement_count", total);
    o.meta(
        "guide_100_measurements",
        if total >= 100 { "met" } else { "not_met" },
    );
    o.line("STATUS\tcomplete");
    Ok(0)
}

impl DriverArgs {
    /// The argument list after `pqperf driver` (reference order, then pqperf options).
    pub fn to_argv(&self) -> Vec<String> {
        let mut v = vec![
            self.lib.to_string_lossy().into_owned(),
            self.op.clone(),
            self.bytes.to_string(),
            self.trials.to_string(),
            "1".to_string(),
            self.iters.to_string(),
            self.warmups.to_string(),
        ];
        if let Some(c) = self.cpu {
            v.push("--cpu".into());
            v.push(c.to_string());
        }
        if self.samples {
            v.push("--samples".into());
        }
        if self.force_ticks {
            v.push("--ticks".into());
        }
        if let ApiSpec::Nist {
            kind,
            namespace,
            pk,
            sk,
            out,
            ss,
            ctx,
            id,
            instance,
        } = &self.api
        {
            v.push("--nist".into());
            v.push(format!(
                "{kind}:{namespace}:{pk}:{sk}:{out}:{ss}:{}:{id}:{instance}",
                u8::from(*ctx)
            ));
        }
        v
    }

    /// Parses what [`DriverArgs::to_argv`] writes.
    pub fn parse(argv: &[String]) -> Result<DriverArgs, String> {
        let mut pos = Vec::new();
        let mut a = DriverArgs {
            lib: PathBuf::new(),
            op: String::new(),
            bytes: 0,
            trials: 1,
            iters: 1,
            warmups: 0,
            cpu: None,
            samples: false,
            force_ticks: false,
            api: ApiSpec::Iccs,
        };
        let mut it = argv.iter();
        while let Some(x) = it.next() {
            match x.as_str() {
                "--cpu" => {
                    a.cpu = Some(
                        it.next()
                            .and_then(|c| c.parse().ok())
                            .ok_or("--cpu needs a number")?,
                    )
                }
                "--samples" => a.samples = true,
                "--ticks" => a.force_ticks = true,
                "--nist" => {
                    let spec = it.next().ok_or("--nist needs a value")?;
                    let f: Vec<&str> = spec.splitn(9, ':').collect();
                    if f.len() != 9 {
                        return Err(format!("bad --nist value {spec}"));
                    }
                    let n = |s: &str| s.parse::<u64>().map_err(|_| format!("bad number {s}"));
                    a.api = ApiSpec::Nist {
                        kind: f[0].to_string(),
                        namespace: f[1].to_string(),
                        pk: n(f[2])?,
                        sk: n(f[3])?,
                        out: n(f[4])?,
                        ss: n(f[5])?,
                        ctx: f[6] == "1",
                        id: f[7].to_string(),
                        instance: f[8].to_string(),
                    };
                }
                _ => pos.push(x.clone()),
            }
        }
        if pos.len() != 7 {
            return Err(format!(
                "usage: pqperf driver LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N] [--samples] (got {} positional arguments)",
                pos.len()
            ));
        }
        let n = |s: &str| s.parse::<u64>().map_err(|_| format!("bad number {s}"));
        a.lib = PathBuf::from(&pos[0]);
        a.op = pos[1].clone();
        a.bytes = n(&pos[2])?;
        a.trials = n(&pos[3])? as u32;
        a.iters = n(&pos[5])?;
        a.warmups = n(&pos[6])?;
        Ok(a)
    }
}

/// The driver's preparation for other stages (the hash profiler, `pqperf-profile`): the same
/// loading, seeding and honest inputs as a timing run, so profiled inputs are exactly those the
/// benchmark times. [`PreparedOp::call`] runs the operation once, as one timed call does.
pub struct PreparedOp {
    prepared: Prepared,
    meta: Vec<(String, String)>,
}

impl PreparedOp {
    /// Open `a.lib`, seed and prepare `a.op`; on failure (exit status, message) as the driver
    /// would report them.
    pub fn prepare(a: &DriverArgs) -> Result<PreparedOp, (i32, String)> {
        let lib = Library::open(&a.lib).map_err(|e| (2, e.to_string()))?;
        let mut head = Vec::new();
        let p = match a.api {
            ApiSpec::Iccs => prepare_iccs(&lib, a, &mut head),
            ApiSpec::Nist { .. } => prepare_nist(&lib, a, &mut head),
        }
        .map_err(|Fail(c, m)| (c, m))?;
        if !p.op.guards_intact() {
            return Err((
                3,
                "guard bytes overwritten during setup (buffer overflow)".into(),
            ));
        }
        head.extend(p.meta.iter().cloned());
        Ok(PreparedOp {
            prepared: p,
            meta: head,
        })
    }

    /// META pairs of the preparation (`id`, `instance`, `variant`, sizes …).
    pub fn meta(&self) -> &[(String, String)] {
        &self.meta
    }

    /// Run the operation once (KEX: one complete exchange).
    pub fn call(&mut self) -> Result<(), String> {
        self.prepared.op.call(&mut self.prepared.stats)
    }
}
