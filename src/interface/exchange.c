/* Exchanges: the plan's own (set 0) and the handles taken from its other
 * sets, forward and reverse. */
#include "interface/plan.h"

/* An exchange of P failed or timed out: no more exchanges; in device memory
 * whatever its streams wait for from peers is released, so that they drain,
 * and an rma window whose epoch may be open is never freed
 * (halo_exec_unblock). */
static int plan_fail(halo_plan P) {
  int all = 1;
  P->failed = 1;
  for (int i = 0; i < P->n_sets; i++) {
    all &= halo_exec_unblock(&P->sets[i].fwd);
    all &= halo_exec_unblock(&P->sets[i].rev);
  }
  return all;
}

halo_status halo_slot_begin(halo_plan P, int slot, int reverse, const double *src, double *dst) {
  halo_slot *set = &P->sets[slot];
  if (P->failed)
    return HALO_ERROR(HALO_ERR_STATE, "an earlier exchange of this plan failed (its messages may "
                                      "still be on their way): destroy the plan");
  if (set->state != HALO_SLOT_IDLE)
    return HALO_ERROR(HALO_ERR_STATE, "%s",
                      slot ? "this exchange is already in flight: call halo_exchange_wait first"
                           : "an exchange of this plan is already in flight: call "
                             "halo_exchange_end (or halo_exchange_reverse_end) first");
  if (reverse && !P->set.opts.reverse)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made with reverse = 0: no reverse exchange");
  if (!reverse && !src && P->n_local > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_local is NULL but this rank owns %lld entries",
                      (long long)P->n_local);
  if (reverse && !dst && P->n_local > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_local is NULL but this rank owns %lld entries",
                      (long long)P->n_local);
  if (reverse && !src) src = set->fwd.slots; /* the exchange's own ghost slots */
  if (!reverse && dst == set->fwd.slots) dst = NULL;
  const halo_status st = halo_exec_begin(reverse ? &set->rev : &set->fwd, src, dst);
  if (st != HALO_SUCCESS) {
    plan_fail(P);
    return st;
  }
  set->state = reverse ? HALO_SLOT_REVERSE : HALO_SLOT_FORWARD;
  return HALO_SUCCESS;
}

halo_status halo_slot_end(halo_plan P, int slot) {
  halo_slot *set = &P->sets[slot];
  if (set->state == HALO_SLOT_IDLE)
    return HALO_ERROR(HALO_ERR_STATE, "%s",
                      slot ? "this exchange is not in flight: start it first"
                           : "no exchange of this plan is in flight: call halo_exchange_begin (or "
                             "halo_exchange_reverse_begin) first");
  const int reverse = set->state == HALO_SLOT_REVERSE;
  set->state = HALO_SLOT_IDLE;
  const halo_status st = halo_exec_end(reverse ? &set->rev : &set->fwd);
  if (st != HALO_SUCCESS) plan_fail(P);
  return st;
}

halo_status halo_exchange_begin(halo_plan plan, const double *x_local, double *x_ghost) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return halo_slot_begin(plan, 0, 0, x_local, x_ghost);
}

halo_status halo_exchange_end(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->sets[0].state == HALO_SLOT_REVERSE)
    return HALO_ERROR(HALO_ERR_STATE, "the plan's own exchange in flight is a reverse one: call "
                                      "halo_exchange_reverse_end");
  return halo_slot_end(plan, 0);
}

halo_status halo_exchange_reverse_begin(halo_plan plan, const double *x_ghost, double *x_local) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return halo_slot_begin(plan, 0, 1, x_ghost, x_local);
}

halo_status halo_exchange_reverse_end(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->sets[0].state == HALO_SLOT_FORWARD)
    return HALO_ERROR(HALO_ERR_STATE, "the plan's own exchange in flight is a forward one: call "
                                      "halo_exchange_end");
  return halo_slot_end(plan, 0);
}

halo_status halo_plan_get_ghost(halo_plan plan, double **x_ghost_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!x_ghost_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_ghost_p is NULL");
  *x_ghost_p = plan->sets[0].fwd.slots;
  return HALO_SUCCESS;
}

halo_status halo_plan_synchronize(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->memory != HALO_MEMORY_DEVICE) return HALO_SUCCESS;
  void *const streams[2] = {halo_device_exchange_stream(plan->dev), plan->comp};
  const int64_t limit = plan->set.timeout_ms;
  const halo_status st = halo_device_streams_wait(streams, 2, limit);
  if (st != HALO_ERR_TIMEOUT) return st;
  /* past exchange_timeout_ms: the GPU waits for a peer. The plan fails (its
   * buffers may still be written by a late peer: kept by halo_plan_destroy),
   * its waits are released, and the GPU's work drains */
  const int released = plan_fail(plan);
  const halo_status drained = halo_device_streams_wait(streams, 2, limit);
  return HALO_ERROR(HALO_ERR_TIMEOUT,
                    "the GPU's work waited %lld ms for an exchange (exchange_timeout_ms): a peer "
                    "failed, stopped or is late; %s",
                    (long long)limit,
                    drained == HALO_SUCCESS
                        ? "its waits were released and the GPU is idle again (the plan's values "
                          "are not valid: destroy it)"
                    : released ? "its waits were released, but the GPU's work did not end within "
                                 "the limit again"
                               : "the GPU still waits: this plan forwards values it receives "
                                 "(transport ipc with its signals on the GPU, or nvshmem), and "
                                 "releasing its wait would hand its peers values never received; "
                                 "a late peer still releases it");
}

/* ---- exchange handles ---------------------------------------------------- */

halo_status halo_exchange_create(halo_plan plan, halo_exchange *ex_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!ex_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "ex_p is NULL");
  for (int i = 1; i < plan->n_sets; i++)
    if (!plan->sets[i].taken) {
      plan->sets[i].taken = 1;
      *ex_p = &plan->sets[i].handle;
      return HALO_SUCCESS;
    }
  return HALO_ERROR(HALO_ERR_STATE,
                    "all %d exchanges of the plan are taken (its own and %d handles): raise the "
                    "plan option max_exchanges",
                    plan->n_sets, plan->n_sets - 1);
}

halo_status halo_exchange_start(halo_exchange ex, const double *x_local, double *x_ghost) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_begin(ex->plan, ex->slot, 0, x_local, x_ghost);
}

halo_status halo_exchange_start_reverse(halo_exchange ex, const double *x_ghost, double *x_local) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_begin(ex->plan, ex->slot, 1, x_ghost, x_local);
}

halo_status halo_exchange_wait(halo_exchange ex) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_end(ex->plan, ex->slot);
}

halo_status halo_exchange_get_ghost(halo_exchange ex, double **x_ghost_p) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  if (!x_ghost_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_ghost_p is NULL");
  *x_ghost_p = ex->plan->sets[ex->slot].fwd.slots;
  return HALO_SUCCESS;
}

void halo_exchange_destroy(halo_exchange *ex_p) {
  if (!ex_p || !*ex_p) return;
  halo_exchange ex = *ex_p;
  halo_slot *set = &ex->plan->sets[ex->slot];
  if (set->state != HALO_SLOT_IDLE && !ex->plan->failed) (void)halo_slot_end(ex->plan, ex->slot);
  set->taken = 0;
  *ex_p = NULL;
}
