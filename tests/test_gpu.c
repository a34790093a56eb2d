/* Device memory, every strategy through every transport this machine can
 * serve: the ghosts and the product must be bit for bit those of the
 * standard exchange on the device, and the product that of the host within
 * 1e-12; the reverse exchange bit for bit that of the host plan of the same
 * options (the same schedule, the same order of additions), the transpose
 * product the host's within 1e-12 and the same bits twice; exchange-only
 * plans (ghosts unsorted and repeated) against the host's; a handle's
 * exchange and the plan's own reverse in flight at once; new values with
 * both local kernels; one NCCL communicator for every plan of the run; no
 * allocation and no MPI request or communicator made in 100 products; the
 * transport choice and its errors; halo's kernel with and without its
 * long-row kernel on a matrix of a few long rows. Exits 77 (skipped) when no CUDA device is
 * visible.
 * usage: test_gpu [FILE.mtx ...] */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/device.h"
#include "halo/model.h"
#include "halo_impl.h"
#include "params_file.h"
#include "verify.h"
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "mpi_count.h"

#define CUDA_OK(call)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                         \
  } while (0)

static double *to_device(const void *h, size_t bytes) {
  void *d = NULL;
  CUDA_OK(cudaMalloc(&d, bytes ? bytes : 8));
  if (bytes) CUDA_OK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

static void to_host(void *h, const void *d, size_t bytes) {
  if (bytes) CUDA_OK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

static int ranks_per_gpu = 1, mpi_aware = 0;
/* ranks that share a GPU run nvshmem where NVSHMEM's full mode for several
 * processes a GPU is on: MPS with the GPU's active thread percentages adding
 * up to at most 100 (HALO_TEST_MPS=1 says the script started it so) */
static int nvshmem_shared = 0;
/* the virtual node sizes (ranks per node) of the plans: HALO_TEST_RANKS_PER_NODE,
 * a comma-separated list, else 1 and 2 */
static int node_sizes[8] = {1, 2}, n_node_sizes = 2;

/* Transports worth trying here. */
static int transport_usable(halo_transport t) {
  if (t == HALO_TRANSPORT_NCCL) return HALO_HAVE_NCCL && ranks_per_gpu == 1;
  if (t == HALO_TRANSPORT_NVSHMEM)
    return HALO_HAVE_NVSHMEM && (ranks_per_gpu == 1 || nvshmem_shared);
  if (t == HALO_TRANSPORT_MPI_DEVICE) return mpi_aware;
  return t == HALO_TRANSPORT_STAGED || t == HALO_TRANSPORT_IPC || t == HALO_TRANSPORT_AUTO ||
         t == HALO_TRANSPORT_RMA;
}

/* The transports of the loops, and one more: ipc with the signals its default
 * (setting ipc.signal auto) does not take here: on the host (0) where each rank has
 * a GPU of its own, on the GPU (1) where ranks share one. */
#define N_VARIANTS (HALO_N_TRANSPORTS + 1)
static int variant_usable(int v) {
  return transport_usable(v == HALO_N_TRANSPORTS ? HALO_TRANSPORT_IPC : (halo_transport)v);
}
static void variant_set(int v, halo_plan_options *o) {
  o->transport = v == HALO_N_TRANSPORTS ? HALO_TRANSPORT_IPC : (halo_transport)v;
  if (v == HALO_N_TRANSPORTS)
    o->settings = ranks_per_gpu > 1 ? "ipc.signal=device" : "ipc.signal=host";
}
static const char *variant_name(int v) {
  if (v != HALO_N_TRANSPORTS) return halo_transport_name((halo_transport)v);
  return ranks_per_gpu > 1 ? "ipc (signals on the GPU)" : "ipc (signals on the host)";
}

static int n_cases;

/* The reverse exchange and the transpose product of a device plan against
 * the host plan of the same options: the reverse bit for bit, the transpose
 * within 1e-12, each the same bits twice. dx, dy, dg: device x (n), y (n),
 * ghosts (ng). */
static void check_reverse(MPI_Comm comm, halo_plan plan, halo_matrix H, const halo_plan_options *o,
                          int64_t n, int64_t ng, const int64_t *gid, const double *hx, double *dx,
                          double *dy, double *dg, const char *what) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  halo_plan_options ho = *o;
  ho.memory = HALO_MEMORY_HOST;
  ho.transport = HALO_TRANSPORT_AUTO;
  halo_plan hp;
  CHECK_OK(halo_plan_create(H, &ho, &hp));
  double *c = malloc((size_t)(ng + 1) * sizeof *c), *hy = malloc((size_t)(n + 1) * sizeof *hy);
  double *dev = malloc((size_t)(n + 1) * sizeof *dev),
         *first = malloc((size_t)(n + 1) * sizeof *first);
  for (int64_t k = 0; k < ng; k++) c[k] = test_x(7 * gid[k] + rank) * (rank + 1);
  for (int run = 0; run < 2; run++) {
    CUDA_OK(cudaMemcpy(dg, c, (size_t)ng * sizeof *c, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dy, hx, (size_t)n * sizeof *hx, cudaMemcpyHostToDevice));
    CHECK_OK(halo_exchange_reverse_begin(plan, dg, dy));
    CHECK_OK(halo_exchange_reverse_end(plan));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(dev, dy, (size_t)n * sizeof *dev);
    memcpy(hy, hx, (size_t)n * sizeof *hy);
    CHECK_OK(halo_exchange_reverse_begin(hp, c, hy));
    CHECK_OK(halo_exchange_reverse_end(hp));
    for (int64_t i = 0; i < n; i++)
      CHECK_MSG(dev[i] == hy[i],
                "%s: reverse, entry %lld is %.17g on the device, %.17g on the host", what,
                (long long)i, dev[i], hy[i]);
  }
  for (int run = 0; run < 2; run++) {
    CUDA_OK(cudaMemcpy(dy, hx, (size_t)n * sizeof *hx, cudaMemcpyHostToDevice));
    CHECK_OK(halo_spmv_transpose(plan, 1.5, dx, -0.5, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(dev, dy, (size_t)n * sizeof *dev);
    if (run == 0) {
      memcpy(first, dev, (size_t)n * sizeof *dev);
      memcpy(hy, hx, (size_t)n * sizeof *hy);
      CHECK_OK(halo_spmv_transpose(hp, 1.5, hx, -0.5, hy));
      for (int64_t i = 0; i < n; i++)
        CHECK_MSG(fabs(dev[i] - hy[i]) <= 1e-12 * (fabs(hy[i]) + 1.0),
                  "%s: transpose, entry %lld is %.17g on the device, %.17g on the host", what,
                  (long long)i, dev[i], hy[i]);
    } else {
      CHECK_MSG(n == 0 || memcmp(first, dev, (size_t)n * sizeof *dev) == 0,
                "%s: two transpose products gave different bits", what);
    }
  }
  free(first), free(dev), free(hy), free(c);
  halo_plan_destroy(&hp);
}

/* Exchange-only device plans from ids (the ghosts unsorted, every third
 * twice, and every fourth followed by one of this rank's own entries, which
 * the plan copies) against the host's: the forward exchange exact, the
 * reverse bit for bit; a handle's exchange and the plan's own reverse in
 * flight at once; a unit of two floats (the double's bytes) where the
 * transport has units. */
static void run_exchange_only(MPI_Comm comm, halo_matrix H, const char *label) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int64_t n, ng, cb;
  const int64_t *gid;
  CHECK_OK(halo_matrix_get_local_sizes(H, NULL, &n, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(H, &gid));
  CHECK_OK(halo_matrix_get_layout(H, NULL, NULL, NULL, &cb));
  int64_t ns = 0, *ids = malloc((size_t)(3 * ng + 1) * sizeof *ids);
  for (int64_t k = ng - 1; k >= 0; k--) { /* backwards, every third twice */
    ids[ns++] = gid[k];
    if (k % 3 == 0) ids[ns++] = gid[k];
    if (k % 4 == 1 && n > 0) ids[ns++] = cb + (k * 7) % n; /* an own entry */
  }
  double *hx = malloc((size_t)(n + 1) * sizeof *hx), *hs = malloc((size_t)(ns + 1) * sizeof *hs);
  double *c = malloc((size_t)(ns + 1) * sizeof *c), *hy = malloc((size_t)(n + 1) * sizeof *hy);
  double *dev = malloc((size_t)(n + 1) * sizeof *dev);
  for (int64_t j = 0; j < n; j++) hx[j] = test_x(cb + j);
  for (int64_t k = 0; k < ns; k++) c[k] = test_x(3 * ids[k] + rank);
  double *dx = to_device(hx, (size_t)n * sizeof *hx), *dc = to_device(c, (size_t)ns * sizeof *c);
  double *dy = to_device(hx, (size_t)n * sizeof *hx), *ds = NULL;
  CUDA_OK(cudaMalloc((void **)&ds, (size_t)(ns + 1) * sizeof(double)));
  for (int s = 0; s < HALO_N_STRATEGIES; s++)
    for (int t = HALO_TRANSPORT_STAGED; t < N_VARIANTS; t++) {
      if (!variant_usable(t)) continue;
      halo_plan_options o = halo_plan_options_default();
      o.strategy = (halo_strategy)s;
      variant_set(t, &o);
      o.ranks_per_node = node_sizes[n_node_sizes - 1];
      o.message_cap = 64;
      o.max_exchanges = 2; /* a handle beside the plan's own */
      char what[256];
      snprintf(what, sizeof what, "%s, exchange-only, %s, %s", label,
               halo_strategy_name(o.strategy), variant_name(t));
      halo_plan pd, ph;
      o.memory = HALO_MEMORY_DEVICE;
      CHECK_OK(halo_plan_create_from_ids(comm, cb, cb + n, ns, ids, &o, &pd));
      o.memory = HALO_MEMORY_HOST, o.transport = HALO_TRANSPORT_AUTO;
      CHECK_OK(halo_plan_create_from_ids(comm, cb, cb + n, ns, ids, &o, &ph));
      /* a handle forward and the plan's own reverse at once */
      halo_exchange e;
      CHECK_OK(halo_exchange_create(pd, &e));
      CUDA_OK(cudaMemset(ds, 0xff, (size_t)(ns + 1) * sizeof(double)));
      CUDA_OK(cudaMemcpy(dy, hx, (size_t)n * sizeof *hx, cudaMemcpyHostToDevice));
      CHECK_OK(halo_exchange_start(e, dx, ds));
      CHECK_OK(halo_exchange_reverse_begin(pd, dc, dy));
      CHECK_OK(halo_exchange_reverse_end(pd));
      CHECK_OK(halo_exchange_wait(e));
      CHECK_OK(halo_plan_synchronize(pd));
      halo_exchange_destroy(&e);
      to_host(hs, ds, (size_t)ns * sizeof *hs);
      for (int64_t k = 0; k < ns; k++)
        CHECK_MSG(hs[k] == test_x(ids[k]), "%s: slot %lld is %g, not %g", what, (long long)k, hs[k],
                  test_x(ids[k]));
      to_host(dev, dy, (size_t)n * sizeof *dev);
      memcpy(hy, hx, (size_t)n * sizeof *hy);
      CHECK_OK(halo_exchange_reverse_begin(ph, c, hy));
      CHECK_OK(halo_exchange_reverse_end(ph));
      for (int64_t j = 0; j < n; j++)
        CHECK_MSG(dev[j] == hy[j],
                  "%s: reverse, entry %lld is %.17g on the device, %.17g on the "
                  "host",
                  what, (long long)j, dev[j], hy[j]);
      /* units (test_units_gpu runs them all): two floats move a double's bytes; a
       * transport without units refuses them, the plan not failed */
      const halo_unit f2 = {HALO_TYPE_FLOAT, 2};
      const halo_status us = halo_plan_unit_check(pd, f2, HALO_OP_INSERT, 0);
      if (us == HALO_ERR_UNSUPPORTED) {
        CHECK_MSG(strstr(halo_last_error(), "not yet transport") != NULL, "%s: %s", what,
                  halo_last_error());
        CHECK_ERR(halo_exchange_begin_unit(pd, f2, HALO_OP_INSERT, dx, ds), HALO_ERR_UNSUPPORTED,
                  "not yet transport");
      } else {
        CHECK_OK(us);
        CUDA_OK(cudaMemset(ds, 0xff, (size_t)(ns + 1) * sizeof(double)));
        CHECK_OK(halo_exchange_begin_unit(pd, f2, HALO_OP_INSERT, dx, ds));
        CHECK_OK(halo_exchange_end(pd));
        CHECK_OK(halo_plan_synchronize(pd));
        to_host(hs, ds, (size_t)ns * sizeof *hs);
        for (int64_t k = 0; k < ns; k++)
          CHECK_MSG(hs[k] == test_x(ids[k]), "%s: float x 2, slot %lld is %g, not %g", what,
                    (long long)k, hs[k], test_x(ids[k]));
      }
      CHECK_OK(halo_exchange_begin(pd, dx, ds));
      CHECK_OK(halo_exchange_end(pd));
      CHECK_OK(halo_plan_synchronize(pd));
      halo_plan_destroy(&ph);
      halo_plan_destroy(&pd);
      n_cases++;
    }
  cudaFree(ds), cudaFree(dy), cudaFree(dc), cudaFree(dx);
  free(dev), free(hy), free(c), free(hs), free(hx), free(ids);
}

/* New values of a matrix made from device arrays: the product with 2A is
 * twice the product, bit for bit, with either local kernel. */
static void check_new_values(MPI_Comm comm, halo_matrix A, const halo_csr *rows, int64_t n,
                             const double *dx, double *dy, const char *label) {
  const int64_t nnz = rows->row_ptr[n];
  double *v2 = malloc((size_t)(nnz + 1) * sizeof *v2), *y1 = malloc((size_t)(n + 1) * sizeof *y1);
  double *y2 = malloc((size_t)(n + 1) * sizeof *y2);
  for (int64_t k = 0; k < nnz; k++) v2[k] = 2.0 * rows->values[k];
  double *d_v1 = to_device(rows->values, (size_t)nnz * sizeof(double));
  double *d_v2 = to_device(v2, (size_t)nnz * sizeof(double));
  for (int kernel = 0; kernel < 2; kernel++) {
    halo_plan_options o = halo_plan_options_default();
    o.settings = kernel ? "spmv.kernel=cusparse" : "spmv.kernel=halo";
    halo_plan plan;
    CHECK_OK(halo_plan_create(A, &o, &plan));
    CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(y1, dy, (size_t)n * sizeof *y1);
    CHECK_OK(halo_matrix_set_values(A, d_v2));
    CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(y2, dy, (size_t)n * sizeof *y2);
    for (int64_t i = 0; i < n; i++)
      CHECK_MSG(y2[i] == 2.0 * y1[i], "%s, kernel %s: new values, row %lld: %.17g, not 2 x %.17g",
                label, kernel ? "cusparse" : "halo", (long long)i, y2[i], y1[i]);
    CHECK_OK(halo_matrix_set_values(A, d_v1));
    halo_plan_destroy(&plan);
  }
  (void)comm;
  cudaFree(d_v2), cudaFree(d_v1);
  free(y2), free(y1), free(v2);
}

static void run_matrix(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin,
                       const char *label) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1], n = re - rb;
  const int64_t nnz = rows->row_ptr[n];
  /* the matrix from device arrays */
  int64_t *d_ptr = (int64_t *)to_device(rows->row_ptr, (size_t)(n + 1) * sizeof(int64_t));
  int64_t *d_col = (int64_t *)to_device(rows->col_ids, (size_t)nnz * sizeof(int64_t));
  double *d_val = to_device(rows->values, (size_t)nnz * sizeof(double));
  halo_matrix A = NULL, H = NULL;
  CHECK_OK(
      halo_matrix_create_csr(comm, rb, re, rb, re, d_ptr, d_col, d_val, HALO_MEMORY_DEVICE, &A));
  CHECK_OK(halo_matrix_create_csr(comm, rb, re, rb, re, rows->row_ptr, rows->col_ids, rows->values,
                                  HALO_MEMORY_HOST, &H));
  int64_t ng;
  const int64_t *gid;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  CHECK_OK(halo_matrix_get_ghost_ids(A, &gid));
  double *hx = malloc((size_t)(n + 1) * sizeof *hx), *hy = malloc((size_t)(n + 1) * sizeof *hy);
  double *hy_host = malloc((size_t)(n + 1) * sizeof *hy);
  double *hg = malloc((size_t)(ng + 1) * sizeof *hg),
         *ref_g = malloc((size_t)(ng + 1) * sizeof *hg);
  double *ref_y = malloc((size_t)(n + 1) * sizeof *ref_y);
  for (int64_t i = 0; i < n; i++) hx[i] = test_x(rb + i);
  double *dx = to_device(hx, (size_t)n * sizeof(double));
  double *dy = NULL, *dg = NULL;
  CUDA_OK(cudaMalloc((void **)&dy, (size_t)(n + 1) * sizeof(double)));
  CUDA_OK(cudaMalloc((void **)&dg, (size_t)(ng + 1) * sizeof(double)));
  /* the host product, the reference within rounding */
  {
    halo_plan hp;
    CHECK_OK(halo_plan_create(H, NULL, &hp));
    CHECK_OK(halo_spmv(hp, 1.0, hx, 0.0, hy_host));
    halo_plan_destroy(&hp);
  }
  int have_ref = 0;
  for (int ki = 0; ki < n_node_sizes; ki++)
    for (int s = 0; s < HALO_N_STRATEGIES; s++)
      for (int t = HALO_TRANSPORT_STAGED; t < N_VARIANTS; t++) {
        if (!variant_usable(t)) continue;
        halo_plan_options o = halo_plan_options_default();
        o.strategy = (halo_strategy)s;
        variant_set(t, &o);
        const int K = node_sizes[ki];
        o.ranks_per_node = K;
        o.message_cap = 64;
        char what[256];
        snprintf(what, sizeof what, "%s, K=%d, %s, %s", label, K, halo_strategy_name(o.strategy),
                 variant_name(t));
        halo_plan plan = NULL;
        /* half the cases plan the host matrix on the device (uploaded once) */
        o.memory = HALO_MEMORY_DEVICE;
        CHECK_OK(halo_plan_create((s + t) % 2 ? H : A, &o, &plan));
        halo_stats st;
        CHECK_OK(halo_plan_stats(plan, &st));
        CHECK_MSG(verify_phase(plan, 0).transport == o.transport, "%s: the plan says transport %s",
                  what, halo_transport_name(verify_phase(plan, 0).transport));
        for (int rep = 0; rep < 3; rep++) { /* again and again: the buffers are reused */
          CUDA_OK(cudaMemset(dg, 0xff, (size_t)(ng + 1) * sizeof(double))); /* NaN */
          CHECK_OK(halo_exchange_begin(plan, dx, dg));
          CHECK_OK(halo_exchange_end(plan));
          CHECK_OK(halo_plan_synchronize(plan));
        }
        to_host(hg, dg, (size_t)ng * sizeof(double));
        for (int64_t k = 0; k < ng; k++)
          CHECK_MSG(hg[k] == test_x(gid[k]), "%s: ghost %lld (global %lld) is %g, not %g", what,
                    (long long)k, (long long)gid[k], hg[k], test_x(gid[k]));
        CUDA_OK(cudaMemset(dy, 0xff, (size_t)(n + 1) * sizeof(double))); /* beta = 0: not read */
        CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
        CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
        CHECK_OK(halo_plan_synchronize(plan));
        to_host(hy, dy, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++)
          CHECK_MSG(fabs(hy[i] - hy_host[i]) <= 1e-12 * (fabs(hy_host[i]) + 1.0),
                    "%s: y[%lld] = %.17g, host %.17g", what, (long long)i, hy[i], hy_host[i]);
        if (!have_ref) {
          memcpy(ref_y, hy, (size_t)n * sizeof(double));
          memcpy(ref_g, hg, (size_t)ng * sizeof(double));
          have_ref = 1;
        } else {
          CHECK_MSG(n == 0 || memcmp(hy, ref_y, (size_t)n * sizeof(double)) == 0,
                    "%s: y differs from the first device plan's", what);
          CHECK(ng == 0 || memcmp(hg, ref_g, (size_t)ng * sizeof(double)) == 0);
        }
        /* y = 2*A*x - y, and the diagonal block alone */
        CHECK_OK(halo_spmv(plan, 2.0, dx, -1.0, dy));
        CHECK_OK(halo_plan_synchronize(plan));
        to_host(hy, dy, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++)
          CHECK_MSG(fabs(hy[i] - hy_host[i]) <= 1e-12 * (fabs(hy_host[i]) + 1.0),
                    "%s: 2Ax - y wrong at %lld", what, (long long)i);
        CHECK_OK(halo_spmv_diag(plan, 1.0, dx, 0.0, dy));
        CHECK_OK(halo_plan_synchronize(plan));
        check_reverse(comm, plan, H, &o, n, ng, gid, hx, dx, dy, dg, what);
        halo_plan_destroy(&plan);
        n_cases++;
      }
  check_new_values(comm, A, rows, n, dx, dy, label);
  run_exchange_only(comm, H, label);
  cudaFree(dx), cudaFree(dy), cudaFree(dg), cudaFree(d_ptr), cudaFree(d_col), cudaFree(d_val);
  free(hx), free(hy), free(hy_host), free(hg), free(ref_g), free(ref_y);
  halo_matrix_destroy(&A);
  halo_matrix_destroy(&H);
}

/* halo's kernel with its long rows split across warps: irregular:400000,3
 * has four rows of 8,064 entries (32 tiles; split between ranks, long in both
 * blocks) among rows of about 10. With the bound chosen (0), with 1 (every
 * row of more than one entry split: rows of one tile and of many), with no
 * long rows, and with 32 threads per row (so many short rows' blocks that the
 * long rows get a launch of their own; otherwise one launch takes both):
 * y = A*x, 2Ax - y and the diagonal block against the host's within 1e-12,
 * and the same bits in 10 products. */
/* exchange_timeout_ms in device memory: rank 1 of ranks 0 and 1 starts its
 * exchange late, once rank 0's halo_plan_synchronize has returned. Rank 0
 * must get HALO_ERR_TIMEOUT (in the exchange's end or the synchronisation)
 * after about the limit, whatever the transport (ipc, nccl and nvshmem wait on
 * the GPU), and its plan must refuse exchanges; rank 1's late exchange must
 * then release rank 0's GPU, so that both synchronise and destroy. */
static int64_t nccl_pair_comms, nccl_pair_aborts; /* late_peer's on its pair communicator */

static void late_peer(MPI_Comm comm) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (P < 2) return;
  /* two ranks: the communicator itself (NVSHMEM runs over one set of
   * processes); more: ranks 0 and 1 apart, without nvshmem */
  MPI_Comm pair = comm;
  if (P > 2) MPI_Comm_split(comm, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (pair == MPI_COMM_NULL) return;
  const int64_t made0 = halo_debug_nccl_comms(), aborted0 = halo_debug_nccl_aborts();
  gen_case m;
  gen_case_make(pair, "lap3d27:8", &m);
  const int64_t n = m.rb[rank + 1] - m.rb[rank];
  double *hx = calloc((size_t)n + 1, sizeof *hx);
  double *dx = to_device(hx, (size_t)(n + 1) * sizeof *hx);
  const halo_transport ts[] = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_IPC, HALO_TRANSPORT_NCCL,
                               HALO_TRANSPORT_NVSHMEM, HALO_TRANSPORT_RMA};
  const int64_t limit_ms = 300;
  for (int c = 0; c < 5; c++) {
    if (!transport_usable(ts[c]) || (P > 2 && ts[c] == HALO_TRANSPORT_NVSHMEM)) continue;
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE, o.transport = ts[c], o.strategy = HALO_STRATEGY_STANDARD;
    o.exchange_timeout_ms = limit_ms;
    halo_plan plan;
    CHECK_OK(halo_plan_create(m.A, &o, &plan));
    /* one exchange on time first: connections and handles made lazily */
    CHECK_OK(halo_exchange_begin(plan, dx, NULL));
    CHECK_OK(halo_exchange_end(plan));
    CHECK_OK(halo_plan_synchronize(plan));
    MPI_Barrier(pair);
    if (rank == 0) {
      const double t0 = MPI_Wtime();
      halo_status st = halo_exchange_begin(plan, dx, NULL);
      if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
      if (st == HALO_SUCCESS) st = halo_plan_synchronize(plan);
      const double dt = MPI_Wtime() - t0;
      CHECK_MSG(st == HALO_ERR_TIMEOUT, "%s, peer late: %s (%s), not a timeout",
                halo_transport_name(ts[c]), halo_status_string(st), halo_last_error());
      CHECK_MSG(dt >= 0.9e-3 * (double)limit_ms && dt < 10.0,
                "%s, peer late: the timeout came after %.3f s, the limit is %lld ms",
                halo_transport_name(ts[c]), dt, (long long)limit_ms);
      CHECK_MSG(strstr(halo_last_error(), "exchange_timeout_ms") != NULL, "no reason: %s",
                halo_last_error());
      CHECK_ERR(halo_exchange_begin(plan, dx, NULL), HALO_ERR_STATE, "earlier exchange");
    }
    MPI_Barrier(pair); /* rank 0 gave up waiting: now rank 1's exchange */
    halo_status late = HALO_SUCCESS;
    if (rank == 1) {
      /* it completes where rank 0's part is all enqueued (staged, nccl, nvshmem, ipc with its
       * signals on the GPU); ipc with host signals waits for rank 0's acknowledgement, which
       * rank 0 never sent, and rma for rank 0's puts, which rank 0 never made (it waited for
       * rank 1's post first): a timeout there too */
      late = halo_exchange_begin(plan, dx, NULL);
      if (late == HALO_SUCCESS) late = halo_exchange_end(plan);
      if (late == HALO_SUCCESS) late = halo_plan_synchronize(plan);
      CHECK_MSG(late == HALO_SUCCESS || late == HALO_ERR_TIMEOUT, "%s, the late exchange: %s",
                halo_transport_name(ts[c]), halo_last_error());
    }
    CHECK_OK(halo_plan_synchronize(plan)); /* rank 0: its GPU released by the late peer */
    int late_code = (int)late;
    MPI_Bcast(&late_code, 1, MPI_INT, 1, pair);
    MPI_Barrier(pair);
    halo_plan_destroy(&plan); /* rank 0's (and a timed-out one's): kept whole */
    if (rank == 0)
      printf("late peer, %s: timed out, then released; the late exchange %s\n",
             halo_transport_name(ts[c]), late_code == HALO_SUCCESS ? "completed" : "timed out");
  }
  CUDA_OK(cudaFree(dx));
  free(hx);
  gen_case_free(&m);
  if (pair != comm) {
    /* the pair's own NCCL communicator: one, and one more after each abort of its own */
    const int64_t made = halo_debug_nccl_comms() - made0,
                  aborted = halo_debug_nccl_aborts() - aborted0;
    CHECK_MSG(made <= 1 + aborted,
              "late peer: %lld NCCL communicators made on the pair, %lld aborted", (long long)made,
              (long long)aborted);
    nccl_pair_comms += made;
    nccl_pair_aborts += aborted;
    MPI_Comm_free(&pair); /* the context's end on both, failed plans or not */
  }
}

/* halo_spmv_async: halo_spmv's bits on a stream of the caller's where the
 * exchange runs in stream order (nccl; ipc with its signals on the GPU; any
 * transport on one rank), and captured into a CUDA graph launched twice
 * (nccl, one rank); refused with the reason where the host would wait
 * (staged, ipc with events) or a graph would replay ipc's numbers. */
static void async_product(MPI_Comm comm) {
  gen_case m;
  gen_case_make(comm, "lap3d27:16", &m);
  const int rank = m.rank, P = m.P;
  const int64_t *rb = m.rb;
  const int64_t b = rb[rank], n = rb[rank + 1] - b;
  double *hx = malloc((size_t)(n + 1) * sizeof *hx), *ref = malloc((size_t)(n + 1) * sizeof *ref);
  double *got = malloc((size_t)(n + 1) * sizeof *got);
  for (int64_t j = 0; j < n; j++) hx[j] = test_x(b + j);
  double *dx = to_device(hx, (size_t)n * sizeof *hx), *dy = NULL;
  CUDA_OK(cudaMalloc((void **)&dy, (size_t)(n + 1) * sizeof(double)));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const struct {
    halo_transport t;
    int sig;
  } cases[] = {{HALO_TRANSPORT_STAGED, -1},
               {HALO_TRANSPORT_IPC, 0},
               {HALO_TRANSPORT_IPC, 1},
               {HALO_TRANSPORT_NCCL, -1},
               {HALO_TRANSPORT_NVSHMEM, -1}};
  for (int c = 0; c < 5; c++) {
    if (!transport_usable(cases[c].t)) continue;
    halo_plan_options o = halo_plan_options_default();
    o.strategy = HALO_STRATEGY_STANDARD, o.transport = cases[c].t;
    o.settings = cases[c].sig < 0 ? NULL : cases[c].sig ? "ipc.signal=device" : "ipc.signal=host";
    o.memory = HALO_MEMORY_DEVICE;
    char what[128];
    snprintf(what, sizeof what, "halo_spmv_async, %s, ipc_signal %d",
             halo_transport_name(o.transport), cases[c].sig);
    halo_plan plan;
    CHECK_OK(halo_plan_create(m.A, &o, &plan));
    CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy)); /* the reference, and NCCL's connection */
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(ref, dy, (size_t)n * sizeof *ref);
    CUDA_OK(cudaMemset(dy, 0xff, (size_t)(n + 1) * sizeof(double)));
    const int ordered = P == 1 || o.transport == HALO_TRANSPORT_NCCL ||
                        o.transport == HALO_TRANSPORT_NVSHMEM || cases[c].sig == 1;
    const int capturable =
        P == 1 || o.transport == HALO_TRANSPORT_NCCL || o.transport == HALO_TRANSPORT_NVSHMEM;
    halo_status st = halo_spmv_async(plan, s, 1.0, dx, 0.0, dy);
    if (!ordered) {
      CHECK_ERR(st, HALO_ERR_UNSUPPORTED, "host");
      halo_plan_destroy(&plan);
      continue;
    }
    CHECK_OK(st);
    CUDA_OK(cudaStreamSynchronize(s));
    to_host(got, dy, (size_t)n * sizeof *got);
    CHECK_MSG(n == 0 || memcmp(got, ref, (size_t)n * sizeof *got) == 0,
              "%s: y differs from halo_spmv's", what);
    cudaGraph_t graph = NULL;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    st = halo_spmv_async(plan, s, 1.0, dx, 0.0, dy);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    if (!capturable) {
      CHECK_ERR(st, HALO_ERR_UNSUPPORTED, "replay");
    } else {
      CHECK_OK(st);
      cudaGraphExec_t exec;
      CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
      for (int rep = 0; rep < 2; rep++) {
        CUDA_OK(cudaMemsetAsync(dy, 0xff, (size_t)(n + 1) * sizeof(double), s));
        CUDA_OK(cudaGraphLaunch(exec, s));
        CUDA_OK(cudaStreamSynchronize(s));
        to_host(got, dy, (size_t)n * sizeof *got);
        CHECK_MSG(n == 0 || memcmp(got, ref, (size_t)n * sizeof *got) == 0,
                  "%s: the graph's launch %d differs from halo_spmv", what, rep);
      }
      CUDA_OK(cudaGraphExecDestroy(exec));
      /* the plan goes on outside the graph (nvshmem: its counter moved on in the replays) */
      CUDA_OK(cudaMemset(dy, 0xff, (size_t)(n + 1) * sizeof(double)));
      CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
      CHECK_OK(halo_plan_synchronize(plan));
      to_host(got, dy, (size_t)n * sizeof *got);
      CHECK_MSG(n == 0 || memcmp(got, ref, (size_t)n * sizeof *got) == 0,
                "%s: halo_spmv after the graph's launches differs", what);
    }
    if (graph) CUDA_OK(cudaGraphDestroy(graph));
    n_cases++;
    halo_plan_destroy(&plan);
  }
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaFree(dx));
  CUDA_OK(cudaFree(dy));
  free(got);
  free(ref);
  free(hx);
  gen_case_free(&m);
}

static void long_rows(MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("irregular:400000,3", &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  halo_matrix A, H;
  CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &H));
  CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  double *hx = malloc((size_t)(n + 1) * sizeof *hx), *ref = malloc((size_t)(n + 1) * sizeof *ref);
  double *ref2 = malloc((size_t)(n + 1) * sizeof *ref2);
  double *refd = malloc((size_t)(n + 1) * sizeof *refd);
  double *hy = malloc((size_t)(n + 1) * sizeof *hy);
  double *first = malloc((size_t)(n + 1) * sizeof *first);
  for (int64_t i = 0; i < n; i++) hx[i] = test_x(b + i);
  {
    halo_plan hp;
    CHECK_OK(halo_plan_create(H, NULL, &hp));
    CHECK_OK(halo_spmv(hp, 1.0, hx, 0.0, ref));
    for (int64_t i = 0; i < n; i++) ref2[i] = 0.5 * ref[i];
    CHECK_OK(halo_spmv(hp, 2.0, hx, -1.0, ref2)); /* 2Ax - Ax/2 */
    CHECK_OK(halo_spmv_diag(hp, 1.0, hx, 0.0, refd));
    halo_plan_destroy(&hp);
  }
  double *dx = to_device(hx, (size_t)n * sizeof(double)), *dy = NULL;
  CUDA_OK(cudaMalloc((void **)&dy, (size_t)(n + 1) * sizeof(double)));
  const int64_t bounds[] = {0, 1, INT64_MAX, 0};
  for (int c = 0; c < 4; c++) {
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    o.transport = HALO_TRANSPORT_STAGED;
    char settings[128];
    snprintf(settings, sizeof settings, "spmv.kernel=halo,spmv.long_row=%lld,spmv.group=%d",
             (long long)bounds[c], c == 3 ? 32 : 0);
    o.settings = settings;
    char what[64];
    snprintf(what, sizeof what, "bound %lld, group %d", (long long)bounds[c], c == 3 ? 32 : 0);
    halo_plan plan;
    CHECK_OK(halo_plan_create(A, &o, &plan));
    halo_stats st;
    CHECK_OK(halo_plan_stats(plan, &st));
    /* the four dense rows (and their off-diagonal parts); nearly all rows; none */
    CHECK_MSG(c == 0 || c == 3 ? st.long_rows >= 4 && st.long_rows <= 8 * st.ranks
              : c == 1         ? st.long_rows > 200000
                               : st.long_rows == 0,
              "long rows, %s: %lld rows through the long-row kernel", what,
              (long long)st.long_rows);
    for (int rep = 0; rep < 10; rep++) {
      CUDA_OK(cudaMemset(dy, 0xff, (size_t)(n + 1) * sizeof(double)));
      CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
      CHECK_OK(halo_plan_synchronize(plan));
      to_host(hy, dy, (size_t)n * sizeof(double));
      if (rep == 0) {
        for (int64_t i = 0; i < n; i++)
          CHECK_MSG(fabs(hy[i] - ref[i]) <= 1e-12 * (fabs(ref[i]) + 1.0),
                    "long rows, %s: y[%lld] = %.17g, host %.17g", what, (long long)(b + i), hy[i],
                    ref[i]);
        memcpy(first, hy, (size_t)n * sizeof(double));
      } else {
        CHECK_MSG(n == 0 || memcmp(hy, first, (size_t)n * sizeof(double)) == 0,
                  "long rows, %s: product %d differs from the first", what, rep);
      }
    }
    for (int64_t i = 0; i < n; i++) hy[i] = 0.5 * first[i];
    CUDA_OK(cudaMemcpy(dy, hy, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK_OK(halo_spmv(plan, 2.0, dx, -1.0, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(hy, dy, (size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      CHECK_MSG(fabs(hy[i] - ref2[i]) <= 1e-12 * (fabs(ref2[i]) + 1.0),
                "long rows, %s: 2Ax - y at %lld: %.17g, host %.17g", what, (long long)(b + i),
                hy[i], ref2[i]);
    CHECK_OK(halo_spmv_diag(plan, 1.0, dx, 0.0, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(hy, dy, (size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
      CHECK_MSG(fabs(hy[i] - refd[i]) <= 1e-12 * (fabs(refd[i]) + 1.0),
                "long rows, %s: diagonal block at %lld: %.17g, host %.17g", what,
                (long long)(b + i), hy[i], refd[i]);
    halo_plan_destroy(&plan);
    n_cases++;
  }
  cudaFree(dx), cudaFree(dy);
  free(hx), free(ref), free(ref2), free(refd), free(hy), free(first);
  halo_matrix_destroy(&A);
  halo_matrix_destroy(&H);
  halo_csr_free(&rows);
  halo_io_free(rb);
}

/* No allocation, request or communicator in 100 products and exchanges. */
static void no_alloc(MPI_Comm comm, halo_transport t) {
  gen_case c;
  gen_case_make(comm, "lap3d27:16", &c);
  const int64_t n = c.rb[c.rank + 1] - c.rb[c.rank];
  for (int s = 0; s < HALO_N_STRATEGIES; s++) {
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE, o.transport = t, o.strategy = (halo_strategy)s;
    o.ranks_per_node = 2;
    halo_plan plan;
    CHECK_OK(halo_plan_create(c.A, &o, &plan));
    double *dx, *dy;
    CUDA_OK(cudaMalloc((void **)&dx, (size_t)(n + 1) * sizeof(double)));
    CUDA_OK(cudaMalloc((void **)&dy, (size_t)(n + 1) * sizeof(double)));
    CUDA_OK(cudaMemset(dx, 0, (size_t)(n + 1) * sizeof(double)));
    CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
    CHECK_OK(halo_plan_synchronize(plan));
    const int64_t a0 = halo_debug_alloc_count();
    const long c0 = n_created;
    for (int it = 0; it < 100; it++) {
      CHECK_OK(halo_spmv(plan, 1.0, dx, 0.5, dy));
      CHECK_OK(halo_exchange_begin(plan, dx, NULL));
      CHECK_OK(halo_exchange_end(plan));
    }
    CHECK_OK(halo_plan_synchronize(plan));
    CHECK_MSG(halo_debug_alloc_count() == a0 && n_created == c0,
              "%s, %s: %lld allocations, %ld MPI objects in 100 products and exchanges",
              halo_strategy_name(o.strategy), halo_transport_name(t),
              (long long)(halo_debug_alloc_count() - a0), n_created - c0);
    cudaFree(dx), cudaFree(dy);
    halo_plan_destroy(&plan);
  }
  gen_case_free(&c);
}

/* The choice of transport and its errors. */
static void choice(MPI_Comm comm) {
  gen_case c;
  gen_case_make(comm, "lap2d:16", &c);
  const int rank = c.rank;
  halo_plan plan = NULL;
  halo_plan_options o = halo_plan_options_default();
  halo_stats st;
  o.memory = HALO_MEMORY_DEVICE;
  /* the default, strategy auto: the transport is one of the candidates, never
   * mpi-device on an MPI that is not CUDA-aware, nccl only with one rank per GPU */
  CHECK_OK(halo_plan_create(c.A, &o, &plan));
  CHECK_OK(halo_plan_stats(plan, &st));
  {
    const halo_transport t = verify_phase(plan, 0).transport;
    CHECK_MSG(t == HALO_TRANSPORT_STAGED || t == HALO_TRANSPORT_IPC ||
                  (t == HALO_TRANSPORT_NCCL && HALO_HAVE_NCCL && ranks_per_gpu == 1) ||
                  (t == HALO_TRANSPORT_NVSHMEM && HALO_HAVE_NVSHMEM && ranks_per_gpu == 1) ||
                  (t == HALO_TRANSPORT_MPI_DEVICE && mpi_aware) || t == HALO_TRANSPORT_RMA,
              "the default plan chose transport %s", halo_transport_name(t));
    char text[2048];
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    if (rank == 0) printf("default device plan: %.600s\n", text);
  }
  halo_plan_destroy(&plan);
  if (c.P > 1) {
    /* parameters with rma.*: rma is a candidate in device memory too; priced far below the
     * others, the model takes it (lassen's have no rma.*: no rma candidate) */
    char path[64] = "/tmp/halo_test_gpu_rma_XXXXXX", text[2048];
    halo_params prm;
    CHECK_OK(halo_params_builtin("lassen", &prm));
    prm.have_own[HALO_TRANSPORT_RMA] = 1;
    prm.own[HALO_TRANSPORT_RMA] = (halo_postal){1e-12, 1e-16};
    for (int k = 0; k < 2; k++) /* the staged copies too: below any device message */
      prm.h2d[k] = prm.d2h[k] = (halo_postal){1e-12, 1e-16};
    prm.staged_alpha = 0.0;
    params_file_write(comm, &prm, path);
    halo_plan_options ro = o;
    ro.autotune = 0;
    ro.params = path;
    CHECK_OK(halo_plan_create(c.A, &ro, &plan));
    CHECK_OK(halo_plan_stats(plan, &st));
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    CHECK_MSG(st.n_phases == 0 || verify_phase(plan, 0).transport == HALO_TRANSPORT_RMA,
              "device memory, parameters with rma.*: auto chose %s: %.900s",
              halo_transport_name(verify_phase(plan, 0).transport), text);
    CHECK_MSG(strstr(text, "/rma"), "device memory: no rma candidate: %.900s", text);
    halo_plan_destroy(&plan);
    ro.params = "lassen";
    CHECK_OK(halo_plan_create(c.A, &ro, &plan));
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    CHECK_MSG(!strstr(text, "/rma"), "device memory: an rma candidate without rma.*: %.900s", text);
    halo_plan_destroy(&plan);
    MPI_Barrier(comm);
    if (rank == 0) unlink(path);
  }
  o.strategy = HALO_STRATEGY_STANDARD;
  CHECK_OK(halo_plan_create(c.A, &o, &plan));
  CHECK_OK(halo_plan_stats(plan, &st));
  /* a strategy given, transport auto: ipc, which has no set-up to pay, on a communicator whose
   * plans have not made NCCL's communicator (none has here); once a plan named nccl (one rank
   * per GPU, compiled in), nccl, whose set-up is paid; never mpi-device (issue 42) */
  halo_transport want = HALO_TRANSPORT_IPC;
  CHECK_MSG(verify_phase(plan, 0).transport == want, "auto chose %s, expected %s",
            halo_transport_name(verify_phase(plan, 0).transport), halo_transport_name(want));
  halo_plan_destroy(&plan);
  if (HALO_HAVE_NCCL && ranks_per_gpu == 1) {
    o.transport = HALO_TRANSPORT_NCCL;
    CHECK_OK(halo_plan_create(c.A, &o, &plan));
    halo_plan_destroy(&plan);
    o.transport = HALO_TRANSPORT_AUTO;
    want = HALO_TRANSPORT_NCCL;
    CHECK_OK(halo_plan_create(c.A, &o, &plan));
    CHECK_MSG(verify_phase(plan, 0).transport == want,
              "auto chose %s after a plan made NCCL's communicator, expected nccl",
              halo_transport_name(verify_phase(plan, 0).transport));
    halo_plan_destroy(&plan);
  }
  if (!mpi_aware) {
    o.transport = HALO_TRANSPORT_MPI_DEVICE;
    CHECK_ERR(halo_plan_create(c.A, &o, &plan), HALO_ERR_UNSUPPORTED, "this MPI is not CUDA-aware");
    if (rank == 0)
      printf("MPI is not CUDA-aware here: mpi-device refused, auto chose %s\n",
             halo_transport_name(want));
  }
  if (ranks_per_gpu > 1) {
    o.transport = HALO_TRANSPORT_NCCL;
    CHECK_ERR(halo_plan_create(c.A, &o, &plan),
              HALO_HAVE_NCCL ? HALO_ERR_INVALID_ARG : HALO_ERR_NOT_COMPILED,
              HALO_HAVE_NCCL ? "needs one rank per GPU" : "not compiled in");
    o.transport = HALO_TRANSPORT_NVSHMEM;
    if (nvshmem_shared) { /* NVSHMEM's full mode: a plan, used below */
      CHECK_OK(halo_plan_create(c.A, &o, &plan));
      halo_plan_destroy(&plan);
    } else {
      CHECK_ERR(halo_plan_create(c.A, &o, &plan),
                HALO_HAVE_NVSHMEM ? HALO_ERR_UNSUPPORTED : HALO_ERR_NOT_COMPILED,
                HALO_HAVE_NVSHMEM ? "limited mode" : "not compiled in");
    }
  }
  o = halo_plan_options_default();
  o.transport = HALO_TRANSPORT_STAGED; /* a host plan cannot take a device transport */
  CHECK_ERR(halo_plan_create(c.A, &o, &plan), HALO_ERR_INVALID_ARG, "needs device memory");
  int count = 0;
  cudaGetDeviceCount(&count);
  o = halo_plan_options_default();
  o.memory = HALO_MEMORY_DEVICE;
  o.device_id = count; /* one past the last */
  CHECK_ERR(halo_plan_create(c.A, &o, &plan), HALO_ERR_INVALID_ARG, "CUDA devices are visible");
  gen_case_free(&c);
}

/* Strategy AUTO's trial on the program's calls in device memory (issue 42 item 3): every
 * call's values right (SpMVs against the serial sums, exchanges bit for bit), before, during
 * and after the decision; no extra call; the kept candidate the fastest measured; with the
 * plan's own candidate made slow (3 ms more in its begin: the GPU waits for it) another kept. */
static double online_x(int64_t id, int k) { return test_x(id) + 0.125 * k; }

/* A matrix on a new communicator and the vectors of calls checked one by one (online_device,
 * nccl_background). */
typedef struct {
  MPI_Comm comm;
  gen_case c;
  int64_t n, ng;
  const int64_t *gid;
  double *hx, *hy, *hg, *dx, *dy, *dg;
} call_case;

static void call_case_make(MPI_Comm comm_in, call_case *cc) {
  MPI_Comm_dup(comm_in, &cc->comm); /* a new communicator: nothing kept from earlier plans */
  gen_case_make(cc->comm, "lap3d27:16", &cc->c);
  cc->n = cc->c.rb[cc->c.rank + 1] - cc->c.rb[cc->c.rank];
  CHECK_OK(halo_matrix_get_local_sizes(cc->c.A, NULL, NULL, &cc->ng));
  CHECK_OK(halo_matrix_get_ghost_ids(cc->c.A, &cc->gid));
  cc->hx = malloc((size_t)(cc->n + 1) * sizeof *cc->hx);
  cc->hy = malloc((size_t)(cc->n + 1) * sizeof *cc->hy);
  cc->hg = malloc((size_t)(cc->ng + 1) * sizeof *cc->hg);
  CUDA_OK(cudaMalloc((void **)&cc->dx, (size_t)(cc->n + 1) * sizeof(double)));
  CUDA_OK(cudaMalloc((void **)&cc->dy, (size_t)(cc->n + 1) * sizeof(double)));
  CUDA_OK(cudaMalloc((void **)&cc->dg, (size_t)(cc->ng + 1) * sizeof(double)));
}

static void call_case_free(call_case *cc) {
  cudaFree(cc->dx), cudaFree(cc->dy), cudaFree(cc->dg);
  free(cc->hx), free(cc->hy), free(cc->hg);
  gen_case_free(&cc->c);
  MPI_Comm_free(&cc->comm);
}

/* Call k of plan: an SpMV (k even) checked against the serial sums, else an exchange into the
 * caller's buffer checked bit for bit; x differs from call to call (a stale ghost shows). */
static void call_checked(call_case *cc, halo_plan plan, int k, const char *what) {
  const gen_case *c = &cc->c;
  for (int64_t i = 0; i < cc->n; i++) cc->hx[i] = online_x(c->rb[c->rank] + i, k);
  CUDA_OK(cudaMemcpy(cc->dx, cc->hx, (size_t)(cc->n + 1) * sizeof *cc->hx, cudaMemcpyHostToDevice));
  if (k % 2 == 0) {
    CHECK_OK(halo_spmv(plan, 1.0, cc->dx, 0.0, cc->dy));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(cc->hy, cc->dy, (size_t)cc->n * sizeof *cc->hy);
    for (int64_t i = 0; i < cc->n; i++) {
      double sum = 0.0, mag = 0.0;
      for (int64_t e = c->rows.row_ptr[i]; e < c->rows.row_ptr[i + 1]; e++) {
        const double t = c->rows.values[e] * online_x(c->rows.col_ids[e], k);
        sum += t, mag += fabs(t);
      }
      CHECK_MSG(fabs(cc->hy[i] - sum) <= 1e-12 * mag + 1e-300,
                "%s: call %d: row %lld is %.17g, not %.17g", what, k, (long long)i, cc->hy[i], sum);
    }
  } else {
    CHECK_OK(halo_exchange_begin(plan, cc->dx, cc->dg));
    CHECK_OK(halo_exchange_end(plan));
    CHECK_OK(halo_plan_synchronize(plan));
    to_host(cc->hg, cc->dg, (size_t)cc->ng * sizeof *cc->hg);
    for (int64_t j = 0; j < cc->ng; j++)
      CHECK_MSG(cc->hg[j] == online_x(cc->gid[j], k), "%s: call %d: ghost %lld", what, k,
                (long long)j);
  }
}

static void online_device(MPI_Comm comm_in) {
  for (int slow = 0; slow <= 1; slow++) {
    call_case cc;
    call_case_make(comm_in, &cc);
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    o.ranks_per_node = cc.c.P >= 4 ? 2 : 0;
    o.expected_uses = 1000;
    halo_plan plan;
    char text[2048];
    const int64_t trial0 = halo_debug_trial_calls();
    CHECK_OK(halo_plan_create(cc.c.A, &o, &plan));
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    const int online = strstr(text, "being timed on the program's first calls") != NULL;
    halo_stats s0;
    CHECK_OK(halo_plan_stats(plan, &s0));
    const halo_transport t0 =
        s0.n_phases > 0 ? verify_phase(plan, 0).transport : HALO_TRANSPORT_AUTO;
    if (slow && online) halo_debug_slow_schedule(t0, s0.strategy, s0.message_cap_used, 3000);
    for (int k = 0; k < 120; k++) call_checked(&cc, plan, k, "online trial, device");
    halo_debug_slow_schedule(HALO_TRANSPORT_AUTO, HALO_STRATEGY_STANDARD, 0, 0);
    CHECK_MSG(halo_debug_trial_calls() == trial0, "online trial, device: %lld extra calls",
              (long long)(halo_debug_trial_calls() - trial0));
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    if (online) {
      halo_candidate cand[64];
      int n_c = 0, best = -1;
      CHECK_OK(halo_plan_get_candidates(plan, 64, cand, &n_c, &best));
      CHECK_MSG(strstr(text, "timed on the program's first 8 calls each") && best >= 0 &&
                    cand[best].timed > 0,
                "online trial, device: not settled: %.500s", text);
      for (int i = 0; i < n_c; i++)
        CHECK_MSG(cand[i].timed <= 0 || cand[i].timed >= 0.97 * cand[best].timed,
                  "online trial, device: candidate %d faster than the kept one: %.500s", i, text);
      halo_stats s1;
      CHECK_OK(halo_plan_stats(plan, &s1));
      if (slow)
        CHECK_MSG(!(s1.strategy == s0.strategy && s1.message_cap_used == s0.message_cap_used &&
                    verify_phase(plan, 0).transport == t0),
                  "online trial, device: the slow candidate was kept: %.500s", text);
    }
    if (cc.c.rank == 0)
      printf("online trial, device%s: %s\n", slow ? " (own candidate slow)" : "",
             online ? text : "the model decided alone");
    halo_plan_destroy(&plan);
    call_case_free(&cc);
  }
}

/* NCCL's communicator made in the background (issue 42 item 1, setting nccl.background): a plan
 * that names nccl on a communicator without one exchanges over ipc at once and its own forward
 * exchanges switch to nccl at one exchange on every rank; every call's values right before, at
 * and after the switch (SpMVs against the serial sums, exchanges bit for bit); one communicator
 * made; where the background fails (on purpose), the plan keeps ipc and its description says
 * why, once. */
static int64_t nccl_own_comms; /* NCCL communicators of nccl_background's communicators */

static void nccl_background(MPI_Comm comm_in) {
  int P;
  MPI_Comm_size(comm_in, &P);
  if (!HALO_HAVE_NCCL || ranks_per_gpu != 1 || P < 2) return;
  for (int fail = 0; fail <= 1; fail++) {
    call_case cc; /* a new communicator: its device has no NCCL communicator */
    call_case_make(comm_in, &cc);
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    o.strategy = HALO_STRATEGY_STANDARD;
    o.transport = HALO_TRANSPORT_NCCL;
    o.settings = "nccl.background=1"; /* the default, which main turns off for the other checks */
    halo_debug_nccl_background_fail(fail);
    const int64_t made0 = halo_debug_nccl_comms();
    halo_plan plan;
    const double t0 = MPI_Wtime();
    CHECK_OK(halo_plan_create(cc.c.A, &o, &plan));
    const double t_plan = MPI_Wtime() - t0;
    CHECK_MSG(verify_phase(plan, 0).transport == HALO_TRANSPORT_IPC,
              "nccl in the background: the plan's first exchanges are over %s, not ipc",
              halo_transport_name(verify_phase(plan, 0).transport));
    int k = 0, switched = -1;
    for (;; k++) {
      call_checked(&cc, plan, k % 64, "nccl in the background");
      if (switched < 0 && verify_phase(plan, 0).transport == HALO_TRANSPORT_NCCL) switched = k;
      int stop =
          (switched >= 0 && k >= switched + 20) || (fail && k >= 100) || MPI_Wtime() - t0 > 60.0;
      MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, cc.comm);
      if (stop) break;
    }
    int sw_min = switched, sw_max = switched;
    MPI_Allreduce(MPI_IN_PLACE, &sw_min, 1, MPI_INT, MPI_MIN, cc.comm);
    MPI_Allreduce(MPI_IN_PLACE, &sw_max, 1, MPI_INT, MPI_MAX, cc.comm);
    char text[2048];
    CHECK_OK(halo_plan_describe(plan, text, sizeof text));
    if (!fail) {
      CHECK_MSG(switched >= 0, "nccl in the background: no switch in %d calls: %.500s", k, text);
      CHECK_MSG(sw_min == sw_max, "nccl in the background: ranks switched at calls %d and %d",
                sw_min, sw_max);
      CHECK_MSG(halo_debug_nccl_comms() == made0 + 1,
                "nccl in the background: %lld NCCL communicators made, expected 1",
                (long long)(halo_debug_nccl_comms() - made0));
      CHECK_MSG(strstr(text, "nccl since exchange"), "nccl in the background: %.500s", text);
      nccl_own_comms++;
    } else {
      const char *said = strstr(text, "could not be made in the background");
      CHECK_MSG(switched < 0 && said && !strstr(said + 1, "could not be made in the background") &&
                    verify_phase(plan, 0).transport == HALO_TRANSPORT_IPC,
                "nccl in the background, failing: %.500s", text);
    }
    if (cc.c.rank == 0)
      printf("nccl in the background%s: plan made in %.3f s; %s at call %d of %d: %.300s\n",
             fail ? " (failing on purpose)" : "", t_plan, fail ? "no switch" : "switched", switched,
             k + 1, text);
    halo_debug_nccl_background_fail(0);
    halo_plan_destroy(&plan);
    call_case_free(&cc);
  }
  { /* a program that ends before its communicator is made: the device's end waits for the
     * thread and takes what it made (a thread left running into the process's exit crashed in
     * CUDA's teardown: a PETSc program whose solve ended first) */
    call_case cc;
    call_case_make(comm_in, &cc);
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    o.strategy = HALO_STRATEGY_STANDARD;
    o.transport = HALO_TRANSPORT_NCCL;
    o.settings = "nccl.background=1";
    const int64_t made0 = halo_debug_nccl_comms();
    halo_plan plan;
    CHECK_OK(halo_plan_create(cc.c.A, &o, &plan));
    call_checked(&cc, plan, 0, "nccl in the background, ended early");
    const int early = verify_phase(plan, 0).transport == HALO_TRANSPORT_IPC;
    halo_plan_destroy(&plan);
    const int rank = cc.c.rank;
    const double t0 = MPI_Wtime();
    call_case_free(&cc); /* the communicator's end: its context's and device's */
    const double t_end = MPI_Wtime() - t0;
    CHECK_MSG(halo_debug_nccl_comms() == made0 + 1,
              "nccl in the background, ended early: %lld NCCL communicators taken at the device's "
              "end, expected 1",
              (long long)(halo_debug_nccl_comms() - made0));
    nccl_own_comms++;
    if (rank == 0)
      printf("nccl in the background, ended %s: the device's end took %.3f s, its communicator "
             "made and taken\n",
             early ? "before the switch" : "after the switch", t_end);
  }
}

int main(int argc, char **argv) {
  /* the checks of every transport want a plan that names nccl to run it at once: NCCL's
   * communicator made when the plan is made (nccl_background checks the default, 1) */
  setenv("HALO_NCCL_BACKGROUND", "0", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P, count = 0, have;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  const char *sizes = getenv("HALO_TEST_RANKS_PER_NODE");
  if (sizes && *sizes) {
    n_node_sizes = 0;
    for (const char *c = sizes; *c && n_node_sizes < 8;) {
      char *end;
      const long k = strtol(c, &end, 10);
      CHECK_MSG(end != c && k >= 1 && k <= P && (*end == ',' || !*end),
                "HALO_TEST_RANKS_PER_NODE=%s: a comma-separated list of 1 to %d", sizes, P);
      node_sizes[n_node_sizes++] = (int)k;
      c = *end ? end + 1 : end;
    }
  }
  have = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, comm);
  if (!have) {
    if (rank == 0) printf("no CUDA device visible: skipped\n");
    MPI_Finalize();
    return 77;
  }
  /* what the plans will find: ranks per GPU, CUDA-aware MPI */
  {
    halo_gen g;
    halo_csr rows;
    int64_t *rb;
    CHECK_OK(halo_gen_parse("lap2d:8", &g));
    CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
    halo_matrix A;
    CHECK_OK(halo_matrix_create_csr(comm, rb[rank], rb[rank + 1], rb[rank], rb[rank + 1],
                                    rows.row_ptr, rows.col_ids, rows.values, HALO_MEMORY_HOST, &A));
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE, o.transport = HALO_TRANSPORT_STAGED;
    halo_plan plan;
    CHECK_OK(halo_plan_create(A, &o, &plan));
    int dev = -1, mine;
    cudaGetDevice(&dev);
    mine = dev;
    /* ranks per GPU over the whole run (one machine here) */
    int *all = malloc((size_t)P * sizeof *all);
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, comm);
    ranks_per_gpu = 0;
    for (int i = 0; i < P; i++) {
      int same = 0;
      for (int j = 0; j < P; j++) same += all[j] == all[i];
      if (same > ranks_per_gpu) ranks_per_gpu = same;
    }
    CHECK_MSG(dev == rank % count, "rank %d got device %d of %d", rank, dev, count);
    free(all);
    halo_plan_destroy(&plan);
    halo_matrix_destroy(&A);
    halo_csr_free(&rows);
    halo_io_free(rb);
    const char *env = getenv("HALO_GPU_AWARE_MPI"); /* as halo decides it */
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    mpi_aware = env && *env ? strcmp(env, "0") != 0 : MPIX_Query_cuda_support() == 1;
#else
    mpi_aware = env && *env && strcmp(env, "0") != 0;
#endif
    const char *mps = getenv("HALO_TEST_MPS");
    nvshmem_shared = HALO_HAVE_NVSHMEM && ranks_per_gpu > 1 && mps && strcmp(mps, "1") == 0;
    if (rank == 0)
      printf("%d ranks, %d devices, %d ranks per GPU, NCCL %s, NVSHMEM %s%s\n", P, count,
             ranks_per_gpu, HALO_HAVE_NCCL ? "compiled in" : "not compiled in",
             HALO_HAVE_NVSHMEM ? "compiled in" : "not compiled in",
             nvshmem_shared ? " (ranks that share a GPU under MPS)" : "");
  }
  choice(comm);
  online_device(comm);
  nccl_background(comm);
  late_peer(comm);
  long_rows(comm);
  async_product(comm);
  const char *gens[] = {"lap3d27:12", "irregular:3000,2", "lap2d:40"};
  for (int i = 0; i < 3; i++) {
    halo_gen g;
    halo_csr rows;
    int64_t *rb;
    CHECK_OK(halo_gen_parse(gens[i], &g));
    CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_NNZ, NULL, &rb, &rows));
    run_matrix(comm, &rows, rb, gens[i]);
    halo_csr_free(&rows);
    halo_io_free(rb);
  }
  /* odd ranks without rows: communication helpers that forward from host
   * memory (Split with staged is Split+MD, with ipc Split+DD) */
  if (P >= 2) {
    int *holds = malloc((size_t)P * sizeof *holds);
    for (int r = 0; r < P; r++) holds[r] = r % 2 == 0;
    for (int i = 0; i < 2; i++) {
      halo_gen g;
      halo_csr rows;
      int64_t *rb;
      char label[64];
      CHECK_OK(halo_gen_parse(gens[i], &g));
      CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, holds, &rb, &rows));
      CHECK(holds[rank] || rb[rank] == rb[rank + 1]);
      snprintf(label, sizeof label, "%s, odd ranks helpers", gens[i]);
      run_matrix(comm, &rows, rb, label);
      halo_csr_free(&rows);
      halo_io_free(rb);
    }
    free(holds);
  }
  for (int a = 1; a < argc; a++) {
    halo_csr rows;
    int64_t *rb;
    CHECK_OK(halo_mm_read_distributed(comm, 0, argv[a], NULL, HALO_PARTITION_ROWS, NULL, &rb, &rows,
                                      NULL));
    if (rows.n_rows == rows.n_cols) run_matrix(comm, &rows, rb, argv[a]);
    halo_csr_free(&rows);
    halo_io_free(rb);
  }
  for (int t = HALO_TRANSPORT_STAGED; t < HALO_N_TRANSPORTS; t++)
    if (transport_usable((halo_transport)t)) no_alloc(comm, (halo_transport)t);
  /* every plan of the run on one communicator: one NCCL communicator at most,
   * and one more after each abort (late_peer's timed-out nccl exchange
   * aborts it; the next plan makes a new one), besides nccl_background's own
   * communicator's and, with more than 2 ranks, late_peer's on its pair of ranks (counted
   * there) */
  CHECK_MSG(halo_debug_nccl_comms() - nccl_pair_comms <=
                1 + halo_debug_nccl_aborts() - nccl_pair_aborts + nccl_own_comms,
            "%lld NCCL communicators made, %lld aborted (of them on late_peer's pair: %lld made, "
            "%lld aborted)",
            (long long)halo_debug_nccl_comms(), (long long)halo_debug_nccl_aborts(),
            (long long)nccl_pair_comms, (long long)nccl_pair_aborts);
  if (rank == 0)
    printf("%d device plans checked, %lld NCCL communicator(s) made\n", n_cases,
           (long long)halo_debug_nccl_comms());
  MPI_Finalize();
  return 0;
}
