#!/usr/bin/env bash
# What share of PETSc programs' star-forest traffic goes through halo, and what it costs
# (issue 43): per program family, at 2 and 4 ranks, the -halo_sf_view totals of one run
# with -halo_sf (operations and bytes of leaves on other ranks through halo and left to
# PETSc's basic, the whole run, and the solve phase: within KSPSolve, SNESSolve, TSStep or
# TaoSolve), then the whole program's wall time without and with
# -halo_sf, runs alternated, medians; then the exchange per unit size: bench_matmult's
# scatter and reverse with blocks of K scalars a ghost (-bs K), halo against basic side by
# side in one process (-pair_sf_type halo), the median of the per-repetition ratios.
# usage: bench/petsc_coverage.sh [BUILD_DIR] [RUNS]; COVERAGE_PARTS="families units" (default both)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build} runs=${2:-5}
mpirun=scripts/mpirun.sh
lib=$build/libhalo_petsc.so
ksp=$build/examples/petsc/petsc_ksp_lap27
dmda=$build/examples/petsc/petsc_dmda_solve
ex19=$build/tests/petsc_tutorial_snes_ex19
ex13=$build/tests/petsc_tutorial_snes_ex13
ts5=$build/tests/petsc_tutorial_ts_adr_ex5
ex45=$build/tests/petsc_tutorial_ksp_ex45
bench=$build/examples/petsc/petsc_bench_matmult
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

families=(
  "CG + Jacobi, AIJ (27-point Laplacian 40^3)|$ksp -n 40 -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8"
  "CG + GAMG, AIJ (27-point Laplacian 30^3)|$ksp -n 30 -ksp_type cg -pc_type gamg -ksp_rtol 1e-8"
  "DMDA of 1 unknown, 7-point, GMRES (dmda_solve 40^3)|$dmda -da_grid_x 40 -da_grid_y 40 -da_grid_z 40"
  "SNES ex19, DMDA of 4 unknowns, AIJ (64^2)|$ex19 -da_grid_x 64 -da_grid_y 64"
  "SNES ex19, BAIJ of block 4 (64^2)|$ex19 -da_grid_x 64 -da_grid_y 64 -dm_mat_type baij"
  "SNES ex19, matrix-free Newton-Krylov (48^2, -snes_mf)|$ex19 -da_grid_x 48 -da_grid_y 48 -snes_mf"
  "SNES ex13, Poisson Q2 on a DMPlex (32^2 quadrilaterals)|$ex13 -dm_plex_simplex 0 -dm_plex_box_faces 32,32 -potential_petscspace_degree 2 -pc_type jacobi -ksp_rtol 1e-10"
  "TS ex5 (advection-diffusion-reaction), DMDA of 2 unknowns, 20 implicit steps (64^2)|$ts5 -da_grid_x 64 -da_grid_y 64 -ts_max_steps 20"
  "KSP ex45, multigrid of 3 levels, redundant coarse solve (DMDA 33^3)|$ex45 -da_grid_x 33 -da_grid_y 33 -da_grid_z 33 -pc_type mg -pc_mg_levels 3 -mg_coarse_pc_type redundant -mg_levels_ksp_type richardson -mg_levels_ksp_max_it 2 -mg_levels_pc_type jacobi -ksp_rtol 1e-10"
)

parts=${COVERAGE_PARTS:-families units}
if [[ $parts == *families* ]]; then
echo "| program | ranks | operations through halo / left to basic | bytes through halo / left to basic | share of bytes | solve phase: operations | solve phase: bytes | solve phase: share of bytes | PETSc s | with halo s | halo / PETSc |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for f in "${families[@]}"; do
  label=${f%%|*} cmd=${f#*|}
  for np in 2 4; do
    # shellcheck disable=SC2086
    out=$($mpirun -n "$np" $cmd -dll_append "$lib" -halo_sf -halo_sf_view 2>&1)
    view=$(grep "^halo_sf_view: [0-9]* star forests made" <<<"$out")
    ops=$(sed -E 's/.*operations through halo ([0-9]+), left to basic ([0-9]+);.*/\1 \/ \2/' <<<"$view")
    bytes=$(sed -E 's/.*through halo ([0-9]+), left to basic ([0-9]+): .*/\1 \/ \2/' <<<"$view")
    share=$(sed -E 's/.*: ([0-9.]+) % through halo$/\1 %/' <<<"$view")
    solve=$(grep "^halo_sf_view: solve phase" <<<"$out")
    sops=$(sed -E 's/.*operations through halo ([0-9]+), left to basic ([0-9]+);.*/\1 \/ \2/' <<<"$solve")
    sbytes=$(sed -E 's/.*through halo ([0-9]+), left to basic ([0-9]+): .*/\1 \/ \2/;s/.*; no bytes between ranks$/0 \/ 0/;s/.*not measured.*/-/' <<<"$solve")
    sshare=$(sed -E 's/.*: ([0-9.]+) % through halo$/\1 %/;s/.*; no bytes between ranks$/-/;s/.*not measured.*/not measured/' <<<"$solve")
    tp=() th=()
    for _ in $(seq "$runs"); do
      a=$(date +%s.%N)
      # shellcheck disable=SC2086
      $mpirun -n "$np" $cmd >/dev/null 2>&1
      b=$(date +%s.%N)
      # shellcheck disable=SC2086
      $mpirun -n "$np" $cmd -dll_append "$lib" -halo_sf >/dev/null 2>&1
      c=$(date +%s.%N)
      tp+=("$(echo "$b - $a" | bc -l)") th+=("$(echo "$c - $b" | bc -l)")
    done
    p=$(printf "%s\n" "${tp[@]}" | median) h=$(printf "%s\n" "${th[@]}" | median)
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %.3f |\n" "$label" "$np" "$ops" \
      "$bytes" "$share" "$sops" "$sbytes" "$sshare" "$p" "$h" "$(echo "$h / $p" | bc -l)"
  done
done
fi

[[ $parts == *units* ]] || exit 0
echo
echo "| scalars a ghost | ranks | scatter: basic us | halo us | halo / basic | reverse: basic us | halo us | halo / basic |"
echo "|---|---|---|---|---|---|---|---|"
for k in 1 4 8; do
  for np in 2 4; do
    rs=() rr=() bs_=() hs=() br=() hr=()
    for _ in $(seq "$runs"); do
      out=$($mpirun -n "$np" "$bench" -n 40 -bs "$k" -reps 200 -dll_append "$lib" -pair_sf_type halo)
      bs_+=("$(awk '$1 == "scatter_us" {print $3}' <<<"$out")")
      hs+=("$(awk '$1 == "scatter_pair_us" {print $3}' <<<"$out")")
      rs+=("$(awk '$1 == "scatter_ratio" {print $3}' <<<"$out")")
      br+=("$(awk '$1 == "reverse_us" {print $3}' <<<"$out")")
      hr+=("$(awk '$1 == "reverse_pair_us" {print $3}' <<<"$out")")
      rr+=("$(awk '$1 == "reverse_ratio" {print $3}' <<<"$out")")
    done
    printf "| %s | %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f |\n" "$k" "$np" \
      "$(printf "%s\n" "${bs_[@]}" | median)" "$(printf "%s\n" "${hs[@]}" | median)" \
      "$(printf "%s\n" "${rs[@]}" | median)" "$(printf "%s\n" "${br[@]}" | median)" \
      "$(printf "%s\n" "${hr[@]}" | median)" "$(printf "%s\n" "${rr[@]}" | median)"
  done
done
