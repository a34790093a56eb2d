/* Distributed set-up of the node-aware strategies. The pure functions of
 * nodebuild.c do the work, from the strategy's descriptor; here their inputs are gathered on each
 * node's leader (its lowest rank), the decisions travel between the leaders of nodes that
 * communicate, and the schedules go back to the ranks of the node:
 *
 *   1. every rank learns the node of each of its pattern peers;
 *   2. the leader gathers its node's messages with other nodes (MPI_Gatherv);
 *   3. it builds the node's links and decides the pieces it receives;
 *   4. leaders send the receive decisions to the source nodes;
 *   5. they decide who sends each outgoing piece and tell the destinations;
 *   6. the leader builds the node's schedules and scatters them;
 *   7. each rank adds its messages within the node (owner to reader, as Standard
 *      sends them), which the leader never saw: the same schedules as the
 *      node-wide build of the simulator, byte for byte, for less gathered, built
 *      and scattered on the leader.
 *
 * Every step that can fail on one rank is followed by an agreement over the
 * plan's communicator, so that no rank waits for a leader that gave up. No
 * array of size P is made: leaders talk only to the leaders they exchange
 * data with. */
#include <limits.h>
#include <string.h>

#include "plan/nodeaware.h"
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

/* 2. What the leader needs of a rank's pattern: the messages with other nodes. The
 *    messages within the node go owner to reader, as Standard sends them, and each
 *    rank adds them to its schedule itself (add_direct). As a flat list: rank,
 *    n_local, n_ghost, the receives and sends with other nodes, send_total; then
 *    (peer, offset, count, node) and the ghost ids of each such receive, and
 *    (peer, offset, count, node) and the send indices of each such send. Offsets are
 *    those of the whole pattern. */
static halo_status pack_input(int rank, int my_node, const halo_pattern *p,
                              const int64_t *ghost_ids, const int *recv_node, const int *send_node,
                              halo_vec *out) {
  int64_t send_total = 0, n_recv = 0, n_send = 0;
  for (int i = 0; i < p->n_send; i++) send_total += p->send[i].count;
  for (int i = 0; i < p->n_recv; i++) n_recv += recv_node[i] != my_node;
  for (int i = 0; i < p->n_send; i++) n_send += send_node[i] != my_node;
  const int64_t head[] = {rank, p->n_local, p->n_ghost, n_recv, n_send, send_total};
  HALO_CHECK(halo_vec_append(out, head, 6));
  for (int i = 0; i < p->n_recv; i++) {
    if (recv_node[i] == my_node) continue;
    const int64_t m[] = {p->recv[i].peer, p->recv[i].offset, p->recv[i].count, recv_node[i]};
    HALO_CHECK(halo_vec_append(out, m, 4));
    HALO_CHECK(halo_vec_append(out, ghost_ids + p->recv[i].offset, p->recv[i].count));
  }
  for (int i = 0; i < p->n_send; i++) {
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

/* Gather variable-size int64 lists on rank 0 of a communicator. */
static halo_status gatherv(MPI_Comm comm, const halo_vec *mine, int64_t **all_p, int64_t *n_all_p) {
  halo_status st = HALO_SUCCESS;
  int rank, size, *counts = NULL, *displs = NULL;
  int64_t *all = NULL, total = 0;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (mine->n > INT_MAX)
    HALO_FAIL(HALO_ERR_OUT_OF_RANGE, "a pattern of %lld words is too large", (long long)mine->n);
  int n = (int)mine->n;
  /* the leader's failures are agreed over the node before each collective,
   * which the node's other ranks would otherwise wait in */
  if (rank == 0) st = HALO_ALLOC(counts, size);
  if (rank == 0 && st == HALO_SUCCESS) st = HALO_ALLOC(displs, size);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  if (rank == 0) {
    for (int r = 0; r < size && st == HALO_SUCCESS; r++) {
      if (total > INT_MAX - counts[r])
        st = HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "the patterns of one node exceed %d words", INT_MAX);
      displs[r] = (int)total;
      total += counts[r];
    }
    if (st == HALO_SUCCESS) st = HALO_ALLOC(all, total);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Gatherv(mine->v, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, comm));
  *all_p = all;
  *n_all_p = total;
  all = NULL;
cleanup:
  halo_free(all);
  halo_free(displs);
  halo_free(counts);
  return st;
}

/* Send each of n links' message (built by make) to the leader of its node,
 * and receive from the leader of each of m other links (parsed by take). */
typedef halo_status (*make_fn)(const halo_link *l, int my_node, halo_vec *out);
typedef halo_status (*take_fn)(halo_link *l, const int64_t *buf, int64_t n);

static halo_status take_receive(halo_link *l, const int64_t *buf, int64_t n);

/* The arrays of an exchange, made by the caller before it (their failure
 * agreed over the plan's communicator): a leader that cannot make them sends
 * nothing, and its partners would wait. */
typedef struct {
  halo_vec *msg;
  MPI_Request *req;
} exchange_arrays;

/* Make them on a leader (n_to links) and agree over comm (collective); on
 * failure, anywhere, nothing is left. */
static halo_status exchange_arrays_make(MPI_Comm comm, int leader, int n_to, exchange_arrays *a) {
  halo_status st = HALO_SUCCESS;
  if (leader) st = HALO_CALLOC(a->msg, n_to);
  if (leader && st == HALO_SUCCESS) st = HALO_ALLOC(a->req, n_to);
  for (int i = 0; leader && st == HALO_SUCCESS && i < n_to; i++) a->req[i] = MPI_REQUEST_NULL;
  st = halo_agree(comm, st);
  if (st != HALO_SUCCESS) {
    halo_free(a->msg);
    halo_free(a->req);
    a->msg = NULL;
    a->req = NULL;
  }
  return st;
}

/* Once the arrays are made, every link gets a message and every message is
 * received, whatever fails on the way: a leader that cannot make a decision
 * sends its node's id alone (a decision that says nothing, taken as a
 * failure by the receiver), and one that cannot keep a decision receives it
 * into nothing (the truncated receive matches it). The failure is then
 * agreed by the caller. */
static halo_status exchange(MPI_Comm comm, int my_node, halo_link *to, int n_to, make_fn make,
                            halo_link *from, int n_from, take_fn take, int tag,
                            exchange_arrays *a) {
  halo_status st = HALO_SUCCESS;
  halo_vec *msg = a->msg;
  MPI_Request *req = a->req;
  int64_t *buf = NULL;
  const int64_t failed_decision[1] = {my_node};
  for (int i = 0; i < n_to; i++) {
    halo_status sm = make(&to[i], my_node, &msg[i]);
    if (sm == HALO_SUCCESS && msg[i].n > INT_MAX)
      sm = HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "a decision of %lld words", (long long)msg[i].n);
    if (st == HALO_SUCCESS) st = sm;
    const int ok = sm == HALO_SUCCESS;
    HALO_TRY_MPI(MPI_Isend(ok ? msg[i].v : failed_decision, ok ? (int)msg[i].n : 1, MPI_INT64_T,
                           to[i].node, tag, comm, &req[i]));
  }
  for (int i = 0; i < n_from; i++) {
    MPI_Status status;
    int count;
    HALO_TRY_MPI(MPI_Probe(from[i].node, tag, comm, &status));
    HALO_TRY_MPI(MPI_Get_count(&status, MPI_INT64_T, &count));
    HALO_FREE(buf);
    halo_status sr = st == HALO_SUCCESS ? HALO_ALLOC(buf, count) : st;
    if (sr != HALO_SUCCESS) { /* matched and dropped (MPI_ERR_TRUNCATE, returned) */
      int64_t none;
      MPI_Recv(&none, 0, MPI_INT64_T, from[i].node, tag, comm, MPI_STATUS_IGNORE);
      st = sr;
      continue;
    }
    HALO_TRY_MPI(MPI_Recv(buf, count, MPI_INT64_T, from[i].node, tag, comm, MPI_STATUS_IGNORE));
    if (count < 1 || buf[0] != from[i].node)
      st = HALO_ERROR(HALO_ERR_INTERNAL, "decision from node %d names node %lld", from[i].node,
                      count ? (long long)buf[0] : -1LL);
    else if (count == 1 && (take == take_receive || from[i].n_pieces > 0))
      /* the id alone: a receive decision has pieces, a send decision one per
       * piece; a link without pieces cannot tell, and the sender's own
       * failure is agreed anyway */
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY,
                      "node %d could not make its decision (out of memory, or too large)",
                      from[i].node);
    else
      st = take(&from[i], buf + 1, count - 1);
  }
  HALO_TRY_MPI(MPI_Waitall(n_to, req, MPI_STATUSES_IGNORE));
cleanup:
  halo_free(buf);
  if (msg)
    for (int i = 0; i < n_to; i++) halo_vec_free(&msg[i]);
  halo_free(msg);
  halo_free(req);
  a->msg = NULL;
  a->req = NULL;
  return st;
}

/* Receive decision, from the receiving node to the sending node: the pieces
 * and their receivers. */
static halo_status make_receive(const halo_link *l, int my_node, halo_vec *out) {
  HALO_CHECK(halo_vec_push(out, my_node));
  HALO_CHECK(halo_vec_push(out, l->n_pieces));
  HALO_CHECK(halo_vec_append(out, l->piece_start, l->n_pieces + 1));
  for (int k = 0; k < l->n_pieces; k++) HALO_CHECK(halo_vec_push(out, l->piece_receiver[k]));
  return HALO_SUCCESS;
}

static halo_status take_receive(halo_link *l, const int64_t *buf, int64_t n) {
  if (n < 1 || buf[0] < 1 || buf[0] > INT_MAX || n != 2 * buf[0] + 2)
    return HALO_ERROR(HALO_ERR_INTERNAL, "malformed receive decision from node %d", l->node);
  HALO_CHECK(halo_link_pieces_alloc(l, (int)buf[0]));
  memcpy(l->piece_start, buf + 1, (size_t)(l->n_pieces + 1) * sizeof(int64_t));
  for (int k = 0; k < l->n_pieces; k++) l->piece_receiver[k] = (int)buf[l->n_pieces + 2 + k];
  return HALO_SUCCESS;
}

/* Send decision, from the sending node to the receiving node: the senders. */
static halo_status make_send(const halo_link *l, int my_node, halo_vec *out) {
  HALO_CHECK(halo_vec_push(out, my_node));
  for (int k = 0; k < l->n_pieces; k++) HALO_CHECK(halo_vec_push(out, l->piece_sender[k]));
  return HALO_SUCCESS;
}

static halo_status take_send(halo_link *l, const int64_t *buf, int64_t n) {
  if (n != l->n_pieces)
    return HALO_ERROR(HALO_ERR_INTERNAL, "node %d names %lld senders for %d pieces", l->node,
                      (long long)n, l->n_pieces);
  for (int k = 0; k < l->n_pieces; k++) l->piece_sender[k] = (int)buf[k];
  return HALO_SUCCESS;
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

halo_status halo_schedule_build_nodeaware(MPI_Comm comm, const halo_topology *t,
                                          const halo_pattern *p, const int64_t *ghost_ids,
                                          const int64_t *col_ranges, const halo_plan_options *o,
                                          halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int *recv_node = NULL, *send_node = NULL;
  halo_vec mine = {0}, packed = {0};
  int64_t *all = NULL, n_all = 0;
  halo_node_input in = {0};
  halo_node_links L = {0};
  halo_schedule *sched = NULL;
  int *counts = NULL, *displs = NULL;
  int64_t *my_sched = NULL;
  const halo_strategy_desc *d = NULL;
  const int leader = t->node_rank == 0;
  memset(s, 0, sizeof *s);
  HALO_CHECK(halo_strategy_desc_find(o->strategy, &d)); /* the options agree: all ranks fail */
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));

  /* 1, 2 */
  st = HALO_ALLOC(recv_node, p->n_recv);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(send_node, p->n_send);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(peer_nodes(comm, t, p, recv_node, send_node));
  st = pack_input(rank, t->node_id, p, ghost_ids, recv_node, send_node, &mine);
  HALO_TRY(halo_agree(comm, st));
  /* the gather's failures are agreed over the node: then over all nodes, or
   * the other nodes' ranks would be one agreement ahead of this one's */
  HALO_TRY(halo_agree(comm, gatherv(t->node_comm, &mine, &all, &n_all)));
  halo_vec_free(&mine);

  /* 3 */
  if (leader) {
    st = unpack_input(all, n_all, t->node_size, t->node_id, size, col_ranges, &in);
    if (st == HALO_SUCCESS) st = halo_node_links_build(&in, o->remove_duplicates, &L);
    if (st == HALO_SUCCESS) st = halo_node_decide_receive(d, &in, &L, o->message_cap);
  }
  HALO_FREE(all);
  HALO_TRY(halo_agree(comm, st));

  /* 4, 5 */
  exchange_arrays xa = {0};
  HALO_TRY(exchange_arrays_make(comm, leader, L.n_in, &xa));
  if (leader)
    st = exchange(comm, t->node_id, L.in, L.n_in, make_receive, L.out, L.n_out, take_receive,
                  HALO_TAG_RECEIVE_DECISION, &xa);
  if (leader && st == HALO_SUCCESS) st = halo_node_decide_send(d, &in, &L);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(exchange_arrays_make(comm, leader, L.n_out, &xa));
  if (leader)
    st = exchange(comm, t->node_id, L.out, L.n_out, make_send, L.in, L.n_in, take_send,
                  HALO_TAG_SEND_DECISION, &xa);
  HALO_TRY(halo_agree(comm, st));

  /* 6 */
  if (leader) {
    st = HALO_CALLOC(sched, t->node_size);
    if (st == HALO_SUCCESS) st = halo_node_build_schedules(d, &in, &L, sched);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(counts, t->node_size);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(displs, t->node_size);
    for (int i = 0; i < t->node_size && st == HALO_SUCCESS; i++) {
      int64_t before = packed.n;
      if (i == 0 && in.ranks[0] == rank) { /* the leader's own: kept, not packed */
        counts[0] = 0, displs[0] = 0;
        continue;
      }
      st = halo_schedule_pack(&sched[i], &packed);
      if (st == HALO_SUCCESS && (packed.n - before > INT_MAX || packed.n > INT_MAX))
        st =
            HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "the schedules of one node exceed %d words", INT_MAX);
      if (st == HALO_SUCCESS) {
        counts[i] = (int)(packed.n - before);
        displs[i] = (int)before;
      }
    }
  }
  HALO_TRY(halo_agree(comm, st));
  int my_count = 0;
  HALO_TRY_MPI(MPI_Scatter(counts, 1, MPI_INT, &my_count, 1, MPI_INT, 0, t->node_comm));
  /* agreed over the node: its leader would otherwise leave the others in the
   * scatter */
  HALO_TRY(halo_agree(t->node_comm, HALO_ALLOC(my_sched, my_count)));
  /* from here a failure is one node's or one rank's: halo_plan_schedule
   * agrees it over all ranks */
  HALO_TRY_MPI(MPI_Scatterv(packed.v, counts, displs, MPI_INT64_T, my_sched, my_count, MPI_INT64_T,
                            0, t->node_comm));
  if (leader && in.ranks[0] == rank) {
    *s = sched[0];
    memset(&sched[0], 0, sizeof sched[0]);
  } else {
    int64_t pos = 0;
    HALO_TRY(halo_schedule_unpack(my_sched, my_count, &pos, s));
  }
  if (s->rank != rank)
    HALO_FAIL(HALO_ERR_INTERNAL, "rank %d got the schedule of rank %d", rank, s->rank);
  HALO_TRY(add_direct(s, d->phase_direct, t->node_id, p, recv_node, send_node));
cleanup:
  halo_free(my_sched);
  halo_free(displs);
  halo_free(counts);
  if (sched)
    for (int i = 0; i < t->node_size; i++) halo_schedule_free(&sched[i]);
  halo_free(sched);
  halo_vec_free(&packed);
  halo_node_links_free(&L);
  halo_node_input_free(&in);
  halo_free(all);
  halo_vec_free(&mine);
  halo_free(send_node);
  halo_free(recv_node);
  return st;
}
