/* The GPU side of a plan, seen from code that includes no CUDA header
 * (src/plan): the device, its streams, the transports of the phases, the
 * NCCL communicator, and the device product. Implemented in src/exec/gpu.c
 * and src/spmv/spmv_cuda.c; without CUDA every call says it is not compiled
 * in. */
#ifndef HALO_EXEC_GPU_H
#define HALO_EXEC_GPU_H

#include "plan/matrix.h"
#include "plan/schedule.h"
#include "plan/topology.h"

typedef struct halo_gpu_s halo_gpu;
typedef struct halo_gpu_spmv_s halo_gpu_spmv;

/**
 * Choose and set this rank's device (device_id >= 0; or the current device
 * if the process uses one already; or the rank on its shared-memory node
 * modulo the visible devices), make the streams and events, find out how many
 * ranks share a GPU and whether MPI is CUDA-aware. Collective over comm.
 */
halo_status halo_gpu_create(MPI_Comm comm, int device_id, void *stream, halo_gpu **g_p);
void halo_gpu_destroy(halo_gpu **g_p);

/** The CUDA device of the plan. */
int halo_gpu_device(const halo_gpu *g);
/** Most ranks that share one GPU on a node (over the whole plan). */
int halo_gpu_ranks_per_gpu(const halo_gpu *g);
/** Whether MPI takes device buffers (detected, or forced by HALO_GPU_AWARE_MPI). */
int halo_gpu_mpi_device_aware(const halo_gpu *g);

/**
 * Resolve the requested transport (AUTO, STAGED, NCCL, MPI_DEVICE, IPC) for a
 * device plan: clear errors when a transport cannot serve (NCCL not compiled
 * or several ranks per GPU, MPI not CUDA-aware, IPC outside one machine).
 * Makes the NCCL communicator when NCCL is chosen. Collective over comm.
 */
halo_status halo_gpu_transport(halo_gpu *g, MPI_Comm comm, halo_transport requested,
                               halo_transport *chosen_p);

/** The device product of a matrix uploaded to the plan's device. */
halo_status halo_gpu_spmv_create(halo_gpu *g, halo_matrix A, halo_gpu_spmv **sp_p);
void halo_gpu_spmv_destroy(halo_gpu_spmv **sp_p);
/** y = alpha*Ad*x + beta*y on the compute stream. */
halo_status halo_gpu_spmv_diag(halo_gpu_spmv *sp, double alpha, const double *x, double beta,
                               double *y);
/** y += alpha*Ao*x_ghost on the compute stream. */
halo_status halo_gpu_spmv_offd(halo_gpu_spmv *sp, double alpha, const double *x_ghost, double *y);
/**
 * Whether halo_spmv enqueues the local product before it starts the exchange
 * (HALO_SPMV_PRODUCT_FIRST, default 1): the product then starts without
 * waiting for the host work of the exchange's start (MPI calls, NCCL's group
 * launch), and the exchange's kernels and copies, on the higher-priority
 * stream, still go ahead of the product's blocks.
 */
int halo_gpu_product_first(const halo_gpu *g);
/**
 * Record, on the compute stream, the point the next exchange starts from (x
 * is ready, the last product is done), so that work enqueued on the compute
 * stream after it does not hold the exchange back. on = 0 forgets a mark
 * that no exchange used.
 */
halo_status halo_gpu_mark_start(halo_gpu *g, int on);
/** HALO_TIMELINE=1: record timing event k of the SpMV in flight (1: the
 *  diagonal product is enqueued, on the compute stream; 2 and 3, on the
 *  exchange stream, the first time in the SpMV: before and after the NCCL
 *  group, before the staged copy down and after the copy up, before and after
 *  the ipc copies); no-op otherwise. */
halo_status halo_gpu_timeline_mark(halo_gpu *g, int k);
/** HALO_TIMELINE=1: the mean seconds, over the product-first SpMVs since the
 *  last call, from the exchange's start mark to events 1, 2 and 3; n_p: how
 *  many SpMVs recorded all of them. Resets the sums. */
halo_status halo_gpu_timeline(halo_gpu *g, double avg[3], int64_t *n_p);
/** Wait for the plan's streams. */
halo_status halo_gpu_synchronize(halo_gpu *g);

#endif
