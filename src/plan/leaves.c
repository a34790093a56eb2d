/* Ghost slots against the schedule's ghosts; see leaves.h. */
#include <string.h>

#include "plan/leaves.h"

void halo_leaves_free(halo_leaves *L) {
  if (!L) return;
  halo_free(L->to_ghost);
  halo_free(L->ptr);
  halo_free(L->slot);
  halo_free(L->own_slot);
  halo_free(L->own_index);
  memset(L, 0, sizeof *L);
}

halo_status halo_leaves_build(int64_t n, const int64_t *slot_ids, int64_t **ids_p,
                              int64_t *n_ids_p, halo_leaves *L) {
  halo_status st = HALO_SUCCESS;
  int64_t *ids = NULL, *keys = NULL, *order = NULL;
  memset(L, 0, sizeof *L);
  *ids_p = NULL;
  *n_ids_p = 0;
  int increasing = 1;
  for (int64_t i = 1; i < n && increasing; i++) increasing = slot_ids[i] > slot_ids[i - 1];
  HALO_TRY(HALO_ALLOC(ids, n));
  if (n) memcpy(ids, slot_ids, (size_t)n * sizeof *ids);
  if (increasing) {
    L->n_ghost = n;
    *ids_p = ids;
    *n_ids_p = n;
    return HALO_SUCCESS;
  }
  /* sort the slots by id (stable: equal ids keep increasing slot order) */
  HALO_TRY(HALO_ALLOC(keys, n));
  HALO_TRY(HALO_ALLOC(order, n));
  for (int64_t i = 0; i < n; i++) keys[i] = slot_ids[i], order[i] = i;
  HALO_TRY(halo_sort_i64_pairs(keys, order, n));
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) m += i == 0 || keys[i] != keys[i - 1];
  L->n = n;
  L->n_ghost = m;
  HALO_TRY(HALO_ALLOC(L->to_ghost, n));
  HALO_TRY(HALO_ALLOC(L->ptr, m + 1));
  HALO_TRY(HALO_ALLOC(L->slot, n));
  for (int64_t i = 0, j = -1; i < n; i++) {
    if (i == 0 || keys[i] != keys[i - 1]) {
      ids[++j] = keys[i];
      L->ptr[j] = i;
    }
    L->slot[i] = order[i];
    L->to_ghost[order[i]] = j;
  }
  L->ptr[m] = n;
  *ids_p = ids;
  *n_ids_p = m;
  ids = NULL;
cleanup:
  halo_free(order);
  halo_free(keys);
  halo_free(ids);
  if (st != HALO_SUCCESS) halo_leaves_free(L);
  return st;
}

halo_status halo_leaves_build_own(int64_t n, const int64_t *slot_ids, int64_t own_begin,
                                  int64_t own_end, int64_t **ids_p, int64_t *n_ids_p,
                                  halo_leaves *L) {
  halo_status st = HALO_SUCCESS;
  int64_t n_own = 0, *rid = NULL, *rpos = NULL;
  halo_leaves R;
  memset(&R, 0, sizeof R);
  for (int64_t i = 0; i < n; i++) n_own += slot_ids[i] >= own_begin && slot_ids[i] < own_end;
  if (n_own == 0) return halo_leaves_build(n, slot_ids, ids_p, n_ids_p, L);
  memset(L, 0, sizeof *L);
  *ids_p = NULL;
  *n_ids_p = 0;
  /* the other ranks' slots first, as leaves of their own, then mapped back */
  const int64_t nr = n - n_own;
  HALO_TRY(HALO_ALLOC(rid, nr));
  HALO_TRY(HALO_ALLOC(rpos, nr));
  HALO_TRY(HALO_ALLOC(L->own_slot, n_own));
  HALO_TRY(HALO_ALLOC(L->own_index, n_own));
  HALO_TRY(HALO_ALLOC(L->to_ghost, n));
  for (int64_t i = 0, r = 0, o = 0; i < n; i++) {
    if (slot_ids[i] >= own_begin && slot_ids[i] < own_end) {
      L->own_slot[o] = i;
      L->own_index[o++] = slot_ids[i] - own_begin;
      L->to_ghost[i] = -1;
    } else {
      rid[r] = slot_ids[i];
      rpos[r++] = i;
    }
  }
  L->n = n;
  L->n_own = n_own;
  HALO_TRY(halo_leaves_build(nr, rid, ids_p, n_ids_p, &R));
  L->n_ghost = *n_ids_p;
  HALO_TRY(HALO_ALLOC(L->ptr, L->n_ghost + 1));
  HALO_TRY(HALO_ALLOC(L->slot, nr));
  for (int64_t j = 0; j <= L->n_ghost; j++) L->ptr[j] = halo_leaves_identity(&R) ? j : R.ptr[j];
  for (int64_t t = 0; t < nr; t++) {
    const int64_t q = halo_leaves_identity(&R) ? t : R.slot[t]; /* its place among the others */
    L->slot[t] = rpos[q];
  }
  for (int64_t j = 0; j < L->n_ghost; j++)
    for (int64_t t = L->ptr[j]; t < L->ptr[j + 1]; t++) L->to_ghost[L->slot[t]] = j;
cleanup:
  halo_leaves_free(&R);
  halo_free(rid);
  halo_free(rpos);
  if (st != HALO_SUCCESS) {
    halo_leaves_free(L);
    halo_free(*ids_p);
    *ids_p = NULL;
    *n_ids_p = 0;
  }
  return st;
}

halo_status halo_leaves_copy(const halo_leaves *from, halo_leaves *to) {
  halo_status st = HALO_SUCCESS;
  memset(to, 0, sizeof *to);
  to->n = from->n;
  to->n_ghost = from->n_ghost;
  to->n_own = from->n_own;
  if (from->n == 0) return HALO_SUCCESS;
  const int64_t nr = from->n - from->n_own;
  HALO_TRY(HALO_ALLOC(to->to_ghost, from->n));
  HALO_TRY(HALO_ALLOC(to->ptr, from->n_ghost + 1));
  HALO_TRY(HALO_ALLOC(to->slot, nr));
  HALO_TRY(HALO_ALLOC(to->own_slot, from->n_own));
  HALO_TRY(HALO_ALLOC(to->own_index, from->n_own));
  memcpy(to->to_ghost, from->to_ghost, (size_t)from->n * sizeof *to->to_ghost);
  memcpy(to->ptr, from->ptr, (size_t)(from->n_ghost + 1) * sizeof *to->ptr);
  if (nr) memcpy(to->slot, from->slot, (size_t)nr * sizeof *to->slot);
  if (from->n_own) {
    memcpy(to->own_slot, from->own_slot, (size_t)from->n_own * sizeof *to->own_slot);
    memcpy(to->own_index, from->own_index, (size_t)from->n_own * sizeof *to->own_index);
  }
cleanup:
  if (st != HALO_SUCCESS) halo_leaves_free(to);
  return st;
}
