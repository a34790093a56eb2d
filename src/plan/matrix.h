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

/** A block on the device: CSR with 32-bit indices (64-bit when the entries
 *  of one block reach 2^31); rows is the row list of a compressed block. */
typedef struct {
  int64_t n_rows, nnz;
  int idx64;     /* 1: row_ptr and cols are int64_t */
  void *row_ptr; /* n_rows+1 */
  void *cols;    /* nnz */
  double *vals;  /* nnz */
  int32_t *rows; /* compressed blocks: local row of each block row */
} halo_dev_block;

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
  /* the blocks on the device, once uploaded (device memory) */
  int on_device;
  int device; /* the CUDA device that holds them */
  halo_dev_block d_diag, d_offd;
};

/** Upload the blocks to the current CUDA device, once (collective only in
 *  that every rank of a device plan calls it). Fails if they were uploaded to
 *  another device. */
halo_status halo_matrix_upload(halo_matrix A);

/** Take a reference (a plan holds one). */
void halo_matrix_retain(halo_matrix A);

#endif
