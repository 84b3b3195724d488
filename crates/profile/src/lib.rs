//! Stage profile: link-time wrapped builds, symmetric-primitive call and tick shares, ICCS
//! baseline and hash-cost ratios (method.md §10–§11, evidence-formats.md §5).
//!
//! * [`phase`]: campaign phase `profile` — relink, run the profiling child, write
//!   `profile/<id>/<label>__<op>.json`;
//! * [`relink`]: profiling builds (an instance's objects relinked with the wrappers);
//! * [`wrapc`]: the wrapper C source (`c/wrap.c`) and the symbol sets wrapped per API kind;
//! * [`hashprof`]: the profiling child (`pqperf hashprof`, `pqperf-hashprof`, the reference's
//!   `hashprof`) that runs one operation under the wrappers and reports calls and ticks;
//! * [`objscan`] / [`survey`]: object-file call graphs and the survey verdict per candidate;
//! * [`baseline`]: campaign phase `baseline`, the ICCS helpers built and timed as hash instances;
//! * [`hashcost`]: campaign phase `hashcost`, cost per call of each call shape (run dir only);
//! * [`providerbench`]: `pqperf iccs bench`, per-call cost of pqperf's and the official ICCS
//!   helpers;
//! * [`ratio`]: hash-cost ratios against the ICCS `pseudoXOF` baseline for the summary;
//! * [`callgrind`]: the independent valgrind cross-check of the shares.

#![forbid(unsafe_code)]

pub mod baseline;
pub mod callgrind;
pub mod hashcost;
pub mod hashprof;
pub mod objscan;
pub mod phase;
pub mod providerbench;
pub mod ratio;
pub mod relink;
pub mod survey;
pub mod wrapc;

use std::path::Path;

/// Errors of the profile stage.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// File system error on a named path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// An object file or archive could not be read.
    #[error("object file: {0}")]
    Object(String),
    /// A CSV file is malformed.
    #[error("csv: {0}")]
    Csv(String),
    /// An external tool (gcc, valgrind, the driver) failed.
    #[error("{0}")]
    Tool(String),
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
}

impl ProfileError {
    /// Wrap an I/O error with its path.
    pub fn io(path: &Path, source: std::io::Error) -> ProfileError {
        ProfileError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
