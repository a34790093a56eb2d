/* Device kernels of the CUDA executor: pack, unpack and copies through index
 * maps (one launch per phase); the reverse exchange's additions, one thread
 * per destination adding its values in a fixed order (no atomics: the same
 * bits on every run); the ghost slots' gathers and sums. */
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return (unsigned)(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

__global__ void gather_kernel(double *__restrict__ out, const int32_t *__restrict__ idx, int64_t n,
                              const double *__restrict__ x, const double *__restrict__ work,
                              int64_t n_local) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = idx[i];
    out[i] = j < n_local ? x[j] : work[j - n_local];
  }
}

__global__ void scatter_kernel(const double *__restrict__ in, const int32_t *__restrict__ src,
                               const int32_t *__restrict__ dst, int64_t n, double *ghost,
                               double *work, int64_t n_ghost) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = dst[i];
    const double v = in[src[i]];
    if (j < n_ghost) ghost[j] = v;
    else work[j - n_ghost] = v;
  }
}

__global__ void copy_map_kernel(const int32_t *__restrict__ src, const int32_t *__restrict__ dst,
                                int64_t n, const double *x, int64_t n_local, double *ghost,
                                double *work, int64_t n_ghost) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t a = src[i], b = dst[i];
    const double v = a < n_local ? x[a] : work[a - n_local];
    if (b < n_ghost) ghost[b] = v;
    else work[b - n_ghost] = v;
  }
}

// dst(u_dst[u]) += the values of refs[u_ptr[u] .. u_ptr[u+1]), in order: a
// ref >= 0 is a position of the receive buffer, -1-ref an index of the source
// space (x | work). The destination space is (dst | work).
__global__ void add_by_dst_kernel(const int32_t *__restrict__ u_dst,
                                  const int32_t *__restrict__ u_ptr,
                                  const int32_t *__restrict__ refs, int64_t n_u,
                                  const double *__restrict__ recv, const double *x,
                                  int64_t n_local, double *dst, double *work, int64_t n_dst) {
  for (int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; u < n_u;
       u += (int64_t)gridDim.x * blockDim.x) {
    const int64_t b = u_dst[u];
    double *to = b < n_dst ? dst + b : work + (b - n_dst);
    double v = *to;
    for (int32_t t = u_ptr[u]; t < u_ptr[u + 1]; t++) {
      const int64_t r = refs[t];
      if (r >= 0) {
        v += recv[r];
      } else {
        const int64_t a = -1 - r;
        v += a < n_local ? x[a] : work[a - n_local];
      }
    }
    *to = v;
  }
}

struct piece {
  const double *src;
  double *dst;
  int64_t n;
};

// One row of blocks (blockIdx.y) per piece, striding over its values.
__global__ void pull_kernel(const piece *__restrict__ pieces) {
  const piece p = pieces[blockIdx.y];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.n;
       i += (int64_t)gridDim.x * blockDim.x)
    p.dst[i] = p.src[i];
}

// A forwarding phase's ready signal: the exchange's number into a peer's
// flag, unless the exchange was abandoned (*abort set to 0x7f7f..., as the
// release writes it before the flags that released this stream; no number a
// peer writes is that large): then what the phase packed was never received.
__global__ void post_kernel(unsigned long long *flag, unsigned long long value,
                            const unsigned long long *abort) {
  if (*(volatile const unsigned long long *)abort == 0x7f7f7f7f7f7f7f7fULL) return;
  __threadfence_system();
  *(volatile unsigned long long *)flag = value;
}

__global__ void slot_gather_kernel(double *__restrict__ out, const double *__restrict__ ghost,
                                   const int32_t *__restrict__ to_ghost, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    out[i] = ghost[to_ghost[i]];
}

__global__ void slot_sum_kernel(double *__restrict__ ghost, const double *__restrict__ slots,
                                const int32_t *__restrict__ ptr, const int32_t *__restrict__ slot,
                                int64_t n_ghost) {
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n_ghost;
       j += (int64_t)gridDim.x * blockDim.x) {
    double sum = 0.0;
    for (int32_t t = ptr[j]; t < ptr[j + 1]; t++) sum += slots[slot[t]];
    ghost[j] = sum;
  }
}

} // namespace

extern "C" {

cudaError_t halo_cuda_gather(double *out, const int32_t *idx, int64_t n, const double *x,
                             const double *work, int64_t n_local, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  gather_kernel<<<grid_for(n), kThreads, 0, s>>>(out, idx, n, x, work, n_local);
  return cudaGetLastError();
}

cudaError_t halo_cuda_scatter(const double *in, const int32_t *src_idx, const int32_t *dst_idx,
                              int64_t n, double *ghost, double *work, int64_t n_ghost,
                              cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  scatter_kernel<<<grid_for(n), kThreads, 0, s>>>(in, src_idx, dst_idx, n, ghost, work, n_ghost);
  return cudaGetLastError();
}

cudaError_t halo_cuda_copy_map(const int32_t *src_idx, const int32_t *dst_idx, int64_t n,
                               const double *x, int64_t n_local, double *ghost, double *work,
                               int64_t n_ghost, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  copy_map_kernel<<<grid_for(n), kThreads, 0, s>>>(src_idx, dst_idx, n, x, n_local, ghost, work,
                                                   n_ghost);
  return cudaGetLastError();
}

cudaError_t halo_cuda_add_by_dst(const int32_t *u_dst, const int32_t *u_ptr, const int32_t *refs,
                                 int64_t n_u, const double *recv, const double *x,
                                 int64_t n_local, double *dst, double *work, int64_t n_dst,
                                 cudaStream_t s) {
  if (n_u <= 0) return cudaSuccess;
  add_by_dst_kernel<<<grid_for(n_u), kThreads, 0, s>>>(u_dst, u_ptr, refs, n_u, recv, x, n_local,
                                                       dst, work, n_dst);
  return cudaGetLastError();
}

cudaError_t halo_cuda_pull(const void *pieces, int n_pieces, int64_t n_max, cudaStream_t s) {
  if (n_pieces <= 0 || n_max <= 0) return cudaSuccess;
  int64_t bx = (n_max + kThreads - 1) / kThreads;
  if (bx > 64) bx = 64;
  pull_kernel<<<dim3((unsigned)bx, (unsigned)n_pieces), kThreads, 0, s>>>(
      static_cast<const piece *>(pieces));
  return cudaGetLastError();
}

cudaError_t halo_cuda_post(uint64_t *flag, uint64_t value, const uint64_t *abort, cudaStream_t s) {
  post_kernel<<<1, 1, 0, s>>>(reinterpret_cast<unsigned long long *>(flag),
                              static_cast<unsigned long long>(value),
                              reinterpret_cast<const unsigned long long *>(abort));
  return cudaGetLastError();
}

cudaError_t halo_cuda_slot_gather(double *out, const double *ghost, const int32_t *to_ghost,
                                  int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  slot_gather_kernel<<<grid_for(n), kThreads, 0, s>>>(out, ghost, to_ghost, n);
  return cudaGetLastError();
}

cudaError_t halo_cuda_slot_sum(double *ghost, const double *slots, const int32_t *ptr,
                               const int32_t *slot, int64_t n_ghost, cudaStream_t s) {
  if (n_ghost <= 0) return cudaSuccess;
  slot_sum_kernel<<<grid_for(n_ghost), kThreads, 0, s>>>(ghost, slots, ptr, slot, n_ghost);
  return cudaGetLastError();
}

} // extern "C"
