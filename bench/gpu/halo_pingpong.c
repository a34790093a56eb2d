/* OSU-style latency and bandwidth of one halo message, 8 B to 64 MB, through
 * each device transport ("D": nccl, ipc, device to device; "H": staged through
 * pinned host buffers), on 2 ranks: each rank owns n rows that read the n
 * entries of the other, so one exchange is one message of n values each way.
 * Beside them, measured in the same run: pinned copies down and up
 * (cudaMemcpyAsync), the peer copy between the two GPUs, and host MPI of the
 * same size, so that the staged path can be read against its parts; and the
 * copies inside the staged exchanges, timed with events (the setting staged.copy_timing).
 * A second table: the one-sided transports, rma (staged through pinned host
 * buffers, MPI_Put) and nvshmem (puts from the GPU, with 2 GPUs and NVSHMEM
 * built in), beside staged and nccl of the same run.
 * usage: mpirun -n 2 halo_pingpong [MAX_BYTES [MIN_BYTES]] ; prints Markdown tables */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)
#define HK(call)                                                                                   \
  do {                                                                                             \
    halo_status s_ = (call);                                                                       \
    if (s_ != HALO_SUCCESS) {                                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, halo_last_error());            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over 5 repeats of the mean time of iters exchanges (max over ranks). */
static double time_exchange(halo_plan plan, const double *dx, int iters) {
  double t[5];
  for (int r = 0; r < 5; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
      HK(halo_exchange_begin(plan, dx, NULL));
      HK(halo_exchange_end(plan));
      HK(halo_plan_synchronize(plan));
    }
    t[r] = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  qsort(t, 5, sizeof *t, cmp_d);
  return t[2];
}

/* Median time of one async copy of bytes (events), over 5 repeats of iters. */
static double time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                        int iters, cudaStream_t s) {
  cudaEvent_t a, b;
  double t[5];
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; i++) CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t[r] = 1e-3 * ms / iters;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  qsort(t, 5, sizeof *t, cmp_d);
  return t[2];
}

/* Host MPI ping-pong of bytes between pinned buffers: one-way time. */
static double time_mpi(void *buf, size_t bytes, int iters, int rank) {
  double t[5];
  for (int r = 0; r < 5; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
      if (rank == 0) {
        MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
      }
    }
    t[r] = (MPI_Wtime() - t0) / iters / 2;
  }
  qsort(t, 5, sizeof *t, cmp_d);
  return t[2];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P, ndev = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P != 2) {
    if (rank == 0) fprintf(stderr, "halo_pingpong runs on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const int64_t max_bytes = argc > 1 ? atoll(argv[1]) : (64 << 20);
  const int64_t min_bytes = argc > 2 ? atoll(argv[2]) : 8;
  CK(cudaGetDeviceCount(&ndev));
  const int dev = rank % ndev, two_gpus = ndev >= 2;
  CK(cudaSetDevice(dev));
  /* staged, ipc, nccl (first table); rma, nvshmem (second) */
  halo_transport ts[5] = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_IPC, HALO_TRANSPORT_NCCL,
                          HALO_TRANSPORT_RMA, HALO_TRANSPORT_NVSHMEM};
  const int n_ts = two_gpus && HALO_HAVE_NCCL ? 3 : 2;
  const int have_nv = two_gpus && HALO_HAVE_NVSHMEM;
  enum { N_SIZES = 9 };
  double t_one[N_SIZES][4]; /* per size: staged, nccl, rma, nvshmem (0: not run) */
  int64_t one_bytes[N_SIZES];
  int n_one = 0;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  if (rank == 0) {
    printf("2 ranks on %s; each exchange moves one message of the size each way; "
           "median of 5 repeats of the mean over the iterations; us = microseconds, "
           "GB/s = size / time\n\n",
           two_gpus ? "2 GPUs" : "1 GPU");
    printf("| bytes | staged (H) us | ipc (D) us |%s pinned D2H us | pinned H2D us | host MPI "
           "us | staged parts us |%s staged GB/s | ipc GB/s |%s pinned GB/s | staged copies "
           "GB/s |%s\n",
           n_ts == 3 ? " nccl (D) us |" : "", two_gpus ? " peer copy us |" : "",
           n_ts == 3 ? " nccl GB/s |" : "", two_gpus ? " peer GB/s |" : "");
    printf("|---|---|---|%s---|---|---|---|%s---|---|%s---|---|%s\n", n_ts == 3 ? "---|" : "",
           two_gpus ? "---|" : "", n_ts == 3 ? "---|" : "", two_gpus ? "---|" : "");
  }
  const int64_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 67108864};
  for (int si = 0; si < (int)(sizeof sizes / sizeof sizes[0]) && sizes[si] <= max_bytes; si++) {
    const int64_t bytes = sizes[si];
    if (bytes < min_bytes) continue;
    const int64_t n = bytes / 8;
    const int iters = bytes <= (1 << 16) ? 500 : bytes <= (1 << 22) ? 100 : 20;
    /* rows [rank*n, rank*n + n); row i reads i and its twin on the other rank */
    int64_t *ptr = malloc((size_t)(n + 1) * sizeof *ptr),
            *col = malloc((size_t)(2 * n) * sizeof *col);
    double *val = malloc((size_t)(2 * n) * sizeof *val), *hx = malloc((size_t)n * sizeof *hx);
    const int64_t b = rank * n, other = (1 - rank) * n;
    for (int64_t i = 0; i < n; i++) {
      ptr[i] = 2 * i;
      int64_t c0 = b + i, c1 = other + i;
      col[2 * i] = c0 < c1 ? c0 : c1, col[2 * i + 1] = c0 < c1 ? c1 : c0;
      val[2 * i] = val[2 * i + 1] = 1.0;
      hx[i] = (double)(b + i);
    }
    ptr[n] = 2 * n;
    halo_matrix A;
    HK(halo_matrix_create_csr(MPI_COMM_WORLD, b, b + n, b, b + n, ptr, col, val, HALO_MEMORY_HOST,
                              &A));
    double *dx;
    CK(cudaMalloc((void **)&dx, (size_t)bytes));
    CK(cudaMemcpy(dx, hx, (size_t)bytes, cudaMemcpyHostToDevice));
    double t_tr[5] = {0, 0, 0, 0, 0}, copy_bw = 0;
    for (int k = 0; k < 5; k++) {
      if ((k == 2 && n_ts < 3) || (k == 4 && !have_nv)) continue;
      halo_plan_options o = halo_plan_options_default();
      o.memory = HALO_MEMORY_DEVICE, o.transport = ts[k], o.device_id = dev;
      halo_plan plan;
      HK(halo_plan_create(A, &o, &plan));
      /* the ghosts must be the other rank's x */
      double *g, *hg = malloc((size_t)bytes);
      HK(halo_exchange_begin(plan, dx, NULL));
      HK(halo_exchange_end(plan));
      HK(halo_plan_synchronize(plan));
      HK(halo_plan_get_ghost(plan, &g));
      CK(cudaMemcpy(hg, g, (size_t)bytes, cudaMemcpyDeviceToHost));
      for (int64_t i = 0; i < n; i++)
        if (hg[i] != (double)(other + i)) {
          fprintf(stderr, "rank %d, %s, %lld bytes: ghost %lld wrong\n", rank,
                  halo_transport_name(ts[k]), (long long)bytes, (long long)i);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      free(hg);
      for (int w = 0; w < 10; w++) {
        HK(halo_exchange_begin(plan, dx, NULL));
        HK(halo_exchange_end(plan));
      }
      HK(halo_plan_synchronize(plan));
      t_tr[k] = time_exchange(plan, dx, iters);
      halo_plan_destroy(&plan);
      if (ts[k] == HALO_TRANSPORT_STAGED) {
        /* the copies inside staged exchanges, timed with events in a plan of
         * their own (the timers cost a little latency) */
        double td, tu;
        int64_t bd, bu;
        halo_plan_options ot = o;
        ot.settings = "staged.copy_timing=1";
        HK(halo_plan_create(A, &ot, &plan));
        time_exchange(plan, dx, iters > 100 ? 100 : iters);
        HK(halo_plan_copy_times(plan, &td, &tu, &bd, &bu));
        copy_bw = td + tu > 0 ? (double)(bd + bu) / (td + tu) / 1e9 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &copy_bw, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        halo_plan_destroy(&plan);
      }
    }
    /* the parts: pinned copies, peer copy, host MPI */
    double *pin, *dbuf, *peer = NULL;
    CK(cudaMallocHost((void **)&pin, (size_t)bytes));
    CK(cudaMalloc((void **)&dbuf, (size_t)bytes));
    const double t_d2h = time_copy(pin, dbuf, (size_t)bytes, cudaMemcpyDeviceToHost, iters, s);
    const double t_h2d = time_copy(dbuf, pin, (size_t)bytes, cudaMemcpyHostToDevice, iters, s);
    const double t_mpi = time_mpi(pin, (size_t)bytes, iters, rank);
    double t_peer = 0;
    if (two_gpus && rank == 0) {
      int can = 0;
      CK(cudaDeviceCanAccessPeer(&can, 0, 1));
      CK(cudaSetDevice(1));
      CK(cudaMalloc((void **)&peer, (size_t)bytes));
      CK(cudaSetDevice(0));
      if (can) cudaDeviceEnablePeerAccess(1, 0), cudaGetLastError();
      t_peer = time_copy(peer, dbuf, (size_t)bytes, cudaMemcpyDeviceToDevice, iters, s);
      CK(cudaFree(peer));
    }
    one_bytes[n_one] = bytes;
    t_one[n_one][0] = t_tr[0], t_one[n_one][1] = t_tr[2], t_one[n_one][2] = t_tr[3];
    t_one[n_one][3] = t_tr[4];
    n_one++;
    if (rank == 0) {
      const double gb = (double)bytes / 1e9, parts = t_d2h + t_mpi + t_h2d;
      printf("| %lld | %.1f | %.1f |", (long long)bytes, 1e6 * t_tr[0], 1e6 * t_tr[1]);
      if (n_ts == 3) printf(" %.1f |", 1e6 * t_tr[2]);
      printf(" %.1f | %.1f | %.1f | %.1f |", 1e6 * t_d2h, 1e6 * t_h2d, 1e6 * t_mpi, 1e6 * parts);
      if (two_gpus) printf(" %.1f |", 1e6 * t_peer);
      printf(" %.2f | %.2f |", gb / t_tr[0], gb / t_tr[1]);
      if (n_ts == 3) printf(" %.2f |", gb / t_tr[2]);
      printf(" %.2f | %.2f |", gb / t_d2h, copy_bw);
      if (two_gpus) printf(" %.2f |", gb / t_peer);
      printf("\n");
      fflush(stdout);
    }
    CK(cudaFreeHost(pin));
    CK(cudaFree(dbuf));
    CK(cudaFree(dx));
    halo_matrix_destroy(&A);
    free(ptr), free(col), free(val), free(hx);
  }
  if (rank == 0) { /* the one-sided transports beside staged and nccl */
    printf("\n| bytes | staged (H) us | rma (H) us | nccl (D) us | nvshmem (D) us | rma / staged |"
           " nvshmem / nccl | rma GB/s | nvshmem GB/s |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n_one; i++) {
      const double gb = (double)one_bytes[i] / 1e9, *t = t_one[i];
      printf("| %lld | %.1f | %.1f |", (long long)one_bytes[i], 1e6 * t[0], 1e6 * t[2]);
      if (t[1] > 0)
        printf(" %.1f |", 1e6 * t[1]);
      else
        printf(" - |");
      if (t[3] > 0)
        printf(" %.1f |", 1e6 * t[3]);
      else
        printf(" - |");
      printf(" %.2f |", t[2] / t[0]);
      if (t[1] > 0 && t[3] > 0)
        printf(" %.2f |", t[3] / t[1]);
      else
        printf(" - |");
      printf(" %.2f |", gb / t[2]);
      if (t[3] > 0)
        printf(" %.2f |\n", gb / t[3]);
      else
        printf(" - |\n");
    }
  }
  cudaStreamDestroy(s);
  MPI_Finalize();
  return 0;
}
