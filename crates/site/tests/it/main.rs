//! The integration tests of `site`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod emulated;
mod escape;
mod evidence_links;
mod joint_notice;
mod phone;
mod ranking;
mod summary_first_screen;
