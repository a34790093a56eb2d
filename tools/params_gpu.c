/* Device measurements of `halo params measure` (params_gpu.h): copies
 * through the CUDA runtime, messages through halo's own exchange. */
#include "params_gpu.h"

#include "driver.h"

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return 1;
}

/* A CUDA call that must succeed: the message names it and the error, then
 * cleanup. Needs `int rc`, `char *err`, `size_t len` and a cleanup label. */
#define PG_CUDA(call)                                                                              \
  do {                                                                                             \
    cudaError_t pg_e_ = (call);                                                                    \
    if (pg_e_ != cudaSuccess) {                                                                    \
      rc = fail(err, len, "%s failed: %s (%s)", #call, cudaGetErrorString(pg_e_),                  \
                cudaGetErrorName(pg_e_));                                                          \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)

/* A halo call that must succeed; then to the `out` label. */
#define PG_HALO(call, ...)                                                                         \
  do {                                                                                             \
    halo_status pg_st_ = (call);                                                                   \
    if (pg_st_ != HALO_SUCCESS) {                                                                  \
      char pg_what_[160];                                                                          \
      snprintf(pg_what_, sizeof pg_what_, __VA_ARGS__);                                            \
      rc = fail(err, len, "%s failed (%s): %s", pg_what_, halo_status_string(pg_st_),              \
                halo_last_error());                                                                \
      goto out;                                                                                    \
    }                                                                                              \
  } while (0)

/* Collective over comm: whether any rank failed; a rank that did not fail
 * itself gets a message saying so. */
static int any_failed(MPI_Comm comm, int rc, char *err, size_t len, const char *what) {
  int bad = rc;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  if (bad && !rc) fail(err, len, "%s failed on another rank", what);
  return bad;
}


int params_gpu_count(char *err, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    fail(err, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear it */
    return 0;
  }
  if (n <= 0) fail(err, len, "cudaGetDeviceCount found no device");
  return n > 0 ? n : 0;
}

int params_gpu_select(int local_rank, int *device_p, char *err, size_t len) {
  int rc = 0, n = 0;
  PG_CUDA(cudaGetDeviceCount(&n));
  if (n <= 0) return fail(err, len, "no CUDA device visible");
  const int d = local_rank % n;
  PG_CUDA(cudaSetDevice(d));
  PG_CUDA(cudaFree(NULL)); /* the context now, so that a broken device shows here */
  *device_p = d;
cleanup:
  return rc;
}

int params_gpu_copies(MPI_Comm comm, const int64_t *sizes, int n, int iterations, int warmup,
                      double *h2d, double *d2h, char *err, size_t len) {
  int rc = 0;
  void *host = NULL, *dev = NULL;
  cudaStream_t s = NULL;
  double *work = NULL;
  size_t most = 8;
  for (int k = 0; k < n; k++)
    if ((size_t)sizes[k] > most) most = (size_t)sizes[k];
  work = malloc((size_t)iterations * sizeof *work);
  if (!work) {
    rc = fail(err, len, "out of memory");
    goto setup_done;
  }
  PG_CUDA(cudaMallocHost(&host, most));
  PG_CUDA(cudaMalloc(&dev, most));
  PG_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  memset(host, 1, most);
  PG_CUDA(cudaMemset(dev, 1, most));
  PG_CUDA(cudaDeviceSynchronize());
  goto setup_done;
cleanup:
setup_done:
  if (any_failed(comm, rc, err, len, "setting up the copies")) {
    rc = 1;
    goto out;
  }
  for (int dir = 0; dir < 2; dir++) {
    const enum cudaMemcpyKind kind = dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
    void *dst = dir ? host : dev;
    const void *src = dir ? dev : host;
    for (int k = 0; k < n; k++) {
      for (int it = -warmup; it < iterations; it++) {
        double v[2] = {0, 0}; /* the time, whether it failed */
        MPI_Barrier(comm);
        cudaError_t e = cudaStreamSynchronize(s);
        const double t0 = MPI_Wtime();
        if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, (size_t)sizes[k], kind, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        v[0] = MPI_Wtime() - t0;
        if (e != cudaSuccess) {
          v[1] = 1;
          fail(err, len, "cudaMemcpyAsync %s of %lld bytes failed: %s (%s)", dir ? "d2h" : "h2d",
               (long long)sizes[k], cudaGetErrorString(e), cudaGetErrorName(e));
        }
        const double mine = v[1];
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (v[1] != 0) {
          if (mine == 0) fail(err, len, "a copy failed on another rank");
          rc = 1;
          goto out;
        }
        if (it >= 0) work[it] = v[0];
      }
      (dir ? d2h : h2d)[k] = driver_median(work, iterations);
    }
  }
out:
  if (s) cudaStreamDestroy(s);
  if (dev) cudaFree(dev);
  if (host) cudaFreeHost(host);
  free(work);
  return rc;
}

/* One size: a matrix whose exchange sends exactly one message of `bytes`
 * each way between the two ranks, timed. Collective over pair. */
static int one_message(MPI_Comm pair, halo_transport transport, int ranks_per_node, int64_t bytes,
                       int iterations, int warmup, double *work, double *t_p, char *err,
                       size_t len) {
  int rc = 0, rank;
  MPI_Comm_rank(pair, &rank);
  const int64_t m = bytes / 8, rb = rank * m;
  int64_t *ptr = malloc((size_t)(m + 1) * sizeof *ptr),
          *col = malloc((size_t)(2 * m) * sizeof *col);
  double *val = malloc((size_t)(2 * m) * sizeof *val);
  int64_t *d_ptr = NULL, *d_col = NULL;
  double *d_val = NULL, *d_x = NULL;
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  if (!ptr || !col || !val) {
    rc = fail(err, len, "out of memory (a matrix of %lld rows)", (long long)m);
    goto setup_done;
  }
  /* row i: the diagonal, and entry i of the other rank's part of x */
  for (int64_t i = 0; i < m; i++) {
    ptr[i] = 2 * i;
    col[2 * i] = rb + i, val[2 * i] = 2.0;
    col[2 * i + 1] = (1 - rank) * m + i, val[2 * i + 1] = -1.0;
  }
  ptr[m] = 2 * m;
  PG_CUDA(cudaMalloc((void **)&d_ptr, (size_t)(m + 1) * sizeof *d_ptr));
  PG_CUDA(cudaMalloc((void **)&d_col, (size_t)(2 * m) * sizeof *d_col));
  PG_CUDA(cudaMalloc((void **)&d_val, (size_t)(2 * m) * sizeof *d_val));
  PG_CUDA(cudaMalloc((void **)&d_x, (size_t)m * sizeof *d_x));
  PG_CUDA(cudaMemcpy(d_ptr, ptr, (size_t)(m + 1) * sizeof *d_ptr, cudaMemcpyHostToDevice));
  PG_CUDA(cudaMemcpy(d_col, col, (size_t)(2 * m) * sizeof *d_col, cudaMemcpyHostToDevice));
  PG_CUDA(cudaMemcpy(d_val, val, (size_t)(2 * m) * sizeof *d_val, cudaMemcpyHostToDevice));
  PG_CUDA(cudaMemset(d_x, 0, (size_t)m * sizeof *d_x));
  goto setup_done;
cleanup:
setup_done:
  if (any_failed(pair, rc, err, len, "setting up the matrix")) {
    rc = 1;
    goto out;
  }
  /* collective and agreed by halo: both ranks fail together */
  PG_HALO(halo_matrix_create_csr(pair, rb, rb + m, rb, rb + m, d_ptr, d_col, d_val,
                                 HALO_MEMORY_DEVICE, &A),
          "halo_matrix_create_csr (device memory, %lld rows per rank)", (long long)m);
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.transport = transport;
  o.ranks_per_node = ranks_per_node;
  PG_HALO(halo_plan_create(A, &o, &plan), "halo_plan_create (transport %s, %lld bytes)",
          halo_transport_name(transport), (long long)bytes);
  halo_stats st;
  PG_HALO(halo_plan_stats(plan, &st), "halo_plan_stats");
  if (st.n_phases != 1 || st.phase[0].messages != 2 || st.phase[0].max_message_bytes != bytes) {
    rc = fail(err, len,
              "the plan of a %lld-byte message has %d phase(s), %lld messages of at most %lld "
              "bytes, not one message each way",
              (long long)bytes, st.n_phases, (long long)st.phase[0].messages,
              (long long)st.phase[0].max_message_bytes);
    goto out;
  }
  for (int it = -warmup; it < iterations; it++) {
    double v[2] = {0, 0}; /* the time, whether it failed */
    MPI_Barrier(pair);
    const double t0 = MPI_Wtime();
    halo_status s = halo_exchange_begin(plan, d_x, NULL);
    const char *call = "halo_exchange_begin";
    if (s == HALO_SUCCESS) s = halo_exchange_end(plan), call = "halo_exchange_end";
    if (s == HALO_SUCCESS) s = halo_plan_synchronize(plan), call = "halo_plan_synchronize";
    v[0] = MPI_Wtime() - t0;
    if (s != HALO_SUCCESS) {
      v[1] = 1;
      fail(err, len, "%s (transport %s, %lld bytes) failed: %s", call,
           halo_transport_name(transport), (long long)bytes, halo_last_error());
    }
    const double mine = v[1];
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, pair);
    if (v[1] != 0) {
      if (mine == 0) fail(err, len, "an exchange failed on the other rank");
      rc = 1;
      goto out;
    }
    if (it >= 0) work[it] = v[0];
  }
  *t_p = driver_median(work, iterations);
out:
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  if (d_x) cudaFree(d_x);
  if (d_val) cudaFree(d_val);
  if (d_col) cudaFree(d_col);
  if (d_ptr) cudaFree(d_ptr);
  free(val), free(col), free(ptr);
  return rc;
}

int params_gpu_messages(MPI_Comm pair, halo_transport transport, int ranks_per_node,
                        const int64_t *sizes, int n, int iterations, int warmup, double *t,
                        char *err, size_t len) {
  int P;
  MPI_Comm_size(pair, &P);
  if (P != 2) return fail(err, len, "device messages: %d ranks, not 2", P);
  double *work = malloc((size_t)iterations * sizeof *work);
  int rc = !work;
  if (rc) fail(err, len, "out of memory");
  if (any_failed(pair, rc, err, len, "setting up the messages")) {
    free(work);
    return 1;
  }
  for (int k = 0; k < n && !rc; k++) {
    if (sizes[k] < 8 || sizes[k] % 8) {
      rc = fail(err, len, "device messages: %lld bytes is not a positive multiple of 8",
                (long long)sizes[k]);
      break; /* the same on both ranks */
    }
    rc = one_message(pair, transport, ranks_per_node, sizes[k], iterations, warmup, work, &t[k],
                     err, len);
  }
  free(work);
  return rc;
}
