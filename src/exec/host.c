/* Host backend: MPI two-sided on host buffers with persistent requests.
 * Forward, receives whose values go to consecutive entries of the ghost or
 * work buffer land there directly; others are staged and unpacked; messages
 * to the rank itself are copies. Reverse (an add schedule), every receive is
 * staged and added, with the copies to itself, in the order of the receive
 * list.
 *
 * Sends. A message whose values are consecutive entries of the source
 * (x_local forward, the contributions in reverse) is sent from the source
 * itself, unpacked, as PetscSF sends a contiguous run of its roots: packing
 * costs as much as the message on one node. Its persistent requests are
 * bound to the source's address, made the first time an exchange starts
 * from that address and kept for the next ones, for the last
 * HOST_DIRECT_SLOTS sources (more sources in turn make them again). Every
 * other request is made at plan time. */
#include <string.h>

#include "exec/exec.h"

typedef struct {
  int64_t n_pack;    /* values sent to other ranks */
  int64_t *pack_src; /* their source indices, in send buffer order */
  double *sendbuf;
  int64_t n_staged; /* received values that need unpacking */
  int64_t *staged_dst;
  double *recvbuf;
  int64_t n_copy; /* forward: values copied to itself */
  int64_t *copy_src, *copy_dst;
  /* reverse: every value added in this phase, in the order of the receive
   * list: from the receive buffer (src >= 0) or the source space (-1-src) */
  int64_t n_add;
  int64_t *add_src, *add_dst;
  int recv_req_begin, n_recv_req;
  int send_req_begin, n_send_req;
  /* sends from consecutive entries of the source: per message its first
   * entry, count, peer (in the phase's communicator) and first tag number */
  int n_direct;
  int64_t *direct_off, *direct_count;
  int *direct_peer, *direct_seq;
  int dreq_begin, n_dreq; /* their requests in each slot's array */
} host_phase;

/* Sources whose direct sends keep their requests. */
#define HOST_DIRECT_SLOTS 4

typedef struct {
  host_phase ph[HALO_MAX_PHASES];
  MPI_Request *req; /* receives of all phases first, then sends */
  int n_req, n_recv_req;
  double *work;
  const double *x; /* the source of the exchange in flight */
  double *dst;     /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  /* the direct sends' requests, bound to slot_src[j] in slot j */
  int n_dreq;
  MPI_Request *dreq[HOST_DIRECT_SLOTS];
  const double *slot_src[HOST_DIRECT_SLOTS];
  int next_slot;    /* the slot a new source takes */
  MPI_Request *act; /* the slot of the exchange in flight */
} host_data;

static inline double src_value(const halo_schedule *s, const double *x, const double *work,
                               int64_t i) {
  return i < s->n_local ? x[i] : work[i - s->n_local];
}

static inline double *dst_ptr(const halo_schedule *s, double *ghost, double *work, int64_t i) {
  return i < s->n_ghost ? ghost + i : work + (i - s->n_ghost);
}

/* Are these source indices consecutive entries of the source itself (not
 * of the work buffer)? */
static int is_source_run(const halo_schedule *s, const int64_t *idx, int64_t count) {
  if (count == 0) return 0;
  for (int64_t i = 1; i < count; i++)
    if (idx[i] != idx[0] + i) return 0;
  return idx[0] >= 0 && idx[0] + count <= s->n_local;
}

/* The direct sends' requests bound to src: kept from an earlier exchange
 * from src, else made in the slot of the oldest source. */
static halo_status bind_direct(halo_exec *ex, host_data *d, const double *src) {
  const halo_schedule *s = ex->sched;
  int j = 0;
  if (!d->n_dreq) return HALO_SUCCESS;
  while (j < HOST_DIRECT_SLOTS && (!src || d->slot_src[j] != src)) j++;
  if (j == HOST_DIRECT_SLOTS) {
    j = d->next_slot;
    d->next_slot = (j + 1) % HOST_DIRECT_SLOTS;
    d->slot_src[j] = NULL;
    for (int i = 0; i < d->n_dreq; i++)
      if (d->dreq[j][i] != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&d->dreq[j][i]));
    for (int k = 0; k < s->n_phases; k++) {
      const host_phase *p = &d->ph[k];
      MPI_Request *req = d->dreq[j] + p->dreq_begin;
      for (int i = 0; i < p->n_direct; i++) {
        HALO_CHECK(halo_exec_init_chunks(ex, req, 1, (double *)(src + p->direct_off[i]),
                                         p->direct_count[i], p->direct_peer[i], k,
                                         p->direct_seq[i], ex->phase_comm[k]));
        req += halo_exec_chunks(ex, p->direct_count[i]);
      }
    }
    d->slot_src[j] = src;
  }
  d->act = d->dreq[j];
  return HALO_SUCCESS;
}

static void host_destroy(halo_exec *ex) {
  host_data *d = ex->data;
  if (!d) return;
  for (int i = 0; i < d->n_req; i++)
    if (d->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&d->req[i]);
  for (int j = 0; j < HOST_DIRECT_SLOTS; j++) {
    for (int i = 0; d->dreq[j] && i < d->n_dreq; i++)
      if (d->dreq[j][i] != MPI_REQUEST_NULL) MPI_Request_free(&d->dreq[j][i]);
    halo_free(d->dreq[j]);
  }
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    host_phase *p = &d->ph[k];
    halo_free(p->direct_off);
    halo_free(p->direct_count);
    halo_free(p->direct_peer);
    halo_free(p->direct_seq);
    halo_free(p->pack_src);
    halo_free(p->sendbuf);
    halo_free(p->staged_dst);
    halo_free(p->recvbuf);
    halo_free(p->copy_src);
    halo_free(p->copy_dst);
    halo_free(p->add_src);
    halo_free(p->add_dst);
  }
  halo_free(d->req);
  halo_free(d->work);
  if (ex->slots != ex->ghost) halo_free(ex->slots);
  halo_free(ex->ghost);
  ex->ghost = ex->slots = NULL;
  halo_free(d);
  ex->data = NULL;
}

/* Reverse: the order in which phase k adds, from the receive list. */
static halo_status setup_adds(const halo_schedule *s, const halo_phase *ph, host_phase *p) {
  p->n_add = ph->recv_total;
  HALO_CHECK(HALO_ALLOC(p->add_src, p->n_add));
  HALO_CHECK(HALO_ALLOC(p->add_dst, p->n_add));
  return halo_exec_add_order(s, ph, NULL, p->add_src, p->add_dst);
}

static halo_status host_setup(halo_exec *ex) {
  int *seq = NULL;
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  const halo_leaves *L = ex->cfg.leaves;
  host_data *d = halo_calloc(1, sizeof *d);
  if (!d) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the host executor");
  ex->data = d;
  if (!s->add) {
    HALO_TRY(HALO_CALLOC(ex->ghost, s->n_ghost));
    ex->slots = ex->ghost;
    if (!halo_leaves_identity(L)) HALO_TRY(HALO_CALLOC(ex->slots, L->n));
  } else if (!halo_leaves_identity(L)) {
    HALO_TRY(HALO_CALLOC(ex->ghost, s->n_local)); /* the contributions summed per ghost */
  }
  HALO_TRY(HALO_CALLOC(d->work, s->n_work));

  /* Count requests and buffer sizes. */
  int n_recv_req = 0, n_send_req = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    host_phase *p = &d->ph[k];
    for (int i = 0; i < ph->n_send; i++) {
      if (ph->send[i].peer == s->rank) {
        p->n_copy += ph->send[i].count;
        continue;
      }
      if (is_source_run(s, ph->pack + ph->send[i].offset, ph->send[i].count)) {
        p->n_direct++;
        p->n_dreq += halo_exec_chunks(ex, ph->send[i].count);
        continue;
      }
      p->n_pack += ph->send[i].count;
      p->n_send_req += halo_exec_chunks(ex, ph->send[i].count);
    }
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      if (m->peer == s->rank) continue;
      if (!halo_exec_is_run(s, ph->unpack + m->offset, m->count)) p->n_staged += m->count;
      p->n_recv_req += halo_exec_chunks(ex, m->count);
    }
    if (s->add) p->n_copy = 0; /* added in receive order instead */
    p->recv_req_begin = n_recv_req;
    n_recv_req += p->n_recv_req;
  }
  d->n_recv_req = n_recv_req;
  for (int k = 0; k < s->n_phases; k++) {
    d->ph[k].send_req_begin = n_recv_req + n_send_req;
    n_send_req += d->ph[k].n_send_req;
  }
  d->n_req = n_recv_req + n_send_req;
  HALO_TRY(HALO_ALLOC(d->req, d->n_req));
  for (int i = 0; i < d->n_req; i++) d->req[i] = MPI_REQUEST_NULL;
  for (int k = 0; k < s->n_phases; k++) {
    d->ph[k].dreq_begin = d->n_dreq;
    d->n_dreq += d->ph[k].n_dreq;
  }
  for (int j = 0; j < HOST_DIRECT_SLOTS; j++) {
    HALO_TRY(HALO_ALLOC(d->dreq[j], d->n_dreq));
    for (int i = 0; i < d->n_dreq; i++) d->dreq[j][i] = MPI_REQUEST_NULL;
  }

  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    host_phase *p = &d->ph[k];
    MPI_Comm comm = ex->phase_comm[k];
    HALO_FREE(seq);
    HALO_TRY(HALO_ALLOC(seq, ph->n_send > ph->n_recv ? ph->n_send : ph->n_recv));
    HALO_TRY(halo_exec_sequence(ex, ph->send, ph->n_send, seq));
    HALO_TRY(HALO_ALLOC(p->pack_src, p->n_pack));
    HALO_TRY(HALO_ALLOC(p->sendbuf, p->n_pack));
    HALO_TRY(HALO_ALLOC(p->staged_dst, p->n_staged));
    HALO_TRY(HALO_ALLOC(p->recvbuf, p->n_staged));
    HALO_TRY(HALO_ALLOC(p->copy_src, p->n_copy));
    HALO_TRY(HALO_ALLOC(p->copy_dst, p->n_copy));
    HALO_TRY(HALO_ALLOC(p->direct_off, p->n_direct));
    HALO_TRY(HALO_ALLOC(p->direct_count, p->n_direct));
    HALO_TRY(HALO_ALLOC(p->direct_peer, p->n_direct));
    HALO_TRY(HALO_ALLOC(p->direct_seq, p->n_direct));
    if (s->add) HALO_TRY(setup_adds(s, ph, p));
    /* sends */
    int64_t off = 0, ncopy = 0;
    int r = p->send_req_begin, nd = 0;
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      const int64_t *src = ph->pack + m->offset;
      if (m->peer == s->rank) {
        if (!s->add) memcpy(p->copy_src + ncopy, src, (size_t)m->count * sizeof *src);
        ncopy += m->count;
        continue;
      }
      if (is_source_run(s, src, m->count)) { /* requests made at the first begin from a source */
        p->direct_off[nd] = src[0];
        p->direct_count[nd] = m->count;
        p->direct_peer[nd] = ex->peer_send[k][i];
        p->direct_seq[nd++] = seq[i];
        continue;
      }
      memcpy(p->pack_src + off, src, (size_t)m->count * sizeof *src);
      HALO_TRY(halo_exec_init_chunks(ex, &d->req[r], 1, p->sendbuf + off, m->count,
                                     ex->peer_send[k][i], k, seq[i], comm));
      r += halo_exec_chunks(ex, m->count);
      off += m->count;
    }
    /* receives */
    HALO_TRY(halo_exec_sequence(ex, ph->recv, ph->n_recv, seq));
    int64_t soff = 0;
    ncopy = 0;
    r = p->recv_req_begin;
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      const int64_t *dst = ph->unpack + m->offset;
      if (m->peer == s->rank) {
        if (!s->add) memcpy(p->copy_dst + ncopy, dst, (size_t)m->count * sizeof *dst);
        ncopy += m->count;
        continue;
      }
      double *buf;
      if (halo_exec_is_run(s, dst, m->count)) {
        buf = dst_ptr(s, ex->ghost, d->work, dst[0]);
      } else {
        buf = p->recvbuf + soff;
        memcpy(p->staged_dst + soff, dst, (size_t)m->count * sizeof *dst);
        soff += m->count;
      }
      HALO_TRY(halo_exec_init_chunks(ex, &d->req[r], 0, buf, m->count, ex->peer_recv[k][i], k,
                                     seq[i], comm));
      r += halo_exec_chunks(ex, m->count);
    }
  }
cleanup:
  halo_free(seq);
  if (st != HALO_SUCCESS) host_destroy(ex);
  return st;
}

/* Pack phase k, make its copies (forward), start its sends. */
static halo_status phase_send(halo_exec *ex, host_data *d, int k) {
  const halo_schedule *s = ex->sched;
  host_phase *p = &d->ph[k];
  const double *x = d->x;
  for (int64_t i = 0; i < p->n_pack; i++) p->sendbuf[i] = src_value(s, x, d->work, p->pack_src[i]);
  for (int64_t i = 0; i < p->n_copy; i++)
    *dst_ptr(s, ex->ghost, d->work, p->copy_dst[i]) = src_value(s, x, d->work, p->copy_src[i]);
  if (p->n_send_req) HALO_MPI(MPI_Startall(p->n_send_req, d->req + p->send_req_begin));
  if (p->n_dreq) HALO_MPI(MPI_Startall(p->n_dreq, d->act + p->dreq_begin));
  return HALO_SUCCESS;
}

static halo_status host_begin(halo_exec *ex, const double *src, double *dst) {
  const halo_schedule *s = ex->sched;
  const halo_leaves *L = ex->cfg.leaves;
  host_data *d = ex->data;
  d->x = src;
  d->dst = dst;
  if (s->add) {
    if (!halo_leaves_identity(L)) { /* each ghost: the sum of its slots, in slot order */
      for (int64_t j = 0; j < L->n_ghost; j++) {
        double sum = 0.0;
        for (int64_t t = L->ptr[j]; t < L->ptr[j + 1]; t++) sum += src[L->slot[t]];
        ex->ghost[j] = sum;
      }
      d->x = ex->ghost;
    }
    if (s->n_work) memset(d->work, 0, (size_t)s->n_work * sizeof *d->work);
  }
  HALO_CHECK(bind_direct(ex, d, d->x));
  if (d->n_recv_req) HALO_MPI(MPI_Startall(d->n_recv_req, d->req));
  return phase_send(ex, d, 0);
}

static halo_status host_end(halo_exec *ex) {
  const halo_schedule *s = ex->sched;
  const halo_leaves *L = ex->cfg.leaves;
  host_data *d = ex->data;
  double *to = s->add ? d->dst : ex->ghost;
  for (int k = 0; k < s->n_phases; k++) {
    host_phase *p = &d->ph[k];
    if (k > 0) HALO_CHECK(phase_send(ex, d, k));
    if (p->n_recv_req)
      HALO_MPI(MPI_Waitall(p->n_recv_req, d->req + p->recv_req_begin, MPI_STATUSES_IGNORE));
    if (s->add) {
      for (int64_t i = 0; i < p->n_add; i++) {
        const int64_t a = p->add_src[i];
        *dst_ptr(s, to, d->work, p->add_dst[i]) +=
            a >= 0 ? p->recvbuf[a] : src_value(s, d->x, d->work, -1 - a);
      }
    } else {
      for (int64_t i = 0; i < p->n_staged; i++)
        *dst_ptr(s, to, d->work, p->staged_dst[i]) = p->recvbuf[i];
    }
  }
  if (d->n_req > d->n_recv_req)
    HALO_MPI(MPI_Waitall(d->n_req - d->n_recv_req, d->req + d->n_recv_req, MPI_STATUSES_IGNORE));
  if (d->n_dreq) HALO_MPI(MPI_Waitall(d->n_dreq, d->act, MPI_STATUSES_IGNORE));
  if (!s->add) { /* deliver into the ghost slots */
    double *out = d->dst ? d->dst : ex->slots;
    if (!halo_leaves_identity(L)) {
      for (int64_t i = 0; i < L->n; i++) out[i] = ex->ghost[L->to_ghost[i]];
    } else if (out != ex->ghost && s->n_ghost) {
      memcpy(out, ex->ghost, (size_t)s->n_ghost * sizeof *out);
    }
  }
  d->x = NULL;
  d->dst = NULL;
  return HALO_SUCCESS;
}

const halo_exec_ops halo_exec_host_ops = {
    .name = "host",
    .setup = host_setup,
    .begin = host_begin,
    .end = host_end,
    .destroy = host_destroy,
};
