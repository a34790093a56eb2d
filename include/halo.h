/**
 * @file
 * halo: node-aware halo exchange and distributed SpMV.
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

HALO_EXPORT_BEGIN

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/** Status codes. The numeric values are stable across releases. */
typedef enum {
  HALO_SUCCESS = 0,            /**< no failure */
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
  HALO_ERR_OUT_OF_RANGE = -14, /**< an index or count exceeds what the format or type holds */
  HALO_ERR_TIMEOUT = -15       /**< an exchange waited longer than exchange_timeout_ms for its
                                    messages (a peer failed or stopped) */
} halo_status;

/** Short description of a status code ("invalid argument"); never NULL.
 *  @param status  a status code
 *  @return its description, "unknown" for a value that is no status */
const char *halo_status_string(halo_status status);

/** Detailed message of the last failure on the calling thread ("" if none).
 *  @return the message, owned by the library, until the next failure on the thread */
const char *halo_last_error(void);

/** Library version as "major.minor.patch".
 *  @return HALO_VERSION_STRING of the library as built */
const char *halo_version(void);

/**
 * Agree on a status across the ranks of @p comm, as the library's collective
 * functions do: every rank returns the status of the lowest failing rank and
 * halo_last_error() gives its message, prefixed "rank R: ". Collective.
 * @param comm    the communicator
 * @param status  this rank's status
 * @return the status of the lowest failing rank, HALO_SUCCESS when none failed
 */
halo_status halo_status_agree(MPI_Comm comm, halo_status status);

/* ------------------------------------------------------------------------ */
/* Enumerations and their names                                             */
/* ------------------------------------------------------------------------ */

/** Where the arrays handed to the library live. Never guessed from a pointer. */
typedef enum {
  HALO_MEMORY_AUTO = -1, /**< plan option only: where the matrix is */
  HALO_MEMORY_HOST = 0,  /**< host memory */
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
  HALO_TRANSPORT_IPC = 5,        /**< device memory: messages between ranks of one machine as
                                      device-to-device copies through CUDA IPC, the others
                                      staged */
  HALO_TRANSPORT_RMA = 6,        /**< host memory: MPI one-sided puts into the receivers'
                                      windows, made at plan time, with active target
                                      synchronisation on each phase's neighbours; the plan's
                                      destruction is then collective (MPI_Win_free) */
  HALO_TRANSPORT_NVSHMEM = 7,    /**< device memory, one rank per GPU: each phase packs and puts
                                      its messages in one kernel (NVSHMEM puts with a signal into
                                      the receivers' symmetric buffers); the receivers wait for
                                      the signals on the GPU: no host call between the start
                                      and the end of an exchange. Needs HALO_ENABLE_NVSHMEM; every
                                      nvshmem plan of a process is on one communicator's ranks */
  HALO_TRANSPORT_NEIGHBOR = 8    /**< host memory: each phase is one MPI-4 persistent
                                      neighborhood all-to-all (MPI_Neighbor_alltoallv_init, or
                                      Open MPI's MPIX_ form) on a distributed-graph
                                      communicator of the phase's peers, kept by the
                                      communicator's context; counts are int: a plan with a
                                      message or a phase's messages past INT_MAX values is
                                      refused */
} halo_transport;

/** Number of transports (for loops over all of them). */
#define HALO_N_TRANSPORTS 9

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

/** Name of a memory kind ("host", "device").
 *  @param mem  a memory kind
 *  @return its name, "unknown" for a value that is none */
const char *halo_memory_name(halo_memory mem);
/** Name of a strategy ("standard", "2step", "3step", "split").
 *  @param strategy  a strategy
 *  @return its name ("auto" for HALO_STRATEGY_AUTO), "unknown" for a value that is none */
const char *halo_strategy_name(halo_strategy strategy);
/** Name of a scope ("global", "node").
 *  @param scope  a scope
 *  @return its name, "unknown" for a value that is none */
const char *halo_scope_name(halo_scope scope);
/** Strategy from its name. Not collective.
 *  @param name        a strategy's name (halo_strategy_name())
 *  @param strategy_p  the strategy (set on success only)
 *  @return HALO_ERR_INVALID_ARG, with the list of known names, if unknown. */
halo_status halo_strategy_from_name(const char *name, halo_strategy *strategy_p);
/** Memory kind from its name. Not collective.
 *  @param name   "auto", "host" or "device"
 *  @param mem_p  the memory kind (set on success only)
 *  @return HALO_ERR_INVALID_ARG, with the list of known names, if unknown. */
halo_status halo_memory_from_name(const char *name, halo_memory *mem_p);
/** Name of a transport ("auto", "host", "staged", "nccl", "mpi-device", "ipc", "rma",
 *  "nvshmem", "neighbor"), from the registry of transports.
 *  @param transport  a transport
 *  @return its name, "unknown" for a value no transport registers */
const char *halo_transport_name(halo_transport transport);
/** Transport from its name. Not collective.
 *  @param name         a transport's name (halo_transport_name())
 *  @param transport_p  the transport (set on success only)
 *  @return HALO_ERR_INVALID_ARG, with the list of known names, if unknown. */
halo_status halo_transport_from_name(const char *name, halo_transport *transport_p);

/** What the library's registry says of a transport. */
typedef struct {
  const char *name;        /**< its run-time name */
  const char *summary;     /**< one line */
  int host_memory;         /**< 1: serves plans in host memory */
  int device_memory;       /**< 1: serves plans in device memory */
  int compiled;            /**< 1: built into this library (else a plan on it fails with
                                HALO_ERR_NOT_COMPILED) */
  int needs_own_gpu;       /**< 1: needs one rank per GPU */
  int needs_gpu_aware_mpi; /**< 1: needs a CUDA-aware MPI */
  const char *const *settings; /**< the settings it reads (halo_setting_get_info(): their
                                    component is its name), NULL-terminated */
} halo_transport_info;

/**
 * A transport's entry in the registry. Not collective.
 *  @param transport  a transport other than HALO_TRANSPORT_AUTO
 *  @param info_p     its entry (set on success only)
 * @return HALO_ERR_INVALID_ARG for HALO_TRANSPORT_AUTO (it chooses among the
 *         others) or a value no transport registers.
 */
halo_status halo_transport_get_info(halo_transport transport, halo_transport_info *info_p);

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
 * Other parameters as halo_matrix_create_csr():
 * @param comm       communicator (duplicated internally)
 * @param row_begin  first global row of this rank
 * @param row_end    one past the last global row of this rank
 * @param col_begin  first entry of x owned by this rank
 * @param col_end    one past the last entry of x owned by this rank
 * @param mem        memory of the arrays
 * @param A_p        the new matrix (set on success only)
 * @return the errors of halo_matrix_create_csr(), on every rank
 */
halo_status halo_matrix_create_split(MPI_Comm comm, int64_t row_begin, int64_t row_end,
                                     int64_t col_begin, int64_t col_end,
                                     const int64_t *diag_row_ptr, const int64_t *diag_cols,
                                     const double *diag_values, const int64_t *offd_row_ptr,
                                     const int64_t *offd_cols, const double *offd_values,
                                     int64_t n_ghost, const int64_t *ghost_ids, halo_memory mem,
                                     halo_matrix *A_p);

/** Local sizes: rows of this rank, entries of x it owns, ghost entries it
 *  needs. Any output may be NULL. Not collective.
 *  @param A          the matrix
 *  @param n_rows_p   rows of this rank
 *  @param n_cols_p   entries of x this rank owns
 *  @param n_ghost_p  ghost entries this rank needs
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG for A NULL */
halo_status halo_matrix_get_local_sizes(halo_matrix A, int64_t *n_rows_p, int64_t *n_cols_p,
                                        int64_t *n_ghost_p);

/** Global sizes and this rank's ranges. Any output may be NULL. Not collective.
 *  @param A                the matrix
 *  @param n_global_rows_p  rows of all ranks
 *  @param n_global_cols_p  entries of x of all ranks (columns)
 *  @param row_begin_p      this rank's first row
 *  @param col_begin_p      this rank's first entry of x
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG for A NULL */
halo_status halo_matrix_get_layout(halo_matrix A, int64_t *n_global_rows_p,
                                   int64_t *n_global_cols_p, int64_t *row_begin_p,
                                   int64_t *col_begin_p);

/** Global ids of the ghost entries, sorted (garray); valid while A lives.
 *  @param A            the matrix
 *  @param ghost_ids_p  the ids (n_ghost of them)
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG for a NULL argument */
halo_status halo_matrix_get_ghost_ids(halo_matrix A, const int64_t **ghost_ids_p);

/**
 * New values, same pattern: values[k] replaces the k-th entry given to
 * halo_matrix_create_csr() (same row_ptr and col_ids, in the matrix's
 * memory). The plans made from the matrix use the new values from their next
 * product; no new plan is needed. Not collective. Device memory: the copy is
 * synchronous with the legacy default stream; a product enqueued on a
 * non-blocking stream must be complete first (halo_plan_synchronize).
 * @param A       the matrix
 * @param values  one value per entry, as given to halo_matrix_create_csr()
 * @return HALO_ERR_STATE for a matrix made by halo_matrix_create_split().
 */
halo_status halo_matrix_set_values(halo_matrix A, const double *values);

/** New values for a matrix made by halo_matrix_create_split(): the diagonal
 *  and off-diagonal blocks' values in the order given there. Not collective.
 *  @param A            the matrix
 *  @param diag_values  the diagonal block's values
 *  @param offd_values  the off-diagonal block's values
 *  @return HALO_ERR_STATE for a matrix made by halo_matrix_create_csr(). */
halo_status halo_matrix_set_values_split(halo_matrix A, const double *diag_values,
                                         const double *offd_values);

/** Release a matrix; NULL-safe, sets *A_p to NULL. A plan keeps its own
 *  reference, so a matrix may be destroyed before the plans made from it.
 *  @param A_p  the matrix, or a pointer to NULL */
void halo_matrix_destroy(halo_matrix *A_p);

/* ------------------------------------------------------------------------ */
/* Plan: the halo exchange of a vector layout, and the product of a matrix   */
/* ------------------------------------------------------------------------ */

/** Most exchanges of one plan that may be in flight at once (max_exchanges). */
#define HALO_MAX_EXCHANGES 64

/**
 * Options of a plan: what a user chooses. Start from
 * halo_plan_options_default(); every rank of the plan must pass the same
 * values, device_id and stream excepted (checked: HALO_ERR_INCONSISTENT,
 * naming the option).
 *
 * Several options may also be given by an environment variable, named beside
 * each: an option left at -1 (0 for ranks_per_node, NULL for params) takes
 * the variable when it is set, else the default; a value the caller sets
 * wins over the variable. Every value, given or read, is checked when the
 * plan is made (HALO_ERR_INVALID_ARG naming the option and the variable) and
 * must agree across ranks.
 *
 * The knobs of halo's components (the device product's kernel, the ipc
 * transport's signals, timings, ...) are not options but named settings,
 * given as one string (the field settings, or HALO_SETTINGS):
 * halo_setting_get_info() lists them, `halo spmv --list-settings` prints
 * them.
 */
typedef struct {
  halo_strategy strategy; /**< default HALO_STRATEGY_AUTO: the model (params) and a timed trial
                               (autotune) choose the strategy and, in device memory, the
                               transport; halo_plan_describe says what was chosen and why */
  /** Ranks per node: 0 takes the nodes from MPI (MPI_COMM_TYPE_SHARED), or
   *  from HALO_RANKS_PER_NODE when it is set; K > 0 makes virtual nodes of K
   *  consecutive ranks (the last may be smaller). Default 0. */
  int ranks_per_node;
  /** Largest inter-node message of the Split strategy, in bytes (at least 8).
   *  A node that would receive more than ranks-per-node messages of this size
   *  raises it to its inter-node volume / ranks per node. Default 16384. */
  int64_t message_cap;
  /** 1: a value needed by several ranks of one node crosses the network once
   *  (2-Step, 3-Step, Split). Default 1. */
  int remove_duplicates;
  /** Where x, y and the ghosts live: HALO_MEMORY_AUTO (default) takes the
   *  matrix's memory (host for a plan without a matrix); HALO_MEMORY_DEVICE
   *  on a host matrix uploads its blocks to the device once, at plan time. */
  halo_memory memory;
  /** How messages travel (default HALO_TRANSPORT_AUTO: HALO_TRANSPORT when it is set, else
   *  host in host memory and, in device memory, the transport the choice finds best). */
  halo_transport transport;
  /** Device memory: the CUDA device of this rank; -1 (default) takes the
   *  device the communicator's plans already use, else the current device if
   *  this process already uses one, else the rank on its node modulo the
   *  visible devices. All device plans of one communicator use one device. */
  int device_id;
  /** Device memory: the CUDA stream (cudaStream_t) the products are ordered
   *  on; NULL (default) takes the communicator's own blocking stream (ordered
   *  with the legacy default stream, so a cudaMemcpy or cudaMemset before a
   *  product is seen by it). The exchanges run on a stream of their own,
   *  ordered with this one by events. */
  void *stream;
  /** Strategy AUTO and halo_plan_model(): the machine parameters of the
   *  performance model, the name of a built-in set ("lassen") or a parameter
   *  file (`halo params measure` writes one); NULL (default): HALO_PARAMS,
   *  else the machine's file (halo_params_cache_path(), written by `halo
   *  params measure --save`) when it exists, else the built-in set of the
   *  machine's kind (halo_params_builtin_for()). "measure": the machine's
   *  file when it exists, else the first plan measures the set on its
   *  communicator (halo_params_measure, 20 round trips up to 1 MiB: seconds)
   *  and writes that file on rank 0. Read once per communicator. */
  const char *params;
  /** Strategy AUTO: 0 chooses by the model alone; N > 0 times N calls of
   *  every candidate at plan time (SpMVs for a plan of a matrix, else
   *  exchanges) and keeps the fastest; -1 (default): HALO_AUTOTUNE (a number,
   *  or "model" for 0), else the candidates the model cannot tell apart
   *  (modeled within a factor 2 of the lowest, at most 4, one of each
   *  modeled alike) and the lowest modeled of each other transport are
   *  timed, on the program's own first calls (setting auto.trial = calls,
   *  the default: the plan is made for the model's best, each candidate
   *  serves 8 of its calls in turn, with right values, then the fastest
   *  serves the rest; with fewer expected_uses than 16 per candidate, the
   *  model decides) or at plan time (auto.trial = plan: 5 interleaved
   *  rounds of about 2 ms each), and the fastest kept. A
   *  communicator keeps its plans' choices: a later plan of the same
   *  pattern and options takes its choice without modeling or timing
   *  again. */
  int autotune;
  /** Strategy AUTO: how many times the program is expected to use the plan
   *  (its SpMVs or exchanges), an estimate, not a bound (an iteration limit
   *  would favour costly set-ups). The choice minimises each candidate's
   *  set-up (what its transport makes once per communicator where this one
   *  has none yet, e.g. NCCL's communicator: halo_candidate.setup_seconds)
   *  + expected_uses x its time per use (modeled, or timed). A choice is
   *  kept per communicator for this value. -1 (default): HALO_EXPECTED_USES,
   *  else HALO_DEFAULT_EXPECTED_USES. */
  int64_t expected_uses;
  /** Strategy AUTO: a file of remembered choices ("wisdom"): a plan whose key (the
   *  machine's parameters, the communicator's layout, these options and its pattern's
   *  signature: per rank its message counts and volumes rounded to powers of two) is in
   *  the file takes the choice with no modeling or trial; a plan that chooses adds its
   *  choice. Read and written on rank 0 only (written to a temporary file renamed over
   *  it); a file that is corrupt or of another version is ignored, which
   *  halo_plan_describe says. NULL (default): HALO_WISDOM, else none. */
  const char *wisdom;
  /** Exchanges of this plan that may be in flight at once, each with its own
   *  buffers and requests made at plan time: the plan's own (halo_spmv,
   *  halo_exchange_begin) and those of halo_exchange_create(), which needs
   *  2 or more. 1 to HALO_MAX_EXCHANGES; -1 (default): 1 (each set costs its
   *  buffers and a part of the plan's set-up). */
  int max_exchanges;
  /** 1: the reverse exchange (halo_exchange_reverse_begin) and the transpose
   *  product (halo_spmv_transpose) are ready at plan time; 0: neither, which
   *  saves their buffers and, in device plans, the transposed index arrays of
   *  the matrix (8 bytes per entry). -1 (default): 1. */
  int reverse;
  /** The components' settings, "NAME=VALUE,NAME=VALUE" (white space around
   *  names and values is ignored; a name given twice takes its last value),
   *  e.g. "spmv.group=8,ipc.signal=host": each setting is declared once, with
   *  its values, default and the component that reads it
   *  (halo_setting_get_info()). A setting the string does not name takes
   *  HALO_SETTINGS (the same syntax), else its own environment variable where
   *  it has one (HALO_SPMV_GROUP, ...), else its default. NULL (default):
   *  none. An unknown name or a bad value: HALO_ERR_INVALID_ARG naming it;
   *  ranks whose settings differ: HALO_ERR_INCONSISTENT. At most
   *  HALO_SETTINGS_MAX characters. */
  const char *settings;
  /** The longest an exchange waits for its MPI messages, in milliseconds: past
   *  it the exchange returns HALO_ERR_TIMEOUT on this rank (a peer failed or
   *  stopped) instead of waiting for ever; it then waits up to the limit
   *  again for the word of a peer whose exchange failed, and its message
   *  names that rank ("rank 0's exchange failed first: ..."), which it
   *  passes on to its own peers. A plan whose exchange failed, this
   *  way or another, refuses further exchanges (HALO_ERR_STATE) and is to be
   *  destroyed; halo_plan_destroy then keeps its memory and MPI tags for the
   *  rest of the program, because its requests may still be posted and its
   *  peers' messages still on their way (its communicator's context, whose
   *  end is collective, goes as with any plan). Host memory (transports host
   *  and rma: MPI has no timed wait for rma's epochs, so with a limit a
   *  target tells its origins that it posted, an origin starts its epoch
   *  only once told, and the target polls MPI_Win_test; a window an epoch
   *  may have been left open on is never freed), and the staged, mpi-device
   *  and rma transports (the waits of MPI requests), in the exchange's
   *  end; in device memory also halo_plan_synchronize, whatever the
   *  transport: past the limit it returns HALO_ERR_TIMEOUT, and where the
   *  GPU waits for the peer (ipc's signals on the GPU, nccl, nvshmem) the
   *  wait is released: this rank's signals are written past any number a
   *  peer could write, NCCL's communicator is aborted (the communicator's
   *  next plan makes a new one, on every rank), and the GPU's work runs to
   *  its end with meaningless values (the message says whether it ended
   *  within the limit again). An exchange that fails on this rank releases
   *  its waits the same way. A plan that forwards values it receives
   *  (every strategy but standard) is released too: an abort word, written
   *  first, stops its later phases' puts (nvshmem) and ready signals (ipc),
   *  so they send nothing they never received. Under
   *  MPS the release may queue behind the waits it releases unless every
   *  rank runs with CUDA_DEVICE_MAX_CONNECTIONS=32; the message then says
   *  the GPU still waits. A wait on the caller's own stream
   *  (halo_spmv_async) is the caller's. 0: no limit. -1 (default):
   *  HALO_EXCHANGE_TIMEOUT (milliseconds), else 0. */
  int64_t exchange_timeout_ms;
} halo_plan_options;

/** The uses of a plan strategy AUTO expects where the caller gives none
 *  (halo_plan_options.expected_uses). */
#define HALO_DEFAULT_EXPECTED_USES 100

/** Longest settings string (halo_plan_options.settings, HALO_SETTINGS). */
#define HALO_SETTINGS_MAX 1024

/** A named setting of one of halo's components (halo_setting_get_info()). */
typedef struct {
  const char *name;      /**< "spmv.group": the component, a dot, the knob */
  const char *component; /**< what reads it: "spmv" (the device product), "device" (a
                              communicator's GPU), "ipc", "staged", "exec" (every executor) */
  const char *env;       /**< the environment variable that gives it alone, or NULL */
  const char *deflt;     /**< its default, as a value or in words */
  const char *doc;       /**< what it does */
  char values[160];      /**< what it may hold: "0 to 32, a power of 2 or 0", "host, device or
                              auto" */
} halo_setting_info;

/** The number of settings (their indices are 0 to this - 1).
 *  @return the number of settings */
int halo_setting_count(void);

/** The setting of index i.
 *  @param i     the index, 0 to halo_setting_count() - 1
 *  @param info  the setting (set on success only)
 *  @return HALO_ERR_OUT_OF_RANGE past the last,
 *  HALO_ERR_INVALID_ARG for info NULL. */
halo_status halo_setting_get_info(int i, halo_setting_info *info);

/**
 * The value a plan with these options would use for setting name (options
 * opts or the defaults for NULL, then HALO_SETTINGS, the setting's variable
 * and its default): an integer, or the index of its word ("host" 0, "device"
 * 1, ...). Not collective.
 *  @param opts     the options, or NULL for the defaults
 *  @param name     the setting ("spmv.group")
 *  @param value_p  its value (set on success only)
 * @return HALO_ERR_INVALID_ARG for an unknown name, or a bad value in the
 *         options or the environment (naming it).
 */
halo_status halo_plan_options_setting(const halo_plan_options *opts, const char *name,
                                      int64_t *value_p);

/** Default message_cap of the Split strategy, in bytes. */
#define HALO_DEFAULT_MESSAGE_CAP 16384

/** autotune once resolved (halo_plan_options_resolve) when neither the caller
 *  nor HALO_AUTOTUNE gives it: time the candidates the model cannot tell
 *  apart. */
#define HALO_AUTOTUNE_CLOSE (-2)

/** The default options.
 *  @return every option at its default (most of them -1, 0 or NULL: "unset") */
halo_plan_options halo_plan_options_default(void);

/**
 * The options as a plan would use them: every option left unset takes its
 * environment variable or its default, and every value is checked; params
 * stays NULL when neither the option nor HALO_PARAMS names a set (a plan
 * then reads the machine's file, or the built-in set of its kind, on rank
 * 0). Not collective (it does not check that ranks agree).
 * @param opts        the options, or NULL for the defaults
 * @param resolved_p  the options resolved (set on success only)
 * @return HALO_ERR_INVALID_ARG naming the option or the variable.
 */
halo_status halo_plan_options_resolve(const halo_plan_options *opts, halo_plan_options *resolved_p);

/** A communication plan: schedule, buffers and persistent requests. */
typedef struct halo_plan_s *halo_plan;

/**
 * Build the communication plan of a matrix: who needs which entries of x from
 * whom, the schedule of the chosen strategy, its buffers and persistent
 * requests, and the product's set-up. Collective over the matrix's
 * communicator. It is the exchange-only plan of the matrix's column layout
 * and ghost ids (halo_plan_create_from_ids) plus the product.
 *
 * Plans of one communicator share its context: the library's copy of the
 * communicator, the nodes, the device's streams, the NCCL communicator and
 * the MPI tags, made by the first plan and cached on the communicator (an
 * MPI attribute), so that later plans are cheap. The matrix keeps what its
 * first plan learned of who needs which of its entries (the send lists: 8
 * bytes per entry sent, kept until the matrix is destroyed), so its later
 * plans skip that exchange. Creation is collective: every
 * rank creates the plans of a communicator in the same order; destruction is
 * not, and ranks may destroy them in any order.
 *
 * @param A       the matrix (the plan keeps a reference)
 * @param opts    options, or NULL for the defaults
 * @param plan_p  the new plan (set on success only)
 * @return HALO_SUCCESS, or on every rank the same status: HALO_ERR_INVALID_ARG
 *         or HALO_ERR_INCONSISTENT naming the option, HALO_ERR_NOT_COMPILED for
 *         a component this build lacks, HALO_ERR_MPI, HALO_ERR_CUDA, ...
 */
halo_status halo_plan_create(halo_matrix A, const halo_plan_options *opts, halo_plan *plan_p);

/**
 * An exchange-only plan from a layout of the vector and the global ids of
 * the ghosts: it moves values, the caller multiplies. Collective over comm.
 *
 * This rank owns entries [col_begin, col_end) of the vector; the ranges of
 * consecutive ranks follow each other from 0. Ghost slot i receives entry
 * ghost_ids[i]. The ids may come in any order and repeat (each repeated slot
 * receives the value). An id this rank owns is a copy the plan makes while
 * the messages are in flight (forward the slot takes or adds the entry,
 * reverse the entry takes or adds the slot's, before the other ranks'
 * contributions), as a PetscSF's leaves on their own rank (a DMDA's
 * global-to-local update); in device memory a kernel on the plan's stream
 * makes them.
 *
 * @param comm       the communicator (duplicated internally)
 * @param col_begin  first entry of the vector owned by this rank
 * @param col_end    one past the last entry owned by this rank
 * @param n_ghost    ghost slots (the length of x_ghost in the exchanges)
 * @param ghost_ids  n_ghost global ids
 * @param opts       options, or NULL for the defaults
 * @param plan_p     the new plan (set on success only)
 * @return HALO_ERR_INVALID_ARG (an id out of range),
 *         HALO_ERR_INCONSISTENT (ranges that do not tile), on every rank.
 */
halo_status halo_plan_create_from_ids(MPI_Comm comm, int64_t col_begin, int64_t col_end,
                                      int64_t n_ghost, const int64_t *ghost_ids,
                                      const halo_plan_options *opts, halo_plan *plan_p);

/**
 * An exchange-only plan from (owner rank, local index) pairs, as a PetscSF
 * graph holds its leaves' roots: ghost slot i receives entry owner_indices[i]
 * of rank owner_ranks[i]'s part of the vector. Pairs may come in any order and
 * repeat; a pair of this rank is a copy (as halo_plan_create_from_ids()).
 * Collective over comm.
 *
 * @param comm           the communicator (duplicated internally)
 * @param n_local        entries of the vector this rank owns (its part)
 * @param n_ghost        ghost slots (the length of x_ghost in the exchanges)
 * @param owner_ranks    n_ghost ranks of comm: the owner of each slot's entry
 * @param owner_indices  n_ghost indices into the owners' parts, in [0, their n_local)
 * @param opts           options, or NULL for the defaults
 * @param plan_p         the new plan (set on success only)
 * @return as halo_plan_create_from_ids(), on every rank
 */
halo_status halo_plan_create_from_pairs(MPI_Comm comm, int64_t n_local, int64_t n_ghost,
                                        const int *owner_ranks, const int64_t *owner_indices,
                                        const halo_plan_options *opts, halo_plan *plan_p);

/**
 * An exchange-only plan from explicit send and receive lists, as a hypre
 * communication package holds them; the sparse discovery of who sends what
 * (NBX) is skipped. Collective over comm.
 *
 * Receives: from rank recv_ranks[j], ghost slots [recv_starts[j],
 * recv_starts[j+1]) in order (n_ghost = recv_starts[n_recv]). Sends: to rank
 * send_ranks[j], entries send_indices[send_starts[j] .. send_starts[j+1]) of
 * this rank's part, in order. Rank j's send list to rank i must match, entry
 * for entry, rank i's receive list from rank j; a rank appears at most once
 * in each list and never as itself. Lists that do not match across ranks are
 * found (a checksum over all ranks, then the counts of every message) and
 * reported on every rank, never left waiting.
 *
 * @param comm          the communicator (duplicated internally)
 * @param n_local       entries of the vector this rank owns
 * @param n_recv        ranks this rank receives from
 * @param recv_ranks    n_recv ranks
 * @param recv_starts   n_recv+1 offsets into the ghost slots, recv_starts[0] = 0
 * @param n_send        ranks this rank sends to
 * @param send_ranks    n_send ranks
 * @param send_starts   n_send+1 offsets into send_indices, send_starts[0] = 0
 * @param send_indices  send_starts[n_send] indices into this rank's part
 * @param opts          options, or NULL for the defaults
 * @param plan_p        the new plan (set on success only)
 * @return HALO_ERR_INVALID_ARG (an index out of range, a rank twice or itself),
 *         HALO_ERR_INCONSISTENT (lists that do not match), on every rank
 */
halo_status halo_plan_create_from_lists(MPI_Comm comm, int64_t n_local, int n_recv,
                                        const int *recv_ranks, const int64_t *recv_starts,
                                        int n_send, const int *send_ranks,
                                        const int64_t *send_starts, const int64_t *send_indices,
                                        const halo_plan_options *opts, halo_plan *plan_p);

/** Local sizes of a plan: entries of the vector this rank owns and its ghost
 *  slots (the lengths of x_local and x_ghost). Any output may be NULL. Not
 *  collective.
 *  @param plan       the plan
 *  @param n_local_p  entries of the vector this rank owns
 *  @param n_ghost_p  ghost slots of this rank
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG for plan NULL */
halo_status halo_plan_get_sizes(halo_plan plan, int64_t *n_local_p, int64_t *n_ghost_p);

/* ---- the exchange ------------------------------------------------------ */

/**
 * Start the halo exchange on the plan's own exchange: read this rank's
 * entries of x and send what other ranks need. Not collective, but every rank
 * of the plan must call it.
 *
 *  @param plan     the plan
 * @param x_local  the entries of x this rank owns; must not change until
 *                 halo_exchange_end() returns
 * @param x_ghost  where the ghost values go (n_ghost values, in the order of
 *                 the ghost slots), or NULL for the plan's own ghost buffer
 *                 (halo_plan_get_ghost()), into which messages are received
 *                 without a copy
 * Host memory: messages of consecutive entries are sent from x_local and
 * received into x_ghost themselves, with persistent requests bound to the
 * two addresses at the first exchange with them and kept for the last few
 * (4) addresses of each: an exchange between buffers that stay put makes no
 * MPI request after the first.
 * With the NCCL transport, the plans of a communicator share one NCCL
 * communicator, whose operations match in the order they are issued: every
 * rank must begin the exchanges of a communicator's NCCL plans in the same
 * order (other transports match by tags and need not).
 * @return HALO_ERR_STATE if the plan's own exchange is already in flight.
 */
halo_status halo_exchange_begin(halo_plan plan, const double *x_local, double *x_ghost);

/** Complete the exchange started by halo_exchange_begin(); the ghost values
 *  are in place on return (device memory: in stream order). @return
 *  HALO_ERR_STATE without a begin.
 *  @param plan  the plan */
halo_status halo_exchange_end(halo_plan plan);

/**
 * Start the reverse exchange on the plan's own exchange: every ghost slot's
 * value is a contribution to the entry it names, and each owner adds them
 * into its entries: x_local[i] += the contributions of all ghost slots of all
 * ranks that name entry i (PetscSF Reduce with MPI_SUM, hypre's reverse
 * exchange, the communication of A^T x). Not collective, but every rank must
 * call it. Needs a plan made with reverse = 1.
 *
 * Summation order, fixed by the plan and the same on every run (bit for bit):
 * a rank's ghost slots that name the same entry are first summed in
 * increasing slot order (0 + g_a + g_b ...); then each value is added where
 * the reversed schedule delivers it, phase after phase, in the order of the
 * receive lists. Under the standard strategy entry i becomes
 * ((x_i + c_1) + c_2) + ... with c_k the contribution of the k-th rank, in
 * increasing rank order, that has i as a ghost. Node-aware strategies form
 * partial sums on the ranks that forward, so their results agree with the
 * standard one to rounding, not bit for bit.
 *
 *  @param plan     the plan (made with reverse = 1)
 * @param x_ghost  the contributions (n_ghost values, in the order of the
 *                 ghost slots), or NULL for the plan's own ghost buffer; must
 *                 not change until the end
 * @param x_local  the entries this rank owns, added into at the end; must
 *                 not be read or written until halo_exchange_reverse_end()
 *                 returns (device memory: the additions are ordered after the
 *                 work enqueued on the plan's stream before that call)
 *  @return HALO_ERR_STATE if the plan's own exchange is already in flight or
 *          the plan was made with reverse = 0
 */
halo_status halo_exchange_reverse_begin(halo_plan plan, const double *x_ghost, double *x_local);

/** Complete the reverse exchange: the contributions are added into x_local
 *  on return (device memory: in stream order).
 *  @param plan  the plan
 *  @return HALO_ERR_STATE without a begin */
halo_status halo_exchange_reverse_end(halo_plan plan);

/** The plan's own ghost buffer (n_ghost values), where halo_spmv() and an
 *  exchange with x_ghost = NULL deliver the ghost values.
 *  @param plan       the plan
 *  @param x_ghost_p  the buffer, valid while the plan lives
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_plan_get_ghost(halo_plan plan, double **x_ghost_p);

/**
 * An exchange in flight of its own on a plan (the plan is a communication
 * package, an exchange is one handle on it), so that one plan can have
 * several exchanges in flight: several vectors, several scatters. Each takes
 * one of the plan's max_exchanges sets of buffers and requests, made at plan
 * time.
 */
typedef struct halo_exchange_s *halo_exchange;

/**
 * Take a free exchange of the plan (not collective). Exchanges are matched
 * across ranks by the set of buffers they take (the lowest free one): every
 * rank must create and destroy the exchanges of a plan in the same order.
 *  @param plan  the plan
 *  @param ex_p  the exchange (set on success only)
 * @return HALO_ERR_STATE when every exchange of the plan is taken (raise the
 *         plan option max_exchanges).
 */
halo_status halo_exchange_create(halo_plan plan, halo_exchange *ex_p);

/** Start this exchange forward: as halo_exchange_begin() on its own
 *  buffers (x_ghost = NULL: halo_exchange_get_ghost()).
 *  @param ex       the exchange
 *  @param x_local  the entries this rank owns
 *  @param x_ghost  where the ghost values go, or NULL
 *  @return HALO_ERR_STATE when the exchange is in flight */
halo_status halo_exchange_start(halo_exchange ex, const double *x_local, double *x_ghost);

/** Start this exchange in reverse: as halo_exchange_reverse_begin().
 *  @param ex       the exchange
 *  @param x_ghost  the contributions, or NULL for its own buffer
 *  @param x_local  the entries this rank owns, added into
 *  @return HALO_ERR_STATE when the exchange is in flight */
halo_status halo_exchange_start_reverse(halo_exchange ex, const double *x_ghost, double *x_local);

/** Complete this exchange, forward or reverse.
 *  @param ex  the exchange
 *  @return HALO_ERR_STATE when
 *  it was not started. */
halo_status halo_exchange_wait(halo_exchange ex);

/** This exchange's own ghost buffer (n_ghost values).
 *  @param ex         the exchange
 *  @param x_ghost_p  the buffer, valid while the exchange lives
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_exchange_get_ghost(halo_exchange ex, double **x_ghost_p);

/** Give the exchange back to its plan; NULL-safe, sets *ex_p to NULL. An
 *  exchange in flight is completed first. Must come before the plan's
 *  destruction.
 *  @param ex_p  the exchange, or a pointer to NULL */
void halo_exchange_destroy(halo_exchange *ex_p);

/* ---- units: exchanges of other types and operations ---------------------- */

/** The type of the values of an exchange's unit. */
typedef enum {
  HALO_TYPE_DOUBLE = 0,         /**< double (8 bytes) */
  HALO_TYPE_FLOAT = 1,          /**< float (4 bytes) */
  HALO_TYPE_COMPLEX_DOUBLE = 2, /**< a real and an imaginary double (C99 double complex) */
  HALO_TYPE_INT32 = 3,          /**< int32_t */
  HALO_TYPE_INT64 = 4,          /**< int64_t */
  HALO_TYPE_BYTE = 5            /**< a byte moved as it is (char): HALO_OP_INSERT only */
} halo_type;

/** What an exchange moves per entry: k values of one type, interleaved per
 *  entry (entry i is values [i*k, i*k + k) of the arrays). {HALO_TYPE_DOUBLE,
 *  1} is what halo_exchange_begin() moves. */
typedef struct {
  halo_type type; /**< the type of the values */
  int k;          /**< values per entry, >= 1 */
} halo_unit;

/** How the values an exchange delivers meet the values already there. */
typedef enum {
  /** forward: a ghost slot takes its owner's value; reverse: an owned entry
   *  takes the value of one of the ghost slots that name it (which one,
   *  where several do, is not defined, as in PetscSF's Reduce with
   *  MPI_REPLACE); entries no slot names keep theirs */
  HALO_OP_INSERT = 0,
  /** forward: a ghost slot adds its owner's value to its own; reverse: an
   *  owned entry adds every slot's that names it (halo_exchange_reverse_begin's
   *  order of additions) */
  HALO_OP_ADD = 1
} halo_op;

/** The bytes of one entry of unit u (k times the type's size); 0 for a type
 *  halo does not know or k < 1.
 *  @param u  the unit
 *  @return its bytes per entry */
size_t halo_unit_size(halo_unit u);

/**
 * Whether the plan can run an exchange of unit u with operation op (forward
 * or reverse): HALO_SUCCESS, else the reason (HALO_ERR_INVALID_ARG for a
 * bad unit, or one larger than the plan's buffers, setting exec.unit_max_bytes;
 * HALO_ERR_UNSUPPORTED where the plan's transport does not run units, the
 * message saying which). Records no error when it succeeds. Not collective.
 * @param plan     the plan
 * @param u        the unit
 * @param op       the operation
 * @param reverse  1: the reverse exchange, 0: the forward one
 * @return HALO_SUCCESS, or the reason the exchange cannot run
 */
halo_status halo_plan_unit_check(halo_plan plan, halo_unit u, halo_op op, int reverse);

/**
 * halo_exchange_begin() for entries of any unit: x_local holds n_local
 * entries of unit u, x_ghost n_ghost (NULL: the plan's own ghost buffer,
 * halo_plan_get_ghost(), whose entries are then of unit u), and op says
 * whether the ghosts take their owners' values (HALO_OP_INSERT, what
 * halo_exchange_begin() does) or add them (HALO_OP_ADD). Complete it with
 * halo_exchange_end(). Every rank gives the same unit and op.
 *
 * The plan's buffers hold entries of up to exec.unit_max_bytes bytes (its
 * setting, default 8: one double), so every unit up to that size runs on
 * them with no rebuild; the first exchange of a unit of another size than
 * the last makes the plan's MPI requests for it again (an exchange that
 * alternates sizes pays that each time). Values are moved bit for bit.
 * Host memory: transports host (the default of host plans), rma and
 * neighbor; device memory (arrays in device memory, ordered on the plan's
 * stream as halo_exchange_begin() is): transports staged, ipc, nccl (and
 * mpi-device); every strategy. The device transports rma and nvshmem move one
 * double an entry only: HALO_ERR_UNSUPPORTED there (halo_plan_unit_check()
 * says so before).
 * With strategy AUTO's trial on the program's calls, exchanges of other
 * units than one double are run by the plan's own candidate and not timed.
 * @param plan     the plan
 * @param u        what an entry is
 * @param op       how the ghosts take the values
 * @param x_local  n_local entries of unit u
 * @param x_ghost  n_ghost entries of unit u, or NULL
 * @return HALO_ERR_STATE as halo_exchange_begin(), HALO_ERR_INVALID_ARG or
 *         HALO_ERR_UNSUPPORTED as halo_plan_unit_check()
 */
halo_status halo_exchange_begin_unit(halo_plan plan, halo_unit u, halo_op op, const void *x_local,
                                     void *x_ghost);

/**
 * halo_exchange_reverse_begin() for entries of any unit: op HALO_OP_ADD adds
 * the contributions as halo_exchange_reverse_begin() does (for integers
 * exactly; for floating types in that function's order), HALO_OP_INSERT
 * replaces each named entry by one of its slots' values. Complete it with
 * halo_exchange_reverse_end().
 * @param plan     the plan (made with reverse = 1)
 * @param u        what an entry is
 * @param op       how the owners take the contributions
 * @param x_ghost  n_ghost entries of unit u, or NULL
 * @param x_local  n_local entries of unit u
 * @return the errors of halo_exchange_begin_unit()
 */
halo_status halo_exchange_reverse_begin_unit(halo_plan plan, halo_unit u, halo_op op,
                                             const void *x_ghost, void *x_local);

/** halo_exchange_start() for entries of any unit (halo_exchange_begin_unit()).
 *  @param ex       the exchange
 *  @param u        what an entry is
 *  @param op       how the ghosts take the values
 *  @param x_local  n_local entries of unit u
 *  @param x_ghost  n_ghost entries of unit u, or NULL for its own buffer
 *  @return the errors of halo_exchange_start() and halo_exchange_begin_unit() */
halo_status halo_exchange_start_unit(halo_exchange ex, halo_unit u, halo_op op,
                                     const void *x_local, void *x_ghost);

/** halo_exchange_start_reverse() for entries of any unit
 *  (halo_exchange_reverse_begin_unit()).
 *  @param ex       the exchange
 *  @param u        what an entry is
 *  @param op       how the owners take the contributions
 *  @param x_ghost  n_ghost entries of unit u, or NULL for its own buffer
 *  @param x_local  n_local entries of unit u
 *  @return the errors of halo_exchange_start_reverse() and
 *          halo_exchange_begin_unit() */
halo_status halo_exchange_start_reverse_unit(halo_exchange ex, halo_unit u, halo_op op,
                                             const void *x_ghost, void *x_local);

/* ---- the product -------------------------------------------------------- */

/**
 * y = alpha*A*x + beta*y. Starts the exchange, multiplies the diagonal block
 * while it is in flight, completes it, then adds the off-diagonal block.
 * Not collective, but every rank of the plan must call it. With beta = 0, y
 * is not read. Needs a plan made from a matrix.
 *
 * @param plan   the plan of a matrix
 * @param alpha  the factor of A*x
 * @param x  the entries of x this rank owns (col_end-col_begin values)
 * @param y  this rank's rows of y (row_end-row_begin values)
 * @param beta   the factor of y
 * @return HALO_ERR_INVALID_ARG for a plan without a matrix, the errors of the
 *         exchange
 */
halo_status halo_spmv(halo_plan plan, double alpha, const double *x, double beta, double *y);

/**
 * halo_spmv() enqueued on a CUDA stream, returning without waiting for the
 * GPU or for any other rank: the product waits for the work enqueued on
 * stream before the call, and the work enqueued after it waits for the
 * product. stream (cudaStream_t) NULL: the plan's stream. The whole product
 * must run in stream order, so the plan's exchange must not wait on the host
 * on any rank: transport nccl, or ipc with its signals on the GPU (option
 * ipc_signal), every rank with rows; and to be captured into a CUDA graph
 * (cudaStreamBeginCapture on stream, examples/cg_graph.cu uses
 * cudaStreamCaptureModeRelaxed; the graph's every launch is a product; every
 * rank must launch it alike) transport nccl: ipc's signals carry each
 * exchange's number, which a graph would replay unchanged. Device plans made
 * from a matrix; the setting device.timeline off.
 *  @param plan    a device plan of a matrix
 *  @param stream  the stream (cudaStream_t), or NULL for the plan's
 *  @param alpha   the factor of A*x
 *  @param x       the entries of x this rank owns, in device memory
 *  @param beta    the factor of y
 *  @param y       this rank's rows of y, in device memory
 * @return HALO_ERR_INVALID_ARG for a host plan, HALO_ERR_UNSUPPORTED saying
 *         why the plan's exchange cannot run in stream order (or be captured),
 *         on every rank alike.
 */
halo_status halo_spmv_async(halo_plan plan, void *stream, double alpha, const double *x,
                            double beta, double *y);

/**
 * y = alpha*A^T*x + beta*y: x has this rank's rows, y its columns (its part of
 * the column layout). The off-diagonal block's contributions go to their
 * owners by the reverse exchange while the diagonal block's transpose is
 * multiplied. With beta = 0, y is not read. The same bits on every run. Not
 * collective, but every rank must call it. Needs a plan made from a matrix
 * with reverse = 1.
 * @param plan   the plan of a matrix (made with reverse = 1)
 * @param alpha  the factor of A^T*x
 * @param x      this rank's rows (row_end-row_begin values)
 * @param beta   the factor of y
 * @param y      this rank's part of the column layout (col_end-col_begin values)
 * @return HALO_ERR_STATE for a plan made with reverse = 0, the errors of the exchange
 */
halo_status halo_spmv_transpose(halo_plan plan, double alpha, const double *x, double beta,
                                double *y);

/**
 * y = alpha*Ad*x + beta*y with the diagonal (on-process) block alone: no
 * communication. For smoothers, and to time the local product. Not collective.
 * @param plan   the plan of a matrix
 * @param alpha  the factor of Ad*x
 * @param x      the entries of x this rank owns
 * @param beta   the factor of y
 * @param y      this rank's rows of y
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_spmv_diag(halo_plan plan, double alpha, const double *x, double beta, double *y);

/**
 * Wait until all work of the plan on its streams is done (device memory:
 * y of the last product and the ghosts are then readable from the host; host
 * memory: returns at once). Not collective. With exchange_timeout_ms, past
 * it: HALO_ERR_TIMEOUT, the GPU's waits for peers released (see
 * exchange_timeout_ms), and the plan refuses further exchanges; called again
 * on such a plan, it says whether the GPU's work has ended.
 * @param plan  the plan
 * @return HALO_SUCCESS, HALO_ERR_TIMEOUT, HALO_ERR_CUDA
 */
halo_status halo_plan_synchronize(halo_plan plan);

/** Statistics of one phase, over all ranks of the plan (halo_plan_phase_stats(),
 *  halo_sim_phase_stats()). A message is one non-empty transfer between two
 *  distinct ranks in one phase; bytes are 8 per value. Per-rank maxima count
 *  what a rank sends. */
typedef struct {
  halo_scope scope;                         /**< the ranks its messages go between */
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

/** The parts of a plan's set-up (halo_plan_setup_part_seconds()). More may
 *  come: a program loops over them until halo_setup_part_name() says
 *  "unknown". */
typedef enum {
  HALO_SETUP_CONTEXT = 0,   /**< options; the communicator's nodes, device, streams and NCCL
                                 communicator (made by its first plans); the matrix's upload */
  HALO_SETUP_PATTERN = 1,   /**< who needs which entries from whom (the sparse discovery;
                                 none for a plan from explicit lists) */
  HALO_SETUP_CHOICE = 2,    /**< strategy AUTO: the candidates modeled, or timed */
  HALO_SETUP_SCHEDULE = 3,  /**< the strategy's schedule, checked on every rank */
  HALO_SETUP_HANDSHAKE = 4, /**< the schedules checked against each other, and reversed */
  HALO_SETUP_EXECUTORS = 5, /**< tags, buffers, persistent requests, CUDA IPC handles */
  HALO_SETUP_PRODUCT = 6,   /**< the device product (and, once per matrix, its transposes) */
  HALO_SETUP_STATS = 7      /**< these statistics */
} halo_setup_part;

/** Statistics of a plan; the same on every rank. */
typedef struct {
  /** the strategy it runs (strategy AUTO: the one chosen) */
  halo_strategy strategy;
  int ranks;    /**< ranks of the plan */
  int nodes;    /**< nodes (shared-memory domains) of the plan */
  int n_phases; /**< phases of the schedule (each one's statistics: halo_plan_phase_stats()) */
  int64_t message_cap_used; /**< Split: the largest message_cap a node used, in bytes;
                                 0 for the other strategies */
  int remove_duplicates;    /**< the option the plan was made with */
  int ranks_per_node;       /**< most ranks on one node */
  int64_t ghosts;           /**< ghost entries of all ranks */
  int64_t long_rows;        /**< device plans with halo's kernel: rows of all ranks (diagonal and
                                 off-diagonal blocks) split across warps by the long-row kernel
                                 (option spmv_long_row) */
  double setup_seconds;     /**< plan creation time, max over ranks (each part of it:
                                 halo_plan_setup_part_seconds()) */
} halo_stats;

/** Statistics of a plan, computed at creation. Not collective.
 *  @param plan     the plan
 *  @param stats_p  its statistics
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message) */
halo_status halo_plan_stats(halo_plan plan, halo_stats *stats_p);

/**
 * Statistics of one phase of the plan's schedule, computed at creation, the
 * same on every rank. Not collective.
 *
 *  @param plan     the plan
 * @param phase    0 <= phase < halo_stats.n_phases
 * @param stats_p  the phase's statistics
 * @return HALO_ERR_INVALID_ARG for a phase outside [0, n_phases) (the message
 *         gives the range)
 */
halo_status halo_plan_phase_stats(halo_plan plan, int phase, halo_phase_stats *stats_p);

/**
 * The seconds one part of the plan's set-up took, the most of any rank (the
 * parts' sum is at most halo_stats.setup_seconds). Not collective.
 *
 * @param plan       the plan
 * @param part       a halo_setup_part
 * @param seconds_p  its seconds
 * @return HALO_ERR_INVALID_ARG for a value that is no halo_setup_part
 */
halo_status halo_plan_setup_part_seconds(halo_plan plan, halo_setup_part part, double *seconds_p);

/** The name of a set-up part ("context", "pattern", "choice", "schedule",
 *  "handshake", "executors", "product", "stats"), or "unknown".
 *  @param part  a set-up part
 *  @return its name */
const char *halo_setup_part_name(halo_setup_part part);

/**
 * The modeled time of the plan's exchange (the performance model of
 * docs/strategies.md applied to this rank's schedule and its peers'): per phase the most
 * seconds of any rank, and their sum. Collective.
 *
 *  @param plan             the plan
 * @param params           a built-in parameter set ("lassen") or a parameter file;
 *                         NULL: HALO_PARAMS, else "lassen"
 * @param max_phases       entries of phase_seconds_p (>= 0)
 * @param phase_seconds_p  max_phases entries: the first min(n_phases,
 *                         max_phases) the phases' times, the rest 0; or NULL
 *                         (then max_phases is not read)
 * @param seconds_p        the sum over all the phases
 *  @return HALO_ERR_IO or HALO_ERR_FORMAT for parameters that cannot be read, on
 *          every rank
 */
halo_status halo_plan_model(halo_plan plan, const char *params, int max_phases,
                            double *phase_seconds_p, double *seconds_p);

/**
 * What the plan runs and why, in one line of text: strategy, transport,
 * message_cap; with strategy AUTO the candidates and their modeled (or
 * timed) seconds. Not collective. Truncated to len-1 characters.
 * @param plan  the plan
 * @param buf   where the line goes
 * @param len   room in buf, in characters
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_plan_describe(halo_plan plan, char *buf, size_t len);

/** One candidate a plan of strategy AUTO weighed. */
typedef struct {
  /** its strategy */
  halo_strategy strategy;
  /** its transport */
  halo_transport transport;
  int64_t message_cap; /**< bytes (Split) */
  double seconds;      /**< modeled */
  double timed;        /**< timed: seconds per call, at plan time (autotune, auto.trial=plan)
                            the median of the trial's rounds of the most of any rank; on the
                            program's first calls (auto.trial=calls, the default) the most of
                            any rank of its mean over its calls but the slowest (host: the
                            seconds in halo's begin and end; device: the GPU's, from the begin
                            to the ghosts' arrival); 0 when not timed */
  double setup_seconds; /**< modeled set-up the candidate adds: its transport's state on a
                             communicator that has none yet (NCCL's communicator, ...); the
                             choice minimises setup_seconds + expected_uses x time per use */
} halo_candidate;

/**
 * The candidates a plan of strategy AUTO weighed, in the order it weighed
 * them, and the one it chose (0 candidates for a plan given its strategy).
 * Not collective.
 * @param plan          the plan
 * @param max           room in candidates (may be 0)
 * @param candidates    the first min(max, n) candidates, or NULL
 * @param n_p           how many there were
 * @param best_p        the index of the chosen one (-1 when none), or NULL
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_plan_get_candidates(halo_plan plan, int max, halo_candidate *candidates, int *n_p,
                                     int *best_p);

/**
 * With the setting device.timeline (device plans): the mean seconds, over the
 * products since the last call, from the exchange's start (x ready) to the
 * end of the diagonal product (seconds[0]), and to the start and end of the
 * exchange's transfer on the GPU (seconds[1], seconds[2]: the NCCL group, the
 * staged copies down and up, the IPC copies); n_p: how many products were
 * recorded. Resets the sums. Not collective.
 * @param plan     the plan
 * @param seconds  the three mean times
 * @param n_p      the products recorded
 * @return HALO_ERR_STATE for a plan made without the setting.
 */
halo_status halo_plan_timeline(halo_plan plan, double seconds[3], int64_t *n_p);

/**
 * With the setting staged.copy_timing (device plans, staged transport): the seconds
 * and bytes of the copies down to and up from pinned host memory of the
 * plan's own exchanges since the last call. Resets the sums. Not collective.
 * @param plan            the plan
 * @param seconds_down_p  seconds of the copies down to host memory
 * @param seconds_up_p    seconds of the copies up to device memory
 * @param bytes_down_p    bytes copied down
 * @param bytes_up_p      bytes copied up
 * @return HALO_ERR_STATE for a plan made without the setting.
 */
halo_status halo_plan_copy_times(halo_plan plan, double *seconds_down_p, double *seconds_up_p,
                                 int64_t *bytes_down_p, int64_t *bytes_up_p);

/** Release a plan; NULL-safe, sets *plan_p to NULL. Completes an exchange
 *  still in flight first; exchanges taken from it (halo_exchange_create)
 *  must be destroyed before. Not collective: ranks may destroy the plans of
 *  a communicator in any order (the next plan's tags are agreed across
 *  ranks when it is made).
 *  @param plan_p  the plan, or a pointer to NULL */
void halo_plan_destroy(halo_plan *plan_p);

/* ------------------------------------------------------------------------ */
/* Nodes                                                                    */
/* ------------------------------------------------------------------------ */

/** Where a rank is among the nodes of a communicator. */
typedef struct {
  int node;           /**< this rank's node, 0 .. n_nodes-1, in the order of their lowest rank */
  int n_nodes;        /**< nodes of the communicator */
  int local_rank;     /**< this rank's place on its node */
  int local_size;     /**< ranks on its node */
  int max_local_size; /**< most ranks on one node */
} halo_node_info;

/**
 * The nodes of a communicator as plans see them: ranks_per_node = 0 takes the
 * nodes of MPI (or HALO_RANKS_PER_NODE when set), K > 0 virtual nodes of K
 * consecutive ranks. Collective the first time for a communicator and K (the
 * node communicator is then cached with the communicator's plans).
 * @param comm            the communicator
 * @param ranks_per_node  0, or K > 0
 * @param info_p          this rank's place (set on success only)
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message),
 *         on every rank when it is collective
 */
halo_status halo_comm_get_node_info(MPI_Comm comm, int ranks_per_node, halo_node_info *info_p);

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif /* HALO_H */
