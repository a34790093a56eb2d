#!/usr/bin/env bash
# Run a command with the visible GPUs rotated so that the GPU a rank picks
# first (its rank on the machine modulo the GPUs) for the first rank of each
# virtual node of HALO_BENCH_RPN consecutive ranks is that node's own GPU:
# node n's rank 0 gets GPU n modulo the GPUs. Every GPU stays visible, so
# CUDA IPC between all ranks works.
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
k=${HALO_BENCH_RPN:-1}
n=$(nvidia-smi -L | wc -l)
node=$(((r / k) % n))
shift_by=$(((node - r % n + 2 * n) % n)) # device (r mod n) is then GPU node
list=""
for i in $(seq 0 $((n - 1))); do list="$list,$(((i + shift_by) % n))"; done
export CUDA_VISIBLE_DEVICES=${list#,}
exec "$@"
