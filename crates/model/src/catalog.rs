//! The candidate catalog (TOML): candidates, their instances, sources, flags and KAT manifests.
