//! `pqperf iccs ...`: vector checks of the ICCS primitives and the random generators.
//!
//! Reads hex, prints lowercase hex, one line per output. A primitive that fails prints its
//! ICCS return code on stderr and the command exits with status 1.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use pqperf_campaign::Exit;
use pqperf_iccs::{Drng, HqcPrng, IccsError, NistDrbg};
use pqperf_model::layout::RunLayout;

/// Evaluate the ICCS placeholder primitives and the random generators on hex input.
///
/// All ICCS lengths are in bits; a bit string of L bits is given as ceil(L/8) bytes of hex,
/// MSB first (bits of the last byte beyond L are ignored). Output is lowercase hex, one line
/// per result. On an ICCS error the return code is printed and the exit status is 1.
#[derive(Args)]
pub struct IccsArgs {
    #[command(subcommand)]
    command: IccsCommand,
}

#[derive(Subcommand)]
enum IccsCommand {
    /// sm3hash(256, msg, bits): SM3 of the first L bits of the message (32 bytes).
    #[command(name = "sm3hash")]
    Sm3hash {
        #[command(flatten)]
        msg: MsgArgs,
        /// Digest length in bits passed to sm3hash (only 256 is valid; others give −4).
        #[arg(long, default_value_t = 256, allow_negative_numbers = true)]
        digest_bits: i32,
    },
    /// pseudohash(D, msg, bits): HMAC-SM3 based hash, D ∈ {512, 768, 1024} bits.
    #[command(name = "pseudohash")]
    Pseudohash {
        /// Digest width D in bits: 512, 768 or 1024 (others give return code −4).
        #[arg(long, allow_negative_numbers = true)]
        width: i32,
        #[command(flatten)]
        msg: MsgArgs,
    },
    /// pseudoXOF(N, msg, bits): KDF-SM3 counter mode, N output bits (last byte masked).
    #[command(name = "pseudoxof")]
    Pseudoxof {
        /// Output length N in bits (0 prints an empty line).
        #[arg(long)]
        out_bits: u64,
        #[command(flatten)]
        msg: MsgArgs,
    },
    /// The ICCS SM3 Hash_DRBG: init_random_number(seed), then one get_random_number per draw.
    ///
    /// Draw sizes are in bits; every draw (also 0 bits, printed as an empty line) advances
    /// the state once, so "512" and "256,256" differ after the first 32 bytes.
    #[command(name = "drng")]
    Drng {
        /// Seed as hex (any length in bytes, may be empty).
        #[arg(long, default_value = "")]
        seed: String,
        /// Comma-separated draw sizes in bits, e.g. 512,0,13.
        #[arg(long, value_delimiter = ',', required = true)]
        draws: Vec<u64>,
    },
    /// The NIST/PQClean AES-256 CTR DRBG: randombytes_init(seed), then randombytes per draw.
    ///
    /// Example: --seed 000102…2f --draws 48 prints the `seed =` of PQClean's first KAT entry.
    #[command(name = "nist-drbg")]
    NistDrbg {
        #[command(flatten)]
        rng: RngArgs,
    },
    /// PQClean's HQC KAT generator (SHAKE-256 stream): hqc_kat_init(seed), then randombytes.
    #[command(name = "hqc-rng")]
    HqcRng {
        #[command(flatten)]
        rng: RngArgs,
    },
    /// Per-call cost of the ICCS helpers (TSC ticks) for pqperf's provider and, with
    /// --official, the official auxfunc.c/drng.c (reference flags, and -fno-tree-vectorize),
    /// side by side with ratios. The official files are checked bit-exact against pqperf's
    /// vectors first. The table is also written to <run-dir>/profile/iccs-provider-bench.json
    /// (the method page states the ratio from it).
    #[command(name = "bench")]
    Bench {
        /// Folder with the official auxfunc.c, auxfunc.h, drng.c, drng.h.
        #[arg(long)]
        official: Option<std::path::PathBuf>,
        /// Run directory (provider libraries go to <run-dir>/provider/bench/).
        #[arg(long, default_value = "runs/default")]
        run_dir: std::path::PathBuf,
        /// Interleaved batches per cell (the cell is their median).
        #[arg(long, default_value_t = 21)]
        batches: usize,
        /// Approximate ticks per batch.
        #[arg(long, default_value_t = 2_000_000)]
        batch_ticks: u64,
        /// Pin to this CPU while timing.
        #[arg(long)]
        cpu: Option<usize>,
    },
}

#[derive(Args)]
struct MsgArgs {
    /// Message as hex (may be empty).
    #[arg(long, default_value = "")]
    msg: String,
    /// Message length in bits (default: 8 × message bytes); at most 8 × message bytes.
    #[arg(long)]
    bits: Option<u64>,
}

#[derive(Args)]
struct RngArgs {
    /// 48-byte entropy input as hex (96 hex digits).
    #[arg(long)]
    seed: String,
    /// Optional 48-byte personalization string as hex.
    #[arg(long)]
    personalization: Option<String>,
    /// Comma-separated draw sizes in bytes.
    #[arg(long, value_delimiter = ',', required = true)]
    draws: Vec<usize>,
}

pub fn run(args: IccsArgs) -> anyhow::Result<ExitCode> {
    if let IccsCommand::Bench {
        official,
        run_dir,
        batches,
        batch_ticks,
        cpu,
    } = &args.command
    {
        return bench(official.as_deref(), run_dir, *batches, *batch_ticks, *cpu);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match evaluate(&args.command, &mut out)? {
        Ok(()) => Ok(Exit::Done.into()),
        Err(e) => {
            out.flush()?;
            eprintln!("pqperf iccs: {e}");
            Ok(Exit::Failed.into())
        }
    }
}

/// `pqperf iccs bench`: build the provider libraries, time them, print and save the table.
fn bench(
    official: Option<&std::path::Path>,
    run_dir: &std::path::Path,
    batches: usize,
    batch_ticks: u64,
    cpu: Option<usize>,
) -> anyhow::Result<ExitCode> {
    use pqperf_profile::providerbench as pb;
    let providers = pb::build_providers(&RunLayout::new(run_dir).provider_bench_dir(), official)
        .context("building the ICCS provider libraries")?;
    if let Some(c) = cpu {
        pqperf_ffi::affinity::pin_to(c).with_context(|| format!("pinning to CPU {c}"))?;
    }
    let t = pb::run(&providers, batches, batch_ticks)?;
    println!(
        "ICCS provider cost: {} ticks per call (median of {} interleaved batches; reference ticks, not core cycles)\n",
        t.counter, t.batches
    );
    for (name, r) in t.providers.iter().zip(&t.records) {
        println!("- {name}: {}", pqperf_build::provider::describe_json(r));
    }
    println!();
    print!("{}", t.to_markdown());
    if let Some(nv) = t.column("official -fno-tree-vectorize") {
        for c in pb::CALLS.iter().filter(|c| c.is_drng()) {
            if let (Some(p), Some(o)) = (t.ticks(*c, 0), t.ticks(*c, nv)) {
                println!(
                    "\n{}: pqperf {} the official -fno-tree-vectorize build per byte (ratio {:.2})",
                    c.label(),
                    if p <= o {
                        "is no slower than"
                    } else {
                        "is SLOWER than"
                    },
                    p / o
                );
            }
        }
    }
    let path = RunLayout::new(run_dir).iccs_provider_bench();
    let text = pqperf_model::pyjson::to_string(&t)?;
    pqperf_model::fsutil::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    println!("\nwrote {}", path.display());
    Ok(Exit::Done.into())
}

/// Run one subcommand, writing result lines to `out`. The outer error is bad input (hex,
/// lengths, I/O); the inner one an ICCS return code.
fn evaluate(cmd: &IccsCommand, out: &mut impl Write) -> anyhow::Result<Result<(), IccsError>> {
    match cmd {
        IccsCommand::Sm3hash { msg, digest_bits } => {
            let (m, bits) = msg.parse()?;
            match pqperf_iccs::sm3hash(*digest_bits, &m, bits) {
                Ok(d) => writeln!(out, "{}", to_hex(&d))?,
                Err(e) => return Ok(Err(e)),
            }
        }
        IccsCommand::Pseudohash { width, msg } => {
            let (m, bits) = msg.parse()?;
            let mut d = [0u8; 128];
            match pqperf_iccs::pseudohash(*width, &m, bits, &mut d) {
                Ok(n) => writeln!(out, "{}", to_hex(&d[..n]))?,
                Err(e) => return Ok(Err(e)),
            }
        }
        IccsCommand::Pseudoxof { out_bits, msg } => {
            let (m, bits) = msg.parse()?;
            let n = usize::try_from(out_bits.div_ceil(8))
                .ok()
                .filter(|&n| n <= 1 << 30)
                .context("--out-bits: at most 2^33 bits are supported here")?;
            let mut d = vec![0u8; n];
            match pqperf_iccs::pseudoxof(*out_bits, &m, bits, &mut d) {
                Ok(k) => writeln!(out, "{}", to_hex(&d[..k]))?,
                Err(e) => return Ok(Err(e)),
            }
        }
        IccsCommand::Drng { seed, draws } => {
            let seed = from_hex(seed).context("--seed")?;
            let mut drng = Drng::new(&seed);
            for &bits in draws {
                let n = usize::try_from(bits.div_ceil(8))
                    .ok()
                    .filter(|&n| n <= 1 << 30)
                    .context("--draws: at most 2^33 bits per draw are supported here")?;
                let mut d = vec![0u8; n];
                match drng.generate(&mut d, bits) {
                    Ok(k) => writeln!(out, "{}", to_hex(&d[..k]))?,
                    Err(e) => return Ok(Err(e)),
                }
            }
        }
        IccsCommand::NistDrbg { rng } => {
            let (entropy, pers) = rng.parse()?;
            let mut g = NistDrbg::new(&entropy, pers.as_ref());
            rng.draw(|buf| g.fill(buf), out)?;
        }
        IccsCommand::Bench { .. } => bail!("bench is not an evaluation"),
        IccsCommand::HqcRng { rng } => {
            let (entropy, pers) = rng.parse()?;
            let mut g = HqcPrng::new(&entropy, pers.as_ref());
            rng.draw(|buf| g.fill(buf), out)?;
        }
    }
    Ok(Ok(()))
}

impl MsgArgs {
    /// The message bytes and its bit length.
    fn parse(&self) -> anyhow::Result<(Vec<u8>, u64)> {
        let m = from_hex(&self.msg).context("--msg")?;
        let avail = 8 * m.len() as u64;
        let bits = self.bits.unwrap_or(avail);
        if bits > avail {
            bail!(
                "--bits {bits} needs {} message bytes, --msg has {}",
                bits.div_ceil(8),
                m.len()
            );
        }
        Ok((m, bits))
    }
}

impl RngArgs {
    fn parse(&self) -> anyhow::Result<([u8; 48], Option<[u8; 48]>)> {
        let e = from_hex(&self.seed).context("--seed")?;
        let entropy: [u8; 48] = e.as_slice().try_into().map_err(|_| {
            anyhow::anyhow!("--seed must be 48 bytes (96 hex digits), got {}", e.len())
        })?;
        let pers = match &self.personalization {
            None => None,
            Some(p) => {
                let p = from_hex(p).context("--personalization")?;
                Some(p.as_slice().try_into().map_err(|_| {
                    anyhow::anyhow!("--personalization must be 48 bytes, got {}", p.len())
                })?)
            }
        };
        Ok((entropy, pers))
    }

    fn draw(&self, mut fill: impl FnMut(&mut [u8]), out: &mut impl Write) -> anyhow::Result<()> {
        for &n in &self.draws {
            if n > 1 << 30 {
                bail!("--draws: at most 2^30 bytes per draw are supported here");
            }
            let mut d = vec![0u8; n];
            fill(&mut d);
            writeln!(out, "{}", to_hex(&d))?;
        }
        Ok(())
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Parse hex (either case; an optional `0x` prefix; whitespace and `_` ignored).
fn from_hex(s: &str) -> anyhow::Result<Vec<u8>> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    let digits: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'_')
        .collect();
    if !digits.len().is_multiple_of(2) {
        bail!("odd number of hex digits ({})", digits.len());
    }
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(i, p)| {
            let v = |c: u8| (c as char).to_digit(16);
            match (v(p[0]), v(p[1])) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => bail!(
                    "not a hex digit pair at byte {i}: {:?}",
                    String::from_utf8_lossy(p)
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: IccsCommand,
    }

    fn eval(argv: &[&str]) -> anyhow::Result<Result<String, i32>> {
        let cli = Cli::try_parse_from(std::iter::once("iccs").chain(argv.iter().copied()))?;
        let mut out = Vec::new();
        Ok(evaluate(&cli.cmd, &mut out)?
            .map(|()| String::from_utf8(out).unwrap())
            .map_err(|e| e.code()))
    }

    #[test]
    fn spec_vectors_through_the_cli() {
        assert_eq!(
            eval(&["sm3hash", "--msg", "616263", "--bits", "24"]).unwrap(),
            Ok("66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0\n".into())
        );
        assert_eq!(
            eval(&["sm3hash", "--msg", "616263", "--bits", "20"]).unwrap(),
            Ok("3c67c85bc057fee93dd958542b6abbe5c49b689811ddbf4e8639e2dc495dafbd\n".into())
        );
        let ph = eval(&["pseudohash", "--width", "512", "--msg", "616263"]).unwrap();
        assert!(ph.unwrap().starts_with("9ae35811886caf80"));
        assert_eq!(
            eval(&[
                "pseudoxof",
                "--out-bits",
                "100",
                "--msg",
                "616263",
                "--bits",
                "24"
            ])
            .unwrap(),
            Ok("fe1ea80dac6f100c33537bd240\n".into())
        );
        assert_eq!(
            eval(&["pseudoxof", "--out-bits", "0", "--msg", "616263"]).unwrap(),
            Ok("\n".into())
        );
        let seed: String = (0..48).map(|i| format!("{i:02x}")).collect();
        let d = eval(&["drng", "--seed", &seed, "--draws", "13,0,256"])
            .unwrap()
            .unwrap();
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "b568");
        assert_eq!(lines[1], "");
        assert_eq!(lines[2].len(), 64);
        let d = eval(&["drng", "--seed", &seed, "--draws", "0,256"])
            .unwrap()
            .unwrap();
        assert_eq!(
            d,
            "\n6a0b45b7f8fc88d63cce4ea82b79c3857e6a6804b069368fe4ee382ecfacdaf9\n"
        );
        let n = eval(&["nist-drbg", "--seed", &seed, "--draws", "48"])
            .unwrap()
            .unwrap();
        assert_eq!(
            n,
            "061550234d158c5ec95595fe04ef7a25767f2e24cc2bc479d09d86dc9abcfde7056a8c266f9ef97ed08541dbd2e1ffa1\n"
        );
        let h = eval(&["hqc-rng", "--seed", &seed, "--draws", "3,0,5"])
            .unwrap()
            .unwrap();
        assert_eq!(h.lines().count(), 3);
    }

    #[test]
    fn errors_give_return_codes_or_messages() {
        assert_eq!(
            eval(&["pseudohash", "--width", "300", "--msg", "00"]).unwrap(),
            Err(-4)
        );
        assert_eq!(
            eval(&["sm3hash", "--digest-bits", "512", "--msg", "00"]).unwrap(),
            Err(-4)
        );
        assert!(eval(&["sm3hash", "--msg", "0g"]).is_err());
        assert!(eval(&["sm3hash", "--msg", "616263", "--bits", "25"]).is_err());
        let seed: String = (0..47).map(|i| format!("{i:02x}")).collect();
        assert!(eval(&["nist-drbg", "--seed", &seed, "--draws", "1"]).is_err());
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(from_hex("0xAb_cd 01").unwrap(), vec![0xab, 0xcd, 0x01]);
        assert_eq!(to_hex(&[0xab, 0x01]), "ab01");
        assert!(from_hex("abc").is_err());
    }
}
