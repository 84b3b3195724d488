//! The integration tests of `ct`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

#[path = "../common/mod.rs"]
mod common;

mod avx2_family;
mod pqclean;
mod published_randomness;
mod toy;
