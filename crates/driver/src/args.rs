//! Arguments of one driver run and their argv form (`pqperf-driver LIB OP BYTES TRIALS 1 ITERS
//! WARMUPS [options]`, reference order first), written by the orchestrator and parsed by the
//! child.

use super::*;

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

impl ApiSpec {
    /// The NIST API of a catalog instance (`kind`: `sign` or `kem`; `id`, `instance` for the
    /// META lines).
    pub fn nist(
        kind: &str,
        n: &pqperf_model::catalog::NistApi,
        id: &str,
        instance: &str,
    ) -> ApiSpec {
        ApiSpec::Nist {
            kind: kind.to_string(),
            namespace: n.namespace.clone(),
            pk: n.pk_bytes,
            sk: n.sk_bytes,
            out: n.sig_bytes.or(n.ct_bytes).unwrap_or(0),
            ss: n.ss_bytes.unwrap_or(0),
            ctx: n.ctx,
            id: id.to_string(),
            instance: instance.to_string(),
        }
    }
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
    /// Stack bytes painted by the memory pass (`--stack-region`, default
    /// [`crate::DEFAULT_STACK_REGION`]).
    pub stack_region: u64,
    /// The DRNG seed of this process (`--seed HEX`, `pqperf_model::stream`); `None`: the
    /// reference's fixed seed.
    pub seed: Option<[u8; pqperf_model::stream::SEED_BYTES]>,
    /// Most entries of the verify/dec input pool (`--pool-max N`, for experiments: pqperf's
    /// own runs pass none, since a smaller pool repeats timed inputs); `None`: the pool covers
    /// the process's calls within [`crate::inputs::pool_size`]'s bounds.
    pub pool_max: Option<u64>,
    /// The preparer of a relayed process (`--prepare`): prepare the verify/dec inputs, report
    /// them (`inputs::Relay`) and time nothing.
    pub prepare: bool,
    /// A timing process whose verify/dec inputs the parent relays (`--relayed`,
    /// `inputs::Relay`): it reads its key and inputs from the control pipe.
    pub relayed: bool,
}

impl DriverArgs {
    /// The argument list after `pqperf-driver` (reference order, then pqperf options).
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
        if self.stack_region != crate::DEFAULT_STACK_REGION {
            v.push("--stack-region".into());
            v.push(self.stack_region.to_string());
        }
        if let Some(s) = &self.seed {
            v.push("--seed".into());
            v.push(pqperf_model::stream::seed_hex(s));
        }
        if let Some(n) = self.pool_max {
            v.push("--pool-max".into());
            v.push(n.to_string());
        }
        if self.prepare {
            v.push("--prepare".into());
        }
        if self.relayed {
            v.push("--relayed".into());
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
            let nums = [
                ("--pk-bytes", pk),
                ("--sk-bytes", sk),
                ("--out-bytes", out),
                ("--ss-bytes", ss),
            ];
            v.extend(["--nist-kind".into(), kind.clone()]);
            v.extend(["--namespace".into(), namespace.clone()]);
            for (flag, n) in nums {
                v.extend([flag.to_string(), n.to_string()]);
            }
            if *ctx {
                v.push("--ctx".into());
            }
            v.extend(["--id".into(), id.clone()]);
            v.extend(["--instance".into(), instance.clone()]);
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
            stack_region: crate::DEFAULT_STACK_REGION,
            seed: None,
            pool_max: None,
            prepare: false,
            relayed: false,
        };
        let mut nist = NistArgs::default();
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
                "--stack-region" => a.stack_region = number(&mut it, x)?,
                "--seed" => {
                    a.seed = Some(pqperf_model::stream::parse_seed_hex(&value(&mut it, x)?)?)
                }
                "--pool-max" => a.pool_max = Some(number(&mut it, x)?),
                "--prepare" => a.prepare = true,
                "--relayed" => a.relayed = true,
                "--nist-kind" => nist.kind = Some(value(&mut it, x)?),
                "--namespace" => nist.namespace = Some(value(&mut it, x)?),
                "--pk-bytes" => nist.pk = Some(number(&mut it, x)?),
                "--sk-bytes" => nist.sk = Some(number(&mut it, x)?),
                "--out-bytes" => nist.out = Some(number(&mut it, x)?),
                "--ss-bytes" => nist.ss = Some(number(&mut it, x)?),
                "--ctx" => nist.ctx = true,
                "--id" => nist.id = Some(value(&mut it, x)?),
                "--instance" => nist.instance = Some(value(&mut it, x)?),
                _ => pos.push(x.clone()),
            }
        }
        a.api = nist.into_api()?;
        if pos.len() != 7 {
            return Err(format!(
                "usage: pqperf-driver LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N] [--samples] [--ticks] [--stack-region BYTES] [--seed HEX] [--pool-max N] [--prepare | --relayed] [--nist-kind K --namespace NS --pk-bytes N --sk-bytes N --out-bytes N --ss-bytes N [--ctx] --id ID --instance NAME] (got {} positional arguments)",
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

/// The NIST-API options as parsed; all or none must be given.
#[derive(Default)]
struct NistArgs {
    kind: Option<String>,
    namespace: Option<String>,
    pk: Option<u64>,
    sk: Option<u64>,
    out: Option<u64>,
    ss: Option<u64>,
    ctx: bool,
    id: Option<String>,
    instance: Option<String>,
}

impl NistArgs {
    /// `ApiSpec::Iccs` when no NIST option was given, else the complete NIST description.
    fn into_api(self) -> Result<ApiSpec, String> {
        let given = self.kind.is_some()
            || self.namespace.is_some()
            || self.pk.is_some()
            || self.sk.is_some()
            || self.out.is_some()
            || self.ss.is_some()
            || self.ctx
            || self.id.is_some()
            || self.instance.is_some();
        if !given {
            return Ok(ApiSpec::Iccs);
        }
        let need = |flag: &str| format!("NIST API: {flag} is missing");
        Ok(ApiSpec::Nist {
            kind: self.kind.ok_or_else(|| need("--nist-kind"))?,
            namespace: self.namespace.ok_or_else(|| need("--namespace"))?,
            pk: self.pk.ok_or_else(|| need("--pk-bytes"))?,
            sk: self.sk.ok_or_else(|| need("--sk-bytes"))?,
            out: self.out.ok_or_else(|| need("--out-bytes"))?,
            ss: self.ss.ok_or_else(|| need("--ss-bytes"))?,
            ctx: self.ctx,
            id: self.id.ok_or_else(|| need("--id"))?,
            instance: self.instance.ok_or_else(|| need("--instance"))?,
        })
    }
}

fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<String, String> {
    it.next()
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn number<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<u64, String> {
    let v = value(it, flag)?;
    v.parse()
        .map_err(|_| format!("{flag} needs a number, got {v:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(api: ApiSpec) -> DriverArgs {
        DriverArgs {
            lib: PathBuf::from("lib/ml-dsa-44/libml-dsa-44.so"),
            op: "sign".into(),
            bytes: 0,
            trials: 5,
            iters: 120,
            warmups: 3,
            cpu: Some(1),
            samples: true,
            force_ticks: false,
            api,
            stack_region: 65536,
            seed: Some(pqperf_model::stream::process_seed(3)),
            pool_max: Some(40),
            prepare: false,
            relayed: true,
        }
    }

    #[test]
    fn argv_round_trips_for_both_apis() {
        let iccs = args(ApiSpec::Iccs);
        assert_eq!(
            DriverArgs::parse(&iccs.to_argv()).unwrap().api,
            ApiSpec::Iccs
        );
        // Names with the old packing separator survive as whole arguments.
        let nist = args(ApiSpec::Nist {
            kind: "sign".into(),
            namespace: "PQCLEAN_MLDSA44_CLEAN".into(),
            pk: 1312,
            sk: 2560,
            out: 2420,
            ss: 0,
            ctx: true,
            id: "ml-dsa-44".into(),
            instance: "ML-DSA-44:clean".into(),
        });
        let argv = nist.to_argv();
        assert!(argv.iter().any(|a| a == "--namespace"));
        let back = DriverArgs::parse(&argv).unwrap();
        assert_eq!(back.api, nist.api);
        assert_eq!((back.trials, back.iters, back.warmups), (5, 120, 3));
        assert_eq!(back.cpu, Some(1));
        assert_eq!(back.stack_region, 65536);
        assert_eq!(back.seed, Some(pqperf_model::stream::process_seed(3)));
        assert_eq!(back.pool_max, Some(40));
        assert!(back.relayed && !back.prepare);
        // Without a seed: none on the argv, the reference seed in the driver.
        let mut plain = args(ApiSpec::Iccs);
        plain.seed = None;
        plain.pool_max = None;
        assert!(!plain.to_argv().iter().any(|a| a == "--seed"));
        assert!(!plain.to_argv().iter().any(|a| a == "--pool-max"));
        assert_eq!(DriverArgs::parse(&plain.to_argv()).unwrap().seed, None);
    }

    #[test]
    fn incomplete_nist_options_are_refused() {
        let mut argv = args(ApiSpec::Iccs).to_argv();
        argv.extend(["--nist-kind".to_string(), "kem".to_string()]);
        let e = DriverArgs::parse(&argv).unwrap_err();
        assert!(e.contains("--namespace"), "{e}");
        argv.push("--pk-bytes".into());
        assert!(DriverArgs::parse(&argv).unwrap_err().contains("--pk-bytes"));
    }
}
