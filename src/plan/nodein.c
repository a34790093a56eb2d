/* The incoming half of a node's schedules, built by its ranks (see nodein.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "plan/nodein.h"

/* ---- the table ------------------------------------------------------------------ */

halo_status halo_in_table_pack(const halo_node_links *L, int dedup, halo_vec *out) {
  int64_t n_pieces = 0;
  for (int c = 0; c < L->n_in; c++) n_pieces += L->in[c].n_pieces;
  const int64_t head[] = {L->message_cap_used, L->n_in, n_pieces};
  HALO_CHECK(halo_vec_append(out, head, 3));
  for (int c = 0; c < L->n_in; c++) {
    const int64_t h[] = {L->in[c].node, L->in[c].n_pieces};
    HALO_CHECK(halo_vec_append(out, h, 2));
  }
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    for (int k = 0; k < l->n_pieces; k++) {
      const int64_t e = l->piece_start[k];
      if (!dedup && l->dst_ptr[e + 1] - l->dst_ptr[e] != 1)
        return HALO_ERROR(HALO_ERR_INTERNAL,
                          "an entry from node %d has %lld destinations without duplicate removal",
                          l->node, (long long)(l->dst_ptr[e + 1] - l->dst_ptr[e]));
      const int64_t v[] = {k,
                           l->piece_start[k + 1] - e,
                           l->piece_receiver[k],
                           l->piece_sender[k],
                           l->gid[e],
                           dedup ? -1 : l->dst_rank[l->dst_ptr[e]]};
      HALO_CHECK(halo_vec_append(out, v, 6));
    }
  }
  return HALO_SUCCESS;
}

void halo_in_table_free(halo_in_table *t) {
  halo_free(t->node);
  halo_free(t->first);
  halo_free(t->k);
  halo_free(t->size);
  halo_free(t->receiver);
  halo_free(t->sender);
  halo_free(t->key_gid);
  halo_free(t->key_rank);
  memset(t, 0, sizeof *t);
}

halo_status halo_in_table_unpack(const int64_t *buf, int64_t n, int size, halo_in_table *t) {
  halo_status st = HALO_SUCCESS;
  memset(t, 0, sizeof *t);
  if (n < 3 || buf[1] < 0 || buf[2] < 0 || buf[1] > INT_MAX || buf[2] > INT_MAX ||
      n != 3 + 2 * buf[1] + 6 * buf[2])
    HALO_FAIL(HALO_ERR_INTERNAL, "a node's table of pieces has %lld words", (long long)n);
  t->message_cap_used = buf[0];
  const int nl = (int)buf[1], np = (int)buf[2];
  HALO_TRY(HALO_ALLOC(t->node, nl));
  HALO_TRY(HALO_ALLOC(t->first, nl + 1));
  HALO_TRY(HALO_ALLOC(t->k, np));
  HALO_TRY(HALO_ALLOC(t->size, np));
  HALO_TRY(HALO_ALLOC(t->receiver, np));
  HALO_TRY(HALO_ALLOC(t->sender, np));
  HALO_TRY(HALO_ALLOC(t->key_gid, np));
  HALO_TRY(HALO_ALLOC(t->key_rank, np));
  t->n_links = nl, t->n_pieces = np;
  const int64_t *h = buf + 3, *v = buf + 3 + 2 * (int64_t)nl;
  t->first[0] = 0;
  for (int c = 0; c < nl; c++) {
    if (h[2 * c] < 0 || h[2 * c] >= size || (c > 0 && h[2 * c] <= h[2 * c - 2]) ||
        h[2 * c + 1] < 1 || h[2 * c + 1] > np - t->first[c])
      HALO_FAIL(HALO_ERR_INTERNAL, "a node's table of pieces names link %d badly", c);
    t->node[c] = (int)h[2 * c];
    t->first[c + 1] = t->first[c] + (int)h[2 * c + 1];
  }
  if (t->first[nl] != np)
    HALO_FAIL(HALO_ERR_INTERNAL, "a node's table of pieces counts %d pieces, lists %d", np,
              t->first[nl]);
  for (int j = 0; j < np; j++) {
    const int64_t *w = v + 6 * (int64_t)j;
    if (w[1] < 1 || w[2] < 0 || w[2] >= size || w[3] < 0 || w[3] >= size || w[0] < 0 ||
        w[0] > INT_MAX)
      HALO_FAIL(HALO_ERR_INTERNAL, "a node's table of pieces names piece %d badly", j);
    t->k[j] = (int)w[0], t->size[j] = w[1];
    t->receiver[j] = (int)w[2], t->sender[j] = (int)w[3];
    t->key_gid[j] = w[4], t->key_rank[j] = w[5];
  }
cleanup:
  if (st != HALO_SUCCESS) halo_in_table_free(t);
  return st;
}

halo_status halo_in_entries_pack(const halo_node_links *L, int dedup, halo_vec *out) {
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    if (dedup) { /* the link's pieces are consecutive entries */
      const int64_t e0 = l->piece_start[0];
      HALO_CHECK(halo_vec_append(out, l->gid + e0, l->piece_start[l->n_pieces] - e0));
      continue;
    }
    for (int k = 0; k < l->n_pieces; k++) {
      const int64_t e0 = l->piece_start[k], e1 = l->piece_start[k + 1];
      HALO_CHECK(halo_vec_append(out, l->gid + e0, e1 - e0));
      for (int64_t e = e0; e < e1; e++) HALO_CHECK(halo_vec_push(out, l->dst_rank[l->dst_ptr[e]]));
    }
  }
  return HALO_SUCCESS;
}

/* (g, r) against (h, s): -1, 0, 1 */
static inline int cmp_key(int64_t g, int64_t r, int64_t h, int64_t s) {
  if (g != h) return g < h ? -1 : 1;
  return (r > s) - (r < s);
}

/* ---- the readers ---------------------------------------------------------------- */

/* Local index of plan rank r among the node's ranks (increasing), or -1. */
static int local_index(const int *node_ranks, int R, int r) {
  int lo = 0, hi = R - 1;
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    if (node_ranks[mid] == r) return mid;
    if (node_ranks[mid] < r)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* The first index in [lo, hi) whose key is not below (x, r), searched from lo
 * with doubling steps: a rank's ghosts in a piece are near each other. */
static int64_t lower_from(const int64_t *g, const int64_t *rk, int64_t lo, int64_t hi, int64_t x,
                          int64_t r) {
  int64_t step = 1, b = lo;
  while (b < hi && cmp_key(g[b], rk ? rk[b] : -1, x, r) < 0) lo = b + 1, b = lo + step, step *= 2;
  if (b > hi) b = hi;
  while (lo < b) { /* the answer is in [lo, b] */
    const int64_t mid = lo + (b - lo) / 2;
    if (cmp_key(g[mid], rk ? rk[mid] : -1, x, r) < 0)
      lo = mid + 1;
    else
      b = mid;
  }
  return lo;
}

halo_status halo_in_requests(const halo_in_table *t, int dedup, int me, int my_node,
                             const int64_t *entries, int64_t n_entries, const halo_pattern *p,
                             const int64_t *ghost_ids, const int *recv_node, const int *node_ranks,
                             int R, halo_vec *req, halo_vec *ghosts) {
  halo_status st = HALO_SUCCESS;
  int *rloc = NULL;
  int64_t *w0 = NULL, *e0 = NULL, *cur = NULL, *filled = NULL;
  const int64_t my_key = dedup ? -1 : me;
  HALO_TRY(HALO_ALLOC(rloc, t->n_pieces));
  HALO_TRY(HALO_ALLOC(w0, t->n_pieces));
  HALO_TRY(HALO_ALLOC(e0, t->n_pieces));
  HALO_TRY(HALO_CALLOC(cur, t->n_pieces));
  HALO_TRY(HALO_CALLOC(filled, R));
  /* each piece's entries in the list, and its place in its receiver's work array */
  int64_t e = 0;
  for (int j = 0; j < t->n_pieces; j++) {
    if ((rloc[j] = local_index(node_ranks, R, t->receiver[j])) < 0)
      HALO_FAIL(HALO_ERR_INTERNAL, "the receiver %d of a piece is not on node %d", t->receiver[j],
                my_node);
    const int64_t words = dedup ? t->size[j] : 2 * t->size[j];
    if (words > n_entries - e)
      HALO_FAIL(HALO_ERR_INTERNAL, "rank %d got %lld entries for the node's pieces", me,
                (long long)n_entries);
    e0[j] = e, e += words;
    w0[j] = filled[rloc[j]];
    filled[rloc[j]] += t->size[j];
  }
  if (e != n_entries)
    HALO_FAIL(HALO_ERR_INTERNAL, "rank %d got %lld entries for the node's pieces, of %lld", me,
              (long long)n_entries, (long long)e);
  for (int m = 0; m < p->n_recv; m++) {
    if (recv_node[m] == my_node || p->recv[m].count == 0) continue;
    int lo = 0, hi = t->n_links - 1, c = -1;
    while (lo <= hi) {
      const int mid = lo + (hi - lo) / 2;
      if (t->node[mid] == recv_node[m]) {
        c = mid;
        break;
      }
      if (t->node[mid] < recv_node[m])
        lo = mid + 1;
      else
        hi = mid - 1;
    }
    if (c < 0)
      HALO_FAIL(HALO_ERR_INTERNAL, "rank %d receives from node %d, whose link has no pieces", me,
                recv_node[m]);
    const int64_t g0 = p->recv[m].offset, g1 = g0 + p->recv[m].count;
    /* the last piece whose first key is not above the first ghost's */
    int j = t->first[c];
    for (int a = t->first[c] + 1, b = t->first[c + 1] - 1; a <= b;) {
      const int mid = a + (b - a) / 2;
      if (cmp_key(t->key_gid[mid], t->key_rank[mid], ghost_ids[g0], my_key) <= 0)
        j = mid, a = mid + 1;
      else
        b = mid - 1;
    }
    for (int64_t g = g0; g < g1; g++) {
      const int64_t x = ghost_ids[g];
      if (g > g0 && x <= ghost_ids[g - 1]) /* each piece's cursor only moves on */
        HALO_FAIL(HALO_ERR_INTERNAL, "the ghost ids of rank %d are not increasing at %lld", me,
                  (long long)g);
      while (j + 1 < t->first[c + 1] &&
             cmp_key(t->key_gid[j + 1], t->key_rank[j + 1], x, my_key) <= 0)
        j++;
      const int64_t *eg = entries + e0[j], *er = dedup ? NULL : eg + t->size[j];
      int64_t at = cur[j];
      if (!er) { /* a few steps first: a rank's ghosts are often near each other */
        const int64_t near = t->size[j] - at < 8 ? t->size[j] : at + 8;
        while (at < near && eg[at] < x) at++;
        if (at == near && at < t->size[j]) at = lower_from(eg, NULL, at, t->size[j], x, -1);
      } else {
        at = lower_from(eg, er, at, t->size[j], x, my_key);
      }
      if (at == t->size[j] || eg[at] != x || (er && er[at] != my_key))
        HALO_FAIL(HALO_ERR_INTERNAL, "rank %d needs value %lld, which no piece from node %d holds",
                  me, (long long)x, recv_node[m]);
      cur[j] = at + 1;
      const int i = rloc[j];
      HALO_TRY(halo_vec_push(&ghosts[i], g));
      HALO_TRY(halo_vec_push(&req[i], w0[j] + at));
    }
  }
cleanup:
  halo_free(filled);
  halo_free(cur);
  halo_free(e0);
  halo_free(w0);
  halo_free(rloc);
  return st;
}

/* ---- the receivers -------------------------------------------------------------- */

/* A message of the global phase being ordered: the piece, its sender and index. */
typedef struct {
  int j, sender, k;
} piece_msg;

static int cmp_piece_msg(const void *a, const void *b) {
  const piece_msg *x = a, *y = b;
  if (x->sender != y->sender) return (x->sender > y->sender) - (x->sender < y->sender);
  return (x->k > y->k) - (x->k < y->k);
}

halo_status halo_in_build(const halo_in_table *t, const halo_strategy_desc *d, int me, int size,
                          int64_t n_local, int64_t n_ghost, const int *node_ranks, int R,
                          int64_t **places, const int64_t *n_req, const halo_vec *ghosts,
                          halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  int64_t *w0 = NULL;
  piece_msg *pm = NULL;
  int n_own = 0;
  memset(s, 0, sizeof *s);
  s->strategy = d->strategy, s->rank = me, s->size = size;
  s->n_local = n_local, s->n_ghost = n_ghost;
  s->message_cap_used = t->message_cap_used;
  s->n_phases = d->n_phases;
  for (int ph = 0; ph < s->n_phases; ph++)
    s->phase[ph].scope = ph == d->phase_global ? HALO_SCOPE_GLOBAL : HALO_SCOPE_NODE;
  halo_phase *r = &s->phase[d->phase_redistribute];
  r->pack = *places; /* the schedule's from here */
  *places = NULL;
  HALO_TRY(HALO_ALLOC(w0, t->n_pieces));
  /* this rank's pieces take its work array in the table's order */
  int64_t w = 0;
  for (int j = 0; j < t->n_pieces; j++) {
    w0[j] = -1;
    if (t->receiver[j] != me) continue;
    w0[j] = w;
    w += t->size[j];
    n_own++;
  }
  s->n_work = w;

  /* the global phase: one message per piece, by (sender, piece) */
  halo_phase *f = &s->phase[d->phase_global];
  HALO_TRY(HALO_ALLOC(pm, n_own));
  for (int j = 0, q = 0; j < t->n_pieces; j++)
    if (w0[j] >= 0) pm[q++] = (piece_msg){j, t->sender[j], t->k[j]};
  if (n_own > 1) qsort(pm, (size_t)n_own, sizeof *pm, cmp_piece_msg);
  HALO_TRY(HALO_ALLOC(f->recv, n_own));
  HALO_TRY(HALO_ALLOC(f->unpack, w));
  for (int q = 0; q < n_own; q++) {
    const int j = pm[q].j;
    f->recv[q] = (halo_msg){t->sender[j], f->recv_total, t->size[j]};
    for (int64_t a = 0; a < t->size[j]; a++) f->unpack[f->recv_total++] = n_ghost + w0[j] + a;
  }
  f->n_recv = n_own;

  /* the redistribution: to each reader, the values at the places it asked for, in its
   * order; from each, the ghosts it holds */
  int64_t n_recv = 0;
  int m_send = 0, m_recv = 0;
  for (int i = 0; i < R; i++) {
    n_recv += ghosts[i].n;
    m_recv += ghosts[i].n > 0;
    m_send += n_req[i] > 0;
  }
  HALO_TRY(HALO_ALLOC(r->send, m_send));
  HALO_TRY(HALO_ALLOC(r->recv, m_recv));
  HALO_TRY(HALO_ALLOC(r->unpack, n_recv));
  for (int i = 0; i < R; i++) {
    const int64_t begin = r->send_total;
    for (int64_t a = begin; a < begin + n_req[i]; a++) {
      if (r->pack[a] < 0 || r->pack[a] >= w)
        HALO_FAIL(HALO_ERR_INTERNAL, "rank %d asks rank %d for place %lld of its %lld work entries",
                  node_ranks[i], me, (long long)r->pack[a], (long long)w);
      r->pack[a] += n_local;
    }
    r->send_total += n_req[i];
    if (n_req[i]) r->send[r->n_send++] = (halo_msg){node_ranks[i], begin, n_req[i]};
  }
  for (int i = 0; i < R; i++) {
    if (!ghosts[i].n) continue;
    r->recv[r->n_recv++] = (halo_msg){node_ranks[i], r->recv_total, ghosts[i].n};
    memcpy(r->unpack + r->recv_total, ghosts[i].v, (size_t)ghosts[i].n * sizeof(int64_t));
    r->recv_total += ghosts[i].n;
  }
cleanup:
  halo_free(pm);
  halo_free(w0);
  if (st != HALO_SUCCESS) halo_schedule_free(s);
  return st;
}
