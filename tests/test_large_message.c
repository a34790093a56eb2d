/* One message past 2^31 bytes (issue 17 item 5): each rank owns n values and
 * needs all n of the next rank's as ghosts, so that every rank receives one
 * message of 8n bytes (n > 2^28 makes it more than 2^31 bytes). An
 * exchange-only plan from global ids, standard strategy, in host or device
 * memory (argv[2] "device"; the transport from HALO_TRANSPORT, else auto);
 * every ghost must equal x at its global id, bit for bit, after the forward
 * exchange, and each owner must get back the sum of its values sent out and
 * returned by the reverse exchange (argv[3] "reverse"). Prints the message's
 * size and the times of the plan and the exchanges.
 *
 * The second mode, "spmv SPEC": a product of a generated matrix (more than
 * 2^31 entries in all with lap3d27:432), each rank's rows checked against the
 * sum of its raw rows (verify_product_error, 1e-12).
 *
 * usage: mpirun -n P test_large_message N [host|device] [reverse]
 *        mpirun -n P test_large_message spmv SPEC [host|device] */
#include "halo_impl.h"
#include "verify.h"

static int large_spmv(const char *spec, int device) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  halo_gen g;
  int64_t *rb;
  halo_csr rows;
  double t0 = MPI_Wtime();
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  halo_matrix A;
  CHECK_OK(halo_matrix_create_csr(MPI_COMM_WORLD, b, e, b, e, rows.row_ptr, rows.col_ids,
                                  rows.values, HALO_MEMORY_HOST, &A));
  const double t_matrix = MPI_Wtime() - t0;
  int64_t nnz = rows.row_ptr[n], total = 0;
  MPI_Allreduce(&nnz, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.memory = device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  o.reverse = 0; /* no transposes: the forward product alone */
  t0 = MPI_Wtime();
  halo_plan plan;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  const double t_plan = MPI_Wtime() - t0;
  double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
  CHECK_MSG(x && y, "out of memory: 2 x %lld values", (long long)n);
  for (int64_t j = 0; j < n; j++) x[j] = test_x(b + j);
  double *dx = x, *dy = y;
  if (device) {
    CHECK_OK(halo_dev_malloc((void **)&dx, (size_t)(n + 1) * sizeof *dx));
    CHECK_OK(halo_dev_malloc((void **)&dy, (size_t)(n + 1) * sizeof *dy));
    CHECK_OK(halo_host_to_dev(dx, x, (size_t)n * sizeof *x));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  CHECK_OK(halo_spmv(plan, 1.0, dx, 0.0, dy));
  CHECK_OK(halo_plan_synchronize(plan));
  const double t_spmv = MPI_Wtime() - t0;
  if (device) CHECK_OK(halo_dev_to_host(y, dy, (size_t)n * sizeof *y));
  double worst = verify_product_error(&rows, 1.0, 0.0, NULL, y, 1.0), most = 0;
  MPI_Allreduce(&worst, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK_MSG(most == 0, "the product differs from its rows' sums: largest relative error %g", most);
  if (rank == 0) {
    char what[256];
    CHECK_OK(halo_plan_describe(plan, what, sizeof what));
    printf("test_large_message: spmv %s, %s memory (%s): %lld entries in all (%s 2^31), %lld on "
           "rank 0; matrix %.1f s, plan %.1f s, product %.3f s; every row within 1e-12 of its "
           "sum\n",
           spec, device ? "device" : "host", what, (long long)total,
           total > INT32_MAX ? "more than" : "less than", (long long)nnz, t_matrix, t_plan, t_spmv);
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  if (device) {
    halo_dev_free(dx);
    halo_dev_free(dy);
  }
  free(x);
  free(y);
  halo_csr_free(&rows);
  free(rb);
  MPI_Finalize();
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc > 2 && strcmp(argv[1], "spmv") == 0)
    return large_spmv(argv[2], argc > 3 && strcmp(argv[3], "device") == 0);
  const int64_t n = argc > 1 ? atoll(argv[1]) : 100000;
  const int device = argc > 2 && strcmp(argv[2], "device") == 0;
  const int reverse = argc > 3 && strcmp(argv[3], "reverse") == 0;
  CHECK_MSG(n > 0 && P > 1, "give N > 0 and 2 or more ranks");
  const int next = (rank + 1) % P;
  const int64_t b = (int64_t)rank * n, nb = (int64_t)next * n;
  double *x = malloc((size_t)n * sizeof *x), *g = malloc((size_t)n * sizeof *g);
  int64_t *ids = malloc((size_t)n * sizeof *ids);
  CHECK_MSG(x && g && ids, "out of memory: 3 x %lld values", (long long)n);
  for (int64_t j = 0; j < n; j++) x[j] = test_x(b + j), ids[j] = nb + j;
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.memory = device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  o.reverse = reverse;
  double t0 = MPI_Wtime();
  halo_plan plan;
  CHECK_OK(halo_plan_create_from_ids(MPI_COMM_WORLD, b, b + n, n, ids, &o, &plan));
  free(ids);
  const double t_plan = MPI_Wtime() - t0;
  double *dx = x, *dg = g;
  if (device) {
    CHECK_OK(halo_dev_malloc((void **)&dx, (size_t)n * sizeof *dx));
    CHECK_OK(halo_dev_malloc((void **)&dg, (size_t)n * sizeof *dg));
    CHECK_OK(halo_host_to_dev(dx, x, (size_t)n * sizeof *x));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  CHECK_OK(halo_exchange_begin(plan, dx, dg));
  CHECK_OK(halo_exchange_end(plan));
  CHECK_OK(halo_plan_synchronize(plan));
  const double t_fwd = MPI_Wtime() - t0;
  if (device) CHECK_OK(halo_dev_to_host(g, dg, (size_t)n * sizeof *g));
  int64_t bad = 0;
  for (int64_t j = 0; j < n; j++) bad += g[j] != test_x(nb + j);
  CHECK_MSG(bad == 0, "%lld of %lld ghosts differ from x at their ids", (long long)bad, (long long)n);
  double t_rev = 0;
  if (reverse) { /* x += the ghosts' values, which are x: x doubles */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK_OK(halo_exchange_reverse_begin(plan, dg, dx));
    CHECK_OK(halo_exchange_reverse_end(plan));
    CHECK_OK(halo_plan_synchronize(plan));
    t_rev = MPI_Wtime() - t0;
    if (device) CHECK_OK(halo_dev_to_host(x, dx, (size_t)n * sizeof *x));
    for (int64_t j = 0; j < n; j++) bad += x[j] != 2 * test_x(b + j);
    CHECK_MSG(bad == 0, "reverse: %lld of %lld owners' values are not doubled", (long long)bad,
              (long long)n);
  }
  if (rank == 0) {
    char what[256];
    CHECK_OK(halo_plan_describe(plan, what, sizeof what));
    printf("test_large_message: %d ranks, %s memory (%s): one message of %lld values (%.3f GB, "
           "%s 2^31 bytes) per rank and direction; plan %.2f s, forward %.3f s%s%.3f%s; every "
           "value right\n",
           P, device ? "device" : "host", what, (long long)n, 8.0 * (double)n / 1e9,
           8.0 * (double)n > 2147483648.0 ? "more than" : "less than", t_plan, t_fwd,
           reverse ? ", reverse " : "", t_rev, reverse ? " s" : "");
  }
  halo_plan_destroy(&plan);
  if (device) {
    halo_dev_free(dx);
    halo_dev_free(dg);
  }
  free(x);
  free(g);
  MPI_Finalize();
  return 0;
}
