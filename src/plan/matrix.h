/* Private layout of a distributed matrix: the diagonal block in CSR and the
 * off-diagonal block with only its non-empty rows. */
#ifndef HALO_PLAN_MATRIX_H
#define HALO_PLAN_MATRIX_H

#include "halo_impl.h"

/** A CSR block with local column ids. */
typedef struct {
  int64_t n_rows;
  int64_t *row_ptr; /* n_rows+1 */
  int32_t *cols;
  double *vals;
} halo_csr_block;

/** A CSR block that keeps only its non-empty rows: row k of the block is row
 *  rows[k] of the matrix, so a product costs in proportion to its entries. */
typedef struct {
  int64_t n_rows;   /* non-empty rows */
  int32_t *rows;    /* their local row ids, increasing */
  int64_t *row_ptr; /* n_rows+1 */
  int32_t *cols;
  double *vals;
} halo_csr_rows;

struct halo_matrix_s {
  int refcount;
  MPI_Comm comm; /* duplicate of the caller's communicator */
  int rank, size;
  halo_memory mem;
  int64_t row_begin, row_end, col_begin, col_end;
  int64_t n_global_rows, n_global_cols;
  int64_t *row_ranges; /* size+1: rows of rank r are [row_ranges[r], row_ranges[r+1]) */
  int64_t *col_ranges; /* size+1: entries of x of rank r */
  halo_csr_block diag; /* local rows x local columns */
  halo_csr_rows offd;  /* local rows x ghosts, non-empty rows only */
  int64_t n_ghost;
  int64_t *ghost_ids; /* sorted global ids of the ghost columns */
};

/** Take a reference (a plan holds one). */
void halo_matrix_retain(halo_matrix A);

#endif
