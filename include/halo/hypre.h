/**
 * @file
 * halo for hypre: the halo exchanges of hypre's ParCSR matrices (the
 * products, the smoothers and the transpose products of BoomerAMG and the
 * Krylov solvers) through halo plans.
 *
 * Two routes:
 *  - Interposition, for an unmodified hypre program: libhalo_hypre.so
 *    defines hypre's communication-handle functions
 *    (hypre_ParCSRCommHandleCreate, _Create_v2, _Destroy) and the package
 *    functions (hypre_MatvecCommPkgCreate, hypre_MatvecCommPkgDestroy), which
 *    hypre calls through the dynamic linker. Started with
 *    LD_PRELOAD=.../libhalo_hypre.so, or by linking -lhalo_hypre before
 *    -lHYPRE, it makes one halo plan per communication package of a matrix
 *    (at the package's first exchange of values, collectively) and runs that
 *    package's forward (job 1) and reverse (job 2) exchanges through it;
 *    those of several vectors at once (a product with a multivector, in host
 *    memory) through a second plan of the package whose entries are units of
 *    k doubles; everything else (integer exchanges of the set-up, packages
 *    that belong to no matrix) goes to hypre's own functions.
 *    Environment variables (the same on every rank):
 *    @code{.unparsed}
 *      HALO_HYPRE=0            hand everything to hypre (halo off)
 *      HALO_STRATEGY           standard (default), 2step, 3step, split, auto
 *                              (each package's plan the one of lowest modeled
 *                              time with HALO_PARAMS: a choice per level)
 *      HALO_TRANSPORT          host (the default for host memory)
 *      HALO_MESSAGE_CAP        split's message cap in bytes
 *      HALO_RANKS_PER_NODE     virtual nodes of K consecutive ranks
 *      HALO_PARAMS             the model's machine parameters (auto)
 *      HALO_HYPRE_VIEW=1       at MPI_Finalize, rank 0 prints one line per
 *                              plan: AMG level, matrix, rows, nonzeros, ranks
 *                              with rows, messages and bytes per phase,
 *                              inter-node bytes, modeled seconds, strategy,
 *                              and how many exchanges went through halo
 *    @endcode
 *  - The API below, for programs that call halo themselves.
 *
 * The library is built against the hypre headers of the libHYPRE it loads
 * into, and refuses (hands everything to hypre, with a message) a libHYPRE of
 * another version, or of other integer sizes (hypre's plain, bigint and
 * mixed-int builds: libhalo_hypre, libhalo_hypre64 and libhalo_hypre64m).
 */
#ifndef HALO_HYPRE_H
#define HALO_HYPRE_H

#include <stdio.h>

#include <_hypre_parcsr_mv.h>

#include "halo.h"

#ifdef __cplusplus
extern "C" {
#endif

HALO_EXPORT_BEGIN

/**
 * An exchange-only plan of a hypre communication package, a drop-in for
 * hypre's communication handle: the forward exchange moves hypre's packed
 * send buffer (send_map_starts[num_sends] values, the i-th for the rank of
 * its send segment) into the receive buffer (recv_vec_starts[num_recvs]
 * values, in hypre's receive order): x_local = the send buffer, x_ghost = the
 * receive buffer (job 1). The reverse exchange with x_local zeroed gives
 * hypre's job 2 (each entry of the send buffer receives exactly one value,
 * so the sum is that value, with every strategy). A package hypre has set
 * for k vectors at once (num_components k: its starts are k times the
 * entries) gives the same plan, in entries: its buffers then hold k values an
 * entry, moved by halo_exchange_begin_unit() with {HALO_TYPE_DOUBLE, k} on a
 * plan made with the setting exec.unit_max_bytes of 8 k or more. Collective
 * over the package's communicator.
 * @param comm_pkg  the package
 * @param opts      options, or NULL for the defaults
 * @param plan_p    the new plan (set on success only)
 * @return the errors of halo_plan_create_from_lists(), on every rank
 */
halo_status halo_hypre_plan_create_from_comm_pkg(hypre_ParCSRCommPkg *comm_pkg,
                                                 const halo_plan_options *opts,
                                                 halo_plan *plan_p);

/**
 * The plan of a ParCSR matrix (square or rectangular: P, R): diag, offd,
 * col_map_offd and the row and column starts, for halo_spmv(). Collective
 * over the matrix's communicator.
 * @param A       the matrix
 * @param opts    options, or NULL for the defaults
 * @param plan_p  the new plan (set on success only)
 * @return the errors of halo_matrix_create_split() and halo_plan_create(), on
 *         every rank
 */
halo_status halo_hypre_plan_create(hypre_ParCSRMatrix *A, const halo_plan_options *opts,
                                   halo_plan *plan_p);

/**
 * y = alpha A x + beta y (hypre_ParCSRMatrixMatvec's signature and result,
 * bit for bit) with the exchange through halo's plan of A's communication
 * package (made at the first product, collectively; the one the
 * interposition uses), without allocating per product. Device memory,
 * multivectors, and halo off go to hypre's own product. Collective.
 *  @param alpha  the factor of A x
 *  @param A      the matrix
 *  @param x      the vector x
 *  @param beta   the factor of y
 *  @param y      the vector y
 * @return 0, or hypre's error flag (a NULL argument, sizes that do not fit,
 *         a failed exchange: then also a message on the standard error)
 */
HYPRE_Int halo_hypre_matvec(HYPRE_Complex alpha, hypre_ParCSRMatrix *A, hypre_ParVector *x,
                            HYPRE_Complex beta, hypre_ParVector *y);

/** y = alpha A^T x + beta y (hypre_ParCSRMatrixMatvecT's), the reverse
 *  exchange through the same plan; as halo_hypre_matvec().
 *  @param alpha  the factor of A^T x
 *  @param A      the matrix
 *  @param x      the vector x (A's rows)
 *  @param beta   the factor of y
 *  @param y      the vector y (A's columns)
 *  @return as halo_hypre_matvec() */
HYPRE_Int halo_hypre_matvec_t(HYPRE_Complex alpha, hypre_ParCSRMatrix *A, hypre_ParVector *x,
                              HYPRE_Complex beta, hypre_ParVector *y);

/**
 * Turn the interposition's routing through halo on (1) or off (0) for the
 * exchanges that start from now on; off, hypre's own functions run (and are
 * still counted and timed for the report). Every rank must make the same
 * calls. The initial state is on, unless HALO_HYPRE=0.
 * @param on  1: through halo, 0: hypre's own functions
 */
void halo_hypre_set_enabled(int on);
/** Whether exchanges go through halo now.
 *  @return 1 when on, else 0 */
int halo_hypre_enabled(void);

/**
 * The plan options of the interposition's plans (strategy, transport,
 * message_cap, ranks_per_node, params, ...), in place of those of the
 * environment (HALO_STRATEGY, ...): every plan made so far is destroyed and
 * each package gets a new one, with these options, at its next exchange.
 * memory and stream are not taken: each package has a plan for each memory
 * its exchanges come in, host memory or (a CUDA build of hypre and of halo)
 * device memory, ordered on hypre's compute stream; a transport of the
 * other memory's kind is replaced there by host (host memory) or staged
 * (device memory). Every rank must make the same call, with no exchange in
 * flight. NULL: the options of the environment again.
 *  @param opts  the options, or NULL
 * @return HALO_ERR_INVALID_ARG for options a plan cannot take (the message
 *         says which), HALO_ERR_UNSUPPORTED when halo is off for good (a
 *         bad variable, another hypre version: the message says why)
 */
halo_status halo_hypre_set_options(const halo_plan_options *opts);

/** What the report knows of one package of a matrix (halo_hypre_records()). */
typedef struct {
  int setup;               /**< the AMG set-up (1, 2, ...) of its matrix, 0: none */
  int level;               /**< its matrix's level in that hierarchy, -1: none */
  char matrix;             /**< 'A', 'P', 'R' (in the hierarchy), '?' (none) */
  /** @var rows
   *  global size of its matrix: rows */
  int64_t rows, cols;      /**< global size of its matrix: columns */
  int64_t nonzeros;        /**< stored entries of its matrix, all ranks */
  int64_t ranks_with_rows; /**< ranks with rows of its matrix */
  int planned;             /**< 1: a halo plan was made (the fields below are its) */
  halo_stats stats;        /**< the plan's statistics */
  int64_t messages;        /**< the plan's messages, all phases (halo_plan_phase_stats()) */
  int64_t inter_node_bytes; /**< the plan's bytes between nodes, all phases */
  double modeled;          /**< the plan's modeled seconds (halo_plan_model) */
  char plan[256];          /**< halo_plan_describe(), or why it was left to hypre */
  /** @var forward
   *  forward exchanges through halo since the last reset */
  int64_t forward, reverse; /**< reverse exchanges through halo since the last reset */
  int64_t left_to_hypre;   /**< exchanges of values left to hypre since then */
  double seconds;          /**< time in its exchange calls (create and destroy of the
                                handles, both roads), the most of any rank */
  double plan_seconds;     /**< time to make its plan, the most of any rank */
  int64_t multivector;     /**< of forward and reverse: exchanges of several vectors at once
                                (a product with a multivector: units of k doubles) */
  int multivector_k;       /**< the most vectors of one of those */
} halo_hypre_record;

/**
 * The records of the packages seen (the rows of halo_hypre_view()), on every
 * rank, in the order the packages were made. Collective over comm (the
 * communicator of the matrices); free with halo_hypre_records_free().
 * @param comm       the communicator
 * @param records_p  the records
 * @param n_p        how many
 * @return HALO_ERR_INCONSISTENT when the ranks saw different packages
 */
halo_status halo_hypre_records(MPI_Comm comm, halo_hypre_record **records_p, int *n_p);
/** Free the array of halo_hypre_records(); NULL-safe, sets *records_p to NULL.
 *  @param records_p  the array, or a pointer to NULL */
void halo_hypre_records_free(halo_hypre_record **records_p);

/**
 * Print the per-plan report (the HALO_HYPRE_VIEW table) of the packages
 * seen since the last reset, on rank 0 of comm, to out. Collective over comm
 * (times are the most of any rank).
 * @param comm  the communicator
 * @param out   the stream (read on rank 0)
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message), on
 *         every rank
 */
halo_status halo_hypre_view(MPI_Comm comm, FILE *out);

/** Forget the counts and times of the report (the plans stay). */
void halo_hypre_view_reset(void);

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif /* HALO_HYPRE_H */
