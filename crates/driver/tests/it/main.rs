//! The integration tests of `driver`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod hot_symbols;
mod memory;
mod streams;
