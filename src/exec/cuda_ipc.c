/* Transport ipc of the CUDA executor, between the ranks of one machine: the
 * receiver copies each message from the sender's device buffer, opened
 * through a CUDA IPC handle at plan time (send buffers are carved from the
 * communicator's exported chunks, opened once by each peer). Interprocess
 * events order the copy after the sender's pack and the sender's next pack
 * after the copy; 0-byte MPI messages say they were recorded. The messages
 * to ranks of other machines go staged (cuda_mpi.c). */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/cuda_exec.h"
#include "tags.h"

static void ipc_peers_free(ipc_peer *q, int n) {
  for (int i = 0; i < n; i++) {
    if (q[i].ready != MPI_REQUEST_NULL) MPI_Request_free(&q[i].ready);
    if (q[i].done != MPI_REQUEST_NULL) MPI_Request_free(&q[i].done);
    if (q[i].remote_event) cudaEventDestroy(q[i].remote_event);
  }
  halo_free(q);
}

static void ipc_destroy(halo_exec *ex, cuda_data *d) {
  (void)ex;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    cphase *p = &d->ph[k];
    ipc_peers_free(p->ipc_to, p->n_ipc_to);
    ipc_peers_free(p->ipc_from, p->n_ipc_from);
    p->ipc_to = p->ipc_from = NULL;
    p->n_ipc_to = p->n_ipc_from = 0;
    if (p->ev_ready) cudaEventDestroy(p->ev_ready);
    if (p->ev_done) cudaEventDestroy(p->ev_done);
    p->ev_ready = p->ev_done = NULL;
  }
}

typedef struct {
  unsigned char mem[HALO_IPC_HANDLE_BYTES]; /* the sender's chunk */
  cudaIpcEventHandle_t event;
  int64_t chunk;  /* the chunk's number on the sender */
  int64_t offset; /* bytes into the chunk */
} ipc_record;

/* Add peer to a phase's ipc peer list (unique). */
halo_status halo_cuda_ipc_peer_add(ipc_peer **list, int *n, int peer, int *slot) {
  for (int i = 0; i < *n; i++)
    if ((*list)[i].peer == peer) {
      *slot = i;
      return HALO_SUCCESS;
    }
  ipc_peer *q = halo_realloc(*list, (size_t)(*n + 1) * sizeof **list);
  if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory setting up IPC");
  *list = q;
  memset(&q[*n], 0, sizeof q[*n]);
  q[*n].peer = peer;
  q[*n].ready = q[*n].done = MPI_REQUEST_NULL;
  *slot = (*n)++;
  return HALO_SUCCESS;
}

/* IPC set-up: senders tell receivers where each message is (arena handle,
 * ready event, offset); receivers tell senders their done event; every rank
 * opens what it was told; persistent 0-byte requests for the signals. */
static halo_status ipc_setup(halo_exec *ex, cuda_data *d) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const MPI_Comm setup = ex->cfg.comm, comm = ex->cfg.comm;
  int n_out = 0, n_in = 0, n_req = 0;
  ipc_record *out = NULL, *in = NULL;
  cudaIpcEventHandle_t *done_out = NULL, *done_in = NULL;
  MPI_Request *req = NULL;
  unsigned char arena_handle[HALO_IPC_HANDLE_BYTES];
  int any = 0;
  for (int k = 0; k < s->n_phases; k++) any |= d->ph[k].n_ipc_to + d->ph[k].n_ipc_from;
  int any_all = 0;
  HALO_TRY_MPI(MPI_Allreduce(&any, &any_all, 1, MPI_INT, MPI_MAX, setup));
  if (!any_all) return HALO_SUCCESS;
  if (d->arena) HALO_TRY(halo_device_ipc_handle(ex->cfg.dev, d->arena_chunk, arena_handle));
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_send; i++) n_out += d->ph[k].send[i].ch == CH_IPC;
    for (int i = 0; i < ph->n_recv; i++) n_in += d->ph[k].recv[i].ch == CH_IPC;
  }
  HALO_TRY(HALO_ALLOC(out, n_out));
  HALO_TRY(HALO_ALLOC(in, n_in));
  int n_done_out = 0, n_done_in = 0;
  for (int k = 0; k < s->n_phases; k++)
    n_done_out += d->ph[k].n_ipc_from, n_done_in += d->ph[k].n_ipc_to;
  HALO_TRY(HALO_ALLOC(done_out, n_done_out));
  HALO_TRY(HALO_ALLOC(done_in, n_done_in));
  HALO_TRY(HALO_ALLOC(req, n_out + n_in + n_done_out + n_done_in));
  /* events of this rank: ready (as sender) and done (as receiver) */
  for (int k = 0; k < s->n_phases; k++) {
    cphase *p = &d->ph[k];
    if (p->n_ipc_to)
      HALO_TRY(halo_event_create(&p->ev_ready, cudaEventDisableTiming | cudaEventInterprocess));
    if (p->n_ipc_from)
      HALO_TRY(halo_event_create(&p->ev_done, cudaEventDisableTiming | cudaEventInterprocess));
  }
  int a = 0, b = 0, c = 0, e = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    for (int i = 0; i < ph->n_send; i++) {
      const cmsg *m = &p->send[i];
      if (m->ch != CH_IPC) continue;
      memcpy(out[a].mem, arena_handle, sizeof arena_handle);
      HALO_TRY_CUDA(cudaIpcGetEventHandle(&out[a].event, p->ev_ready));
      out[a].chunk = d->arena_chunk;
      out[a].offset = d->arena_off + (int64_t)((char *)(p->d_send + m->buf_off) - (char *)d->arena);
      HALO_TRY_MPI(MPI_Isend(&out[a], (int)sizeof out[a], MPI_BYTE, ph->send[i].peer,
                             HALO_TAG_IPC_SETUP, setup, &req[n_req++]));
      a++;
    }
    for (int i = 0; i < ph->n_recv; i++) {
      if (p->recv[i].ch != CH_IPC) continue;
      HALO_TRY_MPI(MPI_Irecv(&in[b++], (int)sizeof *in, MPI_BYTE, ph->recv[i].peer,
                             HALO_TAG_IPC_SETUP, setup, &req[n_req++]));
    }
    for (int i = 0; i < p->n_ipc_from; i++) {
      HALO_TRY_CUDA(cudaIpcGetEventHandle(&done_out[c], p->ev_done));
      HALO_TRY_MPI(MPI_Isend(&done_out[c++], (int)sizeof *done_out, MPI_BYTE, p->ipc_from[i].peer,
                             HALO_TAG_IPC_DONE_SETUP, setup, &req[n_req++]));
    }
    for (int i = 0; i < p->n_ipc_to; i++)
      HALO_TRY_MPI(MPI_Irecv(&done_in[e++], (int)sizeof *done_in, MPI_BYTE, p->ipc_to[i].peer,
                             HALO_TAG_IPC_DONE_SETUP, setup, &req[n_req++]));
  }
  HALO_TRY_MPI(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE));
  /* open what the peers sent */
  b = 0, e = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    for (int i = 0; i < ph->n_recv; i++) {
      cmsg *m = &p->recv[i];
      if (m->ch != CH_IPC) continue;
      ipc_peer *q = &p->ipc_from[m->ipc_slot];
      char *base;
      HALO_TRY(
          halo_device_ipc_open(ex->cfg.dev, ph->recv[i].peer, (int)in[b].chunk, in[b].mem, &base));
      m->remote = base + in[b].offset;
      if (!q->remote_event) {
        halo_debug_count_alloc();
        HALO_TRY_CUDA(cudaIpcOpenEventHandle(&q->remote_event, in[b].event));
      }
      b++;
    }
    for (int i = 0; i < p->n_ipc_to; i++) {
      halo_debug_count_alloc();
      HALO_TRY_CUDA(cudaIpcOpenEventHandle(&p->ipc_to[i].remote_event, done_in[e++]));
    }
    /* the signals: ready from sender to receiver, done back */
    const int ready = halo_exec_tag_ready(ex, k), done = halo_exec_tag_done(ex, k);
    for (int i = 0; i < p->n_ipc_to; i++) {
      HALO_TRY_MPI(
          MPI_Send_init(NULL, 0, MPI_BYTE, p->ipc_to[i].peer, ready, comm, &p->ipc_to[i].ready));
      HALO_TRY_MPI(
          MPI_Recv_init(NULL, 0, MPI_BYTE, p->ipc_to[i].peer, done, comm, &p->ipc_to[i].done));
    }
    for (int i = 0; i < p->n_ipc_from; i++) {
      HALO_TRY_MPI(MPI_Recv_init(NULL, 0, MPI_BYTE, p->ipc_from[i].peer, ready, comm,
                                 &p->ipc_from[i].ready));
      HALO_TRY_MPI(
          MPI_Send_init(NULL, 0, MPI_BYTE, p->ipc_from[i].peer, done, comm, &p->ipc_from[i].done));
    }
  }
cleanup:
  halo_free(req);
  halo_free(done_in);
  halo_free(done_out);
  halo_free(in);
  halo_free(out);
  return st;
}

/* The ipc receives of phase k: once each sender says its data is ready,
 * copy it from the sender's buffer (into device memory, or a helper's host
 * memory), then tell the senders the copies are enqueued after our done
 * event. */
halo_status halo_cuda_ipc_pull(halo_exec *ex, cuda_data *d, int k) {
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

static halo_status ipc_arm(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  cphase *p = &d->ph[k];
  for (int i = 0; i < p->n_ipc_from; i++) HALO_MPI(MPI_Start(&p->ipc_from[i].ready));
  for (int i = 0; i < p->n_ipc_to; i++) HALO_MPI(MPI_Start(&p->ipc_to[i].done));
  return HALO_SUCCESS;
}

/* A receiver of the last exchange may still read our send buffer. */
static halo_status ipc_before_pack(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  cphase *p = &d->ph[k];
  for (int i = 0; i < p->n_ipc_to; i++)
    HALO_CUDA(cudaStreamWaitEvent(d->xs, p->ipc_to[i].remote_event, 0));
  return HALO_SUCCESS;
}

/* The pack is enqueued: say so to the receivers. */
static halo_status ipc_send(halo_exec *ex, cuda_data *d, int k) {
  (void)ex;
  cphase *p = &d->ph[k];
  if (!p->n_ipc_to) return HALO_SUCCESS;
  HALO_CUDA(cudaEventRecord(p->ev_ready, d->xs));
  for (int i = 0; i < p->n_ipc_to; i++) HALO_MPI(MPI_Start(&p->ipc_to[i].ready));
  return HALO_SUCCESS;
}

static halo_status ipc_receive(halo_exec *ex, cuda_data *d, int k) {
  return d->ph[k].n_ipc_from ? halo_cuda_ipc_pull(ex, d, k) : HALO_SUCCESS;
}

/* Every signal of the exchange went: the receivers' copies are enqueued. */
static halo_status ipc_complete(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < S(ex)->n_phases; k++) {
    cphase *p = &d->ph[k];
    for (int i = 0; i < p->n_ipc_to; i++) {
      HALO_MPI(MPI_Wait(&p->ipc_to[i].ready, MPI_STATUS_IGNORE));
      HALO_MPI(MPI_Wait(&p->ipc_to[i].done, MPI_STATUS_IGNORE)); /* its copy is enqueued */
    }
    for (int i = 0; i < p->n_ipc_from; i++)
      HALO_MPI(MPI_Wait(&p->ipc_from[i].done, MPI_STATUS_IGNORE));
  }
  return HALO_SUCCESS;
}

const cuda_transport halo_cuda_ipc = {
    .name = "ipc",
    .setup = ipc_setup,
    .arm = ipc_arm,
    .before_pack = ipc_before_pack,
    .send = ipc_send,
    .receive = ipc_receive,
    .complete = ipc_complete,
    .destroy = ipc_destroy,
};

#endif /* HALO_HAVE_CUDA */
