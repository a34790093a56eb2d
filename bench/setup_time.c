/* Plan set-up against the product. On a fresh communicator: the matrix
 * (which makes the communicator's context), the first plan (which makes the
 * nodes, and with device memory the device's streams and the NCCL
 * communicator), then later plans of the same matrix, each made and
 * destroyed, part by part (halo_plan_setup_part_seconds: the most of any
 * rank), against one SpMV of the same matrix (the median of 5 means of 20
 * calls, each call completed on the device; the most of any rank). Prints
 * one markdown row per plan kind; the later plans' figures are medians.
 *
 * usage: bench_setup (--gen SPEC | --matrix FILE) [--memory host|device]
 *          [--transport NAME] [--strategy NAME] [--ranks-per-node K]
 *          [--reverse 0|1] [--max-exchanges N] [--plans N] [--header] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/devmem.h"
#define BENCH_NAME "bench_setup"
#include "bench_util.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *gen = NULL, *file = NULL;
  halo_plan_options o = halo_plan_options_default();
  int plans = 10, header = 0, rank, P;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--header")) {
      header = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "bench_setup: %s needs a value\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    i++;
    if (!strcmp(a, "--gen")) gen = v;
    else if (!strcmp(a, "--matrix")) file = v;
    else if (!strcmp(a, "--memory")) CK(halo_memory_from_name(v, &o.memory));
    else if (!strcmp(a, "--transport")) CK(halo_transport_from_name(v, &o.transport));
    else if (!strcmp(a, "--strategy")) CK(halo_strategy_from_name(v, &o.strategy));
    else if (!strcmp(a, "--ranks-per-node")) o.ranks_per_node = atoi(v);
    else if (!strcmp(a, "--reverse")) o.reverse = atoi(v);
    else if (!strcmp(a, "--max-exchanges")) o.max_exchanges = atoi(v);
    else if (!strcmp(a, "--plans")) plans = atoi(v);
    else {
      fprintf(stderr, "bench_setup: unknown option %s\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!gen == !file || plans < 1) {
    fprintf(stderr, "bench_setup: give one of --gen SPEC or --matrix FILE, and --plans >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  halo_csr rows;
  int64_t *rb;
  bench_rows(gen, file, &rb, &rows);
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  const int device = o.memory == HALO_MEMORY_DEVICE;
  double *hx = malloc((size_t)(n + 1) * sizeof *hx);
  for (int64_t i = 0; i < n; i++) hx[i] = 1.0 / (double)(b + i + 1);

  /* a fresh communicator: its first matrix makes the context */
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  halo_matrix A;
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  CK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                            HALO_MEMORY_HOST, &A));
  const double t_matrix = most(comm, MPI_Wtime() - t);
  halo_plan plan;
  halo_stats first;
  int n_parts = 0; /* the set-up parts: those with a name */
  while (strcmp(halo_setup_part_name((halo_setup_part)n_parts), "unknown") != 0) n_parts++;
  double *first_part = malloc((size_t)n_parts * sizeof *first_part + 1);
  CK(halo_plan_create(A, &o, &plan));
  CK(halo_plan_stats(plan, &first));
  for (int k = 0; k < n_parts; k++)
    CK(halo_plan_setup_part_seconds(plan, (halo_setup_part)k, &first_part[k]));
  /* the vectors after the first plan, on the device it chose (made before,
   * they would have put every rank on the current device) */
  double *x = buf_alloc(device, (size_t)n * sizeof *x), *y = buf_alloc(device, (size_t)n * sizeof *y);
  if (!x || !y || buf_from_host(device, x, hx, (size_t)n * sizeof *x)) {
    fprintf(stderr, "bench_setup: no %s memory for the vectors\n", device ? "device" : "host");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* one product */
  for (int i = 0; i < 10; i++) CK(halo_spmv(plan, 1.0, x, 0.0, y));
  CK(halo_plan_synchronize(plan));
  double reps[5];
  for (int r = 0; r < 5; r++) {
    MPI_Barrier(comm);
    t = MPI_Wtime();
    for (int i = 0; i < 20; i++) {
      CK(halo_spmv(plan, 1.0, x, 0.0, y));
      CK(halo_plan_synchronize(plan));
    }
    reps[r] = most(comm, (MPI_Wtime() - t) / 20);
  }
  const double t_spmv = median(reps, 5);
  char what[256];
  CK(halo_plan_describe(plan, what, sizeof what));
  halo_plan_destroy(&plan);
  /* later plans of the same matrix */
  double *tot = malloc((size_t)plans * sizeof *tot);
  double **part = malloc((size_t)n_parts * sizeof *part + 1);
  for (int k = 0; k < n_parts; k++) part[k] = malloc((size_t)plans * sizeof(double));
  for (int i = 0; i < plans; i++) {
    halo_stats st;
    CK(halo_plan_create(A, &o, &plan));
    CK(halo_plan_stats(plan, &st));
    tot[i] = st.setup_seconds;
    for (int k = 0; k < n_parts; k++)
      CK(halo_plan_setup_part_seconds(plan, (halo_setup_part)k, &part[k][i]));
    halo_plan_destroy(&plan);
  }
  if (rank == 0) {
    if (header) {
      printf("| matrix | ranks | plan | matrix ms | SpMV us | first plan ms | later plan ms | "
             "later / SpMV |");
      for (int k = 0; k < n_parts; k++)
        printf(" %s ms (first, later) |", halo_setup_part_name((halo_setup_part)k));
      printf("\n|---|---|---|---|---|---|---|---|");
      for (int k = 0; k < n_parts; k++) printf("---|");
      printf("\n");
    }
    const double later = median(tot, plans);
    halo_plan_options r;
    CK(halo_plan_options_resolve(&o, &r));
    char kind[320];
    snprintf(kind, sizeof kind, "%s; reverse %d, %d exchange%s", what, r.reverse, r.max_exchanges,
             r.max_exchanges == 1 ? "" : "s");
    printf("| %s | %d | %s | %.2f | %.1f | %.2f | %.2f | %.1f |", gen ? gen : file, P, kind,
           1e3 * t_matrix, 1e6 * t_spmv, 1e3 * first.setup_seconds, 1e3 * later, later / t_spmv);
    for (int k = 0; k < n_parts; k++)
      printf(" %.2f, %.2f |", 1e3 * first_part[k], 1e3 * median(part[k], plans));
    printf("\n");
    fflush(stdout);
  }
  for (int k = 0; k < n_parts; k++) free(part[k]);
  free(part);
  free(first_part);
  free(tot);
  halo_matrix_destroy(&A);
  MPI_Comm_free(&comm);
  buf_free(device, x);
  buf_free(device, y);
  free(hx);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return 0;
}
