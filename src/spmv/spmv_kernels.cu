/* The local product's kernels. halo's CSR product kernel: a group of G
 * threads per row (G a power of two chosen from the mean row length), the
 * entries and column ids streamed past the cache so that x stays in L2, a
 * fixed reduction order (the same bits on every run). With a row list it adds
 * alpha*A*x to the listed rows of y (the off-diagonal block keeps only its
 * non-empty rows). Rows longer than a bound chosen at plan time are split:
 * each is cut into tiles of kTile entries, one warp per tile, in the first
 * blocks of the same launch (or in a launch of their own when the short rows
 * are many); a warp's partial sum goes to a slot of its own, and the warp
 * that finishes a row last (a counter per row) adds the row's partials in
 * tile order, so the bits do not depend on which warp comes last. The
 * transpose's kernel: one thread per column, its entries in row order
 * through a permutation of the values (the same bits on every run, no
 * atomics). And the pieces around cuSPARSE. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "spmv/long_rows.h"

namespace {

template <int G, int U, typename I>
__device__ __forceinline__ void
row_step(int64_t t, int64_t n_rows, const I *__restrict__ row_ptr, const I *__restrict__ cols,
         const double *__restrict__ vals, const double *__restrict__ x, double alpha, double beta,
         double *__restrict__ y, const int32_t *__restrict__ rows, int64_t long_above) {
  const int64_t r = t / G;
  const int lane = (int)(t % G);
  bool valid = r < n_rows;
  const int64_t start = valid ? (int64_t)row_ptr[r] : 0;
  int64_t end = valid ? (int64_t)row_ptr[r + 1] : 0;
  if (end - start > long_above) { /* a long row: the tiles' */
    valid = false;
    end = start;
  }
  double sum = 0.0;
  /* U entries per lane per step: their column ids and values are all loaded
   * before the first x is, so that several loads are in flight */
  for (int64_t base = start + lane; base < end; base += (int64_t)G * U) {
    I c[U];
    double v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int64_t k = base + (int64_t)u * G;
      c[u] = k < end ? __ldcs(cols + k) : (I)0;
      v[u] = k < end ? __ldcs(vals + k) : 0.0;
    }
#pragma unroll
    for (int u = 0; u < U; u++)
      if (base + (int64_t)u * G < end) sum += v[u] * __ldg(x + (int64_t)c[u]);
  }
#pragma unroll
  for (int off = G / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, G);
  if (valid && lane == 0) {
    if (rows) y[rows[r]] += alpha * sum;
    else y[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[r];
  }
}

/* The long rows: warp w takes tile w, entries [kTile*j, kTile*(j+1)) of long
 * row i = tile_row[w] (j = w - tile_ptr[i]), each lane kPerLane of them,
 * lane-strided so that the warp's loads coalesce; all column ids and values
 * of a lane are loaded before its first x. A row of one tile is written at
 * once; otherwise the warp's sum goes to partial[w] and the last warp of the
 * row (count[i]) sums partial[tile_ptr[i] .. tile_ptr[i+1]) in a fixed order
 * (lane l the tiles l, l+32, ..., then the warp's tree), writes y and
 * clears the counter for the next product. */
constexpr int kPerLane = 8;
constexpr int kTile = 32 * kPerLane;
constexpr int kWarps = 256 / 32; /* tiles per block */

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

template <typename I>
__device__ __forceinline__ void
long_tile(int64_t w, int lane, const halo_cuda_long_rows &l, const I *__restrict__ row_ptr,
          const I *__restrict__ cols, const double *__restrict__ vals,
          const double *__restrict__ x, double alpha, double beta, double *__restrict__ y,
          const int32_t *__restrict__ rows) {
  if (w >= l.n_tiles) return; /* the whole warp */
  const int32_t i = l.tile_row[w];
  const int64_t r = l.long_rows[i];
  const int32_t first = l.tile_ptr[i], n_row_tiles = l.tile_ptr[i + 1] - first;
  const int64_t row_end = (int64_t)row_ptr[r + 1];
  const int64_t base = (int64_t)row_ptr[r] + (int64_t)(w - first) * kTile + lane;
  I c[kPerLane];
  double v[kPerLane];
#pragma unroll
  for (int u = 0; u < kPerLane; u++) {
    const int64_t k = base + (int64_t)u * 32;
    c[u] = k < row_end ? __ldcs(cols + k) : (I)0;
    v[u] = k < row_end ? __ldcs(vals + k) : 0.0;
  }
  double sum = 0.0;
#pragma unroll
  for (int u = 0; u < kPerLane; u++)
    if (base + (int64_t)u * 32 < row_end) sum += v[u] * __ldg(x + (int64_t)c[u]);
  sum = warp_sum(sum);
  if (n_row_tiles > 1) {
    unsigned last = 0;
    if (lane == 0) {
      l.partial[w] = sum;
      __threadfence(); /* the partial is seen before the count */
      last = atomicAdd(l.count + i, 1u) == (unsigned)(n_row_tiles - 1);
    }
    if (!__shfl_sync(0xffffffffu, last, 0)) return;
    __threadfence();
    sum = 0.0;
    for (int32_t t = lane; t < n_row_tiles; t += 32) sum += __ldcg(l.partial + first + t);
    sum = warp_sum(sum);
    if (lane == 0) l.count[i] = 0;
  }
  if (lane == 0) {
    if (rows) y[rows[r]] += alpha * sum;
    else y[r] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[r];
  }
}

/* The short rows (rows of more than long_above entries are left alone). */
template <int G, int U, typename I>
__global__ void __launch_bounds__(256)
    csr_group_kernel(int64_t n_rows, const I *__restrict__ row_ptr, const I *__restrict__ cols,
                     const double *__restrict__ vals, const double *__restrict__ x, double alpha,
                     double beta, double *__restrict__ y, const int32_t *__restrict__ rows,
                     int64_t long_above) {
  /* one pass when the grid covers the rows; a capped grid strides (the
   * bound is the same for the whole block, so every lane shuffles) */
  const int64_t stride = (int64_t)gridDim.x * blockDim.x, n_threads = n_rows * G;
  for (int64_t t0 = blockIdx.x * (int64_t)blockDim.x; t0 < n_threads; t0 += stride)
    row_step<G, U, I>(t0 + threadIdx.x, n_rows, row_ptr, cols, vals, x, alpha, beta, y, rows,
                      long_above);
}

/* The long rows' tiles alone, a warp per tile. */
template <typename I>
__global__ void __launch_bounds__(256)
    csr_long_kernel(const I *__restrict__ row_ptr, const I *__restrict__ cols,
                    const double *__restrict__ vals, const double *__restrict__ x, double alpha,
                    double beta, double *__restrict__ y, const int32_t *__restrict__ rows,
                    halo_cuda_long_rows l) {
  long_tile<I>(blockIdx.x * (int64_t)kWarps + threadIdx.x / 32, (int)(threadIdx.x % 32), l,
               row_ptr, cols, vals, x, alpha, beta, y, rows);
}

/* Both parts in one launch: the first long_blocks blocks take the long rows'
 * tiles, the others the short rows (the long rows come as scalars, like the
 * short kernel's bound: a struct argument made the short rows' loop slower). */
template <int G, int U, typename I>
__global__ void __launch_bounds__(256)
    csr_fused_kernel(int64_t n_rows, const I *__restrict__ row_ptr, const I *__restrict__ cols,
                     const double *__restrict__ vals, const double *__restrict__ x, double alpha,
                     double beta, double *__restrict__ y, const int32_t *__restrict__ rows,
                     int64_t long_above, int64_t n_tiles, const int32_t *__restrict__ long_rows,
                     const int32_t *__restrict__ tile_ptr, const int32_t *__restrict__ tile_row,
                     double *partial, unsigned *count, unsigned long_blocks) {
  if (blockIdx.x < long_blocks) {
    const halo_cuda_long_rows l = {long_above, n_tiles, long_rows, tile_ptr, tile_row, partial,
                                   count};
    long_tile<I>(blockIdx.x * (int64_t)kWarps + threadIdx.x / 32, (int)(threadIdx.x % 32), l,
                 row_ptr, cols, vals, x, alpha, beta, y, rows);
    return;
  }
  const int64_t stride = (int64_t)(gridDim.x - long_blocks) * blockDim.x, n_threads = n_rows * G;
  for (int64_t t0 = (blockIdx.x - long_blocks) * (int64_t)blockDim.x; t0 < n_threads;
       t0 += stride)
    row_step<G, U, I>(t0 + threadIdx.x, n_rows, row_ptr, cols, vals, x, alpha, beta, y, rows,
                      long_above);
}

/* One launch for both parts while the short rows take at most this many
 * blocks (a second launch costs more than the product of so few rows);
 * beyond, two launches (measured on an H100, bench_local: one launch 16 us
 * against two 21 us for irregular:200000 (3,125 blocks), 72 against 71 for
 * irregular:1000000 (15,625), 152 against 133 for irregular:2000000; the
 * last not profiled). */
constexpr int64_t kFusedBlocks = 8192;

template <int U, typename I>
cudaError_t launch_u(int group, int64_t n_rows, const void *row_ptr, const void *cols,
                     const double *vals, const double *x, double alpha, double beta, double *y,
                     const int32_t *rows, const halo_cuda_long_rows &l, int64_t max_blocks,
                     cudaStream_t s) {
  const int threads = 256;
  int64_t blocks = (n_rows * group + threads - 1) / threads;
  if (max_blocks > 0 && blocks > max_blocks) blocks = max_blocks;
  const int64_t long_blocks = (l.n_tiles + kWarps - 1) / kWarps;
  if (blocks + long_blocks > INT32_MAX) return cudaErrorInvalidValue;
  const bool fused = long_blocks > 0 && blocks <= kFusedBlocks;
  const unsigned grid = (unsigned)(blocks + (fused ? long_blocks : 0)), lb = (unsigned)long_blocks;
  const I *rp = (const I *)row_ptr, *c = (const I *)cols;
  if (long_blocks > 0 && !fused)
    csr_long_kernel<I><<<lb, threads, 0, s>>>(rp, c, vals, x, alpha, beta, y, rows, l);
  switch (group) {
#define CASE(g)                                                                                    \
  case g:                                                                                          \
    if (fused)                                                                                     \
      csr_fused_kernel<g, U, I><<<grid, threads, 0, s>>>(                                          \
          n_rows, rp, c, vals, x, alpha, beta, y, rows, l.above, l.n_tiles, l.long_rows,           \
          l.tile_ptr, l.tile_row, l.partial, l.count, lb);                                         \
    else                                                                                           \
      csr_group_kernel<g, U, I>                                                                    \
          <<<grid, threads, 0, s>>>(n_rows, rp, c, vals, x, alpha, beta, y, rows, l.above);        \
    break;
    CASE(1)
    CASE(2)
    CASE(4)
    CASE(8)
    CASE(16)
    CASE(32)
#undef CASE
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename I>
cudaError_t launch(int group, int unroll, int64_t n_rows, const void *row_ptr, const void *cols,
                   const double *vals, const double *x, double alpha, double beta, double *y,
                   const int32_t *rows, const halo_cuda_long_rows &l, int64_t max_blocks,
                   cudaStream_t s) {
  switch (unroll) {
  case 1: return launch_u<1, I>(group, n_rows, row_ptr, cols, vals, x, alpha, beta, y, rows, l, max_blocks, s);
  case 2: return launch_u<2, I>(group, n_rows, row_ptr, cols, vals, x, alpha, beta, y, rows, l, max_blocks, s);
  case 4: return launch_u<4, I>(group, n_rows, row_ptr, cols, vals, x, alpha, beta, y, rows, l, max_blocks, s);
  default: return cudaErrorInvalidValue;
  }
}

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return (unsigned)(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

// y[c] = alpha * sum_k vals[perm[k]] * x[rows[k]] + beta * y[c] over k in [ptr[c], ptr[c+1])
template <typename I>
__global__ void csr_t_kernel(int64_t n_cols, const I *__restrict__ ptr,
                             const int32_t *__restrict__ rows, const I *__restrict__ perm,
                             const double *__restrict__ vals, const double *__restrict__ x,
                             double alpha, double beta, double *__restrict__ y) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < n_cols;
       c += (int64_t)gridDim.x * blockDim.x) {
    double sum = 0.0;
    for (I k = ptr[c]; k < ptr[c + 1]; k++) sum += vals[perm[k]] * x[rows[k]];
    y[c] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[c];
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

/* y = alpha*A*x + beta*y (rows NULL), or y[rows[r]] += alpha*(A*x)[r], the
 * long rows of long_rows (NULL: none) by their tiles; max_blocks > 0 caps the
 * short rows' grid (the blocks then stride over the rows). */
cudaError_t halo_cuda_csr_spmv(int64_t n_rows, int idx64, const void *row_ptr, const void *cols,
                               const double *vals, const double *x, double alpha, double beta,
                               double *y, const int32_t *rows, int group, int unroll,
                               const halo_cuda_long_rows *long_rows, int64_t max_blocks,
                               cudaStream_t s) {
  if (n_rows <= 0) return cudaSuccess;
  const halo_cuda_long_rows none = {INT64_MAX, 0, NULL, NULL, NULL, NULL, NULL};
  const halo_cuda_long_rows &l = long_rows && long_rows->n_tiles > 0 ? *long_rows : none;
  return idx64 ? launch<int64_t>(group, unroll, n_rows, row_ptr, cols, vals, x, alpha, beta, y,
                                 rows, l, max_blocks, s)
               : launch<int32_t>(group, unroll, n_rows, row_ptr, cols, vals, x, alpha, beta, y,
                                 rows, l, max_blocks, s);
}

int halo_cuda_csr_tile(void) { return kTile; }

/* The preferred shared-memory carveout (percent of the unified L1/shared
 * storage) of every instantiation of the kernel. */
cudaError_t halo_cuda_csr_carveout(int percent) {
  cudaError_t e = cudaSuccess;
#define SET(g, u, I)                                                                               \
  if (e == cudaSuccess)                                                                            \
    e = cudaFuncSetAttribute((const void *)csr_group_kernel<g, u, I>,                              \
                             cudaFuncAttributePreferredSharedMemoryCarveout, percent);             \
  if (e == cudaSuccess)                                                                            \
    e = cudaFuncSetAttribute((const void *)csr_fused_kernel<g, u, I>,                              \
                             cudaFuncAttributePreferredSharedMemoryCarveout, percent);
#define SET_U(g, I) SET(g, 1, I) SET(g, 2, I) SET(g, 4, I)
#define SET_G(I) SET_U(1, I) SET_U(2, I) SET_U(4, I) SET_U(8, I) SET_U(16, I) SET_U(32, I)
  SET_G(int32_t)
  SET_G(int64_t)
#undef SET_G
#undef SET_U
#undef SET
  return e;
}

cudaError_t halo_cuda_csr_t(int64_t n_cols, int idx64, const void *ptr, const int32_t *rows,
                            const void *perm, const double *vals, const double *x, double alpha,
                            double beta, double *y, cudaStream_t s) {
  if (n_cols <= 0) return cudaSuccess;
  if (idx64)
    csr_t_kernel<int64_t><<<grid_for(n_cols), kThreads, 0, s>>>(
        n_cols, (const int64_t *)ptr, rows, (const int64_t *)perm, vals, x, alpha, beta, y);
  else
    csr_t_kernel<int32_t><<<grid_for(n_cols), kThreads, 0, s>>>(
        n_cols, (const int32_t *)ptr, rows, (const int32_t *)perm, vals, x, alpha, beta, y);
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
