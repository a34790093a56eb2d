#!/usr/bin/env bash
# Run a command with the visible GPUs rotated so that the GPU a rank picks
# first (its rank on the machine modulo the GPUs) is one of its virtual
# node's own GPUs. Virtual nodes are HALO_BENCH_RPN consecutive ranks with
# HALO_BENCH_GPN GPUs each (default 1): local rank j of node n gets GPU
# n*GPN + j mod GPN (modulo the GPUs), so a node's first GPN ranks sit on
# distinct GPUs. Every GPU stays visible, so CUDA IPC between all ranks works.
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
k=${HALO_BENCH_RPN:-1}
g=${HALO_BENCH_GPN:-1}
n=$(nvidia-smi -L | wc -l)
want=$((((r / k) * g + (r % k) % g) % n))
shift_by=$(((want - r % n + 2 * n) % n)) # device (r mod n) is then GPU want
list=""
for i in $(seq 0 $((n - 1))); do list="$list,$(((i + shift_by) % n))"; done
export CUDA_VISIBLE_DEVICES=${list#,}
exec "$@"
