/* Failure injection (issue 17 item 3), host allocations: the k-th allocation
 * of one rank fails (halo_debug_fail_alloc), swept over every k of a step on
 * each rank in turn. Steps: the matrix's creation, a plan's creation from it
 * (the strategies of argv[2], on nodes of 2 ranks), an exchange-only plan
 * from global ids, and the first exchange and product of a plan. After each:
 * every rank must have the same outcome (all an error, the failing rank's
 * message "out of memory" on it; or all success, with right ghost values), no
 * rank may hang (a watchdog names the case and ends the run), and the same
 * step without a failure must then work. Prints the number of failures
 * injected per step. Leaks are ASan's to find (HALO_SANITIZE builds).
 * With argv[3] "device" the plans are in device memory (a GPU machine; the
 * transport from HALO_TRANSPORT), and the allocations swept include device
 * and pinned memory and CUDA streams and events (halo_debug_alloc_fails).
 *
 * The third kind, with plans in device memory: the k-th CUDA call that
 * halo checks (HALO_CUDA, HALO_TRY_CUDA: halo_debug_fail_cuda) fails with
 * cudaErrorUnknown, swept over the plans' creation and destruction, and over
 * the first exchange and product (the outcome then as for MPI calls there,
 * below; where a peer waits on the GPU, halo_plan_synchronize times out,
 * releases the wait, and the GPU must then be idle). And a
 * plan's destruction, which has no status, is swept with every kind: it
 * must end on every rank (no hang), and the next step must work.
 *
 * The second kind of failure: the k-th of the MPI calls that act on this
 * rank alone (persistent requests, groups, MPI_Startall: wrapped below
 * through MPI's profiling interface) returns MPI_ERR_OTHER, swept the same
 * way over the matrix's and the plans' creation, and over the first exchange
 * and product. There a failure on one rank leaves its peers waiting for its
 * messages, and an exchange has no collective to agree a failure with: the
 * plans are made with exchange_timeout_ms, the failing rank returns its
 * error, the ranks that wait for it HALO_ERR_TIMEOUT (naming the failing
 * rank, whose notice came to them or to the rank they waited for), the
 * others succeed; none may hang, no rank may hold a wrong value (a plan
 * that forwards must not pass on what it never received), the GPU must be
 * idle again, and the plans made next must work (the failed plans' tags
 * are never given again).
 * Nor calls that send or receive (MPI_Isend, MPI_Irecv, MPI_Issend): their
 * peers wait for a message that never comes, and MPI leaves its state after
 * such an error undefined; tried: the first one, in the pattern's NBX,
 * hangs.
 *
 * TEST_INJECT_SLOW_RELEASE=MS: on the even ranks, a failed exchange's
 * release of its waits starts MS later (halo_debug_slow_release), as NCCL's
 * abort may: the word of a failure must still reach a rank two hops from
 * the failing one (3step at 4 ranks on nodes of 2: 3 -> 2 -> 0 -> 1), whose
 * ranks between release at other speeds. */
#define _DEFAULT_SOURCE /* usleep */
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include "halo_impl.h"
#include "verify.h"

static char current[256];
static int my_rank; /* for the watchdog */

/* ---- failures of MPI calls (the profiling interface) --------------------------- */

static long mpi_calls;   /* the wrapped calls made so far */
static long mpi_fail_at; /* the call that brings mpi_calls to this fails; 0: none */

static int mpi_fails(void) { return ++mpi_calls == mpi_fail_at; }

int MPI_Send_init(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c,
                  MPI_Request *r) {
  return mpi_fails() ? MPI_ERR_OTHER : PMPI_Send_init(b, n, t, d, tag, c, r);
}
int MPI_Recv_init(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r) {
  return mpi_fails() ? MPI_ERR_OTHER : PMPI_Recv_init(b, n, t, s, tag, c, r);
}
int MPI_Comm_group(MPI_Comm c, MPI_Group *g) {
  return mpi_fails() ? MPI_ERR_OTHER : PMPI_Comm_group(c, g);
}
int MPI_Group_translate_ranks(MPI_Group a, int n, const int *ra, MPI_Group b, int *rb) {
  return mpi_fails() ? MPI_ERR_OTHER : PMPI_Group_translate_ranks(a, n, ra, b, rb);
}
/* in an exchange: the start of its persistent requests */
int MPI_Startall(int n, MPI_Request *r) {
  return mpi_fails() ? MPI_ERR_OTHER : PMPI_Startall(n, r);
}

enum { FAIL_ALLOC, FAIL_MPI, FAIL_CUDA, N_KINDS };
static const char *kind_name[N_KINDS] = {"allocation", "local MPI call", "CUDA call"};

/* Arm (k > 0) or disarm (0) the failure of the k-th next event of a kind. */
static void fail_next(int kind, int64_t k) {
  if (kind == FAIL_ALLOC)
    halo_debug_fail_alloc(k);
  else if (kind == FAIL_CUDA)
    halo_debug_fail_cuda(k);
  else
    mpi_fail_at = k > 0 ? mpi_calls + (long)k : 0;
}

static int64_t armed_at; /* events(kind) when the failure was armed */

static int64_t events(int kind) {
  return kind == FAIL_ALLOC  ? halo_debug_alloc_count()
         : kind == FAIL_CUDA ? halo_debug_cuda_count()
                             : mpi_calls;
}

static void watchdog(int sig) {
  (void)sig;
  static const char msg[] = "test_inject: HANG (no outcome within the watchdog's time): ";
  if (write(2, msg, sizeof msg - 1) < 0 || write(2, current, strlen(current)) < 0 ||
      write(2, "\n", 1) < 0) {
  }
  /* where this rank waits: "test_inject(+0xOFFSET)" frames, for addr2line
   * (a GPU machine has no debugger) */
  void *frames[32];
  const int n = backtrace(frames, 32);
  usleep((useconds_t)(300000 * (my_rank % 16))); /* one rank's frames after another's */
  char line[64];
  const int len = snprintf(line, sizeof line, "test_inject: rank %d waits in:\n", my_rank);
  if (len > 0 && write(2, line, (size_t)len) < 0) {
  }
  backtrace_symbols_fd(frames, n, 2);
  _exit(3);
}

typedef struct {
  MPI_Comm comm;
  int rank, P;
  halo_csr rows;
  int64_t b, e, n, ng;
  double *x, *y, *g;
  int device;           /* the plans in device memory (argv[3] "device") */
  double *dx, *dy, *dg; /* their vectors there */
  halo_matrix A;
} world;

enum { STEP_MATRIX, STEP_PLAN, STEP_IDS, STEP_USE, STEP_DESTROY, N_STEPS };
static const char *step_name[N_STEPS] = {"matrix create", "plan create", "plan from ids",
                                         "first exchange and product", "plan destroy"};

/* Whether a kind is swept over a step: CUDA calls only with plans in device
 * memory (and not in the matrix's creation, which makes none). Under
 * AddressSanitizer the exchange's MPI and CUDA sweeps are left out: the messages
 * that a failed exchange abandons stay in Open MPI's queues, and
 * LeakSanitizer reports their fragments at exit, in Open MPI's allocator
 * and its request objects (frames no suppression can name apart from a
 * request halo would forget to free). The plain build sweeps it. */
#if defined(__SANITIZE_ADDRESS__)
#define EXCHANGE_SWEPT 0
#else
#define EXCHANGE_SWEPT 1
#endif

/* TEST_INJECT_RANKS_PER_NODE: the plans' nodes (2 unless given) */
static int ranks_per_node = 2;

/* TEST_INJECT_VERBOSE=1: every rank's failures in the exchange step, as they come */
static int verbose;

/* TEST_INJECT_STEPS: the steps swept, as digits of the enum above (e.g. "3":
 * the first exchange and product alone); unset: all */
static const char *steps_swept;

static int swept(int kind, int s, int device) {
  if (steps_swept && !strchr(steps_swept, '0' + s)) return 0;
  if ((kind == FAIL_MPI || kind == FAIL_CUDA) && s == STEP_USE && !EXCHANGE_SWEPT) return 0;
  if (kind == FAIL_CUDA && (!device || s == STEP_MATRIX)) return 0;
  return 1;
}

/* Run step s (the matrix and, for STEP_USE, a plan made before the failure
 * is armed); returns this rank's status and leaves nothing behind. */
static halo_status run_step(world *w, int s, halo_strategy strategy, int kind, int64_t fail_k,
                            int fail_rank, int *wrong) {
  halo_plan_options o = halo_plan_options_default();
  o.strategy = strategy;
  o.ranks_per_node = ranks_per_node;
  o.message_cap = 64;
  o.memory = w->device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  o.exchange_timeout_ms = 300; /* a peer that failed in an exchange ends its neighbours' waits */
  double *x = w->device ? w->dx : w->x, *y = w->device ? w->dy : w->y;
  double *g = w->device ? w->dg : w->g;
  halo_status st = HALO_SUCCESS;
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  *wrong = 0;
  if (s == STEP_USE || s == STEP_DESTROY) CHECK_OK(halo_plan_create(w->A, &o, &plan));
  armed_at = events(kind);
  if (w->rank == fail_rank) fail_next(kind, fail_k);
  switch (s) {
  case STEP_MATRIX:
    st = halo_matrix_create_csr(w->comm, w->b, w->e, w->b, w->e, w->rows.row_ptr, w->rows.col_ids,
                                w->rows.values, HALO_MEMORY_HOST, &A);
    break;
  case STEP_PLAN: st = halo_plan_create(w->A, &o, &plan); break;
  case STEP_IDS: {
    const int64_t *gid;
    int64_t ng;
    CHECK_OK(halo_matrix_get_local_sizes(w->A, NULL, NULL, &ng));
    CHECK_OK(halo_matrix_get_ghost_ids(w->A, &gid));
    st = halo_plan_create_from_ids(w->comm, w->b, w->e, ng, gid, &o, &plan);
    break;
  }
  case STEP_USE: {
    const double t0 = MPI_Wtime(); /* verbose: when each rank returned */
    st = halo_exchange_begin(plan, x, g);
    if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
    if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, x, 0.0, y);
    if (verbose && st != HALO_SUCCESS)
      printf("test_inject: %s: rank %d's exchange and product (at %.0f ms): %s\n", current, w->rank,
             1e3 * (MPI_Wtime() - t0), halo_last_error());
    if (w->device) { /* a wait on the GPU for a failed peer times out here */
      const halo_status su = halo_plan_synchronize(plan);
      if (verbose && su != HALO_SUCCESS)
        printf("test_inject: %s: rank %d's synchronize (at %.0f ms): %s\n", current, w->rank,
               1e3 * (MPI_Wtime() - t0), halo_last_error());
      if (st == HALO_SUCCESS) st = su;
      /* and then the GPU must be idle: its waits released */
      CHECK_MSG(halo_plan_synchronize(plan) == HALO_SUCCESS,
                "%s: the GPU's work did not end after the failure: %s", current, halo_last_error());
    }
    break;
  }
  case STEP_DESTROY: halo_plan_destroy(&plan); break; /* it has no status: it must not hang */
  }
  fail_next(kind, 0);
  if (st == HALO_SUCCESS && plan && s != STEP_USE) { /* a plan made: its ghosts must be right */
    halo_status su = halo_exchange_begin(plan, x, g);
    if (su == HALO_SUCCESS) su = halo_exchange_end(plan);
    if (su != HALO_SUCCESS) *wrong = 1;
  }
  if (st == HALO_SUCCESS && plan && w->device) {
    CHECK_OK(halo_plan_synchronize(plan));
    CHECK_OK(halo_dev_to_host(w->g, w->dg, (size_t)w->ng * sizeof *w->g));
  }
  if (st == HALO_SUCCESS && plan) {
    const int64_t *gid;
    int64_t ng;
    CHECK_OK(halo_matrix_get_local_sizes(w->A, NULL, NULL, &ng));
    CHECK_OK(halo_matrix_get_ghost_ids(w->A, &gid));
    for (int64_t k = 0; k < ng; k++)
      if (w->g[k] != test_x(gid[k])) *wrong = 1;
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  return st;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  world w = {.comm = MPI_COMM_WORLD};
  MPI_Comm_rank(w.comm, &w.rank);
  my_rank = w.rank;
  MPI_Comm_size(w.comm, &w.P);
  signal(SIGALRM, watchdog);
  /* seconds without an outcome that count as a hang: TEST_INJECT_WATCHDOG, else 60 */
  const char *wd = getenv("TEST_INJECT_WATCHDOG");
  const unsigned watchdog_s = wd && atoi(wd) > 0 ? (unsigned)atoi(wd) : 60;
  const char *rpn = getenv("TEST_INJECT_RANKS_PER_NODE");
  if (rpn && atoi(rpn) > 0) ranks_per_node = atoi(rpn);
  const char *vb = getenv("TEST_INJECT_VERBOSE");
  verbose = vb && strcmp(vb, "1") == 0;
  const char *slow = getenv("TEST_INJECT_SLOW_RELEASE");
  if (slow && atoi(slow) > 0 && w.rank % 2 == 0) halo_debug_slow_release(atoi(slow));
  steps_swept = getenv("TEST_INJECT_STEPS");
  if (steps_swept && !*steps_swept) steps_swept = NULL;
  halo_gen g;
  int64_t *rb;
  CHECK_OK(halo_gen_parse(argc > 1 ? argv[1] : "lap3d27:6", &g));
  CHECK_OK(halo_gen_distributed(w.comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &w.rows));
  w.b = rb[w.rank], w.e = rb[w.rank + 1];
  CHECK_OK(halo_matrix_create_csr(w.comm, w.b, w.e, w.b, w.e, w.rows.row_ptr, w.rows.col_ids,
                                  w.rows.values, HALO_MEMORY_HOST, &w.A));
  int64_t n, ng;
  CHECK_OK(halo_matrix_get_local_sizes(w.A, NULL, &n, &ng));
  w.n = n, w.ng = ng;
  w.x = malloc((size_t)(n + 1) * sizeof *w.x);
  w.y = malloc((size_t)(n + 1) * sizeof *w.y);
  w.g = malloc((size_t)(ng + 1) * sizeof *w.g);
  for (int64_t i = 0; i < n; i++) w.x[i] = test_x(w.b + i);
  w.device = argc > 3 && strcmp(argv[3], "device") == 0;
  if (w.device) { /* before any failure is armed */
    /* a device plan first: it picks this rank's GPU (the rank on its machine
     * modulo the GPUs), where the buffers then go; allocated before it, they
     * would start a context on GPU 0 on every rank, and every rank would take
     * GPU 0 as the one it uses */
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    halo_plan first;
    CHECK_OK(halo_plan_create(w.A, &o, &first));
    halo_plan_destroy(&first);
    CHECK_OK(halo_dev_malloc((void **)&w.dx, (size_t)(n + 1) * sizeof(double)));
    CHECK_OK(halo_dev_malloc((void **)&w.dy, (size_t)(n + 1) * sizeof(double)));
    CHECK_OK(halo_dev_malloc((void **)&w.dg, (size_t)(ng + 1) * sizeof(double)));
    CHECK_OK(halo_host_to_dev(w.dx, w.x, (size_t)n * sizeof *w.x));
  }
  /* the strategies of the plans (argv[2], a list "standard,3step,split") */
  halo_strategy strategies[HALO_N_STRATEGIES];
  int n_strategies = 0;
  char list[128];
  snprintf(list, sizeof list, "%s", argc > 2 ? argv[2] : "standard");
  for (char *tok = strtok(list, ","); tok && n_strategies < HALO_N_STRATEGIES;
       tok = strtok(NULL, ","))
    CHECK_OK(halo_strategy_from_name(tok, &strategies[n_strategies++]));
  long total = 0, timeouts = 0, heard = 0; /* this rank's timeouts; named through a peer */
  for (int kind = 0; kind < N_KINDS; kind++)
    for (int s = 0; s < N_STEPS; s++)
      for (int si = 0; si < (s == STEP_MATRIX || !swept(kind, s, w.device) ? 1 : n_strategies);
           si++) {
        if (!swept(kind, s, w.device)) continue;
        long injected = 0;
        const halo_status expect = kind == FAIL_ALLOC  ? HALO_ERR_OUT_OF_MEMORY
                                   : kind == FAIL_CUDA ? HALO_ERR_CUDA
                                                       : HALO_ERR_MPI;
        const char *expect_text = kind == FAIL_ALLOC  ? "out of memory"
                                  : kind == FAIL_CUDA ? "unknown error"
                                                      : "MPI";
        for (int fr = 0; fr < w.P; fr++)
          for (int64_t k = 1;; k++) {
            snprintf(current, sizeof current, "%s, %s, %s %lld of rank %d fails", step_name[s],
                     halo_strategy_name(strategies[si]), kind_name[kind], (long long)k, fr);
            alarm(watchdog_s);
            int64_t wrong = 0;
            int wr = 0;
            halo_status st = run_step(&w, s, strategies[si], kind, k, fr, &wr);
            wrong = wr;
            const char *msg = halo_last_error();
            /* did the failure happen (on the failing rank)? A destroy has no
             * status: there, whether the k-th call was made in it */
            int hit = s == STEP_DESTROY ? w.rank == fr && events(kind) - armed_at >= k
                                        : w.rank == fr && st == expect && strstr(msg, expect_text);
            int v[3] = {st != HALO_SUCCESS, -(st != HALO_SUCCESS), hit}, m[3];
            MPI_Allreduce(v, m, 3, MPI_INT, MPI_MAX, w.comm);
            alarm(0);
            const int all_failed = m[0] == 1 && m[1] == -1, none_failed = m[0] == 0;
            if ((kind == FAIL_MPI || kind == FAIL_CUDA) && s == STEP_USE) {
              /* in an exchange: the failing rank fails, those that wait for it time out,
               * the others succeed */
              CHECK_MSG(st == HALO_SUCCESS || st == HALO_ERR_TIMEOUT ||
                            (w.rank == fr && st == expect),
                        "%s: this rank's status is %s (%s)", current, halo_status_string(st), msg);
              CHECK_MSG(!wrong, "%s: succeeded with wrong ghost values", current);
              /* the failing rank told its peers why, and a rank that timed out passed it
               * on (exchange.c): every rank that timed out names it */
              char whose[64];
              snprintf(whose, sizeof whose, "rank %d's exchange failed first", fr);
              if (st == HALO_ERR_TIMEOUT) {
                CHECK_MSG(strstr(msg, whose) != NULL, "%s: the timeout does not say whose: %s",
                          current, msg);
                timeouts++;
                heard += strstr(msg, "(heard from rank") != NULL;
              }
              if (m[2] && !injected && w.rank == (fr + 1) % w.P)
                printf("test_inject: %s: rank %d's message: %s\n", current, w.rank,
                       st == HALO_SUCCESS ? "(success)" : msg);
              injected += m[2];
              int64_t made = 0;
              if (w.rank == fr) made = events(kind) - armed_at;
              MPI_Bcast(&made, 1, MPI_INT64_T, fr, w.comm);
              if (!m[2] && k > made) break;
              continue;
            }
            CHECK_MSG(all_failed || none_failed, "%s: the ranks disagree (this rank: %s)", current,
                      st == HALO_SUCCESS ? "success" : msg);
            CHECK_MSG(!wrong, "%s: succeeded with wrong ghost values", current);
            if (all_failed && w.rank == fr)
              CHECK_MSG(st == expect, "%s: the failing rank's status is %s (%s)", current,
                        halo_status_string(st), msg);
            if (none_failed && !m[2]) {
              /* no failure: k is past the step's allocations on rank fr, or the
               * allocation that failed was not needed; stop at 2 in a row */
              int64_t made = 0;
              if (w.rank == fr) made = events(kind) - armed_at;
              MPI_Bcast(&made, 1, MPI_INT64_T, fr, w.comm);
              if (k > made) break;
            }
            if (all_failed && !injected && w.rank == (fr + 1) % w.P)
              printf("test_inject: %s: rank %d's message: %s\n", current, w.rank, msg);
            injected += s == STEP_DESTROY ? m[2] : all_failed;
            if (s == STEP_DESTROY && !m[2]) break; /* past the destroy's calls */
          }
        if (w.rank == 0)
          printf("test_inject: %-14s %-28s %-8s %ld failures injected; at each, %s\n",
                 kind_name[kind], step_name[s],
                 s == STEP_MATRIX ? "" : halo_strategy_name(strategies[si]), injected,
                 s == STEP_DESTROY ? "every rank ended its destroy and the next step worked"
                 : s == STEP_USE && kind != FAIL_ALLOC
                     ? "the rank failed, its neighbours timed out, none hung, the next plan worked"
                     : "every rank failed and none hung");
        total += injected;
      }
  long t[2] = {timeouts, heard};
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_LONG, MPI_SUM, w.comm);
  if (w.rank == 0)
    printf("test_inject: %ld failures injected in all; %ld ranks timed out in an exchange, each "
           "naming the failing rank (%ld heard of it through a peer that timed out)\n",
           total, t[0], t[1]);
  halo_matrix_destroy(&w.A);
  halo_csr_free(&w.rows);
  halo_dev_free(w.dx);
  halo_dev_free(w.dy);
  halo_dev_free(w.dg);
  free(rb);
  free(w.x);
  free(w.y);
  free(w.g);
  MPI_Finalize();
  return 0;
}
