/* Private layout of a distributed matrix: the diagonal block in CSR and the
 * off-diagonal block with only its non-empty rows. */
#ifndef HALO_PLAN_MATRIX_H
#define HALO_PLAN_MATRIX_H

#include "halo_impl.h"
#include "plan/pattern.h"

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
  int idx64;           /* 1: row_ptr and cols are int64_t */
  void *row_ptr;       /* n_rows+1 */
  void *cols;          /* nnz */
  double *vals;        /* nnz */
  int32_t *rows;       /* compressed blocks: local row of each block row */
  int64_t longest_row; /* entries of its longest row */
} halo_dev_block;

/** A block's transpose on the device, as index arrays into the block's
 *  values (new values need no new transpose): for each column, its entries
 *  in row order, the rows they are in and their places in the values. */
typedef struct {
  int64_t n_cols, nnz;
  int idx64;     /* ptr and perm are int64_t (else int32_t) */
  void *ptr;     /* n_cols+1 */
  int32_t *rows; /* nnz: the local row of each entry */
  void *perm;    /* nnz: its place in the block's values */
} halo_dev_transpose;

struct halo_context_s; /* src/interface/context.h: the planning code never looks inside */

struct halo_matrix_s {
  int refcount;
  struct halo_context_s *ctx; /* the communicator's context (a reference) */
  MPI_Comm comm;              /* the context's copy of the communicator */
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
  /* the exchange's pattern of the ghosts, learned by the matrix's first plan
   * (a sparse data exchange) and kept for its later ones */
  int pattern_kept;
  halo_pattern pattern;
  /* new values, same pattern (halo_matrix_set_values) */
  int from_split;         /* made by halo_matrix_create_split: values go block by block */
  int64_t nnz;            /* entries given to halo_matrix_create_csr */
  unsigned char *in_offd; /* nnz bits: entry k of the input went to the off-diagonal block */
  int64_t values_version; /* bumped by every update (the device product's preprocessing) */
  /* the blocks on the device, once uploaded (device memory) */
  int on_device;
  int device; /* the CUDA device that holds them */
  halo_dev_block d_diag, d_offd;
  int on_device_t; /* the transposes are made (halo_matrix_upload_transpose) */
  halo_dev_transpose d_diag_t, d_offd_t; /* Ad^T, Ao^T */
};

/**
 * Fill a matrix shell (comm set, mem set) from this rank's rows with global
 * column ids, as halo_matrix_create_csr() documents; arrays in host memory.
 * pre: the status of what the caller did before (a download), agreed with
 * the checks. Collective over A->comm.
 */
halo_status halo_matrix_init_csr(halo_matrix A, int64_t row_begin, int64_t row_end,
                                 int64_t col_begin, int64_t col_end, const int64_t *row_ptr,
                                 const int64_t *col_ids, const double *values, halo_status pre);

/** The same from an existing split (halo_matrix_create_split()). */
halo_status halo_matrix_init_split(halo_matrix A, int64_t row_begin, int64_t row_end,
                                   int64_t col_begin, int64_t col_end, const int64_t *diag_row_ptr,
                                   const int64_t *diag_cols, const double *diag_values,
                                   const int64_t *offd_row_ptr, const int64_t *offd_cols,
                                   const double *offd_values, int64_t n_ghost,
                                   const int64_t *ghost_ids, halo_status pre);

/** A CSR given in device memory, copied to host arrays (NULL when there is
 *  nothing to copy); what = the block's name in messages. */
halo_status halo_matrix_download_csr(const char *what, int64_t n_rows, const int64_t *row_ptr,
                                     const int64_t *cols, const double *vals, int64_t **h_ptr,
                                     int64_t **h_cols, double **h_vals);

/** Free what the init functions made (not the shell, not the context). */
void halo_matrix_free_data(halo_matrix A);

/** New values in the order of the input (host memory), into both blocks
 *  and, when uploaded, the device's. Not collective. */
halo_status halo_matrix_update_values(halo_matrix A, const double *values);
halo_status halo_matrix_update_values_split(halo_matrix A, const double *diag_values,
                                            const double *offd_values);

/** Upload the blocks to the current CUDA device, once (collective only in
 *  that every rank of a device plan calls it). Fails if they were uploaded to
 *  another device. */
halo_status halo_matrix_upload(halo_matrix A);

/** The transposes of the uploaded blocks, made once (for every plan of the
 *  matrix that multiplies by A^T). */
HALO_MODULE_API halo_status halo_matrix_upload_transpose(halo_matrix A);

#endif
