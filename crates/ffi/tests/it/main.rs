//! The integration tests of `ffi`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod containment;
mod self_exe;
