//! ICCS provider cost (`pqperf iccs bench`): the per-call tick cost of `sm3hash`,
//! `pseudohash`, `pseudoXOF` and `get_random_number` for pqperf's provider and, when the
//! official files are given, for the official `auxfunc.c`/`drng.c` built with the reference
//! flags and once more with `-fno-tree-vectorize`, side by side with ratios.
//!
//! Each provider becomes a small shared library (pqperf: `libpqperf_iccs_core.a` whole; the
//! official files: the archive [`pqperf_build::provider::prepare_official_with`] made after
//! checking them bit-exact against pqperf's vectors, so a modified copy is refused here too),
//! dlopened through `pqperf_ffi::dl::IccsHelpers`. Batches of calls of the providers are
//! interleaved (a load change on a shared machine hits every column alike); a cell is the
//! median over batches of ticks ÷ calls. The counter is the invariant tick counter
//! (TSC on x86-64): reference ticks, not core cycles.

use std::path::{Path, PathBuf};
use std::process::Command;

use pqperf_ffi::counters;
use pqperf_ffi::dl::{DRNG_CTX_BYTES, IccsHelpers, Library};
use serde::Serialize;

use crate::ProfileError;

/// One provider library to benchmark.
#[derive(Debug, Clone)]
pub struct BenchProvider {
    /// Column name: `pqperf`, `official`, `official -fno-tree-vectorize`.
    pub name: String,
    /// The shared library.
    pub library: PathBuf,
    /// The provider record (kind, sha256, compiler, flags).
    pub record: serde_json::Value,
}

/// One call of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchCall {
    /// `sm3hash(256, m, bits)`.
    Sm3hash {
        /// Message length (bits).
        msg_bits: u64,
    },
    /// `pseudohash(d, m, 4096 bits)`.
    Pseudohash {
        /// Digest length (bits).
        digest_bits: u32,
    },
    /// `pseudoXOF(out_bits, m, 512 bits)`.
    PseudoXof {
        /// Output length (bits).
        out_bits: u64,
    },
    /// `get_random_number(ctx, out, bits)` (seeded once with 00..2f).
    Drng {
        /// Output length (bits).
        bits: u64,
    },
}

/// Message length of the pseudohash rows (bits).
pub const PSEUDOHASH_MSG_BITS: u64 = 4096;
/// Message length of the pseudoXOF rows (bits).
pub const PSEUDOXOF_MSG_BITS: u64 = 512;

/// The table's rows: sm3hash 256/4096/65536 bits, pseudohash 512/1024 on a 4096-bit
/// message, pseudoXOF 256/8192 output bits (512-bit message), get_random_number 512/8192.
pub const CALLS: &[BenchCall] = &[
    BenchCall::Sm3hash { msg_bits: 256 },
    BenchCall::Sm3hash { msg_bits: 4096 },
    BenchCall::Sm3hash { msg_bits: 65536 },
    BenchCall::Pseudohash { digest_bits: 512 },
    BenchCall::Pseudohash { digest_bits: 1024 },
    BenchCall::PseudoXof { out_bits: 256 },
    BenchCall::PseudoXof { out_bits: 8192 },
    BenchCall::Drng { bits: 512 },
    BenchCall::Drng { bits: 8192 },
];

impl BenchCall {
    /// Row label.
    pub fn label(self) -> String {
        match self {
            BenchCall::Sm3hash { msg_bits } => format!("sm3hash, {msg_bits}-bit msg"),
            BenchCall::Pseudohash { digest_bits } => {
                format!("pseudohash {digest_bits}, {PSEUDOHASH_MSG_BITS}-bit msg")
            }
            BenchCall::PseudoXof { out_bits } => {
                format!("pseudoXOF {out_bits} bits, {PSEUDOXOF_MSG_BITS}-bit msg")
            }
            BenchCall::Drng { bits } => format!("get_random_number {bits} bits"),
        }
    }

    /// Is this a DRNG row.
    pub fn is_drng(self) -> bool {
        matches!(self, BenchCall::Drng { .. })
    }
}

/// One row: median ticks per call for each provider (column order of the providers).
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    /// The call, in words.
    pub call: String,
    /// Median ticks per call, one per provider.
    pub ticks_per_call: Vec<f64>,
}

/// The measured table.
#[derive(Debug, Clone, Serialize)]
pub struct BenchTable {
    /// Column names.
    pub providers: Vec<String>,
    /// Provider records, per column.
    pub records: Vec<serde_json::Value>,
    /// One row per call.
    pub rows: Vec<BenchRow>,
    /// `tsc` / `cntvct_el0`.
    pub counter: String,
    /// Batches per cell.
    pub batches: usize,
}

impl BenchTable {
    /// Ticks of column `col` in the row of `call`.
    pub fn ticks(&self, call: BenchCall, col: usize) -> Option<f64> {
        let i = CALLS.iter().position(|c| *c == call)?;
        self.rows.get(i)?.ticks_per_call.get(col).copied()
    }

    /// Column index by name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.providers.iter().position(|p| p == name)
    }

    /// The Markdown table: one tick column per provider, then `pqperf ÷ <other>` ratios.
    pub fn to_markdown(&self) -> String {
        let mut head = vec!["call".to_string()];
        head.extend(self.providers.iter().cloned());
        let others: Vec<usize> = (1..self.providers.len()).collect();
        for &o in &others {
            head.push(format!("pqperf ÷ {}", self.providers[o]));
        }
        let mut s = format!("| {} |\n", head.join(" | "));
        s.push_str(&format!("|{}\n", "---|".repeat(head.len())));
        for r in &self.rows {
            let mut cells = vec![r.call.clone()];
            cells.extend(r.ticks_per_call.iter().map(|t| group(*t)));
            for &o in &others {
                cells.push(match (r.ticks_per_call.first(), r.ticks_per_call.get(o)) {
                    (Some(p), Some(x)) if *x > 0.0 => format!("{:.2}", p / x),
                    _ => "–".into(),
                });
            }
            s.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        s
    }
}

/// `12345.6` → `12 346` (thin grouping as in the table).
fn group(x: f64) -> String {
    let n = x.round() as u64;
    let d = n.to_string();
    let mut out = String::new();
    for (i, ch) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

fn gcc(cwd: &Path, args: &[String]) -> Result<(), ProfileError> {
    let o = Command::new("gcc")
        .args(args)
        .current_dir(cwd)
        .output()
        .map_err(|e| ProfileError::Tool(format!("cannot run gcc: {e}")))?;
    if !o.status.success() {
        return Err(ProfileError::Tool(format!(
            "gcc {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        )));
    }
    Ok(())
}

/// A shared library exporting every symbol of `archive`.
fn shared_from_archive(work: &Path, archive: &Path, name: &str) -> Result<PathBuf, ProfileError> {
    let so = work.join(name);
    gcc(
        work,
        &[
            "-shared".into(),
            "-o".into(),
            so.display().to_string(),
            "-Wl,--whole-archive".into(),
            archive.display().to_string(),
            "-Wl,--no-whole-archive".into(),
        ],
    )?;
    Ok(so)
}

/// Build the provider libraries into `work`: pqperf's, and with `official` the official files
/// with the reference flags and with `-fno-tree-vectorize` added (both checked against
/// pqperf's vectors first).
pub fn build_providers(
    work: &Path,
    official: Option<&Path>,
) -> Result<Vec<BenchProvider>, ProfileError> {
    std::fs::create_dir_all(work).map_err(|e| ProfileError::io(work, e))?;
    let work = &std::fs::canonicalize(work).map_err(|e| ProfileError::io(work, e))?;
    let p = pqperf_iccs_capi::write_provider(&work.join("pqperf"))
        .map_err(|e| ProfileError::io(work, e))?;
    let mut v = vec![BenchProvider {
        name: "pqperf".into(),
        library: shared_from_archive(work, &p.iccs_core_lib, "libiccs_pqperf.so")?,
        record: pqperf_build::ProviderRecord::pqperf().to_json(),
    }];
    if let Some(dir) = official {
        let base = pqperf_build::provider::official_cflags();
        let mut novec = base.clone();
        novec.push("-fno-tree-vectorize".into());
        for (name, flags, so) in [
            ("official", base, "libiccs_official.so"),
            (
                "official -fno-tree-vectorize",
                novec,
                "libiccs_official_novec.so",
            ),
        ] {
            let sub = work.join(so.trim_end_matches(".so"));
            let off = pqperf_build::provider::prepare_official_with(dir, &sub, &flags)
                .map_err(|e| ProfileError::Other(e.to_string()))?;
            v.push(BenchProvider {
                name: name.into(),
                library: shared_from_archive(work, &off.archive, so)?,
                record: off.record.to_json(),
            });
        }
    }
    Ok(v)
}

/// Per-provider call state.
struct Runner {
    h: IccsHelpers,
    ctx: [u8; DRNG_CTX_BYTES],
    out: Vec<u8>,
}

impl Runner {
    fn call(&mut self, c: BenchCall, msg: &[u8]) -> Result<i32, ProfileError> {
        let r = match c {
            BenchCall::Sm3hash { msg_bits } => {
                let mut d = [0u8; 32];
                self.h.sm3hash(msg, msg_bits, &mut d)
            }
            BenchCall::Pseudohash { digest_bits } => {
                self.h
                    .pseudohash(digest_bits, msg, PSEUDOHASH_MSG_BITS, &mut self.out)
            }
            BenchCall::PseudoXof { out_bits } => {
                self.h
                    .pseudoxof(out_bits, msg, PSEUDOXOF_MSG_BITS, &mut self.out)
            }
            BenchCall::Drng { bits } => self.h.drng_get(&mut self.ctx, &mut self.out, bits),
        };
        r.map_err(|e| ProfileError::Other(e.to_string()))
    }
}

/// Measure every row of [`CALLS`] for every provider: `batches` interleaved batches per
/// cell, each about `batch_ticks` ticks long; the cell is the median ticks per call.
pub fn run(
    providers: &[BenchProvider],
    batches: usize,
    batch_ticks: u64,
) -> Result<BenchTable, ProfileError> {
    let msg: Vec<u8> = (0..65536 / 8).map(|i| ((7 * i + 1) % 256) as u8).collect();
    let seed: Vec<u8> = (0u8..48).collect();
    let mut runners = Vec::new();
    for p in providers {
        let lib = Library::open(&p.library).map_err(|e| ProfileError::Other(e.to_string()))?;
        let h = IccsHelpers::new(&lib).map_err(|e| ProfileError::Other(e.to_string()))?;
        let mut ctx = [0u8; DRNG_CTX_BYTES];
        h.drng_init(&mut ctx, &seed);
        runners.push(Runner {
            h,
            ctx,
            out: vec![0u8; 1024],
        });
    }
    let batches = batches.max(1);
    let mut rows = Vec::new();
    for &c in CALLS {
        // Calibrate on each provider: calls per batch so that a batch lasts ≈ batch_ticks.
        let mut n = Vec::new();
        for r in &mut runners {
            for _ in 0..3 {
                r.call(c, &msg)?;
            }
            let t0 = counters::ticks();
            let rc = r.call(c, &msg)?;
            let one = counters::ticks().saturating_sub(t0).max(1);
            if rc != 0 {
                return Err(ProfileError::Other(format!(
                    "{}: return code {rc}",
                    c.label()
                )));
            }
            n.push((batch_ticks / one).clamp(1, 1 << 20));
        }
        let mut per: Vec<Vec<f64>> = vec![Vec::with_capacity(batches); runners.len()];
        for _ in 0..batches {
            for (i, r) in runners.iter_mut().enumerate() {
                let t0 = counters::ticks();
                for _ in 0..n[i] {
                    std::hint::black_box(r.call(c, std::hint::black_box(&msg))?);
                }
                let t = counters::ticks().saturating_sub(t0);
                per[i].push(t as f64 / n[i] as f64);
            }
        }
        let med = per
            .into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect();
        rows.push(BenchRow {
            call: c.label(),
            ticks_per_call: med,
        });
    }
    Ok(BenchTable {
        providers: providers.iter().map(|p| p.name.clone()).collect(),
        records: providers.iter().map(|p| p.record.clone()).collect(),
        rows,
        counter: counters::ticks_source().to_string(),
        batches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_and_markdown_shape() {
        assert_eq!(group(238517.4), "238 517");
        assert_eq!(group(999.0), "999");
        assert_eq!(group(1207.0), "1 207");
        let t = BenchTable {
            providers: vec!["pqperf".into(), "official".into()],
            records: vec![],
            rows: vec![BenchRow {
                call: "sm3hash, 256-bit msg".into(),
                ticks_per_call: vec![1207.0, 2031.0],
            }],
            counter: "tsc".into(),
            batches: 1,
        };
        let md = t.to_markdown();
        assert!(
            md.starts_with("| call | pqperf | official | pqperf ÷ official |\n"),
            "{md}"
        );
        assert!(
            md.contains("| sm3hash, 256-bit msg | 1 207 | 2 031 | 0.59 |"),
            "{md}"
        );
    }
}
