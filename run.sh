#!/usr/bin/env bash
# Set up (packages, configure, build), then time and check the distributed
# SpMV of a bundled SuiteSparse matrix on 4 MPI ranks, as 2 virtual nodes of
# 2 ranks, with every strategy (standard, 2step, 3step, split). Extra
# arguments go to `halo spmv` (see build/tools/halo spmv --help).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh >/dev/null
scripts/mpirun.sh -n 4 build/tools/halo spmv --matrix matrices/bcsstk16.mtx --ranks-per-node 2 \
  --check "$@"
