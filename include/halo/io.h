/**
 * @file
 * halo input: Matrix Market reader, matrix generators, row partitions, the
 * distribution of a matrix read on one rank, and the binary CSR format
 * (.hcsr) read in parallel. Used by the `halo` driver; available to any
 * program that wants the same inputs. */
#ifndef HALO_IO_H
#define HALO_IO_H

#include "halo.h"

#ifdef __cplusplus
extern "C" {
#endif

HALO_EXPORT_BEGIN

/** Rows [row_begin, row_end) of an n_rows x n_cols matrix in CSR form with
 *  global column ids (0-based), sorted by column within each row. */
typedef struct {
  /** @var n_rows
   *  global sizes: rows */
  int64_t n_rows, n_cols; /**< global sizes: columns */
  /** @var row_begin
   *  the first row held */
  int64_t row_begin, row_end; /**< one past the last row held */
  int64_t *row_ptr;           /**< row_end-row_begin+1 offsets */
  int64_t *col_ids; /**< global column ids of the entries, row_ptr[row_end-row_begin] of them */
  double *values;   /**< the entries' values, as many */
} halo_csr;

/** Free the arrays of @p A and zero it; NULL-safe.
 *  @param A  the matrix, or NULL */
void halo_csr_free(halo_csr *A);

/** Number of stored entries.
 *  @param A  the matrix
 *  @return row_ptr[row_end-row_begin] */
int64_t halo_csr_nnz(const halo_csr *A);

/* ---- progress ----------------------------------------------------------- */

/** What the numbers of a progress report count. */
typedef enum {
  HALO_PROGRESS_BYTES = 0,   /**< bytes of a file */
  HALO_PROGRESS_ENTRIES = 1, /**< stored entries of a matrix */
  HALO_PROGRESS_ROWS = 2     /**< rows of a matrix */
} halo_progress_unit;

/**
 * A progress report: @p done of @p total units of the current stage of a long
 * io call. @p stage is one of "reading" (bytes of a file), "parsing" (bytes
 * of a Matrix Market file), "writing" (bytes of an .hcsr file, entries of a
 * Matrix Market one), "counting" and "generating" (rows of a generated
 * matrix). @p data is the pointer given to halo_io_set_progress(). The
 * function must not call halo functions.
 */
typedef void (*halo_progress_fn)(void *data, const char *stage, halo_progress_unit unit,
                                 int64_t done, int64_t total);

/**
 * Report the progress of this thread's io calls to @p fn, or to nobody (NULL,
 * the default): halo_mm_read(), halo_mm_write(), halo_hcsr_read(),
 * halo_hcsr_write(), halo_gen_row_ptr() and halo_gen_rows(), and what the
 * calling rank does in halo_mm_read_distributed() (the read, on root),
 * halo_hcsr_read_distributed() (its own rows) and halo_gen_distributed().
 * Each stage is reported first with done = 0, then about every 4 MiB, or
 * every 64 Ki rows or entries, and last with done = total (unless the call
 * fails). Without a function the readers pay one comparison per line or
 * block. The library never prints: the halo driver draws these reports as a
 * progress line. Not collective; the setting is per thread.
 *
 * @param fn    the function, or NULL
 * @param data  passed to @p fn as is
 */
void halo_io_set_progress(halo_progress_fn fn, void *data);

/* ---- limits of the readers ---------------------------------------------- */

/**
 * @file
 * @par Limits of the readers
 * A file's size line or header may declare far more rows and columns than it
 * has entries: a 77-byte Matrix Market file may declare 2^31 rows, whose row
 * pointers alone take 17 GB. The readers (halo_mm_read, halo_hcsr_read and
 * their distributed forms) refuse, before allocating by the sizes, a file
 * whose rows and columns need more than HALO_INPUT_LIMIT bytes beyond its
 * entries, counting 8 bytes a row (row pointers), 8 a column (vectors) and
 * 16 an entry (column index and value): rows and columns that entries fill
 * are always accepted, and what a file makes halo allocate grows with its
 * length. HALO_INPUT_LIMIT: bytes, with an optional k, M, G or T (powers of
 * 1000), or "none"; default 2^30 bytes (1.07 GB: about 134 million empty
 * rows or columns). The error, HALO_ERR_OUT_OF_RANGE, names the sizes, the
 * file's length, the bytes needed and the limit.
 */

/* ---- Matrix Market ------------------------------------------------------ */

/** Options of the Matrix Market reader. */
typedef struct {
  /** Repeated (row, column) entries: 0 rejects the file naming both lines
   *  (the default), 1 sums them. */
  int sum_duplicates;
} halo_mm_options;

/** The default options of the Matrix Market reader.
 *  @return sum_duplicates 0 */
halo_mm_options halo_mm_options_default(void);

/**
 * Read a Matrix Market file: "coordinate" format; field real, integer or
 * pattern (entries 1.0); symmetry general, symmetric or skew-symmetric
 * (the mirror entries are added; a symmetric file may store either triangle,
 * a skew-symmetric one must have no diagonal entries). Not collective.
 *
 * Errors are HALO_ERR_IO (cannot open or read) or HALO_ERR_FORMAT with the
 * line and the problem: bad header, wrong size line, too few or too many
 * entries, an index out of range, a malformed number, a duplicate entry;
 * HALO_ERR_OUT_OF_RANGE for sizes past the readers' limit (below), before
 * anything is allocated by them.
 *
 * @param path   file name
 * @param opts   options, or NULL for the defaults
 * @param A      the whole matrix (row_begin = 0, row_end = n_rows)
 * @return HALO_SUCCESS or one of the errors above
 */
halo_status halo_mm_read(const char *path, const halo_mm_options *opts, halo_csr *A);

/** Write @p A (whole matrix, row_begin = 0) as "coordinate real general".
 *  @param path  file name
 *  @param A     the whole matrix
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message);
 *          HALO_ERR_IO when the file cannot be written */
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
  halo_gen_kind kind; /**< the family */
  int64_t n;          /**< grid points per dimension (Laplacians) or rows (irregular) */
  uint64_t seed;      /**< the random seed (irregular) */
} halo_gen;

/** Parse "lap2d:N", "lap3d:N", "lap3d27:N" or "irregular:N,SEED"
 *  (SEED optional, default 1).
 *  @param spec  the text
 *  @param gen   the matrix it names
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG naming what does not parse */
halo_status halo_gen_parse(const char *spec, halo_gen *gen);

/** Global size of a generated matrix.
 *  @param gen       the matrix
 *  @param n_rows_p  its rows
 *  @param n_cols_p  its columns
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_gen_size(const halo_gen *gen, int64_t *n_rows_p, int64_t *n_cols_p);

/** Row offsets of rows [row_begin, row_end): row_ptr[0] = 0, row_ptr[i+1] -
 *  row_ptr[i] the stored entries of row row_begin+i (row_end-row_begin+1
 *  entries), without making the entries.
 *  @param gen        the matrix
 *  @param row_begin  the first row
 *  @param row_end    one past the last row
 *  @param row_ptr    row_end-row_begin+1 entries, filled
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_gen_row_ptr(const halo_gen *gen, int64_t row_begin, int64_t row_end,
                             int64_t *row_ptr);

/** Rows [row_begin, row_end) of a generated matrix; every rank can make its
 *  own rows. Entries are sorted by column.
 *  @param gen        the matrix
 *  @param row_begin  the first row
 *  @param row_end    one past the last row
 *  @param A          the rows (free with halo_csr_free)
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_gen_rows(const halo_gen *gen, int64_t row_begin, int64_t row_end, halo_csr *A);

/** The name of a generated matrix, as the spec it parses from.
 *  @param gen  the matrix
 *  @param buf  where the name goes
 *  @param len  room in buf, in characters (truncated to len-1) */
void halo_gen_name(const halo_gen *gen, char *buf, size_t len);

/* ---- row partitions ----------------------------------------------------- */

/** How the rows of a matrix are split among ranks (halo_partition_compute()). */
typedef enum {
  HALO_PARTITION_ROWS = 0, /**< row_begin[r] = floor(r*N/P) */
  HALO_PARTITION_NNZ = 1,  /**< balanced stored entries (rows stay whole) */
  HALO_PARTITION_METIS = 2 /**< graph partition by METIS, rows renumbered (halo_partition_metis) */
} halo_partition_kind;

/** Partition kind from its name. Not collective.
 *  @param name    "rows", "nnz" or "metis"
 *  @param kind_p  the kind (set on success only)
 *  @return HALO_ERR_INVALID_ARG for an unknown name */
halo_status halo_partition_from_name(const char *name, halo_partition_kind *kind_p);
/** Name of a partition kind ("rows", "nnz", "metis").
 *  @param kind  a partition kind
 *  @return its name, "unknown" for a value that is none */
const char *halo_partition_name(halo_partition_kind kind);

/** row_begin[0..P]: contiguous rows balanced by count.
 *  @param n_rows     rows of the matrix
 *  @param P          ranks
 *  @param row_begin  P+1 entries, filled
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_partition_rows(int64_t n_rows, int P, int64_t *row_begin);

/** row_begin[0..P]: contiguous rows balanced by stored entries, given the
 *  global row offsets (n_rows+1 entries). Rank r gets the rows whose first
 *  entry falls in [r*nnz/P, (r+1)*nnz/P).
 *  @param n_rows     rows of the matrix
 *  @param row_ptr    the global row offsets
 *  @param P          ranks
 *  @param row_begin  P+1 entries, filled
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_partition_nnz(int64_t n_rows, const int64_t *row_ptr, int P, int64_t *row_begin);

/** row_begin[0..P] of a partition of kind @p kind over the ranks r with
 *  holds_rows[r] != 0 only (NULL: every rank); the others get no rows: they
 *  take part in the exchange as communication helpers (the Split strategy
 *  spreads a node's inter-node messages over them). row_ptr: the global row
 *  offsets, needed by HALO_PARTITION_NNZ only. HALO_ERR_INVALID_ARG when no
 *  rank holds rows, and for HALO_PARTITION_METIS, which renumbers the rows
 *  (halo_partition_metis, halo_csr_distribute).
 *  @param kind        the partition
 *  @param n_rows      rows of the matrix
 *  @param row_ptr     the global row offsets, or NULL
 *  @param P           ranks
 *  @param holds_rows  P flags, or NULL
 *  @param row_begin   P+1 entries, filled
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_partition_compute(halo_partition_kind kind, int64_t n_rows, const int64_t *row_ptr,
                                   int P, const int *holds_rows, int64_t *row_begin);

/**
 * A graph partition of a square matrix held whole (row_begin = 0): the graph
 * of the pattern of A + A^T without its diagonal (row i and row j adjacent
 * when a_ij or a_ji is stored) is cut by METIS_PartGraphKway into one part per
 * rank r with holds_rows[r] != 0 (NULL: every rank), balancing the rows and
 * minimizing the edges cut; the k-th part goes to the k-th such rank. The
 * rows are then renumbered so that each rank's rows are contiguous, in their
 * original order within a rank: the distributed matrix is P A P^T
 * (halo_csr_permute). One part, a graph without edges and a matrix of no
 * more rows than parts are partitioned without METIS (by rows). Parts may be
 * empty. Not collective.
 *
 *  @param A          the whole matrix
 *  @param P          ranks
 *  @param holds_rows  P flags, or NULL
 * @param new_ids    n_rows entries: new_ids[i] is the index of original row i
 *                   (and column i) in the renumbered matrix
 * @param row_begin  P+1 entries: rank r gets new rows [row_begin[r], row_begin[r+1])
 * @return HALO_ERR_NOT_COMPILED in a build without METIS (HALO_ENABLE_METIS);
 *         HALO_ERR_UNSUPPORTED for a matrix that is not square;
 *         HALO_ERR_OUT_OF_RANGE when the graph exceeds METIS's idx_t;
 *         HALO_ERR_INVALID_ARG when no rank holds rows.
 */
halo_status halo_partition_metis(const halo_csr *A, int P, const int *holds_rows, int64_t *new_ids,
                                 int64_t *row_begin);

/**
 * B = P A P^T for a square matrix held whole: b[new_ids[i]][new_ids[j]] =
 * a_ij, sorted by column within each row. Not collective.
 *
 * @param A        the whole matrix
 * @param new_ids  a permutation of 0..n_rows-1 (checked)
 * @param B        the renumbered matrix (free with halo_csr_free)
 * @return HALO_ERR_INVALID_ARG for new_ids that is no permutation; HALO_SUCCESS, or the status
 *         of the failure (halo_last_error() gives its message)
 */
halo_status halo_csr_permute(const halo_csr *A, const int64_t *new_ids, halo_csr *B);

/** What a partition of a square matrix costs in communication. */
typedef struct {
  int64_t edge_cut; /**< edges of the graph of A + A^T (no diagonal) between two ranks */
  int64_t ghosts;   /**< communication volume: the entries of x each rank needs from the
                         others, summed over ranks (the ghosts of all ranks; 8 bytes each) */
  int64_t max_rows; /**< the most rows of one rank */
} halo_partition_quality;

/**
 * Measure a partition of a square matrix held whole: rank r holds the rows
 * (and entries of x) i with new_ids[i] in [row_begin[r], row_begin[r+1])
 * (new_ids NULL: the rows as they are). Not collective.
 * @param A          the whole matrix
 * @param new_ids    n_rows new indices, or NULL
 * @param P          ranks
 * @param row_begin  P+1 entries
 * @param q          the measures
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_partition_measure(const halo_csr *A, const int64_t *new_ids, int P,
                                   const int64_t *row_begin, halo_partition_quality *q);

/* ---- distribution ------------------------------------------------------- */

/**
 * Distribute a matrix held whole on @p root: rank r receives rows
 * [row_begin[r], row_begin[r+1]). Collective. Transfers of any size are split
 * into messages MPI can count.
 *
 * @param comm       the communicator
 * @param root       the rank that holds the matrix
 * @param global     the whole matrix, on root only (ignored elsewhere)
 * @param row_begin  P+1 entries, the same on every rank
 * @param local      this rank's rows
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message), on
 *         every rank
 */
halo_status halo_csr_scatter(MPI_Comm comm, int root, const halo_csr *global,
                             const int64_t *row_begin, halo_csr *local);

/**
 * Partition a matrix held whole on @p root and distribute it. Collective; an
 * error of root's partition is returned on every rank with root's message.
 * A contiguous partition (rows, nnz: halo_partition_compute) keeps the
 * numbering; HALO_PARTITION_METIS renumbers the rows and columns
 * (halo_partition_metis) and distributes P A P^T.
 *
 *  @param comm         the communicator
 *  @param root         the rank that holds the matrix
 * @param global       the whole matrix, on root only (ignored elsewhere)
 *  @param part         the partition kind
 * @param holds_rows   P flags, the same on every rank: the ranks that get
 *                     rows; NULL: every rank
 * @param row_begin_p  the partition in the distributed numbering, P+1
 *                     entries on every rank (free with halo_io_free)
 * @param new_ids_p    if not NULL: with METIS, on root, the new index of every
 *                     original row (n_rows entries; halo_io_free); otherwise NULL
 * @param orig_ids_p   if not NULL: with METIS, the original index of each of
 *                     this rank's rows (halo_io_free; NULL for a rank without
 *                     rows); otherwise NULL
 * @param local        this rank's rows, in the distributed numbering
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message), on
 *          every rank
 */
halo_status halo_csr_distribute(MPI_Comm comm, int root, const halo_csr *global,
                                halo_partition_kind part, const int *holds_rows,
                                int64_t **row_begin_p, int64_t **new_ids_p, int64_t **orig_ids_p,
                                halo_csr *local);

/**
 * Read a Matrix Market file on @p root, partition it and distribute it.
 * Collective; a read error on root is returned on every rank with root's
 * message.
 *
 *  @param comm         the communicator
 *  @param root         the rank that reads the file
 *  @param path         file name (read on root)
 *  @param opts         options of the reader, or NULL for the defaults
 *  @param part         the partition kind
 * @param holds_rows   P flags, the same on every rank: the ranks that get rows
 *                     (halo_partition_compute); NULL: every rank
 * @param row_begin_p  the partition, P+1 entries (free with halo_io_free)
 *  @param local        this rank's rows
 * @param global_p     if not NULL, on root the whole matrix is kept here (for
 *                     a serial reference); elsewhere it is zeroed
 *  @return the errors of halo_mm_read() and halo_csr_distribute(), on every rank
 */
halo_status halo_mm_read_distributed(MPI_Comm comm, int root, const char *path,
                                     const halo_mm_options *opts, halo_partition_kind part,
                                     const int *holds_rows, int64_t **row_begin_p, halo_csr *local,
                                     halo_csr *global_p);

/**
 * Generate a matrix in parallel: every rank makes its own rows of the
 * partition. Collective. holds_rows as in halo_mm_read_distributed().
 * @param comm         the communicator
 * @param gen          the matrix
 * @param part         the partition kind
 * @param holds_rows   P flags, or NULL
 * @param row_begin_p  the partition, P+1 entries (free with halo_io_free)
 * @param local        this rank's rows
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message), on
 *         every rank
 */
halo_status halo_gen_distributed(MPI_Comm comm, const halo_gen *gen, halo_partition_kind part,
                                 const int *holds_rows, int64_t **row_begin_p, halo_csr *local);

/* ---- binary CSR (.hcsr) ------------------------------------------------- */

/**
 * @file
 * @par The binary CSR format (.hcsr)
 * An .hcsr file holds one whole CSR matrix, little-endian, in four parts
 * (docs/input.md, "Binary CSR input", gives every byte):
 *
 * @code{.unparsed}
 *   offset  bytes  field
 *        0      8  magic "HALOCSR" and a zero byte
 *        8      4  version, uint32: 1
 *       12      4  flags, uint32: bit 0 set = 8-byte column indices (else 4);
 *                  the other bits are 0
 *       16      8  n_rows, int64
 *       24      8  n_cols, int64
 *       32      8  nnz, int64
 *       40      8  checksum of the row pointers, uint64
 *       48      8  checksum of the column indices, uint64
 *       56      8  checksum of the values, uint64
 *       64      8  FNV-1a 64 of bytes 0..63, uint64
 *       72         row pointers: n_rows+1 int64 (0 first, nnz last, never
 *                  decreasing)
 *                  column indices: nnz int32 or int64, 0-based, in [0,
 *                  n_cols), increasing within each row; then zero bytes
 *                  up to a multiple of 8
 *                  values: nnz IEEE-754 doubles, finite
 * @endcode
 *
 * The file is exactly as long as these parts. The checksum of a part of
 * elements e_0, e_1, ... (each read as an unsigned integer of its width) is
 * the sum modulo 2^64 of H(i, e_i) = mix(e_i XOR (i * 0x9e3779b97f4a7c15)),
 * with mix the finalizer of splitmix64; a sum, so that every rank adds up
 * the elements it reads and one MPI_Allreduce verifies the whole part.
 */

/** Options of the hcsr writer. */
typedef struct {
  /** Width of the column indices: 4 or 8 bytes; 0 (the default) takes 4
   *  when n_cols fits an int32, else 8. */
  int index_bytes;
} halo_hcsr_options;

/** The default options of the hcsr writer.
 *  @return index_bytes 0 */
halo_hcsr_options halo_hcsr_options_default(void);

/**
 * Write a whole matrix (row_begin = 0, row_end = n_rows) as an .hcsr file.
 * Not collective.
 *
 * Errors: HALO_ERR_INVALID_ARG for a matrix that is not whole, row pointers
 * that do not start at 0 or decrease, a column out of range or not
 * increasing within its row, a value that is not finite;
 * HALO_ERR_OUT_OF_RANGE for index_bytes 4 and more than INT32_MAX columns;
 * HALO_ERR_IO when the file cannot be written (a partial file is removed).
 *
 * @param path  file name
 * @param A     the whole matrix
 * @param opts  options, or NULL for the defaults
 * @return HALO_SUCCESS or one of the errors above
 */
halo_status halo_hcsr_write(const char *path, const halo_csr *A, const halo_hcsr_options *opts);

/**
 * Read a whole .hcsr file on the calling process. Not collective.
 *
 * Errors are HALO_ERR_IO (cannot open or read) or HALO_ERR_FORMAT with the
 * file name and the problem: truncated file, wrong magic, unsupported
 * version, unknown flags, bad header checksum, sizes that disagree with the
 * file's length, a bad checksum of a part, row pointers that do not start at
 * 0, decrease or do not end at nnz, a column index out of range (negative
 * ones included) or not increasing within its row, a value that is not
 * finite, non-zero padding; HALO_ERR_OUT_OF_RANGE for sizes past the
 * readers' limit ("limits of the readers" above).
 *
 * @param path  file name
 * @param A     the whole matrix (row_begin = 0, row_end = n_rows)
 * @return HALO_SUCCESS or one of the errors above
 */
halo_status halo_hcsr_read(const char *path, halo_csr *A);

/**
 * Read an .hcsr file in parallel: every rank reads its own rows with MPI-IO
 * (collective reads of its row pointers, column indices and values) and
 * checks them; the checksums are added over the ranks. Collective; an error
 * of any rank is returned on every rank with the lowest failing rank's
 * message (the errors of halo_hcsr_read(), and HALO_ERR_IO when the file
 * cannot be opened).
 *
 * The partition is that of halo_mm_read_distributed(): computed on @p root
 * (which reads the whole row pointers for HALO_PARTITION_NNZ) and broadcast.
 * HALO_PARTITION_METIS, which renumbers the rows, is refused
 * (HALO_ERR_INVALID_ARG): read the file whole with halo_hcsr_read() and
 * distribute it with halo_csr_distribute().
 *
 *  @param comm         the communicator
 *  @param root         the rank that computes the partition
 *  @param path         file name
 *  @param part         the partition kind (not HALO_PARTITION_METIS)
 * @param holds_rows   P flags: the ranks that get rows; NULL: every rank
 * @param row_begin_p  the partition, P+1 entries (free with halo_io_free)
 * @param local        this rank's rows
 * @param global_p     if not NULL, on root the whole matrix is read into it
 *                     as well (a second, serial read, for a serial
 *                     reference); elsewhere it is zeroed
 *  @return HALO_SUCCESS or one of the errors above, on every rank
 */
halo_status halo_hcsr_read_distributed(MPI_Comm comm, int root, const char *path,
                                       halo_partition_kind part, const int *holds_rows,
                                       int64_t **row_begin_p, halo_csr *local, halo_csr *global_p);

/**
 * Whether the file @p path begins with the magic of an .hcsr file. Not
 * collective. HALO_ERR_IO when the file cannot be opened. A file that is
 * neither regular nor a directory (a pipe, a device) is not read, whose
 * first bytes would be gone: 0 (read it as Matrix Market).
 * @param path       file name
 * @param is_hcsr_p  1 for an .hcsr file, else 0
 * @return HALO_SUCCESS, HALO_ERR_IO
 */
halo_status halo_hcsr_probe(const char *path, int *is_hcsr_p);

/** Free memory returned by the io functions (row_begin arrays).
 *  @param p  the memory, or NULL */
void halo_io_free(void *p);

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif /* HALO_IO_H */
