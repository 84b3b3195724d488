#!/usr/bin/env bash
# AArch64 test set under qemu-user (needs scripts/setup-aarch64.sh first).
#
# Cross-builds the two binaries the emulated tests run (pqperf, which is also its own KAT
# child, and the lean timing driver pqperf-driver), without debug line tables, for
# aarch64-unknown-linux-gnu with the system Rust (/usr/bin/cargo, /usr/bin/rustc from
# rustc-web/cargo-web; rustup's are first on PATH and have no arm64 standard library), then
# runs the AArch64 pqperf under qemu-aarch64:
#   import pqclean (aarch64 + clean implementations; x86 ones skipped) -> build with
#   aarch64-linux-gnu-gcc -> KAT; the WOTS ICCS test candidate -> build -> KAT; a short
#   emulated campaign on two instances -> publish an arm_* dataset -> validate -> the same
#   dataset beside the reference x86_1/arm_1 datasets -> site, whose joint view must carry the
#   emulation notice; instruction counts under emulation with pqperf's TCG plugin (see
#   "Instruction counts" below; the published ML-KEM-512 counts must be on its arm_2 page).
#
# Design: pqperf itself runs emulated; the C compiler it calls (aarch64-linux-gnu-gcc) is a
# native x86-64 cross compiler the emulated process executes directly (qemu-user passes the
# exec to the host kernel). pqperf's own children (KAT child, timing driver) are AArch64 and
# this host has no binfmt_misc, so they are started through PQPERF_EMULATOR=qemu-aarch64.
# The guest uses the multiarch arm64 C library (libc6:arm64): `-L /usr/aarch64-linux-gnu`
# mixes that sysroot's ld.so with the multiarch libc.so.6 named in /etc/ld.so.cache, and
# thread creation then hangs.
#
# PQPERF_AARCH64_SET=full tests all 16 aarch64 implementations and their clean counterparts
# (the 6 SPHINCS+-SHAKE aarch64 ones cannot build on Linux: their f1600x2.s is Apple assembler
# syntax defining the Mach-O name `__f1600x2`; they end BUILDFAIL and the full set fails);
# the default (ci) a subset: ML-KEM-512, ML-DSA-44, Falcon-512 (aarch64 and clean).
# Last line: `aarch64: N/M KAT PASS, campaign ok|failed, counts ok|failed`; exit status
# non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
t0=$(date +%s)
target=aarch64-unknown-linux-gnu
export CARGO_TARGET_DIR="${PQPERF_AARCH64_TARGET_DIR:-$repo/target/aarch64-cross}"
export RUSTC=/usr/bin/rustc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
echo "aarch64: cross build ($CARGO_TARGET_DIR)" >&2
export CARGO_PROFILE_RELEASE_DEBUG=false
if ! /usr/bin/cargo build --locked --release --target "$target" -p pqperf -p pqperf-driver \
  --bin pqperf --bin pqperf-driver -j "${PQPERF_AARCH64_JOBS:-2}" >&2; then
  echo "aarch64: 0/0 KAT PASS, campaign failed"
  exit 1
fi
tb=$(date +%s)
bin="$CARGO_TARGET_DIR/$target/release/pqperf"
export PQPERF_EMULATOR=qemu-aarch64
unset QEMU_LD_PREFIX
# pq ARGS...: one emulated pqperf command, killed when it has not finished within
# PQPERF_AARCH64_STEP_LIMIT seconds (default 420; the slowest step takes about a minute) and
# then tried once more. qemu-user can hang a process that forks while other threads run
# (seen once in CI: the build step never finished); the limit turns such a hang into a retry
# that is said on stderr with the emulated processes still alive, instead of a CI run that
# never ends. Builds and KATs run one instance at a time (--jobs 1) for fewer concurrent forks.
exec 3>&2
timeouts=0
pq() {
  local limit=${PQPERF_AARCH64_STEP_LIMIT:-420} try rc=0
  for try in 1 2; do
    timeout -k 10 "$limit" qemu-aarch64 "$bin" "$@"
    rc=$?
    [ "$rc" = 124 ] || [ "$rc" = 137 ] || return "$rc"
    timeouts=$((timeouts + 1))
    echo "aarch64: 'pqperf $1 $2' did not finish within $limit s under qemu-user (attempt $try of 2); processes left:" >&3
    ps -eo pid,ppid,stat,etime,args 2>/dev/null | grep -E 'qemu-aarch64|cc1|aarch64-linux-gnu' | grep -v grep | cut -c1-200 >&3
  done
  return "$rc"
}

work="${PQPERF_AARCH64_WORK:-$CARGO_TARGET_DIR/test}"
rm -rf "$work"
mkdir -p "$work"
run="$work/run"
log="$work/test.log"
fail=0
step() { echo "aarch64: $*" >&2; }

# 1. PQClean: the aarch64 implementations and their clean counterparts.
step "import pqclean"
pq import pqclean --run-dir "$run" >"$work/import.txt" 2>&1 || fail=1
aarch64_schemes=$(sed -n 's/^label = "\(.*\)-aarch64"$/\1/p' "$run/catalog.toml" | sort -u)
n_aarch64=$(echo "$aarch64_schemes" | grep -c . || true)
if grep -q -- '-avx2"' "$run/catalog.toml" 2>/dev/null; then
  step "an x86 (avx2) implementation was imported on AArch64"
  fail=1
fi
if [ "${PQPERF_AARCH64_SET:-ci}" = full ]; then
  schemes=$aarch64_schemes
else
  schemes=$(printf '%s\n' ml-kem-512 ml-dsa-44 falcon-512)
fi
only="^($(echo "$schemes" | paste -sd'|'))/"
step "$n_aarch64 aarch64 implementations imported; testing $(echo "$schemes" | wc -l) schemes: $only"
step "build --cc aarch64-linux-gnu-gcc"
pq build --run-dir "$run" --only "$only" --cc aarch64-linux-gnu-gcc --jobs 1 >"$work/build.txt" 2>&1 || fail=1
step "kat"
pq kat --run-dir "$run" --only "$only" --jobs 1 >"$work/kat.txt" 2>&1 || fail=1

# 2. The WOTS ICCS test candidate.
step "WOTS ICCS test candidate"
pq import iccs "$repo/testdata/candidates/wots-pxof" --id sign-90 --run-dir "$run" >>"$work/import.txt" 2>&1 || fail=1
pq build --run-dir "$run" --only '^sign-90/' --jobs 1 >>"$work/build.txt" 2>&1 || fail=1
pq kat --run-dir "$run" --only '^sign-90/' --jobs 1 >>"$work/kat.txt" 2>&1 || fail=1

# KAT tally over build.json: the tested PQClean instances and WOTS.
read -r pass total < <(python3 - "$run/build.json" "$only" <<'EOF'
import json, re, sys
bj = json.load(open(sys.argv[1]))["instances"]
sel = re.compile(sys.argv[2] + "|^sign-90/")
keys = [k for k in bj if sel.search(k)]
print(sum(bj[k]["kat"] == "PASS" for k in keys), len(keys))
EOF
)
pass=${pass:-0}; total=${total:-0}
python3 - "$run/build.json" "$only" >&2 <<'EOF'
import json, re, sys
bj = json.load(open(sys.argv[1]))["instances"]
sel = re.compile(sys.argv[2] + "|^sign-90/")
for k, e in bj.items():
    if sel.search(k):
        print(f"  {k}: {e['kat']} ({e['flags']}; {e.get('compiler')})")
EOF

# Instruction counts under emulation (docs/counting.md, "Emulated AArch64"): pqperf builds its
# TCG plugin with the host C compiler and counts under qemu-aarch64 -plugin.
#  a. An emulator that cannot load plugins (a wrapper rejecting -plugin): every unit says
#     "not available", `pqperf count` still ends 0.
#  b. ML-KEM-512 (clean and aarch64) counted twice: identical figures, call by call.
#  c. The toy count candidate built twice by the emulated pqperf (sign-92 as it is, sign-93 with
#     one extra sm3hash call per sign), counted by the host test
#     `cargo test -p pqperf-count --test it aarch64::` (two runs identical; the extra call shows
#     exactly; the no-plugin path), which prints the figures.
counts=ok
tc=$(date +%s)
noplug="$work/qemu-noplugin"
printf '#!/bin/sh\nfor a in "$@"; do [ "$a" = -plugin ] && { echo "qemu-aarch64: -plugin: this qemu was built without plugin support" >&2; exit 1; }; done\nexec qemu-aarch64 "$@"\n' >"$noplug"
chmod +x "$noplug"
step "count without plugin support (ml-kem-512)"
PQPERF_EMULATOR="$noplug" pq count --run-dir "$run" --only '^ml-kem-512/' --jobs 1 >"$work/count.txt" 2>&1 || { step "count failed without plugin support"; counts=failed; }
python3 - "$run" >&2 <<'EOF' || counts=failed
import glob, json, sys
evs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/count/ml-kem-512/*.json"))]
bad = [e for e in evs if e["status"] != "refused" or not (e["reason"] or "").startswith("not available: ")]
print(f"  no plugin: {len(evs)} evidence files, each 'not available'" if evs and not bad else f"  no plugin: wrong evidence {bad[:1]}")
sys.exit(1 if bad or len(evs) != 6 else 0)
EOF
step "count ml-kem-512 twice under qemu-aarch64 -plugin"
pq count --run-dir "$run" --only '^ml-kem-512/' --jobs 1 >>"$work/count.txt" 2>&1 || { step "count failed"; counts=failed; }
mkdir -p "$work/count-first" && cp -r "$run/count/ml-kem-512" "$work/count-first/"
pq count --run-dir "$run" --only '^ml-kem-512/' --jobs 1 --redo >>"$work/count.txt" 2>&1 || { step "count (again) failed"; counts=failed; }
python3 - "$work/count-first/ml-kem-512" "$run/count/ml-kem-512" >&2 <<'EOF' || counts=failed
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
ok = True
names = sorted(os.listdir(a))
for n in names:
    x, y = json.load(open(f"{a}/{n}")), json.load(open(f"{b}/{n}"))
    same = x["status"] == y["status"] == "counted" and x["instructions"] == y["instructions"]
    ok &= same
    s = x["instructions_per_call"] or {}
    print(f"  {n}: {s.get('median')} instructions/call ({x['calls']} calls; {x.get('method')}) "
          + ("identical in both runs" if same else f"DIFFERENT: {x.get('reason')} {y['instructions']}"))
sys.exit(0 if ok and len(names) == 6 else 1)
EOF
toy="$work/toyrun"
step "toy count candidate (sign-92, sign-93 with one extra hash call)"
{ pq import iccs "$repo/testdata/candidates/count-toy-sig" --id sign-92 --run-dir "$toy" &&
  pq import iccs "$repo/testdata/candidates/count-toy-sig" --id sign-93 -D COUNT_EXTRA_HASH --run-dir "$toy" &&
  pq build --run-dir "$toy" --jobs 1; } >"$work/toy.txt" 2>&1 || { step "toy candidate build failed"; counts=failed; }
# The host test (rustup's cargo, the native target directory and profile: the test suite
# built it before in CI).
if (cd "$repo" && env -u CARGO_TARGET_DIR -u RUSTC -u CARGO_PROFILE_RELEASE_DEBUG PQPERF_AARCH64_DRIVER="$CARGO_TARGET_DIR/$target/release/pqperf-driver" \
  PQPERF_AARCH64_TOY_RUN="$toy" cargo test --release -p pqperf-count --test it aarch64:: -- --nocapture) >>"$work/toy.txt" 2>&1; then
  grep -E '^aarch64 (sign|count)|^no plugin' "$work/toy.txt" | sed 's/^/  /' >&2
  if grep -q 'test skipped' "$work/toy.txt"; then
    step "the toy count test was skipped"; grep 'test skipped' "$work/toy.txt" >&2; counts=failed
  fi
else
  step "the toy count test failed"; tail -n 30 "$work/toy.txt" >&2; counts=failed
fi
[ "$counts" = ok ] || tail -n 20 "$work/count.txt" >&2
step "instruction counts: $counts ($(($(date +%s) - tc)) s)"

# 3. A short emulated campaign on two instances -> arm_* dataset -> validate -> site.
campaign=ok
host=$(uname -n)  # qemu-user passes the host name through
printf 'ID;Arch;Hostname;Description\narm_2;aarch64;%s;qemu-user emulated AArch64 on an x86-64 host (not a performance system)\n' "$host" >"$work/systems.csv"
cpu=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
copts=(--run-dir "$run" --only '^ml-kem-512/' --cpu "$cpu" --systems "$work/systems.csv" --allow-unfixed-host
  --probe-attempts 1 --trial-target 0.02 --op-budget 5)
step "campaign calibrate + measure (ml-kem-512, clean and aarch64)"
pq campaign calibrate "${copts[@]}" >"$work/campaign.txt" 2>&1 || campaign=failed
pq campaign measure "${copts[@]}" >>"$work/campaign.txt" 2>&1 || campaign=failed
nrec=$(find "$run/records" -name '*.json' 2>/dev/null | wc -l)
[ "$nrec" -ge 6 ] || { step "expected 6 records, found $nrec"; campaign=failed; }
grep -q '"emulated": "qemu-user"' "$run/campaign.json" 2>/dev/null || { step "campaign.json lacks pqperf.emulated"; campaign=failed; }
ds="$work/dataset"
pq campaign publish "${copts[@]}" --publish-to "$ds" >>"$work/campaign.txt" 2>&1 || campaign=failed
# Pages in both forms; validate then also regenerates and compares the harness-form pages.
pq report "$ds" --system arm_2 >>"$work/campaign.txt" 2>&1 || campaign=failed
pq report "$ds" --system arm_2 --form site --out "$work/pages-site" >>"$work/campaign.txt" 2>&1 || campaign=failed
pq validate "$ds" >>"$work/campaign.txt" 2>&1 || { step "validate refused the arm_2 dataset"; campaign=failed; }
for page in "$ds/performance/summary_arm_2.md" "$ds/performance/method_arm_2.md" \
  "$ds/ml-kem-512/perf_arm_2.md" "$work/pages-site/content/performance/arm_2/index.md"; do
  grep -q 'emulated: timings are not performance figures' "$page" 2>/dev/null || { step "$page lacks the emulation notice"; campaign=failed; }
done
# The published counts: the candidate page shows them with their method and what they compare.
page="$ds/ml-kem-512/perf_arm_2.md"
grep -q 'instructions/call' "$page" 2>/dev/null && grep -q 'qemu-tcg-plugin' "$page" && grep -q 'Across architectures a count compares' "$page" ||
  { step "$page lacks the instruction counts"; campaign=failed; }
# Joint view: the reference x86_1/arm_1 datasets with arm_2 published beside them.
golden="${PQPERF_GOLDEN:-$repo/../shared/golden}/harness"
joint="$work/joint"
if [ -d "$golden" ]; then
  cp -r "$golden" "$joint"
  chmod -R u+w "$joint"
  pq campaign publish "${copts[@]}" --publish-to "$joint" >>"$work/campaign.txt" 2>&1 || campaign=failed
  pq site "$joint" --out "$work/site" >>"$work/campaign.txt" 2>&1 || { step "site failed"; campaign=failed; }
  if ! grep -q 'emulated: timings are not performance figures' "$work/site/joint/index.html" 2>/dev/null; then
    step "the joint view lacks the emulation notice"; campaign=failed
  fi
  for s in x86_1 arm_1 arm_2; do
    grep -q "<strong>$s</strong>" "$work/site/joint/index.html" 2>/dev/null || { step "joint view lacks $s"; campaign=failed; }
  done
  if grep -l 'emulated: timings' "$work/site/x86_1/"*.html "$work/site/arm_1/"*.html 2>/dev/null | grep -q .; then
    step "a native system's page carries the emulation notice"; campaign=failed
  fi
else
  step "no golden datasets at $golden: joint view not checked"; campaign=failed
fi
[ "$campaign" = ok ] || tail -30 "$work/campaign.txt" >&2
[ "$fail" = 0 ] || tail -n 20 "$work/build.txt" "$work/kat.txt" >&2
[ "$timeouts" = 0 ] || step "$timeouts emulated attempt(s) timed out; each such step was tried once more"
t1=$(date +%s)
step "cross build $((tb - t0)) s, emulated tests $((t1 - tb)) s, total $((t1 - t0)) s; logs in $work"
echo "aarch64: $pass/$total KAT PASS, campaign $campaign, counts $counts"
[ "$fail" = 0 ] && [ "$campaign" = ok ] && [ "$counts" = ok ] && [ "$total" -gt 0 ] && [ "$pass" = "$total" ]
