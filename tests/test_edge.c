/* Edge cases of the layout: ranks that own no rows (and no entries of x),
 * a rank with no neighbours, more ranks than rows, an empty matrix, and
 * ranks that own rows but no entries of x; with the standard exchange and
 * with every node-aware strategy on virtual nodes of 1, 2 and 3 ranks. */
#include "halo_impl.h"
#include "verify.h"

/* Rows [b, e) of a matrix given by a function of (row) -> columns. */
typedef int (*row_fn)(int64_t N, int64_t i, int64_t *cols, double *vals);

static void make_rows(row_fn f, int64_t N, int64_t M, int64_t b, int64_t e, halo_csr *A) {
  memset(A, 0, sizeof *A);
  A->n_rows = N, A->n_cols = M, A->row_begin = b, A->row_end = e;
  A->row_ptr = halo_malloc((size_t)(e - b + 1) * sizeof(int64_t));
  A->col_ids = halo_malloc((size_t)(e - b + 1) * 8 * sizeof(int64_t));
  A->values = halo_malloc((size_t)(e - b + 1) * 8 * sizeof(double));
  A->row_ptr[0] = 0;
  for (int64_t i = b; i < e; i++) {
    int64_t k = A->row_ptr[i - b];
    A->row_ptr[i - b + 1] = k + f(N, i, A->col_ids + k, A->values + k);
  }
}

/* tridiagonal */
static int tri(int64_t N, int64_t i, int64_t *c, double *v) {
  int m = 0;
  if (i > 0) c[m] = i - 1, v[m++] = -1.0;
  c[m] = i, v[m++] = 2.5;
  if (i + 1 < N) c[m] = i + 1, v[m++] = -1.25;
  return m;
}

/* rows 0..9 only on the diagonal (the rank owning them has no neighbour and
 * nobody needs its entries); the rest couple to their neighbours and to a
 * far column of the upper half */
static int lonely(int64_t N, int64_t i, int64_t *c, double *v) {
  if (i < 10) {
    c[0] = i, v[0] = 1.0 + (double)i;
    return 1;
  }
  int m = 0;
  if (i > 10) c[m] = i - 1, v[m++] = -1.0;
  c[m] = i, v[m++] = 4.0;
  if (i + 1 < N) c[m] = i + 1, v[m++] = -1.0;
  int64_t far = 10 + (i * 37) % (N - 10);
  if (far > i + 1 || far < i - 1) c[m] = far, v[m++] = 0.5;
  /* sort the few columns */
  for (int a = 1; a < m; a++)
    for (int b2 = a; b2 > 0 && c[b2 - 1] > c[b2]; b2--) {
      int64_t t = c[b2];
      c[b2] = c[b2 - 1];
      c[b2 - 1] = t;
      double u = v[b2];
      v[b2] = v[b2 - 1];
      v[b2 - 1] = u;
    }
  return m;
}

/* rectangular N x M, M = 3N: an interpolation-like pattern */
static int interp(int64_t N, int64_t i, int64_t *c, double *v) {
  int64_t M = 3 * N, a = (3 * i + 5 * N / 2) % M, b = (7 * i + 1) % M;
  if (a == b) b = (b + 1) % M;
  c[0] = a < b ? a : b, c[1] = a < b ? b : a;
  v[0] = 0.75, v[1] = -0.5;
  return 2;
}

static void run_case(MPI_Comm comm, row_fn f, int64_t N, int64_t M, const int64_t *row_begin,
                     const int64_t *col_begin, const char *label) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  halo_csr rows;
  make_rows(f, N, M, row_begin[rank], row_begin[rank + 1], &rows);
  verify_matrix(comm, &rows, row_begin, col_begin, label);
  for (int K = 1; K <= 3; K++) verify_strategies(comm, &rows, row_begin, col_begin, K, label);
  halo_csr_free(&rows);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int P;
  MPI_Comm_size(comm, &P);
  int64_t *rb = malloc((size_t)(P + 1) * sizeof *rb), *cb = malloc((size_t)(P + 1) * sizeof *cb);

  /* only odd ranks own rows (rank 0 owns none); x follows the rows */
  {
    const int64_t N = 40;
    int odd = P / 2;
    rb[0] = 0;
    for (int r = 0, k = 0; r < P; r++) {
      if (r % 2 == 1) k++;
      rb[r + 1] = odd ? N * k / odd : (r == P - 1 ? N : 0);
    }
    run_case(comm, tri, N, N, rb, rb, "odd ranks own the rows");
  }
  /* more ranks than rows */
  {
    const int64_t N = 3;
    halo_partition_rows(N, P, rb);
    run_case(comm, tri, N, N, rb, rb, "3 rows");
  }
  /* empty matrix */
  {
    for (int r = 0; r <= P; r++) rb[r] = 0;
    run_case(comm, tri, 0, 0, rb, rb, "empty matrix");
  }
  /* rank 0 owns rows 0..9 of the lonely matrix and needs nothing; nobody needs it */
  {
    const int64_t N = 10 + 30 * P;
    rb[0] = 0;
    for (int r = 1; r <= P; r++) rb[r] = 10 + (N - 10) * (r - 1) / (P > 1 ? P - 1 : 1);
    rb[P] = N;
    if (P == 1) rb[1] = N;
    run_case(comm, lonely, N, N, rb, rb, "a rank without neighbours");
  }
  /* rows on every rank, x only on the last ranks: rank 0 needs everything */
  {
    const int64_t N = 25 * P, M = 3 * N;
    halo_partition_rows(N, P, rb);
    for (int r = 0; r <= P; r++) cb[r] = r < P / 2 ? 0 : M * (r - P / 2) / (P - P / 2);
    cb[P] = M;
    run_case(comm, interp, N, M, rb, cb, "x on half of the ranks");
  }
  /* x on every rank, rows only on the first */
  {
    const int64_t N = 20, M = 3 * N;
    for (int r = 0; r <= P; r++) rb[r] = r == 0 ? 0 : N;
    halo_partition_rows(M, P, cb);
    run_case(comm, interp, N, M, rb, cb, "rows on rank 0 alone");
  }
  free(rb), free(cb);
  MPI_Finalize();
  return 0;
}
