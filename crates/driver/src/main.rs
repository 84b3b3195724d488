//! `pqperf-driver LIB OP BYTES TRIALS 1 ITERS WARMUPS [--cpu N] …`: the lean timing child
//! (method §4). It parses the argv written by `pqperf_driver::DriverArgs`, takes its private
//! result channel (`pqperf_ffi::untrusted::child_enter_fresh`: adopt the descriptor and remove
//! `PQPERF_RESULT_FD` from the environment; the parent confined the process before `exec`, so
//! the measured image ran no confinement code) before any candidate library is loaded, then runs
//! `pqperf_driver::run`. Small on purpose: its baseline RSS is evidence.

#![no_main]
#![deny(unsafe_code)]

fn code(c: i32) -> i32 {
    c.clamp(0, 255)
}

// The C entry point instead of Rust's `fn main`: without Rust's start-up (stack-overflow
// handler set-up, which parses /proc/self/maps with the C library's scanf, SIGPIPE and
// descriptor sanitising) the child touches ≈ 0.3 MB less of the C library, and its baseline
// RSS is evidence. `std::env::args` still works (glibc hands argv to Rust's own init hook).
// SAFETY: `main` is the C program entry point with C's signature; no other symbol of the
// program is called `main`, and the function neither unwinds (a panic in an `extern "C"`
// function aborts) nor reads argc/argv, which it leaves to `std::env::args`.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match pqperf_driver::DriverArgs::parse(&argv) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            return code(2);
        }
    };
    // Take the private result channel before the library is loaded (confined before exec).
    let mut out = match pqperf_ffi::untrusted::child_enter_fresh() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("driver: {e}");
            return code(2);
        }
    };
    // The parent's control pipe (the interval boundaries), adopted the same way.
    let mut control = match pqperf_ffi::untrusted::child_control() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("driver: {e}");
            return code(2);
        }
    };
    let gate = pqperf_driver::Gate::new(control.as_mut().map(|c| c as &mut dyn std::io::Read));
    code(pqperf_driver::run_gated(
        &args,
        &mut out,
        gate,
        &mut std::io::stderr(),
    ))
}
