/* halo: node-aware halo exchange and distributed SpMV.
 *
 * One header for users. Every function returns a halo_status (0 on success, a
 * stable negative code on failure); halo_last_error() gives the detailed
 * message of the last failure on the calling thread. Handles are opaque;
 * create(..., &out) sets *out only on success and destroy(&h) is NULL-safe
 * and zeroes the handle.
 *
 * Collective functions say so. A collective function fails on every rank of
 * the communicator together, with the same status and the message of the
 * lowest failing rank ("rank 3: ..."), so that no rank is left waiting.
 */
#ifndef HALO_H
#define HALO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "halo/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/** Status codes. The numeric values are stable across releases. */
typedef enum {
  HALO_SUCCESS = 0,
  HALO_ERR_INVALID_ARG = -1,   /**< a NULL pointer, a negative size, an unknown name */
  HALO_ERR_OUT_OF_MEMORY = -2, /**< an allocation failed */
  HALO_ERR_MPI = -3,           /**< an MPI call failed */
  HALO_ERR_IO = -4,            /**< a file could not be opened, read or written */
  HALO_ERR_FORMAT = -5,        /**< a file is malformed */
  HALO_ERR_INCONSISTENT = -6,  /**< ranks disagree: row ranges, sizes, options */
  HALO_ERR_NOT_COMPILED = -7,  /**< the feature needs a component this build lacks */
  HALO_ERR_UNSUPPORTED = -8,   /**< valid request this version does not handle */
  HALO_ERR_STATE = -9,         /**< call out of order: end without begin, begin twice */
  HALO_ERR_INTERNAL = -10,     /**< a consistency check of the library failed */
  HALO_ERR_CUDA = -11,         /**< a CUDA runtime call failed */
  HALO_ERR_CUSPARSE = -12,     /**< a cuSPARSE call failed */
  HALO_ERR_NCCL = -13,         /**< an NCCL call failed */
  HALO_ERR_OUT_OF_RANGE = -14  /**< an index or count exceeds what the format or type holds */
} halo_status;

/** Short description of a status code ("invalid argument"); never NULL. */
const char *halo_status_string(halo_status status);

/** Detailed message of the last failure on the calling thread ("" if none). */
const char *halo_last_error(void);

/** Library version as "major.minor.patch". */
const char *halo_version(void);

/* ------------------------------------------------------------------------ */
/* Enumerations and their names                                             */
/* ------------------------------------------------------------------------ */

/** Where the arrays handed to the library live. Never guessed from a pointer. */
typedef enum {
  HALO_MEMORY_AUTO = -1, /**< plan option only: where the matrix is */
  HALO_MEMORY_HOST = 0,
  HALO_MEMORY_DEVICE = 1 /**< CUDA device memory */
} halo_memory;

/** How the messages of a plan travel. */
typedef enum {
  HALO_TRANSPORT_AUTO = 0,       /**< host memory: host; device memory: nccl with one rank per
                                      GPU, else ipc */
  HALO_TRANSPORT_HOST = 1,       /**< host memory: MPI on host buffers */
  HALO_TRANSPORT_STAGED = 2,     /**< device memory: packed on the GPU, copied to pinned host
                                      buffers, MPI on the host, copied back, unpacked */
  HALO_TRANSPORT_NCCL = 3,       /**< device memory: ncclSend/ncclRecv (one rank per GPU) */
  HALO_TRANSPORT_MPI_DEVICE = 4, /**< device memory: device buffers to a CUDA-aware MPI */
  HALO_TRANSPORT_IPC = 5         /**< device memory: messages between ranks of one machine as
                                      device-to-device copies through CUDA IPC, the others
                                      staged */
} halo_transport;

/** Number of transports (for loops over all of them). */
#define HALO_N_TRANSPORTS 6

/** Communication strategy of a plan (the node-aware paper's strategies). */
typedef enum {
  HALO_STRATEGY_STANDARD = 0, /**< every rank sends directly to every rank that needs its data */
  HALO_STRATEGY_2STEP = 1,    /**< one message per (rank, destination node) to the rank of that
                                   node paired with the source node, then on-node redistribution */
  HALO_STRATEGY_3STEP = 2,    /**< on-node gather to the rank paired with the destination node,
                                   one message per pair of nodes, on-node redistribution */
  HALO_STRATEGY_SPLIT = 3,    /**< inter-node data split into messages of at most message_cap
                                   bytes spread over all ranks of the node (Algorithm 1) */
  HALO_STRATEGY_AUTO = 4      /**< plan option only: the strategy, transport and message_cap of
                                   lowest modeled time (halo_plan_options.params), or with
                                   autotune the fastest in a timed trial */
} halo_strategy;

/** Number of strategies a plan can run (for loops over all of them; AUTO
 *  is not one of them). */
#define HALO_N_STRATEGIES 4

/** Communicator scope of a phase of a schedule. */
typedef enum {
  HALO_SCOPE_GLOBAL = 0, /**< messages between any ranks of the plan */
  HALO_SCOPE_NODE = 1    /**< messages between ranks of one node */
} halo_scope;

/** Name of a memory kind ("host", "device"). */
const char *halo_memory_name(halo_memory mem);
/** Name of a strategy ("standard", "2step", "3step", "split"). */
const char *halo_strategy_name(halo_strategy strategy);
/** Name of a scope ("global", "node"). */
const char *halo_scope_name(halo_scope scope);
/** Strategy from its name. Not collective.
 *  @return HALO_ERR_INVALID_ARG, with the list of known names, if unknown. */
halo_status halo_strategy_from_name(const char *name, halo_strategy *strategy_p);
/** Memory kind from its name. Not collective. */
halo_status halo_memory_from_name(const char *name, halo_memory *mem_p);
/** Name of a transport ("auto", "host", "staged", "nccl", "mpi-device", "ipc"). */
const char *halo_transport_name(halo_transport transport);
/** Transport from its name. Not collective. */
halo_status halo_transport_from_name(const char *name, halo_transport *transport_p);

/* ------------------------------------------------------------------------ */
/* Distributed matrix                                                       */
/* ------------------------------------------------------------------------ */

/** A row-distributed sparse matrix, split into the diagonal block (columns
 *  this rank owns) and the off-diagonal block (ghost columns). */
typedef struct halo_matrix_s *halo_matrix;

/**
 * Create a distributed matrix from this rank's rows in CSR form with global
 * column ids. Collective over @p comm.
 *
 * Rows and the entries of the input vector x are owned in contiguous ranges:
 * this rank owns rows [row_begin, row_end) and entries [col_begin, col_end)
 * of x. The ranges of consecutive ranks must follow each other without gap
 * and start at 0; a rank may own no rows or no columns. A square matrix
 * passes its row range as its column range; a rectangular one (AMG
 * interpolation, restriction) passes the layout of x, as PETSc's column
 * layout or hypre's col_starts.
 *
 * @param comm       communicator (duplicated internally)
 * @param row_begin  first global row of this rank
 * @param row_end    one past the last global row of this rank
 * @param col_begin  first entry of x owned by this rank
 * @param col_end    one past the last entry of x owned by this rank
 * @param row_ptr    row_end-row_begin+1 offsets, row_ptr[0] = 0, non-decreasing
 * @param col_ids    global column ids, in [0, global columns); any order in a row
 * @param values     the entries
 * @param mem        memory of the arrays (HALO_MEMORY_HOST)
 * @param A_p        the new matrix (set on success only)
 *
 * The arrays are copied; the caller keeps ownership. Repeated column ids in a
 * row are kept and summed by the product.
 * @return HALO_ERR_INVALID_ARG (bad pointers, ids out of range),
 *         HALO_ERR_INCONSISTENT (ranges that do not tile 0..N across ranks),
 *         HALO_ERR_NOT_COMPILED (device memory without CUDA), on every rank.
 */
halo_status halo_matrix_create_csr(MPI_Comm comm, int64_t row_begin, int64_t row_end,
                                   int64_t col_begin, int64_t col_end, const int64_t *row_ptr,
                                   const int64_t *col_ids, const double *values, halo_memory mem,
                                   halo_matrix *A_p);

/**
 * Create a distributed matrix from an existing diagonal/off-diagonal split, as
 * PETSc MPIAIJ (A, B, garray) and hypre ParCSR (diag, offd, col_map_offd) hold
 * it. Collective over @p comm. Gives the same plans as halo_matrix_create_csr()
 * on the same matrix.
 *
 * @param diag_row_ptr, diag_cols, diag_values  rows x (col_end-col_begin) CSR,
 *        column ids local to this rank's column range
 * @param offd_row_ptr, offd_cols, offd_values  rows x n_ghost CSR, column ids
 *        in [0, n_ghost)
 * @param n_ghost    number of ghost columns
 * @param ghost_ids  global ids of the ghost columns, strictly increasing,
 *        outside [col_begin, col_end) (garray, col_map_offd)
 * Other parameters as halo_matrix_create_csr().
 */
halo_status halo_matrix_create_split(MPI_Comm comm, int64_t row_begin, int64_t row_end,
                                     int64_t col_begin, int64_t col_end,
                                     const int64_t *diag_row_ptr, const int64_t *diag_cols,
                                     const double *diag_values, const int64_t *offd_row_ptr,
                                     const int64_t *offd_cols, const double *offd_values,
                                     int64_t n_ghost, const int64_t *ghost_ids, halo_memory mem,
                                     halo_matrix *A_p);

/** Local sizes: rows of this rank, entries of x it owns, ghost entries it
 *  needs. Any output may be NULL. Not collective. */
halo_status halo_matrix_get_local_sizes(halo_matrix A, int64_t *n_rows_p, int64_t *n_cols_p,
                                        int64_t *n_ghost_p);

/** Global sizes and this rank's ranges. Any output may be NULL. Not collective. */
halo_status halo_matrix_get_layout(halo_matrix A, int64_t *n_global_rows_p,
                                   int64_t *n_global_cols_p, int64_t *row_begin_p,
                                   int64_t *col_begin_p);

/** Global ids of the ghost entries, sorted (garray); valid while A lives. */
halo_status halo_matrix_get_ghost_ids(halo_matrix A, const int64_t **ghost_ids_p);

/** Release a matrix; NULL-safe, sets *A_p to NULL. A plan keeps its own
 *  reference, so a matrix may be destroyed before the plans made from it. */
void halo_matrix_destroy(halo_matrix *A_p);

/* ------------------------------------------------------------------------ */
/* Plan: the halo exchange of a matrix                                      */
/* ------------------------------------------------------------------------ */

/** Options of a plan. Start from halo_plan_options_default(); every rank of
 *  the plan must pass the same values (checked: HALO_ERR_INCONSISTENT). */
typedef struct {
  halo_strategy strategy; /**< default HALO_STRATEGY_STANDARD */
  /** Ranks per node: 0 takes the nodes from MPI (MPI_COMM_TYPE_SHARED), or
   *  from the environment variable HALO_RANKS_PER_NODE when it is set; K > 0
   *  makes virtual nodes of K consecutive ranks (the last may be smaller).
   *  Default 0. */
  int ranks_per_node;
  /** Largest inter-node message of the Split strategy, in bytes (at least 8).
   *  A node that would receive more than ranks-per-node messages of this size
   *  raises it to its inter-node volume / ranks per node. Default 16384. */
  int64_t message_cap;
  /** 1: a value needed by several ranks of one node crosses the network once
   *  (2-Step, 3-Step, Split). Default 1. */
  int remove_duplicates;
  /** Where x, y and x_ghost live: HALO_MEMORY_AUTO (default) takes the
   *  matrix's memory; HALO_MEMORY_DEVICE on a host matrix uploads its blocks
   *  to the device once, at plan time. */
  halo_memory memory;
  /** How messages travel (default HALO_TRANSPORT_AUTO). */
  halo_transport transport;
  /** Device memory: the CUDA device of this rank; -1 (default) takes the
   *  current device if this process already uses one, else the rank on its
   *  node modulo the visible devices. */
  int device_id;
  /** Device memory: the CUDA stream (cudaStream_t) the products are ordered
   *  on; NULL (default) makes the plan its own, a blocking stream (ordered
   *  with the legacy default stream, so a cudaMemcpy or cudaMemset before a
   *  product is seen by it). The exchange always runs on a stream of its own,
   *  ordered with this one by events. */
  void *stream;
  /** Strategy AUTO and halo_plan_model(): the machine parameters of the
   *  performance model, the name of a built-in set ("lassen") or a parameter
   *  file (`halo params measure` writes one); NULL (default): the
   *  environment variable HALO_PARAMS, else "lassen". */
  const char *params;
  /** Strategy AUTO: 0 (default) chooses by the model; N > 0 instead times N
   *  exchanges of every candidate at plan time and keeps the fastest (the
   *  largest mean over ranks). */
  int autotune;
} halo_plan_options;

/** Default message_cap of the Split strategy, in bytes. */
#define HALO_DEFAULT_MESSAGE_CAP 16384

/** The default options. */
halo_plan_options halo_plan_options_default(void);

/** A communication plan: schedule, buffers and persistent requests. */
typedef struct halo_plan_s *halo_plan;

/**
 * Build the communication plan of a matrix: who needs which entries of x from
 * whom, the schedule of the chosen strategy, its buffers and persistent
 * requests. Collective over the matrix's communicator. The plan uses its own
 * duplicate of the communicator, so several plans may be in flight at once.
 *
 * @param A       the matrix (the plan keeps a reference)
 * @param opts    options, or NULL for the defaults
 * @param plan_p  the new plan (set on success only)
 */
halo_status halo_plan_create(halo_matrix A, const halo_plan_options *opts, halo_plan *plan_p);

/**
 * Start the halo exchange: read this rank's entries of x and send what other
 * ranks need. Not collective, but every rank of the plan must call it.
 *
 * @param x_local  the entries of x this rank owns; must not change until
 *                 halo_exchange_end() returns
 * @param x_ghost  where the ghost entries go (n_ghost values, in the order of
 *                 the ghost ids), or NULL for the plan's own ghost buffer
 *                 (halo_plan_get_ghost()), into which messages are received
 *                 without a copy
 * @return HALO_ERR_STATE if an exchange of this plan is already in flight.
 */
halo_status halo_exchange_begin(halo_plan plan, const double *x_local, double *x_ghost);

/** Complete the exchange started by halo_exchange_begin(); the ghost values
 *  are in place on return. @return HALO_ERR_STATE without a begin. */
halo_status halo_exchange_end(halo_plan plan);

/** The plan's own ghost buffer (n_ghost values), where halo_spmv() and an
 *  exchange with x_ghost = NULL deliver the ghost values. */
halo_status halo_plan_get_ghost(halo_plan plan, double **x_ghost_p);

/**
 * y = alpha*A*x + beta*y. Starts the exchange, multiplies the diagonal block
 * while it is in flight, completes it, then adds the off-diagonal block.
 * Not collective, but every rank of the plan must call it. With beta = 0, y
 * is not read.
 *
 * @param x  the entries of x this rank owns (col_end-col_begin values)
 * @param y  this rank's rows of y (row_end-row_begin values)
 */
halo_status halo_spmv(halo_plan plan, double alpha, const double *x, double beta, double *y);

/**
 * y = alpha*Ad*x + beta*y with the diagonal (on-process) block alone: no
 * communication. For smoothers, and to time the local product. Not collective.
 */
halo_status halo_spmv_diag(halo_plan plan, double alpha, const double *x, double beta, double *y);

/**
 * Wait until all work of the plan on its streams is done (device memory:
 * y of the last product and the ghosts are then readable from the host; host
 * memory: returns at once). Not collective.
 */
halo_status halo_plan_synchronize(halo_plan plan);

/** Most phases of any strategy's schedule. */
#define HALO_MAX_PHASES 8

/** Statistics of one phase, over all ranks of the plan. A message is one
 *  non-empty transfer between two distinct ranks in one phase; bytes are 8
 *  per value. Per-rank maxima count what a rank sends. */
typedef struct {
  halo_scope scope;
  halo_transport transport;                 /**< how its messages travel */
  int64_t messages;                         /**< messages of all ranks */
  int64_t bytes;                            /**< bytes of all ranks */
  int64_t max_messages_per_rank;            /**< most messages sent by one rank */
  int64_t max_bytes_per_rank;               /**< most bytes sent by one rank */
  int64_t inter_node_messages;              /**< messages between ranks on different nodes */
  int64_t inter_node_bytes;                 /**< bytes between ranks on different nodes */
  int64_t max_message_bytes;                /**< largest single message */
  int64_t max_inter_node_messages_per_node; /**< most inter-node messages sent from one node */
  int64_t max_inter_node_bytes_per_node;    /**< most inter-node bytes sent from one node */
} halo_phase_stats;

/** Statistics of a plan; the same on every rank. */
typedef struct {
  halo_strategy strategy;
  int ranks;    /**< ranks of the plan */
  int nodes;    /**< nodes (shared-memory domains) of the plan */
  int n_phases; /**< phases of the schedule */
  halo_phase_stats phase[HALO_MAX_PHASES];
  int64_t message_cap_used; /**< Split: the largest message_cap a node used, in bytes;
                                 0 for the other strategies */
  int remove_duplicates;    /**< the option the plan was made with */
  int ranks_per_node;       /**< most ranks on one node */
  int64_t ghosts;           /**< ghost entries of all ranks */
  double setup_seconds;     /**< plan creation time, max over ranks */
} halo_stats;

/** Statistics of a plan, computed at creation. Not collective. */
halo_status halo_plan_stats(halo_plan plan, halo_stats *stats_p);

/**
 * The modeled time of the plan's exchange (the performance model of DESIGN.md
 * §6 applied to this rank's schedule and its peers'): per phase the most
 * seconds of any rank, and their sum. Collective.
 *
 * @param params           a built-in parameter set ("lassen") or a parameter file;
 *                         NULL: HALO_PARAMS, else "lassen"
 * @param phase_seconds_p  HALO_MAX_PHASES entries (0 past the last phase), or NULL
 * @param seconds_p        the sum over the phases
 */
halo_status halo_plan_model(halo_plan plan, const char *params, double *phase_seconds_p,
                            double *seconds_p);

/**
 * What the plan runs and why, in one line of text: strategy, transport,
 * message_cap; with strategy AUTO the candidates and their modeled (or
 * timed) seconds. Not collective. Truncated to len-1 characters.
 */
halo_status halo_plan_describe(halo_plan plan, char *buf, size_t len);

/** Release a plan; NULL-safe, sets *plan_p to NULL. Must not be called
 *  while an exchange is in flight. */
void halo_plan_destroy(halo_plan *plan_p);

#ifdef __cplusplus
}
#endif

#endif /* HALO_H */
