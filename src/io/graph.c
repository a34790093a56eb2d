/* Graph partitions: the graph of a square matrix (A + A^T without the
 * diagonal) cut by METIS, the renumbering that makes every rank's rows
 * contiguous, and what a partition costs (edge cut, ghosts). */
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"

#if HALO_HAVE_METIS
#include <metis.h>
#endif

/* A whole square matrix, as the graph functions need it. */
static halo_status check_square(const halo_csr *A, const char *what) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s: matrix is NULL", what);
  if (A->row_begin != 0 || A->row_end != A->n_rows)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "%s: needs the whole matrix (rows 0..%lld), got rows %lld..%lld", what,
                      (long long)A->n_rows, (long long)A->row_begin, (long long)A->row_end);
  if (A->n_rows != A->n_cols)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "%s: the matrix is %lld x %lld; a graph partition renumbers rows and "
                      "columns alike and needs a square matrix (use the partition rows or nnz)",
                      what, (long long)A->n_rows, (long long)A->n_cols);
  return HALO_SUCCESS;
}

/* Whether a_ij is stored (columns sorted within a row). */
static int has_entry(const halo_csr *A, int64_t i, int64_t j) {
  int64_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (A->col_ids[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < A->row_ptr[i + 1] && A->col_ids[lo] == j;
}

#if HALO_HAVE_METIS
/* The graph of A + A^T without the diagonal, in CSR (xadj: n+1 offsets, adj:
 * the neighbours of each vertex, sorted, each once). */
static halo_status build_graph(const halo_csr *A, int64_t **xadj_p, int64_t **adj_p) {
  halo_status st = HALO_SUCCESS;
  const int64_t n = A->n_rows, nnz = A->row_ptr[n];
  int64_t *tptr = NULL, *tcol = NULL, *next = NULL, *xadj = NULL, *adj = NULL;
  /* the pattern of A^T, rows sorted (filled in row order of A) */
  HALO_TRY(HALO_CALLOC(tptr, n + 1));
  HALO_TRY(HALO_ALLOC(tcol, nnz));
  HALO_TRY(HALO_ALLOC(next, n));
  for (int64_t k = 0; k < nnz; k++) tptr[A->col_ids[k] + 1]++;
  for (int64_t i = 0; i < n; i++) tptr[i + 1] += tptr[i];
  if (n) memcpy(next, tptr, (size_t)n * sizeof *next);
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) tcol[next[A->col_ids[k]]++] = i;
  /* row i of the graph: the merge of row i of A and of A^T, without i */
  HALO_TRY(HALO_ALLOC(xadj, n + 1));
  HALO_TRY(HALO_ALLOC(adj, 2 * nnz));
  xadj[0] = 0;
  for (int64_t i = 0, m = 0; i < n; i++) {
    int64_t a = A->row_ptr[i], ae = A->row_ptr[i + 1], t = tptr[i], te = tptr[i + 1];
    while (a < ae || t < te) {
      int64_t j;
      if (t >= te || (a < ae && A->col_ids[a] < tcol[t]))
        j = A->col_ids[a++];
      else if (a >= ae || tcol[t] < A->col_ids[a])
        j = tcol[t++];
      else
        j = A->col_ids[a++], t++;
      if (j != i) adj[m++] = j;
    }
    xadj[i + 1] = m;
  }
  *xadj_p = xadj;
  *adj_p = adj;
  xadj = adj = NULL;
cleanup:
  halo_free(adj);
  halo_free(xadj);
  halo_free(next);
  halo_free(tcol);
  halo_free(tptr);
  return st;
}

/* The translation of METIS's return codes. */
static halo_status metis_status(int rc, const char *call, const char *file, int line) {
  if (rc == METIS_OK) return HALO_SUCCESS;
  if (rc == METIS_ERROR_MEMORY)
    return halo_error_at(HALO_ERR_OUT_OF_MEMORY, file, line, "%s: METIS ran out of memory", call);
  return halo_error_at(HALO_ERR_INTERNAL, file, line, "%s failed: %s", call,
                       rc == METIS_ERROR_INPUT ? "METIS rejected its input" : "METIS error");
}
#define HALO_METIS(call) metis_status((call), #call, __FILE__, __LINE__)

/* part[i] in [0, nparts) of the graph (xadj, adj) of n vertices, by
 * METIS_PartGraphKway (edge cut, balanced vertex counts). */
static halo_status metis_kway(int64_t n, const int64_t *xadj, const int64_t *adj, int nparts,
                              int64_t *part) {
  halo_status st = HALO_SUCCESS;
  idx_t *x = NULL, *a = NULL, *p = NULL;
  idx_t options[METIS_NOPTIONS];
  const int64_t idx_max = sizeof(idx_t) == 4 ? INT32_MAX : INT64_MAX;
  if (n > idx_max || xadj[n] > idx_max)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                      "partition metis: a graph of %lld vertices and %lld adjacencies exceeds "
                      "METIS's %d-bit idx_t (rebuild METIS with IDXTYPEWIDTH 64)",
                      (long long)n, (long long)xadj[n], (int)(8 * sizeof(idx_t)));
  HALO_TRY(HALO_ALLOC(x, n + 1));
  HALO_TRY(HALO_ALLOC(a, xadj[n]));
  HALO_TRY(HALO_ALLOC(p, n));
  for (int64_t i = 0; i <= n; i++) x[i] = (idx_t)xadj[i];
  for (int64_t k = 0; k < xadj[n]; k++) a[k] = (idx_t)adj[k];
  idx_t nvtxs = (idx_t)n, ncon = 1, np = (idx_t)nparts, edge_cut = 0;
  HALO_TRY(HALO_METIS(METIS_SetDefaultOptions(options)));
  options[METIS_OPTION_NUMBERING] = 0;
  HALO_TRY(HALO_METIS(METIS_PartGraphKway(&nvtxs, &ncon, x, a, NULL, NULL, NULL, &np, NULL, NULL,
                                          options, &edge_cut, p)));
  for (int64_t i = 0; i < n; i++) {
    if (p[i] < 0 || p[i] >= np)
      HALO_FAIL(HALO_ERR_INTERNAL, "METIS put vertex %lld in part %lld of %d", (long long)i,
                (long long)p[i], nparts);
    part[i] = p[i];
  }
cleanup:
  halo_free(p);
  halo_free(a);
  halo_free(x);
  return st;
}
#endif

halo_status halo_partition_metis(const halo_csr *A, int P, const int *holds_rows, int64_t *new_ids,
                                 int64_t *row_begin) {
#if !HALO_HAVE_METIS
  (void)A, (void)P, (void)holds_rows, (void)new_ids, (void)row_begin;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_METIS_MESSAGE);
#else
  halo_status st = HALO_SUCCESS;
  int64_t *xadj = NULL, *adj = NULL, *part = NULL, *count = NULL;
  int *rank_of = NULL;
  HALO_CHECK(check_square(A, "partition metis"));
  if (P < 1 || (!new_ids && A->n_rows > 0) || !row_begin)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition metis: %d parts, new_ids %p, row_begin %p",
                      P, (void *)new_ids, (void *)row_begin);
  int n_hold = 0;
  for (int r = 0; r < P; r++) n_hold += !holds_rows || holds_rows[r];
  if (n_hold == 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "no rank of %d holds rows", P);
  const int64_t n = A->n_rows;
  HALO_TRY(HALO_ALLOC(part, n));
  HALO_TRY(build_graph(A, &xadj, &adj));
  if (n_hold > 1 && n > n_hold && xadj[n] > 0) {
    HALO_TRY(metis_kway(n, xadj, adj, n_hold, part));
  } else {
    /* one part, a row per part, or nothing to cut: contiguous rows (METIS 5.1
     * fails on one part) */
    for (int k = 0; k < n_hold; k++) {
      int64_t b = (n / n_hold) * k + ((n % n_hold) * k) / n_hold;
      int64_t e = (n / n_hold) * (k + 1) + ((n % n_hold) * (k + 1)) / n_hold;
      for (int64_t i = b; i < e; i++) part[i] = k;
    }
  }
  /* part k to the k-th rank that holds rows; the ranks' rows in order */
  HALO_TRY(HALO_ALLOC(rank_of, n_hold));
  HALO_TRY(HALO_CALLOC(count, P + 1));
  for (int r = 0, k = 0; r < P; r++)
    if (!holds_rows || holds_rows[r]) rank_of[k++] = r;
  for (int64_t i = 0; i < n; i++) count[rank_of[part[i]] + 1]++;
  for (int r = 0; r < P; r++) count[r + 1] += count[r];
  memcpy(row_begin, count, (size_t)(P + 1) * sizeof *row_begin);
  for (int64_t i = 0; i < n; i++) new_ids[i] = count[rank_of[part[i]]]++;
cleanup:
  halo_free(count);
  halo_free(rank_of);
  halo_free(adj);
  halo_free(xadj);
  halo_free(part);
  return st;
#endif
}

halo_status halo_csr_permute(const halo_csr *A, const int64_t *new_ids, halo_csr *B) {
  halo_status st = HALO_SUCCESS;
  int64_t *old_of = NULL, *tptr = NULL, *tcol = NULL, *next = NULL;
  double *tval = NULL;
  halo_csr out = {0};
  if (!B) return HALO_ERROR(HALO_ERR_INVALID_ARG, "permute: NULL argument");
  memset(B, 0, sizeof *B);
  HALO_CHECK(check_square(A, "permute"));
  if (!new_ids && A->n_rows > 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "permute: NULL argument");
  const int64_t n = A->n_rows, nnz = A->row_ptr[n];
  /* the inverse, which also checks that new_ids is a permutation */
  HALO_TRY(HALO_ALLOC(old_of, n));
  for (int64_t i = 0; i < n; i++) old_of[i] = -1;
  for (int64_t i = 0; i < n; i++) {
    if (new_ids[i] < 0 || new_ids[i] >= n || old_of[new_ids[i]] >= 0)
      HALO_FAIL(HALO_ERR_INVALID_ARG, "permute: new_ids is not a permutation of 0..%lld (row %lld)",
                (long long)(n - 1), (long long)i);
    old_of[new_ids[i]] = i;
  }
  /* T = B^T, filled in increasing new row order: its rows come out sorted */
  HALO_TRY(HALO_CALLOC(tptr, n + 1));
  HALO_TRY(HALO_ALLOC(tcol, nnz));
  HALO_TRY(HALO_ALLOC(tval, nnz));
  HALO_TRY(HALO_ALLOC(next, n));
  for (int64_t k = 0; k < nnz; k++) tptr[new_ids[A->col_ids[k]] + 1]++;
  for (int64_t i = 0; i < n; i++) tptr[i + 1] += tptr[i];
  if (n) memcpy(next, tptr, (size_t)n * sizeof *next);
  for (int64_t r = 0; r < n; r++) {
    const int64_t i = old_of[r];
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      const int64_t q = next[new_ids[A->col_ids[k]]]++;
      tcol[q] = r;
      tval[q] = A->values[k];
    }
  }
  /* B = T^T, filled in increasing column order: sorted rows */
  out.n_rows = out.n_cols = n;
  out.row_begin = 0;
  out.row_end = n;
  HALO_TRY(HALO_ALLOC(out.row_ptr, n + 1));
  HALO_TRY(HALO_ALLOC(out.col_ids, nnz));
  HALO_TRY(HALO_ALLOC(out.values, nnz));
  out.row_ptr[0] = 0;
  for (int64_t r = 0; r < n; r++)
    out.row_ptr[r + 1] = out.row_ptr[r] + A->row_ptr[old_of[r] + 1] - A->row_ptr[old_of[r]];
  if (n) memcpy(next, out.row_ptr, (size_t)n * sizeof *next);
  for (int64_t c = 0; c < n; c++)
    for (int64_t q = tptr[c]; q < tptr[c + 1]; q++) {
      const int64_t k = next[tcol[q]]++;
      out.col_ids[k] = c;
      out.values[k] = tval[q];
    }
  *B = out;
  memset(&out, 0, sizeof out);
cleanup:
  halo_csr_free(&out);
  halo_free(next);
  halo_free(tval);
  halo_free(tcol);
  halo_free(tptr);
  halo_free(old_of);
  return st;
}

halo_status halo_partition_measure(const halo_csr *A, const int64_t *new_ids, int P,
                                   const int64_t *row_begin, halo_partition_quality *q) {
  halo_status st = HALO_SUCCESS;
  int *owner = NULL, *mark = NULL;
  int64_t *old_of = NULL;
  halo_partition_quality out = {0, 0, 0};
  if (!q || !row_begin || P < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition measure: NULL argument or %d ranks", P);
  HALO_CHECK(check_square(A, "partition measure"));
  const int64_t n = A->n_rows;
  if (row_begin[0] != 0 || row_begin[P] != n)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "partition measure: row_begin spans %lld..%lld, the matrix 0..%lld",
                      (long long)row_begin[0], (long long)row_begin[P], (long long)n);
  /* the rank of every original row, and the original row of every new one */
  HALO_TRY(HALO_ALLOC(owner, n));
  HALO_TRY(HALO_ALLOC(old_of, n));
  for (int64_t i = 0; i < n; i++) old_of[i] = -1;
  for (int64_t i = 0; i < n; i++) {
    const int64_t k = new_ids ? new_ids[i] : i;
    owner[i] = halo_find_range(row_begin, P, k);
    if (owner[i] < 0 || old_of[k] >= 0)
      HALO_FAIL(HALO_ERR_INVALID_ARG,
                "partition measure: new_ids is not a permutation of 0..%lld (row %lld)",
                (long long)(n - 1), (long long)i);
    old_of[k] = i;
  }
  /* an edge {i, j} counted once: from (i, j) when i < j or a_ji is absent */
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      const int64_t j = A->col_ids[k];
      if (j != i && owner[i] != owner[j] && (i < j || !has_entry(A, j, i))) out.edge_cut++;
    }
  /* the columns each rank needs from others, each once per rank */
  HALO_TRY(HALO_ALLOC(mark, n));
  for (int64_t j = 0; j < n; j++) mark[j] = -1;
  for (int r = 0; r < P; r++) {
    if (row_begin[r + 1] - row_begin[r] > out.max_rows)
      out.max_rows = row_begin[r + 1] - row_begin[r];
    for (int64_t t = row_begin[r]; t < row_begin[r + 1]; t++) {
      const int64_t i = old_of[t];
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
        const int64_t j = A->col_ids[k];
        if (owner[j] != r && mark[j] != r) {
          mark[j] = r;
          out.ghosts++;
        }
      }
    }
  }
  *q = out;
cleanup:
  halo_free(mark);
  halo_free(old_of);
  halo_free(owner);
  return st;
}
