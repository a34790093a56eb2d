/* halo input: Matrix Market reader, matrix generators, row partitions, and
 * the distribution of a matrix read on one rank. Used by the `halo` driver;
 * available to any program that wants the same inputs. */
#ifndef HALO_IO_H
#define HALO_IO_H

#include "halo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Rows [row_begin, row_end) of an n_rows x n_cols matrix in CSR form with
 *  global column ids (0-based), sorted by column within each row. */
typedef struct {
  int64_t n_rows, n_cols; /**< global sizes */
  int64_t row_begin, row_end;
  int64_t *row_ptr; /**< row_end-row_begin+1 offsets */
  int64_t *col_ids;
  double *values;
} halo_csr;

/** Free the arrays of @p A and zero it; NULL-safe. */
void halo_csr_free(halo_csr *A);

/** Number of stored entries. */
int64_t halo_csr_nnz(const halo_csr *A);

/* ---- Matrix Market ------------------------------------------------------ */

/** Options of the Matrix Market reader. */
typedef struct {
  /** Repeated (row, column) entries: 0 rejects the file naming both lines
   *  (the default), 1 sums them. */
  int sum_duplicates;
} halo_mm_options;

halo_mm_options halo_mm_options_default(void);

/**
 * Read a Matrix Market file: "coordinate" format; field real, integer or
 * pattern (entries 1.0); symmetry general, symmetric or skew-symmetric
 * (the mirror entries are added; a symmetric file may store either triangle,
 * a skew-symmetric one must have no diagonal entries). Not collective.
 *
 * Errors are HALO_ERR_IO (cannot open or read) or HALO_ERR_FORMAT with the
 * line and the problem: bad header, wrong size line, too few or too many
 * entries, an index out of range, a malformed number, a duplicate entry.
 *
 * @param path   file name
 * @param opts   options, or NULL for the defaults
 * @param A      the whole matrix (row_begin = 0, row_end = n_rows)
 */
halo_status halo_mm_read(const char *path, const halo_mm_options *opts, halo_csr *A);

/** Write @p A (whole matrix, row_begin = 0) as "coordinate real general". */
halo_status halo_mm_write(const char *path, const halo_csr *A);

/* ---- generators --------------------------------------------------------- */

/** Families of generated matrices. */
typedef enum {
  HALO_GEN_LAP2D = 0,    /**< 2-D 5-point Laplacian on an n x n grid */
  HALO_GEN_LAP3D = 1,    /**< 3-D 7-point Laplacian on an n^3 grid */
  HALO_GEN_LAP3D27 = 2,  /**< 3-D 27-point Laplacian on an n^3 grid */
  HALO_GEN_IRREGULAR = 3 /**< random irregular n x n matrix with a few dense rows and columns */
} halo_gen_kind;

/** A generated matrix: kind, size parameter and seed. */
typedef struct {
  halo_gen_kind kind;
  int64_t n; /**< grid points per dimension (Laplacians) or rows (irregular) */
  uint64_t seed;
} halo_gen;

/** Parse "lap2d:N", "lap3d:N", "lap3d27:N" or "irregular:N,SEED"
 *  (SEED optional, default 1). */
halo_status halo_gen_parse(const char *spec, halo_gen *gen);

/** Global size of a generated matrix. */
halo_status halo_gen_size(const halo_gen *gen, int64_t *n_rows_p, int64_t *n_cols_p);

/** Row offsets of rows [row_begin, row_end): row_ptr[0] = 0, row_ptr[i+1] -
 *  row_ptr[i] the stored entries of row row_begin+i (row_end-row_begin+1
 *  entries), without making the entries. */
halo_status halo_gen_row_ptr(const halo_gen *gen, int64_t row_begin, int64_t row_end,
                             int64_t *row_ptr);

/** Rows [row_begin, row_end) of a generated matrix; every rank can make its
 *  own rows. Entries are sorted by column. */
halo_status halo_gen_rows(const halo_gen *gen, int64_t row_begin, int64_t row_end, halo_csr *A);

/** The name of a generated matrix, as the spec it parses from. */
void halo_gen_name(const halo_gen *gen, char *buf, size_t len);

/* ---- row partitions ----------------------------------------------------- */

typedef enum {
  HALO_PARTITION_ROWS = 0, /**< row_begin[r] = floor(r*N/P) */
  HALO_PARTITION_NNZ = 1   /**< balanced stored entries (rows stay whole) */
} halo_partition_kind;

halo_status halo_partition_from_name(const char *name, halo_partition_kind *kind_p);
const char *halo_partition_name(halo_partition_kind kind);

/** row_begin[0..P]: contiguous rows balanced by count. */
halo_status halo_partition_rows(int64_t n_rows, int P, int64_t *row_begin);

/** row_begin[0..P]: contiguous rows balanced by stored entries, given the
 *  global row offsets (n_rows+1 entries). Rank r gets the rows whose first
 *  entry falls in [r*nnz/P, (r+1)*nnz/P). */
halo_status halo_partition_nnz(int64_t n_rows, const int64_t *row_ptr, int P, int64_t *row_begin);

/** row_begin[0..P] of a partition of kind @p kind over the ranks r with
 *  holds_rows[r] != 0 only (NULL: every rank); the others get no rows: they
 *  take part in the exchange as communication helpers (the Split strategy
 *  spreads a node's inter-node messages over them). row_ptr: the global row
 *  offsets, needed by HALO_PARTITION_NNZ only. HALO_ERR_INVALID_ARG when no
 *  rank holds rows. */
halo_status halo_partition_compute(halo_partition_kind kind, int64_t n_rows, const int64_t *row_ptr,
                                   int P, const int *holds_rows, int64_t *row_begin);

/* ---- distribution ------------------------------------------------------- */

/**
 * Distribute a matrix held whole on @p root: rank r receives rows
 * [row_begin[r], row_begin[r+1]). Collective. Transfers of any size are split
 * into messages MPI can count.
 *
 * @param global     the whole matrix, on root only (ignored elsewhere)
 * @param row_begin  P+1 entries, the same on every rank
 * @param local      this rank's rows
 */
halo_status halo_csr_scatter(MPI_Comm comm, int root, const halo_csr *global,
                             const int64_t *row_begin, halo_csr *local);

/**
 * Read a Matrix Market file on @p root, partition it and distribute it.
 * Collective; a read error on root is returned on every rank with root's
 * message.
 *
 * @param holds_rows   P flags, the same on every rank: the ranks that get rows
 *                     (halo_partition_compute); NULL: every rank
 * @param row_begin_p  the partition, P+1 entries (free with halo_io_free)
 * @param global_p     if not NULL, on root the whole matrix is kept here (for
 *                     a serial reference); elsewhere it is zeroed
 */
halo_status halo_mm_read_distributed(MPI_Comm comm, int root, const char *path,
                                     const halo_mm_options *opts, halo_partition_kind part,
                                     const int *holds_rows, int64_t **row_begin_p, halo_csr *local,
                                     halo_csr *global_p);

/**
 * Generate a matrix in parallel: every rank makes its own rows of the
 * partition. Collective. holds_rows as in halo_mm_read_distributed().
 */
halo_status halo_gen_distributed(MPI_Comm comm, const halo_gen *gen, halo_partition_kind part,
                                 const int *holds_rows, int64_t **row_begin_p, halo_csr *local);

/** Free memory returned by the io functions (row_begin arrays). */
void halo_io_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* HALO_IO_H */
