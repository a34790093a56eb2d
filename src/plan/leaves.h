/* Ghost slots in the caller's order against the schedule's ghosts: an
 * exchange-only plan may list its ghosts in any order and more than once;
 * the schedule receives each id once, in increasing order. Pure data, no
 * MPI. */
#ifndef HALO_PLAN_LEAVES_H
#define HALO_PLAN_LEAVES_H

#include "halo_impl.h"

typedef struct {
  int64_t n;         /* ghost slots of the caller; 0: the slots are the ghosts (identity) */
  int64_t n_ghost;   /* ghosts of the schedule */
  int64_t *to_ghost; /* n: the ghost of each slot; -1: a slot of this rank's own entry */
  int64_t *ptr;      /* n_ghost+1: the slots of ghost j are slot[ptr[j] .. ptr[j+1]) */
  int64_t *slot;     /* n - n_own, each ghost's slots in increasing order */
  /* slots naming an entry of this rank: no ghost of the schedule; the plan copies them while
   * the messages are in flight (own_slot increasing, own_index the entry of x_local) */
  int64_t n_own;
  int64_t *own_slot, *own_index;
} halo_leaves;

/**
 * The sorted unique ids of n slot ids (ids_p, n_ids_p) and the map between
 * them. When the slot ids are strictly increasing already, L is the identity
 * (L->n = 0) and no map is made.
 */
halo_status halo_leaves_build(int64_t n, const int64_t *slot_ids, int64_t **ids_p,
                              int64_t *n_ids_p, halo_leaves *L);

/**
 * halo_leaves_build where slot ids in [own_begin, own_end) are this rank's
 * own entries: they are not ghosts (not in ids_p) but L's own slots, with
 * their entries (id - own_begin). Without such ids, halo_leaves_build.
 */
halo_status halo_leaves_build_own(int64_t n, const int64_t *slot_ids, int64_t own_begin,
                                  int64_t own_end, int64_t **ids_p, int64_t *n_ids_p,
                                  halo_leaves *L);

/** Whether the slots are the ghosts themselves. */
static inline int halo_leaves_identity(const halo_leaves *L) { return !L || L->n == 0; }

/** A copy of from (the plan keeps its own). */
halo_status halo_leaves_copy(const halo_leaves *from, halo_leaves *to);

void halo_leaves_free(halo_leaves *L);

#endif
