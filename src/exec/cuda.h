/* Private to the CUDA backend: the GPU state of a plan and the device
 * kernels. Included only under src/exec and src/spmv. */
#ifndef HALO_EXEC_CUDA_H
#define HALO_EXEC_CUDA_H

#include "halo_cuda.h"
#if HALO_HAVE_NCCL
#include <nccl.h>
#endif

#include "exec/gpu.h"

struct halo_gpu_s {
  int device;
  cudaStream_t comm; /* the exchange */
  cudaStream_t comp; /* the products: the caller's or the plan's own */
  int own_comp;
  cudaEvent_t ev_start; /* x is ready (recorded on comp) */
  cudaEvent_t ev_end;   /* the ghosts are in place (recorded on comm) */
  int start_marked;     /* ev_start is recorded for the next exchange already */
  int product_first;    /* halo_spmv enqueues the local product before the exchange */
  int ranks_per_gpu;
  int mpi_device_aware;
  MPI_Comm shared_comm; /* the ranks of this machine (MPI_COMM_TYPE_SHARED) */
#if HALO_HAVE_NCCL
  ncclComm_t nccl;
#endif
  int have_nccl;
  /* HALO_TIMELINE=1: timing events of each product-first SpMV, from the
   * exchange's start mark: [1] the diagonal product done (compute stream),
   * [2] the exchange's transfer reached and [3] done on the exchange stream
   * (NCCL group, staged copies, ipc copies) */
  int timeline, tl_state; /* tl_state: bit k set once tl[k] is recorded */
  cudaEvent_t tl[4];
  double tl_sum[3];
  int64_t tl_n;
};

#if HALO_HAVE_NCCL
halo_status halo_error_nccl(ncclResult_t r, const char *call, const char *file, int line);
#define HALO_TRY_NCCL(call)                                                                        \
  do {                                                                                             \
    ncclResult_t halo_nccl_rc_ = (call);                                                           \
    if (halo_nccl_rc_ != ncclSuccess) {                                                            \
      st = halo_error_nccl(halo_nccl_rc_, #call, __FILE__, __LINE__);                              \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)
#define HALO_NCCL(call)                                                                            \
  do {                                                                                             \
    ncclResult_t halo_nccl_rc_ = (call);                                                           \
    if (halo_nccl_rc_ != ncclSuccess)                                                              \
      return halo_error_nccl(halo_nccl_rc_, #call, __FILE__, __LINE__);                            \
  } while (0)
#endif

/* ---- kernels (cuda_kernels.cu); each returns the launch's error ---- */

/* out[i] = src(idx[i]): src(j) = x[j] for j < n_local, else work[j - n_local] */
cudaError_t halo_cuda_gather(double *out, const int32_t *idx, int64_t n, const double *x,
                             const double *work, int64_t n_local, cudaStream_t s);
/* dst(dst_idx[i]) = in[src_idx[i]]: dst(j) = ghost[j] for j < n_ghost, else work[j - n_ghost] */
cudaError_t halo_cuda_scatter(const double *in, const int32_t *src_idx, const int32_t *dst_idx,
                              int64_t n, double *ghost, double *work, int64_t n_ghost,
                              cudaStream_t s);
/* dst(dst_idx[i]) = src(src_idx[i]) in the two index spaces above */
cudaError_t halo_cuda_copy_map(const int32_t *src_idx, const int32_t *dst_idx, int64_t n,
                               const double *x, int64_t n_local, double *ghost, double *work,
                               int64_t n_ghost, cudaStream_t s);
/* y[rows[i]] += alpha * v[i] */
cudaError_t halo_cuda_scatter_add(double *y, const int32_t *rows, const double *v, int64_t n,
                                  double alpha, cudaStream_t s);
/* halo's CSR kernel (spmv_kernels.cu): y = alpha*A*x + beta*y (rows NULL), or
 * y[rows[r]] += alpha*(A*x)[r]; group threads per row (1, 2, 4, ..., 32), each
 * taking unroll (1, 2, 4) entries per step; the bits do not depend on unroll;
 * max_blocks > 0 caps the grid of 256-thread blocks (they stride) */
cudaError_t halo_cuda_csr_spmv(int64_t n_rows, int idx64, const void *row_ptr, const void *cols,
                               const double *vals, const double *x, double alpha, double beta,
                               double *y, const int32_t *rows, int group, int unroll,
                               int64_t max_blocks, cudaStream_t s);
/* The preferred shared-memory carveout (0-100, percent) of halo's CSR kernel. */
cudaError_t halo_cuda_csr_carveout(int percent);
/* y = beta * y (beta = 0: y = 0, whatever y held) */
cudaError_t halo_cuda_scale(double *y, int64_t n, double beta, cudaStream_t s);

#endif
