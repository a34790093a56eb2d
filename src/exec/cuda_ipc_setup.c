/* Set-up of transport ipc of the CUDA executor (its run: cuda_ipc.c): the
 * phases' ipc peers, the flags of the signals on the GPU, the handles of the
 * send buffers, events and flags exchanged between the ranks of a machine
 * and opened, the persistent 0-byte requests of the signals on the host, and
 * the pull kernel's pieces; and the stream memory operations
 * (cuStreamWaitValue64 / cuStreamWriteValue64) the signals on the GPU use,
 * loaded from the driver through the runtime's entry points. */
#include "halo_impl.h"

#if HALO_HAVE_CUDA && defined(HALO_MODULE_CODE)
#include <cuda.h> /* types of the stream memory operations; no link to the driver */
#include <string.h>

#include "exec/cuda_ipc_impl.h"
#include "exec/cuda_mpi.h"
#include "tags.h"

typedef CUresult (*sig_wait_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
typedef CUresult (*sig_write_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
typedef CUresult (*sig_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*sig_get_fn)(CUdevice *, int);
static sig_wait_fn sig_wait;
static sig_write_fn sig_write;
/* numbers above any this process's plans wrote: the next base */
static uint64_t sig_next = 1;
/* each plan's numbers stay below its base + this */
#define SIG_SPAN (UINT64_C(1) << 40)

static int sig_entry(const char *name, void *fn) {
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || !p) {
    (void)cudaGetLastError();
    return 0;
  }
  memcpy(fn, &p, sizeof p);
  return 1;
}

/* Whether this rank's GPU takes 64-bit stream memory operations; loads them. */
static int sig_capable(int device) {
  sig_attr_fn attr = NULL;
  sig_get_fn get = NULL;
  CUdevice dev;
  int v = 0;
  if (!sig_entry("cuDeviceGetAttribute", &attr) || !sig_entry("cuDeviceGet", &get) ||
      !sig_entry("cuStreamWaitValue64", &sig_wait) ||
      !sig_entry("cuStreamWriteValue64", &sig_write))
    return 0;
  if (get(&dev, device) != CUDA_SUCCESS) return 0;
  if (attr(&v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev) != CUDA_SUCCESS) return 0;
  return v != 0;
}

static halo_status sig_error(CUresult r, const char *call) {
  return HALO_ERROR(HALO_ERR_CUDA, "%s failed: CUDA driver error %d", call, (int)r);
}

/* The stream waits until *flag (device memory) reaches value. */
halo_status halo_ipc_sig_wait_for(cudaStream_t s, const uint64_t *flag, uint64_t value) {
  const CUresult r =
      sig_wait((CUstream)s, (CUdeviceptr)(uintptr_t)flag, value, CU_STREAM_WAIT_VALUE_GEQ);
  return r == CUDA_SUCCESS ? HALO_SUCCESS : sig_error(r, "cuStreamWaitValue64");
}

/* The stream writes value into *flag (a peer's), after its earlier work,
 * with a fence before the write. */
halo_status halo_ipc_sig_post(cudaStream_t s, uint64_t *flag, uint64_t value) {
  const CUresult r =
      sig_write((CUstream)s, (CUdeviceptr)(uintptr_t)flag, value, CU_STREAM_WRITE_VALUE_DEFAULT);
  return r == CUDA_SUCCESS ? HALO_SUCCESS : sig_error(r, "cuStreamWriteValue64");
}

static void ipc_peers_free(ipc_peer *q, int n) {
  for (int i = 0; i < n; i++) {
    if (q[i].ready != MPI_REQUEST_NULL) MPI_Request_free(&q[i].ready);
    if (q[i].done != MPI_REQUEST_NULL) MPI_Request_free(&q[i].done);
    if (q[i].remote_event) cudaEventDestroy(q[i].remote_event);
  }
  halo_free(q);
}

void halo_ipc_destroy(halo_exec *ex, cuda_data *d, const ipc_state *is) {
  ipc_exec *x = is->x;
  if (!x) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    ipc_phase *p = is->p[k];
    ipc_peers_free(p->ipc_to, p->n_ipc_to);
    ipc_peers_free(p->ipc_from, p->n_ipc_from);
    p->ipc_to = p->ipc_from = NULL;
    p->n_ipc_to = p->n_ipc_from = 0;
    if (p->ev_ready) cudaEventDestroy(p->ev_ready);
    if (p->ev_done) cudaEventDestroy(p->ev_done);
    p->ev_ready = p->ev_done = NULL;
  }
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    ipc_phase *p = is->p[k];
    halo_dev_free(p->d_pull);
    p->d_pull = NULL;
    p->n_pull = 0;
    halo_free(p->ipc_slot);
    halo_free(p->remote);
    halo_free(p->remote_entry);
    p->ipc_slot = NULL, p->remote = NULL, p->remote_entry = NULL;
  }
  halo_device_ipc_release(ex->cfg.dev, x->flags, x->flags_bytes);
  x->flags = x->ipc_abort = NULL;
  x->flags_bytes = 0;
  x->n_flags = 0;
}

/* Where a flag is, for the peer that writes it. */
typedef struct {
  unsigned char mem[HALO_IPC_HANDLE_BYTES]; /* the chunk of the flags */
  int64_t chunk, offset;
} ipc_flag_at;

/* From a sender to a receiver, per message. */
typedef struct {
  unsigned char mem[HALO_IPC_HANDLE_BYTES]; /* the sender's chunk */
  cudaIpcEventHandle_t event;               /* signals on the host: the sender's ready event */
  int64_t chunk;                            /* the chunk's number on the sender */
  int64_t offset;                           /* bytes into the chunk: the phase's send buffer */
  int64_t entry;                            /* the message's first entry in it */
  ipc_flag_at done;                         /* signals on the GPU: the sender's done flag */
} ipc_record;

/* From a receiver to a sender, per (phase, sender). */
typedef struct {
  cudaIpcEventHandle_t event; /* signals on the host: the receiver's done event */
  ipc_flag_at ready;          /* signals on the GPU: the receiver's ready flag */
} ipc_back;

/* Add peer to a phase's ipc peer list (unique). */
static halo_status ipc_peer_add(ipc_peer **list, int *n, int peer, int *slot) {
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

/* The ranks of this machine, unless the sender is a helper (its values are
 * on the host): the others go staged. */
halo_status halo_ipc_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                             int peer, int send, channel *ch) {
  (void)ex;
  const int sender_on_host = send ? d->host_fwd : d->peer_host_fwd[peer];
  int r = MPI_UNDEFINED;
  /* a failure is the set-up's: a channel taken by one side alone would
   * leave the other waiting for the peer's ipc records */
  if (!sender_on_host) HALO_MPI(MPI_Group_translate_ranks(g->plan, 1, &peer, g->machine, &r));
  *ch = sender_on_host || r == MPI_UNDEFINED ? CH_STAGED : CH_IPC;
  return HALO_SUCCESS;
}

/* Each phase's ipc peers, and the sender of each ipc receive (this rank
 * alone). */
halo_status halo_ipc_layout(halo_exec *ex, cuda_data *d, const ipc_state *is) {
  const halo_schedule *s = S(ex);
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *c = &d->ph[k];
    ipc_phase *p = is->p[k];
    int slot, n_in = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && c->send[i].ch == CH_IPC)
        HALO_CHECK(ipc_peer_add(&p->ipc_to, &p->n_ipc_to, ph->send[i].peer, &slot));
    for (int i = 0; i < ph->n_recv; i++)
      n_in += ph->recv[i].peer != s->rank && c->recv[i].ch == CH_IPC;
    if (n_in == 0) continue;
    HALO_CHECK(HALO_CALLOC(p->ipc_slot, ph->n_recv));
    HALO_CHECK(HALO_CALLOC(p->remote, ph->n_recv));
    HALO_CHECK(HALO_CALLOC(p->remote_entry, ph->n_recv));
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank && c->recv[i].ch == CH_IPC)
        HALO_CHECK(ipc_peer_add(&p->ipc_from, &p->n_ipc_from, ph->recv[i].peer, &p->ipc_slot[i]));
  }
  return HALO_SUCCESS;
}

/* The flags of the peers that signal on the GPU: carved from the IPC chunks
 * (ready per sender, done per receiver, phase by phase), set to the base. */
static halo_status flags_make(halo_exec *ex, cuda_data *d, uint64_t base, const ipc_state *is) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  ipc_exec *x = is->x;
  int64_t n = 0;
  uint64_t *h = NULL;
  for (int k = 0; k < s->n_phases; k++) {
    const ipc_phase *p = is->p[k];
    for (int i = 0; i < p->n_ipc_from; i++) n += p->ipc_from[i].sig;
    for (int i = 0; i < p->n_ipc_to; i++) n += p->ipc_to[i].sig;
  }
  if (n == 0) return HALO_SUCCESS;
  /* where the executor forwards, one more word after the flags: the abort
   * word its later phases' ready signals read (halo_cuda_post) */
  const int64_t n_all = n + (halo_cuda_forwards(s) ? 1 : 0);
  x->n_flags = n;
  x->flags_bytes = (size_t)n_all * sizeof *x->flags;
  HALO_TRY(halo_device_ipc_alloc(ex->cfg.dev, x->flags_bytes, (void **)&x->flags, &x->flags_chunk,
                                 &x->flags_off));
  HALO_TRY(HALO_ALLOC(h, n_all));
  for (int64_t i = 0; i < n; i++) h[i] = base;
  if (n_all > n) h[n] = 0, x->ipc_abort = x->flags + n;
  /* done before any peer hears where the flags are, and may write them */
  HALO_TRY_CUDA(cudaMemcpyAsync(x->flags, h, x->flags_bytes, cudaMemcpyHostToDevice, d->xs));
  HALO_TRY_CUDA(cudaStreamSynchronize(d->xs));
  int64_t f = 0;
  for (int k = 0; k < s->n_phases; k++) {
    ipc_phase *p = is->p[k];
    for (int i = 0; i < p->n_ipc_from; i++)
      if (p->ipc_from[i].sig) p->ipc_from[i].flag = x->flags + f++;
    for (int i = 0; i < p->n_ipc_to; i++)
      if (p->ipc_to[i].sig) p->ipc_to[i].flag = x->flags + f++;
  }
cleanup:
  halo_free(h);
  return st;
}

static halo_status flag_at(const ipc_exec *x, const unsigned char *handle, const uint64_t *flag,
                           ipc_flag_at *at) {
  memcpy(at->mem, handle, HALO_IPC_HANDLE_BYTES);
  at->chunk = x->flags_chunk;
  at->offset = x->flags_off + (int64_t)((const char *)flag - (const char *)x->flags);
  return HALO_SUCCESS;
}

static halo_status flag_open(halo_exec *ex, int peer, const ipc_flag_at *at, uint64_t **flag_p) {
  char *base;
  HALO_CHECK(halo_device_ipc_open(ex->cfg.dev, peer, (int)at->chunk, at->mem, &base));
  *flag_p = (uint64_t *)(void *)(base + at->offset);
  return HALO_SUCCESS;
}

/* The pieces of each phase's pull kernel, on the device: every ipc receive,
 * from the sender's buffer to where it lands; where each rank has a GPU of
 * its own and rows. Ranks that share a GPU copy message by message: without
 * MPS their contexts take turns on the GPU, and a kernel waits for its turn
 * where the copy engines' copies do not (lap3d27:160, 8 ranks on 2 H100,
 * standard: 4.1-6.2 ms per SpMV with the kernel, 1.4-1.7 ms with copies). */
/* Each phase's pieces for entries of d->eb bytes, uploaded (the last
 * exchange's pulls done: the caller waited for the stream). */
halo_status halo_ipc_pull_fill(halo_exec *ex, cuda_data *d, const ipc_state *is) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const int ws = halo_ipc_entry_word(d->eb);
  halo_cuda_piece_u *h = NULL;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    ipc_phase *p = is->p[k];
    if (!p->n_pull) continue;
    HALO_FREE(h);
    HALO_TRY(HALO_ALLOC(h, p->n_pull));
    int n = 0;
    p->pull_max = 0;
    for (int i = 0; i < ph->n_recv; i++) {
      const cmsg *c = &cp->recv[i];
      const int64_t cnt = ph->recv[i].count * d->eb / ws;
      if (ph->recv[i].peer == s->rank || c->ch != CH_IPC || cnt == 0) continue;
      h[n].src = p->remote[i] + p->remote_entry[i] * d->eb;
      h[n].dst = halo_cuda_recv_at(ex, d, cp, c);
      h[n++].n = cnt;
      if (cnt > p->pull_max) p->pull_max = cnt;
    }
    HALO_TRY(halo_host_to_dev(p->d_pull, h, (size_t)n * sizeof *h));
  }
  is->x->pull_eb = d->eb;
cleanup:
  halo_free(h);
  return st;
}

static halo_status pull_make(halo_exec *ex, cuda_data *d, const ipc_state *is) {
  const halo_schedule *s = S(ex);
  if (d->host_fwd || halo_device_ranks_per_gpu(ex->cfg.dev) > 1) return HALO_SUCCESS;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    ipc_phase *p = is->p[k];
    int n = 0;
    for (int i = 0; i < ph->n_recv; i++)
      n += ph->recv[i].peer != s->rank && cp->recv[i].ch == CH_IPC && ph->recv[i].count > 0;
    if (n == 0 || n > HALO_CUDA_MAX_PIECES) continue; /* none, or copies one by one */
    HALO_CHECK(halo_dev_malloc((void **)&p->d_pull, (size_t)n * sizeof *p->d_pull));
    p->n_pull = n;
  }
  return halo_ipc_pull_fill(ex, d, is);
}

static halo_status event_handle(cudaIpcEventHandle_t *h, cudaEvent_t e) {
  HALO_CUDA(cudaIpcGetEventHandle(h, e));
  return HALO_SUCCESS;
}

/* IPC set-up: senders tell receivers where each message is (arena handle,
 * offset; the ready event, or where their done flag is); receivers tell
 * senders their done event, or where their ready flag is; every rank opens
 * what it was told; persistent 0-byte requests for the signals on the host.
 * The ranks agree whether signals go on the GPU (every rank's GPU can) and
 * on the base of the exchanges' numbers. */
halo_status halo_ipc_setup(halo_exec *ex, cuda_data *d, const ipc_state *is) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const MPI_Comm setup = ex->cfg.comm, comm = ex->cfg.comm;
  ipc_exec *x = is->x;
  int n_out = 0, n_in = 0, n_req = 0, n_back_out = 0, n_back_in = 0;
  ipc_record *out = NULL, *in = NULL;
  ipc_back *back_out = NULL, *back_in = NULL;
  MPI_Request *req = NULL;
  unsigned char arena_handle[HALO_IPC_HANDLE_BYTES], flags_handle[HALO_IPC_HANDLE_BYTES];
  memset(arena_handle, 0, sizeof arena_handle);
  memset(flags_handle, 0, sizeof flags_handle);
  int any = 0;
  for (int k = 0; k < s->n_phases; k++) any |= is->p[k]->n_ipc_to + is->p[k]->n_ipc_from;
  /* most of: any ipc, a GPU that cannot signal, the next base */
  const int want = ex->cfg.ipc_signal == 1 ||
                   (ex->cfg.ipc_signal == 2 && halo_device_ranks_per_gpu(ex->cfg.dev) == 1);
  int64_t mine[3] = {any != 0, want && !sig_capable(halo_device_id(ex->cfg.dev)),
                     (int64_t)sig_next},
          most[3];
  HALO_TRY_MPI(MPI_Allreduce(mine, most, 3, MPI_INT64_T, MPI_MAX, setup));
  if (!most[0]) return HALO_SUCCESS;
  const int sig = want && !most[1];
  const uint64_t base = (uint64_t)most[2];
  sig_next = base + SIG_SPAN;
  x->epoch = base;
  for (int k = 0; k < s->n_phases; k++) { /* both sides of a pair decide alike */
    ipc_phase *p = is->p[k];
    for (int i = 0; i < p->n_ipc_to; i++)
      p->ipc_to[i].sig = sig && !d->host_fwd && !d->peer_host_fwd[p->ipc_to[i].peer];
    for (int i = 0; i < p->n_ipc_from; i++)
      p->ipc_from[i].sig = sig && !d->host_fwd && !d->peer_host_fwd[p->ipc_from[i].peer];
  }
  /* what can fail on this rank alone (flags, handles, events, records) is
   * agreed before any set-up message goes: a rank that failed sends none */
  if ((st = flags_make(ex, d, base, is)) != HALO_SUCCESS) goto agree;
  if (d->arena) st = halo_device_ipc_handle(ex->cfg.dev, d->arena_chunk, arena_handle);
  if (st == HALO_SUCCESS && x->flags)
    st = halo_device_ipc_handle(ex->cfg.dev, x->flags_chunk, flags_handle);
  if (st != HALO_SUCCESS) goto agree;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_send; i++) n_out += d->ph[k].send[i].ch == CH_IPC;
    for (int i = 0; i < ph->n_recv; i++) n_in += d->ph[k].recv[i].ch == CH_IPC;
  }
  if ((st = HALO_CALLOC(out, n_out)) != HALO_SUCCESS) goto agree;
  if ((st = HALO_CALLOC(in, n_in)) != HALO_SUCCESS) goto agree;
  for (int k = 0; k < s->n_phases; k++)
    n_back_out += is->p[k]->n_ipc_from, n_back_in += is->p[k]->n_ipc_to;
  if ((st = HALO_CALLOC(back_out, n_back_out)) != HALO_SUCCESS) goto agree;
  if ((st = HALO_CALLOC(back_in, n_back_in)) != HALO_SUCCESS) goto agree;
  if ((st = HALO_ALLOC(req, n_out + n_in + n_back_out + n_back_in)) != HALO_SUCCESS) goto agree;
  /* events of this rank, for the peers that signal on the host: ready (as
   * sender) and done (as receiver) */
  for (int k = 0; k < s->n_phases; k++) {
    ipc_phase *p = is->p[k];
    int host_to = 0, host_from = 0;
    for (int i = 0; i < p->n_ipc_to; i++) host_to += !p->ipc_to[i].sig;
    for (int i = 0; i < p->n_ipc_from; i++) host_from += !p->ipc_from[i].sig;
    const unsigned fl = cudaEventDisableTiming | cudaEventInterprocess;
    if (host_to && (st = halo_event_create(&p->ev_ready, fl)) != HALO_SUCCESS) goto agree;
    if (host_from && (st = halo_event_create(&p->ev_done, fl)) != HALO_SUCCESS) goto agree;
  }
  /* the records: of each ipc message for its receiver, of each sender for it */
  int a = 0, c = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    ipc_phase *p = is->p[k];
    for (int i = 0; i < ph->n_send; i++) {
      const cmsg *m = &cp->send[i];
      if (m->ch != CH_IPC) continue;
      const ipc_peer *q = NULL;
      for (int j = 0; j < p->n_ipc_to; j++)
        if (p->ipc_to[j].peer == ph->send[i].peer) q = &p->ipc_to[j];
      if (!q) {
        st = HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: no ipc peer for a message", k);
        goto agree;
      }
      memcpy(out[a].mem, arena_handle, sizeof arena_handle);
      st = q->sig ? flag_at(x, flags_handle, q->flag, &out[a].done)
                  : event_handle(&out[a].event, p->ev_ready);
      if (st != HALO_SUCCESS) goto agree;
      out[a].chunk = d->arena_chunk;
      out[a].offset = d->arena_off + (int64_t)((char *)cp->d_send - (char *)d->arena);
      out[a].entry = m->buf_off;
      a++;
    }
    for (int i = 0; i < p->n_ipc_from; i++, c++) {
      const ipc_peer *q = &p->ipc_from[i];
      st = q->sig ? flag_at(x, flags_handle, q->flag, &back_out[c].ready)
                  : event_handle(&back_out[c].event, p->ev_done);
      if (st != HALO_SUCCESS) goto agree;
    }
  }
agree:
  HALO_TRY(halo_agree(setup, st));
  int b = 0, e = 0;
  a = 0, c = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    const ipc_phase *p = is->p[k];
    for (int i = 0; i < ph->n_send; i++)
      if (cp->send[i].ch == CH_IPC)
        HALO_TRY_MPI(MPI_Isend(&out[a++], (int)sizeof *out, MPI_BYTE, ph->send[i].peer,
                               HALO_TAG_IPC_SETUP, setup, &req[n_req++]));
    for (int i = 0; i < ph->n_recv; i++)
      if (cp->recv[i].ch == CH_IPC)
        HALO_TRY_MPI(MPI_Irecv(&in[b++], (int)sizeof *in, MPI_BYTE, ph->recv[i].peer,
                               HALO_TAG_IPC_SETUP, setup, &req[n_req++]));
    for (int i = 0; i < p->n_ipc_from; i++)
      HALO_TRY_MPI(MPI_Isend(&back_out[c++], (int)sizeof *back_out, MPI_BYTE, p->ipc_from[i].peer,
                             HALO_TAG_IPC_DONE_SETUP, setup, &req[n_req++]));
    for (int i = 0; i < p->n_ipc_to; i++)
      HALO_TRY_MPI(MPI_Irecv(&back_in[e++], (int)sizeof *back_in, MPI_BYTE, p->ipc_to[i].peer,
                             HALO_TAG_IPC_DONE_SETUP, setup, &req[n_req++]));
  }
  HALO_TRY_MPI(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE));
  /* open what the peers sent */
  b = 0, e = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    ipc_phase *p = is->p[k];
    for (int i = 0; i < ph->n_recv; i++) {
      const cmsg *m = &cp->recv[i];
      if (m->ch != CH_IPC) continue;
      ipc_peer *q = &p->ipc_from[p->ipc_slot[i]];
      char *base_p;
      HALO_TRY(halo_device_ipc_open(ex->cfg.dev, ph->recv[i].peer, (int)in[b].chunk, in[b].mem,
                                    &base_p));
      p->remote[i] = base_p + in[b].offset;
      p->remote_entry[i] = in[b].entry;
      if (q->sig && !q->flag_remote) {
        HALO_TRY(flag_open(ex, q->peer, &in[b].done, &q->flag_remote));
      } else if (!q->sig && !q->remote_event) {
        halo_debug_count_alloc();
        HALO_TRY_CUDA(cudaIpcOpenEventHandle(&q->remote_event, in[b].event));
      }
      b++;
    }
    for (int i = 0; i < p->n_ipc_to; i++, e++) {
      ipc_peer *q = &p->ipc_to[i];
      if (q->sig) {
        HALO_TRY(flag_open(ex, q->peer, &back_in[e].ready, &q->flag_remote));
      } else {
        halo_debug_count_alloc();
        HALO_TRY_CUDA(cudaIpcOpenEventHandle(&q->remote_event, back_in[e].event));
      }
    }
    /* the signals on the host: ready from sender to receiver, done back */
    const int ready = halo_exec_tag_ready(ex, k), done = halo_exec_tag_done(ex, k);
    for (int i = 0; i < p->n_ipc_to; i++) {
      if (p->ipc_to[i].sig) continue;
      HALO_TRY_MPI(
          MPI_Send_init(NULL, 0, MPI_BYTE, p->ipc_to[i].peer, ready, comm, &p->ipc_to[i].ready));
      HALO_TRY_MPI(
          MPI_Recv_init(NULL, 0, MPI_BYTE, p->ipc_to[i].peer, done, comm, &p->ipc_to[i].done));
    }
    for (int i = 0; i < p->n_ipc_from; i++) {
      if (p->ipc_from[i].sig) continue;
      HALO_TRY_MPI(MPI_Recv_init(NULL, 0, MPI_BYTE, p->ipc_from[i].peer, ready, comm,
                                 &p->ipc_from[i].ready));
      HALO_TRY_MPI(
          MPI_Send_init(NULL, 0, MPI_BYTE, p->ipc_from[i].peer, done, comm, &p->ipc_from[i].done));
    }
  }
  HALO_TRY(pull_make(ex, d, is));
cleanup:
  halo_free(req);
  halo_free(back_in);
  halo_free(back_out);
  halo_free(in);
  halo_free(out);
  return st;
}

#endif /* HALO_HAVE_CUDA && HALO_MODULE_CODE */
