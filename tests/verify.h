/* Verification of a distributed matrix against values computed here, from
 * the raw rows alone: every ghost must equal x at its global id, every
 * product the serial sum of its row. Used by the MPI tests. */
#ifndef HALO_TEST_VERIFY_H
#define HALO_TEST_VERIFY_H

#include "halo/io.h"
#include "test_util.h"

/* A generated matrix on comm, its rows spread evenly: this rank, the ranks,
 * the raw rows of this rank, every rank's first row, and the host matrix. */
typedef struct {
  int rank, P;
  halo_csr rows;
  int64_t *rb;
  halo_matrix A;
} gen_case;

static inline void gen_case_make(MPI_Comm comm, const char *spec, gen_case *c) {
  MPI_Comm_rank(comm, &c->rank);
  MPI_Comm_size(comm, &c->P);
  halo_gen g;
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &c->rb, &c->rows));
  const int64_t *r = c->rb;
  CHECK_OK(halo_matrix_create_csr(comm, r[c->rank], r[c->rank + 1], r[c->rank], r[c->rank + 1],
                                  c->rows.row_ptr, c->rows.col_ids, c->rows.values,
                                  HALO_MEMORY_HOST, &c->A));
}

static inline void gen_case_free(gen_case *c) {
  halo_matrix_destroy(&c->A);
  halo_csr_free(&c->rows);
  halo_io_free(c->rb);
}

/* Largest error of y against alpha*A*x + beta*y0 over local rows of the raw
 * CSR rows (global column ids), relative to the size of the terms. */
static inline double verify_product_error(const halo_csr *rows, double alpha, double beta,
                                          const double *y0, const double *y, double scale_x) {
  double worst = 0.0;
  for (int64_t i = 0; i < rows->row_end - rows->row_begin; i++) {
    double s = 0.0, a = 0.0;
    for (int64_t k = rows->row_ptr[i]; k < rows->row_ptr[i + 1]; k++) {
      double t = rows->values[k] * scale_x * test_x(rows->col_ids[k]);
      s += t;
      a += fabs(t);
    }
    double ref = alpha * s + (beta != 0.0 ? beta * y0[i] : 0.0);
    double mag = fabs(alpha) * a + (beta != 0.0 ? fabs(beta * y0[i]) : 0.0);
    double d = fabs(y[i] - ref);
    if (!(d <= 1e-300 || d <= 1e-12 * mag)) worst = fmax(worst, mag > 0 ? d / mag : INFINITY);
    if (isnan(y[i])) worst = INFINITY;
  }
  return worst;
}

/* Distinct owners of the ghosts: the messages the standard exchange receives. */
static inline int64_t verify_owner_count(const int64_t *ghost, int64_t n, const int64_t *ranges,
                                         int P) {
  int64_t owners = 0;
  int last = -1;
  for (int64_t k = 0; k < n; k++) {
    int o = 0;
    while (!(ghost[k] >= ranges[o] && ghost[k] < ranges[o + 1])) o++; /* linear: independent */
    if (o != last) owners++;
    last = o;
  }
  (void)P;
  return owners;
}

/*
 * Build the matrix from rows [row_begin[rank], row_begin[rank+1]) (global
 * columns) and x layout col_begin, plan it with the standard strategy, and
 * check ghosts, repeated exchanges, products with and without beta, two plans
 * in flight at once, and the statistics.
 */
/* Phase k's statistics of plan (halo_plan_phase_stats); all zero past its
 * last phase. */
static inline halo_phase_stats verify_phase(halo_plan plan, int k) {
  halo_phase_stats ps;
  halo_stats st;
  memset(&ps, 0, sizeof ps);
  CHECK_OK(halo_plan_stats(plan, &st));
  if (k >= 0 && k < st.n_phases) CHECK_OK(halo_plan_phase_stats(plan, k, &ps));
  return ps;
}

/* A host plan made with the default transport runs the one HALO_TRANSPORT
 * names (rma: the tests run again with it), else host. */
static inline void verify_transport(halo_plan plan, const char *label) {
  halo_plan_options r;
  halo_stats st;
  CHECK_OK(halo_plan_options_resolve(NULL, &r));
  CHECK_OK(halo_plan_stats(plan, &st));
  const halo_transport want =
      r.transport == HALO_TRANSPORT_AUTO ? HALO_TRANSPORT_HOST : r.transport;
  for (int k = 0; k < st.n_phases; k++) {
    const halo_transport t = verify_phase(plan, k).transport;
    CHECK_MSG(t == want, "%s: transport %s, not %s", label, halo_transport_name(t),
              halo_transport_name(want));
  }
}

/* The per-phase and per-part statistics of a plan against its halo_stats:
 * the phases' messages and bytes add up to msgs and bytes (counted by the
 * caller), phases and set-up parts out of range are refused, and the parts
 * of the set-up fit in the whole. */
static inline void verify_phase_stats(halo_plan plan, int64_t msgs, int64_t bytes,
                                      const char *label) {
  halo_stats st;
  halo_phase_stats ps;
  CHECK_OK(halo_plan_stats(plan, &st));
  int64_t m = 0, b = 0;
  for (int k = 0; k < st.n_phases; k++) {
    CHECK_OK(halo_plan_phase_stats(plan, k, &ps));
    CHECK(ps.max_messages_per_rank <= ps.messages && ps.max_bytes_per_rank <= ps.bytes);
    CHECK(ps.inter_node_messages <= ps.messages && ps.inter_node_bytes <= ps.bytes);
    m += ps.messages;
    b += ps.bytes;
  }
  CHECK_MSG(m == msgs && b == bytes,
            "%s: the phases have %lld messages of %lld bytes, not %lld of %lld", label,
            (long long)m, (long long)b, (long long)msgs, (long long)bytes);
  CHECK_ERR(halo_plan_phase_stats(plan, -1, &ps), HALO_ERR_INVALID_ARG, "phase -1");
  char range[64];
  snprintf(range, sizeof range, "phases 0 to %d", st.n_phases - 1);
  CHECK_ERR(halo_plan_phase_stats(plan, st.n_phases, &ps), HALO_ERR_INVALID_ARG, range);
  CHECK_ERR(halo_plan_phase_stats(plan, 0, NULL), HALO_ERR_INVALID_ARG, "stats_p");
  CHECK_ERR(halo_plan_phase_stats(NULL, 0, &ps), HALO_ERR_INVALID_ARG, "plan is NULL");
  /* each part is the most of any rank: each at most the whole, and on one rank
   * their sum too */
  int P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  double parts = 0.0;
  int n_parts = 0;
  for (; strcmp(halo_setup_part_name((halo_setup_part)n_parts), "unknown") != 0; n_parts++) {
    double sec = -1.0;
    CHECK_OK(halo_plan_setup_part_seconds(plan, (halo_setup_part)n_parts, &sec));
    CHECK_MSG(sec >= 0.0 && sec <= st.setup_seconds + 1e-9, "%s: set-up part %s %g s of %g s",
              label, halo_setup_part_name((halo_setup_part)n_parts), sec, st.setup_seconds);
    parts += sec;
  }
  CHECK(n_parts == HALO_SETUP_STATS + 1);
  CHECK(strcmp(halo_setup_part_name(HALO_SETUP_CONTEXT), "context") == 0 &&
        strcmp(halo_setup_part_name(HALO_SETUP_STATS), "stats") == 0);
  CHECK(parts <= st.setup_seconds * (P == 1 ? 1.0 : (double)n_parts) + 1e-6);
  double sec;
  CHECK_ERR(halo_plan_setup_part_seconds(plan, (halo_setup_part)n_parts, &sec),
            HALO_ERR_INVALID_ARG, "set-up part");
  CHECK_ERR(halo_plan_setup_part_seconds(plan, (halo_setup_part)-1, &sec), HALO_ERR_INVALID_ARG,
            "set-up part -1");
  CHECK(strcmp(halo_setup_part_name((halo_setup_part)-1), "unknown") == 0);
}

static inline void verify_matrix(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin,
                                 const int64_t *col_begin, const char *label) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1];
  const int64_t cb = col_begin[rank], ce = col_begin[rank + 1];
  const int64_t nr = re - rb, nc = ce - cb;
  halo_matrix A = NULL;
  halo_plan plan = NULL, plan2 = NULL;
  CHECK_OK(halo_matrix_create_csr(comm, rb, re, cb, ce, rows->row_ptr, rows->col_ids, rows->values,
                                  HALO_MEMORY_HOST, &A));
  int64_t n_rows, n_cols, n_ghost, N, M, b0, c0;
  const int64_t *ghost_ids;
  CHECK_OK(halo_matrix_get_local_sizes(A, &n_rows, &n_cols, &n_ghost));
  CHECK_OK(halo_matrix_get_layout(A, &N, &M, &b0, &c0));
  CHECK(n_rows == nr && n_cols == nc && b0 == rb && c0 == cb);
  CHECK(N == row_begin[P] && M == col_begin[P]);
  CHECK_OK(halo_matrix_get_ghost_ids(A, &ghost_ids));
  /* ghosts: sorted, outside my range, exactly the off-range columns of my rows */
  for (int64_t k = 0; k < n_ghost; k++) {
    CHECK(ghost_ids[k] < cb || ghost_ids[k] >= ce);
    if (k) CHECK(ghost_ids[k] > ghost_ids[k - 1]);
  }
  int64_t n_off_cols = 0;
  {
    char *mark = calloc((size_t)M + 1, 1);
    for (int64_t k = 0; k < rows->row_ptr[nr]; k++) {
      int64_t c = rows->col_ids[k];
      if ((c < cb || c >= ce) && !mark[c]) mark[c] = 1, n_off_cols++;
    }
    for (int64_t k = 0; k < n_ghost; k++) CHECK(mark[ghost_ids[k]]);
    free(mark);
  }
  CHECK_MSG(n_off_cols == n_ghost, "%s: %lld ghosts, %lld off-range columns", label,
            (long long)n_ghost, (long long)n_off_cols);

  CHECK_OK(halo_plan_create(A, NULL, &plan));
  const halo_plan_options o = halo_plan_options_default();
  CHECK_OK(halo_plan_create(A, &o, &plan2));
  halo_matrix_destroy(&A); /* the plans keep their own references */
  CHECK(A == NULL);

  double *x = malloc((size_t)(nc + 1) * sizeof *x), *g = malloc((size_t)(n_ghost + 1) * sizeof *g);
  double *g2 = malloc((size_t)(n_ghost + 1) * sizeof *g2);
  double *y = malloc((size_t)(nr + 1) * sizeof *y), *y0 = malloc((size_t)(nr + 1) * sizeof *y0);
  for (int it = 1; it <= 4; it++) {
    for (int64_t j = 0; j < nc; j++) x[j] = it * test_x(cb + j);
    for (int64_t k = 0; k < n_ghost; k++) g[k] = NAN;
    CHECK_OK(halo_exchange_begin(plan, x, it % 2 ? g : NULL));
    CHECK_OK(halo_exchange_end(plan));
    double *got = g;
    if (it % 2 == 0) CHECK_OK(halo_plan_get_ghost(plan, &got));
    for (int64_t k = 0; k < n_ghost; k++)
      CHECK_MSG(got[k] == it * test_x(ghost_ids[k]), "%s: ghost %lld (global %lld) is %g, not %g",
                label, (long long)k, (long long)ghost_ids[k], got[k], it * test_x(ghost_ids[k]));
  }
  /* products */
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(cb + j);
  for (int64_t i = 0; i < nr; i++) y0[i] = y[i] = test_x(rb + i + 7);
  CHECK_OK(halo_spmv(plan, 1.5, x, -0.25, y));
  double err = verify_product_error(rows, 1.5, -0.25, y0, y, 1.0);
  CHECK_MSG(err == 0.0, "%s: product with beta off by %g", label, err);
  for (int64_t i = 0; i < nr; i++) y[i] = NAN; /* beta = 0: y is not read */
  CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y));
  err = verify_product_error(rows, 1.0, 0.0, y0, y, 1.0);
  CHECK_MSG(err == 0.0, "%s: product off by %g", label, err);

  /* two plans of one matrix in flight at once, ended in the other order */
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(cb + j);
  double *x2 = malloc((size_t)(nc + 1) * sizeof *x2);
  for (int64_t j = 0; j < nc; j++) x2[j] = -3.0 * test_x(cb + j);
  CHECK_OK(halo_exchange_begin(plan, x, g));
  CHECK_OK(halo_exchange_begin(plan2, x2, g2));
  CHECK_OK(halo_exchange_end(plan2));
  CHECK_OK(halo_exchange_end(plan));
  for (int64_t k = 0; k < n_ghost; k++) {
    CHECK(g[k] == test_x(ghost_ids[k]));
    CHECK(g2[k] == -3.0 * test_x(ghost_ids[k]));
  }
  free(x2);

  /* statistics: the standard exchange receives one message per owner */
  halo_stats st;
  CHECK_OK(halo_plan_stats(plan, &st));
  int64_t mine[2] = {verify_owner_count(ghost_ids, n_ghost, col_begin, P), n_ghost}, all[2], mx;
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(&mine[0], &mx, 1, MPI_INT64_T, MPI_MAX, comm);
  CHECK(st.ranks == P && st.n_phases == 1 && st.strategy == HALO_STRATEGY_STANDARD);
  verify_transport(plan, label);
  const halo_phase_stats p0 = verify_phase(plan, 0);
  CHECK(p0.scope == HALO_SCOPE_GLOBAL);
  CHECK_MSG(p0.messages == all[0], "%s: %lld messages, %lld owners", label, (long long)p0.messages,
            (long long)all[0]);
  CHECK(st.ghosts == all[1] && p0.bytes == 8 * all[1]);
  CHECK(p0.max_messages_per_rank <= p0.messages);
  CHECK(p0.max_bytes_per_rank <= p0.bytes);
  CHECK(p0.inter_node_messages <= p0.messages);
  if (st.nodes == 1) CHECK(p0.inter_node_messages == 0 && p0.inter_node_bytes == 0);
  CHECK(st.message_cap_used == 0 && st.setup_seconds >= 0.0);
  verify_phase_stats(plan, all[0], 8 * all[1], label);

  halo_plan_destroy(&plan2);
  halo_plan_destroy(&plan);
  CHECK(plan == NULL);
  halo_plan_destroy(&plan); /* double destroy is harmless */
  free(x), free(g), free(g2), free(y), free(y0);
}

/* Every node-aware strategy on virtual nodes of K ranks gives bit for bit the
 * ghosts and the product of the standard exchange. */
static inline void verify_strategies(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin,
                                     const int64_t *col_begin, int K, const char *label) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1], nr = re - rb;
  const int64_t cb = col_begin[rank], nc = col_begin[rank + 1] - cb;
  halo_matrix A = NULL;
  CHECK_OK(halo_matrix_create_csr(comm, rb, re, cb, col_begin[rank + 1], rows->row_ptr,
                                  rows->col_ids, rows->values, HALO_MEMORY_HOST, &A));
  int64_t ng;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  double *x = malloc((size_t)(nc + 1) * sizeof *x);
  double *g[HALO_N_STRATEGIES], *y[HALO_N_STRATEGIES];
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(cb + j);
  for (int t = 0; t < HALO_N_STRATEGIES; t++) {
    halo_plan_options o = halo_plan_options_default();
    o.strategy = (halo_strategy)t;
    o.ranks_per_node = K;
    o.message_cap = 16;
    halo_plan plan;
    CHECK_OK(halo_plan_create(A, &o, &plan));
    g[t] = malloc((size_t)(ng + 1) * sizeof(double));
    y[t] = malloc((size_t)(nr + 1) * sizeof(double));
    CHECK_OK(halo_exchange_begin(plan, x, g[t]));
    CHECK_OK(halo_exchange_end(plan));
    CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y[t]));
    if (t > 0)
      CHECK_MSG((ng == 0 || memcmp(g[t], g[0], (size_t)ng * sizeof(double)) == 0) &&
                    (nr == 0 || memcmp(y[t], y[0], (size_t)nr * sizeof(double)) == 0),
                "%s: %s on nodes of %d differs from standard", label,
                halo_strategy_name(o.strategy), K);
    halo_plan_destroy(&plan);
  }
  for (int t = 0; t < HALO_N_STRATEGIES; t++) free(g[t]), free(y[t]);
  free(x);
  halo_matrix_destroy(&A);
}

#endif
