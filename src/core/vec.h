/* A growable array of int64 (vec.c): serialised plans, lists being built. */
#ifndef HALO_CORE_VEC_H
#define HALO_CORE_VEC_H

#include "halo_impl.h"

/** A growable array of int64 (serialised plans, lists being built). */
typedef struct {
  int64_t *v;
  int64_t n, cap;
} halo_vec;

/** Room for n more values (the array doubles). */
halo_status halo_vec_reserve(halo_vec *b, int64_t n);
/** One value more: inline where there is room, as lists are built a value at
 *  a time. */
static inline halo_status halo_vec_push(halo_vec *b, int64_t x) {
  if (b->n == b->cap) {
    const halo_status st = halo_vec_reserve(b, 1);
    if (st != HALO_SUCCESS) return st;
  }
  b->v[b->n++] = x;
  return HALO_SUCCESS;
}
halo_status halo_vec_append(halo_vec *b, const int64_t *x, int64_t n);
void halo_vec_free(halo_vec *b);

#endif
