# What the peer scripts of bench/gpu (amg.sh, petsc.sh) share, sourced from
# the repository's root: gpu_script_init NAME sets OUT (default
# /tmp/halo-gpu), log ($OUT/NAME-log.txt), summary ($OUT/NAME-summary.md) and
# runs (/tmp/NAME-runs, every run's output), keeps NVLink multicast off and
# lets Open MPI run as root; say prints to the summary, run logs a command.
gpu_script_init() {
  OUT=${OUT:-/tmp/halo-gpu}
  mkdir -p "$OUT"
  log=$OUT/$1-log.txt
  summary=$OUT/$1-summary.md
  runs=/tmp/$1-runs
  mkdir -p "$runs"
  export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # NVSHMEM (transport nvshmem): the image's wheel, its bootstrap plug-ins on the library path
  NVSHMEM_HOME=${NVSHMEM_HOME:-$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/nvshmem 2>/dev/null | head -1)}
  if [ -n "$NVSHMEM_HOME" ] && [ -e "$NVSHMEM_HOME/lib/libnvshmem_device.a" ]; then
    export NVSHMEM_HOME LD_LIBRARY_PATH=$NVSHMEM_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none}
  else
    NVSHMEM_HOME=
  fi
}
say() { echo "$*" | tee -a "$summary"; }
run() { echo "+ $*" >>"$log"; "$@" >>"$log" 2>&1; }
# mps_start: CUDA's multi-process service for the rest of the script (ranks that share a GPU
# then run in one context instead of time-slicing theirs), stopped at its end; fails where it
# cannot start
mps_start() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  if nvidia-cuda-mps-control -d; then
    say "- under MPS (nvidia-cuda-mps-control -d)"
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
  else
    say "- MPS could not start: ranks that share a GPU time-slice it"
    return 1
  fi
}
