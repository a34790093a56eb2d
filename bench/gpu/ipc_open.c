/* What opening a peer's CUDA IPC memory costs, and what it depends on: a rank
 * per GPU allocates K buffers of 1 MiB (as an application's set-up would have
 * by then), then exports a 16 MiB buffer, gathers the others' handles and
 * opens each (cudaIpcMemLazyEnablePeerAccess), timing each step; mode 1
 * enables peer access first (cudaDeviceEnablePeerAccess), so that the open is
 * timed apart from it. Then the cost of 100 cudaMalloc/cudaFree pairs of
 * 1 MiB after the opens against before. Mode 2 opens each peer's in a thread of
 * its own, at once; mode 3 opens them in one background thread while this one
 * makes 100 cudaMalloc/cudaFree pairs (the application's set-up going on), and
 * times both.
 *
 *   mpirun -n P ipc_open K MODE     (P ranks on P GPUs) */
#include <cuda_runtime.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

typedef struct {
  int device, n;
  cudaIpcMemHandle_t *h;
  double seconds;
} opener;

static void *open_them(void *arg) {
  opener *o = arg;
  double t0 = MPI_Wtime();
  CK(cudaSetDevice(o->device));
  for (int i = 0; i < o->n; i++) {
    void *q;
    CK(cudaIpcOpenMemHandle(&q, o->h[i], cudaIpcMemLazyEnablePeerAccess));
  }
  o->seconds = MPI_Wtime() - t0;
  return NULL;
}

static double allocs(int n) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    void *p;
    CK(cudaMalloc(&p, 1 << 20));
    CK(cudaFree(p));
  }
  return (MPI_Wtime() - t0) / n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int k = argc > 1 ? atoi(argv[1]) : 0, mode = argc > 2 ? atoi(argv[2]) : 0;
  CK(cudaSetDevice(rank));
  CK(cudaFree(0));
  void **keep = calloc((size_t)k + 1, sizeof *keep);
  for (int i = 0; i < k; i++) CK(cudaMalloc(&keep[i], 1 << 20));
  const double before = allocs(100);
  MPI_Barrier(MPI_COMM_WORLD);
  double t[4] = {0, 0, 0, 0}, t0 = MPI_Wtime();
  if (mode == 1)
    for (int p = 0; p < size; p++)
      if (p != rank) CK(cudaDeviceEnablePeerAccess(p, 0));
  t[0] = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  void *buf;
  cudaIpcMemHandle_t mine, *all = malloc((size_t)size * sizeof *all);
  CK(cudaMalloc(&buf, 16 << 20));
  CK(cudaIpcGetMemHandle(&mine, buf));
  t[1] = MPI_Wtime() - t0;
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  cudaIpcMemHandle_t *peers = malloc((size_t)size * sizeof *peers);
  int np = 0;
  for (int p = 0; p < size; p++)
    if (p != rank) peers[np++] = all[p];
  if (mode <= 1) {
    opener o = {rank, np, peers, 0};
    open_them(&o);
  } else if (mode == 2) {
    pthread_t th[64];
    opener o[64];
    for (int i = 0; i < np; i++) {
      o[i] = (opener){rank, 1, &peers[i], 0};
      pthread_create(&th[i], NULL, open_them, &o[i]);
    }
    for (int i = 0; i < np; i++) pthread_join(th[i], NULL);
  } else {
    pthread_t th;
    opener o = {rank, np, peers, 0};
    pthread_create(&th, NULL, open_them, &o);
    t[3] = allocs(100);
    pthread_join(th, NULL);
    t[1] = o.seconds; /* the background thread's own time, in the export's place */
  }
  t[2] = MPI_Wtime() - t0;
  const double after = allocs(100);
  double most[4];
  MPI_Reduce(t, most, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  double a[2] = {before, after}, am[2];
  MPI_Reduce(a, am, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("ranks %d, %d buffers of 1 MiB, mode %d: enable peer access %.3f ms, export %.3f ms, "
           "open %d peers %.3f ms; cudaMalloc+cudaFree of 1 MiB %.1f us before, %.1f us after, "
           "%.1f us during the opens (mode 3; its thread's time in place of the export's)\n",
           size, k, mode, 1e3 * most[0], 1e3 * most[1], size - 1, 1e3 * most[2], 1e6 * am[0],
           1e6 * am[1], 1e6 * most[3]);
  MPI_Finalize();
  return 0;
}
