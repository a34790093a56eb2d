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
 * HOST_DIRECT_SLOTS sources (more sources in turn make them again).
 *
 * Receives. Forward, a message whose values go to consecutive ghosts is
 * received into the caller's ghost slots themselves (when they are the
 * schedule's ghosts, in order), with requests bound to their address the
 * same way, so that end() copies nothing; the executor's own ghosts are one
 * more such address. Every other request is made at plan time. */
#include <string.h>

#include "exec/host_common.h"
#include "exec/transport.h"

/* Messages of a phase whose requests are bound at begin to an address: per
 * message its first entry there, count, peer (in the phase's communicator)
 * and first tag number. */
typedef struct {
  int n;
  int64_t *off, *count;
  int *peer, *seq;
  int req_begin, n_req; /* their requests in each slot's array */
} host_direct;

typedef struct {
  halo_host_pack pack; /* the values sent to other ranks (pack.n), in send buffer order */
  double *sendbuf;
  int64_t n_staged; /* received values that need unpacking */
  int64_t *staged_dst;
  double *recvbuf;
  int64_t n_copy; /* forward: values copied to itself */
  int64_t *copy_src, *copy_dst;
  halo_host_adds adds; /* reverse: every value added in this phase */
  int recv_req_begin, n_recv_req;
  int send_req_begin, n_send_req;
  /* messages bound to an address at begin: sends from consecutive entries
   * of the source (dir[1]), forward receives into consecutive ghosts (dir[0]) */
  host_direct dir[2];
} host_phase;

/* Addresses whose bound messages keep their requests. */
#define HOST_DIRECT_SLOTS 4

/* A plain request's message, to make it again for another entry size: its
 * buffer (0 the phase's send buffer, 1 its receive buffer, 2 the work
 * buffer) and first entry there. */
typedef struct {
  int req, is_send, kind, k, peer, seq;
  int64_t off, count;
} host_rdesc;

/* The requests of one direction's bound messages (all phases), per address. */
typedef struct {
  int n_req;
  MPI_Request *req[HOST_DIRECT_SLOTS];
  const double *addr[HOST_DIRECT_SLOTS];
  int next;         /* the slot a new address takes */
  MPI_Request *act; /* the slot of the exchange in flight */
} host_bound;

typedef struct {
  host_phase ph[HALO_MAX_PHASES];
  MPI_Request *req; /* receives of all phases first, then sends */
  int n_req, n_recv_req;
  double *work;
  const double *x;     /* the source of the exchange in flight */
  double *dst;         /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  double *to;          /* forward: where the ghosts land (dst when it is the ghosts, else own) */
  host_bound bound[2]; /* [0] receives, [1] sends */
  MPI_Request *wait;   /* the handles of one MPI_Waitall (persistent: copies) */
  /* units (ex->unit): the buffers hold `words` doubles an entry; the requests are made for
   * entries of req_bytes bytes (8 at set-up, MPI_DOUBLE), as datatype dt */
  int64_t words, req_bytes;
  MPI_Datatype dt;
  host_rdesc *rd;
  int n_rd;
  double *addbuf; /* forward add: where the ghosts land (made at the first) */
} host_data;

/* Are these source indices consecutive entries of the source itself (not
 * of the work buffer)? */
static int is_source_run(const halo_schedule *s, const int64_t *idx, int64_t count) {
  if (count == 0) return 0;
  for (int64_t i = 1; i < count; i++)
    if (idx[i] != idx[0] + i) return 0;
  return idx[0] >= 0 && idx[0] + count <= s->n_local;
}

/* Forward: do these unpack indices name consecutive ghosts (not entries
 * of the work buffer)? */
static int is_ghost_run(const halo_schedule *s, const int64_t *idx, int64_t count) {
  return count > 0 && halo_exec_is_run(s, idx, count) && idx[0] < s->n_ghost;
}

/* The requests of direction t's bound messages (t = 1 sends from addr,
 * t = 0 receives into addr): kept from an earlier exchange with addr, else
 * made in the slot of the oldest address. */
static halo_status bind_direct(halo_exec *ex, host_data *d, int t, const double *addr) {
  const halo_schedule *s = ex->sched;
  host_bound *b = &d->bound[t];
  int j = 0;
  if (!b->n_req) return HALO_SUCCESS;
  while (j < HOST_DIRECT_SLOTS && (!addr || b->addr[j] != addr)) j++;
  if (j == HOST_DIRECT_SLOTS) {
    j = b->next;
    b->next = (j + 1) % HOST_DIRECT_SLOTS;
    b->addr[j] = NULL;
    for (int i = 0; i < b->n_req; i++)
      if (b->req[j][i] != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&b->req[j][i]));
    for (int k = 0; k < s->n_phases; k++) {
      const host_direct *m = &d->ph[k].dir[t];
      MPI_Request *req = b->req[j] + m->req_begin;
      for (int i = 0; i < m->n; i++) {
        HALO_CHECK(halo_exec_init_chunks_typed(ex, req, t, (char *)addr + m->off[i] * d->req_bytes,
                                               m->count[i], d->dt, d->req_bytes, m->peer[i], k,
                                               m->seq[i], ex->phase_comm[k]));
        req += halo_exec_chunks(ex, m->count[i]);
      }
    }
    b->addr[j] = addr;
  }
  b->act = b->req[j];
  return HALO_SUCCESS;
}

static halo_status alloc_direct(host_direct *m) {
  HALO_CHECK(HALO_ALLOC(m->off, m->n));
  HALO_CHECK(HALO_ALLOC(m->count, m->n));
  HALO_CHECK(HALO_ALLOC(m->peer, m->n));
  return HALO_ALLOC(m->seq, m->n);
}

static void put_direct(host_direct *m, int i, int64_t off, int64_t count, int peer, int seq) {
  m->off[i] = off;
  m->count[i] = count;
  m->peer[i] = peer;
  m->seq[i] = seq;
}

static void free_direct(host_direct *m) {
  halo_free(m->off);
  halo_free(m->count);
  halo_free(m->peer);
  halo_free(m->seq);
}

static void host_destroy(halo_exec *ex) {
  host_data *d = ex->data;
  if (!d) return;
  for (int i = 0; d->req && i < d->n_req; i++) /* req NULL: its allocation failed */
    if (d->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&d->req[i]);
  for (int t = 0; t < 2; t++) {
    host_bound *b = &d->bound[t];
    for (int j = 0; j < HOST_DIRECT_SLOTS; j++) {
      for (int i = 0; b->req[j] && i < b->n_req; i++)
        if (b->req[j][i] != MPI_REQUEST_NULL) MPI_Request_free(&b->req[j][i]);
      halo_free(b->req[j]);
    }
  }
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    host_phase *p = &d->ph[k];
    free_direct(&p->dir[0]);
    free_direct(&p->dir[1]);
    halo_host_pack_free(&p->pack);
    halo_free(p->sendbuf);
    halo_free(p->staged_dst);
    halo_free(p->recvbuf);
    halo_free(p->copy_src);
    halo_free(p->copy_dst);
    halo_host_adds_free(&p->adds);
  }
  halo_free(d->req);
  halo_free(d->wait);
  halo_free(d->work);
  halo_free(d->rd);
  halo_free(d->addbuf);
  halo_host_entry_type_free(&d->dt);
  halo_host_slots_free(ex);
  halo_free(d);
  ex->data = NULL;
}

static halo_status host_setup(halo_exec *ex) {
  int *seq = NULL;
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  host_data *d = halo_calloc(1, sizeof *d);
  if (!d) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the host executor");
  ex->data = d;
  d->words = halo_host_words(ex);
  d->req_bytes = 8;
  d->dt = MPI_DOUBLE;
  const int64_t w = d->words;
  HALO_TRY(halo_host_slots_setup(ex));
  HALO_TRY(HALO_CALLOC(d->work, s->n_work * w));

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
        p->dir[1].n++;
        p->dir[1].n_req += halo_exec_chunks(ex, ph->send[i].count);
        continue;
      }
      p->pack.n += ph->send[i].count;
      p->n_send_req += halo_exec_chunks(ex, ph->send[i].count);
    }
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      if (m->peer == s->rank) continue;
      if (is_ghost_run(s, ph->unpack + m->offset, m->count)) {
        p->dir[0].n++;
        p->dir[0].n_req += halo_exec_chunks(ex, m->count);
        continue;
      }
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
  int n_rd = 0;
  for (int k = 0; k < s->n_phases; k++) n_rd += s->phase[k].n_send + s->phase[k].n_recv;
  HALO_TRY(HALO_ALLOC(d->rd, n_rd));
  int n_wait = 0;
  for (int k = 0; k < s->n_phases; k++)
    if (d->ph[k].n_recv_req + d->ph[k].dir[0].n_req > n_wait)
      n_wait = d->ph[k].n_recv_req + d->ph[k].dir[0].n_req;
  for (int k = 0; k < s->n_phases; k++) n_wait += d->ph[k].n_send_req + d->ph[k].dir[1].n_req;
  HALO_TRY(HALO_ALLOC(d->wait, n_wait));
  for (int t = 0; t < 2; t++) {
    host_bound *b = &d->bound[t];
    for (int k = 0; k < s->n_phases; k++) {
      d->ph[k].dir[t].req_begin = b->n_req;
      b->n_req += d->ph[k].dir[t].n_req;
    }
    for (int j = 0; j < HOST_DIRECT_SLOTS; j++) {
      HALO_TRY(HALO_ALLOC(b->req[j], b->n_req));
      for (int i = 0; i < b->n_req; i++) b->req[j][i] = MPI_REQUEST_NULL;
    }
  }

  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    host_phase *p = &d->ph[k];
    MPI_Comm comm = ex->phase_comm[k];
    HALO_FREE(seq);
    HALO_TRY(HALO_ALLOC(seq, ph->n_send > ph->n_recv ? ph->n_send : ph->n_recv));
    HALO_TRY(halo_exec_sequence(ex, ph->send, ph->n_send, seq));
    HALO_TRY(HALO_ALLOC(p->pack.src, p->pack.n));
    HALO_TRY(HALO_ALLOC(p->sendbuf, p->pack.n * w));
    HALO_TRY(HALO_ALLOC(p->staged_dst, p->n_staged));
    HALO_TRY(HALO_ALLOC(p->recvbuf, p->n_staged * w));
    HALO_TRY(HALO_ALLOC(p->copy_src, p->n_copy));
    HALO_TRY(HALO_ALLOC(p->copy_dst, p->n_copy));
    HALO_TRY(alloc_direct(&p->dir[0]));
    HALO_TRY(alloc_direct(&p->dir[1]));
    if (s->add) HALO_TRY(halo_host_adds_setup(s, ph, NULL, &p->adds));
    /* sends */
    int64_t off = 0, ncopy = 0;
    int r = p->send_req_begin, nd = 0;
    host_direct *ds = &p->dir[1], *dr = &p->dir[0];
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      const int64_t *src = ph->pack + m->offset;
      if (m->peer == s->rank) {
        if (!s->add) memcpy(p->copy_src + ncopy, src, (size_t)m->count * sizeof *src);
        ncopy += m->count;
        continue;
      }
      if (is_source_run(s, src, m->count)) { /* requests made at the first begin from a source */
        put_direct(ds, nd++, src[0], m->count, ex->peer_send[k][i], seq[i]);
        continue;
      }
      memcpy(p->pack.src + off, src, (size_t)m->count * sizeof *src);
      d->rd[d->n_rd++] = (host_rdesc){r, 1, 0, k, ex->peer_send[k][i], seq[i], off, m->count};
      HALO_TRY(halo_exec_init_chunks(ex, &d->req[r], 1, p->sendbuf + off, m->count,
                                     ex->peer_send[k][i], k, seq[i], comm));
      r += halo_exec_chunks(ex, m->count);
      off += m->count;
    }
    HALO_TRY(halo_host_pack_setup(s, &p->pack));
    /* receives */
    HALO_TRY(halo_exec_sequence(ex, ph->recv, ph->n_recv, seq));
    int64_t soff = 0;
    ncopy = 0;
    nd = 0;
    r = p->recv_req_begin;
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      const int64_t *dst = ph->unpack + m->offset;
      if (m->peer == s->rank) {
        if (!s->add) memcpy(p->copy_dst + ncopy, dst, (size_t)m->count * sizeof *dst);
        ncopy += m->count;
        continue;
      }
      if (is_ghost_run(s, dst, m->count)) { /* requests made at the first begin into an address */
        put_direct(dr, nd++, dst[0], m->count, ex->peer_recv[k][i], seq[i]);
        continue;
      }
      double *buf;
      if (halo_exec_is_run(s, dst, m->count)) { /* into the work buffer */
        buf = halo_host_dst_ptr(s, ex->ghost, d->work, dst[0]);
        d->rd[d->n_rd++] =
            (host_rdesc){r, 0, 2, k, ex->peer_recv[k][i], seq[i], dst[0] - s->n_ghost, m->count};
      } else {
        buf = p->recvbuf + soff;
        d->rd[d->n_rd++] = (host_rdesc){r, 0, 1, k, ex->peer_recv[k][i], seq[i], soff, m->count};
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
  host_phase *p = &d->ph[k];
  halo_host_send(ex, &p->pack, p->sendbuf, p->n_copy, p->copy_src, p->copy_dst, d->x, d->to,
                 d->work);
  if (p->n_send_req) HALO_MPI(MPI_Startall(p->n_send_req, d->req + p->send_req_begin));
  if (p->dir[1].n_req)
    HALO_MPI(MPI_Startall(p->dir[1].n_req, d->bound[1].act + p->dir[1].req_begin));
  return HALO_SUCCESS;
}

/* Every plain request made again for entries of b bytes, the bound ones
 * dropped (made again at their next begin). */
static halo_status host_remake(halo_exec *ex, host_data *d, int64_t b) {
  for (int i = 0; i < d->n_req; i++)
    if (d->req[i] != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&d->req[i]));
  for (int t = 0; t < 2; t++) {
    host_bound *bd = &d->bound[t];
    for (int j = 0; j < HOST_DIRECT_SLOTS; j++) {
      for (int i = 0; i < bd->n_req; i++)
        if (bd->req[j][i] != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&bd->req[j][i]));
      bd->addr[j] = NULL;
    }
  }
  d->req_bytes = 0; /* no requests until they are all made */
  HALO_CHECK(halo_host_entry_type(b, &d->dt));
  for (int i = 0; i < d->n_rd; i++) {
    const host_rdesc *r = &d->rd[i];
    char *base = (char *)(r->kind == 0   ? d->ph[r->k].sendbuf
                          : r->kind == 1 ? d->ph[r->k].recvbuf
                                         : d->work);
    HALO_CHECK(halo_exec_init_chunks_typed(ex, &d->req[r->req], r->is_send, base + r->off * b,
                                           r->count, d->dt, b, r->peer, r->k, r->seq,
                                           ex->phase_comm[r->k]));
  }
  d->req_bytes = b;
  return HALO_SUCCESS;
}

static halo_status host_begin(halo_exec *ex, const double *src, double *dst) {
  host_data *d = ex->data;
  if (ex->unit.bytes != d->req_bytes) HALO_CHECK(host_remake(ex, d, ex->unit.bytes));
  d->dst = dst;
  HALO_CHECK(halo_host_start(ex, src, dst, d->work, &d->addbuf, &d->x, &d->to));
  HALO_CHECK(bind_direct(ex, d, 0, d->to));
  HALO_CHECK(bind_direct(ex, d, 1, d->x));
  if (d->n_recv_req) HALO_MPI(MPI_Startall(d->n_recv_req, d->req));
  if (d->bound[0].n_req) HALO_MPI(MPI_Startall(d->bound[0].n_req, d->bound[0].act));
  return phase_send(ex, d, 0);
}

/* Append the n request handles at r[off] to w at *at (persistent
 * requests: copies). */
static void gather(MPI_Request *w, int *at, const MPI_Request *r, int off, int n) {
  if (n <= 0) return;
  memcpy(w + *at, r + off, (size_t)n * sizeof *w);
  *at += n;
}

/* Wait for phase k's receives and, with the last phase, for every send:
 * one MPI_Waitall over the handles gathered in d->wait. */
static halo_status wait_phase(const halo_exec *ex, host_data *d, int k, int last) {
  const host_phase *p = &d->ph[k];
  int n = 0;
  gather(d->wait, &n, d->req, p->recv_req_begin, p->n_recv_req);
  gather(d->wait, &n, d->bound[0].act, p->dir[0].req_begin, p->dir[0].n_req);
  if (last) {
    gather(d->wait, &n, d->req, d->n_recv_req, d->n_req - d->n_recv_req);
    gather(d->wait, &n, d->bound[1].act, 0, d->bound[1].n_req);
  }
  return halo_exec_waitall(ex, n, d->wait);
}

static halo_status host_end(halo_exec *ex) {
  const halo_schedule *s = ex->sched;
  host_data *d = ex->data;
  double *to = s->add ? d->dst : d->to;
  for (int k = 0; k < s->n_phases; k++) {
    host_phase *p = &d->ph[k];
    if (k > 0) HALO_CHECK(phase_send(ex, d, k));
    HALO_CHECK(wait_phase(ex, d, k, k == s->n_phases - 1));
    halo_host_receive(ex, &p->adds, p->n_staged, p->staged_dst, p->recvbuf, d->x, to, d->work);
  }
  halo_host_finish(ex, d->to, d->dst); /* forward: into the ghost slots */
  d->x = NULL;
  d->dst = d->to = NULL;
  return HALO_SUCCESS;
}

const halo_exec_ops halo_exec_host_ops = {
    .name = "host",
    .units = 1,
    .setup = host_setup,
    .begin = host_begin,
    .end = host_end,
    .destroy = host_destroy,
};

const halo_transport_desc halo_transport_desc_host = {
    .name = "host",
    .id = HALO_TRANSPORT_HOST,
    .memory = HALO_TMEM_HOST,
    .summary = "MPI two-sided on host buffers, persistent requests",
    .compiled = 1,
    .auto_policy = HALO_AUTO_ALWAYS,
    .model = {.channel = HALO_CHANNEL_CPU},
    .host_ops = &halo_exec_host_ops,
};
