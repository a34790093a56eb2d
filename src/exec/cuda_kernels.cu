/* Device kernels of the CUDA backend: pack, unpack and copies through index
 * maps (one launch per phase), and the pieces of the product around cuSPARSE. */
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

__global__ void scatter_add_kernel(double *y, const int32_t *__restrict__ rows,
                                   const double *__restrict__ v, int64_t n, double alpha) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[rows[i]] += alpha * v[i];
}

__global__ void scale_kernel(double *y, int64_t n, double beta) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = beta == 0.0 ? 0.0 : beta * y[i];
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

cudaError_t halo_cuda_scatter_add(double *y, const int32_t *rows, const double *v, int64_t n,
                                  double alpha, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  scatter_add_kernel<<<grid_for(n), kThreads, 0, s>>>(y, rows, v, n, alpha);
  return cudaGetLastError();
}

cudaError_t halo_cuda_scale(double *y, int64_t n, double beta, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  scale_kernel<<<grid_for(n), kThreads, 0, s>>>(y, n, beta);
  return cudaGetLastError();
}

} // extern "C"
