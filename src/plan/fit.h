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
#ifndef HALO_PLAN_FIT_H
#define HALO_PLAN_FIT_H

#include "halo_impl.h"
#include "plan/params.h"

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

#endif
