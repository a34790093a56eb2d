/* The plan handle: creation from a matrix or a vector layout (the core every
 * constructor calls), its executors and products, destruction. Strategy AUTO
 * is chosen by the chooser the input carries (auto.c's, given by the public
 * constructors in plan_input.c), so that this core, which AUTO's trials and
 * the measurements call, calls nothing above it. What a plan tells is
 * plan_info.c. */
#include <string.h>

#include "exec/transport.h"
#include "interface/plan.h"
#include "model/wisdom.h"
#include "plan/handshake.h"
#include "plan/nodeaware.h"

halo_status halo_plan_options_resolve(const halo_plan_options *opts,
                                      halo_plan_options *resolved_p) {
  halo_settings s;
  if (!resolved_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "resolved_p is NULL");
  HALO_CHECK(halo_settings_resolve(opts, &s));
  *resolved_p = s.opts;
  return HALO_SUCCESS;
}

static int64_t patterns_learned;
int64_t halo_debug_patterns_learned(void) { return patterns_learned; }

halo_status halo_plan_schedule(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                               const halo_settings *s, halo_schedule *sched) {
  halo_status st = HALO_SUCCESS;
  memset(sched, 0, sizeof *sched);
  /* not returned at once: the node-aware build's last step (unpacking the
   * schedule its leader scattered) fails on one rank alone, and the agreement
   * below is every rank's */
  if (halo_strategy_node_aware(s->opts.strategy))
    st = halo_schedule_build_nodeaware(P->ctx->comm, P->topo, pattern, in->ghost_ids,
                                       in->col_ranges, &s->opts, sched);
  else
    st = halo_schedule_build_standard(pattern, sched);
  if (st == HALO_SUCCESS) st = halo_schedule_check(sched);
  st = halo_agree(P->ctx->comm, st);
  if (st != HALO_SUCCESS) halo_schedule_free(sched);
  return st;
}

static void plan_free(halo_plan P) {
  if (!P) return;
  halo_online_release(P);
  halo_spmv_device_destroy(&P->dsp);
  for (int i = 0; P->sets && i < P->n_sets; i++) {
    halo_exec_destroy(&P->sets[i].fwd);
    halo_exec_destroy(&P->sets[i].rev);
  }
  halo_free(P->sets);
  halo_timeline_destroy(&P->tl);
  if (P->n_tags) halo_context_tags_release(P->ctx, P->tag_base, P->n_tags);
  halo_schedule_free(&P->rsched);
  halo_schedule_free(&P->sched);
  halo_leaves_free(&P->leaves);
  halo_matrix_destroy(&P->A);
  halo_context_release(&P->ctx);
  halo_free(P->wisdom);
  halo_free(P);
}

/* Plans whose exchange failed: kept, never freed. Their receives may still
 * be posted and their sends under way (a peer failed or stopped), so their
 * buffers must outlive them, and their tags must never be given again. Kept
 * reachable, so that leak checkers see memory held on purpose. Their matrix
 * and context are let go as any plan's: the context's end is collective
 * (rma's windows, NVSHMEM's memory), so it must come when the other ranks'
 * does, not never on the rank whose exchange failed (it then frees the
 * context's shared memory, a failed plan's device buffers among it: the
 * communicator's end on every rank says that no peer writes there any more). */
static halo_plan *failed_plans;
static int n_failed_plans, cap_failed_plans;

static void keep_failed(halo_plan P) {
  if (n_failed_plans == cap_failed_plans) {
    const int cap = cap_failed_plans ? 2 * cap_failed_plans : 8;
    halo_plan *q = halo_realloc(failed_plans, (size_t)cap * sizeof *q);
    if (!q) return; /* kept all the same, unlisted */
    failed_plans = q, cap_failed_plans = cap;
  }
  failed_plans[n_failed_plans++] = P;
}

void halo_plan_destroy(halo_plan *plan_p) {
  if (!plan_p || !*plan_p) return;
  halo_plan P = *plan_p;
  halo_plan_notices_drain(P);
  halo_online_release(P); /* the trial's plans and its winner's (a failed one is kept by its own) */
  if (P->failed) {
    keep_failed(P);
    halo_matrix_destroy(&P->A);
    halo_context_release(&P->ctx);
    *plan_p = NULL;
    return;
  }
  for (int i = 0; i < P->n_sets; i++)
    if (P->sets[i].state != HALO_SLOT_IDLE) (void)halo_slot_end(P, i);
  /* the measured uses replace the expected ones of later choices of its key (rank 0 writes;
   * not collective: a file that cannot be written keeps what it had, and the last error
   * says why) */
  if (P->wisdom && P->ctx && P->ctx->rank == 0 && P->uses > 0)
    (void)halo_wisdom_note_uses(P->wisdom, P->wisdom_key, P->uses);
  plan_free(P);
  *plan_p = NULL;
}

/* Where the plan runs: the device and its streams, or the host; the matrix
 * on the device; the transport, unless strategy AUTO chooses it. */
static halo_status plan_memory(halo_plan P, const halo_settings *s, int transport_deferred,
                               int background) {
  const halo_plan_options *o = &s->opts;
  const halo_transport_desc *t = halo_transport_find(o->transport); /* NULL: auto */
  if (t && !halo_transport_serves(t, P->memory)) { /* before any device is made */
    const halo_transport_where any = {.own_gpu = 1, .gpu_aware_mpi = 1, .named = 1};
    const halo_status st = halo_transport_check(t, P->memory, &any, 1);
    char why[400];
    if (!s->transport_env) return st;
    snprintf(why, sizeof why, "%s", halo_last_error()); /* the variable named it */
    return HALO_ERROR(st, "HALO_TRANSPORT=%s: %s", t->name, why);
  }
  if (P->memory == HALO_MEMORY_DEVICE) {
    HALO_CHECK(halo_context_device(P->ctx, o->device_id, &P->dev));
    halo_status st = HALO_SUCCESS;
    if (o->stream)
      P->comp = o->stream;
    else
      st = halo_device_compute_stream(P->dev, s->compute_nonblocking, &P->comp);
    HALO_CHECK(halo_agree(P->ctx->comm, st));
    if (P->A) HALO_CHECK(halo_agree(P->ctx->comm, halo_matrix_upload(P->A)));
    if (!transport_deferred) {
      HALO_CHECK(halo_device_transport_later(P->dev, o->transport, s->gpu_aware_mpi,
                                             P->ctx->transport_made, background,
                                             &P->transport, &P->later));
      P->ctx->transport_made[P->transport] = 1;
    }
    return HALO_SUCCESS;
  }
  const halo_transport_where where = {.compiled_only = 1, .named = 1};
  if (t) HALO_CHECK(halo_transport_check(t, HALO_MEMORY_HOST, &where, 1));
  P->transport = t ? t->id : halo_transport_default(HALO_MEMORY_HOST, &where);
  return HALO_SUCCESS;
}

/* The executors of every set (forward, and reverse when asked), on a block
 * of tags free on every rank. Collective. */
static halo_status plan_executors(halo_plan P) {
  const halo_settings *s = &P->set;
  const int reverse = s->opts.reverse;
  int mine[2] = {halo_exec_tag_stride(&P->sched, s->max_count), P->sched.n_phases}, most[2];
  if (reverse) {
    const int r = halo_exec_tag_stride(&P->rsched, s->max_count);
    if (r > mine[0]) mine[0] = r;
  }
  HALO_MPI(MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, P->ctx->comm));
  const int64_t per_exec = (int64_t)most[0] * most[1], n_exec = (int64_t)P->n_sets * (1 + reverse);
  /* and one more: a failed exchange's notice to the plan's peers (exchange.c) */
  HALO_CHECK(halo_context_tags_reserve(P->ctx, per_exec * n_exec + 1, &P->tag_base));
  P->n_tags = (int)(per_exec * n_exec + 1);
  halo_exec_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.transport = P->transport;
  cfg.comm = P->ctx->comm;
  cfg.node_comm = P->topo->node_comm;
  cfg.tag_stride = most[0];
  cfg.max_count = s->max_count;
  cfg.timeout_ms = s->timeout_ms;
  cfg.unit_max = s->unit_max;
  cfg.leaves = &P->leaves;
  cfg.dev = P->dev;
  cfg.comp = P->comp;
  cfg.ipc_signal = s->ipc_signal;
  cfg.state = &P->ctx->transport_state[P->transport];
  /* what every rank released of the transports' state since the last plan (rma: the windows
   * of plans destroyed on every rank) */
  HALO_CHECK(halo_agree(P->ctx->comm,
                        halo_transport_states_collect(P->ctx->transport_state, P->ctx->comm)));
  const halo_exec_ops *ops = halo_exec_backend(P->memory, P->transport);
  HALO_CHECK(halo_agree(P->ctx->comm,
                        ops ? HALO_SUCCESS
                            : HALO_ERROR(HALO_ERR_INTERNAL,
                                         "a device plan without halo's CUDA module loaded")));
  for (int i = 0, e = 0; i < P->n_sets; i++) {
    halo_slot *set = &P->sets[i];
    set->handle.plan = P;
    set->handle.slot = i;
    cfg.tag_base = P->tag_base + (int)(per_exec * e++);
    cfg.tl = i == 0 ? P->tl : NULL; /* the plan's own exchange: halo_spmv's */
    cfg.copy_timing = i == 0 && s->copy_timing;
    HALO_CHECK(halo_agree(P->ctx->comm, halo_exec_create(ops, &P->sched, &cfg, &set->fwd)));
    if (!reverse) continue;
    cfg.tag_base = P->tag_base + (int)(per_exec * e++);
    cfg.tl = NULL;
    cfg.copy_timing = 0;
    HALO_CHECK(halo_agree(P->ctx->comm, halo_exec_create(ops, &P->rsched, &cfg, &set->rev)));
  }
  return HALO_SUCCESS;
}

/* The local products of a device plan made from a matrix. */
static halo_status plan_products(halo_plan P) {
  const halo_settings *s = &P->set;
  if (!P->A || P->memory != HALO_MEMORY_DEVICE) return HALO_SUCCESS;
  halo_spmv_device_options o = {.cusparse = s->local_kernel == HALO_LOCAL_KERNEL_CUSPARSE,
                                .cusparse_alg = s->cusparse_alg,
                                .group = s->spmv_group,
                                .unroll = s->spmv_unroll,
                                .max_blocks = s->spmv_max_blocks,
                                .carveout = s->spmv_carveout,
                                .long_row = s->spmv_long_row,
                                .transpose = s->opts.reverse};
  return halo_agree(P->ctx->comm, halo_spmv_device_create(P->comp, P->A, &o, &P->dsp));
}

halo_status halo_plan_build(halo_context *ctx, halo_matrix A, const halo_plan_input *in,
                            const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_plan P = NULL;
  halo_settings s;
  halo_pattern own_pattern;
  const halo_pattern *pattern = in->pattern;
  int *node_of_send[HALO_MAX_PHASES] = {0};
  double part[HALO_SETUP_N_PARTS + 1] = {0}; /* each part, then the whole */
  const double t0 = halo_wtime();
  double t = t0;
#define PART_DONE(k) (part[k] += halo_wtime() - t, t = halo_wtime())
  memset(&own_pattern, 0, sizeof own_pattern);
  st = halo_settings_resolve(opts, &s);
  if (in->trial) s.timeline = s.copy_timing = 0;
  if (st == HALO_SUCCESS) {
    P = halo_calloc(1, sizeof *P);
    if (!P) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a plan");
  }
  HALO_TRY(halo_agree(ctx->comm, st));
  halo_context_retain(ctx);
  P->ctx = ctx;
  HALO_TRY(halo_settings_agree(ctx->comm, &s));
  if (A) {
    halo_matrix_retain(A);
    P->A = A;
  }
  P->n_local = in->n_local;
  P->n_slots = in->leaves && !halo_leaves_identity(in->leaves) ? in->leaves->n : in->n_ghost;
  if (in->leaves) st = halo_leaves_copy(in->leaves, &P->leaves);
  P->leaves.n_ghost = in->n_ghost;
  HALO_TRY(halo_agree(ctx->comm, st));
  P->memory = s.opts.memory == HALO_MEMORY_AUTO ? (A ? A->mem : HALO_MEMORY_HOST) : s.opts.memory;
  P->later = HALO_TRANSPORT_AUTO;
  /* strategy auto with transport auto chooses the transport too (host memory: host, or rma
   * where the parameters have rma.*) */
  const int transport_deferred =
      s.opts.strategy == HALO_STRATEGY_AUTO && s.opts.transport == HALO_TRANSPORT_AUTO;
  HALO_TRY(plan_memory(P, &s, transport_deferred, s.nccl_background && in->switcher));
  HALO_TRY(halo_context_topology(ctx, s.opts.ranks_per_node, &P->topo));
  PART_DONE(HALO_SETUP_CONTEXT);
  if (!pattern && A && A->pattern_kept && in->ghost_ids == A->ghost_ids)
    pattern = &A->pattern; /* a later plan of the matrix */
  if (!pattern) {
    HALO_TRY(
        halo_pattern_create(ctx->comm, in->col_ranges, in->ghost_ids, in->n_ghost, &own_pattern));
    patterns_learned++;
    pattern = &own_pattern;
    if (A && in->ghost_ids == A->ghost_ids) { /* kept for the matrix's later plans */
      A->pattern = own_pattern;
      A->pattern_kept = 1;
      memset(&own_pattern, 0, sizeof own_pattern);
      pattern = &A->pattern;
    }
  }
  PART_DONE(HALO_SETUP_PATTERN);
  P->set = s; /* what halo_plan_params reads */
  if (s.opts.strategy == HALO_STRATEGY_AUTO && !in->choose)
    HALO_TRY(HALO_ERROR(HALO_ERR_INTERNAL, "a plan of strategy auto without its chooser"));
  if (s.opts.strategy == HALO_STRATEGY_AUTO)
    HALO_TRY(in->choose(P, in, pattern, &s, transport_deferred));
  P->set = s;
  PART_DONE(HALO_SETUP_CHOICE);
  /* agreed: a rank that cannot schedule must not leave the others in the
   * handshake */
  if (in->schedule) { /* made already, for these options */
    P->sched = *in->schedule;
    memset(in->schedule, 0, sizeof *in->schedule);
  } else if (!P->sched_made) {
    HALO_TRY(halo_agree(ctx->comm, halo_plan_schedule(P, in, pattern, &s, &P->sched)));
  }
  if (P->later != HALO_TRANSPORT_AUTO) /* its state comes later: the switch to it */
    HALO_TRY(in->switcher(P, in, pattern, &s, P->later));
  halo_pattern_free(&own_pattern); /* the schedule holds all the exchange needs */
  PART_DONE(HALO_SETUP_SCHEDULE);
  st = halo_schedule_handshake(ctx->comm, P->topo, &P->sched, node_of_send);
  HALO_TRY(halo_agree(ctx->comm, st));
  if (s.opts.reverse) HALO_TRY(halo_agree(ctx->comm, halo_schedule_reverse(&P->sched, &P->rsched)));
  PART_DONE(HALO_SETUP_HANDSHAKE);
  P->n_sets = s.opts.max_exchanges;
  st = HALO_CALLOC(P->sets, P->n_sets);
  if (st == HALO_SUCCESS && P->memory == HALO_MEMORY_DEVICE && s.timeline)
    st = halo_timeline_create(P->comp, halo_device_exchange_stream(P->dev), &P->tl);
  HALO_TRY(halo_agree(ctx->comm, st));
  HALO_TRY(plan_executors(P));
  PART_DONE(HALO_SETUP_EXECUTORS);
  HALO_TRY(plan_products(P));
  PART_DONE(HALO_SETUP_PRODUCT);
  HALO_TRY(halo_schedule_stats(ctx->comm, P->topo, &P->sched, node_of_send, &P->stats));
  P->stats.s.remove_duplicates = s.opts.remove_duplicates;
  if (P->A && P->memory == HALO_MEMORY_DEVICE) {
    P->stats.s.long_rows = halo_spmv_device_long_rows(P->dsp);
    HALO_TRY_MPI(
        MPI_Allreduce(MPI_IN_PLACE, &P->stats.s.long_rows, 1, MPI_INT64_T, MPI_SUM, ctx->comm));
  }
  for (int k = 0; k < P->stats.s.n_phases; k++) P->stats.phase[k].transport = P->transport;
  PART_DONE(HALO_SETUP_STATS);
#undef PART_DONE
  {
    double most[HALO_SETUP_N_PARTS + 1];
    part[HALO_SETUP_N_PARTS] = halo_wtime() - t0;
    HALO_TRY_MPI(MPI_Allreduce(part, most, HALO_SETUP_N_PARTS + 1, MPI_DOUBLE, MPI_MAX, ctx->comm));
    memcpy(P->stats.setup_part_seconds, most, sizeof P->stats.setup_part_seconds);
    P->stats.s.setup_seconds = most[HALO_SETUP_N_PARTS];
  }
  *plan_p = P;
  P = NULL;
cleanup:
  for (int k = 0; k < HALO_MAX_PHASES; k++) halo_free(node_of_send[k]);
  halo_pattern_free(&own_pattern);
  plan_free(P);
  return st;
}

halo_status halo_plan_build_matrix(halo_matrix A, const halo_plan_options *opts,
                                   halo_plan_chooser choose, halo_plan_switcher switcher,
                                   halo_plan *plan_p) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "matrix is NULL");
  halo_status st = plan_p ? HALO_SUCCESS : HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  HALO_CHECK(halo_agree(A->comm, st));
  const halo_plan_input in = {.n_local = A->col_end - A->col_begin,
                              .col_ranges = A->col_ranges,
                              .n_ghost = A->n_ghost,
                              .ghost_ids = A->ghost_ids,
                              .choose = choose,
                              .switcher = switcher};
  return halo_plan_build(A->ctx, A, &in, opts, plan_p);
}
