/* NVSHMEM over one communicator, for its device state (device.c): the
 * initialisation from a unique id, the PE of each rank, and the symmetric
 * chunks that executors take (device.h: halo_device_nvshmem*). Built with
 * CUDA; without NVSHMEM every call says it is not compiled in. */
#ifndef HALO_EXEC_DEVICE_NVSHMEM_H
#define HALO_EXEC_DEVICE_NVSHMEM_H

#include "halo_impl.h"

typedef struct halo_nv_state_s halo_nv_state;

/** Collective over comm: NVSHMEM initialised from a unique id where no one
 *  did, or checked where the process did (the same processes). */
halo_status halo_nv_state_create(MPI_Comm comm, halo_nv_state **s_p);
/** Collective, as the context's end: the chunks freed; NVSHMEM ended with the
 *  last state of the process that used it. NULL-safe. */
void halo_nv_state_destroy(halo_nv_state **s_p);
/** The PE of a rank of comm (-1: no state). */
int halo_nv_state_pe(const halo_nv_state *s, int rank);
/** Collective over comm: a whole chunk of at least bytes (halo_device_nvshmem_alloc). */
halo_status halo_nv_state_alloc(halo_nv_state *s, MPI_Comm comm, size_t bytes, void **p,
                                int *chunk_p);
/** Collective over comm, where ranks share a GPU: NVSHMEM's full mode for
 *  several processes a GPU on every rank, or an error that says what it needs. */
halo_status halo_nv_state_shared_gpu(const halo_nv_state *s, MPI_Comm comm, int ranks_per_gpu);
/** This rank's address of chunk c (NULL: no such chunk). */
char *halo_nv_state_base(const halo_nv_state *s, int chunk);
/** Give back a chunk. NULL-safe. */
void halo_nv_state_release(halo_nv_state *s, void *p);

#endif
