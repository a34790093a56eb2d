/* The distribution of one exchange's time, transport against transport, in
 * one run (bench/onesided.sh; results in bench/results/onesided.md).
 *
 * usage: bench_exchange_dist GEN N TRANSPORT... [--strategy S] [--ranks-per-node K]
 *                            [--memory device]
 *
 * On the generated matrix GEN (as `halo spmv --gen`), one plan per transport
 * (host memory, or device memory with x and the ghosts on the GPU; reverse
 * off); N exchanges of each (begin and end, back to back; in device memory
 * with halo_plan_synchronize, so that the GPU's part is in the time), in blocks of 100 taken in
 * turn from each plan so that drift of the machine falls on all alike, after 100 untimed. An
 * exchange's time is the most of any rank (times kept per rank and reduced once at the end).
 * Prints, per transport, the median, p90, p99, p99.9, the largest and the mean, in microseconds,
 * and checks that every plan's ghosts are the first's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"
#include "halo/io.h"
#if HALO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define MAX_T 8
#define BLOCK 100

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quantile(const double *sorted, int n, double q) {
  int i = (int)ceil(q * n) - 1;
  return sorted[i < 0 ? 0 : i >= n ? n - 1 : i];
}

#define OK(call)                                                                                   \
  do {                                                                                             \
    if ((call) != HALO_SUCCESS) {                                                                  \
      fprintf(stderr, "bench_exchange_dist: %s: %s\n", #call, halo_last_error());                  \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc < 4) {
    if (!rank)
      fprintf(stderr,
              "usage: %s GEN N TRANSPORT... [--strategy S] [--ranks-per-node K] "
              "[--memory device]\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int n = atoi(argv[2]);
  halo_transport tr[MAX_T];
  int nt = 0, rpn = 0, device = 0;
  halo_strategy strategy = HALO_STRATEGY_STANDARD;
  for (int a = 3; a < argc; a++) {
    if (strcmp(argv[a], "--strategy") == 0 && a + 1 < argc) {
      OK(halo_strategy_from_name(argv[++a], &strategy));
    } else if (strcmp(argv[a], "--ranks-per-node") == 0 && a + 1 < argc) {
      rpn = atoi(argv[++a]);
    } else if (strcmp(argv[a], "--memory") == 0 && a + 1 < argc) {
      device = strcmp(argv[++a], "device") == 0;
    } else if (nt < MAX_T) {
      OK(halo_transport_from_name(argv[a], &tr[nt++]));
    }
  }
  if (device && !HALO_HAVE_CUDA) {
    if (!rank) fprintf(stderr, "bench_exchange_dist: --memory device needs CUDA\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (n < BLOCK || nt == 0) {
    if (!rank) fprintf(stderr, "bench_exchange_dist: N >= %d and a transport, please\n", BLOCK);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  halo_gen g;
  halo_csr local;
  int64_t *row_begin;
  OK(halo_gen_parse(argv[1], &g));
  OK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &row_begin, &local));
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1];
  halo_matrix A;
  OK(halo_matrix_create_csr(MPI_COMM_WORLD, rb, re, rb, re, local.row_ptr, local.col_ids,
                            local.values, HALO_MEMORY_HOST, &A));
  int64_t ng;
  OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  halo_plan plan[MAX_T];
  double *x = malloc((size_t)(re - rb + 1) * sizeof *x);
  double *ghost[MAX_T], *t[MAX_T], *dx = x, *dghost[MAX_T];
  for (int64_t i = 0; i < re - rb; i++) x[i] = (double)(rb + i);
  for (int k = 0; k < nt; k++) {
    halo_plan_options o = halo_plan_options_default();
    o.strategy = strategy;
    o.transport = tr[k];
    o.ranks_per_node = rpn;
    o.reverse = 0;
    o.memory = device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
    OK(halo_plan_create(A, &o, &plan[k]));
    ghost[k] = malloc((size_t)(ng + 1) * sizeof(double));
    dghost[k] = ghost[k];
    t[k] = malloc((size_t)n * sizeof(double));
  }
#if HALO_HAVE_CUDA
  if (device) { /* after the first plan chose this rank's GPU */
    if (cudaMalloc((void **)&dx, (size_t)(re - rb + 1) * sizeof *x) != cudaSuccess ||
        cudaMemcpy(dx, x, (size_t)(re - rb) * sizeof *x, cudaMemcpyHostToDevice) != cudaSuccess)
      MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < nt; k++)
      if (cudaMalloc((void **)&dghost[k], (size_t)(ng + 1) * sizeof(double)) != cudaSuccess)
        MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  for (int k = 0; k < nt; k++)
    for (int i = 0; i < BLOCK; i++) { /* untimed */
      OK(halo_exchange_begin(plan[k], dx, dghost[k]));
      OK(halo_exchange_end(plan[k]));
      if (device) OK(halo_plan_synchronize(plan[k]));
    }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int b = 0; b < n / BLOCK; b++)
    for (int k = 0; k < nt; k++)
      for (int i = b * BLOCK; i < (b + 1) * BLOCK; i++) {
        const double t0 = MPI_Wtime();
        OK(halo_exchange_begin(plan[k], dx, dghost[k]));
        OK(halo_exchange_end(plan[k]));
        if (device) OK(halo_plan_synchronize(plan[k]));
        t[k][i] = MPI_Wtime() - t0;
      }
#if HALO_HAVE_CUDA
  for (int k = 0; device && k < nt; k++)
    if (cudaMemcpy(ghost[k], dghost[k], (size_t)ng * sizeof(double), cudaMemcpyDeviceToHost) !=
        cudaSuccess)
      MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  int same = 1;
  for (int k = 1; k < nt; k++)
    same &= ng == 0 || memcmp(ghost[k], ghost[0], (size_t)ng * sizeof(double)) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int m = n / BLOCK * BLOCK;
  for (int k = 0; k < nt; k++) {
    MPI_Allreduce(MPI_IN_PLACE, t[k], m, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank) continue;
    double mean = 0.0;
    for (int i = 0; i < m; i++) mean += t[k][i] / m;
    qsort(t[k], (size_t)m, sizeof(double), cmp_double);
    if (k == 0)
      printf("%s, %d ranks, %s, %s memory, %d exchanges each (max over ranks), us:\n"
             "transport  p50      p90      p99      p99.9    max      mean\n",
             argv[1], P, halo_strategy_name(strategy), device ? "device" : "host", m);
    printf("%-9s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", halo_transport_name(tr[k]),
           1e6 * quantile(t[k], m, 0.5), 1e6 * quantile(t[k], m, 0.9),
           1e6 * quantile(t[k], m, 0.99), 1e6 * quantile(t[k], m, 0.999), 1e6 * t[k][m - 1],
           1e6 * mean);
  }
  if (!rank) printf("ghosts the same on every transport: %s\n", same ? "yes" : "NO");
  for (int k = 0; k < nt; k++) {
    halo_plan_destroy(&plan[k]);
#if HALO_HAVE_CUDA
    if (device) cudaFree(dghost[k]);
#endif
    free(ghost[k]);
    free(t[k]);
  }
  halo_matrix_destroy(&A);
#if HALO_HAVE_CUDA
  if (device) cudaFree(dx);
#endif
  free(x);
  halo_csr_free(&local);
  halo_io_free(row_begin);
  MPI_Finalize();
  return same ? 0 : 1;
}
