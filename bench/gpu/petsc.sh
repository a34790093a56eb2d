#!/usr/bin/env bash
# PETSc's KSP on the GPUs (MATMPIAIJCUSPARSE, VECMPICUDA), with PETSc's own star
# forest and with halo's (issue 13, device memory). PETSc is not installed on the
# GPU machines and cannot be built there in one call: a CUDA build of PETSc
# (3.20 or later, with CUDA 13 support: PETSc's main branch) is made elsewhere
# and travels as .peer/petsc-cuda.tar.gz (ignored by git, carried by the device
# tool: carry [".peer"]), an installed prefix with its lib/ (libpetsc.so and the
# BLAS/LAPACK/gfortran libraries it needs, where the GPU machine lacks them),
# include/ and lib/pkgconfig/PETSc.pc. bench/gpu/petsc-peer.sh makes it.
# halo and libhalo_petsc are built here, with CUDA and NCCL, against it.
#
#   bench/gpu/petsc.sh check   the unmodified examples/petsc/ksp_lap27 (27-point Laplacian
#                              PETSC_N^3, 48) on 2 ranks and 2 GPUs with and without
#                              -dll_append libhalo_petsc.so -halo_sf: CG+Jacobi under every
#                              strategy (virtual nodes of 1 rank) and transport, -halo_sf_verify,
#                              BiCG (MatMultTranspose: the reverse exchange in device memory),
#                              GMRES; the same -ksp_monitor history, iterations and solution,
#                              and -halo_sf_view's count of the Bcasts through halo's CUDA plan
#   bench/gpu/petsc.sh bench   examples/petsc/bench_matmult (27-point Laplacian PETSC_BN^3, 128)
#                              side by side in one process: PETSc's basic against halo's type
#                              (-pair_sf_type halo) for each transport; and the KSPSolve time
#                              of CG (200 iterations) with and without halo, alternated,
#                              PETSC_REPS (5) times
#   bench/gpu/petsc.sh tts     the whole program's time, one solve to a tolerance, with and
#                              without halo (see tts below)
#   bench/gpu/petsc.sh units   examples/petsc/bench_matmult -bs 1, 4, 8 -check in CUDA memory:
#                              basic and halo side by side (staged, ipc, nccl), the scatter and
#                              reverse compared once, then timed (issue 43)
#   bench/gpu/petsc.sh all     check and bench
# Files under $OUT: petsc-summary.md, petsc-log.txt, petsc-runs.tar.gz (every run's output).
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
. bench/gpu/common.sh
gpu_script_init petsc
B=build-gpu-petsc
P=/tmp/petsc-cuda

build() {
  local t0=$SECONDS
  [ -f .peer/petsc-cuda.tar.gz ] || { say "no .peer/petsc-cuda.tar.gz (see the header)"; exit 1; }
  rm -rf $P && mkdir -p $P && tar -xzf .peer/petsc-cuda.tar.gz -C $P
  # the prefix it was installed under is another machine's
  sed -i -E -e "s|^prefix=.*|prefix=$P|" -e "s@-[IL][^ ]*/nvml/(include|lib)@@g" \
    $P/lib/pkgconfig/PETSc.pc
  export PKG_CONFIG_PATH=$P/lib/pkgconfig
  export LD_LIBRARY_PATH=$P/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # CUDA's libraries PETSc links (cuBLAS, cuFFT, cuSOLVER, cuRAND) where the toolkit lacks them:
  # the image's Python wheels
  for lib in $(ldd $P/lib/libpetsc.so | awk '/not found/ {print $1}' | sort -u); do
    local d
    d=$(find /opt/torch/.venv/lib -name "$lib" 2>/dev/null | head -1)
    [ -n "$d" ] && LD_LIBRARY_PATH+=":$(dirname "$d")"
  done
  if ldd $P/lib/libpetsc.so | grep -q "not found"; then
    say "libpetsc.so: libraries not found: $(ldd $P/lib/libpetsc.so | awk '/not found/ {print $1}' | tr '\n' ' ')"
    exit 1
  fi
  say "- PETSc $(cat $P/petsc-commit 2>/dev/null || echo '(commit unknown)') with CUDA, carried ($(du -sh $P | cut -f1))"
  rm -f $B/CMakeCache.txt # pkg-config's answers are cached: PETSc's prefix is new each call
  if ! run cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DHALO_ENABLE_CUDA=ON -DHALO_ENABLE_NCCL=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WERROR=ON -DHALO_ENABLE_PETSC=ON -DHALO_ENABLE_HYPRE=OFF \
      -DHALO_ENABLE_METIS=OFF -DBUILD_TESTING=OFF ||
    ! run cmake --build $B -j "$(nproc)" --target halo_petsc petsc_ksp_lap27 petsc_bench_matmult; then
    say "HALO BUILD FAILED (see petsc-log.txt)"
    tail -30 "$log"
    exit 1
  fi
  nm -D $B/libhalo_petsc.so | grep cudaStreamWaitEvent >/dev/null || # (grep -q: SIGPIPE, pipefail)
    { say "libhalo_petsc built without device support"; exit 1; }
  say "- halo and libhalo_petsc built against it in $((SECONDS - t0)) s"
}

# prog NAME NP ARGS...: one run of a PETSc program, its output in $runs/NAME.out
prog() {
  local name=$1 np=$2 exe=$3
  shift 3
  echo "+ [$name] mpirun -n $np $exe $*" >>"$log"
  timeout "${PETSC_TIMEOUT:-180}" mpirun --oversubscribe --bind-to none -n "$np" -x NCCL_NVLS_ENABLE \
    -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH "$B/examples/petsc/$exe" "$@" >"$runs/$name.out" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { say "- $name: exit $rc"; tail -8 "$runs/$name.out" | tee -a "$summary"; }
  return $rc
}

# the lines that must agree: the residual history, iterations, reason, the solution's norm and sum
answer() { grep -E 'KSP Residual norm|^iterations|^reason|^solution_' "$runs/$1.out"; }

GPU=(-use_gpu_aware_mpi 0 -mat_type aijcusparse)
# nccl.background=0: a named nccl is nccl from the first call (not ipc while its communicator
# is made in the background, the library's default)
HALO=(-dll_append $PWD/$B/libhalo_petsc.so -halo_sf -halo_sf_view -halo_sf_settings nccl.background=0)
checks=0 failures=0
# same REF NAME WORDS: NAME answers as REF; its view shows a CUDA plan of WORDS ("3step, nccl")
# whose Bcasts number the MatMults at least
same() {
  checks=$((checks + 1))
  if ! diff <(answer "$1") <(answer "$2") >/dev/null || [ -z "$(answer "$1")" ]; then
    failures=$((failures + 1))
    say "- $2: answers differ from $1"
    diff <(answer "$1") <(answer "$2") | head -6 | tee -a "$summary"
    return
  fi
  if ! python3 - "$runs/$2.out" "$3" <<'EOF'; then
import re, sys
t = open(sys.argv[1]).read()
words = sys.argv[2]
mult = int(re.search(r"^matmult_count (\d+)", t, re.M).group(1))
plans = [l for l in t.splitlines() if "CUDA memory" in l]
assert plans, "no plan in CUDA memory in -halo_sf_view"
assert any(words in l for l in plans), f"no CUDA plan of '{words}': {plans[:2]}"
n = [int(x) for x in re.findall(r"through halo: (\d+) forward", "\n".join(plans))]
assert n and max(n) >= mult - 1, f"Bcasts through halo {n}, MatMults {mult}"
EOF
    failures=$((failures + 1))
    say "- $2: the view does not show the MatMults through a CUDA plan of '$3'"
    grep -i -m3 "halo" "$runs/$2.out" | tee -a "$summary"
    return
  fi
  echo "- $2: same answers" >>"$log"
}

check() {
  say ""
  say "## Unmodified ksp_lap27 (device memory) with and without halo"
  say ""
  local t0=$SECONDS n=${PETSC_N:-48}
  local cg=(-n $n -ksp_type cg -pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 400 -ksp_monitor)
  prog ref_cg 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" || return
  say "- reference CG+Jacobi, 2 ranks on 2 GPUs, lap3d27 $n^3: $(grep -m1 '^iterations' $runs/ref_cg.out)"
  for s in ${PETSC_CHECK_S:-standard 2step 3step split}; do
    for t in ${PETSC_CHECK_T:-staged ipc nccl auto}; do
      prog "cg_${s}_$t" 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" "${HALO[@]}" -halo_sf_strategy $s \
        -halo_sf_transport $t -halo_sf_ranks_per_node 1 -halo_sf_message_cap 4096 &&
        same ref_cg "cg_${s}_$t" "$s, ${t/auto/}"
    done
  done
  prog cg_verify 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" "${HALO[@]}" -halo_sf_strategy 3step \
    -halo_sf_ranks_per_node 1 -halo_sf_verify && same ref_cg cg_verify "3step"
  # MatMultTranspose with the explicit transpose (cuSPARSE's transposed product adds with
  # atomics). PETSc's own BiCG still differs from run to run in the solution's last bits (seen:
  # its solution_sum 1.10592000000000029e+05 or ...58e+05 in alternate runs): three reference
  # runs; a run through halo must give one of PETSc's own answers, its residual history and
  # the rest identical (same, against the reference it matches)
  local bicg=(-n $n -ksp_type bicg -pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 400 -ksp_monitor
    -mat_form_explicit_transpose)
  local refs=() r
  for r in ref_bicg ref_bicg_2 ref_bicg_3; do
    prog $r 2 petsc_ksp_lap27 "${GPU[@]}" "${bicg[@]}" && refs+=($r)
  done
  say "- PETSc's BiCG alone, 3 runs: $(for r in "${refs[@]}"; do answer $r | md5sum | cut -c1-8; done | sort | uniq -c | awk '{print $1 " x " $2}' | paste -sd, -) (answers' digests)"
  for t in ${PETSC_BICG_T:-nccl staged}; do
    prog "bicg_standard_$t" 2 petsc_ksp_lap27 "${GPU[@]}" "${bicg[@]}" "${HALO[@]}" \
      -halo_sf_transport $t -halo_sf_verify || continue
    local match=${refs[0]:-ref_bicg}
    for r in "${refs[@]}"; do
      diff <(answer $r) <(answer "bicg_standard_$t") >/dev/null && match=$r
    done
    same $match "bicg_standard_$t" "standard, $t"
  done
  local gm=(-n $n -ksp_type gmres -pc_type jacobi -ksp_rtol 1e-10 -ksp_max_it 400 -ksp_monitor)
  prog ref_gmres 2 petsc_ksp_lap27 "${GPU[@]}" "${gm[@]}" &&
    prog gmres_2step 2 petsc_ksp_lap27 "${GPU[@]}" "${gm[@]}" "${HALO[@]}" -halo_sf_strategy 2step \
      -halo_sf_ranks_per_node 1 && same ref_gmres gmres_2step "2step"
  # loaded but off: PETSc's star forests, the same answers
  prog cg_off 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" -dll_append $PWD/$B/libhalo_petsc.so &&
    { checks=$((checks + 1)); diff <(answer ref_cg) <(answer cg_off) >/dev/null || { failures=$((failures + 1)); say "- cg_off: answers differ"; }; }
  say "- $checks runs compared, $failures failed ($((SECONDS - t0)) s)"
  say ""
  say "The view of one run (CG, 3step, nccl):"
  say ""
  say '```'
  sed -n '/halo/,$p' "$runs/cg_3step_nccl.out" | grep -v -E 'KSP Residual|^iterations|^reason|^solution|^matmult' | head -20 | tee -a "$summary" >/dev/null
  say '```'
}

bench() {
  local n=${PETSC_BN:-128} reps=${PETSC_REPS:-5}
  say ""
  say "## MatMult and its scatter, lap3d27 $n^3, 2 ranks on 2 GPUs: PETSc's basic and halo side by side"
  say ""
  say "One process pair per transport; each repetition runs both, alternating; medians of 300."
  say ""
  say '```'
  for t in ${PETSC_BENCH_T:-auto nccl ipc staged}; do
    prog "mm_$t" 2 petsc_bench_matmult "${GPU[@]}" -n $n -reps 300 -dll_append $PWD/$B/libhalo_petsc.so \
      -pair_sf_type halo -halo_sf_transport $t -halo_sf_view &&
      { echo "transport $t:"; grep -E '^(rows|scatter|matmult|reverse|matmulttranspose)' "$runs/mm_$t.out"; grep -m1 'halo_sf_view: PetscSF' "$runs/mm_$t.out" | cut -c1-160; } | tee -a "$summary" >/dev/null
  done
  say '```'
  say ""
  say "## KSPSolve, CG+Jacobi, 200 iterations, lap3d27 $n^3, 2 ranks on 2 GPUs (alternated, $reps times)"
  say ""
  local cg=(-n $n -ksp_type cg -pc_type jacobi -ksp_rtol 1e-30 -ksp_max_it 200 -ksp_norm_type unpreconditioned -log_view)
  for r in $(seq 1 "$reps"); do
    prog "solve_petsc_$r" 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}"
    prog "solve_halo_$r" 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" "${HALO[@]}"
  done
  python3 - "$runs" "$reps" <<'EOF' | tee -a "$summary"
import re, statistics, sys
runs, reps = sys.argv[1], int(sys.argv[2])
def solve(path):
    t = open(path).read()
    m = re.search(r"^KSPSolve\s+\d+\s+[0-9.]+\s+([0-9.e+-]+)", t, re.M)
    return float(m.group(1)) if m else None
rows = {}
for road in ("petsc", "halo"):
    rows[road] = [solve(f"{runs}/solve_{road}_{r}.out") for r in range(1, reps + 1)]
print("| road | KSPSolve s (median) | / PETSc's | runs |")
print("|---|---|---|---|")
base = statistics.median([x for x in rows["petsc"] if x is not None])
for road, xs in rows.items():
    xs = [x for x in xs if x is not None]
    med = statistics.median(xs)
    print(f"| {road} | {med:.4f} | {med / base:.3f} | {', '.join(f'{x:.4f}' for x in xs)} |")
EOF
}

# Time to solution (issue 42): the whole unmodified program, one CG+Jacobi solve to rtol 1e-8 of
# lap3d27 PETSC_TN^3 (128), 2 ranks on 2 GPUs, PETSc alone and with -halo_sf and its defaults (and
# PETSC_TTS_ROADS' others), alternated PETSC_TTS_REPS (5) times: the launcher's wall time, the
# program's own (-log_view's "Time (sec)", most of any rank: PetscInitialize to the view), KSPSolve
tts() {
  local n=${PETSC_TN:-128} reps=${PETSC_TTS_REPS:-5}
  local cg=(-n $n -ksp_type cg -pc_type jacobi -ksp_rtol 1e-8 -ksp_norm_type unpreconditioned -log_view)
  say ""
  say "## Time to solution: the whole program, CG+Jacobi to rtol 1e-8, lap3d27 $n^3, 2 ranks on 2 GPUs (alternated, $reps times)"
  say ""
  local roads=${PETSC_TTS_ROADS:-"petsc halo halo-nccl"} r road t0 args
  for r in $(seq 1 "$reps"); do
    for road in $roads; do
      case $road in
      petsc) args=() ;;
      halo) args=(-dll_append $PWD/$B/libhalo_petsc.so -halo_sf) ;;
      halo-*) args=(-dll_append $PWD/$B/libhalo_petsc.so -halo_sf -halo_sf_transport ${road#halo-}) ;;
      esac
      t0=$(date +%s.%N)
      prog "tts_${road}_$r" 2 petsc_ksp_lap27 "${GPU[@]}" "${cg[@]}" "${args[@]}"
      awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "wall %.4f\n", b - a }' >>"$runs/tts_${road}_$r.out"
    done
  done
  for road in $roads; do # the same iterations, reason and solution as PETSc's, every run
    [ "$road" = petsc ] && continue
    for r in $(seq 1 "$reps"); do
      checks=$((checks + 1))
      if ! diff <(answer tts_petsc_1) <(answer "tts_${road}_$r") >/dev/null || [ -z "$(answer tts_petsc_1)" ]; then
        failures=$((failures + 1))
        say "- tts_${road}_$r: answers differ from PETSc's"
      fi
    done
  done
  say "- every run's iterations, reason and solution the same as PETSc's: $([ $failures = 0 ] && echo yes || echo NO)"
  say ""
  python3 - "$runs" "$reps" $roads <<'EOF' | tee -a "$summary"
import re, statistics, sys
runs, reps, roads = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def read(path):
    try:
        t = open(path).read()
    except OSError:
        return None
    w = re.search(r"^wall ([0-9.]+)", t, re.M)
    p = re.search(r"^Time \(sec\):\s+([0-9.e+-]+)", t, re.M)
    k = re.search(r"^KSPSolve\s+\d+\s+[0-9.]+\s+([0-9.e+-]+)", t, re.M)
    it = re.search(r"^iterations\s+(\d+)", t, re.M)
    if not (w and p and k):
        return None
    return float(w.group(1)), float(p.group(1)), float(k.group(1)), it.group(1) if it else "?"
rows = {road: [x for x in (read(f"{runs}/tts_{road}_{r}.out") for r in range(1, reps + 1)) if x] for road in roads}
med = {road: [statistics.median(x[i] for x in xs) for i in range(3)] if xs else None for road, xs in rows.items()}
base = med.get("petsc")
print("| road | iterations | wall s | / PETSc's | program s (-log_view) | / PETSc's | KSPSolve s | / PETSc's | runs (program s) |")
print("|---|---|---|---|---|---|---|---|---|")
for road, xs in rows.items():
    if not xs or not base:
        print(f"| {road} | - | no result |")
        continue
    m = med[road]
    print(f"| {road} | {xs[0][3]} | {m[0]:.3f} | {m[0] / base[0]:.3f} | {m[1]:.3f} | {m[1] / base[1]:.3f} | "
          f"{m[2]:.4f} | {m[2] / base[2]:.3f} | {', '.join(f'{x[1]:.3f}' for x in xs)} |")
EOF
}

# issue 43: star forests of units in CUDA memory (a VecScatter of block size K: K scalars a
# ghost) through halo's device plans. examples/petsc/bench_matmult -check -pair_sf_type halo:
# PETSc's basic and halo's type side by side in one process, their scatter and reverse compared
# once (exact values), then timed; 2 ranks on 2 GPUs, each transport
units() {
  say ""
  say "## Units in CUDA memory: bench_matmult -bs K, PETSc's basic against halo (2 ranks, 2 GPUs)"
  say ""
  local n=${PETSC_UN:-96} t0=$SECONDS
  say '```'
  for bs in 1 4 8; do
    for t in ${PETSC_UNITS_T:-staged ipc nccl}; do
      checks=$((checks + 1))
      if prog "units_bs${bs}_$t" 2 petsc_bench_matmult "${GPU[@]}" -n $n -bs $bs -reps 200 -check \
          -dll_append $PWD/$B/libhalo_petsc.so -pair_sf_type halo -halo_sf_transport $t \
          -halo_sf_settings nccl.background=0 -halo_sf_view &&
          grep -q "check reverse identical" "$runs/units_bs${bs}_$t.out" &&
          grep -q "CUDA memory plan 0: standard, $t" "$runs/units_bs${bs}_$t.out" &&
          grep -q "left to basic 0: 100.0 % through halo" "$runs/units_bs${bs}_$t.out"; then
        { echo "bs $bs, transport $t: scatter and reverse identical to basic's"
          grep -E '^(scatter|reverse)_(pair_us|us|ratio)' "$runs/units_bs${bs}_$t.out"; } | tee -a "$summary" >/dev/null
      else
        failures=$((failures + 1))
        echo "bs $bs, transport $t: FAILED" | tee -a "$summary" >/dev/null
        grep -E "check|rror|halo_sf_view: star" "$runs/units_bs${bs}_$t.out" | head -5 | tee -a "$summary" >/dev/null
      fi
    done
  done
  say '```'
  say "- $checks runs, $failures failed ($((SECONDS - t0)) s)"
  say ""
  say "The view of one run (bs 4, nccl):"
  say ""
  say '```'
  grep "halo_sf_view" "$runs/units_bs4_nccl.out" | cut -c1-200 | tee -a "$summary" >/dev/null
  say '```'
}

echo "# PETSc on the GPUs through halo ($(date -u +%F), $(cat .commit 2>/dev/null || git rev-parse --short HEAD))" >"$summary"
say ""
say "- machine: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')"
build
case $what in
check) check ;;
units) units ;;
bench) bench ;;
tts) tts ;;
*) check; bench ;;
esac
tar -czf "$OUT/petsc-runs.tar.gz" -C /tmp petsc-runs
exit $(( failures > 0 ))
