/* What a matrix read without error must be: row pointers from 0, never
 * decreasing; columns in range and increasing within a row (unless repeats
 * are allowed); values finite. */
#ifndef HALO_FUZZ_CSR_H
#define HALO_FUZZ_CSR_H

#include <math.h>

#include "fuzz_util.h"
#include "halo/io.h"

static void fuzz_check_csr(const halo_csr *A) {
  FUZZ_ASSERT(A->n_rows >= 0 && A->n_cols >= 0);
  FUZZ_ASSERT(A->row_begin == 0 && A->row_end == A->n_rows);
  FUZZ_ASSERT(A->row_ptr && A->row_ptr[0] == 0);
  for (int64_t r = 0; r < A->n_rows; r++) {
    FUZZ_ASSERT(A->row_ptr[r + 1] >= A->row_ptr[r]);
    for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++) {
      FUZZ_ASSERT(A->col_ids[k] >= 0 && A->col_ids[k] < A->n_cols);
      FUZZ_ASSERT(k == A->row_ptr[r] || A->col_ids[k] > A->col_ids[k - 1]);
      FUZZ_ASSERT(isfinite(A->values[k]));
    }
  }
}

/* What a reader returned: a valid matrix, or an error with a message and
 * nothing allocated; A freed. */
static void fuzz_check_read(halo_status st, halo_csr *A) {
  if (st == HALO_SUCCESS)
    fuzz_check_csr(A);
  else
    FUZZ_ASSERT(halo_last_error()[0] != '\0' && A->row_ptr == NULL);
  halo_csr_free(A);
}

#endif
