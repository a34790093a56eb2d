/* The local product on the device, halo's kernel against cuSPARSE's, on the
 * same matrix in the same run. Every rank multiplies its diagonal block
 * (halo_spmv_diag; one rank: the whole matrix) with each kernel: halo's with
 * its long-row kernel where the plan finds long rows, halo's without it
 * (spmv_long_row past every row), and cusparseSpMV with CSR_ALG1 and ALG2
 * (preprocessed at plan time). A round times each kernel over a batch of
 * back-to-back products (completed once at the end; at least 2 ms per batch),
 * the kernels one after the other; the figure is the median over the rounds
 * of the most of any rank. Each kernel's y is checked against the host's
 * product, within the rounding of a sum of the row's length (2 n eps
 * sum_j |a_ij x_j|), and halo's against itself over two batches (the same
 * bits). Prints one markdown row: rows, entries, the longest and mean row,
 * the rows halo's plan splits, microseconds per product, halo against the
 * faster cuSPARSE algorithm, and halo's bandwidth counted as the least
 * traffic of a product: 12 bytes per entry (value and 32-bit column id), 4
 * per row pointer, 8 per x and per y entry.
 *
 * usage: bench_local (--gen SPEC | --matrix FILE) [--rounds R] [--header] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/devmem.h"
#include "halo.h"
#include "halo/io.h"

#define CK(call)                                                                                   \
  do {                                                                                             \
    halo_status s_ = (call);                                                                       \
    if (s_ != HALO_SUCCESS) {                                                                      \
      fprintf(stderr, "bench_local: %s: %s\n", #call, halo_last_error());                         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

enum { N_KERNELS = 4, MAX_ROUNDS = 31 };
static const char *const kernel_names[N_KERNELS] = {"halo", "halo, no long rows", "cuSPARSE ALG1",
                                                    "cuSPARSE ALG2"};

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds per product over a batch of k, the most of any rank. */
static double batch(halo_plan plan, int64_t k, const double *x, double *y) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int64_t i = 0; i < k; i++) CK(halo_spmv_diag(plan, 1.0, x, 0.0, y));
  CK(halo_plan_synchronize(plan));
  double t = (MPI_Wtime() - t0) / (double)k, most;
  MPI_Allreduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *gen = NULL, *file = NULL;
  int rounds = 7, header = 0, rank, P;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--header")) {
      header = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "bench_local: %s needs a value\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    i++;
    if (!strcmp(a, "--gen")) gen = v;
    else if (!strcmp(a, "--matrix")) file = v;
    else if (!strcmp(a, "--rounds")) rounds = atoi(v);
    else {
      fprintf(stderr, "bench_local: unknown option %s\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!gen == !file || rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "bench_local: give one of --gen SPEC or --matrix FILE, and --rounds 1 to %d\n",
            MAX_ROUNDS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  halo_csr rows;
  int64_t *rb;
  if (gen) {
    halo_gen g;
    CK(halo_gen_parse(gen, &g));
    CK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  } else {
    CK(halo_mm_read_distributed(MPI_COMM_WORLD, 0, file, NULL, HALO_PARTITION_ROWS, NULL, &rb,
                                &rows, NULL));
  }
  if (rows.n_rows != rows.n_cols) { /* the diagonal block is the matrix's square part */
    if (rank == 0) printf("| %s | not square: skipped |\n", gen ? gen : file);
    halo_csr_free(&rows);
    halo_io_free(rb);
    MPI_Finalize();
    return 0;
  }
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  /* the rows' lengths over all ranks */
  int64_t stat[3] = {0, n ? rows.row_ptr[n] : 0, n}; /* longest, entries, rows */
  for (int64_t i = 0; i < n; i++)
    if (rows.row_ptr[i + 1] - rows.row_ptr[i] > stat[0]) stat[0] = rows.row_ptr[i + 1] - rows.row_ptr[i];
  int64_t longest, sums[2];
  MPI_Allreduce(&stat[0], &longest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&stat[1], sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  /* the diagonal block alone, on the host: the reference */
  double *hx = malloc((size_t)(n + 1) * sizeof *hx), *ref = malloc((size_t)(n + 1) * sizeof *ref);
  double *hy = malloc((size_t)(n + 1) * sizeof *hy), *first = malloc((size_t)(n + 1) * sizeof *first);
  for (int64_t i = 0; i < n; i++) hx[i] = 1.0 / (double)(b + i + 1) + 0.25 * (double)((b + i) % 7);
  /* each row's rounding bound over the diagonal block */
  double *tol = malloc((size_t)(n + 1) * sizeof *tol);
  for (int64_t i = 0; i < n; i++) {
    double s = 0.0;
    int64_t len = 0;
    for (int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; k++)
      if (rows.col_ids[k] >= b && rows.col_ids[k] < e) {
        s += fabs(rows.values[k] * hx[rows.col_ids[k] - b]);
        len++;
      }
    tol[i] = 2.0 * (double)(len + 1) * 0x1p-52 * s;
  }
  halo_matrix A;
  CK(halo_matrix_create_csr(MPI_COMM_WORLD, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                            HALO_MEMORY_HOST, &A));
  {
    halo_plan hp;
    CK(halo_plan_create(A, NULL, &hp));
    CK(halo_spmv_diag(hp, 1.0, hx, 0.0, ref));
    halo_plan_destroy(&hp);
  }
  halo_plan plans[N_KERNELS];
  for (int k = 0; k < N_KERNELS; k++) {
    halo_plan_options o = halo_plan_options_default();
    o.memory = HALO_MEMORY_DEVICE;
    o.transport = HALO_TRANSPORT_STAGED;
    o.reverse = 0;
    /* halo's kernel, without its long-row kernel, cuSPARSE ALG1, ALG2 */
    static const char *const kernel_settings[] = {
        "spmv.kernel=halo", "spmv.kernel=halo,spmv.long_row=9223372036854775807",
        "spmv.kernel=cusparse,spmv.cusparse_alg=1", "spmv.kernel=cusparse,spmv.cusparse_alg=2"};
    o.settings = kernel_settings[k];
    CK(halo_plan_create(A, &o, &plans[k]));
  }
  halo_stats hs;
  CK(halo_plan_stats(plans[0], &hs));
  /* the vectors after the plans, on the device they chose */
  double *x = buf_alloc(1, (size_t)(n + 1) * sizeof *x), *y = buf_alloc(1, (size_t)(n + 1) * sizeof *y);
  if (!x || !y || buf_from_host(1, x, hx, (size_t)n * sizeof *x)) {
    fprintf(stderr, "bench_local: no device memory for the vectors\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int bad = 0;
  int64_t per_batch[N_KERNELS];
  for (int k = 0; k < N_KERNELS; k++) {
    /* checked: against the host, and halo's the same bits twice */
    int kbad = 0;
    for (int twice = 0; twice < 2 && !kbad; twice++) {
      buf_poison(1, y, (size_t)(n + 1) * sizeof *y);
      batch(plans[k], 3, x, y);
      if (buf_to_host(1, hy, y, (size_t)n * sizeof *hy)) kbad = 1;
      for (int64_t i = 0; i < n && !kbad; i++)
        if (!(fabs(hy[i] - ref[i]) <= tol[i])) {
          fprintf(stderr, "bench_local: %s: y[%lld] = %.17g, host %.17g (bound %.3g)\n",
                  kernel_names[k], (long long)(b + i), hy[i], ref[i], tol[i]);
          kbad = 1;
        }
      if (k < 2 && twice == 0) memcpy(first, hy, (size_t)n * sizeof *hy);
      if (k < 2 && twice == 1 && n && memcmp(first, hy, (size_t)n * sizeof *hy)) {
        fprintf(stderr, "bench_local: %s: not the same bits twice\n", kernel_names[k]);
        kbad = 1;
      }
    }
    bad |= kbad;
    /* a batch of at least 2 ms, from a first estimate */
    const double t = batch(plans[k], 20, x, y);
    per_batch[k] = t > 0 ? (int64_t)(2e-3 / t) + 1 : 1000;
    if (per_batch[k] < 20) per_batch[k] = 20;
    if (per_batch[k] > 100000) per_batch[k] = 100000;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  double times[N_KERNELS][MAX_ROUNDS], med[N_KERNELS];
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < N_KERNELS; k++) times[k][r] = batch(plans[k], per_batch[k], x, y);
  for (int k = 0; k < N_KERNELS; k++) med[k] = median(times[k], rounds);
  if (rank == 0) {
    if (header)
      printf("| matrix | ranks | rows | entries | longest row | mean row | long rows | halo us | "
             "halo, no long rows, us | cuSPARSE ALG1 us | cuSPARSE ALG2 us | halo / faster "
             "cuSPARSE | halo GB/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const double bytes = 12.0 * (double)sums[0] + 20.0 * (double)sums[1];
    const double best = med[2] < med[3] ? med[2] : med[3];
    char gbs[32] = "-"; /* one rank: the whole matrix */
    if (P == 1) snprintf(gbs, sizeof gbs, "%.0f", bytes / med[0] * 1e-9);
    printf("| %s | %d | %lld | %lld | %lld | %.1f | %lld | %.1f | %.1f | %.1f | %.1f | %.2f | %s "
           "|%s\n",
           gen ? gen : file, P, (long long)sums[1], (long long)sums[0], (long long)longest,
           sums[1] ? (double)sums[0] / (double)sums[1] : 0.0, (long long)hs.long_rows, 1e6 * med[0],
           1e6 * med[1], 1e6 * med[2], 1e6 * med[3], med[0] / best,
           gbs, bad ? " CHECK FAILED" : "");
    fflush(stdout);
  }
  for (int k = 0; k < N_KERNELS; k++) halo_plan_destroy(&plans[k]);
  halo_matrix_destroy(&A);
  buf_free(1, x);
  buf_free(1, y);
  free(hx), free(ref), free(hy), free(first), free(tol);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return bad ? 3 : 0;
}
