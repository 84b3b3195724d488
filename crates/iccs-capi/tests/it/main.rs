//! The integration tests of `iccs-capi`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod c_abi;
mod pqclean_oracle;
mod selftest;
