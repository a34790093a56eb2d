/* The product on the device, by one of two local kernels:
 *   halo (default)  halo's CSR kernel (spmv_kernels.cu): a group of threads per
 *                   row; the off-diagonal block, which keeps only its
 *                   non-empty rows, in one launch that adds into those rows;
 *                   rows far longer than the group can walk quickly (chosen
 *                   here from the row lengths: long_above_for) are split
 *                   across warps, by the first blocks of the same launch or,
 *                   when the short rows are many, by a launch of their own;
 *   cusparse        cuSPARSE's generic SpMV on both blocks, its buffers and
 *                   preprocessing made at plan time; the off-diagonal product
 *                   goes to a short vector that one kernel adds to its rows.
 * The plan option local_kernel chooses. Both give the same bits on every run
 * (cuSPARSE: CSR algorithm 2), so every strategy and transport gives the
 * same y. The transposes (for halo_spmv_transpose) are the matrix's, made once
 * (src/plan/matrix.c): index arrays into the blocks' values, so that new
 * values need no new transpose. */
#include "halo_impl.h"

#include "spmv/device.h"

#if HALO_HAVE_CUDA
#include <cusparse.h>
#include <string.h>

#include "spmv/kernels.h"

#define HALO_TRY_SPARSE(call)                                                                      \
  do {                                                                                             \
    cusparseStatus_t halo_sp_rc_ = (call);                                                         \
    if (halo_sp_rc_ != CUSPARSE_STATUS_SUCCESS) {                                                  \
      st = halo_error_at(HALO_ERR_CUSPARSE, __FILE__, __LINE__, "%s failed: %s", #call,            \
                         cusparseGetErrorString(halo_sp_rc_));                                     \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)

/* The long rows of a block, as the kernel takes them, and their count. */
typedef struct {
  halo_cuda_long_rows k;
  int64_t n_long;
} long_rows;

struct halo_spmv_device_s {
  cudaStream_t stream;
  halo_matrix A;
  halo_spmv_device_options o;
  const halo_dev_block *D, *O; /* the blocks (halo's kernel) */
  int group_d, group_o;        /* threads per row */
  long_rows long_d, long_o;    /* their long rows */
  int64_t version;             /* the matrix's values this product was prepared for */
  cusparseHandle_t h;
  cusparseSpMVAlg_t alg;
  int64_t n_rows, n_cols;
  int has_diag, has_offd;
  cusparseSpMatDescr_t mat_d, mat_o;
  cusparseDnVecDescr_t x_d, y_d, x_o, y_o;
  void *buf_d, *buf_o;
  double *y_off;
  const int32_t *offd_rows;
  int64_t n_offd_rows;
  cudaEvent_t ev_in, ev_out; /* a caller's stream: its work before, and after, a product */
};

static void long_free(long_rows *l) {
  halo_dev_free((void *)(uintptr_t)l->k.long_rows);
  halo_dev_free((void *)(uintptr_t)l->k.tile_ptr);
  halo_dev_free((void *)(uintptr_t)l->k.tile_row);
  halo_dev_free(l->k.partial);
  halo_dev_free(l->k.count);
  memset(l, 0, sizeof *l);
  l->k.above = INT64_MAX;
}

void halo_spmv_device_destroy(halo_spmv_device **sp_p) {
  if (!sp_p || !*sp_p) return;
  halo_spmv_device *sp = *sp_p;
  long_free(&sp->long_d);
  long_free(&sp->long_o);
  if (sp->mat_d) cusparseDestroySpMat(sp->mat_d);
  if (sp->mat_o) cusparseDestroySpMat(sp->mat_o);
  if (sp->x_d) cusparseDestroyDnVec(sp->x_d);
  if (sp->y_d) cusparseDestroyDnVec(sp->y_d);
  if (sp->x_o) cusparseDestroyDnVec(sp->x_o);
  if (sp->y_o) cusparseDestroyDnVec(sp->y_o);
  halo_dev_free(sp->buf_d);
  halo_dev_free(sp->buf_o);
  halo_dev_free(sp->y_off);
  if (sp->ev_in) cudaEventDestroy(sp->ev_in);
  if (sp->ev_out) cudaEventDestroy(sp->ev_out);
  if (sp->h) cusparseDestroy(sp->h);
  halo_free(sp);
  *sp_p = NULL;
}

int64_t halo_spmv_device_long_rows(const halo_spmv_device *sp) {
  return sp ? sp->long_d.n_long + sp->long_o.n_long : 0;
}

/* Descriptors, buffer and preprocessing of one block (rows x cols), with
 * scratch vectors standing in for x and y until the first product. */
static halo_status block_setup(halo_spmv_device *sp, const halo_dev_block *b, int64_t cols,
                               cusparseSpMatDescr_t *mat, cusparseDnVecDescr_t *x,
                               cusparseDnVecDescr_t *y, double *y_vals, void **buf) {
  halo_status st = HALO_SUCCESS;
  double *sx = NULL, *sy = NULL;
  size_t size = 0;
  const double one = 1.0, zero = 0.0;
  const cusparseIndexType_t it = b->idx64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
  halo_debug_count_alloc();
  HALO_TRY_SPARSE(cusparseCreateCsr(mat, b->n_rows, cols, b->nnz, b->row_ptr, b->cols, b->vals, it,
                                    it, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  HALO_TRY(halo_dev_malloc((void **)&sx, (size_t)cols * sizeof(double)));
  if (!y_vals) HALO_TRY(halo_dev_malloc((void **)&sy, (size_t)b->n_rows * sizeof(double)));
  HALO_TRY(halo_dev_zero(sx, (size_t)cols * sizeof(double)));
  halo_debug_count_alloc();
  HALO_TRY_SPARSE(cusparseCreateDnVec(x, cols, sx, CUDA_R_64F));
  halo_debug_count_alloc();
  HALO_TRY_SPARSE(cusparseCreateDnVec(y, b->n_rows, y_vals ? y_vals : sy, CUDA_R_64F));
  HALO_TRY_SPARSE(cusparseSpMV_bufferSize(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, *mat, *x,
                                          &zero, *y, CUDA_R_64F, sp->alg, &size));
  HALO_TRY(halo_dev_malloc(buf, size ? size : 1));
  HALO_TRY_SPARSE(cusparseSpMV_preprocess(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, *mat, *x,
                                          &zero, *y, CUDA_R_64F, sp->alg, *buf));
  HALO_TRY_CUDA(cudaStreamSynchronize(sp->stream));
cleanup:
  halo_dev_free(sx);
  halo_dev_free(sy);
  return st;
}

/* Redo cuSPARSE's preprocessing after new values (the analysis may read
 * them); halo's kernel and the transposes read the values where they are. */
static halo_status refresh(halo_spmv_device *sp) {
  halo_status st = HALO_SUCCESS;
  const double one = 1.0, zero = 0.0;
  if (sp->version == sp->A->values_version) return HALO_SUCCESS;
  if (sp->o.cusparse && sp->has_diag)
    HALO_TRY_SPARSE(cusparseSpMV_preprocess(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                            sp->mat_d, sp->x_d, &zero, sp->y_d, CUDA_R_64F, sp->alg,
                                            sp->buf_d));
  if (sp->o.cusparse && sp->has_offd)
    HALO_TRY_SPARSE(cusparseSpMV_preprocess(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                            sp->mat_o, sp->x_o, &zero, sp->y_o, CUDA_R_64F, sp->alg,
                                            sp->buf_o));
  sp->version = sp->A->values_version;
cleanup:
  return st;
}

/* Threads per row for a mean row length: about a quarter of it, a power of
 * two from 1 to 32 (the option spmv_group overrides). */
static int group_for(const halo_dev_block *b, int option) {
  if (option > 0) return option;
  const double mean = b->n_rows ? (double)b->nnz / (double)b->n_rows : 0.0;
  int g = 1;
  while (g < 32 && 4.0 * g < mean) g *= 2;
  return g;
}

/* The bound above which a row is long, for a block walked by groups of g
 * threads taking unroll entries per step: the option when given (> 0), else
 * a row that would take its group more than 8 steps (each about two memory
 * latencies: the column ids, then x), and at least a warp's worth. A group
 * walks its row alone while the rest of the GPU runs out of rows: a row of
 * 40,000 entries among rows of 10 takes 2,500 steps of one group, ten times
 * the whole product; rows of 1,400 among rows of 6 (rajat01), twice. */
static int64_t long_above_for(int g, int unroll, int64_t option) {
  if (option > 0) return option;
  const int64_t steps = (int64_t)8 * g * unroll;
  return steps > 32 ? steps : 32;
}

/* The long rows of a block (host row_ptr, n_rows rows, the longest of
 * longest entries) and their tiles, uploaded; none: l->k.above = INT64_MAX
 * and nothing allocated (at once when no row is long: later plans of a
 * matrix do not walk its rows again). */
static halo_status long_setup(int64_t n_rows, const int64_t *row_ptr, int64_t longest,
                              int64_t above, long_rows *l) {
  halo_status st = HALO_SUCCESS;
  int32_t *rows = NULL, *ptr = NULL, *tile_row = NULL;
  const int64_t tile = halo_cuda_csr_tile();
  int64_t n_long = 0, n_tiles = 0;
  int32_t *d_rows = NULL, *d_ptr = NULL, *d_tile_row = NULL;
  memset(l, 0, sizeof *l);
  l->k.above = INT64_MAX;
  if (longest <= above) return HALO_SUCCESS;
  for (int64_t r = 0; r < n_rows; r++) {
    const int64_t len = row_ptr[r + 1] - row_ptr[r];
    if (len <= above) continue;
    n_long++;
    n_tiles += (len + tile - 1) / tile;
  }
  if (n_long == 0) return HALO_SUCCESS;
  if (n_tiles > INT32_MAX || n_rows > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                      "the long-row kernel: %lld tiles of %lld rows; at most 2^31-1 (make "
                      "spmv_long_row larger)",
                      (long long)n_tiles, (long long)n_rows);
  HALO_TRY(HALO_ALLOC(rows, n_long));
  HALO_TRY(HALO_ALLOC(ptr, n_long + 1));
  HALO_TRY(HALO_ALLOC(tile_row, n_tiles));
  ptr[0] = 0;
  for (int64_t r = 0, i = 0; r < n_rows; r++) {
    const int64_t len = row_ptr[r + 1] - row_ptr[r];
    if (len <= above) continue;
    rows[i] = (int32_t)r;
    ptr[i + 1] = ptr[i] + (int32_t)((len + tile - 1) / tile);
    for (int32_t t = ptr[i]; t < ptr[i + 1]; t++) tile_row[t] = (int32_t)i;
    i++;
  }
  HALO_TRY(halo_dev_malloc((void **)&d_rows, (size_t)n_long * sizeof(int32_t)));
  l->k.long_rows = d_rows;
  HALO_TRY(halo_dev_malloc((void **)&d_ptr, (size_t)(n_long + 1) * sizeof(int32_t)));
  l->k.tile_ptr = d_ptr;
  HALO_TRY(halo_dev_malloc((void **)&d_tile_row, (size_t)n_tiles * sizeof(int32_t)));
  l->k.tile_row = d_tile_row;
  HALO_TRY(halo_dev_malloc((void **)&l->k.partial, (size_t)n_tiles * sizeof(double)));
  HALO_TRY(halo_dev_malloc((void **)&l->k.count, (size_t)n_long * sizeof(unsigned)));
  HALO_TRY(halo_host_to_dev(d_rows, rows, (size_t)n_long * sizeof(int32_t)));
  HALO_TRY(halo_host_to_dev(d_ptr, ptr, (size_t)(n_long + 1) * sizeof(int32_t)));
  HALO_TRY(halo_host_to_dev(d_tile_row, tile_row, (size_t)n_tiles * sizeof(int32_t)));
  HALO_TRY(halo_dev_zero(l->k.count, (size_t)n_long * sizeof(unsigned)));
  l->k.above = above;
  l->k.n_tiles = n_tiles;
  l->n_long = n_long;
cleanup:
  if (st != HALO_SUCCESS) long_free(l);
  halo_free(rows);
  halo_free(ptr);
  halo_free(tile_row);
  return st;
}

/* halo's kernel on a block, its short and long rows. */
static halo_status block_product(halo_spmv_device *sp, const halo_dev_block *b, const long_rows *l,
                                 int group, int64_t max_blocks, const double *x, double alpha,
                                 double beta, double *y) {
  HALO_CUDA(halo_cuda_csr_spmv(b->n_rows, b->idx64, b->row_ptr, b->cols, b->vals, x, alpha, beta, y,
                               b->rows, group, sp->o.unroll, &l->k, max_blocks, sp->stream));
  return HALO_SUCCESS;
}

halo_status halo_spmv_device_create(void *stream, halo_matrix A, const halo_spmv_device_options *o,
                                    halo_spmv_device **sp_p) {
  halo_status st = HALO_SUCCESS;
  halo_spmv_device *sp = halo_calloc(1, sizeof *sp);
  *sp_p = NULL;
  if (!sp) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the device product");
  sp->long_d.k.above = sp->long_o.k.above = INT64_MAX;
  sp->stream = (cudaStream_t)stream;
  sp->A = A;
  sp->o = *o;
  sp->version = A->values_version;
  sp->D = &A->d_diag;
  sp->O = &A->d_offd;
  sp->group_d = group_for(&A->d_diag, o->group);
  sp->group_o = group_for(&A->d_offd, o->group);
  /* an experiment on overlap: the shared-memory share of the SMs while the
   * product runs (an SM changes its share only when idle, so a kernel that
   * needs more shared memory than the product's share leaves can start only
   * on an SM the product has drained) */
  if (o->carveout >= 0) HALO_TRY_CUDA(halo_cuda_csr_carveout(o->carveout));
  sp->n_rows = A->d_diag.n_rows;
  sp->n_cols = A->col_end - A->col_begin;
  sp->has_diag = sp->n_rows > 0 && sp->n_cols > 0 && A->d_diag.nnz > 0;
  sp->n_offd_rows = A->d_offd.n_rows;
  sp->offd_rows = A->d_offd.rows;
  sp->has_offd = sp->n_offd_rows > 0 && A->n_ghost > 0 && A->d_offd.nnz > 0;
  if (o->transpose) HALO_TRY(halo_matrix_upload_transpose(A));
  HALO_TRY(halo_event_create(&sp->ev_in, cudaEventDisableTiming));
  HALO_TRY(halo_event_create(&sp->ev_out, cudaEventDisableTiming));
  if (!o->cusparse) {
    HALO_TRY(long_setup(A->diag.n_rows, A->diag.row_ptr, A->d_diag.longest_row,
                        long_above_for(sp->group_d, o->unroll, o->long_row), &sp->long_d));
    HALO_TRY(long_setup(A->offd.n_rows, A->offd.row_ptr, A->d_offd.longest_row,
                        long_above_for(sp->group_o, o->unroll, o->long_row), &sp->long_o));
  }
  if (o->cusparse) {
    sp->alg = o->cusparse_alg == 1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
    halo_debug_count_alloc();
    HALO_TRY_SPARSE(cusparseCreate(&sp->h));
    HALO_TRY_SPARSE(cusparseSetStream(sp->h, sp->stream));
    if (sp->has_diag)
      HALO_TRY(block_setup(sp, &A->d_diag, sp->n_cols, &sp->mat_d, &sp->x_d, &sp->y_d, NULL,
                           &sp->buf_d));
    if (sp->has_offd) {
      HALO_TRY(halo_dev_malloc((void **)&sp->y_off, (size_t)sp->n_offd_rows * sizeof(double)));
      HALO_TRY(block_setup(sp, &A->d_offd, A->n_ghost, &sp->mat_o, &sp->x_o, &sp->y_o, sp->y_off,
                           &sp->buf_o));
    }
  }
  *sp_p = sp;
  sp = NULL;
cleanup:
  halo_spmv_device_destroy(&sp);
  return st;
}

halo_status halo_spmv_device_diag(halo_spmv_device *sp, double alpha, const double *x, double beta,
                                  double *y) {
  halo_status st = HALO_SUCCESS;
  if (sp->n_rows == 0) return HALO_SUCCESS;
  if (!sp->has_diag) {
    HALO_CUDA(halo_cuda_scale(y, sp->n_rows, beta, sp->stream));
    return HALO_SUCCESS;
  }
  if (!sp->o.cusparse)
    return block_product(sp, sp->D, &sp->long_d, sp->group_d, sp->o.max_blocks, x, alpha, beta, y);
  HALO_TRY(refresh(sp));
  HALO_TRY_SPARSE(cusparseDnVecSetValues(sp->x_d, (void *)(uintptr_t)x));
  HALO_TRY_SPARSE(cusparseDnVecSetValues(sp->y_d, y));
  if (beta == 0.0) /* y is not read: clear what might be NaN */
    HALO_TRY_CUDA(cudaMemsetAsync(y, 0, (size_t)sp->n_rows * sizeof(double), sp->stream));
  HALO_TRY_SPARSE(cusparseSpMV(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, sp->mat_d, sp->x_d,
                               &beta, sp->y_d, CUDA_R_64F, sp->alg, sp->buf_d));
cleanup:
  return st;
}

halo_status halo_spmv_device_offd(halo_spmv_device *sp, double alpha, const double *x_ghost,
                                  double *y) {
  halo_status st = HALO_SUCCESS;
  const double one = 1.0, zero = 0.0;
  if (!sp->has_offd) return HALO_SUCCESS;
  if (!sp->o.cusparse)
    return block_product(sp, sp->O, &sp->long_o, sp->group_o, 0, x_ghost, alpha, 0.0, y);
  HALO_TRY(refresh(sp));
  HALO_TRY_SPARSE(cusparseDnVecSetValues(sp->x_o, (void *)(uintptr_t)x_ghost));
  HALO_TRY_SPARSE(cusparseSpMV(sp->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sp->mat_o, sp->x_o,
                               &zero, sp->y_o, CUDA_R_64F, sp->alg, sp->buf_o));
  HALO_TRY_CUDA(
      halo_cuda_scatter_add(y, sp->offd_rows, sp->y_off, sp->n_offd_rows, alpha, sp->stream));
cleanup:
  return st;
}

halo_status halo_spmv_device_diag_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double beta, double *y) {
  const halo_dev_transpose *t = &sp->A->d_diag_t;
  if (!sp->o.transpose)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made without the transpose (reverse = 0)");
  HALO_CUDA(halo_cuda_csr_t(t->n_cols, t->idx64, t->ptr, t->rows, t->perm, sp->D->vals, x, alpha,
                            beta, y, sp->stream));
  return HALO_SUCCESS;
}

halo_status halo_spmv_device_offd_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double *g) {
  const halo_dev_transpose *t = &sp->A->d_offd_t;
  if (!sp->o.transpose)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made without the transpose (reverse = 0)");
  HALO_CUDA(halo_cuda_csr_t(t->n_cols, t->idx64, t->ptr, t->rows, t->perm, sp->O->vals, x, alpha,
                            0.0, g, sp->stream));
  return HALO_SUCCESS;
}

halo_status halo_spmv_device_stream_in(halo_spmv_device *sp, void *stream) {
  HALO_CUDA(cudaEventRecord(sp->ev_in, (cudaStream_t)stream));
  HALO_CUDA(cudaStreamWaitEvent(sp->stream, sp->ev_in, 0));
  return HALO_SUCCESS;
}

halo_status halo_spmv_device_stream_out(halo_spmv_device *sp, void *stream) {
  HALO_CUDA(cudaEventRecord(sp->ev_out, sp->stream));
  HALO_CUDA(cudaStreamWaitEvent((cudaStream_t)stream, sp->ev_out, 0));
  return HALO_SUCCESS;
}

halo_status halo_spmv_device_capturing(const halo_spmv_device *sp, void *stream, int *capturing_p) {
  enum cudaStreamCaptureStatus c = cudaStreamCaptureStatusNone;
  HALO_CUDA(cudaStreamIsCapturing(stream ? (cudaStream_t)stream : sp->stream, &c));
  *capturing_p = c != cudaStreamCaptureStatusNone;
  return HALO_SUCCESS;
}

#else /* no CUDA: every entry says so */

halo_status halo_spmv_device_create(void *stream, halo_matrix A, const halo_spmv_device_options *o,
                                    halo_spmv_device **sp_p) {
  (void)stream, (void)A, (void)o;
  *sp_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_spmv_device_destroy(halo_spmv_device **sp_p) {
  if (sp_p) *sp_p = NULL;
}
int64_t halo_spmv_device_long_rows(const halo_spmv_device *sp) {
  (void)sp;
  return 0;
}
halo_status halo_spmv_device_diag(halo_spmv_device *sp, double alpha, const double *x, double beta,
                                  double *y) {
  (void)sp, (void)alpha, (void)x, (void)beta, (void)y;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_offd(halo_spmv_device *sp, double alpha, const double *x_ghost,
                                  double *y) {
  (void)sp, (void)alpha, (void)x_ghost, (void)y;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_diag_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double beta, double *y) {
  (void)sp, (void)alpha, (void)x, (void)beta, (void)y;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_offd_t(halo_spmv_device *sp, double alpha, const double *x,
                                    double *g) {
  (void)sp, (void)alpha, (void)x, (void)g;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_stream_in(halo_spmv_device *sp, void *stream) {
  (void)sp, (void)stream;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_stream_out(halo_spmv_device *sp, void *stream) {
  (void)sp, (void)stream;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_spmv_device_capturing(const halo_spmv_device *sp, void *stream, int *capturing_p) {
  (void)sp, (void)stream;
  *capturing_p = 0;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

#endif /* HALO_HAVE_CUDA */
