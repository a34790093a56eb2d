/* Chunks of device or pinned host memory carved into buffers, first fit, for
 * the device's IPC arena and pinned buffers (device.c): a later plan takes its
 * buffers from the chunks earlier plans made. CUDA only. */
#ifndef HALO_EXEC_DEVICE_POOL_H
#define HALO_EXEC_DEVICE_POOL_H

#include "halo_impl.h"

#include "exec/device.h"

typedef struct {
  size_t off, len;
} pool_range;

typedef struct {
  char *base;
  size_t size;
  int n_free, cap_free;
  pool_range *free; /* by offset, never adjacent */
  int exported;     /* IPC chunks: handle holds the chunk's handle */
  unsigned char handle[HALO_IPC_HANDLE_BYTES];
} pool_chunk;

typedef struct {
  int pinned; /* cudaMallocHost, else cudaMalloc */
  size_t min_chunk;
  int n, cap;
  pool_chunk *c;
} chunk_pool;

/** A buffer of `bytes` (rounded up to 256) at *p: its chunk and offset in it;
 *  bytes 0 gives NULL. */
halo_status halo_pool_alloc(chunk_pool *pl, size_t bytes, void **p, int *chunk_p, size_t *off_p);
/** Give a buffer back (its size), merged with its free neighbours. NULL-safe. */
void halo_pool_release(chunk_pool *pl, void *p, size_t bytes);
/** Free every chunk. */
void halo_pool_free(chunk_pool *pl);

#endif
