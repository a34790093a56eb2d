/* Generated matrices: Laplacians on structured grids and a random irregular
 * matrix with a few dense rows and columns (the shape of audikw_1). Every
 * row is a function of (kind, n, seed, row) alone, so every rank can make
 * its own rows and rank 0 can make all of them for a serial reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"
#include "progress.h"

/* ---- parsing ------------------------------------------------------------ */

static const struct {
  const char *name;
  halo_gen_kind kind;
} gen_names[] = {
    {"lap2d", HALO_GEN_LAP2D},
    {"lap3d", HALO_GEN_LAP3D},
    {"lap3d27", HALO_GEN_LAP3D27},
    {"irregular", HALO_GEN_IRREGULAR},
};

static int parse_i64(const char *s, const char *end, int64_t *v) {
  if (s == end) return 0;
  int64_t x = 0;
  for (const char *p = s; p < end; p++) {
    if (*p < '0' || *p > '9') return 0;
    if (x > (INT64_MAX - 9) / 10) return 0;
    x = 10 * x + (*p - '0');
  }
  *v = x;
  return 1;
}

halo_status halo_gen_parse(const char *spec, halo_gen *gen) {
  if (!spec || !gen) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_gen_parse: NULL argument");
  const char *colon = strchr(spec, ':');
  if (!colon)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "generator '%s': expected KIND:N (lap2d:N, lap3d:N, lap3d27:N, "
                      "irregular:N,SEED)",
                      spec);
  size_t klen = (size_t)(colon - spec);
  int found = -1;
  for (int i = 0; i < (int)(sizeof gen_names / sizeof gen_names[0]); i++)
    if (strlen(gen_names[i].name) == klen && strncmp(spec, gen_names[i].name, klen) == 0) found = i;
  if (found < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "generator '%s': unknown kind (known: lap2d, lap3d, lap3d27, irregular)",
                      spec);
  halo_gen g = {gen_names[found].kind, 0, 1};
  const char *num = colon + 1, *comma = strchr(num, ',');
  const char *num_end = comma ? comma : num + strlen(num);
  if (!parse_i64(num, num_end, &g.n) || g.n < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "generator '%s': N must be a positive integer", spec);
  if (comma) {
    int64_t seed;
    if (g.kind != HALO_GEN_IRREGULAR)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "generator '%s': only irregular takes a seed", spec);
    if (!parse_i64(comma + 1, comma + 1 + strlen(comma + 1), &seed))
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "generator '%s': SEED must be a non-negative integer",
                        spec);
    g.seed = (uint64_t)seed;
  }
  /* Sizes: at most 2^40 rows, so that products of sizes stay in int64. */
  int64_t lim = g.kind == HALO_GEN_LAP2D       ? (INT64_C(1) << 20)
                : g.kind == HALO_GEN_IRREGULAR ? (INT64_C(1) << 40)
                                               : (INT64_C(1) << 13);
  if (g.n > lim)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "generator '%s': N = %lld is larger than %lld", spec,
                      (long long)g.n, (long long)lim);
  *gen = g;
  return HALO_SUCCESS;
}

void halo_gen_name(const halo_gen *gen, char *buf, size_t len) {
  const char *kind = "?";
  for (int i = 0; i < (int)(sizeof gen_names / sizeof gen_names[0]); i++)
    if (gen_names[i].kind == gen->kind) kind = gen_names[i].name;
  if (gen->kind == HALO_GEN_IRREGULAR)
    snprintf(buf, len, "%s:%lld,%llu", kind, (long long)gen->n, (unsigned long long)gen->seed);
  else
    snprintf(buf, len, "%s:%lld", kind, (long long)gen->n);
}

halo_status halo_gen_size(const halo_gen *gen, int64_t *n_rows_p, int64_t *n_cols_p) {
  if (!gen) return HALO_ERROR(HALO_ERR_INVALID_ARG, "generator is NULL");
  int64_t n = gen->n, N;
  switch (gen->kind) {
  case HALO_GEN_LAP2D: N = n * n; break;
  case HALO_GEN_LAP3D:
  case HALO_GEN_LAP3D27: N = n * n * n; break;
  case HALO_GEN_IRREGULAR: N = n; break;
  default: return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown generator kind %d", (int)gen->kind);
  }
  if (n_rows_p) *n_rows_p = N;
  if (n_cols_p) *n_cols_p = N;
  return HALO_SUCCESS;
}

/* ---- irregular ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t hash3(uint64_t seed, uint64_t a, uint64_t b) {
  return mix64(mix64(mix64(seed) ^ a) ^ (b * 0x2545f4914f6cdd1dULL));
}

/* Dense rows and columns share positions spread over the matrix. */
static int64_t irr_n_dense(int64_t N) { return N < 16 ? 0 : N < 10000 ? 2 : 4; }
static int64_t irr_dense_pos(int64_t N, int64_t j) { return (j + 1) * N / (irr_n_dense(N) + 1); }
static int64_t irr_dense_row_len(int64_t N) { return 64 + N / 50 < N ? 64 + N / 50 : N; }

static int irr_is_dense_row(int64_t N, int64_t row) {
  for (int64_t j = 0; j < irr_n_dense(N); j++)
    if (irr_dense_pos(N, j) == row) return 1;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Candidate columns of a row (unsorted, with repeats); returns their count. */
static int64_t irr_candidates(const halo_gen *g, int64_t row, int64_t *cols) {
  const int64_t N = g->n;
  int64_t m = 0;
  uint64_t h = hash3(g->seed, (uint64_t)row, 0);
  cols[m++] = row;
  if (row > 0) cols[m++] = row - 1;
  if (row + 1 < N) cols[m++] = row + 1;
  int64_t k = 2 + (int64_t)(h % 7);
  if (irr_is_dense_row(N, row)) k = irr_dense_row_len(N);
  for (int64_t i = 0; i < k; i++)
    cols[m++] = (int64_t)(hash3(g->seed, (uint64_t)row, (uint64_t)i + 1) % (uint64_t)N);
  for (int64_t j = 0; j < irr_n_dense(N); j++)
    if ((h >> (8 + j)) & 1) cols[m++] = irr_dense_pos(N, j);
  return m;
}

static int64_t irr_max_candidates(int64_t N) {
  return 3 + irr_dense_row_len(N) + 8 + irr_n_dense(N);
}

/* Sorted unique columns and values of a row; diagonally dominant. */
static int64_t irr_row(const halo_gen *g, int64_t row, int64_t *cols, double *vals) {
  int64_t m = irr_candidates(g, row, cols);
  qsort(cols, (size_t)m, sizeof *cols, cmp_i64);
  int64_t u = 0;
  for (int64_t i = 0; i < m; i++)
    if (u == 0 || cols[i] != cols[u - 1]) cols[u++] = cols[i];
  if (vals) {
    double off = 0.0;
    int64_t diag = -1;
    for (int64_t i = 0; i < u; i++) {
      if (cols[i] == row) {
        diag = i;
        continue;
      }
      uint64_t h = hash3(g->seed ^ 0x5bd1e995ULL, (uint64_t)row, (uint64_t)cols[i]);
      vals[i] = -(0.125 + (double)(h >> 11) * 0x1.0p-53);
      off -= vals[i];
    }
    vals[diag] = off + 1.0;
  }
  return u;
}

/* ---- Laplacians --------------------------------------------------------- */

static int64_t lap_row(const halo_gen *g, int64_t row, int64_t *cols, double *vals) {
  const int64_t n = g->n;
  int64_t m = 0;
  if (g->kind == HALO_GEN_LAP2D) {
    int64_t i = row % n, j = row / n;
    const int64_t d[5][2] = {{0, -1}, {-1, 0}, {0, 0}, {1, 0}, {0, 1}};
    for (int t = 0; t < 5; t++) {
      int64_t a = i + d[t][0], b = j + d[t][1];
      if (a < 0 || a >= n || b < 0 || b >= n) continue;
      cols[m] = a + n * b;
      if (vals) vals[m] = (a == i && b == j) ? 4.0 : -1.0;
      m++;
    }
    return m;
  }
  int64_t i = row % n, j = (row / n) % n, k = row / (n * n);
  for (int dk = -1; dk <= 1; dk++)
    for (int dj = -1; dj <= 1; dj++)
      for (int di = -1; di <= 1; di++) {
        int nz = (di != 0) + (dj != 0) + (dk != 0);
        if (g->kind == HALO_GEN_LAP3D && nz > 1) continue;
        int64_t a = i + di, b = j + dj, c = k + dk;
        if (a < 0 || a >= n || b < 0 || b >= n || c < 0 || c >= n) continue;
        cols[m] = a + n * (b + n * c);
        if (vals) vals[m] = nz == 0 ? (g->kind == HALO_GEN_LAP3D ? 6.0 : 26.0) : -1.0;
        m++;
      }
  return m;
}

static int64_t max_row_len(const halo_gen *g) {
  switch (g->kind) {
  case HALO_GEN_LAP2D: return 5;
  case HALO_GEN_LAP3D: return 7;
  case HALO_GEN_LAP3D27: return 27;
  case HALO_GEN_IRREGULAR: return irr_max_candidates(g->n);
  }
  return 0;
}

static int64_t gen_row(const halo_gen *g, int64_t row, int64_t *cols, double *vals) {
  return g->kind == HALO_GEN_IRREGULAR ? irr_row(g, row, cols, vals) : lap_row(g, row, cols, vals);
}

static halo_status check_rows(const halo_gen *gen, int64_t row_begin, int64_t row_end) {
  int64_t N = 0;
  HALO_CHECK(halo_gen_size(gen, &N, NULL));
  if (row_begin < 0 || row_end < row_begin || row_end > N)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "rows [%lld, %lld) are not rows of a %lld-row matrix",
                      (long long)row_begin, (long long)row_end, (long long)N);
  return HALO_SUCCESS;
}

halo_status halo_gen_row_ptr(const halo_gen *gen, int64_t row_begin, int64_t row_end,
                             int64_t *row_ptr) {
  halo_status st = HALO_SUCCESS;
  int64_t *cols = NULL;
  HALO_TRY(check_rows(gen, row_begin, row_end));
  HALO_TRY(HALO_ALLOC(cols, max_row_len(gen)));
  halo_progress_stage pr;
  halo_progress_begin(&pr, "counting", HALO_PROGRESS_ROWS, row_end - row_begin);
  row_ptr[0] = 0;
  for (int64_t i = 0; i < row_end - row_begin; i++) {
    halo_progress_tick(&pr, i);
    row_ptr[i + 1] = row_ptr[i] + gen_row(gen, row_begin + i, cols, NULL);
  }
  halo_progress_end(&pr);
cleanup:
  halo_free(cols);
  return st;
}

halo_status halo_gen_rows(const halo_gen *gen, int64_t row_begin, int64_t row_end, halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  int64_t N = 0, *cols = NULL;
  double *vals = NULL;
  halo_csr out = {0};
  memset(A, 0, sizeof *A);
  HALO_TRY(check_rows(gen, row_begin, row_end));
  HALO_TRY(halo_gen_size(gen, &N, NULL));
  const int64_t n = row_end - row_begin, cap = max_row_len(gen);
  out.n_rows = out.n_cols = N;
  out.row_begin = row_begin;
  out.row_end = row_end;
  HALO_TRY(HALO_ALLOC(cols, cap));
  HALO_TRY(HALO_ALLOC(vals, cap));
  HALO_TRY(HALO_ALLOC(out.row_ptr, n + 1));
  HALO_TRY(halo_gen_row_ptr(gen, row_begin, row_end, out.row_ptr));
  HALO_TRY(HALO_ALLOC(out.col_ids, out.row_ptr[n]));
  HALO_TRY(HALO_ALLOC(out.values, out.row_ptr[n]));
  halo_progress_stage pr;
  halo_progress_begin(&pr, "generating", HALO_PROGRESS_ROWS, n);
  for (int64_t i = 0; i < n; i++) {
    halo_progress_tick(&pr, i);
    int64_t m = gen_row(gen, row_begin + i, cols, vals);
    memcpy(out.col_ids + out.row_ptr[i], cols, (size_t)m * sizeof *cols);
    memcpy(out.values + out.row_ptr[i], vals, (size_t)m * sizeof *vals);
  }
  halo_progress_end(&pr);
  *A = out;
  memset(&out, 0, sizeof out);
cleanup:
  halo_csr_free(&out);
  halo_free(vals);
  halo_free(cols);
  return st;
}
