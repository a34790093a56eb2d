/* No allocation, request creation or communicator creation inside an
 * exchange or a product. The library's allocations are counted by its
 * allocator; MPI objects are counted by wrapping the MPI calls that create
 * them (the MPI profiling interface: these definitions take the place of the
 * library's, and call the PMPI_ originals). The counters must move while a
 * plan is created (so the wrapping works) and stand still over 100 products
 * and 100 exchanges, for every strategy (on virtual nodes of 2 ranks). A later
 * plan of the same matrix learns no pattern (the matrix keeps the first's) and
 * gives the same product. */
#include "halo_impl.h"
#include "verify.h"

#include "mpi_count.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  const char *gens[] = {"lap3d27:8", "irregular:3000,4"};
  for (int c = 0; c < 2 * HALO_N_STRATEGIES; c++) {
    const int t = c % 2;
    halo_plan_options o = halo_plan_options_default();
    o.strategy = (halo_strategy)(c / 2);
    o.ranks_per_node = 2;
    o.message_cap = 64;
    halo_gen g;
    halo_csr rows;
    int64_t *rb;
    CHECK_OK(halo_gen_parse(gens[t], &g));
    CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
    const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
    halo_matrix A;
    halo_plan plan;
    long created0 = n_created;
    int64_t alloc0 = halo_debug_alloc_count();
    CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                    HALO_MEMORY_HOST, &A));
    CHECK_OK(halo_plan_create(A, &o, &plan));
    /* the counters see the set-up: dup'ed communicators, persistent requests */
    CHECK_MSG(n_created - created0 >= 2, "only %ld MPI objects counted in set-up",
              n_created - created0);
    CHECK(halo_debug_alloc_count() > alloc0);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    int64_t n_ghost;
    CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &n_ghost));
    double *gh = malloc((size_t)(n_ghost + 1) * sizeof *gh);
    for (int64_t i = 0; i < n; i++) x[i] = test_x(b + i);
    /* a first call of each, outside the count: the host executor binds
     * requests to a source or ghost address at the first exchange with it */
    CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y));
    CHECK_OK(halo_exchange_begin(plan, x, gh));
    CHECK_OK(halo_exchange_end(plan));
    const long created1 = n_created;
    const int64_t alloc1 = halo_debug_alloc_count();
    for (int it = 0; it < 100; it++) CHECK_OK(halo_spmv(plan, 1.0, x, 0.5, y));
    for (int it = 0; it < 100; it++) {
      CHECK_OK(halo_exchange_begin(plan, x, it % 2 ? gh : NULL));
      CHECK_OK(halo_exchange_end(plan));
    }
    CHECK_MSG(halo_debug_alloc_count() == alloc1, "%s, %s: %lld allocations in 200 calls", gens[t],
              halo_strategy_name(o.strategy), (long long)(halo_debug_alloc_count() - alloc1));
    CHECK_MSG(n_created == created1, "%s, %s: %ld MPI requests or communicators made in 200 calls",
              gens[t], halo_strategy_name(o.strategy), n_created - created1);
    /* a later plan of the matrix takes the pattern the first one learned, and
     * gives the same product, bit for bit (another strategy: standard's ghosts) */
    const int64_t learned = halo_debug_patterns_learned();
    halo_plan later;
    halo_plan_options lo = o;
    lo.strategy = o.strategy == HALO_STRATEGY_3STEP ? HALO_STRATEGY_STANDARD : HALO_STRATEGY_3STEP;
    double *y2 = malloc((size_t)(n + 1) * sizeof *y2);
    CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y));
    halo_plan_destroy(&plan);
    CHECK_OK(halo_plan_create(A, &lo, &later));
    CHECK_MSG(halo_debug_patterns_learned() == learned,
              "%s: a later plan learned the pattern again", gens[t]);
    CHECK_OK(halo_spmv(later, 1.0, x, 0.0, y2));
    for (int64_t i = 0; i < n; i++)
      CHECK_MSG(y2[i] == y[i], "%s: the later plan's product, row %lld", gens[t],
                (long long)(b + i));
    halo_plan_destroy(&later);
    free(y2);
    free(x), free(y), free(gh);
    halo_matrix_destroy(&A);
    halo_csr_free(&rows);
    halo_io_free(rb);
  }
  MPI_Finalize();
  return 0;
}
