//! Stage kat: regenerate known-answer vectors per instance in a child process and compare with the SHA-256 manifests.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
