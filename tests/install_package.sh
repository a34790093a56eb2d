#!/usr/bin/env bash
# Install halo into a scratch prefix; build the example against it with
# find_package(halo) and with pkg-config; run both.
# usage: install_package.sh CMAKE BUILD_DIR WORK EXAMPLE_C CONSUMER_DIR MPIEXEC "MPIFLAGS"
set -eu
cmake=$1 build=$2 work=$3 example=$4 consumer=$5 mpiexec=$6 flags=$7
rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/include/halo.h"
test -f "$work/prefix/include/halo/config.h"
"$cmake" -S "$consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DHALO_EXAMPLE="$example" >"$work/configure.log"
"$cmake" --build "$work/consumer" >"$work/build.log"
# shellcheck disable=SC2086
"$mpiexec" -n 2 $flags "$work/consumer/consumer"
pc=$(find "$work/prefix" -name halo.pc)
test -n "$pc"
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags halo)
libs=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --libs halo)
mpicc $cflags "$example" $libs -o "$work/pc_example"
# shellcheck disable=SC2086
"$mpiexec" -n 3 $flags "$work/pc_example"
echo "installed package works with find_package and pkg-config"
