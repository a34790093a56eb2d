/* Device kernels of the CUDA executor: pack, unpack and copies through index
 * maps (one launch per phase), for one double an entry and for units; the reverse exchange's
 * additions, one thread per destination adding its values in a fixed order (no atomics: the same
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
    if (j < n_ghost)
      ghost[j] = v;
    else
      work[j - n_ghost] = v;
  }
}

__global__ void copy_map_kernel(const int32_t *__restrict__ src, const int32_t *__restrict__ dst,
                                int64_t n, const double *x, int64_t n_local, double *ghost,
                                double *work, int64_t n_ghost) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t a = src[i], b = dst[i];
    const double v = a < n_local ? x[a] : work[a - n_local];
    if (b < n_ghost)
      ghost[b] = v;
    else
      work[b - n_ghost] = v;
  }
}

// dst(u_dst[u]) += the values of refs[u_ptr[u] .. u_ptr[u+1]), in order: a
// ref >= 0 is a position of the receive buffer, -1-ref an index of the source
// space (x | work). The destination space is (dst | work).
__global__ void add_by_dst_kernel(const int32_t *__restrict__ u_dst,
                                  const int32_t *__restrict__ u_ptr,
                                  const int32_t *__restrict__ refs, int64_t n_u,
                                  const double *__restrict__ recv, const double *x, int64_t n_local,
                                  double *dst, double *work, int64_t n_dst) {
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
    if (to_ghost[i] >= 0) out[i] = ghost[to_ghost[i]]; // -1: a slot of the rank's own entry
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

// ---- units: entries of eb bytes, moved as words of W (eb a multiple of
// sizeof(W), every address aligned to it); adds of per scalars of T -------

template <typename W>
__global__ void gather_u_kernel(W *__restrict__ out, const int32_t *__restrict__ idx, int64_t n,
                                int64_t w, const W *__restrict__ x, const W *__restrict__ work,
                                int64_t n_local) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n * w;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = t / w, c = t - i * w, j = idx[i];
    out[t] = j < n_local ? x[j * w + c] : work[(j - n_local) * w + c];
  }
}

// dst(dst_idx[i]) = src(src_idx[i]), with src(j) = a[j] below n_a, else b[j - n_a], and
// dst(j) = c[j] below n_c, else e[j - n_c]; src_idx NULL: i itself in a.
template <typename W>
__global__ void move_u_kernel(const int32_t *__restrict__ src_idx,
                              const int32_t *__restrict__ dst_idx, int64_t n, int64_t w, const W *a,
                              const W *b, int64_t n_a, W *c, W *e, int64_t n_c) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n * w;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = t / w, k = t - i * w;
    const int64_t s = src_idx ? src_idx[i] : i, d = dst_idx[i];
    const W v = s < n_a ? a[s * w + k] : b[(s - n_a) * w + k];
    if (d < n_c)
      c[d * w + k] = v;
    else
      e[(d - n_c) * w + k] = v;
  }
}

// For each u, scalar k: dst(u_dst[u]) (+)= the values of refs[u_ptr[u] .. u_ptr[u+1]) in order
// (add: summed onto the destination; insert: the last one kept).
template <typename T>
__global__ void add_by_dst_u_kernel(const int32_t *__restrict__ u_dst,
                                    const int32_t *__restrict__ u_ptr,
                                    const int32_t *__restrict__ refs, int64_t n_u, int64_t per,
                                    int insert, const T *__restrict__ recv, const T *x,
                                    int64_t n_local, T *dst, T *work, int64_t n_dst) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n_u * per;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t u = t / per, k = t - u * per, b = u_dst[u];
    T *to = b < n_dst ? dst + b * per + k : work + (b - n_dst) * per + k;
    T v = *to;
    for (int32_t r = u_ptr[u]; r < u_ptr[u + 1]; r++) {
      const int64_t f = refs[r];
      T y;
      if (f >= 0) {
        y = recv[f * per + k];
      } else {
        const int64_t a = -1 - f;
        y = a < n_local ? x[a * per + k] : work[(a - n_local) * per + k];
      }
      v = insert ? y : v + y;
    }
    *to = v;
  }
}

// out[omap[i]] (+)= in[map[i]] for map[i] >= 0 (map NULL: in[i]; omap NULL: out[i]).
template <typename T>
__global__ void deliver_u_kernel(T *out, const T *in, const int32_t *__restrict__ map,
                                 const int32_t *__restrict__ omap, int64_t n, int64_t per,
                                 int add) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n * per;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = t / per, k = t - i * per;
    const int64_t j = map ? map[i] : i, o = (omap ? omap[i] : i) * per + k;
    if (j < 0) continue;
    out[o] = add ? out[o] + in[j * per + k] : in[j * per + k];
  }
}

// ghost[j] = 0 + slots[slot[ptr[j]]] + ... in order (add), or the last of them (insert).
template <typename T>
__global__ void slot_sum_u_kernel(T *__restrict__ ghost, const T *__restrict__ slots,
                                  const int32_t *__restrict__ ptr, const int32_t *__restrict__ slot,
                                  int64_t n_ghost, int64_t per, int insert) {
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n_ghost * per;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = t / per, k = t - j * per;
    T v = insert ? ghost[t] : T(0);
    for (int32_t r = ptr[j]; r < ptr[j + 1]; r++)
      v = insert ? slots[(int64_t)slot[r] * per + k] : v + slots[(int64_t)slot[r] * per + k];
    ghost[t] = v;
  }
}

struct piece_u {
  const char *src;
  char *dst;
  int64_t n; // words
};

template <typename W> __global__ void pull_u_kernel(const piece_u *__restrict__ pieces) {
  const piece_u p = pieces[blockIdx.y];
  const W *src = reinterpret_cast<const W *>(p.src);
  W *dst = reinterpret_cast<W *>(p.dst);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < p.n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

template <typename W>
void move_u(const int32_t *src_idx, const int32_t *dst_idx, int64_t n, int64_t w, const void *a,
            const void *b, int64_t n_a, void *c, void *e, int64_t n_c, cudaStream_t s) {
  move_u_kernel<W><<<grid_for(n * w), kThreads, 0, s>>>(src_idx, dst_idx, n, w, (const W *)a,
                                                        (const W *)b, n_a, (W *)c, (W *)e, n_c);
}

template <typename T>
void add_by_dst_u(const int32_t *u_dst, const int32_t *u_ptr, const int32_t *refs, int64_t n_u,
                  int64_t per, int insert, const void *recv, const void *x, int64_t n_local,
                  void *dst, void *work, int64_t n_dst, cudaStream_t s) {
  add_by_dst_u_kernel<T><<<grid_for(n_u * per), kThreads, 0, s>>>(
      u_dst, u_ptr, refs, n_u, per, insert, (const T *)recv, (const T *)x, n_local, (T *)dst,
      (T *)work, n_dst);
}

template <typename T>
void deliver_u(void *out, const void *in, const int32_t *map, const int32_t *omap, int64_t n,
               int64_t per, int add, cudaStream_t s) {
  deliver_u_kernel<T>
      <<<grid_for(n * per), kThreads, 0, s>>>((T *)out, (const T *)in, map, omap, n, per, add);
}

template <typename T>
void slot_sum_u(void *ghost, const void *slots, const int32_t *ptr, const int32_t *slot,
                int64_t n_ghost, int64_t per, int insert, cudaStream_t s) {
  slot_sum_u_kernel<T><<<grid_for(n_ghost * per), kThreads, 0, s>>>(
      (T *)ghost, (const T *)slots, ptr, slot, n_ghost, per, insert);
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
                                 int64_t n_u, const double *recv, const double *x, int64_t n_local,
                                 double *dst, double *work, int64_t n_dst, cudaStream_t s) {
  if (n_u <= 0) return cudaSuccess;
  add_by_dst_kernel<<<grid_for(n_u), kThreads, 0, s>>>(u_dst, u_ptr, refs, n_u, recv, x, n_local,
                                                       dst, work, n_dst);
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

// ---- units ----

cudaError_t halo_cuda_gather_u(void *out, const int32_t *idx, int64_t n, const void *x,
                               const void *work, int64_t n_local, int64_t eb, int ws,
                               cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  const int64_t w = eb / ws;
  switch (ws) {
  case 8:
    gather_u_kernel<uint64_t><<<grid_for(n * w), kThreads, 0, s>>>(
        (uint64_t *)out, idx, n, w, (const uint64_t *)x, (const uint64_t *)work, n_local);
    break;
  case 4:
    gather_u_kernel<uint32_t><<<grid_for(n * w), kThreads, 0, s>>>(
        (uint32_t *)out, idx, n, w, (const uint32_t *)x, (const uint32_t *)work, n_local);
    break;
  case 2:
    gather_u_kernel<uint16_t><<<grid_for(n * w), kThreads, 0, s>>>(
        (uint16_t *)out, idx, n, w, (const uint16_t *)x, (const uint16_t *)work, n_local);
    break;
  default:
    gather_u_kernel<uint8_t><<<grid_for(n * w), kThreads, 0, s>>>(
        (uint8_t *)out, idx, n, w, (const uint8_t *)x, (const uint8_t *)work, n_local);
    break;
  }
  return cudaGetLastError();
}

cudaError_t halo_cuda_move_u(const int32_t *src_idx, const int32_t *dst_idx, int64_t n,
                             const void *a, const void *b, int64_t n_a, void *c, void *e,
                             int64_t n_c, int64_t eb, int ws, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  const int64_t w = eb / ws;
  switch (ws) {
  case 8: move_u<uint64_t>(src_idx, dst_idx, n, w, a, b, n_a, c, e, n_c, s); break;
  case 4: move_u<uint32_t>(src_idx, dst_idx, n, w, a, b, n_a, c, e, n_c, s); break;
  case 2: move_u<uint16_t>(src_idx, dst_idx, n, w, a, b, n_a, c, e, n_c, s); break;
  default: move_u<uint8_t>(src_idx, dst_idx, n, w, a, b, n_a, c, e, n_c, s); break;
  }
  return cudaGetLastError();
}

cudaError_t halo_cuda_add_by_dst_u(const int32_t *u_dst, const int32_t *u_ptr, const int32_t *refs,
                                   int64_t n_u, const void *recv, const void *x, int64_t n_local,
                                   void *dst, void *work, int64_t n_dst, int scalar, int64_t per,
                                   int insert, cudaStream_t s) {
  if (n_u <= 0) return cudaSuccess;
  switch (scalar) {
  case 1:
    add_by_dst_u<float>(u_dst, u_ptr, refs, n_u, per, insert, recv, x, n_local, dst, work, n_dst,
                        s);
    break;
  case 3:
    add_by_dst_u<int32_t>(u_dst, u_ptr, refs, n_u, per, insert, recv, x, n_local, dst, work, n_dst,
                          s);
    break;
  case 4:
    add_by_dst_u<int64_t>(u_dst, u_ptr, refs, n_u, per, insert, recv, x, n_local, dst, work, n_dst,
                          s);
    break;
  case 5:
    add_by_dst_u<uint8_t>(u_dst, u_ptr, refs, n_u, per, 1, recv, x, n_local, dst, work, n_dst, s);
    break;
  default:
    add_by_dst_u<double>(u_dst, u_ptr, refs, n_u, per, insert, recv, x, n_local, dst, work, n_dst,
                         s);
    break;
  }
  return cudaGetLastError();
}

cudaError_t halo_cuda_deliver_u(void *out, const void *in, const int32_t *map, const int32_t *omap,
                                int64_t n, int scalar, int64_t per, int add, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  switch (scalar) {
  case 1: deliver_u<float>(out, in, map, omap, n, per, add, s); break;
  case 3: deliver_u<int32_t>(out, in, map, omap, n, per, add, s); break;
  case 4: deliver_u<int64_t>(out, in, map, omap, n, per, add, s); break;
  case 5: deliver_u<uint8_t>(out, in, map, omap, n, per, 0, s); break;
  default: deliver_u<double>(out, in, map, omap, n, per, add, s); break;
  }
  return cudaGetLastError();
}

cudaError_t halo_cuda_slot_sum_u(void *ghost, const void *slots, const int32_t *ptr,
                                 const int32_t *slot, int64_t n_ghost, int scalar, int64_t per,
                                 int insert, cudaStream_t s) {
  if (n_ghost <= 0) return cudaSuccess;
  switch (scalar) {
  case 1: slot_sum_u<float>(ghost, slots, ptr, slot, n_ghost, per, insert, s); break;
  case 3: slot_sum_u<int32_t>(ghost, slots, ptr, slot, n_ghost, per, insert, s); break;
  case 4: slot_sum_u<int64_t>(ghost, slots, ptr, slot, n_ghost, per, insert, s); break;
  case 5: slot_sum_u<uint8_t>(ghost, slots, ptr, slot, n_ghost, per, 1, s); break;
  default: slot_sum_u<double>(ghost, slots, ptr, slot, n_ghost, per, insert, s); break;
  }
  return cudaGetLastError();
}

cudaError_t halo_cuda_pull_u(const void *pieces, int n_pieces, int64_t n_max, int ws,
                             cudaStream_t s) {
  if (n_pieces <= 0 || n_max <= 0) return cudaSuccess;
  int64_t bx = (n_max + kThreads - 1) / kThreads;
  if (bx > 64) bx = 64;
  const dim3 g((unsigned)bx, (unsigned)n_pieces);
  const piece_u *p = static_cast<const piece_u *>(pieces);
  switch (ws) {
  case 8: pull_u_kernel<uint64_t><<<g, kThreads, 0, s>>>(p); break;
  case 4: pull_u_kernel<uint32_t><<<g, kThreads, 0, s>>>(p); break;
  case 2: pull_u_kernel<uint16_t><<<g, kThreads, 0, s>>>(p); break;
  default: pull_u_kernel<uint8_t><<<g, kThreads, 0, s>>>(p); break;
  }
  return cudaGetLastError();
}

} // extern "C"
