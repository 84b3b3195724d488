//! The integration tests of `model`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod golden;
mod props;
mod pyfmt;
mod robust;
