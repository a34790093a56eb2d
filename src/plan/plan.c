/* Plan creation: topology, pattern, schedule of the chosen strategy,
 * cross-rank check of the schedule, executor, statistics. */
#include <string.h>

#include "plan/plan.h"

enum { TAG_HANDSHAKE = 2000 };

/* Build the schedule of a strategy: pure, no MPI. */
static halo_status build_schedule(halo_strategy strategy, const halo_pattern *p, halo_schedule *s) {
  switch (strategy) {
  case HALO_STRATEGY_STANDARD: return halo_build_standard(p, s);
  }
  return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown strategy %d", (int)strategy);
}

/* Every receiver tells each of its senders, per phase, its node and the count
 * it expects. The sender checks the count (and, for a node phase, that both
 * are on one node) and learns the node of each of its peers. Collective. */
static halo_status handshake(MPI_Comm comm, const halo_topology *t, const halo_schedule *s,
                             int *node_of_send[HALO_MAX_PHASES]) {
  halo_status st = HALO_SUCCESS;
  int n_req = 0, n_req_max = 0;
  int64_t *out = NULL, *in = NULL, n_out = 0, n_in = 0;
  MPI_Request *req = NULL;
  for (int k = 0; k < s->n_phases; k++) {
    n_out += s->phase[k].n_recv;
    n_in += s->phase[k].n_send;
    n_req_max += s->phase[k].n_recv + s->phase[k].n_send;
  }
  HALO_TRY(HALO_ALLOC(out, 2 * n_out));
  HALO_TRY(HALO_ALLOC(in, 2 * n_in));
  HALO_TRY(HALO_ALLOC(req, n_req_max));
  for (int k = 0, a = 0, b = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    HALO_TRY(HALO_ALLOC(node_of_send[k], ph->n_send));
    for (int i = 0; i < ph->n_recv; i++, a++) {
      out[2 * a] = t->node_id;
      out[2 * a + 1] = ph->recv[i].count;
      if (ph->recv[i].peer == s->rank) continue;
      HALO_TRY_MPI(MPI_Isend(&out[2 * a], 2, MPI_INT64_T, ph->recv[i].peer, TAG_HANDSHAKE + k, comm,
                             &req[n_req++]));
    }
    for (int i = 0; i < ph->n_send; i++, b++) {
      in[2 * b] = t->node_id;
      in[2 * b + 1] = ph->send[i].count;
      if (ph->send[i].peer == s->rank) continue;
      HALO_TRY_MPI(MPI_Irecv(&in[2 * b], 2, MPI_INT64_T, ph->send[i].peer, TAG_HANDSHAKE + k, comm,
                             &req[n_req++]));
    }
  }
  HALO_TRY_MPI(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE));
  for (int k = 0, b = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_send; i++, b++) {
      node_of_send[k][i] = (int)in[2 * b];
      if (in[2 * b + 1] != ph->send[i].count && st == HALO_SUCCESS)
        st = HALO_ERROR(HALO_ERR_INTERNAL,
                        "phase %d: this rank sends %lld values to rank %d, which expects %lld", k,
                        (long long)ph->send[i].count, ph->send[i].peer, (long long)in[2 * b + 1]);
      if (ph->scope == HALO_SCOPE_NODE && in[2 * b] != t->node_id && st == HALO_SUCCESS)
        st = HALO_ERROR(HALO_ERR_INTERNAL, "phase %d is node-local but rank %d is on another node",
                        k, ph->send[i].peer);
    }
  }
cleanup:
  halo_free(req);
  halo_free(in);
  halo_free(out);
  return st;
}

/* Statistics over all ranks. Collective. */
static halo_status compute_stats(halo_plan P, int *node_of_send[HALO_MAX_PHASES], double setup) {
  enum { NSUM = 4, NMAX = 4 };
  const halo_schedule *s = &P->sched;
  const int np = s->n_phases;
  int64_t sum_in[NSUM * HALO_MAX_PHASES + 1], sum_out[NSUM * HALO_MAX_PHASES + 1];
  int64_t node_in[2 * HALO_MAX_PHASES] = {0}, node_out[2 * HALO_MAX_PHASES] = {0};
  int64_t max_in[NMAX * HALO_MAX_PHASES] = {0}, max_out[NMAX * HALO_MAX_PHASES] = {0};
  for (int k = 0; k < np; k++) {
    halo_phase_counts c;
    halo_phase_count(&s->phase[k], s->rank, P->topo.node_id, node_of_send[k], &c);
    sum_in[NSUM * k + 0] = c.messages;
    sum_in[NSUM * k + 1] = c.bytes;
    sum_in[NSUM * k + 2] = c.inter_node_messages;
    sum_in[NSUM * k + 3] = c.inter_node_bytes;
    node_in[2 * k + 0] = c.inter_node_messages;
    node_in[2 * k + 1] = c.inter_node_bytes;
    max_in[NMAX * k + 0] = c.messages;
    max_in[NMAX * k + 1] = c.bytes;
  }
  sum_in[NSUM * np] = s->n_ghost;
  HALO_MPI(MPI_Allreduce(node_in, node_out, 2 * np, MPI_INT64_T, MPI_SUM, P->topo.node_comm));
  for (int k = 0; k < np; k++) {
    max_in[NMAX * k + 2] = node_out[2 * k + 0];
    max_in[NMAX * k + 3] = node_out[2 * k + 1];
  }
  HALO_MPI(MPI_Allreduce(sum_in, sum_out, NSUM * np + 1, MPI_INT64_T, MPI_SUM, P->comm));
  HALO_MPI(MPI_Allreduce(max_in, max_out, NMAX * np, MPI_INT64_T, MPI_MAX, P->comm));
  halo_stats *t = &P->stats;
  memset(t, 0, sizeof *t);
  t->strategy = s->strategy;
  HALO_MPI(MPI_Comm_size(P->comm, &t->ranks));
  t->nodes = P->topo.n_nodes;
  t->n_phases = np;
  t->message_cap_used = s->message_cap_used;
  t->ghosts = sum_out[NSUM * np];
  for (int k = 0; k < np; k++) {
    halo_phase_stats *f = &t->phase[k];
    f->scope = s->phase[k].scope;
    f->messages = sum_out[NSUM * k + 0];
    f->bytes = sum_out[NSUM * k + 1];
    f->inter_node_messages = sum_out[NSUM * k + 2];
    f->inter_node_bytes = sum_out[NSUM * k + 3];
    f->max_messages_per_rank = max_out[NMAX * k + 0];
    f->max_bytes_per_rank = max_out[NMAX * k + 1];
    f->max_inter_node_messages_per_node = max_out[NMAX * k + 2];
    f->max_inter_node_bytes_per_node = max_out[NMAX * k + 3];
  }
  HALO_MPI(MPI_Allreduce(&setup, &t->setup_seconds, 1, MPI_DOUBLE, MPI_MAX, P->comm));
  return HALO_SUCCESS;
}

static void plan_free(halo_plan P) {
  if (!P) return;
  halo_exec_destroy(&P->exec);
  halo_schedule_free(&P->sched);
  halo_pattern_free(&P->pattern);
  halo_topology_destroy(&P->topo);
  if (P->comm != MPI_COMM_NULL) MPI_Comm_free(&P->comm);
  halo_matrix_destroy(&P->A);
  halo_free(P);
}

halo_status halo_plan_create(halo_matrix A, const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_plan P = NULL;
  halo_plan_options o = opts ? *opts : halo_plan_options_default();
  int *node_of_send[HALO_MAX_PHASES] = {0};
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  double t0 = halo_wtime();
  if (!plan_p)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  else if (!halo_strategy_valid(o.strategy))
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown strategy %d", (int)o.strategy);
  if (st == HALO_SUCCESS) {
    P = halo_calloc(1, sizeof *P);
    if (!P)
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a plan");
    else
      P->comm = P->topo.node_comm = MPI_COMM_NULL;
  }
  HALO_TRY(halo_agree(A->comm, st));
  P->A = A;
  halo_matrix_retain(A);
  HALO_TRY_MPI(MPI_Comm_dup(A->comm, &P->comm));
  HALO_TRY(halo_topology_create(P->comm, &P->topo));
  HALO_TRY(halo_pattern_create(P->comm, A->col_ranges, A->ghost_ids, A->n_ghost, &P->pattern));
  st = build_schedule(o.strategy, &P->pattern, &P->sched);
  if (st == HALO_SUCCESS) st = halo_schedule_check(&P->sched);
  HALO_TRY(halo_agree(P->comm, st));
  st = handshake(P->comm, &P->topo, &P->sched, node_of_send);
  HALO_TRY(halo_agree(P->comm, st));
  st = halo_exec_create(&halo_exec_host_ops, &P->sched, P->comm, &P->topo, &P->exec);
  HALO_TRY(halo_agree(P->comm, st));
  HALO_TRY(compute_stats(P, node_of_send, halo_wtime() - t0));
  *plan_p = P;
  P = NULL;
cleanup:
  for (int k = 0; k < HALO_MAX_PHASES; k++) halo_free(node_of_send[k]);
  plan_free(P);
  return st;
}

halo_status halo_plan_stats(halo_plan plan, halo_stats *stats_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!stats_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "stats_p is NULL");
  *stats_p = plan->stats;
  return HALO_SUCCESS;
}

halo_status halo_plan_get_ghost(halo_plan plan, double **x_ghost_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!x_ghost_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_ghost_p is NULL");
  *x_ghost_p = plan->exec.ghost;
  return HALO_SUCCESS;
}

halo_status halo_exchange_begin(halo_plan plan, const double *x_local, double *x_ghost) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->in_flight)
    return HALO_ERROR(HALO_ERR_STATE, "an exchange of this plan is already in flight: call "
                                      "halo_exchange_end first");
  if (!x_local && plan->sched.n_local > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_local is NULL but this rank owns %lld entries",
                      (long long)plan->sched.n_local);
  HALO_CHECK(halo_exec_begin(&plan->exec, x_local));
  plan->in_flight = 1;
  plan->user_ghost = x_ghost == plan->exec.ghost ? NULL : x_ghost;
  return HALO_SUCCESS;
}

halo_status halo_exchange_end(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!plan->in_flight)
    return HALO_ERROR(HALO_ERR_STATE, "no exchange of this plan is in flight: call "
                                      "halo_exchange_begin first");
  plan->in_flight = 0;
  HALO_CHECK(halo_exec_end(&plan->exec));
  if (plan->user_ghost && plan->sched.n_ghost)
    memcpy(plan->user_ghost, plan->exec.ghost, (size_t)plan->sched.n_ghost * sizeof(double));
  plan->user_ghost = NULL;
  return HALO_SUCCESS;
}

void halo_plan_destroy(halo_plan *plan_p) {
  if (!plan_p || !*plan_p) return;
  if ((*plan_p)->in_flight) halo_exchange_end(*plan_p);
  plan_free(*plan_p);
  *plan_p = NULL;
}
