/* Transport neighbor against host, on the bundled matrices given as
 * arguments, for every strategy, at the rank count the test runs on, with
 * nodes of the MPI (one) and virtual nodes of 2 and 3 ranks:
 *   - forward: the ghosts and the product bit for bit those of the standard
 *     exchange over host (and the ghosts exactly x at their global ids);
 *   - reverse: the sums bit for bit those of host under the same strategy
 *     (the same additions in the same order), and the transpose product;
 *   - a message past the plan's largest count (max_message_count, as a
 *     message past INT_MAX would be) refused with a message on every rank,
 *     and strategy AUTO with parameters that price neighbor skipping it then;
 *   - plans destroyed in another order on each rank, then new ones.
 * usage: test_neighbor FILE.mtx ... */
#define _POSIX_C_SOURCE 200809L
#include "halo_impl.h"
#include "params_file.h"
#include "verify.h"

static halo_plan make(halo_matrix A, halo_strategy s, halo_transport t, int K) {
  halo_plan_options o = halo_plan_options_default();
  o.strategy = s, o.transport = t, o.ranks_per_node = K, o.reverse = 1;
  halo_plan plan = NULL;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  return plan;
}

static int same(const double *a, const double *b, int64_t n) {
  return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void run(MPI_Comm comm, const halo_csr *L, const int64_t *rb, const char *label) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_matrix A = NULL;
  /* x as the rows, or (rectangular) in even parts of the columns */
  const int64_t b = L->n_rows == L->n_cols ? rb[rank] : L->n_cols * rank / P;
  const int64_t e = L->n_rows == L->n_cols ? rb[rank + 1] : L->n_cols * (rank + 1) / P;
  const int64_t n = e - b, nr = rb[rank + 1] - rb[rank];
  CHECK_OK(halo_matrix_create_csr(comm, rb[rank], rb[rank + 1], b, e, L->row_ptr, L->col_ids,
                                  L->values, HALO_MEMORY_HOST, &A));
  int64_t ng;
  const int64_t *gid;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(A, &gid));
  double *x = malloc((size_t)(n + 1) * sizeof *x), *c = malloc((size_t)(ng + 1) * sizeof *c);
  double *g[2], *y[2], *r[2], *t[2];
  for (int i = 0; i < 2; i++) {
    g[i] = malloc((size_t)(ng + 1) * sizeof *g[i]);
    y[i] = malloc((size_t)(nr + 1) * sizeof *y[i]);
    r[i] = malloc((size_t)(n + 1) * sizeof *r[i]);
    t[i] = malloc((size_t)(n + 1) * sizeof *t[i]);
  }
  double *gs = malloc((size_t)(ng + 1) * sizeof *gs), *ys = malloc((size_t)(nr + 1) * sizeof *ys);
  for (int64_t j = 0; j < n; j++) x[j] = test_x(b + j);
  for (int64_t k = 0; k < ng; k++) c[k] = 0.1 * test_x(gid[k] + 7) + rank; /* of every rank */
  const int layouts[] = {0, 2, 3};
  for (int li = 0; li < 3; li++) {
    const int K = layouts[li];
    halo_plan ref = make(A, HALO_STRATEGY_STANDARD, HALO_TRANSPORT_HOST, K);
    CHECK_OK(halo_exchange_begin(ref, x, gs));
    CHECK_OK(halo_exchange_end(ref));
    CHECK_OK(halo_spmv(ref, 1.0, x, 0.0, ys));
    halo_plan_destroy(&ref);
    for (int s = 0; s < HALO_N_STRATEGIES; s++) {
      halo_plan pl[2] = {make(A, (halo_strategy)s, HALO_TRANSPORT_HOST, K),
                         make(A, (halo_strategy)s, HALO_TRANSPORT_NEIGHBOR, K)};
      for (int i = 0; i < 2; i++) {
        for (int rep = 0; rep < 2; rep++) { /* twice: the persistent requests again */
          for (int64_t k = 0; k < ng; k++) g[i][k] = NAN;
          CHECK_OK(halo_exchange_begin(pl[i], x, g[i]));
          CHECK_OK(halo_exchange_end(pl[i]));
        }
        for (int64_t j = 0; j < n; j++) r[i][j] = test_x(b + j + 3);
        CHECK_OK(halo_exchange_reverse_begin(pl[i], c, r[i]));
        CHECK_OK(halo_exchange_reverse_end(pl[i]));
        for (int64_t j = 0; j < nr; j++) y[i][j] = test_x(rb[rank] + j + 11); /* A^T's input */
        CHECK_OK(halo_spmv_transpose(pl[i], 1.0, y[i], 0.0, t[i]));
        CHECK_OK(halo_spmv(pl[i], 1.0, x, 0.0, y[i]));
      }
      const char *sn = halo_strategy_name((halo_strategy)s);
      for (int64_t k = 0; k < ng; k++)
        CHECK_MSG(g[1][k] == test_x(gid[k]), "%s, %s, nodes of %d: ghost %lld wrong", label, sn, K,
                  (long long)k);
      CHECK_MSG(same(g[1], gs, ng), "%s, %s, nodes of %d: ghosts differ from standard's", label, sn,
                K);
      CHECK_MSG(same(y[1], ys, nr), "%s, %s, nodes of %d: product differs from standard's", label,
                sn, K);
      CHECK_MSG(same(r[1], r[0], n), "%s, %s, nodes of %d: reverse sums differ from host's", label,
                sn, K);
      CHECK_MSG(same(t[1], t[0], n), "%s, %s, nodes of %d: transpose differs from host's", label,
                sn, K);
      halo_stats st;
      CHECK_OK(halo_plan_stats(pl[1], &st));
      for (int k = 0; k < st.n_phases; k++)
        CHECK(verify_phase(pl[1], k).transport == HALO_TRANSPORT_NEIGHBOR);
      /* destroyed in another order on odd ranks */
      halo_plan_destroy(&pl[rank % 2]);
      halo_plan_destroy(&pl[1 - rank % 2]);
    }
  }
  for (int i = 0; i < 2; i++) free(g[i]), free(y[i]), free(r[i]), free(t[i]);
  free(gs), free(ys), free(x), free(c);
  halo_matrix_destroy(&A);
}

/* A message past the largest count refused, on every rank; AUTO skips
 * neighbor then, with parameters that would choose it otherwise. */
static void misuse(MPI_Comm comm) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (P < 2) return;
  halo_gen gen;
  halo_csr L;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap2d:24", &gen));
  CHECK_OK(halo_gen_distributed(comm, &gen, HALO_PARTITION_ROWS, NULL, &rb, &L));
  halo_matrix A = NULL;
  CHECK_OK(halo_matrix_create_csr(comm, rb[rank], rb[rank + 1], rb[rank], rb[rank + 1], L.row_ptr,
                                  L.col_ids, L.values, HALO_MEMORY_HOST, &A));
  halo_plan_options o = halo_plan_options_default();
  halo_plan plan = NULL;
  o.strategy = HALO_STRATEGY_STANDARD, o.transport = HALO_TRANSPORT_NEIGHBOR;
  o.settings = "exec.max_message_count=5"; /* a row of lap2d:24 is 24 values */
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_UNSUPPORTED,
            "of one count of MPI_Neighbor_alltoallv (an int): use host");
  CHECK(plan == NULL);
  /* parameters where neighbor costs nothing: AUTO takes it where it can run, and not where
   * its counts are past the limit */
  char path[64] = "/tmp/halo_test_neighbor_XXXXXX";
  halo_params prm;
  CHECK_OK(halo_params_builtin("lassen", &prm));
  prm.have_own[HALO_TRANSPORT_NEIGHBOR] = 1;
  prm.own[HALO_TRANSPORT_NEIGHBOR] = (halo_postal){0.0, 0.0};
  params_file_write(comm, &prm, path);
  o = halo_plan_options_default();
  o.params = path;
  o.autotune = 0;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  halo_stats st;
  CHECK_OK(halo_plan_stats(plan, &st));
  CHECK_MSG(verify_phase(plan, 0).transport == HALO_TRANSPORT_NEIGHBOR,
            "auto chose %s, not neighbor", halo_transport_name(verify_phase(plan, 0).transport));
  halo_plan_destroy(&plan);
  o.settings = "exec.max_message_count=5";
  CHECK_OK(halo_plan_create(A, &o, &plan));
  CHECK_OK(halo_plan_stats(plan, &st));
  CHECK_MSG(verify_phase(plan, 0).transport == HALO_TRANSPORT_HOST,
            "auto chose %s for counts past the limit, not host",
            halo_transport_name(verify_phase(plan, 0).transport));
  halo_plan_destroy(&plan);
  MPI_Barrier(comm);
  if (rank == 0) remove(path);
  halo_matrix_destroy(&A);
  halo_csr_free(&L);
  halo_io_free(rb);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  misuse(comm);
  for (int a = 1; a < argc; a++) {
    halo_csr L;
    int64_t *rb;
    CHECK_OK(
        halo_mm_read_distributed(comm, 0, argv[a], NULL, HALO_PARTITION_NNZ, NULL, &rb, &L, NULL));
    run(comm, &L, rb, argv[a]);
    halo_csr_free(&L);
    halo_io_free(rb);
  }
  MPI_Finalize();
  return 0;
}
