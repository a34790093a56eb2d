/* Transport ipc of the CUDA executor, between the ranks of one machine: the
 * receiver copies each message from the sender's device buffer, opened
 * through a CUDA IPC handle at plan time (send buffers are carved from the
 * communicator's exported chunks, opened once by each peer): all of a
 * phase's messages in one kernel where each rank has a GPU of its own, else
 * one copy each (to the host for a helper). The
 * messages to ranks of other machines go staged (cuda_mpi.c). This file runs
 * the phases; cuda_ipc_setup.c makes what they use.
 *
 * Two ways for a sender and a receiver to tell each other that a message is
 * packed ("ready") and that it was read ("done"), per (phase, peer):
 *
 *   device  (ipc_signal 1; auto where every rank has a GPU of its own) a 64-bit
 *           flag in device memory on each side, carved from the IPC chunks
 *           and opened by the peer: the sender's stream writes the number of
 *           the exchange into the receiver's ready flag after its pack, the
 *           receiver's stream waits for it, copies, and writes the number into
 *           the sender's done flag, which the sender's stream waits for before
 *           its next pack (cuStreamWriteValue64 / cuStreamWaitValue64, from
 *           the driver through the runtime's entry points). The host enqueues
 *           and never waits for a peer: the exchange stays ordered on the
 *           stream between the caller's kernels. The numbers count from a
 *           base agreed at set-up above every number an earlier plan of this
 *           process wrote, so a late write into reused memory cannot pass for
 *           one of this plan's;
 *   host    (ipc_signal 0; auto where ranks share a GPU; always where
 *           either side is a communication helper, which runs its phases on
 *           the host) interprocess events order the copy after the sender's
 *           pack and the sender's next pack after the copy; 0-byte MPI
 *           messages say they were recorded. */
#include "halo_impl.h"

#include "exec/transport.h"

#if HALO_HAVE_CUDA && defined(HALO_MODULE_CODE) /* the module's part */
#include "exec/cuda_ipc.h"
#include "exec/cuda_ipc_impl.h"
#include "exec/cuda_mpi.h"

extern const cuda_transport halo_cuda_ipc; /* its hooks, at the end */

static ipc_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_ipc); }
static ipc_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_ipc, k); }

/* The executor's state of the transport, for its set-up (cuda_ipc_setup.c). */
static ipc_state state_of(const cuda_data *d) {
  ipc_state is = {X(d), {NULL}};
  for (int k = 0; k < HALO_MAX_PHASES && is.x; k++) is.p[k] = P(d, k);
  return is;
}

static halo_status ipc_layout(halo_exec *ex, cuda_data *d) {
  const ipc_state is = state_of(d);
  return halo_ipc_layout(ex, d, &is);
}

static halo_status ipc_setup(halo_exec *ex, cuda_data *d) {
  const ipc_state is = state_of(d);
  return halo_ipc_setup(ex, d, &is);
}

static void ipc_destroy(halo_exec *ex, cuda_data *d) {
  const ipc_state is = state_of(d);
  halo_ipc_destroy(ex, d, &is);
}

/* Tell each peer of a list what this side has done: as receivers (q the
 * senders) that the copies are done, as sender (q the receivers) that the
 * pack is: the exchange's number into its flag from the stream, or the
 * 0-byte message (done to a sender, ready to a receiver). gated: a
 * forwarding phase's ready signals, written by a kernel that reads the
 * abort word first (a released exchange sends nothing it never received). */
static halo_status signal_peers(const cuda_data *d, ipc_peer *q, int n, int as_sender, int gated) {
  const ipc_exec *x = X(d);
  for (int i = 0; i < n; i++) {
    if (q[i].sig && gated)
      HALO_CUDA(halo_cuda_post(q[i].flag_remote, x->epoch, x->ipc_abort, d->xs));
    else if (q[i].sig)
      HALO_CHECK(halo_ipc_sig_post(d->xs, q[i].flag_remote, x->epoch));
    else
      HALO_MPI(MPI_Start(as_sender ? &q[i].ready : &q[i].done));
  }
  return HALO_SUCCESS;
}

/* The ipc receives of phase k: once each sender says its data is ready,
 * copy it from the sender's buffer (into device memory, or a helper's host
 * memory), then tell the senders the copies are done (on the GPU) or
 * enqueued after our done event (on the host). */
static halo_status ipc_pull(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  const cphase *cp = &d->ph[k];
  ipc_phase *p = P(d, k);
  const uint64_t epoch = X(d)->epoch;
  int host = 0;
  for (int i = 0; i < p->n_ipc_from; i++) {
    ipc_peer *q = &p->ipc_from[i];
    if (q->sig) {
      HALO_CHECK(halo_ipc_sig_wait_for(d->xs, q->flag, epoch));
      continue;
    }
    host = 1;
    HALO_CHECK(halo_exec_waitall(ex, 1, &q->ready)); /* within exchange_timeout_ms */
    HALO_CUDA(cudaStreamWaitEvent(d->xs, q->remote_event, 0));
  }
  if (!d->host_fwd) HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
  if (p->n_pull)
    HALO_CUDA(
        halo_cuda_pull_u(p->d_pull, p->n_pull, p->pull_max, halo_ipc_entry_word(d->eb), d->xs));
  for (int i = 0; i < ph->n_recv && !p->n_pull; i++) {
    const cmsg *c = &cp->recv[i];
    if (ph->recv[i].peer == s->rank || c->ch != CH_IPC) continue;
    char *to = d->host_fwd ? halo_cuda_at(halo_cuda_mpi_host_recv(d, k), c->buf_off, d)
                           : halo_cuda_recv_at(ex, d, cp, c);
    HALO_CUDA(cudaMemcpyAsync(
        to, p->remote[i] + p->remote_entry[i] * d->eb, (size_t)(ph->recv[i].count * d->eb),
        d->host_fwd ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice, d->xs));
  }
  if (host) HALO_CUDA(cudaEventRecord(p->ev_done, d->xs));
  if (!d->host_fwd) HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 3));
  return signal_peers(d, p->ipc_from, p->n_ipc_from, 0, 0);
}

halo_status halo_cuda_ipc_receive(halo_exec *ex, cuda_data *d, int k) {
  return P(d, k)->n_ipc_from ? ipc_pull(ex, d, k) : HALO_SUCCESS;
}

halo_status halo_cuda_ipc_copied(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  const ipc_phase *p = P(d, k);
  if (p->n_ipc_from) HALO_CUDA(cudaEventSynchronize(p->ev_done));
  return HALO_SUCCESS;
}

/* What makes an exchange wait on the host (signals through events and MPI),
 * and whether signals carry the exchange's number. */
static int ipc_host_waits(const halo_exec *ex, const cuda_data *d, int *numbered) {
  int w = 0;
  for (int k = 0; k < S(ex)->n_phases; k++) {
    const ipc_phase *p = P(d, k);
    for (int i = 0; i < p->n_ipc_to; i++) {
      if (!p->ipc_to[i].sig) w |= HOST_WAIT_SIGNALS;
      *numbered |= p->ipc_to[i].sig;
    }
    for (int i = 0; i < p->n_ipc_from; i++) {
      if (!p->ipc_from[i].sig) w |= HOST_WAIT_SIGNALS;
      *numbered |= p->ipc_from[i].sig;
    }
  }
  return w;
}

/* The exchange's number (signals on the GPU); the pulls' pieces for
 * entries of another size. */
static halo_status ipc_begin(halo_exec *ex, cuda_data *d) {
  ipc_exec *x = X(d);
  x->epoch++;
  int pulls = 0;
  for (int k = 0; k < S(ex)->n_phases; k++) pulls |= P(d, k)->n_pull > 0;
  if (pulls && x->pull_eb != d->eb) {
    HALO_CUDA(cudaStreamSynchronize(d->xs)); /* the last exchange's pulls read them */
    const ipc_state is = state_of(d);
    HALO_CHECK(halo_ipc_pull_fill(ex, d, &is));
  }
  return HALO_SUCCESS;
}

static halo_status ipc_arm(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  ipc_phase *p = P(d, k);
  for (int i = 0; i < p->n_ipc_from; i++)
    if (!p->ipc_from[i].sig) HALO_MPI(MPI_Start(&p->ipc_from[i].ready));
  for (int i = 0; i < p->n_ipc_to; i++)
    if (!p->ipc_to[i].sig) HALO_MPI(MPI_Start(&p->ipc_to[i].done));
  return HALO_SUCCESS;
}

/* A receiver of the last exchange may still read our send buffer. */
static halo_status ipc_before_pack(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  const ipc_phase *p = P(d, k);
  const uint64_t epoch = X(d)->epoch;
  for (int i = 0; i < p->n_ipc_to; i++) {
    const ipc_peer *q = &p->ipc_to[i];
    if (q->sig)
      HALO_CHECK(halo_ipc_sig_wait_for(d->xs, q->flag, epoch - 1));
    else
      HALO_CUDA(cudaStreamWaitEvent(d->xs, q->remote_event, 0));
  }
  return HALO_SUCCESS;
}

/* The pack is enqueued: say so to the receivers. */
static halo_status ipc_send(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  ipc_phase *p = P(d, k);
  if (p->ev_ready) HALO_CUDA(cudaEventRecord(p->ev_ready, d->xs));
  return signal_peers(d, p->ipc_to, p->n_ipc_to, 1, k > 0 && X(d)->ipc_abort);
}

static halo_status ipc_receive(halo_exec *ex, cuda_data *d, int k) {
  return halo_cuda_ipc_receive(ex, d, k);
}

/* Every signal on the host of the exchange went: the receivers' copies are
 * enqueued. */
static halo_status ipc_complete(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < S(ex)->n_phases; k++) {
    ipc_phase *p = P(d, k);
    for (int i = 0; i < p->n_ipc_to; i++) {
      if (p->ipc_to[i].sig) continue;
      HALO_CHECK(halo_exec_waitall(ex, 1, &p->ipc_to[i].ready));
      HALO_CHECK(halo_exec_waitall(ex, 1, &p->ipc_to[i].done)); /* its copy is enqueued */
    }
    for (int i = 0; i < p->n_ipc_from; i++)
      if (!p->ipc_from[i].sig) HALO_CHECK(halo_exec_waitall(ex, 1, &p->ipc_from[i].done));
  }
  return HALO_SUCCESS;
}

static halo_status ipc_stream_ordered(const halo_exec *ex, const cuda_data *d, int capture) {
  (void)ex;
  if (d->host_waits & HOST_WAIT_SIGNALS)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "transport ipc with its signals on the host (events and MPI: ipc_signal "
                      "host, or ranks that share a GPU): ipc_signal device keeps them on the GPU");
  if (capture && d->numbered)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "transport ipc's signals on the GPU carry each exchange's number, which a "
                      "captured graph would replay unchanged: capture with transport nccl or "
                      "nvshmem");
  return HALO_SUCCESS;
}

/* After a failure: the flags on the GPU, in this rank's memory, and the
 * abort word its later phases' ready signals read (halo_cuda_post). */
static int ipc_signals(halo_exec *ex, cuda_data *d, void **sig_p, size_t *bytes_p,
                       uint64_t **abort_p) {
  (void)ex;
  const ipc_exec *x = X(d);
  if (!(x->flags && x->flags_bytes)) return 0;
  *sig_p = x->flags;
  *bytes_p = (size_t)x->n_flags * sizeof *x->flags;
  *abort_p = x->ipc_abort;
  return 1;
}

const cuda_transport halo_cuda_ipc = {
    .name = "ipc",
    .serves = {HALO_TRANSPORT_IPC},
    .units = 1,
    .host_mpi_note = " (messages to other machines)",
    .exec_bytes = sizeof(ipc_exec),
    .phase_bytes = sizeof(ipc_phase),
    .channel = halo_ipc_channel,
    .layout = ipc_layout,
    .setup = ipc_setup,
    .host_waits = ipc_host_waits,
    .begin = ipc_begin,
    .arm = ipc_arm,
    .before_pack = ipc_before_pack,
    .send = ipc_send,
    .receive = ipc_receive,
    .complete = ipc_complete,
    .stream_ordered = ipc_stream_ordered,
    .signals = ipc_signals,
    .destroy = ipc_destroy,
};

#endif /* the module's part */

#ifndef HALO_MODULE_CODE /* the descriptor, in libhalo */
const halo_transport_desc halo_transport_desc_ipc = {
    .name = "ipc",
    .id = HALO_TRANSPORT_IPC,
    .memory = HALO_TMEM_DEVICE,
    .summary = "device-to-device copies through CUDA IPC within a machine, the rest staged",
    .settings = (const char *const[]){"ipc.signal", NULL},
    .compiled = HALO_HAVE_CUDA,
    .build_hint = "HALO_ENABLE_CUDA=ON",
    .default_rank = 2,
    .auto_policy = HALO_AUTO_ALWAYS,
    .model = {.channel = HALO_CHANNEL_IPC, .copies = 1},
};
#endif
