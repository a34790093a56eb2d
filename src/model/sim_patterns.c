/* The simulator's patterns: every rank's, built serially from the whole
 * matrix (halo_sim_create) or, for a generated one, from each rank's rows
 * made in turn, a block at a time (halo_sim_create_gen), as the pattern's
 * discovery would find them in a run. */
#include <string.h>

#include "io/progress.h"
#include "model/simulate.h"

static halo_status check_offsets(const char *what, const int64_t *b, int P, int64_t n) {
  if (!b) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s is NULL", what);
  if (b[0] != 0 || b[P] != n)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s must run from 0 to %lld, runs from %lld to %lld",
                      what, (long long)n, (long long)b[0], (long long)b[P]);
  for (int r = 0; r < P; r++)
    if (b[r + 1] < b[r])
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s decreases at rank %d", what, r);
  return HALO_SUCCESS;
}

/* The simulation's shell: P ranks and their layouts (checked), no pattern yet. */
static halo_status sim_shell(int P, const int64_t *row_begin, const int64_t *col_begin,
                             int64_t n_rows, int64_t n_cols, halo_sim *sim_p) {
  halo_status st = HALO_SUCCESS;
  halo_sim s = NULL;
  if (P < 1) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%d ranks: at least one", P);
  HALO_CHECK(check_offsets("row_begin", row_begin, P, n_rows));
  HALO_CHECK(check_offsets("col_begin", col_begin, P, n_cols));
  s = halo_calloc(1, sizeof *s);
  if (!s) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a simulation");
  s->P = P;
  HALO_TRY(HALO_ALLOC(s->col_ranges, P + 1));
  memcpy(s->col_ranges, col_begin, (size_t)(P + 1) * sizeof *col_begin);
  HALO_TRY(HALO_ALLOC(s->row_ranges, P + 1));
  memcpy(s->row_ranges, row_begin, (size_t)(P + 1) * sizeof *row_begin);
  HALO_TRY(HALO_CALLOC(s->ghost_ids, P));
  HALO_TRY(HALO_CALLOC(s->pat, P));
  *sim_p = s;
  s = NULL;
cleanup:
  halo_sim_destroy(&s);
  return st;
}

/* Sort and drop repeats of v[0, n): the new count. */
static halo_status sort_unique(int64_t *v, int64_t n, int64_t *u_p) {
  HALO_CHECK(halo_sort_i64(v, n));
  int64_t u = 0;
  for (int64_t k = 0; k < n; k++)
    if (u == 0 || v[k] != v[u - 1]) v[u++] = v[k];
  *u_p = u;
  return HALO_SUCCESS;
}

/* Rank r's receive side from the off-range columns of its entries, cols[0, n)
 * (any order, repeats; sorted here): its ghosts, sorted and unique, and its
 * pattern's receives. */
static halo_status sim_recv_side(halo_sim s, int r, int64_t *cols, int64_t n) {
  int64_t u;
  HALO_CHECK(sort_unique(cols, n, &u));
  HALO_CHECK(HALO_ALLOC(s->ghost_ids[r], u));
  if (u) memcpy(s->ghost_ids[r], cols, (size_t)u * sizeof *cols);
  return halo_pattern_recv_side(r, s->P, s->col_ranges, s->ghost_ids[r], u, &s->pat[r]);
}

/* Every rank's send side: what each rank asks of each owner, in increasing
 * rank (as NBX orders it). */
static halo_status sim_send_side(halo_sim s) {
  halo_status st = HALO_SUCCESS;
  const int P = s->P;
  int64_t *n_send = NULL, *n_vals = NULL;
  HALO_TRY(HALO_CALLOC(n_send, P));
  HALO_TRY(HALO_CALLOC(n_vals, P));
  for (int r = 0; r < P; r++)
    for (int i = 0; i < s->pat[r].n_recv; i++) {
      n_send[s->pat[r].recv[i].peer]++;
      n_vals[s->pat[r].recv[i].peer] += s->pat[r].recv[i].count;
    }
  for (int o = 0; o < P; o++) {
    HALO_TRY(HALO_ALLOC(s->pat[o].send, n_send[o]));
    HALO_TRY(HALO_ALLOC(s->pat[o].send_idx, n_vals[o]));
    n_vals[o] = 0; /* now: values placed */
  }
  for (int r = 0; r < P; r++)
    for (int i = 0; i < s->pat[r].n_recv; i++) {
      const halo_msg *m = &s->pat[r].recv[i];
      halo_pattern *q = &s->pat[m->peer];
      q->send[q->n_send++] = (halo_msg){r, n_vals[m->peer], m->count};
      for (int64_t k = 0; k < m->count; k++)
        q->send_idx[n_vals[m->peer]++] = s->ghost_ids[r][m->offset + k] - s->col_ranges[m->peer];
    }
cleanup:
  halo_free(n_vals);
  halo_free(n_send);
  return st;
}

halo_status halo_sim_create(const halo_csr *A, int P, const int64_t *row_begin,
                            const int64_t *col_begin, halo_sim *sim_p) {
  halo_status st = HALO_SUCCESS;
  halo_sim s = NULL;
  int64_t *buf = NULL;
  if (!A || !sim_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_create: NULL argument");
  if (A->row_begin != 0 || A->row_end != A->n_rows)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the simulator needs all rows of the matrix");
  if (!col_begin) {
    if (A->n_rows != A->n_cols)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "a %lld x %lld matrix needs its own column layout (col_begin)",
                        (long long)A->n_rows, (long long)A->n_cols);
    col_begin = row_begin;
  }
  HALO_CHECK(sim_shell(P, row_begin, col_begin, A->n_rows, A->n_cols, &s));
  /* receive side of every rank: its off-range columns, sorted and unique */
  int64_t longest = 0;
  for (int r = 0; r < P; r++) {
    int64_t n = A->row_ptr[row_begin[r + 1]] - A->row_ptr[row_begin[r]];
    if (n > longest) longest = n;
  }
  HALO_TRY(HALO_ALLOC(buf, longest));
  for (int r = 0; r < P; r++) {
    const int64_t cb = col_begin[r], ce = col_begin[r + 1];
    int64_t m = 0;
    for (int64_t k = A->row_ptr[row_begin[r]]; k < A->row_ptr[row_begin[r + 1]]; k++) {
      const int64_t c = A->col_ids[k];
      if (c < 0 || c >= A->n_cols)
        HALO_FAIL(HALO_ERR_INVALID_ARG, "column %lld out of range [0, %lld)", (long long)c,
                  (long long)A->n_cols);
      if (c < cb || c >= ce) buf[m++] = c;
    }
    HALO_TRY(sim_recv_side(s, r, buf, m));
  }
  HALO_TRY(sim_send_side(s));
  *sim_p = s;
  s = NULL;
cleanup:
  halo_free(buf);
  halo_sim_destroy(&s);
  return st;
}

/* Bytes of one rank's pattern, about: its ghost ids and as many send
 * indices on their owners, and its messages both ways. */
#define PATTERN_BYTES(ghosts, messages) (16.0 * (ghosts) + 48.0 * (messages) + 64.0)

/* The off-range columns of rows [cb, ce) of a generated matrix (the range's
 * own columns are [cb, ce)), made a block of rows at a time, into *cols
 * (grown, *cap): *n_p of them, repeats dropped as they pile up; *e_p (if
 * not NULL) the rows' entries. */
static halo_status gen_offrange(const halo_gen *gen, int64_t cb, int64_t ce, int64_t **cols,
                                int64_t *cap, int64_t *n_p, int64_t *e_p) {
  enum { BLOCK = 1 << 20 }; /* rows generated at once */
  halo_status st = HALO_SUCCESS;
  halo_csr blk;
  int64_t n = 0, kept = 0, entries = 0; /* (*cols)[0, kept) sorted and unique */
  memset(&blk, 0, sizeof blk);
  for (int64_t b0 = cb; b0 < ce; b0 += BLOCK) {
    const int64_t b1 = ce - b0 < BLOCK ? ce : b0 + BLOCK;
    HALO_TRY(halo_gen_rows(gen, b0, b1, &blk));
    const int64_t e = blk.row_ptr[b1 - b0];
    entries += e;
    if (n + e > *cap) {
      const int64_t want = n + e > 2 * *cap ? n + e : 2 * *cap;
      int64_t *q = halo_realloc(*cols, (size_t)want * sizeof *q);
      if (!q)
        HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory simulating rows %lld to %lld",
                  (long long)cb, (long long)ce);
      *cols = q, *cap = want;
    }
    for (int64_t k = 0; k < e; k++) {
      const int64_t c = blk.col_ids[k];
      if (c < cb || c >= ce) (*cols)[n++] = c;
    }
    halo_csr_free(&blk);
    if (n > 2 * kept + BLOCK) { /* repeats: compacted as they come */
      HALO_TRY(sort_unique(*cols, n, &kept));
      n = kept;
    }
  }
  *n_p = n;
  if (e_p) *e_p = entries;
cleanup:
  halo_csr_free(&blk);
  return st;
}

halo_status halo_sim_create_gen(const halo_gen *gen, int P, const int64_t *row_begin,
                                int64_t max_bytes, int64_t *nnz_p, halo_sim *sim_p) {
  halo_status st = HALO_SUCCESS;
  halo_sim s = NULL;
  int64_t *cols = NULL, n_cols_buf = 0, cap = 0, N, M, nnz = 0;
  double bytes = 0.0; /* the patterns' so far, about */
  halo_progress_fn fn = NULL;
  void *fn_data = NULL;
  if (!gen || !sim_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_sim_create_gen: NULL argument");
  HALO_CHECK(halo_gen_size(gen, &N, &M));
  if (N != M)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "a generated %lld x %lld matrix: square only",
                      (long long)N, (long long)M);
  HALO_CHECK(sim_shell(P, row_begin, row_begin, N, N, &s));
  /* one report over all rows, not one per block of each rank */
  halo_progress_stage pr;
  halo_progress_begin(&pr, "generating", HALO_PROGRESS_ROWS, N);
  halo_progress_hook(&fn, &fn_data);
  halo_io_set_progress(NULL, NULL);
  for (int r = 0; r < P; r++) {
    int64_t e = 0;
    HALO_TRY(gen_offrange(gen, row_begin[r], row_begin[r + 1], &cols, &cap, &n_cols_buf, &e));
    nnz += e;
    HALO_TRY(sim_recv_side(s, r, cols, n_cols_buf));
    /* ghost ids, and as many send indices on their owners, and the messages */
    bytes += PATTERN_BYTES((double)s->pat[r].n_ghost, (double)s->pat[r].n_recv);
    /* past the limit, or bound to pass it at this rate (from the second rank on) */
    const double projected = bytes * (double)P / (double)(r + 1);
    if (max_bytes > 0 && (bytes > (double)max_bytes || (r > 0 && projected > 2.0 * max_bytes)))
      HALO_FAIL(HALO_ERR_OUT_OF_MEMORY,
                "the patterns of ranks 0 to %d of %d need %.3g GB, about %.3g GB for all at this "
                "rate, more than the %.3g GB this simulation may take: simulate fewer ranks or a "
                "smaller matrix",
                r, P, bytes / 1e9, projected / 1e9, (double)max_bytes / 1e9);
    halo_progress_tick(&pr, row_begin[r + 1]);
  }
  halo_progress_end(&pr);
  halo_free(cols);
  cols = NULL;
  HALO_TRY(sim_send_side(s));
  if (nnz_p) *nnz_p = nnz;
  *sim_p = s;
  s = NULL;
cleanup:
  if (fn) halo_io_set_progress(fn, fn_data);
  halo_free(cols);
  halo_sim_destroy(&s);
  return st;
}
