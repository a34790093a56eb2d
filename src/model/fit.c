/* Least-squares fits of the postal model (fit.h). */
#include "model/fit.h"

#include <math.h>
#include <stdio.h>

static double weight(halo_fit_weighting w, double t) {
  return w == HALO_FIT_RELATIVE ? 1.0 / (t * t) : 1.0;
}

/* "[256, 16384)", or "[16384, ...)" for an open range */
static void range_text(double lo, double hi, char *buf, size_t len) {
  if (isinf(hi))
    snprintf(buf, len, "[%.0f, ...)", lo);
  else
    snprintf(buf, len, "[%.0f, %.0f)", lo, hi);
}

/* The fit over the points with lo <= s < hi; what names the range in
 * messages (NULL: all points). */
static halo_status fit_points(const double *s, const double *t, int64_t n, double lo, double hi,
                              const char *what, halo_fit_weighting w, halo_fit *fit_p) {
  if (!fit_p || (n > 0 && (!s || !t)) || !(lo <= hi))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "fit: NULL argument or lo > hi");
  if (w != HALO_FIT_ABSOLUTE && w != HALO_FIT_RELATIVE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "fit: unknown weighting %d", (int)w);
  char where[160] = "";
  if (what) {
    char r[96];
    range_text(lo, hi, r, sizeof r);
    snprintf(where, sizeof where, "the %s range %s: ", what, r);
  }
#define IN_RANGE(i) (s[i] >= lo && s[i] < hi)
  int64_t m = 0, first = -1, distinct = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(s[i]) || s[i] < 0 || !isfinite(t[i]) || t[i] < 0)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "fit: point %lld (%g bytes, %g s): sizes and times must be finite and >= 0",
                        (long long)i, s[i], t[i]);
    if (!IN_RANGE(i)) continue;
    if (w == HALO_FIT_RELATIVE && t[i] == 0)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "fit: %spoint %lld (%g bytes) has time 0: a relative fit needs times > 0",
                        where, (long long)i, s[i]);
    if (first < 0) first = i;
    distinct |= s[i] != s[first];
    m++;
  }
  if (m == 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "fit: %sno points: need two distinct sizes", where);
  if (!distinct)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "fit: %s%lld point%s, all at %g bytes: alpha and beta cannot be told apart "
                      "(need two distinct sizes)",
                      where, (long long)m, m == 1 ? "" : "s", s[first]);

  /* weighted means, then the centred sums (stable for sizes over decades) */
  double W = 0, ms = 0, mt = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!IN_RANGE(i)) continue;
    const double wi = weight(w, t[i]);
    W += wi, ms += wi * s[i], mt += wi * t[i];
  }
  ms /= W, mt /= W;
  double sss = 0, sst = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!IN_RANGE(i)) continue;
    const double wi = weight(w, t[i]);
    sss += wi * (s[i] - ms) * (s[i] - ms);
    sst += wi * (s[i] - ms) * (t[i] - mt);
  }
  halo_fit f = {0};
  f.n = m;
  f.beta = sst / sss; /* sss > 0: two sizes differ */
  f.alpha = mt - f.beta * ms;
  if (f.beta < 0) {
    /* times falling with size: noise over a flat curve; the weighted mean */
    f.beta = 0, f.alpha = mt, f.clamped = HALO_FIT_BETA_CLAMPED;
  } else if (f.alpha < 0) {
    /* through the origin: beta = sum w s t / sum w s^2 (>= 0, as s, t >= 0;
     * sum w s^2 > 0, as two sizes differ) */
    double sst0 = 0, sss0 = 0;
    for (int64_t i = 0; i < n; i++) {
      if (!IN_RANGE(i)) continue;
      const double wi = weight(w, t[i]);
      sst0 += wi * s[i] * t[i], sss0 += wi * s[i] * s[i];
    }
    f.alpha = 0, f.beta = sst0 / sss0, f.clamped = HALO_FIT_ALPHA_CLAMPED;
  }

  /* quality: unweighted R^2 and the worst relative error */
  double tbar = 0, ss_tot = 0, ss_res = 0;
  for (int64_t i = 0; i < n; i++)
    if (IN_RANGE(i)) tbar += t[i];
  tbar /= (double)m;
  for (int64_t i = 0; i < n; i++) {
    if (!IN_RANGE(i)) continue;
    const double r = halo_fit_eval(&f, s[i]) - t[i];
    ss_res += r * r;
    ss_tot += (t[i] - tbar) * (t[i] - tbar);
    if (t[i] > 0 && fabs(r) / t[i] > f.max_rel_err) f.max_rel_err = fabs(r) / t[i];
  }
#undef IN_RANGE
  if (ss_tot > 0)
    f.r2 = 1.0 - ss_res / ss_tot;
  else
    f.r2 = ss_res == 0 ? 1.0 : 0.0;
  *fit_p = f;
  return HALO_SUCCESS;
}

halo_status halo_fit_postal(const double *s, const double *t, int64_t n, halo_fit_weighting w,
                            halo_fit *fit_p) {
  return fit_points(s, t, n, -INFINITY, INFINITY, NULL, w, fit_p);
}

halo_status halo_fit_range(const double *s, const double *t, int64_t n, double lo, double hi,
                           const char *what, halo_fit_weighting w, halo_fit *fit_p) {
  return fit_points(s, t, n, lo, hi, what ? what : "size", w, fit_p);
}

halo_status halo_fit_protocols(const double *s, const double *t, int64_t n, int64_t short_max,
                               int64_t eager_max, halo_fit_weighting w,
                               halo_fit fits[HALO_N_PROTO]) {
  static const char *names[HALO_N_PROTO] = {"short", "eager", "rendezvous"};
  if (!fits || short_max < 0 || eager_max < short_max)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "fit: need 0 <= short_max <= eager_max (got %lld, %lld)",
                      (long long)short_max, (long long)eager_max);
  const double bound[HALO_N_PROTO + 1] = {0, (double)short_max, (double)eager_max, INFINITY};
  halo_fit out[HALO_N_PROTO];
  for (int p = 0; p < HALO_N_PROTO; p++)
    HALO_CHECK(halo_fit_range(s, t, n, bound[p], bound[p + 1], names[p], w, &out[p]));
  for (int p = 0; p < HALO_N_PROTO; p++) fits[p] = out[p];
  return HALO_SUCCESS;
}
