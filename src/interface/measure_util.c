/* What the measurements share (measure_mpi.c, measure_host.c,
 * measure_cuda.c): the report and the notes, the fits of a pair's messages,
 * medians and waits. Below the measurements, which measure.c runs. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interface/measure.h"

const char *const halo_measure_loc_names[HALO_N_LOC] = {"on_socket", "on_node", "off_node"};
const char *const halo_measure_proto_names[HALO_N_PROTO] = {"short", "eager", "rendezvous"};

/* ---- the report and the notes ---------------------------------------------- */

void halo_measure_say(const halo_measure *c, const char *fmt, ...) {
  if (c->rank != 0 || !c->o.report) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  c->o.report(line, c->o.report_arg);
}

void halo_measure_note(halo_measure *c, const char *keys, const char *fmt, ...) {
  if (c->res.n_notes == HALO_PARAMS_MAX_NOTES) return;
  halo_params_note *n = &c->res.note[c->res.n_notes++];
  snprintf(n->keys, sizeof n->keys, "%s", keys);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->text, sizeof n->text, fmt, ap);
  va_end(ap);
}

void halo_measure_from_base(halo_measure *c, const char *keys, const char *why) {
  halo_measure_note(c, keys, "%s: from %s (%s)", keys, c->o.base, why);
  halo_measure_say(c, "%s: from %s (%s)\n", keys, c->o.base, why);
}

void halo_measure_device_from_base(halo_measure *c, const char *why) {
  static const char *const groups[] = {"gpu.*", "copy.*", "staged.*"};
  for (int i = 0; i < 3; i++) halo_measure_from_base(c, groups[i], why);
}

const char *halo_measure_clamp_text(const halo_fit *f) {
  return f->clamped & HALO_FIT_ALPHA_CLAMPED  ? "  (alpha < 0 set to 0)"
         : f->clamped & HALO_FIT_BETA_CLAMPED ? "  (beta < 0 set to 0)"
                                              : "";
}

void halo_measure_say_fit(const halo_measure *c, const char *what, const char *range,
                          const halo_fit *f) {
  halo_measure_say(
      c, "  %-11s %-19s %2lld sizes  alpha %9.3e s  beta %9.3e s/B  R^2 %7.4f  worst %5.1f%%%s\n",
      what, range, (long long)f->n, f->alpha, f->beta, f->r2, 100 * f->max_rel_err,
      halo_measure_clamp_text(f));
}

void halo_measure_range_text(const halo_measure *c, int proto, char *buf, size_t len) {
  const int64_t lo[HALO_N_PROTO] = {c->o.min_bytes, c->o.short_max, c->o.eager_max};
  const int64_t hi[HALO_N_PROTO] = {c->o.short_max, c->o.eager_max, c->o.max_bytes};
  snprintf(buf, len, "[%lld, %lld%c", (long long)lo[proto], (long long)hi[proto],
           proto == HALO_PROTO_RENDEZVOUS ? ']' : ')');
}

halo_status halo_measure_pair(const halo_measure *c, int peer, halo_measure_size_fn fn,
                              const void *arg, const int64_t *gs, int n, double *t) {
  halo_status st = HALO_SUCCESS;
  const int active = c->rank == 0 || c->rank == peer;
  double *work = NULL;
  MPI_Comm pair = MPI_COMM_NULL;
  HALO_MPI(MPI_Comm_split(c->comm, active ? 0 : MPI_UNDEFINED, c->rank, &pair));
  if (active) {
    st = HALO_ALLOC(work, c->o.iterations);
    for (int k = 0; k < n; k++) {
      int bad = st != HALO_SUCCESS; /* either rank's failure ends both */
      if (MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, pair) != MPI_SUCCESS || bad) break;
      st = fn(pair, c, arg, gs[k], work, &t[k]);
    }
    halo_free(work);
    MPI_Comm_free(&pair);
  }
  HALO_CHECK(halo_measure_wait_all(c, active));
  return halo_agree(c->comm, st);
}

halo_status halo_measure_fit_exchange(halo_measure *c, const char *name, const char *how,
                                      const int64_t *gs, const double *gd, const double *t, int ng,
                                      halo_postal *postal, int *have) {
  halo_status st = HALO_SUCCESS;
  if (c->rank == 0) {
    halo_fit f;
    st = halo_fit_postal(gd, t, ng, c->o.fit, &f);
    if (st != HALO_SUCCESS) {
      st = HALO_ERROR(st, "%s.*: %s", name, halo_last_error());
    } else {
      char r[64], keys[32];
      snprintf(r, sizeof r, "[%lld, %lld]", (long long)gs[0], (long long)gs[ng - 1]);
      snprintf(keys, sizeof keys, "%s.*", name);
      halo_measure_say(c, "%s: %s\n", keys, how);
      halo_measure_say_fit(c, name, r, &f);
      *postal = (halo_postal){f.alpha, f.beta};
      *have = 1;
      halo_measure_note(c, keys, "%s: halo_exchange_begin/end of %s", keys, how);
    }
  }
  return halo_agree(c->comm, st);
}

int halo_measure_nearest(int loc, const int *measured) {
  static const int order[HALO_N_LOC][2] = {{HALO_LOC_ON_NODE, HALO_LOC_OFF_NODE},
                                           {HALO_LOC_ON_SOCKET, HALO_LOC_OFF_NODE},
                                           {HALO_LOC_ON_NODE, HALO_LOC_ON_SOCKET}};
  for (int i = 0; i < 2; i++)
    if (measured[order[loc][i]]) return order[loc][i];
  return -1;
}

const char *halo_measure_no_pair_reason(int loc) {
  return loc == HALO_LOC_ON_SOCKET ? "no other rank on rank 0's node and socket"
         : loc == HALO_LOC_ON_NODE ? "no rank on rank 0's node and another socket"
                                   : "no rank on another node";
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double halo_measure_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

halo_status halo_measure_wait_all(const halo_measure *c, int active) {
  MPI_Request r;
  int done = 0;
  HALO_MPI(MPI_Ibarrier(c->comm, &r));
  if (active) {
    HALO_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    return HALO_SUCCESS;
  }
  const struct timespec nap = {0, 200000}; /* 0.2 ms */
  HALO_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
  while (!done) {
    nanosleep(&nap, NULL);
    HALO_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
  }
  return HALO_SUCCESS;
}

