//! The integration tests of `profile`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

mod baseline;
mod corpus;
mod iccs_candidate;
mod mldsa;
mod survey;
mod wrapper;
