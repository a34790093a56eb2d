/* The GPU side of a plan: device choice, streams and events, sharing of
 * GPUs between ranks, CUDA-awareness of MPI, transport choice, NCCL. */
#define _POSIX_C_SOURCE 200809L
#include "halo_impl.h"

#include "exec/gpu.h"

#if HALO_HAVE_CUDA
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "exec/cuda.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#if HALO_HAVE_NCCL
halo_status halo_error_nccl(ncclResult_t r, const char *call, const char *file, int line) {
  char name[64];
  size_t n = strcspn(call, "(");
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, call, n);
  name[n] = '\0';
  return halo_error_at(HALO_ERR_NCCL, file, line, "%s failed: %s", name, ncclGetErrorString(r));
}
#endif

/* Whether this process already uses the current device (its primary context
 * is active), asked of the driver without linking it: then the caller chose
 * the device. */
static int current_device_in_use(int device) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return 0;
  typedef int (*get_device_fn)(int *, int);
  typedef int (*ctx_state_fn)(int, unsigned *, int *);
  get_device_fn get_device = (get_device_fn)(uintptr_t)dlsym(lib, "cuDeviceGet");
  ctx_state_fn ctx_state = (ctx_state_fn)(uintptr_t)dlsym(lib, "cuDevicePrimaryCtxGetState");
  int active = 0, dev = 0;
  unsigned flags = 0;
  if (get_device && ctx_state && get_device(&dev, device) == 0 &&
      ctx_state(dev, &flags, &active) != 0)
    active = 0;
  dlclose(lib);
  return active;
}

/* MPI takes device buffers: HALO_GPU_AWARE_MPI=1/0 forces the answer,
 * otherwise the MPI library is asked where it can say. */
static int detect_mpi_device_aware(void) {
  const char *env = getenv("HALO_GPU_AWARE_MPI");
  if (env && *env) return strcmp(env, "0") != 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

int halo_gpu_device(const halo_gpu *g) { return g->device; }
int halo_gpu_ranks_per_gpu(const halo_gpu *g) { return g->ranks_per_gpu; }
int halo_gpu_mpi_device_aware(const halo_gpu *g) { return g->mpi_device_aware; }

void halo_gpu_destroy(halo_gpu **g_p) {
  if (!g_p || !*g_p) return;
  halo_gpu *g = *g_p;
#if HALO_HAVE_NCCL
  if (g->have_nccl) ncclCommDestroy(g->nccl);
#endif
  if (g->ev_start) cudaEventDestroy(g->ev_start);
  if (g->ev_end) cudaEventDestroy(g->ev_end);
  for (int k = 0; k < 4; k++)
    if (g->tl[k]) cudaEventDestroy(g->tl[k]);
  if (g->comm) cudaStreamDestroy(g->comm);
  if (g->own_comp && g->comp) cudaStreamDestroy(g->comp);
  if (g->shared_comm != MPI_COMM_NULL) MPI_Comm_free(&g->shared_comm);
  halo_free(g);
  *g_p = NULL;
}

/* Most ranks of this machine that share one GPU, from the devices' UUIDs. */
static halo_status count_sharing(halo_gpu *g, MPI_Comm comm) {
  halo_status st = HALO_SUCCESS;
  struct cudaDeviceProp prop;
  unsigned char *all = NULL;
  int n, most = 0;
  HALO_TRY_CUDA(cudaGetDeviceProperties(&prop, g->device));
  HALO_TRY_MPI(MPI_Comm_size(g->shared_comm, &n));
  HALO_TRY(HALO_ALLOC(all, 16 * (size_t)n));
  HALO_TRY_MPI(MPI_Allgather(prop.uuid.bytes, 16, MPI_BYTE, all, 16, MPI_BYTE, g->shared_comm));
  for (int i = 0; i < n; i++) {
    int same = 0;
    for (int j = 0; j < n; j++) same += memcmp(all + 16 * i, all + 16 * j, 16) == 0;
    if (same > most) most = same;
  }
  HALO_TRY_MPI(MPI_Allreduce(&most, &g->ranks_per_gpu, 1, MPI_INT, MPI_MAX, comm));
cleanup:
  halo_free(all);
  return st;
}

halo_status halo_gpu_create(MPI_Comm comm, int device_id, void *stream, halo_gpu **g_p) {
  halo_status st = HALO_SUCCESS;
  int rank, count = 0, shared_rank, aware;
  halo_gpu *g = halo_calloc(1, sizeof *g);
  *g_p = NULL;
  if (!g) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the GPU state");
  g->shared_comm = MPI_COMM_NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &g->shared_comm));
  HALO_TRY_MPI(MPI_Comm_set_errhandler(g->shared_comm, MPI_ERRORS_RETURN));
  HALO_TRY_MPI(MPI_Comm_rank(g->shared_comm, &shared_rank));
  {
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      st = HALO_ERROR(HALO_ERR_CUDA, "device memory: no CUDA device is visible (%s)",
                      e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
  }
  if (st == HALO_SUCCESS && device_id >= count)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "device_id = %d, but %d CUDA devices are visible",
                    device_id, count);
  if (st == HALO_SUCCESS) {
    if (device_id >= 0) {
      g->device = device_id;
    } else {
      int current = 0;
      if (cudaGetDevice(&current) == cudaSuccess && current_device_in_use(current))
        g->device = current;
      else
        g->device = shared_rank % count;
    }
    cudaError_t e = cudaSetDevice(g->device);
    if (e != cudaSuccess) st = halo_error_cuda(e, "cudaSetDevice", __FILE__, __LINE__);
  }
  if (st == HALO_SUCCESS) {
    /* the exchange's stream has the highest priority: its small kernels and
     * copies go ahead of the local product's blocks instead of waiting for
     * them, which is what lets the exchange hide behind the product */
    int least = 0, greatest = 0;
    cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    halo_debug_count_alloc();
    if (e == cudaSuccess)
      e = cudaStreamCreateWithPriority(&g->comm, cudaStreamNonBlocking, greatest);
    if (e != cudaSuccess)
      st = halo_error_cuda(e, "cudaStreamCreateWithPriority", __FILE__, __LINE__);
  }
  if (st == HALO_SUCCESS) {
    if (stream) {
      g->comp = (cudaStream_t)stream;
    } else {
      /* a blocking stream: ordered with the legacy default stream, so that a
       * caller's cudaMemcpy or cudaMemset before a product is seen by it
       * (HALO_COMPUTE_STREAM=nonblocking: not, for experiments) */
      const char *env = getenv("HALO_COMPUTE_STREAM");
      const unsigned flags =
          env && strcmp(env, "nonblocking") == 0 ? cudaStreamNonBlocking : cudaStreamDefault;
      halo_debug_count_alloc();
      cudaError_t e = cudaStreamCreateWithFlags(&g->comp, flags);
      if (e != cudaSuccess)
        st = halo_error_cuda(e, "cudaStreamCreate", __FILE__, __LINE__);
      else
        g->own_comp = 1;
    }
  }
  if (st == HALO_SUCCESS) st = halo_event_create(&g->ev_start, cudaEventDisableTiming);
  {
    const char *env = getenv("HALO_SPMV_PRODUCT_FIRST");
    g->product_first = !(env && strcmp(env, "0") == 0);
  }
  if (st == HALO_SUCCESS) st = halo_event_create(&g->ev_end, cudaEventDisableTiming);
  {
    const char *env = getenv("HALO_TIMELINE");
    g->timeline = env && strcmp(env, "1") == 0;
    for (int k = 0; k < 4 && g->timeline && st == HALO_SUCCESS; k++)
      st = halo_event_create(&g->tl[k], cudaEventDefault);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(halo_agree(comm, count_sharing(g, comm)));
  aware = detect_mpi_device_aware();
  HALO_TRY_MPI(MPI_Allreduce(&aware, &g->mpi_device_aware, 1, MPI_INT, MPI_MIN, comm));
  *g_p = g;
  g = NULL;
cleanup:
  halo_gpu_destroy(&g);
  return st;
}

halo_status halo_gpu_transport(halo_gpu *g, MPI_Comm comm, halo_transport requested,
                               halo_transport *chosen_p) {
  halo_status st = HALO_SUCCESS;
  halo_transport t = requested;
  switch (requested) {
  case HALO_TRANSPORT_AUTO:
    t = HALO_HAVE_NCCL && g->ranks_per_gpu == 1 ? HALO_TRANSPORT_NCCL : HALO_TRANSPORT_IPC;
    break;
  case HALO_TRANSPORT_STAGED:
  case HALO_TRANSPORT_IPC: break;
  case HALO_TRANSPORT_NCCL:
    if (!HALO_HAVE_NCCL)
      return HALO_ERROR(HALO_ERR_NOT_COMPILED,
                        "transport nccl: not compiled in: rebuild with HALO_ENABLE_NCCL=ON");
    if (g->ranks_per_gpu > 1)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "transport nccl needs one rank per GPU, but %d ranks share a GPU: use "
                        "staged or ipc",
                        g->ranks_per_gpu);
    break;
  case HALO_TRANSPORT_MPI_DEVICE:
    if (!g->mpi_device_aware)
      return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                        "transport mpi-device: this MPI is not CUDA-aware "
                        "(MPIX_Query_cuda_support() says no, or it cannot say); "
                        "HALO_GPU_AWARE_MPI=1 forces it");
    break;
  case HALO_TRANSPORT_HOST:
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "transport host is for host memory; device memory takes auto, staged, nccl, "
                      "mpi-device or ipc");
  default: return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport %d", (int)requested);
  }
#if HALO_HAVE_NCCL
  if (t == HALO_TRANSPORT_NCCL && !g->have_nccl) {
    int rank, size;
    ncclUniqueId id;
    HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
    HALO_TRY_MPI(MPI_Comm_size(comm, &size));
    if (rank == 0)
      st = ncclGetUniqueId(&id) == ncclSuccess
               ? HALO_SUCCESS
               : HALO_ERROR(HALO_ERR_NCCL, "ncclGetUniqueId failed");
    HALO_TRY(halo_agree(comm, st));
    HALO_TRY_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm));
    halo_debug_count_alloc();
    ncclResult_t r = ncclCommInitRank(&g->nccl, size, id, rank);
    st = r == ncclSuccess ? HALO_SUCCESS
                          : halo_error_nccl(r, "ncclCommInitRank", __FILE__, __LINE__);
    HALO_TRY(halo_agree(comm, st));
    g->have_nccl = 1;
  }
  *chosen_p = t;
cleanup:
  return st;
#else
  (void)comm;
  *chosen_p = t;
  return st;
#endif
}

int halo_gpu_product_first(const halo_gpu *g) { return g->product_first; }

/* HALO_TIMELINE: add the last SpMV's timeline, if complete, to the sums. */
static halo_status timeline_harvest(halo_gpu *g) {
  if (g->tl_state == 0xF) {
    float ms;
    for (int k = 1; k < 4; k++) {
      HALO_CUDA(cudaEventSynchronize(g->tl[k]));
      HALO_CUDA(cudaEventElapsedTime(&ms, g->tl[0], g->tl[k]));
      g->tl_sum[k - 1] += 1e-3 * ms;
    }
    g->tl_n++;
  }
  g->tl_state = 0;
  return HALO_SUCCESS;
}

halo_status halo_gpu_timeline_mark(halo_gpu *g, int k) {
  if (!g->timeline || !(g->tl_state & 1) || (g->tl_state & (1 << k))) return HALO_SUCCESS;
  HALO_CUDA(cudaEventRecord(g->tl[k], k == 1 ? g->comp : g->comm));
  g->tl_state |= 1 << k;
  return HALO_SUCCESS;
}

halo_status halo_gpu_timeline(halo_gpu *g, double avg[3], int64_t *n_p) {
  HALO_CHECK(timeline_harvest(g));
  for (int k = 0; k < 3; k++) avg[k] = g->tl_n ? g->tl_sum[k] / (double)g->tl_n : 0.0;
  *n_p = g->tl_n;
  g->tl_sum[0] = g->tl_sum[1] = g->tl_sum[2] = 0.0;
  g->tl_n = 0;
  return HALO_SUCCESS;
}

halo_status halo_gpu_mark_start(halo_gpu *g, int on) {
  g->start_marked = 0;
  if (g->timeline) HALO_CHECK(timeline_harvest(g));
  if (on) {
    HALO_CUDA(cudaEventRecord(g->ev_start, g->comp));
    g->start_marked = 1;
    if (g->timeline) {
      HALO_CUDA(cudaEventRecord(g->tl[0], g->comp));
      g->tl_state = 1;
    }
  }
  return HALO_SUCCESS;
}

halo_status halo_gpu_synchronize(halo_gpu *g) {
  HALO_CUDA(cudaStreamSynchronize(g->comm));
  HALO_CUDA(cudaStreamSynchronize(g->comp));
  return HALO_SUCCESS;
}

#else /* no CUDA: every entry says so */

halo_status halo_gpu_create(MPI_Comm comm, int device_id, void *stream, halo_gpu **g_p) {
  (void)comm, (void)device_id, (void)stream;
  *g_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_gpu_destroy(halo_gpu **g_p) {
  if (g_p) *g_p = NULL;
}
int halo_gpu_device(const halo_gpu *g) { return (void)g, -1; }
int halo_gpu_ranks_per_gpu(const halo_gpu *g) { return (void)g, 0; }
int halo_gpu_mpi_device_aware(const halo_gpu *g) { return (void)g, 0; }
halo_status halo_gpu_transport(halo_gpu *g, MPI_Comm comm, halo_transport requested,
                               halo_transport *chosen_p) {
  (void)g, (void)comm, (void)requested, (void)chosen_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
int halo_gpu_product_first(const halo_gpu *g) {
  (void)g;
  return 0;
}
halo_status halo_gpu_mark_start(halo_gpu *g, int on) {
  (void)g, (void)on;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_gpu_timeline_mark(halo_gpu *g, int k) {
  (void)g, (void)k;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_gpu_timeline(halo_gpu *g, double avg[3], int64_t *n_p) {
  (void)g, (void)avg, (void)n_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_gpu_synchronize(halo_gpu *g) {
  (void)g;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_gpu_spmv_create(halo_gpu *g, halo_matrix A, halo_gpu_spmv **sp_p) {
  (void)g, (void)A;
  *sp_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_gpu_spmv_destroy(halo_gpu_spmv **sp_p) {
  if (sp_p) *sp_p = NULL;
}
halo_status halo_gpu_spmv_diag(halo_gpu_spmv *sp, double alpha, const double *x, double beta,
                               double *y) {
  (void)sp, (void)alpha, (void)x, (void)beta, (void)y;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_gpu_spmv_offd(halo_gpu_spmv *sp, double alpha, const double *x_ghost, double *y) {
  (void)sp, (void)alpha, (void)x_ghost, (void)y;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

#endif
