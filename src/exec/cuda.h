/* Private to the CUDA executor: NCCL's error translation and the device
 * kernels of the exchange. Included only under src/exec. */
#ifndef HALO_EXEC_CUDA_H
#define HALO_EXEC_CUDA_H

#include "halo_cuda.h"
#if HALO_HAVE_NCCL
#include <nccl.h>
#endif

#if HALO_HAVE_NCCL
halo_status halo_error_nccl(ncclResult_t r, const char *call, const char *file, int line);
#define HALO_TRY_NCCL(call)                                                                        \
  do {                                                                                             \
    ncclResult_t halo_nccl_rc_ = (call);                                                           \
    if (halo_nccl_rc_ != ncclSuccess) {                                                            \
      st = halo_error_nccl(halo_nccl_rc_, #call, __FILE__, __LINE__);                              \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)
#endif

/* ---- kernels (cuda_kernels.cu); each returns the launch's error ---- */

/* Largest count of pieces of one halo_cuda_pull_u (the grid's y extent). */
#define HALO_CUDA_MAX_PIECES 65535

/* *flag (a peer's, through CUDA IPC) = value after the stream's earlier work,
 * unless the abort word (device memory) holds the release's 0x7f7f...: one
 * thread */
cudaError_t halo_cuda_post(uint64_t *flag, uint64_t value, const uint64_t *abort, cudaStream_t s);

/* out[i] = src(idx[i]): src(j) = x[j] for j < n_local, else work[j - n_local] */
cudaError_t halo_cuda_gather(double *out, const int32_t *idx, int64_t n, const double *x,
                             const double *work, int64_t n_local, cudaStream_t s);
/* dst(dst_idx[i]) = in[src_idx[i]]: dst(j) = ghost[j] for j < n_ghost, else work[j - n_ghost] */
cudaError_t halo_cuda_scatter(const double *in, const int32_t *src_idx, const int32_t *dst_idx,
                              int64_t n, double *ghost, double *work, int64_t n_ghost,
                              cudaStream_t s);
/* dst(dst_idx[i]) = src(src_idx[i]) in the two index spaces above */
cudaError_t halo_cuda_copy_map(const int32_t *src_idx, const int32_t *dst_idx, int64_t n,
                               const double *x, int64_t n_local, double *ghost, double *work,
                               int64_t n_ghost, cudaStream_t s);
/* For each u: dst(u_dst[u]) += the values named by refs[u_ptr[u] .. u_ptr[u+1]), in that
 * order; a ref >= 0 is recv[ref], -1-ref the source space's entry (x | work). The
 * destination space is dst (below n_dst) | work. One thread per destination: the same bits on
 * every run, and the same as the host's additions in the same order. */
cudaError_t halo_cuda_add_by_dst(const int32_t *u_dst, const int32_t *u_ptr, const int32_t *refs,
                                 int64_t n_u, const double *recv, const double *x, int64_t n_local,
                                 double *dst, double *work, int64_t n_dst, cudaStream_t s);
/* The n additions (dst[i], ref[i]) grouped by destination (cuda_group.cu): dst
 * becomes the u distinct destinations, rising, ref the references in that order
 * (each destination's in their order: a stable sort of keys below 2^end_bit),
 * u_ptr (n + 1 entries) the u + 1 offsets; *u_p = u. Synchronizes s. */
cudaError_t halo_cuda_group_adds(int32_t *dst, int32_t *ref, int64_t n, int end_bit, int32_t *u_ptr,
                                 int64_t *u_p, cudaStream_t s);
/* out[i] = ghost[to_ghost[i]] (the ghost slots of a forward exchange) */
cudaError_t halo_cuda_slot_gather(double *out, const double *ghost, const int32_t *to_ghost,
                                  int64_t n, cudaStream_t s);
/* ghost[j] = 0 + slots[slot[ptr[j]]] + ... in order (a reverse exchange's sources) */
cudaError_t halo_cuda_slot_sum(double *ghost, const double *slots, const int32_t *ptr,
                               const int32_t *slot, int64_t n_ghost, cudaStream_t s);

/* ---- units: entries of eb bytes, moved as words of ws bytes (8, 4, 2 or 1;
 * eb and every address a multiple of it); additions of per scalars of type
 * scalar (a halo_type: DOUBLE, FLOAT, INT32, INT64; BYTE inserts only) an
 * entry, summed (insert 0) or the last kept (insert 1) ---- */

/* out[i] = src(idx[i]) as halo_cuda_gather */
cudaError_t halo_cuda_gather_u(void *out, const int32_t *idx, int64_t n, const void *x,
                               const void *work, int64_t n_local, int64_t eb, int ws,
                               cudaStream_t s);
/* dst(dst_idx[i]) = src(src_idx[i]): src(j) = a[j] below n_a, else b[j - n_a]; dst(j) = c[j]
 * below n_c, else e[j - n_c]; src_idx NULL: a[i] */
cudaError_t halo_cuda_move_u(const int32_t *src_idx, const int32_t *dst_idx, int64_t n,
                             const void *a, const void *b, int64_t n_a, void *c, void *e,
                             int64_t n_c, int64_t eb, int ws, cudaStream_t s);
/* halo_cuda_add_by_dst for a unit */
cudaError_t halo_cuda_add_by_dst_u(const int32_t *u_dst, const int32_t *u_ptr, const int32_t *refs,
                                   int64_t n_u, const void *recv, const void *x, int64_t n_local,
                                   void *dst, void *work, int64_t n_dst, int scalar, int64_t per,
                                   int insert, cudaStream_t s);
/* out[omap[i]] = in[map[i]] (add: +=) where map[i] >= 0; map NULL: in[i], omap NULL: out[i] */
cudaError_t halo_cuda_deliver_u(void *out, const void *in, const int32_t *map, const int32_t *omap,
                                int64_t n, int scalar, int64_t per, int add, cudaStream_t s);
/* halo_cuda_slot_sum for a unit (insert: the last slot, or the ghost as it was) */
cudaError_t halo_cuda_slot_sum_u(void *ghost, const void *slots, const int32_t *ptr,
                                 const int32_t *slot, int64_t n_ghost, int scalar, int64_t per,
                                 int insert, cudaStream_t s);
/* A message of halo_cuda_pull_u: n words from src (a peer's buffer, opened
 * through CUDA IPC) to dst. */
typedef struct {
  const char *src;
  char *dst;
  int64_t n;
} halo_cuda_piece_u;
/* Copy every piece (the array in device memory; n_pieces at most
 * HALO_CUDA_MAX_PIECES; the longest of n_max words of ws bytes) in one
 * launch: a row of blocks per piece. */
cudaError_t halo_cuda_pull_u(const void *pieces, int n_pieces, int64_t n_max, int ws,
                             cudaStream_t s);

#endif
