/* Host memory of the library. Every allocation is counted so that tests can
 * assert that exchanges and products allocate nothing. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

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

void *halo_malloc(size_t bytes) {
  if (count_one()) return NULL;
  return malloc(bytes ? bytes : 1);
}

void *halo_calloc(size_t count, size_t size) {
  if (count_one()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *halo_realloc(void *p, size_t bytes) {
  if (count_one()) return NULL;
  return realloc(p, bytes ? bytes : 1);
}

void halo_debug_fail_alloc(int64_t k) {
  atomic_store(&halo_alloc_fail_at, k > 0 ? (long long)halo_debug_alloc_count() + k : 0);
}

void halo_free(void *p) { free(p); }

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
