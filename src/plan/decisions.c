/* The node-aware decisions carried between the halves of nodes that exchange
 * data (see decisions.h). */
#include <limits.h>
#include <string.h>

#include "plan/decisions.h"
#include "tags.h"

/* Send each of n links' message (built by make) to the half of its node that
 * takes it (to_rank[i], or the node's leader), and receive one from the half of
 * each of m other links (parsed by take): from the link's leader, or, with
 * from_rank, from any rank, matched to its link by the node it names, whose
 * rank from_rank[link] receives. */
typedef halo_status (*make_fn)(const halo_link *l, int my_node, halo_vec *out);
typedef halo_status (*take_fn)(halo_link *l, const int64_t *buf, int64_t n);

static halo_status take_receive(halo_link *l, const int64_t *buf, int64_t n);

halo_status halo_decision_arrays_make(MPI_Comm comm, int maker, int n_to, halo_decision_arrays *a) {
  halo_status st = HALO_SUCCESS;
  if (maker) st = HALO_CALLOC(a->msg, n_to);
  if (maker && st == HALO_SUCCESS) st = HALO_ALLOC(a->req, n_to);
  for (int i = 0; maker && st == HALO_SUCCESS && i < n_to; i++) a->req[i] = MPI_REQUEST_NULL;
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
 * received, whatever fails on the way: a half that cannot make a decision
 * sends its node's id alone (a decision that says nothing, taken as a
 * failure by the receiver), and one that cannot keep a decision receives it
 * into nothing (the truncated receive matches it). The failure is then
 * agreed by the caller. */
static halo_status exchange(MPI_Comm comm, int my_node, halo_link *to, int n_to, const int *to_rank,
                            make_fn make, halo_link *from, int n_from, int *from_rank, take_fn take,
                            int tag, halo_decision_arrays *a) {
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
                           to_rank ? to_rank[i] : to[i].node, tag, comm, &req[i]));
  }
  for (int i = 0; from_rank && i < n_from; i++) from_rank[i] = -1;
  for (int i = 0; i < n_from; i++) {
    MPI_Status status;
    int count;
    HALO_TRY_MPI(MPI_Probe(from_rank ? MPI_ANY_SOURCE : from[i].node, tag, comm, &status));
    const int source = status.MPI_SOURCE;
    HALO_TRY_MPI(MPI_Get_count(&status, MPI_INT64_T, &count));
    HALO_FREE(buf);
    halo_status sr = st == HALO_SUCCESS ? HALO_ALLOC(buf, count) : st;
    if (sr != HALO_SUCCESS) { /* matched and dropped (MPI_ERR_TRUNCATE, returned) */
      int64_t none;
      MPI_Recv(&none, 0, MPI_INT64_T, source, tag, comm, MPI_STATUS_IGNORE);
      st = sr;
      continue;
    }
    HALO_TRY_MPI(MPI_Recv(buf, count, MPI_INT64_T, source, tag, comm, MPI_STATUS_IGNORE));
    halo_link *l = &from[i];
    if (from_rank) { /* the link of the node it names, not yet heard from */
      l = count >= 1 && buf[0] >= 0 && buf[0] < INT_MAX ? halo_link_find(from, n_from, (int)buf[0])
                                                        : NULL;
      if (!l || from_rank[l - from] >= 0) {
        st = HALO_ERROR(HALO_ERR_INTERNAL, "rank %d sent a decision for node %lld, %s", source,
                        count ? (long long)buf[0] : -1LL,
                        l ? "which sent one already" : "which this node does not send to");
        continue;
      }
      from_rank[l - from] = source;
    }
    if (count < 1 || buf[0] != l->node)
      st = HALO_ERROR(HALO_ERR_INTERNAL, "decision from node %d names node %lld", l->node,
                      count ? (long long)buf[0] : -1LL);
    else if (count == 1 && (take == take_receive || l->n_pieces > 0))
      /* the id alone: a receive decision has pieces, a send decision one per
       * piece; a link without pieces cannot tell, and the sender's own
       * failure is agreed anyway */
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY,
                      "node %d could not make its decision (out of memory, or too large)", l->node);
    else
      st = take(l, buf + 1, count - 1);
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

halo_status halo_decisions_receive(MPI_Comm comm, int my_node, halo_link *in, int n_in,
                                   halo_link *out, int n_out, int *peer, halo_decision_arrays *a) {
  return exchange(comm, my_node, in, n_in, NULL, make_receive, out, n_out, peer, take_receive,
                  HALO_TAG_RECEIVE_DECISION, a);
}

halo_status halo_decisions_send(MPI_Comm comm, int my_node, halo_link *out, int n_out,
                                const int *peer, halo_link *in, int n_in, halo_decision_arrays *a) {
  return exchange(comm, my_node, out, n_out, peer, make_send, in, n_in, NULL, take_send,
                  HALO_TAG_SEND_DECISION, a);
}
