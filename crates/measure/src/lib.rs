//! Stage measure: host checks, counters, the per-trial driver, calibration and planning, campaigns, sharding and publication of evidence.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
