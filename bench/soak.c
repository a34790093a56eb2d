/* Soak and scale of handles (issue 17 item 4): many exchanges and products
 * on one plan, many plans alive at once, many create/destroy cycles, with the
 * process's resident memory, open file descriptors, live MPI objects and
 * (device memory) the GPU's used memory sampled as they go: none may grow.
 * Results in bench/results/reliability.md; a short run is the test
 * soak_np2 (tests/CMakeLists.txt).
 *
 * usage: bench_soak [--gen G] [--exchanges N] [--spmv N] [--plans K] [--cycles C]
 *                   [--memory host|device] [--strategy S] [--transport T]
 *                   [--ranks-per-node K] [--rss-slack KB]
 *
 * Phases, each sampled 11 times (after a warm-up of a tenth, the samples
 * from the first on must not grow):
 *   exchanges  N forward and N reverse exchanges on one plan (default 10^6)
 *   spmv       N products halo_spmv on it (default 0 on the host; 10^5 in device memory)
 *   plans      K plans alive at once on the communicator (default 100), each
 *              exchanged and its ghosts checked, then all destroyed
 *   cycles     C create, exchange, destroy cycles of a plan (default 10^4)
 * Live MPI objects: persistent requests, communicators, windows, groups and
 * datatypes made minus those freed, counted through MPI's profiling
 * interface. The ghost values are checked against their global ids at the
 * end of every phase. Exit status 1 when anything grew or a value was wrong. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/interpose/mpi_live.h"
#include "../tools/devmem.h"
#include "halo.h"
#include "halo/io.h"

#if HALO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ---- live MPI objects: counted by libhalo_mpi_live (tests/interpose), which
 * interposes MPI's calls through its profiling interface, so that the library's
 * MPI calls resolve into no benchmark file ---------------------------------------- */

/* ---- samples ----------------------------------------------------------------------- */

typedef struct {
  long rss_kb, fds, mpi, dev_mb;
} sample;

static long rss_kb(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * 4; /* 4 KiB pages */
}

static long open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  while (readdir(d)) n++;
  closedir(d);
  return n - 3; /* ".", ".." and the directory's own */
}

static long device_used_mb(int device) {
#if HALO_HAVE_CUDA
  size_t free_b = 0, total = 0;
  if (device && cudaMemGetInfo(&free_b, &total) == cudaSuccess)
    return (long)((total - free_b) >> 20);
#endif
  (void)device;
  return 0;
}

static sample take(int device) {
  return (sample){rss_kb(), open_fds(), halo_mpi_live(), device_used_mb(device)};
}

static int rank, failed;
static long rss_slack = 2048;

#define OK(call)                                                                                   \
  do {                                                                                             \
    if ((call) != HALO_SUCCESS) {                                                                  \
      fprintf(stderr, "bench_soak: [%d] %s: %s\n", rank, #call, halo_last_error());                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

/* Print a phase's samples (the most of any rank) and check that none grew
 * from the first: fds and MPI objects not at all, resident memory by at most
 * rss_slack KB, the GPU's used memory by at most 2 MiB (its pages). */
static void report(const char *phase, long n, const sample *s, int ns) {
  long v[11][4], m[11][4];
  for (int i = 0; i < ns; i++) {
    v[i][0] = s[i].rss_kb, v[i][1] = s[i].fds, v[i][2] = s[i].mpi, v[i][3] = s[i].dev_mb;
  }
  MPI_Allreduce(v, m, 4 * ns, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  const long grow[4] = {m[ns - 1][0] - m[0][0], m[ns - 1][1] - m[0][1], m[ns - 1][2] - m[0][2],
                        m[ns - 1][3] - m[0][3]};
  long peak_rss = 0;
  for (int i = 0; i < ns; i++) peak_rss = m[i][0] > peak_rss ? m[i][0] : peak_rss;
  int bad = grow[0] > rss_slack || grow[1] != 0 || grow[2] != 0 || grow[3] > 2;
  for (int i = 1; i < ns; i++) /* nothing but memory may move between samples either */
    if (m[i][1] != m[0][1] || m[i][2] != m[0][2]) bad = 1;
  if (rank == 0) {
    printf("%-10s %10ld  rss KB %ld -> %ld (peak %ld, %+ld)  fds %ld -> %ld  mpi objects %ld -> %ld",
           phase, n, m[0][0], m[ns - 1][0], peak_rss, grow[0], m[0][1], m[ns - 1][1], m[0][2],
           m[ns - 1][2]);
    if (m[0][3] || m[ns - 1][3]) printf("  device MB %ld -> %ld", m[0][3], m[ns - 1][3]);
    printf("  %s\n", bad ? "GREW" : "flat");
    fflush(stdout);
  }
  failed |= bad;
}

typedef struct {
  halo_plan plan;
  double *x, *g, *h; /* owned, ghosts (the plan's memory), ghosts on the host */
  int64_t n, ng;
  const int64_t *gid;
} used_plan;

/* Exchange forward on u and check the ghosts: entry i of x is its global id. */
static void exchange_check(const used_plan *u, int device, const char *what) {
  OK(halo_exchange_begin(u->plan, u->x, u->g));
  OK(halo_exchange_end(u->plan));
  OK(halo_plan_synchronize(u->plan));
  if (buf_to_host(device, u->h, u->g, (size_t)u->ng * sizeof(double))) {
    fprintf(stderr, "bench_soak: [%d] copy of the ghosts failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int64_t k = 0; k < u->ng; k++)
    if (u->h[k] != (double)u->gid[k]) {
      fprintf(stderr, "bench_soak: [%d] %s: ghost %lld is %g, not %lld\n", rank, what, (long long)k,
              u->h[k], (long long)u->gid[k]);
      failed = 1;
      return;
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *gen = "lap3d27:24";
  long n_x = 1000000, n_spmv = -1, n_plans = 100, n_cycles = 10000;
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.memory = HALO_MEMORY_HOST;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!v) goto usage;
    if (!strcmp(argv[a], "--gen")) gen = v;
    else if (!strcmp(argv[a], "--exchanges")) n_x = atol(v);
    else if (!strcmp(argv[a], "--spmv")) n_spmv = atol(v);
    else if (!strcmp(argv[a], "--plans")) n_plans = atol(v);
    else if (!strcmp(argv[a], "--cycles")) n_cycles = atol(v);
    else if (!strcmp(argv[a], "--rss-slack")) rss_slack = atol(v);
    else if (!strcmp(argv[a], "--ranks-per-node")) o.ranks_per_node = atoi(v);
    else if (!strcmp(argv[a], "--memory")) OK(halo_memory_from_name(v, &o.memory));
    else if (!strcmp(argv[a], "--strategy")) OK(halo_strategy_from_name(v, &o.strategy));
    else if (!strcmp(argv[a], "--transport")) OK(halo_transport_from_name(v, &o.transport));
    else goto usage;
    a++;
  }
  if (n_x < 10 || n_plans < 1 || n_cycles < 10) goto usage;
  const int device = o.memory == HALO_MEMORY_DEVICE;
  if (n_spmv < 0) n_spmv = device ? 100000 : 0;

  halo_gen g;
  halo_csr local;
  int64_t *row_begin;
  OK(halo_gen_parse(gen, &g));
  OK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &row_begin, &local));
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1];
  halo_matrix A;
  OK(halo_matrix_create_csr(MPI_COMM_WORLD, rb, re, rb, re, local.row_ptr, local.col_ids,
                            local.values, HALO_MEMORY_HOST, &A));
  used_plan u = {0};
  OK(halo_matrix_get_local_sizes(A, NULL, &u.n, &u.ng));
  OK(halo_matrix_get_ghost_ids(A, &u.gid));
#if HALO_HAVE_CUDA
  if (device) { /* the GPU halo's plans take (the rank on its node modulo the visible devices),
                   before the buffers make a context on the first one */
    halo_node_info ni;
    int n_dev = 0;
    OK(halo_comm_get_node_info(MPI_COMM_WORLD, 0, &ni));
    if (cudaGetDeviceCount(&n_dev) == cudaSuccess && n_dev > 0) cudaSetDevice(ni.local_rank % n_dev);
  }
#endif
  double *hx = malloc((size_t)(u.n + 1) * sizeof *hx);
  u.h = malloc((size_t)(u.ng + 1) * sizeof *u.h);
  u.x = buf_alloc(device, (size_t)(u.n + 1) * sizeof(double));
  u.g = buf_alloc(device, (size_t)(u.ng + 1) * sizeof(double));
  double *y = buf_alloc(device, (size_t)(u.n + 1) * sizeof(double));
  if (!hx || !u.h || !u.x || !u.g || !y) {
    fprintf(stderr, "bench_soak: [%d] out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int64_t i = 0; i < u.n; i++) hx[i] = (double)(rb + i);
  if (buf_from_host(device, u.x, hx, (size_t)u.n * sizeof(double))) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    printf("bench_soak: %s, %d ranks, %s memory, %s, %s; per phase: count, then resident memory, "
           "open files and live MPI objects (the most of any rank) from the first sample to the "
           "last\n",
           gen, P, halo_memory_name(o.memory), halo_strategy_name(o.strategy),
           halo_transport_name(o.transport));

  /* exchanges and products on one plan */
  OK(halo_plan_create(A, &o, &u.plan));
  sample s[11];
  const long warm = n_x / 10, step = (n_x - warm) / 10;
  for (long i = 0, k = 0; i < n_x; i++) {
    OK(halo_exchange_begin(u.plan, u.x, u.g));
    OK(halo_exchange_end(u.plan));
    OK(halo_exchange_reverse_begin(u.plan, u.g, y));
    OK(halo_exchange_reverse_end(u.plan));
    if (i + 1 >= warm && (i + 1 - warm) % step == 0 && k < 11) {
      OK(halo_plan_synchronize(u.plan));
      s[k++] = take(device);
    }
  }
  exchange_check(&u, device, "exchanges");
  report("exchanges", n_x, s, 11);
  if (n_spmv >= 10) {
    const long w = n_spmv / 10, st = (n_spmv - w) / 10;
    for (long i = 0, k = 0; i < n_spmv; i++) {
      OK(halo_spmv(u.plan, 1.0, u.x, 0.0, y));
      if (i + 1 >= w && (i + 1 - w) % st == 0 && k < 11) {
        OK(halo_plan_synchronize(u.plan));
        s[k++] = take(device);
      }
    }
    report("spmv", n_spmv, s, 11);
  }
  halo_plan_destroy(&u.plan);

  /* many plans alive at once, each used */
  used_plan *many = calloc((size_t)n_plans, sizeof *many);
  if (!many) MPI_Abort(MPI_COMM_WORLD, 1);
  sample before = take(device);
  for (long p = 0; p < n_plans; p++) {
    many[p] = u;
    many[p].g = buf_alloc(device, (size_t)(u.ng + 1) * sizeof(double));
    if (!many[p].g) MPI_Abort(MPI_COMM_WORLD, 1);
    OK(halo_plan_create(A, &o, &many[p].plan));
  }
  sample alive = take(device);
  for (long p = 0; p < n_plans; p++) exchange_check(&many[p], device, "plans");
  for (long p = n_plans - 1; p >= 0; p--) { /* in the other order */
    halo_plan_destroy(&many[p].plan);
    buf_free(device, many[p].g);
  }
  free(many);
  /* a plan made after: frees what destroyed plans left for a collective
   * moment (rma's windows) */
  OK(halo_plan_create(A, &o, &u.plan));
  halo_plan_destroy(&u.plan);
  sample after = take(device);
  {
    long v[3] = {before.mpi, alive.mpi, after.mpi}, m[3];
    MPI_Allreduce(v, m, 3, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    const int bad = m[2] != m[0];
    if (rank == 0)
      printf("%-10s %10ld  live MPI objects: %ld before, %ld with all alive, %ld after  %s\n",
             "plans", n_plans, m[0], m[1], m[2], bad ? "LEFT" : "all freed");
    failed |= bad;
  }

  /* create, use, destroy */
  const long cw = n_cycles / 10, cs = (n_cycles - cw) / 10;
  for (long i = 0, k = 0; i < n_cycles; i++) {
    OK(halo_plan_create(A, &o, &u.plan));
    OK(halo_exchange_begin(u.plan, u.x, u.g));
    OK(halo_exchange_end(u.plan));
    if (i == n_cycles - 1) exchange_check(&u, device, "cycles");
    halo_plan_destroy(&u.plan);
    if (i + 1 >= cw && (i + 1 - cw) % cs == 0 && k < 11) s[k++] = take(device);
  }
  report("cycles", n_cycles, s, 11);

  int any = failed;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("bench_soak: %s\n", any ? "FAILED" : "nothing grew, every value right");
  buf_free(device, u.x);
  buf_free(device, u.g);
  buf_free(device, y);
  free(hx);
  free(u.h);
  halo_matrix_destroy(&A);
  halo_csr_free(&local);
  free(row_begin);
  MPI_Finalize();
  return any ? 1 : 0;
usage:
  if (rank == 0)
    fprintf(stderr, "usage: %s [--gen G] [--exchanges N] [--spmv N] [--plans K] [--cycles C] "
                    "[--memory host|device] [--strategy S] [--transport T] [--ranks-per-node K] "
                    "[--rss-slack KB]\n",
            argv[0]);
  MPI_Finalize();
  return 2;
}
