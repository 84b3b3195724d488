//! Bounds on evidence, defined once: the most per-call samples a sampled trial and a record
//! may carry, the most bootstrap replicates, and the most bytes an evidence file may have.
//! They are enforced when evidence is written (`measure`'s record writer) and when it is read:
//! every reader of a dataset (`validate`, `compare`, `site`, `report`, through
//! [`crate::dataset`]) opens files with [`read_bounded`], which checks the size from the file's
//! metadata before reading and answers an error naming the file instead of reading it whole.

use std::io::Read;
use std::path::Path;

use crate::error::ModelError;

/// Most bytes of one evidence file (record, profile, KAT log, side CSV, page). A real record
/// with samples is well below 1 MiB.
pub const MAX_EVIDENCE_BYTES: u64 = 32 << 20;

/// Most per-call samples of one sampled trial (the driver samples at most 400 calls,
/// `pqperf_driver::SAMPLE_CALLS`).
pub const MAX_SAMPLES_PER_TRIAL: usize = 4096;

/// Most per-call samples of one record, over all its sampled trials (a record with adaptive
/// stopping has at most a few dozen sampled trials of 400 calls).
pub const MAX_SAMPLES_PER_RECORD: usize = 100_000;

/// Most bootstrap replicates a stored robust estimate may ask `validate` to recompute.
pub const MAX_RESAMPLES: u64 = 10_000;

/// The error for a file larger than [`MAX_EVIDENCE_BYTES`].
pub fn too_large(shown: &Path, bytes: u64) -> ModelError {
    ModelError::text(
        shown,
        None,
        None,
        format!(
            "{bytes} bytes: larger than the {} MiB an evidence file may have (not read)",
            MAX_EVIDENCE_BYTES >> 20
        ),
    )
}

/// Checks the size of evidence about to be written (`shown` names it in the error).
pub fn check_size(shown: &Path, bytes: usize) -> Result<(), ModelError> {
    if bytes as u64 > MAX_EVIDENCE_BYTES {
        return Err(too_large(shown, bytes as u64));
    }
    Ok(())
}

/// Reads a regular file of at most [`MAX_EVIDENCE_BYTES`], naming `shown` in errors: the
/// size is taken from the opened file's metadata before any byte is read, anything that is
/// not a regular file (a FIFO would block, a device never ends) is refused, and a file that
/// grows while it is read is cut at the bound and refused.
pub fn read_bounded(path: &Path, shown: &Path) -> Result<Vec<u8>, ModelError> {
    let io = |source| ModelError::Io {
        path: shown.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(ModelError::text(
            shown,
            None,
            None,
            "not a regular file (not read)",
        ));
    }
    if meta.len() > MAX_EVIDENCE_BYTES {
        return Err(too_large(shown, meta.len()));
    }
    let f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len > MAX_EVIDENCE_BYTES {
        return Err(too_large(shown, len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(MAX_EVIDENCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_EVIDENCE_BYTES {
        return Err(too_large(shown, bytes.len() as u64));
    }
    Ok(bytes)
}

/// Read a file as UTF-8 text, naming `shown_as` in errors; at most
/// [`MAX_EVIDENCE_BYTES`] ([`read_bounded`]).
pub fn read_text(path: &Path, shown_as: &Path) -> Result<String, ModelError> {
    let bytes = read_bounded(path, shown_as)?;
    String::from_utf8(bytes).map_err(|e| {
        let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = upto.iter().filter(|b| **b == b'\n').count() + 1;
        ModelError::text(shown_as, Some(line), None, "invalid UTF-8")
    })
}

/// The problem with per-trial sample counts (`counts`, one per sampled trial), if any: a trial
/// over [`MAX_SAMPLES_PER_TRIAL`] or a record over [`MAX_SAMPLES_PER_RECORD`].
pub fn samples_problem(counts: impl IntoIterator<Item = usize>) -> Option<String> {
    let mut total = 0usize;
    for (i, n) in counts.into_iter().enumerate() {
        if n > MAX_SAMPLES_PER_TRIAL {
            return Some(format!(
                "samples[{i}]: {n} samples, more than the {MAX_SAMPLES_PER_TRIAL} a trial may have"
            ));
        }
        total = total.saturating_add(n);
        if total > MAX_SAMPLES_PER_RECORD {
            return Some(format!(
                "more than the {MAX_SAMPLES_PER_RECORD} samples a record may have"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_sparse_file_is_refused_without_reading() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(2 << 30).unwrap(); // sparse: no 2 GB are written
        let e = read_bounded(&p, Path::new("records/x/big.json")).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("records/x/big.json: 2147483648 bytes"),
            "{msg}"
        );
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read_bounded(&p, &p).unwrap(), b"{}");
        let e = read_bounded(d.path(), Path::new("dir")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn sample_bounds() {
        assert_eq!(samples_problem([400, 400]), None);
        assert!(
            samples_problem([400, MAX_SAMPLES_PER_TRIAL + 1])
                .unwrap()
                .starts_with("samples[1]:")
        );
        assert!(samples_problem(std::iter::repeat_n(4000, 26)).is_some());
    }
}
