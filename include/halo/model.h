/**
 * @file
 * halo performance model: the machine parameters of the model
 * (docs/strategies.md, "The performance model"), the least-squares fits of them, and their measurement on the
 * ranks of a communicator (halo_params_measure, which `halo params measure`
 * runs). Strategy AUTO, halo_plan_model() and halo_sim_model() read these
 * sets; a program may read, write and fit its own. */
#ifndef HALO_MODEL_H
#define HALO_MODEL_H

#include <stdio.h>

#include "halo.h"

#ifdef __cplusplus
extern "C" {
#endif

HALO_EXPORT_BEGIN

/* ---- parameter sets ---------------------------------------------------- */

/**
 * @file
 * @par Parameter sets
 * Machine parameters of the performance model (docs/strategies.md): postal
 * alpha/beta of messages by kind (inter-CPU, inter-GPU), protocol and
 * locality, of cudaMemcpyAsync copies for one and four processes copying at
 * once, and the node's injection limit. A parameter set is a plain text file
 * of `key = value` lines ('#' starts a comment); every key below must be
 * given once, unknown keys are errors that name the key and the line.
 *
 * @code{.unparsed}
 *   name = lassen                         a word: letters, digits, - _ .
 *   sockets_per_node = 2                  on-socket vs on-node messages
 *   short_max = 256                       bytes: a message of s bytes is short
 *   eager_max = 16384                     when s < short_max, eager when
 *                                         s < eager_max, else rendezvous
 *   cpu.<short|eager|rendezvous>.<on_socket|on_node|off_node>.<alpha|beta>
 *   gpu.<eager|rendezvous>.<on_socket|on_node|off_node>.<alpha|beta>
 *                                         device-aware messages; a short one
 *                                         costs what an eager one does
 *   copy.<h2d|d2h>.<1|4>.<alpha|beta>     cudaMemcpyAsync, 1 or 4 processes
 *   injection.beta = 4.19e-11             s/byte a node injects (1/R_N)
 *
 * Optional keys, for what the node-aware paper's model has no parameter for
 * (halo params measure writes them on a machine with GPUs):
 *   staged.alpha = 0                      s: the staged path's fixed cost in a
 *                                         phase where a GPU rank sends or
 *                                         receives through host memory, beyond
 *                                         its copies and messages (waiting for
 *                                         the copy down, starting MPI, enqueueing
 *                                         the copy up); 0 when not given
 *   ipc.alpha, ipc.beta                   postal time of one on-host device
 *                                         copy through a CUDA IPC handle, read by
 *                                         the receiving GPU; both or neither:
 *                                         when not given, such a copy costs an
 *                                         inter-GPU message (gpu.*)
 *   NAME.setup.alpha, NAME.setup.beta     a transport's set-up once per
 *                                         communicator (s, s per rank): NCCL's
 *                                         communicator; both or neither; when
 *                                         not given, the transport's own model
 * @endcode
 *
 * alpha in seconds, beta in seconds per byte; every value finite and >= 0. */
/** Where the two ranks of a message are, one from the other. */
typedef enum {
  HALO_LOC_ON_SOCKET = 0, /**< on one socket */
  HALO_LOC_ON_NODE = 1,   /**< another socket of the node */
  HALO_LOC_OFF_NODE = 2,  /**< another node */
  HALO_N_LOC = 3          /**< number of localities */
} halo_locality;

/** The protocol of a message, by its size (halo_params_protocol()). */
typedef enum {
  HALO_PROTO_SHORT = 0,      /**< fewer bytes than short_max */
  HALO_PROTO_EAGER = 1,      /**< from short_max to fewer than eager_max bytes */
  HALO_PROTO_RENDEZVOUS = 2, /**< eager_max bytes or more */
  HALO_N_PROTO = 3           /**< number of protocols */
} halo_protocol;

/** The postal model of one kind of transfer: alpha + beta * bytes seconds. */
typedef struct {
  double alpha; /**< s */
  double beta;  /**< s/byte */
} halo_postal;

/** A parameter set: the machine parameters of the model, the keys of a
 *  parameter file (above). */
typedef struct {
  char name[64];        /**< the set's name (key name) */
  int sockets_per_node; /**< sockets of a node (key sockets_per_node) */
  /** @var short_max
   *  bytes: a message of fewer is short (key short_max) */
  int64_t short_max, eager_max; /**< bytes: a message of fewer is eager, if not short (key
                                     eager_max) */
  halo_postal cpu[HALO_N_PROTO][HALO_N_LOC]; /**< inter-CPU messages (cpu.*) */
  halo_postal gpu[HALO_N_PROTO][HALO_N_LOC]; /**< device-aware messages (gpu.*); [HALO_PROTO_SHORT]
                                                  mirrors [HALO_PROTO_EAGER] */
  /** @var h2d
   *  host-to-device copies (copy.h2d.*): [0]: one process copies, [1]: four at once */
  halo_postal h2d[2], d2h[2]; /**< device-to-host copies (copy.d2h.*): [0]: one
                                   process copies, [1]: four at once */
  double injection_beta;      /**< s/byte (injection.beta) */
  double staged_alpha;        /**< s, per phase (optional key; 0 if not given) */
  int have_ipc;               /**< 1: ipc.* given: */
  halo_postal ipc;            /**< an IPC pull by a GPU rank */
  /** A transport's own pair, by its enumerator, for the transports whose model may have one
   * (keys NAME.alpha and NAME.beta, optional): rma (a message in host memory), nvshmem (an
   * exchange between GPUs of one host); halo_transport_get_info says which have one.
   * have_own[t]: 1 when transport t's pair is given. */
  int have_own[HALO_N_TRANSPORTS];
  halo_postal own[HALO_N_TRANSPORTS]; /**< the pairs, by transport (have_own) */
  /** A transport's set-up, once per communicator (keys NAME.setup.alpha in s and
   * NAME.setup.beta in s per rank of the communicator, optional, both or neither): what
   * strategy AUTO adds to its candidates where a communicator has not made the
   * transport's state yet (NCCL's communicator); without them the transport's own model.
   * have_setup[t]: 1 when transport t's pair is given. */
  int have_setup[HALO_N_TRANSPORTS];
  halo_postal setup[HALO_N_TRANSPORTS]; /**< the set-up pairs, by transport (have_setup) */
} halo_params;

/** A built-in set by name: "lassen" (the node-aware paper's Tables 2-4),
 *  "h200" (two H200 of one host with NVLink, measured by halo params
 *  measure; bench/results/params-h200x2.txt).
 *  HALO_ERR_INVALID_ARG naming the known sets otherwise.
 *  @param name  the set's name
 *  @param p     the set
 *  @return HALO_SUCCESS, HALO_ERR_INVALID_ARG for another name */
halo_status halo_params_builtin(const char *name, halo_params *p);

/** Parse the text of a parameter file; source names it in errors
 *  ("SOURCE:LINE: ...", naming the key: unknown, duplicate or missing key,
 *  bad or negative or non-finite number, short_max >= eager_max,
 *  sockets_per_node < 1). HALO_ERR_FORMAT on any error; p is set only on
 *  success.
 *  @param text    the text of the file
 *  @param source  its name, for the messages
 *  @param p       the set
 *  @return HALO_SUCCESS, HALO_ERR_FORMAT */
halo_status halo_params_parse(const char *text, const char *source, halo_params *p);

/** Read a parameter file (halo_params_parse on its text); HALO_ERR_IO when
 *  it cannot be read.
 *  @param path  the file
 *  @param p     the set
 *  @return HALO_SUCCESS, HALO_ERR_IO, HALO_ERR_FORMAT */
halo_status halo_params_read(const char *path, halo_params *p);

/** A built-in name, else a file path; HALO_ERR_IO naming the built-in sets
 *  when it is neither.
 *  @param name_or_path  a built-in set's name, or a file
 *  @param p             the set
 *  @return HALO_SUCCESS, HALO_ERR_IO, HALO_ERR_FORMAT */
halo_status halo_params_load(const char *name_or_path, halo_params *p);

/** Write p as a parameter file that reads back to the same values, bit for
 *  bit (%.17g). HALO_ERR_IO when the stream fails.
 *  @param p  the set
 *  @param f  the stream
 *  @return HALO_SUCCESS, HALO_ERR_IO */
halo_status halo_params_write(const halo_params *p, FILE *f);

/** The protocol of a message of s bytes.
 *  @param p      the set
 *  @param bytes  s, the size of the message
 *  @return its protocol */
halo_protocol halo_params_protocol(const halo_params *p, int64_t bytes);

/** Postal time of one message of s bytes: gpu = 0 inter-CPU, 1 device-aware.
 *  @param p      the set
 *  @param gpu    0 or 1
 *  @param loc    where the two ranks are
 *  @param bytes  s, the size of the message
 *  @return its time, in seconds */
double halo_params_message(const halo_params *p, int gpu, halo_locality loc, int64_t bytes);

/* ---- fits ----------------------------------------------------------------- */

/**
 * @file
 * @par Fits
 * Least-squares fits of the postal model t = alpha + beta * s to measured
 * (size, time) points, over the whole set or over the sizes of one protocol
 * range. Pure functions: no MPI, no allocation.
 *
 * The fit minimises sum_i w_i (alpha + beta s_i - t_i)^2 with w_i = 1
 * (HALO_FIT_ABSOLUTE) or w_i = 1 / t_i^2 (HALO_FIT_RELATIVE: the relative
 * errors, so that the small sizes of a range spanning decades weigh as much
 * as the large ones). alpha and beta are never negative: a negative value,
 * which noise gives when the true one is near zero, is set to 0 and the
 * other refitted alone (beta = sum w s t / sum w s^2 through the origin when
 * alpha is clamped; alpha = the weighted mean of t when beta is), and the
 * fit says which one was clamped. */
/** The weights of the points of a fit (above). */
typedef enum {
  HALO_FIT_ABSOLUTE = 0, /**< least squares of the errors in seconds */
  HALO_FIT_RELATIVE = 1  /**< least squares of the errors relative to the measured times */
} halo_fit_weighting;

/** Bits of halo_fit.clamped. */
enum {
  HALO_FIT_ALPHA_CLAMPED = 1, /**< alpha was negative, set to 0 */
  HALO_FIT_BETA_CLAMPED = 2   /**< beta was negative, set to 0 */
};

/** A fit of the postal model t = alpha + beta * s (halo_fit_postal()). */
typedef struct {
  double alpha;       /**< s */
  double beta;        /**< s/byte */
  double r2;          /**< coefficient of determination 1 - SS_res / SS_tot, unweighted;
                         1 when every time is the same and fitted exactly */
  double max_rel_err; /**< largest |alpha + beta s_i - t_i| / t_i over the points with t_i > 0 */
  int64_t n;          /**< points fitted */
  int clamped;        /**< HALO_FIT_ALPHA_CLAMPED | HALO_FIT_BETA_CLAMPED */
} halo_fit;

/**
 * Fit t = alpha + beta * s to n points. Sizes and times must be finite and
 * >= 0 (times > 0 with HALO_FIT_RELATIVE), and at least two sizes distinct.
 *  @param s      n sizes, bytes
 *  @param t      n times, seconds
 *  @param n      points
 *  @param w      the weights
 *  @param fit_p  the fit (set on success only)
 * @return HALO_ERR_INVALID_ARG with a message (no points, one point, every
 *         size the same, a negative or non-finite value); fit_p is then
 *         left as it was.
 */
halo_status halo_fit_postal(const double *s, const double *t, int64_t n, halo_fit_weighting w,
                            halo_fit *fit_p);

/**
 * halo_fit_postal() over the points with lo <= s < hi; the message of a
 * failure names the range and what it holds ("the eager range [256, 16384)
 * holds 1 point (256 bytes): ...").
 * @param s      n sizes, bytes
 * @param t      n times, seconds
 * @param n      points
 * @param lo     the smallest size of the range
 * @param hi     one past the largest
 * @param what  name of the range in messages ("eager")
 * @param w      the weights
 * @param fit_p  the fit (set on success only)
 * @return HALO_SUCCESS, HALO_ERR_INVALID_ARG as halo_fit_postal()
 */
halo_status halo_fit_range(const double *s, const double *t, int64_t n, double lo, double hi,
                           const char *what, halo_fit_weighting w, halo_fit *fit_p);

/**
 * halo_fit_range() over each protocol range of a sweep: fits[HALO_PROTO_SHORT]
 * over s < short_max, fits[HALO_PROTO_EAGER] over short_max <= s < eager_max,
 * fits[HALO_PROTO_RENDEZVOUS] over s >= eager_max (the rule of
 * halo_params_protocol()). Fails, naming the range, if one cannot be fitted;
 * fits is then left as it was.
 * @param s          n sizes, bytes
 * @param t          n times, seconds
 * @param n          points
 * @param short_max  the short protocol's limit
 * @param eager_max  the eager protocol's limit
 * @param w          the weights
 * @param fits       a fit per protocol (set on success only)
 * @return HALO_SUCCESS, HALO_ERR_INVALID_ARG naming the range
 */
halo_status halo_fit_protocols(const double *s, const double *t, int64_t n, int64_t short_max,
                               int64_t eager_max, halo_fit_weighting w,
                               halo_fit fits[HALO_N_PROTO]);

/** Evaluate a fit at s bytes.
 *  @param f  the fit
 *  @param s  bytes
 *  @return alpha + beta * s, seconds */
static inline double halo_fit_eval(const halo_fit *f, double s) { return f->alpha + f->beta * s; }

/* ---- measuring a set -------------------------------------------------------- */

/**
 * @file
 * @par Measuring a set
 * halo_params_measure() measures a set on the ranks of a communicator and
 * fits it, BenchPress-style (what `halo params measure` runs):
 *   - ping-pong of rank 0 with a partner on its socket, on the other socket
 *     of its node and on another node, the other ranks waiting: per size the
 *     median half round trip; `cpu.<protocol>.<locality>` fitted per protocol
 *     range (halo_fit_protocols);
 *   - injection (max-rate): k = 1, 2, 4, ..., K ranks of rank 0's node
 *     ping-pong large messages with k ranks of another node at once;
 *     injection.beta is the fitted s/byte of the node's total at the
 *     largest k;
 *   - with CUDA and a device on every rank: cudaMemcpyAsync sweeps by 1
 *     process and by 4 at once (copy.*), device-aware messages through halo's
 *     own exchange (gpu.*: nccl when each rank has its own GPU, else ipc),
 *     the staged path's fixed cost (staged.alpha), and the ipc copy between
 *     rank 0 and another rank of its machine (ipc.*), whatever their nodes.
 * A locality with no pair of ranks is copied from the nearest measured one;
 * what cannot be measured comes from the base set. A note says so for each
 * group of keys (halo_params_measured). */

/** Called on rank 0 with each line of the report (what is measured, each
 *  fit, what is copied and why), as it goes; line ends with `'\n'`. */
typedef void (*halo_params_report_fn)(const char *line, void *arg);

/** Options of halo_params_measure(). Start from
 *  halo_params_measure_options_default(); every rank gives the same values
 *  (base and name are taken from rank 0, report is called on rank 0). */
typedef struct {
  /** 0 (default): the nodes of MPI (MPI_COMM_TYPE_SHARED); K > 0: virtual
   *  nodes of K consecutive ranks, for off-node pairs when all ranks share
   *  one machine. */
  int ranks_per_node;
  /** The smallest and the largest message, 1 <= min_bytes < max_bytes <=
   *  2^30 (defaults 8 and 16777216). The sizes timed: these two, and the
   *  powers of two and their midpoints (1.5 x) in between. */
  int64_t min_bytes, max_bytes; /**< the largest message (above) */
  /** Timed round trips per size, after 1 + iterations / 10 untimed ones
   *  (default 100). */
  int iterations;
  /** The protocol switches the fits assume, short -> eager and eager ->
   *  rendezvous, in bytes (defaults 256 and 16384): every protocol range,
   *  [min_bytes, short_max), [short_max, eager_max) and [eager_max,
   *  max_bytes], must hold two sizes. */
  int64_t short_max, eager_max; /**< eager -> rendezvous (above) */
  halo_fit_weighting fit;       /**< default HALO_FIT_RELATIVE */
  /** The set the unmeasured keys come from: a built-in name or a file, read
   *  on rank 0; NULL (default): "lassen". */
  const char *base;
  /** Name of the measured set, a word of at most 63 letters, digits, '-',
   *  '_' or '.'; NULL (default): "measured". */
  const char *name;
  /** -1 (default): measure copy.*, gpu.*, staged.* and ipc.* when halo has
   *  CUDA and every rank sees a device; 0: never (they come from base). */
  int device;
  halo_params_report_fn report; /**< rank 0's report lines; NULL (default): none */
  void *report_arg;             /**< passed to report */
} halo_params_measure_options;

/** The defaults above.
 *  @return the default options */
halo_params_measure_options halo_params_measure_options_default(void);

/** Most notes of a measured set (halo_params_measured.note). */
#define HALO_PARAMS_MAX_NOTES 16

/** Provenance of some keys of a measured set: how they were measured, or
 *  where they come from and why. */
typedef struct {
  char keys[48];  /**< an fnmatch() pattern of the keys: "cpu.*.on_node.*", "ipc.*" */
  char text[300]; /**< one line: "gpu.*: from lassen (halo built without CUDA)" */
} halo_params_note;

/** A measured set and its provenance. */
typedef struct {
  halo_params params; /**< the set */
  /** @var ranks
   *  what it was measured on: ranks */
  int ranks, nodes; /**< what it was measured on (nodes: virtual ones with ranks_per_node) */
  int n_notes;      /**< the first note matching a key is about it */
  halo_params_note note[HALO_PARAMS_MAX_NOTES]; /**< the notes, n_notes of them */
} halo_params_measured;

/**
 * Check options without measuring: HALO_ERR_INVALID_ARG with a message that
 * names the option ("min_bytes 4096 must be below max_bytes 1024", "the
 * rendezvous range of sizes holds 1 of the 23 sizes ..."). base is not read
 * here. Not collective.
 * @param opts  the options, or NULL for the defaults
 * @return HALO_SUCCESS, HALO_ERR_INVALID_ARG
 */
halo_status halo_params_measure_check(const halo_params_measure_options *opts);

/**
 * Measure and fit the model's parameters on the ranks of comm (at least 2),
 * as described above; the unmeasured keys come from opts->base. Collective
 * over comm; it takes seconds to minutes (the sizes times the iterations,
 * per locality and transport), during which the ranks not measuring sleep.
 *  @param comm  the communicator
 * @param opts  NULL: the defaults
 * @param m     set on every rank, the same bit for bit, on success only
 * @return on every rank the same status: HALO_ERR_INVALID_ARG for a bad
 *         option (halo_params_measure_check) or fewer than 2 ranks,
 *         HALO_ERR_INCONSISTENT when ranks give other options, the status of
 *         halo_params_load for base ("base: ..."), HALO_ERR_INVALID_ARG when
 *         a sweep cannot be fitted, HALO_ERR_MPI, HALO_ERR_CUDA,
 *         HALO_ERR_OUT_OF_MEMORY; the message is the failing rank's, "rank
 *         R: ...". Never a hang when one rank fails.
 */
halo_status halo_params_measure(MPI_Comm comm, const halo_params_measure_options *opts,
                                halo_params_measured *m);

/**
 * Write a measured set as a parameter file: the lines of header, each as a
 * comment "# ..." (header may be NULL), then halo_params_write()'s lines
 * with each note as a '#' line before the first key it is about. Reads back
 * (halo_params_read) to the same values, bit for bit. Not collective.
 * HALO_ERR_IO when the stream fails.
 * @param m       the measured set
 * @param header  lines of the header, or NULL
 * @param f       the stream
 * @return HALO_SUCCESS, HALO_ERR_IO
 */
halo_status halo_params_write_measured(const halo_params_measured *m, const char *header, FILE *f);

/* ---- the machine's parameter file ---------------------------------------- */

/**
 * Where this machine's measured set is kept, and where a plan looks for its
 * parameters when neither the option params nor HALO_PARAMS names a set:
 * $XDG_CACHE_HOME/halo/params-MACHINE, else $HOME/.cache/halo/params-MACHINE,
 * MACHINE being the host name up to its first '.' without its trailing
 * digits, '-' and '_' (lassen708 -> lassen), so that the nodes of one cluster
 * share it. `halo params measure --save` writes it. When the file does not
 * exist a plan takes the built-in set of its kind of machine
 * (halo_params_builtin_for). buf is "" when neither variable is set.
 * HALO_ERR_INVALID_ARG when the path does not fit in len characters.
 * @param buf  where the path goes
 * @param len  room in buf, in characters
 * @return HALO_SUCCESS, HALO_ERR_INVALID_ARG
 */
halo_status halo_params_cache_path(char *buf, size_t len);

/** Open this machine's file (halo_params_cache_path, into path) for
 *  writing, its directory made first; the caller closes *f_p.
 *  HALO_ERR_IO naming the path when neither variable is set or it cannot be
 *  made or opened. Not collective.
 *  @param path  where the path goes
 *  @param len   room in path, in characters
 *  @param f_p   the stream, open for writing
 *  @return HALO_SUCCESS, HALO_ERR_IO */
halo_status halo_params_cache_open(char *path, size_t len, FILE **f_p);

/** The built-in set a plan takes when no set is named and the machine has no
 *  file: by the name of its GPU (cudaDeviceProp.name; NULL or "" for a host
 *  plan): "h200" for a name with "H200"; "lassen" for any other machine.
 *  @param gpu_name  the GPU's name, or NULL
 *  @return the name of the built-in set */
const char *halo_params_builtin_for(const char *gpu_name);

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif /* HALO_MODEL_H */
