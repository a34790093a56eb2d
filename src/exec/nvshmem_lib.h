/* libhalo_nvshmem: the NVSHMEM part of the CUDA executor, in a library of
 * its own because NVSHMEM's device code must be linked with the kernels
 * that call it (relocatable device code and a device link against
 * libnvshmem_device.a), which the rest of halo does not need. Plain C
 * types only: halo's C code calls it; every function returns 0 or an error
 * whose text halo_nvshmem_error() gives. Transport nvshmem (cuda_nvshmem.c)
 * is its only user. */
#ifndef HALO_EXEC_NVSHMEM_LIB_H
#define HALO_EXEC_NVSHMEM_LIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HALO_NV_API __attribute__((visibility("default")))
#else
#define HALO_NV_API
#endif

/** Bytes of NVSHMEM's unique id (the bootstrap's rendezvous). */
#define HALO_NV_UID_BYTES 256

/** The text of the last error of this library. */
HALO_NV_API const char *halo_nvshmem_error(void);
/** NVSHMEM's version, "major.minor.patch" of the library loaded. */
HALO_NV_API const char *halo_nvshmem_version(void);
/** Whether NVSHMEM is initialised in this process (by halo or its caller). */
HALO_NV_API int halo_nvshmem_initialized(void);
/** Processes per GPU as NVSHMEM runs them: 0 one a GPU, 1 several in its
 *  limited mode (no MPS, or MPS with the GPU's active thread percentages
 *  adding up past 100: synchronising calls may deadlock), 2 several in its
 *  full mode. */
HALO_NV_API int halo_nvshmem_mpg(void);
/** A unique id (on one rank; sent to the others by the caller). */
HALO_NV_API int halo_nvshmem_get_uid(unsigned char uid[HALO_NV_UID_BYTES]);
/** Initialise NVSHMEM over nranks processes of which this is rank, from a
 *  unique id (collective over them). Never exits the process. */
HALO_NV_API int halo_nvshmem_init(int rank, int nranks, const unsigned char uid[HALO_NV_UID_BYTES]);
/** This process's PE and the number of PEs. */
HALO_NV_API int halo_nvshmem_my_pe(void);
HALO_NV_API int halo_nvshmem_n_pes(void);
/** Collective over every PE: symmetric memory (NULL on failure), its
 *  release, and the end of NVSHMEM. */
HALO_NV_API void *halo_nvshmem_malloc(size_t bytes);
HALO_NV_API void halo_nvshmem_free(void *p);
HALO_NV_API void halo_nvshmem_finalize(void);
/** Complete this PE's puts issued so far (host call). */
HALO_NV_API void halo_nvshmem_quiet(void);

/* An exchange's number e (1, 2, ...) is read by every kernel from the
 * executor's counter in device memory (e = *ep + 1), and halo_nvshmem_finish
 * advances the counter at the exchange's end: a captured CUDA graph replays
 * correct numbers. */

/** One block of a phase's pack-and-put launch: n values of the packed send
 *  buffer from off on (packed from the source through the pack map at the
 *  same positions), put to dst (a symmetric address: the receiver's receive
 *  buffer) with 1 added to the receiver's ready signal sig; the block waits
 *  first until the receiver wrote the previous exchange's number into done
 *  (our signal: it has read the previous values). */
typedef struct {
  int64_t off, n;
  double *dst;
  uint64_t *sig;
  uint64_t *done;
  int pe;
} halo_nv_put;

/** A receive of a phase: the stream waits until its ready signal reaches
 *  the exchange's number times its number of blocks (puts). */
typedef struct {
  uint64_t *sig;
  int64_t puts;
} halo_nv_wait;

/** An acknowledgement: the exchange's number into the sender's done signal
 *  (a symmetric address) on PE pe, once the receive buffer is read. */
typedef struct {
  uint64_t *done;
  int pe;
} halo_nv_ack;

/** Values per block of a pack-and-put launch: a message goes in pieces, in
 *  parallel over as many blocks (one block's stores cross NVLink at a small
 *  part of its bandwidth). */
#define HALO_NV_BLOCK_VALUES 1024

/* Waits on the GPU: where ranks share a GPU (shared != 0), one block of
 * each launch waits for the peers and the work waits for that block, so that
 * a rank's waiting blocks never hold the SMs that a peer's puts on the same
 * GPU need; with a GPU per rank every block of a launch waits for its own
 * signals, which saves a launch. */

/** Pack and put a phase's messages (n_blocks blocks of puts, in device
 *  memory) on stream: each value i of the send buffer is run[i] when idx is
 *  NULL, else x[idx[i]] below n_local, work[idx[i] - n_local] above. ep: the
 *  executor's counter; ep[2] nonzero: the exchange failed and its waits were
 *  released, nothing is put. */
HALO_NV_API int halo_nvshmem_pack_put(const halo_nv_put *puts, int n_blocks, const int32_t *idx,
                                      const double *run, const double *x, const double *work,
                                      int64_t n_local, double *send, const uint64_t *ep,
                                      int shared, void *stream);
/** The stream waits (on the GPU, one block) for n receives of the exchange. */
HALO_NV_API int halo_nvshmem_wait(const halo_nv_wait *w, int n, const uint64_t *ep, void *stream);
/** A forward phase's end in one launch: wait for n_wait receives, then
 *  dst(dst_idx[i]) = in[src_idx[i]] for i < n, dst(j) = ghost[j] below
 *  n_ghost, work[j - n_ghost] above; with count (a zeroed counter of the
 *  executor's), also the exchange's end: the last block done sends the n_acks
 *  acknowledgements and advances the counter. */
HALO_NV_API int halo_nvshmem_wait_scatter(const halo_nv_wait *w, int n_wait, uint64_t *ep,
                                          const double *in, const int32_t *src_idx,
                                          const int32_t *dst_idx, int64_t n, double *ghost,
                                          double *work, int64_t n_ghost, const halo_nv_ack *acks,
                                          int n_acks, unsigned int *count, int shared,
                                          void *stream);
/** The exchange's end, after the stream's work: n acknowledgements, then the
 *  counter advanced. */
HALO_NV_API int halo_nvshmem_finish(const halo_nv_ack *a, int n, uint64_t *ep, void *stream);

#ifdef __cplusplus
}
#endif

#endif
