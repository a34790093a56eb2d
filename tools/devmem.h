/* Device buffers for the driver (CUDA runtime when compiled in). */
#ifndef HALO_TOOLS_DEVMEM_H
#define HALO_TOOLS_DEVMEM_H

#include <stddef.h>

/* Memory of the kind asked for: host (malloc) or device (cudaMalloc). NULL on failure. */
void *buf_alloc(int device, size_t bytes);
void buf_free(int device, void *p);
/* Copies between host and a buffer of the kind (a plain copy on the host). 0 on success. */
int buf_from_host(int device, void *dst, const void *src, size_t bytes);
int buf_to_host(int device, void *dst, const void *src, size_t bytes);
/* Fill with NaN (so that unwritten entries show). */
int buf_poison(int device, void *p, size_t bytes);

#endif
