/* Chunks carved into buffers (see device_pool.h). */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/cuda.h"
#include "exec/device_pool.h"

enum { POOL_ALIGN = 256 };
_Static_assert(sizeof(cudaIpcMemHandle_t) == HALO_IPC_HANDLE_BYTES, "an IPC handle's size");

static size_t pool_round(size_t bytes) {
  return (bytes + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
}

static halo_status range_insert(pool_chunk *c, int at, size_t off, size_t len) {
  if (c->n_free == c->cap_free) {
    int cap = c->cap_free ? 2 * c->cap_free : 8;
    pool_range *q = halo_realloc(c->free, (size_t)cap * sizeof *q);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping free buffers");
    c->free = q, c->cap_free = cap;
  }
  memmove(&c->free[at + 1], &c->free[at], (size_t)(c->n_free - at) * sizeof *c->free);
  c->free[at] = (pool_range){off, len};
  c->n_free++;
  return HALO_SUCCESS;
}

/* First fit over the chunks; a new chunk (at least min_chunk, in 2 MiB) when
 * none has room. */
halo_status halo_pool_alloc(chunk_pool *pl, size_t bytes, void **p, int *chunk_p, size_t *off_p) {
  *p = NULL;
  if (bytes == 0) return HALO_SUCCESS;
  bytes = pool_round(bytes);
  for (int k = 0; k < pl->n; k++) {
    pool_chunk *c = &pl->c[k];
    for (int i = 0; i < c->n_free; i++) {
      pool_range *r = &c->free[i];
      if (r->len < bytes) continue;
      const size_t off = r->off;
      r->off += bytes, r->len -= bytes;
      if (r->len == 0) {
        memmove(r, r + 1, (size_t)(c->n_free - i - 1) * sizeof *r);
        c->n_free--;
      }
      *p = c->base + off, *chunk_p = k, *off_p = off;
      return HALO_SUCCESS;
    }
  }
  if (pl->n == pl->cap) {
    int cap = pl->cap ? 2 * pl->cap : 4;
    pool_chunk *q = halo_realloc(pl->c, (size_t)cap * sizeof *q);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping buffers");
    pl->c = q, pl->cap = cap;
  }
  const size_t mib2 = (size_t)2 << 20;
  size_t size = bytes > pl->min_chunk ? bytes : pl->min_chunk;
  size = (size + mib2 - 1) / mib2 * mib2;
  pool_chunk *c = &pl->c[pl->n];
  memset(c, 0, sizeof *c);
  HALO_CHECK(pl->pinned ? halo_pinned_malloc((void **)&c->base, size)
                        : halo_dev_malloc((void **)&c->base, size));
  c->size = size;
  halo_status st = size > bytes ? range_insert(c, 0, bytes, size - bytes) : HALO_SUCCESS;
  if (st != HALO_SUCCESS) {
    if (pl->pinned)
      halo_pinned_free(c->base);
    else
      halo_dev_free(c->base);
    return st;
  }
  *p = c->base, *chunk_p = pl->n, *off_p = 0;
  pl->n++;
  return HALO_SUCCESS;
}

/* Give a buffer back, merged with its free neighbours. */
void halo_pool_release(chunk_pool *pl, void *p, size_t bytes) {
  if (!p || bytes == 0) return;
  bytes = pool_round(bytes);
  for (int k = 0; k < pl->n; k++) {
    pool_chunk *c = &pl->c[k];
    if ((char *)p < c->base || (char *)p >= c->base + c->size) continue;
    size_t off = (size_t)((char *)p - c->base);
    int i = 0;
    while (i < c->n_free && c->free[i].off < off) i++;
    const int prev = i > 0 && c->free[i - 1].off + c->free[i - 1].len == off;
    const int next = i < c->n_free && off + bytes == c->free[i].off;
    if (prev && next) {
      c->free[i - 1].len += bytes + c->free[i].len;
      memmove(&c->free[i], &c->free[i + 1], (size_t)(c->n_free - i - 1) * sizeof *c->free);
      c->n_free--;
    } else if (prev) {
      c->free[i - 1].len += bytes;
    } else if (next) {
      c->free[i].off = off, c->free[i].len += bytes;
    } else if (range_insert(c, i, off, bytes) != HALO_SUCCESS) {
      halo_error_clear(); /* the buffer stays taken: memory kept, not lost */
    }
    return;
  }
}

void halo_pool_free(chunk_pool *pl) {
  for (int k = 0; k < pl->n; k++) {
    if (pl->pinned)
      halo_pinned_free(pl->c[k].base);
    else
      halo_dev_free(pl->c[k].base);
    halo_free(pl->c[k].free);
  }
  halo_free(pl->c);
  pl->c = NULL, pl->n = pl->cap = 0;
}

#endif /* HALO_HAVE_CUDA */
