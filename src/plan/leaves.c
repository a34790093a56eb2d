/* Ghost slots against the schedule's ghosts; see leaves.h. */
#include <string.h>

#include "plan/leaves.h"

void halo_leaves_free(halo_leaves *L) {
  if (!L) return;
  halo_free(L->to_ghost);
  halo_free(L->ptr);
  halo_free(L->slot);
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

halo_status halo_leaves_copy(const halo_leaves *from, halo_leaves *to) {
  halo_status st = HALO_SUCCESS;
  memset(to, 0, sizeof *to);
  to->n = from->n;
  to->n_ghost = from->n_ghost;
  if (from->n == 0) return HALO_SUCCESS;
  HALO_TRY(HALO_ALLOC(to->to_ghost, from->n));
  HALO_TRY(HALO_ALLOC(to->ptr, from->n_ghost + 1));
  HALO_TRY(HALO_ALLOC(to->slot, from->n));
  memcpy(to->to_ghost, from->to_ghost, (size_t)from->n * sizeof *to->to_ghost);
  memcpy(to->ptr, from->ptr, (size_t)(from->n_ghost + 1) * sizeof *to->ptr);
  memcpy(to->slot, from->slot, (size_t)from->n * sizeof *to->slot);
cleanup:
  if (st != HALO_SUCCESS) halo_leaves_free(to);
  return st;
}
