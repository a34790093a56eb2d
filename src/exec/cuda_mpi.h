/* Transports staged and mpi-device of the CUDA executor (cuda_mpi.c): what
 * a communication helper (cuda_helper.c), which runs its phases on the host,
 * and the ipc transport's copies to a helper's host memory reach of them.
 * The rest of their state is private to cuda_mpi.c. */
#ifndef HALO_EXEC_CUDA_MPI_H
#define HALO_EXEC_CUDA_MPI_H

#include "exec/cuda_exec.h"

/** Phase k's pinned host buffers: the staged sends (channel 0, at their
 *  buf_off), and the receives that land in host memory (at their buf_off;
 *  every receive of a helper). */
double *halo_cuda_mpi_host_send(const cuda_data *d, int k);
double *halo_cuda_mpi_host_recv(const cuda_data *d, int k);

/** A helper's phase k: start its sends (packed into the host send buffer);
 *  wait for its receives (within exchange_timeout_ms). */
halo_status halo_cuda_mpi_start_sends(halo_exec *ex, cuda_data *d, int k);
halo_status halo_cuda_mpi_wait_receives(halo_exec *ex, cuda_data *d, int k);

#endif
