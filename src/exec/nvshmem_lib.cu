/* libhalo_nvshmem (nvshmem_lib.h): NVSHMEM's initialisation from a unique
 * id, its symmetric memory, and the three kernels of transport nvshmem: a
 * phase's pack and puts in one launch, the receiver's wait for its signals,
 * and the acknowledgements that let the senders reuse the receive buffers.
 * Built with relocatable device code and linked against
 * libnvshmem_device.a, whose nvshmemi_init_thread also sets up the device
 * state of this library's kernels. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "exec/nvshmem_lib.h"

static char last_error[512];

static int fail(const char *fmt, const char *what, int code) {
  snprintf(last_error, sizeof last_error, fmt, what, code);
  return code ? code : 1;
}

static int cuda_fail(const char *what, cudaError_t e) {
  snprintf(last_error, sizeof last_error, "%s: %s", what, cudaGetErrorString(e));
  return (int)e;
}

extern "C" const char *halo_nvshmem_error(void) { return last_error; }

extern "C" const char *halo_nvshmem_version(void) {
  static char v[64];
  int major = 0, minor = 0, patch = 0;
  nvshmemx_vendor_get_version_info(&major, &minor, &patch);
  snprintf(v, sizeof v, "%d.%d.%d", major, minor, patch);
  return v;
}

extern "C" int halo_nvshmem_initialized(void) {
  const int s = nvshmemx_init_status();
  return s >= NVSHMEM_STATUS_IS_INITIALIZED && s != NVSHMEM_STATUS_INVALID;
}

extern "C" int halo_nvshmem_mpg(void) {
  const int s = nvshmemx_init_status();
  return s == NVSHMEM_STATUS_FULL_MPG ? 2 : s == NVSHMEM_STATUS_LIMITED_MPG ? 1 : 0;
}

extern "C" int halo_nvshmem_get_uid(unsigned char uid[HALO_NV_UID_BYTES]) {
  static_assert(sizeof(nvshmemx_uniqueid_t) <= HALO_NV_UID_BYTES, "HALO_NV_UID_BYTES too small");
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  const int r = nvshmemx_get_uniqueid(&id);
  if (r != 0) return fail("%s failed (%d)", "nvshmemx_get_uniqueid", r);
  memset(uid, 0, HALO_NV_UID_BYTES);
  memcpy(uid, &id, sizeof id);
  return 0;
}

extern "C" int halo_nvshmem_init(int rank, int nranks, const unsigned char uid[HALO_NV_UID_BYTES]) {
  nvshmemx_uniqueid_t id;
  memcpy(&id, uid, sizeof id);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  int r = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
  if (r != 0) return fail("%s failed (%d)", "nvshmemx_set_attr_uniqueid_args", r);
  /* nvshmemx_init_attr() exits the process on failure: the call it wraps
   * returns the status instead */
  int provided = 0;
  nvshmemi_version_t v = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
                          NVSHMEM_VENDOR_PATCH_VERSION};
  r = nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, NVSHMEMX_INIT_WITH_UNIQUEID, &attr,
                           v);
  if (r != 0)
    return fail("%s failed (%d): see NVSHMEM's messages above", "NVSHMEM's initialisation", r);
  return 0;
}

extern "C" int halo_nvshmem_my_pe(void) { return nvshmem_my_pe(); }
extern "C" int halo_nvshmem_n_pes(void) { return nvshmem_n_pes(); }

extern "C" void *halo_nvshmem_malloc(size_t bytes) {
  void *p = nvshmem_malloc(bytes);
  if (!p) fail("%s of %d MiB failed", "nvshmem_malloc", (int)(bytes >> 20));
  return p;
}

extern "C" void halo_nvshmem_free(void *p) { nvshmem_free(p); }
extern "C" void halo_nvshmem_finalize(void) { nvshmem_finalize(); }
extern "C" void halo_nvshmem_quiet(void) { nvshmem_quiet(); }

/* One block per put: wait until the receiver has read the previous
 * exchange's values, pack this block's values, put them with the signal. */
__global__ void nv_pack_put(const halo_nv_put *puts, const int32_t *idx, const double *run,
                            const double *x, const double *work, int64_t n_local, double *send,
                            const uint64_t *ep, int wait) {
  const halo_nv_put q = puts[blockIdx.x];
  const uint64_t epoch = *ep + 1;
  if (wait && threadIdx.x == 0 && epoch > 1)
    nvshmem_signal_wait_until(q.done, NVSHMEM_CMP_GE, epoch - 1);
  __syncthreads();
  /* the exchange failed and its waits were released (ep[2], written before
   * the signals): what this phase would send was never received */
  if (((volatile const uint64_t *)ep)[2]) return;
  for (int64_t t = threadIdx.x; t < q.n; t += blockDim.x) {
    const int64_t i = q.off + t;
    double v;
    if (idx) {
      const int64_t j = idx[i];
      v = j < n_local ? x[j] : work[j - n_local];
    } else {
      v = run[i];
    }
    send[i] = v;
  }
  __syncthreads();
  nvshmemx_putmem_signal_nbi_block(q.dst, send + q.off, (size_t)q.n * sizeof(double), q.sig, 1,
                                   NVSHMEM_SIGNAL_ADD, q.pe);
}

/* One block: the receives' signals (one launch a phase). */
__global__ void nv_wait(const halo_nv_wait *w, int n, const uint64_t *ep) {
  const uint64_t epoch = *ep + 1;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    nvshmem_signal_wait_until(w[i].sig, NVSHMEM_CMP_GE, epoch * (uint64_t)w[i].puts);
}

/* One block: the done signals of a phase's pieces (the receivers read the
 * previous exchange's values). */
__global__ void nv_wait_done(const halo_nv_put *puts, int n, const uint64_t *ep) {
  const uint64_t epoch = *ep + 1;
  if (epoch > 1)
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      nvshmem_signal_wait_until(puts[i].done, NVSHMEM_CMP_GE, epoch - 1);
}

/* One block: every acknowledgement, then the counter. */
__global__ void nv_finish(const halo_nv_ack *a, int n, uint64_t *ep) {
  const uint64_t epoch = *ep + 1;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    nvshmemx_signal_op(a[i].done, epoch, NVSHMEM_SIGNAL_SET, a[i].pe);
  __syncthreads();
  if (threadIdx.x == 0) *ep = epoch;
}

/* Wait, unpack, and with count the exchange's end by the last block. */
__global__ void nv_wait_scatter(const halo_nv_wait *w, int n_wait, uint64_t *ep, const double *in,
                                const int32_t *src, const int32_t *dst, int64_t n, double *ghost,
                                double *work, int64_t n_ghost, const halo_nv_ack *acks, int n_acks,
                                unsigned int *count) {
  __shared__ int last;
  const uint64_t epoch = *ep + 1;
  for (int i = threadIdx.x; i < n_wait; i += blockDim.x)
    nvshmem_signal_wait_until(w[i].sig, NVSHMEM_CMP_GE, epoch * (uint64_t)w[i].puts);
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t j = dst[i];
    const double v = in[src[i]];
    if (j < n_ghost)
      ghost[j] = v;
    else
      work[j - n_ghost] = v;
  }
  if (!count) return;
  __threadfence(); /* this block's reads of in are done before the count says so */
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(count, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  for (int i = threadIdx.x; i < n_acks; i += blockDim.x)
    nvshmemx_signal_op(acks[i].done, epoch, NVSHMEM_SIGNAL_SET, acks[i].pe);
  __syncthreads();
  if (threadIdx.x == 0) {
    *count = 0;
    *ep = epoch;
  }
}

extern "C" int halo_nvshmem_wait_scatter(const halo_nv_wait *w, int n_wait, uint64_t *ep,
                                         const double *in, const int32_t *src_idx,
                                         const int32_t *dst_idx, int64_t n, double *ghost,
                                         double *work, int64_t n_ghost, const halo_nv_ack *acks,
                                         int n_acks, unsigned int *count, int shared,
                                         void *stream) {
  int64_t blocks = (n + 255) / 256;
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;
  if (shared && n_wait > 0) {
    nv_wait<<<1, 256, 0, (cudaStream_t)stream>>>(w, n_wait, ep);
    n_wait = 0;
  }
  nv_wait_scatter<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(
      w, n_wait, ep, in, src_idx, dst_idx, n, ghost, work, n_ghost, acks, n_acks, count);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : cuda_fail("transport nvshmem: the wait-and-unpack launch", e);
}

extern "C" int halo_nvshmem_pack_put(const halo_nv_put *puts, int n_blocks, const int32_t *idx,
                                     const double *run, const double *x, const double *work,
                                     int64_t n_local, double *send, const uint64_t *ep, int shared,
                                     void *stream) {
  if (n_blocks <= 0) return 0;
  if (shared) nv_wait_done<<<1, 256, 0, (cudaStream_t)stream>>>(puts, n_blocks, ep);
  nv_pack_put<<<n_blocks, 256, 0, (cudaStream_t)stream>>>(puts, idx, run, x, work, n_local, send,
                                                          ep, !shared);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : cuda_fail("transport nvshmem: the pack-and-put launch", e);
}

extern "C" int halo_nvshmem_wait(const halo_nv_wait *w, int n, const uint64_t *ep, void *stream) {
  if (n <= 0) return 0;
  nv_wait<<<1, 256, 0, (cudaStream_t)stream>>>(w, n, ep);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : cuda_fail("transport nvshmem: the wait launch", e);
}

extern "C" int halo_nvshmem_finish(const halo_nv_ack *a, int n, uint64_t *ep, void *stream) {
  nv_finish<<<1, 256, 0, (cudaStream_t)stream>>>(a, n, ep);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : cuda_fail("transport nvshmem: the exchange's end", e);
}
