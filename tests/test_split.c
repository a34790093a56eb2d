/* halo_matrix_create_split (PETSc MPIAIJ / hypre ParCSR input) against
 * halo_matrix_create_csr on the same matrices: the same ghosts, the same
 * plan statistics, bitwise the same ghost values and products. Then the
 * split input's own errors, reported on every rank. */
#include "verify.h"

typedef struct {
  int64_t *dptr, *dcol, *optr, *ocol, *garray, n_ghost;
  double *dval, *oval;
} split_t;

/* Split rows the way PETSc and hypre store them, independently of halo. */
static void make_split(const halo_csr *rows, int64_t cb, int64_t ce, split_t *s) {
  const int64_t n = rows->row_end - rows->row_begin, nnz = rows->row_ptr[n];
  memset(s, 0, sizeof *s);
  s->dptr = malloc((size_t)(n + 1) * sizeof(int64_t));
  s->optr = malloc((size_t)(n + 1) * sizeof(int64_t));
  s->dcol = malloc((size_t)(nnz + 1) * sizeof(int64_t));
  s->ocol = malloc((size_t)(nnz + 1) * sizeof(int64_t));
  s->dval = malloc((size_t)(nnz + 1) * sizeof(double));
  s->oval = malloc((size_t)(nnz + 1) * sizeof(double));
  s->garray = malloc((size_t)(nnz + 1) * sizeof(int64_t));
  /* garray: sorted unique off-range columns (selection by a mark array) */
  int64_t M = rows->n_cols;
  char *mark = calloc((size_t)M + 1, 1);
  for (int64_t k = 0; k < nnz; k++)
    if (rows->col_ids[k] < cb || rows->col_ids[k] >= ce) mark[rows->col_ids[k]] = 1;
  for (int64_t c = 0; c < M; c++)
    if (mark[c]) s->garray[s->n_ghost++] = c;
  free(mark);
  s->dptr[0] = s->optr[0] = 0;
  int64_t d = 0, o = 0;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t k = rows->row_ptr[i]; k < rows->row_ptr[i + 1]; k++) {
      int64_t c = rows->col_ids[k];
      if (c >= cb && c < ce) {
        s->dcol[d] = c - cb, s->dval[d++] = rows->values[k];
      } else {
        int64_t lo = 0, hi = s->n_ghost - 1;
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          if (s->garray[mid] < c)
            lo = mid + 1;
          else
            hi = mid;
        }
        s->ocol[o] = lo, s->oval[o++] = rows->values[k];
      }
    }
    s->dptr[i + 1] = d, s->optr[i + 1] = o;
  }
}

static void free_split(split_t *s) {
  free(s->dptr), free(s->dcol), free(s->optr), free(s->ocol), free(s->garray), free(s->dval),
      free(s->oval);
}

static void compare(MPI_Comm comm, const halo_csr *rows, const int64_t *row_begin,
                    const char *label) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1], n = re - rb;
  split_t s;
  make_split(rows, rb, re, &s);
  halo_matrix A1, A2;
  halo_plan p1, p2;
  CHECK_OK(halo_matrix_create_csr(comm, rb, re, rb, re, rows->row_ptr, rows->col_ids, rows->values,
                                  HALO_MEMORY_HOST, &A1));
  CHECK_OK(halo_matrix_create_split(comm, rb, re, rb, re, s.dptr, s.dcol, s.dval, s.optr, s.ocol,
                                    s.oval, s.n_ghost, s.garray, HALO_MEMORY_HOST, &A2));
  int64_t ng1, ng2;
  const int64_t *g1, *g2;
  CHECK_OK(halo_matrix_get_local_sizes(A1, NULL, NULL, &ng1));
  CHECK_OK(halo_matrix_get_local_sizes(A2, NULL, NULL, &ng2));
  CHECK_OK(halo_matrix_get_ghost_ids(A1, &g1));
  CHECK_OK(halo_matrix_get_ghost_ids(A2, &g2));
  CHECK_MSG(ng1 == ng2 && ng1 == s.n_ghost, "%s: %lld and %lld ghosts", label, (long long)ng1,
            (long long)ng2);
  for (int64_t k = 0; k < ng1; k++) CHECK(g1[k] == g2[k] && g1[k] == s.garray[k]);
  CHECK_OK(halo_plan_create(A1, NULL, &p1));
  CHECK_OK(halo_plan_create(A2, NULL, &p2));
  halo_stats s1, s2;
  CHECK_OK(halo_plan_stats(p1, &s1));
  CHECK_OK(halo_plan_stats(p2, &s2));
  s1.setup_seconds = s2.setup_seconds = 0.0; /* times: the rest must be equal */
  CHECK_MSG(memcmp(&s1, &s2, sizeof s1) == 0, "%s: the plans differ", label);
  for (int k = 0; k < s1.n_phases; k++) {
    const halo_phase_stats f1 = verify_phase(p1, k), f2 = verify_phase(p2, k);
    CHECK_MSG(memcmp(&f1, &f2, sizeof f1) == 0, "%s: the plans' phase %d differs", label, k);
  }
  double *x = malloc((size_t)(n + 1) * sizeof *x), *y1 = malloc((size_t)(n + 1) * sizeof *y1);
  double *y2 = malloc((size_t)(n + 1) * sizeof *y2);
  double *h1 = malloc((size_t)(ng1 + 1) * sizeof *h1), *h2 = malloc((size_t)(ng1 + 1) * sizeof *h2);
  for (int64_t i = 0; i < n; i++) x[i] = test_x(rb + i), y1[i] = y2[i] = 0.5;
  CHECK_OK(halo_exchange_begin(p1, x, h1));
  CHECK_OK(halo_exchange_end(p1));
  CHECK_OK(halo_exchange_begin(p2, x, h2));
  CHECK_OK(halo_exchange_end(p2));
  CHECK(ng1 == 0 || memcmp(h1, h2, (size_t)ng1 * sizeof *h1) == 0);
  CHECK_OK(halo_spmv(p1, 2.0, x, 1.0, y1));
  CHECK_OK(halo_spmv(p2, 2.0, x, 1.0, y2));
  CHECK_MSG(n == 0 || memcmp(y1, y2, (size_t)n * sizeof *y1) == 0, "%s: products differ", label);
  free(x), free(y1), free(y2), free(h1), free(h2);
  halo_plan_destroy(&p1);
  halo_plan_destroy(&p2);
  halo_matrix_destroy(&A1);
  halo_matrix_destroy(&A2);
  free_split(&s);
}

/* Break the split input on one rank; every rank must get the error. */
static void errors(MPI_Comm comm) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (P < 2) return;
  halo_gen g;
  halo_csr rows;
  int64_t *row_begin;
  CHECK_OK(halo_gen_parse("lap2d:8", &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &row_begin, &rows));
  const int64_t rb = row_begin[rank], re = row_begin[rank + 1];
  split_t s;
  make_split(&rows, rb, re, &s);
  halo_matrix A = NULL;
  const int bad = 1; /* the rank with the bad input */
  char want[128];

#define TRY_SPLIT(mutate, undo, status, text)                                                      \
  do {                                                                                             \
    if (rank == bad) {                                                                             \
      mutate;                                                                                      \
    }                                                                                              \
    snprintf(want, sizeof want, "rank %d: ", bad);                                                 \
    CHECK_ERR(halo_matrix_create_split(comm, rb, re, rb, re, s.dptr, s.dcol, s.dval, s.optr,       \
                                       s.ocol, s.oval, s.n_ghost, s.garray, HALO_MEMORY_HOST, &A), \
              status, text);                                                                       \
    CHECK(strncmp(halo_last_error(), want, strlen(want)) == 0);                                    \
    CHECK(A == NULL);                                                                              \
    if (rank == bad) {                                                                             \
      undo;                                                                                        \
    }                                                                                              \
  } while (0)

  int64_t t = 0;
  CHECK(s.n_ghost >= 2);
  TRY_SPLIT((t = s.garray[0], s.garray[0] = s.garray[1], s.garray[1] = t),
            (s.garray[1] = s.garray[0], s.garray[0] = t), HALO_ERR_INVALID_ARG,
            "ghost_ids must be strictly increasing");
  TRY_SPLIT((t = s.garray[0], s.garray[0] = rb), s.garray[0] = t, HALO_ERR_INVALID_ARG,
            "is owned by this rank");
  TRY_SPLIT((t = s.garray[s.n_ghost - 1], s.garray[s.n_ghost - 1] = 64),
            s.garray[s.n_ghost - 1] = t, HALO_ERR_INVALID_ARG, "out of range [0, 64)");
  TRY_SPLIT((t = s.ocol[0], s.ocol[0] = s.n_ghost), s.ocol[0] = t, HALO_ERR_INVALID_ARG,
            "off-diagonal block column");
  TRY_SPLIT((t = s.dcol[0], s.dcol[0] = re - rb), s.dcol[0] = t, HALO_ERR_INVALID_ARG,
            "diagonal block column");
  TRY_SPLIT((t = s.n_ghost, s.n_ghost = -1), s.n_ghost = t, HALO_ERR_INVALID_ARG, "n_ghost = -1");
  TRY_SPLIT((t = s.optr[1], s.optr[1] = -5), s.optr[1] = t, HALO_ERR_INVALID_ARG,
            "off-diagonal block row_ptr decreases");
#undef TRY_SPLIT
  /* and the input is fine again */
  CHECK_OK(halo_matrix_create_split(comm, rb, re, rb, re, s.dptr, s.dcol, s.dval, s.optr, s.ocol,
                                    s.oval, s.n_ghost, s.garray, HALO_MEMORY_HOST, &A));
  halo_matrix_destroy(&A);
  free_split(&s);
  halo_csr_free(&rows);
  halo_io_free(row_begin);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const char *gens[] = {"lap2d:9", "lap3d27:5", "irregular:700,3"};
  for (int i = 0; i < 3; i++) {
    halo_gen g;
    halo_csr rows;
    int64_t *row_begin;
    CHECK_OK(halo_gen_parse(gens[i], &g));
    CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_NNZ, NULL, &row_begin, &rows));
    compare(comm, &rows, row_begin, gens[i]);
    halo_csr_free(&rows);
    halo_io_free(row_begin);
  }
  for (int a = 1; a < argc; a++) {
    halo_csr rows;
    int64_t *row_begin;
    CHECK_OK(halo_mm_read_distributed(comm, 0, argv[a], NULL, HALO_PARTITION_ROWS, NULL, &row_begin,
                                      &rows, NULL));
    if (rows.n_rows == rows.n_cols) compare(comm, &rows, row_begin, argv[a]);
    halo_csr_free(&rows);
    halo_io_free(row_begin);
  }
  errors(comm);
  MPI_Finalize();
  return 0;
}
