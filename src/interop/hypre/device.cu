/* halo for hypre, device memory: what only hypre's C++ headers give, hypre's
 * compute stream; compiled when halo and the hypre it is built against both
 * have CUDA. */
#include <HYPRE_config.h>

#include "_hypre_utilities.h"
#include "_hypre_utilities.hpp"

extern "C" {

void *hh_device_stream(void) { return (void *)hypre_HandleComputeStream(hypre_handle()); }

int hh_device_zero(void *p, size_t bytes, void *stream)
{
  return cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream) != cudaSuccess;
}
}
