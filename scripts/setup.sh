#!/usr/bin/env bash
# Install what pqperf and its tests need on a fresh Debian machine (idempotent).
# Everything comes from the package registries: Debian packages here, crates through cargo.
# Without options, what the demo (`cargo run --release -p pqperf -- demo`) needs: gcc and
# binutils (builds), valgrind (ct, count), util-linux (setarch for the counts) and python3
# (its version is part of every record's environment snapshot). `--tests` adds what only the
# test suite needs: headless Chromium and a font for the site's browser tests (the demo and
# every pqperf command run without them; the browser is most of a fresh machine's set-up
# time). Nothing runs `make` (submitted Makefiles are read, never run).
set -euo pipefail
pkgs=(gcc binutils valgrind util-linux python3)
if [ "${1:-}" = "--tests" ]; then
  pkgs+=(chromium fonts-dejavu-core)
fi
need=()
for pkg in "${pkgs[@]}"; do
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
