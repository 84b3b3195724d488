//! The integration tests of `validate`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod validate;
