/* halo's CUDA module, the part below every floor (interface/module.h is the
 * rest): in a shared build with CUDA, the device code is libhalo_cuda.so,
 * found beside libhalo.so and opened (dlopen) at the first call that needs
 * it. The module's table starts with a head this file declares: its ABI, the
 * version it was built from, its size, and the device-memory calls that the
 * planning code makes (halo_impl.h's halo_dev_*), which core/module.c
 * forwards; interface/module.c forwards the others. */
#ifndef HALO_CORE_MODULE_H
#define HALO_CORE_MODULE_H

#include "halo_impl.h"

/* Bumped whenever a list of calls or a signature in it changes. */
#define HALO_CUDA_MODULE_ABI 3

/* The module's file name (its soname), beside libhalo.so. */
#define HALO_STR_(x) #x
#define HALO_STR(x)  HALO_STR_(x)
#define HALO_CUDA_MODULE_FILE                                                                      \
  "libhalo_cuda.so." HALO_STR(HALO_VERSION_MAJOR) "." HALO_STR(HALO_VERSION_MINOR)

/* The symbol the module defines and dlsym finds. */
#define HALO_CUDA_MODULE_SYMBOL "halo_cuda_module_table"

/* Each line: S(name, (parameters), (arguments)) for a function returning
 * halo_status (the forwarder loads the module and returns its error where it
 * cannot), V(...) for one returning nothing (a no-op where the module is not
 * loaded: what it would free was never made). */
#define HALO_CUDA_MODULE_CORE_CALLS(S, V)                                                          \
  S(halo_dev_malloc, (void **p, size_t bytes), (p, bytes))                                         \
  V(halo_dev_free, (void *p), (p))                                                                 \
  S(halo_dev_to_host, (void *dst, const void *src, size_t bytes), (dst, src, bytes))               \
  S(halo_host_to_dev, (void *dst, const void *src, size_t bytes), (dst, src, bytes))               \
  S(halo_dev_pointer_kind, (const void *p, int *is_device_p), (p, is_device_p))                    \
  S(halo_dev_current, (int *device_p), (device_p))

#define HALO_MODULE_MEMBER_S_(name, params, args) halo_status(*name) params;
#define HALO_MODULE_MEMBER_V_(name, params, args) void(*name) params;
typedef struct {
  int abi;
  const char *version;
  size_t size; /* sizeof the whole table (interface/module.h) */
  HALO_CUDA_MODULE_CORE_CALLS(HALO_MODULE_MEMBER_S_, HALO_MODULE_MEMBER_V_)
} halo_cuda_module_head;

/** The module's table, loaded at the first call (thread-safe); NULL with the
 *  reason recorded as the last error (HALO_ERR_NOT_COMPILED naming the file)
 *  where it cannot be. size: the size of the whole table the caller reads (0:
 *  the head alone). Local. Compiled only into the shared libhalo of a build
 *  with CUDA. */
const halo_cuda_module_head *halo_cuda_module_open(size_t size, halo_status *st_p);

/** The table once loaded, else NULL; never loads. */
const halo_cuda_module_head *halo_cuda_module_loaded(void);

#endif
