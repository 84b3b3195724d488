//! Campaign phase `hashcost` (method.md §11.2; data kept in the run directory, not published,
//! not used by the pages): the cost per call of every call shape found in this run's profiles,
//! for the ICCS helpers (`hashcost/iccs.tsv`) and for every measured reference hash candidate
//! at its digest width (`hashcost/<id>/<label>.tsv`, lengths in_bits and in_bits + 32 of each
//! non-DRNG shape: direct hash and a counter-mode block message‖counter).
//!
//! Cost of a shape: message byte i = (i·131 + 7) mod 256, DRNG seeded with 00..2f; warm up
//! until 2 ms have passed or 10⁶ calls (count k); then 5 batches of k calls, each timed with
//! the tick counter; cost = median batch ÷ k. Unit: ticks of the invariant counter (`#unit`
//! line). The ICCS helpers are priced in-process on `pqperf-iccs` (the same primitive sources
//! the provider archive is built from), candidates through their own `CryptHash`. Only shapes
//! missing from a table are measured (resumable). Runs pinned to the campaign CPU.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pqperf_ffi::counters;
use pqperf_ffi::dl::{HashApi, Library};
use pqperf_model::layout::RunLayout;
use pqperf_model::profile::Profile;

use crate::ProfileError;

type Shape = (String, u64, u64);

/// Every (fn, in_bits, out_bits) of the run's profiles.
pub fn collect_shapes(run: &Path) -> BTreeSet<Shape> {
    let mut out = BTreeSet::new();
    let Ok(cands) = std::fs::read_dir(RunLayout::new(run).profile_dir()) else {
        return out;
    };
    for c in cands.flatten() {
        for f in std::fs::read_dir(c.path()).into_iter().flatten().flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if !name.contains("__") || name.contains("RELINK") || !name.ends_with(".json") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(f.path()) else {
                continue;
            };
            if let Ok(p) = serde_json::from_str::<Profile>(&text) {
                for call in p.calls {
                    out.insert((call.func, call.in_bits, call.out_bits));
                }
            }
        }
    }
    out
}

fn message(bits: u64) -> Vec<u8> {
    (0..bits.div_ceil(8) as usize)
        .map(|i| ((i * 131 + 7) % 256) as u8)
        .collect()
}

/// Median-of-5-batches cost per call of `f` in ticks.
pub fn cost_per_call(f: &mut dyn FnMut()) -> f64 {
    let t_end = counters::monotonic_raw_ns() + 2_000_000;
    let mut k = 0u64;
    while k < 1_000_000 && counters::monotonic_raw_ns() < t_end {
        f();
        k += 1;
    }
    let k = k.max(1);
    let mut batches: Vec<u64> = (0..5)
        .map(|_| {
            let t0 = counters::ticks();
            for _ in 0..k {
                f();
            }
            counters::ticks().wrapping_sub(t0)
        })
        .collect();
    batches.sort_unstable();
    batches[2] as f64 / k as f64
}

/// Cost of one ICCS shape, or None for functions that are not ICCS helpers.
pub fn iccs_cost(shape: &Shape) -> Option<f64> {
    let (f, inb, outb) = (shape.0.as_str(), shape.1, shape.2);
    let msg = message(inb);
    let mut out = vec![0u8; outb.div_ceil(8) as usize + 256];
    match f {
        "sm3hash" => Some(cost_per_call(&mut || {
            let _ = std::hint::black_box(pqperf_iccs::sm3hash(outb as i32, &msg, inb));
        })),
        "pseudohash" => Some(cost_per_call(&mut || {
            let _ = std::hint::black_box(pqperf_iccs::pseudohash(outb as i32, &msg, inb, &mut out));
        })),
        "pseudoXOF" => Some(cost_per_call(&mut || {
            let _ = std::hint::black_box(pqperf_iccs::pseudoxof(outb, &msg, inb, &mut out));
        })),
        "drng" => {
            let seed: Vec<u8> = (0u8..48).collect();
            let mut d = pqperf_iccs::Drng::new(&seed);
            Some(cost_per_call(&mut || {
                let _ = std::hint::black_box(d.generate(&mut out, outb));
            }))
        }
        _ => None,
    }
}

/// Read a TSV table: keys (first `nkey` fields of data lines with `nkey + 1` fields).
fn existing_keys(path: &Path, nkey: usize) -> BTreeSet<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect::<Vec<_>>())
        .filter(|f| f.len() == nkey + 1)
        .map(|f| f[..nkey].to_vec())
        .collect()
}

fn append(path: &Path, lines: &[String]) -> Result<(), ProfileError> {
    use std::io::Write;
    if lines.is_empty() {
        return Ok(());
    }
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| ProfileError::io(d, e))?;
    }
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ProfileError::io(path, e))?;
    let mut text = String::new();
    if new {
        text.push_str("#unit\tticks\n");
    }
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    f.write_all(text.as_bytes())
        .map_err(|e| ProfileError::io(path, e))
}

/// A measured reference hash candidate: (id, label, library path, digest width).
fn hash_candidates(run: &Path) -> Vec<(String, String, PathBuf, u64)> {
    let layout = RunLayout::new(run);
    let Ok(bj) = layout.read_build() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in bj.instances.values() {
        if !e.candidate.starts_with("hash-") || e.variant != "reference" {
            continue;
        }
        let Some(lib) = &e.library else { continue };
        let rec = layout.record(&e.candidate, &e.label, "hash_32");
        let w = std::fs::read_to_string(&rec)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["sizes"]["digest_bytes"].as_u64())
            .map(|b| 8 * b);
        if let Some(w) = w.filter(|w| *w > 0) {
            out.push((e.candidate.clone(), e.label.clone(), run.join(lib), w));
        }
    }
    out
}

/// What the phase priced.
#[derive(Debug, Clone, Default)]
pub struct HashcostSummary {
    /// ICCS shapes priced now.
    pub iccs_priced: usize,
    /// (candidate/label, pairs priced now).
    pub candidates: BTreeMap<String, usize>,
}

fn run_pinned<T: Send>(cpu: Option<usize>, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(c) = cpu {
                let _ = pqperf_ffi::affinity::pin_to(c);
            }
            f()
        })
        .join()
        .expect("hashcost thread panicked")
    })
}

/// The `hashcost` phase body.
pub fn run_hashcost(
    run: &Path,
    cpu: Option<usize>,
    log: &dyn Fn(String),
) -> Result<HashcostSummary, ProfileError> {
    let shapes = collect_shapes(run);
    let mut sum = HashcostSummary::default();
    let layout = RunLayout::new(run);
    let iccs_tsv = layout.hashcost_iccs();
    let have = existing_keys(&iccs_tsv, 3);
    let todo: Vec<Shape> = shapes
        .iter()
        .filter(|(f, i, o)| {
            matches!(f.as_str(), "sm3hash" | "pseudohash" | "pseudoXOF" | "drng")
                && !have.contains(&vec![f.clone(), i.to_string(), o.to_string()])
        })
        .cloned()
        .collect();
    let lines: Vec<String> = run_pinned(cpu, || {
        todo.iter()
            .filter_map(|s| iccs_cost(s).map(|c| format!("{}\t{}\t{}\t{c:.1}", s.0, s.1, s.2)))
            .collect()
    });
    sum.iccs_priced = lines.len();
    append(&iccs_tsv, &lines)?;
    // Candidate pricing at every needed input length.
    let mut bits: BTreeSet<u64> = BTreeSet::new();
    for (f, i, _) in &shapes {
        if f != "drng" {
            bits.insert(*i);
            bits.insert(i + 32);
        }
    }
    for (id, label, lib, w) in hash_candidates(run) {
        let tsv = layout.hashcost(&id, &label);
        let have = existing_keys(&tsv, 2);
        let need: Vec<u64> = bits
            .iter()
            .copied()
            .filter(|b| !have.contains(&vec![w.to_string(), b.to_string()]))
            .collect();
        if need.is_empty() {
            continue;
        }
        let api = Library::open(&lib)
            .and_then(|l| HashApi::new(&l))
            .map_err(|e| ProfileError::Other(format!("hashcost {id}/{label}: {e}")))?;
        let lines: Vec<String> = run_pinned(cpu, || {
            need.iter()
                .map(|b| {
                    let msg = message(*b);
                    let mut out = vec![0u8; w.div_ceil(8) as usize + 256];
                    let c = cost_per_call(&mut || {
                        let _ = std::hint::black_box(api.hash(w as u32, &msg, *b, &mut out));
                    });
                    format!("{w}\t{b}\t{c:.1}")
                })
                .collect()
        });
        sum.candidates.insert(format!("{id}/{label}"), lines.len());
        append(&tsv, &lines)?;
    }
    log(format!(
        "hashcost: {} ICCS shapes priced, {} candidate tables extended",
        sum.iccs_priced,
        sum.candidates.len()
    ));
    Ok(sum)
}
