#!/usr/bin/env bash
# Regenerates crates/driver/hot-symbols.txt: the functions of the lean driver `pqperf-driver`
# that run from start-up through one timing run on a do-nothing library, in first-call order
# (valgrind callgrind). build.rs hands the list to lld (--symbol-ordering-file) so that this
# code shares a few 64 KiB fault-around windows and the driver's baseline RSS stays small.
# Rust symbol names carry a hash of the crate's build settings, which differ between a
# workspace build and `cargo build -p pqperf-driver` (what `pqperf` runs under `cargo run`),
# so both builds are profiled and their names kept. Names that no longer exist are ignored by
# the linker, but `cargo test -p pqperf-driver --test it hot_symbols::` fails on them (it compares
# the names without their build hashes against the driver it built): rerun this script after
# driver changes and check the baseline RSS line of `cargo bench -p pqperf-campaign --bench driver`.
# Needs valgrind (scripts/setup.sh installs it) and gcc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -fPIC -shared -DTOY_NOOP -o "$tmp/libnoop.so" crates/pqperf/tests/measure/toy_sig.c
exe=target/release/pqperf-driver
: > "$tmp/all"
for build in "--workspace" "-p pqperf-driver"; do
    # shellcheck disable=SC2086
    cargo build --release $build
    nm "$exe" | awk 'NF == 3 && $2 ~ /^[tTwW]$/ { print $3 }' | sort -u > "$tmp/defined"
    # Started by hand, then as `pqperf_ffi::untrusted` starts it (private result descriptor
    # announced in PQPERF_RESULT_FD; the confinement is the parent's, before exec, and runs no
    # driver code). The memory pass at the end paints the stack below valgrind's limit; the
    # profile up to it is what matters, so a crash there is expected.
    for contained in 0 1; do
        (cd "$tmp" && if [ "$contained" = 1 ]; then
            export PQPERF_RESULT_FD=3
        fi
        valgrind --tool=callgrind --demangle=no --callgrind-out-file=cg.out \
            "$root/$exe" ./libnoop.so sign 0 1 1 100 1 --ticks --cpu 0 >/dev/null 2>&1 3>/dev/null) || true
        sed -n 's/^c\{0,1\}fn=([0-9]*) \(.*\)$/\1/p' "$tmp/cg.out" | grep -Fxf "$tmp/defined" >> "$tmp/all"
    done
done
{
    echo "# Functions the lean driver runs from start-up to its timing loop, in first-call order (lld --symbol-ordering-file; see scripts/driver-hot-symbols.sh and docs/memory.md)."
    awk '!seen[$0]++' "$tmp/all"
} > crates/driver/hot-symbols.txt
wc -l crates/driver/hot-symbols.txt
