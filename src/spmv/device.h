/* The local product on the device, seen from code that includes no CUDA
 * header: a matrix's diagonal and off-diagonal blocks, uploaded, multiplied
 * on a stream by halo's CSR kernel (its long rows split across warps) or
 * cuSPARSE, and their transposes
 * (deterministic: one thread per column, its entries in row order). Without
 * CUDA every call says it is not compiled in. */
#ifndef HALO_SPMV_DEVICE_H
#define HALO_SPMV_DEVICE_H

#include "plan/matrix.h"

typedef struct halo_spmv_device_s halo_spmv_device;

/** How the product runs (the plan's settings). */
typedef struct {
  int cusparse;        /* 1: cuSPARSE's cusparseSpMV; 0: halo's kernel */
  int cusparse_alg;    /* 1 or 2 */
  int group;           /* halo's kernel: threads per row, 0 chooses */
  int unroll;          /* halo's kernel: entries per thread and step */
  int64_t max_blocks;  /* halo's kernel: cap of the diagonal product's grid, 0: none */
  int64_t long_row;    /* halo's kernel: longer rows are split across warps; 0 chooses */
  int carveout;        /* -1, or the kernel's preferred shared-memory carveout in percent */
  int transpose;       /* make the transposed index arrays (halo_spmv_device_*_t) */
} halo_spmv_device_options;

/** The device product of a matrix uploaded to the current device, on
 *  stream (cudaStream_t). The matrix must outlive it. */
halo_status halo_spmv_device_create(void *stream, halo_matrix A, const halo_spmv_device_options *o,
                                    halo_spmv_device **sp_p);
void halo_spmv_device_destroy(halo_spmv_device **sp_p);
/** Rows of both blocks that go to the long-row kernel (0 for NULL). */
int64_t halo_spmv_device_long_rows(const halo_spmv_device *sp);
/** y = alpha*Ad*x + beta*y. */
halo_status halo_spmv_device_diag(halo_spmv_device *sp, double alpha, const double *x, double beta,
                                  double *y);
/** y += alpha*Ao*x_ghost. */
halo_status halo_spmv_device_offd(halo_spmv_device *sp, double alpha, const double *x_ghost,
                                  double *y);
/** y = alpha*Ad^T*x + beta*y (y: the columns of this rank). */
halo_status halo_spmv_device_diag_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double beta, double *y);
/** g = alpha*Ao^T*x (g: one value per ghost). */
halo_status halo_spmv_device_offd_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double *g);

/** The product's stream (the plan's) waits for the work enqueued on stream
 *  so far (a caller's stream that is not the plan's). */
halo_status halo_spmv_device_stream_in(halo_spmv_device *sp, void *stream);
/** stream waits for the work enqueued on the product's stream so far. */
halo_status halo_spmv_device_stream_out(halo_spmv_device *sp, void *stream);
/** Whether stream (NULL: the product's) is being captured into a CUDA graph. */
halo_status halo_spmv_device_capturing(const halo_spmv_device *sp, void *stream, int *capturing_p);

#endif
