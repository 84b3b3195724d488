#!/usr/bin/env bash
# The README's test command on a busy machine: starts CPU-bound processes beside it (one per
# core by default, PQPERF_HOGS=N to change), runs `cargo test --workspace --release
# --no-fail-fast` with any extra arguments, stops the hogs and prints the passed/failed
# counts and the time. The suite must pass here every time (issue 23); exit status is cargo's.
set -uo pipefail
cd "$(dirname "$0")/.."
export PQPERF_GOLDEN="${PQPERF_GOLDEN:-$(cd .. && pwd)/shared/golden}"
n="${PQPERF_HOGS:-$(nproc)}"
hogs=()
stop() { [ "${#hogs[@]}" -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; }
trap stop EXIT
# Build first, without the hogs: the point is tests on a busy machine, not a slow compile.
cargo test --workspace --release --no-run "$@" >/dev/null 2>&1 || true
for _ in $(seq 1 "$n"); do
  bash -c 'while :; do :; done' &
  hogs+=("$!")
done
echo "== $n CPU hog(s) running beside the suite (pids ${hogs[*]})" >&2
t0=$(date +%s)
log=$(mktemp)
cargo test --workspace --release --no-fail-fast "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
stop
hogs=()
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
echo "== busy suite: $passed passed, $failed failed, $(($(date +%s) - t0)) s beside $n hog(s); exit $rc" >&2
grep -E '^    [a-z_:]+$|^test .* FAILED$' "$log" | sort -u >&2
rm -f "$log"
exit "$rc"
