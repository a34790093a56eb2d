#!/usr/bin/env bash
# Set-up shared by ./run.sh and ./test.sh on a Debian machine: install the
# packages the build needs (only those missing), configure and build.
# Environment: BUILD_DIR (default build), HALO_CMAKE_ARGS (extra cmake args).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(cmake make gcc libc6-dev libmetis-dev libopenmpi-dev openmpi-bin pkg-config libpetsc-real-dev libpetsc64-real-dev libpetsc-complex-dev libpetsc64-complex-dev libpetsc3.18-dev-examples libhypre-dev libhypre64-dev libhypre64m-dev python3 doxygen)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
build=${BUILD_DIR:-build}
mkdir -p "$build"
# shellcheck disable=SC2086
cmake -S . -B "$build" -DHALO_WERROR=ON ${HALO_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
