/* Unit tests of the graph partition: its name, the renumbering P A P^T, the
 * edge cut and ghosts of a partition (against counts by brute force), and
 * METIS's partition on graphs with components, isolated rows, no edges,
 * helpers, one part, more parts than rows; built without METIS, its error.
 * One process, no communication. */
#include "halo/io.h"
#include "halo_impl.h"
#include "test_util.h"

/* A matrix over caller-owned arrays (never given to halo_csr_free). */
static halo_csr csr_view(int64_t n_rows, int64_t n_cols, int64_t *ptr, int64_t *col, double *val) {
  halo_csr A = {n_rows, n_cols, 0, n_rows, ptr, col, val};
  return A;
}

/* The stored entry (i, j) of A, or NULL. */
static const double *entry(const halo_csr *A, int64_t i, int64_t j) {
  for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
    if (A->col_ids[k] == j) return &A->values[k];
  return NULL;
}

static void test_names(void) {
  halo_partition_kind k;
  CHECK_OK(halo_partition_from_name("metis", &k));
  CHECK(k == HALO_PARTITION_METIS);
  CHECK(strcmp(halo_partition_name(HALO_PARTITION_METIS), "metis") == 0);
  CHECK(strcmp(halo_partition_name(HALO_PARTITION_NNZ), "nnz") == 0);
  CHECK_ERR(halo_partition_from_name("scotch", &k), HALO_ERR_INVALID_ARG,
            "unknown partition 'scotch' (known: rows, nnz, metis)");
  int64_t rb[3], ptr[3] = {0, 0, 0};
  CHECK_ERR(halo_partition_compute(HALO_PARTITION_METIS, 2, ptr, 2, NULL, rb), HALO_ERR_INVALID_ARG,
            "renumbers the rows");
}

static void test_permute(void) {
  halo_gen g;
  halo_csr A, B;
  CHECK_OK(halo_gen_parse("irregular:60,3", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 60, &A));
  int64_t ids[60];
  for (int64_t i = 0; i < 60; i++) ids[i] = (7 * i + 5) % 60;
  CHECK_OK(halo_csr_permute(&A, ids, &B));
  CHECK(B.n_rows == 60 && B.n_cols == 60 && B.row_begin == 0 && B.row_end == 60);
  CHECK(halo_csr_nnz(&B) == halo_csr_nnz(&A));
  for (int64_t r = 0; r < 60; r++)
    for (int64_t k = B.row_ptr[r] + 1; k < B.row_ptr[r + 1]; k++)
      CHECK(B.col_ids[k] > B.col_ids[k - 1]);
  for (int64_t i = 0; i < 60; i++)
    for (int64_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; k++) {
      const double *b = entry(&B, ids[i], ids[A.col_ids[k]]);
      CHECK(b && *b == A.values[k]);
    }
  halo_csr_free(&B);
  /* not a permutation; not square */
  ids[3] = ids[4];
  CHECK_ERR(halo_csr_permute(&A, ids, &B), HALO_ERR_INVALID_ARG, "not a permutation");
  A.n_cols = 61;
  CHECK_ERR(halo_csr_permute(&A, ids, &B), HALO_ERR_UNSUPPORTED, "needs a square matrix");
  A.n_cols = 60;
  halo_csr_free(&A);
}

/* Edge cut and ghosts by brute force: rank of each original row in owner. */
static void brute_force(const halo_csr *A, const int *owner, int P, halo_partition_quality *q) {
  const int64_t n = A->n_rows;
  q->edge_cut = q->ghosts = q->max_rows = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++)
      if ((entry(A, i, j) || entry(A, j, i)) && owner[i] != owner[j]) q->edge_cut++;
  for (int r = 0; r < P; r++) {
    int64_t rows = 0;
    for (int64_t i = 0; i < n; i++) rows += owner[i] == r;
    if (rows > q->max_rows) q->max_rows = rows;
    for (int64_t j = 0; j < n; j++) {
      if (owner[j] == r) continue;
      int needed = 0;
      for (int64_t i = 0; i < n && !needed; i++) needed = owner[i] == r && entry(A, i, j);
      q->ghosts += needed;
    }
  }
}

static void test_measure(void) {
  /* edges {0,1}, {1,2}, {2,3} (the last from a_32 alone) */
  int64_t ptr[] = {0, 2, 5, 6, 8}, col[] = {0, 1, 0, 1, 2, 2, 2, 3};
  double val[] = {1, 1, 1, 1, 1, 1, 1, 1};
  halo_csr A = csr_view(4, 4, ptr, col, val);
  halo_partition_quality q;
  const int64_t rb[] = {0, 2, 4};
  CHECK_OK(halo_partition_measure(&A, NULL, 2, rb, &q));
  CHECK(q.edge_cut == 1 && q.ghosts == 1 && q.max_rows == 2);
  /* rows 0 and 2 on rank 0, rows 1 and 3 on rank 1 */
  const int64_t ids[] = {0, 2, 1, 3};
  CHECK_OK(halo_partition_measure(&A, ids, 2, rb, &q));
  CHECK(q.edge_cut == 3 && q.ghosts == 3 && q.max_rows == 2);
  const int64_t bad[] = {0, 0, 1, 3};
  CHECK_ERR(halo_partition_measure(&A, bad, 2, rb, &q), HALO_ERR_INVALID_ARG, "not a permutation");
  /* a random matrix and a random partition with an empty rank */
  halo_gen g;
  halo_csr R;
  CHECK_OK(halo_gen_parse("irregular:90,5", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 90, &R));
  int64_t perm[90], rb4[] = {0, 20, 20, 55, 90};
  int owner[90];
  for (int64_t i = 0; i < 90; i++) perm[i] = (11 * i + 2) % 90;
  for (int64_t i = 0; i < 90; i++) owner[i] = halo_find_range(rb4, 4, perm[i]);
  halo_partition_quality want;
  brute_force(&R, owner, 4, &want);
  CHECK_OK(halo_partition_measure(&R, perm, 4, rb4, &q));
  CHECK_MSG(q.edge_cut == want.edge_cut && q.ghosts == want.ghosts && q.max_rows == want.max_rows,
            "measured cut %lld ghosts %lld, brute force %lld %lld", (long long)q.edge_cut,
            (long long)q.ghosts, (long long)want.edge_cut, (long long)want.ghosts);
  halo_csr_free(&R);
}

#if HALO_HAVE_METIS
/* A valid graph partition: row_begin tiles 0..n, helpers have no rows,
 * new_ids a permutation keeping the original order within a rank. */
static void check_valid(const halo_csr *A, int P, const int *holds, const int64_t *ids,
                        const int64_t *rb) {
  const int64_t n = A->n_rows;
  CHECK(rb[0] == 0 && rb[P] == n);
  for (int r = 0; r < P; r++) {
    CHECK(rb[r] <= rb[r + 1]);
    if (holds && !holds[r]) CHECK(rb[r] == rb[r + 1]);
  }
  int64_t *seen = calloc((size_t)n + 1, sizeof *seen);
  int64_t *prev = malloc(((size_t)P + 1) * sizeof *prev);
  for (int r = 0; r < P; r++) prev[r] = -1;
  for (int64_t i = 0; i < n; i++) {
    CHECK(ids[i] >= 0 && ids[i] < n && !seen[ids[i]]);
    seen[ids[i]] = 1;
    const int r = halo_find_range(rb, P, ids[i]);
    CHECK(r >= 0 && ids[i] > prev[r]); /* in order within a rank */
    prev[r] = ids[i];
  }
  free(prev);
  free(seen);
}

/* n vertices, vertex v in component v % c, each component complete: the
 * matrix's entries (diagonal included) into arrays the caller frees. */
static halo_csr components(int64_t n, int64_t c) {
  int64_t *ptr = malloc(((size_t)n + 1) * sizeof *ptr),
          *col = malloc((size_t)(n * n) * sizeof *col);
  double *val = malloc((size_t)(n * n) * sizeof *val);
  int64_t m = 0;
  ptr[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = i % c; j < n; j += c) col[m] = j, val[m++] = i == j ? 4.0 : -1.0;
    ptr[i + 1] = m;
  }
  return csr_view(n, n, ptr, col, val);
}

static void free_view(halo_csr *A) { free(A->row_ptr), free(A->col_ids), free(A->values); }

static void test_metis(void) {
  int64_t ids[400], rb[17];
  halo_partition_quality q;
  /* four interleaved components: no edge cut at 2 and 4 parts */
  halo_csr C = components(40, 4);
  for (int P = 1; P <= 8; P++) {
    CHECK_OK(halo_partition_metis(&C, P, NULL, ids, rb));
    check_valid(&C, P, NULL, ids, rb);
    CHECK_OK(halo_partition_measure(&C, ids, P, rb, &q));
    if (P == 1 || P == 2 || P == 4)
      CHECK_MSG(q.edge_cut == 0, "%d parts: cut %lld", P, (long long)q.edge_cut);
  }
  /* one part: the identity */
  CHECK_OK(halo_partition_metis(&C, 1, NULL, ids, rb));
  for (int64_t i = 0; i < 40; i++) CHECK(ids[i] == i);
  /* helpers: ranks 1 and 3 get no rows, the two parts go to ranks 0 and 2 */
  const int holds[] = {1, 0, 1, 0};
  CHECK_OK(halo_partition_metis(&C, 4, holds, ids, rb));
  check_valid(&C, 4, holds, ids, rb);
  CHECK(rb[1] - rb[0] == 20 && rb[3] - rb[2] == 20);
  CHECK_OK(halo_partition_measure(&C, ids, 4, rb, &q));
  CHECK(q.edge_cut == 0 && q.ghosts == 0);
  const int none[] = {0, 0};
  CHECK_ERR(halo_partition_metis(&C, 2, none, ids, rb), HALO_ERR_INVALID_ARG, "no rank of 2");
  free_view(&C);
  /* no edges (a diagonal matrix): balanced rows */
  int64_t dptr[11], dcol[10];
  double dval[10];
  for (int64_t i = 0; i <= 10; i++) dptr[i] = i;
  for (int64_t i = 0; i < 10; i++) dcol[i] = i, dval[i] = 1.0;
  halo_csr D = csr_view(10, 10, dptr, dcol, dval);
  CHECK_OK(halo_partition_metis(&D, 3, NULL, ids, rb));
  check_valid(&D, 3, NULL, ids, rb);
  CHECK_OK(halo_partition_measure(&D, ids, 3, rb, &q));
  CHECK(q.edge_cut == 0 && q.ghosts == 0 && q.max_rows == 4);
  /* more parts than rows: at most a row per part, the rest empty */
  D.n_rows = D.n_cols = D.row_end = 3;
  CHECK_OK(halo_partition_metis(&D, 8, NULL, ids, rb));
  check_valid(&D, 8, NULL, ids, rb);
  for (int r = 0; r < 8; r++) CHECK(rb[r + 1] - rb[r] <= 1);
  CHECK_ERR(halo_partition_metis(&D, 8, NULL, NULL, rb), HALO_ERR_INVALID_ARG, "new_ids");
  halo_csr E;
  CHECK_ERR(halo_csr_permute(&D, NULL, &E), HALO_ERR_INVALID_ARG, "permute: NULL argument");
  /* an empty matrix, also without new_ids (HALO_ALLOC gives NULL for none) */
  D.n_rows = D.n_cols = D.row_end = 0;
  CHECK_OK(halo_partition_metis(&D, 4, NULL, ids, rb));
  for (int r = 0; r <= 4; r++) CHECK(rb[r] == 0);
  CHECK_OK(halo_partition_metis(&D, 4, NULL, NULL, rb));
  for (int r = 0; r <= 4; r++) CHECK(rb[r] == 0);
  CHECK_OK(halo_csr_permute(&D, NULL, &E));
  CHECK(E.n_rows == 0 && E.n_cols == 0 && E.row_end == 0 && halo_csr_nnz(&E) == 0);
  halo_csr_free(&E);
  /* isolated and empty rows beside a connected part: rows 0..19 a path,
   * rows 20..29 only their diagonal, rows 30..39 empty */
  int64_t iptr[41], icol[80];
  double ival[80];
  int64_t m = 0;
  iptr[0] = 0;
  for (int64_t i = 0; i < 40; i++) {
    if (i < 20 && i > 0) icol[m] = i - 1, ival[m++] = -1.0;
    if (i < 30) icol[m] = i, ival[m++] = 2.0;
    if (i < 19) icol[m] = i + 1, ival[m++] = -1.0;
    iptr[i + 1] = m;
  }
  halo_csr I = csr_view(40, 40, iptr, icol, ival);
  for (int P = 2; P <= 8; P++) {
    CHECK_OK(halo_partition_metis(&I, P, NULL, ids, rb));
    check_valid(&I, P, NULL, ids, rb);
  }
  /* a random irregular matrix, and P A P^T keeps the product */
  halo_gen g;
  halo_csr R, B;
  CHECK_OK(halo_gen_parse("irregular:400,9", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 400, &R));
  CHECK_OK(halo_partition_metis(&R, 5, NULL, ids, rb));
  check_valid(&R, 5, NULL, ids, rb);
  CHECK_OK(halo_csr_permute(&R, ids, &B));
  for (int64_t i = 0; i < 400; i++) {
    double y = 0.0, yb = 0.0;
    for (int64_t k = R.row_ptr[i]; k < R.row_ptr[i + 1]; k++)
      y += R.values[k] * test_x(R.col_ids[k]);
    const int64_t r = ids[i];
    for (int64_t k = B.row_ptr[r]; k < B.row_ptr[r + 1]; k++) {
      int64_t j = 0; /* the original column of new column B.col_ids[k] */
      while (ids[j] != B.col_ids[k]) j++;
      yb += B.values[k] * test_x(j);
    }
    CHECK(fabs(y - yb) <= 1e-12 * (1.0 + fabs(y)));
  }
  halo_csr_free(&B);
  /* rectangular */
  R.n_cols = 401;
  CHECK_ERR(halo_partition_metis(&R, 2, NULL, ids, rb), HALO_ERR_UNSUPPORTED,
            "the matrix is 400 x 401; a graph partition renumbers rows and columns alike and "
            "needs a square matrix");
  R.n_cols = 400;
  halo_csr_free(&R);
}
#else
static void test_metis(void) {
  int64_t ptr[] = {0, 1, 2}, col[] = {0, 1}, ids[2], rb[3];
  double val[] = {1, 1};
  halo_csr A = csr_view(2, 2, ptr, col, val);
  CHECK_ERR(halo_partition_metis(&A, 2, NULL, ids, rb), HALO_ERR_NOT_COMPILED,
            "partition metis: not compiled in: rebuild with HALO_ENABLE_METIS=ON (Debian: "
            "libmetis-dev)");
}
#endif

int main(void) {
  test_names();
  test_permute();
  test_measure();
  test_metis();
  return 0;
}
