/* Every strategy through the real set-up and the host executor, on random
 * cases: each case draws a matrix (random, generated, or a bundled file given
 * as argument), a number of ranks (a sub-communicator of the first P ranks),
 * row and column layouts with empty ranks, virtual nodes (option or
 * HALO_RANKS_PER_NODE), a message_cap and duplicate removal on or off. The
 * ghosts and the product of every strategy must be bit for bit those of the
 * standard exchange, the ghosts exactly x at their global ids, and the plan's
 * statistics those the simulator computes for the same case.
 * usage: test_strategies_mpi CASES [FILE.mtx ...] */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "halo/sim.h"
#include "halo_impl.h"
#include "verify.h"

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(rng() % (uint64_t)n) : 0; }

static void random_matrix(int64_t N, int64_t M, halo_csr *A) {
  memset(A, 0, sizeof *A);
  A->n_rows = N, A->n_cols = M, A->row_end = N;
  A->row_ptr = halo_malloc((size_t)(N + 1) * sizeof(int64_t));
  A->col_ids = halo_malloc((size_t)(12 * N + 1) * sizeof(int64_t));
  A->values = halo_malloc((size_t)(12 * N + 1) * sizeof(double));
  const int64_t dense = rnd(M);
  int64_t n = 0;
  for (int64_t i = 0; i < N; i++) {
    A->row_ptr[i] = n;
    int64_t k = rnd(9);
    for (int64_t t = 0; t < k; t++) {
      A->col_ids[n] = rnd(M);
      A->values[n++] = 0.5 + (double)rnd(1000) / 7.0;
    }
    if (rnd(3) == 0) A->col_ids[n] = dense, A->values[n++] = -1.25; /* repeats are allowed */
  }
  A->row_ptr[N] = n;
}

static void random_layout(int64_t n, int P, int64_t *b) {
  b[0] = 0;
  b[P] = n;
  for (int r = 1; r < P; r++) b[r] = rnd(3) == 0 ? b[r - 1] : b[r - 1] + rnd(n - b[r - 1] + 1);
  for (int r = 1; r < P; r++)
    if (b[r] > n) b[r] = n;
}

/* This rank's rows [b, e) of the whole matrix A, with global column ids. */
static void local_rows(const halo_csr *A, int64_t b, int64_t e, halo_csr *L) {
  memset(L, 0, sizeof *L);
  L->n_rows = A->n_rows, L->n_cols = A->n_cols, L->row_begin = b, L->row_end = e;
  int64_t base = A->row_ptr[b];
  L->row_ptr = halo_malloc((size_t)(e - b + 1) * sizeof(int64_t));
  for (int64_t i = 0; i <= e - b; i++) L->row_ptr[i] = A->row_ptr[b + i] - base;
  int64_t nnz = L->row_ptr[e - b];
  L->col_ids = halo_malloc((size_t)(nnz + 1) * sizeof(int64_t));
  L->values = halo_malloc((size_t)(nnz + 1) * sizeof(double));
  if (nnz) memcpy(L->col_ids, A->col_ids + base, (size_t)nnz * sizeof(int64_t));
  if (nnz) memcpy(L->values, A->values + base, (size_t)nnz * sizeof(double));
}

static int n_checked = 0;

static void run_case(MPI_Comm comm, const halo_csr *A, const int64_t *rb, const int64_t *cb,
                     halo_plan_options base, int sim_K, const char *what) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_csr L;
  local_rows(A, rb[rank], rb[rank + 1], &L);
  const int64_t nr = rb[rank + 1] - rb[rank], nc = cb[rank + 1] - cb[rank];
  halo_matrix M = NULL;
  CHECK_OK(halo_matrix_create_csr(comm, rb[rank], rb[rank + 1], cb[rank], cb[rank + 1], L.row_ptr,
                                  L.col_ids, L.values, HALO_MEMORY_HOST, &M));
  int64_t ng;
  const int64_t *gid;
  CHECK_OK(halo_matrix_get_local_sizes(M, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(M, &gid));
  double *x = malloc((size_t)(nc + 1) * sizeof *x), *y = malloc((size_t)(nr + 1) * sizeof *y);
  double *ys = malloc((size_t)(nr + 1) * sizeof *ys), *g = malloc((size_t)(ng + 1) * sizeof *g);
  double *gs = malloc((size_t)(ng + 1) * sizeof *gs);
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(cb[rank] + j);
  halo_sim sim = NULL;
  if (rank == 0) CHECK_OK(halo_sim_create(A, P, rb, cb, &sim));
  for (int t = 0; t < HALO_N_STRATEGIES; t++) {
    halo_plan_options o = base;
    o.strategy = (halo_strategy)t;
    halo_plan plan = NULL;
    CHECK_OK(halo_plan_create(M, &o, &plan));
    double *gh = t == 0 ? gs : g, *yy = t == 0 ? ys : y;
    for (int rep = 0; rep < 2; rep++) { /* twice: the persistent requests are reused */
      for (int64_t k = 0; k < ng; k++) gh[k] = NAN;
      CHECK_OK(halo_exchange_begin(plan, x, gh));
      CHECK_OK(halo_exchange_end(plan));
    }
    for (int64_t k = 0; k < ng; k++)
      CHECK_MSG(gh[k] == test_x(gid[k]), "%s, %s: ghost %lld (global %lld) wrong", what,
                halo_strategy_name(o.strategy), (long long)k, (long long)gid[k]);
    for (int64_t i = 0; i < nr; i++) yy[i] = NAN;
    CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, yy));
    if (t > 0) {
      CHECK_MSG(ng == 0 || memcmp(g, gs, (size_t)ng * sizeof *g) == 0,
                "%s, %s: ghosts differ from standard", what, halo_strategy_name(o.strategy));
      CHECK_MSG(nr == 0 || memcmp(y, ys, (size_t)nr * sizeof *y) == 0,
                "%s, %s: product differs from standard", what, halo_strategy_name(o.strategy));
    }
    halo_stats st;
    CHECK_OK(halo_plan_stats(plan, &st));
    if (rank == 0) { /* the simulator predicts these statistics exactly */
      halo_stats ss;
      halo_plan_options so = o;
      so.ranks_per_node = sim_K;
      if (st.n_phases) so.transport = verify_phase(plan, 0).transport; /* as resolved */
      CHECK_OK(halo_sim_run(sim, &so, &ss));
      st.setup_seconds = ss.setup_seconds = 0.0; /* times: the rest must be equal */
      CHECK_MSG(memcmp(&st, &ss, sizeof st) == 0,
                "%s, %s: the simulator's statistics differ from the run's (%d vs %d phases, "
                "%lld vs %lld ghosts)",
                what, halo_strategy_name(o.strategy), st.n_phases, ss.n_phases,
                (long long)st.ghosts, (long long)ss.ghosts);
      int64_t msgs = 0, bytes = 0;
      for (int k = 0; k < st.n_phases; k++) {
        halo_phase_stats pp, sp;
        CHECK_OK(halo_plan_phase_stats(plan, k, &pp));
        CHECK_OK(halo_sim_phase_stats(sim, k, &sp));
        CHECK_MSG(memcmp(&pp, &sp, sizeof pp) == 0,
                  "%s, %s: the simulator's phase %d differs from the run's (%lld vs %lld "
                  "messages, %lld vs %lld bytes)",
                  what, halo_strategy_name(o.strategy), k, (long long)pp.messages,
                  (long long)sp.messages, (long long)pp.bytes, (long long)sp.bytes);
        msgs += sp.messages;
        bytes += sp.bytes;
      }
      /* the plan's phases against the simulator's counts; the refusals, the set-up parts */
      verify_phase_stats(plan, msgs, bytes, what);
    }
    halo_plan_destroy(&plan);
    n_checked++;
  }
  halo_sim_destroy(&sim);
  free(x), free(y), free(ys), free(g), free(gs);
  halo_matrix_destroy(&M);
  halo_csr_free(&L);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, W;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &W);
  const int n_cases = argc > 1 ? atoi(argv[1]) : 40;
  const int n_files = argc > 2 ? argc - 2 : 0;
  halo_csr *files = calloc((size_t)n_files + 1, sizeof *files);
  for (int f = 0; f < n_files; f++) CHECK_OK(halo_mm_read(argv[2 + f], NULL, &files[f]));
  rng_state = 0x2545f4914f6cdd1dULL + (uint64_t)W; /* the same draws on every rank */
  const int64_t caps[] = {8, 24, 64, 200, 16384};
  for (int c = 0; c < n_cases; c++) {
    const int P = c == 0 ? W : 1 + (int)rnd(W); /* the first case uses every rank */
    halo_csr A, *Ap = &A;
    char what[256];
    int kind = (int)rnd(4);
    if (kind == 3 && n_files == 0) kind = 0;
    if (kind == 0) {
      const int64_t N = 1 + rnd(120), M = rnd(3) ? N : 1 + rnd(150);
      random_matrix(N, M, &A);
      snprintf(what, sizeof what, "case %d: random %lld x %lld", c, (long long)N, (long long)M);
    } else if (kind <= 2) {
      const char *spec = kind == 1 ? "lap3d27:5" : "irregular:500,11";
      halo_gen g;
      int64_t N;
      CHECK_OK(halo_gen_parse(spec, &g));
      CHECK_OK(halo_gen_size(&g, &N, NULL));
      CHECK_OK(halo_gen_rows(&g, 0, N, &A));
      snprintf(what, sizeof what, "case %d: %s", c, spec);
    } else {
      const int f = (int)rnd(n_files);
      Ap = &files[f];
      snprintf(what, sizeof what, "case %d: %s", c, argv[2 + f]);
    }
    int64_t *rb = malloc((size_t)(P + 1) * sizeof *rb), *cb = malloc((size_t)(P + 1) * sizeof *cb);
    if (rnd(3) == 0)
      halo_partition_rows(Ap->n_rows, P, rb);
    else
      random_layout(Ap->n_rows, P, rb);
    if (Ap->n_rows == Ap->n_cols && rnd(2))
      memcpy(cb, rb, (size_t)(P + 1) * sizeof *cb);
    else
      random_layout(Ap->n_cols, P, cb);
    halo_plan_options o = halo_plan_options_default();
    o.message_cap = caps[rnd(5)];
    o.remove_duplicates = rnd(4) != 0;
    const int how = (int)rnd(6); /* 0: nodes of MPI (one here), 1: the environment, else option */
    const int K = 1 + (int)rnd(4);
    int sim_K = K;
    unsetenv("HALO_RANKS_PER_NODE");
    if (how == 0) {
      o.ranks_per_node = 0;
      sim_K = P; /* all ranks of this test share one machine */
    } else if (how == 1) {
      char v[16];
      snprintf(v, sizeof v, "%d", K);
      setenv("HALO_RANKS_PER_NODE", v, 1);
      o.ranks_per_node = 0;
    } else {
      o.ranks_per_node = K;
    }
    char full[512];
    snprintf(full, sizeof full, "%s, P=%d, K=%d%s, cap=%lld, dedup=%d", what, P, sim_K,
             how == 1   ? " (environment)"
             : how == 0 ? " (MPI)"
                        : "",
             (long long)o.message_cap, o.remove_duplicates);
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < P ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub != MPI_COMM_NULL) {
      run_case(sub, Ap, rb, cb, o, sim_K, full);
      MPI_Comm_free(&sub);
    }
    free(rb), free(cb);
    if (Ap == &A) halo_csr_free(&A);
  }
  for (int f = 0; f < n_files; f++) halo_csr_free(&files[f]);
  free(files);
  int total = 0;
  MPI_Reduce(&n_checked, &total, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%d cases x strategies checked on up to %d ranks\n", total, W);
  MPI_Finalize();
  return 0;
}
