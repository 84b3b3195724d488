//! Reading evidence files of a dataset: one record or profile with the schema rule (a newer
//! `schema` is reported as such, before any shape error), and many files parsed on up to two
//! threads in a stable order.

use std::path::{Path, PathBuf};

use crate::error::ModelError;
use crate::katlog::KatLog;
use crate::profile::Profile;
use crate::record::{RECORD_SCHEMA, Record};

pub(super) fn check_schema(shown: &Path, schema: u64) -> Result<(), ModelError> {
    if schema > RECORD_SCHEMA {
        return Err(ModelError::NewerSchema {
            path: shown.to_path_buf(),
            found: schema,
            supported: RECORD_SCHEMA,
        });
    }
    Ok(())
}

/// Read a timing record file, refusing schemas newer than [`RECORD_SCHEMA`] with a clear
/// error (checked before the shape, so a newer layout is reported as such).
pub fn read_record(path: &Path, shown: &Path) -> Result<Record, ModelError> {
    let text = crate::limits::read_text(path, shown)?;
    record_from_str(shown, &text)
}

/// Parse a timing record (see [`read_record`]), refusing one whose stored samples or
/// bootstrap replicates exceed the bounds of [`crate::limits`] (they would make `validate`
/// recompute for hours).
pub fn record_from_str(shown: &Path, text: &str) -> Result<Record, ModelError> {
    let r: Record = typed_with_schema(shown, text)?;
    check_schema(shown, r.schema)?;
    if let Some(rb) = r.pqperf.as_ref().and_then(|x| x.robust.as_ref()) {
        let counts = rb
            .samples
            .iter()
            .map(|s| s.split_ascii_whitespace().count());
        if let Some(p) = crate::limits::samples_problem(counts) {
            return Err(ModelError::text(
                shown,
                None,
                Some("pqperf.robust.samples"),
                p,
            ));
        }
        if rb.resamples > crate::limits::MAX_RESAMPLES {
            return Err(ModelError::text(
                shown,
                None,
                Some("pqperf.robust.resamples"),
                format!(
                    "{} bootstrap replicates, more than the {} a record may ask for",
                    rb.resamples,
                    crate::limits::MAX_RESAMPLES
                ),
            ));
        }
    }
    Ok(r)
}

/// Read a profile file (same schema rule as records).
pub fn read_profile(path: &Path, shown: &Path) -> Result<Profile, ModelError> {
    let text = crate::limits::read_text(path, shown)?;
    let p: Profile = typed_with_schema(shown, &text)?;
    check_schema(shown, p.schema)?;
    Ok(p)
}

/// Parse typed in one pass; only when that fails is the text looked at again for a newer
/// `schema`, which then takes precedence over the shape error.
pub(super) fn typed_with_schema<T: serde::de::DeserializeOwned>(
    shown: &Path,
    text: &str,
) -> Result<T, ModelError> {
    crate::pyjson::from_str(shown, text).map_err(|e| match peek_schema(shown, text) {
        Err(newer) => newer,
        Ok(()) => e,
    })
}

pub(super) fn peek_schema(shown: &Path, text: &str) -> Result<(), ModelError> {
    // Only when the text is valid JSON; syntax errors are reported by the full parse.
    if let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(text)
        && let Some(s) = m.get("schema").and_then(serde_json::Value::as_u64)
    {
        check_schema(shown, s)?;
    }
    Ok(())
}

/// What an evidence file of a system tree is parsed as.
#[derive(Clone, Copy)]
pub(super) enum JobKind {
    Record,
    Profile,
    Kat,
}

/// One evidence file to parse.
pub(super) struct Job {
    pub(super) what: JobKind,
    pub(super) file: PathBuf,
    pub(super) shown: PathBuf,
    pub(super) rel: PathBuf,
}

/// A parsed evidence file.
pub(super) enum Parsed {
    Record(Box<Record>),
    Profile(Box<Profile>),
    Kat(Box<KatLog>),
}

pub(super) fn parse_job(job: &Job) -> Result<Parsed, ModelError> {
    match job.what {
        JobKind::Record => read_record(&job.file, &job.shown).map(|r| Parsed::Record(Box::new(r))),
        JobKind::Profile => {
            read_profile(&job.file, &job.shown).map(|p| Parsed::Profile(Box::new(p)))
        }
        JobKind::Kat => KatLog::read(&job.file, &job.shown).map(|k| Parsed::Kat(Box::new(k))),
    }
}

/// Parse `jobs` on up to two threads (the reference machines have two cores), results in the
/// order of `jobs`. Workers take small batches from a shared counter, so uneven file sizes
/// balance out.
pub(super) fn parse_jobs(jobs: &[Job]) -> Vec<Result<Parsed, ModelError>> {
    const BATCH: usize = 8;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2);
    if threads < 2 || jobs.len() < 2 * BATCH {
        return jobs.iter().map(parse_job).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let from = next.fetch_add(BATCH, std::sync::atomic::Ordering::Relaxed);
            if from >= jobs.len() {
                return done;
            }
            let to = (from + BATCH).min(jobs.len());
            done.extend((from..to).map(|i| (i, parse_job(&jobs[i]))));
        }
    };
    let mut slots: Vec<Option<Result<Parsed, ModelError>>> = jobs.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let helper = scope.spawn(work);
        let mine = work();
        let theirs = helper
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        for (i, r) in mine.into_iter().chain(theirs) {
            slots[i] = Some(r);
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every job index is taken by exactly one worker"))
        .collect()
}
