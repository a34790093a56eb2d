#!/usr/bin/env bash
# halo on a GPU machine: build it with the machine's own compilers, run the
# GPU tests, run the benchmarks, and leave logs and a summary under $OUT.
#
#   bench/gpu/run.sh build     configure and build (Release, CUDA, NCCL) in build-gpu/
#   bench/gpu/run.sh tests     GPU tests: 1 GPU with 1, 2 and 4 ranks; 2 GPUs with 2
#                              ranks (NCCL) and 8 ranks (staged and IPC, virtual nodes);
#                              then the host test suite
#   bench/gpu/run.sh bench     one-message latency and bandwidth per transport; the
#                              SpMV of the 27-point Laplacian 160^3 and of bundled
#                              matrices per strategy and transport
#   bench/gpu/run.sh all       all three
#   bench/gpu/run.sh setup     build, the GPU tests (not the host suite), and plan set-up
#                              against one SpMV (bench_setup): lap3d27:160 and :64 on 2 GPUs
#                              over nccl, ipc and staged, with and without the reverse
#                              exchange's executors; lap3d27:160 on 1 GPU
#                              (SETUP_TESTS=0: without the tests); then every strategy
#                              and auto, 8 ranks on 2 GPUs, nodes of 4, ipc and staged, on
#                              SETUP_MATRICES over SETUP_TRANSPORTS (SETUP_STRATEGIES=0:
#                              not); SETUP_TWO the matrices of the 2-rank part (empty:
#                              none, nor the 1-GPU row)
#   bench/gpu/run.sh inject    build, and test_inject's failure injection with plans in
#                              device memory (allocations, local MPI calls, CUDA calls; plan
#                              create, first use, destroy): nccl, ipc, staged, nvshmem, rma
#                              with 2 ranks on 2 GPUs, ipc, staged, rma with 2 ranks on 1
#                              GPU and 4 on 2, staged with 1 rank (INJECT_LAYOUTS
#                              "GPUS:TRANSPORT:RANKS[:VAR=VALUE] ..."; INJECT_LIMIT seconds
#                              each, 240; INJECT_STEPS: test_inject's TEST_INJECT_STEPS;
#                              INJECT_MPS=1: under MPS)
#   bench/gpu/run.sh large     build, then past 2^31 (test_large_message): one message of
#                              LARGE_N values (280,000,000: 2.24 GB) per rank and direction
#                              through nccl, ipc, staged, host and rma, forward and reverse;
#                              a product of LARGE_SPMV (lap3d27:432, 2.17e9 entries) on 2 GPUs
#   bench/gpu/run.sh multi [tests|bench]   4 or more GPUs: build, the GPU tests at 1, 4 and 8 ranks
#                              per GPU with virtual nodes of 1, 2 and 4 GPUs (not with
#                              "bench"), this machine's model parameters, and every
#                              strategy and transport (with auto and the modeled times) on
#                              the 27-point Laplacian 200^3 and the bundled matrices, with
#                              nodes of 1, 2 and 4 GPUs, 4 ranks per GPU, and Split helpers;
#                              PARAMS=FILE skips the measurement, MULTI_PARTS="counts lap
#                              irregular ranks helpers matrices" (the default) picks the
#                              runs, MULTI_NODES the GPUs per node of "lap" (2 1 all),
#                              MULTI_IRREGULAR_NODE that of "irregular" (2), MULTI_TESTS
#                              the tests ("nccl ranks4 ranks8")
#   bench/gpu/run.sh local     build, the GPU tests on 1 GPU (1, 2 and 4 ranks), and the local
#                              product on one GPU, one rank, the whole matrix: halo's kernel
#                              (with and without its long-row kernel) against cuSPARSE's CSR
#                              ALG1 and ALG2 on every bundled matrix, the 27-point Laplacian
#                              and irregular matrices (bench_local; LOCAL_MATRICES adds files)
#   bench/gpu/run.sh auto      build, the GPU tests on 1 GPU (1, 2 and 4 ranks), this machine's
#                              parameters saved (halo params measure --save), and the default
#                              plan against every strategy and transport per case, 1 and
#                              several ranks per GPU (default_check.py), with the set-up of
#                              the default against standard (bench_setup); AUTO_MATRICES
#                              (--gen=G or --matrix=FILE words), AUTO_TESTS=0, AUTO_SETUP=0 and
#                              AUTO_SHARED=0 (no case of ranks sharing a GPU) run a part;
#                              AUTO_SETUP_GPUS the GPUs of the set-up (0); AUTO_ROUNDS=R:
#                              each case's plans timed in turn R times over, medians
#                              (halo spmv --rounds; 1), each round 1/R of the iterations
#   bench/gpu/run.sh onesided  build, the GPU tests on 1 GPU (1, 2 and 4 ranks), and one
#                              exchange's time as a distribution on the machine's cores
#                              (host memory, 2, 4 and 8 ranks): host against rma; then in
#                              device memory (onesided-device alone): rma against staged,
#                              ipc, nccl and nvshmem, 2 ranks on 2 GPUs and on 1 GPU
#   bench/gpu/run.sh mps       build, the GPU test with 2 ranks on 1 GPU (nvshmem refused) and on
#                              2 GPUs without MPS, then under CUDA MPS: the GPU test at 8 ranks on 2 GPUs
#                              with nvshmem among the transports, and the 8-rank Laplacians
#                              over every transport (MPS_REPS repeats, 1)
#   bench/gpu/run.sh sanitize  build, and compute-sanitizer's memcheck, racecheck and synccheck
#                              (SANITIZE_TOOLS) over the GPU test: 1 rank, and 2 ranks on 2 GPUs
#   bench/gpu/run.sh quick [core|extra|order|helpers|cap|all]   build, the GPU tests
#                              (not the host suite), that part of bench [core]; order: the
#                              2-rank Laplacian with the local product enqueued
#                              before and after the exchange's start
#                              (HALO_SPMV_PRODUCT_FIRST=1 and 0), interleaved; helpers:
#                              Split+MD and Split+DD, nodes of one GPU rank and 3 or 7
#                              helpers against nodes of one rank; cap: the 2-rank
#                              Laplacian with the diagonal product's grid capped
#                              (HALO_SPMV_MAX_BLOCKS), interleaved; timeline: the same with
#                              HALO_TIMELINE=1 (when the product, and each transport's
#                              transfer, start and end on the GPUs); nthreads: nccl with
#                              NCCL_NTHREADS 512 to 64 and a capped product grid, timelines;
#                              stream: the plan's compute stream blocking or not
#                              (HALO_COMPUTE_STREAM), with and without a capped grid; cga:
#                              NCCL_CGA_CLUSTER_SIZE 4 (Hopper's default), 0 and 1;
#                              carveout: the product's shared-memory carveout left to
#                              the driver or 100 % (HALO_SPMV_CARVEOUT); signal: ipc's
#                              signals on the GPU against on the host (HALO_IPC_SIGNAL), with
#                              2 ranks on 2 GPUs (beside every transport), 4 ranks on 1 GPU
#                              and 8 ranks on 2 GPUs, SIGNAL_REPS (3) interleaved repeats;
#                              graph: examples/cg_graph (CG, each iteration one CUDA graph,
#                              against the same calls eagerly) on lap3d27 100^3 and 160^3, 2
#                              ranks on 2 GPUs and 1 rank, 3 repeats; nvshmem: the 2-rank
#                              Laplacian 160^3 and 100^3 over every transport (NV_REPS
#                              interleaved repeats, 3) and the bundled matrices with every
#                              strategy and transport, checked; nvauto: this machine's
#                              parameters measured with 2 ranks (nvshmem.* among them), then
#                              auto against every transport with them; onesided-gpu: one
#                              message per transport (halo_pingpong, rma and nvshmem beside
#                              staged, ipc, nccl), the 2-rank Laplacians, CG with a graph
# Files under $OUT: summary.md (the tables), log.txt (everything), json.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
OUT=${OUT:-/tmp/halo-gpu}
mkdir -p "$OUT/json"
log=$OUT/log.txt
summary=$OUT/summary.md
B=build-gpu
# NVLink multicast stays off on machines whose GPUs others share
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST
        -x NVSHMEM_DISABLE_NVLS -x CUDA_VISIBLE_DEVICES -x HALO_LOCAL_KERNEL -x HALO_SPMV_GROUP
        -x HALO_SPMV_UNROLL -x HALO_SPMV_PRODUCT_FIRST -x HALO_SPMV_MAX_BLOCKS -x HALO_BENCH_RPN
        -x HALO_TIMELINE -x HALO_BENCH_GPN -x HALO_TEST_RANKS_PER_NODE -x NCCL_NTHREADS -x HALO_COMPUTE_STREAM -x NCCL_CGA_CLUSTER_SIZE
        -x HALO_SPMV_CARVEOUT -x HALO_IPC_SIGNAL -x LD_LIBRARY_PATH
        -x NVSHMEM_REMOTE_TRANSPORT -x HALO_PARAMS -x HALO_TEST_MPS)
# NVSHMEM (transport nvshmem): the image's wheel, its bootstrap plug-ins found on the library path
NVSHMEM_HOME=${NVSHMEM_HOME:-$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/nvshmem 2>/dev/null | head -1)}
if [ -n "$NVSHMEM_HOME" ] && [ -e "$NVSHMEM_HOME/lib/libnvshmem_device.a" ]; then
  export NVSHMEM_HOME LD_LIBRARY_PATH=$NVSHMEM_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none} # one machine: NVLink alone
else
  NVSHMEM_HOME=
fi
export HALO_LOCAL_KERNEL=${HALO_LOCAL_KERNEL:-halo} HALO_SPMV_GROUP=${HALO_SPMV_GROUP:-0}
export HALO_SPMV_UNROLL=${HALO_SPMV_UNROLL:-4} HALO_SPMV_PRODUCT_FIRST=${HALO_SPMV_PRODUCT_FIRST:-1}
export HALO_SPMV_MAX_BLOCKS=${HALO_SPMV_MAX_BLOCKS:-0} HALO_BENCH_RPN=${HALO_BENCH_RPN:-1}
export HALO_TIMELINE=${HALO_TIMELINE:-0} NCCL_NTHREADS=${NCCL_NTHREADS:-512}
export HALO_BENCH_GPN=${HALO_BENCH_GPN:-1} HALO_TEST_RANKS_PER_NODE=${HALO_TEST_RANKS_PER_NODE:-}
export HALO_COMPUTE_STREAM=${HALO_COMPUTE_STREAM:-blocking}
export NCCL_CGA_CLUSTER_SIZE=${NCCL_CGA_CLUSTER_SIZE:-4} # NCCL's default on Hopper
export HALO_SPMV_CARVEOUT=${HALO_SPMV_CARVEOUT:-}
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
. bench/gpu/common.sh # say, run, mps_start

info() {
  {
    echo "# halo on $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//')"
    echo
    # .commit, written where the tree is sent from, wins over a .git that may have travelled stale
    echo "- commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- $(nproc) cores; $(mpirun --version 2>&1 | head -1); $(nvcc --version | tail -1)"
    echo "- driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); NCCL $(ls /usr/lib/x86_64-linux-gnu/libnccl.so.* 2>/dev/null | head -1 | sed 's/.*libnccl.so.//')"
  } >>"$summary"
  { nvidia-smi; nvidia-smi topo -m; } >>"$log" 2>&1
}

build() {
  local t0=$SECONDS
  if ! run cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DHALO_ENABLE_CUDA=ON -DHALO_ENABLE_NCCL=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WERROR=ON -DNVSHMEM_HOME="$NVSHMEM_HOME" \
      -DHALO_ENABLE_NVSHMEM=$([ -n "$NVSHMEM_HOME" ] && echo ON || echo OFF) ||
      ! run cmake --build $B -j "$(nproc)"; then
    say "BUILD FAILED (see log.txt)"
    tail -40 "$log"
    exit 1
  fi
  say "- built in $((SECONDS - t0)) s; NVSHMEM: ${NVSHMEM_HOME:-not found} $(sed -n 's/.*NVSHMEM_VENDOR_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\).*/\2/p' "$NVSHMEM_HOME/include/non_abi/nvshmem_version.h" 2>/dev/null | paste -sd.)"
}

gpu_test() { # label, np, visible devices, extra env
  local label=$1 np=$2 vis=$3 t0=$SECONDS
  if CUDA_VISIBLE_DEVICES=$vis run "${MPIRUN[@]}" -n "$np" $B/tests/test_gpu matrices/bcsstk16.mtx \
      matrices/west0479.mtx; then
    say "- GPU test, $label: passed ($(grep -a 'device plans checked' "$log" | tail -1 | sed 's/ device.*//') device plans, $((SECONDS - t0)) s)"
  else
    say "- GPU test, $label: FAILED"
    grep -a -E "FAIL|error|Error" "$log" | tail -8 | tee -a "$summary"
    fail=1
  fi
}

# Units in device memory (tests/test_units.c built as test_units_gpu): every type x k x
# strategy x operation on the device transports this run can make, against the test's
# reference; the transports it ran are named in its last line
units_test() { # label, np, visible devices
  local label=$1 np=$2 vis=$3 t0=$SECONDS out
  if out=$(CUDA_VISIBLE_DEVICES=$vis NCCL_NVLS_ENABLE=0 "${MPIRUN[@]}" -n "$np" $B/tests/test_units_gpu 2>&1); then
    echo "$out" >>"$log"
    say "- units on the GPU, $label: $(grep -a 'test_units: passed' <<<"$out" | tail -1 | sed 's/^test_units: //') ($((SECONDS - t0)) s)"
  else
    echo "$out" >>"$log"
    say "- units on the GPU, $label: FAILED"
    grep -a -E "FAIL|error|Error" <<<"$out" | tail -8 | tee -a "$summary"
    fail=1
  fi
}

# What strategy auto's choice adds to a program in device memory, in SpMVs of the chosen plan
# (bench_auto_cost: direct, auto with its trial on the calls, wisdom, the trial at plan time);
# (later plans of one communicator, then first plans of fresh ones); run.sh autocost, or
# AUTOCOST=1 after the quick tests; AUTOCOST_NP GPUs (default 2; AUTOCOST_CASES, AUTOCOST_REPS)
autocost_bench() {
  local np=${AUTOCOST_NP:-2} vis m later
  [ "$ngpu" -ge "$np" ] || { say "- autocost: $np GPUs asked, $ngpu here: skipped"; return 0; }
  vis=$(seq -s, 0 $((np - 1)))
  say ""
  say "## What choosing adds (bench_auto_cost, $np GPUs, device memory)"
  say ""
  for later in 1 0; do
    for m in ${AUTOCOST_CASES:-lap3d27:160 irregular:2000000,1}; do
      say '```'
      CUDA_VISIBLE_DEVICES=$vis NCCL_NVLS_ENABLE=0 "${MPIRUN[@]}" -n $np $B/bench/bench_auto_cost \
        --gen "$m" --memory device --reps "${AUTOCOST_REPS:-5}" --wisdom "$B/autocost.wisdom" \
        --later $later 2>&1 | tee -a "$log" | grep -v '^\[' | tee -a "$summary"
      say '```'
    done
  done
}

module_test() { # label, visible devices: the CUDA module loads at the first device object only
  local label=$1 vis=$2 out
  out=$(CUDA_VISIBLE_DEVICES=$vis "${MPIRUN[@]}" -n 2 $B/tests/test_module present 2>&1)
  echo "$out" >>"$log"
  if grep -q "passed (device SpMV on a GPU)" <<<"$out"; then
    say "- CUDA module, $label: passed (a host SpMV maps no CUDA library; a device matrix loads the module, its SpMV equals the host's bit for bit)"
  else
    say "- CUDA module, $label: FAILED"; tail -5 <<<"$out" | tee -a "$summary"; fail=1
  fi
  out=$(CUDA_VISIBLE_DEVICES=$vis tests/module_missing.sh $B/libhalo.so $B/tests/test_module "${MPIRUN[@]}" -n 2 2>&1)
  echo "$out" >>"$log"
  if grep -q "^passed" <<<"$out"; then
    say "- CUDA module removed, $label: passed (refused on every rank, naming libhalo_cuda.so)"
  else
    say "- CUDA module removed, $label: FAILED"; tail -5 <<<"$out" | tee -a "$summary"; fail=1
  fi
}

tests() {
  fail=0
  say ""
  say "## Tests"
  say ""
  module_test "1 GPU" 0
  [ "${1:-}" != gpu-short ] && gpu_test "1 GPU, 1 rank" 1 0
  gpu_test "1 GPU, 2 ranks" 2 0
  [ "${1:-}" != gpu-short ] && gpu_test "1 GPU, 4 ranks" 4 0
  units_test "1 GPU, 2 ranks" 2 0
  [ "${1:-}" = gpu-local ] && return $fail
  if [ "$ngpu" -ge 2 ]; then
    gpu_test "2 GPUs, 2 ranks (NCCL)" 2 0,1
    gpu_test "2 GPUs, 8 ranks (staged, IPC)" 8 0,1
    units_test "2 GPUs, 2 ranks" 2 0,1
    units_test "2 GPUs, 4 ranks" 4 0,1
  fi
  [ "${1:-}" = gpu-only ] || [ "${1:-}" = gpu-short ] && return $fail
  local t0=$SECONDS
  if run ctest --test-dir $B -j 8 -LE gpu --timeout 300; then
    say "- host test suite: passed ($((SECONDS - t0)) s)"
  else
    say "- host test suite: FAILED"
    grep -a -E "Failed|FAIL" "$log" | tail -8 | tee -a "$summary"
    fail=1
  fi
  return $fail
}

# GPU tests on 4 or more GPUs: one rank per GPU (NCCL) with virtual nodes of 1, 2 and 4 GPUs;
# 4 and 8 ranks per GPU (staged, IPC; the helper cases included) with nodes of 1 and 2 GPUs
tests_multi() {
  fail=0
  local all=$(seq -s, 0 $((ngpu - 1)))
  say ""
  say "## Tests on $ngpu GPUs"
  say ""
  local q=$((ngpu / 4)) h=$((ngpu / 2)) parts=" ${MULTI_TESTS:-nccl ranks4 ranks8} "
  [[ $parts == *" nccl "* ]] && HALO_TEST_RANKS_PER_NODE=$q,$h,$ngpu gpu_test \
    "$ngpu GPUs, $ngpu ranks (NCCL), nodes of $q, $h, $ngpu ranks" "$ngpu" "$all"
  [[ $parts == *" ranks4 "* ]] && HALO_TEST_RANKS_PER_NODE=$ngpu,$((2 * ngpu)) gpu_test \
    "$ngpu GPUs, $((4 * ngpu)) ranks (staged, IPC), nodes of $ngpu, $((2 * ngpu)) ranks" $((4 * ngpu)) "$all"
  [[ $parts == *" ranks8 "* ]] && HALO_TEST_RANKS_PER_NODE=$((2 * ngpu)),$((4 * ngpu)) gpu_test \
    "$ngpu GPUs, $((8 * ngpu)) ranks (staged, IPC), nodes of $((2 * ngpu)), $((4 * ngpu)) ranks" \
    $((8 * ngpu)) "$all"
  return $fail
}

spmv() { # label, np, visible devices, args...
  local label=$1 np=$2 vis=$3
  shift 3
  local json=$OUT/json/$(echo "$label" | tr -c 'a-zA-Z0-9_' '_').json
  echo "# run: $label" >>"$log"
  if CUDA_VISIBLE_DEVICES=$vis run "${MPIRUN[@]}" -n "$np" ${WRAP:-} $B/tools/halo spmv \
      --memory device --json "$json" "$@"; then
    echo "- $label: ok" >>"$log"
  else
    say "- $label: FAILED (exit $?)"
  fi
}

# interleave "VARS=NAME ..." VALUES... -- ARGS: the 2-rank Laplacian on 2 GPUs with each set
# of values of the environment variables NAME ("-": empty), 3 interleaved repeats
interleave() {
  local vars=(${1#VARS=}) sets=()
  shift
  while [ "$1" != -- ]; do sets+=("$1"); shift; done
  shift
  for rep in 1 2 3; do
    for v in "${sets[@]}"; do
      local vals=($v) label="lap160 2 ranks 2 GPUs"
      for i in "${!vars[@]}"; do label+=" ${vars[$i]}=${vals[$i]}"; done
      (
        for i in "${!vars[@]}"; do export "${vars[$i]}=${vals[$i]#-}"; done
        spmv "$label rep$rep" 2 0,1 "$@"
      )
    done
  done
}

# On 4 or more GPUs: this machine's parameters (halo params measure, nodes of 2 GPUs), then every
# strategy and transport, with auto and the modeled time beside the measured one, on the
# 27-point Laplacian 200^3 and the bundled matrices: one rank per GPU with nodes of 1, 2 and 4
# GPUs; 4 ranks per GPU with nodes of 2 GPUs; nodes of 2 GPU ranks and 3 or 7 helpers per GPU
# rank (Split+MD / Split+DD). Communication per SpMV as the node-aware paper times it: the
# exchange alone, 1000 times, the maximum over ranks of each rank's mean.
bench_multi() {
  local all=$(seq -s, 0 $((ngpu - 1))) params=$OUT/params.txt t0=$SECONDS
  local parts=" ${MULTI_PARTS:-counts lap irregular ranks helpers matrices} "
  if [ -n "${PARAMS:-}" ]; then # a file measured before on this kind of machine
    cp "$PARAMS" "$params" && say "- parameters from $PARAMS"
  elif CUDA_VISIBLE_DEVICES=$all run "${MPIRUN[@]}" -n "$ngpu" $B/tools/halo params measure \
      --ranks-per-node 2 --iterations 50 --max-bytes 4194304 -o "$params"; then
    say "- params measure, $ngpu ranks, nodes of 2 GPUs: $((SECONDS - t0)) s"
  else
    say "- params measure FAILED; the model uses lassen"
    params=lassen
  fi
  local lap=(--gen lap3d27:200 --iterations 1000 --warmup 50 --params "$params" --strategy all,auto
             --transport all)
  [[ $parts == *" counts "* ]] && for g in 1 2; do
    spmv "lap200 $g ranks on $g GPUs" $g "$(seq -s, 0 $((g - 1)))" "${lap[@]}" --ranks-per-node 1
  done
  [[ $parts == *" lap "* ]] && for k in ${MULTI_NODES:-2 1 $ngpu}; do
    spmv "lap200 $ngpu ranks nodes of $k GPUs" "$ngpu" "$all" "${lap[@]}" --ranks-per-node $k
  done
  # many messages and duplicate data: every rank needs entries of every other
  local irr=(--gen irregular:2000000,1 --params "$params" --strategy all,auto --transport all)
  local ki=${MULTI_IRREGULAR_NODE:-2}
  [[ $parts == *" irregular "* ]] && spmv "irregular2M $ngpu ranks nodes of $ki GPUs" "$ngpu" \
    "$all" "${irr[@]}" --iterations 1000 --warmup 50 --ranks-per-node $ki
  [[ $parts == *" irregular "* ]] && HALO_BENCH_RPN=8 HALO_BENCH_GPN=2 WRAP=bench/gpu/by_node.sh spmv \
    "irregular2M $((4 * ngpu)) ranks nodes of 2 GPUs and 8 ranks" $((4 * ngpu)) "$all" "${irr[@]}" \
    --iterations 200 --warmup 20 --ranks-per-node 8
  [[ $parts == *" irregular "* ]] && HALO_BENCH_RPN=8 HALO_BENCH_GPN=2 WRAP=bench/gpu/by_node.sh spmv \
    "irregular2M $((ngpu / 2)) nodes of 2 GPU ranks and 6 helpers" $((ngpu / 2 * 8)) "$all" \
    "${irr[@]}" --iterations 200 --warmup 20 --ranks-per-node 8 --helpers 3
  [[ $parts == *" ranks "* ]] && HALO_BENCH_RPN=8 HALO_BENCH_GPN=2 WRAP=bench/gpu/by_node.sh spmv \
    "lap200 $((4 * ngpu)) ranks nodes of 2 GPUs and 8 ranks" $((4 * ngpu)) "$all" "${lap[@]}" \
    --ranks-per-node 8
  [[ $parts == *" helpers "* ]] && for h in 3 7; do
    local k=$((2 * (h + 1)))
    HALO_BENCH_RPN=$k HALO_BENCH_GPN=2 WRAP=bench/gpu/by_node.sh spmv \
      "lap200 $((ngpu / 2)) nodes of 2 GPU ranks and $((2 * h)) helpers" $((ngpu / 2 * k)) "$all" \
      "${lap[@]}" --ranks-per-node $k --helpers $h
  done
  [[ $parts == *" matrices "* ]] && for m in bcsstk16 bayer10 dw8192 rajat01; do
    spmv "$m $ngpu ranks nodes of 2 GPUs" "$ngpu" "$all" --matrix matrices/$m.mtx --check \
      --iterations 1000 --warmup 50 --params "$params" --strategy all,auto --transport all \
      --ranks-per-node 2
  done
  say ""
  say "## The model against the measurements"
  python3 bench/model_summary.py "$OUT/json" 2>>"$log" | tee -a "$summary"
  cp "$params" "$OUT/params.txt" 2>/dev/null
}

# The default plan (strategy and transport auto) against every plan of each case (issue 15,
# item 2). This machine's parameters are measured once and saved where plans look for them
# (halo params measure --save, under XDG_CACHE_HOME=build-gpu/cache, copied to $OUT): 2 ranks
# on 2 GPUs when there
# are two, else on one. Then halo spmv --strategy all,auto --transport all per case: the
# 27-point Laplacian (100^3, 160^3), irregular:1000000,7 and four bundled matrices; 2 and 4
# ranks on one GPU with nodes of 1, 2 and all ranks; with 2 or more GPUs also one rank per GPU
# with nodes of 1 and all. default_check.py makes the table; then plan set-up (bench_setup) of
# the default against standard, first and later plans, on one GPU (2 ranks).
auto_bench() {
  local t0=$SECONDS g2=0 n
  [ "$ngpu" -ge 2 ] && g2=1
  export XDG_CACHE_HOME=$PWD/$B/cache # kept by a warm machine between calls
  mkdir -p "$XDG_CACHE_HOME"
  local vis=0
  [ $g2 = 1 ] && vis=0,1
  if ls "$XDG_CACHE_HOME"/halo/params-* >/dev/null 2>&1; then
    say "- this machine's parameters: measured before, $(ls "$XDG_CACHE_HOME"/halo/params-*)"
  elif CUDA_VISIBLE_DEVICES=$vis run "${MPIRUN[@]}" -x XDG_CACHE_HOME -n 2 $B/tools/halo params \
      measure --ranks-per-node 1 --iterations 50 --max-bytes 4194304 --save; then
    say "- params measure --save, 2 ranks on GPUs $vis, nodes of 1 rank: $((SECONDS - t0)) s"
  else
    say "- params measure FAILED: the default takes the built-in set"
  fi
  cp "$XDG_CACHE_HOME"/halo/params-* "$OUT/" 2>/dev/null
  local cases=()
  for m in ${AUTO_MATRICES:---gen=lap3d27:100 --gen=lap3d27:160 --gen=irregular:1000000,7
      --matrix=matrices/bcsstk16.mtx --matrix=matrices/bayer10.mtx --matrix=matrices/dw8192.mtx
      --matrix=matrices/rajat01.mtx}; do
    local it=200
    [[ $m == *lap3d27:160* ]] && it=50
    it=$((it / ${AUTO_ROUNDS:-1})) # the same timed calls in all: split over the rounds
    [ $it -ge 10 ] || it=10
    local lays=("2 0 2" "2 0 1" "4 0 4" "4 0 2" "4 0 1")
    [ "${AUTO_SHARED:-1}" = 1 ] || lays=()
    AUTO_ARGS=("${m%%=*}" "${m#*=}" --iterations $it --warmup 10 --strategy all,auto
               --transport all --rounds "${AUTO_ROUNDS:-1}")
    for lay in "${lays[@]}"; do
      set -- $lay
      WRAP="env -u HALO_PARAMS" spmv "auto/${m##*/} $1 ranks GPU $2 nodes of $3" "$1" "$2" \
        "${AUTO_ARGS[@]}" --ranks-per-node "$3"
    done
    if [ $g2 = 1 ]; then
      for k in 1 2; do
        WRAP="env -u HALO_PARAMS" spmv "auto/${m##*/} 2 ranks GPUs 0,1 nodes of $k" 2 0,1 \
          "${AUTO_ARGS[@]}" --ranks-per-node $k
      done
    fi
  done
  say ""
  say "## The default plan against the fastest plan of each case (default_check.py)"
  say ""
  python3 bench/gpu/default_check.py "$OUT"/json/auto_*.json 2>>"$log" | tee -a "$summary"
  [ "${AUTO_SETUP:-1}" = 1 ] || return 0
  say ""
  local sv=${AUTO_SETUP_GPUS:-0}
  say "## Plan set-up of the default against standard (bench_setup, 2 ranks on GPUs $sv)"
  say ""
  local header=--header
  for m in lap3d27:160 lap3d27:64; do
    CUDA_VISIBLE_DEVICES=$sv "${MPIRUN[@]}" -x XDG_CACHE_HOME -n 2 $B/bench/bench_setup --gen $m \
      --memory device $header 2>>"$log" | tee -a "$summary" # the defaults: auto, auto
    header=
    local ts="ipc staged"
    [[ $sv == *,* ]] && ts="nccl ipc staged" # one rank per GPU
    for t in $ts; do
      for s in auto standard; do
        CUDA_VISIBLE_DEVICES=$sv "${MPIRUN[@]}" -x XDG_CACHE_HOME -n 2 $B/bench/bench_setup --gen $m \
          --memory device --transport $t --strategy $s $header 2>>"$log" | tee -a "$summary"
        header=
      done
    done
  done
  say "- auto bench: $((SECONDS - t0)) s"
}

# Plan set-up against one SpMV: first and later plans of a communicator, by part
setup_bench() {
  say ""
  say "## Plan set-up against one SpMV (bench_setup; times in ms, the SpMV in us)"
  say ""
  local header=--header
  for m in ${SETUP_TWO-lap3d27:160 lap3d27:64}; do
    for t in nccl ipc staged; do
      CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/bench/bench_setup --gen $m --memory device \
        --transport $t $header 2>>"$log" | tee -a "$summary"
      header=
    done
    CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/bench/bench_setup --gen $m --memory device \
      --transport nccl --reverse 0 --max-exchanges 1 2>>"$log" | tee -a "$summary"
  done
  [ "${SETUP_TWO-x}" = "" ] || CUDA_VISIBLE_DEVICES=0 "${MPIRUN[@]}" -n 1 $B/bench/bench_setup \
    --gen lap3d27:160 --memory device --transport staged 2>>"$log" | tee -a "$summary"
  [ "${SETUP_STRATEGIES:-1}" = 1 ] || return 0
  # every strategy and auto where they differ: 8 ranks on 2 GPUs, virtual nodes of 4
  say ""
  say "### Every strategy: 8 ranks on 2 GPUs (4 a GPU, no MPS), virtual nodes of 4"
  say ""
  header=--header
  for m in ${SETUP_MATRICES:-lap3d27:160 lap3d27:64 irregular:1000000,1}; do
    for t in ${SETUP_TRANSPORTS:-ipc staged}; do
      for s in standard 2step 3step split auto; do
        CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 8 $B/bench/bench_setup --gen $m --memory device \
          --transport $t --strategy $s --ranks-per-node 4 $header 2>>"$log" | tee -a "$summary"
        header=
      done
    done
  done
}

# Failure injection in device memory (issue 17 item 3): test_inject's sweep of every
# allocation (device, pinned, streams, events included) and local MPI call of the
# matrix's and the plans' creation and the first exchange and product, per transport,
# 2 ranks on 2 GPUs and 2 ranks on 1 GPU; INJECT_LIMIT seconds each (240); INJECT_MPS=1
# starts MPS first
inject_gpu() { # the build of test_inject: $1 (B)
  local IB=${1:-$B}
  say ""
  say "## Failure injection in device memory (test_inject lap3d27:6 standard,3step device; $IB)"
  say ""
  local t0 rc
  local layouts=${INJECT_LAYOUTS:-"0,1:nccl:2 0,1:ipc:2 0,1:staged:2 0,1:nvshmem:2 0,1:rma:2
    0:ipc:2 0:staged:2 0:rma:2 0,1:ipc:4 0,1:staged:4 0,1:rma:4 0:staged:1"}
  for layout in $layouts; do
    set -- ${layout//:/ }
    [ "$2" = nvshmem ] && [ -z "$NVSHMEM_HOME" ] && continue
    local f=$OUT/inject-${IB#build-}-$2-gpus${1//,/}-np$3${4:+-${4%%=*}}.txt
    t0=$SECONDS
    echo "+ GPUs $1, transport $2, $3 ranks${4:+, $4}" >>"$log"
    CUDA_VISIBLE_DEVICES=$1 timeout ${INJECT_LIMIT:-240} "${MPIRUN[@]}" -x HALO_TRANSPORT=$2 \
      -x TEST_INJECT_WATCHDOG=$((${INJECT_LIMIT:-240} - 10)) \
      -x TEST_INJECT_STEPS=${INJECT_STEPS:-} ${4:+-x $4} -n $3 \
      $IB/tests/test_inject lap3d27:6 standard,3step device >"$f" 2>&1
    rc=$?
    cat "$f" >>"$log"
    say "- $3 ranks on GPUs $1, $2${4:+, $4}: exit $rc in $((SECONDS - t0)) s; $(grep -a 'injected in all' "$f" |
      head -1)"
    grep -a "failures injected;\|HANG\|FAIL\|disagree\|wrong" "$f" | head -20 |
      sed 's/^/  /' | tee -a "$summary"
    # a hang: where each rank waited (the watchdog's frames of test_inject, resolved)
    grep -a "test_inject(+0x\|waits in" "$f" | while read -r l; do
      case $l in
      *"waits in"*) echo "  $l" ;;
      *) a=${l#*(+}; a=${a%%)*}
        echo "    $(addr2line -f -s -e $IB/tests/test_inject "$a" | paste -sd' ')" ;;
      esac
    done | tee -a "$summary"
  done
}

# Failure injection in device memory under AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer (issue 17 item 3): test_inject built with HALO_SANITIZE in
# build-gpu-asan (CUDA on; the CUDA runtime needs ASan's shadow gap unprotected), the
# INJECT_LAYOUTS of inject_gpu (ASAN_LAYOUTS); leaks of the CUDA, NCCL and NVSHMEM runtimes
# and Open MPI suppressed (tests/lsan.supp and tests/lsan-gpu.supp); a report exits 86
asan_gpu() {
  local BA=build-gpu-asan t0=$SECONDS
  if ! run cmake -S . -B $BA -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHALO_SANITIZE=address,undefined \
      -DHALO_ENABLE_CUDA=ON -DHALO_ENABLE_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WERROR=ON \
      -DHALO_ENABLE_PETSC=OFF -DHALO_ENABLE_HYPRE=OFF -DNVSHMEM_HOME="$NVSHMEM_HOME" \
      -DHALO_ENABLE_NVSHMEM=$([ -n "$NVSHMEM_HOME" ] && echo ON || echo OFF) ||
      ! run cmake --build $BA -j "$(nproc)" --target test_inject; then
    say "ASAN BUILD FAILED (see log.txt)"
    return 1
  fi
  say "- ASan+UBSan build (test_inject) in $((SECONDS - t0)) s"
  cat tests/lsan.supp tests/lsan-gpu.supp >$BA/lsan.supp
  export ASAN_OPTIONS=protect_shadow_gap=0:exitcode=86:allocator_may_return_null=1:verify_asan_link_order=0
  export LSAN_OPTIONS=suppressions=$PWD/$BA/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=exitcode=86:print_stacktrace=1
  export OMPI_MCA_mca_base_component_disable_dlclose=1 # Open MPI's frames symbolized
  MPIRUN+=(-x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS)
  # NVSHMEM's bootstrap plug-in, which it opens and closes, kept loaded: its frames named
  local boot
  boot=$(ls "$NVSHMEM_HOME"/lib/nvshmem_bootstrap_uid.so* 2>/dev/null | head -1)
  [ -n "$boot" ] && MPIRUN+=(-x LD_PRELOAD="$boot")
  INJECT_LAYOUTS=${ASAN_LAYOUTS:-${INJECT_LAYOUTS:-}} inject_gpu $BA
  for f in "$OUT"/inject-gpu-asan-*.txt; do
    say "- $(basename "$f"): $(grep -a -c 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$f") sanitizer reports"
    grep -a -A12 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error' "$f" | head -60 >>"$summary"
  done
}

# Past 2^31 (issue 17 item 5): one message of LARGE_N values (280,000,000: 2.24 GB) per
# rank and direction through every transport (LARGE_TRANSPORTS), forward and reverse, 2 ranks
# on 2 GPUs (host and rma in host memory, rma-device in device memory); then a product of LARGE_SPMV (lap3d27:432: 2.17e9 entries in all)
# on 2 GPUs, every row checked. LARGE_LIMIT seconds each (240)
large_gpu() {
  say ""
  say "## Past 2^31: one message of more than 2^31 bytes per transport; a product of more than 2^31 entries"
  say ""
  local t0 rc f
  for t in ${LARGE_TRANSPORTS:-nccl ipc staged nvshmem rma-device host rma}; do
    local mem=device
    case $t in host | rma) mem=host ;; esac
    [ $t = nvshmem ] && [ -z "$NVSHMEM_HOME" ] && continue
    f=$OUT/large-$t.txt
    t0=$SECONDS
    # nvshmem's buffers live in NVSHMEM's symmetric heap (1 GB unless told)
    CUDA_VISIBLE_DEVICES=0,1 timeout ${LARGE_LIMIT:-240} "${MPIRUN[@]}" -x HALO_TRANSPORT=${t%-device} \
      -x NVSHMEM_SYMMETRIC_SIZE=${LARGE_NVSHMEM_HEAP:-24G} -n 2 \
      $B/tests/test_large_message ${LARGE_N:-280000000} $mem reverse >"$f" 2>&1
    rc=$?
    cat "$f" >>"$log"
    say "- $t: exit $rc in $((SECONDS - t0)) s: $(grep -a 'test_large_message\|FAIL' "$f" | head -2 |
      tr '\n' ' ')"
  done
  f=$OUT/large-spmv.txt
  t0=$SECONDS
  CUDA_VISIBLE_DEVICES=0,1 timeout ${LARGE_LIMIT:-240} "${MPIRUN[@]}" -n 2 \
    $B/tests/test_large_message spmv ${LARGE_SPMV:-lap3d27:432} device >"$f" 2>&1
  rc=$?
  cat "$f" >>"$log"
  say "- spmv: exit $rc in $((SECONDS - t0)) s: $(grep -a 'test_large_message\|FAIL' "$f" | head -2 |
    tr '\n' ' ')"
}

# The local product on one GPU (bench_local): one table row per matrix, 9 rounds
local_bench() {
  local t0=$SECONDS header=--header
  say ""
  say "## The local product, one rank, one GPU (bench_local, medians of 9 rounds)"
  say ""
  for m in --gen=lap3d27:160 --gen=lap3d27:64 --gen=irregular:2000000,1 --gen=irregular:1000000,7 \
      --gen=irregular:1000000,2 --gen=irregular:1000000,3 --gen=irregular:200000,5 \
      $(ls matrices/*.mtx | sed 's/^/--matrix=/') ${LOCAL_MATRICES:-}; do
    echo "+ bench_local ${m%%=*} ${m#*=}" >>"$log"
    CUDA_VISIBLE_DEVICES=0 "${MPIRUN[@]}" -n 1 $B/bench/bench_local "${m%%=*}" "${m#*=}" \
      --rounds 9 $header 2>>"$log" | tee -a "$summary"
    header=
  done
  say ""
  say "- $((SECONDS - t0)) s"
}

# The 2-rank Laplacians 160^3 and 100^3 over every transport, NV_REPS (3) interleaved repeats
lap_every_transport() {
  for rep in $(seq 1 "${NV_REPS:-3}"); do
    for g in 160 100; do
      spmv "lap$g 2 ranks 2 GPUs rep$rep" 2 0,1 --gen lap3d27:$g --iterations 100 --warmup 20 \
        --strategy standard --transport all
    done
  done
}

# CG on lap3d27:160 with each iteration one CUDA graph, nccl and nvshmem, 2 repeats
cg_graphs() {
  say ""
  say "## CG with each iteration one CUDA graph, nccl and nvshmem (examples/cg_graph)"
  say ""
  say '```'
  for rep in 1 2; do
    for t in nccl nvshmem; do
      { CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/examples/cg_graph 160 200 $t 2>>"$log" ||
        say "cg_graph 160 $t on 2 GPUs: FAILED (exit $?)"; } | tee -a "$summary"
    done
  done
  say '```'
}

bench() { # what: core (one message, local kernels, the 2-rank Laplacian), extra (more
           # ranks per GPU, the bundled matrices), or all
  local what=${1:-all}
  local lap=(--gen lap3d27:160 --iterations 100 --warmup 20)
  all_gpus=$(seq -s, 0 $((ngpu - 1)))
  local std=("${lap[@]}" --strategy standard)
  case $what in
  order) interleave "VARS=HALO_SPMV_PRODUCT_FIRST" 1 0 -- "${std[@]}" --transport all ;;
  cap) interleave "VARS=HALO_SPMV_MAX_BLOCKS" 0 1056 792 528 -- "${std[@]}" --transport all ;;
  timeline) interleave "VARS=HALO_TIMELINE HALO_SPMV_PRODUCT_FIRST HALO_SPMV_MAX_BLOCKS" \
    "1 1 0" "1 0 0" "1 1 528" -- "${std[@]}" --transport all ;;
  nthreads) interleave "VARS=HALO_TIMELINE NCCL_NTHREADS HALO_SPMV_MAX_BLOCKS" \
    "1 512 0" "1 256 0" "1 128 0" "1 64 0" "1 512 264" -- "${std[@]}" --transport nccl ;;
  stream) interleave "VARS=HALO_TIMELINE HALO_COMPUTE_STREAM HALO_SPMV_MAX_BLOCKS" \
    "1 blocking 0" "1 nonblocking 0" "1 blocking 264" "1 nonblocking 264" -- "${std[@]}" \
    --transport all ;;
  cga) interleave "VARS=HALO_TIMELINE NCCL_CGA_CLUSTER_SIZE HALO_SPMV_MAX_BLOCKS" \
    "1 4 0" "1 0 0" "1 1 0" "1 4 264" "1 0 264" -- "${std[@]}" --transport nccl ;;
  carveout) interleave "VARS=HALO_TIMELINE HALO_SPMV_CARVEOUT HALO_SPMV_MAX_BLOCKS" \
    "1 - 0" "1 100 0" "1 - 264" "1 100 264" -- "${std[@]}" --transport all ;;
  signal) # ipc's signals on the GPU against on the host, beside the other transports
    for rep in $(seq 1 "${SIGNAL_REPS:-3}"); do
      for g in 160 100; do
        [ "$ngpu" -ge 2 ] && spmv "lap$g 2 ranks 2 GPUs rep$rep" 2 0,1 --gen lap3d27:$g \
          --iterations 100 --warmup 20 --strategy standard --transport all
        [ "$ngpu" -ge 2 ] && HALO_IPC_SIGNAL=host spmv "lap$g 2 ranks 2 GPUs ipc signals on the host rep$rep" \
          2 0,1 --gen lap3d27:$g --iterations 100 --warmup 20 --strategy standard --transport ipc
      done
      for sig in device host; do
        HALO_IPC_SIGNAL=$sig spmv "lap160 4 ranks 1 GPU ipc signals $sig rep$rep" 4 0 "${lap[@]}" \
          --strategy standard --transport ipc
        [ "$ngpu" -ge 2 ] && HALO_IPC_SIGNAL=$sig spmv "lap160 8 ranks 2 GPUs K4 ipc signals $sig rep$rep" \
          8 "$all_gpus" "${lap[@]}" --strategy all --transport ipc --ranks-per-node 4
      done
      spmv "lap160 4 ranks 1 GPU staged rep$rep" 4 0 "${lap[@]}" --strategy standard --transport staged
    done ;;
  units) # issue 43: an exchange of k doubles an entry (halo spmv --unit double:k) on 2 GPUs,
         # each transport, against one double's (k = 1), 3 repeats; each checked bit for bit
    if [ "$ngpu" -ge 2 ]; then
      say ""
      say "## Units in device memory: one exchange of k doubles an entry (lap3d27:${UNITS_N:-100}, 2 ranks on 2 GPUs)"
      say ""
      say '```'
      for rep in 1 2 3; do
        for k in 1 4 8; do
          echo "# run: units double:$k rep$rep" >>"$log"
          CUDA_VISIBLE_DEVICES=0,1 NCCL_NVLS_ENABLE=0 "${MPIRUN[@]}" -n 2 $B/tools/halo spmv \
            --memory device --gen lap3d27:${UNITS_N:-100} --iterations 200 --warmup 20 \
            --strategy standard --transport all --unit double:$k 2>>"$log" |
            tee -a "$log" | sed -n '/^unit /,/^$/p' | grep -v '^$' | sed "s/^/rep$rep k=$k  /" |
            tee -a "$summary" || say "units double:$k: FAILED"
        done
      done
      say '```'
    fi ;;
  nvshmem) # transport nvshmem beside every other: the 2-rank Laplacian, and the bundled
           # matrices with every strategy, checked against the serial product
    if [ "$ngpu" -ge 2 ]; then
      lap_every_transport
      for m in bcsstk16 bayer10 dw8192 rajat01; do
        spmv "$m 2 ranks 2 GPUs" 2 0,1 --matrix matrices/$m.mtx --strategy all --transport all --check
      done
      cg_graphs
    fi ;;
  onesided-gpu) # issue 16's benchmarks on 2 GPUs: one message per transport (rma and nvshmem
                 # beside staged, ipc, nccl), the 2-rank Laplacians, CG with and without a graph
    if [ "$ngpu" -ge 2 ]; then
      say ""
      say "## One halo message, 2 ranks on 2 GPUs"
      say ""
      CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/bench/halo_pingpong 2>>"$log" | tee -a "$summary"
      lap_every_transport
      cg_graphs
    fi ;;
  nvauto) # nvshmem as a candidate of auto: this machine's parameters with nvshmem.* (2 ranks on
          # 2 GPUs), then auto against every transport with them
    if [ "$ngpu" -ge 2 ]; then
      local pf=$OUT/params-2gpu.txt
      CUDA_VISIBLE_DEVICES=0,1 run "${MPIRUN[@]}" -n 2 $B/tools/halo params measure -o "$pf" ||
        say "- params measure: FAILED"
      say ""
      say "## This machine's parameters (2 ranks on 2 GPUs): the device paths"
      say ""
      say '```'
      grep -E "^(ipc|nvshmem|staged|gpu\.(eager|rendezvous)\.on_socket)" "$pf" | tee -a "$summary"
      say '```'
      cp "$pf" "$OUT/" 2>/dev/null
      for rep in 1 2 3; do
        for g in 160 100; do
          spmv "auto lap$g 2 GPUs rep$rep" 2 0,1 --gen lap3d27:$g --iterations 100 --warmup 20 \
            --strategy standard,auto --transport all --params "$pf"
        done
      done
      for m in bcsstk16 bayer10 dw8192 rajat01; do
        spmv "auto $m 2 GPUs" 2 0,1 --matrix matrices/$m.mtx --strategy all,auto --transport all \
          --params "$pf"
      done
      HALO_PARAMS=$pf gpu_test "2 GPUs, 2 ranks, the measured parameters (HALO_PARAMS)" 2 0,1
    fi ;;
  graph) # CG with each iteration one CUDA graph (examples/cg_graph.cu) against the same calls
    say ""
    say "## CG, eager against one CUDA graph per iteration (examples/cg_graph)"
    say ""
    say '```'
    for rep in 1 2 3; do
      for N in 100 160; do
        [ "$ngpu" -ge 2 ] && { CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/examples/cg_graph $N 200 \
          2>>"$log" || say "cg_graph $N on 2 GPUs: FAILED (exit $?)"; } | tee -a "$summary"
        { CUDA_VISIBLE_DEVICES=0 "${MPIRUN[@]}" -n 1 $B/examples/cg_graph $N 200 2>>"$log" ||
          say "cg_graph $N on 1 GPU: FAILED (exit $?)"; } | tee -a "$summary"
      done
    done
    say '```' ;;
  esac
  case $what in
  timeline | nthreads | stream | cga | carveout)
    say ""
    say "## Timelines (each rank's GPU, from the exchange's start mark)"
    say ""
    python3 bench/gpu/timeline.py "$log" | tee -a "$summary"
    ;;
  esac
  [ "$what" = multi ] && bench_multi
  if [ "$what" = helpers ]; then
    for rep in 1 2 3; do
      spmv "lap160 2 nodes of 1 rank rep$rep" 2 0,1 "${lap[@]}" --ranks-per-node 1 \
        --strategy all --transport all
      for k in 4 8; do
        HALO_BENCH_RPN=$k WRAP=bench/gpu/by_node.sh spmv "lap160 2 nodes of 1 GPU rank and $((k - 1)) helpers rep$rep" \
          $((2 * k)) 0,1 "${lap[@]}" --ranks-per-node $k --helpers $((k - 1)) --strategy all --transport all
      done
    done
  fi
  if [ "$what" = core ] || [ "$what" = all ]; then
    say ""
    say "## One halo message, 2 ranks"
    say ""
    if [ "$ngpu" -ge 2 ]; then
      say "### 2 GPUs"
      CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -n 2 $B/bench/halo_pingpong 2>>"$log" | tee -a "$summary"
    else
      say "### 1 GPU, 2 ranks"
      CUDA_VISIBLE_DEVICES=0 "${MPIRUN[@]}" -n 2 $B/bench/halo_pingpong 2>>"$log" | tee -a "$summary"
    fi
    if [ "$ngpu" -ge 2 ] && [ -n "${NCCL_VARIANTS:-}" ]; then
      say ""
      say "### NCCL settings, 64 MB, 2 GPUs (columns as above)"
      for v in $NCCL_VARIANTS; do
        say "$v:"
        env "$v" CUDA_VISIBLE_DEVICES=0,1 "${MPIRUN[@]}" -x "${v%%=*}" -n 2 $B/bench/halo_pingpong 67108864 67108864 2>>"$log" | tail -1 | tee -a "$summary"
      done
    fi
    # the local kernel: cuSPARSE against halo's (threads per row, entries per step)
    HALO_LOCAL_KERNEL=cusparse spmv "lap160 1 rank 1 GPU cusparse" 1 0 "${lap[@]}" --strategy standard --transport staged
    for gu in "8 1" "8 2" "8 4" "4 4" "16 4"; do
      set -- $gu
      HALO_SPMV_GROUP=$1 HALO_SPMV_UNROLL=$2 spmv "lap160 1 rank 1 GPU halo group $1 unroll $2" 1 0 "${lap[@]}" --strategy standard --transport staged
    done
    if [ "$ngpu" -ge 2 ]; then
      for rep in 1 2 3; do
        spmv "lap160 2 ranks 2 GPUs rep$rep" 2 0,1 "${lap[@]}" --strategy all --transport all
      done
    else
      spmv "lap160 2 ranks 1 GPU" 2 0 "${lap[@]}" --strategy all --transport all
    fi
  fi
  if [ "$what" = extra ] || [ "$what" = all ]; then
    if [ "$ngpu" -ge 2 ]; then
      HALO_LOCAL_KERNEL=cusparse spmv "lap160 2 ranks 2 GPUs cusparse" 2 0,1 "${lap[@]}" --strategy all --transport all
      spmv "lap160 8 ranks 2 GPUs K4" 8 "$all_gpus" "${lap[@]}" --strategy all --transport all --ranks-per-node 4
      for m in bcsstk16 bayer10 dw8192 rajat01; do
        spmv "$m 2 ranks 2 GPUs" 2 0,1 --matrix matrices/$m.mtx --strategy all --transport all --check
      done
    fi
    if [ "$ngpu" -lt 2 ]; then
      for m in bcsstk16 bayer10 dw8192 rajat01; do
        spmv "$m 2 ranks 1 GPU" 2 0 --matrix matrices/$m.mtx --strategy all --transport all --check
      done
    fi
    spmv "lap160 2 ranks 1 GPU" 2 0 "${lap[@]}" --strategy all --transport all
  fi
  say ""
  say "## SpMV per strategy and transport"
  python3 bench/gpu/summarize.py "$OUT/json" 2>>"$log" | tee -a "$summary"
  tar -czf "$OUT/json.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"
}

# compute-sanitizer (memcheck, racecheck, synccheck) over the GPU test: 1 rank on GPU 0, and
# with 2 GPUs 2 ranks (NCCL, IPC) on GPUs 0 and 1; SANITIZE_TOOLS picks the tools. A tool's
# run passes when the test passes and the tool reports 0 errors.
sanitize_gpu() {
  say ""
  say "## compute-sanitizer over the GPU test"
  say ""
  local cs=compute-sanitizer
  command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
  local layouts=("1 0")
  [ "$ngpu" -ge 2 ] && layouts+=("2 0,1")
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
    for lay in "${layouts[@]}"; do
      set -- $lay
      local t0=$SECONDS f="$OUT/sanitize-$tool-np$1.txt"
      CUDA_VISIBLE_DEVICES=$2 timeout ${SANITIZE_TIMEOUT:-400} "${MPIRUN[@]}" -n "$1" $cs --tool "$tool" \
        --error-exitcode 99 --print-limit ${SANITIZE_PRINT_LIMIT:-20} $B/tests/test_gpu matrices/bcsstk16.mtx >"$f" 2>&1
      local rc=$? found
      found=$(grep -a "ERROR SUMMARY\|RACECHECK SUMMARY" "$f" | sort | uniq -c | tr '\n' ';')
      say "- $tool, $1 rank(s) on GPUs $2: exit $rc, $((SECONDS - t0)) s; ${found:-no summary}"
      grep -a "device plans checked" "$f" | head -1 | sed 's/^/  /' | tee -a "$summary"
    done
  done
}

# Ranks that share a GPU over nvshmem: without MPS the GPU test (2 ranks on 1 GPU) sees the
# clear refusal; then under MPS (4 ranks a GPU, NVSHMEM's full mode taken with
# NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1: halo's waits hold one block a launch) the
# GPU test with nvshmem among the transports (8 ranks on 2 GPUs, nodes of 4 and 8), and the
# 8-rank Laplacians 160^3 and 100^3 over every transport, MPS_REPS (1) repeats
mps_runs() {
  fail=0
  say ""
  say "## Ranks that share a GPU, nvshmem: without MPS, then under MPS"
  say ""
  gpu_test "1 GPU, 2 ranks, no MPS" 2 0
  [ "$ngpu" -ge 2 ] && gpu_test "2 GPUs, 2 ranks, no MPS" 2 0,1
  mps_start || return 1
  export HALO_TEST_MPS=1 NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
  [ "$ngpu" -ge 2 ] && HALO_TEST_RANKS_PER_NODE=4,8 gpu_test "2 GPUs, 8 ranks, MPS, nodes of 4, 8" 8 0,1
  unset HALO_TEST_MPS
  [ "$ngpu" -ge 2 ] || return $fail
  for rep in $(seq 1 "${MPS_REPS:-1}"); do
    for g in 160 100; do
      spmv "lap$g 8 ranks 2 GPUs K4 MPS rep$rep" 8 0,1 --gen lap3d27:$g --iterations 100 \
        --warmup 20 --strategy standard --transport all --ranks-per-node 4
    done
  done
  return $fail
}

# The exchange's time as a distribution on the machine's cores (host memory), two-sided
# (host) against one-sided (rma), 10^4 exchanges each, interleaved in blocks (bench_exchange_dist)
onesided_bench() {
  say ""
  say "## One exchange, host memory: p50 / p99 / max over 10^4 exchanges, host against rma (us)"
  say ""
  say '```'
  for np in 2 4 8; do
    for g in lap3d27:40 lap3d27:100; do
      run "${MPIRUN[@]}" --bind-to core -n $np $B/bench/bench_exchange_dist $g 10000 host rma
      tail -5 "$log" | grep -a -v "^+" | tee -a "$summary"
    done
  done
  run "${MPIRUN[@]}" --bind-to core -n 8 $B/bench/bench_exchange_dist lap3d27:100 10000 host rma \
    --strategy split --ranks-per-node 4
  tail -5 "$log" | grep -a -v "^+" | tee -a "$summary"
  say '```'
  onesided_device
}

# One exchange in device memory, 2 ranks on 2 GPUs (and 2 on 1 GPU): rma (staged through
# pinned memory) against staged, and the other device transports
onesided_device() {
  say ""
  say "## One exchange, device memory: p50 / p99 / max over 10^4 exchanges (us)"
  say ""
  say '```'
  for g in lap3d27:40 lap3d27:100; do
    [ "$ngpu" -ge 2 ] && CUDA_VISIBLE_DEVICES=0,1 run "${MPIRUN[@]}" -n 2 $B/bench/bench_exchange_dist \
      $g 10000 staged rma ipc nccl $([ -n "$NVSHMEM_HOME" ] && echo nvshmem) --memory device
    tail -8 "$log" | grep -a -v "^+" | tee -a "$summary"
    CUDA_VISIBLE_DEVICES=0 run "${MPIRUN[@]}" -n 2 $B/bench/bench_exchange_dist $g 10000 staged rma \
      ipc --memory device
    tail -6 "$log" | grep -a -v "^+" | tee -a "$summary"
  done
  say '```'
}

: >"$summary"
info
case $what in
build) build ;;
tests) [ -x $B/tools/halo ] || build; tests ;;
bench) [ -x $B/tools/halo ] || build; bench "${2:-all}" ;;
all) build; tests; bench all ;;
multi) build; [ "${2:-}" = bench ] || tests_multi; [ "${2:-}" = tests ] || bench multi ;;
setup) build; [ "${SETUP_TESTS:-1}" = 1 ] && tests gpu-only; setup_bench ;;
inject) build
  # INJECT_MPS=1: under MPS, so that nvshmem runs ranks that share a GPU (4 ranks on 2 GPUs:
  # nodes of 2, where 3step forwards)
  # (CUDA_DEVICE_MAX_CONNECTIONS=32: without it, a failure's release of the GPU's waits queues
  # behind them, and the GPU goes on waiting: seen at 4 ranks on 2 GPUs)
  if [ "${INJECT_MPS:-0}" = 1 ]; then
    mps_start && export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 \
      CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
  fi
  inject_gpu ;;
asan) asan_gpu ;;
large) build; large_gpu ;;
local) build; tests gpu-local; local_bench ;;
auto) build; [ "${AUTO_TESTS:-1}" = 1 ] && tests gpu-local; auto_bench
  tar -czf "$OUT/json.tar.gz" -C "$OUT" json && rm -rf "$OUT/json" ;;
onesided) build; tests gpu-local; onesided_bench ;;
onesided-device) build; onesided_device ;;
mps) build; mps_runs ;;
sanitize) build; sanitize_gpu ;;
autocost) build; autocost_bench ;;
units) build; fail=0; say ""; say "## Tests"; say ""   # issue 43: units in device memory
  units_test "1 GPU, 2 ranks" 2 0
  [ "$ngpu" -ge 2 ] && { units_test "2 GPUs, 2 ranks" 2 0,1; units_test "2 GPUs, 4 ranks" 4 0,1; }
  [ "${UNITS_BENCH:-1}" = 1 ] && bench units ;;
quick) build; case ${2:-core} in order | cap | timeline) tests gpu-short ;; *) tests gpu-only ;; esac
  [ "${AUTOCOST:-0}" = 1 ] && autocost_bench
  bench "${2:-core}" ;;
*) echo "usage: $0 [build|tests|bench|all|setup|inject|large|local|auto|onesided|onesided-device|mps|sanitize|quick|multi|units]"; exit 2 ;;
esac
