//! Stand-alone profiling driver child (the same code as the hidden `pqperf hashprof`), so the
//! profile stage's tests can run it without the CLI crate.

#![forbid(unsafe_code)]

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let code = pqperf_profile::hashprof::child_main(&argv, &mut std::io::stderr().lock());
    std::process::exit(code);
}
