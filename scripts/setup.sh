#!/usr/bin/env bash
# Install what pqperf and its tests need on a fresh Debian machine (idempotent).
# Everything comes from the package registries: Debian packages here, crates through cargo.
set -euo pipefail
need=()
for pkg in gcc binutils make valgrind util-linux chromium fonts-dejavu-core python3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Fetch the workspace crates now (the PQClean corpus is fetched by `pqperf import pqclean`
# through cargo metadata of a generated manifest pinning pqcrypto-mldsa =0.1.2, never by URL).
cargo fetch --locked >/dev/null 2>&1 || cargo fetch
