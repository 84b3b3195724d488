//! The one unsafe seam of pqperf: dlopen of candidate libraries and typed calls into their
//! C APIs, counters (rdtsc, cntvct_el0, perf_event_open), CPU affinity, process helpers and the
//! containment of children that run candidate code.
//!
//! Every `unsafe` block of the workspace lives in this crate, each with a comment stating the
//! invariant it relies on. Other crates see only safe functions and types.

pub mod affinity;
pub mod counters;
pub mod dl;
pub mod emulation;
pub mod memprobe;
pub mod procinfo;
pub mod profile;
pub mod sandbox;
pub mod untrusted;
