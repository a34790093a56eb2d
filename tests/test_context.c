/* One context per communicator, looked at from inside: the plans and
 * matrices of a communicator share one copy of it, its nodes and its tags.
 *   - 100 plans of one matrix (strategies and nodes of several kinds): the
 *     communicators created are counted (MPI's profiling interface): after
 *     the context and the first plan of each kind of node, none;
 *   - the tag blocks of all live executors never overlap, and lie between
 *     the first exchange tag and MPI_TAG_UB;
 *   - all 100 plans' exchanges in flight at once, ended in reverse order;
 *   - plans destroyed in a different order on different ranks, then 50 new
 *     ones: their tags still agree (their exchanges complete, right);
 *   - the user's communicator freed while plans live: they keep working; a
 *     new communicator gets a new context;
 *   - halo_comm_get_node_info on nodes of MPI and virtual nodes. */
#include "interface/plan.h"
#include "tags.h"
#include "verify.h"

#include "mpi_count.h"

enum { N_PLANS = 100 };

typedef struct {
  int lo, hi;
} block;

static int cmp_block(const void *a, const void *b) {
  const block *x = a, *y = b;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Every executor's tags [base, base + phases * stride) of the live plans:
 * disjoint, inside [HALO_TAG_EXCHANGE_FIRST, MPI_TAG_UB]. */
static void check_tags(halo_plan *plans, int n) {
  block *b = malloc((size_t)(4 * HALO_MAX_EXCHANGES * n + 1) * sizeof *b);
  int m = 0;
  for (int i = 0; i < n; i++) {
    halo_plan P = plans[i];
    if (!P) continue;
    CHECK(P->tag_base >= HALO_TAG_EXCHANGE_FIRST && P->tag_base + P->n_tags - 1 <= P->ctx->tag_ub);
    for (int s = 0; s < P->n_sets; s++) {
      const halo_exec *e[2] = {&P->sets[s].fwd, &P->sets[s].rev};
      for (int d = 0; d < 1 + P->set.opts.reverse; d++) {
        const int lo = e[d]->cfg.tag_base, hi = lo + e[d]->sched->n_phases * e[d]->cfg.tag_stride;
        CHECK(lo >= P->tag_base && hi <= P->tag_base + P->n_tags);
        b[m++] = (block){lo, hi};
      }
    }
  }
  qsort(b, (size_t)m, sizeof *b, cmp_block);
  for (int i = 1; i < m; i++)
    CHECK_MSG(b[i].lo >= b[i - 1].hi, "tags [%d, %d) and [%d, %d) overlap", b[i - 1].lo,
              b[i - 1].hi, b[i].lo, b[i].hi);
  free(b);
}

/* Begin every live plan's exchange with its own x, end them in reverse
 * order, check every ghost. */
static void all_in_flight(halo_plan *plans, int n, halo_matrix A, const double *x, int64_t nc) {
  int64_t ng;
  const int64_t *ids;
  int64_t cb;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(A, &ids));
  CHECK_OK(halo_matrix_get_layout(A, NULL, NULL, NULL, &cb));
  double *xs = malloc((size_t)(n * nc + 1) * sizeof *xs);
  for (int i = 0; i < n; i++)
    for (int64_t j = 0; j < nc; j++) xs[i * nc + j] = (i + 1) * x[j];
  for (int i = 0; i < n; i++)
    if (plans[i]) CHECK_OK(halo_exchange_begin(plans[i], xs + i * nc, NULL));
  for (int i = n - 1; i >= 0; i--) {
    if (!plans[i]) continue;
    double *g;
    CHECK_OK(halo_exchange_end(plans[i]));
    CHECK_OK(halo_plan_get_ghost(plans[i], &g));
    for (int64_t k = 0; k < ng; k++)
      CHECK_MSG(g[k] == (i + 1) * test_x(ids[k]), "plan %d: ghost %lld is %g, not %g", i,
                (long long)k, g[k], (i + 1) * test_x(ids[k]));
  }
  free(xs);
}

static halo_plan_options options_of(int i) {
  halo_plan_options o = halo_plan_options_default();
  o.strategy = (halo_strategy)(i % HALO_N_STRATEGIES);
  o.ranks_per_node = i % 3 == 0 ? 0 : 2; /* nodes of MPI, or virtual nodes of 2 */
  o.message_cap = 64;
  o.max_exchanges = 1 + i % 3;
  o.reverse = i % 2;
  return o;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm user;
  MPI_Comm_dup(MPI_COMM_WORLD, &user);
  MPI_Comm_rank(user, &rank);
  MPI_Comm_size(user, &P);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap3d27:6", &g));
  CHECK_OK(halo_gen_distributed(user, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1], nc = e - b;
  double *x = malloc((size_t)(nc + 1) * sizeof *x);
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(b + j);

  /* the matrix makes the context: one copy of the communicator */
  long c0 = n_comms;
  halo_matrix A;
  CHECK_OK(halo_matrix_create_csr(user, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  CHECK_MSG(n_comms - c0 == 1, "the first matrix made %ld communicators", n_comms - c0);
  halo_matrix A2;
  CHECK_OK(halo_matrix_create_csr(user, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A2));
  CHECK(A2->ctx == A->ctx && A2->comm == A->comm);
  CHECK_MSG(n_comms - c0 == 1, "a second matrix made a communicator");

  /* 100 plans: the first of each kind of node adds its node communicator
   * (virtual nodes: also the machine's, for the model); then nothing */
  halo_plan plans[N_PLANS];
  for (int i = 0; i < N_PLANS; i++) {
    const halo_plan_options o = options_of(i);
    long before = n_comms;
    CHECK_OK(halo_plan_create(i % 2 ? A2 : A, &o, &plans[i]));
    CHECK(plans[i]->ctx == A->ctx);
    if (i >= 2) CHECK_MSG(n_comms == before, "plan %d made %ld communicators", i, n_comms - before);
  }
  const long plan_comms = n_comms - c0 - 1;
  CHECK_MSG(plan_comms <= 3, "100 plans made %ld communicators", plan_comms);
  check_tags(plans, N_PLANS);
  all_in_flight(plans, N_PLANS, A, x, nc);

  /* destruction in an order of each rank's own: every other plan, from the
   * front on even ranks, from the back on odd ones */
  for (int t = 0; t < N_PLANS / 2; t++) {
    const int i = rank % 2 ? N_PLANS - 2 - 2 * t : 2 * t;
    halo_plan_destroy(&plans[i]);
  }
  for (int i = 0; i < N_PLANS; i += 2) {
    const halo_plan_options o = options_of(i);
    CHECK_OK(halo_plan_create(A, &o, &plans[i]));
  }
  CHECK_MSG(n_comms - c0 - 1 == plan_comms, "new plans made communicators");
  { /* rma (HALO_TRANSPORT=rma): the windows of the plans destroyed are freed, on every rank */
    int live = 0;
    for (int i = 0; i < N_PLANS; i++)
      live += plans[i]->transport == HALO_TRANSPORT_RMA
                  ? plans[i]->n_sets * (1 + plans[i]->set.opts.reverse)
                  : 0;
    const int kept = halo_transport_state_count(A->ctx->transport_state, HALO_TRANSPORT_RMA);
    CHECK_MSG(kept == live, "%d MPI windows for %d rma executors", kept, live);
  }
  { /* neighbor (HALO_TRANSPORT=neighbor): a graph communicator per peer set in use, no more */
    int phases = 0;
    for (int i = 0; i < N_PLANS; i++)
      if (plans[i]->transport == HALO_TRANSPORT_NEIGHBOR)
        phases += plans[i]->sched.n_phases * plans[i]->n_sets * (1 + plans[i]->set.opts.reverse);
    const int kept = halo_transport_state_count(A->ctx->transport_state, HALO_TRANSPORT_NEIGHBOR);
    CHECK_MSG(kept <= phases, "%d graph communicators for %d neighbor phases", kept, phases);
    CHECK_MSG(phases == 0 || kept > 0, "no graph communicator for %d neighbor phases", phases);
  }
  check_tags(plans, N_PLANS);
  all_in_flight(plans, N_PLANS, A, x, nc);

  /* the user frees the communicator: the plans live on */
  halo_context *ctx = A->ctx;
  const int refs = ctx->refs;
  MPI_Comm_free(&user);
  CHECK(ctx->refs == refs - 1 && ctx->outer == MPI_COMM_NULL);
  all_in_flight(plans, N_PLANS, A, x, nc);
  for (int i = 0; i < N_PLANS; i++) halo_plan_destroy(&plans[i]);
  { /* every plan gone: the next plan's set-up frees what they kept (windows, graphs) */
    halo_plan one = NULL;
    const halo_plan_options o = options_of(0);
    CHECK_OK(halo_plan_create(A, &o, &one));
    const int n_exec = one->n_sets * (1 + one->set.opts.reverse);
    const int graphs = halo_transport_state_count(ctx->transport_state, HALO_TRANSPORT_NEIGHBOR);
    const int windows = halo_transport_state_count(ctx->transport_state, HALO_TRANSPORT_RMA);
    CHECK_MSG(graphs <= one->sched.n_phases * n_exec, "%d graph communicators kept for %d phases",
              graphs, one->sched.n_phases * n_exec);
    CHECK_MSG(windows <= n_exec, "%d windows kept for %d executors", windows, n_exec);
    halo_plan_destroy(&one);
  }
  halo_matrix_destroy(&A2);
  CHECK(ctx->refs == 1); /* the last matrix's */
  halo_matrix_destroy(&A);

  /* a new communicator: a new context */
  MPI_Comm_dup(MPI_COMM_WORLD, &user);
  c0 = n_comms;
  CHECK_OK(halo_matrix_create_csr(user, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  CHECK(n_comms - c0 == 1);
  halo_plan plan;
  CHECK_OK(halo_plan_create(A, NULL, &plan));
  all_in_flight(&plan, 1, A, x, nc);
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);

  /* nodes: MPI's (one machine here), virtual nodes of 2 */
  halo_node_info info;
  CHECK_OK(halo_comm_get_node_info(user, 0, &info));
  CHECK(info.node == 0 && info.n_nodes == 1 && info.local_rank == rank && info.local_size == P &&
        info.max_local_size == P);
  CHECK_OK(halo_comm_get_node_info(user, 2, &info));
  CHECK(info.node == rank / 2 && info.n_nodes == (P + 1) / 2 && info.local_rank == rank % 2);
  CHECK(info.local_size == (rank / 2 * 2 + 1 < P ? 2 : 1) &&
        info.max_local_size == (P > 1 ? 2 : 1));
  CHECK_ERR(halo_comm_get_node_info(user, -1, &info), HALO_ERR_INVALID_ARG, "ranks_per_node = -1");
  MPI_Comm_free(&user);

  free(x);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return 0;
}
