/* The host side of halo's CUDA module (module.h): find libhalo_cuda.so
 * beside this library, open it at the first call that needs it, check that
 * it was built from this version, and forward the calls of the list to its
 * table. Compiled only into the shared libhalo of a build with CUDA. */
#define _GNU_SOURCE /* dladdr */
#include "interface/module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static const halo_cuda_module *module;  /* set once it loaded */
static int module_tried;                /* a load was tried (and failed if module is NULL) */
static char module_why[HALO_ERROR_LEN]; /* why it did not load */

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

static void module_open(void) {
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
  const halo_cuda_module *m = (const halo_cuda_module *)dlsym(lib, HALO_CUDA_MODULE_SYMBOL);
  if (!m) {
    why("%s: no symbol %s: not halo's CUDA module", path, HALO_CUDA_MODULE_SYMBOL);
    return;
  }
  if (m->abi != HALO_CUDA_MODULE_ABI || m->size != sizeof *m || !m->version ||
      strcmp(m->version, HALO_VERSION_STRING) != 0) {
    why("%s was built from halo %s (module interface %d), this library is halo %s (interface "
        "%d): install both from one build",
        path, m->version ? m->version : "?", m->abi, HALO_VERSION_STRING, HALO_CUDA_MODULE_ABI);
    return;
  }
  module = m;
}

/* The module, loaded at the first call; NULL with the reason recorded as the
 * last error (HALO_ERR_NOT_COMPILED) where it cannot be. Thread-safe. */
static const halo_cuda_module *module_get(halo_status *st_p) {
  pthread_mutex_lock(&module_lock);
  if (!module_tried) {
    module_tried = 1;
    module_open();
  }
  const halo_cuda_module *m = module;
  pthread_mutex_unlock(&module_lock);
  *st_p = m ? HALO_SUCCESS : HALO_ERROR(HALO_ERR_NOT_COMPILED, "%s", module_why);
  return m;
}

/* ---- the forwarders ------------------------------------------------------ */

#define HALO_FORWARD_S_(name, params, args)                                                        \
  halo_status name params {                                                                        \
    halo_status st;                                                                                \
    const halo_cuda_module *m = module_get(&st);                                                   \
    return m ? m->name args : st;                                                                  \
  }
#define HALO_FORWARD_V_(name, params, args)                                                        \
  void name params {                                                                               \
    const halo_cuda_module *m = module;                                                            \
    if (m) m->name args;                                                                           \
  }
#define HALO_FORWARD_R_(type, name, params, args, fallback)                                        \
  type name params {                                                                               \
    const halo_cuda_module *m = module;                                                            \
    return m ? m->name args : (fallback);                                                          \
  }
HALO_CUDA_MODULE_CALLS(HALO_FORWARD_S_, HALO_FORWARD_V_, HALO_FORWARD_R_)

/* Collective: every rank loads the module or none goes on (a rank without it
 * would leave the others waiting in the device's collectives). */
halo_status halo_device_create(MPI_Comm comm, int device_id, halo_device **dev_p) {
  halo_status st;
  const halo_cuda_module *m = module_get(&st);
  HALO_CHECK(halo_agree(comm, st));
  return m->device_create(comm, device_id, dev_p);
}

/* Collective: without the module (on some rank) the device's groups come
 * from the base set, as in a build without CUDA. */
halo_status halo_measure_device(halo_measure *c) {
  halo_status st;
  const halo_cuda_module *m = module_get(&st);
  if ((st = halo_agree(c->comm, st)) != HALO_SUCCESS) {
    if (st == HALO_ERR_MPI) return st;
    char why[HALO_ERROR_LEN + 32];
    snprintf(why, sizeof why, "no CUDA module: %s", halo_last_error());
    halo_error_clear();
    halo_measure_device_from_base(c, why);
    return HALO_SUCCESS;
  }
  return m->measure_device(c);
}
