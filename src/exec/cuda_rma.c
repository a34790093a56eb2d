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

static void unpin(void *base) { cudaHostUnregister(base); }

static void rma_destroy(halo_exec *ex, cuda_data *d) {
  if (!d->rma_set) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    cphase *p = &d->ph[k];
    if (p->rma_targets != MPI_GROUP_NULL) MPI_Group_free(&p->rma_targets);
    if (p->rma_origins != MPI_GROUP_NULL) MPI_Group_free(&p->rma_origins);
    halo_rma_posted_free(&p->rma_posted);
    if (p->ev_rma_down) cudaEventDestroy(p->ev_rma_down);
    if (p->ev_rma_up) cudaEventDestroy(p->ev_rma_up);
    halo_free(p->rma_disp);
    p->rma_disp = NULL, p->h_rma_send = NULL;
  }
  if (d->rma_win_id >= 0) { /* the window and its memory go later, collectively */
    halo_rma_windows_release(*ex->cfg.state, d->rma_win_id);
  } else if (d->rma_win != MPI_WIN_NULL) { /* set-up failed on every rank */
    if (d->rma_pinned) unpin(d->rma_win_buf);
    MPI_Win_free(&d->rma_win);
  }
  d->rma_pinned = 0;
  d->rma_win = MPI_WIN_NULL, d->rma_win_buf = NULL, d->rma_win_id = -1;
  halo_device_pinned_release(ex->cfg.dev, d->rma_send_buf, d->rma_send_bytes);
  d->rma_send_buf = NULL;
  d->rma_set = 0;
}

static halo_status mpi_status(int rc, const char *call) {
  return rc == MPI_SUCCESS ? HALO_SUCCESS : halo_error_mpi(rc, call, __FILE__, __LINE__);
}

/* What this rank makes alone: counts and offsets, buffers, groups, events. */
static halo_status setup_local(halo_exec *ex, cuda_data *d, int64_t *win_n) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  MPI_Group all = MPI_GROUP_NULL;
  int64_t sends = 0;
  *win_n = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    p->rma_send_off = p->rma_recv_off = -1;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && p->send[i].ch == CH_RMA) {
        if (p->rma_send_off < 0) p->rma_send_off = p->send[i].buf_off;
        p->rma_send += ph->send[i].count;
      }
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank && p->recv[i].ch == CH_RMA) {
        if (p->rma_recv_off < 0) p->rma_recv_off = p->recv[i].buf_off;
        p->rma_recv += ph->recv[i].count;
      }
    if (p->rma_send_off < 0) p->rma_send_off = 0;
    if (p->rma_recv_off < 0) p->rma_recv_off = 0;
    p->win_off = *win_n;
    *win_n += p->rma_recv;
    sends += p->rma_send;
  }
  d->rma_send_bytes = (size_t)sends * sizeof(double);
  HALO_TRY(halo_device_pinned_alloc(ex->cfg.dev, d->rma_send_bytes, (void **)&d->rma_send_buf));
  HALO_TRY_MPI(MPI_Comm_group(ex->cfg.comm, &all));
  int64_t so = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    p->h_rma_send = d->rma_send_buf ? d->rma_send_buf + so : NULL;
    so += p->rma_send;
    HALO_TRY(HALO_CALLOC(p->rma_disp, ph->n_send > 0 ? ph->n_send : 1));
    HALO_TRY(halo_event_create(&p->ev_rma_down, cudaEventDisableTiming));
    HALO_TRY(halo_event_create(&p->ev_rma_up, cudaEventDisableTiming));
    /* the channel is rma for every message to another rank: the phase's peers */
    HALO_TRY(halo_rma_peer_group(all, ph->send, ph->n_send, s->rank, &p->rma_targets));
    HALO_TRY(halo_rma_peer_group(all, ph->recv, ph->n_recv, s->rank, &p->rma_origins));
    HALO_TRY(halo_rma_posted_setup(ex, k, &p->rma_posted));
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
  d->rma_set = 1;
  d->rma_win = MPI_WIN_NULL;
  d->rma_win_id = -1;
  for (int k = 0; k < HALO_MAX_PHASES; k++)
    d->ph[k].rma_targets = d->ph[k].rma_origins = MPI_GROUP_NULL;
  int64_t win_n = 0;
  HALO_TRY(halo_agree(ex->cfg.comm, setup_local(ex, d, &win_n)));
  HALO_TRY_MPI(MPI_Info_create(&info));
  HALO_TRY_MPI(MPI_Info_set(info, "no_locks", "true")); /* active target only */
  HALO_TRY_MPI(MPI_Info_set(info, "same_disp_unit", "true"));
  st = mpi_status(MPI_Win_allocate((MPI_Aint)(win_n * (int64_t)sizeof(double)), (int)sizeof(double),
                                   info, ex->cfg.comm, &d->rma_win_buf, &d->rma_win),
                  "MPI_Win_allocate");
  if (st == HALO_SUCCESS)
    st =
        mpi_status(MPI_Win_set_errhandler(d->rma_win, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  if (st == HALO_SUCCESS && win_n > 0) { /* pinned where CUDA can; else the copies are plain */
    d->rma_pinned = cudaHostRegister(d->rma_win_buf, (size_t)win_n * sizeof(double),
                                     cudaHostRegisterDefault) == cudaSuccess;
    if (!d->rma_pinned) (void)cudaGetLastError();
  }
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  {
    int64_t win_off[HALO_MAX_PHASES], *disp[HALO_MAX_PHASES];
    for (int k = 0; k < s->n_phases; k++)
      win_off[k] = d->ph[k].win_off, disp[k] = d->ph[k].rma_disp;
    HALO_TRY(halo_agree(ex->cfg.comm, halo_rma_exchange_disp(ex, win_off, disp)));
  }
  const halo_rma_memory mem = {d->rma_pinned ? d->rma_win_buf : NULL, unpin};
  st = halo_agree(ex->cfg.comm, halo_rma_windows_add(ex->cfg.state, ex->cfg.comm, d->rma_win, mem,
                                                     &d->rma_win_id));
  if (st != HALO_SUCCESS && d->rma_win_id >= 0) {
    /* kept here but not on a peer: dropped, so that every rank frees it now */
    halo_rma_windows_drop_last(*ex->cfg.state);
    d->rma_win_id = -1;
  }
cleanup:
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return st;
}

/* Phase k's start: its sends down to pinned memory; the window exposed to
 * its origins once the last exchange's values went up from it. */
static halo_status rma_send(halo_exec *ex, cuda_data *d, int k) {
  cphase *p = &d->ph[k];
  if (!d->rma_set) return HALO_SUCCESS;
  if (p->rma_send) {
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
    HALO_CUDA(cudaMemcpyAsync(p->h_rma_send, p->d_send + p->rma_send_off,
                              (size_t)p->rma_send * sizeof(double), cudaMemcpyDeviceToHost, d->xs));
    HALO_CUDA(cudaEventRecord(p->ev_rma_down, d->xs));
  }
  if (p->rma_origins != MPI_GROUP_NULL) {
    if (p->rma_up_pending) HALO_CUDA(cudaEventSynchronize(p->ev_rma_up));
    p->rma_up_pending = 0;
    HALO_MPI(MPI_Win_post(p->rma_origins, MPI_MODE_NOSTORE, d->rma_win));
  }
  return halo_rma_posted_start(&p->rma_posted);
}

/* Phase k's end: the puts once the copy down is done, the epochs closed. */
static halo_status rma_receive(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  if (!d->rma_set) return HALO_SUCCESS;
  if (p->rma_targets != MPI_GROUP_NULL) {
    if (p->rma_send) HALO_CUDA(cudaEventSynchronize(p->ev_rma_down));
    HALO_CHECK(halo_rma_targets_posted(ex, &p->rma_posted));
    HALO_MPI(MPI_Win_start(p->rma_targets, 0, d->rma_win));
    const int64_t c = ex->cfg.max_count;
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank || p->send[i].ch != CH_RMA) continue;
      const double *buf = p->h_rma_send + (p->send[i].buf_off - p->rma_send_off);
      for (int64_t done = 0; done < m->count; done += c) {
        const int n = (int)(m->count - done < c ? m->count - done : c);
        HALO_MPI(MPI_Put(buf + done, n, MPI_DOUBLE, m->peer, (MPI_Aint)(p->rma_disp[i] + done), n,
                         MPI_DOUBLE, d->rma_win));
      }
    }
    HALO_MPI(MPI_Win_complete(d->rma_win));
  }
  if (p->rma_origins != MPI_GROUP_NULL)
    HALO_CHECK(halo_rma_epoch_wait(ex, d->rma_win, &p->rma_posted));
  else
    HALO_CHECK(halo_exec_waitall(ex, p->rma_posted.n_origins, p->rma_posted.req));
  return HALO_SUCCESS;
}

/* The received values up into the receive buffer, before the unpack. */
static halo_status rma_land(halo_exec *ex, cuda_data *d, int k) {
  cphase *p = &d->ph[k];
  if (!d->rma_set || !p->rma_recv) return HALO_SUCCESS;
  HALO_CUDA(cudaMemcpyAsync(p->d_recv + p->rma_recv_off, d->rma_win_buf + p->win_off,
                            (size_t)p->rma_recv * sizeof(double), cudaMemcpyHostToDevice, d->xs));
  HALO_CUDA(cudaEventRecord(p->ev_rma_up, d->xs));
  p->rma_up_pending = 1;
  return halo_timeline_mark(ex->cfg.tl, 3);
}

const cuda_transport halo_cuda_rma = {
    .name = "rma",
    .setup = rma_setup,
    .send = rma_send,
    .receive = rma_receive,
    .land = rma_land,
    .destroy = rma_destroy,
};

#endif /* HALO_HAVE_CUDA */
