//! Stage profile: link-time wrapped builds, symmetric-primitive call and tick shares, ICCS baseline and hash-cost ratios.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
