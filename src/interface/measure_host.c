/* The own pairs (NAME.*) of the host transports whose model has one (rma,
 * neighbor, ...: the registry's), for halo_params_measure() (measure.h):
 * halo's own exchange of one message each way between rank 0 and its nearest
 * partner, host memory, on the transport, at every size of the sweep that is
 * a multiple of 8 bytes; a fit of alpha and beta over all of them (as ipc.*
 * and nvshmem.*). */
#include "exec/transport.h"
#include "interface/measure.h"
#include "interface/plan.h"

/* Collective over c->comm: the steps of one size on the pair, as the device
 * messages are timed (measure_cuda.c), in host memory. */
static halo_status host_message(MPI_Comm pair, const halo_measure *c, const void *arg,
                                int64_t bytes, double *work, double *t_p) {
  const halo_transport_desc *tr = arg;
  halo_status st = HALO_SUCCESS;
  int rank;
  HALO_MPI(MPI_Comm_rank(pair, &rank));
  const int64_t m = bytes / 8, rb = rank * m;
  int64_t *ptr = NULL, *col = NULL;
  double *val = NULL, *x = NULL;
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  st = HALO_ALLOC(ptr, m + 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(col, 2 * m);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(val, 2 * m);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(x, m);
  if (st == HALO_SUCCESS) /* row i: the diagonal, and entry i of the other rank's part of x */
    for (int64_t i = 0; i < m; i++) {
      ptr[i] = 2 * i;
      col[2 * i] = rb + i, val[2 * i] = 2.0;
      col[2 * i + 1] = (1 - rank) * m + i, val[2 * i + 1] = -1.0;
    }
  if (st == HALO_SUCCESS) ptr[m] = 2 * m;
  HALO_TRY(halo_agree(pair, st));
  HALO_TRY(
      halo_matrix_create_csr(pair, rb, rb + m, rb, rb + m, ptr, col, val, HALO_MEMORY_HOST, &A));
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.transport = tr->id;
  HALO_TRY(halo_plan_build_matrix(A, &o, NULL, NULL, &plan));
  for (int it = -c->warmup; it < c->o.iterations; it++) {
    double v[2] = {0, 0}; /* the time, whether it failed */
    v[1] = MPI_Barrier(pair) != MPI_SUCCESS;
    const double t0 = MPI_Wtime();
    halo_status e = halo_exchange_begin(plan, x, NULL);
    if (e == HALO_SUCCESS) e = halo_exchange_end(plan);
    v[0] = MPI_Wtime() - t0;
    if (e != HALO_SUCCESS) {
      st = HALO_ERROR(e, "the %s exchange of %lld bytes failed: %s", tr->name, (long long)bytes,
                      halo_last_error());
      v[1] = 1;
    }
    HALO_TRY_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, pair));
    if (v[1] != 0) {
      if (st == HALO_SUCCESS)
        st = HALO_ERROR(HALO_ERR_MPI, "the %s exchange failed on the peer", tr->name);
      goto cleanup;
    }
    if (it >= 0) work[it] = v[0];
  }
  *t_p = halo_measure_median(work, c->o.iterations);
cleanup:
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  halo_free(x);
  halo_free(val);
  halo_free(col);
  halo_free(ptr);
  return st;
}

/* One transport's pair. */
static halo_status measure_one(halo_measure *c, const halo_transport_desc *tr) {
  char keys[48];
  snprintf(keys, sizeof keys, "%s.*", tr->name);
  int l = 0; /* rank 0's nearest partner */
  while (l < HALO_N_LOC && c->partner[l] < 0) l++;
  if (l == HALO_N_LOC) {
    halo_measure_from_base(c, keys, "one rank");
    return HALO_SUCCESS;
  }
  const int peer = c->partner[l];
  int64_t gs[HALO_MEASURE_MAX_SIZES];
  double gd[HALO_MEASURE_MAX_SIZES], t[HALO_MEASURE_MAX_SIZES];
  int ng = 0;
  for (int k = 0; k < c->n_sizes; k++)
    if (c->sizes[k] % 8 == 0) gs[ng] = c->sizes[k], gd[ng] = (double)c->sizes[k], ng++;
  HALO_CHECK(halo_measure_pair(c, peer, host_message, tr, gs, ng, t));
  char how[160];
  snprintf(how, sizeof how,
           "transport %s, host memory, one message each way between ranks 0 and %d (%s)", tr->name,
           peer, halo_measure_loc_names[l]);
  return halo_measure_fit_exchange(c, tr->name, how, gs, gd, t, ng, &c->res.params.own[tr->id],
                                   &c->res.params.have_own[tr->id]);
}

halo_status halo_measure_host_transports(halo_measure *c) {
  int n;
  const halo_transport_desc *const *tr = halo_transport_all(&n);
  for (int i = 0; i < n; i++)
    if (tr[i]->model.own_params && tr[i]->compiled &&
        halo_transport_serves(tr[i], HALO_MEMORY_HOST))
      HALO_CHECK(measure_one(c, tr[i]));
  return HALO_SUCCESS;
}
