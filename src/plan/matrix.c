/* Distributed matrix: validation of the input on every rank, the diagonal /
 * off-diagonal split with compressed ghost columns, the upload to the
 * device, new values for the same pattern. The handle (creation with the
 * communicator's context, reference counting) is src/interface/matrix.c. */
#include <string.h>

#include "plan/matrix.h"

/* ---- local checks (no MPI) -------------------------------------------- */

static halo_status check_memory(halo_memory mem) {
  if (mem == HALO_MEMORY_HOST) return HALO_SUCCESS;
  if (mem != HALO_MEMORY_DEVICE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown memory kind %d", (int)mem);
#if HALO_HAVE_CUDA
  return HALO_SUCCESS;
#else
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
#endif
}

static halo_status check_ranges(int64_t rb, int64_t re, int64_t cb, int64_t ce) {
  if (rb < 0 || re < rb)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "row range [%lld, %lld) is not a range of rows",
                      (long long)rb, (long long)re);
  if (cb < 0 || ce < cb)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "column range [%lld, %lld) is not a range of columns",
                      (long long)cb, (long long)ce);
  if (re - rb > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%lld local rows: at most %d rows per rank",
                      (long long)(re - rb), INT32_MAX);
  if (ce - cb > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%lld local columns: at most %d per rank",
                      (long long)(ce - cb), INT32_MAX);
  return HALO_SUCCESS;
}

/* Row offsets present, starting at 0 and non-decreasing; arrays present when
 * there are entries. */
static halo_status check_row_ptr(const char *what, int64_t n_rows, const int64_t *row_ptr,
                                 const void *cols, const double *vals) {
  if (n_rows > 0 && !row_ptr)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s row_ptr is NULL for %lld rows", what,
                      (long long)n_rows);
  if (n_rows == 0 && !row_ptr) return HALO_SUCCESS;
  if (row_ptr[0] != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s row_ptr[0] is %lld, must be 0", what,
                      (long long)row_ptr[0]);
  for (int64_t i = 0; i < n_rows; i++)
    if (row_ptr[i + 1] < row_ptr[i])
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "%s row_ptr decreases at local row %lld (%lld after %lld)", what,
                        (long long)i, (long long)row_ptr[i + 1], (long long)row_ptr[i]);
  if (row_ptr[n_rows] > 0 && (!cols || !vals))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s has %lld entries but its %s array is NULL", what,
                      (long long)row_ptr[n_rows], cols ? "values" : "column");
  return HALO_SUCCESS;
}

static halo_status check_cols(const char *what, int64_t n_rows, const int64_t *row_ptr,
                              const int64_t *cols, int64_t lo, int64_t hi, int64_t row_base) {
  for (int64_t i = 0; i < n_rows; i++)
    for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
      if (cols[k] < lo || cols[k] >= hi)
        return HALO_ERROR(
            HALO_ERR_INVALID_ARG, "%s column %lld in row %lld is out of range [%lld, %lld)", what,
            (long long)cols[k], (long long)(row_base + i), (long long)lo, (long long)hi);
  return HALO_SUCCESS;
}

/* ---- layout: gather and check ranges ----------------------------------- */

static void dev_block_free(halo_dev_block *b) {
  halo_dev_free(b->row_ptr);
  halo_dev_free(b->cols);
  halo_dev_free(b->vals);
  halo_dev_free(b->rows);
  memset(b, 0, sizeof *b);
}

static void dev_transpose_free(halo_dev_transpose *t) {
  halo_dev_free(t->ptr);
  halo_dev_free(t->rows);
  halo_dev_free(t->perm);
  memset(t, 0, sizeof *t);
}

void halo_matrix_free_data(halo_matrix A) {
  if (!A) return;
  dev_block_free(&A->d_diag);
  dev_block_free(&A->d_offd);
  dev_transpose_free(&A->d_diag_t);
  dev_transpose_free(&A->d_offd_t);
  halo_free(A->in_offd);
  halo_pattern_free(&A->pattern);
  A->pattern_kept = 0;
  halo_free(A->ghost_ids);
  halo_free(A->offd.vals);
  halo_free(A->offd.cols);
  halo_free(A->offd.row_ptr);
  halo_free(A->offd.rows);
  halo_free(A->diag.vals);
  halo_free(A->diag.cols);
  halo_free(A->diag.row_ptr);
  halo_free(A->col_ranges);
  halo_free(A->row_ranges);
  A->in_offd = NULL, A->ghost_ids = A->col_ranges = A->row_ranges = NULL;
  memset(&A->diag, 0, sizeof A->diag);
  memset(&A->offd, 0, sizeof A->offd);
}

/* all holds (row_begin, row_end, col_begin, col_end) per rank; off is 0 for
 * rows, 2 for columns. Fills ranges[0..size]. */
static halo_status check_tiling(const char *what, const int64_t *all, int off, int size,
                                int64_t *ranges) {
  if (all[off] != 0)
    return HALO_ERROR(HALO_ERR_INCONSISTENT, "%s ranges must start at 0: rank 0 begins at %lld",
                      what, (long long)all[off]);
  for (int r = 1; r < size; r++)
    if (all[4 * r + off] != all[4 * (r - 1) + off + 1])
      return HALO_ERROR(HALO_ERR_INCONSISTENT,
                        "%s ranges do not follow each other: rank %d ends at %lld but rank %d "
                        "begins at %lld",
                        what, r - 1, (long long)all[4 * (r - 1) + off + 1], r,
                        (long long)all[4 * r + off]);
  for (int r = 0; r < size; r++) ranges[r] = all[4 * r + off];
  ranges[size] = all[4 * (size - 1) + off + 1];
  return HALO_SUCCESS;
}

/* Collective. The ranges of every rank, checked, after agreeing on the local
 * status st of the caller's argument checks. */
static halo_status matrix_layout(halo_matrix A, int64_t rb, int64_t re, int64_t cb, int64_t ce,
                                 halo_status st) {
  int64_t *all = NULL;
  A->row_begin = rb, A->row_end = re, A->col_begin = cb, A->col_end = ce;
  HALO_TRY_MPI(MPI_Comm_rank(A->comm, &A->rank));
  HALO_TRY_MPI(MPI_Comm_size(A->comm, &A->size));
  if (st == HALO_SUCCESS) st = HALO_ALLOC(all, 4 * (size_t)A->size);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(A->row_ranges, A->size + 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(A->col_ranges, A->size + 1);
  HALO_TRY(halo_agree(A->comm, st));
  {
    int64_t mine[4] = {rb, re, cb, ce};
    HALO_TRY_MPI(MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, A->comm));
  }
  /* Every rank sees the same gathered ranges, so these checks agree. */
  HALO_TRY(check_tiling("row", all, 0, A->size, A->row_ranges));
  HALO_TRY(check_tiling("column", all, 2, A->size, A->col_ranges));
  A->n_global_rows = A->row_ranges[A->size];
  A->n_global_cols = A->col_ranges[A->size];
cleanup:
  halo_free(all);
  return st;
}

/* ---- building the blocks ---------------------------------------------- */

static int64_t lower_bound_i64(const int64_t *a, int64_t n, int64_t x) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (a[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Compress an off-diagonal block given by full row offsets (n_rows+1) and
 * ghost column ids: keep the non-empty rows. cols_full are ghost indices. */
static halo_status offd_compress(int64_t n_rows, const int64_t *row_ptr, const int32_t *cols,
                                 const double *vals, halo_csr_rows *o) {
  halo_status st = HALO_SUCCESS;
  int64_t nr = 0, nnz = n_rows ? row_ptr[n_rows] : 0;
  for (int64_t i = 0; i < n_rows; i++) nr += row_ptr[i + 1] > row_ptr[i];
  o->n_rows = nr;
  HALO_TRY(HALO_ALLOC(o->rows, nr));
  HALO_TRY(HALO_ALLOC(o->row_ptr, nr + 1));
  HALO_TRY(HALO_ALLOC(o->cols, nnz));
  HALO_TRY(HALO_ALLOC(o->vals, nnz));
  o->row_ptr[0] = 0;
  for (int64_t i = 0, k = 0; i < n_rows; i++) {
    if (row_ptr[i + 1] == row_ptr[i]) continue;
    o->rows[k] = (int32_t)i;
    o->row_ptr[k + 1] = row_ptr[i + 1];
    k++;
  }
  if (nnz) {
    memcpy(o->cols, cols, (size_t)nnz * sizeof *cols);
    memcpy(o->vals, vals, (size_t)nnz * sizeof *vals);
  }
cleanup:
  return st;
}

/* Split rows with global column ids into diag and offd with sorted ghosts. */
static halo_status matrix_split_global(halo_matrix A, const int64_t *row_ptr,
                                       const int64_t *col_ids, const double *values) {
  halo_status st = HALO_SUCCESS;
  const int64_t n = A->row_end - A->row_begin, cb = A->col_begin, ce = A->col_end;
  const int64_t nnz = n ? row_ptr[n] : 0;
  int64_t dnnz = 0, onnz = 0, *orow_ptr = NULL, *gids = NULL;
  int32_t *ocols = NULL;
  double *ovals = NULL;
  for (int64_t k = 0; k < nnz; k++) {
    if (col_ids[k] >= cb && col_ids[k] < ce)
      dnnz++;
    else
      onnz++;
  }
  A->diag.n_rows = n;
  HALO_TRY(HALO_ALLOC(A->diag.row_ptr, n + 1));
  HALO_TRY(HALO_ALLOC(A->diag.cols, dnnz));
  HALO_TRY(HALO_ALLOC(A->diag.vals, dnnz));
  HALO_TRY(HALO_ALLOC(orow_ptr, n + 1));
  HALO_TRY(HALO_ALLOC(gids, onnz));
  HALO_TRY(HALO_ALLOC(ocols, onnz));
  HALO_TRY(HALO_ALLOC(ovals, onnz));
  A->nnz = nnz;
  HALO_TRY(HALO_CALLOC(A->in_offd, (nnz + 7) / 8));
  A->diag.row_ptr[0] = orow_ptr[0] = 0;
  for (int64_t i = 0, d = 0, o = 0; i < n; i++) {
    for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
      int64_t c = col_ids[k];
      if (c >= cb && c < ce) {
        A->diag.cols[d] = (int32_t)(c - cb);
        A->diag.vals[d++] = values[k];
      } else {
        gids[o] = c;
        ovals[o++] = values[k];
        A->in_offd[k / 8] |= (unsigned char)(1u << (k % 8));
      }
    }
    A->diag.row_ptr[i + 1] = d;
    orow_ptr[i + 1] = o;
  }
  /* ghost ids: sorted unique off-diagonal columns */
  if (onnz) {
    HALO_TRY(HALO_ALLOC(A->ghost_ids, onnz));
    memcpy(A->ghost_ids, gids, (size_t)onnz * sizeof *gids);
    HALO_TRY(halo_sort_i64(A->ghost_ids, onnz));
    int64_t ng = 1;
    for (int64_t k = 1; k < onnz; k++)
      if (A->ghost_ids[k] != A->ghost_ids[ng - 1]) A->ghost_ids[ng++] = A->ghost_ids[k];
    if (ng > INT32_MAX)
      HALO_FAIL(HALO_ERR_OUT_OF_RANGE, "%lld ghost columns: at most %d per rank", (long long)ng,
                INT32_MAX);
    A->n_ghost = ng;
    void *shrunk = halo_realloc(A->ghost_ids, (size_t)ng * sizeof *A->ghost_ids);
    if (shrunk) A->ghost_ids = shrunk;
    for (int64_t k = 0; k < onnz; k++)
      ocols[k] = (int32_t)lower_bound_i64(A->ghost_ids, ng, gids[k]);
  }
  HALO_TRY(offd_compress(n, orow_ptr, ocols, ovals, &A->offd));
cleanup:
  halo_free(ovals);
  halo_free(ocols);
  halo_free(gids);
  halo_free(orow_ptr);
  return st;
}

/* ---- from the caller's arrays ------------------------------------------ */

halo_status halo_matrix_init_csr(halo_matrix A, int64_t row_begin, int64_t row_end,
                                 int64_t col_begin, int64_t col_end, const int64_t *row_ptr,
                                 const int64_t *col_ids, const double *values, halo_status pre) {
  halo_status st = pre;
  if (st == HALO_SUCCESS) st = check_memory(A->mem);
  if (st == HALO_SUCCESS) st = check_ranges(row_begin, row_end, col_begin, col_end);
  if (st == HALO_SUCCESS)
    st = check_row_ptr("matrix", row_end - row_begin, row_ptr, col_ids, values);
  HALO_TRY(matrix_layout(A, row_begin, row_end, col_begin, col_end, st));
  st = check_cols("matrix", row_end - row_begin, row_ptr, col_ids, 0, A->n_global_cols, row_begin);
  HALO_TRY(halo_agree(A->comm, st));
  st = matrix_split_global(A, row_ptr, col_ids, values);
  HALO_TRY(halo_agree(A->comm, st));
cleanup:
  return st;
}

halo_status halo_matrix_init_split(halo_matrix A, int64_t row_begin, int64_t row_end,
                                   int64_t col_begin, int64_t col_end, const int64_t *diag_row_ptr,
                                   const int64_t *diag_cols, const double *diag_values,
                                   const int64_t *offd_row_ptr, const int64_t *offd_cols,
                                   const double *offd_values, int64_t n_ghost,
                                   const int64_t *ghost_ids, halo_status pre) {
  halo_status st = pre;
  int32_t *ocols = NULL;
  const int64_t n = row_end - row_begin;
  A->from_split = 1;
  if (st == HALO_SUCCESS) st = check_memory(A->mem);
  if (st == HALO_SUCCESS) st = check_ranges(row_begin, row_end, col_begin, col_end);
  if (st == HALO_SUCCESS)
    st = check_row_ptr("diagonal block", n, diag_row_ptr, diag_cols, diag_values);
  if (st == HALO_SUCCESS)
    st = check_row_ptr("off-diagonal block", n, offd_row_ptr, offd_cols, offd_values);
  if (st == HALO_SUCCESS && (n_ghost < 0 || n_ghost > INT32_MAX))
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "n_ghost = %lld: must be in [0, %d]", (long long)n_ghost,
                    INT32_MAX);
  if (st == HALO_SUCCESS && n_ghost > 0 && !ghost_ids)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "ghost_ids is NULL for %lld ghosts", (long long)n_ghost);
  if (st == HALO_SUCCESS)
    st =
        check_cols("diagonal block", n, diag_row_ptr, diag_cols, 0, col_end - col_begin, row_begin);
  if (st == HALO_SUCCESS)
    st = check_cols("off-diagonal block", n, offd_row_ptr, offd_cols, 0, n_ghost, row_begin);
  HALO_TRY(matrix_layout(A, row_begin, row_end, col_begin, col_end, st));
  for (int64_t k = 0; k < n_ghost && st == HALO_SUCCESS; k++) {
    int64_t g = ghost_ids[k];
    if (g < 0 || g >= A->n_global_cols)
      st = HALO_ERROR(HALO_ERR_INVALID_ARG, "ghost_ids[%lld] = %lld is out of range [0, %lld)",
                      (long long)k, (long long)g, (long long)A->n_global_cols);
    else if (g >= col_begin && g < col_end)
      st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "ghost_ids[%lld] = %lld is owned by this rank (columns [%lld, %lld))",
                      (long long)k, (long long)g, (long long)col_begin, (long long)col_end);
    else if (k > 0 && g <= ghost_ids[k - 1])
      st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "ghost_ids must be strictly increasing: ghost_ids[%lld] = %lld after %lld",
                      (long long)k, (long long)g, (long long)ghost_ids[k - 1]);
  }
  HALO_TRY(halo_agree(A->comm, st));
  {
    const int64_t dnnz = n ? diag_row_ptr[n] : 0, onnz = n ? offd_row_ptr[n] : 0;
    A->diag.n_rows = n;
    st = HALO_ALLOC(A->diag.row_ptr, n + 1);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(A->diag.cols, dnnz);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(A->diag.vals, dnnz);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(A->ghost_ids, n_ghost);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(ocols, onnz);
    if (st == HALO_SUCCESS) {
      A->diag.row_ptr[0] = 0;
      if (n) memcpy(A->diag.row_ptr, diag_row_ptr, (size_t)(n + 1) * sizeof *diag_row_ptr);
      for (int64_t k = 0; k < dnnz; k++) A->diag.cols[k] = (int32_t)diag_cols[k];
      if (dnnz) memcpy(A->diag.vals, diag_values, (size_t)dnnz * sizeof *diag_values);
      if (n_ghost) memcpy(A->ghost_ids, ghost_ids, (size_t)n_ghost * sizeof *ghost_ids);
      A->n_ghost = n_ghost;
      for (int64_t k = 0; k < onnz; k++) ocols[k] = (int32_t)offd_cols[k];
      st = offd_compress(n, offd_row_ptr, ocols, offd_values, &A->offd);
    }
  }
  HALO_TRY(halo_agree(A->comm, st));
cleanup:
  halo_free(ocols);
  return st;
}

/* ---- device input: download, build on the host, upload the blocks ---- */

halo_status halo_matrix_download_csr(const char *what, int64_t n_rows, const int64_t *row_ptr,
                                     const int64_t *cols, const double *vals, int64_t **h_ptr,
                                     int64_t **h_cols, double **h_vals) {
  halo_status st = HALO_SUCCESS;
  int is_dev;
  *h_ptr = *h_cols = NULL;
  *h_vals = NULL;
  if (n_rows < 0) return HALO_SUCCESS; /* reported by the range check */
  if (n_rows > 0 && !row_ptr)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s row_ptr is NULL for %lld rows", what,
                      (long long)n_rows);
  if (n_rows == 0 && !row_ptr) return HALO_SUCCESS;
  HALO_TRY(halo_dev_pointer_kind(row_ptr, &is_dev));
  if (!is_dev)
    HALO_FAIL(HALO_ERR_INVALID_ARG,
              "%s row_ptr is not device memory, but the memory kind is HALO_MEMORY_DEVICE", what);
  HALO_TRY(HALO_ALLOC(*h_ptr, n_rows + 1));
  HALO_TRY(halo_dev_to_host(*h_ptr, row_ptr, (size_t)(n_rows + 1) * sizeof **h_ptr));
  const int64_t nnz = (*h_ptr)[n_rows] - (*h_ptr)[0];
  if (nnz < 0 || (*h_ptr)[0] != 0) return HALO_SUCCESS; /* reported by the row_ptr check */
  if (nnz > 0 && (!cols || !vals))
    HALO_FAIL(HALO_ERR_INVALID_ARG, "%s has %lld entries but its %s array is NULL", what,
              (long long)nnz, cols ? "values" : "column");
  HALO_TRY(HALO_ALLOC(*h_cols, nnz));
  HALO_TRY(HALO_ALLOC(*h_vals, nnz));
  HALO_TRY(halo_dev_to_host(*h_cols, cols, (size_t)nnz * sizeof **h_cols));
  HALO_TRY(halo_dev_to_host(*h_vals, vals, (size_t)nnz * sizeof **h_vals));
cleanup:
  return st;
}

/* One block to the device, with 32-bit indices when its entries allow. */
static halo_status upload_block(int64_t n_rows, const int64_t *row_ptr, const int32_t *cols,
                                const double *vals, const int32_t *rows, halo_dev_block *b) {
  halo_status st = HALO_SUCCESS;
  void *tmp = NULL;
  const int64_t nnz = n_rows ? row_ptr[n_rows] : 0;
  b->n_rows = n_rows;
  b->nnz = nnz;
  b->idx64 = nnz > INT32_MAX;
  const size_t isz = b->idx64 ? sizeof(int64_t) : sizeof(int32_t);
  HALO_TRY(halo_dev_malloc(&b->row_ptr, (size_t)(n_rows + 1) * isz));
  HALO_TRY(halo_dev_malloc(&b->cols, (size_t)nnz * isz));
  HALO_TRY(halo_dev_malloc((void **)&b->vals, (size_t)nnz * sizeof(double)));
  if (rows) {
    HALO_TRY(halo_dev_malloc((void **)&b->rows, (size_t)n_rows * sizeof(int32_t)));
    HALO_TRY(halo_host_to_dev(b->rows, rows, (size_t)n_rows * sizeof(int32_t)));
  }
  /* row offsets in the index width, then the column ids */
  HALO_TRY(halo_alloc_array(&tmp, (size_t)(n_rows + 1 > nnz ? n_rows + 1 : nnz), isz, 0));
  b->longest_row = 0;
  for (int64_t i = 0; i <= n_rows; i++) {
    if (i < n_rows && row_ptr[i + 1] - row_ptr[i] > b->longest_row)
      b->longest_row = row_ptr[i + 1] - row_ptr[i];
    if (b->idx64)
      ((int64_t *)tmp)[i] = n_rows ? row_ptr[i] : 0;
    else
      ((int32_t *)tmp)[i] = n_rows ? (int32_t)row_ptr[i] : 0;
  }
  HALO_TRY(halo_host_to_dev(b->row_ptr, tmp, (size_t)(n_rows + 1) * isz));
  if (b->idx64) {
    for (int64_t k = 0; k < nnz; k++) ((int64_t *)tmp)[k] = cols[k];
    HALO_TRY(halo_host_to_dev(b->cols, tmp, (size_t)nnz * isz));
  } else {
    HALO_TRY(halo_host_to_dev(b->cols, cols, (size_t)nnz * isz));
  }
  HALO_TRY(halo_host_to_dev(b->vals, vals, (size_t)nnz * sizeof(double)));
cleanup:
  halo_free(tmp);
  if (st != HALO_SUCCESS) dev_block_free(b);
  return st;
}

halo_status halo_matrix_upload(halo_matrix A) {
  int device;
  HALO_CHECK(halo_dev_current(&device));
  if (A->on_device) {
    if (A->device != device)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "the matrix is on CUDA device %d, the plan on device %d", A->device,
                        device);
    return HALO_SUCCESS;
  }
  HALO_CHECK(
      upload_block(A->diag.n_rows, A->diag.row_ptr, A->diag.cols, A->diag.vals, NULL, &A->d_diag));
  halo_status st = upload_block(A->offd.n_rows, A->offd.row_ptr, A->offd.cols, A->offd.vals,
                                A->offd.rows, &A->d_offd);
  if (st != HALO_SUCCESS) {
    dev_block_free(&A->d_diag);
    return st;
  }
  A->on_device = 1;
  A->device = device;
  return HALO_SUCCESS;
}

/* The transpose of a CSR block of n_rows rows (row r of the block is local
 * row row_ids[r], or r when row_ids is NULL) over n_cols columns, uploaded. */
static halo_status transpose_build(int64_t n_rows, const int64_t *row_ptr, const int32_t *cols,
                                   const int32_t *row_ids, int64_t n_cols, halo_dev_transpose *t) {
  halo_status st = HALO_SUCCESS;
  int64_t *ptr = NULL, *perm = NULL, *next = NULL;
  int32_t *rows = NULL;
  void *narrow = NULL;
  const int64_t nnz = n_rows ? row_ptr[n_rows] : 0;
  t->n_cols = n_cols;
  t->nnz = nnz;
  t->idx64 = nnz > INT32_MAX;
  HALO_TRY(HALO_CALLOC(ptr, n_cols + 1));
  HALO_TRY(HALO_ALLOC(next, n_cols));
  HALO_TRY(HALO_ALLOC(perm, nnz));
  HALO_TRY(HALO_ALLOC(rows, nnz));
  for (int64_t k = 0; k < nnz; k++) ptr[cols[k] + 1]++;
  for (int64_t c = 0; c < n_cols; c++) ptr[c + 1] += ptr[c], next[c] = ptr[c];
  for (int64_t r = 0; r < n_rows; r++) /* rows in order: each column's entries in row order */
    for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++) {
      const int64_t at = next[cols[k]]++;
      perm[at] = k;
      rows[at] = row_ids ? row_ids[r] : (int32_t)r;
    }
  const size_t isz = t->idx64 ? sizeof(int64_t) : sizeof(int32_t);
  HALO_TRY(halo_dev_malloc(&t->ptr, (size_t)(n_cols + 1) * isz));
  HALO_TRY(halo_dev_malloc(&t->perm, (size_t)nnz * isz));
  HALO_TRY(halo_dev_malloc((void **)&t->rows, (size_t)nnz * sizeof(int32_t)));
  HALO_TRY(halo_host_to_dev(t->rows, rows, (size_t)nnz * sizeof(int32_t)));
  if (t->idx64) {
    HALO_TRY(halo_host_to_dev(t->ptr, ptr, (size_t)(n_cols + 1) * isz));
    HALO_TRY(halo_host_to_dev(t->perm, perm, (size_t)nnz * isz));
  } else {
    int32_t *n32;
    const int64_t m = n_cols + 1 > nnz ? n_cols + 1 : nnz;
    HALO_TRY(halo_alloc_array(&narrow, (size_t)m, sizeof(int32_t), 0));
    n32 = narrow;
    for (int64_t c = 0; c <= n_cols; c++) n32[c] = (int32_t)ptr[c];
    HALO_TRY(halo_host_to_dev(t->ptr, n32, (size_t)(n_cols + 1) * isz));
    for (int64_t k = 0; k < nnz; k++) n32[k] = (int32_t)perm[k];
    HALO_TRY(halo_host_to_dev(t->perm, n32, (size_t)nnz * isz));
  }
cleanup:
  halo_free(narrow);
  halo_free(rows);
  halo_free(perm);
  halo_free(next);
  halo_free(ptr);
  if (st != HALO_SUCCESS) dev_transpose_free(t);
  return st;
}

halo_status halo_matrix_upload_transpose(halo_matrix A) {
  if (A->on_device_t) return HALO_SUCCESS;
  if (!A->on_device)
    return HALO_ERROR(HALO_ERR_INTERNAL, "the transposes of a matrix that is not on the device");
  HALO_CHECK(transpose_build(A->diag.n_rows, A->diag.row_ptr, A->diag.cols, NULL,
                             A->col_end - A->col_begin, &A->d_diag_t));
  halo_status st = transpose_build(A->offd.n_rows, A->offd.row_ptr, A->offd.cols, A->offd.rows,
                                   A->n_ghost, &A->d_offd_t);
  if (st != HALO_SUCCESS) {
    dev_transpose_free(&A->d_diag_t);
    return st;
  }
  A->on_device_t = 1;
  return HALO_SUCCESS;
}

/* ---- new values, same pattern ----------------------------------------- */

static halo_status upload_values(halo_matrix A) {
  A->values_version++;
  if (!A->on_device) return HALO_SUCCESS;
  HALO_CHECK(halo_host_to_dev(A->d_diag.vals, A->diag.vals,
                              (size_t)A->d_diag.nnz * sizeof(double)));
  return halo_host_to_dev(A->d_offd.vals, A->offd.vals, (size_t)A->d_offd.nnz * sizeof(double));
}

halo_status halo_matrix_update_values(halo_matrix A, const double *values) {
  if (A->from_split)
    return HALO_ERROR(HALO_ERR_STATE, "the matrix was made by halo_matrix_create_split: give its "
                                      "blocks' values to halo_matrix_set_values_split");
  if (!values && A->nnz > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "values is NULL for %lld entries", (long long)A->nnz);
  for (int64_t k = 0, d = 0, o = 0; k < A->nnz; k++) {
    if (A->in_offd[k / 8] & (1u << (k % 8)))
      A->offd.vals[o++] = values[k];
    else
      A->diag.vals[d++] = values[k];
  }
  return upload_values(A);
}

halo_status halo_matrix_update_values_split(halo_matrix A, const double *diag_values,
                                            const double *offd_values) {
  const int64_t dnnz = A->diag.n_rows ? A->diag.row_ptr[A->diag.n_rows] : 0;
  const int64_t onnz = A->offd.n_rows ? A->offd.row_ptr[A->offd.n_rows] : 0;
  if (!A->from_split)
    return HALO_ERROR(HALO_ERR_STATE, "the matrix was made by halo_matrix_create_csr: give its "
                                      "values to halo_matrix_set_values");
  if ((!diag_values && dnnz > 0) || (!offd_values && onnz > 0))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the %s block's values are NULL",
                      !diag_values && dnnz > 0 ? "diagonal" : "off-diagonal");
  if (dnnz) memcpy(A->diag.vals, diag_values, (size_t)dnnz * sizeof *diag_values);
  if (onnz) memcpy(A->offd.vals, offd_values, (size_t)onnz * sizeof *offd_values);
  return upload_values(A);
}
