/* NVSHMEM over one communicator (device_nvshmem.h). */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/device_nvshmem.h"

#if HALO_HAVE_NVSHMEM
#include "exec/nvshmem_lib.h"

/* The PE of each rank of the communicator, and the symmetric chunks (made
 * collectively, in the same order on every rank; one executor's at a time;
 * freed with the state). */
struct halo_nv_state_s {
  int *pe;
  int broken, n, cap;
  struct {
    void *base;
    size_t size;
    int used;
  } * c;
};

static int nv_states; /* states of this process */
static int nv_ours;   /* halo initialised NVSHMEM: it ends it with the last state */

halo_status halo_nv_state_create(MPI_Comm comm, halo_nv_state **s_p) {
  halo_status st = HALO_SUCCESS;
  halo_nv_state *s = NULL;
  int rank, size, inited[2], any[2], my_pe = -1, n_pes = 0, *seen = NULL;
  unsigned char uid[HALO_NV_UID_BYTES];
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  inited[0] = halo_nvshmem_initialized();
  inited[1] = !inited[0];
  HALO_TRY_MPI(MPI_Allreduce(inited, any, 2, MPI_INT, MPI_MAX, comm));
  if (any[0] && any[1])
    HALO_FAIL(HALO_ERR_INVALID_ARG,
              "transport nvshmem: NVSHMEM is initialised on some ranks of the communicator and "
              "not on others: every nvshmem plan of a process must be on the same processes");
  if (!any[0]) { /* halo initialises it over this communicator */
    memset(uid, 0, sizeof uid);
    if (rank == 0 && halo_nvshmem_get_uid(uid) != 0)
      st = HALO_ERROR(HALO_ERR_CUDA, "transport nvshmem: %s", halo_nvshmem_error());
    HALO_TRY(halo_agree(comm, st));
    HALO_TRY_MPI(MPI_Bcast(uid, (int)sizeof uid, MPI_BYTE, 0, comm));
    halo_debug_count_alloc();
    if (halo_nvshmem_init(rank, size, uid) != 0)
      st = HALO_ERROR(HALO_ERR_CUDA, "transport nvshmem: %s", halo_nvshmem_error());
    HALO_TRY(halo_agree(comm, st));
    nv_ours = 1;
  }
  my_pe = halo_nvshmem_my_pe();
  n_pes = halo_nvshmem_n_pes();
  st = HALO_CALLOC(s, 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(s->pe, size);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(seen, size);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Allgather(&my_pe, 1, MPI_INT, s->pe, 1, MPI_INT, comm));
  int bad = n_pes != size;
  for (int r = 0; r < size && !bad; r++) {
    bad = s->pe[r] < 0 || s->pe[r] >= size || seen[s->pe[r]];
    if (!bad) seen[s->pe[r]] = 1;
  }
  HALO_TRY_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  if (bad)
    HALO_FAIL(HALO_ERR_INVALID_ARG,
              "transport nvshmem: NVSHMEM runs over %d processes, but this communicator has %d "
              "ranks: every nvshmem plan of a process must be on a communicator of the processes "
              "of the first (its symmetric memory is allocated by all of them together)",
              n_pes, size);
  nv_states++;
  *s_p = s;
  s = NULL;
cleanup:
  halo_free(seen);
  if (s) halo_free(s->pe);
  halo_free(s);
  return st;
}

void halo_nv_state_destroy(halo_nv_state **s_p) {
  halo_nv_state *s = s_p ? *s_p : NULL;
  if (!s) return;
  if (!s->broken)
    for (int k = 0; k < s->n; k++) halo_nvshmem_free(s->c[k].base);
  if (--nv_states == 0 && nv_ours) {
    halo_nvshmem_finalize();
    nv_ours = 0;
  }
  halo_free(s->c);
  halo_free(s->pe);
  halo_free(s);
  *s_p = NULL;
}

int halo_nv_state_pe(const halo_nv_state *s, int rank) { return s ? s->pe[rank] : -1; }

halo_status halo_nv_state_alloc(halo_nv_state *s, MPI_Comm comm, size_t bytes, void **p,
                                int *chunk_p) {
  halo_status st = HALO_SUCCESS;
  *p = NULL;
  if (!s || s->broken)
    return HALO_ERROR(HALO_ERR_STATE, "transport nvshmem: %s",
                      s->broken ? "a symmetric allocation failed on some rank earlier: "
                                  "the ranks' symmetric memory no longer agrees"
                                : "NVSHMEM is not set up on this communicator");
  bytes = (bytes + 255) / 256 * 256;
  if (bytes == 0) bytes = 256;
  int k = -1;
  for (int i = 0; i < s->n; i++)
    if (!s->c[i].used && s->c[i].size >= bytes && (k < 0 || s->c[i].size < s->c[k].size)) k = i;
  if (s->n == s->cap) { /* room for a new chunk before anything collective */
    const int cap = s->cap ? 2 * s->cap : 8;
    void *q = halo_realloc(s->c, (size_t)cap * sizeof *s->c);
    if (q)
      s->c = q, s->cap = cap;
    else
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory listing symmetric chunks");
  }
  HALO_TRY(halo_agree(comm, st));
  unsigned long long need = k < 0 ? (unsigned long long)bytes : 0ULL, most = 0;
  HALO_TRY_MPI(MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
  if (most > 0) { /* a new chunk on every rank, of what the neediest needs */
    const size_t size = most < (1ULL << 20) ? (size_t)1 << 20 : (size_t)most;
    halo_debug_count_alloc();
    void *b = halo_nvshmem_malloc(size);
    int ok = b != NULL, all = 0;
    HALO_TRY_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
    if (!all) {
      s->broken = 1; /* chunks made on some ranks only: never freed, never used */
      HALO_FAIL(HALO_ERR_OUT_OF_MEMORY,
                "transport nvshmem: a symmetric allocation of %zu bytes failed on some rank%s%s",
                size, b ? "" : ": ", b ? "" : halo_nvshmem_error());
    }
    s->c[s->n].base = b, s->c[s->n].size = size, s->c[s->n].used = 0;
    if (k < 0) k = s->n;
    s->n++;
  }
  s->c[k].used = 1;
  *p = s->c[k].base;
  *chunk_p = k;
cleanup:
  return st;
}

halo_status halo_nv_state_shared_gpu(const halo_nv_state *s, MPI_Comm comm, int ranks_per_gpu) {
  halo_status st = HALO_SUCCESS;
  int mode = s ? halo_nvshmem_mpg() : 0, least = 0;
  HALO_TRY_MPI(MPI_Allreduce(&mode, &least, 1, MPI_INT, MPI_MIN, comm));
  if (least < 2)
    HALO_FAIL(HALO_ERR_UNSUPPORTED,
              "transport nvshmem: %d ranks share a GPU, and NVSHMEM runs them in its limited mode: "
              "it needs CUDA MPS running, with the CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of a GPU's "
              "ranks adding up to at most 100 (%d each) or "
              "NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 (halo's waits hold one block a "
              "launch); or use staged or ipc",
              ranks_per_gpu, 100 / (ranks_per_gpu > 0 ? ranks_per_gpu : 1));
cleanup:
  return st;
}

char *halo_nv_state_base(const halo_nv_state *s, int chunk) {
  return s && chunk >= 0 && chunk < s->n ? (char *)s->c[chunk].base : NULL;
}

void halo_nv_state_release(halo_nv_state *s, void *p) {
  for (int i = 0; s && p && i < s->n; i++)
    if (s->c[i].base == p) s->c[i].used = 0;
}

#else /* CUDA without NVSHMEM */

#define HALO_NO_NVSHMEM_MESSAGE                                                                    \
  "transport nvshmem: not compiled in: rebuild with HALO_ENABLE_NVSHMEM=ON and NVSHMEM_HOME"

halo_status halo_nv_state_create(MPI_Comm comm, halo_nv_state **s_p) {
  (void)comm, (void)s_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_NVSHMEM_MESSAGE);
}
void halo_nv_state_destroy(halo_nv_state **s_p) { (void)s_p; }
int halo_nv_state_pe(const halo_nv_state *s, int rank) { return (void)s, (void)rank, -1; }
halo_status halo_nv_state_alloc(halo_nv_state *s, MPI_Comm comm, size_t bytes, void **p,
                                int *chunk_p) {
  (void)s, (void)comm, (void)bytes, (void)p, (void)chunk_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_NVSHMEM_MESSAGE);
}
halo_status halo_nv_state_shared_gpu(const halo_nv_state *s, MPI_Comm comm, int ranks_per_gpu) {
  (void)s, (void)comm, (void)ranks_per_gpu;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_NVSHMEM_MESSAGE);
}
char *halo_nv_state_base(const halo_nv_state *s, int chunk) { return (void)s, (void)chunk, NULL; }
void halo_nv_state_release(halo_nv_state *s, void *p) { (void)s, (void)p; }

#endif /* HALO_HAVE_NVSHMEM */
#endif /* HALO_HAVE_CUDA */
