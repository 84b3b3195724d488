//! The integration tests of `iccs`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod properties;
mod vectors;
