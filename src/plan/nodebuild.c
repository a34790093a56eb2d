/* The node-aware part of a plan: the decisions through a strategy's
 * descriptor, and the node's schedules built phase by phase from the pieces.
 * Each phase builder below reads the descriptor (where its messages go,
 * whether senders gather), never the strategy. They run in a fixed order,
 * direct, gather, pieces out, pieces in, redistribution, because message
 * lists merge messages to the same peer in the order they are added: the
 * order is part of the output (every strategy gives Standard's ghosts bit
 * for bit, and the simulator's schedules equal the run's). */
#include <stdlib.h>
#include <string.h>

#include "plan/nodebuild.h"

/* ---- decisions -------------------------------------------------------------- */

halo_status halo_node_decide_receive(const halo_strategy_desc *d, const halo_node_input *in,
                                     halo_node_links *L, int64_t message_cap) {
  if (!d->decide_receive)
    return HALO_ERROR(HALO_ERR_INTERNAL, "strategy %s is not node-aware", d->name);
  return d->decide_receive(in, L, message_cap);
}

halo_status halo_node_decide_send(const halo_strategy_desc *d, const halo_node_input *in,
                                  halo_node_links *L) {
  if (!d->decide_send)
    return HALO_ERROR(HALO_ERR_INTERNAL, "strategy %s is not node-aware", d->name);
  for (int b = 0; b < L->n_out; b++) {
    const halo_link *l = &L->out[b];
    if (l->n_pieces < 1 || !l->piece_start || l->piece_start[0] != 0 ||
        l->piece_start[l->n_pieces] != l->n)
      return HALO_ERROR(HALO_ERR_INTERNAL,
                        "node %d sends %lld values to node %d, whose pieces do not cover them",
                        in->node_id, (long long)l->n, l->node);
    for (int k = 0; k < l->n_pieces; k++)
      if (l->piece_start[k + 1] <= l->piece_start[k])
        return HALO_ERROR(HALO_ERR_INTERNAL, "node %d made an empty piece for node %d", l->node,
                          in->node_id);
  }
  return d->decide_send(in, L);
}

/* ---- message lists ------------------------------------------------------------ */

/* Messages of one rank in one phase and one direction, being built. */
typedef struct {
  int peer;
  int64_t key; /* order among messages with the same peer */
  int64_t n, cap;
  int64_t *idx;
} mbuf;

typedef struct {
  int n, cap;
  mbuf *m;
} mlist;

static halo_status mlist_add(mlist *l, int peer, int64_t key, mbuf **m_p) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 4;
    mbuf *q = halo_realloc(l->m, (size_t)cap * sizeof *q);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory building a schedule");
    l->m = q;
    l->cap = cap;
  }
  mbuf *m = &l->m[l->n++];
  m->peer = peer, m->key = key, m->n = m->cap = 0, m->idx = NULL;
  *m_p = m;
  return HALO_SUCCESS;
}

/* The message with (peer, key), made if there is none. */
static halo_status mlist_get(mlist *l, int peer, int64_t key, mbuf **m_p) {
  for (int i = l->n - 1; i >= 0; i--)
    if (l->m[i].peer == peer && l->m[i].key == key) {
      *m_p = &l->m[i];
      return HALO_SUCCESS;
    }
  return mlist_add(l, peer, key, m_p);
}

/* Room for n more values (written by the caller at m->idx[m->n++]). */
static halo_status mbuf_reserve(mbuf *m, int64_t n) {
  if (m->n + n > m->cap) {
    int64_t cap = m->cap ? 2 * m->cap : 16;
    while (cap < m->n + n) cap *= 2;
    int64_t *q = halo_realloc(m->idx, (size_t)cap * sizeof *q);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory building a schedule");
    m->idx = q;
    m->cap = cap;
  }
  return HALO_SUCCESS;
}

/* Append n values v[i] + add. */
static halo_status mbuf_append(mbuf *m, const int64_t *v, int64_t n, int64_t add) {
  HALO_CHECK(mbuf_reserve(m, n));
  for (int64_t i = 0; i < n; i++) m->idx[m->n + i] = v[i] + add;
  m->n += n;
  return HALO_SUCCESS;
}

static void mlist_free(mlist *l) {
  for (int i = 0; i < l->n; i++) halo_free(l->m[i].idx);
  halo_free(l->m);
  memset(l, 0, sizeof *l);
}

static int cmp_mbuf(const void *a, const void *b) {
  const mbuf *x = a, *y = b;
  if (x->peer != y->peer) return (x->peer > y->peer) - (x->peer < y->peer);
  return (x->key > y->key) - (x->key < y->key);
}

/* Messages ordered by (peer, key) into a phase's message list and index map. */
static halo_status mlist_to_phase(mlist *l, int *n_p, halo_msg **msg_p, int64_t *total_p,
                                  int64_t **idx_p) {
  halo_status st = HALO_SUCCESS;
  if (l->n > 1) qsort(l->m, (size_t)l->n, sizeof *l->m, cmp_mbuf);
  int64_t total = 0;
  for (int i = 0; i < l->n; i++) total += l->m[i].n;
  HALO_TRY(HALO_ALLOC(*msg_p, l->n));
  *n_p = l->n;
  *total_p = total;
  if (l->n == 1 && total > 0) { /* a lone message's values are the phase's: taken, not copied */
    int64_t *q = halo_realloc(l->m[0].idx, (size_t)total * sizeof *q);
    if (q) l->m[0].idx = q;
    (*msg_p)[0] = (halo_msg){l->m[0].peer, 0, total};
    *idx_p = l->m[0].idx;
    l->m[0].idx = NULL;
    l->m[0].n = l->m[0].cap = 0;
    return HALO_SUCCESS;
  }
  HALO_TRY(HALO_ALLOC(*idx_p, total));
  int64_t off = 0;
  for (int i = 0; i < l->n; i++) {
    (*msg_p)[i] = (halo_msg){l->m[i].peer, off, l->m[i].n};
    if (l->m[i].n) memcpy(*idx_p + off, l->m[i].idx, (size_t)l->m[i].n * sizeof(int64_t));
    off += l->m[i].n;
  }
cleanup:
  return st;
}

/* ---- the phase builders -------------------------------------------------------- */

/* The node's schedules being built. */
typedef struct {
  const halo_strategy_desc *d;
  const halo_node_input *in;
  const halo_node_links *L;
  mlist *send, *recv; /* [rank * n_phases + phase] */
  int64_t *gwork;     /* per rank: work entries of gathered values */
  int64_t *xwork;     /* per rank: work entries of received pieces, after the gathered */
  int64_t *gbegin;    /* R+1: the gathered values of each rank, numbered by (sender, owner, gid) */
  int64_t n_g;        /* ... how many */
  int64_t *gpos;      /* per outgoing entry (links in order): its gathered value's number */
  int64_t **wpos;     /* per incoming link: work position of each entry at its receiver */
  int64_t n_red;      /* deliveries of the redistribution */
  int *lidx;          /* local index of plan rank rlo + j, or -1 (NULL: searched) */
  int rlo, rspan;
} node_build;

/* Local index of plan rank r in the node, or -1. */
static inline int local_of(const node_build *b, int r) {
  if (!b->lidx) return halo_node_local_index(b->in, r);
  const int64_t j = (int64_t)r - b->rlo;
  return j >= 0 && j < b->rspan ? b->lidx[j] : -1;
}

static mlist *sends(node_build *b, int i, int ph) {
  return &b->send[(size_t)i * (size_t)b->d->n_phases + (size_t)ph];
}
static mlist *recvs(node_build *b, int i, int ph) {
  return &b->recv[(size_t)i * (size_t)b->d->n_phases + (size_t)ph];
}

/* The layout the builders rely on: roles inside the phases, values gathered
 * before they cross the network and delivered after. */
static halo_status check_layout(const halo_strategy_desc *d) {
  const int n = d->n_phases;
  if (!d->decide_receive || !d->decide_send)
    return HALO_ERROR(HALO_ERR_INTERNAL,
                      "strategy %s has no node-aware decisions: its schedule is Standard's",
                      d->name);
  if (n < 2 || n > HALO_MAX_PHASES || d->phase_direct < 0 || d->phase_direct >= n ||
      d->phase_gather < -1 || d->phase_gather >= d->phase_global ||
      d->phase_global >= d->phase_redistribute || d->phase_redistribute >= n)
    return HALO_ERROR(HALO_ERR_INTERNAL,
                      "strategy %s lays out %d phases as direct %d, gather %d, global %d, "
                      "redistribution %d: needs gather < global < redistribution < phases",
                      d->name, n, d->phase_direct, d->phase_gather, d->phase_global,
                      d->phase_redistribute);
  return HALO_SUCCESS;
}

static halo_status node_build_alloc(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const size_t R = (size_t)b->in->n_ranks, n = R * (size_t)b->d->n_phases;
  HALO_TRY(HALO_CALLOC(b->send, n));
  HALO_TRY(HALO_CALLOC(b->recv, n));
  HALO_TRY(HALO_CALLOC(b->gwork, R));
  HALO_TRY(HALO_CALLOC(b->xwork, R));
  HALO_TRY(HALO_CALLOC(b->gbegin, R + 1));
  HALO_TRY(HALO_CALLOC(b->wpos, b->L->n_in));
  /* a table of the node's ranks where their span is narrow (as a rule: a node's
   * ranks are consecutive), else local_of searches */
  const int64_t span = (int64_t)b->in->ranks[R - 1] - b->in->ranks[0] + 1;
  if (span <= 64 * (int64_t)R) {
    HALO_TRY(HALO_ALLOC(b->lidx, span));
    b->rlo = b->in->ranks[0], b->rspan = (int)span;
    for (int64_t j = 0; j < span; j++) b->lidx[j] = -1;
    for (size_t i = 0; i < R; i++) b->lidx[b->in->ranks[i] - b->rlo] = (int)i;
  }
cleanup:
  return st;
}

static void node_build_free(node_build *b) {
  const int n = b->in->n_ranks * b->d->n_phases;
  if (b->send)
    for (int t = 0; t < n; t++) mlist_free(&b->send[t]);
  if (b->recv)
    for (int t = 0; t < n; t++) mlist_free(&b->recv[t]);
  if (b->wpos)
    for (int c = 0; c < b->L->n_in; c++) halo_free(b->wpos[c]);
  halo_free(b->wpos);
  halo_free(b->lidx);
  halo_free(b->gpos);
  halo_free(b->gbegin);
  halo_free(b->xwork);
  halo_free(b->gwork);
  halo_free(b->recv);
  halo_free(b->send);
}

/* On-node messages, direct: p sends q what q needs of p, as Standard does,
 * in phase_direct. */
static halo_status build_direct(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  const int ph = b->d->phase_direct;
  for (int i = 0; i < in->n_ranks; i++) {
    const halo_pattern *p = &in->pat[i];
    for (int m = 0; m < p->n_send; m++) {
      if (in->send_node[i][m] != in->node_id) continue;
      const int q = p->send[m].peer, j = local_of(b, q);
      if (j < 0) HALO_FAIL(HALO_ERR_INTERNAL, "rank %d is not on node %d", q, in->node_id);
      const halo_pattern *pq = &in->pat[j];
      int r = 0; /* q's receive from p */
      while (r < pq->n_recv && pq->recv[r].peer != in->ranks[i]) r++;
      if (r == pq->n_recv || pq->recv[r].count != p->send[m].count)
        HALO_FAIL(HALO_ERR_INTERNAL, "ranks %d and %d disagree on their message", in->ranks[i], q);
      mbuf *a = NULL, *c = NULL;
      const int64_t n = p->send[m].count;
      HALO_TRY(mlist_get(sends(b, i, ph), q, 0, &a));
      HALO_TRY(mlist_get(recvs(b, j, ph), in->ranks[i], 0, &c));
      HALO_TRY(mbuf_append(a, p->send_idx + p->send[m].offset, n, 0));
      HALO_TRY(mbuf_reserve(c, n));
      for (int64_t k = 0; k < n; k++) c->idx[c->n++] = pq->recv[r].offset + k;
    }
  }
cleanup:
  return st;
}

/* Records keyed by a pair of the node's ranks (a, c), local indices below R:
 * ordered by (a, c, key), stably. */
typedef struct {
  int64_t n;
  int *a, *c;
  int64_t *key; /* the order within a pair */
  int64_t *val; /* what each carries */
} pair_records;

static halo_status pair_records_alloc(pair_records *k, int64_t n) {
  halo_status st = HALO_SUCCESS;
  HALO_TRY(HALO_ALLOC(k->a, n));
  HALO_TRY(HALO_ALLOC(k->c, n));
  HALO_TRY(HALO_ALLOC(k->key, n));
  HALO_TRY(HALO_ALLOC(k->val, n));
cleanup:
  return st;
}

static void pair_records_free(pair_records *k) {
  halo_free(k->a);
  halo_free(k->c);
  halo_free(k->key);
  halo_free(k->val);
  memset(k, 0, sizeof *k);
}

/* One stable counting pass of from into to, by from->a (by_a) or from->c. */
static halo_status pair_records_pass(const pair_records *from, pair_records *to, int R, int by_a) {
  int64_t *at = NULL;
  HALO_CHECK(HALO_CALLOC(at, (size_t)R + 1));
  const int *f = by_a ? from->a : from->c;
  for (int64_t i = 0; i < from->n; i++) at[f[i] + 1]++;
  for (int r = 0; r < R; r++) at[r + 1] += at[r];
  for (int64_t i = 0; i < from->n; i++) {
    const int64_t j = at[f[i]]++;
    to->a[j] = from->a[i], to->c[j] = from->c[i];
    to->key[j] = from->key[i], to->val[j] = from->val[i];
  }
  to->n = from->n;
  halo_free(at);
  return HALO_SUCCESS;
}

/* Order by (a, c), stably: one counting pass by the pair where the R * R counters
 * are no more than the records, else two (by c, then by a: O(n + R)); then each
 * pair's records by key, stably (the builders' mostly are already). */
static halo_status pair_records_sort(pair_records *k, int R) {
  halo_status st = HALO_SUCCESS;
  pair_records t = {0};
  int64_t *at = NULL;
  const int64_t nb = (int64_t)R * R;
  if (nb <= k->n) {
    HALO_TRY(HALO_CALLOC(at, nb + 1));
    for (int64_t i = 0; i < k->n; i++) at[(int64_t)k->a[i] * R + k->c[i] + 1]++;
    for (int64_t j = 0; j < nb; j++) at[j + 1] += at[j];
    HALO_TRY(HALO_ALLOC(t.key, k->n));
    HALO_TRY(HALO_ALLOC(t.val, k->n));
    for (int64_t i = 0; i < k->n; i++) {
      const int64_t j = at[(int64_t)k->a[i] * R + k->c[i]]++;
      t.key[j] = k->key[i], t.val[j] = k->val[i];
    }
    for (int64_t j = nb - 1, i = k->n; j >= 0; j--) /* the pairs, from the counters' ends */
      while (i > (j > 0 ? at[j - 1] : 0)) i--, k->a[i] = (int)(j / R), k->c[i] = (int)(j % R);
    halo_free(k->key), halo_free(k->val);
    k->key = t.key, k->val = t.val;
    t.key = t.val = NULL;
  } else {
    HALO_TRY(pair_records_alloc(&t, k->n));
    HALO_TRY(pair_records_pass(k, &t, R, 0));
    HALO_TRY(pair_records_pass(&t, k, R, 1));
  }
  for (int64_t b0 = 0, b1; b0 < k->n; b0 = b1) {
    int sorted = 1;
    for (b1 = b0 + 1; b1 < k->n && k->a[b1] == k->a[b0] && k->c[b1] == k->c[b0]; b1++)
      sorted &= k->key[b1 - 1] <= k->key[b1];
    if (!sorted) HALO_TRY(halo_sort_i64_pairs(k->key + b0, k->val + b0, b1 - b0));
  }
cleanup:
  halo_free(at);
  pair_records_free(&t);
  return st;
}

/* Gather, in phase_gather (strategies whose senders gather): every sender
 * needs the values of its pieces that other ranks of the node own, each
 * once: (sender, owner, gid), into the sender's work in that order. */
static halo_status build_gather(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  const halo_node_links *L = b->L;
  const int ph = b->d->phase_gather, R = in->n_ranks;
  pair_records k = {0};
  if (!halo_strategy_desc_gathers(b->d)) return HALO_SUCCESS;
  int64_t n_e = 0;
  for (int c = 0; c < L->n_out; c++) n_e += L->out[c].n;
  HALO_TRY(HALO_ALLOC(b->gpos, n_e));
  HALO_TRY(pair_records_alloc(&k, n_e));
  /* each entry another rank owns: (sender, owner) with its gid (key) and its
   * place among the links' entries (val) */
  int64_t e0 = 0;
  for (int c = 0; c < L->n_out; e0 += L->out[c].n, c++) {
    const halo_link *l = &L->out[c];
    for (int p = 0; p < l->n_pieces; p++) {
      const int si = local_of(b, l->piece_sender[p]);
      if (si < 0)
        HALO_FAIL(HALO_ERR_INTERNAL, "sender %d of a piece is not on node %d", l->piece_sender[p],
                  in->node_id);
      int owner = -1, oi = -1;
      for (int64_t e = l->piece_start[p]; e < l->piece_start[p + 1]; e++) {
        b->gpos[e0 + e] = -1;
        if (l->owner[e] == l->piece_sender[p]) continue;
        if (l->owner[e] != owner) {
          owner = l->owner[e], oi = local_of(b, owner);
          if (oi < 0)
            HALO_FAIL(HALO_ERR_INTERNAL, "owner %d is not on node %d", owner, in->node_id);
        }
        k.a[k.n] = si, k.c[k.n] = oi, k.key[k.n] = l->gid[e], k.val[k.n++] = e0 + e;
      }
    }
  }
  /* by (sender, owner, gid), the entries' places rising in the input; each value
   * once, in place (the keys become the gathered gids) */
  HALO_TRY(pair_records_sort(&k, R));
  int64_t u = 0;
  for (int64_t r0 = 0, r1; r0 < k.n; r0 = r1) {
    const int si = k.a[r0], oi = k.c[r0], owner = in->ranks[oi];
    const int64_t u0 = u;
    for (r1 = r0; r1 < k.n && k.a[r1] == si && k.c[r1] == oi; r1++) {
      if (u == u0 || k.key[r1] != k.key[u - 1]) k.key[u++] = k.key[r1];
      b->gpos[k.val[r1]] = u - 1;
    }
    /* the sender's work: its gathered values by (owner, gid), after its ghosts */
    for (int64_t r = u0; r < u; r++) k.val[r] = b->gwork[si] + (r - u0);
    b->gwork[si] += u - u0;
    mbuf *a = NULL, *m = NULL;
    HALO_TRY(mlist_get(sends(b, oi, ph), in->ranks[si], 0, &a));
    HALO_TRY(mlist_get(recvs(b, si, ph), owner, 0, &m));
    HALO_TRY(mbuf_append(a, k.key + u0, u - u0, -in->col_ranges[owner]));
    HALO_TRY(mbuf_append(m, k.val + u0, u - u0, in->pat[si].n_ghost));
  }
  b->n_g = u;
  for (int i = 0; i < R; i++) b->gbegin[i + 1] = b->gbegin[i] + b->gwork[i];
cleanup:
  pair_records_free(&k);
  return st;
}

/* Pieces out, in phase_global: sender -> receiver, each value from the
 * sender's x_local or, when another rank owns it, from its gathered values. */
static halo_status build_pieces_out(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  const halo_node_links *L = b->L;
  const int ph = b->d->phase_global;
  int64_t e0 = 0; /* the link's first entry among all links' */
  for (int c = 0; c < L->n_out; e0 += L->out[c].n, c++) {
    const halo_link *l = &L->out[c];
    for (int k = 0; k < l->n_pieces; k++) {
      const int sender = l->piece_sender[k], si = local_of(b, sender);
      if (si < 0) HALO_FAIL(HALO_ERR_INTERNAL, "sender %d is not on node %d", sender, in->node_id);
      if (l->piece_receiver[k] < 0 || l->piece_receiver[k] >= in->size)
        HALO_FAIL(HALO_ERR_INTERNAL, "piece %d to node %d has no receiver", k, l->node);
      mbuf *m = NULL;
      HALO_TRY(mlist_add(sends(b, si, ph), l->piece_receiver[k], k, &m));
      HALO_TRY(mbuf_reserve(m, l->piece_start[k + 1] - l->piece_start[k]));
      for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++) {
        int64_t src;
        if (l->owner[e] == sender) {
          src = l->gid[e] - in->col_ranges[sender];
        } else {
          if (!halo_strategy_desc_gathers(b->d))
            HALO_FAIL(HALO_ERR_INTERNAL,
                      "%s: rank %d sends value %lld of rank %d, but its senders gather nothing",
                      b->d->name, sender, (long long)l->gid[e], l->owner[e]);
          const int64_t pos = b->gpos[e0 + e]; /* set by build_gather */
          if (pos < b->gbegin[si] || pos >= b->gbegin[si + 1])
            HALO_FAIL(HALO_ERR_INTERNAL, "value %lld was not gathered", (long long)l->gid[e]);
          src = in->pat[si].n_local + (pos - b->gbegin[si]);
        }
        m->idx[m->n++] = src;
      }
    }
  }
cleanup:
  return st;
}

/* Pieces in, in phase_global: into the receiver's work, after its gathered
 * values. */
static halo_status build_pieces_in(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  const halo_node_links *L = b->L;
  const int ph = b->d->phase_global;
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    HALO_TRY(HALO_ALLOC(b->wpos[c], l->n));
    for (int k = 0; k < l->n_pieces; k++) {
      const int ri = local_of(b, l->piece_receiver[k]);
      if (ri < 0)
        HALO_FAIL(HALO_ERR_INTERNAL, "receiver %d is not on node %d", l->piece_receiver[k],
                  in->node_id);
      if (l->piece_sender[k] < 0 || l->piece_sender[k] >= in->size)
        HALO_FAIL(HALO_ERR_INTERNAL, "piece %d from node %d has no sender", k, l->node);
      mbuf *m = NULL;
      HALO_TRY(mlist_add(recvs(b, ri, ph), l->piece_sender[k], k, &m));
      HALO_TRY(mbuf_reserve(m, l->piece_start[k + 1] - l->piece_start[k]));
      for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++) {
        const int64_t w = b->gwork[ri] + b->xwork[ri]++;
        b->wpos[c][e] = w;
        m->idx[m->n++] = in->pat[ri].n_ghost + w;
        b->n_red += l->dst_ptr[e + 1] - l->dst_ptr[e];
      }
    }
  }
cleanup:
  return st;
}

/* Redistribution, in phase_redistribute: receiver -> every rank of the node
 * that needs an entry, ordered by (receiver, reader, ghost). The deliveries
 * are counted per (receiver, reader) first, then written straight into their
 * two messages, in the links' order; a pair's are sorted by the reader's
 * ghost only where that order is not already theirs ((receiver, reader,
 * ghost) is unique: a reader's ghost comes from one receiver). */
static halo_status build_redistribution(node_build *b) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  const halo_node_links *L = b->L;
  const int ph = b->d->phase_redistribute, R = in->n_ranks;
  const int64_t nb = (int64_t)R * R;
  int64_t *cnt = NULL, n = 0;
  mbuf **snd = NULL, **rcv = NULL; /* per pair: receiver's send, reader's receive */
  int64_t *s0 = NULL, *r0 = NULL;  /* per pair: where its deliveries begin in them */
  HALO_TRY(HALO_CALLOC(cnt, nb));
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    for (int p = 0; p < l->n_pieces; p++) {
      const int ri = local_of(b, l->piece_receiver[p]);
      int reader = -1, qi = -1;
      for (int64_t t = l->dst_ptr[l->piece_start[p]]; t < l->dst_ptr[l->piece_start[p + 1]]; t++) {
        if (l->dst_rank[t] != reader) {
          reader = l->dst_rank[t], qi = local_of(b, reader);
          if (qi < 0)
            HALO_FAIL(HALO_ERR_INTERNAL, "rank %d is not on node %d", reader, in->node_id);
        }
        cnt[(int64_t)ri * R + qi]++;
      }
    }
  }
  for (int64_t j = 0; j < nb; j++) n += cnt[j];
  if (n != b->n_red)
    HALO_FAIL(HALO_ERR_INTERNAL, "%lld deliveries, %lld counted", (long long)n,
              (long long)b->n_red);
  HALO_TRY(HALO_CALLOC(snd, nb));
  HALO_TRY(HALO_CALLOC(rcv, nb));
  HALO_TRY(HALO_ALLOC(s0, nb));
  HALO_TRY(HALO_ALLOC(r0, nb));
  /* the messages made first, then found (making one may move its list's others) */
  for (int pass = 0; pass < 2; pass++)
    for (int64_t j = 0; j < nb; j++) {
      if (!cnt[j]) continue;
      const int ri = (int)(j / R), qi = (int)(j % R);
      HALO_TRY(mlist_get(sends(b, ri, ph), in->ranks[qi], 0, &snd[j]));
      HALO_TRY(mlist_get(recvs(b, qi, ph), in->ranks[ri], 0, &rcv[j]));
    }
  for (int64_t j = 0; j < nb; j++) {
    if (!cnt[j]) continue;
    HALO_TRY(mbuf_reserve(snd[j], cnt[j]));
    HALO_TRY(mbuf_reserve(rcv[j], cnt[j]));
    s0[j] = snd[j]->n, r0[j] = rcv[j]->n;
  }
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    for (int p = 0; p < l->n_pieces; p++) {
      const int ri = local_of(b, l->piece_receiver[p]);
      const int64_t base = in->pat[ri].n_local;
      for (int64_t e = l->piece_start[p]; e < l->piece_start[p + 1]; e++)
        for (int64_t t = l->dst_ptr[e]; t < l->dst_ptr[e + 1]; t++) {
          const int64_t j = (int64_t)ri * R + local_of(b, l->dst_rank[t]);
          snd[j]->idx[snd[j]->n++] = base + b->wpos[c][e];
          rcv[j]->idx[rcv[j]->n++] = l->dst_ghost[t];
        }
    }
  }
  for (int64_t j = 0; j < nb; j++) {
    if (!cnt[j]) continue;
    int64_t *key = rcv[j]->idx + r0[j], *val = snd[j]->idx + s0[j];
    int sorted = 1;
    for (int64_t i = 1; i < cnt[j] && sorted; i++) sorted = key[i - 1] <= key[i];
    if (!sorted) HALO_TRY(halo_sort_i64_pairs(key, val, cnt[j]));
  }
cleanup:
  halo_free(r0);
  halo_free(s0);
  halo_free(rcv);
  halo_free(snd);
  halo_free(cnt);
  return st;
}

/* The schedules: every phase's message lists, ordered by (peer, key). */
static halo_status assemble(node_build *b, halo_schedule *sched) {
  halo_status st = HALO_SUCCESS;
  const halo_node_input *in = b->in;
  for (int i = 0; i < in->n_ranks; i++) {
    halo_schedule *sc = &sched[i];
    sc->strategy = b->d->strategy;
    sc->rank = in->ranks[i];
    sc->size = in->size;
    sc->n_local = in->pat[i].n_local;
    sc->n_ghost = in->pat[i].n_ghost;
    sc->n_work = b->gwork[i] + b->xwork[i];
    sc->message_cap_used = b->L->message_cap_used;
    sc->n_phases = b->d->n_phases;
    for (int ph = 0; ph < sc->n_phases; ph++) {
      halo_phase *f = &sc->phase[ph];
      f->scope = ph == b->d->phase_global ? HALO_SCOPE_GLOBAL : HALO_SCOPE_NODE;
      HALO_TRY(mlist_to_phase(sends(b, i, ph), &f->n_send, &f->send, &f->send_total, &f->pack));
      HALO_TRY(mlist_to_phase(recvs(b, i, ph), &f->n_recv, &f->recv, &f->recv_total, &f->unpack));
    }
  }
cleanup:
  return st;
}

halo_status halo_node_build_schedules(const halo_strategy_desc *d, const halo_node_input *in,
                                      const halo_node_links *L, halo_schedule *sched) {
  halo_status st = HALO_SUCCESS;
  node_build b = {.d = d, .in = in, .L = L};
  for (int i = 0; i < in->n_ranks; i++) memset(&sched[i], 0, sizeof sched[i]);
  HALO_CHECK(check_layout(d));
  HALO_TRY(node_build_alloc(&b));
  HALO_TRY(build_direct(&b));
  HALO_TRY(build_gather(&b));
  HALO_TRY(build_pieces_out(&b));
  HALO_TRY(build_pieces_in(&b));
  HALO_TRY(build_redistribution(&b));
  HALO_TRY(assemble(&b, sched));
cleanup:
  node_build_free(&b);
  if (st != HALO_SUCCESS)
    for (int i = 0; i < in->n_ranks; i++) halo_schedule_free(&sched[i]);
  return st;
}
