/* Exchange-only plans, the reverse exchange, the transpose product, several
 * exchanges in flight and new values, checked against values computed here
 * from the raw rows alone:
 *   - plans from global ids, from (owner rank, local index) pairs and from
 *     explicit send and receive lists (unsorted, with repeated ghosts, ranks
 *     listed backwards) deliver x at every slot's id, for every strategy;
 *   - their reverse exchanges add every slot's contribution into its owner,
 *     against sums gathered here by owner (MPI_Alltoallv), the same bits on a
 *     second run, and the same bits from ids as from pairs;
 *   - the transpose product of the matrix's plan against A^T x gathered here;
 *   - a plan's own exchange and two handles in flight at once, a pool that
 *     runs out, handles given back and taken again;
 *   - new values of a matrix (CSR and split) without a new plan;
 *   - the errors of bad input, on every rank.
 * Arguments: Matrix Market files (a rectangular one gets an uneven layout of
 * x), added to the generated matrices. */
#include "verify.h"

typedef struct {
  int rank, P;
  MPI_Comm comm;
  const int64_t *ranges; /* of x: P+1 */
  int64_t cb, n;         /* this rank's entries of x */
} layout;

static int owner_of(const layout *L, int64_t id) {
  int o = 0;
  while (!(id >= L->ranges[o] && id < L->ranges[o + 1])) o++;
  return o;
}

/* A value a rank contributes through a slot naming id (iteration it). */
static double contrib(int rank, int64_t id, int it) {
  return test_x(31 * id + 7 * rank + it) * (rank + 1);
}

/* For each owned entry: the sum of (id, value) pairs sent here by every rank,
 * and the sum of their magnitudes, by an all-to-all by owner. */
static void owner_sums(const layout *L, int64_t n, const int64_t *id, const double *v, double *sum,
                       double *mag) {
  int *scount = calloc((size_t)(unsigned)L->P, sizeof(int)),
      *rcount = malloc((size_t)(unsigned)L->P * sizeof(int));
  int *sdisp = malloc((size_t)(unsigned)L->P * sizeof(int)),
      *rdisp = malloc((size_t)(unsigned)L->P * sizeof(int));
  for (int64_t k = 0; k < n; k++) scount[owner_of(L, id[k])] += 2;
  MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, L->comm);
  int st = 0, rt = 0;
  for (int r = 0; r < L->P; r++) sdisp[r] = st, rdisp[r] = rt, st += scount[r], rt += rcount[r];
  double *sbuf = malloc(((size_t)st + 1) * sizeof(double)),
         *rbuf = malloc(((size_t)rt + 1) * sizeof(double));
  int *fill = calloc((size_t)(unsigned)L->P, sizeof(int));
  for (int64_t k = 0; k < n; k++) {
    const int o = owner_of(L, id[k]);
    sbuf[sdisp[o] + fill[o]++] = (double)id[k];
    sbuf[sdisp[o] + fill[o]++] = v[k];
  }
  MPI_Alltoallv(sbuf, scount, sdisp, MPI_DOUBLE, rbuf, rcount, rdisp, MPI_DOUBLE, L->comm);
  for (int64_t j = 0; j < L->n; j++) sum[j] = mag[j] = 0.0;
  for (int t = 0; t < rt; t += 2) {
    const int64_t j = (int64_t)rbuf[t] - L->cb;
    CHECK(j >= 0 && j < L->n);
    sum[j] += rbuf[t + 1];
    mag[j] += fabs(rbuf[t + 1]);
  }
  free(fill), free(rbuf), free(sbuf), free(rdisp), free(sdisp), free(rcount), free(scount);
}

/* Forward: every slot gets x at its id; reverse: y0 + the contributions of
 * every slot of every rank naming it, the same bits twice. Returns the
 * reverse's result in out (n values). */
static void check_plan(const layout *L, halo_plan plan, int64_t n_slots, const int64_t *slot_id,
                       const char *label, double *out) {
  int64_t nl, ns;
  CHECK_OK(halo_plan_get_sizes(plan, &nl, &ns));
  CHECK_MSG(nl == L->n && ns == n_slots, "%s: sizes %lld, %lld", label, (long long)nl,
            (long long)ns);
  double *x = malloc((size_t)(L->n + 1) * sizeof *x), *g = malloc((size_t)(ns + 1) * sizeof *g);
  double *c = malloc((size_t)(ns + 1) * sizeof *c), *y = malloc((size_t)(L->n + 1) * sizeof *y);
  double *sum = malloc((size_t)(L->n + 1) * sizeof *sum),
         *mag = malloc((size_t)(L->n + 1) * sizeof *mag);
  for (int it = 1; it <= 2; it++) {
    for (int64_t j = 0; j < L->n; j++) x[j] = it * test_x(L->cb + j);
    for (int64_t k = 0; k < ns; k++) g[k] = NAN;
    double *own;
    CHECK_OK(halo_plan_get_ghost(plan, &own));
    CHECK_OK(halo_exchange_begin(plan, x, it == 1 ? g : NULL));
    CHECK_OK(halo_exchange_end(plan));
    const double *got = it == 1 ? g : own;
    for (int64_t k = 0; k < ns; k++)
      CHECK_MSG(got[k] == it * test_x(slot_id[k]), "%s: slot %lld (id %lld) is %g, not %g", label,
                (long long)k, (long long)slot_id[k], got[k], it * test_x(slot_id[k]));
  }
  /* Sources at more addresses than the executor keeps the requests of
   * (sends of consecutive entries go from the source itself), in turn. */
  enum { N_SRC = 6 };
  double *xs[N_SRC], *cs[N_SRC];
  for (int b = 0; b < N_SRC; b++) {
    xs[b] = malloc((size_t)(L->n + 1) * sizeof *xs[b]);
    cs[b] = malloc((size_t)(ns + 1) * sizeof *cs[b]);
  }
  /* and the ghosts into as many addresses (received there in place when
   * they are the plan's ghosts in order), on another cycle, with the
   * plan's own slots among them */
  for (int it = 0; it < 3 * N_SRC; it++) {
    double *xb = xs[it % N_SRC], *gb = it % 7 == 6 ? NULL : cs[(it * 5) % N_SRC], *own;
    for (int64_t j = 0; j < L->n; j++) xb[j] = (it + 3) * test_x(L->cb + j);
    CHECK_OK(halo_plan_get_ghost(plan, &own));
    for (int64_t k = 0; k < ns; k++) (gb ? gb : own)[k] = NAN;
    CHECK_OK(halo_exchange_begin(plan, xb, gb));
    CHECK_OK(halo_exchange_end(plan));
    const double *got = gb ? gb : own;
    for (int64_t k = 0; k < ns; k++)
      CHECK_MSG(got[k] == (it + 3) * test_x(slot_id[k]),
                "%s: source %d, ghosts %d: slot %lld is %g, not %g", label, it % N_SRC,
                gb ? (it * 5) % N_SRC : -1, (long long)k, got[k], (it + 3) * test_x(slot_id[k]));
  }
  for (int64_t k = 0; k < ns; k++) c[k] = contrib(L->rank, slot_id[k], 3);
  owner_sums(L, ns, slot_id, c, sum, mag);
  for (int run = 0; run < 2; run++) {
    for (int64_t j = 0; j < L->n; j++) y[j] = test_x(L->cb + j + 5);
    CHECK_OK(halo_exchange_reverse_begin(plan, c, y));
    CHECK_OK(halo_exchange_reverse_end(plan));
    for (int64_t j = 0; j < L->n; j++) {
      const double y0 = test_x(L->cb + j + 5), ref = y0 + sum[j];
      CHECK_MSG(fabs(y[j] - ref) <= 1e-13 * (fabs(y0) + mag[j]),
                "%s: reverse, entry %lld is %.17g, not %.17g", label, (long long)(L->cb + j), y[j],
                ref);
    }
    if (run == 0)
      memcpy(out, y, (size_t)L->n * sizeof *y);
    else
      CHECK_MSG(L->n == 0 || memcmp(out, y, (size_t)L->n * sizeof *y) == 0,
                "%s: two reverse exchanges gave different bits", label);
  }
  for (int it = 0; it < 2 * N_SRC; it++) { /* the contributions at several addresses */
    double *cb = cs[it % N_SRC];
    memcpy(cb, c, (size_t)ns * sizeof *c);
    for (int64_t j = 0; j < L->n; j++) y[j] = test_x(L->cb + j + 5);
    CHECK_OK(halo_exchange_reverse_begin(plan, cb, y));
    CHECK_OK(halo_exchange_reverse_end(plan));
    CHECK_MSG(L->n == 0 || memcmp(out, y, (size_t)L->n * sizeof *y) == 0,
              "%s: reverse from source %d gave other bits", label, it % N_SRC);
  }
  for (int b = 0; b < N_SRC; b++) free(xs[b]), free(cs[b]);
  free(mag), free(sum), free(y), free(c), free(g), free(x);
}

/* The ghost slots of the exchange-only plans: the matrix's ghost ids in an
 * order of this rank's own, every third one twice. */
static int64_t make_slots(const layout *L, int64_t n_ghost, const int64_t *ghost_ids,
                          int64_t **ids_p) {
  int64_t *ids = malloc((size_t)(2 * n_ghost + 1) * sizeof *ids), n = 0;
  for (int64_t k = 0; k < n_ghost; k++) {
    ids[n++] = ghost_ids[k];
    if (k % 3 == 0) ids[n++] = ghost_ids[k];
  }
  uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(L->rank + 1);
  for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates with a fixed seed per rank */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const int64_t j = (int64_t)(s % (uint64_t)(i + 1));
    const int64_t t = ids[i];
    ids[i] = ids[j], ids[j] = t;
  }
  *ids_p = ids;
  return n;
}

/* Explicit lists from slot ids: owners by decreasing rank, each owner's slots
 * in the order they come; the owners learn what to send (MPI_Alltoallv). The
 * slot ids are reordered into the lists' order (one block per owner). */
static halo_status plan_from_lists(const layout *L, int64_t n, int64_t *ids,
                                   const halo_plan_options *o, halo_plan *plan) {
  int *cnt = calloc((size_t)(unsigned)L->P, sizeof(int)),
      *rcnt = malloc((size_t)(unsigned)L->P * sizeof(int));
  int *sd = malloc((size_t)(unsigned)L->P * sizeof(int)),
      *rd = malloc((size_t)(unsigned)L->P * sizeof(int));
  int64_t *sorted = malloc((size_t)(n + 1) * sizeof *sorted);
  for (int64_t k = 0; k < n; k++) cnt[owner_of(L, ids[k])]++;
  int n_recv = 0, *recv_ranks = malloc((size_t)(unsigned)L->P * sizeof(int));
  int64_t *recv_starts = malloc(((size_t)(unsigned)L->P + 1) * sizeof(int64_t));
  recv_starts[0] = 0;
  for (int r = L->P - 1; r >= 0; r--)
    if (cnt[r]) {
      recv_ranks[n_recv] = r;
      recv_starts[n_recv + 1] = recv_starts[n_recv] + cnt[r];
      int64_t at = recv_starts[n_recv];
      for (int64_t k = 0; k < n; k++)
        if (owner_of(L, ids[k]) == r) sorted[at++] = ids[k];
      n_recv++;
    }
  memcpy(ids, sorted, (size_t)n * sizeof *ids);
  /* what each owner sends me: my ids from it, in my order */
  MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, L->comm);
  int st = 0, rt = 0;
  for (int r = 0; r < L->P; r++) sd[r] = st, rd[r] = rt, st += cnt[r], rt += rcnt[r];
  int64_t *sbuf = malloc(((size_t)st + 1) * sizeof *sbuf),
          *rbuf = malloc(((size_t)rt + 1) * sizeof *rbuf);
  for (int j = 0; j < n_recv; j++)
    memcpy(sbuf + sd[recv_ranks[j]], ids + recv_starts[j],
           (size_t)(recv_starts[j + 1] - recv_starts[j]) * sizeof *sbuf);
  MPI_Alltoallv(sbuf, cnt, sd, MPI_INT64_T, rbuf, rcnt, rd, MPI_INT64_T, L->comm);
  int n_send = 0, *send_ranks = malloc((size_t)(unsigned)L->P * sizeof(int));
  int64_t *send_starts = malloc(((size_t)(unsigned)L->P + 1) * sizeof(int64_t));
  send_starts[0] = 0;
  for (int r = L->P - 1; r >= 0; r--) /* also backwards */
    if (rcnt[r]) {
      send_ranks[n_send] = r;
      send_starts[n_send + 1] = send_starts[n_send] + rcnt[r];
      for (int t = 0; t < rcnt[r]; t++) rbuf[rd[r] + t] -= L->cb;
      n_send++;
    }
  int64_t *send_idx = malloc(((size_t)rt + 1) * sizeof *send_idx);
  for (int j = 0; j < n_send; j++)
    memcpy(send_idx + send_starts[j], rbuf + rd[send_ranks[j]],
           (size_t)rcnt[send_ranks[j]] * sizeof *send_idx);
  halo_status s = halo_plan_create_from_lists(L->comm, L->n, n_recv, recv_ranks, recv_starts,
                                              n_send, send_ranks, send_starts, send_idx, o, plan);
  free(send_idx), free(send_starts), free(send_ranks), free(rbuf), free(sbuf);
  free(recv_starts), free(recv_ranks), free(sorted), free(rd), free(sd), free(rcnt), free(cnt);
  return s;
}

/* y = alpha*A^T*x + beta*y0 against sums gathered by column owner. */
static void check_transpose(const layout *L, halo_plan plan, const halo_csr *rows, int64_t rb,
                            int64_t nr, const char *label) {
  double *x = malloc((size_t)(nr + 1) * sizeof *x), *y = malloc((size_t)(L->n + 1) * sizeof *y);
  double *y1 = malloc((size_t)(L->n + 1) * sizeof *y1),
         *sum = malloc((size_t)(L->n + 1) * sizeof *sum);
  double *mag = malloc((size_t)(L->n + 1) * sizeof *mag);
  const int64_t nnz = rows->row_ptr[nr];
  int64_t *col = malloc((size_t)(nnz + 1) * sizeof *col);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  const double alpha = 0.75, beta = -1.25;
  for (int64_t i = 0; i < nr; i++) x[i] = test_x(rb + i + 11);
  for (int64_t i = 0; i < nr; i++)
    for (int64_t k = rows->row_ptr[i]; k < rows->row_ptr[i + 1]; k++)
      col[k] = rows->col_ids[k], v[k] = alpha * rows->values[k] * x[i];
  owner_sums(L, nnz, col, v, sum, mag);
  for (int run = 0; run < 2; run++) {
    for (int64_t j = 0; j < L->n; j++) y[j] = test_x(L->cb + j + 3);
    CHECK_OK(halo_spmv_transpose(plan, alpha, x, beta, y));
    for (int64_t j = 0; j < L->n; j++) {
      const double y0 = beta * test_x(L->cb + j + 3), ref = y0 + sum[j];
      CHECK_MSG(fabs(y[j] - ref) <= 1e-13 * (fabs(y0) + mag[j]) + 1e-300,
                "%s: transpose, entry %lld is %.17g, not %.17g", label, (long long)(L->cb + j),
                y[j], ref);
    }
    if (run == 0)
      memcpy(y1, y, (size_t)L->n * sizeof *y);
    else
      CHECK_MSG(L->n == 0 || memcmp(y1, y, (size_t)L->n * sizeof *y) == 0,
                "%s: two transpose products gave different bits", label);
  }
  for (int64_t j = 0; j < L->n; j++) y[j] = NAN; /* beta = 0: y is not read */
  CHECK_OK(halo_spmv_transpose(plan, alpha, x, 0.0, y));
  for (int64_t j = 0; j < L->n; j++)
    CHECK_MSG(fabs(y[j] - sum[j]) <= 1e-13 * mag[j] + 1e-300, "%s: transpose with beta 0", label);
  free(v), free(col), free(mag), free(sum), free(y1), free(y), free(x);
}

/* A plan's own exchange and two handles in flight at once, ended out of
 * order; a third handle is refused; handles come back. */
static void check_handles(const layout *L, const int64_t *ranges, int64_t n_slots,
                          const int64_t *slot_id, const char *label) {
  halo_plan_options o = halo_plan_options_default();
  o.max_exchanges = 3;
  halo_plan plan;
  halo_exchange e1, e2, e3;
  CHECK_OK(halo_plan_create_from_ids(L->comm, ranges[L->rank], ranges[L->rank + 1], n_slots,
                                     slot_id, &o, &plan));
  CHECK_OK(halo_exchange_create(plan, &e1));
  CHECK_OK(halo_exchange_create(plan, &e2));
  CHECK_ERR(halo_exchange_create(plan, &e3), HALO_ERR_STATE, "raise the plan option max_exchanges");
  const int64_t n = L->n;
  double *x1 = malloc((size_t)(n + 1) * sizeof *x1), *x3 = malloc((size_t)(n + 1) * sizeof *x3);
  double *y = malloc((size_t)(n + 1) * sizeof *y), *g1 = malloc((size_t)(n_slots + 1) * sizeof *g1);
  double *c = malloc((size_t)(n_slots + 1) * sizeof *c),
         *g3 = malloc((size_t)(n_slots + 1) * sizeof *g3);
  double *sum = malloc((size_t)(n + 1) * sizeof *sum), *mag = malloc((size_t)(n + 1) * sizeof *mag);
  for (int64_t j = 0; j < n; j++)
    x1[j] = 2 * test_x(L->cb + j), x3[j] = -3 * test_x(L->cb + j), y[j] = 1.0;
  for (int64_t k = 0; k < n_slots; k++) c[k] = contrib(L->rank, slot_id[k], 9);
  owner_sums(L, n_slots, slot_id, c, sum, mag);
  CHECK_OK(halo_exchange_start(e1, x1, g1));
  CHECK_OK(halo_exchange_start_reverse(e2, c, y));
  CHECK_OK(halo_exchange_begin(plan, x3, g3));
  CHECK_ERR(halo_exchange_start(e1, x1, g1), HALO_ERR_STATE, "already in flight");
  CHECK_OK(halo_exchange_wait(e2));
  CHECK_OK(halo_exchange_end(plan));
  CHECK_OK(halo_exchange_wait(e1));
  CHECK_ERR(halo_exchange_wait(e1), HALO_ERR_STATE, "not in flight");
  for (int64_t k = 0; k < n_slots; k++)
    CHECK_MSG(g1[k] == 2 * test_x(slot_id[k]) && g3[k] == -3 * test_x(slot_id[k]),
              "%s: handles, slot %lld", label, (long long)k);
  for (int64_t j = 0; j < n; j++)
    CHECK_MSG(fabs(y[j] - (1.0 + sum[j])) <= 1e-13 * (1.0 + mag[j]), "%s: handle's reverse", label);
  /* the handle's own ghost buffer, and a handle given back and taken again */
  double *own;
  CHECK_OK(halo_exchange_get_ghost(e2, &own));
  CHECK_OK(halo_exchange_start(e2, x1, NULL));
  CHECK_OK(halo_exchange_wait(e2));
  for (int64_t k = 0; k < n_slots; k++) CHECK(own[k] == 2 * test_x(slot_id[k]));
  halo_exchange_destroy(&e1);
  CHECK(e1 == NULL);
  halo_exchange_destroy(&e1); /* NULL-safe */
  CHECK_OK(halo_exchange_create(plan, &e3));
  CHECK_OK(halo_exchange_start(e3, x3, g1));
  halo_exchange_destroy(&e3); /* completes it */
  for (int64_t k = 0; k < n_slots; k++) CHECK(g1[k] == -3 * test_x(slot_id[k]));
  halo_exchange_destroy(&e2);
  halo_plan_destroy(&plan);
  free(mag), free(sum), free(g3), free(c), free(g1), free(y), free(x3), free(x1);
}

/* New values: y with 2A is 2y, bit for bit (a power of two); a split matrix
 * takes its blocks' values. */
static void check_new_values(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin,
                             const int64_t *col_begin, const char *label) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int64_t rb = row_begin[rank], nr = row_begin[rank + 1] - rb, cb = col_begin[rank];
  const int64_t ce = col_begin[rank + 1], nc = ce - cb, nnz = rows->row_ptr[nr];
  halo_matrix A;
  halo_plan plan;
  CHECK_OK(halo_matrix_create_csr(comm, rb, rb + nr, cb, ce, rows->row_ptr, rows->col_ids,
                                  rows->values, HALO_MEMORY_HOST, &A));
  CHECK_OK(halo_plan_create(A, NULL, &plan));
  verify_transport(plan, label);
  double *x = malloc((size_t)(nc + 1) * sizeof *x), *y1 = malloc((size_t)(nr + 1) * sizeof *y1);
  double *y2 = malloc((size_t)(nr + 1) * sizeof *y2), *v = malloc((size_t)(nnz + 1) * sizeof *v);
  for (int64_t j = 0; j < nc; j++) x[j] = test_x(cb + j);
  CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y1));
  for (int64_t k = 0; k < nnz; k++) v[k] = 2.0 * rows->values[k];
  CHECK_OK(halo_matrix_set_values(A, v));
  CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y2));
  for (int64_t i = 0; i < nr; i++)
    CHECK_MSG(y2[i] == 2.0 * y1[i], "%s: new values, row %lld", label, (long long)(rb + i));
  CHECK_ERR(halo_matrix_set_values_split(A, v, v), HALO_ERR_STATE, "halo_matrix_set_values");
  /* the same matrix as a split: diagonal columns local, the others by ghost */
  const int64_t *ghost;
  int64_t ng;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(A, &ghost));
  int64_t *dp = calloc((size_t)(nr + 1), sizeof *dp), *op = calloc((size_t)(nr + 1), sizeof *op);
  int64_t *dc = malloc((size_t)(nnz + 1) * sizeof *dc),
          *oc = malloc((size_t)(nnz + 1) * sizeof *oc);
  double *dv = malloc((size_t)(nnz + 1) * sizeof *dv), *ov = malloc((size_t)(nnz + 1) * sizeof *ov);
  int64_t d = 0, o = 0;
  for (int64_t i = 0; i < nr; i++) {
    for (int64_t k = rows->row_ptr[i]; k < rows->row_ptr[i + 1]; k++) {
      const int64_t c = rows->col_ids[k];
      if (c >= cb && c < ce) {
        dc[d] = c - cb, dv[d++] = rows->values[k];
      } else {
        int64_t g = 0;
        while (ghost[g] != c) g++;
        oc[o] = g, ov[o++] = rows->values[k];
      }
    }
    dp[i + 1] = d, op[i + 1] = o;
  }
  halo_matrix S;
  halo_plan ps;
  CHECK_OK(halo_matrix_create_split(comm, rb, rb + nr, cb, ce, dp, dc, dv, op, oc, ov, ng, ghost,
                                    HALO_MEMORY_HOST, &S));
  CHECK_OK(halo_plan_create(S, NULL, &ps));
  for (int64_t k = 0; k < d; k++) dv[k] *= 2.0;
  for (int64_t k = 0; k < o; k++) ov[k] *= 2.0;
  CHECK_OK(halo_matrix_set_values_split(S, dv, ov));
  CHECK_OK(halo_spmv(ps, 1.0, x, 0.0, y2));
  for (int64_t i = 0; i < nr; i++)
    CHECK_MSG(fabs(y2[i] - 2.0 * y1[i]) <= 1e-13 * fabs(y1[i]) + 1e-300, "%s: split, new values",
              label);
  CHECK_ERR(halo_matrix_set_values(S, v), HALO_ERR_STATE, "halo_matrix_set_values_split");
  halo_plan_destroy(&ps);
  halo_matrix_destroy(&S);
  free(ov), free(dv), free(oc), free(dc), free(op), free(dp);
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  free(v), free(y2), free(y1), free(x);
}

static void run(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin, const char *label) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  int64_t *col_begin = malloc((size_t)(P + 1) * sizeof *col_begin);
  if (rows->n_rows == rows->n_cols) {
    memcpy(col_begin, row_begin, (size_t)(P + 1) * sizeof *col_begin);
  } else { /* rank 0 owns no entries of x, the last the most */
    for (int r = 0; r <= P; r++)
      col_begin[r] = (int64_t)((double)rows->n_cols * r * r / ((double)P * P));
    col_begin[P] = rows->n_cols;
  }
  const int64_t rb = row_begin[rank], nr = row_begin[rank + 1] - rb;
  layout L = {rank, P, comm, col_begin, col_begin[rank], col_begin[rank + 1] - col_begin[rank]};
  halo_matrix A;
  CHECK_OK(halo_matrix_create_csr(comm, rb, rb + nr, L.cb, L.cb + L.n, rows->row_ptr, rows->col_ids,
                                  rows->values, HALO_MEMORY_HOST, &A));
  int64_t n_ghost, *slots;
  const int64_t *ghost_ids;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &n_ghost));
  CHECK_OK(halo_matrix_get_ghost_ids(A, &ghost_ids));
  const int64_t n_slots = make_slots(&L, n_ghost, ghost_ids, &slots);
  int *owners = malloc((size_t)(n_slots + 1) * sizeof *owners);
  int64_t *idx = malloc((size_t)(n_slots + 1) * sizeof *idx);
  for (int64_t k = 0; k < n_slots; k++)
    owners[k] = owner_of(&L, slots[k]), idx[k] = slots[k] - col_begin[owners[k]];
  double *r_std = malloc((size_t)(L.n + 1) * sizeof *r_std),
         *r = malloc((size_t)(L.n + 1) * sizeof *r);
  double *r2 = malloc((size_t)(L.n + 1) * sizeof *r2);
  const struct {
    halo_strategy s;
    int K;
  } cases[] = {{HALO_STRATEGY_STANDARD, 0},
               {HALO_STRATEGY_2STEP, 2},
               {HALO_STRATEGY_3STEP, 2},
               {HALO_STRATEGY_SPLIT, 2},
               {HALO_STRATEGY_SPLIT, 3}};
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
    halo_plan_options o = halo_plan_options_default();
    o.strategy = cases[c].s;
    o.ranks_per_node = cases[c].K;
    o.message_cap = 24;
    char lab[600];
    halo_plan pm, pi, pp, pl;
    /* the matrix's plan: ghosts in id order, each once */
    snprintf(lab, sizeof lab, "%s, %s on nodes of %d, matrix", label,
             halo_strategy_name(o.strategy), cases[c].K);
    CHECK_OK(halo_plan_create(A, &o, &pm));
    check_plan(&L, pm, n_ghost, ghost_ids, lab, r);
    check_transpose(&L, pm, rows, rb, nr, lab);
    halo_plan_destroy(&pm);
    /* the same ghosts as slots in any order, repeated: ids, pairs, lists */
    snprintf(lab, sizeof lab, "%s, %s on nodes of %d, ids", label, halo_strategy_name(o.strategy),
             cases[c].K);
    CHECK_OK(halo_plan_create_from_ids(comm, L.cb, L.cb + L.n, n_slots, slots, &o, &pi));
    check_plan(&L, pi, n_slots, slots, lab, r);
    halo_plan_destroy(&pi);
    snprintf(lab, sizeof lab, "%s, %s on nodes of %d, pairs", label, halo_strategy_name(o.strategy),
             cases[c].K);
    CHECK_OK(halo_plan_create_from_pairs(comm, L.n, n_slots, owners, idx, &o, &pp));
    check_plan(&L, pp, n_slots, slots, lab, r2);
    CHECK_MSG(L.n == 0 || memcmp(r, r2, (size_t)L.n * sizeof *r) == 0,
              "%s: the reverse of pairs differs from the reverse of ids", lab);
    halo_plan_destroy(&pp);
    if (c == 0) memcpy(r_std, r, (size_t)L.n * sizeof *r);
    int64_t *lslots = malloc((size_t)(n_slots + 1) * sizeof *lslots);
    memcpy(lslots, slots, (size_t)n_slots * sizeof *lslots);
    snprintf(lab, sizeof lab, "%s, %s on nodes of %d, lists", label, halo_strategy_name(o.strategy),
             cases[c].K);
    CHECK_OK(plan_from_lists(&L, n_slots, lslots, &o, &pl));
    check_plan(&L, pl, n_slots, lslots, lab, r2);
    halo_plan_destroy(&pl);
    free(lslots);
  }
  check_handles(&L, col_begin, n_slots, slots, label);
  check_new_values(comm, rows, row_begin, col_begin, label);

  /* bad input, on every rank: a plan without a matrix has no product; a plan
   * without reverse has no reverse exchange */
  halo_plan p;
  halo_plan_options o = halo_plan_options_default();
  o.reverse = 0;
  CHECK_OK(halo_plan_create_from_ids(comm, L.cb, L.cb + L.n, n_slots, slots, &o, &p));
  double dummy[1];
  CHECK_ERR(halo_spmv(p, 1.0, dummy, 0.0, dummy), HALO_ERR_INVALID_ARG, "exchange-only plan");
  CHECK_ERR(halo_exchange_reverse_begin(p, NULL, dummy), HALO_ERR_STATE, "reverse = 0");
  halo_plan_destroy(&p);
  if (P > 1) {
    const int last = P - 1;
    if (col_begin[P] > col_begin[last]) { /* the last rank names an entry of its own: the
                                             plan copies it (test_units checks the values) */
      const int64_t own = col_begin[last];
      CHECK_OK(
          halo_plan_create_from_ids(comm, L.cb, L.cb + L.n, rank == last ? 1 : 0, &own, NULL, &p));
      halo_plan_destroy(&p);
    }
    int zero = 0;
    /* lists that do not match: rank 0 expects an entry of rank 1, which sends none */
    const int one = 1;
    const int64_t starts[2] = {0, 1};
    CHECK_ERR(halo_plan_create_from_lists(comm, 1, rank == 0 ? 1 : 0, &one, starts, 0, &zero,
                                          starts, NULL, NULL, &p),
              HALO_ERR_INCONSISTENT,
              "rank 0: the send and receive lists do not match across ranks: rank 0 expects 1 "
              "values from rank 1, whose send list has 0 for it");
    /* the same peers, other counts: rank 1 sends 2 entries to rank 0, which expects 1 */
    const int zero_rank = 0;
    const int64_t idx2[2] = {0, 0}, two[2] = {0, 2};
    CHECK_ERR(halo_plan_create_from_lists(comm, 1, rank == 0 ? 1 : 0, &one, starts,
                                          rank == 1 ? 1 : 0, &zero_rank, two, idx2, NULL, &p),
              HALO_ERR_INCONSISTENT,
              "rank 0: the send and receive lists do not match across ranks: rank 0 expects 1 "
              "values from rank 1, whose send list has 2 for it");
  }
  free(r2), free(r), free(r_std), free(idx), free(owners), free(slots);
  halo_matrix_destroy(&A);
  free(col_begin);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const char *gens[] = {"lap3d27:4", "irregular:300,3"};
  for (int i = 0; i < (int)(sizeof gens / sizeof gens[0]); i++) {
    halo_gen g;
    halo_csr local;
    int64_t *row_begin;
    CHECK_OK(halo_gen_parse(gens[i], &g));
    CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &row_begin, &local));
    run(comm, &local, row_begin, gens[i]);
    halo_csr_free(&local);
    halo_io_free(row_begin);
  }
  for (int a = 1; a < argc; a++) {
    halo_csr local;
    int64_t *row_begin;
    CHECK_OK(halo_mm_read_distributed(comm, 0, argv[a], NULL, HALO_PARTITION_NNZ, NULL, &row_begin,
                                      &local, NULL));
    run(comm, &local, row_begin, argv[a]);
    halo_csr_free(&local);
    halo_io_free(row_begin);
  }
  MPI_Finalize();
  return 0;
}
