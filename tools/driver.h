/* Shared pieces of the `halo` driver: options, matrix input, the input
 * vector, and the serial reference product. */
#ifndef HALO_TOOLS_DRIVER_H
#define HALO_TOOLS_DRIVER_H

#include "halo.h"
#include "halo/io.h"

/* The last line of every command's --help: where the user's guide is. */
#define HALO_TOOL_GUIDE                                                                            \
  "\nguide: docs/README.md in halo's source (API reference: CMake target doc)\n"

/* Exit codes of the driver. */
enum {
  EXIT_OK = 0,
  EXIT_ERROR = 1, /* bad input or a failure of the library */
  EXIT_USAGE = 2, /* bad command line */
  EXIT_CHECK = 3  /* --check found an error above --tol */
};

/* ---- command line ---- */

typedef struct {
  int argc, i;
  char **argv;
  const char *cmd;   /* "spmv" */
  const char *value; /* value of the option just matched */
  int rank;
} args_t;

/* Matches "--name VALUE" or "--name=VALUE" at the current argument; sets
 * a->value. Returns 1 if matched, 0 if not, -1 on a missing value. */
int args_take(args_t *a, const char *name);
/* Matches a flag "--name". */
int args_flag(args_t *a, const char *name);
/* Parse numbers; print a usage error on rank 0 and return 0 on failure. */
int args_int(args_t *a, const char *name, int64_t lo, int64_t hi, int64_t *v);
int args_double(args_t *a, const char *name, double lo, double *v);
/* Print "halo CMD: MSG" on rank 0 (to stderr). */
/* The median of n values (sorts them). */
double driver_median(double *v, int n);

void driver_error(int rank, const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A bad command line: "halo CMD: MSG (see halo CMD --help)" on rank 0. */
void args_error(const args_t *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- matrix input ---- */

typedef struct {
  const char *matrix_path; /* --matrix */
  const char *gen_spec;    /* --gen */
  halo_partition_kind partition;
  int sum_duplicates;
  int helpers;        /* --helpers H: of each node's ranks, the last H/(H+1) get no rows */
  int ranks_per_node; /* the plan's node layout (0: nodes of MPI or HALO_RANKS_PER_NODE) */
} input_opts;

/* Where the report of halo spmv and halo simulate goes. */
typedef struct {
  const char *json_path; /* --json FILE */
  const char *csv_path;  /* --csv FILE */
  int quiet;             /* --quiet: no table, no progress line */
} output_opts;

/* The options halo spmv and halo simulate share: --matrix, --gen,
 * --partition, --helpers, --strategy, --message-cap, --json, --csv,
 * --no-dedup, --sum-duplicates, --quiet. Returns 1 if the current argument
 * is one of them (taken), 0 if not, -1 on a usage error (printed on rank 0). */
int args_common(args_t *a, input_opts *in, halo_plan_options *opts, const char **strategy_name,
                output_opts *out);

typedef struct {
  char name[256];
  int is_gen;
  halo_gen gen;
  int64_t n_rows, n_cols, nnz;
  int64_t *row_begin; /* P+1: rows of each rank */
  int64_t *col_begin; /* P+1: entries of x of each rank */
  halo_csr local;     /* this rank's rows */
  halo_csr global;    /* the whole matrix on rank 0 (file input with keep_global) */
  /* --partition metis: rows and columns renumbered so that each rank's are
   * contiguous; local and row_begin are in the new numbering */
  int64_t *orig_ids; /* the original index of each of this rank's rows (NULL: not renumbered) */
  int64_t *new_ids;  /* rank 0 (keep_global): the new index of every original row */
  int measured;      /* metis: the partition against the contiguous one, on every rank */
  int streamed;      /* simulate: a generated matrix never held whole (its rows made rank by
                        rank by halo_sim_create_gen); global is empty */
  halo_partition_quality quality, contiguous;
} input_matrix;

/* Which ranks get rows: with H helpers per row-holding rank, the first
 * max(1, n/(H+1)) ranks of each node of n ranks (nodes of ranks_per_node
 * consecutive ranks, else of HALO_RANKS_PER_NODE, else of MPI). holds: P
 * flags, the same on every rank. Collective. */
halo_status input_holds_rows(MPI_Comm comm, int helpers, int ranks_per_node, int *holds);

/* Whether --matrix FILE is read as .hcsr: its name ends in .hcsr, or it
 * begins with hcsr's magic (else it is Matrix Market). Not collective. */
int input_is_hcsr(const char *path);

/* Collective: read (rank 0) and distribute, or read .hcsr in parallel, or
 * generate in parallel; with progress lines (progress.h). */
halo_status input_load(MPI_Comm comm, const input_opts *o, int keep_global, input_matrix *M);
void input_free(input_matrix *M);

/* ---- memory, before allocating (memory.c) ---- */

/* Where a command holds its matrix: each rank its rows (spmv, amg), or one
 * process all of it (convert, simulate). */
enum { INPUT_DISTRIBUTED = 0, INPUT_WHOLE = 1, INPUT_STREAMED = 2 };
/* (INPUT_STREAMED: a generated matrix made a block of rows at a time on one
 * process, the simulator's; what the patterns need is checked as they grow,
 * against input_memory_share.) */

/* This rank's share of its node's physical memory, in bytes (0: unknown).
 * Collective over comm. */
double input_memory_share(MPI_Comm comm);

/* Whether the generated matrix of --gen (other inputs pass) fits: the bytes
 * rank 0 needs at least (its rows, or the whole matrix, and what the command
 * adds: keep_global for the check's vectors, sim_ranks simulated ranks)
 * against its share of its node's physical memory; if not, why (a message
 * for "halo CMD: ..."). Collective over comm: the same answer on every rank. */
int input_check_memory(MPI_Comm comm, const input_opts *o, int layout, int keep_global,
                       int64_t sim_ranks, char *why, size_t len);

/* halo simulate: whether the ranks that would hold rows (P ranks on nodes of
 * K, --helpers) are at most the matrix's rows; if not, why. */
int input_check_ranks(const input_opts *o, int64_t n_rows, int64_t P, int64_t K, char *why,
                      size_t len);

/* The input vector: x[j], a function of the global index alone. */
double input_x(int64_t j);

/* The original index of column j of the distributed matrix, j among this
 * rank's entries of x starting at col_begin (the identity unless renumbered). */
int64_t input_orig_col(const input_matrix *M, int64_t col_begin, int64_t j);

/* ---- check against the serial reference ---- */

/* Collective: gather y (this rank's rows) on rank 0, compute the reference
 * product there from the original matrix, and return on every rank the
 * largest entrywise error |y_i - ref_i| / sum_j |a_ij x_j|. */
halo_status check_spmv(MPI_Comm comm, const input_matrix *M, const double *y, double *err_p);

/* Subcommands. */
int cmd_spmv(int argc, char **argv, MPI_Comm comm);
int cmd_simulate(int argc, char **argv, MPI_Comm comm);
int cmd_params(int argc, char **argv, MPI_Comm comm);
int cmd_convert(int argc, char **argv, MPI_Comm comm);
int cmd_amg(int argc, char **argv, MPI_Comm comm); /* with hypre (HALO_TOOL_AMG) */

#endif
