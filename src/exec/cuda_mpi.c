/* Transports staged and mpi-device of the CUDA executor: host MPI with
 * persistent requests, made at plan time. A staged message is packed on the
 * device with the others, goes down to a pinned host buffer in one copy per
 * phase, is sent once that copy's event completes, and the received ones go
 * up in one copy; an mpi message hands its device buffer to a CUDA-aware
 * MPI. Both kinds share the requests: receives of all phases first, then
 * sends. The ipc transport leaves the messages to ranks of other machines to
 * this one (staged). */
#include "halo_impl.h"

#include "exec/transport.h"

#if HALO_HAVE_CUDA && defined(HALO_MODULE_CODE) /* the module's part */
#include "exec/cuda_exec.h"

static int is_mpi(channel ch) { return ch == CH_STAGED || ch == CH_MPI; }

/* The persistent requests of phase k's staged and mpi messages. */
static halo_status init_requests(halo_exec *ex, cuda_data *d, int k) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  const MPI_Comm comm = ex->phase_comm[k];
  cphase *p = &d->ph[k];
  int *seq = NULL;
  HALO_TRY(HALO_ALLOC(seq, ph->n_send > ph->n_recv ? ph->n_send : ph->n_recv));
  HALO_TRY(halo_exec_sequence(ex, ph->send, ph->n_send, seq));
  int r = p->send_req_begin;
  for (int i = 0; i < ph->n_send; i++) {
    const cmsg *c = &p->send[i];
    if (ph->send[i].peer == s->rank || !is_mpi(c->ch)) continue;
    double *buf = c->ch == CH_STAGED ? p->h_send + c->buf_off : p->d_send + c->buf_off;
    HALO_TRY(halo_exec_init_chunks(ex, &d->req[r], 1, buf, ph->send[i].count, ex->peer_send[k][i],
                                   k, seq[i], comm));
    r += halo_exec_chunks(ex, ph->send[i].count);
  }
  HALO_TRY(halo_exec_sequence(ex, ph->recv, ph->n_recv, seq));
  r = p->recv_req_begin;
  for (int i = 0; i < ph->n_recv; i++) {
    const cmsg *c = &p->recv[i];
    if (ph->recv[i].peer == s->rank || !is_mpi(c->ch)) continue;
    double *buf = c->ch == CH_STAGED ? p->h_recv + c->buf_off
                  : c->direct        ? c->direct
                                     : p->d_recv + c->buf_off;
    HALO_TRY(halo_exec_init_chunks(ex, &d->req[r], 0, buf, ph->recv[i].count, ex->peer_recv[k][i],
                                   k, seq[i], comm));
    r += halo_exec_chunks(ex, ph->recv[i].count);
  }
cleanup:
  halo_free(seq);
  return st;
}

static halo_status mpi_setup(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < S(ex)->n_phases; k++) HALO_CHECK(init_requests(ex, d, k));
  return HALO_SUCCESS;
}

static void mpi_destroy(halo_exec *ex, cuda_data *d) {
  (void)ex;
  for (int i = 0; d->req && i < d->n_req; i++)
    if (d->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&d->req[i]);
}

/* MPI may write the receive buffers once the last exchange used them. */
static halo_status mpi_arm(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  cphase *p = &d->ph[k];
  if (p->n_staged_recv) HALO_CUDA(cudaEventSynchronize(p->ev_up));
  if (p->has_device_mpi_recv) HALO_CUDA(cudaEventSynchronize(d->ev_start));
  if (p->n_recv_req) HALO_MPI(MPI_Startall(p->n_recv_req, d->req + p->recv_req_begin));
  return HALO_SUCCESS;
}

/* The staged sends down to pinned memory; the point the sends may start. */
static halo_status mpi_send(halo_exec *ex, cuda_data *d, int k) {
  cphase *p = &d->ph[k];
  if (p->n_staged_send) {
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
    if (d->timing) HALO_CUDA(cudaEventRecord(p->ev_t[0], d->xs));
    HALO_CUDA(cudaMemcpyAsync(p->h_send, p->d_send, (size_t)p->n_staged_send * sizeof(double),
                              cudaMemcpyDeviceToHost, d->xs));
    if (d->timing) {
      HALO_CUDA(cudaEventRecord(p->ev_t[1], d->xs));
      p->timed_down = 1;
    }
  }
  if (p->n_send_req) HALO_CUDA(cudaEventRecord(p->ev_packed, d->xs));
  return HALO_SUCCESS;
}

/* The sends start once this phase's pack and copy are done (not the stream). */
static halo_status mpi_receive(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  cphase *p = &d->ph[k];
  if (!p->n_send_req) return HALO_SUCCESS;
  HALO_CUDA(cudaEventSynchronize(p->ev_packed));
  HALO_MPI(MPI_Startall(p->n_send_req, d->req + p->send_req_begin));
  return HALO_SUCCESS;
}

/* The receives complete; the staged ones go up in one copy. */
static halo_status mpi_land(halo_exec *ex, cuda_data *d, int k) {
  cphase *p = &d->ph[k];
  if (p->n_recv_req) HALO_CHECK(halo_exec_waitall(ex, p->n_recv_req, d->req + p->recv_req_begin));
  if (!p->n_staged_recv) return HALO_SUCCESS;
  double *to = p->staged_run_dst ? p->staged_run_dst : p->d_recv;
  if (d->timing) HALO_CUDA(cudaEventRecord(p->ev_t[2], d->xs));
  HALO_CUDA(cudaMemcpyAsync(to, p->h_recv, (size_t)p->n_staged_recv * sizeof(double),
                            cudaMemcpyHostToDevice, d->xs));
  HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 3));
  if (d->timing) {
    HALO_CUDA(cudaEventRecord(p->ev_t[3], d->xs));
    p->timed_up = 1;
  }
  HALO_CUDA(cudaEventRecord(p->ev_up, d->xs));
  return HALO_SUCCESS;
}

static halo_status mpi_complete(halo_exec *ex, cuda_data *d) {
  return halo_exec_waitall(ex, d->n_req - d->n_recv_req, d->req + d->n_recv_req);
}

halo_status halo_cuda_harvest_times(cuda_data *d, int n_phases) {
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

const cuda_transport halo_cuda_mpi = {
    .name = "staged and mpi-device",
    .setup = mpi_setup,
    .arm = mpi_arm,
    .send = mpi_send,
    .receive = mpi_receive,
    .land = mpi_land,
    .complete = mpi_complete,
    .destroy = mpi_destroy,
};

#endif /* the module's part */

#ifndef HALO_MODULE_CODE /* the descriptors, in libhalo */

/* Staged: the CUDA executor's host MPI on pinned buffers (halo_cuda_mpi). */
const halo_transport_desc halo_transport_desc_staged = {
    .name = "staged",
    .id = HALO_TRANSPORT_STAGED,
    .memory = HALO_TMEM_DEVICE,
    .summary = "packed on the GPU, copied to pinned host buffers, MPI on the host, copied back",
    .compiled = HALO_HAVE_CUDA,
    .build_hint = "HALO_ENABLE_CUDA=ON",
    .auto_policy = HALO_AUTO_ALWAYS,
    .model = {.channel = HALO_CHANNEL_CPU, .copies = 1, .gpu_ranks_copy = 1},
};

/* CUDA-aware MPI on the device buffers (halo_cuda_mpi). */
const halo_transport_desc halo_transport_desc_mpi_device = {
    .name = "mpi-device",
    .id = HALO_TRANSPORT_MPI_DEVICE,
    .memory = HALO_TMEM_DEVICE,
    .summary = "device buffers handed to a CUDA-aware MPI",
    .compiled = HALO_HAVE_CUDA,
    .build_hint = "HALO_ENABLE_CUDA=ON",
    .needs = HALO_NEEDS_GPU_AWARE_MPI,
    .auto_policy = HALO_AUTO_ALWAYS,
    .model = {.channel = HALO_CHANNEL_GPU},
};
#endif
