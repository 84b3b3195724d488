//! The integration tests of `report`: one test binary for the crate, one module per topic
//! (`cargo test -p <crate> --test it <module>::`).

#[path = "../common/mod.rs"]
mod common;

mod built_from;
mod check;
mod count_column;
mod ct_section;
mod emulated;
mod emulated_counts;
mod golden_pages;
mod golden_summary;
mod hostile_text;
mod pages_as_data;
mod pqperf_counter;
mod shapes;
