#!/usr/bin/env bash
# The performance model against measurements: measure this machine's
# parameters, then run every strategy (and auto, chosen by the model) on
# matrices and layouts, with the modeled exchange time beside the measured
# one; summarize the modeled/measured ratios and how close auto's choice
# comes to the fastest measured plan.
#
#   bench/model.sh host [OUT]   this machine: 4 ranks, virtual nodes of 2 and 1
#   bench/model.sh gpu [OUT]    a GPU machine (bench/gpu/run.sh builds first):
#                               2 ranks on 2 GPUs (or 1), every device transport
# Writes OUT/params.txt, OUT/json/*.json and OUT/summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-host}
OUT=${2:-${OUT:-/tmp/halo-model}}
mkdir -p "$OUT/json"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
MPIRUN=(mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST
        -x NVSHMEM_DISABLE_NVLS)
log=$OUT/log.txt
run() { echo "+ $*" >>"$log"; "$@" >>"$log" 2>&1; }
spmv() { # label, np, args...
  local label=$1 np=$2
  shift 2
  run "${MPIRUN[@]}" -n "$np" "$HALO" spmv --params "$OUT/params.txt" --strategy all,auto \
    --json "$OUT/json/$label.json" "$@" || echo "- $label: FAILED" | tee -a "$OUT/summary.md"
}
if [ "$what" = gpu ]; then
  HALO=${HALO:-build-gpu/tools/halo}
  ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
  np=2
  run "${MPIRUN[@]}" -n 2 "$HALO" params measure --ranks-per-node 1 --iterations 50 \
    --max-bytes 4194304 -o "$OUT/params.txt"
  dev=(--memory device --transport all --iterations 100 --warmup 20)
  spmv lap160_2ranks 2 --gen lap3d27:160 --ranks-per-node 1 "${dev[@]}"
  spmv lap80_2ranks 2 --gen lap3d27:80 --ranks-per-node 1 "${dev[@]}"
  for m in bcsstk16 dw8192 rajat01; do
    spmv "${m}_2ranks" 2 --matrix matrices/$m.mtx --ranks-per-node 1 "${dev[@]}"
  done
  [ "$ngpu" -ge 2 ] || echo "(one GPU: both ranks share it)" >>"$OUT/summary.md"
else
  HALO=${HALO:-build/tools/halo}
  run "${MPIRUN[@]}" -n 4 "$HALO" params measure --ranks-per-node 2 --iterations 50 \
    --max-bytes 1048576 -o "$OUT/params.txt"
  it=(--iterations 300 --warmup 30)
  for k in 1 2; do
    spmv "lap3d27_24_rpn$k" 4 --gen lap3d27:24 --ranks-per-node $k "${it[@]}"
    spmv "lap3d_40_rpn$k" 4 --gen lap3d:40 --ranks-per-node $k "${it[@]}"
    spmv "irregular_rpn$k" 4 --gen irregular:20000,3 --ranks-per-node $k "${it[@]}"
    for m in bcsstk16 dw8192 rajat01; do
      spmv "${m}_rpn$k" 4 --matrix matrices/$m.mtx --ranks-per-node $k "${it[@]}"
    done
  done
fi
python3 bench/model_summary.py "$OUT/json" | tee -a "$OUT/summary.md"
