/* Node-aware strategies, common part: links of a node, dispatch of the
 * decisions, and the builder of the node's schedules from the pieces. */
#include <stdlib.h>
#include <string.h>

#include "plan/node.h"

int halo_node_local(const halo_node_input *in, int r) {
  int lo = 0, hi = in->n_ranks - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (in->ranks[mid] == r) return mid;
    if (in->ranks[mid] < r)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

halo_link *halo_link_find(halo_link *links, int n, int node) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (links[mid].node == node) return &links[mid];
    if (links[mid].node < node)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

halo_status halo_link_alloc_pieces(halo_link *l, int n_pieces) {
  halo_status st = HALO_SUCCESS;
  halo_free(l->piece_start);
  halo_free(l->piece_receiver);
  halo_free(l->piece_sender);
  l->piece_start = NULL, l->piece_receiver = l->piece_sender = NULL;
  l->n_pieces = n_pieces;
  HALO_TRY(HALO_ALLOC(l->piece_start, n_pieces + 1));
  HALO_TRY(HALO_ALLOC(l->piece_receiver, n_pieces));
  HALO_TRY(HALO_ALLOC(l->piece_sender, n_pieces));
  for (int k = 0; k < n_pieces; k++) l->piece_receiver[k] = l->piece_sender[k] = -1;
cleanup:
  return st;
}

static void link_free(halo_link *l) {
  halo_free(l->gid);
  halo_free(l->owner);
  halo_free(l->dst_ptr);
  halo_free(l->dst_rank);
  halo_free(l->dst_ghost);
  halo_free(l->piece_start);
  halo_free(l->piece_receiver);
  halo_free(l->piece_sender);
  memset(l, 0, sizeof *l);
}

void halo_node_links_free(halo_node_links *L) {
  if (!L) return;
  for (int i = 0; i < L->n_out; i++) link_free(&L->out[i]);
  for (int i = 0; i < L->n_in; i++) link_free(&L->in[i]);
  halo_free(L->out);
  halo_free(L->in);
  memset(L, 0, sizeof *L);
}

/* ---- links ---------------------------------------------------------------- */

typedef struct {
  int64_t gid;
  int64_t ghost; /* incoming: index into the destination's ghosts */
  int node;      /* the other node */
  int rank;      /* destination rank */
  int owner;
} item_t;

static int cmp_item(const void *a, const void *b) {
  const item_t *x = a, *y = b;
  if (x->node != y->node) return (x->node > y->node) - (x->node < y->node);
  if (x->gid != y->gid) return (x->gid > y->gid) - (x->gid < y->gid);
  return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Links from sorted items; incoming links keep the destinations. */
static halo_status links_from_items(const item_t *it, int64_t n, int dedup, int incoming,
                                    halo_link **links_p, int *n_links_p) {
  halo_status st = HALO_SUCCESS;
  int n_links = 0;
  halo_link *links = NULL;
  for (int64_t i = 0; i < n; i++) n_links += i == 0 || it[i].node != it[i - 1].node;
  HALO_TRY(HALO_CALLOC(links, n_links));
  for (int64_t i = 0, l = 0; i < n; l++) {
    int64_t j = i;
    while (j < n && it[j].node == it[i].node) j++;
    halo_link *k = &links[l];
    k->node = it[i].node;
    int64_t m = 0;
    for (int64_t t = i; t < j; t++) m += !dedup || t == i || it[t].gid != it[t - 1].gid;
    k->n = m;
    HALO_TRY(HALO_ALLOC(k->gid, m));
    HALO_TRY(HALO_ALLOC(k->owner, m));
    if (incoming) {
      HALO_TRY(HALO_ALLOC(k->dst_ptr, m + 1));
      HALO_TRY(HALO_ALLOC(k->dst_rank, j - i));
      HALO_TRY(HALO_ALLOC(k->dst_ghost, j - i));
    }
    int64_t e = -1;
    for (int64_t t = i; t < j; t++) {
      if (!dedup || t == i || it[t].gid != it[t - 1].gid) {
        e++;
        k->gid[e] = it[t].gid;
        k->owner[e] = it[t].owner;
        if (incoming) k->dst_ptr[e] = t - i;
      } else if (it[t].owner != k->owner[e]) {
        HALO_FAIL(HALO_ERR_INTERNAL, "value %lld has two owners, %d and %d", (long long)it[t].gid,
                  k->owner[e], it[t].owner);
      }
      if (incoming) {
        k->dst_rank[t - i] = it[t].rank;
        k->dst_ghost[t - i] = it[t].ghost;
      }
    }
    if (incoming) k->dst_ptr[m] = j - i;
    i = j;
  }
  *links_p = links;
  *n_links_p = n_links;
  links = NULL;
cleanup:
  if (links) {
    for (int l = 0; l < n_links; l++) link_free(&links[l]);
    halo_free(links);
  }
  return st;
}

halo_status halo_node_links_build(const halo_node_input *in, int dedup, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  item_t *out = NULL, *inc = NULL;
  int64_t n_out = 0, n_in = 0;
  memset(L, 0, sizeof *L);
  for (int i = 0; i < in->n_ranks; i++) {
    const halo_pattern *p = &in->pat[i];
    for (int m = 0; m < p->n_send; m++)
      if (in->send_node[i][m] != in->node_id) n_out += p->send[m].count;
    for (int m = 0; m < p->n_recv; m++)
      if (in->recv_node[i][m] != in->node_id) n_in += p->recv[m].count;
  }
  HALO_TRY(HALO_ALLOC(out, n_out));
  HALO_TRY(HALO_ALLOC(inc, n_in));
  int64_t a = 0, b = 0;
  for (int i = 0; i < in->n_ranks; i++) {
    const halo_pattern *p = &in->pat[i];
    const int me = in->ranks[i];
    const int64_t cb = in->col_ranges[me];
    for (int m = 0; m < p->n_send; m++) {
      if (in->send_node[i][m] == in->node_id) continue;
      for (int64_t k = p->send[m].offset; k < p->send[m].offset + p->send[m].count; k++)
        out[a++] = (item_t){cb + p->send_idx[k], -1, in->send_node[i][m], p->send[m].peer, me};
    }
    for (int m = 0; m < p->n_recv; m++) {
      if (in->recv_node[i][m] == in->node_id) continue;
      for (int64_t k = p->recv[m].offset; k < p->recv[m].offset + p->recv[m].count; k++)
        inc[b++] = (item_t){in->ghost_ids[i][k], k, in->recv_node[i][m], me, p->recv[m].peer};
    }
  }
  if (n_out > 1) qsort(out, (size_t)n_out, sizeof *out, cmp_item);
  if (n_in > 1) qsort(inc, (size_t)n_in, sizeof *inc, cmp_item);
  HALO_TRY(links_from_items(out, n_out, dedup, 0, &L->out, &L->n_out));
  HALO_TRY(links_from_items(inc, n_in, dedup, 1, &L->in, &L->n_in));
cleanup:
  halo_free(inc);
  halo_free(out);
  if (st != HALO_SUCCESS) halo_node_links_free(L);
  return st;
}

/* ---- decisions -------------------------------------------------------------- */

typedef struct {
  int64_t size;
  int index;
} deal_item;

static int cmp_deal(const void *a, const void *b) {
  const deal_item *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return (x->index > y->index) - (x->index < y->index);
}

halo_status halo_deal_round_robin(int n, const int64_t *size, int n_ranks, int first, int step,
                                  int *local) {
  halo_status st = HALO_SUCCESS;
  deal_item *order = NULL;
  HALO_TRY(HALO_ALLOC(order, n));
  for (int i = 0; i < n; i++) order[i] = (deal_item){size[i], i};
  if (n > 1) qsort(order, (size_t)n, sizeof *order, cmp_deal);
  for (int t = 0; t < n; t++) {
    int r = (int)(((int64_t)first + (int64_t)step * t) % n_ranks);
    local[order[t].index] = r < 0 ? r + n_ranks : r;
  }
cleanup:
  halo_free(order);
  return st;
}

halo_status halo_decide_receive(halo_strategy s, const halo_node_input *in, halo_node_links *L,
                                int64_t message_cap) {
  switch (s) {
  case HALO_STRATEGY_2STEP: return halo_2step_receive(in, L);
  case HALO_STRATEGY_3STEP: return halo_3step_receive(in, L);
  case HALO_STRATEGY_SPLIT: return halo_split_receive(in, L, message_cap);
  case HALO_STRATEGY_STANDARD:
  case HALO_STRATEGY_AUTO: break;
  }
  return HALO_ERROR(HALO_ERR_INTERNAL, "strategy %s is not node-aware", halo_strategy_name(s));
}

halo_status halo_decide_send(halo_strategy s, const halo_node_input *in, halo_node_links *L) {
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
  switch (s) {
  case HALO_STRATEGY_2STEP: return halo_2step_send(in, L);
  case HALO_STRATEGY_3STEP: return halo_3step_send(in, L);
  case HALO_STRATEGY_SPLIT: return halo_split_send(in, L);
  case HALO_STRATEGY_STANDARD:
  case HALO_STRATEGY_AUTO: break;
  }
  return HALO_ERROR(HALO_ERR_INTERNAL, "strategy %s is not node-aware", halo_strategy_name(s));
}

/* ---- the builder -------------------------------------------------------------- */

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

static halo_status mbuf_push(mbuf *m, int64_t x) {
  if (m->n == m->cap) {
    int64_t cap = m->cap ? 2 * m->cap : 16;
    int64_t *q = halo_realloc(m->idx, (size_t)cap * sizeof *q);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory building a schedule");
    m->idx = q;
    m->cap = cap;
  }
  m->idx[m->n++] = x;
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
  HALO_TRY(HALO_ALLOC(*idx_p, total));
  *n_p = l->n;
  *total_p = total;
  int64_t off = 0;
  for (int i = 0; i < l->n; i++) {
    (*msg_p)[i] = (halo_msg){l->m[i].peer, off, l->m[i].n};
    if (l->m[i].n) memcpy(*idx_p + off, l->m[i].idx, (size_t)l->m[i].n * sizeof(int64_t));
    off += l->m[i].n;
  }
cleanup:
  return st;
}

typedef struct {
  int64_t a, b, c, d;
} quad;

static int cmp_quad(const void *x_, const void *y_) {
  const quad *x = x_, *y = y_;
  if (x->a != y->a) return (x->a > y->a) - (x->a < y->a);
  if (x->b != y->b) return (x->b > y->b) - (x->b < y->b);
  if (x->c != y->c) return (x->c > y->c) - (x->c < y->c);
  return (x->d > y->d) - (x->d < y->d);
}

/* Position of (owner, gid) among the gathered values g[lo, hi) of sender si,
 * sorted by (sender, owner, gid); -1 if absent. */
static int64_t find_gathered(const quad *g, int64_t lo, int64_t hi, int si, int owner,
                             int64_t gid) {
  const quad key = {si, owner, gid, 0};
  const int64_t end = hi;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cmp_quad(&g[mid], &key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < end && cmp_quad(&g[lo], &key) == 0 ? lo : -1;
}

halo_status halo_build_node(halo_strategy s, const halo_node_input *in, const halo_node_links *L,
                            halo_schedule *sched) {
  halo_status st = HALO_SUCCESS;
  const int R = in->n_ranks;
  const int gathers = s != HALO_STRATEGY_2STEP; /* 3-Step and Split gather to senders */
  const int n_phases = gathers ? 3 : 2;
  const int PG = 0, PX = gathers ? 1 : 0, PR = gathers ? 2 : 1; /* phases */
  const int P_DIRECT = gathers ? PG : PX;                       /* on-node messages */
  mlist *send = NULL, *recv = NULL;                             /* [rank * 3 + phase] */
  int64_t *gwork = NULL, *xwork = NULL; /* work entries per rank: gathered, received */
  int64_t *gbegin = NULL;               /* per rank: its gathered values in g */
  quad *g = NULL, *red = NULL;
  int64_t n_g = 0, n_red = 0;
  int64_t **wpos = NULL; /* per incoming link: work position of each entry at its receiver */

  for (int i = 0; i < R; i++) memset(&sched[i], 0, sizeof sched[i]);
  HALO_TRY(HALO_CALLOC(send, 3 * (size_t)R));
  HALO_TRY(HALO_CALLOC(recv, 3 * (size_t)R));
  HALO_TRY(HALO_CALLOC(gwork, R));
  HALO_TRY(HALO_CALLOC(xwork, R));
  HALO_TRY(HALO_CALLOC(gbegin, R + 1));
  HALO_TRY(HALO_CALLOC(wpos, L->n_in));
#define SEND(i, ph) (&send[3 * (size_t)(i) + (ph)])
#define RECV(i, ph) (&recv[3 * (size_t)(i) + (ph)])

  /* 1. on-node messages, direct: p sends q what q needs of p, as standard */
  for (int i = 0; i < R; i++) {
    const halo_pattern *p = &in->pat[i];
    for (int m = 0; m < p->n_send; m++) {
      if (in->send_node[i][m] != in->node_id) continue;
      const int q = p->send[m].peer, j = halo_node_local(in, q);
      if (j < 0) HALO_FAIL(HALO_ERR_INTERNAL, "rank %d is not on node %d", q, in->node_id);
      const halo_pattern *pq = &in->pat[j];
      int r = 0; /* q's receive from p */
      while (r < pq->n_recv && pq->recv[r].peer != in->ranks[i]) r++;
      if (r == pq->n_recv || pq->recv[r].count != p->send[m].count)
        HALO_FAIL(HALO_ERR_INTERNAL, "ranks %d and %d disagree on their message", in->ranks[i], q);
      mbuf *a, *b;
      HALO_TRY(mlist_get(SEND(i, P_DIRECT), q, 0, &a));
      HALO_TRY(mlist_get(RECV(j, P_DIRECT), in->ranks[i], 0, &b));
      for (int64_t k = 0; k < p->send[m].count; k++) {
        HALO_TRY(mbuf_push(a, p->send_idx[p->send[m].offset + k]));
        HALO_TRY(mbuf_push(b, pq->recv[r].offset + k));
      }
    }
  }

  /* 2. gather (3-Step, Split): every sender needs the values of its pieces
   *    that other ranks of the node own, each once: (sender, owner, gid) */
  if (gathers) {
    for (int b = 0; b < L->n_out; b++) n_g += L->out[b].n;
    HALO_TRY(HALO_ALLOC(g, n_g));
    n_g = 0;
    for (int b = 0; b < L->n_out; b++) {
      const halo_link *l = &L->out[b];
      for (int k = 0; k < l->n_pieces; k++) {
        const int si = halo_node_local(in, l->piece_sender[k]);
        if (si < 0)
          HALO_FAIL(HALO_ERR_INTERNAL, "sender %d of a piece is not on node %d", l->piece_sender[k],
                    in->node_id);
        for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++)
          if (l->owner[e] != l->piece_sender[k]) g[n_g++] = (quad){si, l->owner[e], l->gid[e], 0};
      }
    }
    if (n_g > 1) qsort(g, (size_t)n_g, sizeof *g, cmp_quad);
    int64_t u = 0;
    for (int64_t t = 0; t < n_g; t++)
      if (u == 0 || cmp_quad(&g[t], &g[u - 1]) != 0) g[u++] = g[t];
    n_g = u;
    for (int64_t t = 0; t < n_g; t++) gwork[g[t].a]++;
    for (int i = 0; i < R; i++) gbegin[i + 1] = gbegin[i] + gwork[i];
    for (int64_t t = 0; t < n_g; t++) {
      const int si = (int)g[t].a, owner = (int)g[t].b, pi = halo_node_local(in, owner);
      if (pi < 0) HALO_FAIL(HALO_ERR_INTERNAL, "owner %d is not on node %d", owner, in->node_id);
      mbuf *a, *b2;
      HALO_TRY(mlist_get(SEND(pi, PG), in->ranks[si], 0, &a));
      HALO_TRY(mlist_get(RECV(si, PG), owner, 0, &b2));
      HALO_TRY(mbuf_push(a, g[t].c - in->col_ranges[owner]));
      HALO_TRY(mbuf_push(b2, in->pat[si].n_ghost + (t - gbegin[si])));
    }
  }

  /* 3. pieces out: sender -> receiver, from x_local or the gathered values */
  for (int b = 0; b < L->n_out; b++) {
    const halo_link *l = &L->out[b];
    for (int k = 0; k < l->n_pieces; k++) {
      const int sender = l->piece_sender[k], si = halo_node_local(in, sender);
      if (si < 0) HALO_FAIL(HALO_ERR_INTERNAL, "sender %d is not on node %d", sender, in->node_id);
      if (l->piece_receiver[k] < 0 || l->piece_receiver[k] >= in->size)
        HALO_FAIL(HALO_ERR_INTERNAL, "piece %d to node %d has no receiver", k, l->node);
      mbuf *m;
      HALO_TRY(mlist_add(SEND(si, PX), l->piece_receiver[k], k, &m));
      for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++) {
        int64_t src;
        if (l->owner[e] == sender) {
          src = l->gid[e] - in->col_ranges[sender];
        } else {
          if (!gathers)
            HALO_FAIL(HALO_ERR_INTERNAL, "2-Step piece sent by a rank that does not own it");
          int64_t pos = find_gathered(g, gbegin[si], gbegin[si + 1], si, l->owner[e], l->gid[e]);
          if (pos < 0)
            HALO_FAIL(HALO_ERR_INTERNAL, "value %lld was not gathered", (long long)l->gid[e]);
          src = in->pat[si].n_local + (pos - gbegin[si]);
        }
        HALO_TRY(mbuf_push(m, src));
      }
    }
  }

  /* 4. pieces in: into the receiver's work, after its gathered values */
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    HALO_TRY(HALO_ALLOC(wpos[c], l->n));
    for (int k = 0; k < l->n_pieces; k++) {
      const int ri = halo_node_local(in, l->piece_receiver[k]);
      if (ri < 0)
        HALO_FAIL(HALO_ERR_INTERNAL, "receiver %d is not on node %d", l->piece_receiver[k],
                  in->node_id);
      if (l->piece_sender[k] < 0 || l->piece_sender[k] >= in->size)
        HALO_FAIL(HALO_ERR_INTERNAL, "piece %d from node %d has no sender", k, l->node);
      mbuf *m;
      HALO_TRY(mlist_add(RECV(ri, PX), l->piece_sender[k], k, &m));
      for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++) {
        const int64_t w = gwork[ri] + xwork[ri]++;
        wpos[c][e] = w;
        HALO_TRY(mbuf_push(m, in->pat[ri].n_ghost + w));
        n_red += l->dst_ptr[e + 1] - l->dst_ptr[e];
      }
    }
  }

  /* 5. redistribution: receiver -> every rank of the node that needs an entry */
  HALO_TRY(HALO_ALLOC(red, n_red));
  n_red = 0;
  for (int c = 0; c < L->n_in; c++) {
    const halo_link *l = &L->in[c];
    for (int k = 0; k < l->n_pieces; k++) {
      const int ri = halo_node_local(in, l->piece_receiver[k]);
      for (int64_t e = l->piece_start[k]; e < l->piece_start[k + 1]; e++)
        for (int64_t d = l->dst_ptr[e]; d < l->dst_ptr[e + 1]; d++) {
          const int qi = halo_node_local(in, l->dst_rank[d]);
          if (qi < 0)
            HALO_FAIL(HALO_ERR_INTERNAL, "rank %d is not on node %d", l->dst_rank[d], in->node_id);
          red[n_red++] = (quad){ri, qi, l->dst_ghost[d], wpos[c][e]};
        }
    }
  }
  if (n_red > 1) qsort(red, (size_t)n_red, sizeof *red, cmp_quad);
  for (int64_t t = 0; t < n_red; t++) {
    const int ri = (int)red[t].a, qi = (int)red[t].b;
    mbuf *a, *b;
    HALO_TRY(mlist_get(SEND(ri, PR), in->ranks[qi], 0, &a));
    HALO_TRY(mlist_get(RECV(qi, PR), in->ranks[ri], 0, &b));
    HALO_TRY(mbuf_push(a, in->pat[ri].n_local + red[t].d));
    HALO_TRY(mbuf_push(b, red[t].c));
  }

  /* 6. the schedules */
  for (int i = 0; i < R; i++) {
    halo_schedule *sc = &sched[i];
    sc->strategy = s;
    sc->rank = in->ranks[i];
    sc->size = in->size;
    sc->n_local = in->pat[i].n_local;
    sc->n_ghost = in->pat[i].n_ghost;
    sc->n_work = gwork[i] + xwork[i];
    sc->message_cap_used = s == HALO_STRATEGY_SPLIT ? L->message_cap_used : 0;
    sc->n_phases = n_phases;
    for (int ph = 0; ph < n_phases; ph++) {
      halo_phase *f = &sc->phase[ph];
      f->scope = ph == PX ? HALO_SCOPE_GLOBAL : HALO_SCOPE_NODE;
      HALO_TRY(mlist_to_phase(SEND(i, ph), &f->n_send, &f->send, &f->send_total, &f->pack));
      HALO_TRY(mlist_to_phase(RECV(i, ph), &f->n_recv, &f->recv, &f->recv_total, &f->unpack));
    }
  }
#undef SEND
#undef RECV
cleanup:
  if (send)
    for (int t = 0; t < 3 * R; t++) mlist_free(&send[t]);
  if (recv)
    for (int t = 0; t < 3 * R; t++) mlist_free(&recv[t]);
  if (wpos)
    for (int c = 0; c < L->n_in; c++) halo_free(wpos[c]);
  halo_free(wpos);
  halo_free(red);
  halo_free(g);
  halo_free(gbegin);
  halo_free(xwork);
  halo_free(gwork);
  halo_free(recv);
  halo_free(send);
  if (st != HALO_SUCCESS)
    for (int i = 0; i < R; i++) halo_schedule_free(&sched[i]);
  return st;
}
