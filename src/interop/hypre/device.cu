/* halo for hypre, device memory: what only hypre's C++ headers give, hypre's
 * compute stream; compiled when halo and the hypre it is built against both
 * have CUDA. */
#include <HYPRE_config.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_hypre_utilities.h"
#include "_hypre_utilities.hpp"

extern "C" {

void *hh_device_stream(void) { return (void *)hypre_HandleComputeStream(hypre_handle()); }

int hh_device_zero(void *p, size_t bytes, void *stream)
{
  return cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream) != cudaSuccess;
}

int hh_device_shared(MPI_Comm comm)
{
  /* this rank's GPU by its PCI address, among the ranks of its machine */
  char bus[32] = "";
  int dev = -1, size = 0, shared = 0, any = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != cudaSuccess)
    snprintf(bus, sizeof bus, "unknown-%d", dev), (void)cudaGetLastError();
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return 1;
  MPI_Comm_size(node, &size);
  char *all = (char *)malloc((size_t)size * sizeof bus);
  if (all && MPI_Allgather(bus, (int)sizeof bus, MPI_CHAR, all, (int)sizeof bus, MPI_CHAR, node) == MPI_SUCCESS) {
    int same = 0;
    for (int r = 0; r < size; r++) same += strncmp(all + (size_t)r * sizeof bus, bus, sizeof bus) == 0;
    shared = same > 1;
  } else {
    shared = 1; /* unknown: as if shared (staged serves both) */
  }
  free(all);
  MPI_Comm_free(&node);
  MPI_Allreduce(&shared, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}
}
