#!/usr/bin/env bash
# The Slurm fleet recipe (scripts/slurm/*.sbatch, docs/aarch64-and-fleets.md) on a real
# one-node Slurm cluster started here.
#
# Installs Debian's slurm-wlm and munge when missing, builds the workspace's release binaries
# when missing, then starts munged, slurmctld -D and slurmd -D as root with a generated
# slurm.conf (proctrack/linuxproc, task/none, select/cons_tres; state, spool, logs and the
# munge socket under a temp dir; ports of their own, bound to 127.0.0.1 only; the node's
# feature is the system id so the recipe's --constraint is exercised). It submits
# scripts/slurm/shard.sbatch as a job array of PQPERF_SLURM_SHARDS (default 2) tasks and
# scripts/slurm/merge.sbatch as a job depending on it (--dependency=afterok), while the same
# selection runs unsharded outside Slurm (on the same host: the CPU leases keep the two off
# each other's CPU). Then the merged dataset must equal the unsharded one (same record files,
# dataset files, build.json entries and KAT status) and both must validate. Every daemon is
# stopped by its PID on exit.
#
# Selection: PQClean's ML-KEM-512 (clean and, on x86-64 with AVX2, avx2), trial target 1 ms.
# Last line: `slurm: N shards merged, dataset equals the unsharded run`, or the difference and
# a non-zero exit status. The work folder (PQPERF_SLURM_WORK, default inside the temp dir)
# holds the job outputs; the temp dir is removed after a success (PQPERF_SLURM_KEEP=1 keeps
# it) and kept, with the daemons' logs, after a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
t0=$(date +%s)
shards=${PQPERF_SLURM_SHARDS:-2}
only=${PQPERF_SLURM_ONLY:-'^ml-kem-512/'}
step() { echo "slurm: $*" >&2; }
fail() {
  echo "slurm: $*"
  exit 1
}
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi

# 1. Packages and binaries.
need=()
for pkg in slurm-wlm munge python3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  step "installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
    fail "installing ${need[*]} failed"
fi
bin="${CARGO_TARGET_DIR:-$repo/target}/release"
if [ ! -x "$bin/pqperf" ] || [ ! -x "$bin/pqperf-driver" ]; then
  step "building the release binaries"
  cargo build --release --locked --bins >&2 || fail "cargo build --release failed"
fi
export PQPERF="$bin/pqperf"

# 2. A one-node cluster under a temp dir.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pqperf-slurm.XXXXXX")
chmod 755 "$tmp"
work="${PQPERF_SLURM_WORK:-$tmp/work}"
rm -rf "$work"
mkdir -p "$work" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/munge"
chmod 700 "$tmp/munge"
pids=()
jobs_submitted=()
single_pid=
cleanup() {
  local rc=$?
  for j in "${jobs_submitted[@]}"; do scancel "$j" >/dev/null 2>&1; done
  [ -n "$single_pid" ] && kill "$single_pid" 2>/dev/null
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      echo "slurm: daemon $p did not stop on SIGTERM; killing it" >&2
      kill -9 "$p" 2>/dev/null
    fi
  done
  wait 2>/dev/null
  if [ "$rc" = 0 ] && [ -z "${PQPERF_SLURM_KEEP:-}" ]; then
    rm -rf "$tmp"
  else
    echo "slurm: daemon logs and state kept in $tmp" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -r /etc/munge/munge.key ]; then
  # munged run as root wants a key owned by root: a private copy of the system key.
  install -m 600 /etc/munge/munge.key "$tmp/munge/munge.key"
else
  mungekey --create --keyfile="$tmp/munge/munge.key" || fail "mungekey --create failed"
fi
munged -F --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/log/munged.log" 2>>"$tmp/log/munged.err" &
pids+=($!)

read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
node=$(hostname -s)
ncpu=$(nproc --all)
system=${PQPERF_SLURM_SYSTEM:-slurm_ci}
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=pqperf-ci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$ncpu Features=$system State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.socket" ] || fail "munged did not start ($(cat "$tmp/log/munged.err" 2>/dev/null))"
slurmctld -D -f "$SLURM_CONF" 2>>"$tmp/log/slurmctld.err" &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" 2>>"$tmp/log/slurmd.err" &
pids+=($!)
state=
for _ in $(seq 150); do
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || {
  tail -5 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log" >&2
  fail "the node did not come up (state '${state:-none}')"
}
step "cluster up: node $node ($ncpu CPUs, feature $system), ports $ctld_port/$slurmd_port on 127.0.0.1; work in $work"

# 3. The recipe as submitted by a user, and the unsharded run beside it.
cd "$work"
printf 'ID;Arch;Hostname;Description\n%s;%s;%s;Slurm CI one-node cluster (host not fixed)\n' \
  "$system" "$(uname -m)" "$(uname -n)" >systems.csv
export PQPERF_RUNS="$work/runs" PQPERF_SYSTEMS="$work/systems.csv" PQPERF_PUBLISH="$work/published"
copts=(--only "$only" --trial-target 0.001 --op-budget 5 --allow-unfixed-host --probe-attempts 1)
array=$(sbatch --parsable --array="1-$shards" --constraint="$system" --output="$work/shard-%a.out" \
  "$repo/scripts/slurm/shard.sbatch" "$system" "${copts[@]}") || fail "sbatch of the shard array failed"
array=${array%%;*}
jobs_submitted+=("$array")
merge=$(sbatch --parsable --dependency="afterok:$array" --constraint="$system" --output="$work/merge.out" \
  "$repo/scripts/slurm/merge.sbatch" "$system" "$shards") || fail "sbatch of the merge job failed"
merge=${merge%%;*}
jobs_submitted+=("$merge")
step "submitted array job $array ($shards tasks) and merge job $merge (afterok:$array)"
single="$work/runs/single"
(
  "$PQPERF" import pqclean --run-dir "$single" &&
    # The same steps as scripts/slurm/shard.sbatch, which builds the ICCS helper baseline in
    # every shard's run directory before `all --shard` (a plain `all` would skip it here).
    "$PQPERF" campaign baseline --run-dir "$single" --system "$system" --systems systems.csv --cpu auto "${copts[@]}" &&
    "$PQPERF" campaign all --run-dir "$single" --system "$system" --systems systems.csv --cpu auto "${copts[@]}" &&
    "$PQPERF" campaign publish --run-dir "$single" --systems systems.csv --publish-to "$work/published-single" &&
    "$PQPERF" validate "$work/published-single"
) >"$work/single.out" 2>&1 &
single_pid=$!

job_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | sed 's/JobState=//' | paste -sd, -; }
deadline=$(($(date +%s) + ${PQPERF_SLURM_TIMEOUT:-900}))
while :; do
  ms=$(job_state "$merge")
  case "$ms" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  # A failed array task leaves the merge job pending forever (DependencyNeverSatisfied).
  if scontrol -o show job "$merge" 2>/dev/null | grep -q DependencyNeverSatisfied; then break; fi
  [ "$(date +%s)" -lt "$deadline" ] || break
  sleep 1
done
as=$(job_state "$array")
wait "$single_pid"
single_rc=$?
single_pid=
for f in "$work"/shard-*.out "$work/merge.out"; do
  [ -f "$f" ] && { echo "--- $f" >&2; tail -4 "$f" >&2; }
done
[ "$as" = COMPLETED ] || fail "array job $array ended ${as:-unknown} (see $work/shard-*.out)"
[ "$ms" = COMPLETED ] || fail "merge job $merge ended ${ms:-unknown}$(scontrol -o show job "$merge" 2>/dev/null | grep -o 'Reason=[^ ]*' | sed 's/^/ /')"
[ "$single_rc" = 0 ] || { tail -20 "$work/single.out" >&2; fail "the unsharded run failed (see $work/single.out)"; }

# 4. The merged dataset against the unsharded one.
diff=$(python3 - "$work" "$system" "$shards" <<'PYEOF'
import json, os, sys
work, system, shards = sys.argv[1], sys.argv[2], int(sys.argv[3])
def files(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            if not f.startswith("."):
                out.add(os.path.relpath(os.path.join(d, f), root))
    return out
problems = []
merged_runs = [d for d in os.listdir(os.path.join(work, "runs")) if d.startswith(system + "-merged-")]
if len(merged_runs) != 1:
    problems.append(f"merged run directories: {merged_runs}")
else:
    m = os.path.join(work, "runs", merged_runs[0])
    rm, rs = files(os.path.join(m, "records")), files(os.path.join(work, "runs/single/records"))
    if not rs:
        problems.append("the unsharded run has no records")
    if rm != rs:
        problems.append(f"record files differ: only merged {sorted(rm - rs)}, only unsharded {sorted(rs - rm)}")
    per_shard = []
    for k in range(1, shards + 1):
        per_shard.append(files(os.path.join(work, "runs", f"{system}-shard-{k}", "records")))
    if any(not s for s in per_shard):
        problems.append(f"a shard measured nothing: {[len(s) for s in per_shard]} records")
    camp = json.load(open(os.path.join(m, "campaign.json")))
    if camp.get("shards") != shards:
        problems.append(f"campaign.json shards = {camp.get('shards')}, not {shards}")
    leases = camp.get("pqperf", {}).get("cpu_leases", [])
    if not leases:
        problems.append("the merged campaign.json names no CPU leases (pqperf.cpu_leases)")
# The shards and the unsharded run shared this host: no two lease windows on one CPU overlap.
windows = []
for r in os.listdir(os.path.join(work, "runs")):
    if "-merged-" in r:
        continue
    try:
        c = json.load(open(os.path.join(work, "runs", r, "campaign.json")))
    except OSError:
        continue
    for l in c.get("pqperf", {}).get("cpu_leases", []):
        windows.append((l["cpu"], l["acquired_utc"], l.get("released_utc"), f"{r} {l.get('phase')}"))
for i, (c1, a1, r1, w1) in enumerate(windows):
    if r1 is None:
        problems.append(f"lease of {w1} never released")
    for c2, a2, r2, w2 in windows[i + 1:]:
        if c1 == c2 and r1 and r2 and a1 < r2 and a2 < r1:
            problems.append(f"CPU {c1} leased at once by {w1} ({a1}..{r1}) and {w2} ({a2}..{r2})")
a = os.path.join(work, "published-single")
b = os.path.join(work, "published")
fa, fb = files(a), files(b)
a = os.path.join(a, "performance/data", system)
b = os.path.join(b, "performance/data", system)
if not fa:
    problems.append(f"{a}: empty")
if fa != fb:
    problems.append(f"dataset files differ: only merged {sorted(fb - fa)}, only unsharded {sorted(fa - fb)}")
if fa and fb and "build.json" in fa and "build.json" in fb:
    ba = json.load(open(os.path.join(a, "build.json")))["instances"]
    bb = json.load(open(os.path.join(b, "build.json")))["instances"]
    if sorted(ba) != sorted(bb):
        problems.append(f"build.json instances differ: {sorted(ba)} vs {sorted(bb)}")
    for k in sorted(set(ba) & set(bb)):
        for f in ("kat", "library", "library_sha256", "flags"):
            if ba[k].get(f) != bb[k].get(f):
                problems.append(f"build.json {k} {f}: unsharded {ba[k].get(f)!r}, merged {bb[k].get(f)!r}")
print("; ".join(problems))
PYEOF
) || diff="comparison failed"
t1=$(date +%s)
step "leases: $(grep -ho 'lease CPU [0-9]* [^;]*' "$work"/runs/*/campaign.log 2>/dev/null | sort | uniq -c | paste -sd';' -)"
step "wall $((t1 - t0)) s"
[ -z "$diff" ] || fail "$diff"
echo "slurm: $shards shards merged, dataset equals the unsharded run"
