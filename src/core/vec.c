/* The growable array of int64 (vec.h). */
#include <string.h>

#include "vec.h"

halo_status halo_vec_reserve(halo_vec *b, int64_t n) {
  if (b->n + n <= b->cap) return HALO_SUCCESS;
  int64_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + n) cap *= 2;
  int64_t *q = halo_realloc(b->v, (size_t)cap * sizeof *q);
  if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory growing a list");
  b->v = q;
  b->cap = cap;
  return HALO_SUCCESS;
}

halo_status halo_vec_append(halo_vec *b, const int64_t *x, int64_t n) {
  if (n <= 0) return HALO_SUCCESS;
  HALO_CHECK(halo_vec_reserve(b, n));
  memcpy(b->v + b->n, x, (size_t)n * sizeof *x);
  b->n += n;
  return HALO_SUCCESS;
}

void halo_vec_free(halo_vec *b) {
  halo_free(b->v);
  b->v = NULL;
  b->n = b->cap = 0;
}
