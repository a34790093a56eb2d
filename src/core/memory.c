/* Host memory of the library. Every allocation is counted so that tests can
 * assert that exchanges and products allocate nothing. Large blocks, once
 * freed, are kept for the next allocation they fit (below). */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "halo_impl.h"
#include "settings.h"

static atomic_llong halo_alloc_count;
/* failure injection (tests): the allocation that brings the count to this
 * number fails; 0: none */
static atomic_llong halo_alloc_fail_at;

/* HALO_DEBUG_FAIL_ALLOC, read at the first allocation */
static atomic_int fail_env_read;

/* Count one allocation; 1 when it is the one to fail. */
static int count_one(void) {
  if (!atomic_load_explicit(&fail_env_read, memory_order_relaxed)) {
    atomic_store(&fail_env_read, 1);
    const int64_t k = halo_settings_fail_alloc();
    if (k > 0) atomic_store(&halo_alloc_fail_at, (long long)k);
  }
  const long long n = atomic_fetch_add(&halo_alloc_count, 1) + 1;
  const long long at = atomic_load(&halo_alloc_fail_at);
  return at > 0 && n == at;
}

/* Freed blocks of at least CACHE_MIN bytes are kept, CACHE_SLOTS of them and
 * CACHE_MAX bytes at most (the oldest go first), and given to the next
 * allocation they fit without wasting more than its size. A plan's set-up
 * makes and frees host temporaries of tens of MB; malloc maps such blocks
 * anew, and the faults of their pages were a third of a later plan's set-up
 * on a million-row matrix (bench/results/setup.md). An allocation that fails
 * gives the kept blocks back and tries again. */
enum { CACHE_SLOTS = 16 };
#define CACHE_MIN ((size_t)1 << 20)
#define CACHE_MAX ((size_t)256 << 20)
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t size;
} cache[CACHE_SLOTS];
static int cache_n;
static size_t cache_total;

static void *cache_take(size_t bytes) {
  void *p = NULL;
  if (bytes < CACHE_MIN) return NULL;
  pthread_mutex_lock(&cache_lock);
  int best = -1;
  for (int i = 0; i < cache_n; i++)
    if (cache[i].size >= bytes && cache[i].size / 2 <= bytes &&
        (best < 0 || cache[i].size < cache[best].size))
      best = i;
  if (best >= 0) {
    p = cache[best].p;
    cache_total -= cache[best].size;
    memmove(&cache[best], &cache[best + 1], (size_t)(cache_n - best - 1) * sizeof cache[0]);
    cache_n--;
  }
  pthread_mutex_unlock(&cache_lock);
  return p;
}

/* Keep p; 0 where it is not kept (the caller frees it). */
static int cache_put(void *p) {
  const size_t size = malloc_usable_size(p);
  void *out[CACHE_SLOTS];
  int n_out = 0;
  if (size < CACHE_MIN || size > CACHE_MAX) return 0;
  pthread_mutex_lock(&cache_lock);
  while (cache_n == CACHE_SLOTS || cache_total + size > CACHE_MAX) {
    out[n_out++] = cache[0].p;
    cache_total -= cache[0].size;
    memmove(&cache[0], &cache[1], (size_t)(cache_n - 1) * sizeof cache[0]);
    cache_n--;
  }
  cache[cache_n].p = p, cache[cache_n++].size = size;
  cache_total += size;
  pthread_mutex_unlock(&cache_lock);
  for (int i = 0; i < n_out; i++) free(out[i]);
  return 1;
}

/* Give every kept block back; 1 if there was one. */
static int cache_flush(void) {
  void *out[CACHE_SLOTS];
  pthread_mutex_lock(&cache_lock);
  const int n = cache_n;
  for (int i = 0; i < n; i++) out[i] = cache[i].p;
  cache_n = 0, cache_total = 0;
  pthread_mutex_unlock(&cache_lock);
  for (int i = 0; i < n; i++) free(out[i]);
  return n > 0;
}

void *halo_malloc(size_t bytes) {
  if (count_one()) return NULL;
  void *p = cache_take(bytes);
  if (!p) p = malloc(bytes ? bytes : 1);
  if (!p && cache_flush()) p = malloc(bytes ? bytes : 1);
  return p;
}

void *halo_calloc(size_t count, size_t size) {
  if (count_one()) return NULL;
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = cache_take(count * size);
  if (p) return memset(p, 0, count * size);
  p = calloc(count ? count : 1, size ? size : 1);
  if (!p && cache_flush()) p = calloc(count ? count : 1, size ? size : 1);
  return p;
}

void *halo_realloc(void *p, size_t bytes) {
  if (count_one()) return NULL;
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q && cache_flush()) q = realloc(p, bytes ? bytes : 1);
  return q;
}

void halo_debug_fail_alloc(int64_t k) {
  atomic_store(&halo_alloc_fail_at, k > 0 ? (long long)halo_debug_alloc_count() + k : 0);
}

void halo_free(void *p) {
  if (p && !cache_put(p)) free(p);
}

int64_t halo_debug_alloc_count(void) { return (int64_t)atomic_load(&halo_alloc_count); }

void halo_debug_count_alloc(void) { atomic_fetch_add(&halo_alloc_count, 1); }

int halo_debug_alloc_fails(void) { return count_one(); }

/* CUDA calls checked through HALO_CUDA / HALO_TRY_CUDA (halo_cuda.h) */
static atomic_llong halo_cuda_count, halo_cuda_fail_at;

int halo_debug_cuda_fails(void) {
  const long long n = atomic_fetch_add_explicit(&halo_cuda_count, 1, memory_order_relaxed) + 1;
  const long long at = atomic_load_explicit(&halo_cuda_fail_at, memory_order_relaxed);
  return at > 0 && n == at;
}

int64_t halo_debug_cuda_count(void) { return (int64_t)atomic_load(&halo_cuda_count); }

void halo_debug_fail_cuda(int64_t k) {
  atomic_store(&halo_cuda_fail_at, k > 0 ? (long long)halo_debug_cuda_count() + k : 0);
}

halo_status halo_alloc_array(void **p, size_t count, size_t size, int zero) {
  *p = NULL;
  if (count == 0) return HALO_SUCCESS;
  if (size != 0 && count > SIZE_MAX / size)
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "allocation of %zu x %zu bytes overflows", count,
                      size);
  void *q = zero ? halo_calloc(count, size) : halo_malloc(count * size);
  if (!q)
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", count * size);
  *p = q;
  return HALO_SUCCESS;
}
