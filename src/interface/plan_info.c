/* What a plan tells: its sizes, statistics, model, description, AUTO's
 * candidates, timeline and copy times; the nodes of a communicator. */
#include <string.h>

#include "interface/plan.h"

halo_status halo_plan_get_sizes(halo_plan plan, int64_t *n_local_p, int64_t *n_ghost_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (n_local_p) *n_local_p = plan->n_local;
  if (n_ghost_p) *n_ghost_p = plan->n_slots;
  return HALO_SUCCESS;
}

halo_status halo_plan_stats(halo_plan plan, halo_stats *stats_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!stats_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "stats_p is NULL");
  *stats_p = halo_plan_acting(plan)->stats.s;
  stats_p->setup_seconds = plan->stats.s.setup_seconds; /* the plan's own making */
  return HALO_SUCCESS;
}

halo_status halo_plan_phase_stats(halo_plan plan, int phase, halo_phase_stats *stats_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!stats_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "stats_p is NULL");
  const halo_plan A = halo_plan_acting(plan);
  const int n = A->stats.s.n_phases;
  if (phase < 0 || phase >= n)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "phase %d: the plan has phases 0 to %d", phase, n - 1);
  *stats_p = A->stats.phase[phase];
  return HALO_SUCCESS;
}

halo_status halo_plan_setup_part_seconds(halo_plan plan, halo_setup_part part, double *seconds_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!seconds_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "seconds_p is NULL");
  if ((int)part < 0 || (int)part >= HALO_SETUP_N_PARTS)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "set-up part %d: the parts are 0 (%s) to %d (%s)",
                      (int)part, halo_setup_part_name((halo_setup_part)0), HALO_SETUP_N_PARTS - 1,
                      halo_setup_part_name((halo_setup_part)(HALO_SETUP_N_PARTS - 1)));
  *seconds_p = plan->stats.setup_part_seconds[part];
  return HALO_SUCCESS;
}

halo_status halo_plan_model(halo_plan plan, const char *params, int max_phases,
                            double *phase_seconds_p, double *seconds_p) {
  halo_status st = HALO_SUCCESS;
  halo_params prm;
  halo_model_rank *ranks = NULL;
  double phase[HALO_MAX_PHASES], total = 0.0;
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!seconds_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "seconds_p is NULL");
  if (phase_seconds_p && max_phases < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "max_phases = %d: at least 0", max_phases);
  const MPI_Comm comm = plan->ctx->comm;
  HALO_CHECK(halo_plan_params(plan, params, &prm));
  st = HALO_ALLOC(ranks, plan->ctx->size);
  HALO_TRY(halo_agree(comm, st));
  const int device = plan->memory == HALO_MEMORY_DEVICE;
  const halo_plan A = halo_plan_acting(plan);
  HALO_TRY(halo_choose_ranks(comm, plan->topo, &prm, device, halo_plan_is_helper(plan),
                             device ? halo_device_ranks_per_gpu(plan->dev) : 1, A->transport,
                             ranks));
  HALO_TRY(halo_choose_model(comm, plan->topo, &prm, A->transport, &A->sched, ranks, phase,
                             &total));
  for (int k = 0; phase_seconds_p && k < max_phases; k++)
    phase_seconds_p[k] = k < HALO_MAX_PHASES ? phase[k] : 0.0;
  *seconds_p = total;
cleanup:
  halo_free(ranks);
  return st;
}

halo_status halo_plan_describe(halo_plan plan, char *buf, size_t len) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!buf || len == 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "no buffer to describe into");
  const halo_plan A = halo_plan_acting(plan);
  halo_choice_describe(&plan->choice, A->sched.strategy, A->transport, A->sched.message_cap_used,
                       buf, len);
  return HALO_SUCCESS;
}

halo_status halo_plan_get_candidates(halo_plan plan, int max, halo_candidate *candidates, int *n_p,
                                     int *best_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!n_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "n_p is NULL");
  if (max < 0 || (max > 0 && !candidates))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "no room for %d candidates", max);
  const halo_choice *ch = &plan->choice;
  for (int i = 0; i < ch->n && i < max; i++) candidates[i] = ch->c[i];
  *n_p = ch->n;
  if (best_p) *best_p = ch->n ? ch->best : -1;
  return HALO_SUCCESS;
}

halo_status halo_plan_timeline(halo_plan plan, double seconds[3], int64_t *n_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!seconds || !n_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "seconds or n_p is NULL");
  if (!plan->tl)
    return HALO_ERROR(HALO_ERR_STATE,
                      "the plan was made without the setting device.timeline (a device "
                      "plan; HALO_TIMELINE=1)");
  return halo_timeline_read(plan->tl, seconds, n_p);
}

halo_status halo_plan_copy_times(halo_plan plan, double *seconds_down_p, double *seconds_up_p,
                                 int64_t *bytes_down_p, int64_t *bytes_up_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!seconds_down_p || !seconds_up_p || !bytes_down_p || !bytes_up_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "an output of halo_plan_copy_times is NULL");
  halo_exec *ex = halo_plan_own(plan);
  if (!ex->ops->copy_times || !plan->set.copy_timing)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made without the setting staged.copy_timing (a "
                                      "device plan; HALO_EXEC_TIMING=1)");
  return ex->ops->copy_times(ex, seconds_down_p, seconds_up_p, bytes_down_p, bytes_up_p);
}

halo_status halo_comm_get_node_info(MPI_Comm comm, int ranks_per_node, halo_node_info *info_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  halo_plan_options o = halo_plan_options_default();
  halo_settings s;
  const halo_topology *t;
  if (!info_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "info_p is NULL");
  if (ranks_per_node < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "ranks_per_node = %d: 0 (nodes of MPI) or positive",
                      ranks_per_node);
  o.ranks_per_node = ranks_per_node;
  HALO_CHECK(halo_context_get(comm, &ctx));
  st = halo_settings_resolve(&o, &s);
  HALO_TRY(halo_agree(ctx->comm, st));
  HALO_TRY(halo_context_topology(ctx, s.opts.ranks_per_node, &t));
  info_p->node = t->node_index;
  info_p->n_nodes = t->n_nodes;
  info_p->local_rank = t->node_rank;
  info_p->local_size = t->node_size;
  info_p->max_local_size = t->max_node_size;
cleanup:
  halo_context_release(&ctx);
  return st;
}

halo_status halo_status_agree(MPI_Comm comm, halo_status status) {
  HALO_CHECK(halo_comm_check(comm, "the communicator"));
  return halo_agree(comm, status);
}
