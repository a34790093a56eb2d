#!/usr/bin/env bash
# PETSc's MatMult and its scatter with and without halo (-halo_sf), side by
# side: the same program (examples/petsc/bench_matmult.c) run alternately
# without and with `-dll_append libhalo_petsc.so -halo_sf`, RUNS times each;
# every run prints medians over its repetitions (max over ranks per
# repetition); this script prints the median over runs and the ratio
# halo / PETSc. Then a CG solve of fixed iterations, whole-program wall time.
# usage: bench/petsc_host.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} runs=${2:-5}
mpirun=scripts/mpirun.sh
lib=$build/libhalo_petsc.so
bench=$build/examples/petsc/petsc_bench_matmult
ksp=$build/examples/petsc/petsc_ksp_lap27
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "| ranks | n^3 | ghosts max | what | PETSc us | halo us | halo/PETSc |"
echo "|---|---|---|---|---|---|---|"
for cfg in "2 40" "2 100" "4 40" "8 40"; do
  read -r np n <<<"$cfg"
  tmp=$(mktemp -d)
  for r in $(seq "$runs"); do
    $mpirun -n "$np" "$bench" -n "$n" -reps 300 >"$tmp/p$r"
    $mpirun -n "$np" "$bench" -n "$n" -reps 300 -dll_append "$lib" -halo_sf >"$tmp/h$r"
  done
  g=$(awk '/^rows/ {print $6}' "$tmp/p1")
  for w in scatter matmult reverse matmulttranspose; do
    p=$(cat "$tmp"/p* | awk -v w="${w}_us" '$1 == w {print $3}' | median)
    h=$(cat "$tmp"/h* | awk -v w="${w}_us" '$1 == w {print $3}' | median)
    over=""
    [ "$np" -gt 2 ] && over=" (oversubscribed)"
    printf "| %s%s | %s | %s | %s | %.1f | %.1f | %.2f |\n" "$np" "$over" "$n" "$g" "$w" "$p" "$h" \
      "$(echo "$h / $p" | bc -l)"
  done
  rm -rf "$tmp"
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
