/* Private to the device product: its kernels (spmv_kernels.cu); each returns
 * the launch's error. Included only by src/spmv/spmv_cuda.c. */
#ifndef HALO_SPMV_KERNELS_H
#define HALO_SPMV_KERNELS_H

#include "halo_cuda.h"
#include "spmv/long_rows.h"

/* halo's CSR kernel: y = alpha*A*x + beta*y (rows NULL), or y[rows[r]] +=
 * alpha*(A*x)[r]; group threads per row (1, 2, 4, ..., 32), each taking unroll
 * (1, 2, 4) entries per step; the bits do not depend on unroll. The rows of
 * long_rows (NULL: none), each cut into tiles of halo_cuda_csr_tile() entries,
 * go to a warp per tile in the same launch; their bits depend only on the
 * tiles, not on the order the warps run in. max_blocks > 0 caps the short
 * rows' grid of 256-thread blocks (they stride) */
cudaError_t halo_cuda_csr_spmv(int64_t n_rows, int idx64, const void *row_ptr, const void *cols,
                               const double *vals, const double *x, double alpha, double beta,
                               double *y, const int32_t *rows, int group, int unroll,
                               const halo_cuda_long_rows *long_rows, int64_t max_blocks,
                               cudaStream_t s);
/* Entries per tile of a long row. */
int halo_cuda_csr_tile(void);
/* The preferred shared-memory carveout (0-100, percent) of halo's CSR kernel. */
cudaError_t halo_cuda_csr_carveout(int percent);
/* A transpose through a permutation of the values: for every column c,
 * y[c] = alpha * sum vals[perm[k]] * x[rows[k]] + beta * y[c] (beta = 0: y not
 * read) over k in [ptr[c], ptr[c+1]), in order; ptr and perm are int64 with
 * idx64, else int32 */
cudaError_t halo_cuda_csr_t(int64_t n_cols, int idx64, const void *ptr, const int32_t *rows,
                            const void *perm, const double *vals, const double *x, double alpha,
                            double beta, double *y, cudaStream_t s);
/* y[rows[i]] += alpha * v[i] */
cudaError_t halo_cuda_scatter_add(double *y, const int32_t *rows, const double *v, int64_t n,
                                  double alpha, cudaStream_t s);
/* y = beta * y (beta = 0: y = 0, whatever y held) */
cudaError_t halo_cuda_scale(double *y, int64_t n, double beta, cudaStream_t s);

#endif
