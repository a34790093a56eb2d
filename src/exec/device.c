/* The GPU of a communicator's plans: device choice, streams, sharing of GPUs
 * between ranks, CUDA-awareness of MPI, transport choice, NCCL. A plan's
 * timeline: device_timeline.c; the chunks its buffers are carved from:
 * device_pool.c. */
#define _POSIX_C_SOURCE 200809L
#include "halo_impl.h"

#include "exec/device.h"

static int64_t nccl_comms_made, nccl_comms_aborted;
static int nccl_background_fails; /* halo_debug_nccl_background_fail */

int64_t halo_debug_nccl_comms(void) { return nccl_comms_made; }
int64_t halo_debug_nccl_aborts(void) { return nccl_comms_aborted; }
void halo_debug_nccl_background_fail(int on) { nccl_background_fails = on; }

#if HALO_HAVE_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "exec/cuda.h"
#include "exec/cuda_exec.h"
#include "exec/device_nvshmem.h"
#include "exec/device_pool.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

struct halo_device_s {
  int device;
  MPI_Comm comm;        /* the context's communicator (not owned): NCCL's ranks */
  MPI_Comm machine;     /* the ranks of this machine (MPI_COMM_TYPE_SHARED) */
  cudaStream_t xstream; /* the exchanges (highest priority) */
  cudaStream_t comp[2]; /* the products: [0] blocking, [1] non-blocking (made when asked) */
  int ranks_per_gpu;
  char name[256];         /* the GPU's name (cudaDeviceProp.name) */
  int mpi_aware_detected; /* what the MPI library says, agreed over the communicator */
#if HALO_HAVE_NCCL
  ncclComm_t nccl;
#endif
  int have_nccl;
  int nccl_gen;         /* the number of the NCCL communicator made last (one more at each) */
  struct nccl_bg_s *bg; /* NCCL's communicator made in the background (halo_device_nccl_start):
                           the thread runs or ran, not joined yet; NULL: none */
  int bg_failed_start;  /* ... no thread could be started: failed */
  halo_nv_state *nv;    /* NVSHMEM over comm, made at the first request (device_nvshmem.c) */
  chunk_pool ipc;       /* device memory exported through CUDA IPC */
  chunk_pool pinned;    /* pinned host memory */
  void *scratch[HALO_DEVICE_SCRATCH]; /* host scratch of the executors' set-up */
  size_t scratch_bytes[HALO_DEVICE_SCRATCH];
  int scratch_pinned[HALO_DEVICE_SCRATCH];
  int n_open, cap_open;
  struct {
    int peer, chunk;
    char *base;
  } * open; /* peers' chunks opened here */
};

#if HALO_HAVE_NCCL
halo_status halo_error_nccl(ncclResult_t r, const char *call, const char *file, int line) {
  return halo_error_at(HALO_ERR_NCCL, file, line, "%.*s failed: %s", (int)strcspn(call, "("), call,
                       ncclGetErrorString(r));
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

/* What the MPI library says of device buffers, where it can say. */
static int mpi_says_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

int halo_device_id(const halo_device *d) { return d->device; }
int halo_device_ranks_per_gpu(const halo_device *d) { return d->ranks_per_gpu; }
const char *halo_device_name(const halo_device *d) { return d->name; }
int halo_device_mpi_aware(const halo_device *d, int setting) {
  return setting >= 0 ? setting : d->mpi_aware_detected;
}
MPI_Comm halo_device_machine_comm(const halo_device *d) { return d->machine; }
MPI_Comm halo_device_comm(const halo_device *d) { return d->comm; }
void *halo_device_exchange_stream(const halo_device *d) { return d->xstream; }

static void scratch_free(halo_device *d, int slot) {
  if (d->scratch_pinned[slot])
    halo_pinned_free(d->scratch[slot]);
  else
    halo_free(d->scratch[slot]);
  d->scratch[slot] = NULL;
  d->scratch_bytes[slot] = 0;
  d->scratch_pinned[slot] = 0;
}

static void nccl_background_join(halo_device *d, int wait);

void halo_device_destroy(halo_device **dev_p) {
  if (!dev_p || !*dev_p) return;
  halo_device *d = *dev_p;
  /* made meanwhile: taken, destroyed below; under way: waited for, within a bound (a process
   * that ends while the thread is inside NCCL's initialisation crashes in CUDA's teardown:
   * seen with a PETSc program whose solve ended before its communicator was made) */
  nccl_background_join(d, 2);
  for (int i = 0; i < d->n_open; i++) cudaIpcCloseMemHandle(d->open[i].base);
  halo_free(d->open);
  halo_pool_free(&d->ipc);
  halo_pool_free(&d->pinned);
  for (int i = 0; i < HALO_DEVICE_SCRATCH; i++) scratch_free(d, i);
#if HALO_HAVE_NCCL
  if (d->have_nccl) ncclCommDestroy(d->nccl);
#endif
  halo_nv_state_destroy(&d->nv); /* collective, as the context's end */
  if (d->xstream) cudaStreamDestroy(d->xstream);
  for (int i = 0; i < 2; i++)
    if (d->comp[i]) cudaStreamDestroy(d->comp[i]);
  if (d->machine != MPI_COMM_NULL) MPI_Comm_free(&d->machine);
  halo_free(d);
  *dev_p = NULL;
}

/* Most ranks of this machine that share one GPU, from the devices' UUIDs. */
static halo_status count_sharing(halo_device *d) {
  halo_status st = HALO_SUCCESS;
  struct cudaDeviceProp prop;
  unsigned char *all = NULL;
  int n, most = 0;
  /* what can fail on one rank alone, agreed before the collectives */
  cudaError_t e = HALO_CUDA_RC(cudaGetDeviceProperties(&prop, d->device));
  if (e != cudaSuccess)
    st = halo_error_cuda(e, "cudaGetDeviceProperties", __FILE__, __LINE__);
  else if (MPI_Comm_size(d->machine, &n) != MPI_SUCCESS)
    st = HALO_ERROR(HALO_ERR_MPI, "MPI_Comm_size of the machine's communicator failed");
  else
    st = HALO_ALLOC(all, 16 * (size_t)n);
  HALO_TRY(halo_agree(d->comm, st));
  snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof prop.name, prop.name);
  HALO_TRY_MPI(MPI_Allgather(prop.uuid.bytes, 16, MPI_BYTE, all, 16, MPI_BYTE, d->machine));
  for (int i = 0; i < n; i++) {
    int same = 0;
    for (int j = 0; j < n; j++) same += memcmp(all + 16 * i, all + 16 * j, 16) == 0;
    if (same > most) most = same;
  }
  HALO_TRY_MPI(MPI_Allreduce(&most, &d->ranks_per_gpu, 1, MPI_INT, MPI_MAX, d->comm));
cleanup:
  halo_free(all);
  return st;
}

static halo_status stream_create(cudaStream_t *s, unsigned flags, int priority) {
  if (halo_debug_alloc_fails())
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA stream (injected)");
  HALO_CUDA(cudaStreamCreateWithPriority(s, flags, priority));
  return HALO_SUCCESS;
}

halo_status halo_device_create(MPI_Comm comm, int device_id, halo_device **dev_p) {
  halo_status st = HALO_SUCCESS;
  int rank, count = 0, machine_rank, aware;
  halo_device *d = halo_calloc(1, sizeof *d);
  *dev_p = NULL;
  /* agreed before the first collective, which a rank without it would miss */
  st = halo_agree(comm,
                  d ? HALO_SUCCESS
                    : HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the GPU state"));
  if (st != HALO_SUCCESS) {
    halo_free(d);
    return st;
  }
  d->comm = comm;
  d->machine = MPI_COMM_NULL;
  d->ipc.min_chunk = (size_t)16 << 20; /* chunks of 16 MiB, or of a larger buffer */
  d->pinned.pinned = 1;
  d->pinned.min_chunk = (size_t)4 << 20;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &d->machine));
  HALO_TRY_MPI(MPI_Comm_set_errhandler(d->machine, MPI_ERRORS_RETURN));
  HALO_TRY_MPI(MPI_Comm_rank(d->machine, &machine_rank));
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
      d->device = device_id;
    } else {
      int current = 0;
      if (cudaGetDevice(&current) == cudaSuccess && current_device_in_use(current))
        d->device = current;
      else
        d->device = machine_rank % count;
    }
    cudaError_t e = HALO_CUDA_RC(cudaSetDevice(d->device));
    if (e != cudaSuccess) st = halo_error_cuda(e, "cudaSetDevice", __FILE__, __LINE__);
  }
  if (st == HALO_SUCCESS) {
    /* the exchange's stream has the highest priority: its small kernels and
     * copies go ahead of the local product's blocks instead of waiting for
     * them, which is what lets the exchange hide behind the product */
    int least = 0, greatest = 0;
    cudaError_t e = HALO_CUDA_RC(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    if (e != cudaSuccess)
      st = halo_error_cuda(e, "cudaDeviceGetStreamPriorityRange", __FILE__, __LINE__);
    else
      st = stream_create(&d->xstream, cudaStreamNonBlocking, greatest);
  }
  /* the products' own stream is blocking: ordered with the legacy default
   * stream, so that a caller's cudaMemcpy or cudaMemset before a product is
   * seen by it */
  if (st == HALO_SUCCESS) st = stream_create(&d->comp[0], cudaStreamDefault, 0);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(halo_agree(comm, count_sharing(d)));
  aware = mpi_says_cuda_aware();
  HALO_TRY_MPI(MPI_Allreduce(&aware, &d->mpi_aware_detected, 1, MPI_INT, MPI_MIN, comm));
  *dev_p = d;
  d = NULL;
cleanup:
  halo_device_destroy(&d);
  return st;
}

halo_status halo_device_ipc_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p,
                                  int64_t *offset_p) {
  size_t off = 0;
  *chunk_p = -1;
  HALO_CHECK(halo_pool_alloc(&d->ipc, bytes, p, chunk_p, &off));
  *offset_p = (int64_t)off;
  return HALO_SUCCESS;
}

void halo_device_ipc_release(halo_device *d, void *p, size_t bytes) {
  if (d) halo_pool_release(&d->ipc, p, bytes);
}

halo_status halo_device_ipc_handle(halo_device *d, int chunk, void *handle) {
  if (chunk < 0 || chunk >= d->ipc.n)
    return HALO_ERROR(HALO_ERR_INTERNAL, "no IPC chunk %d on this rank", chunk);
  pool_chunk *c = &d->ipc.c[chunk];
  if (!c->exported) { /* once per chunk */
    cudaIpcMemHandle_t h;
    HALO_CUDA(cudaIpcGetMemHandle(&h, c->base));
    memcpy(c->handle, &h, sizeof h);
    c->exported = 1;
  }
  memcpy(handle, c->handle, HALO_IPC_HANDLE_BYTES);
  return HALO_SUCCESS;
}

halo_status halo_device_ipc_open(halo_device *d, int peer, int chunk, const void *handle,
                                 char **base_p) {
  for (int i = 0; i < d->n_open; i++)
    if (d->open[i].peer == peer && d->open[i].chunk == chunk) {
      *base_p = d->open[i].base;
      return HALO_SUCCESS;
    }
  if (d->n_open == d->cap_open) {
    int cap = d->cap_open ? 2 * d->cap_open : 8;
    void *q = halo_realloc(d->open, (size_t)cap * sizeof *d->open);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory opening IPC handles");
    d->open = q, d->cap_open = cap;
  }
  cudaIpcMemHandle_t h;
  void *base = NULL;
  memcpy(&h, handle, sizeof h);
  halo_debug_count_alloc();
  HALO_CUDA(cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess));
  d->open[d->n_open].peer = peer;
  d->open[d->n_open].chunk = chunk;
  d->open[d->n_open++].base = base;
  *base_p = base;
  return HALO_SUCCESS;
}

halo_status halo_device_pinned_alloc(halo_device *d, size_t bytes, void **p) {
  int chunk;
  size_t off;
  return halo_pool_alloc(&d->pinned, bytes, p, &chunk, &off);
}

void halo_device_pinned_release(halo_device *d, void *p, size_t bytes) {
  if (d) halo_pool_release(&d->pinned, p, bytes);
}

halo_status halo_device_scratch(halo_device *d, int slot, size_t bytes, int pinned, void **p) {
  *p = NULL;
  if (slot < 0 || slot >= HALO_DEVICE_SCRATCH)
    return HALO_ERROR(HALO_ERR_INTERNAL, "scratch slot %d of %d", slot, HALO_DEVICE_SCRATCH);
  if (bytes > d->scratch_bytes[slot] || !pinned != !d->scratch_pinned[slot]) {
    scratch_free(d, slot); /* grown: the old block's contents are not kept */
    if (pinned) {
      HALO_CHECK(halo_pinned_malloc(&d->scratch[slot], bytes));
    } else {
      d->scratch[slot] = halo_malloc(bytes);
      if (!d->scratch[slot])
        return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes of set-up scratch",
                          bytes);
    }
    d->scratch_bytes[slot] = bytes;
    d->scratch_pinned[slot] = pinned;
  }
  *p = d->scratch[slot];
  return HALO_SUCCESS;
}

halo_status halo_device_check_id(int device_id) {
  int count = 0;
  if (device_id < 0) return HALO_SUCCESS;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  if (device_id >= count)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "device_id = %d, but %d CUDA devices are visible",
                      device_id, count);
  return HALO_SUCCESS;
}

halo_status halo_device_compute_stream(halo_device *d, int nonblocking, void **stream_p) {
  const int i = nonblocking ? 1 : 0;
  if (!d->comp[i]) HALO_CHECK(stream_create(&d->comp[i], cudaStreamNonBlocking, 0));
  *stream_p = d->comp[i];
  return HALO_SUCCESS;
}

/* The state of a background NCCL communicator, owned by its thread and the device together:
 * the last of the two to let go frees it (a device destroyed before the thread ends does not
 * wait for it: the thread destroys what it made, and frees the state). */
typedef struct nccl_bg_s {
  pthread_t thread;
  atomic_int state; /* 0: under way, 1: made, -1: failed */
  atomic_int left;  /* the first of the thread and the device to be done sets it */
  int device, rank, size;
#if HALO_HAVE_NCCL
  ncclUniqueId id;
  ncclComm_t comm;
#endif
  char why[200]; /* -1: why */
} nccl_bg;

#if HALO_HAVE_NCCL
/* The background thread: ncclCommInitRank on the rank's GPU (it calls no MPI). */
static void *nccl_background_main(void *arg) {
  nccl_bg *bg = arg;
  ncclResult_t r = ncclInternalError;
  if (nccl_background_fails)
    snprintf(bg->why, sizeof bg->why, "failed on purpose (halo_debug_nccl_background_fail)");
  else if (cudaSetDevice(bg->device) != cudaSuccess)
    snprintf(bg->why, sizeof bg->why, "cudaSetDevice(%d) failed", bg->device);
  else if ((r = ncclCommInitRank(&bg->comm, bg->size, bg->id, bg->rank)) != ncclSuccess)
    snprintf(bg->why, sizeof bg->why, "ncclCommInitRank failed: %s", ncclGetErrorString(r));
  const int made = r == ncclSuccess && !nccl_background_fails;
  atomic_store(&bg->state, made ? 1 : -1);
  if (atomic_exchange(&bg->left, 1)) { /* the device is gone: what was made goes too */
    if (made) ncclCommDestroy(bg->comm);
    halo_free(bg);
  }
  return NULL;
}
#endif

/* How long a device's destroy waits for its background thread before it leaves it to end
 * alone (seconds): NCCL's initialisation takes 0.3-2 s; one that never ends (a peer gone) is
 * left. */
#define NCCL_BG_DESTROY_WAIT 30.0

/* Wait for the thread (wait 1; wait 2: at most NCCL_BG_DESTROY_WAIT seconds) and take its
 * communicator, made or not; else, where it has not ended, leave it to end alone. */
static void nccl_background_join(halo_device *d, int wait) {
  nccl_bg *bg = d->bg;
  if (!bg) return;
  d->bg = NULL;
  if (wait == 2) { /* (the module's code: the clock itself, libhalo's own helpers are hidden) */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if (atomic_load(&bg->state) != 0 ||
          (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) >=
              NCCL_BG_DESTROY_WAIT)
        break;
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    wait = atomic_load(&bg->state) != 0;
  }
  if (!wait && !atomic_exchange(&bg->left, 1)) { /* under way: it ends alone */
    pthread_detach(bg->thread);
    return;
  }
  pthread_join(bg->thread, NULL);
#if HALO_HAVE_NCCL
  if (atomic_load(&bg->state) == 1) {
    if (!d->have_nccl) {
      d->nccl = bg->comm;
      d->have_nccl = 1;
      d->nccl_gen++;
      nccl_comms_made++;
    } else {
      ncclCommDestroy(bg->comm);
    }
  }
#endif
  halo_free(bg);
}

halo_status halo_device_nccl_start(halo_device *d) {
#if HALO_HAVE_NCCL
  halo_status st = HALO_SUCCESS;
  /* already made, or under way, on every rank: nothing to start */
  int mine = d->have_nccl || d->bg != NULL, all = 0;
  HALO_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, d->comm));
  if (all) return HALO_SUCCESS;
  HALO_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, d->comm));
  if (all) return HALO_SUCCESS; /* some rank has one: halo_device_nccl makes a new one, blocking */
  nccl_bg *bg = halo_calloc(1, sizeof *bg); /* the thread may free it: halo_free is atomic */
  st = bg ? HALO_SUCCESS : HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory for NCCL's state");
  HALO_CHECK(halo_agree(d->comm, st));
  MPI_Comm_rank(d->comm, &bg->rank);
  MPI_Comm_size(d->comm, &bg->size);
  if (bg->rank == 0)
    st = ncclGetUniqueId(&bg->id) == ncclSuccess
             ? HALO_SUCCESS
             : HALO_ERROR(HALO_ERR_NCCL, "ncclGetUniqueId failed");
  st = halo_agree(d->comm, st);
  if (st == HALO_SUCCESS) {
    const int rc = MPI_Bcast(&bg->id, (int)sizeof bg->id, MPI_BYTE, 0, d->comm);
    if (rc != MPI_SUCCESS) st = halo_error_mpi(rc, "MPI_Bcast", __FILE__, __LINE__);
  }
  if (st != HALO_SUCCESS) {
    halo_free(bg);
    return st;
  }
  bg->device = d->device;
  atomic_store(&bg->state, 0);
  atomic_store(&bg->left, 0);
  if (pthread_create(&bg->thread, NULL, nccl_background_main, bg) != 0) {
    halo_free(bg); /* no thread: the state says failed, as a thread's failure would */
    bg = NULL;
  }
  d->bg = bg;
  d->bg_failed_start = bg == NULL;
  return HALO_SUCCESS;
#else
  (void)d;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED,
                    "transport nccl: not compiled in: rebuild with HALO_ENABLE_NCCL=ON");
#endif
}

int halo_device_nccl_state(const halo_device *d, char *why, size_t len) {
  if (d->have_nccl) return 1;
  if (d->bg_failed_start) {
    if (why && len) snprintf(why, len, "no thread could be started to make it");
    return -1;
  }
  if (!d->bg) return 2;
  const int s = atomic_load(&d->bg->state);
  if (s < 0 && why && len) snprintf(why, len, "%s", d->bg->why);
  return s;
}

halo_status halo_device_nccl(halo_device *d, void **nccl_p, int *gen_p) {
#if HALO_HAVE_NCCL
  halo_status st = HALO_SUCCESS;
  nccl_background_join(d, 1); /* one under way: waited for (a failed one is made anew below) */
  d->bg_failed_start = 0;
  /* a rank that aborted its NCCL communicator (a failed exchange) has none:
   * then every rank makes a new one, the others aborting theirs (their
   * executors see the number change) */
  int none = !d->have_nccl, any = 0;
  HALO_TRY_MPI(MPI_Allreduce(&none, &any, 1, MPI_INT, MPI_MAX, d->comm));
  if (any && d->have_nccl) halo_device_nccl_abort(d);
  if (any) {
    int rank, size;
    ncclUniqueId id;
    HALO_TRY_MPI(MPI_Comm_rank(d->comm, &rank));
    HALO_TRY_MPI(MPI_Comm_size(d->comm, &size));
    if (rank == 0)
      st = ncclGetUniqueId(&id) == ncclSuccess
               ? HALO_SUCCESS
               : HALO_ERROR(HALO_ERR_NCCL, "ncclGetUniqueId failed");
    HALO_TRY(halo_agree(d->comm, st));
    HALO_TRY_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, d->comm));
    halo_debug_count_alloc();
    ncclResult_t r = ncclCommInitRank(&d->nccl, size, id, rank);
    st = r == ncclSuccess ? HALO_SUCCESS
                          : halo_error_nccl(r, "ncclCommInitRank", __FILE__, __LINE__);
    HALO_TRY(halo_agree(d->comm, st));
    d->have_nccl = 1;
    d->nccl_gen++;
    nccl_comms_made++;
  }
  *nccl_p = d->nccl;
  *gen_p = d->nccl_gen;
cleanup:
  return st;
#else
  (void)d, (void)nccl_p, (void)gen_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED,
                    "transport nccl: not compiled in: rebuild with HALO_ENABLE_NCCL=ON");
#endif
}

void halo_device_nccl_abort(halo_device *d) {
#if HALO_HAVE_NCCL
  if (d && d->have_nccl) {
    (void)ncclCommAbort(d->nccl); /* its kernels stop waiting; its handle is gone */
    d->have_nccl = 0;
    nccl_comms_aborted++;
  }
#else
  (void)d;
#endif
}

int halo_device_nccl_current(const halo_device *d, int gen) {
  return d && d->have_nccl && d->nccl_gen == gen;
}

halo_status halo_device_nvshmem(halo_device *d) {
  HALO_CHECK(d->nv ? HALO_SUCCESS : halo_nv_state_create(d->comm, &d->nv));
  /* ranks that share a GPU: only where NVSHMEM runs them in full (MPS) */
  return d->ranks_per_gpu > 1 ? halo_nv_state_shared_gpu(d->nv, d->comm, d->ranks_per_gpu)
                              : HALO_SUCCESS;
}

int halo_device_nvshmem_pe(const halo_device *d, int rank) { return halo_nv_state_pe(d->nv, rank); }

halo_status halo_device_nvshmem_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p) {
  return halo_nv_state_alloc(d->nv, d->comm, bytes, p, chunk_p);
}

char *halo_device_nvshmem_base(const halo_device *d, int chunk) {
  return halo_nv_state_base(d->nv, chunk);
}

void halo_device_nvshmem_release(halo_device *d, void *p) { halo_nv_state_release(d->nv, p); }

halo_status halo_device_stream_sync(void *stream) {
  HALO_CUDA(cudaStreamSynchronize((cudaStream_t)stream));
  return HALO_SUCCESS;
}

halo_status halo_device_streams_wait(void *const *streams, int n, int64_t timeout_ms) {
  if (timeout_ms <= 0) {
    for (int i = 0; i < n; i++) HALO_CUDA(cudaStreamSynchronize((cudaStream_t)streams[i]));
    return HALO_SUCCESS;
  }
  const double deadline = MPI_Wtime() + 1e-3 * (double)timeout_ms;
  for (int i = 0; i < n;) {
    const cudaError_t e = cudaStreamQuery((cudaStream_t)streams[i]);
    if (e == cudaSuccess) {
      i++;
      continue;
    }
    if (e != cudaErrorNotReady) return halo_error_cuda(e, "cudaStreamQuery", __FILE__, __LINE__);
    if (MPI_Wtime() > deadline)
      return HALO_ERROR(HALO_ERR_TIMEOUT,
                        "the GPU's work waited %lld ms for an exchange (exchange_timeout_ms): a "
                        "peer failed, stopped or is late; the GPU goes on waiting for it without "
                        "the host",
                        (long long)timeout_ms);
  }
  return HALO_SUCCESS;
}

#else /* no CUDA: every entry says so */

halo_status halo_device_create(MPI_Comm comm, int device_id, halo_device **dev_p) {
  (void)comm, (void)device_id;
  *dev_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_device_destroy(halo_device **dev_p) {
  if (dev_p) *dev_p = NULL;
}
int halo_device_id(const halo_device *d) { return (void)d, -1; }
halo_status halo_device_check_id(int device_id) {
  (void)device_id;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
int halo_device_ranks_per_gpu(const halo_device *d) { return (void)d, 0; }
const char *halo_device_name(const halo_device *d) { return (void)d, ""; }
int halo_device_mpi_aware(const halo_device *d, int setting) { return (void)d, setting > 0; }
MPI_Comm halo_device_machine_comm(const halo_device *d) { return (void)d, MPI_COMM_NULL; }
MPI_Comm halo_device_comm(const halo_device *d) { return (void)d, MPI_COMM_NULL; }
void *halo_device_exchange_stream(const halo_device *d) { return (void)d, NULL; }
halo_status halo_device_compute_stream(halo_device *d, int nonblocking, void **stream_p) {
  (void)d, (void)nonblocking, (void)stream_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_nccl(halo_device *d, void **nccl_p, int *gen_p) {
  (void)d, (void)nccl_p, (void)gen_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

halo_status halo_device_nccl_start(halo_device *d) {
  (void)d;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
int halo_device_nccl_state(const halo_device *d, char *why, size_t len) {
  (void)d, (void)why, (void)len;
  return 2;
}
void halo_device_nccl_abort(halo_device *d) { (void)d; }

int halo_device_nccl_current(const halo_device *d, int gen) {
  (void)d, (void)gen;
  return 0;
}
halo_status halo_device_nvshmem(halo_device *d) {
  (void)d;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
int halo_device_nvshmem_pe(const halo_device *d, int rank) { return (void)d, (void)rank, -1; }
halo_status halo_device_nvshmem_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p) {
  (void)d, (void)bytes, (void)p, (void)chunk_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
char *halo_device_nvshmem_base(const halo_device *d, int chunk) {
  return (void)d, (void)chunk, NULL;
}
void halo_device_nvshmem_release(halo_device *d, void *p) { (void)d, (void)p; }
halo_status halo_device_stream_sync(void *stream) {
  (void)stream;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_streams_wait(void *const *streams, int n, int64_t timeout_ms) {
  (void)streams, (void)n, (void)timeout_ms;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_ipc_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p,
                                  int64_t *offset_p) {
  (void)d, (void)bytes, (void)chunk_p, (void)offset_p;
  *p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_device_ipc_release(halo_device *d, void *p, size_t bytes) {
  (void)d, (void)p, (void)bytes;
}
halo_status halo_device_ipc_handle(halo_device *d, int chunk, void *handle) {
  (void)d, (void)chunk, (void)handle;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_ipc_open(halo_device *d, int peer, int chunk, const void *handle,
                                 char **base_p) {
  (void)d, (void)peer, (void)chunk, (void)handle, (void)base_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_pinned_alloc(halo_device *d, size_t bytes, void **p) {
  (void)d, (void)bytes;
  *p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_device_pinned_release(halo_device *d, void *p, size_t bytes) {
  (void)d, (void)p, (void)bytes;
}
halo_status halo_device_scratch(halo_device *d, int slot, size_t bytes, int pinned, void **p) {
  (void)d, (void)slot, (void)bytes, (void)pinned;
  *p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
#endif
