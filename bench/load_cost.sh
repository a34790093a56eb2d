#!/usr/bin/env bash
# What loading halo costs a CPU-only PETSc program (issue 41: <= 2 ms a process).
#  1. dlopen of libhalo_petsc.so (and of libhalo.so alone) in a process that has PETSc
#     loaded already (bench/load_dlopen.c), ROUNDS processes each, the builds alternated:
#     medians, min and max, in ms;
#  2. a whole PETSc program (examples/petsc ksp_lap27, -n 16, 5 CG iterations) without
#     halo and with -dll_append of each build's libhalo_petsc.so, alternated round by
#     round, 2 and 4 ranks (bench/load_cost.py: extra wall time and extra CPU time per
#     process against the run without halo of the same round, medians).
# usage: bench/load_cost.sh NOW_BUILD [BEFORE_BUILD] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
now=$1 before=${2:-} rounds=${3:-40}
petsc=$(ls /usr/lib/x86_64-linux-gnu/libpetsc_real.so.3.* 2>/dev/null | head -1)
[ -n "$petsc" ] || { echo "no libpetsc_real.so.3.* (apt-get install libpetsc-real-dev)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/load_dlopen" bench/load_dlopen.c -ldl
libs=("now libhalo_petsc=$now/libhalo_petsc.so" "now libhalo=$now/libhalo.so")
[ -n "$before" ] && libs=("before libhalo_petsc=$before/libhalo_petsc.so" "before libhalo=$before/libhalo.so" "${libs[@]}")
for r in $(seq "$rounds"); do
  for l in "${libs[@]}"; do echo "${l%%=*}	$("$tmp/load_dlopen" "$petsc" "${l#*=}")"; done
done >"$tmp/dl.tsv"
echo "| library | dlopen ms (median) | min | max | processes |"
echo "|---|---|---|---|---|"
python3 - "$tmp/dl.tsv" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    k, v = line.rstrip("\n").split("\t")
    d.setdefault(k, []).append(float(v))
for k, v in d.items():
    print(f"| {k} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} | {len(v)} |")
PY
echo
variants=()
[ -n "$before" ] && variants+=("halo before=$before/libhalo_petsc.so")
variants+=("halo now=$now/libhalo_petsc.so")
for np in 2 4; do
  python3 bench/load_cost.py "$now/examples/petsc/petsc_ksp_lap27" "$np" "$rounds" "${variants[@]}" \
    -- -n 16 -ksp_max_it 5
  echo
done
