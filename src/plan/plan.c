/* Plan creation: topology, pattern, schedule of the chosen strategy,
 * cross-rank check of the schedule, executor, statistics. */
#include <string.h>

#include <errno.h>
#include <stdlib.h>

#include "plan/nodeaware.h"
#include "plan/plan.h"

enum { TAG_HANDSHAKE = 2000 };

/* Options checked on this rank; ranks_per_node resolved from the
 * environment (HALO_RANKS_PER_NODE) when the option leaves it at 0. */
static halo_status resolve_options(const halo_plan_options *opts, halo_plan_options *o) {
  *o = opts ? *opts : halo_plan_options_default();
  if (!halo_strategy_valid(o->strategy))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown strategy %d", (int)o->strategy);
  if (o->ranks_per_node < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "ranks_per_node = %d: must be 0 (nodes of MPI) or positive",
                      o->ranks_per_node);
  if (o->message_cap < (int64_t)sizeof(double) || o->message_cap > (INT64_C(1) << 40))
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "message_cap = %lld bytes: must be between 8 (one value) and 2^40",
                      (long long)o->message_cap);
  if (o->memory != HALO_MEMORY_AUTO && o->memory != HALO_MEMORY_HOST &&
      o->memory != HALO_MEMORY_DEVICE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown memory kind %d", (int)o->memory);
  if ((int)o->transport < 0 || (int)o->transport >= HALO_N_TRANSPORTS)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport %d", (int)o->transport);
  if (o->device_id < -1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "device_id = %d: -1 (choose) or a device number",
                      o->device_id);
  if (o->autotune < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "autotune = %d: 0 (choose by the model) or the "
                      "number of timed exchanges per candidate",
                      o->autotune);
  if (o->remove_duplicates != 0 && o->remove_duplicates != 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "remove_duplicates = %d: must be 0 or 1",
                      o->remove_duplicates);
  if (o->ranks_per_node == 0) {
    const char *env = getenv("HALO_RANKS_PER_NODE");
    if (env && *env) {
      char *end;
      errno = 0;
      long k = strtol(env, &end, 10);
      if (errno || *end != '\0' || k < 1 || k > INT32_MAX)
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "HALO_RANKS_PER_NODE='%s' is not a positive number of ranks", env);
      o->ranks_per_node = (int)k;
    }
  }
  return HALO_SUCCESS;
}

/* Every rank must plan with the same options. Collective. */
static halo_status check_same_options(MPI_Comm comm, const halo_plan_options *o) {
  const char *names[] = {"strategy", "ranks_per_node", "message_cap", "remove_duplicates",
                         "memory",   "transport",      "autotune"};
  int64_t v[7] = {o->strategy, o->ranks_per_node, o->message_cap, o->remove_duplicates,
                  o->memory,   o->transport,      o->autotune};
  int64_t lo[7], hi[7];
  HALO_MPI(MPI_Allreduce(v, lo, 7, MPI_INT64_T, MPI_MIN, comm));
  HALO_MPI(MPI_Allreduce(v, hi, 7, MPI_INT64_T, MPI_MAX, comm));
  for (int i = 0; i < 7; i++)
    if (lo[i] != hi[i])
      return HALO_ERROR(HALO_ERR_INCONSISTENT,
                        "plan options differ across ranks: %s is %lld on some ranks and %lld on "
                        "others",
                        names[i], (long long)lo[i], (long long)hi[i]);
  return HALO_SUCCESS;
}

/* Every receiver tells each of its senders, per message, the phase, its
 * node, the count it expects and the message's ordinal among those between
 * the two ranks, with a sparse data exchange (NBX), so that a sender whose
 * schedule disagrees with its peer's finds out instead of waiting. The sender
 * checks every message (and that a node phase stays on one node) and learns
 * the node of each of its peers. Collective. */
typedef struct {
  int64_t phase, source, ordinal, node, count;
} hs_record;

static int cmp_hs(const void *a, const void *b) {
  const hs_record *x = a, *y = b;
  if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
  if (x->source != y->source) return (x->source > y->source) - (x->source < y->source);
  return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

static halo_status handshake(MPI_Comm comm, const halo_topology *t, const halo_schedule *s,
                             int *node_of_send[HALO_MAX_PHASES]) {
  halo_status st = HALO_SUCCESS;
  int n_out = 0, n_in = 0, cap_in = 0;
  hs_record *out = NULL, *in = NULL;
  MPI_Request *req = NULL, barrier = MPI_REQUEST_NULL;
  for (int k = 0; k < s->n_phases; k++) n_out += s->phase[k].n_recv;
  HALO_TRY(HALO_ALLOC(out, n_out));
  HALO_TRY(HALO_ALLOC(req, n_out));
  n_out = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_recv; i++) {
      if (ph->recv[i].peer == s->rank) continue;
      int ord = 0; /* position among the receives from the same peer */
      for (int j = 0; j < i; j++) ord += ph->recv[j].peer == ph->recv[i].peer;
      out[n_out] = (hs_record){k, s->rank, ord, t->node_id, ph->recv[i].count};
      HALO_TRY_MPI(MPI_Issend(&out[n_out], 5, MPI_INT64_T, ph->recv[i].peer, TAG_HANDSHAKE, comm,
                              &req[n_out]));
      n_out++;
    }
  }
  for (int done = 0, in_barrier = 0; !done;) {
    int flag = 0;
    MPI_Status status;
    HALO_TRY_MPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG_HANDSHAKE, comm, &flag, &status));
    if (flag) {
      if (n_in == cap_in) {
        int cap = cap_in ? 2 * cap_in : 16;
        hs_record *q = halo_realloc(in, (size_t)cap * sizeof *in);
        if (!q) HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory checking the schedule");
        in = q;
        cap_in = cap;
      }
      HALO_TRY_MPI(MPI_Recv(&in[n_in++], 5, MPI_INT64_T, status.MPI_SOURCE, TAG_HANDSHAKE, comm,
                            MPI_STATUS_IGNORE));
    }
    if (!in_barrier) {
      int all = 0;
      HALO_TRY_MPI(MPI_Testall(n_out, req, &all, MPI_STATUSES_IGNORE));
      if (all) {
        HALO_TRY_MPI(MPI_Ibarrier(comm, &barrier));
        in_barrier = 1;
      }
    } else {
      HALO_TRY_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
    }
  }
  if (n_in > 1) qsort(in, (size_t)n_in, sizeof *in, cmp_hs);
  int matched = 0;
  for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
    const halo_phase *ph = &s->phase[k];
    HALO_TRY(HALO_ALLOC(node_of_send[k], ph->n_send));
    for (int i = 0; i < ph->n_send && st == HALO_SUCCESS; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank) {
        node_of_send[k][i] = t->node_id;
        continue;
      }
      int ord = 0;
      for (int j = 0; j < i; j++) ord += ph->send[j].peer == m->peer;
      hs_record key = {k, m->peer, ord, 0, 0};
      hs_record *r = n_in ? bsearch(&key, in, (size_t)n_in, sizeof *in, cmp_hs) : NULL;
      if (!r)
        st = HALO_ERROR(HALO_ERR_INTERNAL,
                        "phase %d: this rank sends %lld values to rank %d, which expects no such "
                        "message",
                        k, (long long)m->count, m->peer);
      else if (r->count != m->count)
        st = HALO_ERROR(HALO_ERR_INTERNAL,
                        "phase %d: this rank sends %lld values to rank %d, which expects %lld", k,
                        (long long)m->count, m->peer, (long long)r->count);
      else if (ph->scope == HALO_SCOPE_NODE && r->node != t->node_id)
        st = HALO_ERROR(HALO_ERR_INTERNAL, "phase %d is node-local but rank %d is on another node",
                        k, m->peer);
      else {
        node_of_send[k][i] = (int)r->node;
        matched++;
      }
    }
  }
  if (st == HALO_SUCCESS && matched != n_in)
    st = HALO_ERROR(HALO_ERR_INTERNAL,
                    "%d messages expected from this rank are not in its schedule", n_in - matched);
cleanup:
  halo_free(in);
  halo_free(req);
  halo_free(out);
  return st;
}

/* Statistics over all ranks. Collective. */
static halo_status compute_stats(halo_plan P, int *node_of_send[HALO_MAX_PHASES], double setup) {
  enum { NSUM = 4, NMAX = 5 };
  const halo_schedule *s = &P->sched;
  const int np = s->n_phases;
  int64_t sum_in[NSUM * HALO_MAX_PHASES + 1] = {0}, sum_out[NSUM * HALO_MAX_PHASES + 1] = {0};
  int64_t node_in[2 * HALO_MAX_PHASES] = {0}, node_out[2 * HALO_MAX_PHASES] = {0};
  int64_t max_in[NMAX * HALO_MAX_PHASES + 1] = {0}, max_out[NMAX * HALO_MAX_PHASES + 1] = {0};
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
    max_in[NMAX * k + 4] = c.max_message_bytes;
  }
  sum_in[NSUM * np] = s->n_ghost;
  max_in[NMAX * np] = s->message_cap_used;
  HALO_MPI(MPI_Allreduce(node_in, node_out, 2 * np, MPI_INT64_T, MPI_SUM, P->topo.node_comm));
  for (int k = 0; k < np; k++) {
    max_in[NMAX * k + 2] = node_out[2 * k + 0];
    max_in[NMAX * k + 3] = node_out[2 * k + 1];
  }
  HALO_MPI(MPI_Allreduce(sum_in, sum_out, NSUM * np + 1, MPI_INT64_T, MPI_SUM, P->comm));
  HALO_MPI(MPI_Allreduce(max_in, max_out, NMAX * np + 1, MPI_INT64_T, MPI_MAX, P->comm));
  halo_stats *t = &P->stats;
  memset(t, 0, sizeof *t);
  t->strategy = s->strategy;
  HALO_MPI(MPI_Comm_size(P->comm, &t->ranks));
  t->nodes = P->topo.n_nodes;
  t->ranks_per_node = P->topo.max_node_size;
  t->remove_duplicates = P->remove_duplicates;
  t->n_phases = np;
  t->message_cap_used = max_out[NMAX * np];
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
    f->max_message_bytes = max_out[NMAX * k + 4];
    f->transport = P->transport;
  }
  HALO_MPI(MPI_Allreduce(&setup, &t->setup_seconds, 1, MPI_DOUBLE, MPI_MAX, P->comm));
  return HALO_SUCCESS;
}

static void plan_free(halo_plan P) {
  if (!P) return;
  halo_gpu_spmv_destroy(&P->gsp);
  halo_exec_destroy(&P->exec);
  halo_gpu_destroy(&P->gpu);
  halo_schedule_free(&P->sched);
  halo_pattern_free(&P->pattern);
  halo_topology_destroy(&P->topo);
  if (P->comm != MPI_COMM_NULL) MPI_Comm_free(&P->comm);
  halo_matrix_destroy(&P->A);
  halo_free(P);
}

/* The schedule of strategy o->strategy (never AUTO), checked on every rank.
 * Collective. */
static halo_status build_schedule(halo_plan P, const halo_plan_options *o, halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  memset(s, 0, sizeof *s);
  if (halo_strategy_node_aware(o->strategy))
    HALO_CHECK(halo_schedule_build_nodeaware(P->comm, &P->topo, &P->pattern, P->A->ghost_ids,
                                             P->A->col_ranges, o, s));
  else
    st = halo_schedule_build_standard(&P->pattern, s);
  if (st == HALO_SUCCESS) st = halo_schedule_check(s);
  st = halo_agree(P->comm, st);
  if (st != HALO_SUCCESS) halo_schedule_free(s);
  return st;
}

static int plan_is_helper(halo_plan P) {
  return P->A->col_end == P->A->col_begin && P->A->n_ghost == 0;
}

/* Time n exchanges of a plan of candidate c: the mean per exchange, the
 * largest over ranks. Collective. */
static halo_status time_candidate(halo_plan P, const halo_plan_options *o, double *x, int n,
                                  halo_candidate *c) {
  halo_status st = HALO_SUCCESS;
  halo_plan_options co = *o;
  halo_plan sub = NULL;
  co.strategy = c->strategy, co.transport = c->transport, co.message_cap = c->message_cap;
  co.autotune = 0;
  HALO_CHECK(halo_plan_create(P->A, &co, &sub));
  for (int i = 0; i < 2 && st == HALO_SUCCESS; i++) { /* warm-up */
    st = halo_exchange_begin(sub, x, NULL);
    if (st == HALO_SUCCESS) st = halo_exchange_end(sub);
  }
  if (st == HALO_SUCCESS) st = halo_plan_synchronize(sub);
  HALO_TRY(halo_agree(P->comm, st));
  HALO_TRY_MPI(MPI_Barrier(P->comm));
  double t0 = halo_wtime();
  for (int i = 0; i < n && st == HALO_SUCCESS; i++) {
    st = halo_exchange_begin(sub, x, NULL);
    if (st == HALO_SUCCESS) st = halo_exchange_end(sub);
    if (st == HALO_SUCCESS) st = halo_plan_synchronize(sub);
  }
  double t = (halo_wtime() - t0) / n;
  HALO_TRY(halo_agree(P->comm, st));
  HALO_TRY_MPI(MPI_Allreduce(&t, &c->seconds, 1, MPI_DOUBLE, MPI_MAX, P->comm));
cleanup:
  halo_plan_destroy(&sub);
  return st;
}

/* Strategy AUTO: every strategy on every transport the plan may use (a
 * device plan with transport AUTO: staged, ipc, and nccl and mpi-device
 * where they serve), Split with several message_caps; the lowest modeled
 * time wins, or with autotune the fastest timed. Sets o->strategy and
 * o->message_cap, and a deferred transport. Collective. */
static halo_status choose_plan(halo_plan P, halo_plan_options *o, int transport_deferred) {
  halo_status st = HALO_SUCCESS;
  halo_params prm;
  halo_choice *ch = &P->choice;
  halo_model_rank *ranks = NULL;
  double *x = NULL;
  int size;
  const int device = P->memory == HALO_MEMORY_DEVICE;
  const int rpg = device ? halo_gpu_ranks_per_gpu(P->gpu) : 1;
  HALO_TRY_MPI(MPI_Comm_size(P->comm, &size));
  st = halo_choose_params(o->params, &prm);
  HALO_TRY(halo_agree(P->comm, st));
  ch->how = o->autotune > 0 ? 2 : 1;
  snprintf(ch->params, sizeof ch->params, "%s", prm.name);
  halo_transport tr[4];
  int n_tr = 0;
  if (transport_deferred) {
    tr[n_tr++] = HALO_TRANSPORT_STAGED;
    tr[n_tr++] = HALO_TRANSPORT_IPC;
    if (HALO_HAVE_NCCL && rpg == 1) tr[n_tr++] = HALO_TRANSPORT_NCCL;
    if (halo_gpu_mpi_device_aware(P->gpu)) tr[n_tr++] = HALO_TRANSPORT_MPI_DEVICE;
  } else {
    tr[n_tr++] = P->transport;
  }
  int64_t caps[5];
  const int n_caps = halo_choose_caps(o->message_cap, caps);
  if (o->autotune > 0) {
    const int64_t n_x = P->A->col_end - P->A->col_begin;
    if (device)
      HALO_TRY(halo_dev_malloc((void **)&x, (size_t)n_x * sizeof *x));
    else
      HALO_TRY(HALO_CALLOC(x, n_x));
  }
  HALO_TRY(HALO_ALLOC(ranks, size));
  ch->n = 0;
  for (int a = 0; a < n_tr; a++) {
    HALO_TRY(
        halo_choose_ranks(P->comm, &P->topo, &prm, device, plan_is_helper(P), rpg, tr[a], ranks));
    for (int sg = 0; sg < HALO_N_STRATEGIES; sg++)
      for (int b = 0; b < (sg == HALO_STRATEGY_SPLIT ? n_caps : 1); b++) {
        if (ch->n == HALO_MAX_CANDIDATES) HALO_FAIL(HALO_ERR_INTERNAL, "too many candidates");
        halo_candidate *c = &ch->c[ch->n++];
        *c = (halo_candidate){(halo_strategy)sg, tr[a], caps[b], 0.0};
        if (o->autotune > 0) {
          HALO_TRY(time_candidate(P, o, x, o->autotune, c));
          continue;
        }
        halo_plan_options co = *o;
        halo_schedule s;
        double phase[HALO_MAX_PHASES];
        co.strategy = c->strategy, co.message_cap = c->message_cap;
        HALO_TRY(build_schedule(P, &co, &s));
        st = halo_choose_model(P->comm, &P->topo, &prm, tr[a], &s, ranks, phase, &c->seconds);
        halo_schedule_free(&s);
        HALO_TRY(halo_agree(P->comm, st));
      }
  }
  halo_choice_best(ch);
  o->strategy = ch->c[ch->best].strategy;
  o->message_cap = ch->c[ch->best].message_cap;
  if (transport_deferred)
    HALO_TRY(halo_gpu_transport(P->gpu, P->comm, ch->c[ch->best].transport, &P->transport));
cleanup:
  if (device)
    halo_dev_free(x);
  else
    halo_free(x);
  halo_free(ranks);
  return st;
}

halo_status halo_plan_create(halo_matrix A, const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_plan P = NULL;
  halo_plan_options o;
  int *node_of_send[HALO_MAX_PHASES] = {0};
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  double t0 = halo_wtime();
  if (!plan_p)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  else
    st = resolve_options(opts, &o);
  if (st == HALO_SUCCESS) {
    P = halo_calloc(1, sizeof *P);
    if (!P)
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a plan");
    else
      P->comm = P->topo.node_comm = MPI_COMM_NULL;
  }
  HALO_TRY(halo_agree(A->comm, st));
  HALO_TRY(check_same_options(A->comm, &o));
  const int transport_deferred =
      o.strategy == HALO_STRATEGY_AUTO && o.transport == HALO_TRANSPORT_AUTO &&
      (o.memory == HALO_MEMORY_AUTO ? A->mem : o.memory) == HALO_MEMORY_DEVICE;
  P->A = A;
  P->remove_duplicates = o.remove_duplicates;
  P->memory = o.memory == HALO_MEMORY_AUTO ? A->mem : o.memory;
  halo_matrix_retain(A);
  HALO_TRY_MPI(MPI_Comm_dup(A->comm, &P->comm));
  if (P->memory == HALO_MEMORY_DEVICE) {
    /* the device first: the matrix goes there, the buffers are made there */
    HALO_TRY(halo_gpu_create(P->comm, o.device_id, o.stream, &P->gpu));
    HALO_TRY(halo_agree(P->comm, halo_matrix_upload(A)));
    if (!transport_deferred)
      HALO_TRY(halo_gpu_transport(P->gpu, P->comm, o.transport, &P->transport));
  } else if (o.transport != HALO_TRANSPORT_AUTO && o.transport != HALO_TRANSPORT_HOST) {
    HALO_FAIL(HALO_ERR_INVALID_ARG,
              "transport %s needs device memory (the plan's memory is host): use auto or host",
              halo_transport_name(o.transport));
  } else {
    P->transport = HALO_TRANSPORT_HOST;
  }
  HALO_TRY(halo_topology_create(P->comm, o.ranks_per_node, &P->topo));
  HALO_TRY(halo_pattern_create(P->comm, A->col_ranges, A->ghost_ids, A->n_ghost, &P->pattern));
  if (o.strategy == HALO_STRATEGY_AUTO) HALO_TRY(choose_plan(P, &o, transport_deferred));
  st = build_schedule(P, &o, &P->sched);
  halo_pattern_free(&P->pattern); /* the schedule holds all the exchange needs */
  HALO_TRY(st);
  st = handshake(P->comm, &P->topo, &P->sched, node_of_send);
  HALO_TRY(halo_agree(P->comm, st));
  if (P->memory == HALO_MEMORY_DEVICE) {
#if HALO_HAVE_CUDA
    st = halo_exec_create(&halo_exec_cuda_ops, &P->sched, P->comm, &P->topo, P->gpu, P->transport,
                          &P->exec);
    if (st == HALO_SUCCESS) st = halo_gpu_spmv_create(P->gpu, A, &P->gsp);
#else
    st = HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
#endif
  } else {
    st = halo_exec_create(&halo_exec_host_ops, &P->sched, P->comm, &P->topo, NULL,
                          HALO_TRANSPORT_HOST, &P->exec);
  }
  HALO_TRY(halo_agree(P->comm, st));
  HALO_TRY(compute_stats(P, node_of_send, halo_wtime() - t0));
  *plan_p = P;
  P = NULL;
cleanup:
  for (int k = 0; k < HALO_MAX_PHASES; k++) halo_free(node_of_send[k]);
  plan_free(P);
  return st;
}

halo_status halo_plan_model(halo_plan plan, const char *params, double *phase_seconds_p,
                            double *seconds_p) {
  halo_status st = HALO_SUCCESS;
  halo_params prm;
  halo_model_rank *ranks = NULL;
  double phase[HALO_MAX_PHASES], total = 0.0;
  int size;
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!seconds_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "seconds_p is NULL");
  HALO_TRY_MPI(MPI_Comm_size(plan->comm, &size));
  st = halo_choose_params(params, &prm);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(ranks, size);
  HALO_TRY(halo_agree(plan->comm, st));
  const int device = plan->memory == HALO_MEMORY_DEVICE;
  HALO_TRY(halo_choose_ranks(plan->comm, &plan->topo, &prm, device, plan_is_helper(plan),
                             device ? halo_gpu_ranks_per_gpu(plan->gpu) : 1, plan->transport,
                             ranks));
  HALO_TRY(halo_choose_model(plan->comm, &plan->topo, &prm, plan->transport, &plan->sched, ranks,
                             phase, &total));
  if (phase_seconds_p) memcpy(phase_seconds_p, phase, sizeof phase);
  *seconds_p = total;
cleanup:
  halo_free(ranks);
  return st;
}

halo_status halo_plan_describe(halo_plan plan, char *buf, size_t len) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!buf || len == 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "no buffer to describe into");
  halo_choice_describe(&plan->choice, plan->sched.strategy, plan->transport,
                       plan->sched.message_cap_used, buf, len);
  return HALO_SUCCESS;
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
  double *to = plan->user_ghost;
  plan->user_ghost = NULL;
  return halo_exec_end(&plan->exec, to);
}

halo_status halo_plan_synchronize(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->memory != HALO_MEMORY_DEVICE) return HALO_SUCCESS;
  return halo_gpu_synchronize(plan->gpu);
}

void halo_plan_destroy(halo_plan *plan_p) {
  if (!plan_p || !*plan_p) return;
  if ((*plan_p)->in_flight) halo_exchange_end(*plan_p);
  plan_free(*plan_p);
  *plan_p = NULL;
}
