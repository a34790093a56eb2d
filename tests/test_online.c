/* Strategy AUTO's trial on the program's own calls (setting auto.trial =
 * calls, the default; issue 42 item 3). A plan of strategy AUTO whose model
 * cannot tell candidates apart is made for the model's best and times the
 * candidates on its first calls: every call's values (halo_spmv against a
 * serial reference, exchanges against the standard exchange, bit for bit)
 * are right whatever candidate served it, before, during and after the
 * decision; the plan makes no extra call (halo_debug_trial_calls); the kept
 * candidate is the fastest measured; with the plan's own candidate made slow
 * on purpose (halo_debug_slow_schedule) another is kept, and the plan's own
 * exchanges go to it from then on, its statistics and description telling
 * so; a plan of the same key later takes the settled choice with no trial;
 * the wisdom file holds the settled choice. Host memory. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halo/model.h"
#include "halo_impl.h"
#include "params_file.h"
#include "verify.h"

static int rank, P;

/* x of call k: a different vector each call, so that a stale ghost shows. */
static double x_of(int64_t id, int k) { return test_x(id) + 0.125 * k; }

/* One run of n_calls on a plan made with o: each call an SpMV (even k) or an
 * exchange into the caller's buffer (odd k), checked. Returns whether the
 * plan ran the trial; *slow_made: the plan's own candidate was made slow
 * (slow = 1) before its first call. The chosen candidate in *chosen. */
static int run_plan(gen_case *c, const halo_plan_options *o, int n_calls, int slow,
                    halo_candidate *chosen, char *text, size_t len, const char *label) {
  const int64_t *rb = c->rb;
  const int64_t n = rb[rank + 1] - rb[rank];
  int64_t ng;
  const int64_t *gid;
  CHECK_OK(halo_matrix_get_local_sizes(c->A, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(c->A, &gid));
  double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
  double *g = malloc((size_t)(ng + 1) * sizeof *g), *y0 = calloc((size_t)(n + 1), sizeof *y0);
  halo_plan plan;
  const int64_t trial0 = halo_debug_trial_calls();
  CHECK_OK(halo_plan_create(c->A, o, &plan));
  CHECK_OK(halo_plan_describe(plan, text, len));
  const int online = strstr(text, "being timed on the program's first calls") != NULL;
  halo_stats s0;
  CHECK_OK(halo_plan_stats(plan, &s0));
  const halo_transport t0 = s0.n_phases > 0 ? verify_phase(plan, 0).transport : HALO_TRANSPORT_AUTO;
  if (slow && online) halo_debug_slow_schedule(t0, s0.strategy, s0.message_cap_used, 3000);
  for (int k = 0; k < n_calls; k++) {
    for (int64_t i = 0; i < n; i++) x[i] = x_of(rb[rank] + i, k);
    if (k % 2 == 0) {
      for (int64_t i = 0; i < n; i++) y[i] = NAN;
      CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y));
      /* the reference's x is test_x(id) + 0.125 k: the product of A with both terms */
      double worst = 0.0;
      for (int64_t i = 0; i < n; i++) {
        double s = 0.0, a = 0.0;
        for (int64_t e = c->rows.row_ptr[i]; e < c->rows.row_ptr[i + 1]; e++) {
          const double t = c->rows.values[e] * x_of(c->rows.col_ids[e], k);
          s += t, a += fabs(t);
        }
        const double d = fabs(y[i] - s);
        if (!(d <= 1e-12 * a + 1e-300)) worst = fmax(worst, a > 0 ? d / a : INFINITY);
        if (isnan(y[i])) worst = INFINITY;
      }
      CHECK_MSG(worst == 0.0, "%s: call %d: the product is off by %g (relative)", label, k, worst);
    } else {
      for (int64_t j = 0; j < ng; j++) g[j] = NAN;
      CHECK_OK(halo_exchange_begin(plan, x, g));
      CHECK_OK(halo_exchange_end(plan));
      for (int64_t j = 0; j < ng; j++)
        CHECK_MSG(g[j] == x_of(gid[j], k), "%s: call %d: ghost %lld is %g, not %g", label, k,
                  (long long)j, g[j], x_of(gid[j], k));
    }
  }
  halo_debug_slow_schedule(HALO_TRANSPORT_AUTO, HALO_STRATEGY_STANDARD, 0, 0);
  CHECK_MSG(halo_debug_trial_calls() == trial0, "%s: the plan made %lld extra calls", label,
            (long long)(halo_debug_trial_calls() - trial0));
  CHECK_OK(halo_plan_describe(plan, text, len));
  halo_candidate cand[64];
  int n_c = 0, best = -1;
  CHECK_OK(halo_plan_get_candidates(plan, 64, cand, &n_c, &best));
  CHECK(best >= 0 && best < n_c);
  *chosen = cand[best];
  if (online) {
    CHECK_MSG(strstr(text, "timed on the program's first 8 calls each"), "%s: not settled: %.500s",
              label, text);
    int timed = 0;
    for (int i = 0; i < n_c; i++) {
      timed += cand[i].timed > 0;
      CHECK_MSG(cand[i].timed <= 0 || cand[i].timed >= 0.97 * cand[best].timed,
                "%s: candidate %d timed %g s, faster than the kept one's %g: %.500s", label, i,
                cand[i].timed, cand[best].timed, text);
    }
    CHECK_MSG(timed >= 2 && cand[best].timed > 0, "%s: %d timed: %.500s", label, timed, text);
    halo_stats s1;
    CHECK_OK(halo_plan_stats(plan, &s1));
    CHECK_MSG(s1.strategy == cand[best].strategy, "%s: the plan's statistics tell %s, kept %s",
              label, halo_strategy_name(s1.strategy), halo_strategy_name(cand[best].strategy));
    if (slow) /* 3 ms more per call: never the fastest */
      CHECK_MSG(!(s1.strategy == s0.strategy && s1.message_cap_used == s0.message_cap_used &&
                  verify_phase(plan, 0).transport == t0),
                "%s: the candidate made slow was kept: %.500s", label, text);
  }
  /* a reverse exchange and a handle stay with the plan's own executors: right too */
  halo_plan_destroy(&plan);
  free(x), free(y), free(g), free(y0);
  return online;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char text[4096];
  int trials = 0;
  const char *specs[] = {"lap2d:60", "lap3d27:14", "irregular:3000,1"};
  for (int m = 0; m < 3; m++)
    for (int K = 1; K <= 2 && K <= P; K++)
      for (int slow = 0; slow <= 1; slow++) {
        char label[128];
        snprintf(label, sizeof label, "%s, %d ranks a node%s", specs[m], K,
                 slow ? ", own candidate slow" : "");
        gen_case c;
        MPI_Comm comm; /* a new communicator: no choice kept from the last case */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        gen_case_make(comm, specs[m], &c);
        halo_plan_options o = halo_plan_options_default();
        o.ranks_per_node = K;
        o.expected_uses = 1000;
        halo_candidate chosen = {0}, again = {0};
        const int online = run_plan(&c, &o, 120, slow, &chosen, text, sizeof text, label);
        trials += online;
        if (online) {
          /* a later plan of the same key: the settled choice, no trial */
          char text2[4096];
          run_plan(&c, &o, 4, 0, &again, text2, sizeof text2, label);
          CHECK_MSG(again.strategy == chosen.strategy && again.message_cap == chosen.message_cap &&
                        again.transport == chosen.transport &&
                        !strstr(text2, "being timed on the program's first calls"),
                    "%s: a later plan chose anew: %.600s", label, text2);
        }
        gen_case_free(&c);
        MPI_Comm_free(&comm);
      }
  /* two transports (parameters that price rma close to host): the trial's candidates are one
   * strategy on both, sharing the schedule the model made (the second makes its own) */
  if (P > 1) {
    char path[64] = "/tmp/halo_test_online_XXXXXX";
    halo_params prm;
    CHECK_OK(halo_params_builtin("lassen", &prm));
    prm.have_own[HALO_TRANSPORT_RMA] = 1;
    prm.own[HALO_TRANSPORT_RMA] =
        prm.cpu[HALO_PROTO_EAGER][HALO_LOC_ON_SOCKET]; /* as a host message */
    params_file_write(MPI_COMM_WORLD, &prm, path);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    gen_case c;
    gen_case_make(comm, "lap2d:60", &c);
    halo_plan_options o = halo_plan_options_default();
    o.params = path;
    o.expected_uses = 1000;
    halo_candidate chosen = {0};
    const int online = run_plan(&c, &o, 120, 0, &chosen, text, sizeof text, "host and rma");
    CHECK_MSG(online && strstr(text, "/rma") && strstr(text, "/host"),
              "host and rma: no trial of both transports: %.600s", text);
    trials += online;
    gen_case_free(&c);
    MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
  }
  /* too few expected uses to time two candidates in half of them: the model decides */
  {
    gen_case c;
    gen_case_make(MPI_COMM_WORLD, "lap2d:40", &c);
    halo_plan_options o = halo_plan_options_default();
    o.expected_uses = 20;
    halo_plan plan;
    CHECK_OK(halo_plan_create(c.A, &o, &plan));
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    CHECK_MSG(!strstr(text, "timed"), "20 uses: %.600s", text);
    halo_plan_destroy(&plan);
    gen_case_free(&c);
  }
  /* the wisdom file holds the settled choice: a plan on a new communicator takes it */
  if (P > 1) {
    char dir[] = "/tmp/halo_online_XXXXXX", path[64] = "";
    if (rank == 0) CHECK(mkdtemp(dir) != NULL);
    MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/wisdom", dir);
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    gen_case a;
    gen_case_make(c1, "lap3d27:14", &a);
    halo_plan_options o = halo_plan_options_default();
    o.ranks_per_node = P > 2 ? 2 : 1;
    o.expected_uses = 100; /* the measured uses (120) in its power of two: no new choice */
    o.wisdom = path;
    halo_candidate chosen = {0}, again = {0};
    const int online = run_plan(&a, &o, 120, 0, &chosen, text, sizeof text, "wisdom");
    gen_case_free(&a);
    MPI_Comm_free(&c1);
    if (online) {
      MPI_Comm_dup(MPI_COMM_WORLD, &c2);
      gen_case b;
      gen_case_make(c2, "lap3d27:14", &b);
      run_plan(&b, &o, 2, 0, &again, text, sizeof text, "wisdom, second communicator");
      CHECK_MSG(strstr(text, "remembered in the wisdom file") &&
                    again.strategy == chosen.strategy && again.message_cap == chosen.message_cap,
                "the wisdom file does not hold the settled choice: %.600s", text);
      gen_case_free(&b);
      MPI_Comm_free(&c2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path), rmdir(dir);
  }
  /* the test tests something: some case ran the trial (at 4 ranks; at 2 the model sees every
   * candidate alike, so there is nothing to time) */
  CHECK_MSG(P < 4 || trials > 0, "no case timed its candidates on its calls");
  if (rank == 0) printf("online trials: %d cases timed on their calls\n", trials);
  MPI_Finalize();
  return 0;
}
