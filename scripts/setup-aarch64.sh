#!/usr/bin/env bash
# Install what the AArch64 test set needs on a fresh Debian (amd64) machine (idempotent):
# the arm64 foreign architecture, the system Rust toolchain with the arm64 standard library
# (rustc-web/cargo-web, installed as /usr/bin/rustc and /usr/bin/cargo), the AArch64 cross
# compiler and C library, and qemu-user to run AArch64 binaries. Everything comes from the
# Debian package registry. scripts/test-aarch64.sh uses what this installs.
set -euo pipefail
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup-aarch64: adding the arm64 architecture" >&2
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  updated=1
fi
need=()
for pkg in rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu \
  libc6-dev-arm64-cross libc6:arm64 qemu-user; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "setup-aarch64: installing ${need[*]}" >&2
  [ "$updated" = 1 ] || $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The pieces test-aarch64.sh relies on, checked by name so a missing one fails here, clearly.
for tool in /usr/bin/rustc /usr/bin/cargo aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "setup-aarch64: $tool missing after install" >&2; exit 1; }
done
[ -d /usr/aarch64-linux-gnu/lib ] || { echo "setup-aarch64: /usr/aarch64-linux-gnu (arm64 sysroot) missing" >&2; exit 1; }
/usr/bin/rustc --print target-libdir --target aarch64-unknown-linux-gnu >/dev/null
