#!/usr/bin/env bash
# Every function of libhalo's public headers that takes an MPI_Comm is one that
# test_comm_check calls with MPI_COMM_NULL and an intercommunicator (the adapters'
# headers, petsc.h and hypre.h, belong to their own libraries).
# usage: comm_check_all.sh TEST_COMM_CHECK INCLUDE_DIR
set -u
prog=$1 inc=$2
headers=$(ls "$inc"/halo.h "$inc"/halo/*.h | grep -vE '/(petsc|hypre)\.h$')
declared=$(cat $headers | tr '\n' ' ' | grep -oE '\bhalo_[a-z0-9_]+\([^)]*\bMPI_Comm [a-z_]+[^)]*\)' |
           grep -oE '^halo_[a-z0-9_]+' | sort -u)
covered=$("$prog" --list | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$covered"))
if [ -n "$missing" ]; then
  echo "public functions taking an MPI_Comm that test_comm_check does not call:"
  echo "$missing"
  exit 1
fi
[ "$(echo "$declared" | wc -l)" -ge 10 ] || { echo "found too few: $declared"; exit 1; }
echo "$(echo "$declared" | wc -l) passed, 0 failed"
