/* Entries in coordinate form made CSR (the Matrix Market reader's last
 * step), and the halo_csr helpers. CSR by a counting sort on rows followed by
 * a sort of each row on columns; duplicates are then neighbours. */
#include <string.h>

#include "mm_csr.h"

/* ---- halo_csr helpers ---------------------------------------------------- */

void halo_csr_free(halo_csr *A) {
  if (!A) return;
  halo_free(A->row_ptr);
  halo_free(A->col_ids);
  halo_free(A->values);
  memset(A, 0, sizeof *A);
}

int64_t halo_csr_nnz(const halo_csr *A) {
  if (!A || !A->row_ptr || A->row_end < A->row_begin) return 0;
  return A->row_ptr[A->row_end - A->row_begin] - A->row_ptr[0];
}

void mm_coo_free(mm_coo *e) {
  HALO_FREE(e->rows);
  HALO_FREE(e->cols);
  HALO_FREE(e->vals);
}

/* ---- sorting the rows ---------------------------------------------------- */

static void insertion_sort(int64_t *c, double *v, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    int64_t key = c[i];
    double val = v[i];
    int64_t j = i - 1;
    while (j >= 0 && c[j] > key) {
      c[j + 1] = c[j];
      v[j + 1] = v[j];
      j--;
    }
    c[j + 1] = key;
    v[j + 1] = val;
  }
}

/* Stable bottom-up merge sort of (c, v) by c; tc, tv hold n elements. */
static void merge_sort(int64_t *c, double *v, int64_t n, int64_t *tc, double *tv) {
  const int64_t run = 32;
  for (int64_t lo = 0; lo < n; lo += run)
    insertion_sort(c + lo, v + lo, n - lo < run ? n - lo : run);
  int64_t *sc = c, *dc = tc;
  double *sv = v, *dv = tv;
  for (int64_t w = run; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = n - lo > w ? lo + w : n;
      int64_t hi = n - lo > 2 * w ? lo + 2 * w : n;
      int64_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        if (sc[b] < sc[a]) {
          dc[k] = sc[b];
          dv[k++] = sv[b++];
        } else {
          dc[k] = sc[a];
          dv[k++] = sv[a++];
        }
      }
      for (; a < mid; a++, k++) dc[k] = sc[a], dv[k] = sv[a];
      for (; b < hi; b++, k++) dc[k] = sc[b], dv[k] = sv[b];
    }
    int64_t *t = sc;
    sc = dc;
    dc = t;
    double *u = sv;
    sv = dv;
    dv = u;
  }
  if (sc != c) {
    memcpy(c, sc, (size_t)n * sizeof *c);
    memcpy(v, sv, (size_t)n * sizeof *v);
  }
}

/* ---- CSR ----------------------------------------------------------------- */

halo_status mm_build_csr(int64_t m, int64_t n, int symmetry, mm_coo *e, int sum_duplicates,
                         halo_csr *out, int64_t dup_p[2]) {
  halo_status st = HALO_SUCCESS;
  const int sym = symmetry != MM_GENERAL, skew = symmetry == MM_SKEW;
  int64_t *row_ptr = NULL, *fill = NULL, *cols = NULL, *tc = NULL;
  double *vals = NULL, *tv = NULL;
  dup_p[0] = dup_p[1] = -1;
  HALO_TRY(HALO_CALLOC(row_ptr, m + 1));
  for (int64_t k = 0; k < e->count; k++) {
    row_ptr[e->rows[k] + 1]++;
    if (sym && e->rows[k] != e->cols[k]) row_ptr[e->cols[k] + 1]++;
  }
  for (int64_t r = 0; r < m; r++) row_ptr[r + 1] += row_ptr[r];
  const int64_t total = row_ptr[m];
  /* Never NULL, even without entries. */
  HALO_TRY(HALO_ALLOC(cols, total > 0 ? total : 1));
  HALO_TRY(HALO_ALLOC(vals, total > 0 ? total : 1));
  HALO_TRY(HALO_ALLOC(fill, m));
  if (m > 0) memcpy(fill, row_ptr, (size_t)m * sizeof *fill);
  for (int64_t k = 0; k < e->count; k++) {
    int64_t r = e->rows[k], c = e->cols[k];
    double v = e->vals ? e->vals[k] : 1.0;
    int64_t p = fill[r]++;
    cols[p] = c;
    vals[p] = v;
    if (sym && r != c) {
      p = fill[c]++;
      cols[p] = r;
      vals[p] = skew ? -v : v;
    }
  }
  HALO_FREE(fill);
  mm_coo_free(e);

  /* Sort each row by column; most files list rows already sorted. */
  int64_t longest = 0;
  for (int64_t r = 0; r < m; r++) {
    int64_t b = row_ptr[r], len = row_ptr[r + 1] - b, k = 1;
    while (k < len && cols[b + k - 1] <= cols[b + k]) k++;
    if (k >= len) continue;
    if (len <= 32)
      insertion_sort(cols + b, vals + b, len);
    else if (len > longest)
      longest = len;
  }
  if (longest > 0) {
    HALO_TRY(HALO_ALLOC(tc, longest));
    HALO_TRY(HALO_ALLOC(tv, longest));
    for (int64_t r = 0; r < m; r++) {
      int64_t b = row_ptr[r], len = row_ptr[r + 1] - b, k = 1;
      if (len <= 32) continue;
      while (k < len && cols[b + k - 1] <= cols[b + k]) k++;
      if (k < len) merge_sort(cols + b, vals + b, len, tc, tv);
    }
  }

  /* Duplicates are neighbours now. */
  if (!sum_duplicates) {
    for (int64_t r = 0; r < m; r++)
      for (int64_t k = row_ptr[r] + 1; k < row_ptr[r + 1]; k++)
        if (cols[k] == cols[k - 1]) {
          dup_p[0] = r;
          dup_p[1] = cols[k];
          goto cleanup;
        }
  } else {
    int64_t w = 0, begin = 0;
    for (int64_t r = 0; r < m; r++) {
      int64_t stop = row_ptr[r + 1], start = w;
      for (int64_t k = begin; k < stop; k++) {
        if (w > start && cols[w - 1] == cols[k]) {
          vals[w - 1] += vals[k];
        } else {
          cols[w] = cols[k];
          vals[w] = vals[k];
          w++;
        }
      }
      begin = stop;
      row_ptr[r + 1] = w;
    }
    if (w < total && w > 0) { /* give back the room of the merged entries */
      int64_t *c2 = halo_realloc(cols, (size_t)w * sizeof *cols);
      if (c2) cols = c2;
      double *v2 = halo_realloc(vals, (size_t)w * sizeof *vals);
      if (v2) vals = v2;
    }
  }

  out->n_rows = m;
  out->n_cols = n;
  out->row_begin = 0;
  out->row_end = m;
  out->row_ptr = row_ptr;
  out->col_ids = cols;
  out->values = vals;
  row_ptr = NULL;
  cols = NULL;
  vals = NULL;
cleanup:
  halo_free(tv);
  halo_free(tc);
  halo_free(fill);
  halo_free(vals);
  halo_free(cols);
  halo_free(row_ptr);
  return st;
}
