#!/usr/bin/env bash
# PETSc's scatter and MatMult with and without halo, side by side in one
# process: examples/petsc/bench_matmult.c (a plain PETSc program) run with
# `-dll_append libhalo_petsc.so -pair_sf_type halo` builds the matrix and the
# scatter twice, once with PETSc's basic star forests and once with halo's
# (the option -sf_type set while the second is made), and times each
# operation on both in alternating order, repetition by repetition. Each run
# prints per operation the medians of both and the median of the per-
# repetition ratio halo / PETSc; this script runs it RUNS times and prints the
# median over runs of each (and the range of the runs' ratios). Then a CG
# solve of fixed iterations, whole-program wall time, runs alternated.
# usage: bench/petsc_host.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} runs=${2:-5}
mpirun=scripts/mpirun.sh
lib=$build/libhalo_petsc.so
bench=$build/examples/petsc/petsc_bench_matmult
ksp=$build/examples/petsc/petsc_ksp_lap27
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}'; }
# field F of the lines named W over the runs' outputs in directory D
col() { cat "$1"/r* | awk -v w="$2" -v f="$3" '$1 == w {print $f}'; }

# one configuration: ranks, label, then the program's matrix options
paired() {
  local np=$1 label=$2 tmp
  shift 2
  tmp=$(mktemp -d)
  for r in $(seq "$runs"); do
    $mpirun -n "$np" "$bench" "$@" -dll_append "$lib" -pair_sf_type halo >"$tmp/r$r"
  done
  local rows g over=""
  rows=$(awk '/^rows/ {print $2}' "$tmp/r1")
  g=$(awk '/^rows/ {print $6}' "$tmp/r1")
  [ "$np" -gt 2 ] && over=" (oversubscribed)"
  for w in scatter matmult reverse matmulttranspose; do
    printf "| %s%s | %s | %s | %s | %s | %.1f | %.1f | %.3f | %s |\n" "$np" "$over" "$label" "$rows" \
      "$g" "$w" "$(col "$tmp" "${w}_us" 3 | median)" "$(col "$tmp" "${w}_pair_us" 3 | median)" \
      "$(col "$tmp" "${w}_ratio" 3 | median)" "$(col "$tmp" "${w}_ratio" 3 | range)"
  done
  rm -rf "$tmp"
}

echo "| ranks | matrix | rows | ghosts max | what | PETSc us | halo us | halo/PETSc | runs' ratios |"
echo "|---|---|---|---|---|---|---|---|---|"
paired 2 "lap27 40^3" -n 40 -reps 300
paired 2 "lap27 100^3" -n 100 -reps 300
paired 4 "lap27 40^3" -n 40 -reps 300
paired 8 "lap27 40^3" -n 40 -reps 300
for f in matrices/*.mtx; do
  paired 2 "$(basename "$f" .mtx)" -f "$f" -reps 300
done

echo
echo "| ranks | solve | PETSc s | halo s | halo/PETSc |"
echo "|---|---|---|---|---|"
for np in 2 4; do
  tp=() th=()
  for r in $(seq "$runs"); do
    a=$(date +%s.%N)
    $mpirun -n "$np" "$ksp" -n 60 -ksp_type cg -pc_type jacobi -ksp_max_it 300 -ksp_rtol 1e-30 >/dev/null
    b=$(date +%s.%N)
    $mpirun -n "$np" "$ksp" -n 60 -ksp_type cg -pc_type jacobi -ksp_max_it 300 -ksp_rtol 1e-30 \
      -dll_append "$lib" -halo_sf >/dev/null
    c=$(date +%s.%N)
    tp+=("$(echo "$b - $a" | bc -l)") th+=("$(echo "$c - $b" | bc -l)")
  done
  p=$(printf "%s\n" "${tp[@]}" | median) h=$(printf "%s\n" "${th[@]}" | median)
  printf "| %s | CG+Jacobi 60^3, 300 iterations (whole program) | %.3f | %.3f | %.3f |\n" "$np" "$p" "$h" \
    "$(echo "$h / $p" | bc -l)"
done
