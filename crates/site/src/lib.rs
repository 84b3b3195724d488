//! Stage site: static HTML site from one or more datasets, rankings, joint cross-system view and inline SVG charts.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
