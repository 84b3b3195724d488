//! The integration tests of `campaign`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod publish;
mod run;
