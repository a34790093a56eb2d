/* Device measurements of `halo params measure` (tools/params_gpu.c, built
 * only with CUDA): cudaMemcpyAsync sweeps and device-aware messages through
 * halo's own exchange. No CUDA type appears here.
 *
 * Every function returns 0 on success and 1 on failure, with a message in
 * err (which names the failing CUDA or halo call and its error string). The
 * collective ones fail on every rank of their communicator together, so that
 * none is left waiting; a rank that did not fail itself says so in err. */
#ifndef HALO_TOOLS_PARAMS_GPU_H
#define HALO_TOOLS_PARAMS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "halo.h"


/* Visible CUDA devices; 0 when there are none or the runtime cannot tell
 * (why goes to err). Not collective. */
int params_gpu_count(char *err, size_t len);

/* Make device local_rank % count current for this process. Not collective. */
int params_gpu_select(int local_rank, int *device_p, char *err, size_t len);

/* cudaMemcpyAsync between pinned host and device memory on every rank of
 * comm at once (each on its current device and a stream of its own). For
 * each of the n sizes: the median over `iterations` copies (after `warmup`
 * untimed ones) of the slowest rank's time of one copy, from the issue of
 * the copy on a synchronised stream to the end of cudaStreamSynchronize.
 * h2d and d2h (n values each) are set on every rank. Collective over comm. */
int params_gpu_copies(MPI_Comm comm, const int64_t *sizes, int n, int iterations, int warmup,
                      double *h2d, double *d2h, char *err, size_t len);

/* Device-aware messages through halo on the two ranks of pair: for each
 * size (a multiple of 8 bytes), a matrix in device memory whose standard
 * exchange sends exactly one message of that size each way, planned with
 * the given transport and ranks_per_node; the median over `iterations` of
 * the slower rank's time of halo_exchange_begin + halo_exchange_end +
 * halo_plan_synchronize (after `warmup` untimed exchanges). t (n values) is
 * set on both ranks. Collective over pair. */
int params_gpu_messages(MPI_Comm pair, halo_transport transport, int ranks_per_node,
                        const int64_t *sizes, int n, int iterations, int warmup, double *t,
                        char *err, size_t len);

#endif
