//! The integration tests of `count`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod aarch64;
mod kex;
mod toy;
