//! Stage report: validation of a dataset and the Markdown pages (candidate, summary, method,
//! symmetric survey) in harness and site form.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

pub mod fmt;
pub mod validate;
