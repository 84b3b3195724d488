//! Key exchange in the driver: one complete exchange as the official KAT_KEX driver runs it,
//! with one step (init, pass, derive) bracketed by the counter when that step is timed.

use super::*;

pub(super) struct Kex {
    pub(super) api: KexApi,
    pub(super) declared: usize,
    pub(super) pka: GuardedBuf,
    pub(super) ska: GuardedBuf,
    pub(super) sta: GuardedBuf,
    pub(super) pkb: GuardedBuf,
    pub(super) skb: GuardedBuf,
    pub(super) stb: GuardedBuf,
    pub(super) ssa: GuardedBuf,
    pub(super) ssb: GuardedBuf,
    pub(super) msgs: Vec<GuardedBuf>,
    pub(super) lens: Vec<u64>,
    pub(super) passes_run: usize,
    pub(super) ss_len: u64,
}

/// Timed step of a key exchange.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Step {
    Whole,
    InitA,
    InitB,
    Pass(usize),
    DeriveA,
    DeriveB,
}

pub(super) struct Acc<'a> {
    pub(super) counter: &'a Counter,
    pub(super) ns: u64,
    pub(super) count: u64,
}

impl Kex {
    pub(super) fn timed<T>(
        step: Step,
        me: Step,
        acc: &mut Option<&mut Acc>,
        f: impl FnOnce() -> T,
    ) -> T {
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
    /// The count phase ends each counted exchange at this function's return
    /// (`pqperf_count::KEX_EXCHANGE_FN`): keep its name and keep it a function of its own.
    #[inline(never)]
    pub(super) fn exchange(&mut self, step: Step, mut acc: Option<&mut Acc>) -> Result<(), String> {
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

    pub(super) fn guards_intact(&self) -> bool {
        [
            &self.pka, &self.ska, &self.sta, &self.pkb, &self.skb, &self.stb, &self.ssa, &self.ssb,
        ]
        .iter()
        .all(|b| b.guards_intact())
            && self.msgs.iter().all(|b| b.guards_intact())
    }
}
