#!/usr/bin/env bash
# halo's plans (host and neighbor transports, every strategy) against MPI Advance's persistent
# neighborhood all-to-all (standard and locality-aware) on the same patterns, side by side in
# one run per case (bench/neighbor_compare.c; bench/results/components.md).
# MPIL_SRC: a checkout of mpi-advance/locality_aware at a commit whose functions are named MPIL_*
# (older ones export MPIX_Neighbor_alltoallv_init, Open MPI's own symbol); built here into
# $MPIL_BUILD (default /tmp/mpil-build) as a static library, for this benchmark only.
# Environment: BUILD (default build), RANKS ("2 3 4"), N (exchanges a round, 200), ROUNDS (9),
# CASES (the bundled square matrices and lap2d:300 lap3d:40 lap3d27:40).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
: "${MPIL_SRC:?set MPIL_SRC to a checkout of mpi-advance/locality_aware}"
MB=${MPIL_BUILD:-/tmp/mpil-build}
if [ ! -f "$MB/liblocality_aware.a" ]; then
  cmake -S "$MPIL_SRC" -B "$MB" -DENABLE_UNIT_TESTS=OFF -DBENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$MB" --target locality_aware -j"$(nproc)" >/dev/null
fi
exe="$B/bench/bench_neighbor_compare"
mpicc -O2 -std=c11 bench/neighbor_compare.c -o "$exe" -Iinclude -I"$B/include" -I"$MPIL_SRC/include" \
  -L"$B" -Wl,-rpath,"$(cd "$B" && pwd)" -lhalo "$MB/liblocality_aware.a" -lmpi_cxx -lstdc++ -lm
cases=${CASES:-"$(ls matrices/*.mtx) lap2d:300 lap3d:40 lap3d27:40"}
for np in ${RANKS:-2 3 4}; do
  for c in $cases; do
    scripts/mpirun.sh -n "$np" "$exe" "$c" 2 "${N:-200}" "${ROUNDS:-9}"
  done
done
