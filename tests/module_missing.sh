#!/usr/bin/env bash
# A device matrix where halo's CUDA module is not beside libhalo.so: libhalo
# (copied alone into a directory of its own, found first through
# LD_LIBRARY_PATH) refuses it on every rank with HALO_ERR_NOT_COMPILED naming
# libhalo_cuda.so, and maps no CUDA library (test_module missing).
# Usage: module_missing.sh LIBHALO TEST_MODULE MPIEXEC [MPIEXEC FLAGS...]
set -u
lib=$1 prog=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/halo_module_missing_XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
[ -n "$soname" ] || { echo "no SONAME in $lib"; exit 1; }
cp "$lib" "$dir/$soname" || exit 1
ls "$dir" | grep -q halo_cuda && { echo "the module was copied too"; exit 1; }
# the copy is the one the program loads: check it
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$prog" | grep -q "$dir/$soname" ||
  { echo "the test program does not load $dir/$soname:"; LD_LIBRARY_PATH="$dir" ldd "$prog"; exit 1; }
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" -x LD_LIBRARY_PATH "$prog" missing
