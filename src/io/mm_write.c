/* The Matrix Market writer: coordinate real general, values with 17
 * significant digits (they read back bit for bit). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"
#include "progress.h"

halo_status halo_mm_write(const char *path, const halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  FILE *fp = NULL;
  if (!path || !A)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: the %s is NULL",
                      path ? "matrix" : "path");
  const int64_t m = A->n_rows;
  if (m < 0 || A->n_cols < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: negative size %lld x %lld",
                      (long long)m, (long long)A->n_cols);
  if (A->row_begin != 0 || A->row_end != m)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "halo_mm_write needs the whole matrix, but rows [%lld, %lld) of %lld "
                      "are given",
                      (long long)A->row_begin, (long long)A->row_end, (long long)m);
  if (!A->row_ptr && m > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: row_ptr is NULL");
  if (A->row_ptr && A->row_ptr[0] != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: row_ptr[0] is %lld, must be 0",
                      (long long)A->row_ptr[0]);
  for (int64_t r = 0; r < m; r++)
    if (A->row_ptr[r + 1] < A->row_ptr[r])
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: row_ptr decreases at row %lld",
                        (long long)r);
  const int64_t nnz = A->row_ptr ? A->row_ptr[m] : 0;
  if (nnz > 0 && (!A->col_ids || !A->values))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_write: %lld entries but no %s array",
                      (long long)nnz, A->col_ids ? "values" : "column");
  for (int64_t r = 0; r < m; r++)
    for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++) {
      if (A->col_ids[k] < 0 || A->col_ids[k] >= A->n_cols)
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "halo_mm_write: column %lld in row %lld is out of range [0, %lld)",
                          (long long)A->col_ids[k], (long long)r, (long long)A->n_cols);
      if (!isfinite(A->values[k]))
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "halo_mm_write: the value at (%lld, %lld) is not finite", (long long)r,
                          (long long)A->col_ids[k]);
    }

  errno = 0;
  fp = fopen(path, "w");
  if (!fp) {
    int err = errno;
    return HALO_ERROR(HALO_ERR_IO, "cannot open '%s' for writing: %s", path,
                      err ? strerror(err) : "unknown error");
  }
  halo_progress_stage pr;
  halo_progress_begin(&pr, "writing", HALO_PROGRESS_ENTRIES, nnz);
  int bad = fprintf(fp, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n",
                    (long long)m, (long long)A->n_cols, (long long)nnz) < 0;
  for (int64_t r = 0; r < m && !bad; r++) {
    halo_progress_tick(&pr, A->row_ptr[r]);
    for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++)
      if (fprintf(fp, "%lld %lld %.17g\n", (long long)r + 1, (long long)A->col_ids[k] + 1,
                  A->values[k]) < 0) {
        bad = 1;
        break;
      }
  }
  HALO_TRY(halo_file_close_written(&fp, path, bad, bad ? errno : 0));
  halo_progress_end(&pr);
cleanup:
  if (fp) fclose(fp);
  return st;
}
