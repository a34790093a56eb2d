/* Transport ipc of the CUDA executor, between the ranks of one machine: the
 * receiver copies each message from the sender's device buffer, opened
 * through a CUDA IPC handle at plan time (send buffers are carved from the
 * communicator's exported chunks, opened once by each peer): all of a
 * phase's messages in one kernel where each rank has a GPU of its own, else
 * one copy each (to the host for a helper). The
 * messages to ranks of other machines go staged (cuda_mpi.c).
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
#include <cuda.h> /* types of the stream memory operations; no link to the driver */
#include <string.h>

#include "exec/cuda_exec.h"
#include "exec/cuda_ipc.h"
#include "exec/cuda_mpi.h"
#include "tags.h"

extern const cuda_transport halo_cuda_ipc; /* its hooks, at the end */

enum { CH_IPC = 3 }; /* the receiver copies from the sender's device buffer */

typedef struct {
  int peer; /* plan rank */
  MPI_Request ready, done;
  cudaEvent_t remote_event; /* opened: the peer's ready (we receive) or done (we send) */
  /* signals on the GPU (ipc_signal "device"; neither side a helper): the
   * sender writes the exchange's number into the receiver's ready flag after
   * its pack, the receiver into the sender's done flag after its copy */
  int sig;
  uint64_t *flag;        /* ours, in device memory: the peer writes it */
  uint64_t *flag_remote; /* the peer's, opened: we write it */
} ipc_peer;

/* The executor's: the flags of the signals on the GPU of every phase (ready
 * per sender, then done per receiver), carved from the IPC chunks; the
 * number of the exchange in flight, counted from a base agreed at set-up
 * above any number an earlier plan on this memory wrote. */
typedef struct {
  uint64_t *flags;
  size_t flags_bytes; /* the signals' (n_flags) and, where the executor forwards, ipc_abort */
  int64_t n_flags;
  uint64_t *ipc_abort; /* 0x7f7f...: released after a failure, later phases post nothing */
  int flags_chunk;
  int64_t flags_off;
  uint64_t epoch;
} ipc_exec;

/* A phase's. */
typedef struct {
  int n_ipc_to, n_ipc_from; /* peers we send to / receive from over ipc */
  ipc_peer *ipc_to, *ipc_from;
  cudaEvent_t ev_ready, ev_done; /* interprocess: ours as sender, ours as receiver */
  /* per receive of the phase (where it has ipc receives): the opened sender
   * (its slot in ipc_from), the message in the sender's buffer, opened */
  int *ipc_slot;
  const char **remote;
  /* the ipc receives copied by one kernel from the senders' buffers (a rank
   * with rows; a helper copies each to the host) */
  int n_pull;
  int64_t pull_max;
  halo_cuda_piece *d_pull;
} ipc_phase;

static ipc_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_ipc); }
static ipc_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_ipc, k); }

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
static halo_status sig_wait_for(cudaStream_t s, const uint64_t *flag, uint64_t value) {
  const CUresult r =
      sig_wait((CUstream)s, (CUdeviceptr)(uintptr_t)flag, value, CU_STREAM_WAIT_VALUE_GEQ);
  return r == CUDA_SUCCESS ? HALO_SUCCESS : sig_error(r, "cuStreamWaitValue64");
}

/* The stream writes value into *flag (a peer's), after its earlier work,
 * with a fence before the write. */
static halo_status sig_post(cudaStream_t s, uint64_t *flag, uint64_t value) {
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

static void ipc_destroy(halo_exec *ex, cuda_data *d) {
  ipc_exec *x = X(d);
  if (!x) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    ipc_phase *p = P(d, k);
    ipc_peers_free(p->ipc_to, p->n_ipc_to);
    ipc_peers_free(p->ipc_from, p->n_ipc_from);
    p->ipc_to = p->ipc_from = NULL;
    p->n_ipc_to = p->n_ipc_from = 0;
    if (p->ev_ready) cudaEventDestroy(p->ev_ready);
    if (p->ev_done) cudaEventDestroy(p->ev_done);
    p->ev_ready = p->ev_done = NULL;
  }
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    ipc_phase *p = P(d, k);
    halo_dev_free(p->d_pull);
    p->d_pull = NULL;
    p->n_pull = 0;
    halo_free(p->ipc_slot);
    halo_free(p->remote);
    p->ipc_slot = NULL, p->remote = NULL;
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
  int64_t offset;                           /* bytes into the chunk */
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
static halo_status ipc_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
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
static halo_status ipc_layout(halo_exec *ex, cuda_data *d) {
  const halo_schedule *s = S(ex);
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *c = &d->ph[k];
    ipc_phase *p = P(d, k);
    int slot, n_in = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && c->send[i].ch == CH_IPC)
        HALO_CHECK(ipc_peer_add(&p->ipc_to, &p->n_ipc_to, ph->send[i].peer, &slot));
    for (int i = 0; i < ph->n_recv; i++)
      n_in += ph->recv[i].peer != s->rank && c->recv[i].ch == CH_IPC;
    if (n_in == 0) continue;
    HALO_CHECK(HALO_CALLOC(p->ipc_slot, ph->n_recv));
    HALO_CHECK(HALO_CALLOC(p->remote, ph->n_recv));
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank && c->recv[i].ch == CH_IPC)
        HALO_CHECK(ipc_peer_add(&p->ipc_from, &p->n_ipc_from, ph->recv[i].peer, &p->ipc_slot[i]));
  }
  return HALO_SUCCESS;
}

/* The flags of the peers that signal on the GPU: carved from the IPC chunks
 * (ready per sender, done per receiver, phase by phase), set to the base. */
static halo_status flags_make(halo_exec *ex, cuda_data *d, uint64_t base) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  ipc_exec *x = X(d);
  int64_t n = 0;
  uint64_t *h = NULL;
  for (int k = 0; k < s->n_phases; k++) {
    const ipc_phase *p = P(d, k);
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
    ipc_phase *p = P(d, k);
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
static halo_status pull_make(halo_exec *ex, cuda_data *d) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  halo_cuda_piece *h = NULL;
  if (d->host_fwd || halo_device_ranks_per_gpu(ex->cfg.dev) > 1) return HALO_SUCCESS;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *cp = &d->ph[k];
    ipc_phase *p = P(d, k);
    int n = 0;
    for (int i = 0; i < ph->n_recv; i++)
      n += ph->recv[i].peer != s->rank && cp->recv[i].ch == CH_IPC && ph->recv[i].count > 0;
    if (n == 0 || n > HALO_CUDA_MAX_PIECES) continue; /* none, or copies one by one */
    HALO_FREE(h);
    HALO_TRY(HALO_ALLOC(h, n));
    n = 0;
    p->pull_max = 0;
    for (int i = 0; i < ph->n_recv; i++) {
      const cmsg *c = &cp->recv[i];
      const int64_t cnt = ph->recv[i].count;
      if (ph->recv[i].peer == s->rank || c->ch != CH_IPC || cnt == 0) continue;
      h[n].src = (const double *)(const void *)p->remote[i];
      h[n].dst = c->direct ? c->direct : cp->d_recv + c->buf_off;
      h[n++].n = cnt;
      if (cnt > p->pull_max) p->pull_max = cnt;
    }
    HALO_TRY(halo_dev_malloc((void **)&p->d_pull, (size_t)n * sizeof *h));
    HALO_TRY(halo_host_to_dev(p->d_pull, h, (size_t)n * sizeof *h));
    p->n_pull = n;
  }
cleanup:
  halo_free(h);
  return st;
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
static halo_status ipc_setup(halo_exec *ex, cuda_data *d) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const MPI_Comm setup = ex->cfg.comm, comm = ex->cfg.comm;
  ipc_exec *x = X(d);
  int n_out = 0, n_in = 0, n_req = 0, n_back_out = 0, n_back_in = 0;
  ipc_record *out = NULL, *in = NULL;
  ipc_back *back_out = NULL, *back_in = NULL;
  MPI_Request *req = NULL;
  unsigned char arena_handle[HALO_IPC_HANDLE_BYTES], flags_handle[HALO_IPC_HANDLE_BYTES];
  memset(arena_handle, 0, sizeof arena_handle);
  memset(flags_handle, 0, sizeof flags_handle);
  int any = 0;
  for (int k = 0; k < s->n_phases; k++) any |= P(d, k)->n_ipc_to + P(d, k)->n_ipc_from;
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
    ipc_phase *p = P(d, k);
    for (int i = 0; i < p->n_ipc_to; i++)
      p->ipc_to[i].sig = sig && !d->host_fwd && !d->peer_host_fwd[p->ipc_to[i].peer];
    for (int i = 0; i < p->n_ipc_from; i++)
      p->ipc_from[i].sig = sig && !d->host_fwd && !d->peer_host_fwd[p->ipc_from[i].peer];
  }
  /* what can fail on this rank alone (flags, handles, events, records) is
   * agreed before any set-up message goes: a rank that failed sends none */
  if ((st = flags_make(ex, d, base)) != HALO_SUCCESS) goto agree;
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
    n_back_out += P(d, k)->n_ipc_from, n_back_in += P(d, k)->n_ipc_to;
  if ((st = HALO_CALLOC(back_out, n_back_out)) != HALO_SUCCESS) goto agree;
  if ((st = HALO_CALLOC(back_in, n_back_in)) != HALO_SUCCESS) goto agree;
  if ((st = HALO_ALLOC(req, n_out + n_in + n_back_out + n_back_in)) != HALO_SUCCESS) goto agree;
  /* events of this rank, for the peers that signal on the host: ready (as
   * sender) and done (as receiver) */
  for (int k = 0; k < s->n_phases; k++) {
    ipc_phase *p = P(d, k);
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
    ipc_phase *p = P(d, k);
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
      out[a].offset =
          d->arena_off + (int64_t)((char *)(cp->d_send + m->buf_off) - (char *)d->arena);
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
    const ipc_phase *p = P(d, k);
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
    ipc_phase *p = P(d, k);
    for (int i = 0; i < ph->n_recv; i++) {
      const cmsg *m = &cp->recv[i];
      if (m->ch != CH_IPC) continue;
      ipc_peer *q = &p->ipc_from[p->ipc_slot[i]];
      char *base_p;
      HALO_TRY(halo_device_ipc_open(ex->cfg.dev, ph->recv[i].peer, (int)in[b].chunk, in[b].mem,
                                    &base_p));
      p->remote[i] = base_p + in[b].offset;
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
  HALO_TRY(pull_make(ex, d));
cleanup:
  halo_free(req);
  halo_free(back_in);
  halo_free(back_out);
  halo_free(in);
  halo_free(out);
  return st;
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
      HALO_CHECK(sig_post(d->xs, q[i].flag_remote, x->epoch));
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
      HALO_CHECK(sig_wait_for(d->xs, q->flag, epoch));
      continue;
    }
    host = 1;
    HALO_CHECK(halo_exec_waitall(ex, 1, &q->ready)); /* within exchange_timeout_ms */
    HALO_CUDA(cudaStreamWaitEvent(d->xs, q->remote_event, 0));
  }
  if (!d->host_fwd) HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
  if (p->n_pull) HALO_CUDA(halo_cuda_pull(p->d_pull, p->n_pull, p->pull_max, d->xs));
  for (int i = 0; i < ph->n_recv && !p->n_pull; i++) {
    const cmsg *c = &cp->recv[i];
    if (ph->recv[i].peer == s->rank || c->ch != CH_IPC) continue;
    double *to = d->host_fwd ? halo_cuda_mpi_host_recv(d, k) + c->buf_off
                 : c->direct ? c->direct
                             : cp->d_recv + c->buf_off;
    HALO_CUDA(cudaMemcpyAsync(to, p->remote[i], (size_t)ph->recv[i].count * sizeof(double),
                              d->host_fwd ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice,
                              d->xs));
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

/* The exchange's number (signals on the GPU). */
static halo_status ipc_begin(halo_exec *ex, cuda_data *d) {
  (void)ex;
  X(d)->epoch++;
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
      HALO_CHECK(sig_wait_for(d->xs, q->flag, epoch - 1));
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
    .host_mpi_note = " (messages to other machines)",
    .exec_bytes = sizeof(ipc_exec),
    .phase_bytes = sizeof(ipc_phase),
    .channel = ipc_channel,
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
