//! The integration tests of `build`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod header_values;
mod official_provider;
