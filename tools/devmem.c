/* Device buffers for the driver. */
#include "devmem.h"

#include <stdlib.h>
#include <string.h>

#include "halo.h"

#if HALO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

void *buf_alloc(int device, size_t bytes) {
  if (!device) return malloc(bytes ? bytes : 8);
#if HALO_HAVE_CUDA
  void *p = NULL;
  return cudaMalloc(&p, bytes ? bytes : 8) == cudaSuccess ? p : NULL;
#else
  return NULL;
#endif
}

void buf_free(int device, void *p) {
  if (!device) {
    free(p);
    return;
  }
#if HALO_HAVE_CUDA
  if (p) cudaFree(p);
#endif
}

int buf_from_host(int device, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memcpy(dst, src, bytes), 0;
#if HALO_HAVE_CUDA
  return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess;
#else
  return 1;
#endif
}

int buf_to_host(int device, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memcpy(dst, src, bytes), 0;
#if HALO_HAVE_CUDA
  return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess;
#else
  return 1;
#endif
}

int buf_poison(int device, void *p, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memset(p, 0xff, bytes), 0;
#if HALO_HAVE_CUDA
  return cudaMemset(p, 0xff, bytes) != cudaSuccess;
#else
  return 1;
#endif
}
