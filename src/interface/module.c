/* The host side of halo's CUDA module (module.h): forward the calls of the
 * list to the module's table, which core/module.c loads (the first call that
 * needs the module opens it). Compiled only into the shared libhalo of a
 * build with CUDA. */
#include "interface/module.h"

/* The module, loaded at the first call; NULL with the reason recorded as the
 * last error (HALO_ERR_NOT_COMPILED) where it cannot be. */
static const halo_cuda_module *module_get(halo_status *st_p) {
  return (const halo_cuda_module *)halo_cuda_module_open(sizeof(halo_cuda_module), st_p);
}

/* The module where it is loaded already (the calls on an object it made). */
static const halo_cuda_module *module_now(void) {
  return (const halo_cuda_module *)halo_cuda_module_loaded();
}

#define HALO_FORWARD_S_(name, params, args)                                                        \
  halo_status name params {                                                                        \
    halo_status st;                                                                                \
    const halo_cuda_module *m = module_get(&st);                                                   \
    return m ? m->name args : st;                                                                  \
  }
#define HALO_FORWARD_V_(name, params, args)                                                        \
  void name params {                                                                               \
    const halo_cuda_module *m = module_now();                                                      \
    if (m) m->name args;                                                                           \
  }
#define HALO_FORWARD_R_(type, name, params, args, fallback)                                        \
  type name params {                                                                               \
    const halo_cuda_module *m = module_now();                                                      \
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

/* Collective: without the module on some rank, HALO_ERR_NOT_COMPILED on
 * every rank with the loader's reason recorded (the caller takes the
 * device's groups from the base set, measure.c). */
halo_status halo_measure_device(halo_measure *c) {
  halo_status st;
  const halo_cuda_module *m = module_get(&st);
  st = halo_agree(c->comm, st);
  if (st == HALO_SUCCESS) return m->measure_device(c);
  return st == HALO_ERR_MPI ? st : HALO_ERR_NOT_COMPILED; /* the reason stays recorded */
}
