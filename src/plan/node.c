/* Node-aware strategies, the shared bottom layer: links of a node, and the
 * dealing and pairing the strategies' decisions share. */
#include <stdlib.h>
#include <string.h>

#include "plan/node.h"

int halo_node_local_index(const halo_node_input *in, int r) {
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

halo_status halo_link_pieces_alloc(halo_link *l, int n_pieces) {
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

/* ---- sorting records ------------------------------------------------------- */

/* Bits of x (0 for 0). */
static int bit_length(uint64_t x) {
  int b = 0;
  while (x) b++, x >>= 1;
  return b;
}

/* Inputs of at most this many sorted runs are merged, not radix sorted. */
#define MERGE_RUNS 64

/* Sort (key, idx) pairs that form at most MERGE_RUNS ascending runs, stably (equal
 * keys keep their order: the earlier run first), by a merge of the runs through a
 * binary heap of their heads, ordered by (key, run); new arrays replace *key_p and
 * *idx_p. */
static halo_status merge_runs(int64_t **key_p, int64_t **idx_p, int64_t n) {
  halo_status st = HALO_SUCCESS;
  const int64_t *key = *key_p, *idx = *idx_p;
  int64_t start[MERGE_RUNS + 1], pos[MERGE_RUNS];
  int heap[MERGE_RUNS], nh = 0, nr = 0;
  int64_t *ok = NULL, *oi = NULL;
  HALO_TRY(HALO_ALLOC(ok, n));
  HALO_TRY(HALO_ALLOC(oi, n));
  start[nr++] = 0;
  for (int64_t i = 1; i < n; i++)
    if (key[i] < key[i - 1]) start[nr++] = i;
  start[nr] = n;
#define BEFORE(a, b) (key[pos[a]] < key[pos[b]] || (key[pos[a]] == key[pos[b]] && (a) < (b)))
  for (int r = 0; r < nr; r++) { /* sift up */
    pos[r] = start[r];
    int c = nh++;
    heap[c] = r;
    while (c > 0 && BEFORE(heap[c], heap[(c - 1) / 2])) {
      const int w = heap[c];
      heap[c] = heap[(c - 1) / 2], heap[(c - 1) / 2] = w;
      c = (c - 1) / 2;
    }
  }
  for (int64_t o = 0; o < n; o++) {
    const int r = heap[0];
    ok[o] = key[pos[r]], oi[o] = idx[pos[r]];
    if (++pos[r] == start[r + 1]) heap[0] = heap[--nh]; /* run r is done */
    for (int c = 0;;) {                                 /* sift down */
      const int l = 2 * c + 1, rt = l + 1;
      int m = c;
      if (l < nh && BEFORE(heap[l], heap[m])) m = l;
      if (rt < nh && BEFORE(heap[rt], heap[m])) m = rt;
      if (m == c) break;
      const int w = heap[c];
      heap[c] = heap[m], heap[m] = w;
      c = m;
    }
  }
#undef BEFORE
  halo_free(*key_p);
  halo_free(*idx_p);
  *key_p = ok, *idx_p = oi; /* the merged arrays replace the input's */
  ok = oi = NULL;
cleanup:
  halo_free(oi);
  halo_free(ok);
  return st;
}

halo_status halo_node_sort_records(void *records, int64_t n, size_t size, int n_fields,
                                   halo_record_field_fn field,
                                   int (*cmp)(const void *, const void *)) {
  halo_status st = HALO_SUCCESS;
  int64_t *key = NULL, *idx = NULL, lo[8];
  int shift[8], bits = 0;
  char *tmp = NULL;
  if (n < 2) return HALO_SUCCESS;
  if (n_fields < 1 || n_fields > 8)
    return HALO_ERROR(HALO_ERR_INTERNAL, "a record sort by %d fields: 1 to 8", n_fields);
  /* each field's range, packed from the least significant field up */
  for (int f = n_fields - 1; f >= 0; f--) {
    int64_t a = field(records, 0, f), b = a;
    for (int64_t i = 1; i < n; i++) {
      const int64_t x = field(records, i, f);
      if (x < a) a = x;
      if (x > b) b = x;
    }
    lo[f] = a;
    shift[f] = bits;
    bits += bit_length((uint64_t)b - (uint64_t)a);
    if (bits > 63) { /* too wide for a non-negative key */
      qsort(records, (size_t)n, size, cmp);
      return HALO_SUCCESS;
    }
  }
  HALO_TRY(HALO_ALLOC(key, n));
  HALO_TRY(HALO_ALLOC(idx, n));
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = 0;
    for (int f = 0; f < n_fields; f++)
      k |= ((uint64_t)field(records, i, f) - (uint64_t)lo[f]) << shift[f];
    key[i] = (int64_t)k, idx[i] = i;
  }
  int64_t runs = 1; /* the builders' inputs come in a few sorted runs */
  for (int64_t i = 1; i < n && runs <= MERGE_RUNS; i++) runs += key[i] < key[i - 1];
  if (runs == 1) goto cleanup;
  if (runs <= MERGE_RUNS)
    HALO_TRY(merge_runs(&key, &idx, n)); /* the order the radix sort gives, in one pass */
  else                                   /* the core's stable radix sort of the packed keys */
    HALO_TRY(halo_sort_i64_pairs(key, idx, n));
  /* then the records */
  HALO_TRY(HALO_ALLOC(tmp, (size_t)n * size));
  for (int64_t i = 0; i < n; i++)
    memcpy(tmp + (size_t)i * size, (char *)records + (size_t)idx[i] * size, size);
  memcpy(records, tmp, (size_t)n * size);
cleanup:
  halo_free(tmp);
  halo_free(idx);
  halo_free(key);
  return st;
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

static int64_t item_field(const void *items, int64_t i, int f) {
  const item_t *x = (const item_t *)items + i;
  return f == 0 ? x->node : f == 1 ? x->gid : x->rank;
}

/* Links from sorted items; incoming links keep the destinations (keep_dst). */
static halo_status links_from_items(const item_t *it, int64_t n, int dedup, int keep_dst,
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
    if (keep_dst) {
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
        if (keep_dst) k->dst_ptr[e] = t - i;
      } else if (it[t].owner != k->owner[e]) {
        HALO_FAIL(HALO_ERR_INTERNAL, "value %lld has two owners, %d and %d", (long long)it[t].gid,
                  k->owner[e], it[t].owner);
      }
      if (keep_dst) {
        k->dst_rank[t - i] = it[t].rank;
        k->dst_ghost[t - i] = it[t].ghost;
      }
    }
    if (keep_dst) k->dst_ptr[m] = j - i;
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

/* The items of a node, by runs: each message with another node is a run of
 * items; its values belong to one owner and, where the patterns are as the
 * builders make them, rise. A message of a rank with another node: */
typedef struct {
  int node, owner, rank; /* the other node; the values' owner; the destination */
  int i, m;              /* the node's rank (local index) and its message */
} run_desc;

static int cmp_run_desc(const void *a, const void *b) {
  const run_desc *x = a, *y = b;
  if (x->node != y->node) return (x->node > y->node) - (x->node < y->node);
  if (x->owner != y->owner) return (x->owner > y->owner) - (x->owner < y->owner);
  return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Runs merged by a scan of their heads: at most this many a (node, owner). */
#define SCAN_RUNS 32

/* The runs of one (node, owner), values v[q][at[q] .. end[q]) + off[q] in
 * [lo, lo + span), merged by counting instead of by their heads where the
 * owner's range is not much wider than the runs: entries by value, and a
 * value's items in run order (the order the scan of heads gives, ties to the
 * lower run). cnt: span + 1 counters. Entries from *e_p, items from *t_p. */
static void group_by_counts(int nr, const int64_t *const *v, const int64_t *at, const int64_t *end,
                            const int64_t *off, const int *dst, int64_t lo, int64_t span, int owner,
                            int dedup, int keep_dst, halo_link *k, int64_t *cnt, int64_t *e_p,
                            int64_t *t_p) {
  memset(cnt, 0, (size_t)(span + 1) * sizeof *cnt);
  for (int q = 0; q < nr; q++) {
    const int64_t *x = v[q], d = off[q] - lo;
    for (int64_t a = at[q]; a < end[q]; a++) cnt[x[a] + d]++;
  }
  int64_t e = *e_p, t = *t_p;
  const int64_t t0 = t;
  for (int64_t x = 0; x < span; x++) { /* entries; cnt[x] becomes the value's first item */
    const int64_t c = cnt[x];
    cnt[x] = t - t0;
    if (!c) continue;
    for (int64_t r = 0; r < (dedup ? 1 : c); r++) {
      k->gid[e] = lo + x;
      k->owner[e] = owner;
      if (keep_dst) k->dst_ptr[e] = t + (dedup ? 0 : r);
      e++;
    }
    t += c;
  }
  if (keep_dst) /* the items, by value, in run order */
    for (int q = 0; q < nr; q++) {
      const int64_t *x = v[q], d = off[q] - lo;
      for (int64_t a = at[q]; a < end[q]; a++) {
        const int64_t w = t0 + cnt[x[a] + d]++;
        k->dst_rank[w] = dst[q];
        k->dst_ghost[w] = a;
      }
    }
  *e_p = e, *t_p = t;
}

/* The outgoing (incoming = 0) or incoming links of a node, as links_from_items
 * makes them from the items in the order of cmp_item, where every message with
 * another node rises and stays in its owner's range, no two have the same (node,
 * owner, destination) and no (node, owner) has more than SCAN_RUNS: then each
 * (node, owner)'s entries are the merge of its messages, and owners' ranges rise
 * with the owner. *done = 0 where they are not: the caller sorts the items. */
static halo_status links_by_runs(const halo_node_input *in, int incoming, int keep_dst, int dedup,
                                 halo_link **links_p, int *n_links_p, int *done) {
  halo_status st = HALO_SUCCESS;
  run_desc *rd = NULL;
  halo_link *links = NULL;
  int64_t *cnt = NULL, n_cnt = 0;
  int nd = 0, n_links = 0;
  *done = 0;
  for (int i = 0; i < in->n_ranks; i++) /* at most every message */
    nd += incoming ? in->pat[i].n_recv : in->pat[i].n_send;
  HALO_TRY(HALO_ALLOC(rd, nd));
  nd = 0;
  for (int i = 0; i < in->n_ranks; i++) {
    const halo_pattern *p = &in->pat[i];
    const int me = in->ranks[i];
    const int *nodes = incoming ? in->recv_node[i] : in->send_node[i];
    const int nm = incoming ? p->n_recv : p->n_send;
    for (int m = 0; m < nm; m++) {
      const halo_msg *g = incoming ? &p->recv[m] : &p->send[m];
      if (nodes[m] == in->node_id || g->count == 0) continue; /* no item: no link */
      const int owner = incoming ? g->peer : me;
      if (owner < 0 || owner >= in->size) goto cleanup; /* the sort reports it */
      const int64_t lo = in->col_ranges[owner], hi = in->col_ranges[owner + 1];
      const int64_t *v = incoming ? in->ghost_ids[i] + g->offset : p->send_idx + g->offset;
      const int64_t base = incoming ? 0 : in->col_ranges[me];
      for (int64_t k = 0; k < g->count; k++)
        if (base + v[k] < lo || base + v[k] >= hi || (k > 0 && v[k] < v[k - 1])) goto cleanup;
      rd[nd++] = (run_desc){nodes[m], owner, incoming ? me : g->peer, i, m};
    }
  }
  if (nd > 1) qsort(rd, (size_t)nd, sizeof *rd, cmp_run_desc);
  for (int t = 1; t < nd; t++) {
    if (!cmp_run_desc(&rd[t - 1], &rd[t])) goto cleanup;
    n_links += rd[t].node != rd[t - 1].node;
  }
  for (int t0 = 0, t1; t0 < nd; t0 = t1) {
    for (t1 = t0; t1 < nd && rd[t1].node == rd[t0].node && rd[t1].owner == rd[t0].owner;) t1++;
    if (t1 - t0 > SCAN_RUNS) goto cleanup;
  }
  n_links += nd > 0;
  HALO_TRY(HALO_CALLOC(links, n_links));
  for (int t0 = 0, t1, l = 0; t0 < nd; t0 = t1, l++) {
    int64_t T = 0;
    for (t1 = t0; t1 < nd && rd[t1].node == rd[t0].node; t1++) {
      const halo_pattern *p = &in->pat[rd[t1].i];
      T += incoming ? p->recv[rd[t1].m].count : p->send[rd[t1].m].count;
    }
    halo_link *k = &links[l];
    k->node = rd[t0].node;
    HALO_TRY(HALO_ALLOC(k->gid, T)); /* at most T entries */
    HALO_TRY(HALO_ALLOC(k->owner, T));
    if (keep_dst) {
      HALO_TRY(HALO_ALLOC(k->dst_ptr, T + 1));
      HALO_TRY(HALO_ALLOC(k->dst_rank, T));
      HALO_TRY(HALO_ALLOC(k->dst_ghost, T));
    }
    int64_t e = 0, t = 0; /* entries, items */
    for (int g0 = t0, g1; g0 < t1; g0 = g1) {
      /* the runs of one owner: their heads, scanned for the least (gid, rank) */
      const int64_t *v[SCAN_RUNS];
      int64_t at[SCAN_RUNS], end[SCAN_RUNS], off[SCAN_RUNS];
      int dst[SCAN_RUNS], nr = 0;
      const int owner = rd[g0].owner;
      for (g1 = g0; g1 < t1 && rd[g1].owner == owner; g1++, nr++) {
        const halo_pattern *p = &in->pat[rd[g1].i];
        const halo_msg *g = incoming ? &p->recv[rd[g1].m] : &p->send[rd[g1].m];
        v[nr] = incoming ? in->ghost_ids[rd[g1].i] : p->send_idx;
        at[nr] = g->offset, end[nr] = g->offset + g->count;
        off[nr] = incoming ? 0 : in->col_ranges[owner];
        dst[nr] = rd[g1].rank;
      }
      /* by counting where the owner's range is no wider than four items a value */
      const int64_t lo = in->col_ranges[owner], span = in->col_ranges[owner + 1] - lo;
      int64_t items = 0;
      for (int q = 0; q < nr; q++) items += end[q] - at[q];
      if (nr > 1 && span <= 4 * items) {
        if (span + 1 > n_cnt) {
          halo_free(cnt);
          cnt = NULL;
          n_cnt = span + 1;
          HALO_TRY(HALO_ALLOC(cnt, n_cnt));
        }
        group_by_counts(nr, v, at, end, off, dst, lo, span, owner, dedup, keep_dst, k, cnt, &e, &t);
        continue;
      }
      const int64_t first = e;
      for (;;) {
        int r = -1;
        int64_t x = 0;
        for (int q = 0; q < nr; q++)
          if (at[q] < end[q] && (r < 0 || v[q][at[q]] + off[q] < x))
            r = q, x = v[q][at[q]] + off[q];
        if (r < 0) break;
        if (!dedup || e == first || k->gid[e - 1] != x) {
          k->gid[e] = x;
          k->owner[e] = owner;
          if (keep_dst) k->dst_ptr[e] = t;
          e++;
        }
        if (keep_dst) {
          k->dst_rank[t] = dst[r];
          k->dst_ghost[t] = at[r];
        }
        t++, at[r]++;
      }
    }
    k->n = e;
    if (keep_dst) k->dst_ptr[e] = t;
    if (e < T && e > 0) { /* duplicates removed: the entries' arrays to their size */
      int64_t *g = halo_realloc(k->gid, (size_t)e * sizeof *g);
      if (g) k->gid = g;
      int *o = halo_realloc(k->owner, (size_t)e * sizeof *o);
      if (o) k->owner = o;
      if (keep_dst) {
        int64_t *d = halo_realloc(k->dst_ptr, (size_t)(e + 1) * sizeof *d);
        if (d) k->dst_ptr = d;
      }
    }
  }
  *links_p = links;
  *n_links_p = n_links;
  links = NULL;
  *done = 1;
cleanup:
  if (links) {
    for (int l = 0; l < n_links; l++) link_free(&links[l]);
    halo_free(links);
  }
  halo_free(cnt);
  halo_free(rd);
  return st;
}

halo_status halo_node_links_build(const halo_node_input *in, int dedup, halo_node_links *L) {
  return halo_node_links_build_lean(in, dedup, 1, L);
}

halo_status halo_node_links_build_lean(const halo_node_input *in, int dedup, int destinations,
                                       halo_node_links *L) {
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
  int by_runs_out, by_runs_in;
  const int keep_dst = destinations || !dedup; /* without dedup, an entry is a destination */
  HALO_TRY(links_by_runs(in, 0, 0, dedup, &L->out, &L->n_out, &by_runs_out));
  HALO_TRY(links_by_runs(in, 1, keep_dst, dedup, &L->in, &L->n_in, &by_runs_in));
  if (by_runs_out && by_runs_in) goto cleanup;
  halo_node_links_free(L);
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
  HALO_TRY(halo_node_sort_records(out, n_out, sizeof *out, 3, item_field, cmp_item));
  HALO_TRY(halo_node_sort_records(inc, n_in, sizeof *inc, 3, item_field, cmp_item));
  HALO_TRY(links_from_items(out, n_out, dedup, 0, &L->out, &L->n_out));
  HALO_TRY(links_from_items(inc, n_in, dedup, keep_dst, &L->in, &L->n_in));
cleanup:
  halo_free(inc);
  halo_free(out);
  if (st != HALO_SUCCESS) halo_node_links_free(L);
  return st;
}

/* ---- dealing and pairing ------------------------------------------------------ */

typedef struct {
  int64_t size;
  int index;
} deal_item;

static int cmp_deal(const void *a, const void *b) {
  const deal_item *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return (x->index > y->index) - (x->index < y->index);
}

halo_status halo_node_deal_round_robin(int n, const int64_t *size, int n_ranks, int first, int step,
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

halo_status halo_node_pair_links(const halo_node_input *in, const halo_link *links, int n,
                                 int *local) {
  halo_status st = HALO_SUCCESS;
  int64_t *size = NULL;
  HALO_TRY(HALO_ALLOC(size, n));
  for (int i = 0; i < n; i++) size[i] = links[i].n;
  HALO_TRY(halo_node_deal_round_robin(n, size, in->n_ranks, 0, 1, local));
cleanup:
  halo_free(size);
  return st;
}
