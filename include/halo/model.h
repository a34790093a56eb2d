/* halo performance model: the machine parameters of the model (DESIGN.md
 * section 6) and the least-squares fits that `halo params measure` makes of
 * them. Strategy AUTO, halo_plan_model() and halo_sim_model() read these
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

/* Machine parameters of the performance model (DESIGN.md §6): postal
 * alpha/beta of messages by kind (inter-CPU, inter-GPU), protocol and
 * locality, of cudaMemcpyAsync copies for one and four processes copying at
 * once, and the node's injection limit. A parameter set is a plain text file
 * of `key = value` lines ('#' starts a comment); every key below must be
 * given once, unknown keys are errors that name the key and the line.
 *
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
 *
 * alpha in seconds, beta in seconds per byte; every value finite and >= 0. */
typedef enum {
  HALO_LOC_ON_SOCKET = 0,
  HALO_LOC_ON_NODE = 1, /* another socket of the node */
  HALO_LOC_OFF_NODE = 2,
  HALO_N_LOC = 3
} halo_locality;

typedef enum {
  HALO_PROTO_SHORT = 0,
  HALO_PROTO_EAGER = 1,
  HALO_PROTO_RENDEZVOUS = 2,
  HALO_N_PROTO = 3
} halo_protocol;

typedef struct {
  double alpha; /* s */
  double beta;  /* s/byte */
} halo_postal;

typedef struct {
  char name[64];
  int sockets_per_node;
  int64_t short_max, eager_max; /* bytes */
  halo_postal cpu[HALO_N_PROTO][HALO_N_LOC];
  halo_postal gpu[HALO_N_PROTO][HALO_N_LOC]; /* [HALO_PROTO_SHORT] mirrors [HALO_PROTO_EAGER] */
  halo_postal h2d[2], d2h[2];                /* [0]: one process copies, [1]: four at once */
  double injection_beta;                     /* s/byte */
  double staged_alpha;                       /* s, per phase (optional key; 0 if not given) */
  int have_ipc;                              /* ipc.* given: */
  halo_postal ipc;                           /* an IPC pull by a GPU rank */
} halo_params;

/** A built-in set by name: "lassen" (the node-aware paper's Tables 2-4).
 *  HALO_ERR_INVALID_ARG naming the known sets otherwise. */
halo_status halo_params_builtin(const char *name, halo_params *p);

/** Parse the text of a parameter file; source names it in errors
 *  ("SOURCE:LINE: ...", naming the key: unknown, duplicate or missing key,
 *  bad or negative or non-finite number, short_max >= eager_max,
 *  sockets_per_node < 1). HALO_ERR_FORMAT on any error; p is set only on
 *  success. */
halo_status halo_params_parse(const char *text, const char *source, halo_params *p);

/** Read a parameter file (halo_params_parse on its text); HALO_ERR_IO when
 *  it cannot be read. */
halo_status halo_params_read(const char *path, halo_params *p);

/** A built-in name, else a file path; HALO_ERR_IO naming the built-in sets
 *  when it is neither. */
halo_status halo_params_load(const char *name_or_path, halo_params *p);

/** Write p as a parameter file that reads back to the same values, bit for
 *  bit (%.17g). HALO_ERR_IO when the stream fails. */
halo_status halo_params_write(const halo_params *p, FILE *f);

/** The protocol of a message of s bytes. */
halo_protocol halo_params_protocol(const halo_params *p, int64_t bytes);

/** Postal time of one message of s bytes: gpu = 0 inter-CPU, 1 device-aware. */
double halo_params_message(const halo_params *p, int gpu, halo_locality loc, int64_t bytes);


/* ---- fits ----------------------------------------------------------------- */

/* Least-squares fits of the postal model t = alpha + beta * s to measured
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
typedef enum {
  HALO_FIT_ABSOLUTE = 0, /* least squares of the errors in seconds */
  HALO_FIT_RELATIVE = 1  /* least squares of the errors relative to the measured times */
} halo_fit_weighting;

/* Bits of halo_fit.clamped. */
enum { HALO_FIT_ALPHA_CLAMPED = 1, HALO_FIT_BETA_CLAMPED = 2 };

typedef struct {
  double alpha;       /* s */
  double beta;        /* s/byte */
  double r2;          /* coefficient of determination 1 - SS_res / SS_tot, unweighted;
                         1 when every time is the same and fitted exactly */
  double max_rel_err; /* largest |alpha + beta s_i - t_i| / t_i over the points with t_i > 0 */
  int64_t n;          /* points fitted */
  int clamped;        /* HALO_FIT_ALPHA_CLAMPED | HALO_FIT_BETA_CLAMPED */
} halo_fit;

/**
 * Fit t = alpha + beta * s to n points. Sizes and times must be finite and
 * >= 0 (times > 0 with HALO_FIT_RELATIVE), and at least two sizes distinct.
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
 * @param what  name of the range in messages ("eager")
 */
halo_status halo_fit_range(const double *s, const double *t, int64_t n, double lo, double hi,
                           const char *what, halo_fit_weighting w, halo_fit *fit_p);

/**
 * halo_fit_range() over each protocol range of a sweep: fits[HALO_PROTO_SHORT]
 * over s < short_max, fits[HALO_PROTO_EAGER] over short_max <= s < eager_max,
 * fits[HALO_PROTO_RENDEZVOUS] over s >= eager_max (the rule of
 * halo_params_protocol()). Fails, naming the range, if one cannot be fitted;
 * fits is then left as it was.
 */
halo_status halo_fit_protocols(const double *s, const double *t, int64_t n, int64_t short_max,
                               int64_t eager_max, halo_fit_weighting w,
                               halo_fit fits[HALO_N_PROTO]);

/** Evaluate a fit at s bytes. */
static inline double halo_fit_eval(const halo_fit *f, double s) { return f->alpha + f->beta * s; }

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif /* HALO_MODEL_H */
