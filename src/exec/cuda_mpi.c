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
#include "exec/cuda_mpi.h"

extern const cuda_transport halo_cuda_mpi; /* its hooks, at the end */

enum { CH_MPI = 1 }; /* device buffers handed to a CUDA-aware MPI (CH_STAGED: pinned host) */

/* The executor's requests and copy timing. */
typedef struct {
  MPI_Request *req; /* receives of all phases first, then sends */
  int n_req, n_recv_req;
  int timing;      /* copy_timing: time the staged copies */
  int64_t req_eb;  /* the entry's bytes the requests were made for */
  MPI_Datatype dt; /* an entry of req_eb bytes (MPI_DATATYPE_NULL: one double) */
  double t_down, t_up;
  int64_t bytes_down, bytes_up, n_down, n_up;
} mpi_exec;

/* A phase's: its requests in req, its pinned buffers and events. */
typedef struct {
  double *h_send, *h_recv; /* pinned: n_staged_send and n_staged_recv values */
  int recv_req_begin, n_recv_req, send_req_begin, n_send_req;
  int has_device_mpi_recv;
  cudaEvent_t ev_packed, ev_up; /* sends may start; the staged receive buffer is free */
  cudaEvent_t ev_t[4];          /* copy_timing: around the copy down, the copy up */
  int timed_down, timed_up;     /* the last exchange recorded them */
} mpi_phase;

static mpi_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_mpi); }
static mpi_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_mpi, k); }

static int is_mpi(channel ch) { return ch == CH_STAGED || ch == CH_MPI; }

/* Staged, or (mpi-device) device buffers where neither side is a helper:
 * a helper's values are on the host, it sends by host MPI. */
static halo_status mpi_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                               int peer, int send, channel *ch) {
  (void)g;
  const int sender_on_host = send ? d->host_fwd : d->peer_host_fwd[peer];
  const int receiver_on_host = send ? d->peer_host_fwd[peer] : d->host_fwd;
  if (ex->cfg.transport == HALO_TRANSPORT_MPI_DEVICE)
    *ch = sender_on_host || (!send && receiver_on_host) ? CH_STAGED : CH_MPI;
  else
    *ch = CH_STAGED;
  return HALO_SUCCESS;
}

/* The requests' counts and places (receives of all phases first, then
 * sends), on this rank alone. */
static halo_status mpi_layout(halo_exec *ex, cuda_data *d) {
  const halo_schedule *s = S(ex);
  mpi_exec *x = X(d);
  int n_recv_req = 0, n_send_req = 0;
  x->timing = ex->cfg.copy_timing;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *p = &d->ph[k];
    mpi_phase *q = P(d, k);
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && is_mpi(p->send[i].ch))
        q->n_send_req += halo_exec_chunks(ex, ph->send[i].count);
    for (int i = 0; i < ph->n_recv; i++) {
      if (ph->recv[i].peer == s->rank) continue;
      if (is_mpi(p->recv[i].ch)) q->n_recv_req += halo_exec_chunks(ex, ph->recv[i].count);
      if (p->recv[i].ch == CH_MPI && !d->host_fwd) q->has_device_mpi_recv = 1;
    }
    q->recv_req_begin = n_recv_req;
    n_recv_req += q->n_recv_req;
  }
  x->n_recv_req = n_recv_req;
  for (int k = 0; k < s->n_phases; k++) {
    P(d, k)->send_req_begin = n_recv_req + n_send_req;
    n_send_req += P(d, k)->n_send_req;
  }
  x->n_req = n_recv_req + n_send_req;
  HALO_CHECK(HALO_ALLOC(x->req, x->n_req));
  for (int i = 0; i < x->n_req; i++) x->req[i] = MPI_REQUEST_NULL;
  x->req_eb = 8, x->dt = MPI_DATATYPE_NULL;
  return HALO_SUCCESS;
}

/* Phase k's pinned buffers and events (a helper's: no copies, no timing). */
static halo_status mpi_phase_local(halo_exec *ex, cuda_data *d, int k) {
  const cphase *p = &d->ph[k];
  mpi_phase *q = P(d, k);
  HALO_CHECK(halo_device_pinned_alloc(
      ex->cfg.dev, (size_t)(p->n_staged_send * d->W) * sizeof(double), (void **)&q->h_send));
  HALO_CHECK(halo_device_pinned_alloc(
      ex->cfg.dev, (size_t)(p->n_staged_recv * d->W) * sizeof(double), (void **)&q->h_recv));
  if (d->host_fwd) return halo_event_create(&q->ev_up, cudaEventDisableTiming);
  HALO_CHECK(halo_event_create(&q->ev_packed, cudaEventDisableTiming));
  HALO_CHECK(halo_event_create(&q->ev_up, cudaEventDisableTiming));
  if (X(d)->timing)
    for (int e = 0; e < 4; e++) HALO_CHECK(halo_event_create(&q->ev_t[e], cudaEventDefault));
  return HALO_SUCCESS;
}

/* Persistent requests of count entries at buf: doubles, or the unit's. */
static halo_status chunks(halo_exec *ex, const cuda_data *d, MPI_Request *req, int is_send,
                          void *buf, int64_t count, int peer, int k, int seq, MPI_Comm comm) {
  const mpi_exec *x = X(d);
  if (x->dt == MPI_DATATYPE_NULL)
    return halo_exec_init_chunks(ex, req, is_send, buf, count, peer, k, seq, comm);
  return halo_exec_init_chunks_typed(ex, req, is_send, buf, count, x->dt, d->eb, peer, k, seq,
                                     comm);
}

/* The persistent requests of phase k's staged and mpi messages, for entries
 * of d->eb bytes. */
static halo_status init_requests(halo_exec *ex, cuda_data *d, int k) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  const MPI_Comm comm = ex->phase_comm[k];
  cphase *p = &d->ph[k];
  mpi_exec *x = X(d);
  mpi_phase *q = P(d, k);
  int *seq = NULL;
  HALO_TRY(HALO_ALLOC(seq, ph->n_send > ph->n_recv ? ph->n_send : ph->n_recv));
  HALO_TRY(halo_exec_sequence(ex, ph->send, ph->n_send, seq));
  int r = q->send_req_begin;
  for (int i = 0; i < ph->n_send; i++) {
    const cmsg *c = &p->send[i];
    if (ph->send[i].peer == s->rank || !is_mpi(c->ch)) continue;
    char *buf = halo_cuda_at(c->ch == CH_STAGED ? q->h_send : p->d_send, c->buf_off, d);
    HALO_TRY(
        chunks(ex, d, &x->req[r], 1, buf, ph->send[i].count, ex->peer_send[k][i], k, seq[i], comm));
    r += halo_exec_chunks(ex, ph->send[i].count);
  }
  HALO_TRY(halo_exec_sequence(ex, ph->recv, ph->n_recv, seq));
  r = q->recv_req_begin;
  for (int i = 0; i < ph->n_recv; i++) {
    const cmsg *c = &p->recv[i];
    if (ph->recv[i].peer == s->rank || !is_mpi(c->ch)) continue;
    char *buf = c->ch == CH_STAGED ? halo_cuda_at(q->h_recv, c->buf_off, d)
                                   : halo_cuda_recv_at(ex, d, p, c);
    HALO_TRY(
        chunks(ex, d, &x->req[r], 0, buf, ph->recv[i].count, ex->peer_recv[k][i], k, seq[i], comm));
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

static int mpi_host_waits(const halo_exec *ex, const cuda_data *d, int *numbered) {
  (void)numbered;
  for (int k = 0; k < S(ex)->n_phases; k++)
    if (P(d, k)->n_send_req || P(d, k)->n_recv_req) return HOST_WAIT_MPI;
  return 0;
}

/* The receive buffers of an exchange are free at its start. */
static halo_status mpi_setup_end(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < S(ex)->n_phases; k++) HALO_CUDA(cudaEventRecord(P(d, k)->ev_up, d->xs));
  return HALO_SUCCESS;
}

static void mpi_destroy(halo_exec *ex, cuda_data *d) {
  mpi_exec *x = X(d);
  if (!x) return;
  for (int i = 0; x->req && i < x->n_req; i++)
    if (x->req[i] != MPI_REQUEST_NULL) MPI_Request_free(&x->req[i]);
  if (x->dt != MPI_DATATYPE_NULL) MPI_Type_free(&x->dt);
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    const cphase *p = &d->ph[k];
    mpi_phase *q = P(d, k);
    if (q->ev_packed) cudaEventDestroy(q->ev_packed);
    for (int e = 0; e < 4; e++)
      if (q->ev_t[e]) cudaEventDestroy(q->ev_t[e]);
    if (q->ev_up) cudaEventDestroy(q->ev_up);
    halo_device_pinned_release(ex->cfg.dev, q->h_send,
                               (size_t)(p->n_staged_send * d->W) * sizeof(double));
    halo_device_pinned_release(ex->cfg.dev, q->h_recv,
                               (size_t)(p->n_staged_recv * d->W) * sizeof(double));
    q->ev_packed = q->ev_up = NULL, q->h_send = q->h_recv = NULL;
    for (int e = 0; e < 4; e++) q->ev_t[e] = NULL;
  }
  halo_free(x->req);
  x->req = NULL, x->n_req = 0;
}

/* Staged copies, with copy_timing: add the last exchange's to the totals. */
static halo_status harvest_times(cuda_data *d, int n_phases) {
  mpi_exec *x = X(d);
  for (int k = 0; k < n_phases; k++) {
    const cphase *p = &d->ph[k];
    mpi_phase *q = P(d, k);
    float ms;
    if (q->timed_down) {
      HALO_CUDA(cudaEventSynchronize(q->ev_t[1]));
      HALO_CUDA(cudaEventElapsedTime(&ms, q->ev_t[0], q->ev_t[1]));
      x->t_down += 1e-3 * ms, x->bytes_down += p->n_staged_send * d->eb, x->n_down++;
      q->timed_down = 0;
    }
    if (q->timed_up) {
      HALO_CUDA(cudaEventSynchronize(q->ev_t[3]));
      HALO_CUDA(cudaEventElapsedTime(&ms, q->ev_t[2], q->ev_t[3]));
      x->t_up += 1e-3 * ms, x->bytes_up += p->n_staged_recv * d->eb, x->n_up++;
      q->timed_up = 0;
    }
  }
  return HALO_SUCCESS;
}

/* The requests made again for entries of another size (their buffers'
 * places move with it): after the last exchange's are complete. */
static halo_status remake(halo_exec *ex, cuda_data *d) {
  mpi_exec *x = X(d);
  for (int i = 0; i < x->n_req; i++)
    if (x->req[i] != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&x->req[i]));
  if (x->dt != MPI_DATATYPE_NULL) HALO_MPI(MPI_Type_free(&x->dt));
  x->req_eb = 0;
  if (d->eb != 8) {
    HALO_MPI(MPI_Type_contiguous((int)d->eb, MPI_BYTE, &x->dt));
    HALO_MPI(MPI_Type_commit(&x->dt));
  }
  for (int k = 0; k < S(ex)->n_phases; k++) HALO_CHECK(init_requests(ex, d, k));
  x->req_eb = d->eb;
  return HALO_SUCCESS;
}

/* The last exchange's copy times, before this one records its own; the
 * requests for this exchange's unit. */
static halo_status mpi_begin(halo_exec *ex, cuda_data *d) {
  if (X(d)->timing) HALO_CHECK(harvest_times(d, S(ex)->n_phases));
  if (X(d)->n_req && X(d)->req_eb != d->eb) HALO_CHECK(remake(ex, d));
  return HALO_SUCCESS;
}

/* MPI may write the receive buffers once the last exchange used them. */
static halo_status mpi_arm(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  const cphase *p = &d->ph[k];
  mpi_phase *q = P(d, k);
  if (p->n_staged_recv) HALO_CUDA(cudaEventSynchronize(q->ev_up));
  if (q->has_device_mpi_recv) HALO_CUDA(cudaEventSynchronize(d->ev_start));
  if (q->n_recv_req) HALO_MPI(MPI_Startall(q->n_recv_req, X(d)->req + q->recv_req_begin));
  return HALO_SUCCESS;
}

/* The staged sends down to pinned memory; the point the sends may start. */
static halo_status mpi_send(halo_exec *ex, cuda_data *d, int k) {
  const cphase *p = &d->ph[k];
  mpi_phase *q = P(d, k);
  const int timing = X(d)->timing;
  if (p->n_staged_send) {
    HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
    if (timing) HALO_CUDA(cudaEventRecord(q->ev_t[0], d->xs));
    HALO_CUDA(cudaMemcpyAsync(q->h_send, p->d_send, (size_t)(p->n_staged_send * d->eb),
                              cudaMemcpyDeviceToHost, d->xs));
    if (timing) {
      HALO_CUDA(cudaEventRecord(q->ev_t[1], d->xs));
      q->timed_down = 1;
    }
  }
  if (q->n_send_req) HALO_CUDA(cudaEventRecord(q->ev_packed, d->xs));
  return HALO_SUCCESS;
}

/* The sends start once this phase's pack and copy are done (not the stream). */
static halo_status mpi_receive(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  mpi_phase *q = P(d, k);
  if (!q->n_send_req) return HALO_SUCCESS;
  HALO_CUDA(cudaEventSynchronize(q->ev_packed));
  HALO_MPI(MPI_Startall(q->n_send_req, X(d)->req + q->send_req_begin));
  return HALO_SUCCESS;
}

/* The receives complete; the staged ones go up in one copy. */
static halo_status mpi_land(halo_exec *ex, cuda_data *d, int k) {
  const cphase *p = &d->ph[k];
  mpi_phase *q = P(d, k);
  const int timing = X(d)->timing;
  if (q->n_recv_req)
    HALO_CHECK(halo_exec_waitall(ex, q->n_recv_req, X(d)->req + q->recv_req_begin));
  if (!p->n_staged_recv) return HALO_SUCCESS;
  void *to = p->staged_run_at >= 0 ? halo_cuda_dst_at(ex, d, p->staged_run_at) : (void *)p->d_recv;
  if (timing) HALO_CUDA(cudaEventRecord(q->ev_t[2], d->xs));
  HALO_CUDA(cudaMemcpyAsync(to, q->h_recv, (size_t)(p->n_staged_recv * d->eb),
                            cudaMemcpyHostToDevice, d->xs));
  HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 3));
  if (timing) {
    HALO_CUDA(cudaEventRecord(q->ev_t[3], d->xs));
    q->timed_up = 1;
  }
  HALO_CUDA(cudaEventRecord(q->ev_up, d->xs));
  return HALO_SUCCESS;
}

static halo_status mpi_complete(halo_exec *ex, cuda_data *d) {
  const mpi_exec *x = X(d);
  return halo_exec_waitall(ex, x->n_req - x->n_recv_req, x->req + x->n_recv_req);
}

static halo_status mpi_copy_times(halo_exec *ex, cuda_data *d, double *t_down, double *t_up,
                                  int64_t *bytes_down, int64_t *bytes_up) {
  mpi_exec *x = d ? X(d) : NULL;
  if (!x || !x->timing)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made without the setting staged.copy_timing "
                                      "(HALO_EXEC_TIMING=1)");
  HALO_CHECK(harvest_times(d, S(ex)->n_phases));
  *t_down = x->t_down, *t_up = x->t_up, *bytes_down = x->bytes_down, *bytes_up = x->bytes_up;
  x->t_down = x->t_up = 0.0;
  x->bytes_down = x->bytes_up = x->n_down = x->n_up = 0;
  return HALO_SUCCESS;
}

double *halo_cuda_mpi_host_send(const cuda_data *d, int k) { return P(d, k)->h_send; }
double *halo_cuda_mpi_host_recv(const cuda_data *d, int k) { return P(d, k)->h_recv; }

halo_status halo_cuda_mpi_start_sends(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  const mpi_phase *q = P(d, k);
  if (q->n_send_req) HALO_MPI(MPI_Startall(q->n_send_req, X(d)->req + q->send_req_begin));
  return HALO_SUCCESS;
}

halo_status halo_cuda_mpi_wait_receives(halo_exec *ex, cuda_data *d, int k) {
  const mpi_phase *q = P(d, k);
  if (q->n_recv_req)
    HALO_CHECK(halo_exec_waitall(ex, q->n_recv_req, X(d)->req + q->recv_req_begin));
  return HALO_SUCCESS;
}

const cuda_transport halo_cuda_mpi = {
    .name = "staged and mpi-device",
    .serves = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_MPI_DEVICE},
    .units = 1,
    .exec_bytes = sizeof(mpi_exec),
    .phase_bytes = sizeof(mpi_phase),
    .channel = mpi_channel,
    .layout = mpi_layout,
    .phase_local = mpi_phase_local,
    .setup = mpi_setup,
    .host_waits = mpi_host_waits,
    .setup_end = mpi_setup_end,
    .begin = mpi_begin,
    .arm = mpi_arm,
    .send = mpi_send,
    .receive = mpi_receive,
    .land = mpi_land,
    .complete = mpi_complete,
    .copy_times = mpi_copy_times,
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
    .settings = (const char *const[]){"staged.copy_timing", NULL},
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
