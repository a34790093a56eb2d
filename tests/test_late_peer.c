/* A late peer, host memory (the device transports: test_gpu's late_peer).
 * On a communicator of ranks 0 and 1 (split from the world), over each
 * transport of the arguments (host, rma): rank 1 starts an exchange late,
 * once rank 0 has given up after exchange_timeout_ms. Rank 0 must return
 * HALO_ERR_TIMEOUT after about the limit, with the option named, and its plan
 * must refuse exchanges. Rank 1's late exchange must complete over host
 * (rank 0's messages were sent); over rma it times out too (rank 0 never
 * opened its access epoch: it waited for rank 1's post first). Both destroy
 * their plans, failed ones among them, and then free the communicator: its
 * context's end is collective (here the windows of an rma plan made and
 * destroyed before, which the context frees together; a failed rma plan's
 * window, whose epoch may be open, is left on both), so it must come on both
 * ranks alike, failed plan or not. A hang here is the watchdog's to report.
 * Last, a plan on the world communicator must work. */
#define _DEFAULT_SOURCE /* alarm */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "halo_impl.h"
#include "verify.h"

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "test_late_peer: no end within 120 s (a hang)\n";
  if (write(2, m, sizeof m - 1) < 0) _exit(3);
  _exit(3);
}

/* An rma plan of the pair, used once; destroyed last, its window stays with
 * the context until the context's end frees it (MPI_Win_free, collective). */
static halo_plan rma_plan(halo_matrix A, double *x) {
  halo_plan_options o = halo_plan_options_default();
  o.transport = HALO_TRANSPORT_RMA, o.strategy = HALO_STRATEGY_STANDARD;
  halo_plan plan;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  CHECK_OK(halo_exchange_begin(plan, x, NULL));
  CHECK_OK(halo_exchange_end(plan));
  return plan;
}

static void late_exchange(MPI_Comm pair, halo_transport t) {
  gen_case m;
  gen_case_make(pair, "lap3d27:8", &m);
  const int rank = m.rank;
  const int64_t *rb = m.rb;
  const halo_matrix A = m.A;
  const int64_t n = rb[rank + 1] - rb[rank], limit_ms = 200;
  double *x = calloc((size_t)n + 1, sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = test_x(rb[rank] + i);
  halo_plan windowed = rma_plan(A, x);
  halo_plan_options o = halo_plan_options_default();
  o.transport = t, o.strategy = HALO_STRATEGY_STANDARD, o.exchange_timeout_ms = limit_ms;
  halo_plan plan;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  CHECK_OK(halo_exchange_begin(plan, x, NULL)); /* one on time */
  CHECK_OK(halo_exchange_end(plan));
  MPI_Barrier(pair);
  if (rank == 0) {
    const double t0 = MPI_Wtime();
    halo_status st = halo_exchange_begin(plan, x, NULL);
    if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
    const double dt = MPI_Wtime() - t0;
    CHECK_MSG(st == HALO_ERR_TIMEOUT, "%s, peer late: %s (%s), not a timeout",
              halo_transport_name(t), halo_status_string(st), halo_last_error());
    CHECK_MSG(dt >= 0.9e-3 * (double)limit_ms && dt < 30.0,
              "%s, peer late: the timeout came after %.3f s, the limit is %lld ms",
              halo_transport_name(t), dt, (long long)limit_ms);
    CHECK_MSG(strstr(halo_last_error(), "exchange_timeout_ms") != NULL, "no reason: %s",
              halo_last_error());
    CHECK_ERR(halo_exchange_begin(plan, x, NULL), HALO_ERR_STATE, "earlier exchange");
  }
  MPI_Barrier(pair); /* rank 0 gave up: now rank 1's exchange, whose messages are there */
  halo_status late = HALO_SUCCESS;
  if (rank == 1) {
    late = halo_exchange_begin(plan, x, NULL);
    if (late == HALO_SUCCESS) late = halo_exchange_end(plan);
    if (t == HALO_TRANSPORT_RMA)
      CHECK_MSG(late == HALO_ERR_TIMEOUT || late == HALO_SUCCESS, "rma, the late exchange: %s",
                halo_last_error());
    else
      CHECK_MSG(late == HALO_SUCCESS, "%s, the late exchange: %s", halo_transport_name(t),
                halo_last_error());
  }
  if (rank == 1 && late == HALO_SUCCESS) {
    /* the ghosts are rank 0's values */
    double *ghost = NULL;
    const int64_t *ids = NULL;
    int64_t nr, nc, ng;
    CHECK_OK(halo_plan_get_ghost(plan, &ghost));
    CHECK_OK(halo_matrix_get_ghost_ids(A, &ids));
    CHECK_OK(halo_matrix_get_local_sizes(A, &nr, &nc, &ng));
    CHECK(ng > 0);
    for (int64_t k = 0; k < ng; k++)
      CHECK_MSG(ghost[k] == test_x(ids[k]), "%s: ghost %lld is %g, not %g", halo_transport_name(t),
                (long long)ids[k], ghost[k], test_x(ids[k]));
  }
  halo_plan_destroy(&plan); /* rank 0's: its memory and tags kept */
  halo_plan_destroy(&windowed);
  free(x);
  gen_case_free(&m);
  int late_code = (int)late;
  MPI_Bcast(&late_code, 1, MPI_INT, 1, pair);
  if (rank == 0)
    printf("late peer, %s: timed out; the late exchange %s\n", halo_transport_name(t),
           late_code == HALO_SUCCESS ? "completed" : "timed out");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  signal(SIGALRM, on_alarm);
  alarm(120);
  if (P >= 2) {
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL) {
      for (int a = 1; a < argc; a++) {
        halo_transport t;
        CHECK_OK(halo_transport_from_name(argv[a], &t));
        late_exchange(pair, t);
      }
      MPI_Comm_free(&pair); /* the context's end, on both ranks */
      if (rank == 0) printf("the communicator of the failed plans freed on both ranks\n");
    }
  }
  /* the world's plans work */
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap3d27:6", &g));
  CHECK_OK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  verify_matrix(MPI_COMM_WORLD, &rows, rb, rb, "the world after the late peer");
  halo_csr_free(&rows);
  halo_io_free(rb);
  if (rank == 0) printf("test_late_peer: passed\n");
  MPI_Finalize();
  return 0;
}
