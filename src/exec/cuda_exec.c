/* CUDA backend of the executor. Every phase packs its sends on the device in
 * one launch (a copy when the map is one contiguous run), moves its messages
 * by their channel, and unpacks in one launch:
 *
 *   staged   the packed staged messages go down in one copy to a pinned
 *            buffer; host MPI (persistent requests) starts once that copy's
 *            event completes; the received ones go up in one copy;
 *   mpi      device buffers handed to a CUDA-aware MPI;
 *   nccl     ncclSend/ncclRecv grouped per phase on the exchange stream;
 *   ipc      (ranks of one machine) the receiver copies from the sender's
 *            device buffer, opened through a CUDA IPC handle at plan time;
 *            interprocess events order the copy after the pack and the next
 *            pack after the copy, 0-byte MPI messages say they were recorded.
 *
 * The exchange runs on the communicator's exchange stream, after an event
 * recorded on the plan's compute stream at begin; the compute stream waits
 * for an event recorded at the end. Everything is made at plan time.
 *
 * A reverse exchange (an add schedule) runs the same channels; nothing is
 * received in place: every phase ends with one launch that adds, for each
 * destination entry, its received values and its copies to itself in the
 * order of the receive list (one thread per entry, no atomics), so that the
 * result is the host backend's, bit for bit, on every run. Its additions into
 * x_local wait for the work enqueued on the compute stream before the end.
 *
 * A rank without rows and ghosts (a communication helper) only forwards:
 * unless the transport is NCCL, its forwarded values stay in pinned host
 * memory. Its messages go by host MPI, and it receives the ipc messages of
 * the GPU ranks of its machine by copying them from their device buffers
 * straight into host memory (Split+DD); with the staged transport the GPU
 * ranks send it their share by host MPI (Split+MD). */
#include "halo_impl.h"

#include "exec/exec.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/cuda_exec.h"

/* The ipc receives of phase k: once each sender says its data is ready,
 * copy it from the sender's buffer (into device memory, or a helper's host
 * memory), then tell the senders the copies are enqueued after our done
 * event. */
static halo_status ipc_pull(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  for (int i = 0; i < p->n_ipc_from; i++) {
    HALO_MPI(MPI_Wait(&p->ipc_from[i].ready, MPI_STATUS_IGNORE));
    HALO_CUDA(cudaStreamWaitEvent(d->xs, p->ipc_from[i].remote_event, 0));
  }
  if (!d->host_fwd) HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
  for (int i = 0; i < ph->n_recv; i++) {
    const cmsg *c = &p->recv[i];
    if (ph->recv[i].peer == s->rank || c->ch != CH_IPC) continue;
    double *to = d->host_fwd ? p->h_recv + c->buf_off
                 : c->direct ? c->direct
                             : p->d_recv + c->buf_off;
    HALO_CUDA(cudaMemcpyAsync(to, c->remote, (size_t)ph->recv[i].count * sizeof(double),
                              d->host_fwd ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice,
                              d->xs));
  }
  HALO_CUDA(cudaEventRecord(p->ev_done, d->xs));
  if (!d->host_fwd) HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 3));
  for (int i = 0; i < p->n_ipc_from; i++) HALO_MPI(MPI_Start(&p->ipc_from[i].done));
  return HALO_SUCCESS;
}

/* A helper's phase k, on the host: pack from work, copy to itself (forward),
 * send. */
static halo_status host_phase_start(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  const int64_t nl = s->n_local, ng = s->n_ghost;
  int self_recv = -1;
  for (int i = 0; i < ph->n_recv; i++)
    if (ph->recv[i].peer == s->rank) self_recv = i;
  for (int i = 0; i < ph->n_send; i++) {
    const halo_msg *m = &ph->send[i];
    const int64_t *src = ph->pack + m->offset;
    if (m->peer == s->rank) { /* work to work, in the order of the receive from itself */
      if (s->add) continue;   /* added in receive order at the finish */
      if (self_recv < 0)
        return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: a copy to itself without its receive", k);
      const int64_t *dst = ph->unpack + ph->recv[self_recv].offset;
      for (int64_t t = 0; t < m->count; t++) d->work[dst[t] - ng] = d->work[src[t] - nl];
      continue;
    }
    double *to = p->h_send + p->send[i].buf_off;
    for (int64_t t = 0; t < m->count; t++) to[t] = d->work[src[t] - nl];
  }
  if (p->n_send_req) HALO_MPI(MPI_Startall(p->n_send_req, d->req + p->send_req_begin));
  return HALO_SUCCESS;
}

/* A helper's phase k, on the host: ipc messages copied from the senders'
 * device buffers into host memory, host MPI, unpacking into work (adding, in
 * receive list order, in reverse). */
static halo_status host_phase_finish(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  if (p->n_ipc_from) HALO_CHECK(ipc_pull(ex, d, k));
  if (p->n_recv_req)
    HALO_MPI(MPI_Waitall(p->n_recv_req, d->req + p->recv_req_begin, MPI_STATUSES_IGNORE));
  if (p->n_ipc_from) HALO_CUDA(cudaEventSynchronize(p->ev_done));
  if (s->add) {
    for (int64_t i = 0; i < p->n_add; i++) {
      const int64_t a = p->h_add_src[i];
      d->work[p->h_add_dst[i] - s->n_ghost] += a >= 0 ? p->h_recv[a] : d->work[-1 - a - s->n_local];
    }
    return HALO_SUCCESS;
  }
  for (int i = 0; i < ph->n_recv; i++) {
    const halo_msg *m = &ph->recv[i];
    if (m->peer == s->rank) continue;
    const double *from = p->h_recv + p->recv[i].buf_off;
    const int64_t *dst = ph->unpack + m->offset;
    for (int64_t t = 0; t < m->count; t++) d->work[dst[t] - s->n_ghost] = from[t];
  }
  return HALO_SUCCESS;
}

/* Pack phase k, make its copies, and send what goes without the host. */
static halo_status phase_start(halo_exec *ex, cuda_data *d, int k) {
  if (d->host_fwd) return host_phase_start(ex, d, k);
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  cudaStream_t cs = d->xs;
  /* an ipc receiver of the last exchange may still read our send buffer */
  for (int i = 0; i < p->n_ipc_to; i++)
    HALO_CUDA(cudaStreamWaitEvent(cs, p->ipc_to[i].remote_event, 0));
  const double *run = p->run_from_work ? d->work + p->run_off : d->x + p->run_off;
  if (p->n_pack && !p->nccl_from_run) {
    if (p->pack_run) {
      HALO_CUDA(cudaMemcpyAsync(p->d_send, run, (size_t)p->n_pack * sizeof(double),
                                cudaMemcpyDeviceToDevice, cs));
    } else {
      HALO_CUDA(halo_cuda_gather(p->d_send, p->d_pack, p->n_pack, d->x, d->work, s->n_local, cs));
    }
  }
  if (p->n_copy)
    HALO_CUDA(halo_cuda_copy_map(p->d_copy_src, p->d_copy_dst, p->n_copy, d->x, s->n_local,
                                 ex->ghost, d->work, s->n_ghost, cs));
  if (p->n_staged_send) {
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
    if (d->timing) HALO_CUDA(cudaEventRecord(p->ev_t[0], cs));
    HALO_CUDA(cudaMemcpyAsync(p->h_send, p->d_send, (size_t)p->n_staged_send * sizeof(double),
                              cudaMemcpyDeviceToHost, cs));
    if (d->timing) {
      HALO_CUDA(cudaEventRecord(p->ev_t[1], cs));
      p->timed_down = 1;
    }
  }
  if (p->n_send_req) HALO_CUDA(cudaEventRecord(p->ev_packed, cs));
#if HALO_HAVE_NCCL
  if (p->n_nccl_send + p->n_nccl_recv) {
    halo_status st = HALO_SUCCESS;
    HALO_TRY(halo_timeline_mark(ex->cfg.tl, 2));
    HALO_TRY_NCCL(ncclGroupStart());
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && p->send[i].ch == CH_NCCL)
        HALO_TRY_NCCL(ncclSend((p->nccl_from_run ? run : p->d_send) + p->send[i].buf_off,
                               (size_t)ph->send[i].count, ncclDouble, ph->send[i].peer, d->nccl,
                               cs));
    for (int i = 0; i < ph->n_recv; i++) {
      const cmsg *c = &p->recv[i];
      if (ph->recv[i].peer == s->rank || c->ch != CH_NCCL) continue;
      double *buf = c->direct ? c->direct : p->d_recv + c->buf_off;
      HALO_TRY_NCCL(
          ncclRecv(buf, (size_t)ph->recv[i].count, ncclDouble, ph->recv[i].peer, d->nccl, cs));
    }
    HALO_TRY_NCCL(ncclGroupEnd());
    HALO_TRY(halo_timeline_mark(ex->cfg.tl, 3));
  cleanup:
    if (st != HALO_SUCCESS) return st;
  }
#endif
  if (p->n_ipc_to) {
    HALO_CUDA(cudaEventRecord(p->ev_ready, cs));
    for (int i = 0; i < p->n_ipc_to; i++) HALO_MPI(MPI_Start(&p->ipc_to[i].ready));
  }
  return HALO_SUCCESS;
}

/* Finish phase k: host MPI, ipc copies, the staged copy up, unpacking or
 * adding. */
static halo_status phase_finish(halo_exec *ex, cuda_data *d, int k) {
  if (d->host_fwd) return host_phase_finish(ex, d, k);
  const halo_schedule *s = S(ex);
  cphase *p = &d->ph[k];
  cudaStream_t cs = d->xs;
  if (p->n_send_req) {
    HALO_CUDA(cudaEventSynchronize(p->ev_packed)); /* this phase's pack and copy, not the stream */
    HALO_MPI(MPI_Startall(p->n_send_req, d->req + p->send_req_begin));
  }
  if (p->n_ipc_from) HALO_CHECK(ipc_pull(ex, d, k));
  if (p->n_recv_req)
    HALO_MPI(MPI_Waitall(p->n_recv_req, d->req + p->recv_req_begin, MPI_STATUSES_IGNORE));
  if (p->n_staged_recv) {
    double *to = p->staged_run_dst ? p->staged_run_dst : p->d_recv;
    if (d->timing) HALO_CUDA(cudaEventRecord(p->ev_t[2], cs));
    HALO_CUDA(cudaMemcpyAsync(to, p->h_recv, (size_t)p->n_staged_recv * sizeof(double),
                              cudaMemcpyHostToDevice, cs));
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 3));
    if (d->timing) {
      HALO_CUDA(cudaEventRecord(p->ev_t[3], cs));
      p->timed_up = 1;
    }
    HALO_CUDA(cudaEventRecord(p->ev_up, cs));
  }
  if (p->n_unpack)
    HALO_CUDA(halo_cuda_scatter(p->d_recv, p->d_unpack_src, p->d_unpack_dst, p->n_unpack, ex->ghost,
                                d->work, s->n_ghost, cs));
  if (p->n_add_u)
    HALO_CUDA(halo_cuda_add_by_dst(p->d_add_dst, p->d_add_ptr, p->d_add_ref, p->n_add_u, p->d_recv,
                                   d->x, s->n_local, d->dst, d->work, s->n_ghost, cs));
  return HALO_SUCCESS;
}

/* copy_timing: add the copies of the last exchange (complete once its
 * receive buffers are free) to the totals. */
static halo_status harvest_times(cuda_data *d, int n_phases) {
  for (int k = 0; k < n_phases; k++) {
    cphase *p = &d->ph[k];
    float ms;
    if (p->timed_down) {
      HALO_CUDA(cudaEventSynchronize(p->ev_t[1]));
      HALO_CUDA(cudaEventElapsedTime(&ms, p->ev_t[0], p->ev_t[1]));
      d->t_down += 1e-3 * ms, d->bytes_down += p->n_staged_send * 8, d->n_down++;
      p->timed_down = 0;
    }
    if (p->timed_up) {
      HALO_CUDA(cudaEventSynchronize(p->ev_t[3]));
      HALO_CUDA(cudaEventElapsedTime(&ms, p->ev_t[2], p->ev_t[3]));
      d->t_up += 1e-3 * ms, d->bytes_up += p->n_staged_recv * 8, d->n_up++;
      p->timed_up = 0;
    }
  }
  return HALO_SUCCESS;
}

static halo_status cuda_copy_times(halo_exec *ex, double *t_down, double *t_up,
                                   int64_t *bytes_down, int64_t *bytes_up) {
  cuda_data *d = ex->data;
  if (!d || !d->timing)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made without the option copy_timing "
                                      "(HALO_EXEC_TIMING=1)");
  HALO_CHECK(harvest_times(d, S(ex)->n_phases));
  *t_down = d->t_down, *t_up = d->t_up, *bytes_down = d->bytes_down, *bytes_up = d->bytes_up;
  d->t_down = d->t_up = 0.0;
  d->bytes_down = d->bytes_up = d->n_down = d->n_up = 0;
  return HALO_SUCCESS;
}

static halo_status cuda_mark_start(halo_exec *ex, int on) {
  cuda_data *d = ex->data;
  d->start_marked = 0;
  if (on) {
    HALO_CUDA(cudaEventRecord(d->ev_start, d->comp));
    d->start_marked = 1;
    HALO_CHECK(halo_timeline_start(ex->cfg.tl));
  }
  return HALO_SUCCESS;
}

static halo_status cuda_begin(halo_exec *ex, const double *src, double *dst) {
  const halo_schedule *s = S(ex);
  const halo_leaves *L = ex->cfg.leaves;
  cuda_data *d = ex->data;
  d->x = src;
  d->dst = dst;
  if (d->timing) HALO_CHECK(harvest_times(d, s->n_phases));
  if (d->start_marked) /* halo_spmv marked it before enqueueing the local product */
    d->start_marked = 0;
  else
    HALO_CUDA(cudaEventRecord(d->ev_start, d->comp)); /* the source is ready */
  HALO_CUDA(cudaStreamWaitEvent(d->xs, d->ev_start, 0));
  if (s->add) {
    if (!halo_leaves_identity(L)) { /* each ghost: the sum of its slots, in slot order */
      HALO_CUDA(halo_cuda_slot_sum(ex->ghost, src, d->d_slot_ptr, d->d_slot, L->n_ghost, d->xs));
      d->x = ex->ghost;
    }
    if (s->n_work) {
      if (d->host_fwd)
        memset(d->work, 0, (size_t)s->n_work * sizeof *d->work);
      else
        HALO_CUDA(cudaMemsetAsync(d->work, 0, (size_t)s->n_work * sizeof *d->work, d->xs));
    }
  }
  for (int k = 0; k < s->n_phases; k++) {
    cphase *p = &d->ph[k];
    /* MPI may write the receive buffers once the last exchange used them */
    if (p->n_staged_recv) HALO_CUDA(cudaEventSynchronize(p->ev_up));
    if (p->has_device_mpi_recv) HALO_CUDA(cudaEventSynchronize(d->ev_start));
    if (p->n_recv_req) HALO_MPI(MPI_Startall(p->n_recv_req, d->req + p->recv_req_begin));
    for (int i = 0; i < p->n_ipc_from; i++) HALO_MPI(MPI_Start(&p->ipc_from[i].ready));
    for (int i = 0; i < p->n_ipc_to; i++) HALO_MPI(MPI_Start(&p->ipc_to[i].done));
  }
  return phase_start(ex, d, 0);
}

static halo_status cuda_end(halo_exec *ex) {
  const halo_schedule *s = S(ex);
  const halo_leaves *L = ex->cfg.leaves;
  cuda_data *d = ex->data;
  if (s->add) { /* the additions into x_local come after what the caller enqueued on comp */
    HALO_CUDA(cudaEventRecord(d->ev_dst, d->comp));
    HALO_CUDA(cudaStreamWaitEvent(d->xs, d->ev_dst, 0));
  }
  for (int k = 0; k < s->n_phases; k++) {
    if (k > 0) HALO_CHECK(phase_start(ex, d, k));
    HALO_CHECK(phase_finish(ex, d, k));
  }
  if (d->n_req > d->n_recv_req)
    HALO_MPI(MPI_Waitall(d->n_req - d->n_recv_req, d->req + d->n_recv_req, MPI_STATUSES_IGNORE));
  for (int k = 0; k < s->n_phases; k++) {
    cphase *p = &d->ph[k];
    for (int i = 0; i < p->n_ipc_to; i++) {
      HALO_MPI(MPI_Wait(&p->ipc_to[i].ready, MPI_STATUS_IGNORE));
      HALO_MPI(MPI_Wait(&p->ipc_to[i].done, MPI_STATUS_IGNORE)); /* its copy is enqueued */
    }
    for (int i = 0; i < p->n_ipc_from; i++)
      HALO_MPI(MPI_Wait(&p->ipc_from[i].done, MPI_STATUS_IGNORE));
  }
  if (!s->add) { /* deliver into the ghost slots */
    double *out = d->dst ? d->dst : ex->slots;
    if (!halo_leaves_identity(L))
      HALO_CUDA(halo_cuda_slot_gather(out, ex->ghost, d->d_to_ghost, L->n, d->xs));
    else if (out != ex->ghost && s->n_ghost)
      HALO_CUDA(cudaMemcpyAsync(out, ex->ghost, (size_t)s->n_ghost * sizeof(double),
                                cudaMemcpyDeviceToDevice, d->xs));
  }
  HALO_CUDA(cudaEventRecord(d->ev_end, d->xs));
  HALO_CUDA(cudaStreamWaitEvent(d->comp, d->ev_end, 0));
  d->x = NULL;
  d->dst = NULL;
  return HALO_SUCCESS;
}

const halo_exec_ops halo_exec_cuda_ops = {
    .name = "cuda",
    .setup = halo_cuda_exec_setup,
    .begin = cuda_begin,
    .end = cuda_end,
    .mark_start = cuda_mark_start,
    .copy_times = cuda_copy_times,
    .destroy = halo_cuda_exec_destroy,
};

#else /* no CUDA */

static halo_status cuda_setup(halo_exec *ex) {
  (void)ex;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

const halo_exec_ops halo_exec_cuda_ops = {
    .name = "cuda",
    .setup = cuda_setup,
};

#endif /* HALO_HAVE_CUDA */
