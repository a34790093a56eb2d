/* The postal-model fit (src/plan/fit.c): exact recovery of t = a + b s,
 * noisy data within tolerance, the clamps of negative alpha or beta, the
 * protocol ranges, and the messages of degenerate inputs. One process. */
#include "model/fit.h"
#include "test_util.h"

static double rel(double x, double y) { return fabs(x - y) / fabs(y); }

/* deterministic noise in [-1, 1) */
static double noise(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*state >> 11) / (double)(1ULL << 52) - 1.0;
}

/* the sweep of halo params measure: powers of two and midpoints */
static int64_t sweep(double lo, double hi, double *s) {
  int64_t n = 0;
  for (double p = 1; p <= hi; p *= 2) {
    if (p >= lo) s[n++] = p;
    if (p * 1.5 >= lo && p * 1.5 <= hi && p >= 2) s[n++] = p * 1.5;
  }
  return n;
}

static void exact(void) {
  double s[64], t[64];
  const int64_t n = sweep(8, 1 << 24, s);
  const double a = 2.5e-6, b = 7.9e-11;
  for (int64_t i = 0; i < n; i++) t[i] = a + b * s[i];
  for (int w = 0; w < 2; w++) {
    halo_fit f;
    CHECK_OK(halo_fit_postal(s, t, n, (halo_fit_weighting)w, &f));
    CHECK_MSG(rel(f.alpha, a) < 1e-9 && rel(f.beta, b) < 1e-9, "weighting %d: alpha %g beta %g", w,
              f.alpha, f.beta);
    CHECK(f.r2 > 1 - 1e-12 && f.max_rel_err < 1e-9 && f.n == n && f.clamped == 0);
  }
  /* two points, in any order, sizes unsorted */
  double s2[2] = {4096, 8}, t2[2] = {1 + 2 * 4096.0, 1 + 2 * 8.0};
  halo_fit f;
  CHECK_OK(halo_fit_postal(s2, t2, 2, HALO_FIT_ABSOLUTE, &f));
  CHECK(rel(f.alpha, 1) < 1e-12 && rel(f.beta, 2) < 1e-12);
  /* one constant time: beta 0 exactly, R^2 1 */
  double t3[2] = {5e-6, 5e-6};
  CHECK_OK(halo_fit_postal(s2, t3, 2, HALO_FIT_RELATIVE, &f));
  CHECK(f.beta == 0 && rel(f.alpha, 5e-6) < 1e-12 && f.r2 == 1 && f.clamped == 0);
}

static void protocols(void) {
  /* a different line per protocol range, recovered range by range */
  double s[64], t[64];
  const int64_t n = sweep(8, 1 << 20, s);
  const double a[3] = {3.67e-07, 4.61e-07, 3.15e-06}, b[3] = {1.32e-10, 7.12e-11, 3.40e-11};
  for (int64_t i = 0; i < n; i++) {
    const int p = s[i] < 256 ? 0 : s[i] < 16384 ? 1 : 2;
    t[i] = a[p] + b[p] * s[i];
  }
  halo_fit f[HALO_N_PROTO];
  CHECK_OK(halo_fit_protocols(s, t, n, 256, 16384, HALO_FIT_RELATIVE, f));
  int64_t total = 0;
  for (int p = 0; p < 3; p++) {
    CHECK_MSG(rel(f[p].alpha, a[p]) < 1e-8 && rel(f[p].beta, b[p]) < 1e-8,
              "protocol %d: alpha %g beta %g", p, f[p].alpha, f[p].beta);
    total += f[p].n;
  }
  CHECK(total == n && f[0].n == 10); /* 8, 12, ..., 128, 192 */
  /* one range alone */
  halo_fit g;
  CHECK_OK(halo_fit_range(s, t, n, 256, 16384, "eager", HALO_FIT_ABSOLUTE, &g));
  CHECK(rel(g.alpha, a[1]) < 1e-6 && rel(g.beta, b[1]) < 1e-9 && g.n == 12);
}

static void noisy(void) {
  double s[64], t[64];
  const int64_t n = sweep(16384, 1 << 24, s);
  const double a = 7.76e-06, b = 7.97e-11;
  uint64_t state = 42;
  for (int64_t i = 0; i < n; i++) t[i] = (a + b * s[i]) * (1 + 0.02 * noise(&state));
  halo_fit f;
  CHECK_OK(halo_fit_postal(s, t, n, HALO_FIT_RELATIVE, &f));
  /* 2% noise: beta within 2%, alpha (a tenth of the smallest time's size
   * term) within 20%, the worst error near the noise */
  CHECK_MSG(rel(f.beta, b) < 0.02 && rel(f.alpha, a) < 0.2, "alpha %g beta %g", f.alpha, f.beta);
  CHECK_MSG(f.r2 > 0.999 && f.max_rel_err < 0.05, "R^2 %g, worst %g", f.r2, f.max_rel_err);
  CHECK(f.clamped == 0);
  /* the same data fitted in absolute terms: beta still close */
  CHECK_OK(halo_fit_postal(s, t, n, HALO_FIT_ABSOLUTE, &f));
  CHECK_MSG(rel(f.beta, b) < 0.02 && f.r2 > 0.999, "absolute: beta %g R^2 %g", f.beta, f.r2);
}

static void clamps(void) {
  /* times falling with the size (noise over a flat latency): beta 0, alpha the mean */
  double s[4] = {8, 16, 32, 64}, t[4] = {1.04e-6, 1.02e-6, 1.00e-6, 0.98e-6};
  halo_fit f;
  CHECK_OK(halo_fit_postal(s, t, 4, HALO_FIT_ABSOLUTE, &f));
  CHECK(f.clamped == HALO_FIT_BETA_CLAMPED && f.beta == 0 && rel(f.alpha, 1.01e-6) < 1e-12);
  CHECK_MSG(f.max_rel_err > 0.029 && f.max_rel_err < 0.031, "worst %g", f.max_rel_err);
  /* a line through a negative intercept: alpha 0, beta through the origin */
  double t2[4] = {0.5, 1.5, 3.5, 7.5}; /* t = -0.5 + s/8 */
  CHECK_OK(halo_fit_postal(s, t2, 4, HALO_FIT_ABSOLUTE, &f));
  double sst = 0, sss = 0;
  for (int i = 0; i < 4; i++) sst += s[i] * t2[i], sss += s[i] * s[i];
  CHECK(f.clamped == HALO_FIT_ALPHA_CLAMPED && f.alpha == 0 && rel(f.beta, sst / sss) < 1e-12);
  CHECK(f.beta > 0 && f.r2 < 1 && f.r2 > 0.9);
  /* relative weighting clamps too, and never returns negative values */
  CHECK_OK(halo_fit_postal(s, t2, 4, HALO_FIT_RELATIVE, &f));
  CHECK(f.clamped == HALO_FIT_ALPHA_CLAMPED && f.alpha == 0 && f.beta > 0);
}

static void degenerate(void) {
  double s[3] = {64, 64, 64}, t[3] = {1e-6, 1.1e-6, 0.9e-6};
  halo_fit f = {.alpha = -1};
  CHECK_ERR(halo_fit_postal(s, t, 0, HALO_FIT_ABSOLUTE, &f), HALO_ERR_INVALID_ARG, "no points");
  CHECK_ERR(halo_fit_postal(s, t, 1, HALO_FIT_ABSOLUTE, &f), HALO_ERR_INVALID_ARG,
            "1 point, all at 64 bytes: alpha and beta cannot be told apart");
  CHECK_ERR(halo_fit_postal(s, t, 3, HALO_FIT_RELATIVE, &f), HALO_ERR_INVALID_ARG,
            "3 points, all at 64 bytes");
  CHECK(f.alpha == -1); /* untouched on failure */
  double s2[2] = {8, 16}, bad[2] = {1e-6, NAN}, neg[2] = {-1e-6, 1e-6}, zero[2] = {0, 1e-6};
  CHECK_ERR(halo_fit_postal(s2, bad, 2, HALO_FIT_ABSOLUTE, &f), HALO_ERR_INVALID_ARG,
            "must be finite and >= 0");
  CHECK_ERR(halo_fit_postal(s2, neg, 2, HALO_FIT_ABSOLUTE, &f), HALO_ERR_INVALID_ARG,
            "point 0 (8 bytes, -1e-06 s)");
  CHECK_ERR(halo_fit_postal(s2, zero, 2, HALO_FIT_RELATIVE, &f), HALO_ERR_INVALID_ARG,
            "has time 0: a relative fit needs times > 0");
  CHECK_OK(halo_fit_postal(s2, zero, 2, HALO_FIT_ABSOLUTE, &f)); /* absolute: fine */
  CHECK_ERR(halo_fit_postal(NULL, t, 2, HALO_FIT_ABSOLUTE, &f), HALO_ERR_INVALID_ARG, "NULL");
  CHECK_ERR(halo_fit_postal(s2, t, 2, (halo_fit_weighting)7, &f), HALO_ERR_INVALID_ARG,
            "unknown weighting 7");
  /* ranges: empty, one point, the open last range */
  double s4[4] = {8, 16, 256, 20000}, t4[4] = {1e-6, 1.1e-6, 2e-6, 9e-6};
  CHECK_ERR(halo_fit_range(s4, t4, 4, 32, 256, "short", HALO_FIT_ABSOLUTE, &f),
            HALO_ERR_INVALID_ARG, "the short range [32, 256): no points");
  CHECK_ERR(halo_fit_range(s4, t4, 4, 256, 16384, "eager", HALO_FIT_ABSOLUTE, &f),
            HALO_ERR_INVALID_ARG, "the eager range [256, 16384): 1 point, all at 256 bytes");
  halo_fit fits[HALO_N_PROTO];
  CHECK_ERR(halo_fit_protocols(s4, t4, 4, 256, 16384, HALO_FIT_ABSOLUTE, fits),
            HALO_ERR_INVALID_ARG, "the eager range [256, 16384)");
  CHECK_ERR(halo_fit_range(s4, t4, 4, 16384, INFINITY, "rendezvous", HALO_FIT_ABSOLUTE, &f),
            HALO_ERR_INVALID_ARG, "the rendezvous range [16384, ...): 1 point");
  CHECK_ERR(halo_fit_protocols(s4, t4, 4, 300, 200, HALO_FIT_ABSOLUTE, fits), HALO_ERR_INVALID_ARG,
            "need 0 <= short_max <= eager_max");
}

int main(void) {
  exact();
  protocols();
  noisy();
  clamps();
  degenerate();
  return 0;
}
