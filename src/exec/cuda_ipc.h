/* Transport ipc of the CUDA executor (cuda_ipc.c): what a communication
 * helper (cuda_helper.c), which runs its phases on the host, reaches of it.
 * The rest of its state is private to cuda_ipc.c. */
#ifndef HALO_EXEC_CUDA_IPC_H
#define HALO_EXEC_CUDA_IPC_H

#include "exec/cuda_exec.h"

/** Phase k's ipc receives, where it has some: copied from the senders'
 *  buffers (into device memory, or a helper's host memory) once they say
 *  their data is ready, then the senders told. */
halo_status halo_cuda_ipc_receive(halo_exec *ex, cuda_data *d, int k);
/** A helper's phase k: the host waits until those copies are done. */
halo_status halo_cuda_ipc_copied(halo_exec *ex, cuda_data *d, int k);

#endif
