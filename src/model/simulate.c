/* The simulator: every rank's pattern (sim_patterns.c),
 * every node's links, decisions and schedules built with the functions the
 * distributed set-up uses, the decisions carried between nodes in memory,
 * and the statistics counted as halo_plan_create counts them. */
#include <string.h>

#include "env.h"
#include "model/choose.h"
#include "model/model.h"
#include "plan/nodebuild.h"
#include "plan/registry.h"
#include "model/simulate.h"
#include "plan/topology.h"

static void sim_links_free(halo_sim sim);

void halo_sim_destroy(halo_sim *sim_p) {
  if (!sim_p || !*sim_p) return;
  halo_sim s = *sim_p;
  for (int r = 0; r < s->P; r++) {
    if (s->pat) halo_pattern_free(&s->pat[r]);
    if (s->ghost_ids) halo_free(s->ghost_ids[r]);
  }
  sim_links_free(s);
  halo_free(s->pat);
  halo_free(s->ghost_ids);
  halo_free(s->results);
  halo_free(s->col_ranges);
  halo_free(s->row_ranges);
  halo_free(s);
  *sim_p = NULL;
}

/* ---- building the schedules node by node --------------------------------- */

/* Called with the schedules of each node in turn (ranks first..first+n-1). */
typedef halo_status (*node_fn)(void *ctx, int node, int first, int n, halo_schedule *sched);

static void sim_links_free(halo_sim sim) {
  halo_sim_links *k = sim->links;
  if (!k) return;
  const int P = sim->P, n_nodes = (P + k->ranks_per_node - 1) / k->ranks_per_node;
  if (k->L)
    for (int n = 0; n < n_nodes; n++) halo_node_links_free(&k->L[n]);
  if (k->recv_node)
    for (int r = 0; r < P; r++) halo_free(k->recv_node[r]);
  if (k->send_node)
    for (int r = 0; r < P; r++) halo_free(k->send_node[r]);
  halo_free(k->L);
  halo_free(k->recv_node);
  halo_free(k->send_node);
  halo_free(k->ranks);
  halo_free(k);
  sim->links = NULL;
}

/* The input of node n (ranks nK..), from the patterns and the kept links. */
static halo_node_input node_input(halo_sim sim, const halo_sim_links *k, int n) {
  const int K = k->ranks_per_node, first = n * K;
  return (halo_node_input){.node_id = first,
                           .size = sim->P,
                           .n_ranks = first + K <= sim->P ? K : sim->P - first,
                           .ranks = k->ranks + first,
                           .pat = sim->pat + first,
                           .ghost_ids = sim->ghost_ids + first,
                           .recv_node = k->recv_node + first,
                           .send_node = k->send_node + first,
                           .col_ranges = sim->col_ranges};
}

/* The nodes of every peer and the links of every node for o's nodes and
 * duplicate removal: the kept ones, else built and kept in their place. They
 * do not depend on the strategy, so a simulation that weighs several builds
 * them once. */
static halo_status sim_links(halo_sim sim, const halo_plan_options *o) {
  halo_status st = HALO_SUCCESS;
  const int P = sim->P, K = o->ranks_per_node, n_nodes = (P + K - 1) / K;
  halo_sim_links *k = sim->links;
  if (k && k->ranks_per_node == K && k->remove_duplicates == o->remove_duplicates)
    return HALO_SUCCESS;
  sim_links_free(sim);
  HALO_TRY(HALO_CALLOC(k, 1));
  sim->links = k; /* freed below on failure */
  k->ranks_per_node = K;
  k->remove_duplicates = o->remove_duplicates;
  HALO_TRY(HALO_ALLOC(k->ranks, P));
  for (int r = 0; r < P; r++) k->ranks[r] = r;
  HALO_TRY(HALO_CALLOC(k->recv_node, P));
  HALO_TRY(HALO_CALLOC(k->send_node, P));
  for (int r = 0; r < P; r++) {
    const halo_pattern *p = &sim->pat[r];
    HALO_TRY(HALO_ALLOC(k->recv_node[r], p->n_recv));
    HALO_TRY(HALO_ALLOC(k->send_node[r], p->n_send));
    for (int i = 0; i < p->n_recv; i++) k->recv_node[r][i] = halo_virtual_node(p->recv[i].peer, K);
    for (int i = 0; i < p->n_send; i++) k->send_node[r][i] = halo_virtual_node(p->send[i].peer, K);
  }
  HALO_TRY(HALO_CALLOC(k->L, n_nodes));
  for (int n = 0; n < n_nodes; n++) {
    const halo_node_input in = node_input(sim, k, n);
    HALO_TRY(halo_node_links_build(&in, o->remove_duplicates, &k->L[n]));
  }
cleanup:
  if (st != HALO_SUCCESS) sim_links_free(sim);
  return st;
}

static halo_status sim_build(halo_sim sim, const halo_plan_options *o, node_fn fn, void *ctx) {
  halo_status st = HALO_SUCCESS;
  const int P = sim->P, K = o->ranks_per_node, n_nodes = (P + K - 1) / K;
  halo_schedule *sched = NULL;
  const halo_strategy_desc *d = NULL;
  if (K < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "the simulator needs ranks_per_node > 0 (virtual nodes), got %d", K);
  if (!halo_strategy_valid(o->strategy))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown strategy %d", (int)o->strategy);
  if (o->strategy == HALO_STRATEGY_AUTO)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "strategy auto: the simulator builds one strategy at a time; compare them "
                      "with halo_sim_model (halo simulate --strategy auto does)");
  if (o->message_cap < (int64_t)sizeof(double))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "message_cap = %lld bytes: at least 8",
                      (long long)o->message_cap);
  HALO_CHECK(halo_strategy_desc_find(o->strategy, &d));
  HALO_TRY(HALO_ALLOC(sched, K < P ? K : P));
  if (!d->decide_receive) { /* Standard: a rank's schedule from its pattern alone */
    for (int n = 0; n < n_nodes; n++) {
      const int first = n * K, cnt = first + K <= P ? K : P - first;
      for (int i = 0; i < cnt; i++)
        HALO_TRY(halo_schedule_build_standard(&sim->pat[first + i], &sched[i]));
      st = fn(ctx, n, first, cnt, sched);
      for (int i = 0; i < cnt; i++) halo_schedule_free(&sched[i]);
      if (st != HALO_SUCCESS) goto cleanup;
    }
    goto cleanup;
  }
  /* links of every node (kept), and the receive decisions of every node */
  HALO_TRY(sim_links(sim, o));
  const halo_sim_links *k = sim->links;
  halo_node_links *L = k->L;
  for (int n = 0; n < n_nodes; n++) {
    const halo_node_input in = node_input(sim, k, n);
    L[n].message_cap_used = 0; /* a decision that uses a cap sets it */
    HALO_TRY(halo_node_decide_receive(d, &in, &L[n], o->message_cap));
  }
  /* receive decisions to the sending nodes */
  for (int n = 0; n < n_nodes; n++)
    for (int b = 0; b < L[n].n_out; b++) {
      halo_link *out = &L[n].out[b];
      const halo_link *in = halo_link_find(L[out->node / K].in, L[out->node / K].n_in, n * K);
      if (!in || in->n != out->n)
        HALO_FAIL(HALO_ERR_INTERNAL, "nodes %d and %d disagree on their link", n * K, out->node);
      HALO_TRY(halo_link_pieces_alloc(out, in->n_pieces));
      memcpy(out->piece_start, in->piece_start, (size_t)(in->n_pieces + 1) * sizeof(int64_t));
      memcpy(out->piece_receiver, in->piece_receiver, (size_t)in->n_pieces * sizeof(int));
    }
  for (int n = 0; n < n_nodes; n++) {
    const halo_node_input in = node_input(sim, k, n);
    HALO_TRY(halo_node_decide_send(d, &in, &L[n]));
  }
  /* send decisions to the receiving nodes */
  for (int n = 0; n < n_nodes; n++)
    for (int c = 0; c < L[n].n_in; c++) {
      halo_link *in = &L[n].in[c];
      const halo_link *out = halo_link_find(L[in->node / K].out, L[in->node / K].n_out, n * K);
      memcpy(in->piece_sender, out->piece_sender, (size_t)in->n_pieces * sizeof(int));
    }
  /* the schedules, node by node */
  for (int n = 0; n < n_nodes; n++) {
    const halo_node_input in = node_input(sim, k, n);
    HALO_TRY(halo_node_build_schedules(d, &in, &L[n], sched));
    st = fn(ctx, n, n * K, in.n_ranks, sched);
    for (int i = 0; i < in.n_ranks; i++) halo_schedule_free(&sched[i]);
    if (st != HALO_SUCCESS) goto cleanup;
  }
cleanup:
  if (st != HALO_SUCCESS) sim_links_free(sim); /* pieces half decided: built anew next time */
  halo_free(sched);
  return st;
}

/* ---- statistics and models, counted node by node -------------------------- */

/* What one build of a plan counts, node by node: its statistics, as
 * compute_stats in plan.c counts them, and its modeled time on each of
 * n_models paths (no more than one node's schedules are kept). */
typedef struct {
  const halo_plan_options *o;
  halo_stats_full *t;
  int P, n_models;
  halo_sim_model_result *model; /* n_models: params, transport; phases raised node by node */
  halo_model_rank **ranks;      /* per model: where each rank runs */
  int n_phases[HALO_SIM_MAX_MODELS];
} eval_ctx;

static halo_status count_node(void *ctx_, int node, int first, int n, halo_schedule *sched) {
  eval_ctx *ctx = ctx_;
  halo_stats *t = &ctx->t->s;
  halo_phase_stats *phase = ctx->t->phase;
  const int K = ctx->o->ranks_per_node;
  int64_t node_msgs[HALO_MAX_PHASES] = {0}, node_bytes[HALO_MAX_PHASES] = {0};
  int *nodes = NULL;
  (void)node;
  for (int i = 0; i < n; i++) {
    halo_schedule *s = &sched[i];
    HALO_CHECK(halo_schedule_check(s));
    if (s->rank != first + i)
      return HALO_ERROR(HALO_ERR_INTERNAL, "schedule of rank %d in place of %d", s->rank,
                        first + i);
    t->n_phases = s->n_phases;
    t->ghosts += s->n_ghost;
    if (s->message_cap_used > t->message_cap_used) t->message_cap_used = s->message_cap_used;
    for (int k = 0; k < s->n_phases; k++) {
      const halo_phase *ph = &s->phase[k];
      halo_phase_counts c;
      nodes = halo_realloc(nodes, (size_t)(ph->n_send + 1) * sizeof *nodes);
      if (!nodes) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory counting messages");
      for (int m = 0; m < ph->n_send; m++) nodes[m] = halo_virtual_node(ph->send[m].peer, K);
      halo_phase_count(ph, s->rank, halo_virtual_node(s->rank, K), nodes, &c);
      halo_phase_stats *f = &phase[k];
      f->scope = ph->scope;
      f->messages += c.messages;
      f->bytes += c.bytes;
      f->inter_node_messages += c.inter_node_messages;
      f->inter_node_bytes += c.inter_node_bytes;
      if (c.messages > f->max_messages_per_rank) f->max_messages_per_rank = c.messages;
      if (c.bytes > f->max_bytes_per_rank) f->max_bytes_per_rank = c.bytes;
      if (c.max_message_bytes > f->max_message_bytes) f->max_message_bytes = c.max_message_bytes;
      node_msgs[k] += c.inter_node_messages;
      node_bytes[k] += c.inter_node_bytes;
    }
  }
  for (int k = 0; k < t->n_phases; k++) {
    halo_phase_stats *f = &phase[k];
    if (node_msgs[k] > f->max_inter_node_messages_per_node)
      f->max_inter_node_messages_per_node = node_msgs[k];
    if (node_bytes[k] > f->max_inter_node_bytes_per_node)
      f->max_inter_node_bytes_per_node = node_bytes[k];
  }
  halo_free(nodes);
  for (int m = 0; m < ctx->n_models; m++)
    HALO_CHECK(halo_model_node(&ctx->model[m].prm, ctx->model[m].transport, sched, n, ctx->P,
                               ctx->ranks[m], ctx->model[m].phase, &ctx->n_phases[m]));
  return HALO_SUCCESS;
}

/* Where each rank runs, as halo_sim_model describes it, for a plan of
 * transport t (AUTO: as any but staged); most_p: the most ranks sharing a GPU. */
static void model_ranks(halo_sim sim, int K, const halo_params *prm, int device, int G,
                        halo_transport t, halo_model_rank *ranks, int *most_p) {
  const int P = sim->P;
  int most_per_gpu = 1;
  for (int r = 0; r < P; r++) {
    const int node = halo_virtual_node(r, K), on_node = node + K <= P ? K : P - node;
    halo_model_rank *m = &ranks[r];
    m->host = m->node = node;
    m->socket = (int)((int64_t)(r - node) * prm->sockets_per_node / on_node);
    m->on_gpu = device && (sim->row_ranges[r + 1] > sim->row_ranges[r] || sim->pat[r].n_ghost > 0);
    m->ranks_per_gpu = device ? (on_node + G - 1) / G : 1;
    if (m->ranks_per_gpu > most_per_gpu) most_per_gpu = m->ranks_per_gpu;
  }
  const halo_transport_desc *desc = halo_transport_find(t); /* NULL: AUTO */
  if (desc && desc->model.gpu_ranks_copy) /* helpers get their share by host MPI: only GPU
                                             ranks copy (staged) */
    for (int node = 0; node < P; node += K) {
      const int end = node + K <= P ? node + K : P;
      int on_gpu = 0;
      for (int r = node; r < end; r++) on_gpu += ranks[r].on_gpu;
      for (int r = node; r < end; r++)
        ranks[r].ranks_per_gpu = on_gpu > G ? (on_gpu + G - 1) / G : 1;
    }
  *most_p = most_per_gpu;
}

/* The plan of o the simulation has built, or NULL. */
static halo_sim_result *find_result(halo_sim sim, const halo_plan_options *o) {
  for (int i = 0; i < sim->n_results; i++) {
    halo_sim_result *r = &sim->results[i];
    if (r->strategy == o->strategy && r->ranks_per_node == o->ranks_per_node &&
        r->message_cap == o->message_cap && r->remove_duplicates == o->remove_duplicates)
      return r;
  }
  return NULL;
}

/* Whether two parameter sets model alike (every value the model reads, bit
 * for bit). */
static int params_same(const halo_params *a, const halo_params *b) {
#define SAME(f) (memcmp(&a->f, &b->f, sizeof a->f) == 0)
  return SAME(sockets_per_node) && SAME(short_max) && SAME(eager_max) && SAME(cpu) && SAME(gpu) &&
         SAME(h2d) && SAME(d2h) && SAME(injection_beta) && SAME(staged_alpha) && SAME(have_ipc) &&
         SAME(ipc) && SAME(have_own) && SAME(own);
#undef SAME
}

/* Its model on path t with these parameters, or NULL. */
static const halo_sim_model_result *find_model(const halo_sim_result *r, const halo_params *prm,
                                               int G, int device, halo_transport t) {
  for (int i = 0; r && i < r->n_models; i++) {
    const halo_sim_model_result *m = &r->model[i];
    if (m->gpus_per_node == G && m->device == device && m->transport == t &&
        params_same(&m->prm, prm))
      return m;
  }
  return NULL;
}

/* Build the plan of o once, for its statistics and its model on each of the
 * n paths of model[] (params, gpus_per_node, device and transport set; the
 * times are filled), and keep them in the simulation's results. */
static halo_status sim_evaluate(halo_sim sim, const halo_plan_options *o, int n,
                                halo_sim_model_result *model, halo_stats_full *stats_p) {
  halo_status st = HALO_SUCCESS;
  halo_model_rank *ranks[HALO_SIM_MAX_MODELS] = {NULL};
  halo_stats_full full;
  halo_stats *const t = &full.s;
  const int K = o->ranks_per_node;
  if (n > HALO_SIM_MAX_MODELS)
    return HALO_ERROR(HALO_ERR_INTERNAL, "%d models of one plan: at most %d", n,
                      HALO_SIM_MAX_MODELS);
  memset(&full, 0, sizeof full);
  eval_ctx ctx = {.o = o, .t = &full, .P = sim->P, .n_models = n, .model = model, .ranks = ranks};
  for (int m = 0; m < n; m++) {
    int most;
    HALO_TRY(HALO_ALLOC(ranks[m], sim->P));
    model_ranks(sim, K, &model[m].prm, model[m].device, model[m].gpus_per_node, model[m].transport,
                ranks[m], &most);
    memset(model[m].phase, 0, sizeof model[m].phase);
  }
  double t0 = halo_wtime();
  HALO_TRY(sim_build(sim, o, count_node, &ctx));
  t->strategy = o->strategy;
  t->ranks = sim->P;
  t->nodes = (sim->P + K - 1) / K;
  t->ranks_per_node = K < sim->P ? K : sim->P;
  t->remove_duplicates = o->remove_duplicates;
  t->setup_seconds = halo_wtime() - t0;
  for (int m = 0; m < n; m++) {
    model[m].seconds = 0.0;
    for (int k = 0; k < ctx.n_phases[m]; k++) model[m].seconds += model[m].phase[k];
  }
  halo_sim_result *r = find_result(sim, o);
  if (!r) {
    halo_sim_result *q =
        halo_realloc(sim->results, (size_t)(sim->n_results + 1) * sizeof *sim->results);
    if (!q) HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping a simulated plan");
    sim->results = q;
    r = &sim->results[sim->n_results++];
    memset(r, 0, sizeof *r);
    r->strategy = o->strategy;
    r->ranks_per_node = K;
    r->message_cap = o->message_cap;
    r->remove_duplicates = o->remove_duplicates;
    r->stats = full;
  }
  for (int m = 0; m < n; m++) /* models past the room are not kept */
    if (r->n_models < HALO_SIM_MAX_MODELS &&
        !find_model(r, &model[m].prm, model[m].gpus_per_node, model[m].device, model[m].transport))
      r->model[r->n_models++] = model[m];
  if (stats_p) *stats_p = full;
cleanup:
  for (int m = 0; m < n; m++) halo_free(ranks[m]);
  return st;
}

halo_status halo_sim_run(halo_sim sim, const halo_plan_options *opts, halo_stats *stats) {
  if (!sim || !stats) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_run: NULL argument");
  const halo_plan_options o = opts ? *opts : halo_plan_options_default();
  const halo_sim_result *r = find_result(sim, &o);
  halo_stats_full t;
  if (r) /* built before: its statistics, and the time that build took */
    t = r->stats;
  else
    HALO_CHECK(sim_evaluate(sim, &o, 0, NULL, &t));
  const halo_transport_where where = {.own_gpu = 1};
  const halo_transport tr = o.transport == HALO_TRANSPORT_AUTO /* what a host run reports */
                                ? halo_transport_default(HALO_MEMORY_HOST, &where)
                                : o.transport;
  for (int k = 0; k < t.s.n_phases; k++) /* transports are not simulated */
    t.phase[k].transport = tr;
  sim->last = t;
  sim->have_last = 1;
  *stats = t.s;
  return HALO_SUCCESS;
}

halo_status halo_sim_phase_stats(halo_sim sim, int phase, halo_phase_stats *stats_p) {
  if (!sim || !stats_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_phase_stats: NULL argument");
  if (!sim->have_last)
    return HALO_ERROR(HALO_ERR_STATE, "halo_sim_phase_stats before any halo_sim_run");
  const int n = sim->last.s.n_phases;
  if (phase < 0 || phase >= n)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "phase %d: the last run's plan has phases 0 to %d",
                      phase, n - 1);
  *stats_p = sim->last.phase[phase];
  return HALO_SUCCESS;
}

/* ---- every schedule, for tests -------------------------------------------- */

static halo_status keep_node(void *ctx, int node, int first, int n, halo_schedule *sched) {
  halo_schedule *all = ctx;
  (void)node;
  for (int i = 0; i < n; i++) {
    all[first + i] = sched[i];
    memset(&sched[i], 0, sizeof sched[i]); /* now owned by all */
  }
  return HALO_SUCCESS;
}

halo_status halo_sim_schedules(halo_sim sim, const halo_plan_options *opts, halo_schedule *sched) {
  const halo_plan_options o = opts ? *opts : halo_plan_options_default();
  memset(sched, 0, (size_t)sim->P * sizeof *sched);
  halo_status st = sim_build(sim, &o, keep_node, sched);
  if (st != HALO_SUCCESS)
    for (int r = 0; r < sim->P; r++) halo_schedule_free(&sched[r]);
  return st;
}

/* ---- the modeled time of a plan ------------------------------------------ */

halo_status halo_sim_model(halo_sim sim, const halo_plan_options *opts, int gpus_per_node,
                           const char *params, int max_phases, double *phase_seconds_p,
                           double *seconds_p) {
  halo_status st = HALO_SUCCESS;
  halo_params prm;
  halo_model_rank *ranks = NULL;
  halo_sim_model_result model[HALO_SIM_MAX_MODELS];
  if (!sim || !params || !seconds_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_model: NULL argument");
  if (phase_seconds_p && max_phases < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "max_phases = %d: at least 0", max_phases);
  const halo_plan_options o = opts ? *opts : halo_plan_options_default();
  const int P = sim->P, K = o.ranks_per_node, G = gpus_per_node;
  const int device = o.memory == HALO_MEMORY_DEVICE;
  if (K < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "the simulator needs ranks_per_node > 0 (virtual nodes), got %d", K);
  if (G < 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "gpus_per_node = %d: at least 0", G);
  if (device && G < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "a plan in device memory needs gpus_per_node >= 1 (got %d)", G);
  const halo_memory mem = device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  const halo_transport_desc *named = halo_transport_find(o.transport); /* NULL: auto */
  if (o.transport != HALO_TRANSPORT_AUTO && !named)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport %d", (int)o.transport);
  if (named && !halo_transport_serves(named, mem)) { /* the registry's message */
    const halo_transport_where any = {.own_gpu = 1, .gpu_aware_mpi = 1};
    return halo_transport_check(named, mem, &any, 1);
  }
  HALO_CHECK(halo_params_load(params, &prm));
  /* where each rank runs: virtual nodes of K consecutive ranks, one host each */
  int most_per_gpu = 1;
  HALO_TRY(HALO_ALLOC(ranks, P));
  model_ranks(sim, K, &prm, device, G, HALO_TRANSPORT_AUTO, ranks, &most_per_gpu);
  /* the simulator models any transport, built in or not, but a CUDA-aware MPI is not
   * assumed for AUTO */
  const halo_transport_where where = {.own_gpu = most_per_gpu == 1};
  const halo_transport t = named ? o.transport : halo_transport_default(mem, &where);
  if (named && halo_transport_check(named, mem, &where, 0) == HALO_ERR_INVALID_ARG)
    HALO_FAIL(HALO_ERR_INVALID_ARG,
              "transport %s needs one rank per GPU, but %d ranks per node on %d GPUs per node "
              "share a GPU %d at a time: use staged or ipc",
              halo_transport_name(t), K < P ? K : P, G, most_per_gpu);
  const halo_sim_model_result *m = find_model(find_result(sim, &o), &prm, G, device, t);
  if (!m) { /* build the plan once for this path and the others AUTO weighs in its memory */
    halo_transport others[HALO_N_TRANSPORTS];
    const int n_others =
        device ? halo_transport_candidates(mem, &where, halo_model_priced, &prm, others) : 0;
    int n = 0;
    model[n++] =
        (halo_sim_model_result){.prm = prm, .gpus_per_node = G, .device = device, .transport = t};
    for (int i = 0; i < n_others && n < HALO_SIM_MAX_MODELS; i++)
      if (others[i] != t) {
        model[n] = model[0];
        model[n++].transport = others[i];
      }
    HALO_TRY(sim_evaluate(sim, &o, n, model, NULL));
    m = &model[0];
  }
  for (int k = 0; phase_seconds_p && k < max_phases; k++)
    phase_seconds_p[k] = k < HALO_MAX_PHASES ? m->phase[k] : 0.0;
  *seconds_p = m->seconds;
cleanup:
  halo_free(ranks);
  return st;
}

halo_status halo_sim_choose(halo_sim sim, const halo_plan_options *opts, int gpus_per_node,
                            const char *params, halo_plan_options *chosen_p, char *describe,
                            size_t len) {
  halo_choice ch;
  halo_transport paths[HALO_N_TRANSPORTS];
  halo_params prm;
  int n = 0;
  int64_t caps[5];
  if (!sim || !chosen_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_choose: NULL argument");
  if (!params || !*params) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_choose: no params");
  const halo_plan_options o = opts ? *opts : halo_plan_options_default();
  if (o.ranks_per_node < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the simulator needs ranks_per_node >= 1");
  const halo_memory mem = o.memory == HALO_MEMORY_DEVICE ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  if (mem == HALO_MEMORY_DEVICE && gpus_per_node < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "a device plan needs gpus_per_node >= 1");
  HALO_CHECK(halo_params_load(params, &prm));
  { /* AUTO's candidates of the registry (priced ones where the parameters have them) */
    const int64_t on_node = o.ranks_per_node < sim->P ? o.ranks_per_node : sim->P;
    const halo_transport_where where = {
        .own_gpu = mem == HALO_MEMORY_DEVICE && (on_node + gpus_per_node - 1) / gpus_per_node == 1};
    n = halo_transport_candidates(mem, &where, halo_model_priced, &prm, paths);
  }
  memset(&ch, 0, sizeof ch);
  ch.how = 1;
  HALO_CHECK(halo_env_int("option expected_uses", o.expected_uses, "HALO_EXPECTED_USES",
                          HALO_DEFAULT_EXPECTED_USES, 1, INT64_MAX, 0, NULL, &ch.uses));
  snprintf(ch.params, sizeof ch.params, "%s", params);
  const int n_caps = halo_choose_caps(o.message_cap, caps);
  for (int sg = 0; sg < HALO_N_STRATEGIES; sg++)
    for (int c = 0; c < (sg == HALO_STRATEGY_SPLIT ? n_caps : 1); c++)
      for (int t = 0; t < n; t++) {
        halo_plan_options co = o;
        co.strategy = (halo_strategy)sg;
        co.message_cap = caps[c];
        co.transport = paths[t];
        if (ch.n == HALO_MAX_CANDIDATES)
          return HALO_ERROR(HALO_ERR_INTERNAL, "too many candidates");
        halo_candidate *k = &ch.c[ch.n++];
        *k = (halo_candidate){co.strategy, paths[t], co.message_cap, 0.0, 0.0, 0.0};
        k->setup_seconds = halo_model_setup(&prm, paths[t], (int)sim->P); /* a new communicator */
        HALO_CHECK(halo_sim_model(sim, &co, gpus_per_node, params, 0, NULL, &k->seconds));
      }
  const halo_candidate *b = &ch.c[halo_choice_best(&ch)];
  *chosen_p = o;
  chosen_p->strategy = b->strategy;
  chosen_p->transport = b->transport;
  chosen_p->message_cap = b->message_cap;
  if (describe && len)
    halo_choice_describe(&ch, b->strategy, b->transport, b->message_cap, describe, len);
  return HALO_SUCCESS;
}
