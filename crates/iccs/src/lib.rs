//! ICCS placeholder primitives (sm3hash, pseudohash, pseudoXOF), the SM3 Hash_DRBG, the NIST AES-256 CTR DRBG and the HQC SHAKE generator; no_std, with a C ABI artifact for candidate libraries.
// ENGINEERS: read /work/main/DEVELOPING.md first (own target dir, git rules, deadline 11:25 UTC).
