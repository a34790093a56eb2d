/* Host backend over MPI one-sided communication (transport rma).
 *
 * Every rank exposes one window per executor, made at plan time
 * (MPI_Win_allocate on the plan's communicator): the values it receives from
 * other ranks, phase after phase, each message at an offset the sender
 * learns at set-up. A phase's sends are packed into a send buffer and put
 * (MPI_Put) straight into the receivers' windows; completion is general
 * active target synchronisation on the phase's neighbours alone (PSCW): a
 * receiver exposes its window to the ranks that send to it in the phase
 * (MPI_Win_post), a sender opens an access epoch to the ranks it sends to
 * (MPI_Win_start), puts, and closes it (MPI_Win_complete); the receiver's
 * MPI_Win_wait returns once all of them closed theirs, and it unpacks (adds,
 * in reverse, in the order of the receive list: the host backend's sums, bit
 * for bit). No request, window or buffer is made per exchange.
 *
 * begin() exposes and puts the first phase and returns; end() completes it,
 * unpacks, and runs the other phases. A receiver exposes its window for the
 * next exchange only after it unpacked the last, so a put never overwrites
 * values not yet read.
 *
 * Units. The window, the send buffers and the work buffer hold entries of
 * up to cfg.unit_max bytes (halo_host_words doubles an entry), made once. A
 * message's place in a receiver's window is learnt in entries at set-up;
 * the window's displacement unit is one byte, so each put lands at that
 * place times the bytes of the exchange's entries, whatever their size, and
 * nothing is made again when the size changes but the entry's datatype
 * (MPI_DOUBLE for 8 bytes, the one-double road), local to this rank. Counts
 * are in entries, split at max_count as for one double. */
#include <string.h>

#include "exec/host_common.h"
#include "exec/transport.h"

typedef struct {
  halo_host_pack pack; /* the values sent to other ranks, in send list order */
  double *sendbuf;
  int64_t *disp;     /* per message of the send list: where it lands in the receiver's window */
  MPI_Group targets; /* the ranks this rank puts to in the phase (MPI_GROUP_NULL: none) */
  MPI_Group origins; /* the ranks that put to this rank */
  int64_t n_copy;    /* forward: values copied to itself */
  int64_t *copy_src, *copy_dst;
  int64_t win_off, n_recv; /* values received from other ranks, at win_off in the window */
  int64_t *unpack;         /* forward: their destinations */
  halo_host_adds adds;     /* reverse */
  halo_rma_posted posted;  /* with exchange_timeout_ms */
} rma_phase;

/* The windows of a communicator: those made since the first still alive
 * (ids floor, floor+1, ...), with whether this rank released each, and what
 * to undo on each one's memory before it is freed. */
struct halo_rma_windows_s {
  int floor, n, cap;
  MPI_Comm comm; /* the context's: the windows' processes */
  MPI_Win *win;
  unsigned char *released, *broken;
  halo_rma_memory *mem;
};

/* Free window i, after undoing what its maker did to its memory. */
static int window_free(halo_rma_windows *w, int i) {
  if (w->mem[i].base) w->mem[i].release(w->mem[i].base);
  w->mem[i].base = NULL;
  return MPI_Win_free(&w->win[i]);
}

halo_status halo_rma_windows_add(void **slot, MPI_Comm comm, MPI_Win win, halo_rma_memory mem,
                                 int *id) {
  if (!*slot && !(*slot = halo_calloc(1, sizeof(halo_rma_windows))))
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping an MPI window");
  halo_rma_windows *w = *slot;
  w->comm = comm;
  if (w->n == w->cap) {
    const int cap = w->cap ? 2 * w->cap : 8;
    MPI_Win *a = halo_realloc(w->win, (size_t)cap * sizeof *a);
    if (a) w->win = a;
    unsigned char *b = a ? halo_realloc(w->released, (size_t)cap) : NULL;
    if (b) w->released = b;
    unsigned char *e = b ? halo_realloc(w->broken, (size_t)cap) : NULL;
    if (e) w->broken = e;
    halo_rma_memory *c = e ? halo_realloc(w->mem, (size_t)cap * sizeof *c) : NULL;
    if (!c) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping an MPI window");
    w->mem = c;
    w->cap = cap;
  }
  w->win[w->n] = win;
  w->released[w->n] = 0;
  w->broken[w->n] = 0;
  w->mem[w->n] = mem;
  *id = w->floor + w->n++;
  return HALO_SUCCESS;
}

void halo_rma_windows_drop_last(halo_rma_windows *w) {
  if (w && w->n > 0) w->n--;
}

halo_status halo_rma_windows_collect(halo_rma_windows *w, MPI_Comm comm) {
  halo_status st = HALO_SUCCESS;
  unsigned char *all = NULL;
  if (!w || w->n == 0) return HALO_SUCCESS;          /* the same on every rank: n and floor agree */
  HALO_TRY(halo_agree(comm, HALO_ALLOC(all, w->n))); /* before the reduction */
  HALO_TRY_MPI(MPI_Allreduce(w->released, all, w->n, MPI_UNSIGNED_CHAR, MPI_MIN, comm));
  for (int i = 0; i < w->n; i++) /* in the order they were made, on every rank */
    if (all[i] && w->win[i] != MPI_WIN_NULL) HALO_TRY_MPI(window_free(w, i));
  int dead = 0; /* the leading windows, freed: the floor moves past them */
  while (dead < w->n && w->win[dead] == MPI_WIN_NULL) dead++;
  memmove(w->win, w->win + dead, (size_t)(w->n - dead) * sizeof *w->win);
  memmove(w->released, w->released + dead, (size_t)(w->n - dead));
  memmove(w->broken, w->broken + dead, (size_t)(w->n - dead));
  memmove(w->mem, w->mem + dead, (size_t)(w->n - dead) * sizeof *w->mem);
  w->n -= dead;
  w->floor += dead;
cleanup:
  halo_free(all);
  return st;
}

void halo_rma_windows_free(halo_rma_windows **w_p) {
  halo_rma_windows *w = w_p ? *w_p : NULL;
  if (!w) return;
  /* a window broken on some rank stays on every rank (the same n on all) */
  if (w->n > 0 && MPI_Allreduce(MPI_IN_PLACE, w->broken, w->n, MPI_UNSIGNED_CHAR, MPI_MAX,
                                w->comm) != MPI_SUCCESS)
    memset(w->broken, 1, (size_t)w->n); /* not agreed: none freed, none waited for */
  for (int i = 0; i < w->n; i++)
    if (w->win[i] != MPI_WIN_NULL && !w->broken[i]) window_free(w, i);
  halo_free(w->win);
  halo_free(w->released);
  halo_free(w->broken);
  halo_free(w->mem);
  halo_free(w);
  *w_p = NULL;
}

int halo_rma_windows_count(const halo_rma_windows *w) {
  int n = 0;
  for (int i = 0; w && i < w->n; i++) n += w->win[i] != MPI_WIN_NULL;
  return n;
}

void halo_rma_windows_release(halo_rma_windows *w, int id) {
  if (w && id >= w->floor && id < w->floor + w->n) w->released[id - w->floor] = 1;
}

void halo_rma_windows_break(halo_rma_windows *w, int id) {
  if (w && id >= w->floor && id < w->floor + w->n) w->broken[id - w->floor] = 1;
}

/* ---- epochs within exchange_timeout_ms ----------------------------------- */

/* The distinct peers other than self among n messages, in list order, into
 * r (room for n); their number. */
static int distinct_peers(const halo_msg *m, int n, int self, int *r) {
  int u = 0;
  for (int i = 0; i < n; i++) {
    int seen = m[i].peer == self;
    for (int j = 0; j < u && !seen; j++) seen = r[j] == m[i].peer;
    if (!seen) r[u++] = m[i].peer;
  }
  return u;
}

halo_status halo_rma_posted_setup(const halo_exec *ex, int k, halo_rma_posted *p) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  const halo_phase *ph = &s->phase[k];
  int *to = NULL, *from = NULL;
  memset(p, 0, sizeof *p);
  if (ex->cfg.timeout_ms <= 0) return HALO_SUCCESS;
  /* the peers of the phase's groups: origins put to this rank, targets take its puts */
  HALO_TRY(HALO_ALLOC(to, ph->n_recv + 1));
  HALO_TRY(HALO_ALLOC(from, ph->n_send + 1));
  const int n_to = distinct_peers(ph->recv, ph->n_recv, s->rank, to);
  const int n_from = distinct_peers(ph->send, ph->n_send, s->rank, from);
  HALO_TRY(HALO_ALLOC(p->req, n_to + n_from + 1));
  const int tag = halo_exec_tag_ready(ex, k); /* the IPC signals' tag: rma has none */
  for (int i = 0; i < n_to; i++) {
    p->req[i] = MPI_REQUEST_NULL;
    HALO_TRY_MPI(MPI_Send_init(NULL, 0, MPI_BYTE, to[i], tag, ex->cfg.comm, &p->req[i]));
    p->n_origins++;
  }
  for (int i = 0; i < n_from; i++) {
    p->req[n_to + i] = MPI_REQUEST_NULL;
    HALO_TRY_MPI(MPI_Recv_init(NULL, 0, MPI_BYTE, from[i], tag, ex->cfg.comm, &p->req[n_to + i]));
    p->n_targets++;
  }
cleanup:
  halo_free(from);
  halo_free(to);
  if (st != HALO_SUCCESS) halo_rma_posted_free(p);
  return st;
}

void halo_rma_posted_free(halo_rma_posted *p) {
  for (int i = 0; p->req && i < p->n_origins + p->n_targets; i++)
    if (p->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&p->req[i]);
  halo_free(p->req);
  memset(p, 0, sizeof *p);
}

halo_status halo_rma_posted_start(halo_rma_posted *p) {
  if (p->req && p->n_origins + p->n_targets)
    HALO_MPI(MPI_Startall(p->n_origins + p->n_targets, p->req));
  return HALO_SUCCESS;
}

halo_status halo_rma_targets_posted(const halo_exec *ex, halo_rma_posted *p) {
  return p->req ? halo_exec_waitall(ex, p->n_targets, p->req + p->n_origins) : HALO_SUCCESS;
}

halo_status halo_rma_epoch_wait(const halo_exec *ex, MPI_Win win, halo_rma_posted *p) {
  const int64_t ms = ex->cfg.timeout_ms;
  if (!p->req) {
    HALO_MPI(MPI_Win_wait(win));
    return HALO_SUCCESS;
  }
  const double deadline = MPI_Wtime() + 1e-3 * (double)ms;
  for (int done = 0; !done;) {
    HALO_MPI(MPI_Win_test(win, &done));
    if (!done && MPI_Wtime() > deadline)
      return HALO_ERROR(HALO_ERR_TIMEOUT,
                        "an exchange waited %lld ms for its peers' one-sided puts "
                        "(exchange_timeout_ms): a peer failed or stopped; destroy this plan",
                        (long long)ms);
  }
  return halo_exec_waitall(ex, p->n_origins, p->req); /* the 0-byte sends */
}

typedef struct {
  rma_phase ph[HALO_MAX_PHASES];
  MPI_Win win;
  int win_id; /* in the context's windows; -1: none */
  double *win_buf;
  double *work;
  const double *x; /* the source of the exchange in flight */
  double *dst;     /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  double *to;      /* forward: where the ghosts land */
  double *addbuf;  /* forward add of a unit: where the ghosts land (made at the first) */
  MPI_Datatype dt; /* one entry of dt_bytes bytes, the puts' (MPI_DOUBLE: 8) */
  int64_t dt_bytes;
} rma_data;

static void rma_destroy(halo_exec *ex) {
  rma_data *d = ex->data;
  if (!d) return;
  if (d->win_id >= 0) /* freed later, collectively (halo_rma_windows_collect) */
    halo_rma_windows_release(*ex->cfg.state, d->win_id);
  else if (d->win != MPI_WIN_NULL) /* set-up failed on every rank after making it */
    MPI_Win_free(&d->win);
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    rma_phase *p = &d->ph[k];
    halo_host_pack_free(&p->pack);
    halo_host_adds_free(&p->adds);
    halo_free(p->sendbuf);
    halo_free(p->disp);
    halo_free(p->copy_src);
    halo_free(p->copy_dst);
    halo_free(p->unpack);
    if (p->targets != MPI_GROUP_NULL) MPI_Group_free(&p->targets);
    if (p->origins != MPI_GROUP_NULL) MPI_Group_free(&p->origins);
    halo_rma_posted_free(&p->posted);
  }
  halo_free(d->work);
  halo_free(d->addbuf);
  halo_host_entry_type_free(&d->dt);
  halo_host_slots_free(ex);
  halo_free(d);
  ex->data = NULL;
}

halo_status halo_rma_peer_group(MPI_Group all, const halo_msg *m, int n, int self, MPI_Group *g) {
  halo_status st = HALO_SUCCESS;
  int *r = NULL, u = 0;
  *g = MPI_GROUP_NULL;
  HALO_TRY(HALO_ALLOC(r, n));
  u = distinct_peers(m, n, self, r);
  if (u) HALO_TRY_MPI(MPI_Group_incl(all, u, r, g));
cleanup:
  halo_free(r);
  return st;
}

/* What a rank makes alone: buffers, maps, groups, and the window's size. */
static halo_status setup_local(halo_exec *ex, rma_data *d, int64_t *win_n) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  MPI_Group all = MPI_GROUP_NULL;
  const int64_t w = halo_host_words(ex);
  HALO_TRY(halo_host_slots_setup(ex));
  HALO_TRY(HALO_CALLOC(d->work, s->n_work * w));
  HALO_TRY_MPI(MPI_Comm_group(ex->cfg.comm, &all));
  *win_n = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    rma_phase *p = &d->ph[k];
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer == s->rank)
        p->n_copy += s->add ? 0 : ph->send[i].count; /* reverse: added in receive order */
      else
        p->pack.n += ph->send[i].count;
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank) p->n_recv += ph->recv[i].count;
    p->win_off = *win_n;
    *win_n += p->n_recv;
    HALO_TRY(HALO_ALLOC(p->pack.src, p->pack.n));
    HALO_TRY(HALO_ALLOC(p->sendbuf, p->pack.n * w));
    HALO_TRY(HALO_ALLOC(p->disp, ph->n_send));
    HALO_TRY(HALO_ALLOC(p->copy_src, p->n_copy));
    HALO_TRY(HALO_ALLOC(p->copy_dst, p->n_copy));
    int64_t np = 0, nc = 0;
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer != s->rank)
        memcpy(p->pack.src + np, ph->pack + m->offset, (size_t)m->count * sizeof *p->pack.src);
      else if (!s->add)
        memcpy(p->copy_src + nc, ph->pack + m->offset, (size_t)m->count * sizeof *p->copy_src);
      if (m->peer != s->rank)
        np += m->count;
      else
        nc += m->count;
    }
    HALO_TRY(halo_host_pack_setup(s, &p->pack));
    if (s->add) {
      HALO_TRY(halo_host_adds_setup(s, ph, NULL, &p->adds));
    } else {
      HALO_TRY(HALO_ALLOC(p->unpack, p->n_recv));
      int64_t nu = 0;
      nc = 0;
      for (int i = 0; i < ph->n_recv; i++) {
        const halo_msg *m = &ph->recv[i];
        int64_t *to = m->peer == s->rank ? p->copy_dst + nc : p->unpack + nu;
        memcpy(to, ph->unpack + m->offset, (size_t)m->count * sizeof *to);
        if (m->peer == s->rank)
          nc += m->count;
        else
          nu += m->count;
      }
      if (nc != p->n_copy)
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: copies to itself do not match", k);
    }
    HALO_TRY(halo_rma_peer_group(all, ph->send, ph->n_send, s->rank, &p->targets));
    HALO_TRY(halo_rma_peer_group(all, ph->recv, ph->n_recv, s->rank, &p->origins));
    HALO_TRY(halo_rma_posted_setup(ex, k, &p->posted));
  }
cleanup:
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  return st;
}

halo_status halo_rma_exchange_disp(halo_exec *ex, const int64_t *win_off, int64_t *const *disp) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  int n_req = 0, n_recv = 0, n_send = 0, *rseq = NULL, *sseq = NULL;
  int64_t *out = NULL;
  MPI_Request *req = NULL;
  for (int k = 0; k < s->n_phases; k++) n_recv += s->phase[k].n_recv;
  for (int k = 0; k < s->n_phases; k++) n_send += s->phase[k].n_send;
  st = HALO_ALLOC(out, n_recv);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(req, n_recv + n_send);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(rseq, n_recv);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(sseq, n_send);
  /* each message's tag sequence, phase by phase */
  for (int k = 0, r = 0, t = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
    const halo_phase *ph = &s->phase[k];
    st = halo_exec_sequence(ex, ph->recv, ph->n_recv, rseq + r);
    if (st == HALO_SUCCESS) st = halo_exec_sequence(ex, ph->send, ph->n_send, sseq + t);
    r += ph->n_recv, t += ph->n_send;
  }
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  int n_out = 0;
  for (int k = 0, r = 0, t = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    int64_t at = win_off[k];
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      if (m->peer == s->rank) continue;
      out[n_out] = at;
      at += m->count;
      HALO_TRY_MPI(MPI_Isend(&out[n_out++], 1, MPI_INT64_T, m->peer,
                             halo_exec_tag(ex, k, rseq[r + i]), ex->cfg.comm, &req[n_req++]));
    }
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank) continue;
      HALO_TRY_MPI(MPI_Irecv(&disp[k][i], 1, MPI_INT64_T, m->peer,
                             halo_exec_tag(ex, k, sseq[t + i]), ex->cfg.comm, &req[n_req++]));
    }
    r += ph->n_recv, t += ph->n_send;
  }
  HALO_TRY_MPI(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE));
cleanup:
  halo_free(sseq);
  halo_free(rseq);
  halo_free(req);
  halo_free(out);
  return st;
}

/* The status of an MPI call, for calls whose failure must be agreed on. */
static halo_status mpi_status(int rc, const char *call) {
  return rc == MPI_SUCCESS ? HALO_SUCCESS : halo_error_mpi(rc, call, __FILE__, __LINE__);
}

/* Collective over the plan's communicator: a failure on one rank is every
 * rank's, so that none waits in the window's creation or the exchange of
 * offsets. */
static halo_status rma_setup(halo_exec *ex) {
  halo_status st = HALO_SUCCESS;
  MPI_Info info = MPI_INFO_NULL;
  rma_data *d = halo_calloc(1, sizeof *d);
  if (d) {
    d->win = MPI_WIN_NULL;
    d->win_id = -1;
    d->dt = MPI_DOUBLE;
    d->dt_bytes = 8;
    for (int k = 0; k < HALO_MAX_PHASES; k++) d->ph[k].targets = d->ph[k].origins = MPI_GROUP_NULL;
  }
  ex->data = d;
  int64_t win_n = 0;
  st = d ? setup_local(ex, d, &win_n)
         : HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the rma executor");
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  HALO_TRY_MPI(MPI_Info_create(&info));
  HALO_TRY_MPI(MPI_Info_set(info, "no_locks", "true")); /* active target only */
  HALO_TRY_MPI(MPI_Info_set(info, "same_disp_unit", "true"));
  /* entries of the largest unit; displacements in bytes (entries of any unit) */
  st =
      mpi_status(MPI_Win_allocate((MPI_Aint)(win_n * halo_host_words(ex) * (int64_t)sizeof(double)),
                                  1, info, ex->cfg.comm, &d->win_buf, &d->win),
                 "MPI_Win_allocate");
  if (st == HALO_SUCCESS)
    st = mpi_status(MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  {
    int64_t win_off[HALO_MAX_PHASES], *disp[HALO_MAX_PHASES];
    for (int k = 0; k < ex->sched->n_phases; k++)
      win_off[k] = d->ph[k].win_off, disp[k] = d->ph[k].disp;
    HALO_TRY(halo_agree(ex->cfg.comm, halo_rma_exchange_disp(ex, win_off, disp)));
  }
  st = halo_agree(ex->cfg.comm, halo_rma_windows_add(ex->cfg.state, ex->cfg.comm, d->win,
                                                     (halo_rma_memory){0}, &d->win_id));
  if (st != HALO_SUCCESS && d->win_id >= 0) {
    /* kept here but not on a peer: dropped, so that every rank frees it now */
    halo_rma_windows_drop_last(*ex->cfg.state);
    d->win_id = -1;
  }
cleanup:
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (st != HALO_SUCCESS) rma_destroy(ex);
  return st;
}

/* Phase k opened: the window exposed to its origins, the sends packed and
 * put, the copies to itself made (forward). */
static halo_status phase_open(halo_exec *ex, rma_data *d, int k) {
  const halo_schedule *s = ex->sched;
  const halo_phase *ph = &s->phase[k];
  rma_phase *p = &d->ph[k];
  if (p->origins != MPI_GROUP_NULL) HALO_MPI(MPI_Win_post(p->origins, MPI_MODE_NOSTORE, d->win));
  HALO_CHECK(halo_rma_posted_start(&p->posted));
  halo_host_send(ex, &p->pack, p->sendbuf, p->n_copy, p->copy_src, p->copy_dst, d->x, d->to,
                 d->work);
  if (p->targets == MPI_GROUP_NULL) return HALO_SUCCESS;
  HALO_CHECK(halo_rma_targets_posted(ex, &p->posted));
  HALO_MPI(MPI_Win_start(p->targets, 0, d->win));
  const int64_t c = ex->cfg.max_count, b = d->dt_bytes;
  const char *buf = (const char *)p->sendbuf;
  for (int i = 0; i < ph->n_send; i++) {
    const halo_msg *m = &ph->send[i];
    if (m->peer == s->rank) continue;
    for (int64_t done = 0; done < m->count; done += c) {
      const int n = (int)(m->count - done < c ? m->count - done : c);
      HALO_MPI(MPI_Put(buf + done * b, n, d->dt, m->peer, (MPI_Aint)((p->disp[i] + done) * b), n,
                       d->dt, d->win));
    }
    buf += m->count * b;
  }
  return HALO_SUCCESS;
}

/* Phase k closed: our puts complete, the origins' puts arrived, unpacked. */
static halo_status phase_close(halo_exec *ex, rma_data *d, int k) {
  const halo_schedule *s = ex->sched;
  rma_phase *p = &d->ph[k];
  if (p->targets != MPI_GROUP_NULL) HALO_MPI(MPI_Win_complete(d->win));
  if (p->origins != MPI_GROUP_NULL)
    HALO_CHECK(halo_rma_epoch_wait(ex, d->win, &p->posted));
  else
    HALO_CHECK(halo_exec_waitall(ex, p->posted.n_origins, p->posted.req));
  const char *in = (const char *)d->win_buf + p->win_off * d->dt_bytes;
  halo_host_receive(ex, &p->adds, p->n_recv, p->unpack, in, d->x, s->add ? d->dst : d->to, d->work);
  return HALO_SUCCESS;
}

static halo_status rma_begin(halo_exec *ex, const double *src, double *dst) {
  const halo_schedule *s = ex->sched;
  rma_data *d = ex->data;
  if (ex->unit.bytes != d->dt_bytes) { /* the puts' datatype: the window holds any entry */
    d->dt_bytes = 0;
    HALO_CHECK(halo_host_entry_type(ex->unit.bytes, &d->dt));
    d->dt_bytes = ex->unit.bytes;
  }
  d->dst = dst;
  HALO_CHECK(halo_host_start(ex, src, dst, d->work, &d->addbuf, &d->x, &d->to));
  return s->n_phases ? phase_open(ex, d, 0) : HALO_SUCCESS;
}

static halo_status rma_end(halo_exec *ex) {
  const halo_schedule *s = ex->sched;
  rma_data *d = ex->data;
  for (int k = 0; k < s->n_phases; k++) {
    if (k > 0) HALO_CHECK(phase_open(ex, d, k));
    HALO_CHECK(phase_close(ex, d, k));
  }
  halo_host_finish(ex, d->to, d->dst); /* forward: into the ghost slots */
  d->x = NULL;
  d->dst = d->to = NULL;
  return HALO_SUCCESS;
}

/* A failed exchange may have left an epoch open: the window is broken. */
static int rma_unblock(halo_exec *ex, int again) {
  rma_data *d = ex->data;
  (void)again; /* broken once or twice alike */
  if (d->win_id >= 0) halo_rma_windows_break(*ex->cfg.state, d->win_id);
  return 1;
}

const halo_exec_ops halo_exec_rma_ops = {
    .name = "rma",
    .units = 1,
    .setup = rma_setup,
    .begin = rma_begin,
    .end = rma_end,
    .unblock = rma_unblock,
    .destroy = rma_destroy,
};

static halo_status rma_collect(void *state, MPI_Comm comm) {
  return halo_rma_windows_collect(state, comm);
}

static int rma_count(const void *state) { return halo_rma_windows_count(state); }

static void rma_free_state(void **state_p) {
  halo_rma_windows *w = *state_p;
  halo_rma_windows_free(&w);
  *state_p = NULL;
}

/* Host memory here; device memory through the CUDA executor's rma hooks
 * (cuda_rma.c), staged through pinned host buffers, on the same windows. */
const halo_transport_desc halo_transport_desc_rma = {
    .name = "rma",
    .id = HALO_TRANSPORT_RMA,
    .memory = HALO_TMEM_HOST | HALO_TMEM_DEVICE,
    .summary = "MPI one-sided puts into windows made at plan time, PSCW on each phase's peers",
    .compiled = 1,
    .auto_policy = HALO_AUTO_PRICED,
    .model = {.channel = HALO_CHANNEL_CPU, .copies = 1, .own_params = 1},
    .host_ops = &halo_exec_rma_ops,
    .collect = rma_collect,
    .release = rma_free_state,
    .state_count = rma_count,
};
