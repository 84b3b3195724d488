//! Stage kat: regenerate known-answer vectors per instance in a child process and compare with the SHA-256 manifests.
