/* Transport rma of the CUDA executor: MPI one-sided puts, staged through
 * pinned host memory (the host backend's rma, host_rma.c, for device
 * buffers).
 *
 * Every rank exposes one window per executor, made at plan time
 * (MPI_Win_allocate: Open MPI's shared-memory windows take no memory of the
 * caller's) and pinned for the GPU's copies (cudaHostRegister; unpinned, the
 * copies still work, synchronously): the values it receives from other ranks,
 * phase after phase, each message at an offset its sender learns at set-up
 * (halo_rma_exchange_disp). A phase:
 *   start    the packed sends go down to pinned memory on the exchange
 *            stream; the window is exposed to the phase's origins
 *            (MPI_Win_post) once the last exchange's values went up from it;
 *   end      once the copy down is done, an access epoch to the phase's
 *            targets (MPI_Win_start), its MPI_Put calls (in pieces of at
 *            most max_count values), MPI_Win_complete, then MPI_Win_wait for
 *            the origins' puts; the received values go up into the receive
 *            buffer in one copy, and the executor unpacks (or adds) them.
 * Nothing is allocated per exchange. The window is kept in the context's
 * windows and freed (unpinned first) at a collective point after every rank
 * destroyed the plan. A communication helper keeps device buffers. */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include "exec/cuda_exec.h"

extern const cuda_transport halo_cuda_rma; /* its hooks, at the end */

enum { CH_RMA = 5 };

/* The executor's: the window (every phase's receives, pinned where CUDA
 * can), kept in the context's windows (freed collectively after the plan),
 * and the pinned send buffers of every phase. */
typedef struct {
  MPI_Win win;
  int win_id;
  double *win_buf, *send_buf;
  size_t send_bytes;
  int set;    /* the rma fields were initialised (groups, window) */
  int pinned; /* the window's memory is registered with CUDA */
} rma_exec;

/* A phase's: its sends (rma_send values of d_send from rma_send_off) go
 * down into h_rma_send and are put into the receivers' windows (rma_disp:
 * where, per send); its receives land in the window at win_off and go up
 * into d_recv at rma_recv_off; the phase's neighbours as groups (PSCW). */
typedef struct {
  int64_t rma_send, rma_send_off, rma_recv, rma_recv_off, win_off;
  double *h_rma_send;
  int64_t *rma_disp;
  MPI_Group rma_targets, rma_origins;
  halo_rma_posted rma_posted; /* with exchange_timeout_ms */
  cudaEvent_t ev_rma_down, ev_rma_up;
  int rma_up_pending; /* ev_rma_up recorded since the last post */
} rma_phase;

static rma_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_rma); }
static rma_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_rma, k); }

static void unpin(void *base) { cudaHostUnregister(base); }

/* Every message (helpers keep device buffers). */
static halo_status rma_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                               int peer, int send, channel *ch) {
  (void)ex, (void)d, (void)g, (void)peer, (void)send;
  *ch = CH_RMA;
  return HALO_SUCCESS;
}

static void rma_destroy(halo_exec *ex, cuda_data *d) {
  rma_exec *x = X(d);
  if (!x || !x->set) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    rma_phase *q = P(d, k);
    if (q->rma_targets != MPI_GROUP_NULL) MPI_Group_free(&q->rma_targets);
    if (q->rma_origins != MPI_GROUP_NULL) MPI_Group_free(&q->rma_origins);
    halo_rma_posted_free(&q->rma_posted);
    if (q->ev_rma_down) cudaEventDestroy(q->ev_rma_down);
    if (q->ev_rma_up) cudaEventDestroy(q->ev_rma_up);
    halo_free(q->rma_disp);
    q->rma_disp = NULL, q->h_rma_send = NULL;
  }
  if (x->win_id >= 0) { /* the window and its memory go later, collectively */
    halo_rma_windows_release(*ex->cfg.state, x->win_id);
  } else if (x->win != MPI_WIN_NULL) { /* set-up failed on every rank */
    if (x->pinned) unpin(x->win_buf);
    MPI_Win_free(&x->win);
  }
  x->pinned = 0;
  x->win = MPI_WIN_NULL, x->win_buf = NULL, x->win_id = -1;
  halo_device_pinned_release(ex->cfg.dev, x->send_buf, x->send_bytes);
  x->send_buf = NULL;
  x->set = 0;
}

static halo_status mpi_status(int rc, const char *call) {
  return rc == MPI_SUCCESS ? HALO_SUCCESS : halo_error_mpi(rc, call, __FILE__, __LINE__);
}

/* What this rank makes alone: counts and offsets, buffers, groups, events. */
static halo_status setup_local(halo_exec *ex, cuda_data *d, int64_t *win_n) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  MPI_Group all = MPI_GROUP_NULL;
  rma_exec *x = X(d);
  int64_t sends = 0;
  *win_n = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *p = &d->ph[k];
    rma_phase *q = P(d, k);
    q->rma_send_off = q->rma_recv_off = -1;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && p->send[i].ch == CH_RMA) {
        if (q->rma_send_off < 0) q->rma_send_off = p->send[i].buf_off;
        q->rma_send += ph->send[i].count;
      }
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank && p->recv[i].ch == CH_RMA) {
        if (q->rma_recv_off < 0) q->rma_recv_off = p->recv[i].buf_off;
        q->rma_recv += ph->recv[i].count;
      }
    if (q->rma_send_off < 0) q->rma_send_off = 0;
    if (q->rma_recv_off < 0) q->rma_recv_off = 0;
    q->win_off = *win_n;
    *win_n += q->rma_recv;
    sends += q->rma_send;
  }
  x->send_bytes = (size_t)sends * sizeof(double);
  HALO_TRY(halo_device_pinned_alloc(ex->cfg.dev, x->send_bytes, (void **)&x->send_buf));
  HALO_TRY_MPI(MPI_Comm_group(ex->cfg.comm, &all));
  int64_t so = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    rma_phase *q = P(d, k);
    q->h_rma_send = x->send_buf ? x->send_buf + so : NULL;
    so += q->rma_send;
    HALO_TRY(HALO_CALLOC(q->rma_disp, ph->n_send > 0 ? ph->n_send : 1));
    HALO_TRY(halo_event_create(&q->ev_rma_down, cudaEventDisableTiming));
    HALO_TRY(halo_event_create(&q->ev_rma_up, cudaEventDisableTiming));
    /* the channel is rma for every message to another rank: the phase's peers */
    HALO_TRY(halo_rma_peer_group(all, ph->send, ph->n_send, s->rank, &q->rma_targets));
    HALO_TRY(halo_rma_peer_group(all, ph->recv, ph->n_recv, s->rank, &q->rma_origins));
    HALO_TRY(halo_rma_posted_setup(ex, k, &q->rma_posted));
  }
cleanup:
  if (all != MPI_GROUP_NULL) MPI_Group_free(&all);
  return st;
}

/* Collective over the plan's communicator; every failure agreed before the
 * next collective. */
static halo_status rma_setup(halo_exec *ex, cuda_data *d) {
  if (ex->cfg.transport != HALO_TRANSPORT_RMA) return HALO_SUCCESS;
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  MPI_Info info = MPI_INFO_NULL;
  rma_exec *x = X(d);
  x->set = 1;
  x->win = MPI_WIN_NULL;
  x->win_id = -1;
  for (int k = 0; k < HALO_MAX_PHASES; k++)
    P(d, k)->rma_targets = P(d, k)->rma_origins = MPI_GROUP_NULL;
  int64_t win_n = 0;
  HALO_TRY(halo_agree(ex->cfg.comm, setup_local(ex, d, &win_n)));
  HALO_TRY_MPI(MPI_Info_create(&info));
  HALO_TRY_MPI(MPI_Info_set(info, "no_locks", "true")); /* active target only */
  HALO_TRY_MPI(MPI_Info_set(info, "same_disp_unit", "true"));
  st = mpi_status(MPI_Win_allocate((MPI_Aint)(win_n * (int64_t)sizeof(double)), (int)sizeof(double),
                                   info, ex->cfg.comm, &x->win_buf, &x->win),
                  "MPI_Win_allocate");
  if (st == HALO_SUCCESS)
    st = mpi_status(MPI_Win_set_errhandler(x->win, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  if (st == HALO_SUCCESS && win_n > 0) { /* pinned where CUDA can; else the copies are plain */
    x->pinned = cudaHostRegister(x->win_buf, (size_t)win_n * sizeof(double),
                                 cudaHostRegisterDefault) == cudaSuccess;
    if (!x->pinned) (void)cudaGetLastError();
  }
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  {
    int64_t win_off[HALO_MAX_PHASES], *disp[HALO_MAX_PHASES];
    for (int k = 0; k < s->n_phases; k++)
      win_off[k] = P(d, k)->win_off, disp[k] = P(d, k)->rma_disp;
    HALO_TRY(halo_agree(ex->cfg.comm, halo_rma_exchange_disp(ex, win_off, disp)));
  }
  const halo_rma_memory mem = {x->pinned ? x->win_buf : NULL, unpin};
  st = halo_agree(ex->cfg.comm,
                  halo_rma_windows_add(ex->cfg.state, ex->cfg.comm, x->win, mem, &x->win_id));
  if (st != HALO_SUCCESS && x->win_id >= 0) {
    /* kept here but not on a peer: dropped, so that every rank frees it now */
    halo_rma_windows_drop_last(*ex->cfg.state);
    x->win_id = -1;
  }
cleanup:
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return st;
}

/* Phase k's start: its sends down to pinned memory; the window exposed to
 * its origins once the last exchange's values went up from it. */
static halo_status rma_send(halo_exec *ex, cuda_data *d, int k) {
  const cphase *p = &d->ph[k];
  const rma_exec *x = X(d);
  rma_phase *q = P(d, k);
  if (!x->set) return HALO_SUCCESS;
  if (q->rma_send) {
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
    HALO_CUDA(cudaMemcpyAsync(q->h_rma_send, p->d_send + q->rma_send_off,
                              (size_t)q->rma_send * sizeof(double), cudaMemcpyDeviceToHost, d->xs));
    HALO_CUDA(cudaEventRecord(q->ev_rma_down, d->xs));
  }
  if (q->rma_origins != MPI_GROUP_NULL) {
    if (q->rma_up_pending) HALO_CUDA(cudaEventSynchronize(q->ev_rma_up));
    q->rma_up_pending = 0;
    HALO_MPI(MPI_Win_post(q->rma_origins, MPI_MODE_NOSTORE, x->win));
  }
  return halo_rma_posted_start(&q->rma_posted);
}

/* Phase k's end: the puts once the copy down is done, the epochs closed. */
static halo_status rma_receive(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  const cphase *p = &d->ph[k];
  const rma_exec *x = X(d);
  rma_phase *q = P(d, k);
  if (!x->set) return HALO_SUCCESS;
  if (q->rma_targets != MPI_GROUP_NULL) {
    if (q->rma_send) HALO_CUDA(cudaEventSynchronize(q->ev_rma_down));
    HALO_CHECK(halo_rma_targets_posted(ex, &q->rma_posted));
    HALO_MPI(MPI_Win_start(q->rma_targets, 0, x->win));
    const int64_t c = ex->cfg.max_count;
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank || p->send[i].ch != CH_RMA) continue;
      const double *buf = q->h_rma_send + (p->send[i].buf_off - q->rma_send_off);
      for (int64_t done = 0; done < m->count; done += c) {
        const int n = (int)(m->count - done < c ? m->count - done : c);
        HALO_MPI(MPI_Put(buf + done, n, MPI_DOUBLE, m->peer, (MPI_Aint)(q->rma_disp[i] + done), n,
                         MPI_DOUBLE, x->win));
      }
    }
    HALO_MPI(MPI_Win_complete(x->win));
  }
  if (q->rma_origins != MPI_GROUP_NULL)
    HALO_CHECK(halo_rma_epoch_wait(ex, x->win, &q->rma_posted));
  else
    HALO_CHECK(halo_exec_waitall(ex, q->rma_posted.n_origins, q->rma_posted.req));
  return HALO_SUCCESS;
}

/* The received values up into the receive buffer, before the unpack. */
static halo_status rma_land(halo_exec *ex, cuda_data *d, int k) {
  const cphase *p = &d->ph[k];
  const rma_exec *x = X(d);
  rma_phase *q = P(d, k);
  if (!x->set || !q->rma_recv) return HALO_SUCCESS;
  HALO_CUDA(cudaMemcpyAsync(p->d_recv + q->rma_recv_off, x->win_buf + q->win_off,
                            (size_t)q->rma_recv * sizeof(double), cudaMemcpyHostToDevice, d->xs));
  HALO_CUDA(cudaEventRecord(q->ev_rma_up, d->xs));
  q->rma_up_pending = 1;
  return halo_timeline_mark(ex->cfg.tl, 3);
}

/* Puts and epochs: the host waits for MPI. */
static int rma_host_waits(const halo_exec *ex, const cuda_data *d, int *numbered) {
  (void)numbered;
  for (int k = 0; k < S(ex)->n_phases; k++)
    if (P(d, k)->rma_send || P(d, k)->rma_recv) return HOST_WAIT_MPI;
  return 0;
}

/* After a failed exchange: an epoch of the window may be open, which is
 * never freed then. */
static void rma_unblock(halo_exec *ex, cuda_data *d) {
  const rma_exec *x = X(d);
  if (x->set && x->win_id >= 0) halo_rma_windows_break(*ex->cfg.state, x->win_id);
}

const cuda_transport halo_cuda_rma = {
    .name = "rma",
    .serves = {HALO_TRANSPORT_RMA},
    .device_helpers = 1,
    .recv_buffered = 1,
    .exec_bytes = sizeof(rma_exec),
    .phase_bytes = sizeof(rma_phase),
    .channel = rma_channel,
    .setup = rma_setup,
    .host_waits = rma_host_waits,
    .send = rma_send,
    .receive = rma_receive,
    .land = rma_land,
    .unblock = rma_unblock,
    .destroy = rma_destroy,
};

#endif /* HALO_HAVE_CUDA */
