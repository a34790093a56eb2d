/* Private: CUDA, cuSPARSE and NCCL calls translated into halo_status at the
 * call site. Included only by the CUDA backend (src/core/device.c, src/exec,
 * src/spmv), never by the planning code. */
#ifndef HALO_CUDA_H
#define HALO_CUDA_H

#include <cuda_runtime.h>

#include "halo_impl.h"

halo_status halo_error_cuda(cudaError_t e, const char *call, const char *file, int line);

/* Each checked call is counted, and the one failure injection names fails
 * without being made (halo_debug_fail_cuda). HALO_CUDA_RC gives the result of
 * such a call to a site that handles it itself (agreed with the other ranks
 * before it returns). */
#define HALO_CUDA_RC(call) (halo_debug_cuda_fails() ? cudaErrorUnknown : (call))

#define HALO_CUDA(call)                                                                            \
  do {                                                                                             \
    cudaError_t halo_cuda_rc_ = HALO_CUDA_RC(call);                                                \
    if (halo_cuda_rc_ != cudaSuccess)                                                              \
      return halo_error_cuda(halo_cuda_rc_, #call, __FILE__, __LINE__);                            \
  } while (0)

#define HALO_TRY_CUDA(call)                                                                        \
  do {                                                                                             \
    cudaError_t halo_cuda_rc_ = HALO_CUDA_RC(call);                                                \
    if (halo_cuda_rc_ != cudaSuccess) {                                                            \
      st = halo_error_cuda(halo_cuda_rc_, #call, __FILE__, __LINE__);                              \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)

/* Streams and events made through these are counted like allocations. */
halo_status halo_stream_create(cudaStream_t *s);
halo_status halo_event_create(cudaEvent_t *e, unsigned flags);

#endif
