/* Device buffers for the driver. The CUDA runtime is opened at the first
 * device buffer (dlopen), like libhalo's CUDA module: a host run of the
 * driver maps no CUDA library. */
#include "devmem.h"

#include <stdlib.h>
#include <string.h>

#include "halo.h"

#if HALO_HAVE_CUDA
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>

#ifndef HALO_CUDART_SONAME /* tools/CMakeLists.txt names the toolkit's major version */
#define HALO_CUDART_SONAME "libcudart.so"
#endif

static struct {
  int tried;
  __typeof__(&cudaMalloc) malloc_;
  __typeof__(&cudaFree) free_;
  __typeof__(&cudaMemcpy) memcpy_;
  __typeof__(&cudaMemset) memset_;
} rt;

/* The runtime's functions, found at the first call; 0 if it cannot be opened. */
static int runtime(void) {
  if (!rt.tried) {
    rt.tried = 1;
    void *lib = dlopen(HALO_CUDART_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (lib) {
      rt.malloc_ = (__typeof__(&cudaMalloc))(uintptr_t)dlsym(lib, "cudaMalloc");
      rt.free_ = (__typeof__(&cudaFree))(uintptr_t)dlsym(lib, "cudaFree");
      rt.memcpy_ = (__typeof__(&cudaMemcpy))(uintptr_t)dlsym(lib, "cudaMemcpy");
      rt.memset_ = (__typeof__(&cudaMemset))(uintptr_t)dlsym(lib, "cudaMemset");
    }
  }
  return rt.malloc_ && rt.free_ && rt.memcpy_ && rt.memset_;
}
#endif

void *buf_alloc(int device, size_t bytes) {
  if (!device) return malloc(bytes ? bytes : 8);
#if HALO_HAVE_CUDA
  void *p = NULL;
  return runtime() && rt.malloc_(&p, bytes ? bytes : 8) == cudaSuccess ? p : NULL;
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
  if (p && runtime()) rt.free_(p);
#endif
}

int buf_from_host(int device, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memcpy(dst, src, bytes), 0;
#if HALO_HAVE_CUDA
  return !runtime() || rt.memcpy_(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess;
#else
  return 1;
#endif
}

int buf_to_host(int device, void *dst, const void *src, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memcpy(dst, src, bytes), 0;
#if HALO_HAVE_CUDA
  return !runtime() || rt.memcpy_(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess;
#else
  return 1;
#endif
}

int buf_poison(int device, void *p, size_t bytes) {
  if (!bytes) return 0;
  if (!device) return memset(p, 0xff, bytes), 0;
#if HALO_HAVE_CUDA
  return !runtime() || rt.memset_(p, 0xff, bytes) != cudaSuccess;
#else
  return 1;
#endif
}
