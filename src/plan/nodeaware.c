/* Distributed set-up of the node-aware strategies. The pure functions of
 * nodebuild.c and nodein.c do the work, from the strategy's descriptor, and
 * decisions.c carries the decisions between nodes. A
 * node's work is split in two halves that share nothing but the decisions:
 * the outgoing half (links to other nodes, who sends each piece, the gather
 * and the pieces sent) on the node's lowest rank, its leader, and the incoming
 * half (links from other nodes, the pieces and their receivers) on its second
 * rank (the leader too on a node of one rank). The halves run at once, each on
 * half of the node's input, and every rank of the node builds its own part of
 * the incoming half (the pieces it receives, their redistribution):
 *
 *   1. every rank learns the node of each of its pattern peers;
 *   2. the node's messages with other nodes are gathered (MPI_Gatherv): the
 *      sends on the outgoing half, the receives on the incoming half;
 *   3. each half builds its links; the incoming half decides the pieces and
 *      their receivers;
 *   4. incoming halves send the receive decisions to the source nodes' leaders;
 *   5. leaders decide who sends each outgoing piece and tell the incoming half
 *      of each destination (the rank their receive decision came from);
 *   6. the leader builds the outgoing half's part of the node's schedules and
 *      scatters it; the incoming half's rank sends every rank of the node the
 *      table of pieces and their entries; each rank finds its ghosts' places
 *      in the receivers' work arrays and sends them to the receivers (all to
 *      all over the node), and each builds its part of the incoming half from
 *      the places it got (nodein.h); each rank joins its two parts: the
 *      received pieces' places in its work array, numbered from 0, follow the
 *      gathered values, which only the outgoing half counts;
 *   7. each rank adds its messages within the node (owner to reader, as Standard
 *      sends them), which the halves never saw: the same schedules as the
 *      node-wide build of the simulator, byte for byte, for less gathered, built
 *      and scattered on any one rank.
 *
 * Every step that can fail on one rank is followed by an agreement over the
 * plan's communicator (over the node's, once only the node's ranks talk), so
 * that no rank waits for one that gave up. No array of size P is made: halves
 * talk only to the halves they exchange data with. */
#include <limits.h>
#include <string.h>

#include "plan/decisions.h"
#include "plan/nodeaware.h"
#include "plan/nodein.h"
#include "tags.h"

/* 1. The node of each receive peer and each send peer. */
static halo_status peer_nodes(MPI_Comm comm, const halo_topology *t, const halo_pattern *p,
                              int *recv_node, int *send_node) {
  halo_status st = HALO_SUCCESS;
  MPI_Request *req = NULL;
  int n = 0;
  if (t->virtual_nodes > 0) {
    for (int i = 0; i < p->n_recv; i++)
      recv_node[i] = halo_virtual_node(p->recv[i].peer, t->virtual_nodes);
    for (int i = 0; i < p->n_send; i++)
      send_node[i] = halo_virtual_node(p->send[i].peer, t->virtual_nodes);
    return HALO_SUCCESS;
  }
  HALO_TRY(HALO_ALLOC(req, 2 * (p->n_recv + p->n_send)));
  for (int i = 0; i < p->n_recv; i++) {
    HALO_TRY_MPI(MPI_Isend(&t->node_id, 1, MPI_INT, p->recv[i].peer, HALO_TAG_NODE_TO_OWNER, comm,
                           &req[n++]));
    HALO_TRY_MPI(MPI_Irecv(&recv_node[i], 1, MPI_INT, p->recv[i].peer, HALO_TAG_NODE_TO_READER,
                           comm, &req[n++]));
  }
  for (int i = 0; i < p->n_send; i++) {
    HALO_TRY_MPI(MPI_Isend(&t->node_id, 1, MPI_INT, p->send[i].peer, HALO_TAG_NODE_TO_READER, comm,
                           &req[n++]));
    HALO_TRY_MPI(MPI_Irecv(&send_node[i], 1, MPI_INT, p->send[i].peer, HALO_TAG_NODE_TO_OWNER, comm,
                           &req[n++]));
  }
  HALO_TRY_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
cleanup:
  halo_free(req);
  return st;
}

/* The halves of a node's work. */
enum { HALF_OUT = 1, HALF_IN = 2 };

/* 2. What a half needs of a rank's pattern: its messages with other nodes, the sends
 *    (HALF_OUT) or the receives (HALF_IN). The messages within the node go owner to
 *    reader, as Standard sends them, and each rank adds them to its schedule itself
 *    (add_direct). As a flat list: rank, n_local, n_ghost, the receives and sends with
 *    other nodes, send_total; then (peer, offset, count, node) and the ghost ids of
 *    each such receive, and (peer, offset, count, node) and the send indices of each
 *    such send. Offsets are those of the whole pattern. */
static halo_status pack_input(int rank, int my_node, const halo_pattern *p,
                              const int64_t *ghost_ids, const int *recv_node, const int *send_node,
                              int half, halo_vec *out) {
  int64_t send_total = 0, n_recv = 0, n_send = 0;
  const int with_recv = half == HALF_IN, with_send = half == HALF_OUT;
  for (int i = 0; with_send && i < p->n_send; i++) send_total += p->send[i].count;
  for (int i = 0; with_recv && i < p->n_recv; i++) n_recv += recv_node[i] != my_node;
  for (int i = 0; with_send && i < p->n_send; i++) n_send += send_node[i] != my_node;
  const int64_t head[] = {rank, p->n_local, p->n_ghost, n_recv, n_send, send_total};
  HALO_CHECK(halo_vec_append(out, head, 6));
  for (int i = 0; with_recv && i < p->n_recv; i++) {
    if (recv_node[i] == my_node) continue;
    const int64_t m[] = {p->recv[i].peer, p->recv[i].offset, p->recv[i].count, recv_node[i]};
    HALO_CHECK(halo_vec_append(out, m, 4));
    HALO_CHECK(halo_vec_append(out, ghost_ids + p->recv[i].offset, p->recv[i].count));
  }
  for (int i = 0; with_send && i < p->n_send; i++) {
    if (send_node[i] == my_node) continue;
    const int64_t m[] = {p->send[i].peer, p->send[i].offset, p->send[i].count, send_node[i]};
    HALO_CHECK(halo_vec_append(out, m, 4));
    HALO_CHECK(halo_vec_append(out, p->send_idx + p->send[i].offset, p->send[i].count));
  }
  return HALO_SUCCESS;
}

void halo_node_input_free(halo_node_input *in) {
  if (!in) return;
  for (int i = 0; i < in->n_ranks; i++) {
    if (in->pat) halo_pattern_free(&in->pat[i]);
    if (in->ghost_ids) halo_free(in->ghost_ids[i]);
    if (in->recv_node) halo_free(in->recv_node[i]);
    if (in->send_node) halo_free(in->send_node[i]);
  }
  halo_free(in->pat);
  halo_free(in->ghost_ids);
  halo_free(in->recv_node);
  halo_free(in->send_node);
  halo_free(in->ranks);
  memset(in, 0, sizeof *in);
}

#define NEED(k)                                                                                    \
  do {                                                                                             \
    if (pos + (k) > n || (k) < 0)                                                                  \
      HALO_FAIL(HALO_ERR_INTERNAL, "a gathered pattern ends too early");                           \
  } while (0)

/* The node's input from the gathered flat lists of its ranks: their messages with
 * other nodes, with the ghost ids and send indices of those (the rest of the arrays is
 * not read). */
static halo_status unpack_input(const int64_t *buf, int64_t n, int n_ranks, int node_id, int size,
                                const int64_t *col_ranges, halo_node_input *in) {
  halo_status st = HALO_SUCCESS;
  int64_t pos = 0;
  memset(in, 0, sizeof *in);
  in->node_id = node_id;
  in->size = size;
  in->col_ranges = col_ranges;
  HALO_TRY(HALO_CALLOC(in->ranks, n_ranks));
  HALO_TRY(HALO_CALLOC(in->pat, n_ranks));
  HALO_TRY(HALO_CALLOC(in->ghost_ids, n_ranks));
  HALO_TRY(HALO_CALLOC(in->recv_node, n_ranks));
  HALO_TRY(HALO_CALLOC(in->send_node, n_ranks));
  in->n_ranks = n_ranks;
  for (int i = 0; i < n_ranks; i++) {
    halo_pattern *p = &in->pat[i];
    NEED(6);
    const int64_t *h = buf + pos;
    in->ranks[i] = (int)h[0];
    p->rank = (int)h[0], p->size = size, p->n_local = h[1], p->n_ghost = h[2];
    p->n_recv = (int)h[3], p->n_send = (int)h[4];
    const int64_t send_total = h[5];
    pos += 6;
    if (p->n_ghost < 0 || send_total < 0)
      HALO_FAIL(HALO_ERR_INTERNAL, "a gathered pattern has %lld ghosts and sends %lld values",
                (long long)p->n_ghost, (long long)send_total);
    HALO_TRY(HALO_ALLOC(p->recv, p->n_recv));
    HALO_TRY(HALO_ALLOC(in->recv_node[i], p->n_recv));
    HALO_TRY(HALO_ALLOC(in->ghost_ids[i], p->n_ghost));
    for (int m = 0; m < p->n_recv; m++) {
      NEED(4);
      p->recv[m] = (halo_msg){(int)buf[pos], buf[pos + 1], buf[pos + 2]};
      in->recv_node[i][m] = (int)buf[pos + 3];
      pos += 4;
      const int64_t off = p->recv[m].offset, c = p->recv[m].count;
      if (off < 0 || c < 0 || off > p->n_ghost - c)
        HALO_FAIL(HALO_ERR_INTERNAL, "a gathered receive of %lld at %lld, of %lld ghosts",
                  (long long)c, (long long)off, (long long)p->n_ghost);
      NEED(c);
      if (c) memcpy(in->ghost_ids[i] + off, buf + pos, (size_t)c * sizeof(int64_t));
      pos += c;
    }
    HALO_TRY(HALO_ALLOC(p->send, p->n_send));
    HALO_TRY(HALO_ALLOC(in->send_node[i], p->n_send));
    HALO_TRY(HALO_ALLOC(p->send_idx, send_total));
    for (int m = 0; m < p->n_send; m++) {
      NEED(4);
      p->send[m] = (halo_msg){(int)buf[pos], buf[pos + 1], buf[pos + 2]};
      in->send_node[i][m] = (int)buf[pos + 3];
      pos += 4;
      const int64_t off = p->send[m].offset, c = p->send[m].count;
      if (off < 0 || c < 0 || off > send_total - c)
        HALO_FAIL(HALO_ERR_INTERNAL, "a gathered send of %lld at %lld, of %lld", (long long)c,
                  (long long)off, (long long)send_total);
      NEED(c);
      if (c) memcpy(p->send_idx + off, buf + pos, (size_t)c * sizeof(int64_t));
      pos += c;
    }
  }
  if (in->ranks[0] != node_id)
    HALO_FAIL(HALO_ERR_INTERNAL, "node %d is led by rank %d", node_id, in->ranks[0]);
cleanup:
  if (st != HALO_SUCCESS) halo_node_input_free(in);
  return st;
}
#undef NEED

/* Gather variable-size int64 lists on rank root of a communicator. */
static halo_status gatherv(MPI_Comm comm, int root, const halo_vec *mine, int64_t **all_p,
                           int64_t *n_all_p) {
  halo_status st = HALO_SUCCESS;
  int rank, size, *counts = NULL, *displs = NULL;
  int64_t *all = NULL, total = 0;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (mine->n > INT_MAX)
    HALO_FAIL(HALO_ERR_OUT_OF_RANGE, "a pattern of %lld words is too large", (long long)mine->n);
  int n = (int)mine->n;
  /* the root's failures are agreed over the node before each collective,
   * which the node's other ranks would otherwise wait in */
  if (rank == root) st = HALO_ALLOC(counts, size);
  if (rank == root && st == HALO_SUCCESS) st = HALO_ALLOC(displs, size);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, root, comm));
  if (rank == root) {
    for (int r = 0; r < size && st == HALO_SUCCESS; r++) {
      if (total > INT_MAX - counts[r])
        st = HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "the patterns of one node exceed %d words", INT_MAX);
      displs[r] = (int)total;
      total += counts[r];
    }
    if (st == HALO_SUCCESS) st = HALO_ALLOC(all, total);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Gatherv(mine->v, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, root, comm));
  *all_p = all;
  *n_all_p = total;
  all = NULL;
cleanup:
  halo_free(all);
  halo_free(displs);
  halo_free(counts);
  return st;
}

/* 7. Add this rank's messages within its node (dm: peer, offset into dv, count; by
 *    increasing peer) to one side of a phase of its schedule. Each goes before what the
 *    leader put in a message to the same peer, as the node-wide build orders them
 *    (nodebuild.c adds the direct messages first), and such a peer has at most one
 *    message in the phase. */
static halo_status merge_direct(int *n_p, halo_msg **msg_p, int64_t *total_p, int64_t **idx_p,
                                int dn, const halo_msg *dm, const int64_t *dv) {
  halo_status st = HALO_SUCCESS;
  const int n = *n_p;
  const halo_msg *m = *msg_p;
  const int64_t *idx = *idx_p;
  halo_msg *nm = NULL;
  int64_t *nidx = NULL, total = *total_p;
  if (dn == 0) return HALO_SUCCESS;
  for (int b = 0; b < dn; b++) total += dm[b].count;
  HALO_TRY(HALO_ALLOC(nm, n + dn));
  HALO_TRY(HALO_ALLOC(nidx, total));
  int a = 0, b = 0, k = 0;
  int64_t off = 0;
  while (a < n || b < dn) {
    int peer;
    int64_t c = 0;
    if (b < dn && (a == n || dm[b].peer <= m[a].peer)) {
      peer = dm[b].peer;
      memcpy(nidx + off, dv + dm[b].offset, (size_t)dm[b].count * sizeof *nidx);
      c = dm[b].count;
      if (b > 0 && dm[b - 1].peer >= peer)
        HALO_FAIL(HALO_ERR_INTERNAL, "on-node messages not by increasing peer");
      b++;
      if (a < n && m[a].peer == peer) {
        if (a + 1 < n && m[a + 1].peer == peer)
          HALO_FAIL(HALO_ERR_INTERNAL, "rank %d of the node has two messages in one phase", peer);
      } else {
        nm[k++] = (halo_msg){peer, off, c};
        off += c;
        continue;
      }
    } else {
      peer = m[a].peer;
    }
    memcpy(nidx + off + c, idx + m[a].offset, (size_t)m[a].count * sizeof *nidx);
    c += m[a].count;
    a++;
    nm[k++] = (halo_msg){peer, off, c};
    off += c;
  }
  halo_free(*msg_p);
  halo_free(*idx_p);
  *n_p = k, *msg_p = nm, *total_p = total, *idx_p = nidx;
  nm = NULL, nidx = NULL;
cleanup:
  halo_free(nidx);
  halo_free(nm);
  return st;
}

/* ... both sides, in the strategy's phase_direct: sends from x_local at the send
 * indices, receives into the ghosts at the receive offsets, as Standard's. */
static halo_status add_direct(halo_schedule *s, int ph, int my_node, const halo_pattern *p,
                              const int *recv_node, const int *send_node) {
  halo_status st = HALO_SUCCESS;
  halo_msg *dm = NULL;
  int64_t *dv = NULL, n_v = 0;
  int dn = 0;
  if (ph < 0 || ph >= s->n_phases)
    return HALO_ERROR(HALO_ERR_INTERNAL, "direct phase %d of %d", ph, s->n_phases);
  halo_phase *f = &s->phase[ph];
  HALO_TRY(HALO_ALLOC(dm, p->n_send > p->n_recv ? p->n_send : p->n_recv));
  for (int i = 0; i < p->n_send; i++)
    if (send_node[i] == my_node)
      dm[dn++] = (halo_msg){p->send[i].peer, p->send[i].offset, p->send[i].count};
  HALO_TRY(merge_direct(&f->n_send, &f->send, &f->send_total, &f->pack, dn, dm, p->send_idx));
  dn = 0;
  for (int i = 0; i < p->n_recv; i++)
    if (recv_node[i] == my_node) n_v += p->recv[i].count;
  HALO_TRY(HALO_ALLOC(dv, n_v));
  n_v = 0;
  for (int i = 0; i < p->n_recv; i++) {
    if (recv_node[i] != my_node) continue;
    dm[dn++] = (halo_msg){p->recv[i].peer, n_v, p->recv[i].count};
    for (int64_t k = 0; k < p->recv[i].count; k++) dv[n_v++] = p->recv[i].offset + k;
  }
  HALO_TRY(merge_direct(&f->n_recv, &f->recv, &f->recv_total, &f->unpack, dn, dm, dv));
cleanup:
  halo_free(dv);
  halo_free(dm);
  return st;
}

/* One half of a node: its input, links and schedules' parts. */
typedef struct {
  halo_node_input in;
  halo_node_links L;
  halo_schedule *sched; /* outgoing half: its part of each rank's schedule */
  int *peer;            /* outgoing half: the rank of each link's incoming half */
} half;

static void half_free(half *h, int node_size) {
  if (h->sched)
    for (int i = 0; i < node_size; i++) halo_schedule_free(&h->sched[i]);
  halo_free(h->sched);
  halo_free(h->peer);
  halo_node_links_free(&h->L);
  halo_node_input_free(&h->in);
  memset(h, 0, sizeof *h);
}

/* 6. A half's parts of the node's schedules, scattered from its rank (root of the
 *    node's communicator); each rank gets its own in *s. Every failure is agreed over
 *    the node but the last, the unpacking, which is this rank's alone: the node's
 *    ranks all come out of it, having taken part in the same collectives. */
static halo_status scatter_part(const halo_topology *t, int root, half *h, halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  const MPI_Comm node_comm = t->node_comm;
  const int node_rank = t->node_rank, node_size = t->node_size;
  int my_count = 0;
  int *counts = NULL, *displs = NULL;
  int64_t *mine = NULL;
  halo_vec packed = {0};
  if (node_rank == root) {
    st = HALO_ALLOC(counts, node_size);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(displs, node_size);
    for (int i = 0; i < node_size && st == HALO_SUCCESS; i++) {
      int64_t before = packed.n;
      if (i == root) { /* the root's own: kept, not packed */
        counts[i] = 0, displs[i] = 0;
        continue;
      }
      st = halo_schedule_pack(&h->sched[i], &packed);
      if (st == HALO_SUCCESS && (packed.n - before > INT_MAX || packed.n > INT_MAX))
        st =
            HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "the schedules of one node exceed %d words", INT_MAX);
      if (st == HALO_SUCCESS) {
        counts[i] = (int)(packed.n - before);
        displs[i] = (int)before;
      }
    }
  }
  /* agreed over the node: its root would otherwise leave the others in the
   * scatter */
  HALO_TRY(halo_agree(node_comm, st));
  HALO_TRY_MPI(MPI_Scatter(counts, 1, MPI_INT, &my_count, 1, MPI_INT, root, node_comm));
  HALO_TRY(halo_agree(node_comm, HALO_ALLOC(mine, my_count)));
  HALO_TRY_MPI(MPI_Scatterv(packed.v, counts, displs, MPI_INT64_T, mine, my_count, MPI_INT64_T,
                            root, node_comm));
  if (node_rank == root) {
    *s = h->sched[root];
    memset(&h->sched[root], 0, sizeof h->sched[root]);
  } else {
    int64_t pos = 0;
    HALO_TRY(halo_schedule_unpack(mine, my_count, &pos, s));
  }
cleanup:
  halo_free(mine);
  halo_free(displs);
  halo_free(counts);
  halo_vec_free(&packed);
  return st;
}

/* 6. A rank's two parts joined into o: the incoming half's (global receives,
 *    redistribution) into the outgoing half's (gather, global sends). The incoming
 *    half numbered the pieces' places in the work array from 0; they follow the
 *    values gathered, which the outgoing half counted (its n_work). */
static halo_status join_parts(const halo_strategy_desc *d, halo_schedule *o, halo_schedule *x) {
  if (x->rank != o->rank || x->size != o->size || x->strategy != o->strategy ||
      x->n_local != o->n_local || x->n_ghost != o->n_ghost || x->n_phases != o->n_phases)
    return HALO_ERROR(HALO_ERR_INTERNAL, "the two halves of rank %d's schedule disagree", o->rank);
  const int64_t g = o->n_work;
  for (int ph = 0; ph < o->n_phases; ph++) {
    halo_phase *f = &o->phase[ph], *h = &x->phase[ph];
    if ((h->n_send && f->n_send) || (h->n_recv && f->n_recv))
      return HALO_ERROR(HALO_ERR_INTERNAL, "both halves of rank %d's schedule fill phase %d",
                        o->rank, ph);
    if (h->n_send) {
      if (ph == d->phase_redistribute && g)
        for (int64_t k = 0; k < h->send_total; k++) h->pack[k] += g;
      halo_free(f->send), halo_free(f->pack);
      f->n_send = h->n_send, f->send = h->send, f->send_total = h->send_total, f->pack = h->pack;
      h->n_send = 0, h->send = NULL, h->send_total = 0, h->pack = NULL;
    }
    if (h->n_recv) {
      if (ph == d->phase_global && g)
        for (int64_t k = 0; k < h->recv_total; k++) h->unpack[k] += g;
      halo_free(f->recv), halo_free(f->unpack);
      f->n_recv = h->n_recv, f->recv = h->recv, f->recv_total = h->recv_total,
      f->unpack = h->unpack;
      h->n_recv = 0, h->recv = NULL, h->recv_total = 0, h->unpack = NULL;
    }
  }
  o->n_work += x->n_work;
  o->message_cap_used = x->message_cap_used; /* the receive decision's */
  return HALO_SUCCESS;
}

/* What a rank gets for its incoming half. */
typedef struct {
  int *node_ranks; /* the node's plan ranks, increasing */
  halo_in_table table;
  int64_t *buf;           /* the node's ranks, its table and its pieces' entries */
  const int64_t *entries; /* in buf */
  int64_t n_entries;
  int64_t *rbuf; /* the places each rank of the node asks of this one */
  int64_t *rcounts;
  halo_vec *ghosts; /* per rank of the node: the ghosts it delivers here */
} in_data;

static void in_data_free(in_data *x, int R) {
  if (x->ghosts)
    for (int i = 0; i < R; i++) halo_vec_free(&x->ghosts[i]);
  halo_free(x->ghosts);
  halo_free(x->rcounts);
  halo_free(x->rbuf);
  halo_free(x->buf);
  halo_in_table_free(&x->table);
  halo_free(x->node_ranks);
  memset(x, 0, sizeof *x);
}

/* Displacements of counts (n of them) as ints, or an error beyond INT_MAX words. */
static halo_status int_displs(const int64_t *n64, int n, int *counts, int *displs,
                              const char *what) {
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    if (n64[i] > INT_MAX || total > INT_MAX - n64[i])
      return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%s of one node exceed %d words", what, INT_MAX);
    counts[i] = (int)n64[i], displs[i] = (int)total;
    total += n64[i];
  }
  return HALO_SUCCESS;
}

/* 6. The incoming half, made by every rank of the node (collective over the node, every
 *    failure agreed over it): the incoming half's rank (root) sends all of them the
 *    node's ranks, the table of pieces and their entries; each rank finds where its
 *    ghosts from other nodes land in the receivers' work arrays and sends each receiver
 *    those places, all to all. What each rank then builds alone (halo_in_build) is in
 *    *x. */
static halo_status in_half_exchange(const halo_topology *t, int root, const half *hi, int dedup,
                                    const halo_pattern *p, const int64_t *ghost_ids,
                                    const int *recv_node, int rank, int size, in_data *x) {
  halo_status st = HALO_SUCCESS;
  const MPI_Comm nc = t->node_comm;
  const int R = t->node_size, is_root = t->node_rank == root;
  halo_vec tab = {0}, sbuf = {0};
  int *scounts = NULL, *sdispls = NULL, *rcounts = NULL, *rdispls = NULL;
  int64_t *n64 = NULL, tn = 0;
  halo_vec *req = NULL;
  memset(x, 0, sizeof *x);
  /* the root: [R, the node's ranks, the table's words, the table, the entries] */
  if (is_root) {
    st = halo_vec_push(&tab, R);
    for (int i = 0; i < R && st == HALO_SUCCESS; i++) st = halo_vec_push(&tab, hi->in.ranks[i]);
    if (st == HALO_SUCCESS) st = halo_vec_push(&tab, 0);
    if (st == HALO_SUCCESS) st = halo_in_table_pack(&hi->L, dedup, &tab);
    if (st == HALO_SUCCESS) tab.v[1 + R] = tab.n - 2 - R;
    if (st == HALO_SUCCESS) st = halo_in_entries_pack(&hi->L, dedup, &tab);
    if (st == HALO_SUCCESS && tab.n > INT_MAX)
      st = HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                      "a node's table of pieces and their entries exceed %d words", INT_MAX);
    tn = tab.n, x->buf = tab.v;
    memset(&tab, 0, sizeof tab);
  }
  HALO_TRY(halo_agree(nc, st));
  HALO_TRY_MPI(MPI_Bcast(&tn, 1, MPI_INT64_T, root, nc));
  if (!is_root) st = HALO_ALLOC(x->buf, tn);
  HALO_TRY(halo_agree(nc, st));
  HALO_TRY_MPI(MPI_Bcast(x->buf, (int)tn, MPI_INT64_T, root, nc));
  const int64_t *tb = x->buf;
  if (tn < 2 + R || tb[0] != R || tb[1 + R] < 0 || tb[1 + R] > tn - 2 - R)
    st = HALO_ERROR(HALO_ERR_INTERNAL, "a node's table of pieces has %lld words for %d ranks",
                    (long long)tn, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(x->node_ranks, R);
  for (int i = 0; i < R && st == HALO_SUCCESS; i++) {
    x->node_ranks[i] = (int)tb[1 + i];
    if (tb[1 + i] < 0 || tb[1 + i] >= size || (i > 0 && tb[1 + i] <= tb[i]) ||
        (i == t->node_rank && tb[1 + i] != rank))
      st = HALO_ERROR(HALO_ERR_INTERNAL, "a node's table of pieces lists its ranks badly");
  }
  if (st == HALO_SUCCESS) st = halo_in_table_unpack(tb + 2 + R, tb[1 + R], size, &x->table);
  if (st == HALO_SUCCESS) {
    x->entries = tb + 2 + R + tb[1 + R];
    x->n_entries = tn - 2 - R - tb[1 + R];
  }
  /* this rank's requests, to each rank of the node */
  if (st == HALO_SUCCESS) st = HALO_CALLOC(req, R);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(x->ghosts, R);
  if (st == HALO_SUCCESS)
    st = halo_in_requests(&x->table, dedup, rank, t->node_id, x->entries, x->n_entries, p,
                          ghost_ids, recv_node, x->node_ranks, R, req, x->ghosts);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(scounts, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(sdispls, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(rcounts, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(rdispls, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(n64, R);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(x->rcounts, R);
  for (int i = 0; i < R && st == HALO_SUCCESS; i++) n64[i] = req[i].n;
  if (st == HALO_SUCCESS) st = int_displs(n64, R, scounts, sdispls, "a rank's requests");
  for (int i = 0; i < R && st == HALO_SUCCESS; i++) {
    st = halo_vec_append(&sbuf, req[i].v, req[i].n);
    halo_vec_free(&req[i]);
  }
  /* the node's failures agreed here: x->buf's bcast was the last collective */
  HALO_TRY(halo_agree(nc, st));
  HALO_TRY_MPI(MPI_Alltoall(scounts, 1, MPI_INT, rcounts, 1, MPI_INT, nc));
  for (int i = 0; i < R; i++) x->rcounts[i] = n64[i] = rcounts[i];
  st = int_displs(n64, R, rcounts, rdispls, "the requests to one rank");
  if (st == HALO_SUCCESS) st = HALO_ALLOC(x->rbuf, (int64_t)rdispls[R - 1] + rcounts[R - 1]);
  HALO_TRY(halo_agree(nc, st));
  HALO_TRY_MPI(MPI_Alltoallv(sbuf.v, scounts, sdispls, MPI_INT64_T, x->rbuf, rcounts, rdispls,
                             MPI_INT64_T, nc));
cleanup:
  if (req)
    for (int i = 0; i < R; i++) halo_vec_free(&req[i]);
  halo_free(req);
  halo_free(n64);
  halo_free(rdispls);
  halo_free(rcounts);
  halo_free(sdispls);
  halo_free(scounts);
  halo_vec_free(&sbuf);
  halo_vec_free(&tab);
  if (st != HALO_SUCCESS) in_data_free(x, R);
  return st;
}

halo_status halo_schedule_build_nodeaware(MPI_Comm comm, const halo_topology *t,
                                          const halo_pattern *p, const int64_t *ghost_ids,
                                          const int64_t *col_ranges, const halo_plan_options *o,
                                          halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int *recv_node = NULL, *send_node = NULL;
  halo_vec mine_out = {0}, mine_in = {0};
  int64_t *all_out = NULL, *all_in = NULL, n_out = 0, n_in = 0;
  half ho = {0}, hi = {0};
  in_data xin = {0};
  halo_schedule part_in = {0};
  const halo_strategy_desc *d = NULL;
  /* the halves' ranks in the node */
  const int root_out = 0, root_in = t->node_size > 1 ? 1 : 0;
  const int is_out = t->node_rank == root_out, is_in = t->node_rank == root_in;
  memset(s, 0, sizeof *s);
  HALO_CHECK(halo_strategy_desc_find(o->strategy, &d)); /* the options agree: all ranks fail */
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));

  /* 1, 2 */
  st = HALO_ALLOC(recv_node, p->n_recv);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(send_node, p->n_send);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(peer_nodes(comm, t, p, recv_node, send_node));
  st = pack_input(rank, t->node_id, p, ghost_ids, recv_node, send_node, HALF_OUT, &mine_out);
  if (st == HALO_SUCCESS)
    st = pack_input(rank, t->node_id, p, ghost_ids, recv_node, send_node, HALF_IN, &mine_in);
  HALO_TRY(halo_agree(comm, st));
  /* the gathers' failures are agreed over the node: then over all nodes, or
   * the other nodes' ranks would be one agreement ahead of this one's */
  HALO_TRY(halo_agree(comm, gatherv(t->node_comm, root_out, &mine_out, &all_out, &n_out)));
  HALO_TRY(halo_agree(comm, gatherv(t->node_comm, root_in, &mine_in, &all_in, &n_in)));
  halo_vec_free(&mine_out);
  halo_vec_free(&mine_in);

  /* 3 */
  if (is_out) {
    st = unpack_input(all_out, n_out, t->node_size, t->node_id, size, col_ranges, &ho.in);
    if (st == HALO_SUCCESS) st = halo_node_links_build(&ho.in, o->remove_duplicates, &ho.L);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(ho.peer, ho.L.n_out);
  }
  HALO_FREE(all_out);
  if (is_in && st == HALO_SUCCESS) {
    st = unpack_input(all_in, n_in, t->node_size, t->node_id, size, col_ranges, &hi.in);
    if (st == HALO_SUCCESS) st = halo_node_links_build_lean(&hi.in, o->remove_duplicates, 0, &hi.L);
    if (st == HALO_SUCCESS) st = halo_node_decide_receive(d, &hi.in, &hi.L, o->message_cap);
  }
  HALO_FREE(all_in);
  HALO_TRY(halo_agree(comm, st));

  /* 4, 5 */
  halo_decision_arrays xa = {0};
  HALO_TRY(halo_decision_arrays_make(comm, is_in, hi.L.n_in, &xa));
  if (is_in || is_out)
    st = halo_decisions_receive(comm, t->node_id, hi.L.in, hi.L.n_in, ho.L.out, ho.L.n_out, ho.peer,
                                &xa);
  if (is_out && st == HALO_SUCCESS) st = halo_node_decide_send(d, &ho.in, &ho.L);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(halo_decision_arrays_make(comm, is_out, ho.L.n_out, &xa));
  if (is_in || is_out)
    st = halo_decisions_send(comm, t->node_id, ho.L.out, ho.L.n_out, ho.peer, hi.L.in, hi.L.n_in,
                             &xa);
  HALO_TRY(halo_agree(comm, st));

  /* 6 */
  if (is_out) {
    st = HALO_CALLOC(ho.sched, t->node_size);
    if (st == HALO_SUCCESS) st = halo_node_build_schedules(d, &ho.in, &ho.L, ho.sched);
  }
  HALO_TRY(halo_agree(comm, st));
  /* from here a failure is one node's or one rank's: halo_plan_schedule
   * agrees it over all ranks */
  HALO_TRY(in_half_exchange(t, root_in, &hi, o->remove_duplicates, p, ghost_ids, recv_node, rank,
                            size, &xin));
  half_free(&hi, t->node_size);
  HALO_TRY(scatter_part(t, root_out, &ho, s));
  half_free(&ho, t->node_size);
  HALO_TRY(halo_in_build(&xin.table, d, rank, size, p->n_local, p->n_ghost, xin.node_ranks,
                         t->node_size, &xin.rbuf, xin.rcounts, xin.ghosts, &part_in));
  if (s->rank != rank)
    HALO_FAIL(HALO_ERR_INTERNAL, "rank %d got the schedule of rank %d", rank, s->rank);
  HALO_TRY(join_parts(d, s, &part_in));
  HALO_TRY(add_direct(s, d->phase_direct, t->node_id, p, recv_node, send_node));
cleanup:
  in_data_free(&xin, t->node_size);
  halo_schedule_free(&part_in);
  half_free(&hi, t->node_size);
  half_free(&ho, t->node_size);
  halo_free(all_in);
  halo_free(all_out);
  halo_vec_free(&mine_in);
  halo_vec_free(&mine_out);
  halo_free(send_node);
  halo_free(recv_node);
  return st;
}
