/* The loader of halo's CUDA module (core/module.h): find libhalo_cuda.so
 * beside this library, open it at the first call that needs it, check that
 * it was built from this version, and forward the device-memory calls of the
 * planning code to its table. Compiled only into the shared libhalo of a
 * build with CUDA (elsewhere the device code is linked in). */
#define _GNU_SOURCE /* dladdr */
#include "module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER; /* the first load */
/* set once it loaded, never changed after: the calls of an SpMV read it without the lock */
static _Atomic(const halo_cuda_module_head *) module;
static int module_tried; /* a load was tried (and failed if module is NULL); under the lock */
static char module_why[HALO_ERROR_LEN];     /* why it did not load */

/* Why the module did not load (cut to fit). */
static void why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void why(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(module_why, sizeof module_why, fmt, ap);
  va_end(ap);
}

/* The directory this library was loaded from, with its slash ("" if unknown). */
static void library_dir(char *dir, size_t len) {
  Dl_info info;
  dir[0] = '\0';
  if (!dladdr((void *)library_dir, &info) || !info.dli_fname) return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return;
  size_t n = (size_t)(slash - info.dli_fname) + 1;
  if (n >= len) return;
  memcpy(dir, info.dli_fname, n);
  dir[n] = '\0';
}

static void module_load(void) {
  char dir[4096], path[4096 + 64];
  library_dir(dir, sizeof dir);
  if (snprintf(path, sizeof path, "%s%s", dir, HALO_CUDA_MODULE_FILE) >= (int)sizeof path) {
    why("the path of halo's CUDA module is too long: %s...", dir);
    return;
  }
  /* RTLD_NOW: a missing CUDA library or symbol fails here, with its name,
   * not at a later call; never closed (CUDA's libraries do not unload) */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    why("device memory needs halo's CUDA module %s, which did not load: %s", path,
        e ? e : "unknown reason");
    return;
  }
  const halo_cuda_module_head *m =
      (const halo_cuda_module_head *)dlsym(lib, HALO_CUDA_MODULE_SYMBOL);
  if (!m) {
    why("%s: no symbol %s: not halo's CUDA module", path, HALO_CUDA_MODULE_SYMBOL);
    return;
  }
  if (m->abi != HALO_CUDA_MODULE_ABI || !m->version ||
      strcmp(m->version, HALO_VERSION_STRING) != 0) {
    why("%s was built from halo %s (module interface %d), this library is halo %s (interface "
        "%d): install both from one build",
        path, m->version ? m->version : "?", m->abi, HALO_VERSION_STRING, HALO_CUDA_MODULE_ABI);
    return;
  }
  atomic_store_explicit(&module, m, memory_order_release);
}

const halo_cuda_module_head *halo_cuda_module_open(size_t size, halo_status *st_p) {
  const halo_cuda_module_head *m = atomic_load_explicit(&module, memory_order_acquire);
  if (!m) { /* not loaded yet, or it cannot be: the lock, once per process or per failure */
    pthread_mutex_lock(&module_lock);
    if (!module_tried) {
      module_tried = 1;
      module_load();
    }
    m = atomic_load_explicit(&module, memory_order_acquire);
    pthread_mutex_unlock(&module_lock);
  }
  if (!m) {
    *st_p = HALO_ERROR(HALO_ERR_NOT_COMPILED, "%s", module_why);
    return NULL;
  }
  if (size && m->size != size) {
    *st_p = HALO_ERROR(HALO_ERR_NOT_COMPILED,
                       "halo's CUDA module %s has a table of %zu bytes, this library expects %zu: "
                       "install both from one build",
                       HALO_CUDA_MODULE_FILE, m->size, size);
    return NULL;
  }
  *st_p = HALO_SUCCESS;
  return m;
}

const halo_cuda_module_head *halo_cuda_module_loaded(void) {
  return atomic_load_explicit(&module, memory_order_acquire);
}

/* ---- the device-memory calls of the planning code ------------------------ */

#define HALO_FORWARD_S_(name, params, args)                                                        \
  halo_status name params {                                                                        \
    halo_status st;                                                                                \
    const halo_cuda_module_head *m = halo_cuda_module_open(0, &st);                                \
    return m ? m->name args : st;                                                                  \
  }
#define HALO_FORWARD_V_(name, params, args)                                                        \
  void name params {                                                                               \
    const halo_cuda_module_head *m = halo_cuda_module_loaded();                                    \
    if (m) m->name args;                                                                           \
  }
HALO_CUDA_MODULE_CORE_CALLS(HALO_FORWARD_S_, HALO_FORWARD_V_)
