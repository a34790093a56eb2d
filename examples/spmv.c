/* y = A*x for the 1-D Laplacian tridiag(-1, 2, -1), rows spread over the ranks. */
#include <halo.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = 1000, b = rank * n / size, e = (rank + 1) * n / size; /* my rows [b, e) */
  int64_t *row_ptr = malloc((size_t)(e - b + 1) * sizeof *row_ptr),
          *cols = malloc(3 * (size_t)(e - b + 1) * sizeof *cols);
  double *vals = malloc(3 * (size_t)(e - b + 1) * sizeof *vals),
         *x = malloc((size_t)(e - b + 1) * sizeof *x), *y = malloc((size_t)(e - b + 1) * sizeof *y);
  int64_t k = 0;
  for (int64_t i = b; i < e; i++) {
    row_ptr[i - b] = k;
    if (i > 0) cols[k] = i - 1, vals[k++] = -1.0;
    cols[k] = i, vals[k++] = 2.0;
    if (i + 1 < n) cols[k] = i + 1, vals[k++] = -1.0;
    x[i - b] = (double)i;
  }
  row_ptr[e - b] = k;

  halo_matrix A;
  halo_plan plan;
  halo_status st =
      halo_matrix_create_csr(MPI_COMM_WORLD, b, e, b, e, row_ptr, cols, vals, HALO_MEMORY_HOST, &A);
  if (st == HALO_SUCCESS) st = halo_plan_create(A, NULL, &plan);
  if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, x, 0.0, y); /* y = A*x */
  if (st != HALO_SUCCESS) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, halo_status_string(st), halo_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* A*x of x_i = i is 0 inside and -1, n at the two ends */
  int ok = 1;
  for (int64_t i = b; i < e; i++) ok &= y[i - b] == (i == 0 ? -1.0 : i == n - 1 ? (double)n : 0.0);
  if (!ok) fprintf(stderr, "rank %d: wrong product\n", rank);
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  free(row_ptr), free(cols), free(vals), free(x), free(y);
  MPI_Finalize();
  return ok ? 0 : 1;
}
