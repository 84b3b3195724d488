//! Shared data types of pqperf: catalog, build.json, timing and profile records, campaign,
//! KAT logs, side CSVs, Python-compatible JSON and number formatting, statistics.
//!
//! Every stage reads and writes evidence through these types; nothing else defines formats.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).

pub mod catalog;
pub mod fsutil;
