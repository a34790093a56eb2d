/* The module side of halo's CUDA module (module.h): the table libhalo.so
 * finds with dlsym, filled with this module's functions. Compiled only into
 * libhalo_cuda.so. */
#include "interface/module.h"

#define HALO_TABLE_S_(name, params, args)                 .name = name,
#define HALO_TABLE_V_(name, params, args)                 .name = name,
#define HALO_TABLE_R_(type, name, params, args, fallback) .name = name,

__attribute__((visibility("default"))) const halo_cuda_module halo_cuda_module_table = {
    .head = {.abi = HALO_CUDA_MODULE_ABI,
             .version = HALO_VERSION_STRING,
             .size = sizeof(halo_cuda_module),
             HALO_CUDA_MODULE_CORE_CALLS(HALO_TABLE_S_, HALO_TABLE_V_)},
    .device_create = halo_device_create,
    .measure_device = halo_measure_device,
    HALO_CUDA_MODULE_CALLS(HALO_TABLE_S_, HALO_TABLE_V_, HALO_TABLE_R_)};
