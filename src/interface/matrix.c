/* The matrix handle: creation on the communicator's context, reference
 * counting, sizes, new values. The split itself is src/plan/matrix.c. */
#include "interface/context.h"
#include "interface/plan.h"

/* A shell on the context of comm; collective the first time for comm. */
static halo_status shell_create(MPI_Comm comm, halo_memory mem, halo_matrix *A_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  *A_p = NULL;
  HALO_CHECK(halo_context_get(comm, &ctx));
  halo_matrix A = halo_calloc(1, sizeof *A);
  if (!A) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a matrix");
  st = halo_agree(ctx->comm, st);
  if (st != HALO_SUCCESS) { /* here, or on another rank */
    halo_free(A);
    halo_context_release(&ctx);
    return st;
  }
  A->refcount = 1;
  A->ctx = ctx;
  A->comm = ctx->comm;
  A->mem = mem;
  *A_p = A;
  return HALO_SUCCESS;
}

static void matrix_free(halo_matrix A) {
  if (!A) return;
  halo_matrix_free_data(A);
  halo_context *ctx = A->ctx;
  halo_context_release(&ctx);
  halo_free(A);
}

void halo_matrix_retain(halo_matrix A) { A->refcount++; }

void halo_matrix_destroy(halo_matrix *A_p) {
  if (!A_p || !*A_p) return;
  if (--(*A_p)->refcount == 0) matrix_free(*A_p);
  *A_p = NULL;
}

/* After a successful build from device arrays: the blocks go to the device. */
static halo_status finish(halo_matrix A, halo_status st, halo_matrix *A_p) {
  if (st == HALO_SUCCESS && A->mem == HALO_MEMORY_DEVICE)
    st = halo_agree(A->comm, halo_matrix_upload(A));
  if (st != HALO_SUCCESS) {
    matrix_free(A);
    return st;
  }
  *A_p = A;
  return HALO_SUCCESS;
}

halo_status halo_matrix_create_csr(MPI_Comm comm, int64_t row_begin, int64_t row_end,
                                   int64_t col_begin, int64_t col_end, const int64_t *row_ptr,
                                   const int64_t *col_ids, const double *values, halo_memory mem,
                                   halo_matrix *A_p) {
  halo_status st, pre = HALO_SUCCESS;
  halo_matrix A;
  int64_t *h_ptr = NULL, *h_cols = NULL;
  double *h_vals = NULL;
  HALO_CHECK(shell_create(comm, mem, &A));
  if (!A_p) pre = HALO_ERROR(HALO_ERR_INVALID_ARG, "A_p is NULL");
  if (pre == HALO_SUCCESS && mem == HALO_MEMORY_DEVICE && HALO_HAVE_CUDA)
    pre = halo_matrix_download_csr("matrix", row_end - row_begin, row_ptr, col_ids, values, &h_ptr,
                                   &h_cols, &h_vals);
  if (h_ptr)
    st = halo_matrix_init_csr(A, row_begin, row_end, col_begin, col_end, h_ptr, h_cols, h_vals,
                              pre);
  else
    st = halo_matrix_init_csr(A, row_begin, row_end, col_begin, col_end, row_ptr, col_ids, values,
                              pre);
  halo_free(h_vals);
  halo_free(h_cols);
  halo_free(h_ptr);
  return finish(A, st, A_p);
}

halo_status halo_matrix_create_split(MPI_Comm comm, int64_t row_begin, int64_t row_end,
                                     int64_t col_begin, int64_t col_end,
                                     const int64_t *diag_row_ptr, const int64_t *diag_cols,
                                     const double *diag_values, const int64_t *offd_row_ptr,
                                     const int64_t *offd_cols, const double *offd_values,
                                     int64_t n_ghost, const int64_t *ghost_ids, halo_memory mem,
                                     halo_matrix *A_p) {
  halo_status st, pre = HALO_SUCCESS;
  halo_matrix A;
  int64_t *dp = NULL, *dc = NULL, *op = NULL, *oc = NULL, *g = NULL;
  double *dv = NULL, *ov = NULL;
  const int64_t n = row_end - row_begin;
  HALO_CHECK(shell_create(comm, mem, &A));
  if (!A_p) pre = HALO_ERROR(HALO_ERR_INVALID_ARG, "A_p is NULL");
  const int download = pre == HALO_SUCCESS && mem == HALO_MEMORY_DEVICE && HALO_HAVE_CUDA;
  if (download) {
    pre = halo_matrix_download_csr("diagonal block", n, diag_row_ptr, diag_cols, diag_values, &dp,
                                   &dc, &dv);
    if (pre == HALO_SUCCESS)
      pre = halo_matrix_download_csr("off-diagonal block", n, offd_row_ptr, offd_cols, offd_values,
                                     &op, &oc, &ov);
    if (pre == HALO_SUCCESS && n_ghost > 0 && n_ghost <= INT32_MAX && ghost_ids) {
      pre = HALO_ALLOC(g, n_ghost);
      if (pre == HALO_SUCCESS) pre = halo_dev_to_host(g, ghost_ids, (size_t)n_ghost * sizeof *g);
    }
    st = halo_matrix_init_split(A, row_begin, row_end, col_begin, col_end, dp, dc, dv, op, oc, ov,
                                n_ghost, g ? g : ghost_ids, pre);
  } else {
    st = halo_matrix_init_split(A, row_begin, row_end, col_begin, col_end, diag_row_ptr,
                                diag_cols, diag_values, offd_row_ptr, offd_cols, offd_values,
                                n_ghost, ghost_ids, pre);
  }
  halo_free(g), halo_free(ov), halo_free(oc), halo_free(op), halo_free(dv), halo_free(dc),
      halo_free(dp);
  return finish(A, st, A_p);
}

halo_status halo_matrix_get_local_sizes(halo_matrix A, int64_t *n_rows_p, int64_t *n_cols_p,
                                        int64_t *n_ghost_p) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  if (n_rows_p) *n_rows_p = A->row_end - A->row_begin;
  if (n_cols_p) *n_cols_p = A->col_end - A->col_begin;
  if (n_ghost_p) *n_ghost_p = A->n_ghost;
  return HALO_SUCCESS;
}

halo_status halo_matrix_get_layout(halo_matrix A, int64_t *n_global_rows_p,
                                   int64_t *n_global_cols_p, int64_t *row_begin_p,
                                   int64_t *col_begin_p) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  if (n_global_rows_p) *n_global_rows_p = A->n_global_rows;
  if (n_global_cols_p) *n_global_cols_p = A->n_global_cols;
  if (row_begin_p) *row_begin_p = A->row_begin;
  if (col_begin_p) *col_begin_p = A->col_begin;
  return HALO_SUCCESS;
}

halo_status halo_matrix_get_ghost_ids(halo_matrix A, const int64_t **ghost_ids_p) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  if (!ghost_ids_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "ghost_ids_p is NULL");
  *ghost_ids_p = A->ghost_ids;
  return HALO_SUCCESS;
}

/* Values given in device memory: a host copy first. */
static halo_status host_copy(const halo_matrix A, const double *v, int64_t n, double **h_p) {
  *h_p = NULL;
  if (A->mem != HALO_MEMORY_DEVICE || n == 0 || !v) return HALO_SUCCESS;
  HALO_CHECK(HALO_ALLOC(*h_p, n));
  halo_status st = halo_dev_to_host(*h_p, v, (size_t)n * sizeof **h_p);
  if (st != HALO_SUCCESS) HALO_FREE(*h_p);
  return st;
}

halo_status halo_matrix_set_values(halo_matrix A, const double *values) {
  double *h = NULL;
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  HALO_CHECK(host_copy(A, values, A->nnz, &h));
  halo_status st = halo_matrix_update_values(A, h ? h : values);
  halo_free(h);
  return st;
}

halo_status halo_matrix_set_values_split(halo_matrix A, const double *diag_values,
                                         const double *offd_values) {
  double *hd = NULL, *ho = NULL;
  halo_status st;
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  const int64_t dnnz = A->diag.n_rows ? A->diag.row_ptr[A->diag.n_rows] : 0;
  const int64_t onnz = A->offd.n_rows ? A->offd.row_ptr[A->offd.n_rows] : 0;
  st = host_copy(A, diag_values, dnnz, &hd);
  if (st == HALO_SUCCESS) st = host_copy(A, offd_values, onnz, &ho);
  if (st == HALO_SUCCESS)
    st = halo_matrix_update_values_split(A, hd ? hd : diag_values, ho ? ho : offd_values);
  halo_free(ho);
  halo_free(hd);
  return st;
}
