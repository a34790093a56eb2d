/* Device memory of the library, counted with the host allocations; and the
 * translation of CUDA errors. Without CUDA, every call says it is not
 * compiled in. */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "halo_cuda.h"

halo_status halo_error_cuda(cudaError_t e, const char *call, const char *file, int line) {
  (void)cudaGetLastError(); /* clear a sticky launch error where possible */
  return halo_error_at(HALO_ERR_CUDA, file, line, "%.*s failed: %s (%s)", (int)strcspn(call, "("),
                       call, cudaGetErrorString(e), cudaGetErrorName(e));
}

halo_status halo_dev_malloc(void **p, size_t bytes) {
  *p = NULL;
  if (bytes == 0) return HALO_SUCCESS;
  cudaError_t e = halo_debug_alloc_fails() ? cudaErrorMemoryAllocation : cudaMalloc(p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    return halo_error_at(HALO_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                         "out of device memory allocating %zu bytes: %s", bytes,
                         cudaGetErrorString(e));
  }
  return HALO_SUCCESS;
}

void halo_dev_free(void *p) {
  if (p) cudaFree(p);
}

halo_status halo_pinned_malloc(void **p, size_t bytes) {
  *p = NULL;
  if (bytes == 0) return HALO_SUCCESS;
  cudaError_t e = halo_debug_alloc_fails() ? cudaErrorMemoryAllocation : cudaMallocHost(p, bytes);
  if (e != cudaSuccess) {
    *p = NULL;
    return halo_error_at(HALO_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                         "out of pinned host memory allocating %zu bytes: %s", bytes,
                         cudaGetErrorString(e));
  }
  return HALO_SUCCESS;
}

void halo_pinned_free(void *p) {
  if (p) cudaFreeHost(p);
}

halo_status halo_dev_to_host(void *dst, const void *src, size_t bytes) {
  if (bytes) HALO_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  return HALO_SUCCESS;
}

/* Complete on return. cudaMemcpy from pageable memory may return once the
 * values are staged, before they reach the device, and halo's streams do not
 * wait for the default stream (they are non-blocking): a kernel launched on
 * one right after could read the old contents (the reverse executor's
 * grouping, launched right after its maps' upload, did, now and then, with
 * ranks that time-share a GPU). */
halo_status halo_host_to_dev(void *dst, const void *src, size_t bytes) {
  if (!bytes) return HALO_SUCCESS;
  HALO_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  HALO_CUDA(cudaStreamSynchronize(0));
  return HALO_SUCCESS;
}

/* Zeros, complete on return, for the same reason. */
halo_status halo_dev_zero(void *dst, size_t bytes) {
  if (!bytes) return HALO_SUCCESS;
  HALO_CUDA(cudaMemset(dst, 0, bytes));
  HALO_CUDA(cudaStreamSynchronize(0));
  return HALO_SUCCESS;
}

halo_status halo_dev_pointer_kind(const void *p, int *is_device_p) {
  struct cudaPointerAttributes a;
  *is_device_p = 0;
  if (!p) return HALO_SUCCESS;
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return HALO_SUCCESS; /* not known to CUDA: host memory */
  }
  *is_device_p = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
  return HALO_SUCCESS;
}

halo_status halo_dev_current(int *device_p) {
  HALO_CUDA(cudaGetDevice(device_p));
  return HALO_SUCCESS;
}

halo_status halo_stream_create(cudaStream_t *s) {
  if (halo_debug_alloc_fails())
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA stream (injected)");
  HALO_CUDA(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  return HALO_SUCCESS;
}

halo_status halo_event_create(cudaEvent_t *e, unsigned flags) {
  if (halo_debug_alloc_fails())
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA event (injected)");
  HALO_CUDA(cudaEventCreateWithFlags(e, flags));
  return HALO_SUCCESS;
}

#else /* no CUDA */

halo_status halo_dev_malloc(void **p, size_t bytes) {
  *p = NULL;
  (void)bytes;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_dev_free(void *p) { (void)p; }
halo_status halo_pinned_malloc(void **p, size_t bytes) {
  *p = NULL;
  (void)bytes;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_pinned_free(void *p) { (void)p; }
halo_status halo_dev_to_host(void *dst, const void *src, size_t bytes) {
  (void)dst, (void)src, (void)bytes;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_host_to_dev(void *dst, const void *src, size_t bytes) {
  (void)dst, (void)src, (void)bytes;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_dev_zero(void *dst, size_t bytes) {
  (void)dst, (void)bytes;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_dev_pointer_kind(const void *p, int *is_device_p) {
  (void)p;
  *is_device_p = 0;
  return HALO_SUCCESS;
}
halo_status halo_dev_current(int *device_p) {
  *device_p = -1;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

#endif
